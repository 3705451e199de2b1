/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fio engine's bdev mode (bdev_config=FILE_OR_LINE): fio's filenames are bdev names
 * of that configuration, and I/O goes through the block layer instead of raw qpairs.
 * Like fio_nvp.h, this side knows nvpoll but not fio; fio_plugin.c calls it.
 */
#ifndef NVPOLL_APP_FIO_BDEV_H
#define NVPOLL_APP_FIO_BDEV_H

#include <stdint.h>

#include "nvpoll/bdev.h"

/* One fio file of one job in bdev mode. */
/* Per job settings of the bdev mode (engine options; NULL / -1: not given). */
struct fiobdev_opts {
	const char *sched;       /* bdev_sched=NAME[:k=v,...] */
	const char *wbt;         /* bdev_wbt=LAT_US|off */
	const char *write_class; /* write_class=background|normal|sync */
	int tenant;              /* bdev_tenant=N */
	int weight;              /* tenant_weight=W (under bdev_sched=fair) */
	int write_hint;          /* fio's write_hint=, as enum nvp_nvme_write_hint */
};

struct fiobdev_file {
	struct nvp_bdev_desc *desc;
	uint32_t write_flags;        /* class and lifetime hint of this job's writes */
	struct nvp_bdev_channel *ch; /* made by the job thread at first open */
	uint32_t block_size;
	uint64_t size; /* bytes */
};

enum fiobdev_op {
	FIOBDEV_READ,
	FIOBDEV_WRITE,
	FIOBDEV_TRIM,
	FIOBDEV_FLUSH
};

/*
 * Open bdev @name of configuration @config (loaded the first time, shared by every job of
 * the process; all jobs must name the same configuration). \return 0 or -errno, with a
 * message naming @name or the configuration.
 */
int fiobdev_open(const char *config, const char *name, const struct fiobdev_opts *opts,
		 struct fiobdev_file *bf);

/*
 * On the job thread: its channel, for @depth requests of up to @max_bytes in flight (their
 * split children included), or with @pool bdev_ios if not 0. \return 0 or -errno.
 */
int fiobdev_channel(struct fiobdev_file *bf, uint32_t depth, uint64_t max_bytes, uint32_t pool);

/* Close (the channel on its own thread first); the last close unloads the bdevs. */
void fiobdev_close(struct fiobdev_file *bf);

/* One request: the caller's, untouched until its callback. */
struct fiobdev_req {
	struct fiobdev_file *bf;
	enum fiobdev_op op;
	void *buf;
	uint64_t offset; /* bytes */
	uint64_t len;
	nvp_bdev_io_cb cb;
	void *cb_arg;
	struct nvp_bdev_io_wait_entry wait; /* while the channel has no bdev_io free */
};

/*
 * Submit @req (every field but wait filled in). No bdev_io free (the pool runs dry when
 * requests split into more children than it was sized for) is not an error: the request
 * waits for one and is sent from a later poll. \return 0 (the callback will come) or
 * -errno (nothing sent, no callback).
 */
int fiobdev_submit(struct fiobdev_req *req);

/* Poll the channel. \return completions delivered. */
int fiobdev_poll(struct fiobdev_file *bf);

#endif /* NVPOLL_APP_FIO_BDEV_H */

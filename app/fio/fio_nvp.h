/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fio engine's side that knows nvpoll but not fio: the environment, started once per
 * process, and the controllers named by fio's filenames, attached once and shared by every
 * job thread that names them (reference counted, detached when the last user goes).
 * fio_plugin.c is the side that knows fio.
 */
#ifndef NVPOLL_APP_FIO_NVP_H
#define NVPOLL_APP_FIO_NVP_H

#include <stdint.h>

#include "nvpoll/nvme.h"

struct fionvp_ctrlr;

/* What one fio filename resolves to: a namespace of a (shared) controller. */
struct fionvp_target {
	struct fionvp_ctrlr *ref; /* reference held on the shared controller */
	struct nvp_nvme_ctrlr *ctrlr;
	struct nvp_nvme_ns *ns;
	uint32_t sector_size;
	uint64_t size;     /* bytes */
	uint32_t max_xfer; /* bytes per command */
};

/* Options of the environment, from the engine's fio options. */
struct fionvp_env_opts {
	unsigned int mem_size_mb; /* 0 = the backend's default */
	int no_huge;
};

/* Start the environment once per process (later calls return its first result). */
int fionvp_env_start(const struct fionvp_env_opts *opts);

/*
 * Resolve a fio filename ("trtype=emu name=emu0 nn=2 ns=2", "trtype=PCIe
 * traddr=0000.01.00.0 ns=1") to a namespace; attaches the controller the first time it is
 * named. \return 0, or -errno with a message printed naming @filename.
 */
int fionvp_target_open(const char *filename, struct fionvp_target *target);

/* Drop the reference; the controller is detached when it was the last one. */
void fionvp_target_close(struct fionvp_target *target);

#endif /* NVPOLL_APP_FIO_NVP_H */

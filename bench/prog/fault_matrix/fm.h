/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One cell of the fault matrix: shared state of the main thread (set-up, fault, recovery,
 * report) and the I/O threads (fm_io.c: submit, complete, verify).
 */
#ifndef NVP_BENCH_FM_H
#define NVP_BENCH_FM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "nvpoll/bdev.h"
#include "nvpoll/nvme.h"
#include "nvpoll/poll.h"

#define FM_BS 4096u
#define FM_QD 8u
#define FM_MAX_THREADS 8u
#define FM_MAX_BLKS 4u /* blocks per I/O at most */
#define FM_MAYBE 4u    /* failed writes remembered per block after its last good one */

/* How the cell reaches the device. */
enum fm_mode {
	FM_MODE_RAW = 0, /* a qpair per thread */
	FM_MODE_BDEV,    /* a bdev channel per thread, every stage off */
	FM_MODE_STAGES   /* the same with the throttle, a scheduler and hybrid waiting on */
};

#define FM_FLUSH_EVERY 16u /* writes acknowledged between two flushes of a thread */

enum fm_workload {
	FM_RANDREAD = 0,
	FM_RANDWRITE,
	FM_MIXED,
	FM_ADMIN
};

/* What one block may hold: its last acknowledged write, or a failed one after it. */
struct fm_blk {
	uint32_t good;            /* generation of the last write that succeeded (0: none) */
	uint32_t maybe[FM_MAYBE]; /* failed writes since: they may or may not have landed */
	uint8_t nmaybe;           /* FM_MAYBE + 1: too many, the block is not judged */
	bool busy;                /* an I/O on it is in flight */
	uint32_t issued;          /* generation of the last write sent to it */
	uint32_t snap;            /* good when the thread's flush in flight was sent */
	uint32_t durable;         /* good when the last flush that completed was sent */
};

struct fm_slot {
	struct fm_thread *t;
	uint8_t *buf;
	uint32_t lba, n, gen; /* gen 0: a read */
	bool flush;           /* a Flush (lba, n, gen unused) */
	atomic_uint calls;    /* completions seen: must end at exactly 1 */
	bool busy;
};

struct fm_thread {
	struct fm_cell *cell;
	uint32_t idx;
	pthread_t tid;
	uint32_t base, nblk; /* this thread's blocks */
	struct fm_blk *blk;
	struct fm_slot slots[FM_QD];
	struct nvp_nvme_qpair *qpair;      /* raw */
	struct nvp_bdev_channel *ch;       /* bdev */
	struct nvp_bdev_desc *desc;        /* bdev: the cell's, or the thread's own (a tenant) */
	struct nvp_bdev_poll_group *group; /* stages: the channel's, for the waiter */
	struct nvp_poll_waiter *waiter;    /* stages: hybrid */
	uint32_t acked_since_flush;        /* writes acknowledged since the last flush sent */
	bool flushing;
	uint64_t rng;
	uint32_t next_gen;
	/* counters (this thread only) */
	uint64_t issued, ok, err, dup, corrupted, verified, refused, flushes;
	uint64_t unread; /* blocks the read-back after a power cut could not read */
	uint64_t t_last_err, t_ok_after_err; /* ticks */
	bool waiting_ok;
	atomic_bool parked;
	atomic_bool live; /* its thread has not ended yet */
	int setup_rc;
};

struct fm_cell {
	/* options */
	const char *fault;
	enum fm_workload workload;
	uint32_t threads;
	bool bdev; /* FM_MODE_BDEV or FM_MODE_STAGES */
	enum fm_mode mode;
	const char *sched; /* stages: the scheduler */
	bool tcp;          /* over NVMe/TCP on loopback to a target serving the controller */
	bool recoverable;  /* the fault fails the controller and the main thread resets it */
	/* soak: many faults over a long run on several bdevs, then a power cut */
	double soak_s; /* 0: one fault, a cell of the matrix */
	uint64_t seed;
	uint32_t bdevs; /* namespaces, a bdev each; threads spread over them */
	double seconds;
	uint32_t inject_ms;
	uint32_t timeout_ms;
	char dir[64];
	/* objects */
	struct nvp_emu_ctrlr *emu;
	struct nvp_nvme_ctrlr *ctrlr;   /* the cell's: the software controller's, or TCP's */
	struct nvp_nvme_ctrlr *backend; /* tcp: the target's controller (the software one) */
	struct tcp_tgt *tgt;
	struct nvp_nvme_ns *ns;
	struct nvp_bdev_desc *desc;
	uint64_t num_blocks;
	struct fm_thread t[FM_MAX_THREADS];
	/* control */
	atomic_bool stop;       /* threads stop submitting and drain */
	atomic_bool park;       /* threads stop touching their qpairs (for a reset) */
	atomic_bool dead;       /* the controller is gone: polls return -ENXIO */
	atomic_bool want_reset; /* a qpair failed on a live controller: reset it */
	atomic_uint running;    /* I/O threads not yet finished */
	atomic_uint ready;      /* I/O threads set up and prefilled */
	atomic_bool go;         /* the run starts */
	uint64_t t_inject;      /* ticks */
	uint32_t resets, reset_failures, admin_ok, admin_err;
};

uint64_t fm_rand(uint64_t *s);
void fm_fill(uint8_t *buf, uint32_t lba, uint32_t n, uint32_t gen);
void *fm_thread_main(void *arg);
int fm_prefill(struct fm_thread *t);
void fm_verify_all(struct fm_thread *t);
uint32_t fm_thread_outstanding(const struct fm_thread *t);
void fm_park_point(struct fm_thread *t);
int fm_poll(struct fm_thread *t); /* one poll of the thread's qpair or channel */
bool fm_failed(const struct fm_cell *c);
int fm_flush_sync(struct fm_thread *t);
void fm_verify_after_power_cut(struct fm_thread *t, struct nvp_nvme_ns *ns,
			       struct nvp_nvme_qpair *qpair);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvpoll's fio external ioengine:  ioengine=external:/path/to/nvpoll_fio.so
 *
 * Built against fio's own source tree (config-host.h and fio's headers), because an
 * external engine shares fio's structures (thread_data, io_u, fio_file) whose layout
 * changes between fio versions. fio checks ioengine_ops.version (FIO_IOOPS_VERSION) when
 * it loads us; a constructor here also compares the fio version we were built against
 * with the running fio's fio_version_string, so a mismatch is a message, not a crash.
 *
 * Model (as SPDK's plugin): thread=1; setup() resolves every filename to a namespace of a
 * controller shared by all jobs; each job thread makes its own qpair per file the first
 * time it opens it (the thread that polls a qpair must own it); queue() submits with the
 * SQ doorbell delayed, commit() rings it once per qpair, getevents() polls - or, with
 * poll=MODE (classic, hybrid[:mean|:pN], fixed:US, irq), waits through a lib/poll waiter
 * made in the job thread over its qpairs.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fio.h"
#include "ioengines.h"
#include "optgroup.h"

#include "fio_bdev.h"
#include "fio_nvp.h"
#include "nvpoll/poll.h"
#include "nvpoll/emu.h"
#include "nvpoll/env.h"
#include "nvpoll/nvme.h"

#ifndef NVPFIO_BUILT_FIO_VERSION
#error "build with -DNVPFIO_BUILT_FIO_VERSION=\"fio-X.Y\" (app/fio/Makefile does)"
#endif

#ifdef NVPFIO_TEST_ABI_SKEW
/* Test only: pretend to be built against another fio, to exercise the mismatch path. */
#define ENGINE_IOOPS_VERSION (FIO_IOOPS_VERSION - 1)
#define ENGINE_FIO_VERSION "fio-0.0-skew"
#else
#define ENGINE_IOOPS_VERSION FIO_IOOPS_VERSION
#define ENGINE_FIO_VERSION NVPFIO_BUILT_FIO_VERSION
#endif

/* Largest mem_size_mb accepted: 1 TiB of DMA memory. */
#define ENGINE_MEM_MB_MAX (1u << 20)

/* Options of the engine (fio's "eo" structure: the first member must be a pointer). */
struct engine_opts {
	void *pad;
	unsigned int mem_size_mb;
	unsigned int no_huge;
	char *bdev_config;         /* bdev mode (fio_bdev.c): filenames are bdev names */
	unsigned int bdev_io_pool; /* bdev_ios per channel, 0: sized from the job */
	char *poll;                /* lib/poll mode, NULL = spin in getevents() */
	char *bdev_sched;
	char *bdev_wbt;
	char *write_class;
	int bdev_tenant;
	unsigned int tenant_weight;
	unsigned int qpair_stats;    /* print the counters below at cleanup */
	unsigned int qpair_requests; /* request objects per qpair, 0: sized from the queue */
	unsigned int emu_inline;     /* run the software controller in getevents() */
	unsigned int ring_at_commit; /* spin mode: commit() rings at this many pending */
	unsigned int commit_shadow;  /* spin mode: commit() tells the controller by shadow */
};

/* One fio file of one job thread. */
struct engine_file {
	struct fionvp_target target;
	struct nvp_nvme_qpair *qpair; /* made by the job thread at first open */
	struct engine_thread *thread;
	unsigned int doorbell_pending; /* submissions since the last SQ doorbell (commit's view) */
	bool no_shadow;                /* the qpair has no shadow doorbells (commit_shadow=1) */
	struct nvp_emu_ctrlr *emu;     /* emu_inline=1: run by this thread's getevents() */
	struct fiobdev_file *bdev;     /* bdev mode: no target, no qpair */
	struct io_u *wait_head;        /* refused for want of a request object, oldest first */
	struct io_u *wait_tail;
	struct engine_file *next;
};

/* What fio asked of the engine and what the polls found (qpair_stats=1 prints them). */
struct engine_counters {
	uint64_t queued;       /* io_u accepted by queue() */
	uint64_t commits;      /* commit() calls */
	uint64_t getevents;    /* getevents() calls */
	uint64_t polls;        /* process_completions() calls made by getevents() */
	uint64_t empty_polls;  /* ... that found nothing */
	uint64_t first_tick;   /* qpair_stats=1: env ticks at the first queue() */
	uint64_t last_tick;    /* ... at the last return from getevents() */
	uint64_t in_getevents; /* ... spent inside getevents() */
};

/*
 * One job (td->io_ops_data), made by whichever of setup() and init() runs first. It keeps
 * its own list of files: fio frees its fio_file objects before it calls cleanup().
 */
struct engine_thread {
	struct io_u **done; /* completions found, oldest first; kept until returned */
	unsigned int nr_done;
	unsigned int nr_ret; /* the first nr_ret were handed to fio by the last getevents() */
	unsigned int max_done;
	struct engine_counters cnt;
	bool stats; /* qpair_stats=1: also time getevents() */
	unsigned int io_queue_size;
	struct engine_file *files;
	struct nvp_poll_waiter *waiter; /* poll=MODE: made by the job thread */
};

static int g_abi_mismatch;

/*
 * A setup failure is the job's error, as fio's own engines report theirs: without it fio
 * skips the job, prints no stats and exits 0 with "error":0 in its JSON. \return 1.
 */
static int
job_failed(struct thread_data *td, int err, const char *func)
{
	td_verror(td, err > 0 ? err : EIO, func);
	return 1;
}

/* ---- ABI check ----------------------------------------------------------------------- */

static void __attribute__((constructor)) engine_abi_check(void)
{
	const char *running = dlsym(RTLD_DEFAULT, "fio_version_string");
	const char *ignore = getenv("NVPOLL_FIO_IGNORE_VERSION");

	if (running == NULL || strcmp(running, ENGINE_FIO_VERSION) == 0) {
		return; /* same fio, or not loaded by a fio that exports its version */
	}
	fprintf(stderr,
		"nvpoll_fio: this engine was built against %s (ioengine ABI FIO_IOOPS_VERSION %d) "
		"but is loaded into %s; fio's job and I/O structures differ between versions.\n"
		"nvpoll_fio: %s\n"
		"nvpoll_fio: fix: rebuild it against the source of the fio you run: "
		"./configure --with-fio=/path/to/%s-source && make "
		"(Debian's fio: scripts/get_fio_src.sh fetches its source).\n",
		ENGINE_FIO_VERSION, ENGINE_IOOPS_VERSION, running,
		ignore != NULL ? "NVPOLL_FIO_IGNORE_VERSION is set: running anyway, at your risk" :
				 "refusing to run (NVPOLL_FIO_IGNORE_VERSION=1 overrides)",
		running);
	g_abi_mismatch = ignore == NULL;
}

/* ---- setup / teardown ----------------------------------------------------------------- */

static int
check_file_fits(struct thread_data *td, struct fio_file *f, const struct fionvp_target *t)
{
	int ddir;

	if (t->ns != NULL && nvp_nvme_ns_has_separate_md(t->ns)) { /* NULL: a bdev */
		fprintf(stderr,
			"nvpoll_fio: job '%s', file '%s': the namespace has %u bytes of separate "
			"metadata per block, which the engine does not supply; format it without "
			"metadata or with extended LBAs\n",
			td->o.name, f->file_name, nvp_nvme_ns_get_md_size(t->ns));
		return -EINVAL;
	}
	/* Blocks above the namespace's largest transfer (MDTS) are split by the driver. */
	for (ddir = 0; ddir < DDIR_RWDIR_CNT; ddir++) {
		if (td->o.min_bs[ddir] % t->sector_size != 0) {
			fprintf(stderr,
				"nvpoll_fio: job '%s', file '%s': block size %llu is not a multiple "
				"of the %u-byte sector\n",
				td->o.name, f->file_name, (unsigned long long)td->o.min_bs[ddir],
				t->sector_size);
			return -EINVAL;
		}
	}
	return 0;
}

static int
engine_env_start(struct thread_data *td)
{
	struct engine_opts *eo = td->eo;
	struct fionvp_env_opts opts = { 0 };

	/* fio stores "-1" in an unsigned option as 4294967295: refuse it here, by name. */
	if (eo != NULL && eo->mem_size_mb > ENGINE_MEM_MB_MAX) {
		fprintf(stderr,
			"nvpoll_fio: job '%s': mem_size_mb=%d is out of range: expected "
			"0..%u MiB (0: the environment's default)\n",
			td->o.name, (int)eo->mem_size_mb, ENGINE_MEM_MB_MAX);
		return -EINVAL;
	}
	if (eo != NULL) {
		opts.mem_size_mb = eo->mem_size_mb;
		opts.no_huge = (int)eo->no_huge;
	}
	return fionvp_env_start(&opts);
}

/* The job's state, made on first use (fio never has more than iodepth I/Os out). */
static struct engine_thread *
thread_get(struct thread_data *td)
{
	struct engine_thread *et = td->io_ops_data;

	if (et != NULL) {
		return et;
	}
	et = calloc(1, sizeof(*et));
	if (et == NULL) {
		return NULL;
	}
	et->max_done = td->o.iodepth;
	et->done = calloc(et->max_done, sizeof(*et->done));
	if (et->done == NULL) {
		free(et);
		return NULL;
	}
	/* One more entry than iodepth: an NVMe queue of N entries holds N - 1 commands. */
	et->io_queue_size = td->o.iodepth + 1;
	et->stats = td->eo != NULL && ((struct engine_opts *)td->eo)->qpair_stats;
	td->io_ops_data = et;
	return et;
}

static bool
bdev_mode(const struct engine_opts *eo)
{
	return eo != NULL && eo->bdev_config != NULL && eo->bdev_config[0] != '\0';
}

static bool
str_set(const char *s)
{
	return s != NULL && s[0] != '\0';
}

/*
 * The options of the bdev mode, given without bdev_config=, and the NVMe mode's qpair options
 * given with it: refused by name, as nvp_perf refuses --wbt without -b, rather than ignored.
 * \return 0 or -EINVAL (printed).
 */
static int
bdev_opts_check(struct thread_data *td)
{
	const struct engine_opts *eo = td->eo;
	char opt[80];

	if (eo == NULL) {
		return 0;
	}
	opt[0] = '\0';
	if (bdev_mode(eo)) {
		/* and the other way round: the driver's qpair options have no qpair to act on */
		if (eo->qpair_requests != 0) {
			snprintf(opt, sizeof(opt), "qpair_requests=%u", eo->qpair_requests);
		} else if (eo->emu_inline) {
			snprintf(opt, sizeof(opt), "emu_inline=1");
		} else if (eo->ring_at_commit != 0) {
			snprintf(opt, sizeof(opt), "ring_at_commit=%u", eo->ring_at_commit);
		} else if (eo->commit_shadow) {
			snprintf(opt, sizeof(opt), "commit_shadow=1");
		}
		if (opt[0] == '\0') {
			return 0;
		}
		fprintf(stderr,
			"nvpoll_fio: job '%s': %s is an option of the NVMe mode, which bdev_config= "
			"turns off: the bdev's module owns its queues; drop it\n",
			td->o.name, opt);
		return -EINVAL;
	}
	if (str_set(eo->bdev_sched)) {
		snprintf(opt, sizeof(opt), "bdev_sched=%s", eo->bdev_sched);
	} else if (str_set(eo->bdev_wbt)) {
		snprintf(opt, sizeof(opt), "bdev_wbt=%s", eo->bdev_wbt);
	} else if (str_set(eo->write_class)) {
		snprintf(opt, sizeof(opt), "write_class=%s", eo->write_class);
	} else if (eo->bdev_tenant != -1) {
		snprintf(opt, sizeof(opt), "bdev_tenant=%d", eo->bdev_tenant);
	} else if (eo->tenant_weight != 0) {
		snprintf(opt, sizeof(opt), "tenant_weight=%u", eo->tenant_weight);
	} else if (eo->bdev_io_pool != 0) {
		snprintf(opt, sizeof(opt), "bdev_io_pool=%u", eo->bdev_io_pool);
	}
	if (opt[0] == '\0') {
		return 0;
	}
	fprintf(stderr,
		"nvpoll_fio: job '%s': %s is an option of the bdev mode: add bdev_config= "
		"(filenames are then bdev names), or drop it\n",
		td->o.name, opt);
	return -EINVAL;
}

/* bdev mode (bdev_config set): open bdev @name as the file's target. \return 0 or -errno. */
static int
engine_bdev_open(struct thread_data *td, struct engine_file *ef, const char *name)
{
	struct engine_opts *eo = td->eo;
	struct fiobdev_opts bo = { .tenant = -1, .weight = -1, .write_hint = -1 };
	int rc;

	if (!bdev_mode(eo)) {
		return 0;
	}
	ef->bdev = calloc(1, sizeof(*ef->bdev));
	if (ef->bdev == NULL) {
		return -ENOMEM;
	}
	bo.sched = eo->bdev_sched;
	bo.wbt = eo->bdev_wbt;
	bo.write_class = eo->write_class;
	bo.tenant = eo->bdev_tenant;
	bo.weight = (int)eo->tenant_weight;
#ifdef FIO_HAVE_WRITE_HINT
	/* fio's RWH_WRITE_LIFE_NONE (1) .. _EXTREME (5); 0: not set */
	if (fio_option_is_set(&td->o, write_hint) && td->o.write_hint > 0) {
		bo.write_hint = (int)td->o.write_hint - 1;
	}
#endif
	rc = fiobdev_open(eo->bdev_config, name, &bo, ef->bdev);
	if (rc != 0) {
		free(ef->bdev);
		ef->bdev = NULL;
		return rc;
	}
	/* what check_file_fits() and fio's sizes read; the core splits large requests */
	ef->target.sector_size = ef->bdev->block_size;
	ef->target.size = ef->bdev->size;
	ef->target.max_xfer = UINT32_MAX;
	return 0;
}
static int waiter_opts(struct thread_data *td, struct nvp_poll_opts *po);

/*
 * Called once per job before its thread runs (in fio's main thread unless
 * create_serialize=0): attach the controllers the filenames name, and tell fio the sizes.
 */
static int
engine_setup(struct thread_data *td)
{
	struct engine_thread *et;
	struct fio_file *f;
	unsigned int i;
	int rc;

	if (g_abi_mismatch) {
		fprintf(stderr,
			"nvpoll_fio: job '%s' not run: engine built for another fio "
			"(message above)\n",
			td->o.name);
		return job_failed(td, EINVAL, "setup");
	}
	if (!td->o.use_thread) {
		fprintf(stderr,
			"nvpoll_fio: job '%s': add thread=1 (the engine shares controllers "
			"and DMA memory between jobs of one process; fork mode cannot)\n",
			td->o.name);
		return job_failed(td, EINVAL, "setup");
	}
	if (bdev_opts_check(td) != 0) {
		return job_failed(td, EINVAL, "setup");
	}
	et = thread_get(td);
	if (et == NULL) {
		return job_failed(td, ENOMEM, "setup");
	}
	rc = engine_env_start(td);
	if (rc != 0) {
		return job_failed(td, -rc, "setup");
	}
	{
		struct nvp_poll_opts po;

		if (waiter_opts(td, &po) < 0) {
			return 1; /* bad poll=: refused before any thread runs */
		}
	}
	for_each_file(td, f, i)
	{
		struct engine_file *ef = FILE_ENG_DATA(f);

		if (ef != NULL) {
			continue; /* setup() again for the same job (verify phase) */
		}
		ef = calloc(1, sizeof(*ef));
		if (ef == NULL) {
			return job_failed(td, ENOMEM, "setup");
		}
		rc = engine_bdev_open(td, ef, f->file_name);
		if (ef->bdev == NULL && rc == 0) {
			rc = fionvp_target_open(f->file_name, &ef->target);
		}
		if (rc == 0) {
			rc = check_file_fits(td, f, &ef->target);
		}
		if (rc != 0) {
			if (ef->bdev != NULL) {
				fiobdev_close(ef->bdev);
				free(ef->bdev);
			} else {
				fionvp_target_close(&ef->target);
			}
			free(ef);
			return job_failed(td, -rc, "setup");
		}
		ef->thread = et;
		ef->next = et->files;
		et->files = ef;
		FILE_SET_ENG_DATA(f, ef);
		/* bdev mode: a char type, so fio does not fcntl() write_hint= on a file descriptor
		 * it does not have; the engine passes the hint with each write */
		f->filetype = ef->bdev != NULL ? FIO_TYPE_CHAR : FIO_TYPE_BLOCK;
		f->real_file_size = ef->target.size;
		fio_file_set_size_known(f);
	}
	return 0;
}

/* Job thread start. */
static int
engine_init(struct thread_data *td)
{
	int rc;

	if (g_abi_mismatch) {
		return job_failed(td, EINVAL, "init");
	}
	rc = engine_env_start(td);
	if (rc != 0) {
		return job_failed(td, -rc, "init");
	}
	return thread_get(td) != NULL ? 0 : job_failed(td, ENOMEM, "init");
}

static double
per_io(uint64_t n, uint64_t ios)
{
	return ios != 0 ? (double)n / (double)ios : 0.0;
}

/*
 * qpair_stats=1: where the job's I/Os went, per I/O queued - fio's calls into the engine,
 * the polls they made, and each qpair's doorbell writes (MMIO, or shadow only).
 */
static void
print_counters(struct thread_data *td, const struct engine_thread *et)
{
	const struct engine_counters *c = &et->cnt;
	struct nvp_nvme_qpair_stats qs = { .info_size = sizeof(qs) };
	struct engine_file *ef;

	fprintf(stderr,
		"nvpoll_fio: job '%s': %" PRIu64 " I/Os queued; per I/O: %.3f commit, "
		"%.3f getevents, %.3f polls (%.3f empty)\n",
		td->o.name, c->queued, per_io(c->commits, c->queued),
		per_io(c->getevents, c->queued), per_io(c->polls, c->queued),
		per_io(c->empty_polls, c->queued));
	if (c->last_tick > c->first_tick && c->queued != 0) {
		double us = 1e6 / (double)nvp_env_get_ticks_hz();
		uint64_t all = c->last_tick - c->first_tick;

		fprintf(stderr,
			"nvpoll_fio: job '%s': %.1f %% of the time in getevents(); per I/O %.3f us "
			"outside it (fio, queue, commit), %.3f us inside\n",
			td->o.name, 100.0 * (double)c->in_getevents / (double)all,
			us * (double)(all - c->in_getevents) / (double)c->queued,
			us * (double)c->in_getevents / (double)c->queued);
	}
	for (ef = et->files; ef != NULL; ef = ef->next) {
		if (ef->qpair == NULL || nvp_nvme_qpair_get_stats(ef->qpair, &qs) != 0) {
			continue;
		}
		fprintf(stderr,
			"nvpoll_fio: job '%s', qpair %u: %" PRIu64 " commands; per command: "
			"SQ doorbell %.3f MMIO + %.3f shadow, CQ doorbell %.3f MMIO + %.3f shadow, "
			"%.3f polls\n",
			td->o.name, nvp_nvme_qpair_get_id(ef->qpair), qs.submitted,
			per_io(qs.sq_doorbell_writes, qs.submitted),
			per_io(qs.sq_shadow_updates, qs.submitted),
			per_io(qs.cq_doorbell_writes, qs.submitted),
			per_io(qs.cq_shadow_updates, qs.submitted), per_io(qs.polls, qs.submitted));
	}
}

static void
engine_cleanup(struct thread_data *td)
{
	struct engine_thread *et = td->io_ops_data;
	struct engine_opts *eo = td->eo;
	struct engine_file *ef;

	if (et == NULL) {
		return;
	}
	if (eo != NULL && eo->qpair_stats) {
		print_counters(td, et);
	}
	while ((ef = et->files) != NULL) {
		et->files = ef->next;
		if (ef->bdev != NULL) {
			fiobdev_close(ef->bdev);
			free(ef->bdev);
		} else {
			if (ef->emu != NULL) {
				/* its thread again: deleting the queues needs the admin queue */
				nvp_emu_ctrlr_set_inline(ef->emu, false);
			}
			nvp_nvme_ctrlr_free_io_qpair(ef->qpair);
			fionvp_target_close(&ef->target);
		}
		free(ef);
	}
	nvp_poll_waiter_destroy(et->waiter);
	free(et->done);
	free(et);
	td->io_ops_data = NULL;
}

/* ---- poll=MODE: a lib/poll waiter per job thread --------------------------------------- */

static int
waiter_opts(struct thread_data *td, struct nvp_poll_opts *po)
{
	struct engine_opts *eo = td->eo;

	nvp_poll_opts_init(po, sizeof(*po));
	if (eo == NULL || eo->poll == NULL || eo->poll[0] == '\0') {
		return 1; /* no waiter */
	}
	if (nvp_poll_mode_parse(eo->poll, po) != 0) {
		fprintf(stderr,
			"nvpoll_fio: job '%s': poll=%s: expected classic, hybrid, hybrid:mean, "
			"hybrid:pN, fixed:US, irq or umwait\n",
			td->o.name, eo->poll);
		return -EINVAL;
	}
	return 0;
}

static bool
waiter_is_irq(struct thread_data *td)
{
	struct nvp_poll_opts po;

	return waiter_opts(td, &po) == 0 && po.mode == NVP_POLL_IRQ;
}

/* Made in the job thread at its first open (timer slack and calibration are per thread). */
static int
waiter_add(struct thread_data *td, struct engine_thread *et, struct nvp_nvme_qpair *qpair)
{
	struct nvp_poll_opts po;
	int rc = waiter_opts(td, &po);

	if (rc != 0) {
		return rc > 0 ? 0 : EINVAL;
	}
	if (et->waiter == NULL) {
		rc = nvp_poll_waiter_create(&po, &et->waiter);
	}
	if (rc == 0) {
		rc = nvp_poll_waiter_add_qpair(et->waiter, qpair);
	}
	if (rc != 0) {
		fprintf(stderr, "nvpoll_fio: job '%s': poll=%s: %s\n", td->o.name,
			((struct engine_opts *)td->eo)->poll, strerror(-rc));
		return -rc;
	}
	return 0;
}

/*
 * fio's engine-private io_u word: the waiter's view of the request, the bdev request, the
 * link on its file's wait list.
 */
struct engine_io {
	struct nvp_poll_req poll;
	struct fiobdev_req bdev;
	struct io_u *wait_next;
};

static int
engine_io_u_init(struct thread_data *td, struct io_u *io_u)
{
	(void)td;
	io_u->engine_data = calloc(1, sizeof(struct engine_io));
	return io_u->engine_data != NULL ? 0 : 1;
}

static void
engine_io_u_free(struct thread_data *td, struct io_u *io_u)
{
	(void)td;
	free(io_u->engine_data);
	io_u->engine_data = NULL;
}

/*
 * emu_inline=1 (measurement): stop the software controller's own thread and run it from
 * this job's getevents(), so that one thread does all the work and a profiler counts the
 * engine's and fio's instructions per I/O without the empty polls that exist only because
 * the controller runs elsewhere (as bench/driver_cost does for nvp_perf's path).
 * \return 0 or a positive errno (message printed).
 */
static int
emu_inline_start(struct thread_data *td, struct fio_file *f, struct engine_file *ef)
{
	struct engine_opts *eo = td->eo;
	struct nvp_nvme_transport_id trid;

	if (eo == NULL || !eo->emu_inline) {
		return 0;
	}
	if (nvp_nvme_transport_id_parse(&trid, f->file_name) != 0 ||
	    trid.trtype != NVP_NVME_TRANSPORT_VDEV ||
	    (ef->emu = nvp_emu_ctrlr_find(trid.name)) == NULL) {
		fprintf(stderr,
			"nvpoll_fio: job '%s', file '%s': emu_inline=1 needs a software "
			"controller named in the filename (trtype=emu name=NAME)\n",
			td->o.name, f->file_name);
		return EINVAL;
	}
	if (nvp_emu_ctrlr_set_inline(ef->emu, true) != 0) {
		ef->emu = NULL;
		return EIO;
	}
	return 0;
}

/* The controller runs until idle, after the doorbell of what fio queued. */
static void
emu_inline_run(struct engine_file *ef)
{
	nvp_nvme_qpair_ring_doorbell(ef->qpair);
	ef->doorbell_pending = 0;
	while (nvp_emu_ctrlr_poll(ef->emu) > 0) {
	}
}

/* The largest block the job reads, writes or trims. */
static uint64_t
job_max_bs(const struct thread_data *td)
{
	uint64_t bs = 0;
	int ddir;

	for (ddir = 0; ddir < DDIR_RWDIR_CNT; ddir++) {
		if (td->o.max_bs[ddir] > bs) {
			bs = td->o.max_bs[ddir];
		}
	}
	return bs;
}

/* The job thread opens its files: make the qpair here, in the thread that will poll it. */
static int
engine_open_file(struct thread_data *td, struct fio_file *f)
{
	struct engine_thread *et = td->io_ops_data;
	struct engine_file *ef = FILE_ENG_DATA(f);
	struct nvp_nvme_io_qpair_opts qopts;
	int rc;

	if (ef == NULL || et == NULL) {
		return job_failed(td, EINVAL, "open_file");
	}
	if (ef->bdev != NULL) {
		return -fiobdev_channel(ef->bdev, td->o.iodepth, job_max_bs(td),
					((struct engine_opts *)td->eo)->bdev_io_pool);
	}
	if (ef->qpair != NULL) {
		return 0;
	}
	nvp_nvme_ctrlr_get_default_io_qpair_opts(ef->target.ctrlr, &qopts, sizeof(qopts));
	if (qopts.io_queue_size < et->io_queue_size) {
		qopts.io_queue_size = et->io_queue_size; /* clamped by the driver's check */
	}
	/*
	 * Twice as many request objects as entries at least: the driver then lets a split
	 * request keep (objects / entries - 1) children, so iodepth requests and their
	 * children always fit. With as many as entries, each keeps one child and a deep
	 * queue of large blocks would wait for objects (send_waiting()).
	 */
	if (qopts.io_queue_requests < 2 * qopts.io_queue_size) {
		qopts.io_queue_requests = 2 * qopts.io_queue_size;
	}
	if (td->eo != NULL && ((struct engine_opts *)td->eo)->qpair_requests != 0) {
		qopts.io_queue_requests = ((struct engine_opts *)td->eo)->qpair_requests;
		if (qopts.io_queue_requests < qopts.io_queue_size) {
			qopts.io_queue_requests = qopts.io_queue_size;
		}
	}
	qopts.delay_doorbell = true;
	qopts.interrupts = waiter_is_irq(td);
	rc = nvp_nvme_ctrlr_alloc_io_qpair(ef->target.ctrlr, &qopts, &ef->qpair);
	if (rc != 0) {
		fprintf(stderr,
			"nvpoll_fio: job '%s', file '%s': cannot allocate an I/O qpair "
			"of %u entries: %s\n",
			td->o.name, f->file_name, qopts.io_queue_size, strerror(-rc));
		return job_failed(td, -rc, "open_file");
	}
	rc = emu_inline_start(td, f, ef);
	if (rc != 0) {
		return job_failed(td, rc, "open_file");
	}
	return waiter_add(td, et, ef->qpair);
}

static int
engine_close_file(struct thread_data *td, struct fio_file *f)
{
	(void)td;
	(void)f;
	return 0; /* the qpair lives until cleanup: fio closes and reopens files between phases */
}

/* No page cache between fio and the device: nothing to invalidate. */
static int
engine_invalidate(struct thread_data *td, struct fio_file *f)
{
	(void)td;
	(void)f;
	return 0;
}

static int
engine_get_file_size(struct thread_data *td, struct fio_file *f)
{
	struct engine_file *ef = FILE_ENG_DATA(f);

	(void)td;
	if (ef == NULL) {
		return EINVAL;
	}
	f->real_file_size = ef->target.size;
	fio_file_set_size_known(f);
	return 0;
}

/* ---- DMA memory for fio's I/O buffers ------------------------------------------------- */

static int
engine_iomem_alloc(struct thread_data *td, size_t total_mem)
{
	int rc = engine_env_start(td);

	if (rc != 0) {
		return job_failed(td, -rc, "iomem_alloc");
	}
	td->orig_buffer = nvp_env_dma_malloc(total_mem, 4096, NULL);
	if (td->orig_buffer == NULL) {
		fprintf(stderr,
			"nvpoll_fio: job '%s': cannot allocate %zu bytes of DMA memory "
			"for I/O buffers; raise mem_size_mb\n",
			td->o.name, total_mem);
		return job_failed(td, ENOMEM, "iomem_alloc");
	}
	return 0;
}

static void
engine_iomem_free(struct thread_data *td)
{
	nvp_env_dma_free(td->orig_buffer);
	td->orig_buffer = NULL;
}

/* ---- I/O path ------------------------------------------------------------------------- */

static void
io_complete(void *cb_arg, const struct nvme_cpl *cpl)
{
	struct io_u *io_u = cb_arg;
	struct engine_file *ef = FILE_ENG_DATA(io_u->file);
	struct engine_thread *et = ef->thread;

	if (et->waiter != NULL) {
		nvp_poll_req_done(et->waiter, &((struct engine_io *)io_u->engine_data)->poll);
	}
	io_u->error = 0;
	if (nvme_cpl_is_error(cpl)) {
		char status[128];

		fprintf(stderr, "nvpoll_fio: file '%s', offset %llu: %s\n", io_u->file->file_name,
			(unsigned long long)io_u->offset,
			nvp_nvme_cpl_fmt(status, sizeof(status), cpl));
		io_u->error = EIO;
	}
	/* Cannot overflow: fio has at most iodepth I/Os out, and getevents() bounds the
	 * completions it asks for by its max; keep the check for a misbehaving caller. */
	if (et->nr_done < et->max_done) {
		et->done[et->nr_done++] = io_u;
	}
}

/*
 * bdev mode: the same io_u through the block layer (fio_bdev.c). A request that finds the
 * channel's pool empty waits there for a bdev_io and is queued as far as fio knows. Not
 * FIO_Q_BUSY: fio's retry fills a write's verify header again, drawing one more seed from
 * the sequence its verify phase replays one per logged block, so every block checked
 * after it fails with "bad header rand_seed".
 */
static int
submit_bdev(struct fiobdev_file *bf, struct io_u *io_u)
{
	struct fiobdev_req *r = &((struct engine_io *)io_u->engine_data)->bdev;

	if (ddir_sync(io_u->ddir)) {
		r->op = FIOBDEV_FLUSH;
	} else if (io_u->ddir == DDIR_READ) {
		r->op = FIOBDEV_READ;
	} else if (io_u->ddir == DDIR_WRITE) {
		r->op = FIOBDEV_WRITE;
	} else if (io_u->ddir == DDIR_TRIM) {
		r->op = FIOBDEV_TRIM;
	} else {
		return -EINVAL;
	}
	r->bf = bf;
	r->buf = io_u->xfer_buf;
	r->offset = io_u->offset;
	r->len = io_u->xfer_buflen;
	r->cb = io_complete;
	r->cb_arg = io_u;
	return fiobdev_submit(r);
}

/* Submit one io_u; \return 0 or -errno (-ENOMEM: no request object free, retry later). */
static int
submit_one(struct engine_file *ef, struct io_u *io_u)
{
	struct nvp_nvme_ns *ns = ef->target.ns;
	uint32_t ss = ef->target.sector_size;
	uint64_t lba = io_u->offset / ss;
	uint32_t nlb = (uint32_t)(io_u->xfer_buflen / ss);
	struct nvme_dsm_range range;

	if (ef->bdev != NULL) {
		return submit_bdev(ef->bdev, io_u);
	}
	if (ddir_sync(io_u->ddir)) {
		return nvp_nvme_ns_cmd_flush(ns, ef->qpair, io_complete, io_u);
	}
	if (io_u->offset % ss != 0 || io_u->xfer_buflen % ss != 0 || nlb == 0) {
		return -EINVAL;
	}
	switch (io_u->ddir) {
	case DDIR_READ:
		return nvp_nvme_ns_cmd_read(ns, ef->qpair, io_u->xfer_buf, lba, nlb, io_complete,
					    io_u, 0);
	case DDIR_WRITE:
		return nvp_nvme_ns_cmd_write(ns, ef->qpair, io_u->xfer_buf, lba, nlb, io_complete,
					     io_u, 0);
	case DDIR_TRIM:
		/* fio's trim is NVMe's deallocate (Dataset Management, NVMe 1.4 6.7) */
		range.attributes = 0;
		range.length = nlb;
		range.starting_lba = lba;
		return nvp_nvme_ns_cmd_dataset_management(ns, ef->qpair, NVME_DSM_ATTR_DEALLOCATE,
							  &range, 1, io_complete, io_u);
	default:
		return -EINVAL;
	}
}

/*
 * No request object free in the qpair (-ENOMEM: every one held by requests in flight or by
 * their split children, or every DSM range page by trims in flight): the io_u waits on its
 * file's list and is queued as far as fio knows; the polls that free objects send it
 * (send_waiting()). Not FIO_Q_BUSY, as in bdev mode (submit_bdev()): fio's retry of a
 * write fills its verify header again, and mixed jobs then fail "bad header rand_seed".
 */
static void
wait_add(struct engine_file *ef, struct io_u *io_u)
{
	((struct engine_io *)io_u->engine_data)->wait_next = NULL;
	if (ef->wait_tail != NULL) {
		((struct engine_io *)ef->wait_tail->engine_data)->wait_next = io_u;
	} else {
		ef->wait_head = io_u;
	}
	ef->wait_tail = io_u;
}

/*
 * After a poll of @ef's qpair: send what waits, oldest first, until the qpair refuses
 * again. One the driver rejects for another reason completes now with that error.
 */
static void
send_waiting(struct engine_thread *et, struct engine_file *ef)
{
	struct io_u *io_u;
	int rc;

	while ((io_u = ef->wait_head) != NULL) {
		rc = submit_one(ef, io_u);
		if (rc == -ENOMEM) {
			return;
		}
		ef->wait_head = ((struct engine_io *)io_u->engine_data)->wait_next;
		if (ef->wait_head == NULL) {
			ef->wait_tail = NULL;
		}
		if (rc == 0) {
			ef->doorbell_pending++;
			continue;
		}
		if (et->waiter != NULL) {
			nvp_poll_req_done(et->waiter,
					  &((struct engine_io *)io_u->engine_data)->poll);
		}
		io_u->error = -rc;
		if (et->nr_done < et->max_done) {
			et->done[et->nr_done++] = io_u;
		}
	}
}

/* poll=MODE: after the waiter's polls, send what waits and ring: the thread may sleep. */
static void
send_waiting_all(struct engine_thread *et)
{
	struct engine_file *ef;

	for (ef = et->files; ef != NULL; ef = ef->next) {
		if (ef->wait_head == NULL || ef->qpair == NULL) {
			continue;
		}
		send_waiting(et, ef);
		if (ef->doorbell_pending > 0) {
			nvp_nvme_qpair_ring_doorbell(ef->qpair);
			ef->doorbell_pending = 0;
		}
	}
}

static enum fio_q_status
engine_queue(struct thread_data *td, struct io_u *io_u)
{
	struct engine_file *ef = FILE_ENG_DATA(io_u->file);
	int rc;

	(void)td;
	if (ef == NULL || (ef->qpair == NULL && (ef->bdev == NULL || ef->bdev->ch == NULL))) {
		io_u->error = EINVAL;
		return FIO_Q_COMPLETED;
	}
	/* Behind others that wait: they keep their order, and none waits for ever. */
	rc = ef->wait_head == NULL ? submit_one(ef, io_u) : -ENOMEM;
	if (rc == -ENOMEM) {
		wait_add(ef, io_u);
	} else if (rc != 0) {
		io_u->error = -rc;
		return FIO_Q_COMPLETED;
	} else {
		ef->doorbell_pending++;
	}
	if (ef->thread->cnt.queued++ == 0 && ef->thread->stats) {
		ef->thread->cnt.first_tick = nvp_env_get_ticks();
	}
	if (ef->thread->waiter != NULL) {
		nvp_poll_req_start(ef->thread->waiter,
				   &((struct engine_io *)io_u->engine_data)->poll,
				   io_u->ddir == DDIR_READ ? NVME_OPC_READ : NVME_OPC_WRITE,
				   (uint32_t)io_u->xfer_buflen);
	}
	return FIO_Q_QUEUED;
}

/*
 * commit_shadow=1: tell the controller what waits where that costs no MMIO write (a shadow
 * doorbell, read by a controller that is still working through the SQ), so it goes on
 * with these commands while fio queues the next; an MMIO write it would need is left to
 * the next poll, as without the option.
 */
static void
commit_by_shadow(struct engine_thread *et)
{
	struct engine_file *ef;
	int rc;

	for (ef = et->files; ef != NULL; ef = ef->next) {
		if (ef->qpair == NULL || ef->no_shadow || ef->doorbell_pending == 0) {
			continue;
		}
		rc = nvp_nvme_qpair_ring_doorbell_shadow(ef->qpair);
		if (rc == 0) {
			ef->doorbell_pending = 0;
		} else if (rc == -ENOTSUP) {
			ef->no_shadow = true; /* MMIO doorbells only: the poll rings */
		}
	}
}

/*
 * fio calls commit() after every iodepth_batch_submit I/Os (1 unless set) and again before
 * it reaps. Spinning in getevents() (no poll=), the job thread polls next anyway and a poll
 * rings the delayed SQ doorbell first: leave it to the poll, so everything fio queued
 * between two polls reaches the device with one doorbell write, whatever fio's batch
 * options - unless ring_at_commit=N asks for a doorbell once N are waiting (the device then
 * starts on them while fio queues the rest), or commit_shadow=1 for a shadow doorbell
 * where that is enough. With a waiter the thread may sleep, so commit() rings whatever is
 * waiting.
 */
static int
engine_commit(struct thread_data *td)
{
	struct engine_thread *et = td->io_ops_data;
	struct engine_opts *eo = td->eo;
	struct engine_file *ef;

	unsigned int at = et->waiter != NULL ? 1 : eo != NULL ? eo->ring_at_commit : 0;

	et->cnt.commits++;
	if (at == 0) {
		if (eo != NULL && eo->commit_shadow && et->waiter == NULL) {
			commit_by_shadow(et);
		}
		return 0;
	}
	for (ef = et->files; ef != NULL; ef = ef->next) {
		if (ef->doorbell_pending >= at && ef->qpair != NULL) {
			nvp_nvme_qpair_ring_doorbell(ef->qpair);
			ef->doorbell_pending = 0;
		}
	}
	return 0;
}

static uint64_t
deadline_ns(const struct timespec *t)
{
	struct timespec now;

	if (t == NULL) {
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec +
	       (uint64_t)t->tv_sec * 1000000000ull + (uint64_t)t->tv_nsec;
}

static int
timed_out(uint64_t deadline)
{
	struct timespec now;

	if (deadline == 0) {
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec >= deadline;
}

/* Forget the completions the last getevents() handed to fio; keep the rest, in order. */
static void
drop_returned(struct engine_thread *et)
{
	if (et->nr_ret == 0) {
		return;
	}
	et->nr_done -= et->nr_ret;
	memmove(et->done, et->done + et->nr_ret, et->nr_done * sizeof(*et->done));
	et->nr_ret = 0;
}

/* poll=MODE: wait through the lib/poll waiter until @min completions are kept. */
static int
wait_events(struct thread_data *td, struct engine_thread *et, unsigned int min, bool once,
	    uint64_t deadline)
{
	int32_t rc;

	while (et->nr_done < min || et->nr_done == 0) {
		rc = nvp_poll_waiter_wait(et->waiter);
		if (rc < 0) {
			fprintf(stderr, "nvpoll_fio: job '%s': waiting failed: %s\n", td->o.name,
				strerror(-rc));
			return -EIO;
		}
		send_waiting_all(et);
		if (once || timed_out(deadline)) {
			break;
		}
	}
	return 0;
}

/*
 * Poll every qpair of the thread until @min completions are kept (one pass if @once). Each
 * poll takes every completion there is (room is never short: fio has at most iodepth I/Os
 * out, kept ones included), so a CQ head doorbell and the queued submissions' SQ doorbell
 * are written once per batch, not once per fio "max".
 */
static int
poll_events(struct thread_data *td, struct engine_thread *et, unsigned int min, bool once,
	    uint64_t deadline)
{
	struct engine_file *ef;
	int32_t rc;

	for (;;) {
		for (ef = et->files; ef != NULL && et->nr_done < et->max_done; ef = ef->next) {
			if (ef->bdev != NULL) {
				fiobdev_poll(ef->bdev);
				continue;
			}
			if (ef->qpair == NULL) {
				continue;
			}
			if (ef->emu != NULL) {
				emu_inline_run(ef);
			}
			ef->doorbell_pending = 0; /* the poll rings first thing */
			rc = nvp_nvme_qpair_process_completions(ef->qpair,
								et->max_done - et->nr_done);
			et->cnt.polls++;
			et->cnt.empty_polls += rc == 0;
			if (rc < 0) {
				fprintf(stderr, "nvpoll_fio: job '%s': polling failed: %s\n",
					td->o.name, strerror(-rc));
				return -EIO;
			}
			if (ef->wait_head != NULL) {
				send_waiting(et, ef); /* rung by the next poll */
			}
		}
		if ((et->nr_done >= min && et->nr_done > 0) || once || timed_out(deadline)) {
			return 0;
		}
	}
}

/*
 * Hand fio between @min and @max completions. Completions found beyond @max (fio's
 * iodepth_batch_complete_max, 1 unless set) are kept for the next calls, which return them
 * without polling. A zero @t means one pass and no clock read.
 */
static int
engine_getevents(struct thread_data *td, unsigned int min, unsigned int max,
		 const struct timespec *t)
{
	struct engine_thread *et = td->io_ops_data;
	bool once = t != NULL && t->tv_sec == 0 && t->tv_nsec == 0;
	uint64_t deadline = once ? 0 : deadline_ns(t);
	uint64_t t0 = et->stats ? nvp_env_get_ticks() : 0;
	int rc = 0;

	drop_returned(et);
	et->cnt.getevents++;
	if (et->nr_done < min || et->nr_done == 0) {
		rc = et->waiter != NULL ? wait_events(td, et, min, once, deadline) :
					  poll_events(td, et, min, once, deadline);
	}
	if (rc != 0) {
		return rc;
	}
	et->nr_ret = et->nr_done < max ? et->nr_done : max;
	if (et->stats) {
		et->cnt.last_tick = nvp_env_get_ticks();
		et->cnt.in_getevents += et->cnt.last_tick - t0;
	}
	return (int)et->nr_ret;
}

static struct io_u *
engine_event(struct thread_data *td, int event)
{
	struct engine_thread *et = td->io_ops_data;

	return (event >= 0 && (unsigned int)event < et->nr_ret) ? et->done[event] : NULL;
}

/* ---- registration ---------------------------------------------------------------------- */

static struct fio_option engine_options[] = {
	{
		.name = "mem_size_mb",
		.lname = "nvpoll DMA memory (MiB)",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct engine_opts, mem_size_mb),
		.def = "0",
		.maxval = ENGINE_MEM_MB_MAX,
		.help = "DMA memory for the nvpoll environment in MiB (0: backend default)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "no_huge",
		.lname = "nvpoll without hugepages",
		.type = FIO_OPT_BOOL,
		.off1 = offsetof(struct engine_opts, no_huge),
		.def = "0",
		.help = "use anonymous 4 KiB pages instead of hugepages for DMA memory",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "bdev_config",
		.alias = "spdk_json_conf", /* the option's name in SPDK's fio bdev engine */
		.lname = "nvpoll bdev configuration",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct engine_opts, bdev_config),
		.help = "bdev mode: filenames are bdev names made by this JSON file (SPDK's "
			"shape) or a one-item line (\"malloc:name=m0,num_blocks=65536\"; a job "
			"file takes ';' for a comment, so several items need the JSON file)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "bdev_io_pool",
		.lname = "nvpoll bdev_io pool",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct engine_opts, bdev_io_pool),
		.def = "0",
		.minval = 0,
		.maxval = 65536,
		.help = "bdev mode: bdev_io objects of each job's channel, 2..65536 (0: enough for "
			"iodepth requests of the job's largest block, split children included)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "poll",
		.lname = "nvpoll waiting mode",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct engine_opts, poll),
		.help = "how the job thread waits: classic, hybrid, hybrid:mean, hybrid:pN, "
			"fixed:US (sleep per request), irq (interrupts), umwait; default: spin",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "bdev_sched",
		.lname = "nvpoll bdev scheduler",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct engine_opts, bdev_sched),
		.help = "bdev mode: the I/O scheduler of the job's bdevs, NAME[:key=value,...]: "
			"none, deadline, kyber, fair (e.g. kyber:read_lat_us=1000)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "bdev_wbt",
		.lname = "nvpoll writeback throttle",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct engine_opts, bdev_wbt),
		.help = "bdev mode: the writeback throttle on the job's bdevs with this read "
			"latency target in us, or off",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "write_class",
		.lname = "nvpoll write class",
		.type = FIO_OPT_STR_STORE,
		.off1 = offsetof(struct engine_opts, write_class),
		.help = "bdev mode: class of the job's writes for the throttle: background, "
			"normal or sync",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "bdev_tenant",
		.lname = "nvpoll tenant",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct engine_opts, bdev_tenant),
		.minval = -1,
		.maxval = NVP_BDEV_MAX_TENANTS - 1,
		.def = "-1",
		.help = "bdev mode: the job's I/O is tenant N (0..63) for bdev_sched=fair; "
			"-1: the default tenant 0",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "tenant_weight",
		.lname = "nvpoll tenant weight",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct engine_opts, tenant_weight),
		.minval = 0,
		.maxval = 1000,
		.def = "0",
		.help = "bdev mode: bdev_tenant's weight under bdev_sched=fair (1..1000; 0: keep)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "qpair_requests",
		.lname = "nvpoll request objects per qpair",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct engine_opts, qpair_requests),
		.def = "0",
		.minval = 0,
		.maxval = 1048576,
		.help = "request objects of each job's qpair, at least its entries (0: twice its "
			"entries or the driver's default, the larger)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "qpair_stats",
		.lname = "nvpoll engine counters",
		.type = FIO_OPT_BOOL,
		.off1 = offsetof(struct engine_opts, qpair_stats),
		.def = "0",
		.help = "print per I/O at the end of the job: commit/getevents calls, polls "
			"(empty ones too) and SQ/CQ doorbell writes (MMIO or shadow) per qpair",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "emu_inline",
		.lname = "nvpoll software controller inline",
		.type = FIO_OPT_BOOL,
		.off1 = offsetof(struct engine_opts, emu_inline),
		.def = "0",
		.help = "measurement: the software controller of the job's files runs in the job "
			"thread's getevents(), not its own thread (one job per controller)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "ring_at_commit",
		.lname = "nvpoll doorbell at commit",
		.type = FIO_OPT_INT,
		.off1 = offsetof(struct engine_opts, ring_at_commit),
		.def = "0",
		.minval = 0,
		.maxval = 65536,
		.help = "N: commit rings the SQ doorbell once N submissions wait for it (1: every "
			"commit); 0: the next poll rings (default; with poll= commit always rings)",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = "commit_shadow",
		.lname = "nvpoll shadow doorbell at commit",
		.type = FIO_OPT_BOOL,
		.off1 = offsetof(struct engine_opts, commit_shadow),
		.def = "0",
		.help = "spinning, ring_at_commit=0: commit writes the SQ tail to the shadow "
			"doorbell when the controller is still reading the SQ (no MMIO write); "
			"an MMIO write it would need is left to the next poll",
		.category = FIO_OPT_C_ENGINE,
		.group = FIO_OPT_G_INVALID,
	},
	{
		.name = NULL,
	},
};

/*
 * fio looks up the symbol "ioengine". Spare room after the ops: a fio whose
 * struct ioengine_ops is larger (another ABI) writes and reads inside our object, not past
 * it, before its version check rejects us.
 */
struct engine_ops_padded {
	struct ioengine_ops ops;
	char spare[512];
};

struct engine_ops_padded ioengine = {
	.ops =
		{
			.name = "nvpoll",
			.version = ENGINE_IOOPS_VERSION,
			/* DISKLESSIO: a filename is a transport ID, not a path; fio must not
			 * make directories for the '/' in "file=/path/img". */
			.flags = FIO_RAWIO | FIO_NOEXTEND | FIO_NODISKUTIL | FIO_MEMALIGN |
				 FIO_DISKLESSIO,
			.setup = engine_setup,
			.init = engine_init,
			.queue = engine_queue,
			.commit = engine_commit,
			.getevents = engine_getevents,
			.event = engine_event,
			.cleanup = engine_cleanup,
			.open_file = engine_open_file,
			.close_file = engine_close_file,
			.invalidate = engine_invalidate,
			.get_file_size = engine_get_file_size,
			.iomem_alloc = engine_iomem_alloc,
			.iomem_free = engine_iomem_free,
			.io_u_init = engine_io_u_init,
			.io_u_free = engine_io_u_free,
			.option_struct_size = sizeof(struct engine_opts),
			.options = engine_options,
		},
};

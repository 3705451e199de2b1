/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multipath over ordinary controllers (include/nvpoll/nvme_mpath.h): a path set, one
 * controller per transport ID of one subsystem, and per-thread I/O handles that pick a
 * path per request (nvme_mpath_select.c) and send a request that met a path error down
 * another path. ANA (NVMe 1.4 section 8.20): the namespace's group state per path comes
 * from the ANA log page (5.14.1.12), read at connect, after a path's reconnect and when an
 * ANA change notice (AEN notice 03h) or an ANA status (SCT 3h, 01h..03h) asks for it.
 *
 * Who writes what: the admin poll thread writes a path's ANA state, its stale flag and
 * "resetting"; an I/O thread writes a path's ANA state from an ANA status it got (the log
 * read that this asks for then writes the truth). All of them are atomics read by every
 * I/O thread; nothing on the I/O path takes a lock or allocates.
 *
 * No admin poll waits for the admin queue: a path's admin work (a failed path's reset,
 * then its ANA log; or an ANA log alone) runs in a fiber (nvme_fiber.c) that the admin
 * polls of the thread that began it resume, each up to the work's next wait for an
 * answer, as the driver's own reconnect steps its reset. The bdev channels run the admin
 * poll from their I/O polls: a reset spans many of them, and meanwhile I/O goes on down
 * the other paths. While its work runs a path belongs to that thread; other threads'
 * admin polls pass it by (the reset holds its controller's admin lock between steps).
 *
 * Ordering per request: it is on exactly one of a qpair (sent), the handle's retry list
 * (waiting for a path) or the handle's free list; its caller's callback runs once, when it
 * leaves for the free list.
 *
 * Built on the public driver API only: nothing here knows a transport.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "nvpoll/env.h"
#include "nvpoll/log.h"
#include "nvpoll/nvme.h"
#include "nvpoll/nvme_mpath.h"
#include "nvpoll/nvme_spec.h"
#include "nvpoll/util.h"
#include "nvme_fiber.h"
#include "nvme_mpath_internal.h"

#define ANA_LOG_SIZE 4096u
/* A request is sent again after a path error up to this many times the number of paths
 * (an ANA status or a lost connection takes the path out of use, so these are errors of
 * paths that look fine: Host or Controller Pathing Error, Aborted by Host) */
#define MAX_PATH_ERRORS_PER_PATH 2u
/* A path's admin work's stack: the driver's reset (its init state machine, the admin
 * helper), an ANA log read, a log line or two; as the driver's reconnect gives its own. */
#define PATH_WORK_STACK (256u * 1024u)

struct mpath_path {
	struct nvp_nvme_ctrlr *ctrlr;
	struct nvp_nvme_ns *ns;
	_Atomic uint8_t ana_state;
	atomic_bool ana_stale; /* read the ANA log at the next admin poll */
	atomic_bool resetting; /* the admin poll is reconnecting it */
	_Atomic uint64_t ios;  /* commands sent down it by the I/O handles freed so far */
	/* cold: the admin poll's */
	struct nvp_nvme_mpath *mp;
	struct nvme_fiber *_Atomic work; /* its admin work under way (path_work()), or NULL */
	bool work_reset;                 /* that work begins with a reset */
	int work_rc;                     /* the reset's result, once the work has ended */
	bool ana_reporting;
	uint32_t anagrpid;
	uint64_t next_reconnect; /* ticks */
	uint32_t reconnects;
	struct nvp_nvme_transport_id trid;
	char desc[192]; /* the transport ID as text, for messages */
};

struct nvp_nvme_mpath {
	enum nvp_nvme_mpath_policy policy;
	_Atomic uint32_t num_paths; /* grows (nvp_nvme_mpath_add_path()), paths[] filled first */
	uint32_t nsid;
	struct mpath_path paths[NVP_NVME_MPATH_MAX_PATHS];
	/* cold */
	uint64_t no_path_ticks;
	uint64_t reconnect_ticks;
	atomic_uint num_ios; /* I/O handles allocated */
	pthread_mutex_t admin_lock;
};

enum mpath_op {
	MPATH_READ,
	MPATH_WRITE,
	MPATH_FLUSH,
	MPATH_WRITE_ZEROES,
	MPATH_COMPARE,
	MPATH_DSM, /* buf: the caller's ranges, lba_count: how many, io_flags: attributes */
};

struct mpath_req {
	STAILQ_ENTRY(mpath_req) link;
	struct nvp_nvme_mpath_io *io;
	void *buf;
	uint64_t lba;
	uint32_t lba_count;
	uint32_t io_flags;
	enum mpath_op op;
	uint32_t path;     /* where it went last */
	uint32_t tried;    /* paths it failed on (bit per path) */
	uint32_t errors;   /* path errors it met */
	uint64_t wait_end; /* ticks: no usable path until then completes it; 0 = not waiting */
	nvp_nvme_cmd_cb cb;
	void *cb_arg;
	nvp_nvme_req_reset_sgl_cb reset_sgl; /* vectored: the caller's SGL callbacks */
	nvp_nvme_req_next_sge_cb next_sge;
	struct nvme_cpl last; /* the last path error, for a request that finds no path */
};

STAILQ_HEAD(mpath_req_list, mpath_req);

struct nvp_nvme_mpath_io {
	struct nvp_nvme_mpath *mp;
	struct nvp_nvme_qpair *qpairs[NVP_NVME_MPATH_MAX_PATHS];
	uint32_t cursor;
	uint32_t outstanding;
	int32_t completed; /* this poll's completions to the caller */
	struct mpath_req_list free_reqs;
	struct mpath_req_list retry;
	struct nvp_nvme_mpath_io_stats stats;
	/* cold */
	struct mpath_req *reqs;
	uint32_t num_reqs;
	struct nvp_nvme_io_qpair_opts qopts;
	bool have_qopts;
	uint64_t qpair_retry_at[NVP_NVME_MPATH_MAX_PATHS]; /* ticks: a failed qpair alloc */
	uint32_t connecting; /* bit per path: its qpair's queues are still being created (made
			      * from a poll, opts.async_mode): no request is sent there yet */
};

/* The paths published so far (acquire: their fields were written before). */
static inline uint32_t
npaths(const struct nvp_nvme_mpath *mp)
{
	return atomic_load_explicit(&mp->num_paths, memory_order_acquire);
}

/* ---------------------------------------------------------------------------------------
 * Names and options
 * ------------------------------------------------------------------------------------- */

void
nvp_nvme_mpath_opts_init(struct nvp_nvme_mpath_opts *opts, size_t opts_size)
{
	struct nvp_nvme_mpath_opts d = {
		.opts_size = opts_size,
		.policy = NVP_NVME_MPATH_FAILOVER,
		.nsid = 0,
		.reconnect_delay_ms = 1000,
		.no_path_timeout_ms = 30000,
	};

	if (opts == NULL) {
		return;
	}
	memcpy(opts, &d, NVP_MIN(opts_size, sizeof(d)));
}

int
nvp_nvme_mpath_policy_parse(const char *str, enum nvp_nvme_mpath_policy *policy)
{
	if (str == NULL || policy == NULL) {
		return -EINVAL;
	}
	if (strcmp(str, "failover") == 0) {
		*policy = NVP_NVME_MPATH_FAILOVER;
	} else if (strcmp(str, "multipath") == 0) {
		*policy = NVP_NVME_MPATH_MULTIPATH;
	} else {
		return -EINVAL;
	}
	return 0;
}

const char *
nvp_nvme_mpath_policy_name(enum nvp_nvme_mpath_policy policy)
{
	return policy == NVP_NVME_MPATH_MULTIPATH ? "multipath" : "failover";
}

const char *
nvp_nvme_ana_state_name(uint8_t state)
{
	switch (state) {
	case NVME_ANA_OPTIMIZED:
		return "optimized";
	case NVME_ANA_NON_OPTIMIZED:
		return "non-optimized";
	case NVME_ANA_INACCESSIBLE:
		return "inaccessible";
	case NVME_ANA_PERSISTENT_LOSS:
		return "persistent-loss";
	case NVME_ANA_CHANGE:
		return "change";
	default:
		return "unknown";
	}
}

/* ---------------------------------------------------------------------------------------
 * ANA: the log page and the change notice (admin poll thread)
 * ------------------------------------------------------------------------------------- */

/* The state of @nsid (group @grpid) in an ANA log of @len bytes, or 0 if not listed. */
static uint8_t
ana_log_find(const uint8_t *log, size_t len, uint32_t nsid, uint32_t grpid)
{
	const struct nvme_ana_page *h = (const void *)log;
	size_t off = sizeof(*h);

	for (uint32_t i = 0; i < h->num_ana_group_desc; i++) {
		const struct nvme_ana_group_desc *g = (const void *)(log + off);
		size_t dlen;

		if (off + sizeof(*g) > len) {
			break;
		}
		dlen = sizeof(*g) + (size_t)g->num_of_nsid * 4u;
		if (g->ana_group_id == grpid && grpid != 0) {
			return g->ana_state & 0xfu;
		}
		for (uint32_t k = 0; k < g->num_of_nsid && off + sizeof(*g) + k * 4u + 4u <= len;
		     k++) {
			if (g->nsid[k] == nsid) {
				return g->ana_state & 0xfu;
			}
		}
		off += dlen;
	}
	return 0;
}

int
nvp_nvme_ctrlr_get_ana_state(struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid, uint8_t *state)
{
	struct nvp_nvme_ns *ns = nvp_nvme_ctrlr_get_ns(ctrlr, nsid);
	uint8_t *log;
	int rc;

	if (ns == NULL || state == NULL) {
		return -EINVAL;
	}
	if ((nvp_nvme_ctrlr_get_data(ctrlr)->cmic & NVME_CTRLR_CMIC_ANA_REPORTING) == 0) {
		return -ENOTSUP;
	}
	log = calloc(1, ANA_LOG_SIZE);
	if (log == NULL) {
		return -ENOMEM;
	}
	rc = nvp_nvme_ctrlr_get_log_page(ctrlr, NVME_LOG_ASYMMETRIC_NAMESPACE_ACCESS, 0, log,
					 ANA_LOG_SIZE, 0, NULL);
	if (rc == 0) {
		*state = ana_log_find(log, ANA_LOG_SIZE, nsid, nvp_nvme_ns_get_data(ns)->anagrpid);
		rc = *state != 0 ? 0 : -ENOENT;
	}
	free(log);
	return rc;
}

/* Read @p's ANA log (which also clears a pending ANA change notice). \return 0 or -errno. */
static int
ana_read(struct mpath_path *p)
{
	uint8_t st = 0;
	int rc;

	if (!p->ana_reporting) {
		atomic_store(&p->ana_state, NVME_ANA_OPTIMIZED);
		atomic_store(&p->ana_stale, false);
		return 0;
	}
	atomic_store(&p->ana_stale, false); /* a notice after this read asks again */
	rc = nvp_nvme_ctrlr_get_ana_state(p->ctrlr, p->mp->nsid, &st);
	if (rc == -ENOENT) {
		NVP_WARNLOG("multipath: %s: namespace %u (ANA group %u) is not in the ANA log; "
			    "the path is taken as inaccessible",
			    p->desc, p->mp->nsid, p->anagrpid);
		st = NVME_ANA_INACCESSIBLE;
	} else if (rc != 0) {
		atomic_store(&p->ana_stale, true);
		return rc;
	}
	if (atomic_exchange(&p->ana_state, st) != st) {
		NVP_NOTICELOG("multipath: path %u: ANA state %s", (unsigned)(p - p->mp->paths),
			      nvp_nvme_ana_state_name(st));
	}
	return 0;
}

/* The controller's event callback (admin poll): an ANA change notice marks the log stale. */
static void
path_aer_cb(void *arg, const struct nvme_cpl *cpl)
{
	struct mpath_path *p = arg;
	union nvme_async_event_completion ev = { .raw = cpl->cdw0 };

	if (ev.bits.async_event_type == NVME_ASYNC_EVENT_TYPE_NOTICE &&
	    ev.bits.async_event_info == NVME_ASYNC_EVENT_ANA_CHANGE) {
		atomic_store(&p->ana_stale, true);
	}
}

/* ---------------------------------------------------------------------------------------
 * Connect, detach, the admin poll
 * ------------------------------------------------------------------------------------- */

static bool
all_zero(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (b[i] != 0) {
			return false;
		}
	}
	return true;
}

/* Path @i against path 0: one subsystem, one namespace. \return 0 or -EINVAL (logged). */
static int
same_namespace(const struct nvp_nvme_mpath *mp, uint32_t i)
{
	const struct nvme_ctrlr_data *c0 = nvp_nvme_ctrlr_get_data(mp->paths[0].ctrlr);
	const struct nvme_ctrlr_data *ci = nvp_nvme_ctrlr_get_data(mp->paths[i].ctrlr);
	const struct nvme_ns_data *n0 = nvp_nvme_ns_get_data(mp->paths[0].ns);
	const struct nvme_ns_data *ni = nvp_nvme_ns_get_data(mp->paths[i].ns);

	if (strncmp(c0->subnqn, ci->subnqn, sizeof(c0->subnqn)) != 0) {
		NVP_ERRLOG("multipath: path %u (%s) is subsystem '%.*s', path 0 is '%.*s': all "
			   "paths of a multipath controller must reach one subsystem; give "
			   "transport IDs of the same subsystem NQN",
			   i, mp->paths[i].desc, 223, ci->subnqn, 223, c0->subnqn);
		return -EINVAL;
	}
	if ((!all_zero(n0->nguid, 16) && memcmp(n0->nguid, ni->nguid, 16) != 0) ||
	    (!all_zero(n0->eui64, 8) && memcmp(n0->eui64, ni->eui64, 8) != 0) ||
	    nvp_nvme_ns_get_num_sectors(mp->paths[0].ns) !=
		    nvp_nvme_ns_get_num_sectors(mp->paths[i].ns) ||
	    nvp_nvme_ns_get_sector_size(mp->paths[0].ns) !=
		    nvp_nvme_ns_get_sector_size(mp->paths[i].ns)) {
		NVP_ERRLOG("multipath: namespace %u through path %u (%s) is not the one through "
			   "path 0 (NGUID, EUI64, size or block size differ)",
			   mp->nsid, i, mp->paths[i].desc);
		return -EINVAL;
	}
	return 0;
}

/* Connect path @i and find the namespace on it. \return 0 or -errno (logged). */
static int
path_connect(struct nvp_nvme_mpath *mp, uint32_t i, const struct nvp_nvme_transport_id *trid,
	     const struct nvp_nvme_ctrlr_opts *copts)
{
	struct mpath_path *p = &mp->paths[i];
	const struct nvme_ctrlr_data *cd;
	int rc;

	p->mp = mp;
	p->trid = *trid;
	(void)nvp_nvme_transport_id_fmt(p->desc, sizeof(p->desc), trid);
	rc = nvp_nvme_connect(trid, copts, &p->ctrlr);
	if (rc != 0) {
		NVP_ERRLOG("multipath: path %u (%s): connect failed (%d)", i, p->desc, rc);
		p->ctrlr = NULL;
		return rc;
	}
	if (mp->nsid == 0) {
		mp->nsid = nvp_nvme_ctrlr_get_first_active_ns(p->ctrlr);
	}
	p->ns = nvp_nvme_ctrlr_get_ns(p->ctrlr, mp->nsid);
	if (p->ns == NULL) {
		NVP_ERRLOG("multipath: path %u (%s): namespace %u is not active there", i, p->desc,
			   mp->nsid);
		return -ENODEV;
	}
	cd = nvp_nvme_ctrlr_get_data(p->ctrlr);
	p->ana_reporting = (cd->cmic & NVME_CTRLR_CMIC_ANA_REPORTING) != 0;
	p->anagrpid = p->ana_reporting ? nvp_nvme_ns_get_data(p->ns)->anagrpid : 0;
	atomic_init(&p->ana_state, NVME_ANA_OPTIMIZED);
	atomic_init(&p->ana_stale, false);
	atomic_init(&p->resetting, false);
	atomic_init(&p->ios, 0);
	atomic_init(&p->work, NULL);
	nvp_nvme_ctrlr_register_aer_callback(p->ctrlr, path_aer_cb, p);
	return i == 0 ? 0 : same_namespace(mp, i);
}

/* A path controller's options: the caller's, with the driver's reconnect off (this layer
 * reconnects, so that a lost connection's requests come back now and go elsewhere). */
static void
path_ctrlr_opts(const struct nvp_nvme_ctrlr_opts *user, struct nvp_nvme_ctrlr_opts *copts)
{
	nvp_nvme_ctrlr_opts_init(copts, sizeof(*copts));
	if (user != NULL) {
		memcpy(copts, user, NVP_MIN(user->opts_size, sizeof(*copts)));
	}
	copts->opts_size = sizeof(*copts);
	copts->ctrlr_loss_timeout_sec = 0;
	copts->reconnect_delay_sec = 0;
	copts->fast_io_fail_timeout_sec = 0;
}

static void
paths_detach(struct nvp_nvme_mpath *mp)
{
	for (uint32_t i = 0; i < NVP_NVME_MPATH_MAX_PATHS; i++) {
		if (mp->paths[i].ctrlr != NULL) {
			(void)nvp_nvme_detach(mp->paths[i].ctrlr);
			mp->paths[i].ctrlr = NULL;
		}
	}
}

int
nvp_nvme_mpath_connect(const struct nvp_nvme_transport_id *trids, uint32_t num_trids,
		       const struct nvp_nvme_ctrlr_opts *ctrlr_opts,
		       const struct nvp_nvme_mpath_opts *opts, struct nvp_nvme_mpath **mpath)
{
	struct nvp_nvme_mpath_opts o;
	struct nvp_nvme_ctrlr_opts copts;
	struct nvp_nvme_mpath *mp;
	uint64_t hz = nvp_env_get_ticks_hz();
	int rc = 0;

	if (trids == NULL || mpath == NULL) {
		NVP_ERRLOG("multipath: connect without transport IDs or a place for the result");
		return -EINVAL;
	}
	if (num_trids == 0 || num_trids > NVP_NVME_MPATH_MAX_PATHS) {
		NVP_ERRLOG("multipath: %u transport IDs; give 1 to %u", num_trids,
			   NVP_NVME_MPATH_MAX_PATHS);
		return -EINVAL;
	}
	nvp_nvme_mpath_opts_init(&o, sizeof(o));
	if (opts != NULL) {
		memcpy(&o, opts, NVP_MIN(opts->opts_size, sizeof(o)));
	}
	if (o.policy != NVP_NVME_MPATH_FAILOVER && o.policy != NVP_NVME_MPATH_MULTIPATH) {
		NVP_ERRLOG("multipath: policy %d unknown; failover or multipath", (int)o.policy);
		return -EINVAL;
	}
	path_ctrlr_opts(ctrlr_opts, &copts);
	mp = calloc(1, sizeof(*mp));
	if (mp == NULL) {
		return -ENOMEM;
	}
	mp->policy = o.policy;
	mp->nsid = o.nsid;
	mp->no_path_ticks = (uint64_t)o.no_path_timeout_ms * hz / 1000u;
	mp->reconnect_ticks = (uint64_t)o.reconnect_delay_ms * hz / 1000u;
	atomic_init(&mp->num_ios, 0);
	atomic_init(&mp->num_paths, 0);
	pthread_mutex_init(&mp->admin_lock, NULL);
	for (uint32_t i = 0; i < num_trids && rc == 0; i++) {
		rc = path_connect(mp, i, &trids[i], &copts);
		atomic_store(&mp->num_paths, i + 1);
	}
	for (uint32_t i = 0; i < num_trids && rc == 0; i++) {
		rc = ana_read(&mp->paths[i]);
	}
	if (rc != 0) {
		paths_detach(mp);
		pthread_mutex_destroy(&mp->admin_lock);
		free(mp);
		return rc;
	}
	*mpath = mp;
	return 0;
}

int
nvp_nvme_mpath_add_path(struct nvp_nvme_mpath *mp, const struct nvp_nvme_transport_id *trid,
			const struct nvp_nvme_ctrlr_opts *ctrlr_opts)
{
	struct nvp_nvme_ctrlr_opts copts;
	uint32_t i;
	int rc;

	if (mp == NULL || trid == NULL) {
		return -EINVAL;
	}
	pthread_mutex_lock(&mp->admin_lock);
	i = npaths(mp);
	if (i == NVP_NVME_MPATH_MAX_PATHS) {
		pthread_mutex_unlock(&mp->admin_lock);
		NVP_ERRLOG("multipath: already %u paths, the most there may be", i);
		return -ENOSPC;
	}
	path_ctrlr_opts(ctrlr_opts, &copts);
	rc = path_connect(mp, i, trid, &copts);
	if (rc == 0) {
		rc = ana_read(&mp->paths[i]);
	}
	if (rc != 0) {
		if (mp->paths[i].ctrlr != NULL) {
			(void)nvp_nvme_detach(mp->paths[i].ctrlr);
		}
		memset(&mp->paths[i], 0, sizeof(mp->paths[i]));
	} else {
		atomic_store_explicit(&mp->num_paths, i + 1, memory_order_release);
	}
	pthread_mutex_unlock(&mp->admin_lock);
	return rc;
}

static bool works_end(struct nvp_nvme_mpath *mp);

int
nvp_nvme_mpath_detach(struct nvp_nvme_mpath *mp)
{
	if (mp == NULL) {
		return -EINVAL;
	}
	if (atomic_load(&mp->num_ios) != 0) {
		NVP_ERRLOG("multipath: detach with %u I/O handles allocated; free them first",
			   atomic_load(&mp->num_ios));
		return -EBUSY;
	}
	if (works_end(mp)) {
		NVP_ERRLOG("multipath: detach while a path's reset or ANA read begun by another "
			   "thread is under way; poll the multipath controller on that thread "
			   "until it ends, or detach there");
		return -EBUSY;
	}
	paths_detach(mp);
	pthread_mutex_destroy(&mp->admin_lock);
	free(mp);
	return 0;
}

static bool
path_connected(const struct mpath_path *p)
{
	return !atomic_load(&p->resetting) && !nvp_nvme_ctrlr_is_failed(p->ctrlr) &&
	       !nvp_nvme_ctrlr_is_reconnecting(p->ctrlr);
}

/*
 * A path's admin work, in its fiber: a failed path's reset (the driver's own; its waits
 * for answers yield), then its ANA log before I/O may pick it again; or the log alone.
 */
static void
path_work(void *arg)
{
	struct mpath_path *p = arg;

	p->work_rc = 0;
	if (p->work_reset) {
		p->work_rc = nvp_nvme_ctrlr_reset(p->ctrlr);
	}
	if (p->work_rc == 0) {
		(void)ana_read(p); /* a failure leaves the log stale: read again later */
	}
}

/* The work has ended (admin poll thread): a reset's outcome. */
static void
path_work_end(struct nvp_nvme_mpath *mp, struct mpath_path *p)
{
	if (!p->work_reset) {
		return;
	}
	if (p->work_rc != 0) {
		p->next_reconnect = nvp_env_get_ticks() + mp->reconnect_ticks;
	} else {
		p->reconnects++;
		NVP_NOTICELOG("multipath: path %u (%s) reconnected; ANA state %s",
			      (unsigned)(p - mp->paths), p->desc,
			      nvp_nvme_ana_state_name(atomic_load(&p->ana_state)));
	}
	atomic_store(&p->resetting, false);
}

/*
 * A step of @p's work, on the thread that began it: up to its next wait for an answer;
 * once it has ended, what it came to. \return true if the work is still under way (on
 * this thread or another).
 */
static bool
path_work_step(struct nvp_nvme_mpath *mp, struct mpath_path *p)
{
	struct nvme_fiber *f = atomic_load(&p->work);

	if (f == NULL) {
		return false;
	}
	if (!nvme_fiber_is_owner(f) || !nvme_fiber_resume(f)) {
		return true;
	}
	atomic_store(&p->work, NULL);
	nvme_fiber_destroy(f);
	path_work_end(mp, p);
	return false;
}

/* @p's work begins (@reset: a failed path's reset first), its first step now; from then
 * on a step per admin poll of this thread (with no memory for a fiber, all of it now). */
static void
path_work_begin(struct nvp_nvme_mpath *mp, struct mpath_path *p, bool reset)
{
	struct nvme_fiber *f;

	p->work_reset = reset;
	if (reset) {
		atomic_store(&p->resetting, true); /* no I/O picks it until its end */
	}
	if (nvme_fiber_create(path_work, p, PATH_WORK_STACK, &f) != 0) {
		path_work(p);
		path_work_end(mp, p);
		return;
	}
	atomic_store(&p->work, f);
	(void)path_work_step(mp, p);
}

/*
 * Admin lock held: the works this thread began run to their end (each wait in them is
 * bounded by the path's admin_timeout_ms), so that no fiber waits for a thread that will
 * not poll again. \return true if a work another thread began is still under way.
 */
static bool
works_finish(struct nvp_nvme_mpath *mp)
{
	bool others = false;

	for (uint32_t i = 0; i < npaths(mp); i++) {
		struct mpath_path *p = &mp->paths[i];

		while (nvme_fiber_is_owner(atomic_load(&p->work))) {
			(void)path_work_step(mp, p);
		}
		others = others || atomic_load(&p->work) != NULL;
	}
	return others;
}

/* The path works this thread began, run to their end. \return true if another thread's
 * remain. */
static bool
works_end(struct nvp_nvme_mpath *mp)
{
	bool others;

	pthread_mutex_lock(&mp->admin_lock);
	others = works_finish(mp);
	pthread_mutex_unlock(&mp->admin_lock);
	return others;
}

int32_t
nvp_nvme_mpath_process_admin_completions(struct nvp_nvme_mpath *mp)
{
	uint64_t now = 0;
	int32_t total = 0;

	if (mp == NULL) {
		return -EINVAL;
	}
	if (pthread_mutex_trylock(&mp->admin_lock) != 0) {
		return -EBUSY;
	}
	for (uint32_t i = 0; i < npaths(mp); i++) {
		struct mpath_path *p = &mp->paths[i];
		int32_t n;

		if (path_work_step(mp, p)) {
			continue; /* its work is under way: it polls the admin queue itself */
		}
		if (nvp_nvme_ctrlr_is_failed(p->ctrlr)) {
			now = now != 0 ? now : nvp_env_get_ticks();
			if (now >= p->next_reconnect) {
				path_work_begin(mp, p, true);
			}
			continue;
		}
		n = nvp_nvme_ctrlr_process_admin_completions(p->ctrlr);
		total += n > 0 ? n : 0;
		if (atomic_load(&p->ana_stale) && !nvp_nvme_ctrlr_is_failed(p->ctrlr)) {
			path_work_begin(mp, p, false);
		}
	}
	pthread_mutex_unlock(&mp->admin_lock);
	return total;
}

uint32_t
nvp_nvme_mpath_get_num_paths(const struct nvp_nvme_mpath *mp)
{
	return mp != NULL ? npaths(mp) : 0;
}

enum nvp_nvme_mpath_policy
nvp_nvme_mpath_get_policy(const struct nvp_nvme_mpath *mp)
{
	return mp != NULL ? mp->policy : NVP_NVME_MPATH_FAILOVER;
}

uint32_t
nvp_nvme_mpath_get_nsid(const struct nvp_nvme_mpath *mp)
{
	return mp != NULL ? mp->nsid : 0;
}

struct nvp_nvme_ns *
nvp_nvme_mpath_get_ns(const struct nvp_nvme_mpath *mp, uint32_t idx)
{
	return mp != NULL && idx < npaths(mp) ? mp->paths[idx].ns : NULL;
}

int
nvp_nvme_mpath_get_path_info(const struct nvp_nvme_mpath *mp, uint32_t idx,
			     struct nvp_nvme_mpath_path_info *info)
{
	const struct mpath_path *p;

	if (mp == NULL || info == NULL || idx >= npaths(mp) || info->info_size < sizeof(*info)) {
		return -EINVAL;
	}
	p = &mp->paths[idx];
	info->ctrlr = p->ctrlr;
	info->trid = &p->trid;
	info->ana_reporting = p->ana_reporting;
	info->ana_state = atomic_load(&p->ana_state);
	info->anagrpid = p->anagrpid;
	info->connected = path_connected(p);
	info->reconnects = p->reconnects;
	info->ios = atomic_load(&p->ios);
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * I/O handles (owner thread)
 * ------------------------------------------------------------------------------------- */

/*
 * A qpair on every path that is up. A path that is down, or whose qpair cannot be made now
 * (a connection that went away unnoticed), gets it later (make_missing_qpairs()).
 * \return 0, or the first error when no path got one (and any path was tried).
 */
static int
alloc_qpairs(struct nvp_nvme_mpath_io *io)
{
	uint64_t retry_at = nvp_env_get_ticks() + io->mp->reconnect_ticks;
	uint32_t made = 0;
	int first = 0;

	for (uint32_t i = 0; i < npaths(io->mp); i++) {
		int rc;

		if (!path_connected(&io->mp->paths[i])) {
			continue;
		}
		rc = nvp_nvme_ctrlr_alloc_io_qpair(
			io->mp->paths[i].ctrlr, io->have_qopts ? &io->qopts : NULL, &io->qpairs[i]);
		if (rc != 0) {
			io->qpairs[i] = NULL;
			io->qpair_retry_at[i] = retry_at;
			first = first != 0 ? first : rc;
		}
		made += rc == 0 ? 1u : 0u;
	}
	return made != 0 ? 0 : first;
}

int
nvp_nvme_mpath_io_alloc(struct nvp_nvme_mpath *mp, const struct nvp_nvme_io_qpair_opts *qopts,
			struct nvp_nvme_mpath_io **out)
{
	struct nvp_nvme_io_qpair_opts d;
	struct nvp_nvme_mpath_io *io;
	int rc = 0;

	if (mp == NULL || out == NULL) {
		return -EINVAL;
	}
	io = calloc(1, sizeof(*io));
	if (io == NULL) {
		return -ENOMEM;
	}
	io->mp = mp;
	io->have_qopts = qopts != NULL;
	if (qopts != NULL) {
		memcpy(&io->qopts, qopts, NVP_MIN(qopts->opts_size, sizeof(io->qopts)));
		io->qopts.opts_size = sizeof(io->qopts);
	}
	nvp_nvme_ctrlr_get_default_io_qpair_opts(mp->paths[0].ctrlr, &d, sizeof(d));
	io->num_reqs = qopts != NULL ? qopts->io_queue_requests : d.io_queue_requests;
	io->reqs = calloc(io->num_reqs, sizeof(*io->reqs));
	STAILQ_INIT(&io->free_reqs);
	STAILQ_INIT(&io->retry);
	for (uint32_t i = 0; io->reqs != NULL && i < io->num_reqs; i++) {
		io->reqs[i].io = io;
		STAILQ_INSERT_TAIL(&io->free_reqs, &io->reqs[i], link);
	}
	rc = io->reqs != NULL ? alloc_qpairs(io) : -ENOMEM;
	if (rc != 0) {
		for (uint32_t i = 0; i < npaths(mp); i++) {
			if (io->qpairs[i] != NULL) {
				(void)nvp_nvme_ctrlr_free_io_qpair(io->qpairs[i]);
			}
		}
		free(io->reqs);
		free(io);
		return rc;
	}
	atomic_fetch_add(&mp->num_ios, 1);
	io->stats.info_size = sizeof(io->stats);
	*out = io;
	return 0;
}

int
nvp_nvme_mpath_io_free(struct nvp_nvme_mpath_io *io)
{
	if (io == NULL) {
		return -EINVAL;
	}
	if (io->outstanding != 0) {
		return -EBUSY;
	}
	(void)works_end(io->mp); /* this thread's polls may end here */
	for (uint32_t i = 0; i < npaths(io->mp); i++) {
		if (io->qpairs[i] != NULL) {
			(void)nvp_nvme_ctrlr_free_io_qpair(io->qpairs[i]);
		}
		atomic_fetch_add(&io->mp->paths[i].ios, io->stats.path_ios[i]);
	}
	atomic_fetch_sub(&io->mp->num_ios, 1);
	free(io->reqs);
	free(io);
	return 0;
}

/* A path error: SCT 3h or a request a lost connection gave back; never with DNR. */
static bool
is_path_error(const struct nvme_cpl *cpl)
{
	if (cpl->status.dnr) {
		return false;
	}
	return cpl->status.sct == NVME_SCT_PATH || (cpl->status.sct == NVME_SCT_GENERIC &&
						    cpl->status.sc == NVME_SC_ABORTED_SQ_DELETION);
}

static void
req_complete(struct mpath_req *r, const struct nvme_cpl *cpl)
{
	struct nvp_nvme_mpath_io *io = r->io;
	nvp_nvme_cmd_cb cb = r->cb;
	void *cb_arg = r->cb_arg;

	STAILQ_INSERT_HEAD(&io->free_reqs, r, link);
	io->outstanding--;
	io->completed++;
	cb(cb_arg, cpl);
}

/* An ANA status says the path's state before its log does: take it now, read the log. */
static void
note_ana_status(struct mpath_path *p, const struct nvme_cpl *cpl)
{
	static const uint8_t st[] = { 0, NVME_ANA_PERSISTENT_LOSS, NVME_ANA_INACCESSIBLE,
				      NVME_ANA_CHANGE };

	if (cpl->status.sct == NVME_SCT_PATH && cpl->status.sc >= NVME_SC_ANA_PERSISTENT_LOSS &&
	    cpl->status.sc <= NVME_SC_ANA_TRANSITION) {
		atomic_store(&p->ana_state, st[cpl->status.sc]);
		atomic_store(&p->ana_stale, true);
	}
}

static void
req_cpl(void *arg, const struct nvme_cpl *cpl)
{
	struct mpath_req *r = arg;
	struct nvp_nvme_mpath_io *io = r->io;

	if (!nvme_cpl_is_error(cpl) || !is_path_error(cpl)) {
		req_complete(r, cpl);
		return;
	}
	io->stats.path_errors++;
	note_ana_status(&io->mp->paths[r->path], cpl);
	if (++r->errors > MAX_PATH_ERRORS_PER_PATH * npaths(io->mp)) {
		/* paths that stay usable yet keep failing it (not an ANA state): give up */
		req_complete(r, cpl);
		return;
	}
	r->last = *cpl;
	r->tried |= 1u << r->path;
	STAILQ_INSERT_TAIL(&io->retry, r, link); /* sent again after this poll */
}

/* The driver's SGL callbacks get the request; the caller's get its own argument. */
static void
req_reset_sgl(void *arg, uint32_t offset)
{
	struct mpath_req *r = arg;

	r->reset_sgl(r->cb_arg, offset);
}

static int
req_next_sge(void *arg, void **address, uint32_t *length)
{
	struct mpath_req *r = arg;

	return r->next_sge(r->cb_arg, address, length);
}

static int
submit_on(struct nvp_nvme_mpath_io *io, uint32_t i, struct mpath_req *r)
{
	struct nvp_nvme_ns *ns = io->mp->paths[i].ns;
	struct nvp_nvme_qpair *qp = io->qpairs[i];

	switch (r->op) {
	case MPATH_READ:
		return r->buf != NULL ?
			       nvp_nvme_ns_cmd_read(ns, qp, r->buf, r->lba, r->lba_count, req_cpl,
						    r, r->io_flags) :
			       nvp_nvme_ns_cmd_readv(ns, qp, r->lba, r->lba_count, req_cpl, r,
						     r->io_flags, req_reset_sgl, req_next_sge);
	case MPATH_WRITE:
		return r->buf != NULL ?
			       nvp_nvme_ns_cmd_write(ns, qp, r->buf, r->lba, r->lba_count, req_cpl,
						     r, r->io_flags) :
			       nvp_nvme_ns_cmd_writev(ns, qp, r->lba, r->lba_count, req_cpl, r,
						      r->io_flags, req_reset_sgl, req_next_sge);
	case MPATH_WRITE_ZEROES:
		return nvp_nvme_ns_cmd_write_zeroes(ns, qp, r->lba, r->lba_count, req_cpl, r,
						    r->io_flags);
	case MPATH_COMPARE:
		return nvp_nvme_ns_cmd_compare(ns, qp, r->buf, r->lba, r->lba_count, req_cpl, r,
					       r->io_flags);
	case MPATH_DSM:
		return nvp_nvme_ns_cmd_dataset_management(ns, qp, r->io_flags, r->buf,
							  (uint16_t)r->lba_count, req_cpl, r);
	default:
		return nvp_nvme_ns_cmd_flush(ns, qp, req_cpl, r);
	}
}

static void
views(const struct nvp_nvme_mpath_io *io, struct nvme_mpath_view *v)
{
	for (uint32_t i = 0; i < npaths(io->mp); i++) {
		const struct mpath_path *p = &io->mp->paths[i];

		v[i].ana_state = atomic_load_explicit(&p->ana_state, memory_order_relaxed);
		v[i].usable = io->qpairs[i] != NULL && !(io->connecting & (1u << i)) &&
			      path_connected(p);
	}
}

/*
 * Send @r down the best path it has not failed on (any usable one if it failed on all).
 * \return 0; -EAGAIN no usable path; another -errno: the request itself is refused.
 */
static int
req_send(struct nvp_nvme_mpath_io *io, struct mpath_req *r)
{
	struct nvme_mpath_view v[NVP_NVME_MPATH_MAX_PATHS];
	uint32_t n = npaths(io->mp);
	int rc, i;

	views(io, v);
	for (uint32_t attempt = 0; attempt < n; attempt++) {
		i = nvme_mpath_select(io->mp->policy, v, n, r->tried, &io->cursor);
		if (i < 0) {
			i = nvme_mpath_select(io->mp->policy, v, n, 0, &io->cursor);
		}
		if (i < 0) {
			return -EAGAIN;
		}
		rc = submit_on(io, (uint32_t)i, r);
		if (rc == 0) {
			r->path = (uint32_t)i;
			r->wait_end = 0;
			io->stats.path_ios[i]++;
			return 0;
		}
		if (rc != -ENXIO) {
			return rc;
		}
		v[i].usable = false; /* failed under us: another */
		r->tried |= 1u << i;
	}
	return -EAGAIN;
}

/* A request from the pool, or NULL (*@rc: -EINVAL bad arguments, -ENOMEM pool empty). */
static struct mpath_req *
req_get(struct nvp_nvme_mpath_io *io, enum mpath_op op, uint32_t lba_count, nvp_nvme_cmd_cb cb,
	void *cb_arg, int *rc)
{
	struct mpath_req *r;

	*rc = -EINVAL;
	if (io == NULL || cb == NULL || (op != MPATH_FLUSH && lba_count == 0)) {
		return NULL;
	}
	*rc = -ENOMEM;
	r = STAILQ_FIRST(&io->free_reqs);
	if (r == NULL) {
		return NULL;
	}
	STAILQ_REMOVE_HEAD(&io->free_reqs, link);
	*r = (struct mpath_req){
		.io = io, .op = op, .lba_count = lba_count, .cb = cb, .cb_arg = cb_arg
	};
	*rc = 0;
	return r;
}

/* Send @r (filled), or park it until a path is usable. \return 0 or the refusal's -errno. */
static int
req_start(struct nvp_nvme_mpath_io *io, struct mpath_req *r)
{
	int rc;

	r->last.status.sct = NVME_SCT_PATH;
	r->last.status.sc = NVME_SC_HOST_PATH_ERROR;
	rc = req_send(io, r);
	if (rc == -EAGAIN) {
		io->stats.no_path_waits++;
		r->wait_end = nvp_env_get_ticks() + io->mp->no_path_ticks;
		STAILQ_INSERT_TAIL(&io->retry, r, link);
		rc = 0;
	}
	if (rc != 0) {
		STAILQ_INSERT_HEAD(&io->free_reqs, r, link);
		return rc;
	}
	io->outstanding++;
	return 0;
}

static int
rw(struct nvp_nvme_mpath_io *io, enum mpath_op op, void *buf, uint64_t lba, uint32_t lba_count,
   nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags)
{
	struct mpath_req *r;
	int rc;

	if (buf == NULL && op != MPATH_FLUSH && op != MPATH_WRITE_ZEROES) {
		return -EINVAL;
	}
	r = req_get(io, op, lba_count, cb, cb_arg, &rc);
	if (r == NULL) {
		return rc;
	}
	r->buf = buf;
	r->lba = lba;
	r->io_flags = io_flags;
	return req_start(io, r);
}

static int
rwv(struct nvp_nvme_mpath_io *io, enum mpath_op op, uint64_t lba, uint32_t lba_count,
    nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags, nvp_nvme_req_reset_sgl_cb reset_sgl,
    nvp_nvme_req_next_sge_cb next_sge)
{
	struct mpath_req *r;
	int rc;

	if (reset_sgl == NULL || next_sge == NULL) {
		return -EINVAL;
	}
	r = req_get(io, op, lba_count, cb, cb_arg, &rc);
	if (r == NULL) {
		return rc;
	}
	r->lba = lba;
	r->io_flags = io_flags;
	r->reset_sgl = reset_sgl;
	r->next_sge = next_sge;
	return req_start(io, r);
}

int
nvp_nvme_mpath_cmd_read(struct nvp_nvme_mpath_io *io, void *buf, uint64_t lba, uint32_t lba_count,
			nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags)
{
	return rw(io, MPATH_READ, buf, lba, lba_count, cb, cb_arg, io_flags);
}

int
nvp_nvme_mpath_cmd_write(struct nvp_nvme_mpath_io *io, void *buf, uint64_t lba, uint32_t lba_count,
			 nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags)
{
	return rw(io, MPATH_WRITE, buf, lba, lba_count, cb, cb_arg, io_flags);
}

int
nvp_nvme_mpath_cmd_readv(struct nvp_nvme_mpath_io *io, uint64_t lba, uint32_t lba_count,
			 nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags,
			 nvp_nvme_req_reset_sgl_cb reset_sgl, nvp_nvme_req_next_sge_cb next_sge)
{
	return rwv(io, MPATH_READ, lba, lba_count, cb, cb_arg, io_flags, reset_sgl, next_sge);
}

int
nvp_nvme_mpath_cmd_writev(struct nvp_nvme_mpath_io *io, uint64_t lba, uint32_t lba_count,
			  nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags,
			  nvp_nvme_req_reset_sgl_cb reset_sgl, nvp_nvme_req_next_sge_cb next_sge)
{
	return rwv(io, MPATH_WRITE, lba, lba_count, cb, cb_arg, io_flags, reset_sgl, next_sge);
}

int
nvp_nvme_mpath_cmd_flush(struct nvp_nvme_mpath_io *io, nvp_nvme_cmd_cb cb, void *cb_arg)
{
	return rw(io, MPATH_FLUSH, NULL, 0, 0, cb, cb_arg, 0);
}

int
nvp_nvme_mpath_cmd_write_zeroes(struct nvp_nvme_mpath_io *io, uint64_t lba, uint32_t lba_count,
				nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags)
{
	return rw(io, MPATH_WRITE_ZEROES, NULL, lba, lba_count, cb, cb_arg, io_flags);
}

int
nvp_nvme_mpath_cmd_compare(struct nvp_nvme_mpath_io *io, void *buf, uint64_t lba,
			   uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags)
{
	return rw(io, MPATH_COMPARE, buf, lba, lba_count, cb, cb_arg, io_flags);
}

int
nvp_nvme_mpath_cmd_dataset_management(struct nvp_nvme_mpath_io *io, uint32_t attributes,
				      const struct nvme_dsm_range *ranges, uint16_t num_ranges,
				      nvp_nvme_cmd_cb cb, void *cb_arg)
{
	if (num_ranges > NVME_DSM_MAX_RANGES) {
		return -EINVAL;
	}
	/* the ranges are read again at each path's submission (they are copied there) */
	return rw(io, MPATH_DSM, (void *)(uintptr_t)ranges, 0, num_ranges, cb, cb_arg, attributes);
}

/* What came back with a path error and what waits for a path: another try each. */
static void
resend_waiting(struct nvp_nvme_mpath_io *io)
{
	struct mpath_req_list todo = STAILQ_HEAD_INITIALIZER(todo);
	uint64_t now = 0;
	struct mpath_req *r;

	STAILQ_CONCAT(&todo, &io->retry);
	while ((r = STAILQ_FIRST(&todo)) != NULL) {
		int rc;

		STAILQ_REMOVE_HEAD(&todo, link);
		rc = req_send(io, r);
		if (rc == 0) {
			io->stats.retries += r->tried != 0 ? 1u : 0u;
			continue;
		}
		if (rc == -EAGAIN) {
			now = now != 0 ? now : nvp_env_get_ticks();
			if (r->wait_end == 0) {
				io->stats.no_path_waits++;
				r->wait_end = now + io->mp->no_path_ticks;
			}
			if (now < r->wait_end) {
				STAILQ_INSERT_TAIL(&io->retry, r, link);
				continue;
			}
		}
		req_complete(r, &r->last); /* out of time, or refused by the path */
	}
}

/*
 * Qpairs for the paths that are back (or were down when the handle was made). This runs
 * in the I/O poll, which must not wait for a connection (NVMe/TCP: connect, ICReq,
 * Fabrics Connect; PCIe: Create I/O CQ/SQ): the qpair is made with opts.async_mode, and
 * the next polls create its queues (poll_connecting()). The path takes requests once
 * they are there.
 */
static void
make_missing_qpairs(struct nvp_nvme_mpath_io *io)
{
	uint64_t now = nvp_env_get_ticks();
	struct nvp_nvme_io_qpair_opts o;

	for (uint32_t i = 0; i < npaths(io->mp); i++) {
		struct nvp_nvme_ctrlr *ctrlr = io->mp->paths[i].ctrlr;

		if (io->qpairs[i] != NULL || !path_connected(&io->mp->paths[i]) ||
		    now < io->qpair_retry_at[i]) {
			continue;
		}
		if (io->have_qopts) {
			o = io->qopts;
		} else {
			nvp_nvme_ctrlr_get_default_io_qpair_opts(ctrlr, &o, sizeof(o));
		}
		o.async_mode = true;
		if (nvp_nvme_ctrlr_alloc_io_qpair(ctrlr, &o, &io->qpairs[i]) != 0) {
			io->qpairs[i] = NULL; /* not again before the reconnect delay */
			io->qpair_retry_at[i] = now + io->mp->reconnect_ticks;
		} else {
			io->connecting |= 1u << i;
			io->stats.qpairs_made++;
		}
	}
}

/*
 * A qpair of make_missing_qpairs() after a poll (@rc its result): connected, the path
 * takes requests; failed (the connection or a queue's creation refused, no reconnect),
 * it is freed and made again after the reconnect delay.
 */
static void
poll_connecting(struct nvp_nvme_mpath_io *io, uint32_t i, int32_t rc)
{
	if (nvp_nvme_qpair_is_connected(io->qpairs[i])) {
		io->connecting &= ~(1u << i);
	} else if (rc < 0) {
		(void)nvp_nvme_ctrlr_free_io_qpair(io->qpairs[i]);
		io->qpairs[i] = NULL;
		io->connecting &= ~(1u << i);
		io->qpair_retry_at[i] = nvp_env_get_ticks() + io->mp->reconnect_ticks;
	}
}

int32_t
nvp_nvme_mpath_io_process_completions(struct nvp_nvme_mpath_io *io)
{
	bool missing = false;

	if (io == NULL) {
		return -EINVAL;
	}
	io->completed = 0;
	for (uint32_t i = 0; i < npaths(io->mp); i++) {
		if (io->qpairs[i] != NULL) {
			int32_t rc = nvp_nvme_qpair_process_completions(io->qpairs[i], 0);

			if (nvp_unlikely(io->connecting & (1u << i))) {
				poll_connecting(io, i, rc);
			}
		} else {
			missing = true;
		}
	}
	if (nvp_unlikely(missing)) {
		make_missing_qpairs(io);
	}
	if (nvp_unlikely(!STAILQ_EMPTY(&io->retry))) {
		resend_waiting(io);
	}
	return io->completed;
}

uint32_t
nvp_nvme_mpath_io_get_num_outstanding(const struct nvp_nvme_mpath_io *io)
{
	return io != NULL ? io->outstanding : 0;
}

int
nvp_nvme_mpath_io_get_stats(const struct nvp_nvme_mpath_io *io,
			    struct nvp_nvme_mpath_io_stats *stats)
{
	struct nvp_nvme_mpath_io_stats st;
	size_t n;

	if (io == NULL || stats == NULL ||
	    stats->info_size < offsetof(struct nvp_nvme_mpath_io_stats, qpairs_made)) {
		return -EINVAL;
	}
	n = NVP_MIN(stats->info_size, sizeof(st));
	st = io->stats;
	st.paths_connecting = 0;
	for (uint32_t i = 0; i < npaths(io->mp); i++) {
		if ((io->connecting & (1u << i)) && !nvp_nvme_qpair_is_connected(io->qpairs[i])) {
			st.paths_connecting++;
		}
	}
	st.info_size = n;
	memcpy(stats, &st, n);
	return 0;
}

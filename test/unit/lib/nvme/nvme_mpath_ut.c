/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the multipath layer (nvme_mpath.c) over fake controllers and qpairs: a
 * lost connection's requests go to the other path and each completes once; an ANA status
 * marks the path and has its log read; DNR is the caller's; a request with no usable
 * path waits, then completes with its last error; paths that stay usable yet keep failing
 * a request give up after twice the paths; the ANA change notice and a failed path's
 * reset are the admin poll's, a step per poll of the thread that began them (the fake
 * reset and log read yield where the driver's wait for answers); paths of two subsystems
 * are refused.
 */
#include "nvme/nvme_fiber.c"
#include "nvme/nvme_mpath.c"
#include "nvme/nvme_mpath_select.c"

#include "ut_nvme.h"

/* ---- fake driver: what nvme_mpath.c calls, nothing more ---- */

#define UT_MAX_SUBS 64u

struct nvp_nvme_ns {
	struct nvme_ns_data nd;
	struct nvp_nvme_ctrlr *c;
};

struct nvp_nvme_ctrlr {
	struct nvme_ctrlr_data cd;
	struct nvp_nvme_ns ns;
	struct nvp_nvme_transport_id trid;
	bool failed;
	uint8_t ana; /* the state its ANA log says */
	int reset_rc;
	uint32_t resets, log_reads;
	uint32_t reset_waits, log_waits; /* answers a reset, a log read waits for (yields) */
	bool in_reset;                   /* a reset begun and not ended */
	nvp_nvme_cmd_cb aer_cb;
	void *aer_arg;
};

struct ut_sub {
	nvp_nvme_cmd_cb cb;
	void *arg;
	uint64_t lba;
	char op;        /* 'r' read or write, 'f' flush, 'z' write zeroes, 'c' compare, 'd' DSM */
	uint32_t count; /* blocks, or a DSM's ranges */
	uint32_t flags; /* io_flags, or a DSM's attributes */
	uint64_t range_lba; /* a DSM's first range, read at submission */
};

struct nvp_nvme_qpair {
	struct nvp_nvme_ctrlr *c;
	struct ut_sub subs[UT_MAX_SUBS];
	uint32_t head, tail;
	struct nvme_status status; /* what the next completions carry */
	bool async;                /* made with opts.async_mode */
	uint32_t connect_polls;    /* polls left before its queues exist (async) */
	bool connect_fails;        /* its async connect fails at the next poll */
};

static struct nvp_nvme_ctrlr g_ctrlrs[3];
static uint32_t g_alloc_fail; /* bit i: path i's qpair cannot be made */
static struct nvp_nvme_qpair g_qpairs[3];
static uint32_t g_next_ctrlr;

void
nvp_nvme_ctrlr_opts_init(struct nvp_nvme_ctrlr_opts *opts, size_t opts_size)
{
	memset(opts, 0, opts_size);
	opts->opts_size = opts_size;
}

int
nvp_nvme_connect(const struct nvp_nvme_transport_id *trid, const struct nvp_nvme_ctrlr_opts *opts,
		 struct nvp_nvme_ctrlr **ctrlr)
{
	CU_ASSERT_EQUAL(opts->ctrlr_loss_timeout_sec, 0); /* this layer reconnects */
	*ctrlr = &g_ctrlrs[g_next_ctrlr++];
	(*ctrlr)->trid = *trid;
	return 0;
}

int
nvp_nvme_detach(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	return 0;
}

int
nvp_nvme_transport_id_fmt(char *buf, size_t len, const struct nvp_nvme_transport_id *trid)
{
	snprintf(buf, len, "ut %s", trid->traddr);
	return 0;
}

const struct nvme_ctrlr_data *
nvp_nvme_ctrlr_get_data(const struct nvp_nvme_ctrlr *ctrlr)
{
	return &ctrlr->cd;
}

uint32_t
nvp_nvme_ctrlr_get_first_active_ns(const struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	return 1;
}

struct nvp_nvme_ns *
nvp_nvme_ctrlr_get_ns(struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid)
{
	return nsid == 1 ? &ctrlr->ns : NULL;
}

const struct nvme_ns_data *
nvp_nvme_ns_get_data(const struct nvp_nvme_ns *ns)
{
	return &ns->nd;
}

uint64_t
nvp_nvme_ns_get_num_sectors(const struct nvp_nvme_ns *ns)
{
	return ns->nd.nsze;
}

uint32_t
nvp_nvme_ns_get_sector_size(const struct nvp_nvme_ns *ns)
{
	(void)ns;
	return 512;
}

void
nvp_nvme_ctrlr_register_aer_callback(struct nvp_nvme_ctrlr *ctrlr, nvp_nvme_cmd_cb cb, void *arg)
{
	ctrlr->aer_cb = cb;
	ctrlr->aer_arg = arg;
}

bool
nvp_nvme_ctrlr_is_failed(const struct nvp_nvme_ctrlr *ctrlr)
{
	return ctrlr->failed;
}

bool
nvp_nvme_ctrlr_is_reconnecting(const struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	return false;
}

/* As the driver's wait loops: in a fiber each wait yields; outside one it waits its own
 * way (here: the answer is there at once). */
static void
ut_waits(uint32_t n)
{
	for (uint32_t i = 0; i < n && nvme_fiber_yield(); i++) {
	}
}

int
nvp_nvme_ctrlr_reset(struct nvp_nvme_ctrlr *ctrlr)
{
	ctrlr->resets++;
	ctrlr->in_reset = true;
	ut_waits(ctrlr->reset_waits);
	ctrlr->in_reset = false;
	if (ctrlr->reset_rc == 0) {
		ctrlr->failed = false;
	}
	return ctrlr->reset_rc;
}

int32_t
nvp_nvme_ctrlr_process_admin_completions(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	return 0;
}

/* One group (1) holding namespace 1, in the state the fake controller says. */
int
nvp_nvme_ctrlr_get_log_page(struct nvp_nvme_ctrlr *ctrlr, uint8_t lid, uint32_t nsid, void *buf,
			    uint32_t len, uint64_t offset, struct nvme_cpl *cpl)
{
	struct nvme_ana_page *h = buf;
	struct nvme_ana_group_desc *g = (void *)(h + 1);

	(void)nsid;
	(void)offset;
	(void)cpl;
	CU_ASSERT_EQUAL(lid, NVME_LOG_ASYMMETRIC_NAMESPACE_ACCESS);
	CU_ASSERT(len >= sizeof(*h) + sizeof(*g) + 4);
	ut_waits(ctrlr->log_waits);
	memset(buf, 0, len);
	ctrlr->log_reads++;
	h->num_ana_group_desc = 1;
	g->ana_group_id = 1;
	g->num_of_nsid = 1;
	g->ana_state = ctrlr->ana;
	g->nsid[0] = 1;
	return 0;
}

void
nvp_nvme_ctrlr_get_default_io_qpair_opts(const struct nvp_nvme_ctrlr *ctrlr,
					 struct nvp_nvme_io_qpair_opts *opts, size_t opts_size)
{
	(void)ctrlr;
	memset(opts, 0, opts_size);
	opts->io_queue_requests = 32;
}

int
nvp_nvme_ctrlr_alloc_io_qpair(struct nvp_nvme_ctrlr *ctrlr,
			      const struct nvp_nvme_io_qpair_opts *opts,
			      struct nvp_nvme_qpair **qpair)
{
	struct nvp_nvme_qpair *q = &g_qpairs[ctrlr - g_ctrlrs];

	(void)opts;
	if (g_alloc_fail & (1u << (ctrlr - g_ctrlrs))) {
		return -ENXIO;
	}
	memset(q, 0, sizeof(*q));
	q->c = ctrlr;
	q->async = opts != NULL && opts->async_mode;
	q->connect_polls = q->async ? 2 : 0;
	*qpair = q;
	return 0;
}

bool
nvp_nvme_qpair_is_connected(const struct nvp_nvme_qpair *qpair)
{
	return !qpair->c->failed && qpair->connect_polls == 0 && !qpair->connect_fails;
}

int
nvp_nvme_ctrlr_free_io_qpair(struct nvp_nvme_qpair *qpair)
{
	(void)qpair;
	return 0;
}

static int
ut_submit(struct nvp_nvme_qpair *q, uint64_t lba, nvp_nvme_cmd_cb cb, void *arg)
{
	if (q->c->failed) {
		return -ENXIO;
	}
	CU_ASSERT_FATAL(q->tail < UT_MAX_SUBS);
	q->subs[q->tail++] = (struct ut_sub){ .cb = cb, .arg = arg, .lba = lba };
	return 0;
}

int
nvp_nvme_ns_cmd_read(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, void *buf, uint64_t lba,
		     uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags)
{
	(void)ns;
	(void)buf;
	(void)lba_count;
	(void)io_flags;
	return ut_submit(qpair, lba, cb, cb_arg);
}

int
nvp_nvme_ns_cmd_write(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, void *buf, uint64_t lba,
		      uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags)
{
	return nvp_nvme_ns_cmd_read(ns, qpair, buf, lba, lba_count, cb, cb_arg, io_flags);
}

int
nvp_nvme_ns_cmd_readv(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, uint64_t lba,
		      uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags,
		      nvp_nvme_req_reset_sgl_cb reset_sgl_fn, nvp_nvme_req_next_sge_cb next_sge_fn)
{
	void *addr;
	uint32_t len;

	(void)ns;
	(void)lba_count;
	(void)io_flags;
	reset_sgl_fn(cb_arg, 0); /* the caller's callbacks, through the trampolines */
	CU_ASSERT_EQUAL(next_sge_fn(cb_arg, &addr, &len), 0);
	return ut_submit(qpair, lba, cb, cb_arg);
}

int
nvp_nvme_ns_cmd_writev(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, uint64_t lba,
		       uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags,
		       nvp_nvme_req_reset_sgl_cb reset_sgl_fn, nvp_nvme_req_next_sge_cb next_sge_fn)
{
	return nvp_nvme_ns_cmd_readv(ns, qpair, lba, lba_count, cb, cb_arg, io_flags, reset_sgl_fn,
				     next_sge_fn);
}

int
nvp_nvme_ns_cmd_flush(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, nvp_nvme_cmd_cb cb,
		      void *cb_arg)
{
	int rc;

	(void)ns;
	rc = ut_submit(qpair, 0, cb, cb_arg);
	if (rc == 0) {
		qpair->subs[qpair->tail - 1].op = 'f';
	}
	return rc;
}

/* The last submission of @qpair gets @op, @count, @flags. */
static int
ut_mark(struct nvp_nvme_qpair *qpair, int rc, char op, uint32_t count, uint32_t flags)
{
	if (rc == 0) {
		qpair->subs[qpair->tail - 1].op = op;
		qpair->subs[qpair->tail - 1].count = count;
		qpair->subs[qpair->tail - 1].flags = flags;
	}
	return rc;
}

int
nvp_nvme_ns_cmd_write_zeroes(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, uint64_t lba,
			     uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg,
			     uint32_t io_flags)
{
	(void)ns;
	return ut_mark(qpair, ut_submit(qpair, lba, cb, cb_arg), 'z', lba_count, io_flags);
}

int
nvp_nvme_ns_cmd_compare(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, void *buf,
			uint64_t lba, uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg,
			uint32_t io_flags)
{
	(void)ns;
	CU_ASSERT_PTR_NOT_NULL(buf);
	return ut_mark(qpair, ut_submit(qpair, lba, cb, cb_arg), 'c', lba_count, io_flags);
}

int
nvp_nvme_ns_cmd_dataset_management(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair,
				   uint32_t attributes, const struct nvme_dsm_range *ranges,
				   uint16_t num_ranges, nvp_nvme_cmd_cb cb, void *cb_arg)
{
	int rc;

	(void)ns;
	CU_ASSERT_PTR_NOT_NULL_FATAL(ranges);
	rc = ut_mark(qpair, ut_submit(qpair, 0, cb, cb_arg), 'd', num_ranges, attributes);
	if (rc == 0) {
		qpair->subs[qpair->tail - 1].range_lba = ranges[0].starting_lba;
	}
	return rc;
}

/* Complete everything submitted: with ABORTED SQ DELETION on a failed controller (as the
 * driver does), else with the qpair's status. */
int32_t
nvp_nvme_qpair_process_completions(struct nvp_nvme_qpair *qpair, uint32_t max_completions)
{
	int32_t n = 0;

	(void)max_completions;
	if (qpair->connect_fails) {
		return -ENXIO;
	}
	if (qpair->connect_polls > 0) {
		qpair->connect_polls--; /* a step of the connect; nothing was sent here */
		CU_ASSERT_EQUAL(qpair->tail, 0);
		return 0;
	}
	while (qpair->head < qpair->tail) {
		struct ut_sub *s = &qpair->subs[qpair->head++];
		struct nvme_cpl cpl;

		memset(&cpl, 0, sizeof(cpl));
		cpl.status = qpair->status;
		if (qpair->c->failed) {
			cpl.status.sct = NVME_SCT_GENERIC;
			cpl.status.sc = NVME_SC_ABORTED_SQ_DELETION;
			cpl.status.dnr = 0;
		}
		s->cb(s->arg, &cpl);
		n++;
	}
	if (qpair->head == qpair->tail) {
		qpair->head = qpair->tail = 0;
	}
	return qpair->c->failed ? -ENXIO : n;
}

/* ---- the caller ---- */

struct ut_io {
	uint32_t calls;
	struct nvme_cpl cpl;
};

static void
ut_done(void *arg, const struct nvme_cpl *cpl)
{
	struct ut_io *u = arg;

	u->calls++;
	u->cpl = *cpl;
}

static void
ut_reset_sgl(void *arg, uint32_t offset)
{
	(void)arg;
	CU_ASSERT_EQUAL(offset, 0);
}

static int
ut_next_sge(void *arg, void **address, uint32_t *length)
{
	static char sgl_buf[512];

	CU_ASSERT_PTR_NOT_NULL(arg); /* the caller's argument, not the layer's request */
	*address = sgl_buf;
	*length = sizeof(sgl_buf);
	return 0;
}

/* @n paths of one subsystem and namespace, ANA optimized each unless @ana says. */
static struct nvp_nvme_mpath *
ut_open(uint32_t n, enum nvp_nvme_mpath_policy policy, const uint8_t *ana,
	uint32_t no_path_timeout_ms)
{
	struct nvp_nvme_transport_id trids[3];
	struct nvp_nvme_mpath_opts o;
	struct nvp_nvme_mpath *mp = NULL;

	memset(g_ctrlrs, 0, sizeof(g_ctrlrs));
	memset(trids, 0, sizeof(trids));
	g_next_ctrlr = 0;
	for (uint32_t i = 0; i < 3; i++) {
		struct nvp_nvme_ctrlr *c = &g_ctrlrs[i];

		snprintf(c->cd.subnqn, sizeof(c->cd.subnqn), "nqn.ut:one");
		c->cd.cmic = NVME_CTRLR_CMIC_ANA_REPORTING;
		c->ns.c = c;
		c->ns.nd.nsze = 1000;
		c->ns.nd.anagrpid = 1;
		c->ns.nd.nguid[0] = 0x42;
		c->ana = ana != NULL ? ana[i] : NVME_ANA_OPTIMIZED;
		snprintf(trids[i].traddr, sizeof(trids[i].traddr), "path%u", i);
	}
	nvp_nvme_mpath_opts_init(&o, sizeof(o));
	o.policy = policy;
	o.no_path_timeout_ms = no_path_timeout_ms;
	o.reconnect_delay_ms = 0;
	CU_ASSERT_EQUAL(nvp_nvme_mpath_connect(trids, n, NULL, &o, &mp), 0);
	return mp;
}

static void
ut_close(struct nvp_nvme_mpath *mp, struct nvp_nvme_mpath_io *io)
{
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_free(io), 0);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_detach(mp), 0);
}

static struct nvp_nvme_mpath_io_stats
ut_stats(struct nvp_nvme_mpath_io *io)
{
	struct nvp_nvme_mpath_io_stats st = { .info_size = sizeof(st) };

	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_get_stats(io, &st), 0);
	return st;
}

static uint8_t
ut_ana(struct nvp_nvme_mpath *mp, uint32_t i)
{
	struct nvp_nvme_mpath_path_info info = { .info_size = sizeof(info) };

	CU_ASSERT_EQUAL(nvp_nvme_mpath_get_path_info(mp, i, &info), 0);
	return info.ana_state;
}

/* A lost connection: what path 0 had goes to path 1 in the same poll; one completion each. */
static void
test_failover_on_loss(void)
{
	struct nvp_nvme_mpath *mp = ut_open(2, NVP_NVME_MPATH_FAILOVER, NULL, 30000);
	struct nvp_nvme_mpath_io *io;
	struct ut_io u[4];
	char buf[512];

	memset(u, 0, sizeof(u));
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_mpath_io_alloc(mp, NULL, &io), 0);
	for (uint32_t i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(nvp_nvme_mpath_cmd_read(io, buf, i, 1, ut_done, &u[i], 0), 0);
	}
	CU_ASSERT_EQUAL(g_qpairs[0].tail, 4); /* one active path */
	CU_ASSERT_EQUAL(g_qpairs[1].tail, 0);
	g_ctrlrs[0].failed = true;
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 0);
	CU_ASSERT_EQUAL(g_qpairs[1].tail, 4); /* sent again at the end of that poll */
	CU_ASSERT_EQUAL(u[0].calls + u[1].calls + u[2].calls + u[3].calls, 0);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 4);
	for (uint32_t i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(u[i].calls, 1);
		CU_ASSERT_FALSE(nvme_cpl_is_error(&u[i].cpl));
	}
	CU_ASSERT_EQUAL(ut_stats(io).path_errors, 4);
	CU_ASSERT_EQUAL(ut_stats(io).retries, 4);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_get_num_outstanding(io), 0);
	/* the admin poll resets the failed path; failover stays where it is */
	CU_ASSERT(nvp_nvme_mpath_process_admin_completions(mp) >= 0);
	CU_ASSERT_EQUAL(g_ctrlrs[0].resets, 1);
	CU_ASSERT_FALSE(g_ctrlrs[0].failed);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_cmd_read(io, buf, 9, 1, ut_done, &u[0], 0), 0);
	CU_ASSERT_EQUAL(g_qpairs[1].tail, 1);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 1);
	ut_close(mp, io);
}

/* ANA Inaccessible on path 0: marked at once, log re-read, the request goes to path 1. */
static void
test_ana_status(void)
{
	struct nvp_nvme_mpath *mp = ut_open(2, NVP_NVME_MPATH_FAILOVER, NULL, 30000);
	struct nvp_nvme_mpath_io *io;
	struct ut_io u = { 0 };

	CU_ASSERT_EQUAL_FATAL(nvp_nvme_mpath_io_alloc(mp, NULL, &io), 0);
	g_qpairs[0].status.sct = NVME_SCT_PATH;
	g_qpairs[0].status.sc = NVME_SC_ANA_INACCESSIBLE;
	CU_ASSERT_EQUAL(
		nvp_nvme_mpath_cmd_writev(io, 3, 1, ut_done, &u, 0, ut_reset_sgl, ut_next_sge), 0);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 0);
	CU_ASSERT_EQUAL(ut_ana(mp, 0), NVME_ANA_INACCESSIBLE);
	CU_ASSERT_EQUAL(g_qpairs[1].tail, 1);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 1);
	CU_ASSERT_EQUAL(u.calls, 1);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&u.cpl));
	/* the log (still optimized in the fake) is read at the next admin poll */
	g_ctrlrs[0].log_reads = 0;
	CU_ASSERT(nvp_nvme_mpath_process_admin_completions(mp) >= 0);
	CU_ASSERT_EQUAL(g_ctrlrs[0].log_reads, 1);
	CU_ASSERT_EQUAL(ut_ana(mp, 0), NVME_ANA_OPTIMIZED);
	ut_close(mp, io);
}

/* DNR set: the caller's, at once, even with a path status. */
static void
test_dnr_not_retried(void)
{
	struct nvp_nvme_mpath *mp = ut_open(2, NVP_NVME_MPATH_MULTIPATH, NULL, 30000);
	struct nvp_nvme_mpath_io *io;
	struct ut_io u = { 0 };
	char buf[512];

	CU_ASSERT_EQUAL_FATAL(nvp_nvme_mpath_io_alloc(mp, NULL, &io), 0);
	for (uint32_t i = 0; i < 2; i++) {
		g_qpairs[i].status.sct = NVME_SCT_PATH;
		g_qpairs[i].status.sc = NVME_SC_ANA_INACCESSIBLE;
		g_qpairs[i].status.dnr = 1;
	}
	CU_ASSERT_EQUAL(nvp_nvme_mpath_cmd_read(io, buf, 0, 1, ut_done, &u, 0), 0);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 1);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 0);
	CU_ASSERT_EQUAL(u.calls, 1);
	CU_ASSERT_EQUAL(u.cpl.status.dnr, 1);
	CU_ASSERT_EQUAL(ut_stats(io).path_errors, 0);
	ut_close(mp, io);
}

/* No usable path: the request waits (no completion, no_path_waits), then, its time out,
 * completes with Host Pathing Error; a path back in time takes it. */
static void
test_no_path_waits(void)
{
	static const uint8_t ana[3] = { NVME_ANA_INACCESSIBLE, NVME_ANA_PERSISTENT_LOSS, 0 };
	struct nvp_nvme_mpath *mp = ut_open(2, NVP_NVME_MPATH_FAILOVER, ana, 0);
	struct nvp_nvme_mpath_io *io;
	struct ut_io u = { 0 };
	char buf[512];

	CU_ASSERT_EQUAL(ut_ana(mp, 0), NVME_ANA_INACCESSIBLE); /* read at connect */
	CU_ASSERT_EQUAL(ut_ana(mp, 1), NVME_ANA_PERSISTENT_LOSS);
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_mpath_io_alloc(mp, NULL, &io), 0);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_cmd_read(io, buf, 0, 1, ut_done, &u, 0), 0);
	CU_ASSERT_EQUAL(g_qpairs[0].tail + g_qpairs[1].tail, 0);
	CU_ASSERT_EQUAL(ut_stats(io).no_path_waits, 1);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_get_num_outstanding(io), 1);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 1); /* no_path_timeout 0 */
	CU_ASSERT_EQUAL(u.calls, 1);
	CU_ASSERT_EQUAL(u.cpl.status.sct, NVME_SCT_PATH);
	CU_ASSERT_EQUAL(u.cpl.status.sc, NVME_SC_HOST_PATH_ERROR);
	ut_close(mp, io);
}

/* Paths that stay usable and keep failing it: twice the paths, then the last error. */
static void
test_path_errors_bounded(void)
{
	struct nvp_nvme_mpath *mp = ut_open(2, NVP_NVME_MPATH_MULTIPATH, NULL, 30000);
	struct nvp_nvme_mpath_io *io;
	struct ut_io u = { 0 };
	char buf[512];
	uint32_t polls = 0;

	CU_ASSERT_EQUAL_FATAL(nvp_nvme_mpath_io_alloc(mp, NULL, &io), 0);
	for (uint32_t i = 0; i < 2; i++) {
		g_qpairs[i].status.sct = NVME_SCT_PATH;
		g_qpairs[i].status.sc = NVME_SC_HOST_PATH_ERROR;
	}
	CU_ASSERT_EQUAL(nvp_nvme_mpath_cmd_read(io, buf, 0, 1, ut_done, &u, 0), 0);
	while (u.calls == 0 && polls < 100) {
		(void)nvp_nvme_mpath_io_process_completions(io);
		polls++;
	}
	CU_ASSERT_EQUAL(u.calls, 1);
	CU_ASSERT_EQUAL(u.cpl.status.sc, NVME_SC_HOST_PATH_ERROR);
	CU_ASSERT_EQUAL(ut_stats(io).path_errors, 2 * 2 + 1);
	CU_ASSERT_EQUAL(ut_stats(io).path_ios[0], 2); /* round-robin: they took turns */
	CU_ASSERT_EQUAL(ut_stats(io).path_ios[1], 3);
	CU_ASSERT_EQUAL(polls, 5);
	ut_close(mp, io);
}

/* The ANA change notice marks the log stale; the admin poll reads it; I/O follows. */
static void
test_ana_change_notice(void)
{
	static const uint8_t ana[3] = { NVME_ANA_OPTIMIZED, NVME_ANA_NON_OPTIMIZED, 0 };
	struct nvp_nvme_mpath *mp = ut_open(2, NVP_NVME_MPATH_MULTIPATH, ana, 30000);
	union nvme_async_event_completion ev = { .raw = 0 };
	struct nvp_nvme_mpath_io *io;
	struct ut_io u = { 0 };
	struct nvme_cpl cpl;
	char buf[512];

	CU_ASSERT_EQUAL_FATAL(nvp_nvme_mpath_io_alloc(mp, NULL, &io), 0);
	for (uint32_t i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(nvp_nvme_mpath_cmd_read(io, buf, i, 1, ut_done, &u, 0), 0);
	}
	CU_ASSERT_EQUAL(g_qpairs[0].tail, 4); /* the optimized one only */
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 4);
	g_ctrlrs[0].ana = NVME_ANA_INACCESSIBLE;
	g_ctrlrs[1].ana = NVME_ANA_OPTIMIZED;
	ev.bits.async_event_type = NVME_ASYNC_EVENT_TYPE_NOTICE;
	ev.bits.async_event_info = NVME_ASYNC_EVENT_ANA_CHANGE;
	memset(&cpl, 0, sizeof(cpl));
	cpl.cdw0 = ev.raw;
	for (uint32_t i = 0; i < 2; i++) {
		g_ctrlrs[i].aer_cb(g_ctrlrs[i].aer_arg, &cpl);
	}
	CU_ASSERT(nvp_nvme_mpath_process_admin_completions(mp) >= 0);
	CU_ASSERT_EQUAL(ut_ana(mp, 0), NVME_ANA_INACCESSIBLE);
	CU_ASSERT_EQUAL(ut_ana(mp, 1), NVME_ANA_OPTIMIZED);
	for (uint32_t i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(nvp_nvme_mpath_cmd_read(io, buf, i, 1, ut_done, &u, 0), 0);
	}
	CU_ASSERT_EQUAL(g_qpairs[0].tail, 0);
	CU_ASSERT_EQUAL(g_qpairs[1].tail, 4);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 4);
	ut_close(mp, io);
}

static bool
ut_connected(struct nvp_nvme_mpath *mp, uint32_t i)
{
	struct nvp_nvme_mpath_path_info info = { .info_size = sizeof(info) };

	CU_ASSERT_EQUAL(nvp_nvme_mpath_get_path_info(mp, i, &info), 0);
	return info.connected;
}

static uint32_t
ut_reconnects(struct nvp_nvme_mpath *mp, uint32_t i)
{
	struct nvp_nvme_mpath_path_info info = { .info_size = sizeof(info) };

	CU_ASSERT_EQUAL(nvp_nvme_mpath_get_path_info(mp, i, &info), 0);
	return info.reconnects;
}

static void *
ut_admin_poll_thread(void *arg)
{
	return (void *)(intptr_t)nvp_nvme_mpath_process_admin_completions(arg);
}

/*
 * A failed path's reset that waits for three answers: each admin poll returns at the next
 * wait, the reset spanning four of them (in one poll, as before, every wait would be in
 * it); meanwhile I/O goes down the other path, and another thread's admin poll passes the
 * path by. Its end re-reads the ANA log; then the path takes I/O again.
 */
static void
test_reset_a_step_per_poll(void)
{
	struct nvp_nvme_mpath *mp = ut_open(2, NVP_NVME_MPATH_MULTIPATH, NULL, 30000);
	struct nvp_nvme_mpath_io *io;
	struct ut_io u = { 0 };
	uint32_t reads;
	pthread_t t;
	void *rc = NULL;
	char buf[512];

	CU_ASSERT_EQUAL_FATAL(nvp_nvme_mpath_io_alloc(mp, NULL, &io), 0);
	g_ctrlrs[0].reset_waits = 3;
	g_ctrlrs[0].failed = true;
	reads = g_ctrlrs[0].log_reads;
	CU_ASSERT(nvp_nvme_mpath_process_admin_completions(mp) >= 0);
	CU_ASSERT_EQUAL(g_ctrlrs[0].resets, 1);
	CU_ASSERT_TRUE(g_ctrlrs[0].in_reset); /* the poll returned in the middle of it */
	CU_ASSERT_FALSE(ut_connected(mp, 0));
	for (uint32_t i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(nvp_nvme_mpath_cmd_read(io, buf, i, 1, ut_done, &u, 0), 0);
	}
	CU_ASSERT_EQUAL(g_qpairs[0].tail, 0); /* all down the other path meanwhile */
	CU_ASSERT_EQUAL(g_qpairs[1].tail, 4);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 4);
	/* another thread: it does not step (nor end) this thread's reset */
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, ut_admin_poll_thread, mp), 0);
	CU_ASSERT_EQUAL(pthread_join(t, &rc), 0);
	CU_ASSERT((intptr_t)rc >= 0);
	CU_ASSERT_TRUE(g_ctrlrs[0].in_reset);
	for (uint32_t i = 0; i < 2; i++) {
		CU_ASSERT(nvp_nvme_mpath_process_admin_completions(mp) >= 0);
		CU_ASSERT_TRUE(g_ctrlrs[0].in_reset);
		CU_ASSERT_FALSE(ut_connected(mp, 0));
	}
	CU_ASSERT(nvp_nvme_mpath_process_admin_completions(mp) >= 0); /* the last answer */
	CU_ASSERT_FALSE(g_ctrlrs[0].in_reset);
	CU_ASSERT_EQUAL(g_ctrlrs[0].resets, 1);
	CU_ASSERT_EQUAL(g_ctrlrs[0].log_reads, reads + 1); /* its ANA state read again */
	CU_ASSERT_TRUE(ut_connected(mp, 0));
	CU_ASSERT_EQUAL(ut_reconnects(mp, 0), 1);
	for (uint32_t i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(nvp_nvme_mpath_cmd_read(io, buf, i, 1, ut_done, &u, 0), 0);
	}
	CU_ASSERT_EQUAL(g_qpairs[0].tail, 2); /* round-robin over both again */
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 4);
	CU_ASSERT_EQUAL(u.calls, 8);
	ut_close(mp, io);
}

/* An ANA log read after a change notice waits for its answer a poll at a time too; and a
 * reset under way when the thread frees its handle is run to its end there. */
static void
test_ana_read_a_step_per_poll(void)
{
	static const uint8_t ana[3] = { NVME_ANA_OPTIMIZED, NVME_ANA_OPTIMIZED, 0 };
	struct nvp_nvme_mpath *mp = ut_open(2, NVP_NVME_MPATH_MULTIPATH, ana, 30000);
	union nvme_async_event_completion ev = { .raw = 0 };
	struct nvp_nvme_mpath_io *io;
	struct nvme_cpl cpl;

	CU_ASSERT_EQUAL_FATAL(nvp_nvme_mpath_io_alloc(mp, NULL, &io), 0);
	g_ctrlrs[1].ana = NVME_ANA_NON_OPTIMIZED;
	g_ctrlrs[1].log_waits = 2;
	ev.bits.async_event_type = NVME_ASYNC_EVENT_TYPE_NOTICE;
	ev.bits.async_event_info = NVME_ASYNC_EVENT_ANA_CHANGE;
	memset(&cpl, 0, sizeof(cpl));
	cpl.cdw0 = ev.raw;
	g_ctrlrs[1].aer_cb(g_ctrlrs[1].aer_arg, &cpl);
	CU_ASSERT(nvp_nvme_mpath_process_admin_completions(mp) >= 0);
	CU_ASSERT_EQUAL(ut_ana(mp, 1), NVME_ANA_OPTIMIZED); /* its answer not in yet */
	CU_ASSERT_TRUE(ut_connected(mp, 1));                /* usable meanwhile */
	CU_ASSERT(nvp_nvme_mpath_process_admin_completions(mp) >= 0);
	CU_ASSERT_EQUAL(ut_ana(mp, 1), NVME_ANA_OPTIMIZED);
	CU_ASSERT(nvp_nvme_mpath_process_admin_completions(mp) >= 0);
	CU_ASSERT_EQUAL(ut_ana(mp, 1), NVME_ANA_NON_OPTIMIZED);
	/* a reset begun, then the handle freed on this thread: it ends there */
	g_ctrlrs[0].reset_waits = 5;
	g_ctrlrs[0].failed = true;
	CU_ASSERT(nvp_nvme_mpath_process_admin_completions(mp) >= 0);
	CU_ASSERT_TRUE(g_ctrlrs[0].in_reset);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_free(io), 0);
	CU_ASSERT_FALSE(g_ctrlrs[0].in_reset);
	CU_ASSERT_TRUE(ut_connected(mp, 0));
	CU_ASSERT_EQUAL(nvp_nvme_mpath_detach(mp), 0);
}

/* A path whose qpair cannot be made: the handle is made on the others, the path's qpair
 * comes later; none at all: the error. */
static void
test_qpair_alloc_fails(void)
{
	struct nvp_nvme_mpath *mp = ut_open(2, NVP_NVME_MPATH_FAILOVER, NULL, 30000);
	struct nvp_nvme_mpath_io *io = NULL;
	struct ut_io u = { 0 };
	char buf[512];

	g_alloc_fail = 3;
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_alloc(mp, NULL, &io), -ENXIO);
	g_alloc_fail = 1;
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_mpath_io_alloc(mp, NULL, &io), 0);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_cmd_read(io, buf, 0, 1, ut_done, &u, 0), 0);
	CU_ASSERT_EQUAL(g_qpairs[1].tail, 1);
	g_alloc_fail = 0;
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 1); /* and path 0's qpair */
	CU_ASSERT_EQUAL(u.calls, 1);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_cmd_read(io, buf, 0, 1, ut_done, &u, 0), 0);
	CU_ASSERT_EQUAL(g_qpairs[1].tail, 1); /* failover stays on path 1 */
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 1);
	ut_close(mp, io);
}

/*
 * A path down when the handle was made gets its qpair from a later poll without a
 * wait: made with async_mode, no request goes there until its queues exist; then it
 * takes its share. One whose connect fails is made again after the reconnect delay.
 */
static void
test_missing_qpair_async(void)
{
	struct nvp_nvme_mpath *mp = ut_open(2, NVP_NVME_MPATH_MULTIPATH, NULL, 30000);
	struct nvp_nvme_mpath_io *io = NULL;
	struct ut_io u = { 0 };
	char buf[512];

	g_alloc_fail = 1;
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_mpath_io_alloc(mp, NULL, &io), 0);
	CU_ASSERT_FALSE(g_qpairs[1].async); /* the handle's own: made at once */
	g_alloc_fail = 0;
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 0);
	CU_ASSERT_TRUE(g_qpairs[0].async); /* made from the poll: not waited for */
	CU_ASSERT_FALSE(nvp_nvme_qpair_is_connected(&g_qpairs[0]));
	CU_ASSERT_EQUAL(ut_stats(io).qpairs_made, 1);
	CU_ASSERT_EQUAL(ut_stats(io).paths_connecting, 1);
	for (uint32_t k = 0; k < 4; k++) {
		CU_ASSERT_EQUAL(nvp_nvme_mpath_cmd_read(io, buf, k, 1, ut_done, &u, 0), 0);
	}
	CU_ASSERT_EQUAL(g_qpairs[0].tail, 0); /* still connecting: nothing sent there */
	CU_ASSERT_EQUAL(g_qpairs[1].tail, 4);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 4);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 0); /* connected now */
	CU_ASSERT_TRUE(nvp_nvme_qpair_is_connected(&g_qpairs[0]));
	CU_ASSERT_EQUAL(ut_stats(io).paths_connecting, 0);
	for (uint32_t k = 0; k < 4; k++) {
		CU_ASSERT_EQUAL(nvp_nvme_mpath_cmd_read(io, buf, k, 1, ut_done, &u, 0), 0);
	}
	CU_ASSERT(g_qpairs[0].tail > 0); /* round robin over both */
	CU_ASSERT(g_qpairs[1].tail > 0);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 4);
	CU_ASSERT_EQUAL(u.calls, 8);
	CU_ASSERT_EQUAL(u.cpl.status.sc, NVME_SC_SUCCESS);
	ut_close(mp, io);

	/* a connect that fails: the qpair is freed, and made again later */
	mp = ut_open(2, NVP_NVME_MPATH_MULTIPATH, NULL, 30000);
	io = NULL;
	g_alloc_fail = 1;
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_mpath_io_alloc(mp, NULL, &io), 0);
	g_alloc_fail = 0;
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 0);
	CU_ASSERT_TRUE(g_qpairs[0].async);
	g_qpairs[0].connect_fails = true;
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 0); /* freed */
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 0); /* made again */
	CU_ASSERT_TRUE(g_qpairs[0].async);
	CU_ASSERT_FALSE(g_qpairs[0].connect_fails);
	CU_ASSERT_EQUAL(g_qpairs[0].connect_polls, 2);
	ut_close(mp, io);
}

/* One subsystem, one namespace: another SUBNQN or NGUID is refused; a path added later. */
static void
test_paths_checked(void)
{
	struct nvp_nvme_transport_id trids[2];
	struct nvp_nvme_mpath *mp = NULL;

	memset(trids, 0, sizeof(trids));
	mp = ut_open(1, NVP_NVME_MPATH_FAILOVER, NULL, 30000);
	snprintf(g_ctrlrs[1].cd.subnqn, sizeof(g_ctrlrs[1].cd.subnqn), "nqn.ut:two");
	CU_ASSERT_EQUAL(nvp_nvme_mpath_add_path(mp, &trids[1], NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_get_num_paths(mp), 1);
	snprintf(g_ctrlrs[2].cd.subnqn, sizeof(g_ctrlrs[2].cd.subnqn), "nqn.ut:one");
	g_ctrlrs[2].ns.nd.nguid[0] = 0x43;
	CU_ASSERT_EQUAL(nvp_nvme_mpath_add_path(mp, &trids[1], NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_detach(mp), 0);

	mp = NULL;
	g_next_ctrlr = 0;
	snprintf(g_ctrlrs[1].cd.subnqn, sizeof(g_ctrlrs[1].cd.subnqn), "nqn.ut:two");
	CU_ASSERT_EQUAL(nvp_nvme_mpath_connect(trids, 2, NULL, NULL, &mp), -EINVAL);
	CU_ASSERT_PTR_NULL(mp);
	CU_ASSERT(ut_log_has("is subsystem 'nqn.ut:two', path 0 is 'nqn.ut:one'"));
}

/*
 * Write zeroes, compare and dataset management go down the path the policy picks with
 * their own arguments, and after a lost connection down the other with the same ones (a
 * DSM's ranges read again from the caller's memory); each completes once; bad arguments
 * are refused before anything is sent.
 */
static void
test_other_commands_fail_over(void)
{
	struct nvp_nvme_mpath *mp = ut_open(2, NVP_NVME_MPATH_FAILOVER, NULL, 30000);
	struct nvp_nvme_mpath_io *io;
	struct nvme_dsm_range ranges[2];
	struct ut_io u[3];
	char buf[512];

	memset(u, 0, sizeof(u));
	memset(ranges, 0, sizeof(ranges));
	ranges[0].starting_lba = 77;
	ranges[0].length = 8;
	ranges[1].starting_lba = 99;
	ranges[1].length = 1;
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_mpath_io_alloc(mp, NULL, &io), 0);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_cmd_write_zeroes(io, 5, 16, ut_done, &u[0],
							NVME_IO_FLAGS_DEALLOCATE),
			0);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_cmd_compare(io, buf, 6, 1, ut_done, &u[1], 0), 0);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_cmd_dataset_management(io, NVME_DSM_ATTR_DEALLOCATE, ranges,
							      2, ut_done, &u[2]),
			0);
	CU_ASSERT_EQUAL_FATAL(g_qpairs[0].tail, 3);
	CU_ASSERT_EQUAL(g_qpairs[0].subs[0].op, 'z');
	CU_ASSERT_EQUAL(g_qpairs[0].subs[0].lba, 5);
	CU_ASSERT_EQUAL(g_qpairs[0].subs[0].count, 16);
	CU_ASSERT_EQUAL(g_qpairs[0].subs[0].flags, NVME_IO_FLAGS_DEALLOCATE);
	CU_ASSERT_EQUAL(g_qpairs[0].subs[1].op, 'c');
	CU_ASSERT_EQUAL(g_qpairs[0].subs[2].op, 'd');
	CU_ASSERT_EQUAL(g_qpairs[0].subs[2].count, 2);
	CU_ASSERT_EQUAL(g_qpairs[0].subs[2].flags, NVME_DSM_ATTR_DEALLOCATE);
	CU_ASSERT_EQUAL(g_qpairs[0].subs[2].range_lba, 77);
	g_ctrlrs[0].failed = true;
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 0);
	CU_ASSERT_EQUAL_FATAL(g_qpairs[1].tail, 3); /* the same three, on path 1 */
	CU_ASSERT_EQUAL(g_qpairs[1].subs[0].op, 'z');
	CU_ASSERT_EQUAL(g_qpairs[1].subs[0].lba, 5);
	CU_ASSERT_EQUAL(g_qpairs[1].subs[0].count, 16);
	CU_ASSERT_EQUAL(g_qpairs[1].subs[0].flags, NVME_IO_FLAGS_DEALLOCATE);
	CU_ASSERT_EQUAL(g_qpairs[1].subs[1].op, 'c');
	CU_ASSERT_EQUAL(g_qpairs[1].subs[1].lba, 6);
	CU_ASSERT_EQUAL(g_qpairs[1].subs[2].op, 'd');
	CU_ASSERT_EQUAL(g_qpairs[1].subs[2].count, 2);
	CU_ASSERT_EQUAL(g_qpairs[1].subs[2].range_lba, 77);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_process_completions(io), 3);
	for (uint32_t i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(u[i].calls, 1);
		CU_ASSERT_FALSE(nvme_cpl_is_error(&u[i].cpl));
	}
	CU_ASSERT_EQUAL(nvp_nvme_mpath_cmd_dataset_management(io, 0, ranges, 0, ut_done, &u[2]),
			-EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_cmd_dataset_management(io, 0, NULL, 1, ut_done, &u[2]),
			-EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_cmd_dataset_management(io, 0, ranges, 257, ut_done, &u[2]),
			-EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_cmd_write_zeroes(io, 0, 0, ut_done, &u[0], 0), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_cmd_compare(io, NULL, 0, 1, ut_done, &u[1], 0), -EINVAL);
	CU_ASSERT_EQUAL(g_qpairs[1].tail, 0);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_get_num_outstanding(io), 0);
	g_ctrlrs[0].failed = false;
	ut_close(mp, io);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	nvp_log_set_callback(ut_log_cb);
	s = CU_add_suite("nvme_mpath", NULL, NULL);
	CU_add_test(s, "failover_on_loss", test_failover_on_loss);
	CU_add_test(s, "ana_status", test_ana_status);
	CU_add_test(s, "dnr_not_retried", test_dnr_not_retried);
	CU_add_test(s, "no_path_waits", test_no_path_waits);
	CU_add_test(s, "path_errors_bounded", test_path_errors_bounded);
	CU_add_test(s, "ana_change_notice", test_ana_change_notice);
	CU_add_test(s, "reset_a_step_per_poll", test_reset_a_step_per_poll);
	CU_add_test(s, "ana_read_a_step_per_poll", test_ana_read_a_step_per_poll);
	CU_add_test(s, "qpair_alloc_fails", test_qpair_alloc_fails);
	CU_add_test(s, "missing_qpair_async", test_missing_qpair_async);
	CU_add_test(s, "paths_checked", test_paths_checked);
	CU_add_test(s, "other_commands_fail_over", test_other_commands_fail_over);
	return ut_run();
}

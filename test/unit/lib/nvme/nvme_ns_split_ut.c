/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of split requests (nvme_ns_split.c): the arithmetic (transfer limit, NOIOB,
 * NLB, 512 B and 4 KiB formats), the children each parent sends (LBA, count, payload
 * offset, MPTR, reference tag), vectored payloads whose elements straddle split points
 * (walked through the children's SGL wrappers), the bound on children in flight, a
 * request needing more children than the qpair has request objects, first-error
 * completion, the errors reported at submission, and the clock children sent outside a
 * poll take their deadlines from. The qpair's submission is a recorder holding children
 * "in flight" until a test completes them.
 */
#define NVME_UT_TICKS ut_ticks
#include "nvme/nvme_ns_split.c"

#include "ut_nvme.h"

/* ---- the qpair, faked ---- */

#define MAX_REQS 64
#define MAX_INFLIGHT 64

static struct nvp_nvme_ctrlr g_ctrlr;
static struct nvp_nvme_ns g_ns;
static struct nvp_nvme_qpair g_qpair;
static struct nvme_request g_reqs[MAX_REQS];
static struct nvme_request *g_inflight[MAX_INFLIGHT];
static uint32_t g_num_inflight;
static struct nvme_request g_sent[1024]; /* copies of every child sent, in order */
static uint32_t g_num_sent;
static int g_submit_rc;
static uint32_t g_submit_fail_at; /* fail the Nth submission (1-based), 0 = never */
static int g_check_rc;
static uint32_t g_check_fail_at;
static uint32_t g_checks;
static uint32_t g_doorbells;
static uint64_t g_now;                  /* the fake tick counter */
static uint64_t g_deadline_ticks[1024]; /* what submit_tracker() would stamp each child with */

static uint64_t
ut_ticks(void)
{
	return g_now;
}

static bool g_gone_for_good;

bool
nvme_qpair_gone_for_good(const struct nvp_nvme_qpair *qpair)
{
	(void)qpair;
	return g_gone_for_good;
}

void
nvme_cpl_set_status(struct nvme_cpl *cpl, uint8_t sct, uint8_t sc, bool dnr)
{
	cpl->status_raw = 0;
	cpl->status.sct = sct;
	cpl->status.sc = sc;
	cpl->status.dnr = dnr ? 1 : 0;
}

int
nvme_qpair_submit_request(struct nvp_nvme_qpair *qpair, struct nvme_request *req)
{
	if (g_submit_fail_at != 0 && g_num_sent + 1 == g_submit_fail_at) {
		nvme_qpair_free_request(qpair, req);
		return g_submit_rc;
	}
	CU_ASSERT_FATAL(g_num_inflight < MAX_INFLIGHT && g_num_sent < NVP_COUNTOF(g_sent));
	/* The real submission's deadline base: the poll's timestamp inside a batch. */
	g_deadline_ticks[g_num_sent] = qpair->in_batch ? qpair->poll_ticks : g_now;
	g_sent[g_num_sent++] = *req;
	g_inflight[g_num_inflight++] = req;
	qpair->sq_dirty = true;
	return 0;
}

/* Complete the in-flight child @i as complete_request() does: free, then call back. */
static void
complete_child(uint32_t i, uint8_t sc)
{
	struct nvme_request *req = g_inflight[i];
	nvp_nvme_cmd_cb cb = req->cb_fn;
	void *arg = req->cb_arg;
	struct nvme_cpl cpl;

	memmove(&g_inflight[i], &g_inflight[i + 1], (g_num_inflight - i - 1) * sizeof(req));
	g_num_inflight--;
	memset(&cpl, 0, sizeof(cpl));
	cpl.cid = (uint16_t)(req - g_reqs);
	cpl.status.sc = sc;
	nvme_qpair_free_request(&g_qpair, req);
	cb(arg, &cpl);
}

static void
complete_all(void)
{
	while (g_num_inflight > 0) {
		complete_child(0, 0);
	}
}

/* The SGL of the request as the transport would walk it: (address, length) pairs. */
struct seg {
	uint8_t *addr;
	uint32_t len;
};

static uint32_t
walk(struct nvme_request *req, struct seg *segs, uint32_t max)
{
	uint32_t left = req->payload.size, n = 0;

	req->payload.reset_sgl_fn(req->payload.sgl_arg, 0);
	while (left > 0 && n < max) {
		void *addr;
		uint32_t len;

		if (req->payload.next_sge_fn(req->payload.sgl_arg, &addr, &len) != 0) {
			return UINT32_MAX;
		}
		len = NVP_MIN(len, left);
		segs[n].addr = addr;
		segs[n].len = len;
		n++;
		left -= len;
	}
	return n;
}

static struct seg g_check_segs[64];
static uint32_t g_check_nsegs[256];

static int
fake_check(struct nvp_nvme_qpair *qpair, struct nvme_request *req)
{
	(void)qpair;
	g_checks++;
	if (req->payload.type == NVME_PAYLOAD_SGL && g_checks < NVP_COUNTOF(g_check_nsegs)) {
		g_check_nsegs[g_checks] = walk(req, g_check_segs, NVP_COUNTOF(g_check_segs));
	}
	if (g_check_fail_at != 0 && g_checks == g_check_fail_at) {
		return g_check_rc;
	}
	return 0;
}

static void
fake_doorbell(struct nvp_nvme_qpair *qpair)
{
	(void)qpair;
	g_doorbells++;
}

static const struct nvme_transport_ops g_fake_transport = {
	.name = "fake",
	.qpair_check_request = fake_check,
	.qpair_ring_doorbell = fake_doorbell,
};

/* ---- the caller's SGL ---- */

struct iov {
	uint8_t *base[16];
	uint32_t len[16];
	uint32_t n;
	uint32_t cur, cur_off;
};

static void
iov_reset(void *arg, uint32_t offset)
{
	struct iov *v = arg;

	v->cur = 0;
	while (v->cur < v->n && offset >= v->len[v->cur]) {
		offset -= v->len[v->cur++];
	}
	v->cur_off = offset;
}

static int
iov_next(void *arg, void **addr, uint32_t *len)
{
	struct iov *v = arg;

	if (v->cur >= v->n) {
		return -EINVAL;
	}
	*addr = v->base[v->cur] + v->cur_off;
	*len = v->len[v->cur] - v->cur_off;
	v->cur++;
	v->cur_off = 0;
	return 0;
}

/* ---- the caller ---- */

static uint32_t g_cb_calls;
static struct nvme_cpl g_cb_cpl;

static void
parent_cb(void *arg, const struct nvme_cpl *cpl)
{
	(void)arg;
	g_cb_calls++;
	g_cb_cpl = *cpl;
}

static uint8_t *g_dma; /* 4 MiB of DMA memory */
#define DMA_LEN (4u << 20)

static void
setup(uint32_t sector, uint32_t max_xfer, uint32_t num_reqs, uint32_t num_entries)
{
	uint32_t i;

	memset(&g_ctrlr, 0, sizeof(g_ctrlr));
	g_ctrlr.transport = &g_fake_transport;
	g_ctrlr.max_xfer_size = max_xfer;
	memset(&g_ns, 0, sizeof(g_ns));
	g_ns.ctrlr = &g_ctrlr;
	g_ns.id = 1;
	g_ns.sector_size = g_ns.data_size = sector;
	g_ns.num_sectors = 1u << 30;
	g_ns.max_io_sectors = max_xfer / sector;
	g_ns.active = true;
	memset(&g_qpair, 0, sizeof(g_qpair));
	g_qpair.ctrlr = &g_ctrlr;
	g_qpair.transport = &g_fake_transport;
	g_qpair.id = 1;
	g_qpair.num_entries = num_entries;
	g_qpair.num_requests = num_reqs;
	SLIST_INIT(&g_qpair.free_req);
	for (i = 0; i < num_reqs; i++) {
		SLIST_INSERT_HEAD(&g_qpair.free_req, &g_reqs[num_reqs - 1 - i], free_link);
	}
	g_num_inflight = g_num_sent = 0;
	g_submit_rc = 0;
	g_submit_fail_at = 0;
	g_check_rc = 0;
	g_check_fail_at = 0;
	g_checks = 0;
	g_doorbells = 0;
	g_cb_calls = 0;
	memset(&g_cb_cpl, 0, sizeof(g_cb_cpl));
}

static uint32_t
free_reqs(void)
{
	struct nvme_request *r;
	uint32_t n = 0;

	SLIST_FOREACH (r, &g_qpair.free_req, free_link) {
		n++;
	}
	return n;
}

/* A parent as nvme_ns_cmd.c builds one. */
static struct nvme_request *
make_parent(uint8_t opc, uint64_t lba, uint32_t count, void *buf, struct iov *v)
{
	struct nvme_request *p = nvme_qpair_alloc_request(&g_qpair);

	if (p == NULL) {
		abort(); /* a test that runs out of objects is broken */
	}
	nvme_request_init(p, parent_cb, v);
	p->md_buf = NULL; /* nvme_request_init() leaves the cold fields to their users */
	p->cmd.opc = opc;
	p->cmd.nsid = g_ns.id;
	p->cmd.cdw10 = (uint32_t)lba;
	p->cmd.cdw11 = (uint32_t)(lba >> 32);
	p->cmd.cdw12 = ((count - 1) & 0xffff) | NVME_IO_FLAGS_FORCE_UNIT_ACCESS;
	if (buf != NULL) {
		nvme_request_set_contig(p, buf, count * g_ns.sector_size);
	} else if (v != NULL) {
		p->payload.type = NVME_PAYLOAD_SGL;
		p->payload.size = count * g_ns.sector_size;
		p->payload.reset_sgl_fn = iov_reset;
		p->payload.next_sge_fn = iov_next;
		p->payload.sgl_arg = v;
	}
	p->ns = &g_ns;
	p->split_lba = lba;
	p->split_left = count;
	return p;
}

static uint64_t
sent_lba(uint32_t i)
{
	return (uint64_t)g_sent[i].cmd.cdw10 | ((uint64_t)g_sent[i].cmd.cdw11 << 32);
}

static uint32_t
sent_count(uint32_t i)
{
	return (g_sent[i].cmd.cdw12 & 0xffff) + 1;
}

/* ---- tests ---- */

static void
test_arithmetic(void)
{
	/* 128 KiB limit: 256 blocks of 512 B, 32 of 4 KiB. */
	CU_ASSERT_EQUAL(nvme_split_count(0, 2048, 256, 0), 256);
	CU_ASSERT_EQUAL(nvme_split_count(0, 100, 256, 0), 100);
	CU_ASSERT_EQUAL(nvme_split_count(0, 256, 32, 0), 32);
	CU_ASSERT(!nvme_split_needed(0, 256, 256, 0));
	CU_ASSERT(nvme_split_needed(0, 257, 256, 0));
	CU_ASSERT(nvme_split_needed(5, 33, 32, 0));
	/* NOIOB: up to the next multiple, which need not be a power of two. */
	CU_ASSERT_EQUAL(nvme_split_count(90, 20, 256, 96), 6);
	CU_ASSERT_EQUAL(nvme_split_count(96, 20, 256, 96), 20);
	CU_ASSERT_EQUAL(nvme_split_count(96, 200, 256, 96), 96);
	CU_ASSERT_EQUAL(nvme_split_count(191, 200, 256, 96), 1);
	CU_ASSERT(!nvme_split_needed(96, 96, 256, 96));
	CU_ASSERT(nvme_split_needed(95, 2, 256, 96));
	/* The limit and the boundary together; a 64-bit LBA. */
	CU_ASSERT_EQUAL(nvme_split_count(0, 1000, 32, 128), 32);
	CU_ASSERT_EQUAL(nvme_split_count(120, 1000, 32, 128), 8);
	CU_ASSERT_EQUAL(nvme_split_count((1ull << 40) + 3, 100, 256, 8), 5);
	/* PRACT with 8 bytes of PI on an extended format: the host moves data only. */
	memset(&g_ns, 0, sizeof(g_ns));
	g_ns.sector_size = 520;
	g_ns.data_size = 512;
	g_ns.md_size = 8;
	CU_ASSERT_EQUAL(nvme_ns_host_lba_size(&g_ns, NVME_IO_FLAGS_PRACT), 520); /* no PI */
	g_ns.pi_type = 1;
	CU_ASSERT_EQUAL(nvme_ns_host_lba_size(&g_ns, 0), 520);
	CU_ASSERT_EQUAL(nvme_ns_host_lba_size(&g_ns, NVME_IO_FLAGS_PRACT), 512);
	g_ns.md_size = 16;
	g_ns.sector_size = 528;
	CU_ASSERT_EQUAL(nvme_ns_host_lba_size(&g_ns, NVME_IO_FLAGS_PRACT), 528);
}

/* A contiguous 1 MiB read at 128 KiB a command, 512 B blocks: eight children. */
static void
test_contig_512(void)
{
	struct nvme_request *p;
	uint32_t i;

	setup(512, 128 * 1024, 64, 16); /* 64 / 16 - 1 = 3 children in flight */
	p = make_parent(NVME_OPC_READ, 1000, 2048, g_dma + 4, NULL);
	CU_ASSERT_EQUAL(nvme_split_submit(&g_qpair, p), 0);
	CU_ASSERT_EQUAL(g_num_inflight, 3);
	CU_ASSERT_EQUAL(g_doorbells, 1); /* one doorbell for the batch */
	CU_ASSERT_EQUAL(g_checks, 8);    /* every child's payload checked up front */
	complete_all();
	CU_ASSERT_EQUAL(g_num_sent, 8);
	for (i = 0; i < g_num_sent; i++) {
		CU_ASSERT_EQUAL(g_sent[i].cmd.opc, NVME_OPC_READ);
		CU_ASSERT_EQUAL(g_sent[i].cmd.nsid, 1);
		CU_ASSERT_EQUAL(sent_lba(i), 1000 + 256 * i);
		CU_ASSERT_EQUAL(sent_count(i), 256);
		CU_ASSERT_EQUAL(g_sent[i].cmd.cdw12 & 0xffff0000u, NVME_IO_FLAGS_FORCE_UNIT_ACCESS);
		CU_ASSERT_EQUAL(g_sent[i].payload.type, NVME_PAYLOAD_CONTIG);
		CU_ASSERT_PTR_EQUAL(g_sent[i].payload.buf, g_dma + 4 + 128 * 1024 * i);
		CU_ASSERT_EQUAL(g_sent[i].payload.size, 128 * 1024);
	}
	CU_ASSERT_EQUAL(g_cb_calls, 1);
	CU_ASSERT(!nvme_cpl_is_error(&g_cb_cpl));
	CU_ASSERT_EQUAL(free_reqs(), 64); /* parent and children all given back */
}

/* 4 KiB blocks, 8 KiB limit, NOIOB of 3 blocks: pieces never cross a multiple of 3. */
static void
test_contig_4k_noiob(void)
{
	static const uint32_t want_lba[] = { 5, 6, 8, 9, 11, 12 };
	static const uint32_t want_cnt[] = { 1, 2, 1, 2, 1, 1 };
	struct nvme_request *p;
	uint32_t i;

	setup(4096, 8192, 8, 4);
	g_ns.noiob = 3;
	p = make_parent(NVME_OPC_WRITE, 5, 8, g_dma, NULL);
	CU_ASSERT_EQUAL(nvme_split_submit(&g_qpair, p), 0);
	complete_all();
	CU_ASSERT_EQUAL_FATAL(g_num_sent, NVP_COUNTOF(want_lba));
	for (i = 0; i < g_num_sent; i++) {
		CU_ASSERT_EQUAL(sent_lba(i), want_lba[i]);
		CU_ASSERT_EQUAL(sent_count(i), want_cnt[i]);
		CU_ASSERT_PTR_EQUAL(g_sent[i].payload.buf, g_dma + (want_lba[i] - 5) * 4096);
	}
	CU_ASSERT_EQUAL(g_cb_calls, 1);
}

/*
 * Check that the children's SGLs, concatenated, are exactly the parent's bytes: each
 * child starts where the previous ended, inside an element when a split point falls
 * there.
 */
static void
check_sgl_children(struct iov *v, uint32_t total)
{
	struct seg segs[32];
	uint32_t i, j, n, el = 0, el_off = 0, sum = 0;

	for (i = 0; i < g_num_sent; i++) {
		/* The copy stands for the child (its object was reused since). */
		g_sent[i].payload.sgl_arg = &g_sent[i];
		n = walk(&g_sent[i], segs, NVP_COUNTOF(segs));
		CU_ASSERT_FATAL(n != UINT32_MAX && n > 0);
		for (j = 0; j < n; j++) {
			CU_ASSERT_PTR_EQUAL(segs[j].addr, v->base[el] + el_off);
			CU_ASSERT(segs[j].len <= v->len[el] - el_off);
			el_off += segs[j].len;
			sum += segs[j].len;
			if (el_off == v->len[el]) {
				el++;
				el_off = 0;
			}
		}
	}
	CU_ASSERT_EQUAL(sum, total);
}

/* 512 B blocks, 8 KiB limit, elements of 12 KiB (after a first one from an offset). */
static void
test_sgl_straddle_512(void)
{
	struct iov v = { .n = 4 };
	struct nvme_request *p;

	setup(512, 8192, 16, 8);
	v.base[0] = g_dma + 3072;
	v.len[0] = 1024;
	v.base[1] = g_dma + 8192;
	v.len[1] = 12288;
	v.base[2] = g_dma + 65536;
	v.len[2] = 12288;
	v.base[3] = g_dma + 131072;
	v.len[3] = 5632;
	p = make_parent(NVME_OPC_WRITE, 0, 60, NULL, &v); /* 30 KiB */
	CU_ASSERT_EQUAL(nvme_split_submit(&g_qpair, p), 0);
	complete_all();
	CU_ASSERT_EQUAL(g_num_sent, 4); /* 8 + 8 + 8 + 6 KiB */
	CU_ASSERT_EQUAL(sent_count(3), 12);
	/* The second child starts 7 KiB into element 1; its first segment is 5 KiB. */
	CU_ASSERT_EQUAL(g_check_nsegs[2], 2);
	check_sgl_children(&v, 60 * 512);
	CU_ASSERT_EQUAL(g_cb_calls, 1);
}

/* 4 KiB blocks, 16 KiB limit, three 20 KiB elements: every split point inside one. */
static void
test_sgl_straddle_4k(void)
{
	struct iov v = { .n = 3 };
	struct nvme_request *p;
	uint32_t i;

	setup(4096, 16384, 16, 8);
	for (i = 0; i < 3; i++) {
		v.base[i] = g_dma + (size_t)i * 65536;
		v.len[i] = 20480;
	}
	p = make_parent(NVME_OPC_READ, 100, 15, NULL, &v);
	CU_ASSERT_EQUAL(nvme_split_submit(&g_qpair, p), 0);
	complete_all();
	CU_ASSERT_EQUAL(g_num_sent, 4); /* 4 + 4 + 4 + 3 blocks */
	for (i = 0; i < g_num_sent; i++) {
		CU_ASSERT_EQUAL(g_sent[i].payload.type, NVME_PAYLOAD_SGL);
		CU_ASSERT_EQUAL(g_sent[i].split_offset, i * 16384);
		CU_ASSERT_EQUAL(sent_lba(i), 100 + 4 * i);
	}
	check_sgl_children(&v, 15 * 4096);
	CU_ASSERT_EQUAL(g_cb_calls, 1);
}

/* More children than the qpair has request objects: recycled, still completes. */
static void
test_more_children_than_requests(void)
{
	struct nvme_request *p;
	uint32_t i;

	setup(512, 4096, 3, 2); /* 3 objects: the parent and at most 1 child (3/2 - 1 = 0) */
	p = make_parent(NVME_OPC_READ, 0, 800, g_dma, NULL); /* 100 children */
	CU_ASSERT_EQUAL(nvme_split_submit(&g_qpair, p), 0);
	for (i = 0; i < 200 && g_num_inflight > 0; i++) {
		CU_ASSERT_EQUAL(g_num_inflight, 1);
		complete_child(0, 0);
	}
	CU_ASSERT_EQUAL(g_num_sent, 100);
	CU_ASSERT_EQUAL(sent_lba(99), 792);
	CU_ASSERT_EQUAL(g_cb_calls, 1);
	CU_ASSERT_EQUAL(free_reqs(), 3);
	/* Every object taken by others but one: the parent still gets going. */
	setup(512, 4096, 3, 2);
	CU_ASSERT_PTR_NOT_NULL(nvme_qpair_alloc_request(&g_qpair));
	p = make_parent(NVME_OPC_READ, 0, 16, g_dma, NULL);
	CU_ASSERT_EQUAL(nvme_split_submit(&g_qpair, p), 0);
	complete_all();
	CU_ASSERT_EQUAL(g_num_sent, 2);
	CU_ASSERT_EQUAL(g_cb_calls, 1);
}

/* The first failure is the parent's status; no child is sent after it. */
static void
test_first_error(void)
{
	struct nvme_request *p;

	setup(512, 4096, 16, 4);                             /* 3 children in flight */
	p = make_parent(NVME_OPC_WRITE, 0, 80, g_dma, NULL); /* 10 children */
	CU_ASSERT_EQUAL(nvme_split_submit(&g_qpair, p), 0);
	CU_ASSERT_EQUAL(g_num_inflight, 3);
	complete_child(0, 0);
	CU_ASSERT_EQUAL(g_num_sent, 4);
	complete_child(1, NVME_SC_LBA_OUT_OF_RANGE);
	CU_ASSERT_EQUAL(g_num_sent, 4); /* nothing more after the error */
	complete_child(0, NVME_SC_INTERNAL_DEVICE_ERROR);
	CU_ASSERT_EQUAL(g_cb_calls, 0);
	complete_child(0, 0);
	CU_ASSERT_EQUAL(g_cb_calls, 1);
	CU_ASSERT_EQUAL(g_cb_cpl.status.sc, NVME_SC_LBA_OUT_OF_RANGE);
	CU_ASSERT_EQUAL(g_cb_cpl.sqid, 1);
	CU_ASSERT_EQUAL(free_reqs(), 16);
}

/* Errors at submission come back as -errno with no callback and nothing held. */
static void
test_submit_errors(void)
{
	struct nvme_request *p;

	/* The third child's payload is bad: found before anything is sent. */
	setup(512, 4096, 16, 4);
	g_check_fail_at = 3;
	g_check_rc = -EFAULT;
	p = make_parent(NVME_OPC_READ, 0, 80, g_dma, NULL);
	CU_ASSERT_EQUAL(nvme_split_submit(&g_qpair, p), -EFAULT);
	CU_ASSERT_EQUAL(g_num_sent, 0);
	CU_ASSERT_EQUAL(free_reqs(), 16);
	/* The first child refused by the qpair (failed controller). */
	setup(512, 4096, 16, 4);
	g_submit_fail_at = 1;
	g_submit_rc = -ENXIO;
	p = make_parent(NVME_OPC_READ, 0, 80, g_dma, NULL);
	CU_ASSERT_EQUAL(nvme_split_submit(&g_qpair, p), -ENXIO);
	CU_ASSERT_EQUAL(free_reqs(), 16);
	CU_ASSERT_EQUAL(g_cb_calls, 0);
	/* A later child refused: the callback reports it once the others are done. */
	setup(512, 4096, 16, 4);
	g_submit_fail_at = 2;
	g_submit_rc = -ENXIO;
	p = make_parent(NVME_OPC_READ, 0, 80, g_dma, NULL);
	CU_ASSERT_EQUAL(nvme_split_submit(&g_qpair, p), 0);
	CU_ASSERT_EQUAL(g_num_inflight, 1);
	complete_all();
	CU_ASSERT_EQUAL(g_cb_calls, 1);
	CU_ASSERT_EQUAL(g_cb_cpl.status.sc, NVME_SC_ABORTED_SQ_DELETION);
	CU_ASSERT_EQUAL(g_cb_cpl.status.dnr, 0); /* a reset may bring the controller back */
	CU_ASSERT_EQUAL(free_reqs(), 16);
	/* The same, the device removed: no retry can help (DNR). */
	setup(512, 4096, 16, 4);
	g_submit_fail_at = 2;
	g_submit_rc = -ENXIO;
	g_gone_for_good = true;
	p = make_parent(NVME_OPC_READ, 0, 80, g_dma, NULL);
	CU_ASSERT_EQUAL(nvme_split_submit(&g_qpair, p), 0);
	complete_all();
	g_gone_for_good = false;
	CU_ASSERT_EQUAL(g_cb_calls, 1);
	CU_ASSERT_EQUAL(g_cb_cpl.status.sc, NVME_SC_ABORTED_SQ_DELETION);
	CU_ASSERT_EQUAL(g_cb_cpl.status.dnr, 1);
	CU_ASSERT_EQUAL(free_reqs(), 16);
	/* No object left for a first child: -ENOMEM like any request. */
	setup(512, 4096, 2, 2);
	CU_ASSERT_PTR_NOT_NULL(nvme_qpair_alloc_request(&g_qpair));
	p = make_parent(NVME_OPC_READ, 0, 80, g_dma, NULL);
	CU_ASSERT_EQUAL(nvme_split_submit(&g_qpair, p), -ENOMEM);
	CU_ASSERT_EQUAL(free_reqs(), 1);
}

/* Separate metadata: each child's MPTR is its part of the buffer; PI reference tags. */
static void
test_metadata(void)
{
	uint8_t *md = g_dma + (2u << 20);
	struct nvme_request *p;
	uint32_t i;

	setup(512, 4096, 16, 4);
	g_ns.md_size = 8;
	g_ns.md_separate = true;
	g_ns.pi_type = 1;
	p = make_parent(NVME_OPC_WRITE, 64, 24, g_dma, NULL);
	p->md_buf = md;
	p->cmd.cdw14 = 64;
	CU_ASSERT_EQUAL(nvme_split_submit(&g_qpair, p), 0);
	complete_all();
	CU_ASSERT_EQUAL_FATAL(g_num_sent, 3);
	for (i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(g_sent[i].cmd.mptr, nvp_env_vtophys(md + 64 * i, NULL));
		CU_ASSERT_EQUAL(g_sent[i].cmd.cdw14, 64 + 8 * i);
	}
	/* Metadata that is not DMA memory: refused up front. */
	setup(512, 4096, 16, 4);
	g_ns.md_size = 8;
	g_ns.md_separate = true;
	p = make_parent(NVME_OPC_WRITE, 0, 24, g_dma, NULL);
	p->md_buf = &g_ns;
	CU_ASSERT_EQUAL(nvme_split_submit(&g_qpair, p), -EFAULT);
	CU_ASSERT_EQUAL(g_num_sent, 0);
	CU_ASSERT_EQUAL(free_reqs(), 16);
}

/* Write zeroes: no payload, only NLB's 16 bits limit a child. */
static void
test_write_zeroes(void)
{
	struct nvme_request *p;

	setup(512, 4096, 16, 4);
	p = make_parent(NVME_OPC_WRITE_ZEROES, 10, 150000, NULL, NULL);
	CU_ASSERT_EQUAL(nvme_split_submit(&g_qpair, p), 0);
	complete_all();
	CU_ASSERT_EQUAL_FATAL(g_num_sent, 3);
	CU_ASSERT_EQUAL(sent_count(0), 65536);
	CU_ASSERT_EQUAL(sent_lba(1), 10 + 65536);
	CU_ASSERT_EQUAL(sent_count(2), 150000 - 2 * 65536);
	CU_ASSERT_EQUAL(g_sent[2].payload.type, NVME_PAYLOAD_NONE);
	CU_ASSERT_EQUAL(g_checks, 0);
	CU_ASSERT_EQUAL(g_cb_calls, 1);
}

/*
 * Children go out in a batch (one doorbell), so the submission stamps their deadlines
 * with poll_ticks: outside a poll that must be made current first, or a poll_ticks from
 * long ago would have every child time out at once. Inside a poll it is left alone.
 */
static void
test_deadline_clock(void)
{
	struct nvme_request *p;
	uint32_t i;

	setup(512, 4096, 16, 4);
	g_qpair.poll_ticks = 5; /* the last poll, long ago */
	g_now = 1000000;
	p = make_parent(NVME_OPC_READ, 0, 24, g_dma, NULL); /* 3 children */
	CU_ASSERT_EQUAL(nvme_split_submit(&g_qpair, p), 0);
	CU_ASSERT_EQUAL_FATAL(g_num_sent, 3);
	for (i = 0; i < g_num_sent; i++) {
		CU_ASSERT_EQUAL(g_deadline_ticks[i], 1000000);
	}
	CU_ASSERT_FALSE(g_qpair.in_batch);
	complete_all();
	CU_ASSERT_EQUAL(g_cb_calls, 1);

	/* From a completion callback (inside a poll): the poll's own timestamp. */
	setup(512, 4096, 16, 4);
	g_qpair.in_batch = true;
	g_qpair.poll_ticks = 999000;
	p = make_parent(NVME_OPC_READ, 0, 24, g_dma, NULL);
	CU_ASSERT_EQUAL(nvme_split_submit(&g_qpair, p), 0);
	CU_ASSERT_EQUAL(g_qpair.poll_ticks, 999000);
	CU_ASSERT_EQUAL(g_deadline_ticks[0], 999000);
	CU_ASSERT_TRUE(g_qpair.in_batch);
	g_qpair.in_batch = false;
	complete_all();
	CU_ASSERT_EQUAL(g_cb_calls, 1);
}

static int
suite_init(void)
{
	if (ut_env_init() != 0) {
		return -1;
	}
	g_dma = nvp_env_dma_zmalloc(DMA_LEN, 4096, NULL);
	return g_dma == NULL ? -1 : 0;
}

static int
suite_fini(void)
{
	nvp_env_dma_free(g_dma);
	nvp_env_fini();
	return 0;
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	s = CU_add_suite("nvme_ns_split", suite_init, suite_fini);
	CU_ADD_TEST(s, test_arithmetic);
	CU_ADD_TEST(s, test_contig_512);
	CU_ADD_TEST(s, test_contig_4k_noiob);
	CU_ADD_TEST(s, test_sgl_straddle_512);
	CU_ADD_TEST(s, test_sgl_straddle_4k);
	CU_ADD_TEST(s, test_more_children_than_requests);
	CU_ADD_TEST(s, test_first_error);
	CU_ADD_TEST(s, test_submit_errors);
	CU_ADD_TEST(s, test_metadata);
	CU_ADD_TEST(s, test_write_zeroes);
	CU_ADD_TEST(s, test_deadline_clock);
	return ut_run();
}

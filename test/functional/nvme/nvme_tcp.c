/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NVMe/TCP transport against the small target of app/common/nvme_tcp_tgt.c on
 * loopback, which serves a software controller: attach over TCP (ICReq/ICResp, Connect,
 * Property Get/Set, the init state machine), identify, read/write verify with in-capsule
 * data, R2T/H2CData and multi-PDU C2HData, digests, and the faults a host must survive
 * (a dropped connection, malformed PDUs, bad digests, an R2T beyond the command's data):
 * the requests complete with a path error, the process survives, a reset reconnects.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "nvpoll/nvme_tcp_spec.h"
#include "nvme_tcp_tgt.h"

#define BS 512u

struct tcp_fx {
	struct fx_ctrlr backend; /* the software controller, attached over PCIe */
	struct tcp_tgt *tgt;
	struct nvp_nvme_ctrlr *ctrlr; /* the same controller seen over TCP */
	struct nvp_nvme_ns *ns;
	struct nvp_nvme_qpair *qpair;
};

static int
tfx_open_opts(struct tcp_fx *f, const struct tcp_tgt_opts *topts, const char *extra)
{
	char trid[512];
	int rc;

	memset(f, 0, sizeof(*f));
	rc = fx_open(&f->backend, "size=32M,lba=512");
	if (rc != 0) {
		return rc;
	}
	rc = tcp_tgt_start(f->backend.ctrlr, topts, &f->tgt);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	tcp_tgt_trid(f->tgt, extra, trid, sizeof(trid));
	rc = fx_connect_str(trid, NULL, &f->ctrlr);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc != 0) {
		return rc;
	}
	f->ns = nvp_nvme_ctrlr_get_ns(f->ctrlr, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->ns);
	rc = fx_qpair_alloc(f->ctrlr, 64, 0, 0, false, &f->qpair);
	CU_ASSERT_EQUAL(rc, 0);
	return rc;
}

static int
tfx_open(struct tcp_fx *f, const char *extra)
{
	struct tcp_tgt_opts o;

	tcp_tgt_opts_init(&o);
	return tfx_open_opts(f, &o, extra);
}

static void
tfx_close(struct tcp_fx *f)
{
	struct tcp_tgt_stats st;

	if (f->qpair != NULL) {
		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(f->qpair), 0);
	}
	if (f->ctrlr != NULL) {
		CU_ASSERT_EQUAL(nvp_nvme_detach(f->ctrlr), 0);
	}
	if (f->tgt != NULL) {
		tcp_tgt_get_stats(f->tgt, &st);
		CU_ASSERT_EQUAL(st.bad_host_pdus, 0);
		tcp_tgt_stop(f->tgt);
	}
	fx_close(&f->backend);
}

/* Write @count blocks at @lba with a pattern over TCP, read them back, compare. */
static void
write_read_verify(struct tcp_fx *f, uint64_t lba, uint32_t count, uint32_t tag)
{
	uint8_t *buf = fx_dma_alloc((size_t)count * BS);

	fx_pattern_fill(buf, lba, count, BS, tag);
	CU_ASSERT_EQUAL(fx_io(f->ns, f->qpair, FX_WRITE, buf, lba, count, 0, NULL), 0);
	memset(buf, 0, (size_t)count * BS);
	CU_ASSERT_EQUAL(fx_io(f->ns, f->qpair, FX_READ, buf, lba, count, 0, NULL), 0);
	CU_ASSERT_EQUAL(fx_pattern_check(buf, lba, count, BS, tag), -1);
	nvp_env_dma_free(buf);
}

static void
test_identify(void)
{
	const struct nvme_ctrlr_data *over_tcp, *local;
	struct nvme_health_information_page *smart;
	struct tcp_fx f;

	if (tfx_open(&f, NULL) != 0) {
		tfx_close(&f);
		return;
	}
	over_tcp = nvp_nvme_ctrlr_get_data(f.ctrlr);
	local = nvp_nvme_ctrlr_get_data(f.backend.ctrlr);
	CU_ASSERT_EQUAL(over_tcp->vid, local->vid);
	CU_ASSERT_EQUAL(memcmp(over_tcp->mn, local->mn, sizeof(local->mn)), 0);
	CU_ASSERT_EQUAL(memcmp(over_tcp->sn, local->sn, sizeof(local->sn)), 0);
	CU_ASSERT_STRING_EQUAL(over_tcp->subnqn, "nqn.2026-01.io.nvpoll:test");
	CU_ASSERT_NOT_EQUAL(over_tcp->cntlid, 0);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_regs_cap(f.ctrlr).bits.mqes, 1023);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_regs_vs(f.ctrlr).raw,
			nvp_nvme_ctrlr_get_regs_vs(f.backend.ctrlr).raw);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_regs_csts(f.ctrlr).bits.rdy, 1);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_num_sectors(f.ns),
			nvp_nvme_ns_get_num_sectors(f.backend.ns));
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_sector_size(f.ns), BS);
	smart = fx_dma_alloc(sizeof(*smart));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_log_page(f.ctrlr, NVME_LOG_HEALTH_INFORMATION,
						    0xffffffffu, smart, sizeof(*smart), 0, NULL),
			0);
	nvp_env_dma_free(smart);
	tfx_close(&f);
}

static void
test_io_verify(void)
{
	struct tcp_tgt_stats st;
	struct tcp_fx f;
	uint32_t count;

	if (tfx_open(&f, NULL) != 0) {
		tfx_close(&f);
		return;
	}
	for (count = 1; count <= 256; count *= 2) {
		write_read_verify(&f, count * 7, count, count);
	}
	tcp_tgt_get_stats(f.tgt, &st);
	CU_ASSERT(st.incapsule_writes > 0); /* up to 8 KiB: data in the capsule */
	CU_ASSERT(st.r2ts > 0);             /* above: R2T, H2CData */
	CU_ASSERT(st.c2h_pdus > 0);
	CU_ASSERT_EQUAL(st.hdgsts_checked, 0);
	tfx_close(&f);
}

/* 1 MiB: 16 R2Ts of 64 KiB, each answered by 2 H2CData of 32 KiB; 32 C2HData back. */
static void
test_large_io_r2t(void)
{
	struct tcp_tgt_stats before, after;
	struct tcp_fx f;

	if (tfx_open(&f, NULL) != 0) {
		tfx_close(&f);
		return;
	}
	if (nvp_nvme_ctrlr_get_max_xfer_size(f.ctrlr) < 1024u * 1024) {
		fprintf(stderr, "  max transfer %u: using it\n",
			nvp_nvme_ctrlr_get_max_xfer_size(f.ctrlr));
	}
	tcp_tgt_get_stats(f.tgt, &before);
	write_read_verify(&f, 1000, nvp_nvme_ctrlr_get_max_xfer_size(f.ctrlr) / BS, 77);
	tcp_tgt_get_stats(f.tgt, &after);
	CU_ASSERT(after.r2ts - before.r2ts >= 2);
	CU_ASSERT(after.h2c_pdus - before.h2c_pdus >= 2 * (after.r2ts - before.r2ts));
	CU_ASSERT(after.c2h_pdus - before.c2h_pdus >= 4);
	tfx_close(&f);
}

/* Many commands in flight at once, mixed sizes, completing in any order. */
struct qd_ctx {
	unsigned int done;
	unsigned int errors;
};

static void
qd_cb(void *arg, const struct nvme_cpl *cpl)
{
	struct qd_ctx *q = arg;

	q->done++;
	if (nvme_cpl_is_error(cpl)) {
		q->errors++;
	}
}

static void
test_queue_depth(void)
{
	enum {
		N = 48
	};
	struct qd_ctx q = { 0 };
	struct tcp_fx f;
	uint8_t *buf;
	uint32_t i;

	if (tfx_open(&f, NULL) != 0) {
		tfx_close(&f);
		return;
	}
	buf = fx_dma_alloc((size_t)N * 64 * BS);
	for (i = 0; i < N; i++) {
		uint32_t n = 1u + (i * 13u) % 64u;

		fx_pattern_fill(buf + (size_t)i * 64 * BS, i * 64, n, BS, 5);
		CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(f.ns, f.qpair, buf + (size_t)i * 64 * BS,
						      i * 64, n, qd_cb, &q, 0),
				0);
	}
	CU_ASSERT_EQUAL(fx_poll_until(f.qpair, &q.done, N, FX_WAIT_MS), 0);
	memset(buf, 0, (size_t)N * 64 * BS);
	for (i = 0; i < N; i++) {
		uint32_t n = 1u + (i * 13u) % 64u;

		CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(f.ns, f.qpair, buf + (size_t)i * 64 * BS,
						     i * 64, n, qd_cb, &q, 0),
				0);
	}
	CU_ASSERT_EQUAL(fx_poll_until(f.qpair, &q.done, 2 * N, FX_WAIT_MS), 0);
	CU_ASSERT_EQUAL(q.errors, 0);
	for (i = 0; i < N; i++) {
		CU_ASSERT_EQUAL(fx_pattern_check(buf + (size_t)i * 64 * BS, i * 64,
						 1u + (i * 13u) % 64u, BS, 5),
				-1);
	}
	nvp_env_dma_free(buf);
	tfx_close(&f);
}

/* Scattered payloads (readv/writev): pieces of odd sizes, in-capsule, R2T and C2HData
 * split across them, with data digests over the pieces. */
static void
test_scattered(void)
{
	static struct fx_sgl w, r;
	struct tcp_fx f;
	uint8_t *flat, *out;
	const uint32_t count = 96; /* 48 KiB: R2T */
	uint32_t cuts[] = { 100, 4000, 7, 20000 }, off, i;

	if (tfx_open(&f, "ddgst:1 hdgst:1") != 0) {
		tfx_close(&f);
		return;
	}
	flat = fx_dma_alloc(count * BS);
	out = fx_dma_alloc(count * BS);
	fx_pattern_fill(flat, 40, count, BS, 0x33);
	fx_sgl_init(&w);
	fx_sgl_init(&r);
	for (off = 0, i = 0; off < count * BS; i++) {
		uint32_t n = NVP_MIN(cuts[i % 4], count * BS - off);

		fx_sgl_add(&w, flat + off, n);
		off += n;
	}
	for (off = 0, i = 0; off < count * BS; i++) {
		uint32_t n = NVP_MIN(cuts[(i + 2) % 4], count * BS - off);

		fx_sgl_add(&r, out + off, n);
		off += n;
	}
	CU_ASSERT_EQUAL(fx_iov_io(f.ns, f.qpair, true, &w, 40, count, NULL), 0);
	CU_ASSERT_EQUAL(fx_iov_io(f.ns, f.qpair, false, &r, 40, count, NULL), 0);
	CU_ASSERT_EQUAL(fx_pattern_check(out, 40, count, BS, 0x33), -1);
	/* Small ones travel in the capsule. */
	fx_sgl_init(&w);
	fx_sgl_add(&w, flat, 1000);
	fx_sgl_add(&w, flat + 1000, 24);
	CU_ASSERT_EQUAL(fx_iov_io(f.ns, f.qpair, true, &w, 40, 2, NULL), 0);
	nvp_env_dma_free(flat);
	nvp_env_dma_free(out);
	tfx_close(&f);
}

static void
test_digests(void)
{
	struct tcp_tgt_stats st;
	struct tcp_fx f;

	if (tfx_open(&f, "hdgst:1 ddgst:1") != 0) {
		tfx_close(&f);
		return;
	}
	write_read_verify(&f, 0, 1, 1);
	write_read_verify(&f, 64, 16, 2);   /* in-capsule */
	write_read_verify(&f, 512, 512, 3); /* R2T, H2CData, C2HData */
	tcp_tgt_get_stats(f.tgt, &st);
	CU_ASSERT(st.hdgsts_checked > 0);
	CU_ASSERT(st.ddgsts_checked > 0);
	tfx_close(&f);
}

static void
test_c2h_success(void)
{
	struct tcp_tgt_opts o;
	struct tcp_fx f;

	tcp_tgt_opts_init(&o);
	o.c2h_success = true;
	o.incapsule = 0; /* every write through R2T */
	o.maxh2cdata = 4096;
	o.c2h_chunk = 4096;
	if (tfx_open_opts(&f, &o, "ddgst:1") != 0) {
		tfx_close(&f);
		return;
	}
	write_read_verify(&f, 0, 1, 9);
	write_read_verify(&f, 100, 100, 10);
	tfx_close(&f);
}

/* One fault on the next I/O command: path error, process survives, reset reconnects. */
static void
check_fault(enum tcp_tgt_fault fault, const char *extra, uint32_t count, enum fx_io_op op)
{
	struct tcp_fx f;
	struct fx_cpl c = { 0 };
	uint8_t *buf;
	int rc, i;

	if (tfx_open(&f, extra) != 0) {
		tfx_close(&f);
		return;
	}
	buf = fx_dma_alloc((size_t)count * BS);
	write_read_verify(&f, 0, 1, 1);
	tcp_tgt_set_fault(f.tgt, fault);
	rc = op == FX_READ ? nvp_nvme_ns_cmd_read(f.ns, f.qpair, buf, 0, count, fx_cpl_cb, &c, 0) :
			     nvp_nvme_ns_cmd_write(f.ns, f.qpair, buf, 0, count, fx_cpl_cb, &c, 0);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	/* The poll that finds the fault completes the request, then says the qpair failed. */
	for (i = 0; i < 10000 && c.calls == 0; i++) {
		rc = nvp_nvme_qpair_process_completions(f.qpair, 0);
		if (c.calls == 0) {
			CU_ASSERT(rc >= 0);
			nvp_env_delay_us(100);
		}
	}
	CU_ASSERT_EQUAL(c.calls, 1);
	CU_ASSERT(rc < 0);
	FX_ASSERT_STATUS(&c.cpl, NVME_SCT_PATH, NVME_SC_HOST_PATH_ERROR);
	CU_ASSERT(nvp_nvme_qpair_process_completions(f.qpair, 0) < 0);
	CU_ASSERT_EQUAL(c.calls, 1);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(f.ns, f.qpair, buf, 0, 1, NULL, NULL, 0), -ENXIO);
	/* The controller is still reachable: a reset makes a new connection per queue. */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_reset(f.ctrlr), 0);
	write_read_verify(&f, 8, 4, 2);
	write_read_verify(&f, 64, 64, 3);
	nvp_env_dma_free(buf);
	tfx_close(&f);
}

/* Each reset starts over with a new admin connection (a new controller in the dynamic
 * model) and a new connection per I/O queue: nvmet refuses an I/O queue id twice. */
static void
test_reset_loop(void)
{
	struct tcp_tgt_stats before, after;
	struct tcp_fx f;
	int i;

	if (tfx_open(&f, NULL) != 0) {
		tfx_close(&f);
		return;
	}
	for (i = 0; i < 5; i++) {
		tcp_tgt_get_stats(f.tgt, &before);
		CU_ASSERT_EQUAL_FATAL(nvp_nvme_ctrlr_reset(f.ctrlr), 0);
		/* The reset reconnects the admin queue; the I/O queue is reconnected by its
		 * owner at its next poll or submission (the reset contract, nvme.h). */
		write_read_verify(&f, (uint64_t)i * 8, 8, (uint32_t)i);
		tcp_tgt_get_stats(f.tgt, &after);
		CU_ASSERT_EQUAL(after.connections - before.connections, 2);
	}
	tfx_close(&f);
}

static int
async_qpair(struct tcp_fx *f, struct nvp_nvme_qpair **qpair)
{
	struct nvp_nvme_io_qpair_opts opts;

	nvp_nvme_ctrlr_get_default_io_qpair_opts(f->ctrlr, &opts, sizeof(opts));
	opts.io_queue_size = 64;
	opts.async_mode = true;
	return nvp_nvme_ctrlr_alloc_io_qpair(f->ctrlr, &opts, qpair);
}

/*
 * opts.async_mode over TCP: the call opens no connection (the target accepted none); a
 * submission waits; the owner's polls connect (socket, ICReq, Fabrics Connect) and send
 * it. A connect the target refuses (not listening) fails the qpair as a failed
 * re-creation does: what waited completes with ABORTED SQ DELETION, the poll says
 * -ENXIO; a controller reset brings it back.
 */
static void
test_async_io_qpair(void)
{
	struct nvp_nvme_qpair *q = NULL, *q2 = NULL;
	struct tcp_tgt_stats before, after;
	struct fx_cpl c = { 0 };
	struct tcp_fx f;
	uint8_t *buf;
	int32_t rc = 0;
	uint64_t end;

	if (tfx_open(&f, NULL) != 0) {
		tfx_close(&f);
		return;
	}
	buf = fx_dma_alloc(8 * BS);
	tcp_tgt_get_stats(f.tgt, &before);
	CU_ASSERT_EQUAL_FATAL(async_qpair(&f, &q), 0);
	CU_ASSERT_FALSE(nvp_nvme_qpair_is_connected(q));
	fx_pattern_fill(buf, 40, 8, BS, 0x5a);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(f.ns, q, buf, 40, 8, fx_cpl_cb, &c, 0), 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(q), 1);
	tcp_tgt_get_stats(f.tgt, &after);
	CU_ASSERT_EQUAL(after.connections, before.connections); /* not even a connect() */
	CU_ASSERT_EQUAL(fx_poll_until(q, &c.calls, 1, FX_WAIT_MS), 0);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&c.cpl));
	CU_ASSERT_TRUE(nvp_nvme_qpair_is_connected(q));
	tcp_tgt_get_stats(f.tgt, &after);
	CU_ASSERT_EQUAL(after.connections, before.connections + 1);
	memset(buf, 0, 8 * BS);
	CU_ASSERT_EQUAL(fx_io(f.ns, q, FX_READ, buf, 40, 8, 0, NULL), 0);
	CU_ASSERT_EQUAL(fx_pattern_check(buf, 40, 8, BS, 0x5a), -1);

	/* refused: the qpair fails, what waited on it ends, a reset brings it back */
	CU_ASSERT_EQUAL_FATAL(tcp_tgt_set_listening(f.tgt, false), 0);
	CU_ASSERT_EQUAL_FATAL(async_qpair(&f, &q2), 0);
	memset(&c, 0, sizeof(c));
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(f.ns, q2, buf, 40, 8, fx_cpl_cb, &c, 0), 0);
	end = fx_now_us() + (uint64_t)FX_WAIT_MS * 1000u;
	while (c.calls == 0 && fx_now_us() < end) {
		rc = nvp_nvme_qpair_process_completions(q2, 0);
	}
	CU_ASSERT_EQUAL(c.calls, 1);
	CU_ASSERT_EQUAL(c.cpl.status.sct, NVME_SCT_GENERIC);
	CU_ASSERT_EQUAL(c.cpl.status.sc, NVME_SC_ABORTED_SQ_DELETION);
	CU_ASSERT_EQUAL(c.cpl.status.dnr, 0);
	CU_ASSERT_EQUAL(rc, -ENXIO);
	CU_ASSERT_FALSE(nvp_nvme_qpair_is_connected(q2));
	CU_ASSERT_EQUAL_FATAL(tcp_tgt_set_listening(f.tgt, true), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_ctrlr_reset(f.ctrlr), 0);
	memset(buf, 0, 8 * BS);
	CU_ASSERT_EQUAL(fx_io(f.ns, q2, FX_READ, buf, 40, 8, 0, NULL), 0);
	CU_ASSERT_EQUAL(fx_pattern_check(buf, 40, 8, BS, 0x5a), -1);
	CU_ASSERT_TRUE(nvp_nvme_qpair_is_connected(q2));
	memset(buf, 0, 8 * BS);
	CU_ASSERT_EQUAL(fx_io(f.ns, q, FX_READ, buf, 40, 8, 0, NULL), 0);
	CU_ASSERT_EQUAL(fx_pattern_check(buf, 40, 8, BS, 0x5a), -1);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(q2), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(q), 0);
	nvp_env_dma_free(buf);
	tfx_close(&f);
}

static void
test_dropped_connection(void)
{
	check_fault(TCP_TGT_FAULT_CLOSE, NULL, 1, FX_READ);
}

static void
test_malformed_pdu(void)
{
	check_fault(TCP_TGT_FAULT_BAD_TYPE, NULL, 1, FX_READ);
	check_fault(TCP_TGT_FAULT_TERM_REQ, NULL, 1, FX_WRITE);
}

static void
test_wrong_pdu_length(void)
{
	check_fault(TCP_TGT_FAULT_BAD_PLEN, NULL, 1, FX_WRITE);
	check_fault(TCP_TGT_FAULT_C2H_BEYOND, NULL, 8, FX_READ);
}

static void
test_bad_digest(void)
{
	check_fault(TCP_TGT_FAULT_BAD_HDGST, "hdgst:1", 1, FX_WRITE);
	check_fault(TCP_TGT_FAULT_BAD_DDGST, "ddgst:1", 8, FX_READ);
}

static void
test_r2t_beyond(void)
{
	check_fault(TCP_TGT_FAULT_R2T_BEYOND, NULL, 64, FX_WRITE);
}

static void
test_admin_connection_lost(void)
{
	struct tcp_fx f;
	struct nvp_nvme_ctrlr *ctrlr;
	char trid[512];

	if (tfx_open(&f, NULL) != 0) {
		tfx_close(&f);
		return;
	}
	/* Stop the target: every connection closes; the admin poll notices. */
	tcp_tgt_trid(f.tgt, NULL, trid, sizeof(trid));
	tcp_tgt_stop(f.tgt);
	f.tgt = NULL;
	for (int i = 0; i < 1000 && !nvp_nvme_ctrlr_is_failed(f.ctrlr); i++) {
		(void)nvp_nvme_ctrlr_process_admin_completions(f.ctrlr);
		nvp_env_delay_us(1000);
	}
	CU_ASSERT(nvp_nvme_ctrlr_is_failed(f.ctrlr));
	CU_ASSERT(nvp_nvme_qpair_process_completions(f.qpair, 0) < 0);
	/* Nobody listens any more: a reset fails cleanly. */
	CU_ASSERT_NOT_EQUAL(nvp_nvme_ctrlr_reset(f.ctrlr), 0);
	/* A new connect to the same address is refused with an error, not a hang. */
	CU_ASSERT(fx_connect_str(trid, NULL, &ctrlr) < 0);
	tfx_close(&f);
}

struct disc {
	unsigned int n;
	struct nvp_nvme_discovery_entry e;
};

static void
disc_cb(void *arg, const struct nvp_nvme_discovery_entry *e)
{
	struct disc *d = arg;

	d->n++;
	d->e = *e;
}

/* nvp_nvme_discover(): the record names the subsystem; its trid attaches. */
static void
test_discover(void)
{
	struct nvp_nvme_transport_id trid;
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	struct disc d = { 0 };
	struct tcp_fx f;
	char str[256];

	if (tfx_open(&f, NULL) != 0) {
		tfx_close(&f);
		return;
	}
	snprintf(str, sizeof(str), "trtype:TCP traddr:127.0.0.1 trsvcid:%u", tcp_tgt_port(f.tgt));
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_transport_id_parse(&trid, str), 0);
	CU_ASSERT_EQUAL(nvp_nvme_discover(&trid, disc_cb, &d), 1);
	CU_ASSERT_EQUAL(d.n, 1);
	CU_ASSERT_EQUAL(d.e.trtype, NVME_TRTYPE_TCP);
	CU_ASSERT_EQUAL(d.e.subtype, NVME_SUBTYPE_NVME);
	CU_ASSERT_STRING_EQUAL(d.e.traddr, "127.0.0.1");
	CU_ASSERT_STRING_EQUAL(d.e.subnqn, "nqn.2026-01.io.nvpoll:test");
	CU_ASSERT_EQUAL(nvp_nvme_connect(&d.e.trid, NULL, &ctrlr), 0);
	if (ctrlr != NULL) {
		CU_ASSERT_EQUAL(nvp_nvme_detach(ctrlr), 0);
	}
	/* Not TCP, nothing listening: errors, not hangs. */
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, "trtype:PCIe traddr:0000:00:04.0"), 0);
	CU_ASSERT_EQUAL(nvp_nvme_discover(&trid, disc_cb, &d), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, "trtype:TCP traddr:127.0.0.1 trsvcid:1"),
			0);
	CU_ASSERT(nvp_nvme_discover(&trid, disc_cb, &d) < 0);
	tfx_close(&f);
}

static void
test_bad_trid(void)
{
	struct tcp_fx f;
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	char trid[512];

	if (tfx_open(&f, NULL) != 0) {
		tfx_close(&f);
		return;
	}
	CU_ASSERT_EQUAL(fx_connect_str("trtype:TCP traddr:127.0.0.1 trsvcid:1", NULL, &ctrlr),
			-EINVAL); /* no subnqn */
	CU_ASSERT(fx_connect_str("trtype:TCP traddr:not-an-ip subnqn:x", NULL, &ctrlr) < 0);
	snprintf(trid, sizeof(trid), "trtype:TCP traddr:127.0.0.1 trsvcid:%u subnqn:nqn.wrong",
		 tcp_tgt_port(f.tgt));
	CU_ASSERT(fx_connect_str(trid, NULL, &ctrlr) < 0); /* Connect refused */
	tcp_tgt_trid(f.tgt, "kato:abc", trid, sizeof(trid));
	CU_ASSERT_EQUAL(fx_connect_str(trid, NULL, &ctrlr), -EINVAL);
	tfx_close(&f);
}

/*
 * Two hosts at once, each with its controller: the second one's Connect must not take
 * the first one's registers or its CNTLID (a target nvp serve runs for one host after
 * another, or for two: nvp id-ctrl during nvp_perf).
 */
static void
test_two_hosts(void)
{
	struct nvp_nvme_qpair *q2 = NULL;
	struct nvp_nvme_ctrlr *c2 = NULL;
	struct tcp_fx f;
	char trid[512];

	if (tfx_open(&f, NULL) != 0) {
		tfx_close(&f);
		return;
	}
	tcp_tgt_trid(f.tgt, NULL, trid, sizeof(trid));
	CU_ASSERT_EQUAL_FATAL(fx_connect_str(trid, NULL, &c2), 0);
	CU_ASSERT_NOT_EQUAL(nvp_nvme_ctrlr_get_data(c2)->cntlid,
			    nvp_nvme_ctrlr_get_data(f.ctrlr)->cntlid);
	/* the first host's new I/O queue names its own controller */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(f.qpair), 0);
	f.qpair = NULL;
	CU_ASSERT_EQUAL(fx_qpair_alloc(f.ctrlr, 64, 0, 0, false, &f.qpair), 0);
	CU_ASSERT_EQUAL(fx_qpair_alloc(c2, 64, 0, 0, false, &q2), 0);
	/* the second host leaves (shutdown): the first one's controller stays ready */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(q2), 0);
	CU_ASSERT_EQUAL(nvp_nvme_detach(c2), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_regs_csts(f.ctrlr).bits.shst, 0);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_regs_csts(f.ctrlr).bits.rdy, 1);
	if (f.qpair != NULL) {
		write_read_verify(&f, 0, 8, 21);
	}
	tfx_close(&f);
}

/* More hosts one after another than the target holds connections at once (64). */
static void
test_many_hosts(void)
{
	struct tcp_tgt_stats st;
	struct tcp_fx f;
	char trid[512];

	if (tfx_open(&f, NULL) != 0) {
		tfx_close(&f);
		return;
	}
	tcp_tgt_trid(f.tgt, NULL, trid, sizeof(trid));
	for (int i = 0; i < 80; i++) {
		struct nvp_nvme_ctrlr *c = NULL;
		int rc = fx_connect_str(trid, NULL, &c);

		CU_ASSERT_EQUAL(rc, 0);
		if (rc != 0) {
			break;
		}
		CU_ASSERT_EQUAL(nvp_nvme_detach(c), 0);
	}
	tcp_tgt_get_stats(f.tgt, &st);
	CU_ASSERT(st.connections > 80);
	write_read_verify(&f, 0, 8, 22);
	tfx_close(&f);
}

/* A target that requires digests refuses a host that does not ask for them. */
static void
test_digests_required(void)
{
	struct nvp_nvme_ctrlr *c = NULL;
	struct tcp_tgt_opts o;
	struct tcp_tgt_stats st;
	struct tcp_fx f;
	char trid[512];

	tcp_tgt_opts_init(&o);
	o.hdgst_required = true;
	o.ddgst_required = true;
	if (tfx_open_opts(&f, &o, "hdgst:1 ddgst:1") != 0) {
		tfx_close(&f);
		return;
	}
	write_read_verify(&f, 0, 64, 23);
	tcp_tgt_trid(f.tgt, "hdgst:1", trid, sizeof(trid));
	CU_ASSERT(fx_connect_str(trid, NULL, &c) < 0); /* no data digest: refused */
	tcp_tgt_trid(f.tgt, NULL, trid, sizeof(trid));
	CU_ASSERT(fx_connect_str(trid, NULL, &c) < 0);
	tcp_tgt_get_stats(f.tgt, &st);
	CU_ASSERT_EQUAL(st.refused, 2);
	CU_ASSERT(st.hdgsts_checked > 0 && st.ddgsts_checked > 0);
	tfx_close(&f);
}

/* A port given is the port listened on; a bad address is refused. */
static void
test_listen_opts(void)
{
	struct fx_ctrlr backend;
	struct tcp_tgt *t1 = NULL, *t2 = NULL;
	struct tcp_tgt_opts o;
	char trid[512];

	CU_ASSERT_EQUAL_FATAL(fx_open(&backend, "size=4M"), 0);
	tcp_tgt_opts_init(&o);
	CU_ASSERT_EQUAL_FATAL(tcp_tgt_start(backend.ctrlr, &o, &t1), 0);
	o.port = tcp_tgt_port(t1);
	CU_ASSERT_EQUAL(tcp_tgt_start(backend.ctrlr, &o, &t2), -EADDRINUSE);
	tcp_tgt_stop(t1);
	CU_ASSERT_EQUAL_FATAL(tcp_tgt_start(backend.ctrlr, &o, &t2), 0);
	CU_ASSERT_EQUAL(tcp_tgt_port(t2), o.port);
	tcp_tgt_trid(t2, NULL, trid, sizeof(trid));
	CU_ASSERT_PTR_NOT_NULL(strstr(trid, "traddr:127.0.0.1 "));
	tcp_tgt_stop(t2);
	o.addr = "localhost";
	CU_ASSERT_EQUAL(tcp_tgt_start(backend.ctrlr, &o, &t2), -EINVAL);
	o.addr = "127.0.0.1";
	o.subnqn = "";
	CU_ASSERT_EQUAL(tcp_tgt_start(backend.ctrlr, &o, &t2), -EINVAL);
	fx_close(&backend);
}

/* "nvme_tcp --serve": no tests, a target for another process (the fio engine's test runs
 * fio against it). Serves a 64 MiB software controller on 127.0.0.1, prints
 * "NVP_TCP_TRID=<transport ID>" on a line of its own and serves until stdin closes. Runs
 * as a CUnit test so the fixture's checks (no DMA rejects, no bad host PDUs) still judge. */
static void
test_serve(void)
{
	struct tcp_tgt_opts o;
	struct tcp_tgt_stats st;
	struct fx_ctrlr backend;
	struct tcp_tgt *tgt;
	char trid[512];
	char c;

	CU_ASSERT_EQUAL_FATAL(fx_open(&backend, "size=64M,lba=512"), 0);
	tcp_tgt_opts_init(&o);
	CU_ASSERT_EQUAL_FATAL(tcp_tgt_start(backend.ctrlr, &o, &tgt), 0);
	tcp_tgt_trid(tgt, NULL, trid, sizeof(trid));
	printf("\nNVP_TCP_TRID=%s\n", trid);
	fflush(stdout);
	while (read(STDIN_FILENO, &c, 1) > 0) {
	}
	tcp_tgt_get_stats(tgt, &st);
	printf("served %" PRIu64 " connections, %" PRIu64 " capsules, %" PRIu64
	       " header and %" PRIu64 " data digests checked\n",
	       st.connections, st.capsules, st.hdgsts_checked, st.ddgsts_checked);
	CU_ASSERT(st.capsules > 0);
	CU_ASSERT_EQUAL(st.bad_host_pdus, 0);
	tcp_tgt_stop(tgt);
	fx_close(&backend);
}

int
main(int argc, char **argv)
{
	static const struct fx_test serve[] = { { "serve", test_serve } };
	char *serve_argv[] = { argv[0], (char *)"serve", NULL };

	if (argc == 2 && strcmp(argv[1], "--serve") == 0) {
		return fx_main(2, serve_argv, "nvme_tcp", serve, 1);
	}
	static const struct fx_test tests[] = {
		{ "identify", test_identify },
		{ "io_verify", test_io_verify },
		{ "large_io_r2t", test_large_io_r2t },
		{ "queue_depth", test_queue_depth },
		{ "scattered", test_scattered },
		{ "digests", test_digests },
		{ "c2h_success", test_c2h_success },
		{ "reset_loop", test_reset_loop },
		{ "dropped_connection", test_dropped_connection },
		{ "malformed_pdu", test_malformed_pdu },
		{ "wrong_pdu_length", test_wrong_pdu_length },
		{ "bad_digest", test_bad_digest },
		{ "r2t_beyond", test_r2t_beyond },
		{ "admin_connection_lost", test_admin_connection_lost },
		{ "discover", test_discover },
		{ "bad_trid", test_bad_trid },
		{ "two_hosts", test_two_hosts },
		{ "many_hosts", test_many_hosts },
		{ "digests_required", test_digests_required },
		{ "listen_opts", test_listen_opts },
		{ "async_io_qpair", test_async_io_qpair },
	};

	return fx_main(argc, argv, "nvme_tcp", tests, NVP_COUNTOF(tests));
}

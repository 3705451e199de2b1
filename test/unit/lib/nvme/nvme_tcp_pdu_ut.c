/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the NVMe/TCP PDUs (nvme_tcp_pdu.c): CRC32C digests, the CapsuleCmd and
 * H2CData the host builds (SGL descriptors, PDO/PLEN, digests), ICResp checks, the send
 * accounting of partial writes, and the receive state machine fed whole or byte by byte:
 * responses and data reach the right request, and every malformed PDU fails the qpair
 * without touching memory outside the request's buffer.
 */
#include "nvme/nvme_tcp_pdu.c"

#include "ut_nvme.h"

#define NTR 4u

static struct nvp_nvme_ctrlr g_ctrlr;
static struct nvme_tcp_qpair g_tq;
#define NTR_CIDS 8u /* CID index bits: the power of two past NTR, as nvme_qpair_init() */
static struct nvme_tracker g_tr[NTR_CIDS];
static struct nvme_tcp_req g_treqs[NTR + 1];
static struct nvme_request g_req[NTR];
static uint8_t g_rx[NVME_TCP_RX_BUF_SIZE];
static unsigned int g_fails, g_cpls;
static struct nvme_cpl g_last_cpl;
static uint16_t g_last_fes;

/* ---- neighbours ---- */

/* What nvme_tcp.c does with a parse error: fail the qpair with the recorded reason. */
static int
ut_rx_parse(struct nvme_tcp_qpair *tq, uint32_t max)
{
	int rc = nvme_tcp_rx_parse(tq, max);

	if (rc != 0) {
		CU_ASSERT_EQUAL(rc, -EPROTO);
		CU_ASSERT_PTR_NOT_NULL(tq->rx_fail_why);
		g_fails++;
		g_last_fes = tq->rx_fail_fes;
		tq->conn = NVME_TCP_CONN_FAILED;
	}
	return rc;
}

void
nvme_qpair_complete_slow(struct nvp_nvme_qpair *qpair, const struct nvme_cpl *cpl)
{
	(void)qpair;
	(void)cpl;
	CU_FAIL("completion of a tracker that was not active");
}

static void
cpl_cb(void *arg, const struct nvme_cpl *cpl)
{
	(void)arg;
	g_cpls++;
	g_last_cpl = *cpl;
}

/* ---- fixture ---- */

/* Qpair with NTR trackers, all free; digests as given. */
static void
reset_qpair(bool hdgst, bool ddgst)
{
	uint32_t i;

	memset(&g_tq, 0, sizeof(g_tq));
	memset(g_tr, 0, sizeof(g_tr));
	memset(g_treqs, 0, sizeof(g_treqs));
	g_tq.qpair.ctrlr = &g_ctrlr;
	g_tq.qpair.id = 1;
	g_tq.qpair.trackers = g_tr;
	g_tq.qpair.num_trackers = NTR;
	g_tq.qpair.cid_idx_mask = NTR_CIDS - 1;
	g_tq.qpair.cid_gen_step = NTR_CIDS;
	g_tq.qpair.num_slots = NTR;
	SLIST_INIT(&g_tq.qpair.free_tr);
	TAILQ_INIT(&g_tq.qpair.outstanding);
	SLIST_INIT(&g_tq.qpair.free_req);
	STAILQ_INIT(&g_tq.send_q);
	for (i = 0; i < NTR; i++) {
		g_tr[i].cid = (uint16_t)i;
	}
	g_tq.treqs = g_treqs;
	g_tq.rx_buf = g_rx;
	g_tq.conn = NVME_TCP_CONN_READY;
	g_tq.hdgst = hdgst;
	g_tq.ddgst = ddgst;
	g_tq.maxh2cdata = 4096;
	g_tq.incapsule_max = 8192;
	nvme_tcp_rx_reset(&g_tq);
	g_fails = g_cpls = 0;
	memset(&g_last_cpl, 0, sizeof(g_last_cpl));
}

/* Make CID @cid outstanding with a @len-byte buffer (@write: host to controller). */
static struct nvme_tcp_req *
start(uint16_t cid, bool write, void *buf, uint32_t len)
{
	struct nvme_tracker *tr = &g_tr[cid];
	struct nvme_request *req = &g_req[cid];
	struct nvme_tcp_req *treq = &g_treqs[cid];

	nvme_request_init(req, cpl_cb, NULL);
	req->cmd.opc = write ? NVME_OPC_WRITE : NVME_OPC_READ;
	req->cmd.cid = cid;
	nvme_request_set_contig(req, buf, len);
	tr->req = req;
	tr->state = NVME_TR_ACTIVE;
	tr->cpl_pending = true;
	tr->holds_slot = true;
	g_tq.qpair.slots_used++;
	g_tq.qpair.num_outstanding++;
	TAILQ_INSERT_TAIL(&g_tq.qpair.outstanding, tr, link);
	memset(treq, 0, sizeof(*treq));
	treq->req = req;
	treq->write = write;
	treq->data_len = len;
	treq->in_capsule = write && len <= g_tq.incapsule_max;
	return treq;
}

/* Feed @len bytes, whole (@step 0) or @step bytes per parse. \return last rc. */
static int
feed(const void *p, uint32_t len, uint32_t step)
{
	uint32_t off = 0;
	int rc = 0;

	while (off < len && rc == 0) {
		uint32_t n = step ? NVP_MIN(step, len - off) : len - off;

		memcpy(g_rx + g_tq.rx_len, (const uint8_t *)p + off, n);
		g_tq.rx_len += n;
		off += n;
		rc = ut_rx_parse(&g_tq, 0);
	}
	return rc;
}

static uint32_t
ser(uint8_t *out, const void *hdr, uint32_t hlen, bool hd, const void *data, uint32_t dlen, bool dd)
{
	uint32_t n = 0, crc;

	memcpy(out, hdr, hlen);
	n = hlen;
	if (hd) {
		crc = nvme_tcp_digest(hdr, hlen);
		memcpy(out + n, &crc, 4);
		n += 4;
	}
	if (dlen) {
		memcpy(out + n, data, dlen);
		n += dlen;
		if (dd) {
			crc = nvme_tcp_digest(data, dlen);
			memcpy(out + n, &crc, 4);
			n += 4;
		}
	}
	return n;
}

static uint32_t
make_resp(uint8_t *out, uint16_t cid, uint16_t status_raw, bool hd)
{
	struct nvme_tcp_rsp r;

	memset(&r, 0, sizeof(r));
	r.ch.pdu_type = NVME_TCP_PDU_CAPSULE_RESP;
	r.ch.flags = hd ? NVME_TCP_FLAG_HDGSTF : 0;
	r.ch.hlen = 24;
	r.ch.plen = 24 + (hd ? 4 : 0);
	r.rccqe.cid = cid;
	r.rccqe.status_raw = status_raw;
	return ser(out, &r, 24, hd, NULL, 0, false);
}

static uint32_t
make_c2h(uint8_t *out, uint16_t cid, uint32_t off, const void *data, uint32_t len, uint8_t flags,
	 bool hd, bool dd)
{
	struct nvme_tcp_data_hdr h;

	memset(&h, 0, sizeof(h));
	h.ch.pdu_type = NVME_TCP_PDU_C2H_DATA;
	h.ch.flags = (uint8_t)(flags | (hd ? NVME_TCP_FLAG_HDGSTF : 0) |
			       (dd ? NVME_TCP_FLAG_DDGSTF : 0));
	h.ch.hlen = 24;
	h.ch.pdo = (uint8_t)(24 + (hd ? 4 : 0));
	h.ch.plen = h.ch.pdo + len + (dd ? 4 : 0);
	h.cccid = cid;
	h.datao = off;
	h.datal = len;
	return ser(out, &h, 24, hd, data, len, dd);
}

static uint32_t
make_r2t(uint8_t *out, uint16_t cid, uint16_t ttag, uint32_t off, uint32_t len)
{
	struct nvme_tcp_r2t_hdr r;

	memset(&r, 0, sizeof(r));
	r.ch.pdu_type = NVME_TCP_PDU_R2T;
	r.ch.hlen = 24;
	r.ch.plen = 24;
	r.cccid = cid;
	r.ttag = ttag;
	r.r2to = off;
	r.r2tl = len;
	return ser(out, &r, 24, false, NULL, 0, false);
}

/* ---- tests ---- */

static void
test_digest(void)
{
	/* The CRC32C check value (RFC 3720 B.4 uses the same polynomial). */
	CU_ASSERT_EQUAL(nvme_tcp_digest("123456789", 9), 0xe3069283u);
	CU_ASSERT_EQUAL(nvme_tcp_digest("", 0), 0);
}

static void
test_build_cmd(void)
{
	static uint8_t data[6000];
	struct nvme_tcp_req *treq;
	struct nvme_tcp_cmd *c;
	uint32_t crc;

	reset_qpair(true, true);
	treq = start(2, true, data, sizeof(data));
	nvme_tcp_build_cmd_pdu(&g_tq, treq);
	c = &treq->cmd_pdu.cmd;
	CU_ASSERT_EQUAL(c->ch.pdu_type, NVME_TCP_PDU_CAPSULE_CMD);
	CU_ASSERT_EQUAL(c->ch.hlen, 72);
	CU_ASSERT_EQUAL(c->ch.pdo, 76);
	CU_ASSERT_EQUAL(c->ch.plen, 76 + sizeof(data) + 4);
	CU_ASSERT_EQUAL(c->ch.flags, NVME_TCP_FLAG_HDGSTF | NVME_TCP_FLAG_DDGSTF);
	CU_ASSERT_EQUAL(c->ccsqe.psdt, NVME_PSDT_SGL_MPTR_CONTIG);
	CU_ASSERT_EQUAL(c->ccsqe.dptr.sgl1.type, 0);
	CU_ASSERT_EQUAL(c->ccsqe.dptr.sgl1.subtype, 1);
	CU_ASSERT_EQUAL(c->ccsqe.dptr.sgl1.length, sizeof(data));
	CU_ASSERT_EQUAL(c->ccsqe.cid, 2);
	memcpy(&crc, treq->cmd_pdu.hdgst, 4);
	CU_ASSERT_EQUAL(crc, nvme_tcp_digest(c, 72));
	memcpy(&crc, treq->ddgst, 4);
	CU_ASSERT_EQUAL(crc, nvme_tcp_digest(data, sizeof(data)));

	/* With CPDA the data starts at the next multiple of (CPDA + 1) * 4 bytes. */
	g_tq.cpda = 7;
	nvme_tcp_build_cmd_pdu(&g_tq, treq);
	CU_ASSERT_EQUAL(treq->cmd_pdu.cmd.ch.pdo, 96);
	g_tq.cpda = 0;

	/* A read: transport SGL data block, no data in the capsule. */
	reset_qpair(false, false);
	treq = start(1, false, data, sizeof(data));
	nvme_tcp_build_cmd_pdu(&g_tq, treq);
	c = &treq->cmd_pdu.cmd;
	CU_ASSERT_EQUAL(c->ch.pdo, 0);
	CU_ASSERT_EQUAL(c->ch.plen, 72);
	CU_ASSERT_EQUAL(c->ccsqe.dptr.sgl1.type, 5);
	CU_ASSERT_EQUAL(c->ccsqe.dptr.sgl1.subtype, 0xa);
	CU_ASSERT_EQUAL(c->ccsqe.dptr.sgl1.length, sizeof(data));
}

static void
test_ic_resp(void)
{
	struct nvme_tcp_ic_resp ic;
	struct nvme_tcp_ic_req req;
	const char *why = NULL;

	nvme_tcp_build_ic_req(&req, true, false);
	CU_ASSERT_EQUAL(req.ch.plen, 128);
	CU_ASSERT_EQUAL(req.dgst, NVME_TCP_DGST_HDGST);
	memset(&ic, 0, sizeof(ic));
	ic.maxh2cdata = 131072;
	ic.dgst = NVME_TCP_DGST_HDGST;
	CU_ASSERT_EQUAL(nvme_tcp_check_ic_resp(&ic, true, false, &why), 0);
	ic.dgst = NVME_TCP_DGST_DDGST;
	CU_ASSERT_EQUAL(nvme_tcp_check_ic_resp(&ic, true, false, &why), -EPROTO);
	ic.dgst = 0;
	ic.maxh2cdata = 2048;
	CU_ASSERT_EQUAL(nvme_tcp_check_ic_resp(&ic, true, false, &why), -EPROTO);
	ic.maxh2cdata = 4098;
	CU_ASSERT_EQUAL(nvme_tcp_check_ic_resp(&ic, true, false, &why), -EPROTO);
	ic.maxh2cdata = 4096;
	ic.cpda = 32;
	CU_ASSERT_EQUAL(nvme_tcp_check_ic_resp(&ic, true, false, &why), -EPROTO);
	ic.cpda = 0;
	ic.pfv = 1;
	CU_ASSERT_EQUAL(nvme_tcp_check_ic_resp(&ic, true, false, &why), -EPROTO);
	CU_ASSERT_PTR_NOT_NULL(why);
}

/* A read answered by two C2HData PDUs and a CapsuleResp, whole and byte by byte. */
static void
test_rx_read(void)
{
	static uint8_t src[8192], dst[8192], wire[20000];
	uint32_t step, n;

	for (n = 0; n < sizeof(src); n++) {
		src[n] = (uint8_t)(n * 7);
	}
	for (step = 0; step <= 7; step += 7) {
		reset_qpair(step != 0, step != 0);
		memset(dst, 0, sizeof(dst));
		start(3, false, dst, sizeof(dst));
		n = make_c2h(wire, 3, 0, src, 4096, 0, g_tq.hdgst, g_tq.ddgst);
		n += make_c2h(wire + n, 3, 4096, src + 4096, 4096, NVME_TCP_FLAG_LAST_PDU,
			      g_tq.hdgst, g_tq.ddgst);
		n += make_resp(wire + n, 3, 0, g_tq.hdgst);
		CU_ASSERT_EQUAL(feed(wire, n, step), 0);
		CU_ASSERT_EQUAL(g_fails, 0);
		CU_ASSERT_EQUAL(g_cpls, 1);
		CU_ASSERT_EQUAL(memcmp(src, dst, sizeof(src)), 0);
		CU_ASSERT_EQUAL(g_treqs[3].req, NULL);
	}
	/* SUCCESS on the last C2HData completes it without a response. */
	reset_qpair(false, false);
	start(0, false, dst, 4096);
	n = make_c2h(wire, 0, 0, src, 4096, NVME_TCP_FLAG_LAST_PDU | NVME_TCP_FLAG_C2H_SUCCESS,
		     false, false);
	CU_ASSERT_EQUAL(feed(wire, n, 0), 0);
	CU_ASSERT_EQUAL(g_cpls, 1);
	CU_ASSERT_EQUAL(g_last_cpl.status_raw, 0);
	CU_ASSERT_EQUAL(g_last_cpl.cid, 0);
}

/* R2T: H2CData PDUs of at most MAXH2CDATA, LAST on the final one, partial writes. */
static void
test_r2t_h2c(void)
{
	static uint8_t src[10000];
	uint8_t wire[64];
	struct nvme_tcp_req *treq;
	struct iovec iov[8];
	uint32_t n, pdus = 0, bytes = 0;
	size_t sent;

	reset_qpair(false, false);
	g_tq.incapsule_max = 0;
	treq = start(1, true, src, sizeof(src));
	n = make_r2t(wire, 1, 9, 0, sizeof(src));
	CU_ASSERT_EQUAL(feed(wire, n, 0), 0);
	CU_ASSERT_EQUAL(g_fails, 0);
	CU_ASSERT_EQUAL(STAILQ_FIRST(&g_tq.send_q), treq);
	CU_ASSERT_EQUAL(treq->send_kind, NVME_TCP_SEND_H2C);
	for (;;) {
		struct nvme_tcp_data_hdr *h = &treq->h2c_pdu.h2c;
		uint32_t cnt = nvme_tcp_send_iov(&g_tq, treq, iov, 8);

		CU_ASSERT(cnt >= 2);
		CU_ASSERT_EQUAL(h->ttag, 9);
		CU_ASSERT(h->datal <= g_tq.maxh2cdata);
		CU_ASSERT_EQUAL(h->datao, bytes);
		bytes += h->datal;
		CU_ASSERT_EQUAL((h->ch.flags & NVME_TCP_FLAG_LAST_PDU) != 0, bytes == sizeof(src));
		pdus++;
		/* Ten bytes first (a partial write), then the rest. */
		sent = 10;
		CU_ASSERT_FALSE(nvme_tcp_send_advance(&g_tq, treq, &sent));
		CU_ASSERT_EQUAL(nvme_tcp_send_iov(&g_tq, treq, iov, 8), cnt);
		CU_ASSERT_EQUAL(iov[0].iov_len, 24 - 10);
		sent = h->ch.plen - 10;
		if (nvme_tcp_send_advance(&g_tq, treq, &sent)) {
			break;
		}
		CU_ASSERT_EQUAL(sent, 0);
	}
	CU_ASSERT_EQUAL(pdus, 3);
	CU_ASSERT_EQUAL(bytes, sizeof(src));
	CU_ASSERT_FALSE(treq->r2t_active);
}

/* Every malformed PDU fails the qpair; none completes the request or writes its buffer. */
static void
test_rx_malformed(void)
{
	static uint8_t buf[4096], src[8192];
	uint8_t wire[9000];
	uint32_t n;
	int i;

	for (i = 0; i < 10; i++) {
		reset_qpair(i == 5, i == 6);
		memset(buf, 0xee, sizeof(buf));
		start(1, i == 3 || i == 9, buf, sizeof(buf));
		if (i == 3 || i == 9) {
			g_treqs[1].in_capsule = false;
		}
		switch (i) {
		case 0: /* unknown PDU type */
			n = make_resp(wire, 1, 0, false);
			wire[0] = 0x0f;
			break;
		case 1: /* CapsuleResp PLEN wrong */
			n = make_resp(wire, 1, 0, false);
			wire[4] = 40;
			break;
		case 2: /* C2HData beyond the buffer */
			n = make_c2h(wire, 1, 4000, src, 200, 0, false, false);
			break;
		case 3: /* R2T for more than the write has */
			n = make_r2t(wire, 1, 0, 0, 8192);
			break;
		case 4: /* response for a CID never sent */
			n = make_resp(wire, 2, 0, false);
			break;
		case 5: /* header digest wrong */
			n = make_resp(wire, 1, 0, true);
			wire[25] ^= 1;
			break;
		case 6: /* data digest wrong */
			n = make_c2h(wire, 1, 0, src, 512, 0, false, true);
			wire[24 + 512] ^= 1;
			break;
		case 7: /* C2HData out of order */
			n = make_c2h(wire, 1, 512, src, 512, 0, false, false);
			break;
		case 8: /* HLEN wrong for the type */
			n = make_resp(wire, 1, 0, false);
			wire[2] = 72;
			break;
		default: /* R2T for a write whose data went in the capsule... of a read CID */
			n = make_r2t(wire, 3, 0, 0, 512);
			break;
		}
		CU_ASSERT_EQUAL(feed(wire, n, 0), -EPROTO);
		CU_ASSERT_EQUAL(g_fails, 1);
		CU_ASSERT_EQUAL(g_cpls, 0);
		if (i != 6) {
			CU_ASSERT_EQUAL(buf[0], 0xee);
		}
	}
	/* A C2HTermReq ends the connection too. */
	reset_qpair(false, false);
	memset(wire, 0, 24);
	wire[0] = NVME_TCP_PDU_C2H_TERM_REQ;
	wire[2] = 24;
	wire[4] = 24;
	CU_ASSERT_EQUAL(feed(wire, 24, 3), -EPROTO);
	CU_ASSERT_EQUAL(g_fails, 1);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	s = CU_add_suite("nvme_tcp_pdu", NULL, NULL);
	CU_ADD_TEST(s, test_digest);
	CU_ADD_TEST(s, test_build_cmd);
	CU_ADD_TEST(s, test_ic_resp);
	CU_ADD_TEST(s, test_rx_read);
	CU_ADD_TEST(s, test_r2t_h2c);
	CU_ADD_TEST(s, test_rx_malformed);
	nvp_log_set_callback(ut_log_cb);
	return ut_run();
}

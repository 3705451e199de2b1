/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for app/common/tgt_pdu.c, the PDU codec both NVMe/TCP targets use: the bytes
 * of what the controller sends (lengths, offsets, flags and digests as negotiated) and
 * the verdict on what a host sends, with the field a C2HTermReq must name.
 */
#include <string.h>

#include "tgt_pdu.c"

#include "ut_main.h"

/* Bytes of @n iovecs laid end to end into @out. \return their length. */
static uint32_t
flatten(const struct iovec *iov, uint32_t n, uint8_t *out)
{
	uint32_t len = 0;

	for (uint32_t i = 0; i < n; i++) {
		memcpy(out + len, iov[i].iov_base, iov[i].iov_len);
		len += (uint32_t)iov[i].iov_len;
	}
	return len;
}

static void
test_frame(void)
{
	struct nvme_tcp_data_hdr h;
	struct iovec iov[TGT_PDU_IOVS];
	uint8_t data[100], out[256];
	uint32_t dg[2] = { 0, 0 }, n, len, d;

	memset(data, 0x5a, sizeof(data));
	/* no digests: header and data, PDO right after the header */
	tgt_pdu_c2h(&h, 7, 0, sizeof(data), NVME_TCP_FLAG_LAST_PDU);
	n = tgt_pdu_frame(iov, &h, NVME_TCP_DATA_HLEN, data, sizeof(data), false, false, dg);
	CU_ASSERT_EQUAL(n, 2);
	CU_ASSERT_EQUAL(h.ch.hlen, NVME_TCP_DATA_HLEN);
	CU_ASSERT_EQUAL(h.ch.pdo, NVME_TCP_DATA_HLEN);
	CU_ASSERT_EQUAL(h.ch.plen, NVME_TCP_DATA_HLEN + sizeof(data));
	CU_ASSERT_EQUAL(h.ch.flags, NVME_TCP_FLAG_LAST_PDU);
	CU_ASSERT_EQUAL(h.cccid, 7);
	CU_ASSERT_EQUAL(h.datal, sizeof(data));

	/* both digests: each after what it covers, PDO past the header digest */
	tgt_pdu_c2h(&h, 7, 0, sizeof(data), NVME_TCP_FLAG_LAST_PDU);
	n = tgt_pdu_frame(iov, &h, NVME_TCP_DATA_HLEN, data, sizeof(data), true, true, dg);
	CU_ASSERT_EQUAL(n, 4);
	CU_ASSERT_EQUAL(h.ch.pdo, NVME_TCP_DATA_HLEN + 4);
	CU_ASSERT_EQUAL(h.ch.plen, NVME_TCP_DATA_HLEN + 4 + sizeof(data) + 4);
	CU_ASSERT_EQUAL(h.ch.flags,
			NVME_TCP_FLAG_LAST_PDU | NVME_TCP_FLAG_HDGSTF | NVME_TCP_FLAG_DDGSTF);
	len = flatten(iov, n, out);
	CU_ASSERT_EQUAL(len, h.ch.plen);
	memcpy(&d, out + NVME_TCP_DATA_HLEN, 4);
	CU_ASSERT_EQUAL(d, nvp_crc32c(~0u, out, NVME_TCP_DATA_HLEN) ^ ~0u);
	memcpy(&d, out + h.ch.pdo + sizeof(data), 4);
	CU_ASSERT_EQUAL(d, nvp_crc32c(~0u, data, sizeof(data)) ^ ~0u);
	/* what the receiving side checks accepts it */
	{
		struct tgt_pdu_err e;

		CU_ASSERT_EQUAL(tgt_pdu_check_hdgst(out, NVME_TCP_DATA_HLEN, true, &e), 0);
		CU_ASSERT_EQUAL(tgt_pdu_check_data(&h.ch, sizeof(data), true, true, &e), 0);
		CU_ASSERT_EQUAL(tgt_pdu_check_ddgst(out + h.ch.pdo, sizeof(data), d, &e), 0);
	}

	/* a response has no data: no PDO, no data digest even when negotiated */
	{
		struct nvme_tcp_rsp r;
		struct nvme_cpl cpl;

		memset(&cpl, 0, sizeof(cpl));
		cpl.cdw0 = 0x1234;
		cpl.cid = 99; /* replaced by the command's */
		tgt_pdu_rsp(&r, &cpl, 3, 2);
		n = tgt_pdu_frame(iov, &r, NVME_TCP_RSP_HLEN, NULL, 0, true, true, dg);
		CU_ASSERT_EQUAL(n, 2);
		CU_ASSERT_EQUAL(r.ch.pdu_type, NVME_TCP_PDU_CAPSULE_RESP);
		CU_ASSERT_EQUAL(r.ch.pdo, 0);
		CU_ASSERT_EQUAL(r.ch.plen, NVME_TCP_RSP_HLEN + 4);
		CU_ASSERT_EQUAL(r.ch.flags, NVME_TCP_FLAG_HDGSTF);
		CU_ASSERT_EQUAL(r.rccqe.cid, 3);
		CU_ASSERT_EQUAL(r.rccqe.sqid, 2);
		CU_ASSERT_EQUAL(r.rccqe.cdw0, 0x1234);
	}
	/* C2HTermReq never carries a header digest (section 3.6.2.7) */
	{
		struct nvme_tcp_term_req_hdr t;

		tgt_pdu_term(&t, NVME_TCP_FES_HDGST_ERROR, 5);
		n = tgt_pdu_frame(iov, &t, NVME_TCP_TERM_HLEN, NULL, 0, true, true, dg);
		CU_ASSERT_EQUAL(n, 1);
		CU_ASSERT_EQUAL(t.ch.plen, NVME_TCP_TERM_HLEN);
		CU_ASSERT_EQUAL(t.ch.flags, 0);
		CU_ASSERT_EQUAL(t.fes, NVME_TCP_FES_HDGST_ERROR);
		CU_ASSERT_EQUAL(t.fei, 5);
	}
}

static void
test_icreq(void)
{
	struct nvme_tcp_ic_req req;
	struct nvme_tcp_ic_resp resp;
	struct tgt_pdu_err e;
	bool hd = false, dd = false;

	memset(&req, 0, sizeof(req));
	req.ch.pdu_type = NVME_TCP_PDU_ICREQ;
	req.ch.hlen = NVME_TCP_IC_LEN;
	req.ch.plen = NVME_TCP_IC_LEN;
	req.dgst = NVME_TCP_DGST_DDGST | 0x80; /* an unknown bit is not granted */
	CU_ASSERT_EQUAL(tgt_pdu_icreq(&req, 32768, &resp, &hd, &dd, &e), 0);
	CU_ASSERT(!hd && dd);
	CU_ASSERT_EQUAL(resp.ch.pdu_type, NVME_TCP_PDU_ICRESP);
	CU_ASSERT_EQUAL(resp.ch.plen, NVME_TCP_IC_LEN);
	CU_ASSERT_EQUAL(resp.dgst, NVME_TCP_DGST_DDGST);
	CU_ASSERT_EQUAL(resp.maxh2cdata, 32768);

	req.ch.plen = 129;
	CU_ASSERT_EQUAL(tgt_pdu_icreq(&req, 32768, &resp, &hd, &dd, &e), -1);
	CU_ASSERT_EQUAL(e.fes, NVME_TCP_FES_INVALID_HEADER_FIELD);
	CU_ASSERT_EQUAL(e.fei, 4); /* PLEN */
	req.ch.plen = NVME_TCP_IC_LEN;
	req.pfv = 1;
	CU_ASSERT_EQUAL(tgt_pdu_icreq(&req, 32768, &resp, &hd, &dd, &e), -1);
	req.pfv = 0;
	req.ch.pdu_type = NVME_TCP_PDU_CAPSULE_CMD;
	CU_ASSERT_EQUAL(tgt_pdu_icreq(&req, 32768, &resp, &hd, &dd, &e), -1);
	CU_ASSERT_PTR_NOT_NULL(e.why);
}

static void
test_hdgst_and_data(void)
{
	uint8_t p[NVME_TCP_CMD_HLEN + 4];
	struct nvme_tcp_common_hdr *ch = (void *)p;
	struct tgt_pdu_err e;
	uint32_t d;

	memset(p, 0, sizeof(p));
	ch->pdu_type = NVME_TCP_PDU_CAPSULE_CMD;
	ch->hlen = NVME_TCP_CMD_HLEN;
	/* the flag must say what was negotiated, both ways */
	CU_ASSERT_EQUAL(tgt_pdu_check_hdgst(p, NVME_TCP_CMD_HLEN, false, &e), 0);
	CU_ASSERT_EQUAL(tgt_pdu_check_hdgst(p, NVME_TCP_CMD_HLEN, true, &e), -1);
	CU_ASSERT_EQUAL(e.fei, 1); /* FLAGS */
	ch->flags = NVME_TCP_FLAG_HDGSTF;
	CU_ASSERT_EQUAL(tgt_pdu_check_hdgst(p, NVME_TCP_CMD_HLEN, false, &e), -1);
	d = tgt_pdu_digest(p, NVME_TCP_CMD_HLEN);
	memcpy(p + NVME_TCP_CMD_HLEN, &d, 4);
	CU_ASSERT_EQUAL(tgt_pdu_check_hdgst(p, NVME_TCP_CMD_HLEN, true, &e), 0);
	p[20] ^= 1; /* a bit of the command flipped on the way */
	CU_ASSERT_EQUAL(tgt_pdu_check_hdgst(p, NVME_TCP_CMD_HLEN, true, &e), -1);
	CU_ASSERT_EQUAL(e.fes, NVME_TCP_FES_HDGST_ERROR);

	/* data: PDO may leave padding after the header digest; PLEN must add up */
	ch->flags = NVME_TCP_FLAG_HDGSTF | NVME_TCP_FLAG_DDGSTF;
	ch->pdo = NVME_TCP_CMD_HLEN + 4 + 8;
	ch->plen = ch->pdo + 512 + 4;
	CU_ASSERT_EQUAL(tgt_pdu_check_data(ch, 512, true, true, &e), 8);
	CU_ASSERT_EQUAL(tgt_pdu_check_data(ch, 511, true, true, &e), -1);
	CU_ASSERT_EQUAL(e.fei, 3);                                         /* PDO */
	CU_ASSERT_EQUAL(tgt_pdu_check_data(ch, 512, true, false, &e), -1); /* DDGSTF */
	ch->pdo = NVME_TCP_CMD_HLEN; /* inside the header digest */
	ch->plen = ch->pdo + 512 + 4;
	CU_ASSERT_EQUAL(tgt_pdu_check_data(ch, 512, true, true, &e), -1);
	CU_ASSERT_EQUAL(tgt_pdu_check_ddgst(p, 16, tgt_pdu_digest(p, 16), &e), 0);
	CU_ASSERT_EQUAL(tgt_pdu_check_ddgst(p, 16, tgt_pdu_digest(p, 16) ^ 1, &e), -1);
}

static void
cmd_sgl(struct nvme_cmd *cmd, uint8_t type, uint8_t subtype, uint32_t len)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = NVME_OPC_WRITE;
	cmd->psdt = NVME_PSDT_SGL_MPTR_CONTIG;
	cmd->dptr.sgl1.type = type;
	cmd->dptr.sgl1.subtype = subtype;
	cmd->dptr.sgl1.length = len;
}

static void
test_capsule(void)
{
	struct nvme_tcp_common_hdr ch = { .pdu_type = NVME_TCP_PDU_CAPSULE_CMD,
					  .hlen = NVME_TCP_CMD_HLEN };
	struct tgt_pdu_capsule cap;
	struct nvme_cmd cmd;
	struct tgt_pdu_err e;

	/* in-capsule data: an offset data block descriptor, within the limit */
	ch.pdo = NVME_TCP_CMD_HLEN;
	ch.plen = NVME_TCP_CMD_HLEN + 4096;
	cmd_sgl(&cmd, 0, 1, 4096);
	CU_ASSERT_EQUAL(tgt_pdu_capsule(&ch, &cmd, false, 8192, 131072, &cap, &e), 0);
	CU_ASSERT(cap.inc && cap.len == 4096 && cap.sc == 0);
	CU_ASSERT_EQUAL(tgt_pdu_capsule(&ch, &cmd, false, 2048, 131072, &cap, &e), -1);
	CU_ASSERT_EQUAL(e.fes, NVME_TCP_FES_DATA_LIMIT_EXCEEDED);
	cmd_sgl(&cmd, 5, 0xa, 4096); /* a keyed descriptor with data in the capsule */
	CU_ASSERT_EQUAL(tgt_pdu_capsule(&ch, &cmd, false, 8192, 131072, &cap, &e), -1);

	/* data by R2T: a transport keyed descriptor, no data in the PDU */
	ch.pdo = 0;
	ch.plen = NVME_TCP_CMD_HLEN + 4;
	CU_ASSERT_EQUAL(tgt_pdu_capsule(&ch, &cmd, true, 8192, 131072, &cap, &e), 0);
	CU_ASSERT(!cap.inc && cap.len == 4096 && cap.sc == 0);
	CU_ASSERT_EQUAL(tgt_pdu_capsule(&ch, &cmd, false, 8192, 131072, &cap, &e), -1);
	CU_ASSERT_EQUAL(e.fei, 4); /* PLEN: the header digest's 4 bytes were not negotiated */
	/* the command's errors, not the connection's: a status, no data */
	cmd_sgl(&cmd, 0, 1, 4096);
	CU_ASSERT_EQUAL(tgt_pdu_capsule(&ch, &cmd, true, 8192, 131072, &cap, &e), 0);
	CU_ASSERT(cap.sc == NVME_SC_SGL_DESCRIPTOR_TYPE_INVALID && cap.len == 0);
	cmd_sgl(&cmd, 5, 0xa, 262144);
	CU_ASSERT_EQUAL(tgt_pdu_capsule(&ch, &cmd, true, 8192, 131072, &cap, &e), 0);
	CU_ASSERT(cap.sc == NVME_SC_DATA_SGL_LENGTH_INVALID && cap.sct == NVME_SCT_GENERIC);
	/* no data at all */
	cmd_sgl(&cmd, 0, 0, 0);
	cmd.psdt = 0;
	CU_ASSERT_EQUAL(tgt_pdu_capsule(&ch, &cmd, true, 8192, 131072, &cap, &e), 0);
	CU_ASSERT(cap.len == 0 && cap.sc == 0);
}

static void
test_h2c(void)
{
	struct nvme_tcp_data_hdr h;
	struct tgt_pdu_err e;

	memset(&h, 0, sizeof(h));
	h.ch.pdu_type = NVME_TCP_PDU_H2C_DATA;
	h.datao = 4096;
	h.datal = 4096;
	/* the second of two PDUs answering an R2T for [0, 8192) */
	CU_ASSERT_EQUAL(tgt_pdu_check_h2c(&h, 4096, 8192, 32768, &e), -1); /* no LAST_PDU */
	CU_ASSERT_EQUAL(e.fei, 1);
	h.ch.flags = NVME_TCP_FLAG_LAST_PDU;
	CU_ASSERT_EQUAL(tgt_pdu_check_h2c(&h, 4096, 8192, 32768, &e), 0);
	CU_ASSERT_EQUAL(tgt_pdu_check_h2c(&h, 4096, 8192, 2048, &e), -1); /* over MAXH2CDATA */
	CU_ASSERT_EQUAL(e.fes, NVME_TCP_FES_DATA_OUT_OF_RANGE);
	CU_ASSERT_EQUAL(tgt_pdu_check_h2c(&h, 0, 8192, 32768, &e), -1); /* not in order */
	CU_ASSERT_EQUAL(e.fei, offsetof(struct nvme_tcp_data_hdr, datao));
	h.datal = 8192; /* past the R2T's end */
	CU_ASSERT_EQUAL(tgt_pdu_check_h2c(&h, 4096, 8192, 32768, &e), -1);
	h.datal = 0;
	CU_ASSERT_EQUAL(tgt_pdu_check_h2c(&h, 4096, 8192, 32768, &e), -1);
}

static void
test_max_plen(void)
{
	CU_ASSERT_EQUAL(tgt_pdu_max_plen(NVME_TCP_PDU_CAPSULE_CMD, true, true, 8192, 65536),
			NVME_TCP_CMD_HLEN + 255 + 8 + 8192);
	CU_ASSERT_EQUAL(tgt_pdu_max_plen(NVME_TCP_PDU_H2C_DATA, false, false, 8192, 65536),
			NVME_TCP_DATA_HLEN + 255 + 65536);
	CU_ASSERT_EQUAL(tgt_pdu_max_plen(NVME_TCP_PDU_ICREQ, false, false, 8192, 65536), 0);
	CU_ASSERT_EQUAL(tgt_pdu_max_plen(NVME_TCP_PDU_C2H_DATA, false, false, 8192, 65536), 0);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_frame),   UT_TEST(test_icreq), UT_TEST(test_hdgst_and_data),
		UT_TEST(test_capsule), UT_TEST(test_h2c),   UT_TEST(test_max_plen),
	};

	return ut_run("tgt_pdu", tests, sizeof(tests) / sizeof(tests[0]));
}

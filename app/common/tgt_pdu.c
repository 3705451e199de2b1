/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The controller's side of NVMe/TCP PDUs, shared by nvp_tgt and the tools' small target
 * (see tgt_pdu.h). Section numbers are the NVMe/TCP Transport Specification 1.0's, the
 * SGL rules NVMe-oF 1.1's. Every check works on bytes already received and says which
 * field is wrong; nothing here reads a socket or keeps state between PDUs.
 */
#include <string.h>

#include "nvpoll/util.h"
#include "tgt_pdu.h"

static int
fail(struct tgt_pdu_err *err, const char *why, uint16_t fes, uint32_t fei)
{
	err->why = why;
	err->fes = fes;
	err->fei = fei;
	return -1;
}

uint32_t
tgt_pdu_digest(const void *p, size_t n)
{
	return nvp_crc32c(~0u, p, n) ^ ~0u;
}

/* ---- what the controller sends ---- */

uint32_t
tgt_pdu_frame(struct iovec *iov, void *hdr, uint32_t hlen, const void *data, uint32_t dlen,
	      bool hdgst, bool ddgst, uint32_t dg[2])
{
	struct nvme_tcp_common_hdr *ch = hdr;
	bool hd = hdgst && ch->pdu_type != NVME_TCP_PDU_C2H_TERM_REQ; /* section 3.6.2.7 */
	bool dd = dlen != 0 && ddgst;
	uint32_t n = 0;

	ch->hlen = (uint8_t)hlen;
	ch->flags |= (hd ? NVME_TCP_FLAG_HDGSTF : 0) | (dd ? NVME_TCP_FLAG_DDGSTF : 0);
	ch->pdo = dlen != 0 ? (uint8_t)(hlen + (hd ? 4 : 0)) : 0;
	ch->plen = hlen + (hd ? 4 : 0) + dlen + (dd ? 4 : 0);
	iov[n++] = (struct iovec){ hdr, hlen };
	if (hd) {
		dg[0] = tgt_pdu_digest(hdr, hlen);
		iov[n++] = (struct iovec){ &dg[0], 4 };
	}
	if (dlen != 0) {
		iov[n++] = (struct iovec){ (void *)(uintptr_t)data, dlen };
		if (dd) {
			dg[1] = tgt_pdu_digest(data, dlen);
			iov[n++] = (struct iovec){ &dg[1], 4 };
		}
	}
	return n;
}

void
tgt_pdu_rsp(struct nvme_tcp_rsp *h, const struct nvme_cpl *cpl, uint16_t cid, uint16_t sqid)
{
	memset(h, 0, sizeof(*h));
	h->ch.pdu_type = NVME_TCP_PDU_CAPSULE_RESP;
	h->rccqe = *cpl;
	h->rccqe.cid = cid;
	h->rccqe.sqid = sqid;
}

void
tgt_pdu_c2h(struct nvme_tcp_data_hdr *h, uint16_t cid, uint32_t datao, uint32_t datal,
	    uint8_t flags)
{
	memset(h, 0, sizeof(*h));
	h->ch.pdu_type = NVME_TCP_PDU_C2H_DATA;
	h->ch.flags = flags;
	h->cccid = cid;
	h->datao = datao;
	h->datal = datal;
}

void
tgt_pdu_r2t(struct nvme_tcp_r2t_hdr *h, uint16_t cid, uint16_t ttag, uint32_t off, uint32_t len)
{
	memset(h, 0, sizeof(*h));
	h->ch.pdu_type = NVME_TCP_PDU_R2T;
	h->cccid = cid;
	h->ttag = ttag;
	h->r2to = off;
	h->r2tl = len;
}

void
tgt_pdu_term(struct nvme_tcp_term_req_hdr *h, uint16_t fes, uint32_t fei)
{
	memset(h, 0, sizeof(*h));
	h->ch.pdu_type = NVME_TCP_PDU_C2H_TERM_REQ;
	h->ch.hlen = NVME_TCP_TERM_HLEN;
	h->ch.plen = NVME_TCP_TERM_HLEN;
	h->fes = fes;
	h->fei = fei;
}

/* ---- what the host sends ---- */

int
tgt_pdu_icreq(const struct nvme_tcp_ic_req *req, uint32_t maxh2cdata, struct nvme_tcp_ic_resp *resp,
	      bool *hdgst, bool *ddgst, struct tgt_pdu_err *err)
{
	if (req->ch.plen != NVME_TCP_IC_LEN) {
		return fail(err, "ICReq PLEN", NVME_TCP_FES_INVALID_HEADER_FIELD,
			    offsetof(struct nvme_tcp_common_hdr, plen));
	}
	if (req->ch.pdu_type != NVME_TCP_PDU_ICREQ || req->ch.hlen != NVME_TCP_IC_LEN ||
	    req->pfv != NVME_TCP_PFV_1_0) {
		return fail(err, "ICReq", NVME_TCP_FES_INVALID_HEADER_FIELD, 0);
	}
	*hdgst = (req->dgst & NVME_TCP_DGST_HDGST) != 0;
	*ddgst = (req->dgst & NVME_TCP_DGST_DDGST) != 0;
	memset(resp, 0, sizeof(*resp));
	resp->ch.pdu_type = NVME_TCP_PDU_ICRESP;
	resp->ch.hlen = NVME_TCP_IC_LEN;
	resp->ch.plen = NVME_TCP_IC_LEN;
	resp->pfv = NVME_TCP_PFV_1_0;
	resp->dgst = req->dgst & (NVME_TCP_DGST_HDGST | NVME_TCP_DGST_DDGST);
	resp->maxh2cdata = maxh2cdata;
	return 0;
}

uint32_t
tgt_pdu_max_plen(uint8_t type, bool hdgst, bool ddgst, uint32_t max_inc, uint32_t maxh2cdata)
{
	uint32_t dg = (hdgst ? 4u : 0u) + (ddgst ? 4u : 0u);

	switch (type) {
	case NVME_TCP_PDU_CAPSULE_CMD:
		return NVME_TCP_CMD_HLEN + TGT_PDU_MAX_PDO + dg + max_inc;
	case NVME_TCP_PDU_H2C_DATA:
		return NVME_TCP_DATA_HLEN + TGT_PDU_MAX_PDO + dg + maxh2cdata;
	case NVME_TCP_PDU_H2C_TERM_REQ:
		return NVME_TCP_TERM_HLEN + NVME_TCP_TERM_REQ_MAX_DATA;
	default:
		return 0;
	}
}

int
tgt_pdu_check_hdgst(const uint8_t *p, uint32_t hlen, bool hdgst, struct tgt_pdu_err *err)
{
	const struct nvme_tcp_common_hdr *ch = (const void *)p;
	uint32_t d;

	if (((ch->flags & NVME_TCP_FLAG_HDGSTF) != 0) != hdgst) {
		return fail(err, "HDGSTF is not what was negotiated",
			    NVME_TCP_FES_INVALID_HEADER_FIELD,
			    offsetof(struct nvme_tcp_common_hdr, flags));
	}
	if (hdgst) {
		memcpy(&d, p + hlen, 4);
		if (d != tgt_pdu_digest(p, hlen)) {
			return fail(err, "header digest", NVME_TCP_FES_HDGST_ERROR, 0);
		}
	}
	return 0;
}

int
tgt_pdu_check_data(const struct nvme_tcp_common_hdr *ch, uint32_t len, bool hdgst, bool ddgst,
		   struct tgt_pdu_err *err)
{
	uint32_t hend = ch->hlen + (hdgst ? 4u : 0u);

	if (ch->pdo < hend || ((ch->flags & NVME_TCP_FLAG_DDGSTF) != 0) != ddgst ||
	    ch->plen != ch->pdo + len + (ddgst ? 4u : 0u)) {
		return fail(err, "PDO, PLEN or DDGSTF of a PDU with data",
			    NVME_TCP_FES_INVALID_HEADER_FIELD,
			    offsetof(struct nvme_tcp_common_hdr, pdo));
	}
	return (int)(ch->pdo - hend);
}

int
tgt_pdu_check_ddgst(const uint8_t *data, uint32_t len, uint32_t dg, struct tgt_pdu_err *err)
{
	if (dg != tgt_pdu_digest(data, len)) {
		/* section 3.6.2.10: a data digest error ends the connection */
		return fail(err, "data digest", NVME_TCP_FES_DATA_OUT_OF_RANGE, 0);
	}
	return 0;
}

int
tgt_pdu_capsule(const struct nvme_tcp_common_hdr *ch, const struct nvme_cmd *cmd, bool hdgst,
		uint32_t max_inc, uint32_t max_io, struct tgt_pdu_capsule *out,
		struct tgt_pdu_err *err)
{
	const struct nvme_sgl_descriptor *sgl = &cmd->dptr.sgl1;

	memset(out, 0, sizeof(*out));
	out->len = cmd->psdt == NVME_PSDT_SGL_MPTR_CONTIG ? sgl->length : 0;
	if (ch->pdo != 0) { /* in-capsule data: an offset data block descriptor */
		if (sgl->type != 0 || sgl->subtype != 1 || out->len == 0 || out->len > max_inc) {
			return fail(err, "in-capsule data: SGL or length",
				    NVME_TCP_FES_DATA_LIMIT_EXCEEDED, 0);
		}
		out->inc = true;
		return 0;
	}
	if (ch->plen != NVME_TCP_CMD_HLEN + (hdgst ? 4u : 0u)) {
		return fail(err, "CapsuleCmd PLEN", NVME_TCP_FES_INVALID_HEADER_FIELD,
			    offsetof(struct nvme_tcp_common_hdr, plen));
	}
	if (out->len != 0 && (sgl->type != 5 || sgl->subtype != 0xa)) {
		out->sc = NVME_SC_SGL_DESCRIPTOR_TYPE_INVALID; /* transport SGL data block, keyed */
	} else if (out->len > max_io) {
		out->sc = NVME_SC_DATA_SGL_LENGTH_INVALID;
	}
	if (out->sc != 0) {
		out->sct = NVME_SCT_GENERIC;
		out->len = 0;
	}
	return 0;
}

int
tgt_pdu_check_h2c(const struct nvme_tcp_data_hdr *h, uint32_t at, uint32_t end, uint32_t maxh2cdata,
		  struct tgt_pdu_err *err)
{
	if (h->datao != at || h->datal == 0 || at > end || h->datal > end - at ||
	    h->datal > maxh2cdata) {
		return fail(err, "H2CData offset or length", NVME_TCP_FES_DATA_OUT_OF_RANGE,
			    offsetof(struct nvme_tcp_data_hdr, datao));
	}
	if (((h->ch.flags & NVME_TCP_FLAG_LAST_PDU) != 0) != (at + h->datal == end)) {
		return fail(err, "H2CData LAST_PDU flag", NVME_TCP_FES_INVALID_HEADER_FIELD,
			    offsetof(struct nvme_tcp_common_hdr, flags));
	}
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe/TCP PDUs (NVMe/TCP Transport Specification 1.0, section 3.6): building what the
 * host sends (ICReq, CapsuleCmd, H2CData) and the receive state machine that takes the
 * controller's byte stream apart (ICResp, CapsuleResp, C2HData, R2T, C2HTermReq).
 *
 * Everything received is input from the network: each header is checked against its
 * type (length, flags, PDO, PLEN), digests are verified when negotiated (CRC32C,
 * section 3.6.1.4), data must land inside the command's own buffer and arrive in order,
 * an R2T may not ask for more than the command has. Any violation stops the parse with
 * the reason in the qpair (rx_fail_*), and its caller in nvme_tcp.c fails the qpair: its
 * requests complete with a path error, nothing is written outside a request's buffer,
 * the process goes on.
 */
#include <string.h>

#include "nvme_cpl.h"
#include "nvme_tcp_internal.h"

static const uint8_t g_zero_pad[128];

uint32_t
nvme_tcp_digest(const void *buf, size_t len)
{
	return nvp_crc32c(~0u, buf, len) ^ ~0u;
}

static void
put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint32_t
get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* PDO of a host PDU with data: after the header (and digest), aligned to CPDA. */
static uint32_t
host_pdo(const struct nvme_tcp_qpair *tq, uint32_t hlen)
{
	uint32_t align = 4u * ((uint32_t)tq->cpda + 1u);
	uint32_t end = hlen + (tq->hdgst ? NVME_TCP_DIGEST_LEN : 0u);

	return (end + align - 1u) / align * align;
}

/*
 * The request's payload as byte ranges: one buffer, or the caller's scatter list walked
 * with its reset_sgl/next_sge callbacks (a split child's callbacks add its offset).
 * @fn is called for each piece of [off, off + len) until it returns false.
 * \return 0, or -EFAULT if the list ends (or returns an error) before @len bytes.
 */
typedef bool (*piece_fn)(void *ctx, uint8_t *p, uint32_t n);

static int
payload_walk(struct nvme_request *req, uint32_t off, uint32_t len, piece_fn fn, void *ctx)
{
	struct nvme_payload *pl = &req->payload;

	if (nvp_likely(pl->type == NVME_PAYLOAD_CONTIG)) {
		(void)fn(ctx, (uint8_t *)pl->buf + off, len);
		return 0;
	}
	pl->reset_sgl_fn(pl->sgl_arg, off);
	while (len > 0) {
		void *addr = NULL;
		uint32_t n = 0;

		if (pl->next_sge_fn(pl->sgl_arg, &addr, &n) != 0 || addr == NULL || n == 0) {
			return -EFAULT;
		}
		n = NVP_MIN(n, len);
		if (!fn(ctx, addr, n)) {
			return 0;
		}
		len -= n;
	}
	return 0;
}

static bool
crc_piece(void *ctx, uint8_t *p, uint32_t n)
{
	uint32_t *crc = ctx;

	*crc = nvp_crc32c(*crc, p, n);
	return true;
}

static uint32_t
payload_digest(struct nvme_request *req, uint32_t off, uint32_t len)
{
	uint32_t crc = ~0u;

	(void)payload_walk(req, off, len, crc_piece, &crc);
	return crc ^ ~0u;
}

struct copy_ctx {
	const uint8_t *src;
};

static bool
copy_piece(void *ctx, uint8_t *p, uint32_t n)
{
	struct copy_ctx *c = ctx;

	memcpy(p, c->src, n);
	c->src += n;
	return true;
}

struct iov_ctx {
	struct iovec *iov;
	uint32_t n, max;
};

static bool
iov_piece(void *ctx, uint8_t *p, uint32_t n)
{
	struct iov_ctx *c = ctx;

	c->iov[c->n].iov_base = p;
	c->iov[c->n].iov_len = n;
	return ++c->n < c->max;
}

/* ---------------------------------------------------------------------------------------
 * Building
 * ------------------------------------------------------------------------------------- */

void
nvme_tcp_build_ic_req(struct nvme_tcp_ic_req *ic, bool hdgst, bool ddgst)
{
	memset(ic, 0, sizeof(*ic));
	ic->ch.pdu_type = NVME_TCP_PDU_ICREQ;
	ic->ch.hlen = NVME_TCP_IC_LEN;
	ic->ch.plen = NVME_TCP_IC_LEN;
	ic->pfv = NVME_TCP_PFV_1_0;
	ic->hpda = 0;   /* no alignment asked of the controller's data */
	ic->maxr2t = 0; /* one R2T outstanding per command */
	ic->dgst = (uint8_t)((hdgst ? NVME_TCP_DGST_HDGST : 0u) |
			     (ddgst ? NVME_TCP_DGST_DDGST : 0u));
}

/*
 * ICResp (section 3.6.2.3): PFV 0, digests only those asked for, CPDA at most 31,
 * MAXH2CDATA a multiple of 4 and at least 4096. \return 0 or -EPROTO with *why.
 */
int
nvme_tcp_check_ic_resp(const struct nvme_tcp_ic_resp *ic, bool hdgst, bool ddgst, const char **why)
{
	uint8_t asked = (uint8_t)((hdgst ? NVME_TCP_DGST_HDGST : 0u) |
				  (ddgst ? NVME_TCP_DGST_DDGST : 0u));

	if (ic->pfv != NVME_TCP_PFV_1_0) {
		*why = "ICResp: unsupported PDU format version";
	} else if ((ic->dgst & ~asked) != 0) {
		*why = "ICResp: digest enabled that the host did not ask for";
	} else if (ic->cpda > 31) {
		*why = "ICResp: CPDA above 31";
	} else if (ic->maxh2cdata < 4096 || (ic->maxh2cdata & 3u) != 0) {
		*why = "ICResp: MAXH2CDATA below 4096 or not a multiple of 4";
	} else {
		return 0;
	}
	return -EPROTO;
}

/*
 * CapsuleCmd (section 3.6.2.5): the SQE with an SGL descriptor the transport defines:
 * in-capsule data (offset data block) or data moved later by C2HData/R2T (transport SGL
 * data block, section 3.3.3).
 */
void
nvme_tcp_build_cmd_pdu(struct nvme_tcp_qpair *tq, struct nvme_tcp_req *treq)
{
	struct nvme_tcp_cmd *pdu = &treq->cmd_pdu.cmd;
	struct nvme_sgl_descriptor *sgl = &pdu->ccsqe.dptr.sgl1;
	uint32_t hd = tq->hdgst ? NVME_TCP_DIGEST_LEN : 0u;

	pdu->ccsqe = treq->req->cmd;
	pdu->ccsqe.psdt = NVME_PSDT_SGL_MPTR_CONTIG;
	memset(sgl, 0, sizeof(*sgl));
	pdu->ch.pdu_type = NVME_TCP_PDU_CAPSULE_CMD;
	pdu->ch.flags = tq->hdgst ? NVME_TCP_FLAG_HDGSTF : 0u;
	pdu->ch.hlen = NVME_TCP_CMD_HLEN;
	pdu->ch.pdo = 0;
	pdu->ch.plen = NVME_TCP_CMD_HLEN + hd;
	sgl->length = treq->data_len;
	if (treq->in_capsule) {
		sgl->type = 0x0;    /* data block */
		sgl->subtype = 0x1; /* offset: in-capsule data */
		pdu->ch.pdo = (uint8_t)host_pdo(tq, NVME_TCP_CMD_HLEN);
		pdu->ch.plen = pdu->ch.pdo + treq->data_len;
		if (tq->ddgst) {
			pdu->ch.flags |= NVME_TCP_FLAG_DDGSTF;
			pdu->ch.plen += NVME_TCP_DIGEST_LEN;
			put_le32(treq->ddgst, payload_digest(treq->req, 0, treq->data_len));
		}
	} else if (treq->data_len != 0) {
		sgl->type = 0x5;    /* transport SGL data block */
		sgl->subtype = 0xa; /* transport specific */
	}
	if (tq->hdgst) {
		put_le32(treq->cmd_pdu.hdgst, nvme_tcp_digest(pdu, NVME_TCP_CMD_HLEN));
	}
}

/* H2CData (section 3.6.2.7) for [h2c_off, h2c_off + h2c_len) of the current R2T. */
void
nvme_tcp_build_h2c_pdu(struct nvme_tcp_qpair *tq, struct nvme_tcp_req *treq)
{
	struct nvme_tcp_data_hdr *h = &treq->h2c_pdu.h2c;

	memset(h, 0, sizeof(*h));
	h->ch.pdu_type = NVME_TCP_PDU_H2C_DATA;
	h->ch.flags = (uint8_t)((tq->hdgst ? NVME_TCP_FLAG_HDGSTF : 0u) |
				(tq->ddgst ? NVME_TCP_FLAG_DDGSTF : 0u));
	if (treq->h2c_off + treq->h2c_len == treq->r2t_end) {
		h->ch.flags |= NVME_TCP_FLAG_LAST_PDU;
	}
	h->ch.hlen = NVME_TCP_DATA_HLEN;
	h->ch.pdo = (uint8_t)host_pdo(tq, NVME_TCP_DATA_HLEN);
	h->ch.plen = h->ch.pdo + treq->h2c_len + (tq->ddgst ? NVME_TCP_DIGEST_LEN : 0u);
	h->cccid = treq->req->cmd.cid;
	h->ttag = treq->ttag;
	h->datao = treq->h2c_off;
	h->datal = treq->h2c_len;
	if (tq->hdgst) {
		put_le32(treq->h2c_pdu.hdgst, nvme_tcp_digest(h, NVME_TCP_DATA_HLEN));
	}
	if (tq->ddgst) {
		put_le32(treq->ddgst, payload_digest(treq->req, treq->h2c_off, treq->h2c_len));
	}
}

/* ---------------------------------------------------------------------------------------
 * Sending: the current PDU of a send queue entry as iovecs, then account for what went
 * ------------------------------------------------------------------------------------- */

struct seg {
	const uint8_t *base;
	uint32_t len;
};

/*
 * The current PDU of @treq: header+digest, pad, data (payload offset *@data_off), data
 * digest. \return how many of the four pieces there are.
 */
static uint32_t
pdu_segs(struct nvme_tcp_qpair *tq, struct nvme_tcp_req *treq, struct seg *s, uint32_t *data_off)
{
	const struct nvme_tcp_common_hdr *ch;
	uint32_t hd = tq->hdgst ? NVME_TCP_DIGEST_LEN : 0u;
	uint32_t len;

	if (treq->send_kind == NVME_TCP_SEND_CMD) {
		ch = &treq->cmd_pdu.cmd.ch;
		*data_off = 0;
		len = treq->in_capsule ? treq->data_len : 0u;
	} else {
		ch = &treq->h2c_pdu.h2c.ch;
		*data_off = treq->h2c_off;
		len = treq->h2c_len;
	}
	s[0].base = (const uint8_t *)ch;
	s[0].len = ch->hlen + hd;
	if (len == 0) {
		return 1;
	}
	s[1].base = g_zero_pad;
	s[1].len = ch->pdo - s[0].len;
	s[2].base = NULL; /* the payload: see nvme_tcp_send_iov() */
	s[2].len = len;
	s[3].base = treq->ddgst;
	s[3].len = tq->ddgst ? NVME_TCP_DIGEST_LEN : 0u;
	return 4;
}

/*
 * iovecs for what is left of @treq's current PDU, at most @max_iov (a scattered payload
 * may not fit: the rest goes in a later call). \return how many (0: no room).
 */
uint32_t
nvme_tcp_send_iov(struct nvme_tcp_qpair *tq, struct nvme_tcp_req *treq, struct iovec *iov,
		  uint32_t max_iov)
{
	struct seg s[4];
	uint32_t nseg, i, n = 0, skip = treq->sent, data_off;

	if (max_iov < 4) {
		return 0;
	}
	nseg = pdu_segs(tq, treq, s, &data_off);
	for (i = 0; i < nseg && n < max_iov; i++) {
		if (skip >= s[i].len) {
			skip -= s[i].len;
			continue;
		}
		if (i == 2) {
			struct iov_ctx c = { .iov = iov + n, .n = 0, .max = max_iov - n - 1 };

			if (payload_walk(treq->req, data_off + skip, s[2].len - skip, iov_piece,
					 &c) != 0) {
				return n; /* the list is short: the caller sends what there is */
			}
			n += c.n;
			if (c.n == c.max) {
				return n; /* no room for the rest of the data: later */
			}
		} else {
			iov[n].iov_base = (void *)(uintptr_t)(s[i].base + skip);
			iov[n].iov_len = s[i].len - skip;
			n++;
		}
		skip = 0;
	}
	return n;
}

/*
 * @n bytes of @treq's current PDU (and maybe more for the entries behind it) went out.
 * Takes what belongs to this PDU from *@n. \return true when the entry has nothing left
 * to send (it leaves the send queue); the next H2CData PDU of an R2T is built here.
 */
bool
nvme_tcp_send_advance(struct nvme_tcp_qpair *tq, struct nvme_tcp_req *treq, size_t *n)
{
	uint32_t plen = treq->send_kind == NVME_TCP_SEND_CMD ? treq->cmd_pdu.cmd.ch.plen :
							       treq->h2c_pdu.h2c.ch.plen;
	uint32_t left = plen - treq->sent;

	if (*n < left) {
		treq->sent += (uint32_t)*n;
		*n = 0;
		return false;
	}
	*n -= left;
	treq->sent = 0;
	if (treq->send_kind == NVME_TCP_SEND_CMD) {
		return true;
	}
	treq->h2c_off += treq->h2c_len;
	if (treq->h2c_off < treq->r2t_end) {
		treq->h2c_len = NVP_MIN(tq->maxh2cdata, treq->r2t_end - treq->h2c_off);
		nvme_tcp_build_h2c_pdu(tq, treq);
		return false;
	}
	treq->r2t_active = false;
	return true;
}

/* ---------------------------------------------------------------------------------------
 * Receiving
 * ------------------------------------------------------------------------------------- */

void
nvme_tcp_rx_reset(struct nvme_tcp_qpair *tq)
{
	tq->rx_pos = 0;
	tq->rx_len = 0;
	tq->rx_state = NVME_TCP_RX_CH;
	tq->rx_have = 0;
	tq->rx_need = sizeof(struct nvme_tcp_common_hdr);
	tq->rx_dst = NULL;
	tq->rx_sgl = false;
	tq->rx_treq = NULL;
}

/* A command finished: the generic completion, or the waiting fabrics command. */
void
nvme_tcp_treq_done(struct nvme_tcp_qpair *tq, struct nvme_tcp_req *treq, const struct nvme_cpl *cpl)
{
	treq->req = NULL;
	treq->r2t_active = false;
	treq->resp_pending = false;
	if (treq == &tq->treqs[tq->qpair.num_trackers]) {
		tq->fabric_cpl = *cpl;
		tq->fabric_done = true;
		return;
	}
	tq->rx_cpls++;
	nvme_qpair_complete_cpl(&tq->qpair, cpl);
}

static int
rx_error(struct nvme_tcp_qpair *tq, const char *why, uint16_t fes, uint32_t fei)
{
	tq->rx_fail_why = why;
	tq->rx_fail_fes = fes;
	tq->rx_fail_fei = fei;
	return -EPROTO;
}

/* The command a C2HData or R2T names, if it is one this qpair has outstanding. */
static struct nvme_tcp_req *
rx_lookup(struct nvme_tcp_qpair *tq, uint16_t cid)
{
	uint16_t idx = cid & tq->qpair.cid_idx_mask;
	struct nvme_tcp_req *treq;

	if (idx > tq->qpair.num_trackers) {
		return NULL;
	}
	treq = &tq->treqs[idx];
	/* The CID's generation too: a PDU for a command since ended is not for this one. */
	return treq->req != NULL && treq->req->cmd.cid == cid ? treq : NULL;
}

/* The generic layer still waits for it (not timed out and given up). */
static bool
rx_req_live(struct nvme_tcp_qpair *tq, struct nvme_tcp_req *treq)
{
	uint16_t cid = (uint16_t)(treq - tq->treqs);

	if (cid == tq->qpair.num_trackers) {
		return true;
	}
	return tq->qpair.trackers[cid].state == NVME_TR_ACTIVE &&
	       tq->qpair.trackers[cid].req == treq->req;
}

static uint32_t
hdr_digest_len(const struct nvme_tcp_qpair *tq, uint8_t type)
{
	if (!tq->hdgst) {
		return 0;
	}
	return (type == NVME_TCP_PDU_CAPSULE_RESP || type == NVME_TCP_PDU_C2H_DATA ||
		type == NVME_TCP_PDU_R2T) ?
		       NVME_TCP_DIGEST_LEN :
		       0u;
}

/* The common header: type, HLEN, flags, PDO and PLEN consistent with each other. */
static int
rx_common_hdr(struct nvme_tcp_qpair *tq)
{
	const struct nvme_tcp_common_hdr *ch = (const void *)tq->rx_hdr;
	uint32_t hd = hdr_digest_len(tq, ch->pdu_type);
	uint32_t want_hlen, hend = ch->hlen + hd;
	bool ok;

	switch (ch->pdu_type) {
	case NVME_TCP_PDU_ICRESP:
		want_hlen = NVME_TCP_IC_LEN;
		ok = tq->conn == NVME_TCP_CONN_IC && ch->plen == NVME_TCP_IC_LEN;
		break;
	case NVME_TCP_PDU_C2H_TERM_REQ:
		want_hlen = NVME_TCP_TERM_HLEN;
		ok = ch->plen >= NVME_TCP_TERM_HLEN &&
		     ch->plen <= NVME_TCP_TERM_HLEN + NVME_TCP_TERM_REQ_MAX_DATA;
		break;
	case NVME_TCP_PDU_CAPSULE_RESP:
	case NVME_TCP_PDU_R2T:
		want_hlen = ch->pdu_type == NVME_TCP_PDU_R2T ? NVME_TCP_R2T_HLEN :
							       NVME_TCP_RSP_HLEN;
		ok = tq->conn == NVME_TCP_CONN_READY && ch->plen == want_hlen + hd;
		break;
	case NVME_TCP_PDU_C2H_DATA:
		want_hlen = NVME_TCP_DATA_HLEN;
		ok = tq->conn == NVME_TCP_CONN_READY && ch->pdo >= hend && ch->plen > ch->pdo &&
		     ch->plen - ch->pdo <= NVME_TCP_MAX_DATA_PDU &&
		     ((ch->flags & NVME_TCP_FLAG_DDGSTF) != 0) == tq->ddgst;
		break;
	default:
		return rx_error(tq, "PDU of a type the controller may not send",
				NVME_TCP_FES_INVALID_HEADER_FIELD, 0);
	}
	if (ch->hlen != want_hlen) {
		return rx_error(tq, "PDU header length wrong for its type",
				NVME_TCP_FES_INVALID_HEADER_FIELD, 2);
	}
	if (((ch->flags & NVME_TCP_FLAG_HDGSTF) != 0) != (hd != 0)) {
		return rx_error(tq, "header digest flag differs from what was negotiated",
				NVME_TCP_FES_INVALID_HEADER_FIELD, 1);
	}
	if (!ok) {
		return rx_error(tq, "PDU length, data offset or state wrong for its type",
				NVME_TCP_FES_INVALID_HEADER_FIELD, 4);
	}
	tq->rx_need = hend;
	tq->rx_state = NVME_TCP_RX_HDR;
	return 0;
}

static void
rx_next_pdu(struct nvme_tcp_qpair *tq)
{
	tq->rx_state = NVME_TCP_RX_CH;
	tq->rx_have = 0;
	tq->rx_need = sizeof(struct nvme_tcp_common_hdr);
	tq->rx_dst = NULL;
	tq->rx_sgl = false;
	tq->rx_treq = NULL;
}

static int
rx_ic_resp(struct nvme_tcp_qpair *tq)
{
	const struct nvme_tcp_ic_resp *ic = (const void *)tq->rx_hdr;
	const char *why = NULL;

	if (nvme_tcp_check_ic_resp(ic, tq->hdgst, tq->ddgst, &why) != 0) {
		return rx_error(tq, why, NVME_TCP_FES_INVALID_HEADER_FIELD, 8);
	}
	tq->hdgst = (ic->dgst & NVME_TCP_DGST_HDGST) != 0;
	tq->ddgst = (ic->dgst & NVME_TCP_DGST_DDGST) != 0;
	tq->cpda = ic->cpda;
	tq->maxh2cdata = ic->maxh2cdata;
	tq->conn = NVME_TCP_CONN_READY;
	rx_next_pdu(tq);
	return 0;
}

static int
rx_capsule_resp(struct nvme_tcp_qpair *tq)
{
	const struct nvme_tcp_rsp *rsp = (const void *)tq->rx_hdr;
	struct nvme_tcp_req *treq = rx_lookup(tq, rsp->rccqe.cid);

	if (treq == NULL) {
		return rx_error(tq, "response for a command identifier not outstanding",
				NVME_TCP_FES_INVALID_HEADER_FIELD, 8 + 12);
	}
	rx_next_pdu(tq);
	if (treq->send_kind != NVME_TCP_SEND_NONE) {
		/* Early (an error before all data was sent): complete once it is out. */
		treq->resp = rsp->rccqe;
		treq->resp_pending = true;
		return 0;
	}
	nvme_tcp_treq_done(tq, treq, &rsp->rccqe);
	return 0;
}

static int
rx_c2h_data(struct nvme_tcp_qpair *tq)
{
	const struct nvme_tcp_data_hdr *h = (const void *)tq->rx_hdr;
	struct nvme_tcp_req *treq = rx_lookup(tq, h->cccid);
	uint32_t hend = h->ch.hlen + hdr_digest_len(tq, h->ch.pdu_type);
	uint32_t dd = tq->ddgst ? NVME_TCP_DIGEST_LEN : 0u;

	if (treq == NULL || treq->write) {
		return rx_error(tq, "C2HData for a command that is not an outstanding read",
				NVME_TCP_FES_INVALID_HEADER_FIELD, 8);
	}
	if (h->datal == 0 || h->datao != treq->c2h_next || h->datal > treq->data_len ||
	    h->datao > treq->data_len - h->datal) {
		return rx_error(tq, "C2HData outside the command's data or out of order",
				NVME_TCP_FES_DATA_OUT_OF_RANGE, 12);
	}
	if (h->ch.plen != (uint32_t)h->ch.pdo + h->datal + dd) {
		return rx_error(tq, "C2HData PDU length does not match its data length",
				NVME_TCP_FES_INVALID_HEADER_FIELD, 4);
	}
	if ((h->ch.flags & NVME_TCP_FLAG_C2H_SUCCESS) != 0 &&
	    ((h->ch.flags & NVME_TCP_FLAG_LAST_PDU) == 0 ||
	     h->datao + h->datal != treq->data_len)) {
		return rx_error(tq, "C2HData SUCCESS before the last of the data",
				NVME_TCP_FES_INVALID_HEADER_FIELD, 1);
	}
	treq->c2h_next += h->datal;
	tq->rx_treq = treq;
	/* Data of a request the driver gave up on (timeout) is read and dropped. */
	tq->rx_dst = NULL;
	tq->rx_sgl = false;
	if (rx_req_live(tq, treq)) {
		if (treq->req->payload.type == NVME_PAYLOAD_CONTIG) {
			tq->rx_dst = (uint8_t *)treq->req->payload.buf + h->datao;
		} else {
			tq->rx_sgl = true;
		}
	}
	tq->rx_crc = ~0u;
	tq->rx_have = 0;
	tq->rx_need = h->ch.pdo - hend;
	tq->rx_state = NVME_TCP_RX_PAD;
	return 0;
}

static void
queue_send(struct nvme_tcp_qpair *tq, struct nvme_tcp_req *treq, uint8_t kind)
{
	treq->send_kind = kind;
	treq->sent = 0;
	STAILQ_INSERT_TAIL(&tq->send_q, treq, send_link);
}

static int
rx_r2t(struct nvme_tcp_qpair *tq)
{
	const struct nvme_tcp_r2t_hdr *h = (const void *)tq->rx_hdr;
	struct nvme_tcp_req *treq = rx_lookup(tq, h->cccid);

	rx_next_pdu(tq);
	if (treq == NULL || !treq->write || treq->in_capsule ||
	    treq->send_kind != NVME_TCP_SEND_NONE || treq->r2t_active) {
		return rx_error(tq, "R2T for a command that is not waiting for one",
				NVME_TCP_FES_PDU_SEQUENCE_ERROR, 8);
	}
	if (h->r2tl == 0 || h->r2to != treq->r2t_next || h->r2tl > treq->data_len ||
	    h->r2to > treq->data_len - h->r2tl) {
		return rx_error(tq, "R2T beyond the command's data or out of order",
				NVME_TCP_FES_DATA_OUT_OF_RANGE, 12);
	}
	treq->ttag = h->ttag;
	treq->r2t_active = true;
	treq->h2c_off = h->r2to;
	treq->r2t_end = h->r2to + h->r2tl;
	treq->r2t_next = treq->r2t_end;
	treq->h2c_len = NVP_MIN(tq->maxh2cdata, h->r2tl);
	nvme_tcp_build_h2c_pdu(tq, treq);
	queue_send(tq, treq, NVME_TCP_SEND_H2C);
	return 0;
}

static int
rx_term_req(struct nvme_tcp_qpair *tq)
{
	const struct nvme_tcp_term_req_hdr *h = (const void *)tq->rx_hdr;

	NVP_ERRLOG("qpair %u: the controller ended the connection (C2HTermReq FES 0x%x FEI 0x%x)",
		   tq->qpair.id, h->fes, h->fei);
	return rx_error(tq, "C2HTermReq received", 0, 0);
}

/* The whole header (and its digest) is in rx_hdr. */
static int
rx_header(struct nvme_tcp_qpair *tq)
{
	const struct nvme_tcp_common_hdr *ch = (const void *)tq->rx_hdr;
	uint32_t hd = hdr_digest_len(tq, ch->pdu_type);

	if (hd != 0 && get_le32(tq->rx_hdr + ch->hlen) != nvme_tcp_digest(tq->rx_hdr, ch->hlen)) {
		return rx_error(tq, "header digest mismatch", NVME_TCP_FES_HDGST_ERROR, 0);
	}
	switch (ch->pdu_type) {
	case NVME_TCP_PDU_ICRESP:
		return rx_ic_resp(tq);
	case NVME_TCP_PDU_CAPSULE_RESP:
		return rx_capsule_resp(tq);
	case NVME_TCP_PDU_C2H_DATA:
		return rx_c2h_data(tq);
	case NVME_TCP_PDU_R2T:
		return rx_r2t(tq);
	default:
		return rx_term_req(tq);
	}
}

/* End of a C2HData PDU's data (and digest). */
static int
rx_data_done(struct nvme_tcp_qpair *tq)
{
	const struct nvme_tcp_data_hdr *h = (const void *)tq->rx_hdr;
	struct nvme_tcp_req *treq = tq->rx_treq;
	struct nvme_cpl cpl;

	rx_next_pdu(tq);
	if ((h->ch.flags & NVME_TCP_FLAG_C2H_SUCCESS) == 0) {
		return 0; /* a CapsuleResp follows */
	}
	memset(&cpl, 0, sizeof(cpl));
	cpl.cid = h->cccid;
	cpl.sqid = tq->qpair.id;
	nvme_tcp_treq_done(tq, treq, &cpl);
	return 0;
}

/* Take up to @avail bytes at @p for the current state. \return bytes used or -EPROTO. */
static int64_t
rx_step(struct nvme_tcp_qpair *tq, const uint8_t *p, uint32_t avail)
{
	uint32_t n = NVP_MIN(avail, tq->rx_need - tq->rx_have);
	int rc = 0;

	switch (tq->rx_state) {
	case NVME_TCP_RX_CH:
	case NVME_TCP_RX_HDR:
		memcpy(tq->rx_hdr + tq->rx_have, p, n);
		break;
	case NVME_TCP_RX_DATA:
		if (tq->rx_dst != NULL) {
			memcpy(tq->rx_dst + tq->rx_have, p, n);
		} else if (tq->rx_sgl) {
			struct copy_ctx c = { .src = p };
			const struct nvme_tcp_data_hdr *h = (const void *)tq->rx_hdr;

			if (payload_walk(tq->rx_treq->req, h->datao + tq->rx_have, n, copy_piece,
					 &c) != 0) {
				return rx_error(
					tq, "the request's scatter list is shorter than its data",
					0, 0);
			}
		}
		if (tq->ddgst) {
			tq->rx_crc = nvp_crc32c(tq->rx_crc, p, n);
		}
		break;
	case NVME_TCP_RX_DDGST:
		memcpy(tq->rx_hdr + sizeof(struct nvme_tcp_data_hdr) + tq->rx_have, p, n);
		break;
	default:
		break;
	}
	tq->rx_have += n;
	if (tq->rx_have < tq->rx_need) {
		return n;
	}
	rc = 0;
	switch (tq->rx_state) {
	case NVME_TCP_RX_CH:
		rc = rx_common_hdr(tq);
		break;
	case NVME_TCP_RX_HDR:
		rc = rx_header(tq);
		break;
	case NVME_TCP_RX_PAD:
		tq->rx_state = NVME_TCP_RX_DATA;
		tq->rx_have = 0;
		tq->rx_need = ((const struct nvme_tcp_data_hdr *)(const void *)tq->rx_hdr)->datal;
		break;
	case NVME_TCP_RX_DATA:
		if (tq->ddgst) {
			tq->rx_state = NVME_TCP_RX_DDGST;
			tq->rx_have = 0;
			tq->rx_need = NVME_TCP_DIGEST_LEN;
		} else {
			rc = rx_data_done(tq);
		}
		break;
	case NVME_TCP_RX_DDGST:
		if (get_le32(tq->rx_hdr + sizeof(struct nvme_tcp_data_hdr)) != (tq->rx_crc ^ ~0u)) {
			return rx_error(tq, "data digest mismatch", 0, 0);
		}
		rc = rx_data_done(tq);
		break;
	default:
		break;
	}
	return rc < 0 ? rc : (int64_t)n;
}

/*
 * Parse what is buffered in rx_buf[rx_pos, rx_len), stopping at a PDU boundary once
 * @max_cpls (0 = no limit) requests completed. \return 0 or -EPROTO (qpair failed).
 */
int
nvme_tcp_rx_parse(struct nvme_tcp_qpair *tq, uint32_t max_cpls)
{
	while (tq->rx_pos < tq->rx_len) {
		int64_t n;

		if (max_cpls != 0 && tq->rx_cpls >= max_cpls && tq->rx_state == NVME_TCP_RX_CH &&
		    tq->rx_have == 0) {
			break;
		}
		n = rx_step(tq, tq->rx_buf + tq->rx_pos, tq->rx_len - tq->rx_pos);
		if (n < 0) {
			return (int)n;
		}
		tq->rx_pos += (uint32_t)n;
	}
	if (tq->rx_pos == tq->rx_len) {
		tq->rx_pos = 0;
		tq->rx_len = 0;
	}
	return 0;
}

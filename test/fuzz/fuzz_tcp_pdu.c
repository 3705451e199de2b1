/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz the NVMe/TCP receive path (lib/nvme/nvme_tcp_pdu.c): an I/O qpair of the TCP
 * transport whose socket is one end of a socketpair; the input is a script of host and
 * "controller" actions: submit reads and writes of various sizes, write raw bytes or
 * plausible PDUs (CapsuleResp, C2HData, R2T, TermReq with input-chosen CID, offsets,
 * lengths, flags, digests right or wrong) into the other end, poll, drain what the host
 * sent. The driver must complete every request exactly once, write nothing outside a
 * request's buffer (ASan), and fail the qpair rather than crash on any byte stream.
 */
#include "nvp_config.h"

#include <sys/socket.h>
#include <unistd.h>

#include "nvme/nvme_tcp_pdu.c"

#include "fuzz.h"

#define FZ_ENTRIES 8u
#define FZ_MAX_REQS 64u

struct fz_req {
	unsigned int calls;
	uint8_t *buf;
};

static struct fz_req g_reqs[FZ_MAX_REQS];
static uint32_t g_nreqs;

static void
fz_cb(void *arg, const struct nvme_cpl *cpl)
{
	struct fz_req *r = arg;

	(void)cpl;
	r->calls++;
	FZ_CHECK(r->calls == 1, "request %td completed %u times", r - g_reqs, r->calls);
}

struct fz_in {
	const uint8_t *p;
	size_t left;
};

static uint32_t
take(struct fz_in *in, uint32_t nbytes)
{
	uint32_t v = 0, i;

	for (i = 0; i < nbytes && in->left > 0; i++, in->left--) {
		v |= (uint32_t)*in->p++ << (8 * i);
	}
	return v;
}

static void
submit(struct nvp_nvme_qpair *qpair, struct fz_in *in)
{
	uint32_t op = take(in, 1);
	uint32_t len = take(in, 2) + 1u;
	struct fz_req *r;
	struct nvme_request *req;

	if (g_nreqs == FZ_MAX_REQS || (req = nvme_qpair_alloc_request(qpair)) == NULL) {
		return;
	}
	r = &g_reqs[g_nreqs++];
	r->buf = malloc(len); /* exact size: ASan sees a write past it */
	nvme_request_init(req, fz_cb, r);
	req->cmd.opc = (op & 1) ? NVME_OPC_WRITE : NVME_OPC_READ;
	req->cmd.nsid = 1;
	nvme_request_set_contig(req, r->buf, len);
	if ((op & 1) && r->buf != NULL) {
		memset(r->buf, 0x5a, len);
	}
	if (nvme_qpair_submit_request(qpair, req) != 0) {
		r->calls = 1; /* refused: never calls back */
	}
}

/* A plausible controller PDU, fields from the input. */
static void
send_pdu(int fd, struct nvme_tcp_qpair *tq, struct fz_in *in)
{
	uint8_t pdu[256 + 64];
	struct nvme_tcp_data_hdr *h = (void *)pdu;
	uint32_t type = take(in, 1) % 4, dlen = 0, hd = tq->hdgst ? 4u : 0u, plen, crc;

	memset(pdu, 0, sizeof(pdu));
	h->ch.hlen = 24;
	h->cccid = (uint16_t)(take(in, 1) % (FZ_ENTRIES + 2));
	h->datao = take(in, 2);
	h->datal = take(in, 2);
	h->ch.flags = (uint8_t)take(in, 1);
	switch (type) {
	case 0:
		h->ch.pdu_type = NVME_TCP_PDU_CAPSULE_RESP;
		((struct nvme_tcp_rsp *)(void *)pdu)->rccqe.cid = h->cccid;
		break;
	case 1:
		h->ch.pdu_type = NVME_TCP_PDU_C2H_DATA;
		dlen = NVP_MIN(h->datal, 256u);
		break;
	case 2:
		h->ch.pdu_type = NVME_TCP_PDU_R2T;
		break;
	default:
		h->ch.pdu_type = NVME_TCP_PDU_C2H_TERM_REQ;
		break;
	}
	h->ch.flags = (uint8_t)((h->ch.flags & ~(NVME_TCP_FLAG_HDGSTF | NVME_TCP_FLAG_DDGSTF)) |
				(hd && type < 3 ? NVME_TCP_FLAG_HDGSTF : 0) |
				(dlen && tq->ddgst ? NVME_TCP_FLAG_DDGSTF : 0));
	h->ch.pdo = dlen ? (uint8_t)(24 + hd) : 0;
	plen = 24 + (type < 3 ? hd : 0) + dlen + (dlen && tq->ddgst ? 4 : 0);
	h->ch.plen = plen;
	crc = nvme_tcp_digest(pdu, 24) ^ (take(in, 1) == 0xee ? 1u : 0u);
	if (type < 3 && hd) {
		memcpy(pdu + 24, &crc, 4);
	}
	if (dlen) {
		memset(pdu + 24 + hd, 0xc3, dlen);
		crc = nvme_tcp_digest(pdu + 24 + hd, dlen);
		if (tq->ddgst) {
			memcpy(pdu + 24 + hd + dlen, &crc, 4);
		}
	}
	(void)!send(fd, pdu, plen, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void
drain(int fd)
{
	uint8_t sink[4096];

	while (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0) {
	}
}

static struct nvme_tcp_qpair *
make_qpair(struct nvp_nvme_ctrlr *ctrlr, int fd, uint32_t flags)
{
	struct nvp_nvme_io_qpair_opts o;
	struct nvp_nvme_qpair *qpair = NULL;
	struct nvme_tcp_qpair *tq;

	memset(&o, 0, sizeof(o));
	o.io_queue_size = FZ_ENTRIES;
	o.io_queue_requests = FZ_MAX_REQS;
	if (g_nvme_tcp_transport.qpair_create(ctrlr, 1, &o, &qpair) != 0) {
		return NULL;
	}
	tq = nvme_tcp_qpair(qpair);
	tq->fd = fd;
	tq->conn = NVME_TCP_CONN_READY;
	tq->hdgst = (flags & 1) != 0;
	tq->ddgst = (flags & 2) != 0;
	tq->maxh2cdata = 4096u << ((flags >> 2) & 3);
	tq->incapsule_max = (flags & 16) ? 8192 : 0;
	qpair->delay_doorbell = (flags & 32) != 0;
	return tq;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool init;
	static struct nvme_tcp_ctrlr tc;
	struct fz_in in = { data, size };
	struct nvme_tcp_qpair *tq;
	int sv[2];
	uint32_t i, steps = 0;

	if (!init) {
		FZ_CHECK(fz_env_init() == 0, "env init");
		init = true;
	}
	memset(&tc, 0, sizeof(tc));
	snprintf(tc.ctrlr.name, sizeof(tc.ctrlr.name), "fuzz");
	tc.ctrlr.transport = &g_nvme_tcp_transport;
	tc.ctrlr.ticks_hz = nvp_env_get_ticks_hz();
	tc.ctrlr.max_xfer_size = 1u << 20;
	atomic_store(&tc.ctrlr.is_failed, false);
	FZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0, "socketpair");
	tq = make_qpair(&tc.ctrlr, sv[0], take(&in, 1));
	FZ_CHECK(tq != NULL, "qpair");
	g_nreqs = 0;
	memset(g_reqs, 0, sizeof(g_reqs));
	while (in.left > 0 && steps++ < 256) {
		uint32_t op = take(&in, 1) % 5, n;

		if (op == 0) {
			submit(&tq->qpair, &in);
		} else if (op == 1) {
			n = take(&in, 1) + 1u;
			n = NVP_MIN(n, (uint32_t)in.left);
			(void)!send(sv[1], in.p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
			in.p += n;
			in.left -= n;
		} else if (op == 2) {
			send_pdu(sv[1], tq, &in);
		} else if (op == 3) {
			(void)nvme_qpair_process(&tq->qpair, take(&in, 1) % 4);
		} else {
			drain(sv[1]);
		}
	}
	/* The end: the connection drops; everything completes exactly once. */
	close(sv[1]);
	for (i = 0; i < 4; i++) {
		drain(sv[0]);
		(void)nvme_qpair_process(&tq->qpair, 0);
	}
	for (i = 0; i < g_nreqs; i++) {
		FZ_CHECK(g_reqs[i].calls == 1, "request %u completed %u times", i, g_reqs[i].calls);
		free(g_reqs[i].buf);
	}
	g_nvme_tcp_transport.qpair_destroy(&tq->qpair);
	return 0;
}

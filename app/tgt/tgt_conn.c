/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_tgt's side of NVMe/TCP (NVMe/TCP Transport Specification 1.0, section 3.6): a
 * nonblocking connection's receive state machine and send queue.
 *
 * Receive: bytes go into one buffer (TGT_RXBUF, larger than any PDU accepted); a PDU is
 * handled once all of it is there, so a header is checked before its data is waited for
 * and nothing is parsed twice. Every header is checked against its type (HLEN, PLEN, PDO,
 * digest flags as negotiated, section 3.6.1), digests are verified (CRC32C, 3.6.1.4), an
 * H2CData PDU must answer an R2T of this connection in order and within the command's
 * length. Anything wrong is the host's fault: a C2HTermReq (3.6.2.7) with the field in
 * error, and this connection closes; no other is touched.
 * Send: requests queue their PDUs (R2T, or C2HData + CapsuleResp), gathered from the
 * queue's head into one sendmsg(); what the socket does not take waits for the next pass.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvpoll/env.h"
#include "nvpoll/util.h"
#include "tgt_conn.h"
#include "tgt_fabric.h"
#include "tgt_pdu.h"

#define TX_IOVS 64
#define DRAIN_QUIET_MS 50u /* a stopping target waits this long for the host to fall quiet */

int
tgt_conn_fd(const struct tgt_conn *c)
{
	return c->fd;
}

struct tgt_conn *
tgt_conn_next(const struct tgt_conn *c)
{
	return c->next;
}

uint8_t *
tgt_req_buf(struct tgt_req *r)
{
	if (r->buf == NULL) {
		r->buf = nvp_env_dma_malloc(TGT_MAX_IO, 4096, NULL);
	}
	return r->buf;
}

void
tgt_req_status(struct tgt_req *r, uint8_t sct, uint8_t sc)
{
	tgt_fabric_status(&r->cpl, sct, sc);
}

/* ---- send ---- */

static void
tx_queue(struct tgt_conn *c, struct tgt_req *r)
{
	r->next = NULL;
	r->iov_at = 0;
	*c->tx_tail = r;
	c->tx_tail = &r->next;
}

/* A PDU of @r (header @hdr, HLEN @hlen, @dlen bytes of data at @data) framed as this
 * connection negotiated, after the iovecs @r already has. */
static void
frame(struct tgt_conn *c, struct tgt_req *r, void *hdr, uint32_t hlen, const void *data,
      uint32_t dlen, uint32_t dg[2])
{
	r->niov += tgt_pdu_frame(&r->iov[r->niov], hdr, hlen, data, dlen, c->hdgst, c->ddgst, dg);
}

void
tgt_req_complete(struct tgt_req *r)
{
	struct tgt_conn *c = r->c;
	struct nvme_tcp_rsp *rsp = (void *)r->hdr_rsp;

	r->niov = 0;
	r->tx_r2t = false;
	if (r->send_data && r->len != 0 && !nvme_cpl_is_error(&r->cpl)) {
		struct nvme_tcp_data_hdr *h = (void *)r->hdr_data;

		tgt_pdu_c2h(h, r->cmd.cid, 0, r->len, NVME_TCP_FLAG_LAST_PDU);
		frame(c, r, h, NVME_TCP_DATA_HLEN, r->buf, r->len, r->dg_data);
	}
	tgt_pdu_rsp(rsp, &r->cpl, r->cmd.cid, c->qid);
	frame(c, r, rsp, NVME_TCP_RSP_HLEN, NULL, 0, r->dg_rsp);
	r->state = REQ_TX;
	tx_queue(c, r);
}

static void
send_r2t(struct tgt_conn *c, struct tgt_req *r)
{
	struct nvme_tcp_r2t_hdr *h = (void *)r->hdr_data;

	tgt_pdu_r2t(h, r->cmd.cid, r->idx, 0, r->len);
	r->niov = 0;
	frame(c, r, h, NVME_TCP_R2T_HLEN, NULL, 0, r->dg_data);
	r->tx_r2t = true;
	tx_queue(c, r);
}

static void
req_free(struct tgt_conn *c, struct tgt_req *r)
{
	r->state = REQ_FREE;
	c->busy--;
	r->next = c->free;
	c->free = r;
}

/* A PDU of @r went out entirely. */
static void
tx_done(struct tgt_conn *c, struct tgt_req *r)
{
	if (r == &c->ctl) {
		return;
	}
	if (r->tx_r2t) {
		r->tx_r2t = false;
		return;
	}
	req_free(c, r);
}

/* Send what the socket takes. \return bytes sent, or -1 (the connection is broken). */
static ssize_t
tx_flush(struct tgt_conn *c)
{
	struct iovec iov[TX_IOVS];
	struct msghdr m = { .msg_iov = iov };
	ssize_t total = 0;

	while (c->tx_head != NULL) {
		struct tgt_req *r;
		size_t n = 0;
		ssize_t s;

		for (r = c->tx_head; r != NULL && n + TGT_REQ_IOVS <= TX_IOVS; r = r->next) {
			for (uint32_t i = r->iov_at; i < r->niov; i++) {
				iov[n++] = r->iov[i];
			}
		}
		m.msg_iovlen = n;
		s = sendmsg(c->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (s < 0) {
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? total :
											   -1;
		}
		total += s;
		while ((r = c->tx_head) != NULL && s >= 0) {
			while (r->iov_at < r->niov && (size_t)s >= r->iov[r->iov_at].iov_len) {
				s -= (ssize_t)r->iov[r->iov_at].iov_len;
				r->iov_at++;
			}
			if (r->iov_at < r->niov) {
				r->iov[r->iov_at].iov_base = (uint8_t *)r->iov[r->iov_at].iov_base +
							     s;
				r->iov[r->iov_at].iov_len -= (size_t)s;
				return total; /* the socket is full */
			}
			c->tx_head = r->next;
			if (c->tx_head == NULL) {
				c->tx_tail = &c->tx_head;
			}
			tx_done(c, r);
			if (s == 0 && c->tx_head != NULL && c->tx_head->iov_at == 0) {
				break;
			}
		}
	}
	return total;
}

/* ---- errors of the host ---- */

/* A fatal PDU error: C2HTermReq naming the field, then the connection closes. */
static int
host_error(struct tgt_conn *c, const char *what, uint16_t fes, uint32_t fei)
{
	struct nvme_tcp_term_req_hdr *h = (void *)c->term;

	fprintf(stderr, "nvp_tgt: %s qid %u: bad PDU from the host: %s; connection closed\n",
		c->peer, c->qid, what);
	atomic_fetch_add(&c->th->t->stats.bad_pdus, 1);
	tgt_pdu_term(h, fes, fei);
	if (c->ctl.niov == 0 || c->ctl.iov_at == c->ctl.niov) {
		c->ctl.niov = 1;
		c->ctl.iov[0] = (struct iovec){ c->term, NVME_TCP_TERM_HLEN };
		tx_queue(c, &c->ctl);
	}
	tgt_conn_close(c, NULL);
	return -1;
}

/* A check of the shared codec failed. */
static int
pdu_error(struct tgt_conn *c, const struct tgt_pdu_err *e)
{
	return host_error(c, e->why, e->fes, e->fei);
}

/* ---- receive ---- */

/* Header digest of a PDU starting at @p: present and right when negotiated. */
static int
check_hdgst(struct tgt_conn *c, const uint8_t *p, uint32_t hlen)
{
	struct tgt_pdu_err e;

	return tgt_pdu_check_hdgst(p, hlen, c->hdgst, &e) == 0 ? 0 : pdu_error(c, &e);
}

/* Data of a PDU (PDO, PLEN, DDGSTF checked; digest verified). \return its bytes or NULL. */
static const uint8_t *
pdu_data(struct tgt_conn *c, const uint8_t *p, uint32_t len)
{
	const struct nvme_tcp_common_hdr *ch = (const void *)p;
	struct tgt_pdu_err e;
	uint32_t d;

	if (tgt_pdu_check_data(ch, len, c->hdgst, c->ddgst, &e) < 0) {
		(void)pdu_error(c, &e);
		return NULL;
	}
	if (c->ddgst) {
		memcpy(&d, p + ch->pdo + len, 4);
		if (tgt_pdu_check_ddgst(p + ch->pdo, len, d, &e) != 0) {
			(void)pdu_error(c, &e);
			return NULL;
		}
	}
	return p + ch->pdo;
}

static int
rx_icreq(struct tgt_conn *c, const uint8_t *p)
{
	struct tgt_pdu_err e;

	if (tgt_pdu_icreq((const void *)p, c->th->t->opts.maxh2cdata, (void *)c->ic_resp, &c->hdgst,
			  &c->ddgst, &e) != 0) {
		return pdu_error(c, &e);
	}
	c->ctl.niov = 1;
	c->ctl.iov[0] = (struct iovec){ c->ic_resp, NVME_TCP_IC_LEN };
	tx_queue(c, &c->ctl);
	c->state = CONN_RUN;
	return 0;
}

/* The requests of a queue, made with its first capsule (the Connect): as many as any
 * SQSIZE this target grants (CAP.MQES + 1); their data buffers come at first use. */
static int
reqs_alloc(struct tgt_conn *c, uint32_t n)
{
	c->reqs = calloc(n, sizeof(*c->reqs));
	if (c->reqs == NULL) {
		return -ENOMEM;
	}
	c->num_reqs = n;
	c->free = NULL;
	for (uint32_t i = n; i-- > 0;) {
		c->reqs[i].c = c;
		c->reqs[i].idx = (uint16_t)i;
		c->busy++;
		req_free(c, &c->reqs[i]);
	}
	return 0;
}

/* Data in or out of a command: the capsule's SGL checked (NVMe-oF 1.1 section 3.3). */
static int
rx_capsule_data(struct tgt_conn *c, const uint8_t *p, struct tgt_req *r)
{
	const struct nvme_tcp_common_hdr *ch = (const void *)p;
	uint32_t max_inc = c->qid == 0 ? 8192u : c->th->t->opts.in_capsule;
	struct tgt_pdu_capsule cap;
	struct tgt_pdu_err e;
	const uint8_t *d;

	if (tgt_pdu_capsule(ch, &r->cmd, c->hdgst, max_inc, TGT_MAX_IO, &cap, &e) != 0) {
		return pdu_error(c, &e);
	}
	r->len = cap.len;
	if (cap.sc != 0) {
		tgt_req_status(r, cap.sct, cap.sc);
		return 1;
	}
	if (cap.inc) {
		d = pdu_data(c, p, r->len);
		if (d == NULL || tgt_req_buf(r) == NULL) {
			return -1;
		}
		memcpy(r->buf, d, r->len);
		r->got = r->len;
	}
	return 0;
}

static bool
host_to_ctrlr(const struct tgt_conn *c, const struct nvme_cmd *cmd)
{
	if (cmd->opc == NVME_OPC_FABRIC) {
		return ((const struct nvme_fabric_prop_cmd *)cmd)->fctype == NVME_FCTYPE_CONNECT;
	}
	if (c->qid == 0) {
		return cmd->opc == NVME_OPC_SET_FEATURES; /* (host to controller data: none kept) */
	}
	return (cmd->opc & 3u) == 1u;
}

static int
rx_capsule(struct tgt_conn *c, const uint8_t *p)
{
	const struct nvme_tcp_common_hdr *ch = (const void *)p;
	struct tgt_req *r;
	int rc;

	if (ch->hlen != NVME_TCP_CMD_HLEN || check_hdgst(c, p, NVME_TCP_CMD_HLEN) != 0) {
		return ch->hlen != NVME_TCP_CMD_HLEN ?
			       host_error(c, "CapsuleCmd HLEN", NVME_TCP_FES_INVALID_HEADER_FIELD,
					  2) :
			       -1;
	}
	if (c->reqs == NULL && reqs_alloc(c, TGT_MQES + 1) != 0) {
		tgt_conn_close(c, "no memory for its requests");
		return -1;
	}
	r = c->free;
	if (r == NULL) {
		return host_error(c, "more commands than SQSIZE allows",
				  NVME_TCP_FES_PDU_SEQUENCE_ERROR, 0);
	}
	c->free = r->next;
	c->busy++;
	memcpy(&r->cmd, p + 8, sizeof(r->cmd));
	memset(&r->cpl, 0, sizeof(r->cpl));
	r->got = 0;
	r->pending = 0;
	r->send_data = false;
	r->tx_r2t = false;
	atomic_fetch_add(&c->th->t->stats.commands, 1);
	rc = rx_capsule_data(c, p, r);
	if (rc < 0) {
		req_free(c, r);
		return -1;
	}
	if (rc > 0 || c->draining) {
		/* the target stops: a command that was not begun is not begun now */
		if (c->draining) {
			tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION);
			r->len = 0;
		}
		tgt_req_complete(r);
		return 0;
	}
	if (r->len != 0 && r->got == 0 && host_to_ctrlr(c, &r->cmd)) {
		if (tgt_req_buf(r) == NULL) {
			tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_INTERNAL_DEVICE_ERROR);
			tgt_req_complete(r);
			return 0;
		}
		r->state = REQ_WAIT_H2C;
		send_r2t(c, r);
		return 0;
	}
	r->state = REQ_EXEC;
	tgt_cmd_exec(c, r);
	return 0;
}

static int
rx_h2c(struct tgt_conn *c, const uint8_t *p)
{
	const struct nvme_tcp_data_hdr *h = (const void *)p;
	struct tgt_pdu_err e;
	struct tgt_req *r;
	const uint8_t *d;

	if (h->ch.hlen != NVME_TCP_DATA_HLEN) {
		return host_error(c, "H2CData HLEN", NVME_TCP_FES_INVALID_HEADER_FIELD, 2);
	}
	if (check_hdgst(c, p, NVME_TCP_DATA_HLEN) != 0) {
		return -1;
	}
	r = h->ttag < c->num_reqs ? &c->reqs[h->ttag] : NULL;
	if (r == NULL || r->state != REQ_WAIT_H2C || r->cmd.cid != h->cccid || r->tx_r2t) {
		/* (tx_r2t: its R2T is not sent yet, so this cannot answer it) */
		return host_error(c, "H2CData for no R2T of this queue",
				  NVME_TCP_FES_INVALID_HEADER_FIELD,
				  offsetof(struct nvme_tcp_data_hdr, ttag));
	}
	if (tgt_pdu_check_h2c(h, r->got, r->len, c->th->t->opts.maxh2cdata, &e) != 0) {
		return pdu_error(c, &e);
	}
	d = pdu_data(c, p, h->datal);
	if (d == NULL) {
		return -1;
	}
	memcpy(r->buf + r->got, d, h->datal);
	r->got += h->datal;
	if (r->got == r->len) {
		r->state = REQ_EXEC;
		tgt_cmd_exec(c, r);
	}
	return 0;
}

/* The largest PLEN a PDU of this type may have here; 0 = a type the host may not send. */
static uint32_t
max_plen(const struct tgt_conn *c, uint8_t type)
{
	return tgt_pdu_max_plen(type, c->hdgst, c->ddgst,
				c->qid == 0 ? 8192u : c->th->t->opts.in_capsule,
				c->th->t->opts.maxh2cdata);
}

/* One PDU whose first bytes are at @p with @avail bytes there. \return its length when
 * handled, 0 when more bytes are needed, -1 the connection closes. */
static int64_t
rx_pdu(struct tgt_conn *c, const uint8_t *p, uint32_t avail)
{
	const struct nvme_tcp_common_hdr *ch = (const void *)p;
	uint32_t max;

	if (c->state == CONN_IC) {
		if (avail < NVME_TCP_IC_LEN) {
			return 0;
		}
		return rx_icreq(c, p) == 0 ? (int64_t)NVME_TCP_IC_LEN : -1;
	}
	max = max_plen(c, ch->pdu_type);
	if (max == 0) {
		return host_error(c, "a PDU type the host may not send",
				  NVME_TCP_FES_INVALID_HEADER_FIELD, 0);
	}
	if (ch->plen > max || ch->plen < ch->hlen || ch->hlen < 8) {
		return host_error(c, "PLEN or HLEN out of range", NVME_TCP_FES_INVALID_HEADER_FIELD,
				  4);
	}
	if (avail < ch->plen) {
		return 0;
	}
	switch (ch->pdu_type) {
	case NVME_TCP_PDU_CAPSULE_CMD:
		return rx_capsule(c, p) == 0 ? (int64_t)ch->plen : -1;
	case NVME_TCP_PDU_H2C_DATA:
		return rx_h2c(c, p) == 0 ? (int64_t)ch->plen : -1;
	default: /* H2CTermReq: the host ends the connection */
		tgt_conn_close(c, "the host sent H2CTermReq");
		return -1;
	}
}

/* Read what the socket has and handle every whole PDU. \return > 0 work, 0 none, -1 end. */
static int
rx_poll(struct tgt_conn *c)
{
	ssize_t n;
	int work = 0;

	if (c->rx_end == TGT_RXBUF && c->rx_start > 0) {
		memmove(c->rx, c->rx + c->rx_start, c->rx_end - c->rx_start);
		c->rx_end -= c->rx_start;
		c->rx_start = 0;
	}
	n = recv(c->fd, c->rx + c->rx_end, TGT_RXBUF - c->rx_end, MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
		tgt_conn_close(c, NULL);
		return -1;
	}
	if (n < 0) {
		return 0;
	}
	c->rx_end += (uint32_t)n;
	if (c->draining) {
		c->last_rx_ms = tgt_now_ms();
	}
	while (c->state != CONN_CLOSING && c->rx_end - c->rx_start >= 8) {
		int64_t used = rx_pdu(c, c->rx + c->rx_start, c->rx_end - c->rx_start);

		if (used < 0) {
			return -1;
		}
		if (used == 0) {
			break;
		}
		c->rx_start += (uint32_t)used;
		work = 1;
	}
	if (c->rx_start == c->rx_end) {
		c->rx_start = c->rx_end = 0;
	} else if (c->rx_start > TGT_RXBUF / 2) {
		memmove(c->rx, c->rx + c->rx_start, c->rx_end - c->rx_start);
		c->rx_end -= c->rx_start;
		c->rx_start = 0;
	}
	return work | (n > 0);
}

/* ---- life ---- */

int
tgt_conn_create(struct tgt_thread *th, int fd, uint32_t lidx)
{
	struct tgt_conn *c = calloc(1, sizeof(*c));
	struct sockaddr_storage sa;
	socklen_t salen = sizeof(sa);
	char host[INET6_ADDRSTRLEN] = "?";

	if (c != NULL) {
		c->rx = malloc(TGT_RXBUF);
	}
	if (c == NULL || c->rx == NULL) {
		if (c != NULL) {
			free(c);
		}
		close(fd);
		return -ENOMEM;
	}
	if (getpeername(fd, (struct sockaddr *)&sa, &salen) == 0) {
		if (sa.ss_family == AF_INET6) {
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&sa)->sin6_addr, host,
				  sizeof(host));
			snprintf(c->peer, sizeof(c->peer), "[%s]:%u", host,
				 ntohs(((struct sockaddr_in6 *)&sa)->sin6_port));
		} else {
			inet_ntop(AF_INET, &((struct sockaddr_in *)&sa)->sin_addr, host,
				  sizeof(host));
			snprintf(c->peer, sizeof(c->peer), "%s:%u", host,
				 ntohs(((struct sockaddr_in *)&sa)->sin_port));
		}
	}
	c->th = th;
	c->fd = fd;
	c->lidx = lidx;
	c->state = CONN_IC;
	c->tx_tail = &c->tx_head;
	c->ctl.c = c;
	c->next = th->conns;
	th->conns = c;
	th->num_conns++;
	atomic_fetch_add(&th->t->stats.connections, 1);
	return 0;
}

void
tgt_conn_close(struct tgt_conn *c, const char *why)
{
	if (c->state == CONN_CLOSING) {
		return;
	}
	if (why != NULL) {
		fprintf(stderr, "nvp_tgt: %s qid %u: %s; connection closed\n", c->peer, c->qid,
			why);
	}
	c->state = CONN_CLOSING;
	c->close_deadline_ms = tgt_now_ms() + 10000u;
}

static void
conn_free(struct tgt_conn *c)
{
	struct tgt_thread *th = c->th;
	struct tgt_conn **pp;

	tgt_io_close(c);
	tgt_ctrlr_detach(c);
	for (pp = &th->conns; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	th->num_conns--;
	shutdown(c->fd, SHUT_RDWR);
	close(c->fd);
	for (uint32_t i = 0; i < c->num_reqs; i++) {
		nvp_env_dma_free(c->reqs[i].buf);
	}
	free(c->reqs);
	free(c->rx);
	free(c);
}

/* A closing connection: its I/O done, what it has to send sent (or the deadline passed). */
static int
close_poll(struct tgt_conn *c)
{
	bool late = tgt_now_ms() > c->close_deadline_ms;

	if (c->outstanding != 0 && !late) {
		(void)tx_flush(c);
		return 0;
	}
	if (c->outstanding != 0) {
		return 0; /* a request at the bdev owns memory of this connection: wait */
	}
	if (c->tx_head != NULL && !late && tx_flush(c) >= 0 && c->tx_head != NULL) {
		return 0;
	}
	conn_free(c);
	return -1;
}

void
tgt_conn_drain(struct tgt_conn *c)
{
	if (c->draining || c->state == CONN_CLOSING) {
		return;
	}
	c->draining = true;
	c->last_rx_ms = tgt_now_ms();
	c->close_deadline_ms = tgt_now_ms() + 5000u;
	for (uint32_t i = 0; i < c->num_reqs; i++) {
		struct tgt_req *r = &c->reqs[i];

		if (r->state == REQ_HELD) { /* an AER: answered, as a device deleting its queue */
			tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION);
			tgt_req_complete(r);
		}
	}
}

int
tgt_conn_poll(struct tgt_conn *c)
{
	ssize_t sent;
	int work;

	if (c->state != CONN_CLOSING && c->ctrlr != NULL && tgt_ctrlr_is_dead(c)) {
		tgt_conn_close(c, NULL);
	}
	if (c->state == CONN_CLOSING) {
		return close_poll(c);
	}
	if (c->retry != NULL) {
		tgt_io_retry(c);
	}
	work = rx_poll(c);
	if (work < 0) {
		return c->state == CONN_CLOSING ? close_poll(c) : -1;
	}
	sent = tx_flush(c);
	if (sent < 0) {
		tgt_conn_close(c, NULL);
		return close_poll(c);
	}
	if (c->draining && ((c->busy == 0 && c->tx_head == NULL &&
			     tgt_now_ms() > c->last_rx_ms + DRAIN_QUIET_MS) ||
			    tgt_now_ms() > c->close_deadline_ms)) {
		/* all it had begun is answered, and the host has stopped sending */
		tgt_conn_close(c, NULL);
		return close_poll(c);
	}
	return work | (sent > 0);
}

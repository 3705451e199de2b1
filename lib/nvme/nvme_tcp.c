/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NVMe/TCP transport (NVMe/TCP Transport Specification 1.0, NVMe-oF 1.1): one TCP
 * connection per qpair, a non-blocking socket polled by the qpair's owner thread.
 *
 *   connect:   socket, ICReq/ICResp (digests, MAXH2CDATA, CPDA; section 3.3), then the
 *              fabrics Connect command (admin: CNTLID 0xFFFF, the controller answers with
 *              its CNTLID; I/O queues name it) with the host NQN and host ID.
 *   registers: Property Get/Set on the admin queue (NVMe-oF 1.1 section 3.3); the
 *              generic init state machine (CC.EN, CSTS.RDY, identify...) runs unchanged.
 *   submit:    a CapsuleCmd per request, in-capsule data for writes up to IOCCSZ,
 *              otherwise the controller asks for it with R2T and gets H2CData; the
 *              generic "doorbell" is one sendmsg() for the batch.
 *   complete:  recv() into a per-qpair buffer, then nvme_tcp_rx_parse() (nvme_tcp_pdu.c).
 *   keep-alive: a Keep Alive command every KATO/2 (NVMe 1.4 section 7.12), sent from
 *              whichever thread polls one of the controller's queues first once it is
 *              due: the admin poll, or an I/O poll that takes the admin lock without
 *              waiting (doc/nvme_tcp.md says which thread runs the admin callbacks then).
 *
 * Connect, Property Get/Set use a command identifier of their own (num_trackers, past
 * every tracker) so they can run while requests are outstanding. A socket error or a
 * malformed PDU fails the qpair: its requests complete with a host path error; on the
 * admin queue the controller is marked failed, and nvp_nvme_ctrlr_reset() reconnects.
 * With opts.ctrlr_loss_timeout_sec set, a lost connection makes the controller
 * reconnecting instead (nvme_ctrlr_reconnect.c): an I/O qpair keeps its requests for its
 * owner to take back and send again after the reconnect; nothing fails.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nvme_tcp_internal.h"

/* ---------------------------------------------------------------------------------------
 * Failure
 * ------------------------------------------------------------------------------------- */

/* Best effort: tell the controller why (H2CTermReq, section 3.6.2.4), never waiting. */
static void
send_term_req(int fd, uint16_t fes, uint32_t fei)
{
	struct nvme_tcp_term_req_hdr t;

	memset(&t, 0, sizeof(t));
	t.ch.pdu_type = NVME_TCP_PDU_H2C_TERM_REQ;
	t.ch.hlen = NVME_TCP_TERM_HLEN;
	t.ch.plen = NVME_TCP_TERM_HLEN;
	t.fes = fes;
	t.fei = fei;
	(void)send(fd, &t, sizeof(t), MSG_DONTWAIT | MSG_NOSIGNAL);
}

static void
close_conn(struct nvme_tcp_qpair *tq)
{
	struct nvme_tcp_req *treq;
	uint32_t i;

	if (tq->fd >= 0) {
		close(tq->fd);
		tq->fd = -1;
	}
	while ((treq = STAILQ_FIRST(&tq->send_q)) != NULL) {
		STAILQ_REMOVE_HEAD(&tq->send_q, send_link);
		treq->send_kind = NVME_TCP_SEND_NONE;
	}
	for (i = 0; i <= tq->qpair.num_trackers; i++) {
		tq->treqs[i].req = NULL;
		tq->treqs[i].send_kind = NVME_TCP_SEND_NONE;
		tq->treqs[i].r2t_active = false;
		tq->treqs[i].resp_pending = false;
	}
	nvme_tcp_rx_reset(tq);
}

/*
 * The connection is unusable: close it, complete every request with a host path error
 * (NVMe 1.4 section 4.6.1.2.4: the host may retry on another path or after reconnect).
 */
void
nvme_tcp_qpair_fail(struct nvme_tcp_qpair *tq, const char *why, uint16_t fes, uint32_t fei)
{
	struct nvp_nvme_qpair *qpair = &tq->qpair;

	if (tq->conn == NVME_TCP_CONN_FAILED) {
		return;
	}
	NVP_ERRLOG("%s: qpair %u: %s; closing the connection (%u requests outstanding)",
		   qpair->ctrlr->name, qpair->id, why, qpair->num_outstanding);
	if (fes != 0 && tq->fd >= 0) {
		send_term_req(tq->fd, fes, fei);
	}
	close_conn(tq);
	tq->conn = NVME_TCP_CONN_FAILED;
	tq->fail_reason = why;
	if (!tq->fabric_done && tq->fabric_req.cb_arg != NULL) {
		memset(&tq->fabric_cpl, 0, sizeof(tq->fabric_cpl));
		nvme_cpl_set_status(&tq->fabric_cpl, NVME_SCT_PATH, NVME_SC_HOST_PATH_ERROR, false);
		tq->fabric_done = true;
	}
	if (!qpair->is_admin && !qpair->deleting && nvme_ctrlr_reconnect_enabled(qpair->ctrlr)) {
		/* the owner's next poll takes the requests back (nvme_qpair_recovery.c) */
		nvme_qpair_conn_lost(qpair, "an I/O queue's TCP connection failed");
		return;
	}
	qpair->failed = true;
	/* a reset reconnects: the requests may be sent again */
	nvme_qpair_abort_all(qpair, NVME_SCT_PATH, NVME_SC_HOST_PATH_ERROR, false);
	if (qpair->is_admin) {
		nvme_ctrlr_conn_lost(qpair->ctrlr, "the admin queue's TCP connection failed");
	}
}

/* ---------------------------------------------------------------------------------------
 * Socket I/O
 * ------------------------------------------------------------------------------------- */

/* Write what the send queue holds, as far as the socket takes it. \return 0 or -ENXIO. */
static int
tcp_flush(struct nvme_tcp_qpair *tq)
{
	struct iovec iov[NVME_TCP_MAX_IOV];
	struct msghdr msg;
	struct nvme_tcp_req *treq;

	while (!STAILQ_EMPTY(&tq->send_q)) {
		uint32_t n_iov = 0, k;
		ssize_t rc;
		size_t n;

		STAILQ_FOREACH (treq, &tq->send_q, send_link) {
			k = nvme_tcp_send_iov(tq, treq, iov + n_iov, NVME_TCP_MAX_IOV - n_iov);
			if (k == 0) {
				break;
			}
			n_iov += k;
		}
		if (nvp_unlikely(n_iov == 0)) {
			nvme_tcp_qpair_fail(tq, "a request's scatter list ended before its data", 0,
					    0);
			return -ENXIO;
		}
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = iov;
		msg.msg_iovlen = n_iov;
		rc = sendmsg(tq->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (rc < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				return 0;
			}
			if (errno == EINTR) {
				continue;
			}
			nvme_tcp_qpair_fail(tq, "send failed (connection lost)", 0, 0);
			return -ENXIO;
		}
		n = (size_t)rc;
		while ((treq = STAILQ_FIRST(&tq->send_q)) != NULL) {
			if (!nvme_tcp_send_advance(tq, treq, &n)) {
				if (n == 0) {
					break;
				}
				continue; /* the next H2CData PDU of the same R2T */
			}
			STAILQ_REMOVE_HEAD(&tq->send_q, send_link);
			treq->send_kind = NVME_TCP_SEND_NONE;
			if (treq->resp_pending) {
				nvme_tcp_treq_done(tq, treq, &treq->resp);
			}
			if (n == 0) {
				break;
			}
		}
	}
	return 0;
}

/* Read what the socket has into the free end of rx_buf. \return bytes, 0, or -ENXIO. */
static ssize_t
tcp_recv(struct nvme_tcp_qpair *tq)
{
	ssize_t rc;

	if (tq->rx_pos != 0) {
		memmove(tq->rx_buf, tq->rx_buf + tq->rx_pos, tq->rx_len - tq->rx_pos);
		tq->rx_len -= tq->rx_pos;
		tq->rx_pos = 0;
	}
	if (tq->rx_len == NVME_TCP_RX_BUF_SIZE) {
		return 0;
	}
	do {
		rc = recv(tq->fd, tq->rx_buf + tq->rx_len, NVME_TCP_RX_BUF_SIZE - tq->rx_len,
			  MSG_DONTWAIT);
	} while (rc < 0 && errno == EINTR);
	if (rc > 0) {
		tq->rx_len += (uint32_t)rc;
		return rc;
	}
	if (rc < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		return 0;
	}
	nvme_tcp_qpair_fail(tq,
			    rc == 0 ? "the controller closed the connection" :
				      "receive failed (connection lost)",
			    0, 0);
	return -ENXIO;
}

/* Take apart what was received; a stream that breaks the rules fails the qpair. */
static int
rx_parse(struct nvme_tcp_qpair *tq, uint32_t max)
{
	int rc = nvme_tcp_rx_parse(tq, max);

	if (rc != 0) {
		nvme_tcp_qpair_fail(tq, tq->rx_fail_why != NULL ? tq->rx_fail_why : "bad PDU",
				    tq->rx_fail_fes, tq->rx_fail_fei);
	}
	return rc;
}

/* One round: send what is queued, read, parse, send what the PDUs asked for (H2CData). */
static int
tcp_poll_once(struct nvme_tcp_qpair *tq, uint32_t max)
{
	ssize_t got;
	int rounds = 0;

	if (tq->conn != NVME_TCP_CONN_READY && tq->conn != NVME_TCP_CONN_IC) {
		return -ENXIO;
	}
	if (!STAILQ_EMPTY(&tq->send_q) && tcp_flush(tq) != 0) {
		return -ENXIO;
	}
	do {
		if (rx_parse(tq, max) != 0) {
			return -ENXIO;
		}
		if (max != 0 && tq->rx_cpls >= max) {
			break;
		}
		got = tcp_recv(tq);
		if (got < 0) {
			return -ENXIO;
		}
		if (rx_parse(tq, max) != 0) {
			return -ENXIO;
		}
	} while (got == (ssize_t)NVME_TCP_RX_BUF_SIZE && ++rounds < 4);
	if (!STAILQ_EMPTY(&tq->send_q) && tcp_flush(tq) != 0) {
		return -ENXIO;
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * Connection set-up (not the I/O path: blocking with a deadline is fine here)
 * ------------------------------------------------------------------------------------- */

static uint64_t
deadline_ms(struct nvp_nvme_ctrlr *ctrlr, uint32_t ms)
{
	return nvme_ticks(ctrlr) + nvme_ms_to_ticks(ctrlr, ms);
}

/* Poll until @done (or the connection state) says so. \return 0, -ETIMEDOUT, -ENXIO. */
static int
tcp_wait(struct nvme_tcp_qpair *tq, const bool *done, uint64_t deadline)
{
	struct nvp_nvme_ctrlr *ctrlr = tq->qpair.ctrlr;

	for (;;) {
		struct pollfd pfd = { .fd = tq->fd, .events = POLLIN };
		bool ok = done != NULL ? *done : tq->conn == NVME_TCP_CONN_READY;

		if (ok) {
			return 0;
		}
		if (tcp_poll_once(tq, 0) != 0) {
			return done != NULL && *done ? 0 : -ENXIO;
		}
		if (done != NULL ? *done : tq->conn == NVME_TCP_CONN_READY) {
			return 0;
		}
		if (nvme_ticks(ctrlr) >= deadline) {
			return -ETIMEDOUT;
		}
		/* in a reconnect's reset: the next poll of its thread looks again */
		if (STAILQ_EMPTY(&tq->send_q) && !nvme_fiber_yield()) {
			(void)poll(&pfd, 1, 1);
		}
	}
}

static int
sock_open(struct nvme_tcp_ctrlr *tc, uint64_t deadline, int *out)
{
	struct addrinfo hints = { .ai_family = tc->family,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	int fd, one = 1, rc, err = 0;
	socklen_t len = sizeof(err);

	rc = getaddrinfo(tc->traddr, tc->trsvcid, &hints, &ai);
	if (rc != 0 || ai == NULL) {
		NVP_ERRLOG("%s: traddr %s trsvcid %s: not a numeric address and port (%s)",
			   tc->ctrlr.name, tc->traddr, tc->trsvcid, gai_strerror(rc));
		return -EINVAL;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		freeaddrinfo(ai);
		return -errno;
	}
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	if (rc != 0 && errno == EINPROGRESS && deadline == 0) {
		*out = fd;
		return 1; /* no deadline: the caller polls for POLLOUT */
	}
	if (rc != 0 && errno == EINPROGRESS) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		int wait_ms = 0;

		/* in a fiber (a multipath path's reset): a look per poll of its thread */
		while ((rc = poll(&pfd, 1, wait_ms)) == 0 && nvme_ticks(&tc->ctrlr) < deadline) {
			wait_ms = nvme_fiber_yield() ? 0 : 10;
		}
		if (rc <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
			rc = -1;
			errno = err != 0 ? err : ETIMEDOUT;
		} else {
			rc = 0;
		}
	}
	if (rc != 0) {
		rc = -errno;
		/* An attach says it here; an attached controller's reset says it once, in its
		 * own error line (conn_fail_why), a reconnect attempt in its one line. */
		if (!atomic_load(&tc->ctrlr.resetting) && !nvme_ctrlr_is_reconnecting(&tc->ctrlr)) {
			NVP_ERRLOG("%s: cannot connect to %s port %s: %s%s", tc->ctrlr.name,
				   tc->traddr, tc->trsvcid, strerror(-rc),
				   rc == -ECONNREFUSED ? " (is a target listening there?)" : "");
		}
		close(fd);
		return rc;
	}
	*out = fd;
	return 0;
}

/* Send a buffer completely before @deadline (the ICReq: nothing else is queued yet). */
static int
send_all(int fd, const void *buf, size_t len, struct nvp_nvme_ctrlr *ctrlr, uint64_t deadline)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t rc = send(fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (rc > 0) {
			p += rc;
			len -= (size_t)rc;
		} else if (rc < 0 && errno != EAGAIN && errno != EINTR) {
			return -ENXIO;
		} else if (nvme_ticks(ctrlr) >= deadline) {
			return -ETIMEDOUT;
		}
	}
	return 0;
}

/* A fresh connection's first step: the digests it asks for, and its ICReq. */
static void
ic_begin(struct nvme_tcp_qpair *tq, const struct nvme_tcp_ctrlr *tc, struct nvme_tcp_ic_req *ic)
{
	tq->hdgst = tc->want_hdgst;
	tq->ddgst = tc->want_ddgst;
	tq->cpda = 0;
	tq->conn = NVME_TCP_CONN_IC;
	tq->fabric_done = false;
	tq->fail_reason = NULL;
	nvme_tcp_build_ic_req(ic, tq->hdgst, tq->ddgst);
}

/* Socket and ICReq/ICResp: the connection is READY for capsules. */
static int
conn_open(struct nvme_tcp_qpair *tq, uint64_t deadline)
{
	struct nvme_tcp_ctrlr *tc = nvme_tcp_ctrlr(tq->qpair.ctrlr);
	struct nvme_tcp_ic_req ic;
	int rc;

	close_conn(tq);
	rc = sock_open(tc, deadline, &tq->fd);
	if (rc != 0) {
		tq->conn = NVME_TCP_CONN_FAILED;
		return rc;
	}
	ic_begin(tq, tc, &ic);
	rc = send_all(tq->fd, &ic, sizeof(ic), tq->qpair.ctrlr, deadline);
	if (rc == 0) {
		rc = tcp_wait(tq, NULL, deadline);
	}
	if (rc != 0) {
		NVP_ERRLOG("%s: qpair %u: no ICResp from the controller (%s)",
			   tq->qpair.ctrlr->name, tq->qpair.id,
			   tq->fail_reason ? tq->fail_reason : strerror(-rc));
		close_conn(tq);
		tq->conn = NVME_TCP_CONN_FAILED;
		return rc == -ETIMEDOUT ? rc : -EIO;
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * Fabrics commands on the qpair's own spare CID
 * ------------------------------------------------------------------------------------- */

/*
 * Run @cmd on the qpair's spare CID and wait: Connect, Property Get/Set, and the
 * discovery log page (@len bytes at @data, to the controller if @write, else from it).
 * \return 0, -EIO (error status in *@cpl), -ETIMEDOUT, -ENXIO (connection failed).
 */
/* Queue @cmd on the spare CID; fabric_done says when it completed. \return 0, -ENXIO, -EBUSY. */
static int
fabric_start(struct nvme_tcp_qpair *tq, const struct nvme_cmd *cmd, void *data, uint32_t len,
	     bool write)
{
	struct nvme_tcp_req *treq = &tq->treqs[tq->qpair.num_trackers];
	struct nvme_request *req = &tq->fabric_req;

	if (tq->conn != NVME_TCP_CONN_READY) {
		return -ENXIO;
	}
	if (treq->req != NULL) {
		return -EBUSY; /* a fabrics command from a callback inside another: no */
	}
	nvme_request_init(req, NULL, tq);
	req->cmd = *cmd;
	req->cmd.cid = (uint16_t)tq->qpair.num_trackers;
	nvme_request_set_contig(req, data, len);
	treq->req = req;
	treq->write = write && len != 0;
	treq->data_len = len;
	treq->in_capsule = treq->write && len <= tq->incapsule_max;
	treq->c2h_next = treq->r2t_next = 0;
	treq->r2t_active = treq->resp_pending = false;
	tq->fabric_done = false;
	nvme_tcp_build_cmd_pdu(tq, treq);
	treq->send_kind = NVME_TCP_SEND_CMD;
	treq->sent = 0;
	STAILQ_INSERT_TAIL(&tq->send_q, treq, send_link);
	return 0;
}

int
nvme_tcp_fabric_sync(struct nvme_tcp_qpair *tq, const struct nvme_cmd *cmd, void *data,
		     uint32_t len, bool write, struct nvme_cpl *cpl)
{
	struct nvp_nvme_ctrlr *ctrlr = tq->qpair.ctrlr;
	struct nvme_request *req = &tq->fabric_req;
	int rc;

	rc = fabric_start(tq, cmd, data, len, write);
	if (rc != 0) {
		return rc;
	}
	rc = tcp_wait(tq, &tq->fabric_done, deadline_ms(ctrlr, ctrlr->opts.admin_timeout_ms));
	req->cb_arg = NULL;
	if (rc != 0) {
		nvme_tcp_qpair_fail(tq,
				    rc == -ETIMEDOUT ? "fabrics command timed out" :
						       "fabrics command failed",
				    0, 0);
		return rc;
	}
	*cpl = tq->fabric_cpl;
	return nvme_cpl_is_error(cpl) ? -EIO : 0;
}

/* Connect (NVMe-oF 1.1 section 3.3): the admin queue learns the CNTLID. */
/*
 * Which parameter a Connect Invalid Parameters status names (dword 0: bits 31:16 non-zero
 * when it is in the Connect data, bits 15:0 its byte offset) as ": the data's subnqn",
 * or "" for any other status.
 */
static void
connect_invalid_param(const struct nvme_cpl *cpl, char *buf, size_t len)
{
	uint32_t off = cpl->cdw0 & 0xffffu;

	buf[0] = '\0';
	if (cpl->status.sct != NVME_SCT_COMMAND_SPECIFIC ||
	    cpl->status.sc != NVME_SC_CONNECT_INVALID_PARAMETERS) {
		return;
	}
	if ((cpl->cdw0 >> 16) == 0) {
		snprintf(buf, len, " (the command's byte %u)", off);
	} else if (off == offsetof(struct nvme_fabric_connect_data, cntlid)) {
		snprintf(buf, len, " (the data's cntlid)");
	} else if (off == offsetof(struct nvme_fabric_connect_data, subnqn)) {
		snprintf(buf, len, " (the data's subnqn)");
	} else if (off == offsetof(struct nvme_fabric_connect_data, hostnqn)) {
		snprintf(buf, len, " (the data's hostnqn)");
	} else {
		snprintf(buf, len, " (the data's byte %u)", off);
	}
}

/* The Connect command and its data for this qpair. */
static void
connect_build(struct nvme_tcp_qpair *tq, uint32_t kato_ms, struct nvme_fabric_connect_cmd *cmd,
	      struct nvme_fabric_connect_data *data)
{
	struct nvme_tcp_ctrlr *tc = nvme_tcp_ctrlr(tq->qpair.ctrlr);
	struct nvme_fabric_connect_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = NVME_OPC_FABRIC;
	c.fctype = NVME_FCTYPE_CONNECT;
	c.qid = tq->qpair.id;
	c.sqsize = (uint16_t)(tq->qpair.num_entries - 1);
	c.kato = tq->qpair.id == 0 ? kato_ms : 0;
	memcpy(data->hostid, tc->hostid, sizeof(data->hostid));
	data->cntlid = tq->qpair.id == 0 ? NVME_FABRIC_CNTLID_DYNAMIC :
					   atomic_load_explicit(&tc->cntlid, memory_order_relaxed);
	nvp_strlcpy(data->subnqn, tc->ctrlr.trid.subnqn, sizeof(data->subnqn));
	nvp_strlcpy(data->hostnqn, tc->hostnqn, sizeof(data->hostnqn));
	*cmd = c;
}

/* The Connect's answer: a refusal is logged with its meaning; the admin queue learns
 * the CNTLID. \return @rc. */
static int
connect_done(struct nvme_tcp_qpair *tq, int rc, const struct nvme_cpl *cpl0)
{
	struct nvme_tcp_ctrlr *tc = nvme_tcp_ctrlr(tq->qpair.ctrlr);
	struct nvme_cpl cpl = *cpl0;

	if (rc == -EIO) {
		char which[64];

		connect_invalid_param(&cpl, which, sizeof(which));
		NVP_ERRLOG("%s: Connect of qpair %u refused: %s%s (sct 0x%x sc 0x%x); check subnqn "
			   "'%s' and that the target allows host '%s'",
			   tc->ctrlr.name, tq->qpair.id,
			   nvp_nvme_fabrics_status_string(NVME_FCTYPE_CONNECT, cpl.status.sct,
							  cpl.status.sc),
			   which, cpl.status.sct, cpl.status.sc, tc->ctrlr.trid.subnqn,
			   tc->hostnqn);
	}
	if (rc == 0 && tq->qpair.id == 0) {
		atomic_store_explicit(&tc->cntlid, (uint16_t)cpl.cdw0, memory_order_relaxed);
	}
	return rc;
}

static int
fabric_connect(struct nvme_tcp_qpair *tq, uint32_t kato_ms)
{
	struct nvme_fabric_connect_data *data;
	struct nvme_fabric_connect_cmd c;
	struct nvme_cpl cpl;
	int rc;

	data = calloc(1, sizeof(*data));
	if (data == NULL) {
		return -ENOMEM;
	}
	connect_build(tq, kato_ms, &c, data);
	memset(&cpl, 0, sizeof(cpl));
	rc = nvme_tcp_fabric_sync(tq, (const struct nvme_cmd *)&c, data, sizeof(*data), true, &cpl);
	free(data);
	return connect_done(tq, rc, &cpl);
}

static int
prop_get(struct nvme_tcp_qpair *tq, uint32_t ofst, bool eight, uint64_t *value)
{
	struct nvme_fabric_prop_cmd c;
	struct nvme_cpl cpl;
	int rc;

	memset(&c, 0, sizeof(c));
	c.opcode = NVME_OPC_FABRIC;
	c.fctype = NVME_FCTYPE_PROPERTY_GET;
	c.attrib = eight ? 1 : 0;
	c.ofst = ofst;
	rc = nvme_tcp_fabric_sync(tq, (const struct nvme_cmd *)&c, NULL, 0, false, &cpl);
	if (rc == 0) {
		*value = (uint64_t)cpl.cdw0 | (eight ? (uint64_t)cpl.cdw1 << 32 : 0);
	}
	return rc;
}

static int
prop_set(struct nvme_tcp_qpair *tq, uint32_t ofst, uint32_t value)
{
	struct nvme_fabric_prop_cmd c;
	struct nvme_cpl cpl;

	memset(&c, 0, sizeof(c));
	c.opcode = NVME_OPC_FABRIC;
	c.fctype = NVME_FCTYPE_PROPERTY_SET;
	c.ofst = ofst;
	c.value = value;
	return nvme_tcp_fabric_sync(tq, (const struct nvme_cmd *)&c, NULL, 0, false, &cpl);
}

/* The next Keep Alive KATO/2 after @now (none with KATO 0). Under the admin lock. */
static void
ka_arm(struct nvme_tcp_ctrlr *tc, uint64_t now)
{
	uint64_t next = UINT64_MAX;

	if (tc->kato_ms != 0) {
		next = now + nvme_ms_to_ticks(&tc->ctrlr, tc->kato_ms / 2);
	}
	atomic_store_explicit(&tc->ka_next, next, memory_order_relaxed);
}

static void tcp_qpair_reset(struct nvp_nvme_qpair *qpair);

/* The admin queue is connected (Connect answered): keep-alive armed, and the reset that
 * follows keeps this connection (SET_ADMIN_QUEUE). */
static void
admin_connected(struct nvme_tcp_ctrlr *tc)
{
	struct nvme_tcp_qpair *tq = nvme_tcp_qpair(tc->ctrlr.adminq);

	tq->qpair.failed = false;
	ka_arm(tc, nvme_ticks(&tc->ctrlr));
	tq->ka_due = atomic_load_explicit(&tc->ka_next, memory_order_relaxed);
	tc->admin_fresh = true;
}

/* The admin connection: socket, ICReq, Connect (a new controller with the dynamic
 * model), keep-alive armed. */
int
nvme_tcp_admin_connect(struct nvme_tcp_ctrlr *tc)
{
	struct nvme_tcp_qpair *tq = nvme_tcp_qpair(tc->ctrlr.adminq);
	uint64_t deadline = deadline_ms(&tc->ctrlr, tc->ctrlr.opts.admin_timeout_ms);
	int rc;

	tcp_qpair_reset(&tq->qpair); /* a reconnect attempt's connection half made, if any */
	tq->incapsule_max = NVME_TCP_ADMIN_INCAPSULE;
	rc = conn_open(tq, deadline);
	if (rc == 0) {
		rc = fabric_connect(tq, tc->kato_ms);
	}
	if (rc != 0) {
		return rc;
	}
	admin_connected(tc);
	return 0;
}

/*
 * A reset's admin connection, once per reset: a reset whose connection failed fails its
 * other property accesses at once (the init state machine reads several registers before
 * it gives up, and its error line reads three more), and says why in that error line.
 */
static int
reset_connect(struct nvme_tcp_ctrlr *tc)
{
	uint32_t gen = atomic_load(&tc->ctrlr.reset_gen);
	int rc;

	if (tc->conn_fail_gen == gen && tc->conn_fail_rc != 0) {
		return tc->conn_fail_rc;
	}
	rc = nvme_tcp_admin_connect(tc);
	tc->conn_fail_gen = gen;
	tc->conn_fail_rc = rc;
	if (rc != 0) {
		snprintf(tc->conn_fail_why, sizeof(tc->conn_fail_why),
			 "registers unreadable: no connection to the target (%s)", strerror(-rc));
	}
	return rc;
}

/* Property Get/Set on the admin connection (reconnected first during a reset). */
int
nvme_tcp_reg_access(struct nvp_nvme_ctrlr *ctrlr, uint32_t offset, bool eight, uint64_t *value,
		    bool set)
{
	struct nvme_tcp_qpair *tq = nvme_tcp_qpair(ctrlr->adminq);
	int rc = 0;

	nvme_ctrlr_lock(ctrlr);
	if (tq->conn != NVME_TCP_CONN_READY || tq->async_step != NVME_TCP_ASYNC_NONE) {
		/* A reset after the connection was lost starts with a new one (also over a
		 * reconnect attempt's connection not made yet: its Connect is in flight). */
		rc = ctrlr->resetting ? reset_connect(nvme_tcp_ctrlr(ctrlr)) : -ENXIO;
	}
	if (rc == 0) {
		rc = set ? prop_set(tq, offset, (uint32_t)*value) :
			   prop_get(tq, offset, eight, value);
	}
	nvme_ctrlr_unlock(ctrlr);
	return rc;
}

static int
tcp_get_reg_4(struct nvp_nvme_ctrlr *ctrlr, uint32_t offset, uint32_t *value)
{
	uint64_t v = 0;
	int rc = nvme_tcp_reg_access(ctrlr, offset, false, &v, false);

	*value = rc == 0 ? (uint32_t)v : UINT32_MAX;
	return rc;
}

static int
tcp_set_reg_4(struct nvp_nvme_ctrlr *ctrlr, uint32_t offset, uint32_t value)
{
	uint64_t v = value;

	return nvme_tcp_reg_access(ctrlr, offset, false, &v, true);
}

/* ---------------------------------------------------------------------------------------
 * Qpairs
 * ------------------------------------------------------------------------------------- */

static void
tcp_qpair_destroy(struct nvp_nvme_qpair *qpair)
{
	struct nvme_tcp_qpair *tq = nvme_tcp_qpair(qpair);

	if (tq == NULL) {
		return;
	}
	if (tq->treqs != NULL) {
		close_conn(tq);
	}
	free(tq->conn_data);
	free(tq->treqs);
	free(tq->rx_buf);
	nvme_qpair_fini(qpair);
	free(tq);
}

int
nvme_tcp_qpair_create(struct nvp_nvme_ctrlr *ctrlr, uint16_t qid,
		      const struct nvp_nvme_io_qpair_opts *opts, struct nvp_nvme_qpair **out)
{
	uint32_t entries = qid == 0 ? ctrlr->opts.admin_queue_size : opts->io_queue_size;
	uint32_t requests = qid == 0 ? NVP_MAX(2 * entries, 64u) : opts->io_queue_requests;
	struct nvme_tcp_qpair *tq;
	int rc;

	entries = NVP_MIN(entries, NVME_TCP_MAX_QUEUE_ENTRIES);
	tq = calloc(1, sizeof(*tq));
	if (tq == NULL) {
		return -ENOMEM;
	}
	tq->fd = -1;
	tq->ka_due = UINT64_MAX;
	STAILQ_INIT(&tq->send_q);
	rc = nvme_qpair_init(&tq->qpair, ctrlr, qid, entries, NVP_MAX(requests, entries), qid != 0);
	if (rc == 0) {
		tq->treqs = calloc(tq->qpair.num_trackers + 1u, sizeof(*tq->treqs));
		tq->rx_buf = malloc(NVME_TCP_RX_BUF_SIZE);
		rc = tq->treqs == NULL || tq->rx_buf == NULL ? -ENOMEM : 0;
	}
	if (rc != 0) {
		tcp_qpair_destroy(&tq->qpair);
		return rc;
	}
	tq->qpair.transport = &g_nvme_tcp_transport;
	nvme_tcp_rx_reset(tq);
	*out = &tq->qpair;
	return 0;
}

static void
tcp_qpair_reset(struct nvp_nvme_qpair *qpair)
{
	struct nvme_tcp_qpair *tq = nvme_tcp_qpair(qpair);

	close_conn(tq);
	tq->conn = NVME_TCP_CONN_CLOSED;
	tq->async_step = NVME_TCP_ASYNC_NONE;
	free(tq->conn_data);
	tq->conn_data = NULL;
	qpair->sq_dirty = false;
}

/* In-capsule data an I/O queue takes: IOCCSZ (16-byte units, the 64-byte SQE included). */
static uint32_t
io_incapsule_max(struct nvp_nvme_ctrlr *ctrlr)
{
	const struct nvme_fabric_ctrlr_data *f = (const void *)ctrlr->cdata.nvmf_specific;

	if (f->ioccsz <= 4 || f->icdoff != 0) {
		return 0;
	}
	return NVP_MIN(f->ioccsz * 16u - 64u, ctrlr->max_xfer_size);
}

/* An I/O queue: its own connection and Connect naming the admin queue's controller. */
static int
tcp_qpair_connect(struct nvp_nvme_qpair *qpair)
{
	struct nvme_tcp_qpair *tq = nvme_tcp_qpair(qpair);
	struct nvp_nvme_ctrlr *ctrlr = qpair->ctrlr;
	int rc;

	tq->incapsule_max = io_incapsule_max(ctrlr);
	rc = conn_open(tq, deadline_ms(ctrlr, ctrlr->opts.admin_timeout_ms));
	if (rc == 0) {
		rc = fabric_connect(tq, 0);
	}
	if (rc != 0) {
		close_conn(tq);
		tq->conn = NVME_TCP_CONN_FAILED;
		return rc == -ETIMEDOUT ? rc : -EIO;
	}
	qpair->failed = false;
	/* Its polls keep the controller alive too (keep_alive_due()). */
	tq->ka_due = atomic_load_explicit(&nvme_tcp_ctrlr(ctrlr)->ka_next, memory_order_relaxed);
	return 0;
}

/* Closing the connection deletes the queue on the controller (NVMe/TCP section 3.4). */
static int
tcp_qpair_disconnect(struct nvp_nvme_qpair *qpair)
{
	tcp_qpair_reset(qpair);
	return 0;
}

/*
 * The non-blocking connect of an I/O queue (after a reset or a lost connection), a step
 * per owner poll: the socket's connect(), ICReq/ICResp, then the Fabrics Connect. Each
 * step only looks at the socket (poll() with no wait, recv and send with MSG_DONTWAIT).
 * A reconnect attempt makes the admin queue's connection the same way
 * (tcp_ctrlr_reconnect_poll()).
 */
static int
async_start(struct nvme_tcp_qpair *tq)
{
	struct nvp_nvme_ctrlr *ctrlr = tq->qpair.ctrlr;
	int rc;

	close_conn(tq);
	tq->incapsule_max = tq->qpair.is_admin ? NVME_TCP_ADMIN_INCAPSULE : io_incapsule_max(ctrlr);
	tq->async_deadline = deadline_ms(ctrlr, ctrlr->opts.admin_timeout_ms);
	rc = sock_open(nvme_tcp_ctrlr(ctrlr), 0, &tq->fd);
	if (rc < 0) {
		return rc;
	}
	tq->async_step = NVME_TCP_ASYNC_SOCK;
	return 0;
}

/* connect() finished? Then send the ICReq (a fresh socket takes its 128 bytes at once). */
static int
async_sock(struct nvme_tcp_qpair *tq)
{
	struct nvme_tcp_ctrlr *tc = nvme_tcp_ctrlr(tq->qpair.ctrlr);
	struct pollfd pfd = { .fd = tq->fd, .events = POLLOUT };
	struct nvme_tcp_ic_req ic;
	socklen_t len = sizeof(int);
	int err = 0;

	if (poll(&pfd, 1, 0) == 0) {
		return 0;
	}
	if (getsockopt(tq->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
		err = err != 0 ? err : errno;
		/* the admin queue's: a reconnect attempt, whose one line says why */
		if (!tq->qpair.is_admin) {
			NVP_ERRLOG("%s: qpair %u: cannot connect to %s port %s: %s", tc->ctrlr.name,
				   tq->qpair.id, tc->traddr, tc->trsvcid, strerror(err));
		}
		return -err;
	}
	ic_begin(tq, tc, &ic);
	if (send_all(tq->fd, &ic, sizeof(ic), tq->qpair.ctrlr, tq->async_deadline) != 0) {
		return -EIO;
	}
	tq->async_step = NVME_TCP_ASYNC_IC;
	return 0;
}

/* ICResp in? Then send the Connect (its data stays in conn_data while it flies). */
static int
async_ic(struct nvme_tcp_qpair *tq)
{
	struct nvme_fabric_connect_cmd c;
	int rc;

	if (tcp_poll_once(tq, 0) != 0) {
		return -EIO;
	}
	if (tq->conn != NVME_TCP_CONN_READY) {
		return 0;
	}
	tq->conn_data = calloc(1, sizeof(*tq->conn_data));
	if (tq->conn_data == NULL) {
		return -ENOMEM;
	}
	connect_build(tq, tq->qpair.is_admin ? nvme_tcp_ctrlr(tq->qpair.ctrlr)->kato_ms : 0, &c,
		      tq->conn_data);
	rc = fabric_start(tq, (const struct nvme_cmd *)&c, tq->conn_data, sizeof(*tq->conn_data),
			  true);
	if (rc == 0) {
		tq->async_step = NVME_TCP_ASYNC_CONNECT;
		rc = tcp_poll_once(tq, 0) != 0 ? -EIO : 0;
	}
	return rc;
}

/* The Connect's completion in? \return 1 when the queue is connected. */
static int
async_connect(struct nvme_tcp_qpair *tq)
{
	int rc;

	if (!tq->fabric_done && tcp_poll_once(tq, 0) != 0) {
		return -EIO;
	}
	if (!tq->fabric_done) {
		return 0;
	}
	tq->fabric_req.cb_arg = NULL;
	free(tq->conn_data);
	tq->conn_data = NULL;
	rc = connect_done(tq, nvme_cpl_is_error(&tq->fabric_cpl) ? -EIO : 0, &tq->fabric_cpl);
	return rc == 0 ? 1 : rc;
}

static int
tcp_qpair_connect_poll(struct nvp_nvme_qpair *qpair)
{
	struct nvme_tcp_qpair *tq = nvme_tcp_qpair(qpair);
	int rc;

	switch (tq->async_step) {
	case NVME_TCP_ASYNC_NONE:
		rc = async_start(tq);
		break;
	case NVME_TCP_ASYNC_SOCK:
		rc = async_sock(tq);
		break;
	case NVME_TCP_ASYNC_IC:
		rc = async_ic(tq);
		break;
	default:
		rc = async_connect(tq);
		break;
	}
	if (rc == 0 && nvme_ticks(qpair->ctrlr) >= tq->async_deadline) {
		NVP_ERRLOG("%s: qpair %u: no connection within admin_timeout_ms (%u ms)",
			   qpair->ctrlr->name, qpair->id, qpair->ctrlr->opts.admin_timeout_ms);
		rc = -ETIMEDOUT;
	}
	if (rc == 1) {
		tq->async_step = NVME_TCP_ASYNC_NONE;
		qpair->failed = false;
		if (!qpair->is_admin) {
			/* Its polls keep the controller alive too, as after tcp_qpair_connect()
			 * (a qpair made with opts.async_mode was never connected before). */
			tq->ka_due = atomic_load_explicit(&nvme_tcp_ctrlr(qpair->ctrlr)->ka_next,
							  memory_order_relaxed);
		}
	} else if (rc < 0) {
		tcp_qpair_reset(qpair);
		tq->conn = NVME_TCP_CONN_FAILED;
	}
	return rc;
}

/*
 * A reconnect attempt's admin connection, a step per poll (admin lock held), so that a
 * target that accepts the connection and then says nothing holds no thread: it times
 * out after admin_timeout_ms like an I/O queue's. Connected, the reset that follows keeps
 * it; its remaining steps (properties, Identify, Set Features) wait for their answers.
 */
static int
tcp_ctrlr_reconnect_poll(struct nvp_nvme_ctrlr *ctrlr)
{
	int rc = tcp_qpair_connect_poll(ctrlr->adminq);

	if (rc == 1) {
		admin_connected(nvme_tcp_ctrlr(ctrlr));
	}
	return rc;
}

/* A scattered payload must hold its size: walk it once (the PCIe check does too). */
static int
sgl_check(struct nvp_nvme_qpair *qpair, struct nvme_request *req)
{
	struct nvme_payload *pl = &req->payload;
	uint32_t left = pl->size;

	pl->reset_sgl_fn(pl->sgl_arg, 0);
	while (left > 0) {
		void *addr = NULL;
		uint32_t n = 0;

		if (pl->next_sge_fn(pl->sgl_arg, &addr, &n) != 0 || addr == NULL || n == 0) {
			NVP_ERRLOG("qpair %u: the scatter list ends %u bytes before the payload's "
				   "%u",
				   qpair->id, left, pl->size);
			return -EINVAL;
		}
		left -= NVP_MIN(n, left);
	}
	return 0;
}

static int
tcp_qpair_check_request(struct nvp_nvme_qpair *qpair, struct nvme_request *req)
{
	if (nvp_unlikely(req->cmd.mptr != 0)) {
		NVP_ERRLOG("qpair %u: separate metadata cannot travel over TCP", qpair->id);
		return -ENOTSUP;
	}
	if (req->payload.type == NVME_PAYLOAD_SGL) {
		return sgl_check(qpair, req);
	}
	return 0;
}

static int
tcp_qpair_submit(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr, struct nvme_request *req)
{
	struct nvme_tcp_qpair *tq = nvme_tcp_qpair(qpair);
	struct nvme_tcp_req *treq = &tq->treqs[nvme_tracker_idx(qpair, tr)];
	uint32_t len = req->payload.type == NVME_PAYLOAD_NONE ? 0 : req->payload.size;
	int rc;

	if (nvp_unlikely(tq->conn != NVME_TCP_CONN_READY)) {
		return -ENXIO;
	}
	if (nvp_unlikely(treq->send_kind != NVME_TCP_SEND_NONE)) {
		return -EAGAIN; /* a CID given up on whose PDU is still going out */
	}
	rc = tcp_qpair_check_request(qpair, req);
	if (nvp_unlikely(rc != 0)) {
		return rc;
	}
	req->cmd.cid = tr->cid;
	treq->req = req;
	treq->data_len = len;
	treq->write = (nvme_opc_get_data_transfer((uint8_t)req->cmd.opc) &
		       NVME_DATA_HOST_TO_CONTROLLER) != 0;
	treq->in_capsule = treq->write && len != 0 && len <= tq->incapsule_max;
	treq->c2h_next = 0;
	treq->r2t_next = 0;
	treq->r2t_active = false;
	treq->resp_pending = false;
	nvme_tcp_build_cmd_pdu(tq, treq);
	treq->send_kind = NVME_TCP_SEND_CMD;
	treq->sent = 0;
	STAILQ_INSERT_TAIL(&tq->send_q, treq, send_link);
	return 0;
}

static void
tcp_qpair_ring_doorbell(struct nvp_nvme_qpair *qpair)
{
	(void)tcp_flush(nvme_tcp_qpair(qpair));
}

/* A Keep Alive on the admin queue, if it can carry one; the next one armed either way, so
 * that a controller being reset is not asked again on every poll. Admin lock held. */
static void
keep_alive_send(struct nvme_tcp_ctrlr *tc, uint64_t now)
{
	struct nvp_nvme_qpair *adminq = tc->ctrlr.adminq;
	struct nvme_request *req;

	if (now < atomic_load_explicit(&tc->ka_next, memory_order_relaxed)) {
		return; /* another thread sent it while this one waited for the lock */
	}
	ka_arm(tc, now);
	if (nvme_tcp_qpair(adminq)->conn != NVME_TCP_CONN_READY || adminq->failed ||
	    atomic_load(&tc->ctrlr.resetting) || nvme_ctrlr_is_failed(&tc->ctrlr) ||
	    nvme_ctrlr_is_reconnecting(&tc->ctrlr)) {
		return; /* the reset makes a new association and arms it again */
	}
	req = nvme_qpair_alloc_request(adminq);
	if (req == NULL) {
		return; /* every admin request is out: the controller hears from us anyway */
	}
	nvme_request_init(req, NULL, NULL);
	req->cmd.opc = NVME_OPC_KEEP_ALIVE;
	(void)nvme_qpair_submit_request(adminq, req);
}

/*
 * A poll of @tq found its ka_due passed: send the controller's Keep Alive (NVMe 1.4
 * section 7.12) unless another thread did. The admin poll holds the admin lock already;
 * an I/O poll only tries it, never waiting (a thread holding it is using the admin queue
 * and gets here itself), and when it has it also processes the admin queue's completions:
 * the previous Keep Alive's, and any AER's, whose callback then runs on this thread.
 */
static void
keep_alive_due(struct nvme_tcp_qpair *tq)
{
	struct nvp_nvme_ctrlr *ctrlr = tq->qpair.ctrlr;
	struct nvme_tcp_ctrlr *tc = nvme_tcp_ctrlr(ctrlr);
	uint64_t now = tq->qpair.poll_ticks;

	if (tq->qpair.is_admin) {
		keep_alive_send(tc, now);
	} else if (now >= atomic_load_explicit(&tc->ka_next, memory_order_relaxed)) {
		/* A reconnect's reset under way holds the lock for this very thread, maybe
		 * (recursive): no Keep Alive in the middle of it. */
		if (atomic_load_explicit(&ctrlr->reset_fiber, memory_order_relaxed) != NULL ||
		    !nvme_ctrlr_trylock(ctrlr)) {
			/* Held (a reset may hold it for a connect): ask again in 1 ms, not on
			 * every poll. */
			tq->ka_due = now + nvme_ms_to_ticks(ctrlr, 1);
			return;
		}
		keep_alive_send(tc, now);
		(void)nvme_qpair_process(ctrlr->adminq, 0);
		nvme_ctrlr_unlock(ctrlr);
	}
	tq->ka_due = atomic_load_explicit(&tc->ka_next, memory_order_relaxed);
}

static int32_t
tcp_qpair_process_completions(struct nvp_nvme_qpair *qpair, uint32_t max)
{
	struct nvme_tcp_qpair *tq = nvme_tcp_qpair(qpair);
	int rc;

	tq->rx_cpls = 0;
	rc = tcp_poll_once(tq, max);
	if (nvp_unlikely(rc != 0)) {
		if (qpair->conn_state != NVME_QP_LOST) {
			qpair->failed = true;
		}
		return qpair->failed ? rc : (int32_t)tq->rx_cpls;
	}
	/* One compare per poll: poll_ticks was just read, ka_due is this qpair's own. */
	if (nvp_unlikely(qpair->poll_ticks >= tq->ka_due)) {
		keep_alive_due(tq);
	}
	return (int32_t)tq->rx_cpls;
}

static void
tcp_qpair_release_tracker(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr)
{
	(void)qpair;
	(void)tr;
}

/* ---------------------------------------------------------------------------------------
 * Controllers
 * ------------------------------------------------------------------------------------- */

/* SET_ADMIN_QUEUE: a controller reset starts over with a new admin connection. */
static int
tcp_ctrlr_enable_admin_queue(struct nvp_nvme_ctrlr *ctrlr)
{
	struct nvme_tcp_ctrlr *tc = nvme_tcp_ctrlr(ctrlr);
	int rc = 0;

	if (!tc->admin_fresh) {
		rc = nvme_tcp_admin_connect(tc);
	}
	tc->admin_fresh = false; /* the next reset reconnects */
	return rc;
}

static uint32_t
tcp_get_max_io_queues(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	return 65535u;
}

void
nvme_tcp_ctrlr_destruct(struct nvp_nvme_ctrlr *ctrlr)
{
	if (ctrlr->adminq != NULL) {
		tcp_qpair_destroy(ctrlr->adminq);
		ctrlr->adminq = NULL;
	}
	nvme_ctrlr_destruct(ctrlr);
	free(nvme_tcp_ctrlr(ctrlr));
}

static bool
flag_on(const char *v)
{
	return strcmp(v, "1") == 0 || strcasecmp(v, "on") == 0 || strcasecmp(v, "true") == 0;
}

/*
 * "key=value" from the trid's extra pairs, through the driver's one lookup of them.
 * \return 1 if present, 0 if not, or -EINVAL (said why: given twice, empty, too long).
 */
static int
trid_arg(const struct nvp_nvme_transport_id *trid, const char *key, char *out, size_t len)
{
	int rc = nvp_nvme_transport_id_get_arg(trid, key, out, len);

	if (rc == -ENOENT) {
		return 0;
	}
	return rc == 0 ? 1 : -EINVAL;
}

/* A digest flag: on for "1", "on" or "true". \return 0 or -EINVAL. */
static int
trid_flag(const struct nvp_nvme_transport_id *trid, const char *key, bool *on)
{
	char v[8];
	int rc = trid_arg(trid, key, v, sizeof(v));

	*on = rc > 0 && flag_on(v);
	return rc < 0 ? rc : 0;
}

/* Host ID: random per controller; host NQN derived from it unless given. */
static int
parse_host(struct nvme_tcp_ctrlr *tc, const struct nvp_nvme_transport_id *trid)
{
	const uint8_t *h;
	char v[NVME_NQN_FIELD_SIZE];
	int rc;

	if (getrandom(tc->hostid, sizeof(tc->hostid), 0) != sizeof(tc->hostid)) {
		return -EIO;
	}
	h = tc->hostid;
	rc = trid_arg(trid, "hostnqn", v, sizeof(v));
	if (rc < 0) {
		return rc;
	}
	if (rc > 0) {
		nvp_strlcpy(tc->hostnqn, v, sizeof(tc->hostnqn));
	} else {
		snprintf(tc->hostnqn, sizeof(tc->hostnqn),
			 "nqn.2014-08.org.nvmexpress:uuid:%02x%02x%02x%02x-%02x%02x-%02x%02x-"
			 "%02x%02x-%02x%02x%02x%02x%02x%02x",
			 h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8], h[9], h[10], h[11],
			 h[12], h[13], h[14], h[15]);
	}
	return 0;
}

/*
 * The address family: adrfam (IPv4 or IPv6; without it, the one traddr is written in),
 * and traddr a numeric address of that family, trsvcid (if given) a port. Checked when a
 * transport ID is parsed, so that a tool can call a mistake a usage error, and again at
 * connect. \return AF_INET, AF_INET6, or -EINVAL (the log says what is wrong).
 */
static int
trid_family(const struct nvp_nvme_transport_id *trid)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST };
	struct addrinfo *ai = NULL;
	bool colon = strchr(trid->traddr, ':') != NULL;
	char v[64];
	uint64_t n;
	int rc;

	hints.ai_family = colon ? AF_INET6 : AF_INET;
	rc = trid_arg(trid, "adrfam", v, sizeof(v));
	if (rc < 0) {
		return rc;
	}
	if (rc > 0) {
		if (strcasecmp(v, "IPv6") == 0) {
			hints.ai_family = AF_INET6;
		} else if (strcasecmp(v, "IPv4") == 0) {
			hints.ai_family = AF_INET;
		} else {
			NVP_ERRLOG("transport ID: adrfam '%s' is not IPv4 or IPv6", v);
			return -EINVAL;
		}
	}
	if (getaddrinfo(trid->traddr, NULL, &hints, &ai) != 0) {
		bool v6 = hints.ai_family == AF_INET6;

		NVP_ERRLOG("transport ID: traddr '%s' is not an %s address (%s)", trid->traddr,
			   v6 ? "IPv6" : "IPv4",
			   colon == v6 ? "a numeric address: host names are not looked up" :
			   colon       ? "an IPv6 address takes adrfam:IPv6" :
					 "an IPv4 address takes adrfam:IPv4");
		return -EINVAL;
	}
	freeaddrinfo(ai);
	/* read as the controller keeps it, so that a value too long for it says so */
	rc = trid_arg(trid, "trsvcid", v, sizeof(((struct nvme_tcp_ctrlr *)0)->trsvcid));
	if (rc < 0) {
		return rc;
	}
	if (rc > 0 && nvp_strtou64(v, 1, 65535, &n) != 0) {
		NVP_ERRLOG("transport ID: trsvcid '%s' is not a TCP port (1..65535)", v);
		return -EINVAL;
	}
	return hints.ai_family;
}

/* At parse time: a TCP transport ID with an address says it in its family. */
static int
tcp_trid_check(const struct nvp_nvme_transport_id *trid)
{
	int family = trid->traddr[0] != '\0' ? trid_family(trid) : 0;

	return family < 0 ? family : 0;
}

/* "tcp 127.0.0.1:4420", "tcp [::1]:4420": a controller's name in messages. */
void
nvme_tcp_set_name(struct nvme_tcp_ctrlr *tc, const char *what)
{
	bool v6 = tc->family == AF_INET6;

	snprintf(tc->ctrlr.name, sizeof(tc->ctrlr.name), "%s %s%.46s%s:%.8s", what, v6 ? "[" : "",
		 tc->traddr, v6 ? "]" : "", tc->trsvcid);
}

/* traddr, trsvcid, adrfam, hostnqn, hdgst, ddgst, kato from the trid. */
int
nvme_tcp_parse_trid(struct nvme_tcp_ctrlr *tc, const struct nvp_nvme_transport_id *trid)
{
	char v[64];
	uint64_t n;
	int family, rc;

	if (trid->traddr[0] == '\0') {
		NVP_ERRLOG("connect: a TCP transport ID needs traddr:<IP address> (and subnqn:)");
		return -EINVAL;
	}
	family = trid_family(trid);
	if (family < 0) {
		return family;
	}
	tc->family = family;
	nvp_strlcpy(tc->traddr, trid->traddr, sizeof(tc->traddr));
	rc = trid_arg(trid, "trsvcid", tc->trsvcid, sizeof(tc->trsvcid));
	if (rc < 0) {
		return rc;
	}
	if (rc == 0) {
		snprintf(tc->trsvcid, sizeof(tc->trsvcid), "%u", NVME_TCP_DEFAULT_PORT);
	}
	if (trid_flag(trid, "hdgst", &tc->want_hdgst) != 0 ||
	    trid_flag(trid, "ddgst", &tc->want_ddgst) != 0) {
		return -EINVAL;
	}
	tc->kato_ms = NVME_TCP_DEFAULT_KATO_MS;
	rc = trid_arg(trid, "kato", v, sizeof(v));
	if (rc < 0) {
		return rc;
	}
	if (rc > 0) {
		if (nvp_strtou64(v, 0, 3600000, &n) != 0) {
			NVP_ERRLOG("connect: kato '%s' is not 0..3600000 ms", v);
			return -EINVAL;
		}
		tc->kato_ms = (uint32_t)n;
	}
	return parse_host(tc, trid);
}

/* Read CAP and VS over the fresh admin connection. */
static int
read_cap_vs(struct nvme_tcp_ctrlr *tc)
{
	union nvme_cap_register cap;
	union nvme_vs_register vs;
	uint64_t v = 0;
	int rc;

	rc = nvme_tcp_reg_access(&tc->ctrlr, NVME_REG_CAP, true, &v, false);
	cap.raw = v;
	if (rc == 0) {
		rc = nvme_tcp_reg_access(&tc->ctrlr, NVME_REG_VS, false, &v, false);
		vs.raw = (uint32_t)v;
	}
	if (rc != 0) {
		NVP_ERRLOG("%s: cannot read CAP/VS (Property Get): %s", tc->ctrlr.name,
			   strerror(-rc));
		return rc;
	}
	return nvme_ctrlr_set_cap_vs(&tc->ctrlr, cap, vs);
}

static int
tcp_ctrlr_construct(const struct nvp_nvme_transport_id *trid,
		    const struct nvp_nvme_ctrlr_opts *opts, struct nvp_nvme_ctrlr **out)
{
	struct nvme_tcp_ctrlr *tc;
	int rc;

	if (trid->subnqn[0] == '\0') {
		NVP_ERRLOG("connect: a TCP transport ID needs subnqn:<NQN> (nvp discover lists "
			   "them)");
		return -EINVAL;
	}
	tc = calloc(1, sizeof(*tc));
	if (tc == NULL) {
		return -ENOMEM;
	}
	rc = nvme_ctrlr_construct(&tc->ctrlr, trid, opts, &g_nvme_tcp_transport);
	if (rc != 0) {
		free(tc);
		return rc;
	}
	rc = nvme_tcp_parse_trid(tc, trid);
	if (rc == 0) {
		nvme_tcp_set_name(tc, "tcp");
		rc = nvme_tcp_qpair_create(&tc->ctrlr, 0, NULL, &tc->ctrlr.adminq);
	}
	if (rc == 0) {
		rc = nvme_tcp_admin_connect(tc);
	}
	if (rc == 0) {
		rc = read_cap_vs(tc);
	}
	if (rc != 0) {
		nvme_tcp_ctrlr_destruct(&tc->ctrlr);
		return rc;
	}
	*out = &tc->ctrlr;
	return 0;
}

/* A property read over a connection that is down answers all ones (see tcp_get_reg_4). */
static const char *
tcp_all_ones_cause(const struct nvp_nvme_ctrlr *ctrlr)
{
	const struct nvme_tcp_ctrlr *tc = (const struct nvme_tcp_ctrlr *)ctrlr;

	if (tc->conn_fail_rc != 0 && tc->conn_fail_gen == atomic_load(&ctrlr->reset_gen)) {
		return tc->conn_fail_why; /* this reset's: "cannot connect to PORT: why" */
	}
	return "registers unreadable: no connection to the target";
}

const struct nvme_transport_ops g_nvme_tcp_transport = {
	.name = "TCP",
	.type = NVP_NVME_TRANSPORT_TCP,
	.trid_check = tcp_trid_check,
	.ctrlr_construct = tcp_ctrlr_construct,
	.ctrlr_destruct = nvme_tcp_ctrlr_destruct,
	.ctrlr_get_reg_4 = tcp_get_reg_4,
	.ctrlr_set_reg_4 = tcp_set_reg_4,
	.ctrlr_enable_admin_queue = tcp_ctrlr_enable_admin_queue,
	.ctrlr_reconnect_poll = tcp_ctrlr_reconnect_poll,
	.ctrlr_get_max_io_queues = tcp_get_max_io_queues,
	.ctrlr_all_ones_cause = tcp_all_ones_cause,
	.qpair_create = nvme_tcp_qpair_create,
	.qpair_destroy = tcp_qpair_destroy,
	.qpair_connect = tcp_qpair_connect,
	.qpair_disconnect = tcp_qpair_disconnect,
	.qpair_reset = tcp_qpair_reset,
	.qpair_connect_poll = tcp_qpair_connect_poll,
	.qpair_check_request = tcp_qpair_check_request,
	.qpair_submit = tcp_qpair_submit,
	.qpair_ring_doorbell = tcp_qpair_ring_doorbell,
	.qpair_process_completions = tcp_qpair_process_completions,
	.qpair_release_tracker = tcp_qpair_release_tracker,
};

__attribute__((constructor)) static void
tcp_transport_register(void)
{
	(void)nvme_transport_register(&g_nvme_tcp_transport);
}

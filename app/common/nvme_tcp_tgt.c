/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The small NVMe/TCP target (see nvme_tcp_tgt.h): a thread accepting connections and a
 * thread per connection with blocking sockets, one command at a time per connection. It
 * checks what the host sends (header and data digests, PDU lengths, the H2CData answering
 * each R2T) and counts anything wrong in bad_host_pdus. The acceptor reaps connections
 * that ended, so a target serving one host after another (nvp serve) holds at most
 * TGT_MAX_CONNS connections at a time, not in all. The acceptor also keeps each
 * controller's Keep Alive Timer (NVMe 1.4 section 7.12; TBKAS is not offered, so only a
 * Keep Alive command restarts it): when KATO passes without one, the association ends,
 * its admin and I/O connections closed, as the kernel's nvmet does.
 * The PDUs themselves, built and checked, are nvp_tgt's codec (tgt_pdu.c): one for both
 * targets. What is this file's own is the blocking shape, the passthrough to a driven
 * controller, and the faults it injects on request (a corrupted digest, a wrong PDU).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4 */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "nvpoll/env.h"
#include "nvpoll/nvme_tcp_spec.h"
#include "nvpoll/util.h"
#include "nvme_tcp_tgt.h"
#include "tgt_fabric.h"
#include "tgt_pdu.h"

#define TGT_MAX_CONNS 64
#define TGT_MAX_DATA (1024u * 1024)
#define TGT_MQES 1023u

struct tcp_tgt {
	int lfd;                    /* -1 while not listening (acceptor thread only, after start) */
	atomic_bool want_listen;    /* tcp_tgt_set_listening(); the acceptor follows */
	atomic_bool listening;      /* what the acceptor did about it */
	struct sockaddr_storage sa; /* the address and port listened on */
	socklen_t salen;
	uint16_t port;
	char addr[INET6_ADDRSTRLEN];
	int family; /* AF_INET or AF_INET6 */
	pthread_t acceptor;
	atomic_bool stop;
	struct nvp_nvme_ctrlr *backend;
	struct tcp_tgt_opts opts;
	char subnqn[NVME_NQN_FIELD_SIZE];
	_Atomic int fault;
	_Atomic uint64_t stall_end;      /* tcp_tgt_stall(): no reading or answering before (ms) */
	_Atomic uint32_t admin_delay_ms; /* tcp_tgt_set_admin_delay() */
	pthread_mutex_t lock;
	struct tgt_conn *conns[TGT_MAX_CONNS];
	uint32_t num_conns;
	uint16_t next_cntlid;
	struct tcp_tgt_stats stats;
	_Atomic uint8_t ana_state;   /* opts.ana_grpid's state through this listener */
	_Atomic uint64_t ana_chgcnt; /* ANA log change count */
};

struct tgt_conn {
	struct tcp_tgt *t;
	int fd;
	pthread_t thread;
	bool started;                /* thread is running (joined when reaped) */
	atomic_bool done;            /* its thread has ended: the acceptor may reap it */
	struct tgt_fabric_regs regs; /* the fabrics controller's (admin connection) */
	bool hdgst, ddgst;
	uint16_t qid;
	uint16_t cntlid;
	uint32_t kato_ms;          /* admin connection: Connect's KATO, 0 = no timer */
	_Atomic uint64_t ka_end;   /* admin connection: when KATO runs out (ms, monotonic) */
	bool discovery;            /* connected to the discovery NQN */
	struct nvp_nvme_qpair *bq; /* the backend qpair of an I/O connection */
	uint8_t *buf;              /* DMA memory: a command's data */
	struct pending *backlog;   /* capsules that came while waiting for H2CData */
	struct pending **backlog_tail;
	pthread_mutex_t send_lock; /* an ANA notice is sent from another thread */
	uint16_t aer_cids[8];      /* admin connection: AERs held (under t->lock) */
	uint32_t num_aers;
};

/* A capsule read ahead of its turn, with its in-capsule data. */
struct pending {
	struct pending *next;
	struct nvme_cmd cmd;
	struct tgt_pdu_capsule cap;
	uint8_t data[];
};

#define STAT_INC(t, f)                            \
	do {                                      \
		pthread_mutex_lock(&(t)->lock);   \
		(t)->stats.f++;                   \
		pthread_mutex_unlock(&(t)->lock); \
	} while (0)

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* While a stall lasts, the connection neither reads nor answers (tcp_tgt_stall()). */
static void
stall_wait(struct tcp_tgt *t)
{
	while (now_ms() < atomic_load(&t->stall_end) && !atomic_load(&t->stop)) {
		usleep(1000);
	}
}

static int
rd(int fd, void *buf, size_t n)
{
	uint8_t *p = buf;

	while (n > 0) {
		ssize_t r = recv(fd, p, n, 0);

		if (r <= 0) {
			if (r < 0 && errno == EINTR) {
				continue;
			}
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* No SIGPIPE: a host that went away is a closed connection, not the end of the process. */
static int
wr_iov(int fd, struct iovec *iov, int cnt)
{
	while (cnt > 0) {
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)cnt };
		ssize_t r = sendmsg(fd, &m, MSG_NOSIGNAL);

		if (r < 0) {
			if (errno == EINTR) {
				continue;
			}
			return -1;
		}
		while (cnt > 0 && (size_t)r >= iov->iov_len) {
			r -= (ssize_t)iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + r;
			iov->iov_len -= (size_t)r;
		}
	}
	return 0;
}

/* A controller PDU: header (HLEN bytes at @hdr, its type set), data; framed by the codec
 * nvp_tgt uses too, a digest corrupted on request. */
static int
send_pdu(struct tgt_conn *c, void *hdr, uint32_t hlen, const void *data, uint32_t dlen,
	 bool corrupt_hdgst, bool corrupt_ddgst)
{
	struct iovec iov[TGT_PDU_IOVS];
	uint32_t dg[2] = { 0, 0 };
	int n = (int)tgt_pdu_frame(iov, hdr, hlen, data, dlen, c->hdgst, c->ddgst, dg);

	dg[0] ^= corrupt_hdgst ? 1u : 0u; /* (sent only where the connection has digests) */
	dg[1] ^= corrupt_ddgst ? 1u : 0u;
	pthread_mutex_lock(&c->send_lock);
	n = wr_iov(c->fd, iov, n);
	pthread_mutex_unlock(&c->send_lock);
	return n;
}

static int
send_resp(struct tgt_conn *c, const struct nvme_cpl *cpl, enum tcp_tgt_fault fault)
{
	struct nvme_tcp_rsp r;

	tgt_pdu_rsp(&r, cpl, cpl->cid, c->qid);
	if (fault == TCP_TGT_FAULT_BAD_PLEN) {
		uint8_t raw[40];
		struct iovec iov = { raw, sizeof(raw) };

		memset(raw, 0, sizeof(raw));
		memcpy(raw, &r, sizeof(r));
		raw[1] = c->hdgst ? NVME_TCP_FLAG_HDGSTF : 0;
		raw[2] = NVME_TCP_RSP_HLEN;
		raw[4] = sizeof(raw); /* PLEN 40, while HLEN (+ digest) says 24 or 28 */
		return wr_iov(c->fd, &iov, 1);
	}
	return send_pdu(c, &r, NVME_TCP_RSP_HLEN, NULL, 0, fault == TCP_TGT_FAULT_BAD_HDGST, false);
}

/* ---- what the host sends ---- */

static int
host_error(struct tgt_conn *c, const char *what)
{
	fprintf(stderr, "tcp_tgt: qpair %u: host PDU wrong: %s\n", c->qid, what);
	STAT_INC(c->t, bad_host_pdus);
	return -1;
}

/* A check of the shared codec failed. */
static int
pdu_error(struct tgt_conn *c, const struct tgt_pdu_err *e)
{
	return host_error(c, e->why);
}

/* Header rest and its digest after the common header @hdr[0..8); @hdr has room for
 * @hlen + 4 bytes. */
static int
read_header(struct tgt_conn *c, uint8_t *hdr, uint32_t hlen)
{
	bool hdgstf = (hdr[1] & NVME_TCP_FLAG_HDGSTF) != 0;
	struct tgt_pdu_err e;

	if (rd(c->fd, hdr + 8, hlen - 8) != 0) {
		return -1;
	}
	/* a digest is read only where both sides say there is one: else the check fails */
	if (hdgstf && c->hdgst && rd(c->fd, hdr + hlen, 4) != 0) {
		return -1;
	}
	if (tgt_pdu_check_hdgst(hdr, hlen, c->hdgst, &e) != 0) {
		return pdu_error(c, &e);
	}
	if (c->hdgst) {
		STAT_INC(c->t, hdgsts_checked);
	}
	return 0;
}

/* Padding up to PDO, @len data bytes into @dst, the data digest. */
static int
read_data(struct tgt_conn *c, const struct nvme_tcp_common_hdr *ch, uint8_t *dst, uint32_t len)
{
	uint8_t pad[TGT_PDU_MAX_PDO];
	struct tgt_pdu_err e;
	int padlen = tgt_pdu_check_data(ch, len, c->hdgst, c->ddgst, &e);
	uint32_t d;

	if (padlen < 0) {
		return pdu_error(c, &e);
	}
	if (rd(c->fd, pad, (size_t)padlen) != 0 || rd(c->fd, dst, len) != 0) {
		return -1;
	}
	if (c->ddgst) {
		if (rd(c->fd, &d, 4) != 0) {
			return -1;
		}
		if (tgt_pdu_check_ddgst(dst, len, d, &e) != 0) {
			return pdu_error(c, &e);
		}
		STAT_INC(c->t, ddgsts_checked);
	}
	return 0;
}

/*
 * The rest of a CapsuleCmd whose common header is in @hdr (room for its HLEN + 4 bytes);
 * in-capsule data into @data. *@cap: its data length, whether it came in the capsule, or
 * the status that answers it.
 */
static int
read_capsule_rest(struct tgt_conn *c, uint8_t *hdr, struct nvme_cmd *cmd,
		  struct tgt_pdu_capsule *cap, uint8_t *data)
{
	struct nvme_tcp_common_hdr *ch = (void *)hdr;
	uint32_t max = c->qid == 0 ? 8192u : c->t->opts.incapsule;
	struct tgt_pdu_err e;

	if (ch->hlen != NVME_TCP_CMD_HLEN) {
		return host_error(c, "CapsuleCmd HLEN");
	}
	if (read_header(c, hdr, NVME_TCP_CMD_HLEN) != 0) {
		return -1;
	}
	memcpy(cmd, hdr + 8, sizeof(*cmd));
	STAT_INC(c->t, capsules);
	if (tgt_pdu_capsule(ch, cmd, c->hdgst, max, TGT_MAX_DATA, cap, &e) != 0) {
		return pdu_error(c, &e);
	}
	if (!cap->inc) {
		return 0;
	}
	if (c->qid != 0) {
		STAT_INC(c->t, incapsule_writes);
	}
	return read_data(c, ch, data, cap->len);
}

/* A capsule that arrived while H2CData was awaited: kept for its turn. */
static int
stash_capsule(struct tgt_conn *c, uint8_t *hdr)
{
	/* room for an admin capsule's 8 KiB or an I/O one's opts.incapsule */
	struct pending *p = calloc(1, sizeof(*p) + NVP_MAX(8192u, c->t->opts.incapsule));

	if (p == NULL) {
		return -1;
	}
	if (read_capsule_rest(c, hdr, &p->cmd, &p->cap, p->data) != 0) {
		free(p);
		return -1;
	}
	*c->backlog_tail = p;
	c->backlog_tail = &p->next;
	return 0;
}

/* The next capsule: from the backlog, else from the socket. */
static int
read_capsule(struct tgt_conn *c, struct nvme_cmd *cmd, struct tgt_pdu_capsule *cap)
{
	uint8_t hdr[NVME_TCP_CMD_HLEN + 4];
	struct nvme_tcp_common_hdr *ch = (void *)hdr;
	struct pending *p = c->backlog;

	if (p != NULL) {
		c->backlog = p->next;
		if (c->backlog == NULL) {
			c->backlog_tail = &c->backlog;
		}
		*cmd = p->cmd;
		*cap = p->cap;
		if (p->cap.inc) {
			memcpy(c->buf, p->data, p->cap.len);
		}
		free(p);
		return 0;
	}
	if (rd(c->fd, hdr, 8) != 0 || ch->pdu_type == NVME_TCP_PDU_H2C_TERM_REQ) {
		return -1;
	}
	if (ch->pdu_type != NVME_TCP_PDU_CAPSULE_CMD) {
		return host_error(c, "expected a CapsuleCmd");
	}
	return read_capsule_rest(c, hdr, cmd, cap, c->buf);
}

static int
send_r2t(struct tgt_conn *c, uint16_t cid, uint16_t ttag, uint32_t off, uint32_t len)
{
	struct nvme_tcp_r2t_hdr r;

	tgt_pdu_r2t(&r, cid, ttag, off, len);
	STAT_INC(c->t, r2ts);
	return send_pdu(c, &r, NVME_TCP_R2T_HLEN, NULL, 0, false, false);
}

/* H2CData PDUs answering one R2T for [off, off + len). */
static int
read_h2c(struct tgt_conn *c, uint16_t cid, uint16_t ttag, uint32_t off, uint32_t len)
{
	uint32_t at = off;

	while (at < off + len) {
		uint8_t hdr[NVME_TCP_DATA_HLEN + 4];
		struct nvme_tcp_data_hdr *h = (void *)hdr;
		struct tgt_pdu_err e;

		if (rd(c->fd, hdr, 8) != 0) {
			return -1;
		}
		if (h->ch.pdu_type == NVME_TCP_PDU_CAPSULE_CMD) {
			uint8_t chdr[NVME_TCP_CMD_HLEN + 4];

			memcpy(chdr, hdr, 8);
			if (stash_capsule(c, chdr) != 0) {
				return -1;
			}
			continue;
		}
		if (h->ch.pdu_type != NVME_TCP_PDU_H2C_DATA || h->ch.hlen != NVME_TCP_DATA_HLEN) {
			return host_error(c, "expected H2CData");
		}
		if (read_header(c, hdr, NVME_TCP_DATA_HLEN) != 0) {
			return -1;
		}
		if (h->cccid != cid || h->ttag != ttag) {
			return host_error(c, "H2CData for no R2T of this queue");
		}
		if (tgt_pdu_check_h2c(h, at, off + len, c->t->opts.maxh2cdata, &e) != 0) {
			return pdu_error(c, &e);
		}
		if (read_data(c, &h->ch, c->buf + at, h->datal) != 0) {
			return -1;
		}
		at += h->datal;
		STAT_INC(c->t, h2c_pdus);
	}
	return 0;
}

/* Ask for a write's data with R2Ts of r2t_chunk bytes, one outstanding at a time. */
static int
get_write_data(struct tgt_conn *c, uint16_t cid, uint32_t len, enum tcp_tgt_fault fault)
{
	uint32_t off, chunk = c->t->opts.r2t_chunk;
	uint16_t ttag = 0;

	if (fault == TCP_TGT_FAULT_R2T_BEYOND) {
		(void)send_r2t(c, cid, 0, 0, len + 4096);
		return -1;
	}
	for (off = 0; off < len; off += chunk, ttag++) {
		uint32_t n = len - off < chunk ? len - off : chunk;

		if (send_r2t(c, cid, ttag, off, n) != 0 || read_h2c(c, cid, ttag, off, n) != 0) {
			return -1;
		}
	}
	return 0;
}

/* A read's data in C2HData PDUs; with c2h_success the last one completes the command. */
static int
put_read_data(struct tgt_conn *c, uint16_t cid, uint32_t len, bool success,
	      enum tcp_tgt_fault fault)
{
	uint32_t off, chunk = c->t->opts.c2h_chunk;

	for (off = 0; off < len; off += chunk) {
		struct nvme_tcp_data_hdr h;
		uint32_t n = len - off < chunk ? len - off : chunk;
		uint8_t flags = 0;

		if (off + n == len) {
			flags = NVME_TCP_FLAG_LAST_PDU | (success ? NVME_TCP_FLAG_C2H_SUCCESS : 0);
		}
		tgt_pdu_c2h(&h, cid, fault == TCP_TGT_FAULT_C2H_BEYOND ? len : off, n, flags);
		STAT_INC(c->t, c2h_pdus);
		if (send_pdu(c, &h, NVME_TCP_DATA_HLEN, c->buf + off, n, false,
			     fault == TCP_TGT_FAULT_BAD_DDGST) != 0) {
			return -1;
		}
		if (fault != TCP_TGT_FAULT_NONE) {
			return -1;
		}
	}
	return 0;
}

/* ---- commands ---- */

/* Is @cntlid the controller of an admin connection still open? (Hosts may come one after
 * another, or two at once, each with its own controller.) */
static bool
cntlid_live(struct tcp_tgt *t, uint16_t cntlid)
{
	bool live = false;

	pthread_mutex_lock(&t->lock);
	for (uint32_t i = 0; i < t->num_conns && !live; i++) {
		const struct tgt_conn *a = t->conns[i];

		live = a->qid == 0 && !a->discovery && a->cntlid == cntlid &&
		       !atomic_load(&a->done);
	}
	pthread_mutex_unlock(&t->lock);
	return live && cntlid != 0;
}

static void
fabric_connect(struct tgt_conn *c, const struct nvme_cmd *cmd, uint32_t len, struct nvme_cpl *cpl)
{
	const struct nvme_fabric_connect_cmd *fc = (const void *)cmd;
	struct nvme_fabric_connect_data *d = (void *)c->buf;
	struct tcp_tgt *t = c->t;
	struct nvp_nvme_io_qpair_opts o;
	bool discovery;

	if (tgt_fabric_connect_check(fc, d, len, TGT_MQES, cpl) != 0) {
		return;
	}
	discovery = fc->qid == 0 && strcmp(d->subnqn, NVME_DISCOVERY_NQN) == 0;
	if (!discovery && strcmp(d->subnqn, t->subnqn) != 0) {
		tgt_fabric_connect_invalid(cpl, true,
					   offsetof(struct nvme_fabric_connect_data, subnqn));
		return;
	}
	pthread_mutex_lock(&t->lock); /* cntlid_live() reads these */
	c->discovery = discovery;
	c->qid = fc->qid;
	if (fc->qid == 0) {
		c->cntlid = ++t->next_cntlid;
		if (c->cntlid == 0 || c->cntlid >= 0xfff0) { /* 0xfff0.. are reserved */
			c->cntlid = t->next_cntlid = 1;
		}
		c->regs.cc = 0;
		c->regs.csts = 0;
		c->kato_ms = fc->kato;
		atomic_store(&c->ka_end, fc->kato ? now_ms() + fc->kato : 0);
	} else {
		c->cntlid = d->cntlid;
	}
	pthread_mutex_unlock(&t->lock);
	if (fc->qid != 0) {
		nvp_nvme_ctrlr_get_default_io_qpair_opts(t->backend, &o, sizeof(o));
		if (!cntlid_live(t, d->cntlid) ||
		    nvp_nvme_ctrlr_alloc_io_qpair(t->backend, &o, &c->bq) != 0) {
			tgt_fabric_connect_invalid(
				cpl, true, offsetof(struct nvme_fabric_connect_data, cntlid));
			return;
		}
	}
	cpl->cdw0 = c->cntlid;
}

/* The registers a connection's controller shows: the backend's CAP and VS, with the queue
 * size this target grants. */
static void
regs_init(struct tgt_conn *c, struct nvp_nvme_ctrlr *backend)
{
	union nvme_cap_register cap = nvp_nvme_ctrlr_get_regs_cap(backend);

	cap.bits.mqes = TGT_MQES;
	memset(&c->regs, 0, sizeof(c->regs));
	c->regs.cap = cap.raw;
	c->regs.vs = nvp_nvme_ctrlr_get_regs_vs(backend).raw;
}

/* Identify Controller as a fabrics controller: the subsystem, capsule sizes, SGLs. */
static void
patch_identify(struct tgt_conn *c, const struct nvme_cmd *cmd)
{
	struct nvme_ctrlr_data *cd = (void *)c->buf;

	if ((cmd->cdw10 & 0xff) == 0 && c->t->opts.ana_grpid != 0) {
		struct nvme_ns_data *nd = (void *)c->buf;

		nd->nmic |= 1u; /* shared: reachable through every listener */
		nd->anagrpid = c->t->opts.ana_grpid;
	}
	if ((cmd->cdw10 & 0xff) != 1) {
		return;
	}
	if (c->t->opts.ana_grpid != 0) {
		cd->cmic |= NVME_CTRLR_CMIC_MULTI_CTRLR | NVME_CTRLR_CMIC_ANA_REPORTING;
		cd->anacap = 0x1f | 0x40; /* every state reported; ANAGRPID fixed while attached */
		cd->anatt = 10;
		cd->anagrpmax = c->t->opts.ana_grpid;
		cd->nanagrpid = c->t->opts.ana_grpid;
		cd->oaes |= NVME_CTRLR_OAES_ANA_CHANGE;
	}
	tgt_fabric_identify(cd, c->cntlid, c->t->subnqn, c->t->opts.incapsule);
}

/* The discovery log page: one record, this target's subsystem. */
static void
discovery_log(struct tgt_conn *c, uint32_t len, struct nvme_cpl *cpl)
{
	uint8_t page[2048];
	struct nvme_discovery_log_header *h = (void *)page;
	struct nvme_discovery_log_entry *e = (void *)(page + sizeof(*h));
	char port[8];

	memset(page, 0, sizeof(page));
	h->genctr = 1;
	h->numrec = 1;
	snprintf(port, sizeof(port), "%u", c->t->port);
	tgt_fabric_disc_entry(e, c->t->family == AF_INET6, c->t->addr, port, c->t->subnqn, 1,
			      TGT_MQES + 1);
	if (len > sizeof(page)) {
		tgt_fabric_status(cpl, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
		return;
	}
	memcpy(c->buf, page, len);
}

/* The ANA log page: one group (opts.ana_grpid), every active namespace of the backend in
 * it, unless LSP bit 0 (Return Groups Only). */
static void
ana_log(struct tgt_conn *c, const struct nvme_cmd *cmd, uint32_t len, struct nvme_cpl *cpl)
{
	uint8_t page[4096];
	struct nvme_ana_page *h = (void *)page;
	struct nvme_ana_group_desc *g = (void *)(page + sizeof(*h));
	struct nvp_nvme_ctrlr *b = c->t->backend;
	uint32_t n = 0, max = (sizeof(page) - sizeof(*h) - sizeof(*g)) / 4;

	memset(page, 0, sizeof(page));
	h->change_count = atomic_load(&c->t->ana_chgcnt);
	h->num_ana_group_desc = 1;
	g->ana_group_id = c->t->opts.ana_grpid;
	g->change_count = h->change_count;
	g->ana_state = atomic_load(&c->t->ana_state);
	if (((cmd->cdw10 >> 8) & 1u) == 0) {
		for (uint32_t nsid = nvp_nvme_ctrlr_get_first_active_ns(b); nsid != 0 && n < max;
		     nsid = nvp_nvme_ctrlr_get_next_active_ns(b, nsid)) {
			g->nsid[n++] = nsid;
		}
	}
	g->num_of_nsid = n;
	if (len > sizeof(page) || cmd->cdw12 != 0 || cmd->cdw13 != 0) {
		tgt_fabric_status(cpl, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
		return;
	}
	memcpy(c->buf, page, len);
}

/* \return 0, or 1 when the command gets no response (AER held). */
static int
admin_cmd(struct tgt_conn *c, const struct nvme_cmd *cmd, uint32_t len, struct nvme_cpl *cpl)
{
	struct nvme_cmd fwd = *cmd;

	if (cmd->opc == NVME_OPC_ASYNC_EVENT_REQUEST) {
		pthread_mutex_lock(&c->t->lock);
		if (c->num_aers < sizeof(c->aer_cids) / sizeof(c->aer_cids[0])) {
			c->aer_cids[c->num_aers++] = cmd->cid;
		}
		pthread_mutex_unlock(&c->t->lock);
		return 1;
	}
	if (cmd->opc == NVME_OPC_GET_LOG_PAGE &&
	    (cmd->cdw10 & 0xff) == NVME_LOG_ASYMMETRIC_NAMESPACE_ACCESS &&
	    c->t->opts.ana_grpid != 0) {
		ana_log(c, cmd, len, cpl);
		return 0;
	}
	if (cmd->opc == NVME_OPC_KEEP_ALIVE) {
		if (c->kato_ms != 0) {
			atomic_store(&c->ka_end, now_ms() + c->kato_ms); /* the timer restarts */
		}
		return 0;
	}
	if (c->discovery) {
		if (cmd->opc == NVME_OPC_GET_LOG_PAGE &&
		    (cmd->cdw10 & 0xff) == NVME_LOG_DISCOVERY) {
			discovery_log(c, len, cpl);
		} else {
			tgt_fabric_status(cpl, NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE);
		}
		return 0;
	}
	if (cmd->opc == NVME_OPC_SET_FEATURES &&
	    (cmd->cdw10 & 0xff) == NVME_FEAT_NUMBER_OF_QUEUES) {
		cpl->cdw0 = 7u | 7u << 16;
		return 0;
	}
	fwd.psdt = 0;
	memset(&fwd.dptr, 0, sizeof(fwd.dptr));
	(void)nvp_nvme_ctrlr_cmd_admin_sync(c->t->backend, &fwd, len ? c->buf : NULL, len, cpl);
	if (cmd->opc == NVME_OPC_IDENTIFY && !nvme_cpl_is_error(cpl)) {
		patch_identify(c, cmd);
	}
	return 0;
}

struct io_wait {
	bool done;
	struct nvme_cpl cpl;
};

static void
io_done(void *arg, const struct nvme_cpl *cpl)
{
	struct io_wait *w = arg;

	w->cpl = *cpl;
	w->done = true;
}

static void
io_cmd(struct tgt_conn *c, const struct nvme_cmd *cmd, uint32_t len, struct nvme_cpl *cpl)
{
	struct nvme_cmd fwd = *cmd;
	struct io_wait w = { .done = false };
	int rc;

	if (c->t->opts.ana_grpid != 0) {
		uint8_t st = atomic_load(&c->t->ana_state);

		if (st != NVME_ANA_OPTIMIZED && st != NVME_ANA_NON_OPTIMIZED) {
			tgt_fabric_status(
				cpl, NVME_SCT_PATH,
				st == NVME_ANA_INACCESSIBLE    ? NVME_SC_ANA_INACCESSIBLE :
				st == NVME_ANA_PERSISTENT_LOSS ? NVME_SC_ANA_PERSISTENT_LOSS :
								 NVME_SC_ANA_TRANSITION);
			cpl->status.dnr = 0; /* another path may take it (NVMe 1.4 8.20.3) */
			STAT_INC(c->t, ana_refused);
			return;
		}
	}
	fwd.psdt = 0;
	memset(&fwd.dptr, 0, sizeof(fwd.dptr));
	rc = nvp_nvme_ctrlr_cmd_io_raw(c->t->backend, c->bq, &fwd, len ? c->buf : NULL, len,
				       io_done, &w);
	while (rc == 0 && !w.done) {
		if (nvp_nvme_qpair_process_completions(c->bq, 0) < 0) {
			break;
		}
	}
	if (w.done) {
		*cpl = w.cpl;
	} else {
		tgt_fabric_status(cpl, NVME_SCT_GENERIC, NVME_SC_INTERNAL_DEVICE_ERROR);
	}
}

/* One command: its data in, executed, its data out, its response. \return 0 or -1. */
static int
serve_cmd(struct tgt_conn *c)
{
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;
	enum nvme_data_transfer dir;
	enum tcp_tgt_fault fault = TCP_TGT_FAULT_NONE;
	struct tgt_pdu_capsule cap;
	uint32_t len;
	bool inc;

	stall_wait(c->t);
	if (read_capsule(c, &cmd, &cap) != 0) {
		return -1;
	}
	stall_wait(c->t); /* a stall that began while this connection waited for a capsule */
	memset(&cpl, 0, sizeof(cpl));
	cpl.cid = cmd.cid;
	if (cap.sc != 0) { /* its SGL is wrong: the command's error, not the connection's */
		tgt_fabric_status(&cpl, cap.sct, cap.sc);
		return send_resp(c, &cpl, TCP_TGT_FAULT_NONE);
	}
	len = cap.len;
	inc = cap.inc;
	if (c->qid == 0 && atomic_load(&c->t->admin_delay_ms) != 0) {
		usleep(atomic_load(&c->t->admin_delay_ms) * 1000u); /* a slow controller */
	}
	if (c->qid != 0 && c->bq != NULL) {
		fault = (enum tcp_tgt_fault)atomic_exchange(&c->t->fault, TCP_TGT_FAULT_NONE);
	}
	if (fault == TCP_TGT_FAULT_BAD_DDGST && cmd.opc != NVME_OPC_READ) {
		/* only a read's C2HData carries the data digest to corrupt: keep it for one */
		int none = TCP_TGT_FAULT_NONE;

		(void)atomic_compare_exchange_strong(&c->t->fault, &none, (int)fault);
		fault = TCP_TGT_FAULT_NONE;
	}
	if (fault == TCP_TGT_FAULT_CLOSE) {
		return -1;
	}
	if (fault == TCP_TGT_FAULT_BAD_TYPE || fault == TCP_TGT_FAULT_TERM_REQ) {
		struct nvme_tcp_term_req_hdr h;

		tgt_pdu_term(&h, NVME_TCP_FES_INVALID_HEADER_FIELD, 0);
		if (fault == TCP_TGT_FAULT_BAD_TYPE) {
			h.ch.pdu_type = 0x0f; /* no type a controller may send */
		}
		(void)send_pdu(c, &h, NVME_TCP_TERM_HLEN, NULL, 0, false, false);
		return -1;
	}
	dir = cmd.opc == NVME_OPC_FABRIC ? (len ? NVME_DATA_HOST_TO_CONTROLLER : NVME_DATA_NONE) :
					   nvme_opc_get_data_transfer((uint8_t)cmd.opc);
	if ((dir & NVME_DATA_HOST_TO_CONTROLLER) && len != 0 && !inc &&
	    get_write_data(c, cmd.cid, len, fault) != 0) {
		return -1;
	}
	if (cmd.opc == NVME_OPC_FABRIC) {
		const struct nvme_fabric_prop_cmd *p = (const void *)&cmd;

		if (p->fctype == NVME_FCTYPE_CONNECT) {
			fabric_connect(c, &cmd, len, &cpl);
		} else if (p->fctype == NVME_FCTYPE_PROPERTY_GET ||
			   p->fctype == NVME_FCTYPE_PROPERTY_SET) {
			tgt_fabric_property(p, &c->regs, &cpl);
		} else {
			tgt_fabric_status(&cpl, NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE);
		}
	} else if (c->qid == 0) {
		if (admin_cmd(c, &cmd, len, &cpl) != 0) {
			return 0;
		}
	} else if (c->bq != NULL) {
		io_cmd(c, &cmd, len, &cpl);
	} else {
		tgt_fabric_status(&cpl, NVME_SCT_GENERIC, NVME_SC_COMMAND_SEQUENCE_ERROR);
	}
	cpl.cid = cmd.cid;
	if ((dir & NVME_DATA_CONTROLLER_TO_HOST) && len != 0 && !nvme_cpl_is_error(&cpl)) {
		bool success = c->t->opts.c2h_success && fault == TCP_TGT_FAULT_NONE;

		if (put_read_data(c, cmd.cid, len, success, fault) != 0) {
			return -1;
		}
		if (success) {
			return 0;
		}
	}
	return send_resp(c, &cpl, fault) != 0 || fault != TCP_TGT_FAULT_NONE ? -1 : 0;
}

/* A digest the target requires was not asked for: C2HTermReq (NVMe/TCP 1.0 section
 * 3.6.2.3: the controller may refuse the ICReq's parameters) naming ICReq's DGST byte. */
static int
refuse_digests(struct tgt_conn *c)
{
	struct nvme_tcp_term_req_hdr h;
	bool h_missing = c->t->opts.hdgst_required && !c->hdgst;

	fprintf(stderr,
		"tcp_tgt: connection refused: the host did not ask for %s digests, which this "
		"target requires (hdgst:1 ddgst:1 in its transport ID ask for them)\n",
		h_missing ? "header" : "data");
	STAT_INC(c->t, refused);
	tgt_pdu_term(&h, NVME_TCP_FES_UNSUPPORTED_PARAMETER,
		     offsetof(struct nvme_tcp_ic_req, dgst));
	c->hdgst = false;
	c->ddgst = false;
	(void)send_pdu(c, &h, NVME_TCP_TERM_HLEN, NULL, 0, false, false);
	return -1;
}

/* ICReq -> ICResp: digests as asked, MAXH2CDATA from the options. */
static int
serve_ic(struct tgt_conn *c)
{
	struct nvme_tcp_ic_req req;
	struct nvme_tcp_ic_resp resp;
	struct iovec iov = { &resp, sizeof(resp) };
	struct tgt_pdu_err e;

	if (rd(c->fd, &req, sizeof(req)) != 0) {
		return -1;
	}
	if (tgt_pdu_icreq(&req, c->t->opts.maxh2cdata, &resp, &c->hdgst, &c->ddgst, &e) != 0) {
		return pdu_error(c, &e);
	}
	if ((c->t->opts.hdgst_required && !c->hdgst) || (c->t->opts.ddgst_required && !c->ddgst)) {
		return refuse_digests(c);
	}
	return wr_iov(c->fd, &iov, 1);
}

static void *
conn_thread(void *arg)
{
	struct tgt_conn *c = arg;
	struct pending *p;

	c->backlog_tail = &c->backlog;
	if (serve_ic(c) == 0) {
		while (!atomic_load(&c->t->stop) && serve_cmd(c) == 0) {
		}
	}
	shutdown(c->fd, SHUT_RDWR);
	while ((p = c->backlog) != NULL) {
		c->backlog = p->next;
		free(p);
	}
	if (c->bq != NULL) {
		(void)nvp_nvme_ctrlr_free_io_qpair(c->bq);
		c->bq = NULL;
	}
	atomic_store(&c->done, true);
	return NULL;
}

static void
conn_free(struct tgt_conn *c)
{
	shutdown(c->fd, SHUT_RDWR);
	if (c->started) {
		pthread_join(c->thread, NULL);
	}
	close(c->fd);
	nvp_env_dma_free(c->buf);
	pthread_mutex_destroy(&c->send_lock);
	free(c);
}

/* Free the connections whose thread has ended (acceptor thread only). */
static void
reap_conns(struct tcp_tgt *t)
{
	uint32_t i = 0;

	while (true) {
		struct tgt_conn *c = NULL;

		pthread_mutex_lock(&t->lock);
		for (; i < t->num_conns; i++) {
			if (atomic_load(&t->conns[i]->done)) {
				c = t->conns[i];
				t->conns[i] = t->conns[--t->num_conns];
				break;
			}
		}
		pthread_mutex_unlock(&t->lock);
		if (c == NULL) {
			return;
		}
		conn_free(c);
	}
}

/* A connection for @fd, running. \return 0, or -1 (@fd closed, nothing kept). */
static int
conn_start(struct tcp_tgt *t, int fd)
{
	struct tgt_conn *c = calloc(1, sizeof(*c));
	int one = 1;

	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (c != NULL) {
		c->buf = nvp_env_dma_zmalloc(TGT_MAX_DATA, 4096, NULL);
		pthread_mutex_init(&c->send_lock, NULL);
		regs_init(c, t->backend);
	}
	pthread_mutex_lock(&t->lock);
	if (c == NULL || c->buf == NULL || t->num_conns == TGT_MAX_CONNS) {
		pthread_mutex_unlock(&t->lock);
		close(fd);
		if (c != NULL) {
			nvp_env_dma_free(c->buf);
			pthread_mutex_destroy(&c->send_lock);
		}
		free(c);
		return -1;
	}
	c->t = t;
	c->fd = fd;
	t->conns[t->num_conns++] = c;
	t->stats.connections++;
	pthread_mutex_unlock(&t->lock);
	c->started = pthread_create(&c->thread, NULL, conn_thread, c) == 0;
	if (!c->started) {
		atomic_store(&c->done, true);
	}
	return 0;
}

static int listen_on(struct sockaddr_storage *a, socklen_t alen, uint16_t *port);

/* Close or re-open the listening socket as tcp_tgt_set_listening() asked. */
static void
follow_listening(struct tcp_tgt *t)
{
	bool want = atomic_load(&t->want_listen);

	if (!want && t->lfd >= 0) {
		close(t->lfd);
		t->lfd = -1;
	} else if (want && t->lfd < 0) {
		struct sockaddr_storage a = t->sa;
		uint16_t port;

		t->lfd = listen_on(&a, t->salen, &port);
		if (t->lfd < 0) {
			t->lfd = -1; /* the port is still held: try again next round */
			return;
		}
	}
	atomic_store(&t->listening, t->lfd >= 0);
}

/* The association of admin connection @a: it and its controller's I/O connections closed
 * (their threads see the end of the stream and are reaped). Under t->lock. */
static void
kato_expired(struct tcp_tgt *t, struct tgt_conn *a)
{
	fprintf(stderr,
		"tcp_tgt: controller %u: no Keep Alive within KATO (%u ms): association "
		"closed\n",
		a->cntlid, a->kato_ms);
	t->stats.kato_expired++;
	atomic_store(&a->ka_end, 0);
	for (uint32_t i = 0; i < t->num_conns; i++) {
		struct tgt_conn *c = t->conns[i];

		if (c == a || (c->qid != 0 && c->cntlid == a->cntlid)) {
			shutdown(c->fd, SHUT_RDWR);
		}
	}
}

/* Every controller's Keep Alive Timer, from the acceptor's loop (a millisecond or so). */
static void
check_kato(struct tcp_tgt *t)
{
	uint64_t now = now_ms();

	pthread_mutex_lock(&t->lock);
	for (uint32_t i = 0; i < t->num_conns; i++) {
		struct tgt_conn *a = t->conns[i];
		uint64_t end = atomic_load(&a->ka_end);

		if (a->qid == 0 && end != 0 && now >= end && !atomic_load(&a->done)) {
			kato_expired(t, a);
		}
	}
	pthread_mutex_unlock(&t->lock);
}

static void *
accept_thread(void *arg)
{
	struct tcp_tgt *t = arg;

	while (!atomic_load(&t->stop)) {
		int fd;

		follow_listening(t);
		fd = t->lfd >= 0 ? accept4(t->lfd, NULL, NULL, SOCK_CLOEXEC) : -1;
		reap_conns(t);
		check_kato(t);
		if (fd < 0) {
			usleep(1000);
			continue;
		}
		(void)conn_start(t, fd);
	}
	return NULL;
}

/* ---- life ---- */

void
tcp_tgt_opts_init(struct tcp_tgt_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->addr = "127.0.0.1";
	opts->port = 0;
	opts->subnqn = "nqn.2026-01.io.nvpoll:test";
	opts->incapsule = 8192;
	opts->maxh2cdata = 32768;
	opts->c2h_chunk = 32768;
	opts->r2t_chunk = 65536;
	opts->ana_state = NVME_ANA_OPTIMIZED;
}

/* The listening socket on @a (@alen bytes), its port in *@port. \return the fd or -errno. */
static int
listen_on(struct sockaddr_storage *a, socklen_t alen, uint16_t *port)
{
	int one = 1, rc = 0;
	int fd = socket(a->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		return -errno;
	}
	if (a->ss_family == AF_INET6) {
		/* ::1 is IPv6 only; :: too, as the kernel's target listens per family */
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, (struct sockaddr *)a, alen) != 0 || listen(fd, 64) != 0 ||
	    getsockname(fd, (struct sockaddr *)a, &alen) != 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	*port = ntohs(a->ss_family == AF_INET6 ? ((struct sockaddr_in6 *)a)->sin6_port :
						 ((struct sockaddr_in *)a)->sin_port);
	return fd;
}

/* @addr, numeric IPv4 or IPv6, with @port into @a. \return its length, 0 if no address. */
static socklen_t
parse_addr(const char *addr, uint16_t port, struct sockaddr_storage *a)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)a;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)a;

	memset(a, 0, sizeof(*a));
	if (addr == NULL) {
		return 0;
	}
	if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
		return sizeof(*a4);
	}
	if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		return sizeof(*a6);
	}
	return 0;
}

int
tcp_tgt_start(struct nvp_nvme_ctrlr *backend, const struct tcp_tgt_opts *opts, struct tcp_tgt **out)
{
	struct sockaddr_storage a;
	socklen_t alen = parse_addr(opts->addr, opts->port, &a);
	struct tcp_tgt *t;
	int rc;

	if (alen == 0 || opts->subnqn == NULL || opts->subnqn[0] == '\0' ||
	    strlen(opts->subnqn) >= NVME_NQN_FIELD_SIZE) {
		return -EINVAL;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL) {
		return -ENOMEM;
	}
	t->backend = backend;
	t->opts = *opts;
	t->family = a.ss_family;
	nvp_strlcpy(t->subnqn, opts->subnqn, sizeof(t->subnqn));
	inet_ntop(a.ss_family,
		  a.ss_family == AF_INET6 ? (void *)&((struct sockaddr_in6 *)&a)->sin6_addr :
					    (void *)&((struct sockaddr_in *)&a)->sin_addr,
		  t->addr, sizeof(t->addr));
	atomic_init(&t->ana_state, opts->ana_state);
	atomic_init(&t->ana_chgcnt, 1);
	pthread_mutex_init(&t->lock, NULL);
	t->lfd = listen_on(&a, alen, &t->port);
	t->sa = a; /* with the port listen_on() found, for listening again on it */
	t->salen = alen;
	atomic_init(&t->want_listen, true);
	atomic_init(&t->listening, t->lfd >= 0);
	rc = t->lfd < 0 ? t->lfd : -pthread_create(&t->acceptor, NULL, accept_thread, t);
	if (rc != 0) {
		if (t->lfd >= 0) {
			close(t->lfd);
		}
		pthread_mutex_destroy(&t->lock);
		free(t);
		return rc;
	}
	*out = t;
	return 0;
}

uint16_t
tcp_tgt_port(const struct tcp_tgt *t)
{
	return t->port;
}

void
tcp_tgt_trid(const struct tcp_tgt *t, const char *extra, char *buf, size_t len)
{
	snprintf(buf, len, "trtype:TCP adrfam:%s traddr:%s trsvcid:%u subnqn:%s%s%s",
		 t->family == AF_INET6 ? "IPv6" : "IPv4", t->addr, t->port, t->subnqn,
		 extra != NULL ? " " : "", extra != NULL ? extra : "");
}

void
tcp_tgt_set_fault(struct tcp_tgt *t, enum tcp_tgt_fault fault)
{
	atomic_store(&t->fault, (int)fault);
}

void
tcp_tgt_get_stats(struct tcp_tgt *t, struct tcp_tgt_stats *stats)
{
	pthread_mutex_lock(&t->lock);
	*stats = t->stats;
	pthread_mutex_unlock(&t->lock);
}

void
tcp_tgt_drop_conns(struct tcp_tgt *t)
{
	pthread_mutex_lock(&t->lock);
	for (uint32_t i = 0; i < t->num_conns; i++) {
		shutdown(t->conns[i]->fd, SHUT_RDWR);
	}
	t->stats.drops++;
	pthread_mutex_unlock(&t->lock);
}

void
tcp_tgt_stall(struct tcp_tgt *t, uint32_t ms)
{
	atomic_store(&t->stall_end, ms != 0 ? now_ms() + ms : 0);
	if (ms != 0) {
		STAT_INC(t, stalls);
	}
}

void
tcp_tgt_set_admin_delay(struct tcp_tgt *t, uint32_t ms)
{
	atomic_store(&t->admin_delay_ms, ms);
}

uint32_t
tcp_tgt_set_ana_state(struct tcp_tgt *t, uint8_t state, bool aen)
{
	union nvme_async_event_completion ev = { .raw = 0 };
	struct nvme_cpl cpl;
	uint32_t sent = 0;

	atomic_store(&t->ana_state, state);
	atomic_fetch_add(&t->ana_chgcnt, 1);
	if (!aen) {
		return 0;
	}
	ev.bits.async_event_type = NVME_ASYNC_EVENT_TYPE_NOTICE;
	ev.bits.async_event_info = NVME_ASYNC_EVENT_ANA_CHANGE;
	ev.bits.log_page_identifier = NVME_LOG_ASYMMETRIC_NAMESPACE_ACCESS;
	pthread_mutex_lock(&t->lock);
	for (uint32_t i = 0; i < t->num_conns; i++) {
		struct tgt_conn *c = t->conns[i];

		if (c->qid != 0 || c->discovery || c->num_aers == 0 || atomic_load(&c->done)) {
			continue;
		}
		memset(&cpl, 0, sizeof(cpl));
		cpl.cdw0 = ev.raw;
		cpl.cid = c->aer_cids[--c->num_aers];
		if (send_resp(c, &cpl, TCP_TGT_FAULT_NONE) == 0) {
			sent++;
			t->stats.ana_aens++;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return sent;
}

int
tcp_tgt_set_listening(struct tcp_tgt *t, bool on)
{
	atomic_store(&t->want_listen, on);
	for (int ms = 0; ms < 5000; ms++) {
		if (atomic_load(&t->listening) == on) {
			return 0;
		}
		usleep(1000);
	}
	return -ETIMEDOUT;
}

void
tcp_tgt_stop(struct tcp_tgt *t)
{
	atomic_store(&t->stop, true);
	pthread_join(t->acceptor, NULL);
	for (uint32_t i = 0; i < t->num_conns; i++) {
		conn_free(t->conns[i]);
	}
	if (t->lfd >= 0) {
		close(t->lfd);
	}
	pthread_mutex_destroy(&t->lock);
	free(t);
}

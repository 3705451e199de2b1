/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz nvp_tgt's receive path (app/tgt/tgt_conn.c, the PDU codec and Fabrics answers it
 * shares with the tools' small target, app/common/tgt_pdu.c and tgt_fabric.c, and the
 * command handlers behind it, tgt_ctrlr.c, tgt_io.c): one connection of a target serving a subsystem with a RAM disk,
 * whose socket is one end of a socketpair. The input's first byte chooses a preamble
 * (nothing; a valid ICReq; ICReq + admin Connect; ICReq + I/O Connect after an admin
 * association on another connection; each with or without digests); the rest is written
 * into the other end in chunks whose sizes the input chooses, the connection and the
 * bdevs polled between chunks, what the target answers read and dropped. Then the host
 * end closes. The connection must end and be freed within a bounded number of passes
 * (ASan: nothing written outside a buffer, nothing leaked), whatever the bytes.
 */
#include "nvp_config.h"

#include <sys/socket.h>
#include <unistd.h>

#include "tgt_pdu.c"
#include "tgt_fabric.c"
#include "tgt_config.c"
#include "tgt_conn.c"
#include "tgt_ctrlr.c"
#include "tgt_io.c"

#include "fuzz.h"

#define FZ_NQN "nqn.2026-01.io.nvpoll:fuzz"
#define FZ_HOST "nqn.2026-01.io.nvpoll:fuzz-host"

static struct tgt g_t;
static struct tgt_subsys g_ss;
static bool g_ready;

static int
fz_setup(void)
{
	struct nvp_bdev_malloc_opts mo;
	struct tgt_subsys *d;
	struct nvp_bdev *b;

	if (fz_env_init() != 0) {
		return -1;
	}
	nvp_bdev_malloc_opts_init(&mo, sizeof(mo));
	mo.name = "fz0";
	mo.num_blocks = 256;
	mo.block_size = 512;
	if (nvp_bdev_malloc_create(&mo, &b) != 0) {
		return -1;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL) {
		return -1;
	}
	nvp_strlcpy(d->nqn, NVME_DISCOVERY_NQN, sizeof(d->nqn));
	d->discovery = true;
	d->allow_any_host = true;
	nvp_strlcpy(g_ss.nqn, FZ_NQN, sizeof(g_ss.nqn));
	nvp_strlcpy(g_ss.sn, "FUZZ", sizeof(g_ss.sn));
	nvp_strlcpy(g_ss.mn, "fuzz", sizeof(g_ss.mn));
	g_ss.allow_any_host = true;
	g_ss.num_ns = 1;
	g_ss.ns[0].nsid = 1;
	g_ss.ns[0].bdev = b;
	nvp_strlcpy(g_ss.ns[0].bdev_name, "fz0", sizeof(g_ss.ns[0].bdev_name));
	g_ss.listener[0] = true;
	g_t.subsys[0] = d;
	g_t.subsys[1] = &g_ss;
	g_t.num_subsys = 2;
	g_t.num_listeners = 1;
	g_t.listeners[0].family = AF_INET;
	nvp_strlcpy(g_t.listeners[0].traddr, "127.0.0.1", sizeof(g_t.listeners[0].traddr));
	nvp_strlcpy(g_t.listeners[0].trsvcid, "4420", sizeof(g_t.listeners[0].trsvcid));
	g_t.opts.in_capsule = 8192;
	g_t.opts.maxh2cdata = 65536;
	g_t.num_threads = 1;
	g_t.threads[0].t = &g_t;
	pthread_mutex_init(&g_t.ctrlr_lock, NULL);
	return nvp_bdev_poll_group_create(&g_t.threads[0].group);
}

/* ---- preambles ---- */

static size_t
put_icreq(uint8_t *p, bool dgst)
{
	struct nvme_tcp_ic_req *ic = (void *)p;

	memset(ic, 0, sizeof(*ic));
	ic->ch.pdu_type = NVME_TCP_PDU_ICREQ;
	ic->ch.hlen = NVME_TCP_IC_LEN;
	ic->ch.plen = NVME_TCP_IC_LEN;
	ic->dgst = dgst ? NVME_TCP_DGST_HDGST | NVME_TCP_DGST_DDGST : 0;
	return NVME_TCP_IC_LEN;
}

/* A Connect capsule with its data in-capsule, framed with or without digests. */
static size_t
put_connect(uint8_t *p, bool dgst, uint16_t qid, uint16_t cntlid)
{
	struct nvme_tcp_cmd *c = (void *)p;
	struct nvme_fabric_connect_cmd *fc = (void *)&c->ccsqe;
	uint32_t hd = dgst ? 4u : 0u, pdo = NVME_TCP_CMD_HLEN + hd;
	struct nvme_fabric_connect_data *d = (void *)(p + pdo);
	uint32_t dd;

	memset(p, 0, pdo + sizeof(*d) + 4);
	c->ch.pdu_type = NVME_TCP_PDU_CAPSULE_CMD;
	c->ch.flags = dgst ? NVME_TCP_FLAG_HDGSTF | NVME_TCP_FLAG_DDGSTF : 0;
	c->ch.hlen = NVME_TCP_CMD_HLEN;
	c->ch.pdo = (uint8_t)pdo;
	c->ch.plen = pdo + (uint32_t)sizeof(*d) + hd;
	fc->opcode = NVME_OPC_FABRIC;
	fc->flags = NVME_PSDT_SGL_MPTR_CONTIG << 6;
	fc->cid = 1;
	fc->fctype = NVME_FCTYPE_CONNECT;
	fc->sgl1.length = sizeof(*d);
	fc->sgl1.type = 0;
	fc->sgl1.subtype = 1;
	fc->qid = qid;
	fc->sqsize = 31;
	d->cntlid = cntlid;
	nvp_strlcpy(d->subnqn, FZ_NQN, sizeof(d->subnqn));
	nvp_strlcpy(d->hostnqn, FZ_HOST, sizeof(d->hostnqn));
	if (dgst) {
		uint32_t h = tgt_pdu_digest(p, NVME_TCP_CMD_HLEN);

		memcpy(p + NVME_TCP_CMD_HLEN, &h, 4);
		dd = tgt_pdu_digest(d, sizeof(*d));
		memcpy(p + pdo + sizeof(*d), &dd, 4);
	}
	return c->ch.plen;
}

/* ---- one connection ---- */

static void
drain_peer(int fd)
{
	uint8_t sink[65536];

	while (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0) {
	}
}

/* Poll the thread's connections and its bdevs once. \return whether @c is still there. */
static bool
pass(struct tgt_conn *c)
{
	struct tgt_thread *th = &g_t.threads[0];
	bool alive = false;

	(void)nvp_bdev_poll_group_poll(th->group);
	for (struct tgt_conn *x = th->conns, *next; x != NULL; x = next) {
		next = x->next;
		if (x == c) {
			alive = tgt_conn_poll(x) >= 0;
		} else {
			(void)tgt_conn_poll(x);
		}
	}
	return alive;
}

/* A connection of the thread on a new socketpair. \return the host's end or -1. */
static int
conn_new(struct tgt_conn **out)
{
	struct tgt_thread *th = &g_t.threads[0];
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) != 0) {
		return -1;
	}
	if (tgt_conn_create(th, sv[0], 0) != 0) {
		close(sv[1]);
		return -1;
	}
	*out = th->conns;
	return sv[1];
}

/* Close the host's end of @c and pass until the connection is freed. */
static void
conn_end(struct tgt_conn *c, int fd)
{
	bool alive = true;

	shutdown(fd, SHUT_WR);
	for (int i = 0; i < 100000 && alive; i++) {
		drain_peer(fd);
		alive = pass(c);
	}
	FZ_CHECK(!alive, "the connection was not freed after its host closed");
	close(fd);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t pre[4096];
	struct tgt_conn *admin = NULL, *c = NULL;
	int afd = -1, fd;
	size_t n = 0;
	uint8_t mode;
	bool dgst;

	if (!g_ready) {
		FZ_CHECK(fz_setup() == 0, "set-up failed");
		g_ready = true;
	}
	if (size == 0) {
		return 0;
	}
	mode = data[0] & 3u;
	dgst = (data[0] & 4u) != 0;
	data++;
	size--;
	if (mode == 3) { /* an association, then an I/O queue of it on this connection */
		afd = conn_new(&admin);
		if (afd < 0) {
			return 0;
		}
		n = put_icreq(pre, false);
		n += put_connect(pre + n, false, 0, 0xffff);
		(void)send(afd, pre, n, 0);
		for (int i = 0; i < 100; i++) {
			(void)pass(admin);
			drain_peer(afd);
		}
		n = 0;
	}
	fd = conn_new(&c);
	if (fd < 0) {
		if (admin != NULL) {
			conn_end(admin, afd);
		}
		return 0;
	}
	if (mode >= 1) {
		n = put_icreq(pre, dgst);
	}
	if (mode >= 2) {
		uint16_t cntlid = admin != NULL && admin->ctrlr != NULL ? admin->ctrlr->cntlid : 0;

		n += put_connect(pre + n, dgst, mode == 3 ? 1 : 0, mode == 3 ? cntlid : 0xffff);
	}
	if (n != 0) {
		(void)send(fd, pre, n, 0);
		(void)pass(c);
	}
	while (size > 0) {
		size_t chunk = NVP_MIN(size, (size_t)data[0] * 8u + 1u);
		ssize_t s = send(fd, data, chunk, MSG_NOSIGNAL);

		if (s <= 0) {
			break;
		}
		data += s;
		size -= (size_t)s;
		for (int i = 0; i < 4; i++) {
			if (!pass(c)) {
				c = NULL;
				break;
			}
			drain_peer(fd);
		}
		if (c == NULL) {
			break;
		}
	}
	if (c != NULL) {
		conn_end(c, fd);
	} else {
		close(fd);
	}
	if (admin != NULL) {
		conn_end(admin, afd);
	}
	if (getenv("FUZZ_VERBOSE") != NULL) {
		fprintf(stderr, "fuzz_tgt_pdu: %llu commands, %llu bytes read, %llu written\n",
			(unsigned long long)atomic_load(&g_t.stats.commands),
			(unsigned long long)atomic_load(&g_t.stats.read_bytes),
			(unsigned long long)atomic_load(&g_t.stats.write_bytes));
	}
	FZ_CHECK(g_t.threads[0].conns == NULL, "a connection is left");
	FZ_CHECK(g_t.ctrlrs == NULL, "a controller is left after its connections ended");
	return 0;
}

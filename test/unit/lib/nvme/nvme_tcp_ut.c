/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the NVMe/TCP transport's socket side (nvme_tcp.c): transport ID options
 * (trsvcid, adrfam and the address's family, digests, kato, hostnqn) and their errors, the in-capsule limit taken
 * from IOCCSZ, a capsule sent through a socket that takes a few bytes at a time (partial
 * writes resume where they stopped, the bytes on the wire are the PDU), and a peer that
 * closes: the qpair fails, its requests complete with a host path error, and on the
 * admin queue the controller is marked failed. Keep Alive: sent from an I/O poll once
 * due (the admin lock tried, never waited for), once per KATO/2 whichever thread polls.
 */
#include "nvme/nvme.c"
#include "nvme/nvme_tcp.c"
#include "nvme/nvme_tcp_pdu.c"
#include "nvme/nvme_fiber.c"

#include <sys/socket.h>

#include "ut_nvme.h"

static unsigned int g_aborts, g_ctrlr_fails;
static unsigned int g_keep_alives, g_admin_polls, g_trylocks;
static bool g_trylock_ok = true;
static uint8_t g_abort_sct, g_abort_sc;
static bool g_abort_dnr;

/* ---- neighbours ---- */

void
nvme_ctrlr_fail(struct nvp_nvme_ctrlr *ctrlr, const char *why)
{
	(void)why;
	g_ctrlr_fails++;
	atomic_store(&ctrlr->is_failed, true);
}

/* Reconnect is off in these tests: a lost connection fails the controller, as before. */
void
nvme_ctrlr_conn_lost(struct nvp_nvme_ctrlr *ctrlr, const char *why)
{
	nvme_ctrlr_fail(ctrlr, why);
}

void
nvme_qpair_conn_lost(struct nvp_nvme_qpair *qpair, const char *why)
{
	nvme_ctrlr_conn_lost(qpair->ctrlr, why);
}

void
nvme_qpair_abort_all(struct nvp_nvme_qpair *qpair, uint8_t sct, uint8_t sc, bool dnr)
{
	(void)qpair;
	g_aborts++;
	g_abort_sct = sct;
	g_abort_sc = sc;
	g_abort_dnr = dnr;
}

void
nvme_cpl_set_status(struct nvme_cpl *cpl, uint8_t sct, uint8_t sc, bool dnr)
{
	cpl->status.sct = sct;
	cpl->status.sc = sc;
	cpl->status.dnr = dnr;
}

int
nvme_qpair_init(struct nvp_nvme_qpair *qpair, struct nvp_nvme_ctrlr *ctrlr, uint16_t id,
		uint32_t num_entries, uint32_t num_requests, bool with_dma_pages)
{
	(void)num_requests;
	(void)with_dma_pages;
	qpair->ctrlr = ctrlr;
	qpair->id = id;
	qpair->is_admin = id == 0;
	qpair->num_entries = num_entries;
	qpair->num_trackers = num_entries;
	nvme_qpair_set_cid_bits(qpair, num_entries);
	return 0;
}

void
nvme_qpair_fini(struct nvp_nvme_qpair *qpair)
{
	(void)qpair;
}

int
nvme_qpair_submit_request(struct nvp_nvme_qpair *qpair, struct nvme_request *req)
{
	if (req->cmd.opc == NVME_OPC_KEEP_ALIVE) {
		CU_ASSERT_TRUE(qpair->is_admin);
		g_keep_alives++;
		SLIST_INSERT_HEAD(&qpair->free_req, req, free_link); /* completed at once */
	}
	return 0;
}

int32_t
nvme_qpair_process(struct nvp_nvme_qpair *qpair, uint32_t max_completions)
{
	(void)max_completions;
	CU_ASSERT_TRUE(qpair->is_admin);
	g_admin_polls++;
	return 0;
}

bool
nvme_ctrlr_trylock(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	g_trylocks++;
	return g_trylock_ok;
}

void
nvme_qpair_complete_slow(struct nvp_nvme_qpair *qpair, const struct nvme_cpl *cpl)
{
	(void)qpair;
	(void)cpl;
}

void
nvme_ctrlr_lock(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
}

void
nvme_ctrlr_unlock(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
}

int
nvme_ctrlr_construct(struct nvp_nvme_ctrlr *ctrlr, const struct nvp_nvme_transport_id *trid,
		     const struct nvp_nvme_ctrlr_opts *opts, const struct nvme_transport_ops *t)
{
	(void)ctrlr;
	(void)trid;
	(void)opts;
	(void)t;
	return -ENOSYS;
}

void
nvme_ctrlr_destruct(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
}

int
nvme_ctrlr_set_cap_vs(struct nvp_nvme_ctrlr *ctrlr, union nvme_cap_register cap,
		      union nvme_vs_register vs)
{
	ctrlr->cap = cap;
	ctrlr->vs = vs;
	return 0;
}

/* ---- tests ---- */

/* A trid as nvp_nvme_transport_id_parse() leaves it: extra pairs in args as k=v. */
static int
parse(const char *traddr, const char *args, struct nvme_tcp_ctrlr *tc)
{
	struct nvp_nvme_transport_id trid;

	memset(tc, 0, sizeof(*tc));
	memset(&trid, 0, sizeof(trid));
	trid.trtype = NVP_NVME_TRANSPORT_TCP;
	nvp_strlcpy(trid.traddr, traddr, sizeof(trid.traddr));
	nvp_strlcpy(trid.subnqn, "nqn.x", sizeof(trid.subnqn));
	nvp_strlcpy(trid.args, args, sizeof(trid.args));
	return nvme_tcp_parse_trid(tc, &trid);
}

static void
test_trid_options(void)
{
	struct nvme_tcp_ctrlr tc;

	CU_ASSERT_EQUAL(parse("127.0.0.1", "", &tc), 0);
	CU_ASSERT_STRING_EQUAL(tc.trsvcid, "4420");
	CU_ASSERT_EQUAL(tc.family, AF_INET);
	CU_ASSERT_FALSE(tc.want_hdgst);
	CU_ASSERT_FALSE(tc.want_ddgst);
	CU_ASSERT_EQUAL(tc.kato_ms, NVME_TCP_DEFAULT_KATO_MS);
	CU_ASSERT_EQUAL(strncmp(tc.hostnqn, "nqn.2014-08.org.nvmexpress:uuid:", 32), 0);
	CU_ASSERT_EQUAL(strlen(tc.hostnqn), 32 + 36);

	CU_ASSERT_EQUAL(parse("::1",
			      "adrfam=IPv6 trsvcid=8009 hdgst=1 ddgst=on kato=0 hostnqn=nqn.host",
			      &tc),
			0);
	CU_ASSERT_STRING_EQUAL(tc.trsvcid, "8009");
	CU_ASSERT_EQUAL(tc.family, AF_INET6);
	CU_ASSERT_TRUE(tc.want_hdgst);
	CU_ASSERT_TRUE(tc.want_ddgst);
	CU_ASSERT_EQUAL(tc.kato_ms, 0);
	CU_ASSERT_STRING_EQUAL(tc.hostnqn, "nqn.host");

	ut_log_clear();
	CU_ASSERT_EQUAL(parse("1.2.3.4", "adrfam=IPX", &tc), -EINVAL);
	CU_ASSERT(ut_log_has("adrfam 'IPX'"));
	CU_ASSERT_EQUAL(parse("::1", "adrfam=IPv5", &tc), -EINVAL);
	CU_ASSERT(ut_log_has("adrfam 'IPv5' is not IPv4 or IPv6"));
	/* The family from the address when adrfam is left out; a mismatch is refused. */
	CU_ASSERT_EQUAL(parse("fe80::1", "", &tc), 0);
	CU_ASSERT_EQUAL(tc.family, AF_INET6);
	CU_ASSERT_EQUAL(parse("::1", "adrfam=IPv4", &tc), -EINVAL);
	CU_ASSERT(ut_log_has(
		"traddr '::1' is not an IPv4 address (an IPv6 address takes adrfam:IPv6)"));
	CU_ASSERT_EQUAL(parse("127.0.0.1", "adrfam=IPv6", &tc), -EINVAL);
	CU_ASSERT(ut_log_has(
		"'127.0.0.1' is not an IPv6 address (an IPv4 address takes adrfam:IPv4)"));
	CU_ASSERT_EQUAL(parse("localhost", "", &tc), -EINVAL);
	CU_ASSERT(ut_log_has("host names are not looked up"));
	CU_ASSERT_EQUAL(parse("::1", "trsvcid=65536", &tc), -EINVAL);
	CU_ASSERT(ut_log_has("trsvcid '65536' is not a TCP port"));
	CU_ASSERT_EQUAL(parse("1.2.3.4", "kato=abc", &tc), -EINVAL);
	CU_ASSERT(ut_log_has("kato 'abc'"));
	CU_ASSERT_EQUAL(parse("", "", &tc), -EINVAL);
	CU_ASSERT(ut_log_has("needs traddr"));
	/* The pairs through the driver's one lookup: each key once, with a value that fits. */
	ut_log_clear();
	CU_ASSERT_EQUAL(parse("1.2.3.4", "kato=1 trsvcid=4421 KATO=2", &tc), -EINVAL);
	CU_ASSERT(ut_log_has("'kato' is given twice"));
	CU_ASSERT_EQUAL(parse("1.2.3.4", "hdgst=1 hdgst=0", &tc), -EINVAL);
	CU_ASSERT(ut_log_has("'hdgst' is given twice"));
	CU_ASSERT_EQUAL(parse("1.2.3.4", "trsvcid=", &tc), -EINVAL);
	CU_ASSERT(ut_log_has("'trsvcid' has an empty value"));
	CU_ASSERT_EQUAL(parse("1.2.3.4", "trsvcid=442044204420442044204420442044204420", &tc),
			-EINVAL);
	CU_ASSERT(ut_log_has("value of 'trsvcid' is longer than"));
	/* A key it does not know is not its business (a provider's or a tool's). */
	CU_ASSERT_EQUAL(parse("1.2.3.4", "trsvcid=4421 other=x", &tc), 0);
	CU_ASSERT_STRING_EQUAL(tc.trsvcid, "4421");
}

/* The same checks when a transport ID is parsed; the controller's name brackets IPv6. */
static void
test_trid_check_and_name(void)
{
	struct nvp_nvme_transport_id trid;
	struct nvme_tcp_ctrlr tc;

	memset(&trid, 0, sizeof(trid));
	CU_ASSERT_EQUAL(tcp_trid_check(&trid), 0); /* no address yet: connect says so */
	nvp_strlcpy(trid.traddr, "::1", sizeof(trid.traddr));
	nvp_strlcpy(trid.args, "adrfam=IPv6 trsvcid=4420", sizeof(trid.args));
	CU_ASSERT_EQUAL(tcp_trid_check(&trid), 0);
	nvp_strlcpy(trid.args, "adrfam=IPv4", sizeof(trid.args));
	CU_ASSERT_EQUAL(tcp_trid_check(&trid), -EINVAL);

	CU_ASSERT_EQUAL(parse("::1", "trsvcid=4420", &tc), 0);
	nvme_tcp_set_name(&tc, "tcp");
	CU_ASSERT_STRING_EQUAL(tc.ctrlr.name, "tcp [::1]:4420");
	CU_ASSERT_EQUAL(parse("127.0.0.1", "", &tc), 0);
	nvme_tcp_set_name(&tc, "discovery");
	CU_ASSERT_STRING_EQUAL(tc.ctrlr.name, "discovery 127.0.0.1:4420");
}

static void
test_incapsule_max(void)
{
	static struct nvp_nvme_ctrlr c;
	struct nvme_fabric_ctrlr_data *f = (void *)c.cdata.nvmf_specific;

	c.max_xfer_size = 131072;
	f->ioccsz = 4; /* the SQE alone */
	CU_ASSERT_EQUAL(io_incapsule_max(&c), 0);
	f->ioccsz = 4 + 8192 / 16;
	CU_ASSERT_EQUAL(io_incapsule_max(&c), 8192);
	f->icdoff = 1; /* data at an offset we do not place it at: none in the capsule */
	CU_ASSERT_EQUAL(io_incapsule_max(&c), 0);
	f->icdoff = 0;
	f->ioccsz = 0x100000;
	CU_ASSERT_EQUAL(io_incapsule_max(&c), 131072);
}

/* A qpair on one end of a socketpair whose send buffer is small. */
static struct nvme_tcp_qpair *
make_qpair(struct nvp_nvme_ctrlr *ctrlr, uint16_t qid, int *peer)
{
	struct nvp_nvme_io_qpair_opts o = { .io_queue_size = 8, .io_queue_requests = 8 };
	struct nvp_nvme_qpair *qpair = NULL;
	struct nvme_tcp_qpair *tq;
	int sv[2], small = 4096;

	CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	(void)setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	CU_ASSERT_EQUAL_FATAL(nvme_tcp_qpair_create(ctrlr, qid, &o, &qpair), 0);
	tq = nvme_tcp_qpair(qpair);
	tq->fd = sv[0];
	tq->conn = NVME_TCP_CONN_READY;
	tq->maxh2cdata = 4096;
	tq->incapsule_max = 1u << 20;
	*peer = sv[1];
	return tq;
}

static void
test_partial_send(void)
{
	static struct nvme_tcp_ctrlr tc;
	static uint8_t data[200000], wire[sizeof(data) + 200];
	struct nvme_tracker tr = { .cid = 5 };
	struct nvme_request req;
	struct nvme_tcp_qpair *tq;
	size_t got = 0;
	uint32_t i, rounds = 0;
	int peer;

	tc.ctrlr.opts.admin_queue_size = 8;
	tq = make_qpair(&tc.ctrlr, 1, &peer);
	for (i = 0; i < sizeof(data); i++) {
		data[i] = (uint8_t)(i * 13 + 1);
	}
	nvme_request_init(&req, NULL, NULL);
	req.cmd.opc = NVME_OPC_WRITE;
	nvme_request_set_contig(&req, data, sizeof(data));
	CU_ASSERT_EQUAL(tcp_qpair_submit(&tq->qpair, &tr, &req), 0);
	CU_ASSERT_TRUE(tq->treqs[5].in_capsule);
	while (!STAILQ_EMPTY(&tq->send_q) && rounds++ < 10000) {
		ssize_t n;

		CU_ASSERT_EQUAL(tcp_flush(tq), 0);
		n = recv(peer, wire + got, sizeof(wire) - got, MSG_DONTWAIT);
		if (n > 0) {
			got += (size_t)n;
		}
	}
	while (got < 72 + sizeof(data)) {
		ssize_t n = recv(peer, wire + got, sizeof(wire) - got, MSG_DONTWAIT);

		if (n <= 0) {
			break;
		}
		got += (size_t)n;
	}
	CU_ASSERT(rounds > 2); /* it did take several partial writes */
	CU_ASSERT_EQUAL(got, 72 + sizeof(data));
	CU_ASSERT_EQUAL(wire[0], NVME_TCP_PDU_CAPSULE_CMD);
	CU_ASSERT_EQUAL(((struct nvme_tcp_cmd *)(void *)wire)->ccsqe.cid, 5);
	CU_ASSERT_EQUAL(memcmp(wire + 72, data, sizeof(data)), 0);
	CU_ASSERT_EQUAL(tq->treqs[5].send_kind, NVME_TCP_SEND_NONE);
	close(peer);
	tcp_qpair_destroy(&tq->qpair);
}

static void
test_peer_closes(void)
{
	static struct nvme_tcp_ctrlr tc;
	struct nvme_tcp_qpair *tq;
	int peer;

	tc.ctrlr.opts.admin_queue_size = 8;
	g_aborts = g_ctrlr_fails = 0;
	tq = make_qpair(&tc.ctrlr, 1, &peer);
	CU_ASSERT_EQUAL(tcp_qpair_process_completions(&tq->qpair, 0), 0); /* nothing yet */
	close(peer);
	CU_ASSERT_EQUAL(tcp_qpair_process_completions(&tq->qpair, 0), -ENXIO);
	CU_ASSERT_EQUAL(g_aborts, 1);
	CU_ASSERT_EQUAL(g_abort_sct, NVME_SCT_PATH);
	CU_ASSERT_EQUAL(g_abort_sc, NVME_SC_HOST_PATH_ERROR);
	CU_ASSERT_FALSE(g_abort_dnr); /* a reset reconnects: retryable */
	CU_ASSERT_TRUE(tq->qpair.failed);
	CU_ASSERT_EQUAL(tq->fd, -1);
	CU_ASSERT_EQUAL(g_ctrlr_fails, 0); /* an I/O queue: the controller lives on */
	CU_ASSERT_EQUAL(tcp_qpair_process_completions(&tq->qpair, 0), -ENXIO);
	CU_ASSERT_EQUAL(g_aborts, 1);
	tcp_qpair_destroy(&tq->qpair);

	/* The admin queue's connection: the controller is failed too. */
	tq = make_qpair(&tc.ctrlr, 0, &peer);
	close(peer);
	CU_ASSERT_EQUAL(tcp_qpair_process_completions(&tq->qpair, 0), -ENXIO);
	CU_ASSERT_EQUAL(g_ctrlr_fails, 1);
	tcp_qpair_destroy(&tq->qpair);
}

/* An application that polls only an I/O queue keeps the controller alive. */
static void
test_keep_alive_from_io_poll(void)
{
	static struct nvme_tcp_ctrlr tc;
	static struct nvme_request ka_req;
	struct nvme_tcp_qpair *admin, *io;
	uint64_t half;
	int apeer, ipeer;

	tc.ctrlr.opts.admin_queue_size = 8;
	tc.ctrlr.ticks_hz = 1000000;
	tc.kato_ms = 1000;
	half = nvme_ms_to_ticks(&tc.ctrlr, 500);
	admin = make_qpair(&tc.ctrlr, 0, &apeer);
	tc.ctrlr.adminq = &admin->qpair;
	SLIST_INSERT_HEAD(&admin->qpair.free_req, &ka_req, free_link);
	ka_arm(&tc, 1000);
	io = make_qpair(&tc.ctrlr, 1, &ipeer);
	io->ka_due = atomic_load(&tc.ka_next);
	CU_ASSERT_EQUAL(io->ka_due, 1000 + half);
	g_keep_alives = g_admin_polls = g_trylocks = 0;
	g_trylock_ok = true;

	/* Before it is due: nothing, not even the lock tried. */
	io->qpair.poll_ticks = 1000 + half - 1;
	CU_ASSERT_EQUAL(tcp_qpair_process_completions(&io->qpair, 0), 0);
	CU_ASSERT_EQUAL(g_trylocks, 0);
	CU_ASSERT_EQUAL(g_keep_alives, 0);

	/* Due, the admin queue busy on another thread: no waiting, asked again in 1 ms (not
	 * on every poll). */
	g_trylock_ok = false;
	io->qpair.poll_ticks = 1000 + half;
	CU_ASSERT_EQUAL(tcp_qpair_process_completions(&io->qpair, 0), 0);
	CU_ASSERT_EQUAL(g_keep_alives, 0);
	CU_ASSERT_EQUAL(g_trylocks, 1);
	CU_ASSERT_EQUAL(io->ka_due, 1000 + half + 1000);
	io->qpair.poll_ticks = 1000 + half + 999;
	CU_ASSERT_EQUAL(tcp_qpair_process_completions(&io->qpair, 0), 0);
	CU_ASSERT_EQUAL(g_trylocks, 1);

	/* Then sent from this I/O poll, the admin queue's completions processed with it. */
	g_trylock_ok = true;
	io->qpair.poll_ticks = 1000 + half + 1000;
	CU_ASSERT_EQUAL(tcp_qpair_process_completions(&io->qpair, 0), 0);
	CU_ASSERT_EQUAL(g_keep_alives, 1);
	CU_ASSERT_EQUAL(g_admin_polls, 1);
	CU_ASSERT_EQUAL(atomic_load(&tc.ka_next), 2000 + 2 * half);
	CU_ASSERT_EQUAL(io->ka_due, 2000 + 2 * half);

	/* The admin poll, when due, sends the next one; the I/O poll then only catches up. */
	admin->ka_due = 0;
	admin->qpair.poll_ticks = 2000 + 2 * half;
	CU_ASSERT_EQUAL(tcp_qpair_process_completions(&admin->qpair, 0), 0);
	CU_ASSERT_EQUAL(g_keep_alives, 2);
	io->qpair.poll_ticks = 2000 + 2 * half + 1;
	CU_ASSERT_EQUAL(tcp_qpair_process_completions(&io->qpair, 0), 0);
	CU_ASSERT_EQUAL(g_keep_alives, 2);
	CU_ASSERT_EQUAL(g_trylocks, 2);
	CU_ASSERT_EQUAL(io->ka_due, 2000 + 3 * half);

	/* KATO 0: never. */
	tc.kato_ms = 0;
	ka_arm(&tc, 5);
	io->ka_due = atomic_load(&tc.ka_next);
	io->qpair.poll_ticks = UINT64_MAX - 1;
	CU_ASSERT_EQUAL(tcp_qpair_process_completions(&io->qpair, 0), 0);
	CU_ASSERT_EQUAL(g_keep_alives, 2);
	close(apeer);
	close(ipeer);
	tcp_qpair_destroy(&io->qpair);
	tcp_qpair_destroy(&admin->qpair);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	if (ut_env_init() != 0) {
		return 1;
	}
	s = CU_add_suite("nvme_tcp", NULL, NULL);
	CU_ADD_TEST(s, test_trid_options);
	CU_ADD_TEST(s, test_trid_check_and_name);
	CU_ADD_TEST(s, test_incapsule_max);
	CU_ADD_TEST(s, test_partial_send);
	CU_ADD_TEST(s, test_peer_closes);
	CU_ADD_TEST(s, test_keep_alive_from_io_poll);
	return ut_run();
}

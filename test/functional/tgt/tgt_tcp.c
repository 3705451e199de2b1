/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_tgt judged by nvpoll's own NVMe/TCP initiator on the loopback: the program is run
 * from the build tree with a config written here (malloc and null bdevs; a subsystem any
 * host may use, one for a listed host only, one whose namespace is a slow software
 * controller shared by two hosts weighted 1:4), then:
 *   identify_io   Identify controller / namespaces, a write pattern read back and compared
 *                 over malloc (in-capsule and R2T sizes, with and without digests), I/O to
 *                 the null bdev completing;
 *   discovery     the discovery log lists what the host may reach, and nothing else;
 *   refused_host  a host not listed is refused (the target says so), a listed one is not;
 *   keepalive     a host that polls keeps its association past KATO; one that stops
 *                 polling loses it (the target says so) and its I/O fails;
 *   bad_pdu       a connection sending a PDU of a type a host may not send gets a
 *                 C2HTermReq and is closed, while another host's I/O goes on;
 *   weighted      two hosts weighted 1:4 keep one slow namespace saturated: the bytes they
 *                 get are about 20 % / 80 % (counted, not timed; generous bounds);
 *   sigint        SIGINT with I/O in flight: every request completes (none lost), the
 *                 target exits 0 with its summary;
 *   bad_config    bad configurations and flags: exit 2 with a message naming the fault;
 *   example_config  README's RAM disk config serves as written (on a free port).
 * Every wait has a deadline. Exit 77 (skip) when nvp_tgt is not built.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "nvpoll/nvme_tcp_spec.h"
#include "nvpoll/util.h"
#include "subproc.h"

#define NQN_ANY "nqn.2026-01.io.nvpoll:tgt-any"
#define NQN_LISTED "nqn.2026-01.io.nvpoll:tgt-listed"
#define NQN_SHARED "nqn.2026-01.io.nvpoll:tgt-shared"
#define HOST_OK "nqn.2026-01.io.nvpoll:host-ok"
#define HOST_LIGHT "nqn.2026-01.io.nvpoll:host-light"
#define HOST_HEAVY "nqn.2026-01.io.nvpoll:host-heavy"

static char g_tgt[4096];
static char g_dir[64];
static uint16_t g_port;
static pid_t g_pid = -1;

/* A port free now (the kernel's choice for port 0). */
static uint16_t
free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	uint16_t port = 0;

	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0) {
		port = ntohs(a.sin_port);
	}
	if (fd >= 0) {
		close(fd);
	}
	return port;
}

static int
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		return -errno;
	}
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -EIO;
}

/*
 * The shared namespace: a software controller slow enough (1 ms reads, 4 channels) that
 * the fair scheduler, not the network, decides who goes next; depth 4 and a small lag so
 * that shares show within a few thousand I/Os. stale_us: a tenant whose poll thread has
 * not polled for that long no longer holds the other back; this test's poll threads
 * share two CPUs with other programs and are descheduled for milliseconds, which the
 * default (1 ms) would read as a tenant gone.
 */
static int
write_config(const char *path, uint16_t port)
{
	char cfg[8192];

	snprintf(
		cfg, sizeof(cfg),
		"{\"subsystems\": [\n"
		" {\"subsystem\": \"bdev\", \"config\": [\n"
		"  {\"method\": \"bdev_malloc_create\", \"params\": {\"name\": \"m0\", "
		"\"num_blocks\": 32768, \"block_size\": 512}},\n"
		"  {\"method\": \"bdev_malloc_create\", \"params\": {\"name\": \"m1\", "
		"\"num_blocks\": 8192, \"block_size\": 4096}},\n"
		"  {\"method\": \"bdev_null_create\", \"params\": {\"name\": \"n0\", "
		"\"num_blocks\": 1048576, \"block_size\": 4096}},\n"
		"  {\"method\": \"bdev_nvme_attach_controller\", \"params\": {\"name\": \"slow\", "
		"\"trtype\": \"emu\", \"size\": \"16M\", \"lba\": 4096, \"read_us\": 1000, "
		"\"channels\": 4}},\n"
		"  {\"method\": \"bdev_set_scheduler\", \"params\": {\"name\": \"slown1\", "
		"\"scheduler\": \"fair\", \"params\": \"depth=4 lag_kib=16 stale_us=50000\"}}]},\n"
		" {\"subsystem\": \"nvmf\", \"config\": [\n"
		"  {\"method\": \"nvmf_create_transport\", \"params\": {\"trtype\": \"TCP\"}},\n"
		"  {\"method\": \"nvmf_create_subsystem\", \"params\": {\"nqn\": \"" NQN_ANY "\", "
		"\"serial_number\": \"TGT0001\", \"model_number\": \"tgt test\", "
		"\"allow_any_host\": true}},\n"
		"  {\"method\": \"nvmf_subsystem_add_ns\", \"params\": {\"nqn\": \"" NQN_ANY "\", "
		"\"namespace\": {\"bdev_name\": \"m0\", \"nsid\": 1}}},\n"
		"  {\"method\": \"nvmf_subsystem_add_ns\", \"params\": {\"nqn\": \"" NQN_ANY "\", "
		"\"namespace\": {\"bdev_name\": \"n0\", \"nsid\": 2}}},\n"
		"  {\"method\": \"nvmf_subsystem_add_listener\", \"params\": {\"nqn\": \"" NQN_ANY
		"\", \"listen_address\": {\"trtype\": \"TCP\", \"adrfam\": \"IPv4\", "
		"\"traddr\": \"127.0.0.1\", \"trsvcid\": \"%u\"}}},\n"
		"  {\"method\": \"nvmf_create_subsystem\", \"params\": {\"nqn\": \"" NQN_LISTED
		"\"}},\n"
		"  {\"method\": \"nvmf_subsystem_add_ns\", \"params\": {\"nqn\": \"" NQN_LISTED
		"\", \"bdev_name\": \"m1\"}},\n"
		"  {\"method\": \"nvmf_subsystem_add_listener\", \"params\": {\"nqn\": \"" NQN_LISTED
		"\", \"listen_address\": {\"trtype\": \"TCP\", \"adrfam\": \"IPv4\", "
		"\"traddr\": \"127.0.0.1\", \"trsvcid\": \"%u\"}}},\n"
		"  {\"method\": \"nvmf_subsystem_add_host\", \"params\": {\"nqn\": \"" NQN_LISTED
		"\", \"host\": \"" HOST_OK "\"}},\n"
		"  {\"method\": \"nvmf_create_subsystem\", \"params\": {\"nqn\": \"" NQN_SHARED
		"\"}},\n"
		"  {\"method\": \"nvmf_subsystem_add_ns\", \"params\": {\"nqn\": \"" NQN_SHARED
		"\", \"bdev_name\": \"slown1\", \"nsid\": 1}},\n"
		"  {\"method\": \"nvmf_subsystem_add_listener\", \"params\": {\"nqn\": \"" NQN_SHARED
		"\", \"listen_address\": {\"trtype\": \"TCP\", \"adrfam\": \"IPv4\", "
		"\"traddr\": \"127.0.0.1\", \"trsvcid\": \"%u\"}}},\n"
		"  {\"method\": \"nvmf_subsystem_add_host\", \"params\": {\"nqn\": \"" NQN_SHARED
		"\", \"host\": \"" HOST_LIGHT "\", \"weight\": 1}},\n"
		"  {\"method\": \"nvmf_subsystem_add_host\", \"params\": {\"nqn\": \"" NQN_SHARED
		"\", \"host\": \"" HOST_HEAVY
		"\", \"weight\": 4, \"latency_target_us\": 900000}}]}]}\n",
		port, port, port);
	return write_file(path, cfg);
}

static bool
file_has(const char *path, const char *needle)
{
	char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL) {
		return false;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

/* nvp_tgt -c @cfg in the background, its output in @out; waits for "ready" (60 s). */
static int
tgt_start(const char *cfg, const char *out)
{
	pid_t pid = fork();

	if (pid < 0) {
		return -errno;
	}
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(g_tgt, g_tgt, "-c", cfg, "--no-huge", "-m", "0x3", (char *)NULL);
		_exit(127);
	}
	g_pid = pid;
	for (int i = 0; i < 600; i++) {
		int st;

		if (file_has(out, "nvp_tgt: ready")) {
			return 0;
		}
		if (waitpid(pid, &st, WNOHANG) == pid) {
			g_pid = -1;
			return -ECHILD;
		}
		usleep(100000);
	}
	return -ETIMEDOUT;
}

/* Stop it with @sig and return its exit status (-1: killed after 60 s or no exit). */
static int
tgt_stop(int sig)
{
	int st = 0;

	if (g_pid < 0) {
		return -1;
	}
	kill(g_pid, sig);
	for (int i = 0; i < 600; i++) {
		if (waitpid(g_pid, &st, WNOHANG) == g_pid) {
			g_pid = -1;
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		}
		usleep(100000);
	}
	kill(g_pid, SIGKILL);
	waitpid(g_pid, &st, 0);
	g_pid = -1;
	return -1;
}

static void
trid_str(char *buf, size_t len, const char *nqn, const char *extra)
{
	snprintf(buf, len, "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:%u subnqn:%s%s%s",
		 g_port, nqn, extra ? " " : "", extra ? extra : "");
}

static void
out_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", g_dir, name);
}

/* ---- tests ---- */

static void
verify_ns(struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid, bool compare)
{
	struct nvp_nvme_ns *ns = nvp_nvme_ctrlr_get_ns(ctrlr, nsid);
	struct nvp_nvme_qpair *qp = NULL;
	uint32_t bs;
	uint8_t *buf;

	CU_ASSERT_PTR_NOT_NULL_FATAL(ns);
	bs = nvp_nvme_ns_get_sector_size(ns);
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(ctrlr, 32, 0, 0, false, &qp), 0);
	buf = fx_dma_alloc(128 * 1024);
	/* 1 block: in-capsule data; up to 128 KiB: R2T and several H2CData PDUs */
	for (uint32_t bytes = bs; bytes <= 128u * 1024; bytes *= 8) {
		uint32_t count = bytes / bs;

		fx_pattern_fill(buf, 16, count, bs, count + nsid);
		CU_ASSERT_EQUAL(fx_io(ns, qp, FX_WRITE, buf, 16, count, 0, NULL), 0);
		memset(buf, 0xee, bytes);
		CU_ASSERT_EQUAL(fx_io(ns, qp, FX_READ, buf, 16, count, 0, NULL), 0);
		if (compare) {
			CU_ASSERT_EQUAL(fx_pattern_check(buf, 16, count, bs, count + nsid), -1);
		}
	}
	CU_ASSERT_EQUAL(fx_io(ns, qp, FX_FLUSH, NULL, 0, 0, 0, NULL), 0);
	CU_ASSERT_EQUAL(fx_io(ns, qp, FX_WRITE_ZEROES, NULL, 0, 8, 0, NULL), 0);
	if (compare) {
		CU_ASSERT_EQUAL(fx_io(ns, qp, FX_READ, buf, 0, 8, 0, NULL), 0);
		CU_ASSERT(fx_is_zero(buf, 8u * bs));
	}
	/* past the end (the host's own check bypassed): LBA Out of Range, the queue fine */
	{
		struct nvme_cmd cmd;
		struct nvme_cpl cpl;

		memset(&cmd, 0, sizeof(cmd));
		cmd.opc = NVME_OPC_READ;
		cmd.nsid = nsid;
		cmd.cdw10 = (uint32_t)nvp_nvme_ns_get_num_sectors(ns);
		CU_ASSERT_EQUAL(fx_io_raw(ctrlr, qp, &cmd, buf, bs, &cpl), -EIO);
		CU_ASSERT_EQUAL(cpl.status.sct, NVME_SCT_GENERIC);
		CU_ASSERT_EQUAL(cpl.status.sc, NVME_SC_LBA_OUT_OF_RANGE);
	}
	CU_ASSERT_EQUAL(fx_io(ns, qp, FX_READ, buf, 0, 1, 0, NULL), 0);
	nvp_env_dma_free(buf);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(qp), 0);
}

static void
test_identify_io(void)
{
	const char *extras[] = { NULL, "hdgst:1 ddgst:1" };

	for (size_t i = 0; i < NVP_COUNTOF(extras); i++) {
		struct nvp_nvme_ctrlr *ctrlr = NULL;
		const struct nvme_ctrlr_data *cd;
		char trid[512];

		trid_str(trid, sizeof(trid), NQN_ANY, extras[i]);
		CU_ASSERT_EQUAL_FATAL(fx_connect_str(trid, NULL, &ctrlr), 0);
		cd = nvp_nvme_ctrlr_get_data(ctrlr);
		CU_ASSERT_EQUAL(strncmp(cd->sn, "TGT0001 ", 8), 0);
		CU_ASSERT_EQUAL(strncmp(cd->mn, "tgt test ", 9), 0);
		CU_ASSERT_STRING_EQUAL(cd->subnqn, NQN_ANY);
		CU_ASSERT_EQUAL(cd->nn, 2);
		CU_ASSERT_NOT_EQUAL(cd->cntlid, 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(nvp_nvme_ctrlr_get_ns(ctrlr, 1));
		CU_ASSERT_PTR_NOT_NULL_FATAL(nvp_nvme_ctrlr_get_ns(ctrlr, 2));
		CU_ASSERT_EQUAL(nvp_nvme_ns_get_sector_size(nvp_nvme_ctrlr_get_ns(ctrlr, 1)), 512);
		CU_ASSERT_EQUAL(nvp_nvme_ns_get_num_sectors(nvp_nvme_ctrlr_get_ns(ctrlr, 1)),
				32768);
		CU_ASSERT_EQUAL(nvp_nvme_ns_get_sector_size(nvp_nvme_ctrlr_get_ns(ctrlr, 2)), 4096);
		CU_ASSERT_PTR_NULL(nvp_nvme_ctrlr_get_ns(ctrlr, 3));
		verify_ns(ctrlr, 1, true);  /* malloc: what is written is read back */
		verify_ns(ctrlr, 2, false); /* null: completes, keeps nothing */
		CU_ASSERT_EQUAL(nvp_nvme_detach(ctrlr), 0);
	}
}

struct disc {
	int n;
	bool any, listed, shared;
};

static void
disc_cb(void *arg, const struct nvp_nvme_discovery_entry *e)
{
	struct disc *d = arg;

	d->n++;
	d->any |= strcmp(e->subnqn, NQN_ANY) == 0;
	d->listed |= strcmp(e->subnqn, NQN_LISTED) == 0;
	d->shared |= strcmp(e->subnqn, NQN_SHARED) == 0;
	CU_ASSERT_EQUAL(e->trtype, NVME_TRTYPE_TCP);
	CU_ASSERT_EQUAL(e->adrfam, NVME_ADRFAM_IPV4);
	CU_ASSERT_STRING_EQUAL(e->traddr, "127.0.0.1");
	CU_ASSERT_EQUAL(atoi(e->trsvcid), g_port);
}

static void
test_discovery(void)
{
	struct nvp_nvme_transport_id trid;
	struct disc d = { 0 };
	char s[512];

	snprintf(s, sizeof(s), "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:%u", g_port);
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_transport_id_parse(&trid, s), 0);
	CU_ASSERT_EQUAL(nvp_nvme_discover(&trid, disc_cb, &d), 1);
	CU_ASSERT(d.any && !d.listed && !d.shared); /* a host sees only what it may use */
	memset(&d, 0, sizeof(d));
	snprintf(s, sizeof(s), "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:%u hostnqn:%s",
		 g_port, HOST_OK);
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_transport_id_parse(&trid, s), 0);
	CU_ASSERT_EQUAL(nvp_nvme_discover(&trid, disc_cb, &d), 2);
	CU_ASSERT(d.any && d.listed && !d.shared);
}

static void
test_refused_host(void)
{
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	char trid[512], out[256];

	out_path(out, sizeof(out), "tgt.out");
	trid_str(trid, sizeof(trid), NQN_LISTED, "hostnqn:nqn.2026-01.io.nvpoll:stranger");
	CU_ASSERT_NOT_EQUAL(fx_connect_str(trid, NULL, &ctrlr), 0);
	CU_ASSERT(file_has(out,
			   "host nqn.2026-01.io.nvpoll:stranger may not connect to " NQN_LISTED));
	trid_str(trid, sizeof(trid), NQN_LISTED, "hostnqn:" HOST_OK);
	CU_ASSERT_EQUAL_FATAL(fx_connect_str(trid, NULL, &ctrlr), 0);
	verify_ns(ctrlr, 1, true);
	CU_ASSERT_EQUAL(nvp_nvme_detach(ctrlr), 0);
}

/* A raw connection: ICReq, ICResp read; then @pdu (8+ bytes). \return the fd or -1. */
static int
raw_conn_send(const void *pdu, size_t len)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(g_port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct nvme_tcp_ic_req ic;
	uint8_t resp[NVME_TCP_IC_LEN];
	struct timeval tv = { .tv_sec = 20 };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	size_t got = 0;

	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	memset(&ic, 0, sizeof(ic));
	ic.ch.pdu_type = NVME_TCP_PDU_ICREQ;
	ic.ch.hlen = NVME_TCP_IC_LEN;
	ic.ch.plen = NVME_TCP_IC_LEN;
	CU_ASSERT_EQUAL(send(fd, &ic, sizeof(ic), 0), (ssize_t)sizeof(ic));
	while (got < sizeof(resp)) {
		ssize_t n = recv(fd, resp + got, sizeof(resp) - got, 0);

		if (n <= 0) {
			close(fd);
			return -1;
		}
		got += (size_t)n;
	}
	CU_ASSERT_EQUAL(resp[0], NVME_TCP_PDU_ICRESP);
	CU_ASSERT_EQUAL(send(fd, pdu, len, 0), (ssize_t)len);
	return fd;
}

static void
test_bad_pdu(void)
{
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	struct nvp_nvme_qpair *qp = NULL;
	uint8_t bad[24] = { 0x0f, 0, 24, 0, 24 }, term[24];
	uint8_t bad_plen[8] = { NVME_TCP_PDU_CAPSULE_CMD, 0, 72, 0, 0xff, 0xff, 0xff, 0x7f };
	const void *pdus[] = { bad, bad_plen };
	size_t lens[] = { sizeof(bad), sizeof(bad_plen) };
	char trid[512];
	uint8_t *buf;

	trid_str(trid, sizeof(trid), NQN_ANY, NULL);
	CU_ASSERT_EQUAL_FATAL(fx_connect_str(trid, NULL, &ctrlr), 0);
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(ctrlr, 32, 0, 0, false, &qp), 0);
	buf = fx_dma_alloc(4096);
	for (size_t i = 0; i < NVP_COUNTOF(pdus); i++) {
		int fd = raw_conn_send(pdus[i], lens[i]);
		size_t got = 0;
		ssize_t n;

		CU_ASSERT_FATAL(fd >= 0);
		while (got < sizeof(term) &&
		       (n = recv(fd, term + got, sizeof(term) - got, 0)) > 0) {
			got += (size_t)n;
		}
		CU_ASSERT_EQUAL(got, sizeof(term));
		CU_ASSERT_EQUAL(term[0], NVME_TCP_PDU_C2H_TERM_REQ);
		CU_ASSERT_EQUAL(recv(fd, term, 1, 0), 0); /* then closed */
		close(fd);
		/* the other connection carries on */
		fx_pattern_fill(buf, 100, 8, 512, 7 + (uint32_t)i);
		CU_ASSERT_EQUAL(
			fx_io(nvp_nvme_ctrlr_get_ns(ctrlr, 1), qp, FX_WRITE, buf, 100, 8, 0, NULL),
			0);
		memset(buf, 0, 4096);
		CU_ASSERT_EQUAL(
			fx_io(nvp_nvme_ctrlr_get_ns(ctrlr, 1), qp, FX_READ, buf, 100, 8, 0, NULL),
			0);
		CU_ASSERT_EQUAL(fx_pattern_check(buf, 100, 8, 512, 7 + (uint32_t)i), -1);
	}
	nvp_env_dma_free(buf);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(qp), 0);
	CU_ASSERT_EQUAL(nvp_nvme_detach(ctrlr), 0);
}

/* ---- keep-alive ---- */

/* Polling (the host sends Keep Alive) keeps the association for 3 x KATO; then a host
 * that polls nothing loses it after KATO: its connections are closed, its I/O fails. */
static void
test_keepalive(void)
{
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	struct nvp_nvme_qpair *qp = NULL;
	char trid[512], out[256], line[160];
	uint8_t *buf = fx_dma_alloc(4096);
	uint64_t end;
	uint16_t cntlid;

	out_path(out, sizeof(out), "tgt.out");
	trid_str(trid, sizeof(trid), NQN_ANY, "kato:500");
	CU_ASSERT_EQUAL_FATAL(fx_connect_str(trid, NULL, &ctrlr), 0);
	cntlid = nvp_nvme_ctrlr_get_data(ctrlr)->cntlid;
	snprintf(line, sizeof(line), "controller %u (", cntlid);
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(ctrlr, 32, 0, 0, false, &qp), 0);
	end = fx_now_us() + 1500u * 1000u;
	while (fx_now_us() < end) {
		CU_ASSERT_FATAL(nvp_nvme_qpair_process_completions(qp, 0) >= 0);
		usleep(1000);
	}
	CU_ASSERT_EQUAL(fx_io(nvp_nvme_ctrlr_get_ns(ctrlr, 1), qp, FX_READ, buf, 0, 1, 0, NULL), 0);
	CU_ASSERT_FALSE(file_has(out, line));
	/* now silence */
	end = fx_now_us() + 20u * 1000u * 1000u;
	while (!file_has(out, line) && fx_now_us() < end) {
		usleep(50 * 1000);
	}
	CU_ASSERT(file_has(out, line));
	CU_ASSERT_NOT_EQUAL(fx_io(nvp_nvme_ctrlr_get_ns(ctrlr, 1), qp, FX_READ, buf, 0, 1, 0, NULL),
			    0);
	nvp_env_dma_free(buf);
	(void)nvp_nvme_ctrlr_free_io_qpair(qp);
	(void)nvp_nvme_detach(ctrlr);
}

/* ---- two hosts, one namespace ---- */

#define W_QD 16u
#define W_IOS 2400u /* completions counted over both hosts */

struct host_io {
	struct nvp_nvme_ctrlr *ctrlr;
	struct nvp_nvme_ns *ns;
	struct nvp_nvme_qpair *qp;
	uint8_t *buf;
	uint64_t done, bytes, errors;
	bool stop;
};

static unsigned int g_w_total;

static void w_cb(void *arg, const struct nvme_cpl *cpl);

static int
w_submit(struct host_io *h)
{
	return nvp_nvme_ns_cmd_read(h->ns, h->qp, h->buf, (h->done * 7) % 4000, 1, w_cb, h, 0);
}

static void
w_cb(void *arg, const struct nvme_cpl *cpl)
{
	struct host_io *h = arg;

	if (nvme_cpl_is_error(cpl)) {
		h->errors++;
		return;
	}
	if (h->stop) {
		return;
	}
	h->done++;
	h->bytes += 4096;
	g_w_total++;
	if (g_w_total >= W_IOS) {
		return;
	}
	CU_ASSERT_EQUAL(w_submit(h), 0);
}

static void
w_host(struct host_io *h, const char *hostnqn)
{
	char trid[512], extra[128];

	memset(h, 0, sizeof(*h));
	snprintf(extra, sizeof(extra), "hostnqn:%s", hostnqn);
	trid_str(trid, sizeof(trid), NQN_SHARED, extra);
	CU_ASSERT_EQUAL_FATAL(fx_connect_str(trid, NULL, &h->ctrlr), 0);
	h->ns = nvp_nvme_ctrlr_get_ns(h->ctrlr, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(h->ns);
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(h->ctrlr, 64, 0, 0, false, &h->qp), 0);
	h->buf = fx_dma_alloc(4096);
}

/*
 * Both hosts are this one thread, polling their queues in turn. While it is descheduled,
 * the heavy host's commands at the target run out first (it is served four times
 * faster): the target has nothing of it left, "fair" takes it as idle, and when its
 * commands come again its virtual time is brought up to the light host's, so what the
 * light host got alone in between is not repaid (an idle tenant banks no credit). The
 * target cannot tell this from a host gone idle: nothing of the heavy host is in its
 * buffers or queues. Measured on the loopback: a 15 ms pause in every 20 ms of polling
 * here took the heavy share from 0.79 to 0.62-0.64; with the lift in arrive() left out,
 * to 0.70-0.76. A loaded machine or a TCG guest does this to the share by itself.
 */
static void
test_weighted(void)
{
	struct host_io light, heavy;
	uint64_t deadline;
	double share;

	char out[256];

	/* the hosts' weights and latency target reach the namespace's scheduler, the bdev
	 * config's own fair parameters kept */
	out_path(out, sizeof(out), "tgt.out");
	CU_ASSERT(file_has(out, "(bdev slown1): scheduler fair depth=4 lag_kib=16 stale_us=50000 "
				"weights=1/1/1/4 lat_us.3=900000"));
	w_host(&light, HOST_LIGHT);
	w_host(&heavy, HOST_HEAVY);
	g_w_total = 0;
	for (uint32_t i = 0; i < W_QD; i++) {
		CU_ASSERT_EQUAL(w_submit(&light), 0);
		CU_ASSERT_EQUAL(w_submit(&heavy), 0);
	}
	deadline = fx_now_us() + 240u * 1000000u;
	while (g_w_total < W_IOS && fx_now_us() < deadline) {
		(void)nvp_nvme_qpair_process_completions(light.qp, 0);
		(void)nvp_nvme_qpair_process_completions(heavy.qp, 0);
	}
	light.stop = heavy.stop = true;
	CU_ASSERT(g_w_total >= W_IOS);
	CU_ASSERT_EQUAL(light.errors + heavy.errors, 0);
	share = (double)heavy.bytes / (double)(light.bytes + heavy.bytes);
	printf("weighted 1:4: light %llu heavy %llu completions, heavy share %.3f\n",
	       (unsigned long long)light.done, (unsigned long long)heavy.done, share);
	/* 0.8 expected; generous bounds: scheduling, not timing, is judged */
	CU_ASSERT(share > 0.70 && share < 0.90);
	for (int i = 0; i < 2000; i++) { /* let what is in flight come back */
		(void)nvp_nvme_qpair_process_completions(light.qp, 0);
		(void)nvp_nvme_qpair_process_completions(heavy.qp, 0);
		usleep(1000);
	}
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(light.qp), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(heavy.qp), 0);
	CU_ASSERT_EQUAL(nvp_nvme_detach(light.ctrlr), 0);
	CU_ASSERT_EQUAL(nvp_nvme_detach(heavy.ctrlr), 0);
	nvp_env_dma_free(light.buf);
	nvp_env_dma_free(heavy.buf);
}

/* ---- SIGINT with I/O in flight ---- */

struct inflight {
	unsigned int calls, ok;
};

static void
if_cb(void *arg, const struct nvme_cpl *cpl)
{
	struct inflight *f = arg;

	f->calls++;
	f->ok += nvme_cpl_is_error(cpl) ? 0u : 1u;
}

static void
test_sigint(void)
{
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	struct nvp_nvme_qpair *qp = NULL;
	struct nvp_nvme_ns *ns;
	struct inflight f = { 0 };
	char trid[512], out[256];
	uint8_t *buf;
	unsigned int n = 0;
	int rc;

	out_path(out, sizeof(out), "tgt.out");
	trid_str(trid, sizeof(trid), NQN_ANY, NULL);
	CU_ASSERT_EQUAL_FATAL(fx_connect_str(trid, NULL, &ctrlr), 0);
	ns = nvp_nvme_ctrlr_get_ns(ctrlr, 1);
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(ctrlr, 64, 0, 0, false, &qp), 0);
	buf = fx_dma_alloc(64u * 65536);
	for (unsigned int i = 0; i < 64; i++) {
		if (nvp_nvme_ns_cmd_write(ns, qp, buf + (size_t)i * 65536, (uint64_t)i * 128, 128,
					  if_cb, &f, 0) == 0) {
			n++;
		}
	}
	CU_ASSERT_EQUAL(n, 64);
	/* the stream flowing (some answered), the rest in flight: then SIGINT */
	CU_ASSERT_EQUAL(fx_poll_until(qp, &f.calls, 4, 60000), 0);
	kill(g_pid, SIGINT);
	/* every request comes back, answered or failed with the connection: none is lost */
	for (uint64_t end = fx_now_us() + 60000000u; f.calls < n && fx_now_us() < end;) {
		(void)nvp_nvme_qpair_process_completions(qp, 0);
	}
	CU_ASSERT_EQUAL(f.calls, n);
	CU_ASSERT(f.ok >= 4);
	printf("sigint: %u of %u writes done, the others answered Aborted (not begun)\n", f.ok, n);
	rc = tgt_stop(SIGINT);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT(file_has(out, "nvp_tgt: SIGINT: stopping"));
	CU_ASSERT(file_has(out, " connections, "));
	(void)nvp_nvme_ctrlr_free_io_qpair(qp);
	(void)nvp_nvme_detach(ctrlr);
	nvp_env_dma_free(buf);
}

/* ---- bad configurations ---- */

static void
bad_config(const char *name, const char *text, int want_rc, const char *want_msg)
{
	char path[256], out[8192];
	int rc;

	out_path(path, sizeof(path), name);
	char args[512];

	CU_ASSERT_EQUAL(write_file(path, text), 0);
	snprintf(args, sizeof(args), "--no-huge -t 5 -c %s", path);
	rc = fx_run_capture(g_tgt, args, out, sizeof(out));
	CU_ASSERT_EQUAL(rc, want_rc);
	if (strstr(out, want_msg) == NULL) {
		fprintf(stderr, "%s: no \"%s\" in:\n%s\n", name, want_msg, out);
		CU_FAIL("message");
	}
}

static void
test_bad_config(void)
{
	char out[4096], text[2048];
	int rc;

	rc = fx_run_capture(g_tgt, "", out, sizeof(out));
	CU_ASSERT_EQUAL(rc, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "pass -c FILE"));
	rc = fx_run_capture(g_tgt, "-m zz -c x.json", out, sizeof(out));
	CU_ASSERT_EQUAL(rc, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "-m zz"));
	bad_config("notjson.json", "{\"subsystems\": [", 2, "notjson.json");
	bad_config("method.json",
		   "{\"subsystems\": [{\"subsystem\": \"nvmf\", \"config\": ["
		   "{\"method\": \"nvmf_create_subsytem\", \"params\": {}}]}]}",
		   2, "unknown method \"nvmf_create_subsytem\"");
	bad_config(
		"nobdev.json",
		"{\"subsystems\": [{\"subsystem\": \"nvmf\", \"config\": ["
		"{\"method\": \"nvmf_create_subsystem\", \"params\": {\"nqn\": \"nqn.2026-01.x:y\"}},"
		"{\"method\": \"nvmf_subsystem_add_ns\", \"params\": {\"nqn\": \"nqn.2026-01.x:y\","
		" \"bdev_name\": \"nope\"}}]}]}",
		2, "bdev_name \"nope\": no such bdev");
	bad_config(
		"weight.json",
		"{\"subsystems\": [{\"subsystem\": \"nvmf\", \"config\": ["
		"{\"method\": \"nvmf_create_subsystem\", \"params\": {\"nqn\": \"nqn.2026-01.x:y\"}},"
		"{\"method\": \"nvmf_subsystem_add_host\", \"params\": {\"nqn\": \"nqn.2026-01.x:y\","
		" \"host\": \"nqn.2026-01.x:h\", \"weight\": 0}}]}]}",
		2, "weight: 1 .. 1000");
	/* the port in use (this target's): a failure of the run, not of the config */
	snprintf(
		text, sizeof(text),
		"{\"subsystems\": [{\"subsystem\": \"nvmf\", \"config\": ["
		"{\"method\": \"nvmf_create_subsystem\", \"params\": {\"nqn\": \"nqn.2026-01.x:y\"}},"
		"{\"method\": \"nvmf_subsystem_add_listener\", \"params\": {\"nqn\": "
		"\"nqn.2026-01.x:y\", \"listen_address\": {\"trtype\": \"TCP\", \"adrfam\": "
		"\"IPv4\", \"traddr\": \"127.0.0.1\", \"trsvcid\": \"%u\"}}}]}]}",
		g_port);
	bad_config("inuse.json", text, 1, "another program has it");
}

/* README's RAM disk config (examples/nvp_tgt/ram.json) loads and serves as written, on a
 * free port instead of 4420, for two seconds with README's memory flags. */
static void
test_example_config(void)
{
	char *text = NULL, *json = NULL, path[256], args[512], out[8192], port[16], *at;
	FILE *f = fopen("examples/nvp_tgt/ram.json", "r");
	size_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	text = calloc(1, 65536);
	json = calloc(1, 65536);
	CU_ASSERT_FATAL(text != NULL && json != NULL);
	n = fread(text, 1, 65535, f);
	fclose(f);
	text[n] = '\0';
	at = strstr(text, "\"trsvcid\": \"4420\"");
	CU_ASSERT_PTR_NOT_NULL_FATAL(at);
	*at = '\0';
	snprintf(port, sizeof(port), "%u", free_port());
	snprintf(json, 65536, "%s\"trsvcid\": \"%s\"%s", text, port,
		 at + strlen("\"trsvcid\": \"4420\""));
	out_path(path, sizeof(path), "ram.json");
	CU_ASSERT_EQUAL(write_file(path, json), 0);
	free(text);
	free(json);
	snprintf(args, sizeof(args), "--no-huge --mem-size 1024 -t 2 -c %s", path);
	CU_ASSERT_EQUAL(fx_run_capture(g_tgt, args, out, sizeof(out)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "subsystem nqn.2026-01.io.nvpoll:ram: 1 namespace"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "nvp_tgt: ready"));
}

static void
atexit_kill(void)
{
	if (g_pid > 0) {
		kill(g_pid, SIGKILL);
	}
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "identify_io", test_identify_io },
		{ "discovery", test_discovery },
		{ "refused_host", test_refused_host },
		{ "bad_pdu", test_bad_pdu },
		{ "weighted", test_weighted },
		{ "keepalive", test_keepalive },
		{ "bad_config", test_bad_config },
		{ "example_config", test_example_config },
		{ "sigint", test_sigint },
	};
	char cfg[256], out[256];
	int rc;

	if (fx_find_program("../../bin/nvp_tgt", g_tgt, sizeof(g_tgt)) != 0) {
		printf("SKIP: nvp_tgt is not built\n");
		return 77;
	}
	snprintf(g_dir, sizeof(g_dir), "/tmp/nvp_tgt_test.XXXXXX");
	if (mkdtemp(g_dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	atexit(atexit_kill);
	g_port = free_port();
	out_path(cfg, sizeof(cfg), "tgt.json");
	out_path(out, sizeof(out), "tgt.out");
	rc = write_config(cfg, g_port);
	if (rc == 0) {
		rc = tgt_start(cfg, out);
	}
	if (rc != 0) {
		char cmd[512];

		fprintf(stderr, "nvp_tgt did not start (%s); its output:\n", strerror(-rc));
		snprintf(cmd, sizeof(cmd), "cat %s >&2", out);
		(void)system(cmd);
		return 1;
	}
	rc = fx_main(argc, argv, "tgt_tcp", tests, NVP_COUNTOF(tests));
	if (g_pid > 0) {
		(void)tgt_stop(SIGTERM);
	}
	{
		char cmd[512];

		if (rc != 0) {
			snprintf(cmd, sizeof(cmd), "cat %s >&2", out);
			(void)system(cmd);
		}
		snprintf(cmd, sizeof(cmd), "rm -rf %s", g_dir);
		(void)system(cmd);
	}
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVMe/TCP over IPv6, on the ::1 loopback, against the small target of
 * app/common/nvme_tcp_tgt.c listening there: attach with "adrfam:IPv6 traddr:::1", I/O
 * verified with in-capsule data and R2T, an I/O queue's own connection; the discovery
 * record says IPv6 and its transport ID attaches; wrong families and bad addresses are
 * refused when parsed; a port nothing listens on is "connection refused". Exit 77 (skip)
 * only where the machine has no IPv6 loopback.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fixture.h"
#include "nvpoll/nvme_tcp_spec.h"
#include "nvme_tcp_tgt.h"

#define BS 512u

struct v6_fx {
	struct fx_ctrlr backend;
	struct tcp_tgt *tgt;
};

static int
v6_open(struct v6_fx *f)
{
	struct tcp_tgt_opts o;
	int rc;

	memset(f, 0, sizeof(*f));
	rc = fx_open(&f->backend, "size=16M,lba=512");
	if (rc != 0) {
		return rc;
	}
	tcp_tgt_opts_init(&o);
	o.addr = "::1";
	rc = tcp_tgt_start(f->backend.ctrlr, &o, &f->tgt);
	CU_ASSERT_EQUAL(rc, 0);
	return rc;
}

static void
v6_close(struct v6_fx *f)
{
	if (f->tgt != NULL) {
		tcp_tgt_stop(f->tgt);
	}
	fx_close(&f->backend);
}

static void
test_attach_io(void)
{
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	struct nvp_nvme_qpair *qpair = NULL;
	struct nvp_nvme_ns *ns;
	struct v6_fx f;
	char trid[512];
	uint8_t *buf;

	if (v6_open(&f) != 0) {
		v6_close(&f);
		return;
	}
	tcp_tgt_trid(f.tgt, NULL, trid, sizeof(trid));
	CU_ASSERT_PTR_NOT_NULL(strstr(trid, "adrfam:IPv6 traddr:::1 "));
	CU_ASSERT_EQUAL_FATAL(fx_connect_str(trid, NULL, &ctrlr), 0);
	ns = nvp_nvme_ctrlr_get_ns(ctrlr, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ns);
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(ctrlr, 32, 0, 0, false, &qpair), 0);
	buf = fx_dma_alloc(256 * BS); /* 128 KiB: beyond the in-capsule size, so R2T */
	for (uint32_t count = 1; count <= 256; count *= 16) {
		fx_pattern_fill(buf, 8, count, BS, count);
		CU_ASSERT_EQUAL(fx_io(ns, qpair, FX_WRITE, buf, 8, count, 0, NULL), 0);
		memset(buf, 0, (size_t)count * BS);
		CU_ASSERT_EQUAL(fx_io(ns, qpair, FX_READ, buf, 8, count, 0, NULL), 0);
		CU_ASSERT_EQUAL(fx_pattern_check(buf, 8, count, BS, count), -1);
	}
	nvp_env_dma_free(buf);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(qpair), 0);
	CU_ASSERT_EQUAL(nvp_nvme_detach(ctrlr), 0);
	v6_close(&f);
}

struct disc {
	unsigned int n;
	struct nvp_nvme_discovery_entry e;
};

static void
disc_cb(void *arg, const struct nvp_nvme_discovery_entry *e)
{
	struct disc *d = arg;

	d->n++;
	d->e = *e;
}

static void
test_discover(void)
{
	struct nvp_nvme_transport_id trid;
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	struct disc d = { 0 };
	struct v6_fx f;
	char str[256];

	if (v6_open(&f) != 0) {
		v6_close(&f);
		return;
	}
	snprintf(str, sizeof(str), "trtype:TCP adrfam:IPv6 traddr:::1 trsvcid:%u",
		 tcp_tgt_port(f.tgt));
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_transport_id_parse(&trid, str), 0);
	CU_ASSERT_EQUAL(nvp_nvme_discover(&trid, disc_cb, &d), 1);
	CU_ASSERT_EQUAL(d.n, 1);
	CU_ASSERT_EQUAL(d.e.adrfam, NVME_ADRFAM_IPV6);
	CU_ASSERT_STRING_EQUAL(d.e.traddr, "::1");
	CU_ASSERT_PTR_NOT_NULL(strstr(d.e.trid.args, "adrfam=IPv6"));
	CU_ASSERT_EQUAL(nvp_nvme_connect(&d.e.trid, NULL, &ctrlr), 0);
	if (ctrlr != NULL) {
		CU_ASSERT_EQUAL(nvp_nvme_detach(ctrlr), 0);
	}
	/* Without adrfam the address's own family is taken. */
	snprintf(str, sizeof(str), "trtype:TCP traddr:::1 trsvcid:%u", tcp_tgt_port(f.tgt));
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_transport_id_parse(&trid, str), 0);
	CU_ASSERT_EQUAL(nvp_nvme_discover(&trid, disc_cb, &d), 1);
	v6_close(&f);
}

/* Wrong families and bad addresses: refused when parsed, with the reason. */
static void
test_bad_input(void)
{
	static const char *const bad[] = {
		"trtype:TCP adrfam:IPv5 traddr:::1 subnqn:nqn.x",
		"trtype:TCP adrfam:IPv4 traddr:::1 subnqn:nqn.x",
		"trtype:TCP adrfam:IPv6 traddr:127.0.0.1 subnqn:nqn.x",
		"trtype:TCP adrfam:IPv6 traddr:::1::2 subnqn:nqn.x",
		"trtype:TCP traddr:::1 trsvcid:0 subnqn:nqn.x",
	};
	struct nvp_nvme_transport_id trid;
	struct tcp_tgt_opts o;
	struct tcp_tgt *t = NULL;

	for (size_t i = 0; i < NVP_COUNTOF(bad); i++) {
		CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, bad[i]), -EINVAL);
	}
	tcp_tgt_opts_init(&o);
	o.addr = "::1::2";
	CU_ASSERT_EQUAL(tcp_tgt_start(NULL, &o, &t), -EINVAL);
}

/* A port nothing listens on: -ECONNREFUSED, not "no such device". */
static void
test_refused(void)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	socklen_t alen = sizeof(a);
	char trid[256];
	int fd;

	/* A port that was free a moment ago: bound, never listened on, then closed. */
	fd = socket(AF_INET6, SOCK_STREAM, 0);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL_FATAL(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	CU_ASSERT_EQUAL_FATAL(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	snprintf(trid, sizeof(trid), "trtype:TCP adrfam:IPv6 traddr:::1 trsvcid:%u subnqn:nqn.x",
		 ntohs(a.sin6_port));
	CU_ASSERT_EQUAL(fx_connect_str(trid, NULL, &ctrlr), -ECONNREFUSED);
	close(fd);
}

static bool
have_ipv6_loopback(void)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	int fd = socket(AF_INET6, SOCK_STREAM, 0);
	bool ok = fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;

	if (fd >= 0) {
		close(fd);
	}
	return ok;
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "attach_io", test_attach_io },
		{ "discover", test_discover },
		{ "bad_input", test_bad_input },
		{ "refused", test_refused },
	};

	if (!have_ipv6_loopback()) {
		printf("SKIP: this machine has no IPv6 loopback (::1)\n");
		return 77;
	}
	return fx_main(argc, argv, "nvme_tcp_ipv6", tests, NVP_COUNTOF(tests));
}

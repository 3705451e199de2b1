/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Keep Alive over NVMe/TCP (NVMe 1.4 section 7.12) against the small target of
 * app/common/nvme_tcp_tgt.c, which keeps each controller's Keep Alive Timer and ends the
 * association when KATO passes without a Keep Alive command. The host connects with a
 * short KATO ("kato:" in the transport ID, ms), then for three times KATO polls only an
 * I/O queue, never the admin queue: idle, then with I/O. The connection must live on:
 * no association ended, no new connection (no reset), I/O still verified on the same
 * queue. A host that does not poll at all shows the target does end the association.
 *
 * Against an outside target (NVP_TEST_TRID: the QEMU judge's nvmet-tcp) the same tests run
 * with NVP_TEST_KATO_MS (nvmet keeps whole seconds) for NVP_TEST_SECONDS instead of three
 * KATOs; without the target's counters, a lost association shows as a failed controller
 * (no reconnect is configured) and failing I/O.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "nvme_tcp_tgt.h"

#define BS 512u
/* long enough that a host thread held off its CPU for a while on a loaded 2-core machine
 * still sends its Keep Alive (every KATO / 2) in time: 300 ms failed there now and then */
#define KATO_MS 1000u

static uint32_t g_kato_ms = KATO_MS; /* NVP_TEST_KATO_MS against an outside target */
static uint32_t g_poll_ms;           /* how long the polling-only tests run */

struct ka_fx {
	struct fx_ctrlr backend;
	struct tcp_tgt *tgt;
	struct nvp_nvme_ctrlr *ctrlr;
	struct nvp_nvme_ns *ns;
	struct nvp_nvme_qpair *qpair;
	uint32_t bs; /* the namespace's block size */
};

static int
kfx_open(struct ka_fx *f)
{
	struct tcp_tgt_opts o;
	char extra[32], trid[512];
	int rc;

	memset(f, 0, sizeof(*f));
	snprintf(extra, sizeof(extra), "kato:%u", g_kato_ms);
	if (fx_real_trid() != NULL) {
		snprintf(trid, sizeof(trid), "%s %s", fx_real_trid(), extra);
	} else {
		rc = fx_open(&f->backend, "size=16M,lba=512");
		if (rc != 0) {
			return rc;
		}
		tcp_tgt_opts_init(&o);
		CU_ASSERT_EQUAL_FATAL(tcp_tgt_start(f->backend.ctrlr, &o, &f->tgt), 0);
		tcp_tgt_trid(f->tgt, extra, trid, sizeof(trid));
	}
	rc = fx_connect_str(trid, NULL, &f->ctrlr);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc != 0) {
		return rc;
	}
	f->ns = nvp_nvme_ctrlr_get_ns(f->ctrlr, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->ns);
	f->bs = nvp_nvme_ns_get_sector_size(f->ns);
	CU_ASSERT_FATAL(f->bs == 512 || f->bs == 4096);
	rc = fx_qpair_alloc(f->ctrlr, 32, 0, 0, false, &f->qpair);
	CU_ASSERT_EQUAL(rc, 0);
	return rc;
}

static void
kfx_close(struct ka_fx *f)
{
	if (f->qpair != NULL) {
		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(f->qpair), 0);
	}
	if (f->ctrlr != NULL) {
		(void)nvp_nvme_detach(f->ctrlr); /* after a lost association it may complain */
	}
	if (f->tgt != NULL) {
		tcp_tgt_stop(f->tgt);
	}
	if (fx_real_trid() == NULL) {
		fx_close(&f->backend);
	}
}

/* Write 4 KiB at @blk (in 4 KiB units), read it back, compare. */
static int
verify(struct ka_fx *f, uint64_t blk, uint32_t tag)
{
	uint32_t n = 4096 / f->bs;
	uint64_t lba = blk * n;
	uint8_t *buf = fx_dma_alloc(4096);
	int rc;

	fx_pattern_fill(buf, lba, n, f->bs, tag);
	rc = fx_io(f->ns, f->qpair, FX_WRITE, buf, lba, n, 0, NULL);
	if (rc == 0) {
		memset(buf, 0, 4096);
		rc = fx_io(f->ns, f->qpair, FX_READ, buf, lba, n, 0, NULL);
	}
	if (rc == 0 && fx_pattern_check(buf, lba, n, f->bs, tag) != -1) {
		rc = -EILSEQ;
	}
	nvp_env_dma_free(buf);
	return rc;
}

/* Poll only the I/O queue for three times KATO, with or without I/O; then the
 * association must be the one made at the start, and I/O must work on it. */
static void
io_poll_only(bool with_io)
{
	struct tcp_tgt_stats before, after;
	uint64_t end;
	uint32_t rounds = 0;
	struct ka_fx f;

	if (kfx_open(&f) != 0) {
		kfx_close(&f);
		return;
	}
	if (f.tgt != NULL) {
		tcp_tgt_get_stats(f.tgt, &before);
	}
	end = fx_now_us() + (uint64_t)g_poll_ms * 1000u;
	while (fx_now_us() < end) {
		if (with_io) {
			CU_ASSERT_EQUAL_FATAL(verify(&f, rounds % 64, rounds), 0);
		} else {
			CU_ASSERT_FATAL(nvp_nvme_qpair_process_completions(f.qpair, 0) >= 0);
		}
		rounds++;
	}
	CU_ASSERT_EQUAL(verify(&f, 125, 0x4b41), 0);
	if (f.tgt != NULL) {
		tcp_tgt_get_stats(f.tgt, &after);
		CU_ASSERT_EQUAL(after.kato_expired, 0);
		CU_ASSERT_EQUAL(after.connections, before.connections); /* no reconnect, no reset */
	}
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(f.ctrlr));
	printf("  %u ms of polling only an I/O queue (KATO %u ms), %u rounds: the association "
	       "lives\n",
	       g_poll_ms, g_kato_ms, rounds);
	kfx_close(&f);
}

static void
test_io_poll_only_idle(void)
{
	io_poll_only(false);
}

static void
test_io_poll_only_busy(void)
{
	io_poll_only(true);
}

/* The target's side, what makes the tests above able to fail: a host that polls nothing
 * loses its association after KATO, its I/O queue's connection with it. */
static void
test_kato_enforced(void)
{
	struct tcp_tgt_stats st;
	uint64_t deadline;
	struct ka_fx f;

	if (kfx_open(&f) != 0) {
		kfx_close(&f);
		return;
	}
	if (f.tgt == NULL) {
		/* an outside target: wait three KATOs (and a second nvmet may round up) */
		usleep((3u * g_kato_ms + 1000u) * 1000u);
	} else {
		deadline = fx_now_us() + 10u * 1000u * 1000u;
		do {
			usleep(10 * 1000);
			tcp_tgt_get_stats(f.tgt, &st);
		} while (st.kato_expired == 0 && fx_now_us() < deadline);
		CU_ASSERT_EQUAL(st.kato_expired, 1);
	}
	CU_ASSERT_NOT_EQUAL(verify(&f, 0, 1), 0);
	kfx_close(&f);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "io_poll_only_idle", test_io_poll_only_idle },
		{ "io_poll_only_busy", test_io_poll_only_busy },
		{ "kato_enforced", test_kato_enforced },
	};

	const char *kato = getenv("NVP_TEST_KATO_MS"), *secs = getenv("NVP_TEST_SECONDS");

	if (fx_real_trid() != NULL && kato != NULL && atoi(kato) > 0) {
		g_kato_ms = (uint32_t)atoi(kato);
	}
	g_poll_ms = 3u * g_kato_ms;
	if (fx_real_trid() != NULL && secs != NULL && atoi(secs) > 0) {
		g_poll_ms = (uint32_t)atoi(secs) * 1000u;
	}
	return fx_main(argc, argv, "nvme_tcp_keepalive", tests, NVP_COUNTOF(tests));
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reconnect in bdev mode: an nvme bdev attached over NVMe/TCP (the test target on
 * loopback) with SPDK's ctrlr_loss_timeout_sec, reconnect_delay_sec and
 * fast_io_fail_timeout_sec, driven only by nvp_bdev_channel_poll(): the application
 * never polls the admin queue. A verify workload (slots that each write a pattern to
 * their own blocks through the bdev API, read it back and compare, again and again) runs
 * while the target drops every connection and stops listening for a while. Counted:
 * errors by status, completions of a slot with nothing in flight (twice), mismatching
 * data, requests that never came back, REMOVE events. One outage has the target's port
 * accept connections and never answer. Every wait has a deadline; no assertion is about
 * time.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bdev_fx.h"
#include "nvme_tcp_tgt.h"
#include "nvpoll/bdev_module.h"

#define BS 512u
#define NSLOTS 16u
#define SLOT_BLOCKS 8u    /* one I/O: 4 KiB */
#define SLOT_STRIDE 1024u /* blocks between two slots' areas */

struct slot {
	struct rfx *f;
	uint32_t idx;
	uint32_t tag;   /* the pattern last written (and being verified) */
	bool writing;   /* the op in flight: a write, else a read */
	bool in_flight; /* submitted, no completion yet */
	uint8_t *buf;
};

struct rfx {
	struct fx_ctrlr backend;
	struct tcp_tgt *tgt;
	struct nvp_bdev_desc *desc;
	struct nvp_bdev_channel *ch;
	struct slot slots[NSLOTS];
	bool submit_more;     /* false: let the slots drain */
	uint64_t verified;    /* reads that matched */
	uint64_t twice;       /* completions of a slot with nothing in flight */
	uint64_t corrupt;     /* reads that did not match */
	uint64_t errors;      /* completions with an error status */
	uint64_t path_errors; /* of those: PATH / HOST PATHING ERROR, DNR clear */
	uint64_t other_errors;
	uint64_t submit_fails;
	unsigned int removes; /* NVP_BDEV_EVENT_REMOVE events */
};

static uint64_t
slot_lba(const struct slot *s)
{
	return (uint64_t)s->idx * SLOT_STRIDE +
	       (s->tag % (SLOT_STRIDE / SLOT_BLOCKS)) * SLOT_BLOCKS;
}

static void
slot_done(void *arg, const struct nvme_cpl *cpl)
{
	struct slot *s = arg;
	struct rfx *f = s->f;

	if (!s->in_flight) {
		f->twice++;
		return;
	}
	s->in_flight = false;
	if (nvme_cpl_is_error(cpl)) {
		f->errors++;
		if (cpl->status.sct == NVME_SCT_PATH && cpl->status.sc == NVME_SC_HOST_PATH_ERROR &&
		    !cpl->status.dnr) {
			f->path_errors++;
		} else if (f->other_errors++ == 0) {
			fx_print_cpl("bdev reconnect workload, first other error", cpl);
		}
		return; /* the same op again: its data is the same */
	}
	if (s->writing) {
		s->writing = false;
		return;
	}
	if (fx_pattern_check(s->buf, slot_lba(s), SLOT_BLOCKS, BS, s->tag) != -1) {
		f->corrupt++;
	} else {
		f->verified++;
	}
	s->tag++;
	s->writing = true;
}

static void
submit_slot(struct slot *s)
{
	struct rfx *f = s->f;
	int rc;

	if (s->writing) {
		fx_pattern_fill(s->buf, slot_lba(s), SLOT_BLOCKS, BS, s->tag);
		rc = nvp_bdev_write_blocks(f->desc, f->ch, s->buf, slot_lba(s), SLOT_BLOCKS, 0,
					   slot_done, s);
	} else {
		memset(s->buf, 0, SLOT_BLOCKS * BS);
		rc = nvp_bdev_read_blocks(f->desc, f->ch, s->buf, slot_lba(s), SLOT_BLOCKS,
					  slot_done, s);
	}
	if (rc == 0) {
		s->in_flight = true;
	} else {
		f->submit_fails++;
	}
}

/* One round: the channel's poll only (it drives the reconnect), then idle slots go. */
static void
pump(struct rfx *f)
{
	(void)nvp_bdev_channel_poll(f->ch);
	if (!f->submit_more || f->removes != 0) {
		return;
	}
	for (uint32_t i = 0; i < NSLOTS; i++) {
		if (!f->slots[i].in_flight) {
			submit_slot(&f->slots[i]);
		}
	}
}

static uint32_t
in_flight(const struct rfx *f)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < NSLOTS; i++) {
		n += f->slots[i].in_flight ? 1u : 0u;
	}
	return n;
}

/* Pump until @more reads have matched, or @ms pass. \return 0 or -ETIMEDOUT. */
static int
pump_verified(struct rfx *f, uint64_t more, uint32_t ms)
{
	uint64_t target = f->verified + more, end = fx_now_us() + (uint64_t)ms * 1000u;

	while (f->verified < target) {
		if (fx_now_us() >= end) {
			fprintf(stderr,
				"bdev reconnect: only %" PRIu64 " of %" PRIu64 " verified reads "
				"within %u ms\n",
				f->verified, target, ms);
			return -ETIMEDOUT;
		}
		pump(f);
	}
	return 0;
}

static void
pump_for(struct rfx *f, uint32_t ms)
{
	uint64_t end = fx_now_us() + (uint64_t)ms * 1000u;

	while (fx_now_us() < end) {
		pump(f);
	}
}

/* Stop submitting and wait for every slot to come back. \return 0 or -ETIMEDOUT. */
static int
drain(struct rfx *f)
{
	uint64_t end = fx_now_us() + (uint64_t)FX_WAIT_MS * 1000u;

	f->submit_more = false;
	while (in_flight(f) != 0) {
		if (fx_now_us() >= end) {
			fprintf(stderr, "bdev reconnect: %u requests never completed\n",
				in_flight(f));
			return -ETIMEDOUT;
		}
		pump(f);
	}
	return 0;
}

static void
bdev_event(enum nvp_bdev_event_type type, struct nvp_bdev *bdev, void *ctx)
{
	struct rfx *f = ctx;

	(void)bdev;
	if (type == NVP_BDEV_EVENT_REMOVE) {
		f->removes++;
	}
}

static int
rfx_open_admin(struct rfx *f, int32_t loss, uint32_t delay, uint32_t fast, uint32_t admin_ms)
{
	struct nvp_nvme_ctrlr_opts co;
	struct nvp_bdev_nvme_opts o;
	struct tcp_tgt_opts to;
	char trid[512];
	int rc;

	memset(f, 0, sizeof(*f));
	rc = fx_open(&f->backend, "size=32M,lba=512");
	if (rc != 0) {
		return rc;
	}
	tcp_tgt_opts_init(&to);
	rc = tcp_tgt_start(f->backend.ctrlr, &to, &f->tgt);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	tcp_tgt_trid(f->tgt, NULL, trid, sizeof(trid));
	nvp_bdev_nvme_opts_init(&o, sizeof(o));
	o.name = "rtcp";
	o.ctrlr_loss_timeout_sec = loss;
	o.reconnect_delay_sec = delay;
	o.fast_io_fail_timeout_sec = fast;
	if (admin_ms != 0) {
		nvp_nvme_ctrlr_opts_init(&co, sizeof(co));
		co.admin_timeout_ms = admin_ms;
		o.ctrlr_opts = &co;
	}
	rc = nvp_bdev_nvme_attach(trid, &o, NULL, 0, NULL);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc != 0) {
		return rc;
	}
	rc = nvp_bdev_open("rtcpn1", true, bdev_event, f, &f->desc);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	rc = nvp_bdev_channel_create(f->desc, NULL, &f->ch);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	for (uint32_t i = 0; i < NSLOTS; i++) {
		f->slots[i].f = f;
		f->slots[i].idx = i;
		f->slots[i].writing = true;
		f->slots[i].tag = i * 1000u;
		f->slots[i].buf = fx_dma_alloc(SLOT_BLOCKS * BS);
	}
	f->submit_more = true;
	return 0;
}

static int
rfx_open(struct rfx *f, int32_t loss, uint32_t delay, uint32_t fast)
{
	return rfx_open_admin(f, loss, delay, fast, 0);
}

static void
rfx_close(struct rfx *f)
{
	struct tcp_tgt_stats st;

	for (uint32_t i = 0; i < NSLOTS; i++) {
		nvp_env_dma_free(f->slots[i].buf);
	}
	if (f->ch != NULL) {
		CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(f->ch), 0);
	}
	if (f->desc != NULL) {
		CU_ASSERT_EQUAL(nvp_bdev_close(f->desc), 0);
	}
	CU_ASSERT_EQUAL(nvp_bdev_fini(), 0); /* detaches the controller */
	if (f->tgt != NULL) {
		tcp_tgt_get_stats(f->tgt, &st);
		CU_ASSERT_EQUAL(st.bad_host_pdus, 0);
		tcp_tgt_stop(f->tgt);
	}
	fx_close(&f->backend);
}

static struct nvp_nvme_ctrlr *
rfx_ctrlr(struct rfx *f)
{
	return nvp_bdev_nvme_get_ctrlr(nvp_bdev_desc_get_bdev(f->desc));
}

/* An outage: every connection dropped; with @down_ms, nobody listens for that long. */
static void
outage(struct rfx *f, uint32_t down_ms)
{
	if (down_ms != 0) {
		CU_ASSERT_EQUAL(tcp_tgt_set_listening(f->tgt, false), 0);
	}
	tcp_tgt_drop_conns(f->tgt);
	if (down_ms != 0) {
		pump_for(f, down_ms);
		CU_ASSERT_EQUAL(tcp_tgt_set_listening(f->tgt, true), 0);
	}
}

/*
 * Outages shorter than fast_io_fail_timeout_sec, some with the target not listening
 * (refused attempts, the next after reconnect_delay_sec): no error, nothing lost, twice
 * or corrupted, the bdev stays, and the workload goes on after each.
 */
static void
test_outages_shorter_than_fast_io_fail(void)
{
	struct tcp_tgt_stats st;
	struct rfx f;

	if (rfx_open(&f, -1, 1, 30) != 0) {
		rfx_close(&f);
		return;
	}
	CU_ASSERT_EQUAL(pump_verified(&f, 64, FX_WAIT_MS), 0);
	for (uint32_t round = 0; round < 4; round++) {
		outage(&f, round % 2 == 0 ? 0 : 1500);
		CU_ASSERT_EQUAL(pump_verified(&f, 64, FX_WAIT_MS), 0);
		CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(rfx_ctrlr(&f)));
	}
	CU_ASSERT_EQUAL(drain(&f), 0);
	CU_ASSERT_EQUAL(f.errors, 0);
	CU_ASSERT_EQUAL(f.twice, 0);
	CU_ASSERT_EQUAL(f.corrupt, 0);
	CU_ASSERT_EQUAL(f.submit_fails, 0);
	CU_ASSERT_EQUAL(f.removes, 0);
	CU_ASSERT_FALSE(nvp_bdev_is_removed(nvp_bdev_desc_get_bdev(f.desc)));
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_reconnecting(rfx_ctrlr(&f)));
	tcp_tgt_get_stats(f.tgt, &st);
	CU_ASSERT(st.drops == 4);
	CU_ASSERT(st.connections >= 2 * 5); /* admin and I/O, again after each outage */
	printf("  %" PRIu64 " verified reads across 4 outages, %" PRIu64 " connections\n",
	       f.verified, st.connections);
	rfx_close(&f);
}

/*
 * An outage longer than fast_io_fail_timeout_sec: the waiting I/O completes with HOST
 * PATHING ERROR, DNR clear (and nothing else); sent again, it succeeds after the
 * reconnect, and the data are right. The bdev stays.
 */
static void
test_outage_longer_than_fast_io_fail(void)
{
	uint64_t end;
	struct rfx f;

	if (rfx_open(&f, 60, 1, 1) != 0) {
		rfx_close(&f);
		return;
	}
	CU_ASSERT_EQUAL(pump_verified(&f, 32, FX_WAIT_MS), 0);
	CU_ASSERT_EQUAL(tcp_tgt_set_listening(f.tgt, false), 0);
	tcp_tgt_drop_conns(f.tgt);
	end = fx_now_us() + (uint64_t)FX_WAIT_MS * 1000u;
	while (f.path_errors == 0 && fx_now_us() < end) {
		pump(&f);
	}
	CU_ASSERT(f.path_errors > 0);
	CU_ASSERT(nvp_nvme_ctrlr_is_reconnecting(rfx_ctrlr(&f)));
	CU_ASSERT_EQUAL(tcp_tgt_set_listening(f.tgt, true), 0);
	CU_ASSERT_EQUAL(pump_verified(&f, 64, FX_WAIT_MS), 0);
	CU_ASSERT_EQUAL(drain(&f), 0);
	CU_ASSERT_EQUAL(f.other_errors, 0);
	CU_ASSERT_EQUAL(f.twice, 0);
	CU_ASSERT_EQUAL(f.corrupt, 0);
	CU_ASSERT_EQUAL(f.removes, 0);
	printf("  %" PRIu64 " path errors while the target was away, then %" PRIu64
	       " verified reads\n",
	       f.path_errors, f.verified);
	rfx_close(&f);
}

/*
 * ctrlr_loss_timeout_sec runs out: the bdev is removed, once (the descriptor's REMOVE
 * event), what waited completes once with an error, new I/O is refused at the call, and
 * it stays so when the target is back.
 */
static void
test_ctrlr_loss_removes_bdev(void)
{
	uint64_t end;
	uint8_t *buf;
	struct rfx f;

	if (rfx_open(&f, 2, 1, 0) != 0) {
		rfx_close(&f);
		return;
	}
	CU_ASSERT_EQUAL(pump_verified(&f, 32, FX_WAIT_MS), 0);
	CU_ASSERT_EQUAL(tcp_tgt_set_listening(f.tgt, false), 0);
	tcp_tgt_drop_conns(f.tgt);
	end = fx_now_us() + (uint64_t)FX_WAIT_MS * 1000u;
	while (f.removes == 0 && fx_now_us() < end) {
		pump(&f);
	}
	CU_ASSERT_EQUAL(f.removes, 1);
	CU_ASSERT_TRUE(nvp_bdev_is_removed(nvp_bdev_desc_get_bdev(f.desc)));
	CU_ASSERT_EQUAL(drain(&f), 0);
	CU_ASSERT_EQUAL(f.path_errors, 0); /* fast_io_fail 0: nothing failed before the loss */
	CU_ASSERT(f.other_errors > 0);     /* what waited: an error, DNR set */
	CU_ASSERT_EQUAL(f.twice, 0);
	CU_ASSERT_EQUAL(f.corrupt, 0);
	CU_ASSERT_EQUAL(tcp_tgt_set_listening(f.tgt, true), 0);
	pump_for(&f, 100);
	CU_ASSERT_EQUAL(f.removes, 1);
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_outstanding(f.ch), 0);
	buf = fx_dma_alloc(SLOT_BLOCKS * BS);
	CU_ASSERT_NOT_EQUAL(
		nvp_bdev_read_blocks(f.desc, f.ch, buf, 0, SLOT_BLOCKS, slot_done, &f.slots[0]), 0);
	nvp_env_dma_free(buf);
	rfx_close(&f);
}

/* A listener on @port that never accepts: the kernel completes connections into its
 * backlog, and nothing ever answers on them (a target gone silent). -1 if it cannot. */
static int
silent_listener(uint16_t port)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0) {
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 16) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Connections that reached @fd (accepted now, without waiting, and closed). */
static unsigned int
silent_drain(int fd)
{
	unsigned int n = 0;
	int c;

	(void)fcntl(fd, F_SETFL, O_NONBLOCK);
	while ((c = accept(fd, NULL, NULL)) >= 0) {
		close(c);
		n++;
	}
	return n;
}

/*
 * An outage in which the target's port accepts connections and then says nothing (not
 * one ICResp): reconnect attempts run into it and time out after admin_timeout_ms, the
 * channel's polls go on meanwhile, and once the real target listens again an attempt
 * succeeds: no error (fast_io_fail_timeout_sec is longer), nothing lost, twice or
 * corrupted. The longest single poll of the silent phase is printed, not asserted (a
 * figure of this machine's load; an attempt's connection is made a step per poll).
 */
static void
test_silent_target(void)
{
	uint64_t end, t0, t1, longest = 0, polls = 0;
	unsigned int reached;
	struct rfx f;
	int fd;

	if (rfx_open_admin(&f, -1, 1, 60, 1500) != 0) {
		rfx_close(&f);
		return;
	}
	CU_ASSERT_EQUAL(pump_verified(&f, 32, FX_WAIT_MS), 0);
	CU_ASSERT_EQUAL(tcp_tgt_set_listening(f.tgt, false), 0);
	fd = silent_listener(tcp_tgt_port(f.tgt));
	CU_ASSERT_FATAL(fd >= 0);
	tcp_tgt_drop_conns(f.tgt);
	end = fx_now_us() + 3500u * 1000u;
	while ((t0 = fx_now_us()) < end) {
		pump(&f);
		t1 = fx_now_us();
		longest = t1 - t0 > longest ? t1 - t0 : longest;
		polls++;
	}
	reached = silent_drain(fd);
	close(fd);
	CU_ASSERT(reached >= 1); /* an attempt did meet the silent listener */
	CU_ASSERT(nvp_nvme_ctrlr_is_reconnecting(rfx_ctrlr(&f)));
	CU_ASSERT_EQUAL(tcp_tgt_set_listening(f.tgt, true), 0);
	CU_ASSERT_EQUAL(pump_verified(&f, 64, FX_WAIT_MS), 0);
	CU_ASSERT_EQUAL(drain(&f), 0);
	CU_ASSERT_EQUAL(f.errors, 0);
	CU_ASSERT_EQUAL(f.twice, 0);
	CU_ASSERT_EQUAL(f.corrupt, 0);
	CU_ASSERT_EQUAL(f.removes, 0);
	printf("  silent target for 3.5 s (admin_timeout_ms 1500): %u connection(s) met it, "
	       "%" PRIu64 " polls, the longest %.1f ms; then %" PRIu64 " verified reads\n",
	       reached, polls, (double)longest / 1000.0, f.verified);
	rfx_close(&f);
}

/* fast_io_fail_timeout_sec at attach: SPDK's rules, each bad value refused and named. */
static void
test_bad_options(void)
{
	static const struct {
		int32_t loss;
		uint32_t delay, fast;
	} bad[] = {
		{ 0, 0, 5 },   /* fast_io_fail without reconnect */
		{ 10, 5, 2 },  /* below the delay */
		{ 10, 1, 20 }, /* past the loss timeout */
	};
	struct nvp_bdev_nvme_opts o;

	for (size_t i = 0; i < NVP_COUNTOF(bad); i++) {
		nvp_bdev_nvme_opts_init(&o, sizeof(o));
		o.name = "rbad";
		o.ctrlr_loss_timeout_sec = bad[i].loss;
		o.reconnect_delay_sec = bad[i].delay;
		o.fast_io_fail_timeout_sec = bad[i].fast;
		CU_ASSERT_EQUAL(nvp_bdev_nvme_attach("trtype:TCP adrfam:IPv4 traddr:127.0.0.1 "
						     "trsvcid:9 subnqn:nqn.x",
						     &o, NULL, 0, NULL),
				-EINVAL);
	}
	CU_ASSERT_PTR_NULL(nvp_bdev_get_by_name("rbadn1"));
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "outages_shorter_than_fast_io_fail", test_outages_shorter_than_fast_io_fail },
		{ "outage_longer_than_fast_io_fail", test_outage_longer_than_fast_io_fail },
		{ "ctrlr_loss_removes_bdev", test_ctrlr_loss_removes_bdev },
		{ "silent_target", test_silent_target },
		{ "bad_options", test_bad_options },
	};

	return fx_main(argc, argv, "bdev_nvme_tcp_reconnect", tests, NVP_COUNTOF(tests));
}

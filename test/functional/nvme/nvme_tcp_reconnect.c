/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reconnect without the application (opts.ctrlr_loss_timeout_sec, reconnect_delay_sec,
 * fast_io_fail_timeout_sec) against the NVMe/TCP test target on loopback. A verify
 * workload (slots that each write a pattern to their own blocks, read it back and
 * compare, again and again) runs while the target drops every connection and stops
 * listening for a while (a restart), or stalls (reads and answers nothing for a while,
 * its connections open); the test thread polls the admin queue (which drives the
 * reconnect) and the I/O qpair. What is counted: errors by status, completions of a
 * request that was not in flight (twice), mismatching data, requests that never came
 * back. Every wait has a deadline; none of the assertions is about time.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#include "fixture.h"
#include "nvme_tcp_tgt.h"
#include "nvpoll/log.h"

#define NSLOTS 16u
#define IO_BYTES 4096u            /* one I/O */
#define SLOT_BYTES (512u * 1024u) /* a slot's area; its writes go round it */

struct slot {
	struct rfx *f;
	uint32_t idx;
	uint32_t tag;   /* the pattern last written (and being verified) */
	bool writing;   /* the op in flight: a write, else a read */
	bool in_flight; /* submitted, no completion yet */
	bool retry;     /* the last op failed: submit it again */
	uint8_t *buf;
};

struct rfx {
	struct fx_ctrlr backend;
	struct tcp_tgt *tgt;
	struct nvp_nvme_ctrlr *ctrlr;
	struct nvp_nvme_ns *ns;
	struct nvp_nvme_qpair *qpair;
	struct slot slots[NSLOTS];
	uint32_t bs;          /* the namespace's block size */
	bool submit_more;     /* false: let the slots drain */
	uint64_t verified;    /* reads that matched */
	uint64_t twice;       /* completions of a slot with nothing in flight */
	uint64_t corrupt;     /* reads that did not match */
	uint64_t errors;      /* completions with an error status */
	uint64_t path_errors; /* of those: PATH / HOST PATHING ERROR, DNR clear */
	uint64_t other_errors;
	uint64_t submit_fails;
	unsigned int removes; /* remove callback calls */
};

static void submit_slot(struct slot *s);

static uint32_t
slot_blocks(const struct slot *s)
{
	return IO_BYTES / s->f->bs;
}

static uint64_t
slot_lba(const struct slot *s)
{
	return ((uint64_t)s->idx * SLOT_BYTES + (s->tag % (SLOT_BYTES / IO_BYTES)) * IO_BYTES) /
	       s->f->bs;
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
		} else {
			if (f->other_errors++ == 0) {
				fx_print_cpl("reconnect workload, first other error", cpl);
			}
		}
		s->retry = true; /* the same op again: its data is the same */
		return;
	}
	s->retry = false;
	if (s->writing) {
		s->writing = false;
	} else {
		if (fx_pattern_check(s->buf, slot_lba(s), slot_blocks(s), f->bs, s->tag) != -1) {
			f->corrupt++;
		} else {
			f->verified++;
		}
		s->tag++;
		s->writing = true;
	}
}

static void
submit_slot(struct slot *s)
{
	struct rfx *f = s->f;
	int rc;

	if (s->writing) {
		fx_pattern_fill(s->buf, slot_lba(s), slot_blocks(s), f->bs, s->tag);
		rc = nvp_nvme_ns_cmd_write(f->ns, f->qpair, s->buf, slot_lba(s), slot_blocks(s),
					   slot_done, s, 0);
	} else {
		memset(s->buf, 0, IO_BYTES);
		rc = nvp_nvme_ns_cmd_read(f->ns, f->qpair, s->buf, slot_lba(s), slot_blocks(s),
					  slot_done, s, 0);
	}
	if (rc == 0) {
		s->in_flight = true;
	} else {
		f->submit_fails++;
	}
}

/* One round: the admin poll (it drives the reconnect), the I/O poll, idle slots go. */
static void
pump(struct rfx *f)
{
	(void)nvp_nvme_ctrlr_process_admin_completions(f->ctrlr);
	(void)nvp_nvme_qpair_process_completions(f->qpair, 0);
	if (!f->submit_more || nvp_nvme_ctrlr_is_failed(f->ctrlr)) {
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

/* Pump until @verified reads have matched (more than now), or @ms pass. \return 0 or -ETIMEDOUT. */
static int
pump_verified(struct rfx *f, uint64_t more, uint32_t ms)
{
	uint64_t target = f->verified + more, end = fx_now_us() + (uint64_t)ms * 1000u;

	while (f->verified < target) {
		if (fx_now_us() >= end) {
			fprintf(stderr,
				"reconnect: only %" PRIu64 " of %" PRIu64 " verified reads "
				"within %u ms\n",
				f->verified, target, ms);
			return -ETIMEDOUT;
		}
		pump(f);
	}
	return 0;
}

/* Pump for @ms milliseconds whatever happens. */
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
			fprintf(stderr, "reconnect: %u requests never completed\n", in_flight(f));
			return -ETIMEDOUT;
		}
		pump(f);
	}
	return 0;
}

static void
remove_cb(void *arg, struct nvp_nvme_ctrlr *ctrlr)
{
	struct rfx *f = arg;

	(void)ctrlr;
	f->removes++;
}

static int
rfx_open(struct rfx *f, int32_t loss, uint32_t delay, uint32_t fast)
{
	struct nvp_nvme_ctrlr_opts opts;
	struct tcp_tgt_opts o;
	char trid[512];
	int rc;

	memset(f, 0, sizeof(*f));
	if (fx_real_trid() != NULL) {
		snprintf(trid, sizeof(trid), "%s", fx_real_trid()); /* an outside target */
	} else {
		rc = fx_open(&f->backend, "size=32M,lba=512");
		if (rc != 0) {
			return rc;
		}
		tcp_tgt_opts_init(&o);
		rc = tcp_tgt_start(f->backend.ctrlr, &o, &f->tgt);
		CU_ASSERT_EQUAL_FATAL(rc, 0);
		tcp_tgt_trid(f->tgt, NULL, trid, sizeof(trid));
	}
	nvp_nvme_ctrlr_opts_init(&opts, sizeof(opts));
	opts.ctrlr_loss_timeout_sec = loss;
	opts.reconnect_delay_sec = delay;
	opts.fast_io_fail_timeout_sec = fast;
	rc = fx_connect_str(trid, &opts, &f->ctrlr);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc != 0) {
		return rc;
	}
	nvp_nvme_ctrlr_register_remove_callback(f->ctrlr, remove_cb, f);
	f->ns = nvp_nvme_ctrlr_get_ns(f->ctrlr, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->ns);
	f->bs = nvp_nvme_ns_get_sector_size(f->ns);
	CU_ASSERT_FATAL(f->bs != 0 && IO_BYTES % f->bs == 0);
	CU_ASSERT_FATAL(nvp_nvme_ns_get_num_sectors(f->ns) * f->bs >= NSLOTS * SLOT_BYTES);
	rc = fx_qpair_alloc(f->ctrlr, 64, 0, 0, false, &f->qpair);
	CU_ASSERT_EQUAL(rc, 0);
	for (uint32_t i = 0; i < NSLOTS && rc == 0; i++) {
		f->slots[i].f = f;
		f->slots[i].idx = i;
		f->slots[i].writing = true;
		f->slots[i].tag = i * 1000u;
		f->slots[i].buf = fx_dma_alloc(IO_BYTES);
	}
	f->submit_more = true;
	return rc;
}

static void
rfx_close(struct rfx *f)
{
	struct tcp_tgt_stats st;

	for (uint32_t i = 0; i < NSLOTS; i++) {
		nvp_env_dma_free(f->slots[i].buf);
	}
	if (f->qpair != NULL) {
		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(f->qpair), 0);
	}
	if (f->ctrlr != NULL) {
		(void)nvp_nvme_detach(f->ctrlr);
	}
	if (f->tgt != NULL) {
		tcp_tgt_get_stats(f->tgt, &st);
		CU_ASSERT_EQUAL(st.bad_host_pdus, 0);
		tcp_tgt_stop(f->tgt);
	}
	if (fx_real_trid() == NULL) {
		fx_close(&f->backend);
	}
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
 * or corrupted, and the workload goes on after each.
 */
static void
test_outages_shorter_than_fast_io_fail(void)
{
	struct rfx f;

	if (fx_skip_real("the outages are made by this program's target")) {
		return;
	}

	if (rfx_open(&f, -1, 1, 30) != 0) {
		rfx_close(&f);
		return;
	}
	CU_ASSERT_EQUAL(pump_verified(&f, 64, FX_WAIT_MS), 0);
	for (uint32_t round = 0; round < 4; round++) {
		outage(&f, round % 2 == 0 ? 0 : 300);
		CU_ASSERT_EQUAL(pump_verified(&f, 64, FX_WAIT_MS), 0);
		CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(f.ctrlr));
	}
	CU_ASSERT_EQUAL(drain(&f), 0);
	CU_ASSERT_EQUAL(f.errors, 0);
	CU_ASSERT_EQUAL(f.twice, 0);
	CU_ASSERT_EQUAL(f.corrupt, 0);
	CU_ASSERT_EQUAL(f.submit_fails, 0);
	CU_ASSERT_EQUAL(f.removes, 0);
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_reconnecting(f.ctrlr));
	printf("  %" PRIu64 " verified reads across 4 outages\n", f.verified);
	rfx_close(&f);
}

/*
 * A stalled target (it reads and answers nothing for a while, the connections stay open),
 * twice, with the I/O and admin polls going on: the requests wait and complete once it
 * goes on; nothing fails, is lost, completes twice or reads back wrong, and the controller
 * never counts as lost.
 */
static void
test_stalled_target(void)
{
	struct tcp_tgt_stats st;
	struct rfx f;

	if (rfx_open(&f, -1, 1, 30) != 0) {
		rfx_close(&f);
		return;
	}
	CU_ASSERT_EQUAL(pump_verified(&f, 64, FX_WAIT_MS), 0);
	for (uint32_t round = 0; round < 2; round++) {
		tcp_tgt_stall(f.tgt, 400);
		pump_for(&f, 200); /* inside the stall: the requests wait */
		CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(f.ctrlr));
		CU_ASSERT_EQUAL(pump_verified(&f, 64, FX_WAIT_MS), 0);
	}
	CU_ASSERT_EQUAL(drain(&f), 0);
	CU_ASSERT_EQUAL(f.errors, 0);
	CU_ASSERT_EQUAL(f.twice, 0);
	CU_ASSERT_EQUAL(f.corrupt, 0);
	CU_ASSERT_EQUAL(f.submit_fails, 0);
	CU_ASSERT_EQUAL(f.removes, 0);
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_reconnecting(f.ctrlr));
	tcp_tgt_get_stats(f.tgt, &st);
	CU_ASSERT_EQUAL(st.stalls, 2);
	CU_ASSERT_EQUAL(st.drops, 0);
	printf("  %" PRIu64 " verified reads across 2 stalls\n", f.verified);
	rfx_close(&f);
}

/*
 * An outage longer than fast_io_fail_timeout_sec: the waiting I/O completes with HOST
 * PATHING ERROR, DNR clear (and nothing else); sent again, it succeeds after the
 * reconnect, and the data are right.
 */
static void
test_outage_longer_than_fast_io_fail(void)
{
	uint64_t end;
	struct rfx f;

	if (fx_skip_real("the outages are made by this program's target")) {
		return;
	}

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
	CU_ASSERT(nvp_nvme_ctrlr_is_reconnecting(f.ctrlr));
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(f.ctrlr));
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
 * ctrlr_loss_timeout_sec runs out: the controller is failed for good (remove callback
 * once, requests complete with HOST PATHING ERROR and DNR set, submissions -ENXIO) and
 * stays so when the target is back.
 */
static void
test_ctrlr_loss_timeout(void)
{
	uint8_t *buf;
	uint64_t end;
	struct rfx f;

	if (fx_skip_real("the outages are made by this program's target")) {
		return;
	}

	if (rfx_open(&f, 2, 1, 0) != 0) {
		rfx_close(&f);
		return;
	}
	CU_ASSERT_EQUAL(pump_verified(&f, 32, FX_WAIT_MS), 0);
	CU_ASSERT_EQUAL(tcp_tgt_set_listening(f.tgt, false), 0);
	tcp_tgt_drop_conns(f.tgt);
	end = fx_now_us() + (uint64_t)FX_WAIT_MS * 1000u;
	while (!nvp_nvme_ctrlr_is_failed(f.ctrlr) && fx_now_us() < end) {
		pump(&f);
	}
	CU_ASSERT(nvp_nvme_ctrlr_is_failed(f.ctrlr));
	CU_ASSERT(nvp_nvme_ctrlr_is_removed(f.ctrlr));
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_reconnecting(f.ctrlr));
	CU_ASSERT_EQUAL(drain(&f), 0);
	CU_ASSERT_EQUAL(f.removes, 1);
	CU_ASSERT_EQUAL(f.path_errors, 0); /* fast_io_fail 0: nothing failed before the loss */
	CU_ASSERT(f.other_errors > 0);     /* what waited: HOST PATHING ERROR, DNR set */
	CU_ASSERT_EQUAL(f.twice, 0);
	CU_ASSERT_EQUAL(f.corrupt, 0);
	CU_ASSERT_EQUAL(tcp_tgt_set_listening(f.tgt, true), 0);
	pump_for(&f, 100);
	CU_ASSERT(nvp_nvme_ctrlr_is_failed(f.ctrlr));
	buf = fx_dma_alloc(f.bs);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(f.ns, f.qpair, buf, 0, 1, slot_done, &f.slots[0], 0),
			-ENXIO);
	nvp_env_dma_free(buf);
	rfx_close(&f);
}

/* What the driver logs about reconnect attempts (the lines still go to stderr). */
static struct {
	unsigned int attempt_lines; /* "reconnect attempt N failed" */
	unsigned int out_of_order;  /* such a line whose N is not the last one's + 1 */
	unsigned int last_attempt;
	unsigned int connect_lines; /* "cannot connect", "no connection (" */
	unsigned int refused_lines; /* "(Connection refused)": a reset's reason */
	unsigned int lines;
	uint64_t polls; /* the test's I/O polls so far (test_reset_a_step_per_poll) */
	uint64_t polls_at_reset, polls_at_back; /* at "resetting", at "reconnected" */
	uint64_t us_at_reset, us_at_back;
	bool reset_seen, back_seen;
} g_log;

static void
count_log(enum nvp_log_level level, const char *component, const char *msg)
{
	const char *a = strstr(msg, "reconnect attempt ");
	unsigned int n;

	if (a != NULL && strstr(a, " failed") != NULL &&
	    sscanf(a, "reconnect attempt %u", &n) == 1) {
		g_log.attempt_lines++;
		g_log.out_of_order += n != g_log.last_attempt + 1 ? 1u : 0u;
		g_log.last_attempt = n;
	}
	if (strstr(msg, "cannot connect") != NULL || strstr(msg, "no connection (") != NULL) {
		g_log.connect_lines++;
	}
	g_log.refused_lines += strstr(msg, "(Connection refused)") != NULL ? 1u : 0u;
	g_log.lines++;
	if (!g_log.reset_seen && strstr(msg, ": resetting") != NULL) {
		g_log.reset_seen = true;
		g_log.polls_at_reset = g_log.polls;
		g_log.us_at_reset = fx_now_us();
	}
	if (!g_log.back_seen && strstr(msg, ": reconnected (attempt") != NULL) {
		g_log.back_seen = true;
		g_log.polls_at_back = g_log.polls;
		g_log.us_at_back = fx_now_us();
	}
	fprintf(stderr, "nvpoll %s: %s: %s\n", component,
		level <= NVP_LOG_ERROR ? "error" :
		level <= NVP_LOG_WARN  ? "warning" :
					 "notice",
		msg);
}

/*
 * A target that refuses the reconnect attempts until the loss timeout: one line per
 * attempt (its number in order, why, the next delay), nothing else about the connection
 * (the transport's "cannot connect" lines were five per attempt once).
 */
static void
test_one_line_per_attempt(void)
{
	uint64_t end;
	struct rfx f;

	if (fx_skip_real("the outages are made by this program's target")) {
		return;
	}
	if (rfx_open(&f, 3, 1, 0) != 0) {
		rfx_close(&f);
		return;
	}
	CU_ASSERT_EQUAL(pump_verified(&f, 32, FX_WAIT_MS), 0);
	memset(&g_log, 0, sizeof(g_log));
	nvp_log_set_callback(count_log);
	CU_ASSERT_EQUAL(tcp_tgt_set_listening(f.tgt, false), 0);
	tcp_tgt_drop_conns(f.tgt);
	end = fx_now_us() + (uint64_t)FX_WAIT_MS * 1000u;
	while (!nvp_nvme_ctrlr_is_failed(f.ctrlr) && fx_now_us() < end) {
		pump(&f);
	}
	nvp_log_set_callback(NULL);
	CU_ASSERT(nvp_nvme_ctrlr_is_removed(f.ctrlr));
	CU_ASSERT(g_log.attempt_lines >= 2); /* at the loss, 1 s, 2 s: 3 unless starved */
	CU_ASSERT_EQUAL(g_log.out_of_order, 0);
	CU_ASSERT_EQUAL(g_log.connect_lines, 0);
	printf("  %u refused attempts, one line each\n", g_log.attempt_lines);
	CU_ASSERT_EQUAL(drain(&f), 0);
	CU_ASSERT_EQUAL(tcp_tgt_set_listening(f.tgt, true), 0);
	rfx_close(&f);
}

/*
 * The application's reset of a controller whose target refuses connections (no reconnect
 * option): it fails, saying why in one line; the reset does not try to connect again for
 * each register it reads (it did, five times, each with its line).
 */
static void
test_reset_refused_one_line(void)
{
	uint64_t end;
	struct rfx f;

	if (fx_skip_real("the outages are made by this program's target")) {
		return;
	}
	if (rfx_open(&f, 0, 0, 0) != 0) {
		rfx_close(&f);
		return;
	}
	CU_ASSERT_EQUAL(pump_verified(&f, 16, FX_WAIT_MS), 0);
	CU_ASSERT_EQUAL(tcp_tgt_set_listening(f.tgt, false), 0);
	tcp_tgt_drop_conns(f.tgt);
	end = fx_now_us() + (uint64_t)FX_WAIT_MS * 1000u;
	while (!nvp_nvme_ctrlr_is_failed(f.ctrlr) && fx_now_us() < end) {
		pump(&f);
	}
	CU_ASSERT_FATAL(nvp_nvme_ctrlr_is_failed(f.ctrlr));
	CU_ASSERT_EQUAL(drain(&f), 0);
	memset(&g_log, 0, sizeof(g_log));
	nvp_log_set_callback(count_log);
	CU_ASSERT(nvp_nvme_ctrlr_reset(f.ctrlr) < 0);
	nvp_log_set_callback(NULL);
	CU_ASSERT_EQUAL(g_log.connect_lines, 0);
	CU_ASSERT_EQUAL(g_log.refused_lines, 1);
	CU_ASSERT(g_log.lines <= 2); /* "resetting", and that one */
	/* the next reset tries again (and says so again) */
	memset(&g_log, 0, sizeof(g_log));
	nvp_log_set_callback(count_log);
	CU_ASSERT(nvp_nvme_ctrlr_reset(f.ctrlr) < 0);
	nvp_log_set_callback(NULL);
	CU_ASSERT_EQUAL(g_log.refused_lines, 1);
	CU_ASSERT_EQUAL(tcp_tgt_set_listening(f.tgt, true), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_reset(f.ctrlr), 0);
	f.submit_more = true;
	CU_ASSERT_EQUAL(pump_verified(&f, 16, FX_WAIT_MS), 0);
	CU_ASSERT_EQUAL(drain(&f), 0);
	rfx_close(&f);
}

/*
 * A reconnect driven by I/O polls only (the admin queue never polled), against a target
 * that answers each admin command 20 ms late: the reset after the attempt's Connect goes
 * a step per poll, so the polling thread sees many of its I/O polls return between the
 * reset's first line and its last (with the whole reset in one poll there were none, and
 * that poll waited for every late answer); the longest of them is printed, and the I/O
 * goes on verified.
 */
static void
test_reset_a_step_per_poll(void)
{
	uint64_t end, t, longest = 0;
	struct rfx f;

	if (fx_skip_real("the outage is made by this program's target")) {
		return;
	}
	if (rfx_open(&f, -1, 1, 0) != 0) {
		rfx_close(&f);
		return;
	}
	CU_ASSERT_EQUAL(pump_verified(&f, 32, FX_WAIT_MS), 0);
	memset(&g_log, 0, sizeof(g_log));
	nvp_log_set_callback(count_log);
	tcp_tgt_set_admin_delay(f.tgt, 20);
	tcp_tgt_drop_conns(f.tgt); /* still listening: the first attempt connects */
	end = fx_now_us() + (uint64_t)FX_WAIT_MS * 1000u;
	while (!g_log.back_seen && fx_now_us() < end) {
		t = fx_now_us();
		(void)nvp_nvme_qpair_process_completions(f.qpair, 0);
		t = fx_now_us() - t;
		longest = g_log.reset_seen && t > longest ? t : longest;
		g_log.polls++;
	}
	nvp_log_set_callback(NULL);
	tcp_tgt_set_admin_delay(f.tgt, 0);
	CU_ASSERT(g_log.reset_seen && g_log.back_seen);
	/* the init state machine's ten states run twice, a state per poll at least */
	CU_ASSERT(g_log.polls_at_back - g_log.polls_at_reset >= 10);
	printf("  reset of %.1f ms over %" PRIu64 " I/O polls, the longest poll %.1f ms\n",
	       (double)(g_log.us_at_back - g_log.us_at_reset) / 1e3,
	       g_log.polls_at_back - g_log.polls_at_reset, (double)longest / 1e3);
	CU_ASSERT_EQUAL(pump_verified(&f, 32, FX_WAIT_MS), 0);
	CU_ASSERT_EQUAL(drain(&f), 0);
	CU_ASSERT_EQUAL(f.errors, 0);
	CU_ASSERT_EQUAL(f.corrupt, 0);
	CU_ASSERT_EQUAL(f.twice, 0);
	rfx_close(&f);
}

/* Seconds from the environment (@name), else @dflt. */
static uint32_t
env_secs(const char *name, uint32_t dflt)
{
	const char *v = getenv(name);

	return v != NULL && atoi(v) > 0 ? (uint32_t)atoi(v) : dflt;
}

/*
 * The target goes away by itself and comes back, while the workload runs for
 * NVP_TEST_SECONDS. Against an outside target (NVP_TEST_TRID; the QEMU judge's nvmet-tcp)
 * NVP_TEST_OUTAGE_CMD, a shell command started 1 s into the run, takes it away and brings
 * it back (the judge removes the port's subsystem link for 5 s); against this program's
 * target the outage is made here (every connection dropped, nobody listening for 1.5 s).
 * Shorter than fast_io_fail_timeout_sec (30 s): no error, nothing lost, twice or
 * corrupted. Each reconnect's time (lost connection seen to controller back) is printed.
 */
static void
test_outage_by_the_target(void)
{
	const char *cmd = getenv("NVP_TEST_OUTAGE_CMD");
	bool external = fx_real_trid() != NULL, was = false, down = false, up = false;
	uint64_t t0, now, end, hard_end, since = 0, longest = 0;
	uint32_t reconnects = 0;
	pid_t child = -1;
	int status = 0;
	struct rfx f;

	if (external && cmd == NULL) {
		printf("SKIP (NVP_TEST_OUTAGE_CMD: the command that takes the target away)\n");
		return;
	}
	if (rfx_open(&f, 60, 1, 30) != 0) {
		rfx_close(&f);
		return;
	}
	CU_ASSERT_EQUAL(pump_verified(&f, 64, FX_WAIT_MS), 0);
	t0 = now = fx_now_us();
	end = t0 + (uint64_t)env_secs("NVP_TEST_SECONDS", 4) * 1000000u;
	hard_end = end + (uint64_t)FX_WAIT_MS * 1000u;
	/* until the end, and on while the outage (its command) or a reconnect lasts */
	while ((now < end || child > 0 || was) && now < hard_end) {
		bool is;

		pump(&f);
		now = fx_now_us();
		if (!down && now >= t0 + 1000000u) {
			down = true;
			if (external) {
				char *argv[] = { "sh", "-c", (char *)cmd, NULL };

				CU_ASSERT_EQUAL_FATAL(
					posix_spawnp(&child, "sh", NULL, NULL, argv, environ), 0);
				printf("  outage: %s\n", cmd);
			} else {
				CU_ASSERT_EQUAL(tcp_tgt_set_listening(f.tgt, false), 0);
				tcp_tgt_drop_conns(f.tgt);
			}
		}
		if (!external && down && !up && now >= t0 + 2500000u) {
			up = true;
			CU_ASSERT_EQUAL(tcp_tgt_set_listening(f.tgt, true), 0);
		}
		if (child > 0 && waitpid(child, &status, WNOHANG) == child) {
			child = -1;
			CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		}
		is = nvp_nvme_ctrlr_is_reconnecting(f.ctrlr);
		if (is && !was) {
			since = now;
		} else if (!is && was) {
			reconnects++;
			longest = NVP_MAX(longest, now - since);
			printf("  reconnect %u: %.0f ms from the lost connection to the controller back\n",
			       reconnects, (double)(now - since) / 1000.0);
		}
		was = is;
	}
	if (child > 0) {
		fprintf(stderr, "reconnect: the outage command did not end\n");
		kill(child, SIGKILL);
		(void)waitpid(child, &status, 0);
		CU_FAIL("the outage command did not end");
	}
	CU_ASSERT(reconnects >= 1); /* the outage was seen, and the controller came back */
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_reconnecting(f.ctrlr));
	CU_ASSERT_EQUAL(pump_verified(&f, 64, FX_WAIT_MS), 0); /* and the workload goes on */
	CU_ASSERT_EQUAL(drain(&f), 0);
	CU_ASSERT_EQUAL(f.errors, 0);
	CU_ASSERT_EQUAL(f.twice, 0);
	CU_ASSERT_EQUAL(f.corrupt, 0);
	CU_ASSERT_EQUAL(f.submit_fails, 0);
	CU_ASSERT_EQUAL(f.removes, 0);
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(f.ctrlr));
	printf("  %" PRIu64 " verified reads, %" PRIu64 " errors, %u reconnect(s), the longest "
	       "%.0f ms\n",
	       f.verified, f.errors, reconnects, (double)longest / 1000.0);
	rfx_close(&f);
}

/* SPDK's rules for the three options; each bad combination names what is wrong. */
/*
 * A qpair made with opts.async_mode while the target refuses connections, on a
 * controller with reconnect options: its failed connect is a lost connection, as a
 * failed re-creation is; the controller reconnects (the qpair's own polls step it), what
 * was submitted waits meanwhile, then goes out once the target listens again.
 */
static void
test_async_qpair_refused(void)
{
	struct nvp_nvme_io_qpair_opts opts;
	struct nvp_nvme_qpair *q = NULL;
	struct fx_cpl c = { 0 };
	uint8_t *buf;
	uint64_t end;
	struct rfx f;

	if (fx_skip_real("the outage is made by this program's target")) {
		return;
	}
	if (rfx_open(&f, 60, 1, 0) != 0) {
		rfx_close(&f);
		return;
	}
	buf = fx_dma_alloc(IO_BYTES);
	CU_ASSERT_EQUAL(tcp_tgt_set_listening(f.tgt, false), 0);
	nvp_nvme_ctrlr_get_default_io_qpair_opts(f.ctrlr, &opts, sizeof(opts));
	opts.async_mode = true;
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_ctrlr_alloc_io_qpair(f.ctrlr, &opts, &q), 0);
	fx_pattern_fill(buf, 24, IO_BYTES / f.bs, f.bs, 0x3c);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(f.ns, q, buf, 24, IO_BYTES / f.bs, fx_cpl_cb, &c, 0),
			0);
	end = fx_now_us() + (uint64_t)FX_WAIT_MS * 1000u;
	while (!nvp_nvme_ctrlr_is_reconnecting(f.ctrlr) && c.calls == 0 && fx_now_us() < end) {
		(void)nvp_nvme_qpair_process_completions(q, 0);
	}
	CU_ASSERT_TRUE(nvp_nvme_ctrlr_is_reconnecting(f.ctrlr));
	CU_ASSERT_EQUAL(c.calls, 0); /* waits for the reconnect */
	CU_ASSERT_FALSE(nvp_nvme_qpair_is_connected(q));
	CU_ASSERT_EQUAL(tcp_tgt_set_listening(f.tgt, true), 0);
	CU_ASSERT_EQUAL(fx_poll_until(q, &c.calls, 1, FX_WAIT_MS), 0);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&c.cpl));
	CU_ASSERT_TRUE(nvp_nvme_qpair_is_connected(q));
	memset(buf, 0, IO_BYTES);
	CU_ASSERT_EQUAL(fx_io(f.ns, q, FX_READ, buf, 24, IO_BYTES / f.bs, 0, NULL), 0);
	CU_ASSERT_EQUAL(fx_pattern_check(buf, 24, IO_BYTES / f.bs, f.bs, 0x3c), -1);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(q), 0);
	nvp_env_dma_free(buf);
	f.submit_more = false;
	rfx_close(&f);
}

static void
test_bad_options(void)
{
	static const struct {
		int32_t loss;
		uint32_t delay, fast;
		int rc;
	} cases[] = {
		{ -2, 1, 0, -EINVAL },                         /* below -1 */
		{ 0, 1, 0, -EINVAL },                          /* a delay without reconnect */
		{ 0, 0, 5, -EINVAL },                          /* fast_io_fail without reconnect */
		{ 10, 0, 0, -EINVAL },                         /* reconnect without a delay */
		{ -1, 0, 0, -EINVAL },  { 5, 10, 0, -EINVAL }, /* delay past the loss timeout */
		{ 10, 5, 2, -EINVAL },                         /* fast_io_fail below the delay */
		{ 10, 1, 20, -EINVAL }, /* fast_io_fail past the loss timeout */
		{ -1, 1, 0, 0 },        { 10, 2, 5, 0 },
	};
	struct nvp_nvme_ctrlr_opts opts;
	struct nvp_nvme_ctrlr *ctrlr;
	struct tcp_tgt_opts o;
	struct fx_ctrlr backend;
	struct tcp_tgt *tgt;
	char trid[512];

	if (fx_skip_real("uses this program's target")) {
		return;
	}
	if (fx_open(&backend, "size=32M,lba=512") != 0) {
		fx_close(&backend);
		return;
	}
	tcp_tgt_opts_init(&o);
	CU_ASSERT_EQUAL_FATAL(tcp_tgt_start(backend.ctrlr, &o, &tgt), 0);
	tcp_tgt_trid(tgt, NULL, trid, sizeof(trid));
	for (size_t i = 0; i < NVP_COUNTOF(cases); i++) {
		int rc;

		nvp_nvme_ctrlr_opts_init(&opts, sizeof(opts));
		opts.ctrlr_loss_timeout_sec = cases[i].loss;
		opts.reconnect_delay_sec = cases[i].delay;
		opts.fast_io_fail_timeout_sec = cases[i].fast;
		ctrlr = NULL;
		rc = fx_connect_str(trid, &opts, &ctrlr);
		CU_ASSERT_EQUAL(rc, cases[i].rc);
		if (rc != cases[i].rc) {
			fprintf(stderr, "case %zu: loss %d delay %u fast %u: rc %d\n", i,
				cases[i].loss, cases[i].delay, cases[i].fast, rc);
		}
		if (rc == 0) {
			CU_ASSERT_EQUAL(nvp_nvme_detach(ctrlr), 0);
		}
	}
	tcp_tgt_stop(tgt);
	fx_close(&backend);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "outages_shorter_than_fast_io_fail", test_outages_shorter_than_fast_io_fail },
		{ "stalled_target", test_stalled_target },
		{ "outage_longer_than_fast_io_fail", test_outage_longer_than_fast_io_fail },
		{ "ctrlr_loss_timeout", test_ctrlr_loss_timeout },
		{ "one_line_per_attempt", test_one_line_per_attempt },
		{ "reset_refused_one_line", test_reset_refused_one_line },
		{ "reset_a_step_per_poll", test_reset_a_step_per_poll },
		{ "bad_options", test_bad_options },
		{ "outage_by_the_target", test_outage_by_the_target },
		{ "async_qpair_refused", test_async_qpair_refused },
	};

	return fx_main(argc, argv, "nvme_tcp_reconnect", tests, NVP_COUNTOF(tests));
}

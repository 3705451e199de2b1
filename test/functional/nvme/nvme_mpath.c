/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multipath with ANA (include/nvpoll/nvme_mpath.h) over the NVMe/TCP test target on
 * loopback: two listeners (two ports, a controller each) in front of one software
 * controller, each with its own ANA state for the namespace's group. A verify workload
 * (slots that each write a pattern to their own blocks, read it back and compare, again
 * and again) runs through one multipath I/O handle while a path's connections are dropped
 * or its ANA state flips (with an ANA change notice). What is counted: errors by status,
 * completions of a request that was not in flight (twice), mismatching data, requests that
 * never came back, commands per path. A path's reset against a target whose admin answers
 * are late spans many polls while the other path serves. Every wait has a deadline; no
 * assertion is about time.
 *
 * Against an outside target (the QEMU judge's nvmet-tcp): NVP_TEST_TRID and NVP_TEST_TRID2
 * are the two paths (path 0 optimized, path 1 non-optimized when the test starts), and
 * ana_inaccessible_moves_io flips path 0 with the shell commands NVP_TEST_ANA_INACCESSIBLE_CMD
 * and NVP_TEST_ANA_OPTIMIZED_CMD (nvmet sends the ANA change notice itself); the other
 * tests need this program's target.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "nvme_tcp_tgt.h"
#include "nvpoll/log.h"
#include "nvpoll/nvme_mpath.h"

#define NSLOTS 16u
#define IO_BYTES 4096u            /* one I/O */
#define SLOT_BYTES (512u * 1024u) /* a slot's area; its writes go round it */
#define NPATHS 2u

struct slot {
	struct mfx *f;
	uint32_t idx;
	uint32_t tag;
	bool writing;
	bool in_flight;
	uint8_t *buf;
};

struct mfx {
	struct fx_ctrlr backend;
	struct tcp_tgt *tgt[NPATHS];
	struct nvp_nvme_mpath *mp;
	struct nvp_nvme_mpath_io *io;
	struct slot slots[NSLOTS];
	uint32_t bs; /* the namespace's block size */
	bool external;
	bool submit_more;
	uint64_t verified, twice, corrupt, errors, submit_fails;
};

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
	struct mfx *f = s->f;

	if (!s->in_flight) {
		f->twice++;
		return;
	}
	s->in_flight = false;
	if (nvme_cpl_is_error(cpl)) {
		if (f->errors++ == 0) {
			fx_print_cpl("multipath workload, first error", cpl);
		}
		return; /* the same op again */
	}
	if (s->writing) {
		s->writing = false;
		return;
	}
	if (fx_pattern_check(s->buf, slot_lba(s), slot_blocks(s), f->bs, s->tag) != -1) {
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
	struct mfx *f = s->f;
	int rc;

	if (s->writing) {
		fx_pattern_fill(s->buf, slot_lba(s), slot_blocks(s), f->bs, s->tag);
		rc = nvp_nvme_mpath_cmd_write(f->io, s->buf, slot_lba(s), slot_blocks(s), slot_done,
					      s, 0);
	} else {
		memset(s->buf, 0, IO_BYTES);
		rc = nvp_nvme_mpath_cmd_read(f->io, s->buf, slot_lba(s), slot_blocks(s), slot_done,
					     s, 0);
	}
	if (rc == 0) {
		s->in_flight = true;
	} else {
		f->submit_fails++;
	}
}

static void
pump(struct mfx *f)
{
	(void)nvp_nvme_mpath_process_admin_completions(f->mp);
	(void)nvp_nvme_mpath_io_process_completions(f->io);
	if (!f->submit_more) {
		return;
	}
	for (uint32_t i = 0; i < NSLOTS; i++) {
		if (!f->slots[i].in_flight) {
			submit_slot(&f->slots[i]);
		}
	}
}

static int
pump_verified(struct mfx *f, uint64_t more)
{
	uint64_t target = f->verified + more, end = fx_now_us() + (uint64_t)FX_WAIT_MS * 1000u;

	while (f->verified < target) {
		if (fx_now_us() >= end) {
			fprintf(stderr, "mpath: only %" PRIu64 " of %" PRIu64 " verified reads\n",
				f->verified, target);
			return -ETIMEDOUT;
		}
		pump(f);
	}
	return 0;
}

static int
drain(struct mfx *f)
{
	uint64_t end = fx_now_us() + (uint64_t)FX_WAIT_MS * 1000u;

	f->submit_more = false;
	while (nvp_nvme_mpath_io_get_num_outstanding(f->io) != 0) {
		if (fx_now_us() >= end) {
			fprintf(stderr, "mpath: %u requests never completed\n",
				nvp_nvme_mpath_io_get_num_outstanding(f->io));
			return -ETIMEDOUT;
		}
		pump(f);
	}
	for (uint32_t i = 0; i < NSLOTS; i++) {
		if (f->slots[i].in_flight) {
			return -EIO; /* the handle says done, a slot was never called back */
		}
	}
	return 0;
}

static struct nvp_nvme_mpath_path_info
path_info(struct mfx *f, uint32_t i)
{
	struct nvp_nvme_mpath_path_info info = { .info_size = sizeof(info) };

	CU_ASSERT_EQUAL(nvp_nvme_mpath_get_path_info(f->mp, i, &info), 0);
	return info;
}

static struct nvp_nvme_mpath_io_stats
io_stats(struct mfx *f)
{
	struct nvp_nvme_mpath_io_stats st = { .info_size = sizeof(st) };

	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_get_stats(f->io, &st), 0);
	return st;
}

/* Pump until path @i has ANA state @state (as the host sees it). \return 0 or -ETIMEDOUT. */
static int
pump_until_ana(struct mfx *f, uint32_t i, uint8_t state)
{
	uint64_t end = fx_now_us() + (uint64_t)FX_WAIT_MS * 1000u;

	while (path_info(f, i).ana_state != state) {
		if (fx_now_us() >= end) {
			fprintf(stderr, "mpath: path %u still %s, not %s\n", i,
				nvp_nvme_ana_state_name(path_info(f, i).ana_state),
				nvp_nvme_ana_state_name(state));
			return -ETIMEDOUT;
		}
		pump(f);
	}
	return 0;
}

static void
print_paths(struct mfx *f, const char *what)
{
	struct nvp_nvme_mpath_io_stats st = io_stats(f);

	printf("  %s:", what);
	for (uint32_t i = 0; i < NPATHS; i++) {
		struct nvp_nvme_mpath_path_info info = path_info(f, i);

		printf(" path %u %s%s %" PRIu64 " I/Os;", i,
		       nvp_nvme_ana_state_name(info.ana_state), info.connected ? "" : " (down)",
		       st.path_ios[i]);
	}
	printf(" path errors %" PRIu64 ", retried %" PRIu64 ", verified reads %" PRIu64 "\n",
	       st.path_errors, st.retries, f->verified);
}

/* The backend, two listeners (path i: @states[i]), the multipath controller and a handle. */
static int
mfx_open(struct mfx *f, enum nvp_nvme_mpath_policy policy, const uint8_t *states)
{
	struct nvp_nvme_transport_id trids[NPATHS];
	struct nvp_nvme_mpath_opts mo;
	struct tcp_tgt_opts o;
	char s[512];
	int rc;

	memset(f, 0, sizeof(*f));
	if (fx_real_trid() != NULL) {
		/* an outside target's two paths, in the states the caller set */
		const char *t2 = getenv("NVP_TEST_TRID2");

		f->external = true;
		CU_ASSERT_PTR_NOT_NULL_FATAL(t2);
		CU_ASSERT_EQUAL_FATAL(nvp_nvme_transport_id_parse(&trids[0], fx_real_trid()), 0);
		CU_ASSERT_EQUAL_FATAL(nvp_nvme_transport_id_parse(&trids[1], t2), 0);
	} else {
		rc = fx_open(&f->backend, "size=32M,lba=512");
		if (rc != 0) {
			return rc;
		}
		for (uint32_t i = 0; i < NPATHS; i++) {
			tcp_tgt_opts_init(&o);
			o.ana_grpid = 1; /* one group; its state is per listener (per controller) */
			o.ana_state = states[i];
			CU_ASSERT_EQUAL_FATAL(tcp_tgt_start(f->backend.ctrlr, &o, &f->tgt[i]), 0);
			tcp_tgt_trid(f->tgt[i], NULL, s, sizeof(s));
			CU_ASSERT_EQUAL_FATAL(nvp_nvme_transport_id_parse(&trids[i], s), 0);
		}
	}
	nvp_nvme_mpath_opts_init(&mo, sizeof(mo));
	mo.policy = policy;
	mo.reconnect_delay_ms = 100;
	rc = nvp_nvme_mpath_connect(trids, NPATHS, NULL, &mo, &f->mp);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc != 0) {
		return rc;
	}
	f->bs = nvp_nvme_ns_get_sector_size(nvp_nvme_mpath_get_ns(f->mp, 0));
	CU_ASSERT_FATAL(f->bs != 0 && IO_BYTES % f->bs == 0);
	rc = nvp_nvme_mpath_io_alloc(f->mp, NULL, &f->io);
	CU_ASSERT_EQUAL(rc, 0);
	for (uint32_t i = 0; i < NSLOTS; i++) {
		f->slots[i] = (struct slot){ .f = f, .idx = i, .tag = i * 1000u, .writing = true };
		f->slots[i].buf = fx_dma_alloc(IO_BYTES);
	}
	f->submit_more = true;
	return rc;
}

static void
mfx_close(struct mfx *f)
{
	struct tcp_tgt_stats st;

	for (uint32_t i = 0; i < NSLOTS; i++) {
		nvp_env_dma_free(f->slots[i].buf);
	}
	if (f->io != NULL) {
		CU_ASSERT_EQUAL(nvp_nvme_mpath_io_free(f->io), 0);
	}
	if (f->mp != NULL) {
		CU_ASSERT_EQUAL(nvp_nvme_mpath_detach(f->mp), 0);
	}
	for (uint32_t i = 0; i < NPATHS; i++) {
		if (f->tgt[i] != NULL) {
			tcp_tgt_get_stats(f->tgt[i], &st);
			CU_ASSERT_EQUAL(st.bad_host_pdus, 0);
			tcp_tgt_stop(f->tgt[i]);
		}
	}
	if (!f->external) {
		fx_close(&f->backend);
	}
}

/*
 * Path 0's ANA state for the namespace's group: this program's target is told (and sends
 * the change notice); an outside one is changed by the caller's shell command, and sends
 * its own notice. \return 0 or -1 (no command given, or it failed).
 */
static int
set_path0_state(struct mfx *f, uint8_t state)
{
	const char *cmd = getenv(state == NVME_ANA_INACCESSIBLE ? "NVP_TEST_ANA_INACCESSIBLE_CMD" :
								  "NVP_TEST_ANA_OPTIMIZED_CMD");

	if (!f->external) {
		return tcp_tgt_set_ana_state(f->tgt[0], state, true) == 1 ? 0 : -1;
	}
	if (cmd == NULL) {
		fprintf(stderr, "mpath: no command to make path 0 %s\n",
			nvp_nvme_ana_state_name(state));
		return -1;
	}
	printf("  path 0 %s: %s\n", nvp_nvme_ana_state_name(state), cmd);
	return system(cmd) == 0 ? 0 : -1;
}

static void
check_clean(struct mfx *f)
{
	CU_ASSERT_EQUAL(drain(f), 0);
	CU_ASSERT_EQUAL(f->errors, 0);
	CU_ASSERT_EQUAL(f->twice, 0);
	CU_ASSERT_EQUAL(f->corrupt, 0);
	CU_ASSERT_EQUAL(f->submit_fails, 0);
}

/*
 * Failover: all I/O on path 0; its connections dropped -> I/O goes on through path 1
 * with no error, nothing lost, twice or corrupted; path 0 is reconnected, and failover
 * does not move back to it.
 */
static void
test_failover_on_connection_loss(void)
{
	static const uint8_t states[NPATHS] = { NVME_ANA_OPTIMIZED, NVME_ANA_OPTIMIZED };
	struct nvp_nvme_mpath_io_stats st;
	uint64_t end, at_drop1;
	struct mfx f;

	if (fx_skip_real("needs this program's target")) {
		return;
	}
	if (mfx_open(&f, NVP_NVME_MPATH_FAILOVER, states) != 0) {
		mfx_close(&f);
		return;
	}
	CU_ASSERT_EQUAL(pump_verified(&f, 64), 0);
	st = io_stats(&f);
	CU_ASSERT(st.path_ios[0] > 0);
	CU_ASSERT_EQUAL(st.path_ios[1], 0); /* one active path */
	at_drop1 = st.path_ios[1];
	tcp_tgt_drop_conns(f.tgt[0]);
	CU_ASSERT_EQUAL(pump_verified(&f, 128), 0);
	st = io_stats(&f);
	CU_ASSERT(st.path_ios[1] > at_drop1);
	end = fx_now_us() + (uint64_t)FX_WAIT_MS * 1000u;
	while ((!path_info(&f, 0).connected || path_info(&f, 0).reconnects == 0) &&
	       fx_now_us() < end) {
		pump(&f);
	}
	CU_ASSERT(path_info(&f, 0).connected);
	CU_ASSERT_EQUAL(path_info(&f, 0).reconnects, 1);
	st = io_stats(&f);
	at_drop1 = st.path_ios[0];
	CU_ASSERT_EQUAL(pump_verified(&f, 64), 0);
	CU_ASSERT_EQUAL(io_stats(&f).path_ios[0], at_drop1); /* stays on path 1 */
	print_paths(&f, "after the drop of path 0");
	check_clean(&f);
	mfx_close(&f);
}

/*
 * ANA: path 0 optimized, path 1 non-optimized (read at connect). Path 0's group turns
 * inaccessible with an ANA change notice: I/O moves to path 1 with no error; back to
 * optimized (notice again): I/O comes back to path 0.
 */
static void
test_ana_inaccessible_moves_io(void)
{
	static const uint8_t states[NPATHS] = { NVME_ANA_OPTIMIZED, NVME_ANA_NON_OPTIMIZED };
	struct nvp_nvme_mpath_io_stats st;
	uint64_t p0, p1;
	struct mfx f;

	if (mfx_open(&f, NVP_NVME_MPATH_FAILOVER, states) != 0) {
		mfx_close(&f);
		return;
	}
	CU_ASSERT(path_info(&f, 0).ana_reporting);
	CU_ASSERT_EQUAL(path_info(&f, 0).anagrpid, 1);
	CU_ASSERT_EQUAL(path_info(&f, 0).ana_state, NVME_ANA_OPTIMIZED);
	CU_ASSERT_EQUAL(path_info(&f, 1).ana_state, NVME_ANA_NON_OPTIMIZED);
	CU_ASSERT_EQUAL(pump_verified(&f, 64), 0);
	CU_ASSERT_EQUAL(io_stats(&f).path_ios[1], 0); /* optimized first */
	CU_ASSERT_EQUAL(set_path0_state(&f, NVME_ANA_INACCESSIBLE), 0);
	CU_ASSERT_EQUAL(pump_until_ana(&f, 0, NVME_ANA_INACCESSIBLE), 0);
	st = io_stats(&f);
	p0 = st.path_ios[0];
	p1 = st.path_ios[1];
	CU_ASSERT_EQUAL(pump_verified(&f, 128), 0);
	st = io_stats(&f);
	CU_ASSERT(st.path_ios[1] > p1);
	CU_ASSERT_EQUAL(st.path_ios[0], p0); /* inaccessible: skipped */
	print_paths(&f, "path 0 inaccessible");
	CU_ASSERT_EQUAL(set_path0_state(&f, NVME_ANA_OPTIMIZED), 0);
	CU_ASSERT_EQUAL(pump_until_ana(&f, 0, NVME_ANA_OPTIMIZED), 0);
	p0 = io_stats(&f).path_ios[0];
	p1 = io_stats(&f).path_ios[1];
	CU_ASSERT_EQUAL(pump_verified(&f, 64), 0);
	st = io_stats(&f);
	CU_ASSERT(st.path_ios[0] > p0);
	CU_ASSERT_EQUAL(st.path_ios[1], p1);
	print_paths(&f, "path 0 optimized again");
	check_clean(&f);
	mfx_close(&f);
}

/*
 * An ANA state change the host is not told about: path 0 answers I/O with ANA
 * Inaccessible (SCT 3h). Each such request is sent again on path 1 and succeeds; the path
 * is marked inaccessible at once and its log re-read.
 */
static void
test_ana_status_without_notice(void)
{
	static const uint8_t states[NPATHS] = { NVME_ANA_OPTIMIZED, NVME_ANA_OPTIMIZED };
	struct nvp_nvme_mpath_io_stats st;
	struct tcp_tgt_stats ts;
	struct mfx f;

	if (fx_skip_real("needs this program's target")) {
		return;
	}
	if (mfx_open(&f, NVP_NVME_MPATH_FAILOVER, states) != 0) {
		mfx_close(&f);
		return;
	}
	CU_ASSERT_EQUAL(pump_verified(&f, 32), 0);
	CU_ASSERT_EQUAL(tcp_tgt_set_ana_state(f.tgt[0], NVME_ANA_INACCESSIBLE, false), 0);
	CU_ASSERT_EQUAL(pump_verified(&f, 128), 0);
	CU_ASSERT_EQUAL(path_info(&f, 0).ana_state, NVME_ANA_INACCESSIBLE);
	st = io_stats(&f);
	tcp_tgt_get_stats(f.tgt[0], &ts);
	CU_ASSERT(ts.ana_refused > 0);
	CU_ASSERT_EQUAL(st.path_errors, ts.ana_refused);
	CU_ASSERT(st.retries >= st.path_errors);
	print_paths(&f, "ANA status, no notice");
	check_clean(&f);
	mfx_close(&f);
}

/* Multipath: round-robin over the two optimized paths; none to a non-optimized one. */
static void
test_multipath_spreads_io(void)
{
	static const uint8_t states[NPATHS] = { NVME_ANA_OPTIMIZED, NVME_ANA_OPTIMIZED };
	struct nvp_nvme_mpath_io_stats st;
	struct tcp_tgt_stats t0, t1;
	uint64_t p1;
	struct mfx f;

	if (fx_skip_real("needs this program's target")) {
		return;
	}
	if (mfx_open(&f, NVP_NVME_MPATH_MULTIPATH, states) != 0) {
		mfx_close(&f);
		return;
	}
	CU_ASSERT_EQUAL(nvp_nvme_mpath_get_policy(f.mp), NVP_NVME_MPATH_MULTIPATH);
	CU_ASSERT_EQUAL(pump_verified(&f, 200), 0);
	st = io_stats(&f);
	CU_ASSERT(st.path_ios[0] > 0 && st.path_ios[1] > 0);
	CU_ASSERT(st.path_ios[0] <= st.path_ios[1] + 1 && st.path_ios[1] <= st.path_ios[0] + 1);
	tcp_tgt_get_stats(f.tgt[0], &t0);
	tcp_tgt_get_stats(f.tgt[1], &t1);
	CU_ASSERT(t0.capsules > st.path_ios[0] / 2 && t1.capsules > st.path_ios[1] / 2);
	print_paths(&f, "two optimized paths");
	CU_ASSERT_EQUAL(tcp_tgt_set_ana_state(f.tgt[1], NVME_ANA_NON_OPTIMIZED, true), 1);
	CU_ASSERT_EQUAL(pump_until_ana(&f, 1, NVME_ANA_NON_OPTIMIZED), 0);
	p1 = io_stats(&f).path_ios[1];
	CU_ASSERT_EQUAL(pump_verified(&f, 64), 0);
	CU_ASSERT_EQUAL(io_stats(&f).path_ios[1], p1);
	print_paths(&f, "path 1 non-optimized");
	check_clean(&f);
	mfx_close(&f);
}

/* What the driver and the layer log around a path's reset (the lines still go to stderr). */
static struct {
	uint64_t polls;                         /* the test's pumps so far */
	uint64_t polls_at_reset, polls_at_back; /* at "resetting", at "path 0 ... reconnected" */
	uint64_t us_at_reset, us_at_back;
	bool reset_seen, back_seen;
} g_log;

static void
reset_log(enum nvp_log_level level, const char *component, const char *msg)
{
	if (!g_log.reset_seen && strstr(msg, ": resetting") != NULL) {
		g_log.reset_seen = true;
		g_log.polls_at_reset = g_log.polls;
		g_log.us_at_reset = fx_now_us();
	}
	if (g_log.reset_seen && !g_log.back_seen && strstr(msg, "multipath: path 0 ") != NULL &&
	    strstr(msg, " reconnected") != NULL) {
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
 * Multipath, two optimized paths; path 0's connections dropped while its target answers
 * each admin command 20 ms late. The admin poll (here every pump, in a bdev channel every
 * 10 ms of its I/O polls) resets the path a step per call: many pumps return between the
 * reset's first line and its last (with the reset in one call, as before, none did, and
 * that call waited for every late answer), and meanwhile verified I/O goes on through
 * path 1. Then path 0 is back, its ANA state read again, and takes its share of I/O. The
 * longest pump during the reset is printed, not asserted.
 */
static void
test_reset_a_step_per_poll(void)
{
	static const uint8_t states[NPATHS] = { NVME_ANA_OPTIMIZED, NVME_ANA_OPTIMIZED };
	uint64_t end, t, longest = 0, verified_at_reset = 0, verified_at_back = 0, p0;
	struct mfx f;

	if (fx_skip_real("the outage is made by this program's target")) {
		return;
	}
	if (mfx_open(&f, NVP_NVME_MPATH_MULTIPATH, states) != 0) {
		mfx_close(&f);
		return;
	}
	CU_ASSERT_EQUAL(pump_verified(&f, 64), 0);
	memset(&g_log, 0, sizeof(g_log));
	nvp_log_set_callback(reset_log);
	tcp_tgt_set_admin_delay(f.tgt[0], 20);
	tcp_tgt_drop_conns(f.tgt[0]); /* still listening: the first reset connects */
	end = fx_now_us() + (uint64_t)FX_WAIT_MS * 1000u;
	while (!g_log.back_seen && fx_now_us() < end) {
		bool began = g_log.reset_seen;
		uint64_t v = f.verified;

		t = fx_now_us();
		pump(&f);
		t = fx_now_us() - t;
		/* the reset's first and last pumps count too */
		longest = g_log.reset_seen && t > longest ? t : longest;
		g_log.polls++;
		/* reads verified after the pump of the reset's first step, before its last's */
		verified_at_reset = !began && g_log.reset_seen ? f.verified : verified_at_reset;
		verified_at_back = g_log.back_seen ? v : verified_at_back;
	}
	nvp_log_set_callback(NULL);
	tcp_tgt_set_admin_delay(f.tgt[0], 0);
	CU_ASSERT_FATAL(g_log.reset_seen && g_log.back_seen);
	/* connect, ICReq, Connect, the init states and their properties, Identify, Set
	 * Features, the ANA log: a pump returns at each wait, so many pumps pass */
	CU_ASSERT(g_log.polls_at_back - g_log.polls_at_reset >= 10);
	CU_ASSERT(verified_at_back > verified_at_reset); /* path 1 served meanwhile */
	printf("  path 0 reset of %.1f ms over %" PRIu64 " pumps, the longest pump %.1f ms; "
	       "%" PRId64 " verified reads meanwhile\n",
	       (double)(g_log.us_at_back - g_log.us_at_reset) / 1e3,
	       g_log.polls_at_back - g_log.polls_at_reset, (double)longest / 1e3,
	       (int64_t)(verified_at_back - verified_at_reset));
	CU_ASSERT(path_info(&f, 0).connected);
	CU_ASSERT_EQUAL(path_info(&f, 0).reconnects, 1);
	CU_ASSERT_EQUAL(path_info(&f, 0).ana_state, NVME_ANA_OPTIMIZED);
	p0 = io_stats(&f).path_ios[0];
	CU_ASSERT_EQUAL(pump_verified(&f, 64), 0);
	CU_ASSERT(io_stats(&f).path_ios[0] > p0); /* back in the round-robin */
	print_paths(&f, "after path 0's reset");
	check_clean(&f);
	mfx_close(&f);
}

/*
 * A handle made while path 0 is down (its connections dropped, the admin poll not yet
 * reconnected) has a qpair on path 1 only. When path 0 is back, the handle's I/O poll
 * makes path 0's qpair without waiting for its connection (opts.async_mode): the poll
 * that made it returns with it still connecting (TCP connect, ICReq, Fabrics Connect are
 * left to the next polls), and no request goes there meanwhile. Later polls connect it
 * and verified I/O reaches path 0.
 */
static void
test_handle_made_while_path_down(void)
{
	static const uint8_t states[NPATHS] = { NVME_ANA_OPTIMIZED, NVME_ANA_OPTIMIZED };
	struct nvp_nvme_mpath_io_stats st;
	uint64_t end;
	struct mfx f;

	if (fx_skip_real("the outage is made by this program's target")) {
		return;
	}
	if (mfx_open(&f, NVP_NVME_MPATH_MULTIPATH, states) != 0) {
		mfx_close(&f);
		return;
	}
	CU_ASSERT_EQUAL(pump_verified(&f, 32), 0);
	CU_ASSERT_EQUAL(drain(&f), 0);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_io_free(f.io), 0);
	f.io = NULL;
	tcp_tgt_drop_conns(f.tgt[0]); /* still listening: the reconnect will succeed */
	end = fx_now_us() + (uint64_t)FX_WAIT_MS * 1000u;
	while (path_info(&f, 0).connected && fx_now_us() < end) {
		(void)nvp_nvme_mpath_process_admin_completions(f.mp);
	}
	CU_ASSERT_FATAL(!path_info(&f, 0).connected);
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_mpath_io_alloc(f.mp, NULL, &f.io), 0);
	CU_ASSERT_EQUAL(io_stats(&f).qpairs_made, 0);
	f.submit_more = true;
	end = fx_now_us() + (uint64_t)FX_WAIT_MS * 1000u;
	while (io_stats(&f).qpairs_made == 0 && fx_now_us() < end) {
		pump(&f);
	}
	st = io_stats(&f);
	CU_ASSERT_FATAL(st.qpairs_made == 1);
	/* the poll that made it returned before it was connected, and sent nothing there */
	CU_ASSERT_EQUAL(st.paths_connecting, 1);
	CU_ASSERT_EQUAL(st.path_ios[0], 0);
	end = fx_now_us() + (uint64_t)FX_WAIT_MS * 1000u;
	while (io_stats(&f).path_ios[0] == 0 && fx_now_us() < end) {
		pump(&f);
	}
	CU_ASSERT_EQUAL(pump_verified(&f, 64), 0);
	st = io_stats(&f);
	CU_ASSERT(st.path_ios[0] > 0); /* path 0 takes its share */
	CU_ASSERT(st.path_ios[1] > 0);
	CU_ASSERT_EQUAL(st.paths_connecting, 0);
	CU_ASSERT_EQUAL(st.qpairs_made, 1);
	print_paths(&f, "handle made while path 0 was down");
	check_clean(&f);
	mfx_close(&f);
}

/* Transport IDs of two subsystems, and other bad input: refused, nothing left attached. */
static void
test_bad_input(void)
{
	struct nvp_nvme_transport_id trids[NVP_NVME_MPATH_MAX_PATHS + 1];
	enum nvp_nvme_mpath_policy pol;
	struct nvp_nvme_mpath *mp = NULL;
	struct fx_ctrlr backend;
	struct tcp_tgt *t[2] = { NULL, NULL };
	struct tcp_tgt_opts o;
	char s[512];

	if (fx_skip_real("needs this program's target")) {
		return;
	}
	CU_ASSERT_EQUAL(nvp_nvme_mpath_policy_parse("roundrobin", &pol), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_policy_parse("multipath", &pol), 0);
	CU_ASSERT_EQUAL(pol, NVP_NVME_MPATH_MULTIPATH);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_connect(trids, 0, NULL, NULL, &mp), -EINVAL);
	CU_ASSERT_EQUAL(
		nvp_nvme_mpath_connect(trids, NVP_NVME_MPATH_MAX_PATHS + 1, NULL, NULL, &mp),
		-EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_connect(NULL, 1, NULL, NULL, &mp), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_detach(NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_process_admin_completions(NULL), -EINVAL);
	if (fx_open(&backend, "size=32M,lba=512") != 0) {
		return;
	}
	for (uint32_t i = 0; i < 2; i++) {
		tcp_tgt_opts_init(&o);
		o.subnqn = i == 0 ? "nqn.2026-01.io.nvpoll:one" : "nqn.2026-01.io.nvpoll:two";
		CU_ASSERT_EQUAL_FATAL(tcp_tgt_start(backend.ctrlr, &o, &t[i]), 0);
		tcp_tgt_trid(t[i], NULL, s, sizeof(s));
		CU_ASSERT_EQUAL_FATAL(nvp_nvme_transport_id_parse(&trids[i], s), 0);
	}
	CU_ASSERT_EQUAL(nvp_nvme_mpath_connect(trids, 2, NULL, NULL, &mp), -EINVAL);
	CU_ASSERT_PTR_NULL(mp);
	for (uint32_t i = 0; i < 2; i++) {
		tcp_tgt_stop(t[i]);
	}
	fx_close(&backend);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "failover_on_connection_loss", test_failover_on_connection_loss },
		{ "ana_inaccessible_moves_io", test_ana_inaccessible_moves_io },
		{ "ana_status_without_notice", test_ana_status_without_notice },
		{ "multipath_spreads_io", test_multipath_spreads_io },
		{ "reset_a_step_per_poll", test_reset_a_step_per_poll },
		{ "handle_made_while_path_down", test_handle_made_while_path_down },
		{ "bad_input", test_bad_input },
	};

	return fx_main(argc, argv, "nvme_mpath", tests, sizeof(tests) / sizeof(tests[0]));
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The stages compose: every combination of admission {none, wbt} x scheduler {none,
 * deadline, kyber, fair} x wait {classic, hybrid, irq} x module {malloc, null, nvme on
 * the software controller}, 72 cells, each a short run of two tenants weighted 1:4 (under
 * fair) on one bdev, two channels in one poll group waited on by one waiter. Each tenant
 * keeps QD slots busy, each slot writing a pattern (background class) to its own blocks
 * and reading it back, checked (null has no data: counts only). The throttle's target is
 * one no read meets, so it holds writes to its smallest budget; the schedulers' depths
 * are below what the tenants keep in flight, so they decide the order.
 *
 * What is asserted, in every cell, on counters only (never on time): no error status,
 * no block read back wrong; nothing starved - in every slice of SLICE completions (the
 * test's own clock, far finer than the second a user would notice) each tenant, reads
 * and writes all complete some; under fair, the
 * completed bytes split 20/80 within SHARE_TOL points, with the throttle on or off.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bdev_fx.h"
#include "nvpoll/bdev_module.h"
#include "nvpoll/poll.h"
#include "nvpoll/sched.h"
#include "nvpoll/wbt.h"

#define QD 16u       /* slots per tenant: 4 x the schedulers' depth, so both stay backlogged */
#define NT 2u        /* tenants: ids 1 and 2, weights 1 and 4 under fair */
#define IO_BLOCKS 8u /* 4 KiB on 512-byte blocks */
#define POSITIONS 4u /* blocks ranges per slot, written in turn */
#define CELL_IOS 9600u
#define WARMUP_IOS 1200u /* not counted in the shares */
#define SLICE \
	1200u /* about 10 ms of the nvme cells: the stages' own time constants
			   * are 1 ms (fair's and wbt's stale_us) to 20 ms (kyber's window) */
#define SHARE_TOL 4.0
#define BDEV_BLOCKS 32768u /* 16 MiB */

enum {
	M_MALLOC,
	M_NULL,
	M_NVME,
	M_NUM
};

static const char *const g_module_names[M_NUM] = { "malloc", "null", "nvme" };
static const char *const g_bdev_names[M_NUM] = { "cm0", "cn0", "cemu0n1" };

static const struct {
	const char *name;
	const char *params;
} g_scheds[] = {
	{ "none", NULL },
	{ "deadline", "depth=4 fifo_batch=4 writes_starved=1" },
	{ "kyber", "read_lat_us=200 write_lat_us=400 window_ms=20" },
	{ "fair", "depth=4 weights=1/1/4 lag_kib=16" },
};

static const char *const g_admissions[] = { "none", "wbt" };
#define WBT_PARAMS "lat_us=1 window_ms=10 depth=4"
static const char *const g_waits[] = { "classic", "hybrid", "irq" };

struct run;

struct slot {
	struct run *r;
	uint32_t ti; /* tenant index 0, 1 */
	uint8_t *buf;
	uint64_t first; /* its blocks: POSITIONS x IO_BLOCKS from here */
	uint32_t pos;
	uint32_t gen;
	bool writing; /* the I/O in flight is the write */
	bool busy;
};

struct run {
	bool has_data;
	bool stop;
	struct nvp_bdev_desc *desc[NT];
	struct nvp_bdev_channel *ch[NT];
	struct slot slots[NT][QD];
	/* counters */
	uint32_t done, errors, mismatches, submit_errors;
	uint64_t bytes[NT];                /* after the warm-up */
	uint32_t s_tenant[NT], s_rd, s_wr; /* this slice */
	uint32_t slices, starved;
};

static void
slice_account(struct run *r, uint32_t ti, bool write)
{
	uint32_t i;

	r->s_tenant[ti]++;
	if (write) {
		r->s_wr++;
	} else {
		r->s_rd++;
	}
	if (++r->done % SLICE != 0) {
		return;
	}
	r->slices++;
	for (i = 0; i < NT; i++) {
		r->starved += r->s_tenant[i] == 0;
		r->s_tenant[i] = 0;
	}
	r->starved += r->s_rd == 0 || r->s_wr == 0;
	r->s_rd = r->s_wr = 0;
}

static void
slot_done(void *arg, const struct nvme_cpl *cpl)
{
	struct slot *s = arg;
	struct run *r = s->r;
	uint64_t lba = s->first + (uint64_t)s->pos * IO_BLOCKS;

	s->busy = false;
	if (nvme_cpl_is_error(cpl)) {
		r->errors++;
	} else if (!s->writing && r->has_data &&
		   fx_pattern_check(s->buf, lba, IO_BLOCKS, 512, s->gen) >= 0) {
		r->mismatches++;
	}
	if (r->done >= WARMUP_IOS && !r->stop) {
		r->bytes[s->ti] += IO_BLOCKS * 512;
	}
	if (!r->stop) {
		slice_account(r, s->ti, s->writing);
	}
	if (!s->writing) { /* read back: on to the next range, a new pattern */
		s->pos = (s->pos + 1) % POSITIONS;
		s->gen++;
	}
	s->writing = !s->writing;
}

static int
slot_submit(struct slot *s)
{
	struct run *r = s->r;
	uint64_t lba = s->first + (uint64_t)s->pos * IO_BLOCKS;
	int rc;

	if (s->writing) {
		fx_pattern_fill(s->buf, lba, IO_BLOCKS, 512, s->gen);
		rc = nvp_bdev_write_blocks(r->desc[s->ti], r->ch[s->ti], s->buf, lba, IO_BLOCKS,
					   nvp_bdev_write_flags(NVP_BDEV_WRITE_BACKGROUND, 0),
					   slot_done, s);
	} else {
		memset(s->buf, 0xa5, IO_BLOCKS * 512);
		rc = nvp_bdev_read_blocks(r->desc[s->ti], r->ch[s->ti], s->buf, lba, IO_BLOCKS,
					  slot_done, s);
	}
	if (rc == 0) {
		s->busy = true;
	}
	return rc;
}

static uint32_t
busy_slots(const struct run *r)
{
	uint32_t n = 0, t, i;

	for (t = 0; t < NT; t++) {
		for (i = 0; i < QD; i++) {
			n += r->slots[t][i].busy;
		}
	}
	return n;
}

/* Submit every idle slot, then wait by the waiter's mode; until CELL_IOS, then drain. */
static int
drive(struct run *r, struct nvp_poll_waiter *w)
{
	/* a watchdog, not a test: FX_WAIT_MS without a completion is a hang (a loaded host
	 * makes a cell slow, not silent: the throttle's depth 1 on a starved controller
	 * thread took a cell past 10 s in all) */
	uint64_t deadline = fx_now_us() + FX_WAIT_MS * 1000ull;
	uint32_t t, i, seen = r->done;
	int rc;

	for (;;) {
		r->stop = r->done >= CELL_IOS;
		for (t = 0; t < NT && !r->stop; t++) {
			for (i = 0; i < QD; i++) {
				if (!r->slots[t][i].busy && slot_submit(&r->slots[t][i]) != 0) {
					r->submit_errors++;
				}
			}
		}
		if (r->stop && busy_slots(r) == 0) {
			return 0;
		}
		rc = nvp_poll_waiter_wait(w);
		if (rc < 0) {
			return rc;
		}
		if (r->done != seen) {
			seen = r->done;
			deadline = fx_now_us() + FX_WAIT_MS * 1000ull;
		} else if (fx_now_us() > deadline) {
			return -ETIMEDOUT;
		}
	}
}

static struct nvp_bdev *
module_bdev(int m)
{
	struct nvp_bdev_malloc_opts mo;
	struct nvp_bdev_null_opts no;
	struct nvp_bdev_nvme_opts vo;
	struct nvp_bdev *b = NULL;

	switch (m) {
	case M_MALLOC:
		nvp_bdev_malloc_opts_init(&mo, sizeof(mo));
		mo.name = g_bdev_names[m];
		mo.num_blocks = BDEV_BLOCKS;
		CU_ASSERT_EQUAL_FATAL(nvp_bdev_malloc_create(&mo, &b), 0);
		break;
	case M_NULL:
		nvp_bdev_null_opts_init(&no, sizeof(no));
		no.name = g_bdev_names[m];
		no.num_blocks = BDEV_BLOCKS;
		CU_ASSERT_EQUAL_FATAL(nvp_bdev_null_create(&no, &b), 0);
		break;
	default:
		nvp_bdev_nvme_opts_init(&vo, sizeof(vo));
		vo.name = "cemu0";
		CU_ASSERT_EQUAL_FATAL(nvp_bdev_nvme_attach("trtype:emu name:cemu0 size:16M lba:512 "
							   "channels:4 read_us:5 write_us:10",
							   &vo, &b, 1, NULL),
				      0);
		break;
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	return b;
}

static void
module_delete(int m)
{
	switch (m) {
	case M_MALLOC:
		CU_ASSERT_EQUAL(nvp_bdev_malloc_delete(g_bdev_names[m]), 0);
		break;
	case M_NULL:
		CU_ASSERT_EQUAL(nvp_bdev_null_delete(g_bdev_names[m]), 0);
		break;
	default:
		CU_ASSERT_EQUAL(nvp_bdev_nvme_detach("cemu0"), 0);
		break;
	}
}

/* One cell: open, two channels in a group, the waiter; drive; close; assert. */
static void
run_cell(int m, uint32_t a, uint32_t sc, uint32_t wi, uint8_t *bufs)
{
	static struct run r;
	struct nvp_bdev_channel_opts co;
	struct nvp_bdev_poll_group *group;
	struct nvp_poll_waiter *w;
	struct nvp_poll_opts po;
	double share = 0;
	bool fair_ok;
	uint32_t t, i;
	int rc;

	memset(&r, 0, sizeof(r));
	r.has_data = m != M_NULL;
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_poll_group_create(&group), 0);
	nvp_bdev_channel_opts_init(&co, sizeof(co));
	co.group = group;
	co.interrupts = strcmp(g_waits[wi], "irq") == 0;
	for (t = 0; t < NT; t++) {
		CU_ASSERT_EQUAL_FATAL(
			nvp_bdev_open(g_bdev_names[m], true, bfx_event_ignore, NULL, &r.desc[t]),
			0);
		CU_ASSERT_EQUAL(nvp_bdev_desc_set_tenant(r.desc[t], t + 1), 0);
		CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(r.desc[t], &co, &r.ch[t]), 0);
		for (i = 0; i < QD; i++) {
			r.slots[t][i] = (struct slot){
				.r = &r,
				.ti = t,
				.buf = bufs + (size_t)(t * QD + i) * IO_BLOCKS * 512,
				.first = (uint64_t)(t * QD + i) * POSITIONS * IO_BLOCKS,
				.writing = true,
				.gen = 0x100 * (t + 1) + i * 16
			};
		}
	}
	nvp_poll_opts_init(&po, sizeof(po));
	CU_ASSERT_EQUAL_FATAL(nvp_poll_mode_parse(g_waits[wi], &po), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_poll_waiter_create(&po, &w), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_poll_waiter_add_bdev_group(w, group, 0), 0);

	rc = drive(&r, w);
	if (rc == -ETIMEDOUT) {
		/* what held the I/O: the stages' state, for the report */
		struct nvp_wbt_info winfo = { .info_size = sizeof(winfo) };
		struct nvp_sched_info si = { .info_size = sizeof(si) };
		struct nvp_bdev *bd = nvp_bdev_desc_get_bdev(r.desc[0]);

		printf("\n  no completion for %u ms: %u slots busy", FX_WAIT_MS, busy_slots(&r));
		if (nvp_bdev_wbt_get_info(bd, &winfo) == 0) {
			printf("; wbt in flight %u, limits %u/%u/%u, deferred now %" PRIu64,
			       winfo.inflight, winfo.limit_background, winfo.limit_normal,
			       winfo.limit_sync, (uint64_t)winfo.deferred_now);
		}
		if (nvp_bdev_sched_get_info(bd, &si) == 0) {
			printf("; scheduler %s in flight %u", si.name, si.inflight);
		}
	}

	nvp_poll_waiter_destroy(w);
	for (t = 0; t < NT; t++) {
		CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(r.ch[t]), 0);
		CU_ASSERT_EQUAL(nvp_bdev_close(r.desc[t]), 0);
	}
	CU_ASSERT_EQUAL(nvp_bdev_poll_group_destroy(group), 0);
	if (r.bytes[0] + r.bytes[1] != 0) {
		share = 100.0 * (double)r.bytes[0] / (double)(r.bytes[0] + r.bytes[1]);
	}
	printf("\n  %-6s %-4s %-8s %-7s: %u I/Os, %u slices, tenant 1 %.1f%%", g_module_names[m],
	       g_admissions[a], g_scheds[sc].name, g_waits[wi], r.done, r.slices, share);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(r.submit_errors, 0);
	CU_ASSERT_EQUAL(r.errors, 0);
	CU_ASSERT_EQUAL(r.mismatches, 0);
	CU_ASSERT(r.done >= CELL_IOS);
	CU_ASSERT(r.slices >= CELL_IOS / SLICE);
	CU_ASSERT_EQUAL(r.starved, 0);
	fair_ok = strcmp(g_scheds[sc].name, "fair") != 0 ||
		  (share > 20.0 - SHARE_TOL && share < 20.0 + SHARE_TOL);
	CU_ASSERT(fair_ok);
	if (rc != 0 || r.submit_errors != 0 || r.errors != 0 || r.mismatches != 0 ||
	    r.starved != 0 || !fair_ok) {
		printf(" <- FAILED: rc %d, submit errors %u, errors %u, mismatches %u, starved "
		       "slices %u, share %s",
		       rc, r.submit_errors, r.errors, r.mismatches, r.starved,
		       fair_ok ? "ok" : "off");
	}
}

static void
run_module(int m)
{
	struct nvp_bdev *b = module_bdev(m);
	uint8_t *bufs = fx_dma_alloc((size_t)NT * QD * IO_BLOCKS * 512);
	uint32_t a, sc, wi;

	CU_ASSERT_PTR_NOT_NULL_FATAL(bufs);
	for (a = 0; a < NVP_COUNTOF(g_admissions); a++) {
		CU_ASSERT_EQUAL_FATAL(
			nvp_bdev_set_admission(b, g_admissions[a], a == 0 ? NULL : WBT_PARAMS), 0);
		for (sc = 0; sc < NVP_COUNTOF(g_scheds); sc++) {
			CU_ASSERT_EQUAL_FATAL(
				nvp_bdev_set_scheduler(b, g_scheds[sc].name, g_scheds[sc].params),
				0);
			for (wi = 0; wi < NVP_COUNTOF(g_waits); wi++) {
				run_cell(m, a, sc, wi, bufs);
			}
		}
	}
	CU_ASSERT_EQUAL(nvp_bdev_set_admission(b, "none", NULL), 0);
	CU_ASSERT_EQUAL(nvp_bdev_set_scheduler(b, "none", NULL), 0);
	nvp_env_dma_free(bufs);
	module_delete(m);
	printf("\n");
}

static void
test_malloc(void)
{
	run_module(M_MALLOC);
}

static void
test_null(void)
{
	run_module(M_NULL);
}

static void
test_nvme(void)
{
	run_module(M_NVME);
}

static void
test_fini(void)
{
	CU_ASSERT_EQUAL(nvp_bdev_fini(), 0);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "malloc_24_cells", test_malloc },
		{ "null_24_cells", test_null },
		{ "nvme_24_cells", test_nvme },
		{ "fini", test_fini },
	};

	return fx_main(argc, argv, "bdev_compose", tests, NVP_COUNTOF(tests));
}

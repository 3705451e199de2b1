/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Doorbells: one SQ doorbell per poll however many requests the completion callbacks
 * resubmit, counted by nvp_nvme_qpair_get_stats(); shadow doorbells (Doorbell Buffer
 * Config) with the EventIdx rule when the controller offers them. Against the software
 * controller and, in the QEMU judge, QEMU's controller (which offers shadow doorbells).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

#define DEPTH 16u
#define TOTAL 2000u

struct loop {
	struct fx_ctrlr *fx;
	uint8_t *bufs;
	uint32_t bs;
	unsigned int submitted;
	unsigned int completed;
	unsigned int errors;
};

struct slot {
	struct loop *l;
	unsigned int idx;
};

static void
loop_cb(void *arg, const struct nvme_cpl *cpl)
{
	struct slot *s = arg;
	struct loop *l = s->l;

	l->completed++;
	if (nvme_cpl_is_error(cpl)) {
		l->errors++;
	}
	if (l->submitted < TOTAL &&
	    nvp_nvme_ns_cmd_read(l->fx->ns, l->fx->qpair, l->bufs + (size_t)s->idx * l->bs,
				 l->submitted % 64, 1, loop_cb, s, 0) == 0) {
		l->submitted++;
	}
}

/* Reads at depth DEPTH, each completion resubmitting; returns the qpair's counters. */
static void
run_loop(struct fx_ctrlr *fx, struct nvp_nvme_qpair_stats *st)
{
	struct slot slots[DEPTH];
	struct loop l = { .fx = fx };
	uint64_t end = fx_now_us() + FX_WAIT_MS * 1000ull;
	unsigned int i;

	l.bs = nvp_nvme_ns_get_sector_size(fx->ns);
	l.bufs = nvp_env_dma_zmalloc((size_t)DEPTH * l.bs, 4096, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(l.bufs);
	for (i = 0; i < DEPTH; i++) {
		slots[i].l = &l;
		slots[i].idx = i;
		CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(fx->ns, fx->qpair, l.bufs + (size_t)i * l.bs,
						     i, 1, loop_cb, &slots[i], 0),
				0);
		l.submitted++;
	}
	nvp_nvme_qpair_ring_doorbell(fx->qpair);
	while (l.completed < l.submitted && fx_now_us() < end) {
		if (nvp_nvme_qpair_process_completions(fx->qpair, 0) < 0) {
			CU_FAIL("controller failed");
			break;
		}
	}
	CU_ASSERT_EQUAL(l.completed, TOTAL);
	CU_ASSERT_EQUAL(l.errors, 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_stats(fx->qpair, st), 0);
	nvp_env_dma_free(l.bufs);
}

/*
 * At most one SQ doorbell (MMIO or shadow) per poll, plus the one explicit flush, and
 * never more than one per command: whoever the controller is.
 */
static void
test_one_doorbell_per_poll(void)
{
	struct nvp_nvme_qpair_stats st = { .info_size = sizeof(st) };
	struct fx_ctrlr fx;

	if (fx_open(&fx, "size=4M") != 0) {
		return;
	}
	/* The fixture's qpair rings at every submission; this test is about batching. */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(fx.qpair), 0);
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, 0, 0, 0, true, &fx.qpair), 0);
	run_loop(&fx, &st);
	printf("  %lu commands, %lu polls, SQ doorbells: %lu MMIO, %lu shadow only; CQ: %lu, %lu\n",
	       (unsigned long)st.submitted, (unsigned long)st.polls,
	       (unsigned long)st.sq_doorbell_writes, (unsigned long)st.sq_shadow_updates,
	       (unsigned long)st.cq_doorbell_writes, (unsigned long)st.cq_shadow_updates);
	CU_ASSERT(st.submitted >= TOTAL);
	CU_ASSERT(st.sq_doorbell_writes >= 1);
	/* Nothing is submitted between polls here (the first batch is flushed explicitly):
	 * every doorbell after it is the one at the end of a poll. */
	CU_ASSERT(st.sq_doorbell_writes + st.sq_shadow_updates <= st.polls + 1);
	CU_ASSERT(st.sq_doorbell_writes <= st.submitted);
	fx_close(&fx);
}

/* A controller without shadow doorbells: every doorbell is MMIO. */
static void
test_no_shadow_doorbells(void)
{
	struct nvp_nvme_qpair_stats st = { .info_size = sizeof(st) };
	struct fx_ctrlr fx;

	FX_NEEDS_EMU("emu option dbbuf=0");
	if (fx_open(&fx, "size=4M dbbuf=0") != 0) {
		return;
	}
	run_loop(&fx, &st);
	CU_ASSERT_EQUAL(st.sq_shadow_updates, 0);
	CU_ASSERT(st.sq_doorbell_writes >= 1);
	fx_close(&fx);
}

/*
 * The EventIdx rule, step by step with the controller run inline: a doorbell while the
 * controller has seen everything goes to MMIO; those while it has not caught up go to the
 * shadow page only, and the controller still finds every command there.
 */
static void
test_shadow_eventidx(void)
{
	struct nvp_nvme_qpair_stats st = { .info_size = sizeof(st) };
	struct fx_cpl c[8];
	struct fx_ctrlr fx;
	uint8_t *buf;
	unsigned int i, done = 0;

	FX_NEEDS_EMU("runs the software controller inline");
	if (fx_open(&fx, "size=4M") != 0) {
		return;
	}
	buf = nvp_env_dma_zmalloc(8 * 4096, 4096, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	memset(c, 0, sizeof(c));
	CU_ASSERT_EQUAL_FATAL(nvp_emu_ctrlr_set_inline(fx.emu, true), 0);
	for (i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(fx.ns, fx.qpair, buf + i * 4096, i, 1,
						     fx_cpl_cb, &c[i], 0),
				0);
	}
	nvp_nvme_qpair_ring_doorbell(fx.qpair);
	for (i = 4; i < 8; i++) {
		CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(fx.ns, fx.qpair, buf + i * 4096, i, 1,
						     fx_cpl_cb, &c[i], 0),
				0);
	}
	nvp_nvme_qpair_ring_doorbell(fx.qpair);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_stats(fx.qpair, &st), 0);
	/* The fixture's qpair rings at each submission (delay_doorbell off): the first went
	 * to MMIO, the seven made while the controller had not caught up (EventIdx still 0)
	 * to the shadow page only; the explicit rings found nothing new. */
	CU_ASSERT_EQUAL(st.sq_doorbell_writes, 1);
	CU_ASSERT_EQUAL(st.sq_shadow_updates, 7);
	for (i = 0; i < 100 && done < 8; i++) {
		nvp_emu_ctrlr_poll(fx.emu);
		CU_ASSERT(nvp_nvme_qpair_process_completions(fx.qpair, 0) >= 0);
		for (done = 0; done < 8 && c[done].calls == 1; done++) {
		}
	}
	CU_ASSERT_EQUAL(done, 8);
	for (i = 0; i < 8; i++) {
		CU_ASSERT_FALSE(nvme_cpl_is_error(&c[i].cpl));
	}
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_set_inline(fx.emu, false), 0);
	nvp_env_dma_free(buf);
	fx_close(&fx);
}

/*
 * nvp_nvme_qpair_ring_doorbell_shadow(): nothing waiting is 0 with shadow doorbells
 * (the fixture's qpair rings at each submission); without them -ENOTSUP, nothing written.
 */
static void
test_ring_shadow_api(void)
{
	struct nvp_nvme_qpair_stats st = { .info_size = sizeof(st) };
	struct fx_ctrlr fx;

	CU_ASSERT_EQUAL(nvp_nvme_qpair_ring_doorbell_shadow(NULL), -EINVAL);
	FX_NEEDS_EMU("emu option dbbuf=0");
	if (fx_open(&fx, "size=4M") != 0) {
		return;
	}
	CU_ASSERT_EQUAL(nvp_nvme_qpair_ring_doorbell_shadow(fx.qpair), 0);
	fx_close(&fx);
	if (fx_open(&fx, "size=4M dbbuf=0") != 0) {
		return;
	}
	CU_ASSERT_EQUAL(nvp_nvme_qpair_ring_doorbell_shadow(fx.qpair), -ENOTSUP);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_stats(fx.qpair, &st), 0);
	CU_ASSERT_EQUAL(st.sq_doorbell_writes + st.sq_shadow_updates, 0);
	fx_close(&fx);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "one_doorbell_per_poll", test_one_doorbell_per_poll },
		{ "no_shadow_doorbells", test_no_shadow_doorbells },
		{ "shadow_eventidx", test_shadow_eventidx },
		{ "ring_shadow_api", test_ring_shadow_api },
	};

	return fx_main(argc, argv, "nvme_doorbells", tests, NVP_COUNTOF(tests));
}

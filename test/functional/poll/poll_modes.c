/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The waiter (lib/poll) against the software controller: every mode - classic, hybrid
 * (both predictors), fixed, irq through the virtual function's interrupt - completes
 * every request, with data verified; a mode switch every few completions under load
 * loses nothing; interrupt coalescing (Set Features 0x08) still delivers every
 * completion; and the device model's interrupts are counted.
 *
 * Works in real-controller mode too (NVP_TEST_TRID), as long as the function gives
 * interrupts (vfio-pci MSI-X, uio_pci_generic INTx). No timing is asserted.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "nvpoll/poll.h"

#define QD 8
#define BLOCKS 8
#define EMU_OPTS "read_lat=uniform:20us:60us write_lat=exp:15us channels=8 seed=7"

struct req {
	struct nvp_poll_waiter *w;
	struct nvp_poll_req preq;
	uint8_t *buf;
	uint64_t lba;
	bool write;
	bool busy;
	unsigned int status_errors;
	unsigned int *done;
};

static void
req_done(void *arg, const struct nvme_cpl *cpl)
{
	struct req *r = arg;

	nvp_poll_req_done(r->w, &r->preq);
	r->busy = false;
	(*r->done)++;
	if (nvme_cpl_is_error(cpl)) {
		r->status_errors++;
	}
}

static int
req_submit(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qp, struct req *r)
{
	uint32_t bs = nvp_nvme_ns_get_sector_size(ns);
	int rc;

	if (r->write) {
		fx_pattern_fill(r->buf, r->lba, BLOCKS, bs, 0x501);
		rc = nvp_nvme_ns_cmd_write(ns, qp, r->buf, r->lba, BLOCKS, req_done, r, 0);
	} else {
		memset(r->buf, 0, (size_t)BLOCKS * bs);
		rc = nvp_nvme_ns_cmd_read(ns, qp, r->buf, r->lba, BLOCKS, req_done, r, 0);
	}
	if (rc == 0) {
		r->busy = true;
		nvp_poll_req_start(r->w, &r->preq, r->write ? NVME_OPC_WRITE : NVME_OPC_READ,
				   BLOCKS * bs);
	}
	return rc;
}

struct run {
	struct fx_ctrlr fx;
	struct nvp_nvme_qpair *qp;
	struct nvp_poll_waiter *w;
	struct req reqs[QD];
	unsigned int done;
	unsigned int submitted;
	unsigned int data_errors;
};

static int
run_open(struct run *r, const char *mode, bool irq)
{
	struct nvp_nvme_io_qpair_opts qo;
	struct nvp_poll_opts po;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = fx_open(&r->fx, EMU_OPTS);
	if (rc != 0) {
		return rc;
	}
	nvp_nvme_ctrlr_get_default_io_qpair_opts(r->fx.ctrlr, &qo, sizeof(qo));
	qo.interrupts = irq;
	rc = nvp_nvme_ctrlr_alloc_io_qpair(r->fx.ctrlr, &qo, &r->qp);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc != 0) {
		return rc;
	}
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_irq_fd(r->qp) >= 0, irq);
	nvp_poll_opts_init(&po, sizeof(po));
	CU_ASSERT_EQUAL_FATAL(nvp_poll_mode_parse(mode, &po), 0);
	po.window_ms = 20; /* several windows even in a short test */
	rc = nvp_poll_waiter_create(&po, &r->w);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc == 0) {
		rc = nvp_poll_waiter_add_qpair(r->w, r->qp);
		CU_ASSERT_EQUAL(rc, 0);
	}
	for (int i = 0; i < QD; i++) {
		r->reqs[i].w = r->w;
		r->reqs[i].buf = fx_dma_alloc(BLOCKS * 4096);
		r->reqs[i].lba = (uint64_t)i * BLOCKS;
		r->reqs[i].done = &r->done;
	}
	return rc;
}

static void
run_close(struct run *r)
{
	nvp_poll_waiter_destroy(r->w);
	if (r->qp != NULL) {
		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(r->qp), 0);
	}
	for (int i = 0; i < QD; i++) {
		nvp_env_dma_free(r->reqs[i].buf);
	}
	fx_close(&r->fx);
}

/* Write-then-read rounds at QD; a read is checked against its slot's last write. */
static int
drive(struct run *r, unsigned int rounds, const char *const *switch_to, unsigned int nswitch)
{
	uint32_t bs = nvp_nvme_ns_get_sector_size(r->fx.ns);
	uint64_t deadline = fx_now_us() + 60ull * 1000000u;
	unsigned int target = rounds * QD, switches = 0;

	for (int i = 0; i < QD; i++) {
		r->reqs[i].write = true;
		if (req_submit(r->fx.ns, r->qp, &r->reqs[i]) != 0) {
			return -EIO;
		}
		r->submitted++;
	}
	while (r->done < r->submitted) {
		int n = nvp_poll_waiter_wait(r->w);

		if (n < 0 || fx_now_us() > deadline) {
			fprintf(stderr, "  wait: %d, %u of %u done\n", n, r->done, r->submitted);
			return n < 0 ? n : -ETIMEDOUT;
		}
		if (nswitch > 0 && n > 0) {
			struct nvp_poll_opts po;

			nvp_poll_opts_init(&po, sizeof(po));
			nvp_poll_mode_parse(switch_to[switches++ % nswitch], &po);
			CU_ASSERT_EQUAL(nvp_poll_waiter_set_mode(r->w, &po), 0);
		}
		for (int i = 0; i < QD; i++) {
			struct req *q = &r->reqs[i];

			if (q->busy) {
				continue;
			}
			if (!q->write && fx_pattern_check(q->buf, q->lba, BLOCKS, bs, 0x501) >= 0) {
				r->data_errors++;
			}
			if (r->submitted >= target) {
				continue;
			}
			q->write = !q->write;
			if (req_submit(r->fx.ns, r->qp, q) != 0) {
				return -EIO;
			}
			r->submitted++;
		}
	}
	return 0;
}

static void
check_mode(const char *mode, bool irq)
{
	struct nvp_poll_stats st = { .info_size = sizeof(st) };
	struct run r;
	unsigned int errors = 0;

	if (run_open(&r, mode, irq) == 0) {
		CU_ASSERT_EQUAL(drive(&r, 60, NULL, 0), 0);
		CU_ASSERT_EQUAL(r.done, r.submitted);
		CU_ASSERT_EQUAL(r.submitted, 60 * QD);
		CU_ASSERT_EQUAL(r.data_errors, 0);
		for (int i = 0; i < QD; i++) {
			errors += r.reqs[i].status_errors;
		}
		CU_ASSERT_EQUAL(errors, 0);
		nvp_poll_waiter_get_stats(r.w, &st);
		/* irq mode: every pass that found nothing blocked on the interrupt (none spun);
		 * other modes never block on one. Whether any pass found nothing depends on
		 * how fast the device completes (under QEMU's TCG, every pass of a run may
		 * find completions), so it is not asserted. */
		if (strcmp(mode, "irq") == 0) {
			CU_ASSERT_EQUAL(st.irq_waits, st.spins);
		} else {
			CU_ASSERT_EQUAL(st.irq_waits, 0);
		}
		if (st.irq_waits > 0) {
			/* interrupts arrived (waits that timed out fall back to a poll) */
			CU_ASSERT(st.irq_timeouts < st.irq_waits);
		}
		if (strcmp(mode, "classic") == 0) {
			CU_ASSERT_EQUAL(st.sleeps, 0);
		}
		printf("(%s: %lu sleeps, %lu oversleeps, %lu irq waits, %lu timed out) ", mode,
		       (unsigned long)st.sleeps, (unsigned long)st.oversleeps,
		       (unsigned long)st.irq_waits, (unsigned long)st.irq_timeouts);
	}
	run_close(&r);
}

static void
test_classic(void)
{
	check_mode("classic", false);
}

static void
test_hybrid(void)
{
	check_mode("hybrid", false);
}

static void
test_hybrid_mean(void)
{
	check_mode("hybrid:mean", false);
}

static void
test_fixed(void)
{
	check_mode("fixed:20", false);
}

/* Interrupts: the software controller's virtual function signals an eventfd per vector. */
static void
test_irq(void)
{
	struct nvp_emu_stats es = { .info_size = sizeof(es) };
	struct run r;

	check_mode("irq", true);
	/* A polled qpair joined to an irq waiter is refused, not hung. */
	if (run_open(&r, "classic", false) == 0) {
		struct nvp_poll_opts po;

		nvp_poll_opts_init(&po, sizeof(po));
		po.mode = NVP_POLL_IRQ;
		CU_ASSERT_EQUAL(nvp_poll_waiter_set_mode(r.w, &po), -ENOTSUP);
		if (r.fx.emu != NULL) {
			nvp_emu_ctrlr_get_stats(r.fx.emu, &es);
			CU_ASSERT_EQUAL(es.interrupts, 0);
		}
	}
	run_close(&r);
}

/* Switch modes after every completion, while QD requests are in flight. */
static void
test_mode_switch_under_load(void)
{
	static const char *const modes[] = { "hybrid",   "irq", "classic",
					     "fixed:10", "irq", "hybrid:mean" };
	struct run r;

	if (run_open(&r, "classic", true) == 0) {
		CU_ASSERT_EQUAL(drive(&r, 100, modes, NVP_COUNTOF(modes)), 0);
		CU_ASSERT_EQUAL(r.done, r.submitted);
		CU_ASSERT_EQUAL(r.submitted, 100 * QD);
		CU_ASSERT_EQUAL(r.data_errors, 0);
	}
	run_close(&r);
}

/* Coalescing: threshold 4 entries or 200 us; irq mode still gets every completion. */
static void
test_coalescing(void)
{
	struct nvp_emu_stats es = { .info_size = sizeof(es) };
	struct run r;
	int rc;

	FX_NEEDS_EMU("counts the controller's interrupts");
	if (run_open(&r, "irq", true) == 0) {
		rc = nvp_nvme_ctrlr_set_feature(r.fx.ctrlr, NVME_FEAT_INTERRUPT_COALESCING,
						(2u << 8) | 3u, 0, 0, false, NULL, NULL, 0, NULL);
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_EQUAL(drive(&r, 50, NULL, 0), 0);
		CU_ASSERT_EQUAL(r.done, 50 * QD);
		CU_ASSERT_EQUAL(r.data_errors, 0);
		nvp_emu_ctrlr_get_stats(r.fx.emu, &es);
		CU_ASSERT(es.interrupts > 0);
		CU_ASSERT(es.interrupts < r.done); /* aggregated: fewer interrupts than entries */
		printf("(%lu interrupts for %u completions) ", (unsigned long)es.interrupts,
		       r.done);
	}
	run_close(&r);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "classic", test_classic },
		{ "hybrid", test_hybrid },
		{ "hybrid_mean", test_hybrid_mean },
		{ "fixed", test_fixed },
		{ "irq", test_irq },
		{ "mode_switch_under_load", test_mode_switch_under_load },
		{ "coalescing", test_coalescing },
	};

	return fx_main(argc, argv, "poll_modes", tests, NVP_COUNTOF(tests));
}

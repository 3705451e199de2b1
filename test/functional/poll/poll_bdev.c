/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The waiter (lib/poll) over a bdev poll group: an nvme bdev on the software controller,
 * two channels of it in one poll group (one created with interrupts), waited on through
 * nvp_poll_waiter_add_bdev_group(). Every mode - classic, hybrid (both predictors), fixed,
 * irq - completes every request with data verified, large requests split by the bdev
 * layer included; the hybrid statistics come from the bdev I/Os (the waiter samples them
 * without any nvp_poll_req call of ours); a mode switch every completion under load loses
 * nothing; a group whose channels have no interrupt is refused in irq mode, not hung.
 * No timing is asserted.
 *
 * Real-controller mode (NVP_TEST_TRID, NVP_TEST_NSID; the QEMU judge's): the same over that
 * controller's namespace, in its block size; irq mode is then woken by the function's
 * MSI-X vectors (vfio-pci) or its INTx line (uio_pci_generic).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "nvpoll/bdev.h"
#include "nvpoll/bdev_module.h"
#include "nvpoll/poll.h"

#define QD 8
#define NCH 2
#define SMALL_BLOCKS 8
#define EMU_OPTS "size:16M lba:512 read_lat=uniform:20us:60us write_lat=exp:15us channels=8 seed=7"

struct breq {
	uint8_t *buf;
	uint64_t lba;
	uint32_t blocks;
	bool write;
	bool busy;
	unsigned int *done;
	unsigned int *status_errors;
};

struct brun {
	uint32_t bs; /* the bdev's block size */
	struct nvp_bdev_desc *desc;
	struct nvp_bdev_poll_group *group;
	struct nvp_bdev_channel *ch[NCH];
	struct nvp_poll_waiter *w;
	struct breq reqs[NCH][QD];
	unsigned int done, submitted, data_errors, status_errors;
};

static void
breq_done(void *arg, const struct nvme_cpl *cpl)
{
	struct breq *r = arg;

	r->busy = false;
	(*r->done)++;
	if (nvme_cpl_is_error(cpl)) {
		(*r->status_errors)++;
	}
}

static void
ignore_event(enum nvp_bdev_event_type type, struct nvp_bdev *bdev, void *ctx)
{
	(void)type;
	(void)bdev;
	(void)ctx;
}

static int
breq_submit(struct brun *br, struct nvp_bdev_channel *ch, struct breq *r)
{
	int rc;

	if (r->write) {
		fx_pattern_fill(r->buf, r->lba, r->blocks, br->bs, 0x1b0);
		rc = nvp_bdev_write_blocks(br->desc, ch, r->buf, r->lba, r->blocks, 0, breq_done,
					   r);
	} else {
		memset(r->buf, 0, (size_t)r->blocks * br->bs);
		rc = nvp_bdev_read_blocks(br->desc, ch, r->buf, r->lba, r->blocks, breq_done, r);
	}
	if (rc == 0) {
		r->busy = true;
		br->submitted++;
	}
	return rc;
}

/* Attach, open, two channels in a group (@irq: both with interrupts), the waiter. */
static int
brun_open(struct brun *br, const char *mode, bool irq)
{
	struct nvp_bdev_channel_opts co;
	struct nvp_bdev_nvme_opts no;
	struct nvp_poll_opts po;
	const char *real = fx_real_trid(), *nsid = getenv("NVP_TEST_NSID");
	char name[32];
	uint32_t big;
	int rc;

	memset(br, 0, sizeof(*br));
	nvp_bdev_nvme_opts_init(&no, sizeof(no));
	no.name = "pemu";
	rc = nvp_bdev_nvme_attach(real != NULL ? real : "trtype:emu name:pemu " EMU_OPTS, &no, NULL,
				  0, NULL);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	snprintf(name, sizeof(name), "pemun%s", real != NULL && nsid != NULL ? nsid : "1");
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open(name, true, ignore_event, NULL, &br->desc), 0);
	br->bs = nvp_bdev_get_block_size(nvp_bdev_desc_get_bdev(br->desc));
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_poll_group_create(&br->group), 0);
	nvp_bdev_channel_opts_init(&co, sizeof(co));
	co.group = br->group;
	co.io_pool_size = 256;
	for (int c = 0; c < NCH; c++) {
		co.interrupts = irq;
		CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(br->desc, &co, &br->ch[c]), 0);
	}
	/* slot 0 of each channel: larger than the module takes at once, so it is split */
	big = nvp_bdev_get_max_xfer_blocks(nvp_bdev_desc_get_bdev(br->desc)) * 2 + SMALL_BLOCKS;
	for (int c = 0; c < NCH; c++) {
		for (int i = 0; i < QD; i++) {
			struct breq *r = &br->reqs[c][i];

			r->blocks = i == 0 ? big : SMALL_BLOCKS;
			r->lba = (uint64_t)(c * QD + i) * big;
			r->buf = fx_dma_alloc((size_t)big * br->bs);
			r->done = &br->done;
			r->status_errors = &br->status_errors;
		}
	}
	nvp_poll_opts_init(&po, sizeof(po));
	CU_ASSERT_EQUAL_FATAL(nvp_poll_mode_parse(mode, &po), 0);
	po.window_ms = 20; /* several windows even in a short test */
	rc = nvp_poll_waiter_create(&po, &br->w);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	return nvp_poll_waiter_add_bdev_group(br->w, br->group, 0);
}

static void
brun_close(struct brun *br)
{
	nvp_poll_waiter_destroy(br->w); /* first: it removes its hook from the group */
	for (int c = 0; c < NCH; c++) {
		if (br->ch[c] != NULL) {
			CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(br->ch[c]), 0);
		}
		for (int i = 0; i < QD; i++) {
			nvp_env_dma_free(br->reqs[c][i].buf);
		}
	}
	CU_ASSERT_EQUAL(nvp_bdev_poll_group_destroy(br->group), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(br->desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_nvme_detach("pemu"), 0);
}

/* Switch to the next of @modes. */
static void
switch_mode(struct brun *br, const char *const *modes, unsigned int n, unsigned int *k)
{
	struct nvp_poll_opts po;

	nvp_poll_opts_init(&po, sizeof(po));
	nvp_poll_mode_parse(modes[(*k)++ % n], &po);
	po.window_ms = 20;
	CU_ASSERT_EQUAL(nvp_poll_waiter_set_mode(br->w, &po), 0);
}

/* Resubmit every idle slot (a read is checked against the slot's last write first). */
static int
refill(struct brun *br, unsigned int target)
{
	for (int c = 0; c < NCH; c++) {
		for (int i = 0; i < QD; i++) {
			struct breq *r = &br->reqs[c][i];

			if (r->busy) {
				continue;
			}
			if (!r->write &&
			    fx_pattern_check(r->buf, r->lba, r->blocks, br->bs, 0x1b0) >= 0) {
				br->data_errors++;
			}
			if (br->submitted >= target) {
				continue;
			}
			r->write = !r->write;
			if (breq_submit(br, br->ch[c], r) != 0) {
				return -EIO;
			}
		}
	}
	return 0;
}

/* Write-then-read rounds at QD per channel, waiting through the waiter only. */
static int
bdrive(struct brun *br, unsigned int rounds, const char *const *modes, unsigned int nmodes)
{
	uint64_t deadline = fx_now_us() + 60ull * 1000000u;
	unsigned int target = rounds * QD * NCH, k = 0;

	for (int c = 0; c < NCH; c++) {
		for (int i = 0; i < QD; i++) {
			br->reqs[c][i].write = true;
			if (breq_submit(br, br->ch[c], &br->reqs[c][i]) != 0) {
				return -EIO;
			}
		}
	}
	while (br->done < br->submitted) {
		int n = nvp_poll_waiter_wait(br->w);

		if (n < 0 || fx_now_us() > deadline) {
			fprintf(stderr, "  wait: %d, %u of %u done\n", n, br->done, br->submitted);
			return n < 0 ? n : -ETIMEDOUT;
		}
		if (nmodes > 0 && n > 0) {
			switch_mode(br, modes, nmodes, &k);
		}
		if (refill(br, target) != 0) {
			return -EIO;
		}
	}
	return 0;
}

static void
check_bdev_mode(const char *mode, bool irq)
{
	struct nvp_poll_stats st = { .info_size = sizeof(st) };
	struct brun br;

	if (brun_open(&br, mode, irq) == 0) {
		CU_ASSERT_EQUAL(bdrive(&br, 40, NULL, 0), 0);
		CU_ASSERT_EQUAL(br.done, br.submitted);
		CU_ASSERT_EQUAL(br.submitted, 40 * QD * NCH);
		CU_ASSERT_EQUAL(br.data_errors, 0);
		CU_ASSERT_EQUAL(br.status_errors, 0);
		CU_ASSERT_EQUAL(nvp_bdev_poll_group_get_outstanding(br.group), 0);
		nvp_poll_waiter_get_stats(br.w, &st);
		/* the hook told the waiter about every bdev_io sent: samples without our calls */
		CU_ASSERT(st.samples + st.samples_skipped >= br.done);
		/* irq mode: every pass that found nothing blocked on the interrupt (none spun);
		 * other modes never block on one. Whether any pass found nothing depends on
		 * how fast the device completes (under QEMU's TCG, every pass of a run may
		 * find completions), so it is not asserted. */
		if (strcmp(mode, "irq") == 0) {
			CU_ASSERT_EQUAL(st.irq_waits, st.spins);
		} else {
			CU_ASSERT_EQUAL(st.irq_waits, 0);
		}
		if (strcmp(mode, "classic") == 0) {
			CU_ASSERT_EQUAL(st.sleeps, 0);
		}
		printf("(%s: %lu samples, %lu sleeps, %lu irq waits, %lu timed out) ", mode,
		       (unsigned long)st.samples, (unsigned long)st.sleeps,
		       (unsigned long)st.irq_waits, (unsigned long)st.irq_timeouts);
	}
	brun_close(&br);
}

static void
test_classic(void)
{
	check_bdev_mode("classic", false);
}

static void
test_hybrid(void)
{
	check_bdev_mode("hybrid", false);
}

static void
test_hybrid_mean(void)
{
	check_bdev_mode("hybrid:mean", false);
}

static void
test_fixed(void)
{
	check_bdev_mode("fixed:20", false);
}

static void
test_irq(void)
{
	struct nvp_poll_opts po;
	struct brun br;

	check_bdev_mode("irq", true);
	/* channels without interrupts: irq is refused (add or switch), never a hang */
	CU_ASSERT_EQUAL(brun_open(&br, "classic", false), 0);
	nvp_poll_opts_init(&po, sizeof(po));
	po.mode = NVP_POLL_IRQ;
	CU_ASSERT_EQUAL(nvp_poll_waiter_set_mode(br.w, &po), -ENOTSUP);
	brun_close(&br);
	CU_ASSERT_EQUAL(brun_open(&br, "irq", false), -ENOTSUP);
	brun_close(&br);
}

/* Switch modes after every completion, while 2 x QD requests (some split) are out. */
static void
test_mode_switch_under_load(void)
{
	static const char *const modes[] = { "hybrid",   "irq", "classic",
					     "fixed:10", "irq", "hybrid:mean" };
	struct brun br;

	if (brun_open(&br, "classic", true) == 0) {
		CU_ASSERT_EQUAL(bdrive(&br, 60, modes, NVP_COUNTOF(modes)), 0);
		CU_ASSERT_EQUAL(br.done, br.submitted);
		CU_ASSERT_EQUAL(br.submitted, 60 * QD * NCH);
		CU_ASSERT_EQUAL(br.data_errors, 0);
		CU_ASSERT_EQUAL(br.status_errors, 0);
	}
	brun_close(&br);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "bdev_classic", test_classic },
		{ "bdev_hybrid", test_hybrid },
		{ "bdev_hybrid_mean", test_hybrid_mean },
		{ "bdev_fixed", test_fixed },
		{ "bdev_irq", test_irq },
		{ "bdev_mode_switch_under_load", test_mode_switch_under_load },
	};
	int rc = fx_main(argc, argv, "poll_bdev", tests, NVP_COUNTOF(tests));

	nvp_bdev_fini();
	return rc;
}

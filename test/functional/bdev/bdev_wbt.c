/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The writeback throttle under a write flood, over the software controller with service
 * times that make reads suffer: two writer threads (one background, one normal) keep 32
 * pattern writes each in flight over their own regions while a reader thread reads; the
 * throttle (a low target, so it really throttles) defers writes. Every write completes
 * successfully exactly once, every block reads back as last written, and the reader's
 * I/O is never held. No timing is asserted: only that writes were deferred (certain,
 * since each writer submits more than its class may have in flight).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bdev_fx.h"
#include "nvpoll/bdev_module.h"
#include "nvpoll/emu.h"
#include "nvpoll/wbt.h"

#define WB_QD 32u
#define WB_BLOCKS 8u  /* 4 KiB per write on 512-byte blocks */
#define WB_SLOTS 128u /* writes per region pass */
#define WB_PASSES 3u

struct writer {
	const char *bdev;
	uint32_t cls;
	uint64_t first; /* region's first block */
	/* out */
	int rc;
	uint32_t submitted, ok, errors, dup, mismatches;
};

struct wslot {
	struct writer *w;
	uint32_t calls;
	bool err;
};

static atomic_bool g_writers_done;

static void
wslot_cb(void *arg, const struct nvme_cpl *cpl)
{
	struct wslot *s = arg;

	s->calls++;
	s->err = nvme_cpl_is_error(cpl);
}

static int
poll_until_idle(struct nvp_bdev_channel *ch)
{
	uint64_t deadline = fx_now_us() + FX_WAIT_MS * 1000ull;

	while (nvp_bdev_channel_get_outstanding(ch) != 0) {
		nvp_bdev_channel_poll(ch);
		if (fx_now_us() > deadline) {
			return -ETIMEDOUT;
		}
	}
	return 0;
}

/* One pass: WB_SLOTS writes, WB_QD at a time, each slot with its own buffer. */
static void
write_pass(struct writer *w, struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, uint8_t *bufs,
	   struct wslot *slots, uint32_t pass)
{
	uint32_t i, done_before;
	uint64_t lba;
	int rc;

	for (i = 0; i < WB_SLOTS && w->rc == 0; i++) {
		while (nvp_bdev_channel_get_outstanding(ch) >= WB_QD) {
			nvp_bdev_channel_poll(ch);
		}
		lba = w->first + (uint64_t)i * WB_BLOCKS;
		fx_pattern_fill(bufs + (size_t)i * WB_BLOCKS * 512, lba, WB_BLOCKS, 512, pass + 1);
		slots[i] = (struct wslot){ w, 0, false };
		rc = nvp_bdev_write_blocks(desc, ch, bufs + (size_t)i * WB_BLOCKS * 512, lba,
					   WB_BLOCKS, nvp_bdev_write_flags(w->cls, 0), wslot_cb,
					   &slots[i]);
		if (rc != 0) {
			w->rc = rc;
			break;
		}
		w->submitted++;
	}
	if (poll_until_idle(ch) != 0) {
		w->rc = -ETIMEDOUT;
	}
	for (i = 0; i < WB_SLOTS; i++) {
		done_before = slots[i].calls;
		w->ok += done_before == 1 && !slots[i].err;
		w->errors += slots[i].err;
		w->dup += done_before > 1;
	}
}

static void *
writer_main(void *arg)
{
	struct writer *w = arg;
	struct nvp_bdev_desc *desc;
	struct nvp_bdev_channel *ch;
	struct wslot *slots = calloc(WB_SLOTS, sizeof(*slots));
	uint8_t *bufs = nvp_env_dma_malloc((size_t)WB_SLOTS * WB_BLOCKS * 512, 4096, NULL);
	uint32_t pass;

	w->rc = slots == NULL || bufs == NULL ? -ENOMEM : 0;
	if (w->rc == 0) {
		w->rc = nvp_bdev_open(w->bdev, true, bfx_event_ignore, NULL, &desc);
	}
	if (w->rc == 0 && (w->rc = nvp_bdev_channel_create(desc, NULL, &ch)) != 0) {
		nvp_bdev_close(desc);
	}
	if (w->rc == 0) {
		for (pass = 0; pass < WB_PASSES && w->rc == 0; pass++) {
			write_pass(w, desc, ch, bufs, slots, pass);
		}
		/* read the region back: the last pass's pattern everywhere */
		for (uint32_t i = 0; i < WB_SLOTS && w->rc == 0; i++) {
			uint8_t *b = bufs + (size_t)i * WB_BLOCKS * 512;
			uint64_t lba = w->first + (uint64_t)i * WB_BLOCKS;

			memset(b, 0, WB_BLOCKS * 512);
			if (bfx_io(desc, ch, BFX_READ, b, lba, WB_BLOCKS, NULL) != 0 ||
			    fx_pattern_check(b, lba, WB_BLOCKS, 512, WB_PASSES) >= 0) {
				w->mismatches++;
			}
		}
		nvp_bdev_channel_destroy(ch);
		nvp_bdev_close(desc);
	}
	nvp_env_dma_free(bufs);
	free(slots);
	return NULL;
}

struct reader {
	const char *bdev;
	uint32_t ios, errors;
	int rc;
};

static void *
reader_main(void *arg)
{
	struct reader *r = arg;
	struct nvp_bdev_desc *desc;
	struct nvp_bdev_channel *ch;
	uint8_t *buf = nvp_env_dma_malloc(4096, 4096, NULL);
	uint64_t lba = 0;

	r->rc = buf == NULL ? -ENOMEM :
			      nvp_bdev_open(r->bdev, false, bfx_event_ignore, NULL, &desc);
	if (r->rc == 0 && (r->rc = nvp_bdev_channel_create(desc, NULL, &ch)) != 0) {
		nvp_bdev_close(desc);
	}
	while (r->rc == 0 && !atomic_load(&g_writers_done)) {
		lba = (lba + 97) % 2048;
		if (bfx_io(desc, ch, BFX_READ, buf, 4096 + lba, 8, NULL) != 0) {
			r->errors++;
		}
		r->ios++;
	}
	if (r->rc == 0) {
		nvp_bdev_channel_destroy(ch);
		nvp_bdev_close(desc);
	}
	nvp_env_dma_free(buf);
	return NULL;
}

/* The flood against the controller made with @trid (named wbemu0), throttle @params. */
static void
flood_run(const char *trid, const char *params)
{
	struct nvp_bdev_nvme_opts o;
	struct nvp_bdev *b;
	struct writer w[2] = {
		{ "wbemu0n1", NVP_BDEV_WRITE_BACKGROUND, 0, 0, 0, 0, 0, 0, 0 },
		{ "wbemu0n1", NVP_BDEV_WRITE_NORMAL, 2048, 0, 0, 0, 0, 0, 0 },
	};
	struct reader r = { "wbemu0n1", 0, 0, 0 };
	struct nvp_wbt_info info = { .info_size = sizeof(info) };
	pthread_t wt[2], rt;
	int i;

	nvp_bdev_nvme_opts_init(&o, sizeof(o));
	o.name = "wbemu0";
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_nvme_attach(trid, &o, &b, 1, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_set_admission(b, "wbt", params), 0);
	atomic_store(&g_writers_done, false);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&rt, NULL, reader_main, &r), 0);
	for (i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL_FATAL(pthread_create(&wt[i], NULL, writer_main, &w[i]), 0);
	}
	for (i = 0; i < 2; i++) {
		pthread_join(wt[i], NULL);
	}
	atomic_store(&g_writers_done, true);
	pthread_join(rt, NULL);
	CU_ASSERT_EQUAL(nvp_bdev_wbt_get_info(b, &info), 0);
	printf("wbt: %lu writes throttled, %lu us deferred in all, step %d, %lu windows "
	       "(%lu up, %lu down), reader %u I/Os\n",
	       (unsigned long)info.throttled, (unsigned long)info.deferred_us, info.step,
	       (unsigned long)info.windows, (unsigned long)info.steps_up,
	       (unsigned long)info.steps_down, r.ios);
	for (i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL(w[i].rc, 0);
		CU_ASSERT_EQUAL(w[i].submitted, WB_SLOTS * WB_PASSES);
		CU_ASSERT_EQUAL(w[i].ok, WB_SLOTS * WB_PASSES);
		CU_ASSERT_EQUAL(w[i].errors, 0);
		CU_ASSERT_EQUAL(w[i].dup, 0);
		CU_ASSERT_EQUAL(w[i].mismatches, 0);
	}
	CU_ASSERT_EQUAL(r.rc, 0);
	CU_ASSERT_EQUAL(r.errors, 0);
	CU_ASSERT(info.throttled > 0);
	CU_ASSERT_EQUAL(info.inflight, 0);
	CU_ASSERT_EQUAL(info.deferred_now, 0);
	CU_ASSERT(info.windows > 0);
}

static void
test_flood_completes_and_verifies(void)
{
	/* a 50 us target under 200 us writes: the throttle steps in; depth 8 gives
	 * background 2 and normal 4 writes in flight at step 0, far below QD32 */
	flood_run("trtype:emu name:wbemu0 size:8M lba:512 read_us:20 write_us:200 channels:2",
		  "lat_us=50 depth=8 window_ms=20");
	CU_ASSERT_EQUAL(nvp_bdev_nvme_detach("wbemu0"), 0);
	CU_ASSERT_EQUAL(nvp_bdev_fini(), 0);
}

/*
 * The same on a device with the program model and no write cache: every write waits in
 * the device until its data is programmed (40 MB/s), reads wait behind the writes on
 * their channel, and the controller holds more commands than it has channels. Still
 * every write completes once and verifies.
 */
static void
test_flood_write_through(void)
{
	struct nvp_emu_stats st = { .info_size = sizeof(st) };
	struct nvp_emu_ctrlr *emu;

	flood_run("trtype:emu name:wbemu0 size:8M lba:512 read_us:20 write_us:20 channels:2 "
		  "slots:64 prog_mbps:40 prog_us:300",
		  "lat_us=1000 depth=8 window_ms=20");
	emu = nvp_emu_ctrlr_find("wbemu0");
	CU_ASSERT_PTR_NOT_NULL_FATAL(emu);
	nvp_emu_ctrlr_get_stats(emu, &st);
	CU_ASSERT(st.writes_throttled > 0); /* writes waited for their programs */
	CU_ASSERT_EQUAL(nvp_bdev_nvme_detach("wbemu0"), 0);
	CU_ASSERT_EQUAL(nvp_bdev_fini(), 0);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "flood_completes_and_verifies", test_flood_completes_and_verifies },
		{ "flood_write_through", test_flood_write_through },
	};

	return fx_main(argc, argv, "bdev_wbt", tests, NVP_COUNTOF(tests));
}

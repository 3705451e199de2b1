/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every scheduler under load from several threads: four verifying workers (pattern
 * writes read back and checked, requests large enough to be split) on one nvme bdev over
 * the software controller, with each scheduler in turn and a small device-wide depth so
 * that requests really queue in it. Every I/O completes and verifies. Between runs the
 * scheduler is switched: refused while a channel exists, taken once all are gone, and the
 * next run loses nothing.
 */
#include <errno.h>
#include <string.h>

#include "bdev_fx.h"
#include "nvpoll/bdev_module.h"
#include "nvpoll/sched.h"

static const struct {
	const char *name;
	const char *params;
} g_scheds[] = {
	{ "none", NULL },
	{ "deadline", "depth=4 fifo_batch=4 writes_starved=1" },
	{ "kyber", "read_lat_us=200 write_lat_us=400 window_ms=20" },
	{ "fair", "depth=4 weights=1/2 lag_kib=64" },
};

static void
run_workers(const char *bdev)
{
	struct bfx_worker w[4];
	unsigned int i;

	memset(w, 0, sizeof(w));
	for (i = 0; i < 4; i++) {
		w[i].bdev_name = bdev;
		w[i].num_blocks = 2048;
		w[i].first_block = i * 2048;
		w[i].max_blocks = 200;
		w[i].batches = 12;
		w[i].depth = 8;
		w[i].vectored = i % 2 == 1;
		w[i].tag = 0x500 + i;
	}
	bfx_run_workers(w, 4);
}

static void
test_each_scheduler_verifies(void)
{
	struct nvp_bdev_nvme_opts o;
	struct nvp_sched_info info = { .info_size = sizeof(info) };
	struct nvp_bdev_channel *ch;
	struct nvp_bdev_desc *desc;
	struct nvp_bdev *b;
	size_t i;

	nvp_bdev_nvme_opts_init(&o, sizeof(o));
	o.name = "scemu0";
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_nvme_attach("trtype:emu name:scemu0 size:8M lba:512 "
						   "channels:2 read_us:20 write_us:40",
						   &o, &b, 1, NULL),
			      0);
	for (i = 0; i < NVP_COUNTOF(g_scheds); i++) {
		CU_ASSERT_EQUAL_FATAL(
			nvp_bdev_set_scheduler(b, g_scheds[i].name, g_scheds[i].params), 0);
		/* no switch while a channel exists */
		CU_ASSERT_EQUAL_FATAL(
			nvp_bdev_open("scemu0n1", false, bfx_event_ignore, NULL, &desc), 0);
		CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch), 0);
		CU_ASSERT_EQUAL(nvp_bdev_set_scheduler(b, "none", NULL), -EBUSY);
		CU_ASSERT_STRING_EQUAL(nvp_bdev_get_scheduler(b), g_scheds[i].name);
		CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
		CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);

		run_workers("scemu0n1");
		CU_ASSERT_EQUAL(nvp_bdev_sched_get_info(b, &info), 0);
		CU_ASSERT_STRING_EQUAL(info.name, g_scheds[i].name);
		CU_ASSERT_EQUAL(info.inflight, 0);
		if (strcmp(g_scheds[i].name, "none") != 0) {
			CU_ASSERT(info.dispatched > 0);
		}
		printf("%s: %lu dispatched ", g_scheds[i].name, (unsigned long)info.dispatched);
	}
	CU_ASSERT_EQUAL(nvp_bdev_set_scheduler(b, "nosuch", NULL), -ENOENT);
	CU_ASSERT_EQUAL(nvp_bdev_nvme_detach("scemu0"), 0);
	CU_ASSERT_EQUAL(nvp_bdev_fini(), 0);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "each_scheduler_verifies", test_each_scheduler_verifies },
	};

	return fx_main(argc, argv, "bdev_sched", tests, NVP_COUNTOF(tests));
}

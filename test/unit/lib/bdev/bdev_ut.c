/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/bdev/bdev.c: registration (bad spec, duplicate name), lookup and
 * the "unknown bdev" message, descriptor lifetime (close with channels -EBUSY, hot
 * remove events, destruct on last close), stage registry and per-bdev selection.
 */
#include "ut_bdev.h"

static void
test_register_bad_and_duplicate(void)
{
	struct nvp_bdev_spec spec;
	struct nvp_bdev *bdev;

	bdev = ut_stub_register("s0", 100, 0, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(bdev);
	CU_ASSERT_PTR_EQUAL(nvp_bdev_get_by_name("s0"), bdev);
	CU_ASSERT_STRING_EQUAL(nvp_bdev_get_module_name(bdev), "stub");
	CU_ASSERT_EQUAL(nvp_bdev_get_block_size(bdev), 512);
	CU_ASSERT_EQUAL(nvp_bdev_get_num_blocks(bdev), 100);

	memset(&spec, 0, sizeof(spec));
	spec.name = "s0";
	spec.module_name = "stub";
	spec.block_size = 512;
	spec.num_blocks = 10;
	spec.fn_table = &g_stub_fn;
	CU_ASSERT_EQUAL(nvp_bdev_register(&spec, NULL), -EEXIST);
	CU_ASSERT(strstr(g_ut_last_log, "s0") != NULL);

	spec.name = "s1";
	spec.block_size = 0;
	CU_ASSERT_EQUAL(nvp_bdev_register(&spec, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "block_size") != NULL);
	spec.block_size = 512;
	spec.num_blocks = 0;
	CU_ASSERT_EQUAL(nvp_bdev_register(&spec, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "num_blocks") != NULL);
	spec.num_blocks = 1;
	spec.name = "";
	CU_ASSERT_EQUAL(nvp_bdev_register(&spec, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "name") != NULL);
	CU_ASSERT_PTR_NULL(nvp_bdev_get_by_name("s1"));

	CU_ASSERT_EQUAL(nvp_bdev_unregister(bdev), 0);
	CU_ASSERT_EQUAL(g_stub.destructed, 1);
	CU_ASSERT_PTR_NULL(nvp_bdev_get_by_name("s0"));
}

static void
test_open_unknown_lists_bdevs(void)
{
	struct nvp_bdev_desc *desc = NULL;
	struct ut_events ev = { 0 };
	struct nvp_bdev *bdev;

	bdev = ut_stub_register("alpha", 8, 0, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(bdev);
	CU_ASSERT_EQUAL(nvp_bdev_open("nope", false, ut_event_cb, &ev, &desc), -ENODEV);
	CU_ASSERT_PTR_NULL(desc);
	CU_ASSERT(strstr(g_ut_last_log, "nope") != NULL);
	CU_ASSERT(strstr(g_ut_last_log, "alpha") != NULL);
	CU_ASSERT_EQUAL(nvp_bdev_open("alpha", false, NULL, NULL, &desc), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_unregister(bdev), 0);
	CU_ASSERT_EQUAL(nvp_bdev_open("alpha", false, ut_event_cb, &ev, &desc), -ENODEV);
	CU_ASSERT(strstr(g_ut_last_log, "(none)") != NULL);
}

static void
test_descriptor_lifetime(void)
{
	struct nvp_bdev_desc *desc, *desc2;
	struct nvp_bdev_channel *ch;
	struct ut_events ev = { 0 };
	struct ut_done done = { 0 };
	struct nvp_bdev *bdev;
	char buf[512];

	bdev = ut_stub_register("life", 64, 0, 0);
	CU_ASSERT_FATAL(bdev != NULL);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("life", true, ut_event_cb, &ev, &desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("life", false, ut_event_cb, &ev, &desc2), 0);
	CU_ASSERT_EQUAL(nvp_bdev_get_open_count(bdev), 2);
	CU_ASSERT_TRUE(nvp_bdev_desc_is_writable(desc));
	CU_ASSERT_FALSE(nvp_bdev_desc_is_writable(desc2));
	CU_ASSERT_EQUAL(nvp_bdev_unregister(bdev), -EBUSY);

	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch), 0);
	CU_ASSERT_EQUAL(g_stub.channels, 1);
	g_stub.auto_complete = false;
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(desc, ch, buf, 0, 1, ut_done_cb, &done), 0);
	/* close with I/O in flight: -EBUSY, nothing closed */
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), -EBUSY);
	CU_ASSERT(strstr(g_ut_last_log, "in flight") != NULL);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), -EBUSY);
	g_stub.auto_complete = true;
	CU_ASSERT_EQUAL(nvp_bdev_channel_poll(ch), 1);
	CU_ASSERT_EQUAL(done.calls, 1);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
	CU_ASSERT_EQUAL(g_stub.channels, 0);
	/* twice: refused, found by address only (ASan would see a read of the freed one) */
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "destroyed twice") != NULL);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "closed twice") != NULL);
	CU_ASSERT_EQUAL(nvp_bdev_get_open_count(bdev), 1);

	/* hot remove: the event reaches the open descriptor; destruct waits for close */
	nvp_bdev_hot_remove(bdev);
	CU_ASSERT_EQUAL(ev.remove, 1);
	CU_ASSERT_TRUE(nvp_bdev_is_removed(bdev));
	CU_ASSERT_EQUAL(g_stub.destructed, 0);
	CU_ASSERT_EQUAL(nvp_bdev_open("life", false, ut_event_cb, &ev, &desc), -ENXIO);
	CU_ASSERT_EQUAL(nvp_bdev_channel_create(desc2, NULL, &ch), -ENXIO);
	nvp_bdev_hot_remove(bdev); /* idempotent */
	CU_ASSERT_EQUAL(ev.remove, 1);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc2), 0);
	CU_ASSERT_EQUAL(g_stub.destructed, 1);
	CU_ASSERT_PTR_NULL(nvp_bdev_get_by_name("life"));
}

static void
test_io_after_remove(void)
{
	struct nvp_bdev_channel *ch;
	struct nvp_bdev_desc *desc;
	struct ut_events ev = { 0 };
	struct ut_done done = { 0 };
	struct nvp_bdev *bdev;
	char buf[512];

	bdev = ut_stub_register("rm", 64, 0, 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("rm", true, ut_event_cb, &ev, &desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch), 0);
	g_stub.auto_complete = false;
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(desc, ch, buf, 0, 1, ut_done_cb, &done), 0);
	nvp_bdev_hot_remove(bdev);
	CU_ASSERT_EQUAL(ev.remove, 1);
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(desc, ch, buf, 0, 1, ut_done_cb, &done), -ENXIO);
	/* the module fails what it holds */
	g_stub.fail_index = 0;
	g_stub.fail_status.sct = NVME_SCT_GENERIC;
	g_stub.fail_status.sc = NVME_SC_ABORTED_SQ_DELETION;
	g_stub.auto_complete = true;
	CU_ASSERT_EQUAL(nvp_bdev_channel_poll(ch), 1);
	CU_ASSERT_EQUAL(done.calls, 1);
	CU_ASSERT_EQUAL(done.cpl.status.sc, NVME_SC_ABORTED_SQ_DELETION);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	CU_ASSERT_EQUAL(g_stub.destructed, 1);
}

static void
test_resize_event(void)
{
	struct nvp_bdev_desc *desc;
	struct ut_events ev = { 0 };
	struct nvp_bdev *bdev;

	struct nvp_bdev_channel *ch;
	struct ut_done done = { 0 };
	char buf[512];

	bdev = ut_stub_register("rs", 64, 0, 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("rs", false, ut_event_cb, &ev, &desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(desc, ch, buf, 100, 1, ut_done_cb, &done), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_notify_blockcnt_change(bdev, 128), 0);
	CU_ASSERT_EQUAL(ev.resize, 1);
	CU_ASSERT_EQUAL(nvp_bdev_get_num_blocks(bdev), 128);
	/* a channel made before the resize checks against the new size */
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(desc, ch, buf, 100, 1, ut_done_cb, &done), 0);
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(desc, ch, buf, 127, 2, ut_done_cb, &done), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_notify_blockcnt_change(bdev, 32), 0);
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(desc, ch, buf, 40, 1, ut_done_cb, &done), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_channel_poll(ch), 1);
	CU_ASSERT_EQUAL(done.calls, 1);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_unregister(bdev), 0);
}

static int g_stage_inits, g_stage_finis;

static int
stage_init(struct nvp_bdev *bdev, const char *params, void **ctx)
{
	(void)bdev;
	if (params != NULL && strcmp(params, "bad=1") == 0) {
		NVP_ERRLOG("test stage: bad parameter bad");
		return -EINVAL;
	}
	g_stage_inits++;
	*ctx = &g_stage_inits;
	return 0;
}

static void
stage_fini(void *ctx)
{
	(void)ctx;
	g_stage_finis++;
}

static const struct nvp_bdev_sched_ops g_test_sched = {
	.name = "ut_sched",
	.init = stage_init,
	.fini = stage_fini,
};
static const struct nvp_bdev_admission_ops g_test_admit = {
	.name = "ut_admit",
	.init = stage_init,
	.fini = stage_fini,
};

static void
test_stage_registry(void)
{
	struct nvp_bdev_channel *ch;
	struct nvp_bdev_desc *desc;
	struct ut_events ev = { 0 };
	struct nvp_bdev *bdev;

	/* registered for good: the second suite (UT_REGISTERED) finds them there */
	g_stage_inits = g_stage_finis = 0;
	CU_ASSERT_EQUAL(nvp_bdev_scheduler_register(&g_test_sched), UT_REGISTERED);
	CU_ASSERT_EQUAL(nvp_bdev_scheduler_register(&g_test_sched), -EEXIST);
	CU_ASSERT_EQUAL(nvp_bdev_admission_register(&g_test_admit), UT_REGISTERED);
	CU_ASSERT_EQUAL(nvp_bdev_scheduler_register(NULL), -EINVAL);

	bdev = ut_stub_register("st", 64, 0, 0);
	CU_ASSERT_STRING_EQUAL(nvp_bdev_get_scheduler(bdev), "none");
	CU_ASSERT_STRING_EQUAL(nvp_bdev_get_admission(bdev), "none");
	CU_ASSERT_EQUAL(nvp_bdev_set_scheduler(bdev, "nosuch", NULL), -ENOENT);
	CU_ASSERT(strstr(g_ut_last_log, "ut_sched") != NULL);
	CU_ASSERT_EQUAL(nvp_bdev_set_scheduler(bdev, "ut_sched", "bad=1"), -EINVAL);
	CU_ASSERT_STRING_EQUAL(nvp_bdev_get_scheduler(bdev), "none");
	CU_ASSERT_EQUAL(nvp_bdev_set_scheduler(bdev, "ut_sched", NULL), 0);
	CU_ASSERT_EQUAL(nvp_bdev_set_admission(bdev, "ut_admit", NULL), 0);
	CU_ASSERT_STRING_EQUAL(nvp_bdev_get_scheduler(bdev), "ut_sched");
	CU_ASSERT_EQUAL(g_stage_inits, 2);

	/* not while channels exist */
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("st", false, ut_event_cb, &ev, &desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_set_scheduler(bdev, "none", NULL), -EBUSY);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_set_scheduler(bdev, "none", NULL), 0);
	CU_ASSERT_EQUAL(g_stage_finis, 1);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_unregister(bdev), 0);
	CU_ASSERT_EQUAL(g_stage_finis, 2); /* the admission stage's state went with the bdev */
}

static void
test_list_and_fini(void)
{
	struct nvp_bdev_desc *desc;
	struct ut_events ev = { 0 };
	char names[16];

	CU_ASSERT_PTR_NOT_NULL(ut_stub_register("aaaa", 8, 0, 0));
	CU_ASSERT_PTR_NOT_NULL(ut_stub_register("bbbb", 8, 0, 0));
	CU_ASSERT_PTR_NOT_NULL(ut_stub_register("cccc", 8, 0, 0));
	CU_ASSERT_STRING_EQUAL(nvp_bdev_get_name(nvp_bdev_first()), "aaaa");
	CU_ASSERT_STRING_EQUAL(nvp_bdev_get_name(nvp_bdev_next(nvp_bdev_first())), "bbbb");
	nvp_bdev_list_names(names, sizeof(names));
	CU_ASSERT(strncmp(names, "aaaa, bbbb", 10) == 0);
	CU_ASSERT(strstr(names, "...") != NULL);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("bbbb", false, ut_event_cb, &ev, &desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_fini(), -EBUSY);
	CU_ASSERT_PTR_NOT_NULL(nvp_bdev_get_by_name("aaaa"));
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_fini(), 0);
	CU_ASSERT_PTR_NULL(nvp_bdev_first());
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_register_bad_and_duplicate),
		UT_TEST(test_open_unknown_lists_bdevs),
		UT_TEST(test_descriptor_lifetime),
		UT_TEST(test_io_after_remove),
		UT_TEST(test_resize_event),
		UT_TEST(test_stage_registry),
		UT_TEST(test_list_and_fini),
	};

	return ut_run("bdev", tests, sizeof(tests) / sizeof(tests[0]));
}

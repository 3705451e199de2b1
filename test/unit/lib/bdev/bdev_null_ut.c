/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/bdev/null/bdev_null.c: parameter checks naming the parameter, the
 * defaults for what an older caller's shorter options leave out, completion on the next
 * poll in submission order, zeroed reads, delete.
 */
#include "ut_bdev.h"

#include "bdev/null/bdev_null.c"

static void
test_params(void)
{
	struct nvp_bdev_null_opts o;

	nvp_bdev_null_opts_init(&o, sizeof(o));
	CU_ASSERT_EQUAL(o.block_size, 512);
	o.name = "n";
	o.num_blocks = 8;
	o.block_size = 520;
	CU_ASSERT_EQUAL(nvp_bdev_null_create(&o, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "block_size") != NULL);
	o.block_size = 512;
	o.md_size = 600; /* the metadata is the bad one: it is named */
	CU_ASSERT_EQUAL(nvp_bdev_null_create(&o, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "bad parameter md_size") != NULL);
	o.md_size = 512;
	CU_ASSERT_EQUAL(nvp_bdev_null_create(&o, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "bad parameter md_size") != NULL);
	o.block_size = 0;
	o.md_size = 0;
	CU_ASSERT_EQUAL(nvp_bdev_null_create(&o, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "bad parameter block_size") != NULL);
	o.block_size = 520;
	o.md_size = 8;
	CU_ASSERT_EQUAL(nvp_bdev_null_create(&o, NULL), 0);
	CU_ASSERT_EQUAL(nvp_bdev_get_md_size(nvp_bdev_get_by_name("n")), 8);
	CU_ASSERT_EQUAL(nvp_bdev_null_create(&o, NULL), -EEXIST);
	o.name = "n2";
	o.num_blocks = 0;
	CU_ASSERT_EQUAL(nvp_bdev_null_create(&o, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "num_blocks") != NULL);
	o.opts_size = 0;
	o.num_blocks = 8;
	CU_ASSERT_EQUAL(nvp_bdev_null_create(&o, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "opts_size") != NULL);
	CU_ASSERT_EQUAL(nvp_bdev_null_delete("n2"), -ENODEV);
	CU_ASSERT_EQUAL(nvp_bdev_null_delete("n"), 0);
}

/* Fields past an older caller's opts_size take their defaults, whatever follows. */
static void
test_short_opts(void)
{
	struct nvp_bdev_null_opts o;
	struct nvp_bdev *b = NULL;

	memset(&o, 0xff, sizeof(o));
	o.opts_size = offsetof(struct nvp_bdev_null_opts, max_xfer_blocks);
	o.name = "old";
	o.num_blocks = 8;
	o.block_size = 4096;
	o.md_size = 0;
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_null_create(&o, &b), 0);
	CU_ASSERT_EQUAL(nvp_bdev_get_block_size(b), 4096);
	CU_ASSERT_EQUAL(nvp_bdev_get_max_xfer_blocks(b), 0);
	CU_ASSERT_EQUAL(nvp_bdev_null_delete("old"), 0);
	memset(&o, 0xff, sizeof(o));
	o.opts_size = offsetof(struct nvp_bdev_null_opts, block_size);
	o.name = "older";
	o.num_blocks = 8;
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_null_create(&o, &b), 0);
	CU_ASSERT_EQUAL(nvp_bdev_get_block_size(b), 512);
	CU_ASSERT_EQUAL(nvp_bdev_get_md_size(b), 0);
	CU_ASSERT_EQUAL(nvp_bdev_null_delete("older"), 0);
	o.opts_size = sizeof(size_t);
	CU_ASSERT_EQUAL(nvp_bdev_null_create(&o, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "bad parameter name") != NULL);
	o.opts_size = sizeof(o) + 1;
	CU_ASSERT_EQUAL(nvp_bdev_null_create(&o, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "opts_size") != NULL);
	CU_ASSERT_PTR_NULL(nvp_bdev_first());
}

static char g_order[16];

static void
order_cb(void *arg, const struct nvme_cpl *cpl)
{
	CU_ASSERT_FALSE(nvme_cpl_is_error(cpl));
	strcat(g_order, (const char *)arg);
}

static void
test_next_poll_in_order(void)
{
	struct nvp_bdev_null_opts o;
	struct nvp_bdev_channel *ch;
	struct nvp_bdev_desc *desc;
	struct ut_events ev = { 0 };
	char buf[2][512];

	nvp_bdev_null_opts_init(&o, sizeof(o));
	o.name = "nz";
	o.num_blocks = 8;
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_null_create(&o, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("nz", true, ut_event_cb, &ev, &desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch), 0);
	memset(buf, 0x77, sizeof(buf));
	memset(g_order, 0, sizeof(g_order));
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(desc, ch, buf[0], 0, 1, order_cb, "a"), 0);
	CU_ASSERT_EQUAL(nvp_bdev_write_blocks(desc, ch, buf[1], 1, 1, 0, order_cb, "b"), 0);
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(desc, ch, buf[1], 2, 1, order_cb, "c"), 0);
	CU_ASSERT_STRING_EQUAL(g_order, "");
	CU_ASSERT_EQUAL(nvp_bdev_channel_poll(ch), 3);
	CU_ASSERT_STRING_EQUAL(g_order, "abc");
	CU_ASSERT_EQUAL(buf[0][0], 0);
	CU_ASSERT_EQUAL(buf[0][511], 0);
	CU_ASSERT_EQUAL(buf[1][100], 0);
	CU_ASSERT_EQUAL(nvp_bdev_channel_poll(ch), 0);
	CU_ASSERT_FALSE(
		nvp_bdev_io_type_supported(nvp_bdev_desc_get_bdev(desc), NVP_BDEV_IO_COMPARE));
	CU_ASSERT_EQUAL(nvp_bdev_compare_blocks(desc, ch, buf[0], 0, 1, order_cb, "x"), -ENOTSUP);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_null_delete("nz"), 0);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_params),
		UT_TEST(test_short_opts),
		UT_TEST(test_next_poll_in_order),
	};

	return ut_run("bdev_null", tests, sizeof(tests) / sizeof(tests[0]));
}

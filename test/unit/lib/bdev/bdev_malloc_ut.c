/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/bdev/malloc/bdev_malloc.c: parameter checks naming the parameter,
 * the defaults for what an older caller's shorter options leave out, 520-byte blocks
 * with metadata, data kept across writes and reads through scattered buffers, compare,
 * write zeroes and unmap, delete while open.
 */
#include "ut_bdev.h"

#include "bdev/malloc/bdev_malloc.c"

static void
env_init(void)
{
	struct nvp_env_opts o;

	if (nvp_env_is_initialized()) {
		return;
	}
	nvp_env_opts_init(&o, sizeof(o));
	o.name = "bdev_malloc_ut";
	o.no_pci = true;
	o.no_huge = true;
	o.quiet = true;
	CU_ASSERT_EQUAL_FATAL(nvp_env_init(&o), 0);
}

static void
test_params(void)
{
	struct nvp_bdev_malloc_opts o;

	env_init();
	nvp_bdev_malloc_opts_init(&o, sizeof(o));
	o.name = "m";
	o.num_blocks = 16;
	o.block_size = 0; /* named, not a division by zero in the num_blocks check */
	CU_ASSERT_EQUAL(nvp_bdev_malloc_create(&o, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "bad parameter block_size") != NULL);
	o.block_size = 2048;
	CU_ASSERT_EQUAL(nvp_bdev_malloc_create(&o, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "block_size") != NULL);
	o.block_size = 4096;
	o.md_size = 8;
	CU_ASSERT_EQUAL(nvp_bdev_malloc_create(&o, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "md_size") != NULL);
	o.md_size = 0;
	o.num_blocks = 0;
	CU_ASSERT_EQUAL(nvp_bdev_malloc_create(&o, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "num_blocks") != NULL);
	o.num_blocks = 16;
	o.block_size = 520; /* md_size 8 implied */
	CU_ASSERT_EQUAL(nvp_bdev_malloc_create(&o, NULL), 0);
	CU_ASSERT_EQUAL(nvp_bdev_get_md_size(nvp_bdev_get_by_name("m")), 8);
	CU_ASSERT_EQUAL(nvp_bdev_malloc_create(&o, NULL), -EEXIST);
	CU_ASSERT_EQUAL(nvp_bdev_malloc_delete("m"), 0);
	CU_ASSERT_EQUAL(nvp_bdev_malloc_delete("m"), -ENODEV);
}

/*
 * A caller built against an older, shorter struct: the fields past its opts_size take
 * their defaults, whatever the bytes after its struct hold (0xff here).
 */
static void
test_short_opts(void)
{
	struct nvp_bdev_malloc_opts o;
	struct nvp_bdev *b = NULL;

	env_init();
	memset(&o, 0xff, sizeof(o));
	o.opts_size = offsetof(struct nvp_bdev_malloc_opts, max_xfer_blocks);
	o.name = "old";
	o.num_blocks = 16;
	o.block_size = 4096;
	o.md_size = 0;
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_malloc_create(&o, &b), 0);
	CU_ASSERT_EQUAL(nvp_bdev_get_block_size(b), 4096);
	CU_ASSERT_EQUAL(nvp_bdev_get_max_xfer_blocks(b), 0);
	CU_ASSERT_EQUAL(nvp_bdev_get_optimal_io_boundary(b), 0);
	CU_ASSERT_EQUAL(nvp_bdev_malloc_delete("old"), 0);
	/* older still: block_size and md_size are the defaults (512, 0) */
	memset(&o, 0xff, sizeof(o));
	o.opts_size = offsetof(struct nvp_bdev_malloc_opts, block_size);
	o.name = "older";
	o.num_blocks = 16;
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_malloc_create(&o, &b), 0);
	CU_ASSERT_EQUAL(nvp_bdev_get_block_size(b), 512);
	CU_ASSERT_EQUAL(nvp_bdev_get_md_size(b), 0);
	CU_ASSERT_EQUAL(nvp_bdev_malloc_delete("older"), 0);
	/* one that does not reach the name: refused by name, the name not read */
	o.opts_size = sizeof(size_t);
	CU_ASSERT_EQUAL(nvp_bdev_malloc_create(&o, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "bad parameter name") != NULL);
	o.opts_size = sizeof(o) + 1;
	CU_ASSERT_EQUAL(nvp_bdev_malloc_create(&o, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "opts_size") != NULL);
	CU_ASSERT_PTR_NULL(nvp_bdev_first());
}

static struct ut_done g_done;

static int
sync_io(struct nvp_bdev_channel *ch, int rc)
{
	uint32_t before = g_done.calls;

	if (rc != 0) {
		return rc;
	}
	nvp_bdev_channel_poll(ch);
	CU_ASSERT_EQUAL(g_done.calls, before + 1);
	return nvme_cpl_is_error(&g_done.cpl) ? -EIO : 0;
}

static void
test_data(void)
{
	struct nvp_bdev_malloc_opts o;
	struct nvp_bdev_channel *ch;
	struct nvp_bdev_desc *desc;
	struct ut_events ev = { 0 };
	static uint8_t wbuf[4 * 520], rbuf[4 * 520];
	struct iovec iov[3];
	uint32_t i;

	env_init();
	nvp_bdev_malloc_opts_init(&o, sizeof(o));
	o.name = "md";
	o.num_blocks = 32;
	o.block_size = 520;
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_malloc_create(&o, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("md", true, ut_event_cb, &ev, &desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch), 0);
	for (i = 0; i < sizeof(wbuf); i++) {
		wbuf[i] = (uint8_t)(i * 7 + 1);
	}
	/* write through three uneven pieces, read back as one */
	iov[0].iov_base = wbuf;
	iov[0].iov_len = 100;
	iov[1].iov_base = wbuf + 100;
	iov[1].iov_len = 1000;
	iov[2].iov_base = wbuf + 1100;
	iov[2].iov_len = sizeof(wbuf) - 1100;
	CU_ASSERT_EQUAL(
		sync_io(ch, nvp_bdev_writev_blocks(desc, ch, iov, 3, 4, 4, 0, ut_done_cb, &g_done)),
		0);
	CU_ASSERT_EQUAL(sync_io(ch, nvp_bdev_read(desc, ch, rbuf, 4 * 520, sizeof(rbuf), ut_done_cb,
						  &g_done)),
			0);
	CU_ASSERT_EQUAL(memcmp(wbuf, rbuf, sizeof(wbuf)), 0);
	CU_ASSERT_EQUAL(
		sync_io(ch, nvp_bdev_compare_blocks(desc, ch, wbuf, 4, 4, ut_done_cb, &g_done)), 0);
	wbuf[519] ^= 1; /* the metadata byte of the first block */
	CU_ASSERT_EQUAL(
		sync_io(ch, nvp_bdev_compare_blocks(desc, ch, wbuf, 4, 4, ut_done_cb, &g_done)),
		-EIO);
	CU_ASSERT_EQUAL(g_done.cpl.status.sct, NVME_SCT_MEDIA_ERROR);
	CU_ASSERT_EQUAL(g_done.cpl.status.sc, NVME_SC_COMPARE_FAILURE);
	CU_ASSERT_EQUAL(
		sync_io(ch, nvp_bdev_write_zeroes_blocks(desc, ch, 5, 1, 0, ut_done_cb, &g_done)),
		0);
	CU_ASSERT_EQUAL(sync_io(ch, nvp_bdev_unmap_blocks(desc, ch, 6, 1, ut_done_cb, &g_done)), 0);
	CU_ASSERT_EQUAL(
		sync_io(ch, nvp_bdev_read_blocks(desc, ch, rbuf, 4, 4, ut_done_cb, &g_done)), 0);
	CU_ASSERT_EQUAL(memcmp(rbuf, wbuf, 519), 0);
	for (i = 520; i < 3 * 520; i++) {
		CU_ASSERT_EQUAL_FATAL(rbuf[i], 0);
	}
	CU_ASSERT_EQUAL(memcmp(rbuf + 3 * 520, wbuf + 3 * 520, 520), 0);
	CU_ASSERT_EQUAL(nvp_bdev_malloc_delete("md"), -EBUSY);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_malloc_delete("md"), 0);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_params),
		UT_TEST(test_short_opts),
		UT_TEST(test_data),
	};
	int rc = ut_run("bdev_malloc", tests, sizeof(tests) / sizeof(tests[0]));

	nvp_env_fini();
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The malloc module: several threads writing and verifying their own regions of one RAM
 * disk at once (512, 4096 and 520-byte blocks with metadata, plain and vectored, split by
 * a small max transfer and an optimal boundary), the other operations' semantics, and
 * bad parameters.
 */
#include <errno.h>
#include <string.h>

#include "bdev_fx.h"

static void
make_malloc(const char *name, uint64_t blocks, uint32_t bs, uint32_t max_xfer, uint32_t boundary)
{
	struct nvp_bdev_malloc_opts o;

	nvp_bdev_malloc_opts_init(&o, sizeof(o));
	o.name = name;
	o.num_blocks = blocks;
	o.block_size = bs;
	o.max_xfer_blocks = max_xfer;
	o.optimal_io_boundary = boundary;
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_malloc_create(&o, NULL), 0);
}

static void
run_threads(const char *name, uint64_t blocks, bool vectored, uint32_t max_blocks)
{
	struct bfx_worker w[4];
	unsigned int i;

	memset(w, 0, sizeof(w));
	for (i = 0; i < 4; i++) {
		w[i].bdev_name = name;
		w[i].num_blocks = blocks / 4;
		w[i].first_block = i * w[i].num_blocks;
		w[i].max_blocks = max_blocks;
		w[i].batches = 50;
		w[i].depth = 8;
		w[i].vectored = vectored;
		w[i].tag = 0x100 + i;
	}
	bfx_run_workers(w, 4);
}

static void
test_threads_512(void)
{
	make_malloc("m512", 8192, 512, 0, 0);
	run_threads("m512", 8192, false, 16);
	run_threads("m512", 8192, true, 16);
	CU_ASSERT_EQUAL(nvp_bdev_malloc_delete("m512"), 0);
}

static void
test_threads_4096_split(void)
{
	/* max transfer 3 blocks and a boundary every 8: most I/Os are split */
	make_malloc("m4k", 2048, 4096, 3, 8);
	run_threads("m4k", 2048, false, 20);
	run_threads("m4k", 2048, true, 20);
	CU_ASSERT_EQUAL(nvp_bdev_malloc_delete("m4k"), 0);
}

static void
test_threads_520_md(void)
{
	struct nvp_bdev *bdev;

	make_malloc("m520", 4096, 520, 4, 0);
	bdev = nvp_bdev_get_by_name("m520");
	CU_ASSERT_EQUAL(nvp_bdev_get_md_size(bdev), 8);
	CU_ASSERT_TRUE(nvp_bdev_is_md_interleaved(bdev));
	run_threads("m520", 4096, false, 9);
	run_threads("m520", 4096, true, 9);
	CU_ASSERT_EQUAL(nvp_bdev_malloc_delete("m520"), 0);
}

static void
test_operations(void)
{
	struct nvp_bdev_channel *ch;
	struct nvp_bdev_desc *desc;
	struct nvme_cpl cpl;
	uint8_t *buf, *buf2;

	make_malloc("mops", 64, 512, 0, 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("mops", true, bfx_event_ignore, NULL, &desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch), 0);
	buf = fx_dma_alloc(8 * 512);
	buf2 = fx_dma_alloc(8 * 512);
	fx_pattern_fill(buf, 8, 8, 512, 7);
	CU_ASSERT_EQUAL(bfx_io(desc, ch, BFX_WRITE, buf, 8, 8, NULL), 0);
	CU_ASSERT_EQUAL(bfx_io(desc, ch, BFX_COMPARE, buf, 8, 8, NULL), 0);
	buf[100] ^= 1;
	CU_ASSERT_EQUAL(bfx_io(desc, ch, BFX_COMPARE, buf, 8, 8, &cpl), -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_MEDIA_ERROR, NVME_SC_COMPARE_FAILURE);
	CU_ASSERT_EQUAL(bfx_io(desc, ch, BFX_WRITE_ZEROES, NULL, 8, 2, NULL), 0);
	CU_ASSERT_EQUAL(bfx_io(desc, ch, BFX_UNMAP, NULL, 10, 2, NULL), 0);
	CU_ASSERT_EQUAL(bfx_io(desc, ch, BFX_FLUSH, NULL, 0, 64, NULL), 0);
	CU_ASSERT_EQUAL(bfx_io(desc, ch, BFX_READ, buf2, 8, 8, NULL), 0);
	CU_ASSERT_TRUE(fx_is_zero(buf2, 4 * 512));
	CU_ASSERT_EQUAL(fx_pattern_check(buf2 + 4 * 512, 12, 4, 512, 7), -1);
	/* byte forms */
	CU_ASSERT_EQUAL(nvp_bdev_read(desc, ch, buf2, 512, 1000, bfx_cpl_cb, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_read(desc, ch, buf2, 64 * 512, 512, bfx_cpl_cb, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_malloc_delete("mops"), -EBUSY);
	nvp_env_dma_free(buf);
	nvp_env_dma_free(buf2);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_malloc_delete("mops"), 0);
	CU_ASSERT_EQUAL(nvp_bdev_malloc_delete("mops"), -ENODEV);
}

static void
test_bad_params(void)
{
	struct nvp_bdev_malloc_opts o;

	nvp_bdev_malloc_opts_init(&o, sizeof(o));
	o.name = "mbad";
	o.num_blocks = 16;
	o.block_size = 1000;
	CU_ASSERT_EQUAL(nvp_bdev_malloc_create(&o, NULL), -EINVAL);
	o.block_size = 512;
	o.num_blocks = 0;
	CU_ASSERT_EQUAL(nvp_bdev_malloc_create(&o, NULL), -EINVAL);
	o.num_blocks = 16;
	o.md_size = 8;
	CU_ASSERT_EQUAL(nvp_bdev_malloc_create(&o, NULL), -EINVAL);
	o.md_size = 0;
	o.name = NULL;
	CU_ASSERT_EQUAL(nvp_bdev_malloc_create(&o, NULL), -EINVAL);
	o.name = "mdup";
	CU_ASSERT_EQUAL(nvp_bdev_malloc_create(&o, NULL), 0);
	CU_ASSERT_EQUAL(nvp_bdev_malloc_create(&o, NULL), -EEXIST);
	CU_ASSERT_PTR_NULL(nvp_bdev_get_by_name("mbad"));
	CU_ASSERT_EQUAL(nvp_bdev_fini(), 0);
	CU_ASSERT_PTR_NULL(nvp_bdev_get_by_name("mdup"));
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "threads_512", test_threads_512 },
		{ "threads_4096_split", test_threads_4096_split },
		{ "threads_520_md", test_threads_520_md },
		{ "operations", test_operations },
		{ "bad_params", test_bad_params },
	};

	return fx_main(argc, argv, "bdev_malloc", tests, NVP_COUNTOF(tests));
}

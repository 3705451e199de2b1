/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The null module: reads return zeroes, writes vanish, every I/O completes on the next
 * poll and not before; several threads at once; bad parameters.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bdev_fx.h"

static void
make_null(const char *name, uint64_t blocks, uint32_t bs)
{
	struct nvp_bdev_null_opts o;

	nvp_bdev_null_opts_init(&o, sizeof(o));
	o.name = name;
	o.num_blocks = blocks;
	o.block_size = bs;
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_null_create(&o, NULL), 0);
}

static void
test_semantics(void)
{
	struct nvp_bdev_channel *ch;
	struct nvp_bdev_desc *desc;
	struct fx_cpl c;
	uint8_t *buf;

	make_null("null0", 1000, 4096);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("null0", true, bfx_event_ignore, NULL, &desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch), 0);
	buf = fx_dma_alloc(4 * 4096);
	memset(buf, 0x5a, 4 * 4096);
	CU_ASSERT_EQUAL(bfx_io(desc, ch, BFX_WRITE, buf, 0, 4, NULL), 0);
	CU_ASSERT_EQUAL(bfx_io(desc, ch, BFX_READ, buf, 0, 4, NULL), 0);
	CU_ASSERT_TRUE(fx_is_zero(buf, 4 * 4096));
	CU_ASSERT_EQUAL(bfx_io(desc, ch, BFX_UNMAP, NULL, 0, 4, NULL), 0);
	CU_ASSERT_EQUAL(bfx_io(desc, ch, BFX_COMPARE, buf, 0, 1, NULL), -ENOTSUP);
	/* completes on the next poll, not inside the call */
	memset(&c, 0, sizeof(c));
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(desc, ch, buf, 1, 1, bfx_cpl_cb, &c), 0);
	CU_ASSERT_EQUAL(c.calls, 0);
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_outstanding(ch), 1);
	CU_ASSERT_EQUAL(nvp_bdev_channel_poll(ch), 1);
	CU_ASSERT_EQUAL(c.calls, 1);
	nvp_env_dma_free(buf);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_null_delete("null0"), 0);
}

/* Four threads, each with a channel in its own poll group, 20000 reads each at QD 32. */
struct nthread {
	uint32_t done;
	int rc;
	uint32_t nonzero;
};

static void
nt_cb(void *arg, const struct nvme_cpl *cpl)
{
	struct nthread *t = arg;

	t->done++;
	if (nvme_cpl_is_error(cpl)) {
		t->rc = -EIO;
	}
}

static void *
nt_main(void *arg)
{
	struct nvp_bdev_channel_opts o;
	struct nvp_bdev_poll_group *g;
	struct nvp_bdev_channel *ch;
	struct nvp_bdev_desc *desc;
	struct nthread *t = arg;
	uint32_t sent = 0;
	uint8_t *buf;
	uint64_t deadline = fx_now_us() + FX_WAIT_MS * 1000ull;
	int rc;

	buf = nvp_env_dma_malloc(32 * 512, 4096, NULL);
	t->rc = nvp_bdev_open("nullmt", false, bfx_event_ignore, NULL, &desc);
	if (t->rc != 0 || buf == NULL) {
		return NULL;
	}
	nvp_bdev_poll_group_create(&g);
	nvp_bdev_channel_opts_init(&o, sizeof(o));
	o.group = g;
	o.io_pool_size = 32;
	t->rc = nvp_bdev_channel_create(desc, &o, &ch);
	while (t->rc == 0 && t->done < 20000 && fx_now_us() < deadline) {
		while (sent < 20000 && sent - t->done < 32) {
			memset(buf + (sent % 32) * 512, 0xff, 512);
			rc = nvp_bdev_read_blocks(desc, ch, buf + (sent % 32) * 512, sent % 1000, 1,
						  nt_cb, t);
			if (rc != 0) {
				t->rc = rc;
				break;
			}
			sent++;
		}
		nvp_bdev_poll_group_poll(g);
	}
	if (t->rc == 0) {
		t->nonzero = !fx_is_zero(buf, 32 * 512);
		nvp_bdev_channel_destroy(ch);
	}
	nvp_bdev_poll_group_destroy(g);
	nvp_bdev_close(desc);
	nvp_env_dma_free(buf);
	return NULL;
}

static void
test_threads(void)
{
	struct nvp_bdev_stats *st = calloc(1, sizeof(*st));
	struct nthread t[4];
	pthread_t th[4];
	int i;

	make_null("nullmt", 1000, 512);
	memset(t, 0, sizeof(t));
	for (i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, nt_main, &t[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CU_ASSERT_EQUAL(t[i].rc, 0);
		CU_ASSERT_EQUAL(t[i].done, 20000);
		CU_ASSERT_EQUAL(t[i].nonzero, 0);
	}
	st->info_size = sizeof(*st);
	CU_ASSERT_EQUAL(nvp_bdev_get_stats(nvp_bdev_get_by_name("nullmt"), st), 0);
	CU_ASSERT_EQUAL(st->op[NVP_BDEV_IO_READ].ios, 80000);
	CU_ASSERT_EQUAL(st->op[NVP_BDEV_IO_READ].bytes, 80000 * 512);
	CU_ASSERT_EQUAL(nvp_histogram_count(&st->op[NVP_BDEV_IO_READ].device), 80000);
	free(st);
	CU_ASSERT_EQUAL(nvp_bdev_null_delete("nullmt"), 0);
}

static void
test_bad_params(void)
{
	struct nvp_bdev_null_opts o;

	nvp_bdev_null_opts_init(&o, sizeof(o));
	o.name = "nbad";
	o.num_blocks = 10;
	o.block_size = 700;
	CU_ASSERT_EQUAL(nvp_bdev_null_create(&o, NULL), -EINVAL);
	o.block_size = 512;
	o.num_blocks = 0;
	CU_ASSERT_EQUAL(nvp_bdev_null_create(&o, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_null_create(NULL, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_null_delete("nbad"), -ENODEV);
	CU_ASSERT_PTR_NULL(nvp_bdev_first());
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "semantics", test_semantics },
		{ "threads", test_threads },
		{ "bad_params", test_bad_params },
	};

	return fx_main(argc, argv, "bdev_null", tests, NVP_COUNTOF(tests));
}

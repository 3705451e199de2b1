/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/bdev/nvme/bdev_nvme.c without a controller: the scatter-list
 * cursor the driver walks for readv/writev, parameter checks naming the parameter,
 * detach of an unknown controller, and the controller of a non-nvme bdev.
 */
#include "ut_bdev.h"

#include "bdev/nvme/bdev_nvme.c"

static void
test_sgl_cursor(void)
{
	static uint8_t mem[8192];
	struct {
		struct nvp_bdev_io io;
		struct nvme_io nio;
	} __attribute__((aligned(64))) x;
	struct iovec iov[3];
	void *addr;
	uint32_t len;

	memset(&x, 0, sizeof(x));
	iov[0].iov_base = mem;
	iov[0].iov_len = 1000;
	iov[1].iov_base = mem + 4096;
	iov[1].iov_len = 3000;
	iov[2].iov_base = mem + 7096;
	iov[2].iov_len = 96;
	x.io.iovs = iov;
	x.io.iovcnt = 3;
	nvme_reset_sgl(&x.io, 0);
	CU_ASSERT_EQUAL(nvme_next_sge(&x.io, &addr, &len), 0);
	CU_ASSERT_PTR_EQUAL(addr, mem);
	CU_ASSERT_EQUAL(len, 1000);
	CU_ASSERT_EQUAL(nvme_next_sge(&x.io, &addr, &len), 0);
	CU_ASSERT_PTR_EQUAL(addr, mem + 4096);
	/* rewind into the middle of the second element */
	nvme_reset_sgl(&x.io, 1500);
	CU_ASSERT_EQUAL(nvme_next_sge(&x.io, &addr, &len), 0);
	CU_ASSERT_PTR_EQUAL(addr, mem + 4096 + 500);
	CU_ASSERT_EQUAL(len, 2500);
	CU_ASSERT_EQUAL(nvme_next_sge(&x.io, &addr, &len), 0);
	CU_ASSERT_EQUAL(len, 96);
	CU_ASSERT_EQUAL(nvme_next_sge(&x.io, &addr, &len), -EINVAL);
}

static void
test_bad_input(void)
{
	struct nvp_bdev_nvme_opts o;

	nvp_bdev_nvme_opts_init(&o, sizeof(o));
	CU_ASSERT_EQUAL(o.ctrlr.opts_size, sizeof(o.ctrlr));
	CU_ASSERT_EQUAL(nvp_bdev_nvme_attach("trtype:emu name:x", &o, NULL, 0, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "name") != NULL);
	o.name = "this-name-is-far-too-long-for-a-ctrlr";
	CU_ASSERT_EQUAL(nvp_bdev_nvme_attach("trtype:emu name:x", &o, NULL, 0, NULL), -EINVAL);
	o.name = "c0";
	CU_ASSERT_EQUAL(nvp_bdev_nvme_attach(NULL, &o, NULL, 0, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "trid") != NULL);
	CU_ASSERT_EQUAL(nvp_bdev_nvme_attach("trtype:emu name:x", NULL, NULL, 0, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "opts") != NULL);
	CU_ASSERT_EQUAL(nvp_bdev_nvme_attach("nonsense", &o, NULL, 0, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_nvme_detach("c0"), -ENODEV);
	CU_ASSERT_EQUAL(nvp_bdev_nvme_detach(NULL), -EINVAL);
	CU_ASSERT_PTR_NULL(nvp_bdev_nvme_get_ctrlr(ut_stub_register("s", 8, 0, 0)));
	CU_ASSERT_PTR_NULL(nvp_bdev_nvme_get_ctrlr(NULL));
	CU_ASSERT_EQUAL(nvp_bdev_fini(), 0);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_sgl_cursor),
		UT_TEST(test_bad_input),
	};

	return ut_run("bdev_nvme", tests, sizeof(tests) / sizeof(tests[0]));
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/bdev/uring/bdev_uring.c: option checks (each bad parameter named),
 * the defaults for what an older caller's shorter options leave out, files that cannot be
 * used (missing, too small, a directory), geometry, the mapping of kernel errors to NVMe
 * status, and a round trip through a real ring over a temporary file (write, read back,
 * write zeroes, unmap, flush, FUA). Skips (exit 77) where the kernel refuses io_uring (a
 * sandbox with io_uring_disabled).
 */
#define _GNU_SOURCE
#include "ut_bdev.h"
#include "bdev/uring/bdev_uring.c"

static char g_dir[64];
static char g_file[128];

/* A temporary file of @bytes, filled with byte @fill. */
static void
make_file(size_t bytes, int fill)
{
	char *buf = malloc(bytes + 1);
	int fd;

	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	memset(buf, fill, bytes + 1);
	fd = open(g_file, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, buf, bytes), (ssize_t)bytes);
	close(fd);
	free(buf);
}

static int
create(const char *name, const char *file, uint32_t bs, enum nvp_bdev_uring_iopoll iopoll,
       struct nvp_bdev **bdev)
{
	struct nvp_bdev_uring_opts o;

	nvp_bdev_uring_opts_init(&o, sizeof(o));
	o.name = name;
	o.filename = file;
	o.block_size = bs;
	o.iopoll = iopoll;
	return nvp_bdev_uring_create(&o, bdev);
}

static void
test_bad_opts(void)
{
	struct nvp_bdev_uring_opts o;

	CU_ASSERT_EQUAL(nvp_bdev_uring_create(NULL, NULL), -EINVAL);
	nvp_bdev_uring_opts_init(&o, sizeof(o));
	o.filename = g_file;
	CU_ASSERT_EQUAL(nvp_bdev_uring_create(&o, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "bad parameter name") != NULL);
	o.name = "u0";
	o.filename = "";
	CU_ASSERT_EQUAL(nvp_bdev_uring_create(&o, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "bad parameter filename") != NULL);
	o.filename = g_file;
	o.block_size = 1000;
	CU_ASSERT_EQUAL(nvp_bdev_uring_create(&o, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "bad parameter block_size") != NULL);
	o.block_size = 256;
	CU_ASSERT_EQUAL(nvp_bdev_uring_create(&o, NULL), -EINVAL);
	o.block_size = 0;
	o.iopoll = (enum nvp_bdev_uring_iopoll)7;
	CU_ASSERT_EQUAL(nvp_bdev_uring_create(&o, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "bad parameter iopoll") != NULL);
	o.iopoll = NVP_BDEV_URING_IOPOLL_AUTO;
	o.opts_size = 0;
	CU_ASSERT_EQUAL(nvp_bdev_uring_create(&o, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "opts_size") != NULL);
	CU_ASSERT_PTR_NULL(nvp_bdev_first());
}

static void
test_bad_files(void)
{
	char missing[160];

	snprintf(missing, sizeof(missing), "%s/none", g_dir);
	CU_ASSERT_EQUAL(create("u0", missing, 0, 0, NULL), -ENOENT);
	CU_ASSERT(strstr(g_ut_last_log, "none") != NULL);
	CU_ASSERT_EQUAL(create("u0", g_dir, 0, 0, NULL), -EISDIR);
	make_file(100, 0);
	CU_ASSERT_EQUAL(create("u0", g_file, 0, 0, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "smaller than one block") != NULL);
	make_file(4096, 0);
	CU_ASSERT_EQUAL(create("u0", g_file, 8192, 0, NULL), -EINVAL);
	CU_ASSERT_PTR_NULL(nvp_bdev_first());
}

/* Fields past an older caller's opts_size take their defaults, whatever follows. */
static void
test_short_opts(void)
{
	struct nvp_bdev_uring_opts o;
	struct nvp_bdev *b = NULL;

	make_file(8 * 4096, 0);
	memset(&o, 0xff, sizeof(o)); /* iopoll 0xffffffff: not a mode */
	o.opts_size = offsetof(struct nvp_bdev_uring_opts, iopoll);
	o.name = "old";
	o.filename = g_file;
	o.block_size = 4096;
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_uring_create(&o, &b), 0);
	CU_ASSERT_EQUAL(nvp_bdev_get_block_size(b), 4096);
	CU_ASSERT_EQUAL(nvp_bdev_uring_delete("old"), 0);
	memset(&o, 0xff, sizeof(o));
	o.opts_size = offsetof(struct nvp_bdev_uring_opts, block_size);
	o.name = "older";
	o.filename = g_file;
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_uring_create(&o, &b), 0);
	CU_ASSERT_EQUAL(nvp_bdev_get_block_size(b), 512); /* detected: a file */
	CU_ASSERT_EQUAL(nvp_bdev_uring_delete("older"), 0);
	o.opts_size = offsetof(struct nvp_bdev_uring_opts, filename);
	CU_ASSERT_EQUAL(nvp_bdev_uring_create(&o, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "bad parameter filename") != NULL);
	o.opts_size = sizeof(o) + 1;
	CU_ASSERT_EQUAL(nvp_bdev_uring_create(&o, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "opts_size") != NULL);
	CU_ASSERT_PTR_NULL(nvp_bdev_first());
}

static void
test_create_geometry_delete(void)
{
	struct nvp_bdev *bdev = NULL, *other = NULL;

	make_file(10 * 4096 + 100, 0); /* the partial block at the end is not part of it */
	CU_ASSERT_EQUAL_FATAL(create("u0", g_file, 0, 0, &bdev), 0);
	CU_ASSERT_PTR_EQUAL(nvp_bdev_get_by_name("u0"), bdev);
	CU_ASSERT_STRING_EQUAL(nvp_bdev_get_module_name(bdev), "uring");
	CU_ASSERT_EQUAL(nvp_bdev_get_block_size(bdev), 512);
	CU_ASSERT_EQUAL(nvp_bdev_get_num_blocks(bdev), 80);
	CU_ASSERT(nvp_bdev_has_write_cache(bdev));
	CU_ASSERT(nvp_bdev_io_type_supported(bdev, NVP_BDEV_IO_UNMAP));
	CU_ASSERT(!nvp_bdev_io_type_supported(bdev, NVP_BDEV_IO_COMPARE));
	CU_ASSERT_EQUAL(create("u0", g_file, 0, 0, NULL), -EEXIST);
	CU_ASSERT_EQUAL_FATAL(create("u1", g_file, 4096, NVP_BDEV_URING_IOPOLL_OFF, &other), 0);
	CU_ASSERT_EQUAL(nvp_bdev_get_num_blocks(other), 10);
	CU_ASSERT(!nvp_bdev_uring_is_iopoll(other));
	CU_ASSERT(!nvp_bdev_uring_is_iopoll(NULL));
	CU_ASSERT(!nvp_bdev_uring_is_direct(NULL));

	/* A regular file on a disk without polled queues: IOPOLL on is refused, auto falls
	 * back. On a file that does allow it, both succeed. */
	if (create("u2", g_file, 0, NVP_BDEV_URING_IOPOLL_ON, NULL) == 0) {
		CU_ASSERT(nvp_bdev_uring_is_iopoll(nvp_bdev_get_by_name("u2")));
		CU_ASSERT_EQUAL(nvp_bdev_uring_delete("u2"), 0);
	} else {
		CU_ASSERT(!nvp_bdev_uring_is_iopoll(bdev));
		CU_ASSERT(strstr(g_ut_last_log, "iopoll=on") != NULL);
	}

	CU_ASSERT_EQUAL(nvp_bdev_uring_delete("nope"), -ENODEV);
	CU_ASSERT_EQUAL(nvp_bdev_uring_delete(NULL), -ENODEV);
	CU_ASSERT_EQUAL(nvp_bdev_uring_delete("u1"), 0);
	CU_ASSERT_EQUAL(nvp_bdev_uring_delete("u0"), 0);
	CU_ASSERT_PTR_NULL(nvp_bdev_first());
}

/* A fake bdev_io for the status mapping. */
static void
test_status_mapping(void)
{
	struct nvp_bdev *bdev = ut_stub_register("s0", 64, 0, 0);
	struct nvp_bdev_channel *ch = NULL;
	struct nvp_bdev_desc *desc = NULL;
	struct ut_events ev = { 0 };
	struct ut_done done = { 0 };
	char buf[1024];
	struct {
		int res;
		uint8_t type, sct, sc;
	} cases[] = {
		{ 1024, NVP_BDEV_IO_READ, 0, 0 },
		{ 512, NVP_BDEV_IO_READ, NVME_SCT_GENERIC, NVME_SC_INTERNAL_DEVICE_ERROR },
		{ -EIO, NVP_BDEV_IO_READ, NVME_SCT_MEDIA_ERROR, NVME_SC_UNRECOVERED_READ_ERROR },
		{ -EIO, NVP_BDEV_IO_WRITE, NVME_SCT_MEDIA_ERROR, NVME_SC_WRITE_FAULTS },
		{ -ENOSPC, NVP_BDEV_IO_WRITE, NVME_SCT_COMMAND_SPECIFIC,
		  NVME_SC_CAPACITY_EXCEEDED },
		{ -EOPNOTSUPP, NVP_BDEV_IO_WRITE, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD },
		{ -EBADF, NVP_BDEV_IO_READ, NVME_SCT_GENERIC, NVME_SC_INTERNAL_DEVICE_ERROR },
	};
	size_t i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(bdev);
	g_stub.auto_complete = false;
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("s0", true, ut_event_cb, &ev, &desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch), 0);
	for (i = 0; i < (sizeof(cases) / sizeof(cases[0])); i++) {
		memset(&done, 0, sizeof(done));
		if (cases[i].type == NVP_BDEV_IO_READ) {
			CU_ASSERT_EQUAL(nvp_bdev_read(desc, ch, buf, 0, 1024, ut_done_cb, &done),
					0);
		} else {
			CU_ASSERT_EQUAL(
				nvp_bdev_write(desc, ch, buf, 0, 1024, 0, ut_done_cb, &done), 0);
		}
		CU_ASSERT_EQUAL_FATAL(g_stub.num_held, 1);
		g_stub.num_held = 0;
		uring_complete(g_stub.held[0], cases[i].res);
		nvp_bdev_channel_poll(ch);
		CU_ASSERT_EQUAL(done.calls, 1);
		CU_ASSERT_EQUAL(done.cpl.status.sct, cases[i].sct);
		CU_ASSERT_EQUAL(done.cpl.status.sc, cases[i].sc);
	}
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_unregister(bdev), 0);
}

/*
 * Poll until @done has been called once, for up to 30 s: a FUA write or a flush waits for
 * the disk under the temporary file, which on a busy machine takes far longer than any
 * fixed number of polls.
 */
static void
wait_done(struct nvp_bdev_channel *ch, struct ut_done *done)
{
	uint64_t end = nvp_env_get_ticks() + 30 * nvp_env_get_ticks_hz();

	do {
		nvp_bdev_channel_poll(ch);
	} while (done->calls == 0 && nvp_env_get_ticks() < end);
	CU_ASSERT_EQUAL(done->calls, 1);
	CU_ASSERT(!nvme_cpl_is_error(&done->cpl));
}

static void
check_file(off_t off, size_t len, int val)
{
	uint8_t b[4096];
	size_t i;
	int fd = open(g_file, O_RDONLY);

	CU_ASSERT_FATAL(fd >= 0 && len <= sizeof(b));
	CU_ASSERT_EQUAL(pread(fd, b, len, off), (ssize_t)len);
	for (i = 0; i < len && b[i] == val; i++) {
	}
	CU_ASSERT_EQUAL(i, len);
	close(fd);
}

static void
test_io_round_trip(void)
{
	struct nvp_bdev_desc *desc = NULL;
	struct nvp_bdev_channel *ch = NULL;
	struct ut_events ev = { 0 };
	struct ut_done done;
	uint8_t *buf = NULL;
	struct iovec iov[2];

	make_file(64 * 512, 0xee);
	CU_ASSERT_EQUAL_FATAL(create("u0", g_file, 0, 0, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("u0", true, ut_event_cb, &ev, &desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch), 0);
	CU_ASSERT_EQUAL_FATAL(posix_memalign((void **)&buf, 4096, 8192), 0);

	memset(buf, 0x5a, 4096);
	memset(&done, 0, sizeof(done));
	CU_ASSERT_EQUAL(nvp_bdev_write_blocks(desc, ch, buf, 8, 8, 0, ut_done_cb, &done), 0);
	wait_done(ch, &done);
	check_file(8 * 512, 4096, 0x5a);

	/* FUA write from two iovecs, then read back into another buffer */
	memset(buf, 0xa5, 4096);
	iov[0] = (struct iovec){ buf, 1024 };
	iov[1] = (struct iovec){ buf + 1024, 3072 };
	memset(&done, 0, sizeof(done));
	CU_ASSERT_EQUAL(nvp_bdev_writev_blocks(desc, ch, iov, 2, 16, 8, NVP_BDEV_WRITE_FUA,
					       ut_done_cb, &done),
			0);
	wait_done(ch, &done);
	memset(buf + 4096, 0, 4096);
	memset(&done, 0, sizeof(done));
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(desc, ch, buf + 4096, 16, 8, ut_done_cb, &done), 0);
	wait_done(ch, &done);
	CU_ASSERT_EQUAL(memcmp(buf, buf + 4096, 4096), 0);

	memset(&done, 0, sizeof(done));
	CU_ASSERT_EQUAL(nvp_bdev_write_zeroes_blocks(desc, ch, 8, 4, 0, ut_done_cb, &done), 0);
	wait_done(ch, &done);
	check_file(8 * 512, 2048, 0);
	check_file(12 * 512, 2048, 0x5a);
	memset(&done, 0, sizeof(done));
	CU_ASSERT_EQUAL(nvp_bdev_unmap_blocks(desc, ch, 32, 8, ut_done_cb, &done), 0);
	wait_done(ch, &done);
	check_file(32 * 512, 4096, 0);
	check_file(40 * 512, 512, 0xee);
	memset(&done, 0, sizeof(done));
	CU_ASSERT_EQUAL(nvp_bdev_flush_blocks(desc, ch, 0, 64, ut_done_cb, &done), 0);
	wait_done(ch, &done);
	CU_ASSERT_EQUAL(nvp_bdev_compare_blocks(desc, ch, buf, 0, 1, ut_done_cb, &done), -ENOTSUP);

	free(buf);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_uring_delete("u0"), 0);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_bad_opts),       UT_TEST(test_bad_files),
		UT_TEST(test_short_opts),     UT_TEST(test_create_geometry_delete),
		UT_TEST(test_status_mapping), UT_TEST(test_io_round_trip),
	};
	struct io_uring ring;
	const char *tmp = getenv("TMPDIR");
	int rc;

	if (io_uring_queue_init(2, &ring, 0) != 0) {
		printf("SKIP: the kernel refuses io_uring here\n");
		return 77;
	}
	io_uring_queue_exit(&ring);
	snprintf(g_dir, sizeof(g_dir), "%s/nvp_uring_ut.XXXXXX", tmp != NULL ? tmp : "/tmp");
	if (mkdtemp(g_dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(g_file, sizeof(g_file), "%s/disk", g_dir);
	rc = ut_run("bdev_uring", tests, (sizeof(tests) / sizeof(tests[0])));
	unlink(g_file);
	rmdir(g_dir);
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The uring module over a regular file in a temporary directory: several threads, each
 * with its own channel (its own ring) on one descriptor, write self-describing patterns
 * at queue depth 8 into their own stripes and read them back; then every block is read
 * again through a single channel and, after the bdev is deleted, straight from the file
 * with pread(), so the data is verified on the kernel's side as well as through nvpoll.
 *
 * NVP_TEST_URING_FILE=/dev/nvme0n1 runs the threads test on that file or block device
 * instead (its first 4 MiB are overwritten), and NVP_TEST_URING_IOPOLL=on requires
 * IORING_SETUP_IOPOLL (the QEMU judge does this on a kernel NVMe device with poll queues).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/io_uring.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fixture.h"
#include "nvpoll/bdev.h"

#define NTHREADS 4
#define QD 8
#define BS 4096u
#define IO_BLOCKS 2u /* 8 KiB per I/O */
#define STRIPE 256u  /* blocks per thread */
#define ROUNDS 6     /* passes over each stripe */
#define NBLOCKS (NTHREADS * STRIPE)

static char g_dir[64];
static char g_file[128];
static bool g_external; /* NVP_TEST_URING_FILE: a file or device of the caller's */
static struct nvp_bdev_desc *g_desc;

struct slot {
	struct fx_cpl done;
	uint8_t *buf;
	uint64_t lba;
	bool busy;
	bool reading;
};

struct worker {
	pthread_t tid;
	uint32_t id;
	uint32_t tag[STRIPE / IO_BLOCKS]; /* tag last written per pair of blocks */
	uint64_t ios;
	long errors;
};

static void
event_cb(enum nvp_bdev_event_type type, struct nvp_bdev *bdev, void *ctx)
{
	(void)type;
	(void)bdev;
	(void)ctx;
}

/* Poll until every slot is idle or the deadline passes. \return 0 or -ETIMEDOUT. */
static int
drain(struct nvp_bdev_channel *ch)
{
	uint64_t deadline = fx_now_us() + FX_WAIT_MS * 1000ull;

	while (nvp_bdev_channel_get_outstanding(ch) != 0) {
		if (fx_now_us() > deadline) {
			return -ETIMEDOUT;
		}
		nvp_bdev_channel_poll(ch);
	}
	return 0;
}

#define NPAIRS (STRIPE / IO_BLOCKS)

/* A slot's completion: a write is followed by the read of the same blocks; a read is
 * checked against the tag its blocks were written with. \return true when the slot is free. */
static bool
reap(struct worker *w, struct nvp_bdev_channel *ch, struct slot *s)
{
	uint64_t rel = s->lba - (uint64_t)w->id * STRIPE;

	w->ios++;
	if (nvme_cpl_is_error(&s->done.cpl)) {
		fx_print_cpl("uring I/O", &s->done.cpl);
		w->errors++;
	} else if (s->reading &&
		   fx_pattern_check(s->buf, s->lba, IO_BLOCKS, BS, w->tag[rel / IO_BLOCKS]) >= 0) {
		w->errors++;
	} else if (!s->reading) {
		s->reading = true;
		memset(&s->done, 0, sizeof(s->done));
		memset(s->buf, 0, IO_BLOCKS * BS);
		if (nvp_bdev_read_blocks(g_desc, ch, s->buf, s->lba, IO_BLOCKS, fx_cpl_cb,
					 &s->done) == 0) {
			return false;
		}
		w->errors++;
	}
	s->busy = false;
	return true;
}

/* Pair @p (a scattered order over the stripe, ROUNDS times) unless a busy slot holds it. */
static bool
start(struct worker *w, struct nvp_bdev_channel *ch, struct slot *slots, struct slot *s, uint32_t p)
{
	uint64_t pair = (uint64_t)(p * 37u) % NPAIRS;
	uint32_t tag = w->id * 1000u + p / NPAIRS + 1, i;

	for (i = 0; i < QD; i++) {
		if (slots[i].busy && slots[i].lba == (uint64_t)w->id * STRIPE + pair * IO_BLOCKS) {
			return false;
		}
	}
	s->lba = (uint64_t)w->id * STRIPE + pair * IO_BLOCKS;
	s->reading = false;
	memset(&s->done, 0, sizeof(s->done));
	w->tag[pair] = tag;
	fx_pattern_fill(s->buf, s->lba, IO_BLOCKS, BS, tag);
	if (nvp_bdev_write_blocks(g_desc, ch, s->buf, s->lba, IO_BLOCKS, 0, fx_cpl_cb, &s->done) !=
	    0) {
		return false;
	}
	s->busy = true;
	return true;
}

static bool
any_busy(const struct slot *slots)
{
	uint32_t i;

	for (i = 0; i < QD; i++) {
		if (slots[i].busy) {
			return true;
		}
	}
	return false;
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct nvp_bdev_channel *ch = NULL;
	struct slot slots[QD];
	uint32_t total = ROUNDS * NPAIRS, next = 0, i;
	uint64_t deadline = fx_now_us() + 60ull * 1000 * 1000;

	if (nvp_bdev_channel_create(g_desc, NULL, &ch) != 0) {
		w->errors = 1;
		return NULL;
	}
	memset(slots, 0, sizeof(slots));
	for (i = 0; i < QD; i++) {
		slots[i].buf = fx_dma_alloc(IO_BLOCKS * BS);
	}
	while ((next < total || any_busy(slots)) && w->errors == 0 && fx_now_us() < deadline) {
		for (i = 0; i < QD; i++) {
			struct slot *s = &slots[i];

			if (s->busy && (s->done.calls == 0 || !reap(w, ch, s))) {
				continue;
			}
			if (next < total && start(w, ch, slots, s, next)) {
				next++;
			}
		}
		nvp_bdev_channel_poll(ch);
	}
	if (drain(ch) != 0 || next < total) {
		fprintf(stderr, "worker %u: %u of %u pairs done, %ld errors\n", w->id, next, total,
			w->errors);
		w->errors++;
	}
	for (i = 0; i < QD; i++) {
		nvp_env_dma_free(slots[i].buf);
	}
	nvp_bdev_channel_destroy(ch);
	return NULL;
}

static void
make_file(size_t bytes)
{
	char *buf = malloc(bytes);
	int fd = open(g_file, O_RDWR | O_CREAT | O_TRUNC, 0600);

	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	CU_ASSERT_FATAL(fd >= 0);
	memset(buf, 0xff, bytes);
	CU_ASSERT_EQUAL(write(fd, buf, bytes), (ssize_t)bytes);
	close(fd);
	free(buf);
}

static struct nvp_bdev *
create(const char *name, enum nvp_bdev_uring_iopoll iopoll, int *rc)
{
	struct nvp_bdev_uring_opts o;
	struct nvp_bdev *bdev = NULL;

	nvp_bdev_uring_opts_init(&o, sizeof(o));
	o.name = name;
	o.filename = g_file;
	o.block_size = BS;
	o.iopoll = iopoll;
	*rc = nvp_bdev_uring_create(&o, &bdev);
	return bdev;
}

/* Read every block through one channel and compare with the workers' last tags. */
static void
verify_through_bdev(struct worker *w)
{
	struct nvp_bdev_channel *ch = NULL;
	uint8_t *buf = fx_dma_alloc(STRIPE * BS);
	struct fx_cpl done;
	uint32_t t, p;

	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(g_desc, NULL, &ch), 0);
	for (t = 0; t < NTHREADS; t++) {
		memset(&done, 0, sizeof(done));
		CU_ASSERT_EQUAL(nvp_bdev_read_blocks(g_desc, ch, buf, (uint64_t)t * STRIPE, STRIPE,
						     fx_cpl_cb, &done),
				0);
		CU_ASSERT_EQUAL(drain(ch), 0);
		CU_ASSERT(done.calls == 1 && !nvme_cpl_is_error(&done.cpl));
		for (p = 0; p < STRIPE / IO_BLOCKS; p++) {
			CU_ASSERT(fx_pattern_check(buf + (size_t)p * IO_BLOCKS * BS,
						   (uint64_t)t * STRIPE + p * IO_BLOCKS, IO_BLOCKS,
						   BS, w[t].tag[p]) < 0);
		}
	}
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
	nvp_env_dma_free(buf);
}

/* The same, from the kernel's side: pread() of the file once the bdev is gone. */
static void
verify_file(struct worker *w)
{
	uint8_t *buf = malloc(IO_BLOCKS * BS);
	int fd = open(g_file, O_RDONLY);
	uint32_t t, p;
	off_t off;

	CU_ASSERT_FATAL(fd >= 0 && buf != NULL);
	for (t = 0; t < NTHREADS; t++) {
		for (p = 0; p < STRIPE / IO_BLOCKS; p++) {
			off = ((off_t)t * STRIPE + p * IO_BLOCKS) * BS;
			CU_ASSERT_EQUAL(pread(fd, buf, IO_BLOCKS * BS, off), IO_BLOCKS * BS);
			CU_ASSERT(fx_pattern_check(buf, (uint64_t)off / BS, IO_BLOCKS, BS,
						   w[t].tag[p]) < 0);
		}
	}
	close(fd);
	free(buf);
}

static void
test_threads_verify(void)
{
	static struct worker w[NTHREADS];
	struct nvp_bdev *bdev;
	uint64_t ios = 0;
	uint32_t t;
	int rc;

	const char *iopoll = getenv("NVP_TEST_URING_IOPOLL");
	bool need_iopoll = iopoll != NULL && strcmp(iopoll, "on") == 0;

	if (!g_external) {
		make_file((size_t)NBLOCKS * BS);
	}
	bdev = create("u0", need_iopoll ? NVP_BDEV_URING_IOPOLL_ON : NVP_BDEV_URING_IOPOLL_AUTO,
		      &rc);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	printf("\n  uring bdev on %s: %s, %s\n", g_file,
	       nvp_bdev_uring_is_direct(bdev) ? "O_DIRECT" : "page cache",
	       nvp_bdev_uring_is_iopoll(bdev) ? "IOPOLL" : "no IOPOLL");
	CU_ASSERT(!need_iopoll || nvp_bdev_uring_is_iopoll(bdev));
	if (g_external) {
		CU_ASSERT_FATAL(nvp_bdev_get_num_blocks(bdev) >= NBLOCKS);
	} else {
		CU_ASSERT_EQUAL(nvp_bdev_get_num_blocks(bdev), NBLOCKS);
	}
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("u0", true, event_cb, NULL, &g_desc), 0);
	memset(w, 0, sizeof(w));
	for (t = 0; t < NTHREADS; t++) {
		w[t].id = t;
		CU_ASSERT_EQUAL_FATAL(pthread_create(&w[t].tid, NULL, worker_main, &w[t]), 0);
	}
	for (t = 0; t < NTHREADS; t++) {
		pthread_join(w[t].tid, NULL);
		CU_ASSERT_EQUAL(w[t].errors, 0);
		ios += w[t].ios;
	}
	CU_ASSERT_EQUAL(ios, (uint64_t)NTHREADS * ROUNDS * NPAIRS * 2);
	verify_through_bdev(w);
	CU_ASSERT_EQUAL(nvp_bdev_close(g_desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_uring_delete("u0"), 0);
	verify_file(w);
}

/* O_DIRECT wants aligned buffers: a misaligned one fails in the completion, nothing worse. */
static void
test_misaligned_buffer(void)
{
	struct nvp_bdev_channel *ch = NULL;
	struct nvp_bdev *bdev;
	uint8_t *buf = fx_dma_alloc(2 * BS);
	struct fx_cpl done;
	int rc;

	if (g_external) {
		printf("SKIP (the caller's file is used by threads_verify only) ");
		nvp_env_dma_free(buf);
		return;
	}
	make_file(16 * BS);
	bdev = create("u1", NVP_BDEV_URING_IOPOLL_OFF, &rc);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT(!nvp_bdev_uring_is_iopoll(bdev));
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("u1", false, event_cb, NULL, &g_desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(g_desc, NULL, &ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_write_blocks(g_desc, ch, buf, 0, 1, 0, fx_cpl_cb, &done), -EBADF);
	memset(&done, 0, sizeof(done));
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(g_desc, ch, buf + 1, 0, 1, fx_cpl_cb, &done), 0);
	CU_ASSERT_EQUAL(drain(ch), 0);
	CU_ASSERT_EQUAL(done.calls, 1);
	if (nvp_bdev_uring_is_direct(bdev)) {
		FX_ASSERT_STATUS(&done.cpl, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
	}
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(g_desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_uring_delete("u1"), 0);
	nvp_env_dma_free(buf);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "threads_verify", test_threads_verify },
		{ "misaligned_buffer", test_misaligned_buffer },
	};
	const char *tmp = getenv("TMPDIR");
	struct io_uring_params p;
	int rc, fd;

	/* A sandbox may refuse io_uring altogether: nothing to test then. */
	memset(&p, 0, sizeof(p));
	fd = (int)syscall(__NR_io_uring_setup, 2, &p);
	if (fd < 0) {
		printf("SKIP: the kernel refuses io_uring here (%s)\n", strerror(errno));
		return 77;
	}
	close(fd);
	if (getenv("NVP_TEST_URING_FILE") != NULL) {
		g_external = true;
		snprintf(g_file, sizeof(g_file), "%s", getenv("NVP_TEST_URING_FILE"));
		return fx_main(argc, argv, "bdev_uring_verify", tests,
			       sizeof(tests) / sizeof(tests[0]));
	}
	snprintf(g_dir, sizeof(g_dir), "%s/nvp_uring.XXXXXX", tmp != NULL ? tmp : "/tmp");
	if (mkdtemp(g_dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(g_file, sizeof(g_file), "%s/disk", g_dir);
	rc = fx_main(argc, argv, "bdev_uring_verify", tests, sizeof(tests) / sizeof(tests[0]));
	unlink(g_file);
	rmdir(g_dir);
	return rc;
}

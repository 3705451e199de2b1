/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/bdev/bdev_io.c: validation at the call (nothing sent), splitting
 * arithmetic (max transfer, boundary, iovec slices, first error, completes once),
 * pool exhaustion and the io_wait callback, the pipeline order through admission and
 * scheduling stages and back, deferral, module -ENOMEM retry, and completions made
 * inside module submit delivered on the next poll; the latencies the stages' feedback
 * gets (the scheduler device time, admission the total), and a split request's queued
 * and device time.
 */
#include "ut_bdev.h"

#include "../ut_lat.h"

struct fixture {
	struct nvp_bdev *bdev;
	struct nvp_bdev_desc *desc;
	struct nvp_bdev_channel *ch;
	struct ut_events ev;
};

static void
fx_open(struct fixture *f, uint64_t blocks, uint32_t max_xfer, uint32_t boundary, uint32_t pool)
{
	struct nvp_bdev_channel_opts o;

	memset(f, 0, sizeof(*f));
	f->bdev = ut_stub_register("io", blocks, max_xfer, boundary);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->bdev);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("io", true, ut_event_cb, &f->ev, &f->desc), 0);
	nvp_bdev_channel_opts_init(&o, sizeof(o));
	if (pool != 0) {
		o.io_pool_size = pool;
	}
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(f->desc, &o, &f->ch), 0);
}

static void
fx_close(struct fixture *f)
{
	int i;

	for (i = 0; i < 100 && nvp_bdev_channel_get_outstanding(f->ch) != 0; i++) {
		nvp_bdev_channel_poll(f->ch);
	}
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(f->ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(f->desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_unregister(f->bdev), 0);
}

static void
test_validation(void)
{
	struct nvp_bdev_desc *ro;
	struct nvp_bdev_channel *rch;
	struct ut_done done = { 0 };
	struct iovec iov[2];
	struct fixture f;
	char buf[4096];

	fx_open(&f, 100, 0, 0, 0);
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 0, 0, ut_done_cb, &done), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 100, 1, ut_done_cb, &done),
			-EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "outside") != NULL);
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 99, 2, ut_done_cb, &done), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 1, UINT64_MAX, ut_done_cb, &done),
			-EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, NULL, 0, 1, ut_done_cb, &done), -EINVAL);
	CU_ASSERT_EQUAL(
		nvp_bdev_write_blocks(f.desc, f.ch, buf, 0, 1, 0x80000000u, ut_done_cb, &done),
		-EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_read(f.desc, f.ch, buf, 100, 512, ut_done_cb, &done), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "multiples") != NULL);
	CU_ASSERT_EQUAL(nvp_bdev_read(f.desc, f.ch, buf, 512, 100, ut_done_cb, &done), -EINVAL);
	iov[0].iov_base = buf;
	iov[0].iov_len = 512;
	iov[1].iov_base = buf + 512;
	iov[1].iov_len = 100;
	CU_ASSERT_EQUAL(nvp_bdev_readv_blocks(f.desc, f.ch, iov, 2, 0, 2, ut_done_cb, &done),
			-EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "iovecs hold") != NULL);
	CU_ASSERT_EQUAL(nvp_bdev_readv_blocks(f.desc, f.ch, NULL, 0, 0, 1, ut_done_cb, &done),
			-EINVAL);
	/* lengths whose sum wraps past 2^64 to the request's size */
	iov[0].iov_len = UINT64_C(1) << 63;
	iov[1].iov_len = (UINT64_C(1) << 63) + 512;
	CU_ASSERT_EQUAL(nvp_bdev_readv_blocks(f.desc, f.ch, iov, 2, 0, 1, ut_done_cb, &done),
			-EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "2^64") != NULL);
	/* no completion callback: refused, never called later */
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 0, 1, NULL, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "callback") != NULL);
	iov[0].iov_len = 512;
	CU_ASSERT_EQUAL(nvp_bdev_readv_blocks(f.desc, f.ch, iov, 1, 0, 1, NULL, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_unmap_blocks(f.desc, f.ch, 0, 1, NULL, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_channel_poll(NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_poll_group_poll(NULL), -EINVAL);
	/* write-type operations through a read-only descriptor */
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("io", false, ut_event_cb, &f.ev, &ro), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(ro, NULL, &rch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_write_blocks(ro, rch, buf, 0, 1, 0, ut_done_cb, &done), -EBADF);
	CU_ASSERT(strstr(g_ut_last_log, "read-only") != NULL);
	CU_ASSERT_EQUAL(nvp_bdev_write_zeroes_blocks(ro, rch, 0, 1, 0, ut_done_cb, &done), -EBADF);
	CU_ASSERT_EQUAL(nvp_bdev_unmap_blocks(ro, rch, 0, 1, ut_done_cb, &done), -EBADF);
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(ro, rch, buf, 0, 1, ut_done_cb, &done), 0);
	/* a channel of another descriptor */
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, rch, buf, 0, 1, ut_done_cb, &done), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_channel_poll(rch), 1);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(rch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(ro), 0);
	/* nothing bad reached the module; the one good read did */
	CU_ASSERT_EQUAL(g_stub.submitted, 1);
	CU_ASSERT_EQUAL(done.calls, 1);
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_outstanding(f.ch), 0);
	CU_ASSERT_EQUAL(ut_free_count(f.ch), f.ch->pool_size);
	fx_close(&f);
}

/* The descriptor's default hint: on writes without one, never over a write's own. */
static void
test_desc_write_hint(void)
{
	static char buf[4 * 512];
	struct ut_done done = { 0 };
	struct iovec iov = { buf, 2 * 512 };
	struct fixture f;
	uint32_t hint_of_long = nvp_bdev_write_flags(0, NVP_NVME_WRITE_HINT_LONG);

	fx_open(&f, 100, 0, 0, 0);
	g_stub.auto_complete = true;
	CU_ASSERT_EQUAL(nvp_bdev_desc_get_write_hint(f.desc), NVP_NVME_WRITE_HINT_NONE);
	CU_ASSERT_EQUAL(nvp_bdev_desc_set_write_hint(f.desc, (enum nvp_nvme_write_hint)5), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "write hint") != NULL);
	CU_ASSERT_EQUAL(nvp_bdev_desc_set_write_hint(NULL, NVP_NVME_WRITE_HINT_SHORT), -EINVAL);
	/* hints 5-7 fit the flag bits but name no lifetime */
	CU_ASSERT_EQUAL(nvp_bdev_write_blocks(f.desc, f.ch, buf, 0, 1,
					      5u << NVP_BDEV_WRITE_HINT_SHIFT, ut_done_cb, &done),
			-EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_writev_blocks(f.desc, f.ch, &iov, 1, 0, 2,
					       NVP_BDEV_WRITE_HINT_MASK, ut_done_cb, &done),
			-EINVAL);
	CU_ASSERT_EQUAL(g_stub.submitted, 0);
	CU_ASSERT_EQUAL(nvp_bdev_desc_set_write_hint(f.desc, NVP_NVME_WRITE_HINT_LONG), 0);
	CU_ASSERT_EQUAL(nvp_bdev_desc_get_write_hint(f.desc), NVP_NVME_WRITE_HINT_LONG);
	CU_ASSERT_EQUAL(nvp_bdev_write_blocks(f.desc, f.ch, buf, 0, 1, NVP_BDEV_WRITE_FUA,
					      ut_done_cb, &done),
			0);
	CU_ASSERT_EQUAL(nvp_bdev_write_blocks(f.desc, f.ch, buf, 0, 1,
					      nvp_bdev_write_flags(0, NVP_NVME_WRITE_HINT_SHORT),
					      ut_done_cb, &done),
			0);
	CU_ASSERT_EQUAL(nvp_bdev_writev_blocks(f.desc, f.ch, &iov, 1, 0, 2, 0, ut_done_cb, &done),
			0);
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 0, 1, ut_done_cb, &done), 0);
	CU_ASSERT_EQUAL(nvp_bdev_write_zeroes_blocks(f.desc, f.ch, 0, 1, 0, ut_done_cb, &done), 0);
	CU_ASSERT_EQUAL_FATAL(g_stub.submitted, 5);
	CU_ASSERT_EQUAL(g_stub.rec[0].flags, NVP_BDEV_WRITE_FUA | hint_of_long);
	CU_ASSERT_EQUAL(g_stub.rec[1].flags, nvp_bdev_write_flags(0, NVP_NVME_WRITE_HINT_SHORT));
	CU_ASSERT_EQUAL(g_stub.rec[2].flags, hint_of_long);
	CU_ASSERT_EQUAL(g_stub.rec[3].flags, 0); /* reads carry no hint */
	CU_ASSERT_EQUAL(g_stub.rec[4].flags, 0); /* nor do zeroes */
	/* back to none */
	CU_ASSERT_EQUAL(nvp_bdev_desc_set_write_hint(f.desc, NVP_NVME_WRITE_HINT_NONE), 0);
	CU_ASSERT_EQUAL(nvp_bdev_write_blocks(f.desc, f.ch, buf, 0, 1, 0, ut_done_cb, &done), 0);
	CU_ASSERT_EQUAL(g_stub.rec[5].flags, 0);
	fx_close(&f);
}

static void
test_split_max_xfer(void)
{
	struct ut_done done = { 0 };
	struct fixture f;
	static char buf[20 * 512];

	fx_open(&f, 1000, 8, 0, 0);
	g_stub.auto_complete = false;
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 10, 20, ut_done_cb, &done), 0);
	CU_ASSERT_EQUAL(g_stub.submitted, 3);
	CU_ASSERT_EQUAL(g_stub.rec[0].offset, 10);
	CU_ASSERT_EQUAL(g_stub.rec[0].num, 8);
	CU_ASSERT_EQUAL(g_stub.rec[1].offset, 18);
	CU_ASSERT_EQUAL(g_stub.rec[1].num, 8);
	CU_ASSERT_EQUAL(g_stub.rec[2].offset, 26);
	CU_ASSERT_EQUAL(g_stub.rec[2].num, 4);
	CU_ASSERT_PTR_EQUAL(g_stub.rec[1].iov[0].iov_base, buf + 8 * 512);
	CU_ASSERT_EQUAL(g_stub.rec[2].iov[0].iov_len, 4 * 512);
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_outstanding(f.ch), 1);
	/* the parent completes once, after every child */
	nvp_bdev_channel_poll(f.ch);
	CU_ASSERT_EQUAL(done.calls, 0);
	stub_complete_held(&g_stub);
	CU_ASSERT_EQUAL(done.calls, 1);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&done.cpl));
	CU_ASSERT_EQUAL(ut_free_count(f.ch), f.ch->pool_size);
	fx_close(&f);
}

static void
test_split_first_error(void)
{
	struct ut_done done = { 0 };
	struct fixture f;
	static char buf[64 * 512];

	fx_open(&f, 1000, 8, 0, 0);
	g_stub.auto_complete = false;
	g_stub.fail_index = 1;
	g_stub.fail_status.sct = NVME_SCT_MEDIA_ERROR;
	g_stub.fail_status.sc = 0x81; /* unrecovered read error */
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 0, 64, ut_done_cb, &done), 0);
	CU_ASSERT_EQUAL(g_stub.submitted, 8);
	stub_complete_held(&g_stub);
	CU_ASSERT_EQUAL(done.calls, 1);
	CU_ASSERT_EQUAL(done.cpl.status.sct, NVME_SCT_MEDIA_ERROR);
	CU_ASSERT_EQUAL(done.cpl.status.sc, 0x81);
	CU_ASSERT_EQUAL(ut_free_count(f.ch), f.ch->pool_size);
	fx_close(&f);
}

static void
test_split_boundary_and_recycle(void)
{
	struct ut_done done = { 0 };
	struct fixture f;
	static char buf[100 * 512];
	uint32_t i;

	/* pool of 3: parent + 2 children in flight; the rest go as children recycle */
	fx_open(&f, 1000, 0, 16, 3);
	g_stub.auto_complete = false;
	CU_ASSERT_EQUAL(nvp_bdev_write_blocks(f.desc, f.ch, buf, 10, 100, NVP_BDEV_WRITE_SYNC,
					      ut_done_cb, &done),
			0);
	CU_ASSERT_EQUAL(g_stub.submitted, 2);
	/* pool empty now: a new request fails with -ENOMEM */
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 0, 1, ut_done_cb, &done), -ENOMEM);
	for (i = 0; i < 10 && done.calls == 0; i++) {
		stub_complete_held(&g_stub);
	}
	CU_ASSERT_EQUAL(done.calls, 1);
	/* 10..16, then 16-block pieces up to 96, then 96..110 */
	CU_ASSERT_EQUAL(g_stub.submitted, 7);
	CU_ASSERT_EQUAL(g_stub.rec[0].offset, 10);
	CU_ASSERT_EQUAL(g_stub.rec[0].num, 6);
	CU_ASSERT_EQUAL(g_stub.rec[1].offset, 16);
	CU_ASSERT_EQUAL(g_stub.rec[1].num, 16);
	CU_ASSERT_EQUAL(g_stub.rec[6].offset, 96);
	CU_ASSERT_EQUAL(g_stub.rec[6].num, 14);
	CU_ASSERT_EQUAL(g_stub.rec[6].flags, NVP_BDEV_WRITE_SYNC);
	CU_ASSERT_PTR_EQUAL(g_stub.rec[6].iov[0].iov_base, buf + 86 * 512);
	fx_close(&f);
}

static void
test_split_iovecs(void)
{
	struct ut_done done = { 0 };
	static char buf[64 * 512];
	struct iovec iov[40];
	struct fixture f;
	uint64_t covered = 0;
	uint32_t i;

	/* 40 segments of 256 bytes = 20 blocks; children may carry 16 segments = 8 blocks */
	for (i = 0; i < 40; i++) {
		iov[i].iov_base = buf + i * 256;
		iov[i].iov_len = 256;
	}
	fx_open(&f, 1000, 10, 0, 0);
	CU_ASSERT_EQUAL(nvp_bdev_readv_blocks(f.desc, f.ch, iov, 40, 0, 20, ut_done_cb, &done), 0);
	nvp_bdev_channel_poll(f.ch);
	nvp_bdev_channel_poll(f.ch);
	CU_ASSERT_EQUAL(done.calls, 1);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&done.cpl));
	for (i = 0; i < g_stub.submitted; i++) {
		CU_ASSERT(g_stub.rec[i].iovcnt <= NVP_BDEV_IO_NUM_IOVS);
		CU_ASSERT_EQUAL(g_stub.rec[i].offset, covered);
		CU_ASSERT_PTR_EQUAL(g_stub.rec[i].iov[0].iov_base, buf + covered * 512);
		covered += g_stub.rec[i].num;
	}
	CU_ASSERT_EQUAL(covered, 20);
	CU_ASSERT_EQUAL(g_stub.rec[0].num, 8);
	fx_close(&f);
}

/* A vector the core would have to split with a block spread over more segments than a
 * child carries: refused at the call, nothing of it written (not a first piece sent and
 * the rest failed). */
static void
test_split_iovecs_unsplittable(void)
{
	struct ut_done done = { 0 };
	static char buf[2 * 512];
	struct iovec iov[33];
	struct fixture f;
	uint32_t i;

	/* block 0 in one segment, block 1 in 32 segments of 16 bytes */
	iov[0].iov_base = buf;
	iov[0].iov_len = 512;
	for (i = 1; i < 33; i++) {
		iov[i].iov_base = buf + 512 + (i - 1) * 16;
		iov[i].iov_len = 16;
	}
	fx_open(&f, 100, 1, 0, 0);
	CU_ASSERT_EQUAL(nvp_bdev_writev_blocks(f.desc, f.ch, iov, 33, 0, 2, 0, ut_done_cb, &done),
			-EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "spans more than") != NULL);
	CU_ASSERT_EQUAL(g_stub.submitted, 0);
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_outstanding(f.ch), 0);
	CU_ASSERT_EQUAL(ut_free_count(f.ch), f.ch->pool_size);
	/* 16 segments for that block fit: it goes, in two children */
	for (i = 1; i < 17; i++) {
		iov[i].iov_len = 32;
		iov[i].iov_base = buf + 512 + (i - 1) * 32;
	}
	CU_ASSERT_EQUAL(nvp_bdev_writev_blocks(f.desc, f.ch, iov, 17, 0, 2, 0, ut_done_cb, &done),
			0);
	nvp_bdev_channel_poll(f.ch);
	nvp_bdev_channel_poll(f.ch);
	CU_ASSERT_EQUAL(done.calls, 1);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&done.cpl));
	CU_ASSERT_EQUAL(g_stub.submitted, 2);
	CU_ASSERT_EQUAL(g_stub.rec[1].iovcnt, 16);
	fx_close(&f);
}

/*
 * nvp_bdev_get_max_ios_per_request(): never fewer than a request takes from the pool at
 * once, wherever it starts; exact where only one limit splits.
 */
static void
test_max_ios_per_request(void)
{
	static const struct {
		uint32_t max_xfer, boundary;
	} limits[] = { { 0, 0 }, { 8, 0 }, { 0, 16 }, { 8, 12 }, { 10, 16 }, { 3, 0 }, { 16, 16 } };
	static const uint32_t sizes[] = { 1, 7, 8, 9, 16, 17, 20, 100, 400 };
	static char buf[400 * 512];
	struct ut_done done = { 0 };
	struct fixture f;
	uint32_t l, i, off, want, used, most;

	for (l = 0; l < sizeof(limits) / sizeof(limits[0]); l++) {
		fx_open(&f, 1000, limits[l].max_xfer, limits[l].boundary, 0);
		g_stub.auto_complete = false;
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			want = nvp_bdev_get_max_ios_per_request(f.bdev, sizes[i] * 512ull);
			for (most = 0, off = 0; off < 32; off++) {
				CU_ASSERT_EQUAL_FATAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, off,
									   sizes[i], ut_done_cb,
									   &done),
						      0);
				used = f.ch->pool_size - ut_free_count(f.ch);
				CU_ASSERT(used <= want);
				most = NVP_MAX(most, used);
				while (nvp_bdev_channel_get_outstanding(f.ch) != 0) {
					stub_complete_held(&g_stub);
				}
			}
			if (limits[l].max_xfer == 0 || limits[l].boundary == 0) {
				CU_ASSERT_EQUAL(most, want);
			}
		}
		fx_close(&f);
	}
	CU_ASSERT_EQUAL(nvp_bdev_get_max_ios_per_request(NULL, 4096), 1);
}

struct waiter {
	struct nvp_bdev_io_wait_entry entry;
	struct fixture *f;
	struct ut_done *done;
	int rc;
	uint32_t calls;
};

static char g_wbuf[512];

/* @w waits on @f's channel with @cb_fn, its I/O reporting to @done; rc -1 until it runs. */
static void
waiter_init(struct waiter *w, struct fixture *f, nvp_bdev_io_wait_cb cb_fn, struct ut_done *done)
{
	memset(w, 0, sizeof(*w));
	w->entry.bdev = f->bdev;
	w->entry.cb_fn = cb_fn;
	w->entry.cb_arg = w;
	w->f = f;
	w->done = done;
	w->rc = -1;
}

static void
wait_cb(void *arg)
{
	struct waiter *w = arg;

	w->calls++;
	w->rc = nvp_bdev_read_blocks(w->f->desc, w->f->ch, g_wbuf, 0, 1, ut_done_cb, w->done);
}

static void
test_pool_exhaustion_and_wait(void)
{
	struct ut_done done = { 0 }, wdone = { 0 };
	struct waiter w;
	struct fixture f;
	char buf[512];
	int i;

	fx_open(&f, 100, 0, 0, 4);
	g_stub.auto_complete = false;
	for (i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, i, 1, ut_done_cb, &done),
				0);
	}
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 0, 1, ut_done_cb, &done), -ENOMEM);
	waiter_init(&w, &f, wait_cb, &wdone);
	CU_ASSERT_EQUAL(nvp_bdev_queue_io_wait(NULL, f.ch, &w.entry), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_queue_io_wait(f.bdev, f.ch, &w.entry), 0);
	/* twice: refused (linked twice, the list looped on itself) */
	CU_ASSERT_EQUAL(nvp_bdev_queue_io_wait(f.bdev, f.ch, &w.entry), -EBUSY);
	CU_ASSERT(strstr(g_ut_last_log, "queued already") != NULL);
	nvp_bdev_channel_poll(f.ch);
	CU_ASSERT_EQUAL(w.calls, 0);
	/* one completion frees one bdev_io: the waiter runs once and resubmits */
	g_stub.num_held = 1;
	stub_complete_held(&g_stub);
	CU_ASSERT_EQUAL(w.calls, 1);
	CU_ASSERT_EQUAL(w.rc, 0);
	CU_ASSERT_EQUAL(done.calls, 1);
	/* held[] is now the waiter's read and the three older ones */
	g_stub.num_held = 4;
	g_stub.auto_complete = true;
	nvp_bdev_channel_poll(f.ch);
	CU_ASSERT_EQUAL(done.calls, 4);
	CU_ASSERT_EQUAL(wdone.calls, 1);
	CU_ASSERT_EQUAL(w.calls, 1);
	fx_close(&f);
}

/* A waiter whose request must be split needs two bdev_ios: with one free, it queues
 * itself again and the poll returns (it ran forever). It is served once two are. */
static void
wait_split_cb(void *arg)
{
	struct waiter *w = arg;

	w->calls++;
	w->rc = nvp_bdev_read_blocks(w->f->desc, w->f->ch, g_wbuf, 0, 2, ut_done_cb, w->done);
	if (w->rc == -ENOMEM && w->calls < 100) {
		CU_ASSERT_EQUAL(nvp_bdev_queue_io_wait(w->f->bdev, w->f->ch, &w->entry), 0);
	}
}

static void
test_wait_for_a_split(void)
{
	struct ut_done done = { 0 }, wdone = { 0 };
	struct nvp_bdev_io *second;
	static char buf[2 * 512];
	struct waiter w;
	struct fixture f;
	struct iovec bad = { buf, 100 };

	/* pool of 3: one 2-block read takes all (parent, two children) */
	fx_open(&f, 100, 1, 0, 3);
	g_stub.auto_complete = false;
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 0, 2, ut_done_cb, &done), 0);
	CU_ASSERT_EQUAL(g_stub.num_held, 2);
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 0, 2, ut_done_cb, &done), -ENOMEM);
	/* the pool is empty: a bad vector is still -EINVAL, not -ENOMEM */
	CU_ASSERT_EQUAL(nvp_bdev_readv_blocks(f.desc, f.ch, &bad, 1, 0, 1, ut_done_cb, &done),
			-EINVAL);
	waiter_init(&w, &f, wait_split_cb, &wdone);
	CU_ASSERT_EQUAL(nvp_bdev_queue_io_wait(f.bdev, f.ch, &w.entry), 0);
	/* the first child completes: one bdev_io free, the waiter tries once and waits on */
	second = g_stub.held[1];
	g_stub.num_held = 1;
	stub_complete_held(&g_stub);
	CU_ASSERT_EQUAL(w.calls, 1);
	CU_ASSERT_EQUAL(w.rc, -ENOMEM);
	CU_ASSERT_EQUAL(done.calls, 0);
	/* a poll with still one free: one more try at most, and the poll returns */
	nvp_bdev_channel_poll(f.ch);
	CU_ASSERT(w.calls <= 2);
	/* the second child completes: the first read is done, its three bdev_ios free */
	g_stub.held[0] = second;
	g_stub.num_held = 1;
	stub_complete_held(&g_stub);
	CU_ASSERT_EQUAL(done.calls, 1);
	CU_ASSERT_EQUAL(w.rc, 0);
	CU_ASSERT(w.calls <= 3);
	g_stub.auto_complete = true;
	nvp_bdev_channel_poll(f.ch);
	nvp_bdev_channel_poll(f.ch);
	CU_ASSERT_EQUAL(wdone.calls, 1);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&wdone.cpl));
	fx_close(&f);
}

/* A completion callback that submits again, as a benchmark's does. */
struct again {
	struct fixture *f;
	struct ut_done *done;
	int rc;
	uint32_t calls;
};

static void
again_cb(void *arg, const struct nvme_cpl *cpl)
{
	struct again *a = arg;

	(void)cpl;
	a->calls++;
	a->rc = nvp_bdev_read_blocks(a->f->desc, a->f->ch, g_wbuf, 0, 1, ut_done_cb, a->done);
}

/*
 * A bdev_io freed while a waiter waits goes to the waiter, not to what the freed I/O's
 * callback submits: that is refused and can wait behind it. Before, the callback took it
 * every time and the waiter starved.
 */
static void
test_wait_before_callback(void)
{
	struct ut_done done = { 0 }, wdone = { 0 };
	struct again a = { 0 };
	struct waiter w;
	struct fixture f;
	char buf[512];

	fx_open(&f, 100, 0, 0, 2);
	g_stub.auto_complete = false;
	a.f = &f;
	a.done = &done;
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 0, 1, again_cb, &a), 0);
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 1, 1, ut_done_cb, &done), 0);
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 2, 1, ut_done_cb, &done), -ENOMEM);
	waiter_init(&w, &f, wait_cb, &wdone);
	CU_ASSERT_EQUAL(nvp_bdev_queue_io_wait(f.bdev, f.ch, &w.entry), 0);
	g_stub.num_held = 1; /* the first read completes */
	stub_complete_held(&g_stub);
	CU_ASSERT_EQUAL(w.calls, 1);
	CU_ASSERT_EQUAL(w.rc, 0);
	CU_ASSERT_EQUAL(a.calls, 1);
	CU_ASSERT_EQUAL(a.rc, -ENOMEM);
	/* held[] is now the waiter's read and the second one */
	g_stub.num_held = 2;
	g_stub.auto_complete = true;
	nvp_bdev_channel_poll(f.ch);
	CU_ASSERT_EQUAL(done.calls, 1);
	CU_ASSERT_EQUAL(wdone.calls, 1);
	fx_close(&f);
}

/* The first of a list's callbacks: takes the bdev_io its I/O freed, is refused a second
 * and queues a waiter for it. */
struct first_cb {
	struct fixture *f;
	struct waiter *w;
	struct ut_done *done;
	int rc;
};

static void
first_cb(void *arg, const struct nvme_cpl *cpl)
{
	struct first_cb *c = arg;

	(void)cpl;
	CU_ASSERT_EQUAL(
		nvp_bdev_read_blocks(c->f->desc, c->f->ch, g_wbuf, 3, 1, ut_done_cb, c->done), 0);
	c->rc = nvp_bdev_read_blocks(c->f->desc, c->f->ch, g_wbuf, 4, 1, ut_done_cb, c->done);
	if (c->rc == -ENOMEM) {
		CU_ASSERT_EQUAL(nvp_bdev_queue_io_wait(c->f->bdev, c->f->ch, &c->w->entry), 0);
	}
}

/* A waiter queued by a callback of a list (or a batch) while it is being completed: the
 * next I/O of the list frees a bdev_io, and the waiter gets it before that I/O's callback. */
static void
test_wait_before_callback_in_list(void)
{
	struct ut_done done = { 0 }, wdone = { 0 };
	struct first_cb c = { 0 };
	struct again a = { 0 };
	struct waiter w;
	struct fixture f;
	char buf[512];

	fx_open(&f, 100, 0, 0, 2);
	g_stub.auto_complete = false;
	waiter_init(&w, &f, wait_cb, &wdone);
	c.f = &f;
	c.w = &w;
	c.done = &done;
	a.f = &f;
	a.done = &done;
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 0, 1, first_cb, &c), 0);
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 1, 1, again_cb, &a), 0);
	stub_complete_held(&g_stub); /* both, one list where the module gives lists */
	CU_ASSERT_EQUAL(c.rc, -ENOMEM);
	CU_ASSERT_EQUAL(w.calls, 1);
	CU_ASSERT_EQUAL(w.rc, 0);
	CU_ASSERT_EQUAL(a.calls, 1);
	CU_ASSERT_EQUAL(a.rc, -ENOMEM);
	g_stub.auto_complete = true;
	nvp_bdev_channel_poll(f.ch);
	nvp_bdev_channel_poll(f.ch);
	CU_ASSERT_EQUAL(wdone.calls, 1);
	fx_close(&f);
}

static void
test_enomem_retry_and_inline_completion(void)
{
	struct ut_done done = { 0 };
	struct fixture f;
	char buf[512];

	fx_open(&f, 100, 0, 0, 0);
	g_stub.enomem_next = 2;
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 0, 1, ut_done_cb, &done), 0);
	CU_ASSERT_EQUAL(g_stub.submitted, 0);
	nvp_bdev_channel_poll(f.ch); /* refused again */
	CU_ASSERT_EQUAL(g_stub.submitted, 0);
	nvp_bdev_channel_poll(f.ch); /* accepted; the stub completes it on the next poll */
	CU_ASSERT_EQUAL(g_stub.submitted, 1);
	nvp_bdev_channel_poll(f.ch);
	CU_ASSERT_EQUAL(done.calls, 1);

	/* a module completing inside submit: never a callback from inside the call */
	g_stub.complete_in_submit = true;
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 0, 1, ut_done_cb, &done), 0);
	CU_ASSERT_EQUAL(done.calls, 1);
	CU_ASSERT_EQUAL(nvp_bdev_channel_poll(f.ch), 1);
	CU_ASSERT_EQUAL(done.calls, 2);
	fx_close(&f);
}

/* ---- pipeline order: a test admission stage and scheduler writing a trace ---- */

static char g_trace[256];
static int g_defer_next;

static int
t_admit(void *ch_ctx, struct nvp_bdev_io *io, uint64_t now)
{
	(void)ch_ctx;
	(void)io;
	(void)now;
	if (g_defer_next > 0) {
		g_defer_next--;
		strcat(g_trace, "d");
		return NVP_BDEV_ADMIT_DEFER;
	}
	strcat(g_trace, "A");
	return NVP_BDEV_ADMIT_GO;
}

static void
t_admit_complete(void *ch_ctx, struct nvp_bdev_io *io, uint64_t latency, uint64_t now)
{
	(void)ch_ctx;
	(void)io;
	CU_ASSERT(latency <= now);
	strcat(g_trace, "a");
}

static struct nvp_bdev_io *g_sq[8];
static int g_sq_n;
static int g_sub_tenant = -1; /* io->tenant as the scheduler saw it */

static void
t_submit(void *ch_ctx, struct nvp_bdev_io *io, uint64_t now)
{
	(void)ch_ctx;
	(void)now;
	g_sub_tenant = io->tenant;
	g_sq[g_sq_n++] = io;
	strcat(g_trace, "S");
}

static struct nvp_bdev_io *
t_dispatch(void *ch_ctx, uint64_t now)
{
	(void)ch_ctx;
	(void)now;
	if (g_sq_n == 0) {
		return NULL;
	}
	strcat(g_trace, "D");
	return g_sq[--g_sq_n];
}

static void
t_complete(void *ch_ctx, struct nvp_bdev_io *io, uint64_t latency, uint64_t now)
{
	(void)ch_ctx;
	(void)io;
	(void)latency;
	(void)now;
	strcat(g_trace, "s");
}

static bool
t_has_work(void *ch_ctx, uint64_t *next)
{
	(void)ch_ctx;
	*next = 0;
	return g_sq_n != 0;
}

static const struct nvp_bdev_admission_ops g_t_admit = {
	.name = "t_admit",
	.admit = t_admit,
	.complete = t_admit_complete,
};
static const struct nvp_bdev_sched_ops g_t_sched = {
	.name = "t_sched",
	.submit = t_submit,
	.dispatch = t_dispatch,
	.complete = t_complete,
	.has_work = t_has_work,
};

static void
test_pipeline_order(void)
{
	struct ut_done done = { 0 };
	struct nvp_bdev_channel_opts o;
	struct fixture f;
	char buf[512];

	CU_ASSERT_EQUAL(nvp_bdev_admission_register(&g_t_admit), UT_REGISTERED);
	CU_ASSERT_EQUAL(nvp_bdev_scheduler_register(&g_t_sched), UT_REGISTERED);
	memset(&f, 0, sizeof(f));
	f.bdev = ut_stub_register("io", 100, 0, 0);
	CU_ASSERT_EQUAL(nvp_bdev_set_admission(f.bdev, "t_admit", NULL), 0);
	CU_ASSERT_EQUAL(nvp_bdev_set_scheduler(f.bdev, "t_sched", NULL), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("io", true, ut_event_cb, &f.ev, &f.desc), 0);
	nvp_bdev_channel_opts_init(&o, sizeof(o));
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(f.desc, &o, &f.ch), 0);
	memset(g_trace, 0, sizeof(g_trace));
	g_stub.trace = g_trace;
	done.trace = g_trace;
	/* the stages see the descriptor's tenant (set for them, not by every I/O call) */
	CU_ASSERT_EQUAL(nvp_bdev_desc_set_tenant(f.desc, 3), 0);

	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 0, 1, ut_done_cb, &done), 0);
	CU_ASSERT_EQUAL(g_sub_tenant, 3);
	nvp_bdev_channel_poll(f.ch);
	/* down: admit, sched submit, dispatch, module; up: module, sched, admission, user */
	CU_ASSERT_STRING_EQUAL(g_trace, "ASDMmsaU");

	/* deferred by admission: retried from the poll loop, order kept */
	memset(g_trace, 0, sizeof(g_trace));
	g_defer_next = 1;
	CU_ASSERT_EQUAL(nvp_bdev_write_blocks(f.desc, f.ch, buf, 1, 1, NVP_BDEV_WRITE_BACKGROUND,
					      ut_done_cb, &done),
			0);
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_deferred_count(f.ch), 1);
	CU_ASSERT_STRING_EQUAL(g_trace, "d");
	nvp_bdev_channel_poll(f.ch);
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_deferred_count(f.ch), 0);
	CU_ASSERT_STRING_EQUAL(g_trace, "dASDMmsaU");
	CU_ASSERT_EQUAL(done.calls, 2);
	CU_ASSERT_EQUAL(g_stub.rec[1].flags, NVP_BDEV_WRITE_BACKGROUND);

	/* a read the stage lets go passes a deferred background write */
	g_defer_next = 1;
	CU_ASSERT_EQUAL(nvp_bdev_write_blocks(f.desc, f.ch, buf, 1, 1, NVP_BDEV_WRITE_BACKGROUND,
					      ut_done_cb, &done),
			0);
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 2, 1, ut_done_cb, &done), 0);
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_deferred_count(f.ch), 1);
	CU_ASSERT_EQUAL(g_stub.submitted, 3);
	CU_ASSERT_EQUAL(g_stub.rec[2].type, NVP_BDEV_IO_READ);
	nvp_bdev_channel_poll(f.ch);
	nvp_bdev_channel_poll(f.ch);
	CU_ASSERT_EQUAL(done.calls, 4);
	CU_ASSERT_EQUAL(g_stub.rec[3].type, NVP_BDEV_IO_WRITE);
	fx_close(&f);
}

/* ---- the scheduler is asked only while it holds I/O ---- */

static bool g_hold;
static uint32_t g_disp_calls, g_hw_calls;

static struct nvp_bdev_io *
h_dispatch(void *ch_ctx, uint64_t now)
{
	(void)ch_ctx;
	(void)now;
	g_disp_calls++;
	return g_hold || g_sq_n == 0 ? NULL : g_sq[--g_sq_n];
}

static bool
h_has_work(void *ch_ctx, uint64_t *next)
{
	(void)ch_ctx;
	g_hw_calls++;
	*next = 0;
	return g_sq_n != 0;
}

static const struct nvp_bdev_sched_ops g_h_sched = {
	.name = "t_hold",
	.submit = t_submit,
	.dispatch = h_dispatch,
	.complete = t_complete,
	.has_work = h_has_work,
};

static void
test_sched_asked_while_holding(void)
{
	struct ut_done done = { 0 };
	struct nvp_bdev_channel_opts o;
	struct fixture f;
	char buf[512];

	CU_ASSERT_EQUAL(nvp_bdev_scheduler_register(&g_h_sched), UT_REGISTERED);
	memset(&f, 0, sizeof(f));
	f.bdev = ut_stub_register("io", 100, 0, 0);
	CU_ASSERT_EQUAL(nvp_bdev_set_scheduler(f.bdev, "t_hold", NULL), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("io", true, ut_event_cb, &f.ev, &f.desc), 0);
	nvp_bdev_channel_opts_init(&o, sizeof(o));
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(f.desc, &o, &f.ch), 0);
	g_sq_n = 0;
	g_hold = false;
	g_disp_calls = g_hw_calls = 0;
	memset(g_trace, 0, sizeof(g_trace));

	/* passed straight on: one dispatch call per I/O, no has_work, nothing on the poll */
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 0, 1, ut_done_cb, &done), 0);
	CU_ASSERT_EQUAL(g_stub.submitted, 1);
	nvp_bdev_channel_poll(f.ch);
	nvp_bdev_channel_poll(f.ch);
	CU_ASSERT_EQUAL(done.calls, 1);
	CU_ASSERT_EQUAL(g_disp_calls, 1);
	CU_ASSERT_EQUAL(g_hw_calls, 0);

	/* held back: asked again from each poll (has_work once a poll) until it lets go */
	g_hold = true;
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 1, 1, ut_done_cb, &done), 0);
	CU_ASSERT_EQUAL(g_stub.submitted, 1);
	CU_ASSERT_EQUAL(g_disp_calls, 2);
	nvp_bdev_channel_poll(f.ch);
	CU_ASSERT_EQUAL(g_disp_calls, 3);
	CU_ASSERT_EQUAL(g_hw_calls, 1);
	CU_ASSERT_EQUAL(g_stub.submitted, 1);
	g_hold = false;
	nvp_bdev_channel_poll(f.ch);
	CU_ASSERT_EQUAL(g_stub.submitted, 2);
	CU_ASSERT_EQUAL(g_hw_calls, 1);
	nvp_bdev_channel_poll(f.ch);
	CU_ASSERT_EQUAL(done.calls, 2);
	/* nothing held: later polls leave the scheduler alone */
	nvp_bdev_channel_poll(f.ch);
	CU_ASSERT_EQUAL(g_disp_calls, 4);
	CU_ASSERT_EQUAL(g_hw_calls, 1);
	fx_close(&f);
}

/* ---- latency feedback: the scheduler is given device time, admission the total ---- */

static struct {
	struct nvp_bdev_io *held; /* by the scheduler */
	bool hold;
	uint64_t admitted, dispatched; /* the times the stages were given */
	uint64_t sched_lat, sched_now, admit_lat, admit_now;
	uint32_t sched_calls, admit_calls;
} g_lat;

static int
l_admit(void *ch_ctx, struct nvp_bdev_io *io, uint64_t now)
{
	(void)ch_ctx;
	(void)io;
	g_lat.admitted = now;
	return NVP_BDEV_ADMIT_GO;
}

static void
l_admit_complete(void *ch_ctx, struct nvp_bdev_io *io, uint64_t latency, uint64_t now)
{
	(void)ch_ctx;
	(void)io;
	g_lat.admit_lat = latency;
	g_lat.admit_now = now;
	g_lat.admit_calls++;
}

static void
l_submit(void *ch_ctx, struct nvp_bdev_io *io, uint64_t now)
{
	(void)ch_ctx;
	(void)now;
	g_lat.held = io;
}

static struct nvp_bdev_io *
l_dispatch(void *ch_ctx, uint64_t now)
{
	struct nvp_bdev_io *io = g_lat.hold ? NULL : g_lat.held;

	(void)ch_ctx;
	if (io != NULL) {
		g_lat.held = NULL;
		g_lat.dispatched = now;
	}
	return io;
}

static void
l_complete(void *ch_ctx, struct nvp_bdev_io *io, uint64_t latency, uint64_t now)
{
	(void)ch_ctx;
	(void)io;
	g_lat.sched_lat = latency;
	g_lat.sched_now = now;
	g_lat.sched_calls++;
}

static bool
l_has_work(void *ch_ctx, uint64_t *next)
{
	(void)ch_ctx;
	*next = 0;
	return g_lat.held != NULL;
}

static const struct nvp_bdev_admission_ops g_l_admit = {
	.name = "t_lat_admit",
	.admit = l_admit,
	.complete = l_admit_complete,
};
static const struct nvp_bdev_sched_ops g_l_sched = {
	.name = "t_lat_sched",
	.submit = l_submit,
	.dispatch = l_dispatch,
	.complete = l_complete,
	.has_work = l_has_work,
};

/*
 * What the stages' loops feed on: kyber's and fair's complete() get the device time
 * (from the module's submission), the throttle's the total (from the call, the time
 * held by the scheduler included). Each read here waits in the scheduler a variable
 * while (the clock is spun until it has moved that far: nothing is timed) and at the
 * device a seeded lognormal time (the module's completion time, by lists).
 */
static void
test_stage_latencies(void)
{
	struct ut_done done = { 0 };
	struct ut_lat rng;
	struct fixture f;
	uint64_t hz = nvp_env_get_ticks_hz(), until;
	char buf[512];
	uint32_t i;

	CU_ASSERT_EQUAL(nvp_bdev_admission_register(&g_l_admit), UT_REGISTERED);
	CU_ASSERT_EQUAL(nvp_bdev_scheduler_register(&g_l_sched), UT_REGISTERED);
	fx_open(&f, 100, 0, 0, 0);
	nvp_bdev_channel_destroy(f.ch);
	CU_ASSERT_EQUAL(nvp_bdev_set_admission(f.bdev, "t_lat_admit", NULL), 0);
	CU_ASSERT_EQUAL(nvp_bdev_set_scheduler(f.bdev, "t_lat_sched", NULL), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(f.desc, NULL, &f.ch), 0);
	memset(&g_lat, 0, sizeof(g_lat));
	ut_lat_seed(&rng, 1);
	for (i = 0; i < 50; i++) {
		g_lat.hold = true;
		g_stub.auto_complete = false;
		CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, i, 1, ut_done_cb, &done),
				0);
		CU_ASSERT_PTR_NOT_NULL(g_lat.held);
		until = g_lat.admitted + 1 + ut_lat_lognormal(&rng, hz / 500000, hz / 100000);
		while (nvp_env_get_ticks() < until) {
		}
		g_lat.hold = false;
		nvp_bdev_channel_poll(f.ch); /* dispatched to the module */
		CU_ASSERT_EQUAL(g_stub.num_held, 1);
		CU_ASSERT(g_lat.dispatched >= until);
		g_stub.complete_at = g_lat.dispatched +
				     ut_lat_lognormal(&rng, hz / 10000, hz / 2000);
		g_stub.auto_complete = true;
		nvp_bdev_channel_poll(f.ch);
		CU_ASSERT_EQUAL(done.calls, i + 1);
		CU_ASSERT_EQUAL(g_lat.sched_calls, i + 1);
		CU_ASSERT_EQUAL(g_lat.admit_calls, i + 1);
		CU_ASSERT_EQUAL(g_lat.sched_lat, g_lat.sched_now - g_lat.dispatched);
		CU_ASSERT_EQUAL(g_lat.admit_lat, g_lat.admit_now - g_lat.admitted);
		CU_ASSERT_EQUAL(g_lat.admit_now, g_lat.sched_now);
		if (g_ut_stub_lists) {
			CU_ASSERT_EQUAL(g_lat.sched_now, g_stub.complete_at);
		}
	}
	fx_close(&f);
}

/*
 * A split request's queued time ends when its first child goes to the module, and its
 * device time runs from there to the last child's completion: a request of 100 blocks
 * in 16-block pieces with two children at a time, each child's completion some way
 * ahead of the clock (by lists), so the pieces go out over a long device time and none
 * of it is counted as queued.
 */
static void
test_split_times(void)
{
	static struct nvp_bdev_stats stats = { .info_size = sizeof(struct nvp_bdev_stats) };
	const uint64_t ahead = 1000000000ull;
	struct ut_done done = { 0 };
	struct ut_lat rng;
	struct fixture f;
	static char buf[100 * 512];
	uint64_t t0, t1, at;
	uint32_t i;

	if (!g_ut_stub_lists) {
		return; /* a module completing one by one gives no time: the other suite */
	}
	ut_lat_seed(&rng, 2);
	fx_open(&f, 1000, 0, 16, 3);
	g_stub.auto_complete = false;
	t0 = nvp_env_get_ticks();
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(f.desc, f.ch, buf, 10, 100, ut_done_cb, &done), 0);
	t1 = nvp_env_get_ticks();
	CU_ASSERT_EQUAL(g_stub.submitted, 2);
	at = t1 + ahead;
	for (i = 0; i < 10 && done.calls == 0; i++) {
		at += ut_lat_lognormal(&rng, 100000, 400000);
		g_stub.complete_at = at;
		stub_complete_held(&g_stub);
	}
	CU_ASSERT_EQUAL(done.calls, 1);
	CU_ASSERT_EQUAL(g_stub.submitted, 7);
	CU_ASSERT_EQUAL(nvp_bdev_get_stats(f.bdev, &stats), 0);
	CU_ASSERT_EQUAL(stats.op[NVP_BDEV_IO_READ].ios, 1);
	/* queued: from the call to the first child's submission, within the call */
	CU_ASSERT(nvp_histogram_max(&stats.op[NVP_BDEV_IO_READ].queued) <= t1 - t0);
	/* device: from there to the poll that completed the last child */
	CU_ASSERT(nvp_histogram_min(&stats.op[NVP_BDEV_IO_READ].device) >= at - t1);
	CU_ASSERT(nvp_histogram_max(&stats.op[NVP_BDEV_IO_READ].device) <= at - t0);
	fx_close(&f);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_validation),
		UT_TEST(test_desc_write_hint),
		UT_TEST(test_split_max_xfer),
		UT_TEST(test_split_first_error),
		UT_TEST(test_split_boundary_and_recycle),
		UT_TEST(test_split_iovecs),
		UT_TEST(test_split_iovecs_unsplittable),
		UT_TEST(test_max_ios_per_request),
		UT_TEST(test_pool_exhaustion_and_wait),
		UT_TEST(test_wait_for_a_split),
		UT_TEST(test_wait_before_callback),
		UT_TEST(test_wait_before_callback_in_list),
		UT_TEST(test_enomem_retry_and_inline_completion),
		UT_TEST(test_pipeline_order),
		UT_TEST(test_sched_asked_while_holding),
		UT_TEST(test_stage_latencies),
		UT_TEST(test_split_times),
	};

	return ut_run("bdev_io", tests, sizeof(tests) / sizeof(tests[0]));
}

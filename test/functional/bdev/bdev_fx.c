/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers of the bdev functional tests (see bdev_fx.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bdev_fx.h"

void
bfx_cpl_cb(void *arg, const struct nvme_cpl *cpl)
{
	struct fx_cpl *c = arg;

	c->cpl = *cpl;
	__atomic_add_fetch(&c->calls, 1, __ATOMIC_RELEASE);
}

void
bfx_event_ignore(enum nvp_bdev_event_type type, struct nvp_bdev *bdev, void *ctx)
{
	(void)type;
	(void)bdev;
	(void)ctx;
}

int
bfx_poll_until(struct nvp_bdev_channel *ch, const unsigned int *counter, unsigned int target)
{
	uint64_t deadline = fx_now_us() + FX_WAIT_MS * 1000ull;

	while (__atomic_load_n(counter, __ATOMIC_ACQUIRE) < target) {
		nvp_bdev_channel_poll(ch);
		if (fx_now_us() > deadline) {
			return -ETIMEDOUT;
		}
	}
	return 0;
}

static int
bfx_submit(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, enum bfx_op op, void *buf,
	   uint64_t lba, uint64_t count, struct fx_cpl *c)
{
	switch (op) {
	case BFX_READ:
		return nvp_bdev_read_blocks(desc, ch, buf, lba, count, bfx_cpl_cb, c);
	case BFX_WRITE:
		return nvp_bdev_write_blocks(desc, ch, buf, lba, count, 0, bfx_cpl_cb, c);
	case BFX_COMPARE:
		return nvp_bdev_compare_blocks(desc, ch, buf, lba, count, bfx_cpl_cb, c);
	case BFX_WRITE_ZEROES:
		return nvp_bdev_write_zeroes_blocks(desc, ch, lba, count, 0, bfx_cpl_cb, c);
	case BFX_UNMAP:
		return nvp_bdev_unmap_blocks(desc, ch, lba, count, bfx_cpl_cb, c);
	default:
		return nvp_bdev_flush_blocks(desc, ch, lba, count, bfx_cpl_cb, c);
	}
}

int
bfx_io(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, enum bfx_op op, void *buf,
       uint64_t lba, uint64_t count, struct nvme_cpl *cpl)
{
	struct fx_cpl c;
	int rc;

	memset(&c, 0, sizeof(c));
	rc = bfx_submit(desc, ch, op, buf, lba, count, &c);
	if (rc != 0) {
		return rc;
	}
	rc = bfx_poll_until(ch, &c.calls, 1);
	if (rc != 0) {
		return rc;
	}
	if (cpl != NULL) {
		*cpl = c.cpl;
	}
	return nvme_cpl_is_error(&c.cpl) ? -EIO : 0;
}

/* ---- the verifying worker ---- */

#define BFX_MAX_DEPTH 16

struct slot {
	struct fx_cpl c;
	void *buf;
	uint64_t lba;
	uint32_t count;
	struct iovec iov[3];
};

/*
 * Submit one I/O of @s. Vectored: up to three pieces cut at 4 KiB page boundaries of the
 * (page aligned) buffer, which meets the PRP rules of NVMe as well.
 */
static int
slot_submit(struct bfx_worker *w, struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch,
	    struct slot *s, bool write, uint32_t bs)
{
	size_t len = (size_t)s->count * bs, off = 0, piece;
	int n = 0;

	memset(&s->c, 0, sizeof(s->c));
	if (!w->vectored) {
		return write ? nvp_bdev_write_blocks(desc, ch, s->buf, s->lba, s->count, 0,
						     bfx_cpl_cb, &s->c) :
			       nvp_bdev_read_blocks(desc, ch, s->buf, s->lba, s->count, bfx_cpl_cb,
						    &s->c);
	}
	while (off < len) {
		piece = n < 2 ? NVP_MIN((size_t)4096, len - off) : len - off;
		s->iov[n].iov_base = (char *)s->buf + off;
		s->iov[n].iov_len = piece;
		off += piece;
		n++;
	}
	return write ? nvp_bdev_writev_blocks(desc, ch, s->iov, n, s->lba, s->count, 0, bfx_cpl_cb,
					      &s->c) :
		       nvp_bdev_readv_blocks(desc, ch, s->iov, n, s->lba, s->count, bfx_cpl_cb,
					     &s->c);
}

/* Wait for every slot of a batch; count errors and timeouts. */
static void
batch_wait(struct bfx_worker *w, struct nvp_bdev_channel *ch, struct slot *slots, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (bfx_poll_until(ch, &slots[i].c.calls, 1) != 0) {
			w->timeouts++;
			continue;
		}
		w->ios++;
		if (nvme_cpl_is_error(&slots[i].c.cpl)) {
			w->errors++;
		}
	}
}

/* One batch: @depth writes of distinct, non-overlapping ranges, then reads, then checks. */
static void
worker_batch(struct bfx_worker *w, struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch,
	     struct slot *slots, uint32_t bs, unsigned int *seed)
{
	uint64_t span = w->num_blocks / w->depth;
	uint32_t i, n = 0;
	int rc;

	for (i = 0; i < w->depth; i++) {
		slots[i].count = 1 + (uint32_t)(rand_r(seed) % NVP_MIN(w->max_blocks, span));
		slots[i].lba = w->first_block + i * span +
			       (uint64_t)rand_r(seed) % (span - slots[i].count + 1);
		fx_pattern_fill(slots[i].buf, slots[i].lba, slots[i].count, bs, w->tag);
		rc = slot_submit(w, desc, ch, &slots[i], true, bs);
		if (rc != 0) {
			w->rc = w->rc ? w->rc : rc;
			break;
		}
		n++;
	}
	batch_wait(w, ch, slots, n);
	for (i = 0; i < n; i++) {
		memset(slots[i].buf, 0xee, (size_t)slots[i].count * bs);
		rc = slot_submit(w, desc, ch, &slots[i], false, bs);
		if (rc != 0) {
			w->rc = w->rc ? w->rc : rc;
			n = i;
			break;
		}
	}
	batch_wait(w, ch, slots, n);
	for (i = 0; i < n; i++) {
		if (fx_pattern_check(slots[i].buf, slots[i].lba, slots[i].count, bs, w->tag) >= 0) {
			w->mismatches++;
		}
	}
}

static void
worker_run(struct bfx_worker *w, struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch)
{
	uint32_t bs = nvp_bdev_get_block_size(nvp_bdev_desc_get_bdev(desc));
	struct slot slots[BFX_MAX_DEPTH];
	unsigned int seed = w->tag;
	uint32_t i;

	memset(slots, 0, sizeof(slots));
	for (i = 0; i < w->depth; i++) {
		slots[i].buf = nvp_env_dma_zmalloc((size_t)w->max_blocks * bs, 4096, NULL);
		if (slots[i].buf == NULL) {
			w->rc = -ENOMEM;
		}
	}
	for (i = 0; i < w->batches && w->rc == 0 && w->timeouts == 0; i++) {
		worker_batch(w, desc, ch, slots, bs, &seed);
	}
	for (i = 0; i < w->depth; i++) {
		nvp_env_dma_free(slots[i].buf);
	}
}

static void *
worker_main(void *arg)
{
	struct bfx_worker *w = arg;
	struct nvp_bdev_channel *ch;
	struct nvp_bdev_desc *desc;

	w->rc = nvp_bdev_open(w->bdev_name, true, bfx_event_ignore, NULL, &desc);
	if (w->rc != 0) {
		return NULL;
	}
	w->rc = nvp_bdev_channel_create(desc, NULL, &ch);
	if (w->rc == 0) {
		if (w->depth == 0 || w->depth > BFX_MAX_DEPTH) {
			w->rc = -EINVAL;
		} else {
			worker_run(w, desc, ch);
		}
		nvp_bdev_channel_destroy(ch);
	}
	nvp_bdev_close(desc);
	return NULL;
}

void
bfx_run_workers(struct bfx_worker *w, unsigned int n)
{
	pthread_t t[16];
	unsigned int i;

	for (i = 0; i < n && i < 16; i++) {
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (i = 0; i < n && i < 16; i++) {
		pthread_join(t[i], NULL);
	}
	for (i = 0; i < n && i < 16; i++) {
		if (w[i].rc != 0 || w[i].errors || w[i].mismatches || w[i].timeouts) {
			fprintf(stderr,
				"  worker %u on %s: rc %d, %u I/Os, %u errors, %u mismatches, "
				"%u timeouts\n",
				i, w[i].bdev_name, w[i].rc, w[i].ios, w[i].errors, w[i].mismatches,
				w[i].timeouts);
		}
		CU_ASSERT_EQUAL(w[i].rc, 0);
		CU_ASSERT_EQUAL(w[i].errors, 0);
		CU_ASSERT_EQUAL(w[i].mismatches, 0);
		CU_ASSERT_EQUAL(w[i].timeouts, 0);
		CU_ASSERT_EQUAL(w[i].ios, 2 * w[i].batches * w[i].depth);
	}
}

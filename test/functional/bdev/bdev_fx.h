/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers of the bdev functional tests: synchronous bdev I/O with a deadline, and a
 * verifying worker thread (its own channel, its own region of the bdev, batches of
 * pattern writes read back and checked) so several threads hammer one bdev at once.
 * Workers never call CUnit (not thread-safe): they count, the main thread asserts.
 */
#ifndef NVP_TEST_BDEV_FX_H
#define NVP_TEST_BDEV_FX_H

#include <stdbool.h>
#include <stdint.h>

#include "fixture.h"
#include "nvpoll/bdev.h"

/* A completion record for bdev I/O (same shape as struct fx_cpl). */
void bfx_cpl_cb(void *arg, const struct nvme_cpl *cpl);

/* Ignore descriptor events. */
void bfx_event_ignore(enum nvp_bdev_event_type type, struct nvp_bdev *bdev, void *ctx);

/* Poll @ch until *@counter reaches @target or FX_WAIT_MS passes. \return 0 or -ETIMEDOUT. */
int bfx_poll_until(struct nvp_bdev_channel *ch, const unsigned int *counter, unsigned int target);

enum bfx_op {
	BFX_READ,
	BFX_WRITE,
	BFX_COMPARE,
	BFX_WRITE_ZEROES,
	BFX_UNMAP,
	BFX_FLUSH
};

/* One I/O, waited for. \return the call's -errno, -ETIMEDOUT, -EIO (status in *@cpl), 0. */
int bfx_io(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, enum bfx_op op, void *buf,
	   uint64_t lba, uint64_t count, struct nvme_cpl *cpl);

struct bfx_worker {
	/* in */
	const char *bdev_name;
	uint64_t first_block;
	uint64_t num_blocks; /* its region */
	uint32_t max_blocks; /* per I/O */
	uint32_t batches;
	uint32_t depth; /* I/Os per batch, <= 16 */
	bool vectored;  /* writev/readv in up to 3 pieces cut at 4 KiB */
	uint32_t tag;
	/* out */
	int rc; /* first setup or submit error */
	uint32_t ios;
	uint32_t errors;     /* completions with an error status */
	uint32_t mismatches; /* blocks read back wrong */
	uint32_t timeouts;
};

/* Run @n workers on threads and wait for them. */
void bfx_run_workers(struct bfx_worker *w, unsigned int n);

#endif /* NVP_TEST_BDEV_FX_H */

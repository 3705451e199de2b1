/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A third-party bdev module, written against the installed headers only: "passthru"
 * stacks a bdev on another one, forwards every I/O to it unchanged and counts them.
 */
#ifndef PASSTHRU_H
#define PASSTHRU_H

#include <stdint.h>

#include <nvpoll/bdev.h>

/** I/Os and bytes the passthru bdev saw, per operation type. */
struct passthru_counts {
	uint64_t ios[NVP_BDEV_NUM_IO_TYPES];
	uint64_t bytes[NVP_BDEV_NUM_IO_TYPES];
	uint64_t errors;
};

/**
 * Create bdev @name on top of bdev @base (opened read-write by the module).
 * \return 0; -ENODEV no bdev @base; -EEXIST @name taken; -EINVAL; -ENOMEM.
 */
int passthru_create(const char *name, const char *base);

/** Delete it (closing the base). \return 0, -ENODEV, -EBUSY (open). */
int passthru_delete(const char *name);

/** Counts of passthru bdev @name so far (any thread). \return 0 or -ENODEV. */
int passthru_get_counts(const char *name, struct passthru_counts *counts);

#endif /* PASSTHRU_H */

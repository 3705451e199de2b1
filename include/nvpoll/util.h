/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * \file
 * Small utilities shared by every layer: number and size parsing, key/value option
 * strings, bounded string copies, CRC32C, and the hot-path helpers (likely/unlikely,
 * barriers, MMIO) used by the driver and the software controller.
 */
#ifndef NVPOLL_UTIL_H
#define NVPOLL_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvpoll/barrier.h"

#ifdef __cplusplus
extern "C" {
#endif

#define nvp_likely(x) __builtin_expect(!!(x), 1)
#define nvp_unlikely(x) __builtin_expect(!!(x), 0)
#define NVP_COUNTOF(a) (sizeof(a) / sizeof((a)[0]))
/* clang-format 14 reads "(x) - 1" in these macros as a cast: keep them as written */
/* clang-format off */
#define NVP_ALIGN_UP(x, a) (((x) + (a) - 1) & ~((__typeof__(x))(a) - 1))
#define NVP_IS_POW2(x) ((x) != 0 && (((x) & ((x) - 1)) == 0))
/* clang-format on */
#define NVP_MIN(a, b) ((a) < (b) ? (a) : (b))
#define NVP_MAX(a, b) ((a) > (b) ? (a) : (b))

/**
 * Parse an unsigned integer (decimal, 0x hex) into @out; the whole string must be used
 * and the value must be within [@min, @max]. \return 0, -EINVAL or -ERANGE.
 */
int nvp_strtou64(const char *str, uint64_t min, uint64_t max, uint64_t *out);

/**
 * Parse a size with an optional binary suffix: "4096", "4k", "64M", "2G", "1T" (case
 * insensitive, optional trailing "iB"/"B"). \return 0, -EINVAL or -ERANGE.
 */
int nvp_parse_size(const char *str, uint64_t *out);

/** Parse "1/0, true/false, yes/no, on/off". \return 0 or -EINVAL. */
int nvp_parse_bool(const char *str, bool *out);

/** Copy @src into @dst of @len bytes, always NUL terminated. \return strlen(src). */
size_t nvp_strlcpy(char *dst, const char *src, size_t len);

/** Copy into a fixed, space-padded, non-terminated field (identify strings). */
void nvp_strpad(char *dst, const char *src, size_t len, char pad);

/** Length of a space-padded field without its trailing pad. */
size_t nvp_strpadlen(const char *field, size_t len);

/**
 * Walk "key=value" pairs separated by commas, spaces or tabs (a pair may also be written
 * "key:value"). Calls @cb for each pair with NUL-terminated copies; a key without a
 * value gets value "". Stops and returns @cb's value if non-zero.
 * \return 0, -EINVAL for malformed input (empty key, key or value over 255 bytes), or
 * @cb's value.
 */
int nvp_kv_parse(const char *str, int (*cb)(void *ctx, const char *key, const char *value),
		 void *ctx);

/**
 * CRC32C (Castagnoli), as used by fio's verify=crc32c; @crc starts at ~0u.
 * Returns the raw register: no final inversion. The standard CRC32C of a buffer (and
 * fio's value) is nvp_crc32c(~0u, buf, len) ^ ~0u - e.g. 0xE3069283 for "123456789".
 * Pass one call's result as the next call's @crc to continue over more data.
 */
uint32_t nvp_crc32c(uint32_t crc, const void *buf, size_t len);

/* Memory ordering, MMIO and the inline tick read live in nvpoll/barrier.h. */

#ifdef __cplusplus
}
#endif

#endif /* NVPOLL_UTIL_H */

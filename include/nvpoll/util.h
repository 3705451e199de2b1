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

/*
 * Time units <-> ticks of a counter at @hz per second (nvp_env_get_ticks_hz()): the one
 * place these conversions are written. Rounded down, exactly as v * num / den would be,
 * but split into whole and part units so no product overflows (a tick count of hours at
 * GHz rates times 10^9 would). v / den and v % den are one division (multiplies for a
 * constant den); none of these is on the per-I/O path.
 */
static inline uint64_t
nvp_time_scale(uint64_t v, uint64_t num, uint64_t den)
{
	return v / den * num + v % den * num / den;
}

static inline uint64_t
nvp_us_to_ticks(uint64_t us, uint64_t hz)
{
	return nvp_time_scale(us, hz, 1000000u);
}

static inline uint64_t
nvp_ms_to_ticks(uint64_t ms, uint64_t hz)
{
	return nvp_time_scale(ms, hz, 1000u);
}

static inline uint64_t
nvp_ns_to_ticks(uint64_t ns, uint64_t hz)
{
	return nvp_time_scale(ns, hz, 1000000000u);
}

static inline uint64_t
nvp_ticks_to_ms(uint64_t ticks, uint64_t hz)
{
	return nvp_time_scale(ticks, 1000u, hz);
}

static inline uint64_t
nvp_ticks_to_us(uint64_t ticks, uint64_t hz)
{
	return nvp_time_scale(ticks, 1000000u, hz);
}

static inline uint64_t
nvp_ticks_to_ns(uint64_t ticks, uint64_t hz)
{
	return nvp_time_scale(ticks, 1000000000u, hz);
}

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
 * \return 0, -EINVAL for malformed input (empty key, key or value over 255 bytes),
 * -ENOMEM, or @cb's value.
 */
int nvp_kv_parse(const char *str, int (*cb)(void *ctx, const char *key, const char *value),
		 void *ctx);

/** The grammar nvp_kv_parse_ext() reads; zeroed fields (but max_len) are nvp_kv_parse()'s. */
struct nvp_kv_syntax {
	const char *seps;   /**< characters between pairs; NULL: comma, space, tab, CR, LF */
	const char *assign; /**< characters that end a key (its first in a pair); NULL: "=:" */
	bool need_assign;   /**< a pair without one is malformed (else its value is "") */
	bool no_empty;      /**< an empty pair (two separators in a row, one at either end) is
			 * malformed (else skipped); an empty @str is never one */
	size_t max_len;     /**< longest key or value in bytes, 0 = no limit */
	/**
	 * Optional: told of a malformed pair (its text: empty, no key, no assign character
	 * with need_assign, or too long) before the parse stops; its non-zero value is
	 * returned instead of -EINVAL. Logging here names the pair for the user.
	 */
	int (*malformed)(void *ctx, const char *pair);
};

/**
 * nvp_kv_parse() with a grammar of the caller's: other separators (a value with spaces in
 * it), only '=' between key and value, no pair left without one, no empty pair, no
 * length limit. The callbacks get @ctx. \return 0; -EINVAL (or @syn->malformed's value)
 * for a malformed pair; -ENOMEM; -EINVAL for a NULL @syn or @cb; or @cb's value.
 */
int nvp_kv_parse_ext(const char *str, const struct nvp_kv_syntax *syn,
		     int (*cb)(void *ctx, const char *key, const char *value), void *ctx);

/** One numeric key of nvp_kv_parse_nums(): a whole number in [@min, @max] into *@out. */
struct nvp_kv_num {
	const char *key;
	uint64_t *out;
	uint64_t min;
	uint64_t max;
};

/**
 * Parse "key=value" pairs (as nvp_kv_parse()) against @nums, a table ended by a NULL
 * key. A key not in the table goes to @other (with @ctx), or is an error if @other is
 * NULL. Errors are logged under @component, each prefixed "@who: " when @who is not
 * NULL: "KEY='VALUE': expected a whole number from MIN to MAX" and "unknown parameter
 * 'KEY' (known: K1, K2, ...)". A key given twice takes its last value.
 * \return 0; -EINVAL (logged) for a value out of range, an unknown key, malformed input
 * or NULL @nums; or @other's non-zero value.
 */
int nvp_kv_parse_nums(const char *str, const struct nvp_kv_num *nums, const char *component,
		      const char *who, int (*other)(void *ctx, const char *key, const char *value),
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

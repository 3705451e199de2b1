/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Number, size and boolean parsing, bounded string copies, identify-style padded
 * fields, and "key=value" option strings. Only the key=value walk allocates (a copy of
 * its input, so that keys and values of any length reach the callback NUL-terminated).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nvpoll/util.h"

/* Longest key or value nvp_kv_parse() hands to its callback (bytes, without NUL). */
#define KV_MAX_LEN 255

static int
digit_value(char c, unsigned int base)
{
	unsigned int v;

	if (c >= '0' && c <= '9') {
		v = (unsigned int)(c - '0');
	} else if (c >= 'a' && c <= 'f') {
		v = (unsigned int)(c - 'a') + 10;
	} else if (c >= 'A' && c <= 'F') {
		v = (unsigned int)(c - 'A') + 10;
	} else {
		return -1;
	}
	return v < base ? (int)v : -1;
}

/*
 * Parse the digits at *@pstr (decimal, or hex after "0x"/"0X") and advance *@pstr past
 * them. No sign, no leading blanks: strtoull() would accept "-1" and " 1".
 * \return 0, -EINVAL if there is no digit, -ERANGE on overflow.
 */
static int
parse_u64_prefix(const char **pstr, uint64_t *out)
{
	const char *s = *pstr;
	unsigned int base = 10;
	uint64_t val = 0;
	bool overflow = false;
	const char *start;
	int d;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	start = s;
	while ((d = digit_value(*s, base)) >= 0) {
		if (val > (UINT64_MAX - (uint64_t)d) / base) {
			overflow = true;
		}
		val = val * base + (uint64_t)d;
		s++;
	}
	if (s == start) {
		return -EINVAL;
	}
	*pstr = s;
	*out = val;
	return overflow ? -ERANGE : 0;
}

int
nvp_strtou64(const char *str, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t val;
	int rc;

	if (str == NULL || out == NULL) {
		return -EINVAL;
	}
	rc = parse_u64_prefix(&str, &val);
	if (rc == -EINVAL || *str != '\0') {
		return -EINVAL;
	}
	if (rc != 0 || val < min || val > max) {
		return -ERANGE;
	}
	*out = val;
	return 0;
}

/* Binary shift for a size suffix letter, or -1. */
static int
suffix_shift(char c)
{
	switch (c) {
	case 'k':
	case 'K':
		return 10;
	case 'm':
	case 'M':
		return 20;
	case 'g':
	case 'G':
		return 30;
	case 't':
	case 'T':
		return 40;
	case 'p':
	case 'P':
		return 50;
	default:
		return -1;
	}
}

int
nvp_parse_size(const char *str, uint64_t *out)
{
	uint64_t val;
	int shift = 0;
	int rc;

	if (str == NULL || out == NULL) {
		return -EINVAL;
	}
	rc = parse_u64_prefix(&str, &val);
	if (rc == -EINVAL) {
		return rc;
	}
	if (suffix_shift(*str) >= 0) {
		shift = suffix_shift(*str++);
		if (*str == 'i' || *str == 'I') {
			str++;
			if (*str != 'b' && *str != 'B') {
				return -EINVAL; /* "4Ki" */
			}
		}
	}
	if (*str == 'b' || *str == 'B') {
		str++;
	}
	if (*str != '\0') {
		return -EINVAL;
	}
	if (rc != 0 || (shift > 0 && val > (UINT64_MAX >> shift))) {
		return -ERANGE;
	}
	*out = val << shift;
	return 0;
}

int
nvp_parse_bool(const char *str, bool *out)
{
	static const char *const yes[] = { "1", "true", "yes", "on" };
	static const char *const no[] = { "0", "false", "no", "off" };
	size_t i;

	if (str == NULL || out == NULL) {
		return -EINVAL;
	}
	for (i = 0; i < NVP_COUNTOF(yes); i++) {
		if (strcasecmp(str, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(str, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

size_t
nvp_strlcpy(char *dst, const char *src, size_t len)
{
	size_t srclen = strlen(src);

	if (len > 0) {
		size_t n = srclen < len - 1 ? srclen : len - 1;

		memcpy(dst, src, n);
		dst[n] = '\0';
	}
	return srclen;
}

void
nvp_strpad(char *dst, const char *src, size_t len, char pad)
{
	size_t n = strnlen(src, len);

	memcpy(dst, src, n);
	memset(dst + n, pad, len - n);
}

size_t
nvp_strpadlen(const char *field, size_t len)
{
	/* Stop at a NUL too: some devices pad identify strings with zeros. */
	len = strnlen(field, len);
	while (len > 0 && field[len - 1] == ' ') {
		len--;
	}
	return len;
}

/* A malformed pair: the caller's verdict, or -EINVAL. */
static int
kv_malformed(const struct nvp_kv_syntax *syn, void *ctx, const char *pair)
{
	int rc = syn->malformed != NULL ? syn->malformed(ctx, pair) : 0;

	return rc != 0 ? rc : -EINVAL;
}

/* One pair, NUL-terminated at @pair (written in place): split it and call @cb. */
static int
kv_pair(const struct nvp_kv_syntax *syn, char *pair, const char *assign,
	int (*cb)(void *ctx, const char *key, const char *value), void *ctx)
{
	char *split = pair + strcspn(pair, assign);
	const char *value = split;
	size_t klen = (size_t)(split - pair);

	if (*split != '\0') {
		value = split + 1;
	} else if (syn->need_assign) {
		return kv_malformed(syn, ctx, pair);
	}
	if (klen == 0 ||
	    (syn->max_len != 0 && (klen > syn->max_len || strlen(value) > syn->max_len))) {
		return kv_malformed(syn, ctx, pair);
	}
	*split = '\0';
	return cb(ctx, pair, value);
}

int
nvp_kv_parse_ext(const char *str, const struct nvp_kv_syntax *syn,
		 int (*cb)(void *ctx, const char *key, const char *value), void *ctx)
{
	const char *seps, *assign;
	char *copy, *p, *end;
	bool last = false;
	int rc = 0;

	if (cb == NULL || syn == NULL) {
		return -EINVAL;
	}
	if (str == NULL || str[0] == '\0') {
		return 0;
	}
	seps = syn->seps != NULL ? syn->seps : ", \t\n\r";
	assign = syn->assign != NULL ? syn->assign : "=:";
	copy = strdup(str);
	if (copy == NULL) {
		return -ENOMEM;
	}
	for (p = copy; rc == 0 && !last; p = end + 1) {
		end = p + strcspn(p, seps);
		last = *end == '\0';
		*end = '\0';
		if (p != end) {
			rc = kv_pair(syn, p, assign, cb, ctx);
		} else if (syn->no_empty) {
			rc = kv_malformed(syn, ctx, p);
		}
	}
	free(copy);
	return rc;
}

int
nvp_kv_parse(const char *str, int (*cb)(void *ctx, const char *key, const char *value), void *ctx)
{
	static const struct nvp_kv_syntax syn = { .max_len = KV_MAX_LEN };

	return nvp_kv_parse_ext(str, &syn, cb, ctx);
}

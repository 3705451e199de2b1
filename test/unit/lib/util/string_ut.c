/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests for lib/util/string.c: number, size and bool parsing, copies, kv strings. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "util/string.c"

#include "ut_main.h"

static void
test_strtou64(void)
{
	uint64_t v = 0;

	CU_ASSERT_EQUAL(nvp_strtou64("0", 0, UINT64_MAX, &v), 0);
	CU_ASSERT_EQUAL(v, 0);
	CU_ASSERT_EQUAL(nvp_strtou64("123", 0, UINT64_MAX, &v), 0);
	CU_ASSERT_EQUAL(v, 123);
	CU_ASSERT_EQUAL(nvp_strtou64("0x1F", 0, UINT64_MAX, &v), 0);
	CU_ASSERT_EQUAL(v, 0x1f);
	CU_ASSERT_EQUAL(nvp_strtou64("0XfF", 0, UINT64_MAX, &v), 0);
	CU_ASSERT_EQUAL(v, 0xff);
	/* Leading zeros are decimal, not octal. */
	CU_ASSERT_EQUAL(nvp_strtou64("010", 0, UINT64_MAX, &v), 0);
	CU_ASSERT_EQUAL(v, 10);
	CU_ASSERT_EQUAL(nvp_strtou64("18446744073709551615", 0, UINT64_MAX, &v), 0);
	CU_ASSERT_EQUAL(v, UINT64_MAX);
	CU_ASSERT_EQUAL(nvp_strtou64("0xffffffffffffffff", 0, UINT64_MAX, &v), 0);
	CU_ASSERT_EQUAL(v, UINT64_MAX);
}

static void
test_strtou64_errors(void)
{
	uint64_t v = 42;

	CU_ASSERT_EQUAL(nvp_strtou64("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	CU_ASSERT_EQUAL(nvp_strtou64("0x10000000000000000", 0, UINT64_MAX, &v), -ERANGE);
	CU_ASSERT_EQUAL(nvp_strtou64("99999999999999999999999", 0, UINT64_MAX, &v), -ERANGE);
	CU_ASSERT_EQUAL(nvp_strtou64("", 0, UINT64_MAX, &v), -EINVAL);
	CU_ASSERT_EQUAL(nvp_strtou64("-1", 0, UINT64_MAX, &v), -EINVAL);
	CU_ASSERT_EQUAL(nvp_strtou64("+1", 0, UINT64_MAX, &v), -EINVAL);
	CU_ASSERT_EQUAL(nvp_strtou64(" 1", 0, UINT64_MAX, &v), -EINVAL);
	CU_ASSERT_EQUAL(nvp_strtou64("1 ", 0, UINT64_MAX, &v), -EINVAL);
	CU_ASSERT_EQUAL(nvp_strtou64("0x", 0, UINT64_MAX, &v), -EINVAL);
	CU_ASSERT_EQUAL(nvp_strtou64("12a", 0, UINT64_MAX, &v), -EINVAL);
	CU_ASSERT_EQUAL(nvp_strtou64("0x1g", 0, UINT64_MAX, &v), -EINVAL);
	CU_ASSERT_EQUAL(nvp_strtou64("1.5", 0, UINT64_MAX, &v), -EINVAL);
	CU_ASSERT_EQUAL(nvp_strtou64(NULL, 0, UINT64_MAX, &v), -EINVAL);
	CU_ASSERT_EQUAL(nvp_strtou64("1", 0, UINT64_MAX, NULL), -EINVAL);
	/* Range checks: both ends inclusive. */
	CU_ASSERT_EQUAL(nvp_strtou64("5", 6, 10, &v), -ERANGE);
	CU_ASSERT_EQUAL(nvp_strtou64("11", 6, 10, &v), -ERANGE);
	CU_ASSERT_EQUAL(v, 42); /* untouched on error */
	CU_ASSERT_EQUAL(nvp_strtou64("6", 6, 10, &v), 0);
	CU_ASSERT_EQUAL(v, 6);
	CU_ASSERT_EQUAL(nvp_strtou64("10", 6, 10, &v), 0);
	CU_ASSERT_EQUAL(v, 10);
}

static void
test_parse_size(void)
{
	static const struct {
		const char *str;
		uint64_t val;
	} ok[] = {
		{ "0", 0 },
		{ "4096", 4096 },
		{ "4k", 4096 },
		{ "4K", 4096 },
		{ "4KiB", 4096 },
		{ "4kib", 4096 },
		{ "4kB", 4096 },
		{ "4KB", 4096 },
		{ "64M", 64ull << 20 },
		{ "64MiB", 64ull << 20 },
		{ "2G", 2ull << 30 },
		{ "2g", 2ull << 30 },
		{ "1T", 1ull << 40 },
		{ "1P", 1ull << 50 },
		{ "512B", 512 },
		{ "512b", 512 },
		{ "0x10k", 16384 },
		{ "0x1b", 0x1b }, /* hex digit b, not a suffix */
		{ "16383P", 16383ull << 50 },
	};
	uint64_t v;
	size_t i;

	for (i = 0; i < NVP_COUNTOF(ok); i++) {
		v = 1;
		CU_ASSERT_EQUAL(nvp_parse_size(ok[i].str, &v), 0);
		CU_ASSERT_EQUAL(v, ok[i].val);
	}
}

static void
test_parse_size_errors(void)
{
	static const char *const bad[] = {
		"",    "k",  "4Ki",   "4kk", "4 k",  " 4k", "4k ",
		"-4k", "4x", "4kiB5", "0x",  "1.5G", "4BB",
	};
	uint64_t v = 7;
	size_t i;

	for (i = 0; i < NVP_COUNTOF(bad); i++) {
		CU_ASSERT_EQUAL(nvp_parse_size(bad[i], &v), -EINVAL);
	}
	CU_ASSERT_EQUAL(nvp_parse_size("16384P", &v), -ERANGE);
	CU_ASSERT_EQUAL(nvp_parse_size("17179869184G", &v), -ERANGE);
	CU_ASSERT_EQUAL(nvp_parse_size("99999999999999999999", &v), -ERANGE);
	CU_ASSERT_EQUAL(nvp_parse_size(NULL, &v), -EINVAL);
	CU_ASSERT_EQUAL(nvp_parse_size("4k", NULL), -EINVAL);
	CU_ASSERT_EQUAL(v, 7);
}

static void
test_parse_bool(void)
{
	static const char *const yes[] = { "1", "true", "yes", "on", "TRUE", "Yes", "ON" };
	static const char *const no[] = { "0", "false", "no", "off", "FALSE", "No", "Off" };
	static const char *const bad[] = { "", "2", "truee", "y", "n", "enable", " on", "on " };
	bool b;
	size_t i;

	for (i = 0; i < NVP_COUNTOF(yes); i++) {
		b = false;
		CU_ASSERT_EQUAL(nvp_parse_bool(yes[i], &b), 0);
		CU_ASSERT_TRUE(b);
	}
	for (i = 0; i < NVP_COUNTOF(no); i++) {
		b = true;
		CU_ASSERT_EQUAL(nvp_parse_bool(no[i], &b), 0);
		CU_ASSERT_FALSE(b);
	}
	for (i = 0; i < NVP_COUNTOF(bad); i++) {
		b = true;
		CU_ASSERT_EQUAL(nvp_parse_bool(bad[i], &b), -EINVAL);
		CU_ASSERT_TRUE(b);
	}
	CU_ASSERT_EQUAL(nvp_parse_bool(NULL, &b), -EINVAL);
	CU_ASSERT_EQUAL(nvp_parse_bool("1", NULL), -EINVAL);
}

static void
test_strlcpy(void)
{
	char buf[8];

	memset(buf, 'x', sizeof(buf));
	CU_ASSERT_EQUAL(nvp_strlcpy(buf, "abc", sizeof(buf)), 3);
	CU_ASSERT_STRING_EQUAL(buf, "abc");
	CU_ASSERT_EQUAL(nvp_strlcpy(buf, "0123456789", sizeof(buf)), 10);
	CU_ASSERT_STRING_EQUAL(buf, "0123456");
	CU_ASSERT_EQUAL(nvp_strlcpy(buf, "1234567", sizeof(buf)), 7);
	CU_ASSERT_STRING_EQUAL(buf, "1234567");
	CU_ASSERT_EQUAL(nvp_strlcpy(buf, "zz", 1), 2);
	CU_ASSERT_EQUAL(buf[0], '\0');
	buf[0] = 'q';
	CU_ASSERT_EQUAL(nvp_strlcpy(buf, "zz", 0), 2);
	CU_ASSERT_EQUAL(buf[0], 'q'); /* len 0 writes nothing */
	CU_ASSERT_EQUAL(nvp_strlcpy(buf, "", sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "");
}

static void
test_strpad(void)
{
	char f[8];

	memset(f, 'x', sizeof(f));
	nvp_strpad(f, "abc", sizeof(f), ' ');
	CU_ASSERT_EQUAL(memcmp(f, "abc     ", 8), 0);
	nvp_strpad(f, "abcdefgh", sizeof(f), ' ');
	CU_ASSERT_EQUAL(memcmp(f, "abcdefgh", 8), 0);
	nvp_strpad(f, "abcdefghijk", sizeof(f), ' ');
	CU_ASSERT_EQUAL(memcmp(f, "abcdefgh", 8), 0); /* truncated, not terminated */
	nvp_strpad(f, "", sizeof(f), '_');
	CU_ASSERT_EQUAL(memcmp(f, "________", 8), 0);
	nvp_strpad(f, "ab", 4, '\0');
	CU_ASSERT_EQUAL(memcmp(f, "ab\0\0____", 8), 0);
}

static void
test_strpadlen(void)
{
	CU_ASSERT_EQUAL(nvp_strpadlen("abc     ", 8), 3);
	CU_ASSERT_EQUAL(nvp_strpadlen("a b     ", 8), 3);
	CU_ASSERT_EQUAL(nvp_strpadlen("abcdefgh", 8), 8);
	CU_ASSERT_EQUAL(nvp_strpadlen("        ", 8), 0);
	CU_ASSERT_EQUAL(nvp_strpadlen("ab\0\0\0\0\0\0", 8), 2);
	CU_ASSERT_EQUAL(nvp_strpadlen("ab  \0\0\0\0", 8), 2);
	CU_ASSERT_EQUAL(nvp_strpadlen("abcdefgh", 4), 4);
	CU_ASSERT_EQUAL(nvp_strpadlen("", 0), 0);
}

/* ---- nvp_kv_parse ---- */

#define MAX_PAIRS 8

struct kv_seen {
	int n;
	int stop_at; /* return 5 from the callback on this pair (1-based), 0 = never */
	char key[MAX_PAIRS][300];
	char value[MAX_PAIRS][300];
};

static int
kv_collect(void *ctx, const char *key, const char *value)
{
	struct kv_seen *s = ctx;

	if (s->n < MAX_PAIRS) {
		nvp_strlcpy(s->key[s->n], key, sizeof(s->key[0]));
		nvp_strlcpy(s->value[s->n], value, sizeof(s->value[0]));
	}
	s->n++;
	return s->n == s->stop_at ? 5 : 0;
}

static void
check_pair(const struct kv_seen *s, int i, const char *key, const char *value)
{
	CU_ASSERT_STRING_EQUAL(s->key[i], key);
	CU_ASSERT_STRING_EQUAL(s->value[i], value);
}

static void
test_kv_parse(void)
{
	struct kv_seen s = { 0 };

	CU_ASSERT_EQUAL(nvp_kv_parse("a=1,b=2 c:3\td", kv_collect, &s), 0);
	CU_ASSERT_EQUAL(s.n, 4);
	check_pair(&s, 0, "a", "1");
	check_pair(&s, 1, "b", "2");
	check_pair(&s, 2, "c", "3");
	check_pair(&s, 3, "d", "");

	/* The first '=' or ':' splits: a PCI address keeps its colons. */
	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(nvp_kv_parse("trtype:PCIe traddr:0000:01:00.0", kv_collect, &s), 0);
	CU_ASSERT_EQUAL(s.n, 2);
	check_pair(&s, 0, "trtype", "PCIe");
	check_pair(&s, 1, "traddr", "0000:01:00.0");

	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(nvp_kv_parse("k=v=w k:v=w k=v:w key=", kv_collect, &s), 0);
	CU_ASSERT_EQUAL(s.n, 4);
	check_pair(&s, 0, "k", "v=w");
	check_pair(&s, 1, "k", "v=w");
	check_pair(&s, 2, "k", "v:w");
	check_pair(&s, 3, "key", "");

	/* Runs of separators, leading and trailing, are skipped. */
	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(nvp_kv_parse(",, a=1 ,,\t b=2,, ", kv_collect, &s), 0);
	CU_ASSERT_EQUAL(s.n, 2);
	check_pair(&s, 0, "a", "1");
	check_pair(&s, 1, "b", "2");

	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(nvp_kv_parse("", kv_collect, &s), 0);
	CU_ASSERT_EQUAL(nvp_kv_parse(" ,\t", kv_collect, &s), 0);
	CU_ASSERT_EQUAL(nvp_kv_parse(NULL, kv_collect, &s), 0);
	CU_ASSERT_EQUAL(s.n, 0);
}

static void
test_kv_parse_errors(void)
{
	struct kv_seen s = { 0 };
	char buf[600];

	CU_ASSERT_EQUAL(nvp_kv_parse("=v", kv_collect, &s), -EINVAL);
	CU_ASSERT_EQUAL(nvp_kv_parse(":v", kv_collect, &s), -EINVAL);
	CU_ASSERT_EQUAL(nvp_kv_parse("a=1 =2", kv_collect, &s), -EINVAL);
	CU_ASSERT_EQUAL(s.n, 1); /* a=1 was delivered before the error */
	CU_ASSERT_EQUAL(nvp_kv_parse("a=1", NULL, &s), -EINVAL);

	/* Key and value up to 255 bytes pass, 256 do not. */
	memset(buf, 'k', 255);
	memcpy(buf + 255, "=v", 3);
	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(nvp_kv_parse(buf, kv_collect, &s), 0);
	CU_ASSERT_EQUAL(strlen(s.key[0]), 255);
	memset(buf, 'k', 256);
	memcpy(buf + 256, "=v", 3);
	CU_ASSERT_EQUAL(nvp_kv_parse(buf, kv_collect, &s), -EINVAL);
	buf[0] = 'k';
	buf[1] = '=';
	memset(buf + 2, 'v', 255);
	buf[257] = '\0';
	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(nvp_kv_parse(buf, kv_collect, &s), 0);
	CU_ASSERT_EQUAL(strlen(s.value[0]), 255);
	buf[257] = 'v';
	buf[258] = '\0';
	CU_ASSERT_EQUAL(nvp_kv_parse(buf, kv_collect, &s), -EINVAL);
}

/* The malformed pair nvp_kv_parse_ext() reported, and how often. */
static char g_bad_pair[1100];
static int g_bad_calls;

static int
kv_bad(void *ctx, const char *pair)
{
	(void)ctx;
	nvp_strlcpy(g_bad_pair, pair, sizeof(g_bad_pair));
	g_bad_calls++;
	return -7;
}

/* Commas alone between pairs, '=' alone after the key, every pair with one. */
static const struct nvp_kv_syntax g_strict = {
	.seps = ",",
	.assign = "=",
	.need_assign = true,
	.no_empty = true,
	.malformed = kv_bad,
};

static int
strict(const char *str, struct kv_seen *s)
{
	memset(s, 0, sizeof(*s));
	g_bad_pair[0] = '\0';
	g_bad_calls = 0;
	return nvp_kv_parse_ext(str, &g_strict, kv_collect, s);
}

static void
test_kv_parse_ext(void)
{
	struct kv_seen s;
	char buf[1100];

	/* Spaces and colons belong to the value; only the first '=' splits. */
	CU_ASSERT_EQUAL(strict("r=trtype:emu name:e1,traddr=0000:01:00.0,k=a=b,e=", &s), 0);
	CU_ASSERT_EQUAL(s.n, 4);
	check_pair(&s, 0, "r", "trtype:emu name:e1");
	check_pair(&s, 1, "traddr", "0000:01:00.0");
	check_pair(&s, 2, "k", "a=b");
	check_pair(&s, 3, "e", ""); /* an empty value is the caller's to judge */
	CU_ASSERT_EQUAL(g_bad_calls, 0);
	CU_ASSERT_EQUAL(strict("", &s), 0);
	CU_ASSERT_EQUAL(strict(NULL, &s), 0);
	CU_ASSERT_EQUAL(s.n, 0);

	/* Missing '=': the pair is reported, the parse stops with the reporter's value. */
	CU_ASSERT_EQUAL(strict("a=1,q,b=2", &s), -7);
	CU_ASSERT_STRING_EQUAL(g_bad_pair, "q");
	CU_ASSERT_EQUAL(s.n, 1);
	CU_ASSERT_EQUAL(strict("name:x", &s), -7); /* ':' does not assign here */
	CU_ASSERT_STRING_EQUAL(g_bad_pair, "name:x");
	/* Empty key. */
	CU_ASSERT_EQUAL(strict("=5", &s), -7);
	CU_ASSERT_STRING_EQUAL(g_bad_pair, "=5");
	/* Empty pairs: inside, trailing, leading. */
	CU_ASSERT_EQUAL(strict("a=1,,b=2", &s), -7);
	CU_ASSERT_EQUAL(g_bad_calls, 1);
	CU_ASSERT_STRING_EQUAL(g_bad_pair, "");
	CU_ASSERT_EQUAL(strict("a=1,", &s), -7);
	CU_ASSERT_EQUAL(s.n, 1);
	CU_ASSERT_EQUAL(strict(",a=1", &s), -7);
	CU_ASSERT_EQUAL(s.n, 0);

	/* No length limit (max_len 0): a 1000-byte value passes whole. */
	memcpy(buf, "k=", 2);
	memset(buf + 2, 'v', 1000);
	buf[1002] = '\0';
	CU_ASSERT_EQUAL(strict(buf, &s), 0);
	CU_ASSERT_EQUAL(strlen(s.value[0]), sizeof(s.value[0]) - 1); /* kept up to its size */

	/* A limit: past it the pair is malformed (overflow), with or without a reporter. */
	{
		struct nvp_kv_syntax lim = g_strict;

		lim.max_len = 4;
		memset(&s, 0, sizeof(s));
		CU_ASSERT_EQUAL(nvp_kv_parse_ext("abcd=1234", &lim, kv_collect, &s), 0);
		CU_ASSERT_EQUAL(nvp_kv_parse_ext("abcd=12345", &lim, kv_collect, &s), -7);
		CU_ASSERT_EQUAL(nvp_kv_parse_ext("abcde=1", &lim, kv_collect, &s), -7);
		lim.malformed = NULL;
		CU_ASSERT_EQUAL(nvp_kv_parse_ext("abcde=1", &lim, kv_collect, &s), -EINVAL);
		CU_ASSERT_EQUAL(nvp_kv_parse_ext("q", &lim, kv_collect, &s), -EINVAL);
	}

	/* The callback's error stops it; bad arguments. */
	memset(&s, 0, sizeof(s));
	s.stop_at = 1;
	CU_ASSERT_EQUAL(nvp_kv_parse_ext("a=1,b=2", &g_strict, kv_collect, &s), 5);
	CU_ASSERT_EQUAL(s.n, 1);
	CU_ASSERT_EQUAL(nvp_kv_parse_ext("a=1", NULL, kv_collect, &s), -EINVAL);
	CU_ASSERT_EQUAL(nvp_kv_parse_ext("a=1", &g_strict, NULL, &s), -EINVAL);
}

static void
test_kv_parse_cb_stops(void)
{
	struct kv_seen s = { .stop_at = 2 };

	CU_ASSERT_EQUAL(nvp_kv_parse("a=1 b=2 c=3", kv_collect, &s), 5);
	CU_ASSERT_EQUAL(s.n, 2);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_strtou64),
		UT_TEST(test_strtou64_errors),
		UT_TEST(test_parse_size),
		UT_TEST(test_parse_size_errors),
		UT_TEST(test_parse_bool),
		UT_TEST(test_strlcpy),
		UT_TEST(test_strpad),
		UT_TEST(test_strpadlen),
		UT_TEST(test_kv_parse),
		UT_TEST(test_kv_parse_errors),
		UT_TEST(test_kv_parse_cb_stops),
		UT_TEST(test_kv_parse_ext),
	};

	return ut_run("string", tests, NVP_COUNTOF(tests));
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests for lib/util/crc32c.c: standard vectors, chaining, hardware = table. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "util/crc32c.c"

#include "ut_main.h"

/* The standard CRC32C of a whole buffer: initial ~0, final xor ~0. */
static uint32_t
crc_of(const void *buf, size_t len)
{
	return nvp_crc32c(~0u, buf, len) ^ ~0u;
}

static void
test_check_value(void)
{
	/* The "check" value of CRC-32C (Castagnoli): crc("123456789"). */
	CU_ASSERT_EQUAL(nvp_crc32c(~0u, "123456789", 9), 0x1CF96D7Cu);
	CU_ASSERT_EQUAL(crc_of("123456789", 9), 0xE3069283u);
	CU_ASSERT_EQUAL(nvp_crc32c(~0u, "", 0), ~0u);
	CU_ASSERT_EQUAL(crc_of("", 0), 0);
}

static void
test_rfc3720_vectors(void)
{
	/* RFC 3720 (iSCSI) appendix B.4. */
	uint8_t buf[32];
	int i;

	memset(buf, 0, sizeof(buf));
	CU_ASSERT_EQUAL(crc_of(buf, sizeof(buf)), 0x8A9136AAu);
	memset(buf, 0xff, sizeof(buf));
	CU_ASSERT_EQUAL(crc_of(buf, sizeof(buf)), 0x62A8AB43u);
	for (i = 0; i < 32; i++) {
		buf[i] = (uint8_t)i;
	}
	CU_ASSERT_EQUAL(crc_of(buf, sizeof(buf)), 0x46DD794Eu);
	for (i = 0; i < 32; i++) {
		buf[i] = (uint8_t)(31 - i);
	}
	CU_ASSERT_EQUAL(crc_of(buf, sizeof(buf)), 0x113FDB5Cu);
}

static void
test_chaining(void)
{
	uint8_t buf[300];
	uint32_t whole;
	size_t split;

	for (split = 0; split < sizeof(buf); split++) {
		buf[split] = (uint8_t)(split * 7 + 3);
	}
	whole = crc_of(buf, sizeof(buf));
	for (split = 0; split <= sizeof(buf); split++) {
		uint32_t c = nvp_crc32c(~0u, buf, split);

		c = nvp_crc32c(c, buf + split, sizeof(buf) - split);
		CU_ASSERT_EQUAL(c ^ ~0u, whole);
	}
}

static void
test_hw_matches_table(void)
{
	static uint8_t buf[4096 + 16];
	unsigned int seed = 1;
	size_t i;
	int n;

#if defined(__x86_64__)
	if (!__builtin_cpu_supports("sse4.2")) {
		printf("  (no SSE4.2: only the table path is in use)\n");
		return;
	}
	for (i = 0; i < sizeof(buf); i++) {
		buf[i] = (uint8_t)rand_r(&seed);
	}
	for (n = 0; n < 2000; n++) {
		size_t off = (size_t)rand_r(&seed) % 16;
		size_t len = (size_t)rand_r(&seed) % 4097;
		uint32_t init = (uint32_t)rand_r(&seed);

		CU_ASSERT_EQUAL(crc32c_sse42(init, buf + off, len),
				crc32c_table(init, buf + off, len));
	}
#else
	(void)buf;
	(void)seed;
	(void)i;
	(void)n;
#endif
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_check_value),
		UT_TEST(test_rfc3720_vectors),
		UT_TEST(test_chaining),
		UT_TEST(test_hw_matches_table),
	};

	return ut_run("crc32c", tests, NVP_COUNTOF(tests));
}

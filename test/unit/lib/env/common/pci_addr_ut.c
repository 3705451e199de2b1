/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests for lib/env_common/pci_addr.c: parse, format, compare. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "env_common/pci_addr.c"

#include "../../util/ut_main.h"
#include "nvpoll/util.h"

static void
check_parse(const char *str, uint32_t domain, uint8_t bus, uint8_t dev, uint8_t func)
{
	struct nvp_pci_addr a;

	memset(&a, 0xee, sizeof(a));
	CU_ASSERT_EQUAL(nvp_pci_addr_parse(&a, str), 0);
	CU_ASSERT_EQUAL(a.domain, domain);
	CU_ASSERT_EQUAL(a.bus, bus);
	CU_ASSERT_EQUAL(a.dev, dev);
	CU_ASSERT_EQUAL(a.func, func);
}

static void
test_parse(void)
{
	check_parse("0000:01:00.0", 0, 1, 0, 0);
	check_parse("01:00.0", 0, 1, 0, 0);
	check_parse("0000.01.00.0", 0, 1, 0, 0); /* fio */
	check_parse("10000:00:00.0", 0x10000, 0, 0, 0);
	check_parse("1234abcd:ff:1f.7", 0x1234abcd, 0xff, 0x1f, 7);
	check_parse("ffffffff:00:00.0", 0xffffffff, 0, 0, 0);
	check_parse("0000:5E:1a.3", 0, 0x5e, 0x1a, 3);
	check_parse("0:0:0.0", 0, 0, 0, 0);
	check_parse("1:2.3", 0, 1, 2, 3);
}

static void
test_parse_errors(void)
{
	static const char *const bad[] = {
		"",
		"0000:100:00.0",     /* bus > ff */
		"0000:01:20.0",      /* device > 1f */
		"0000:01:00.8",      /* function > 7 */
		"0000:01:00.00",     /* two-digit function */
		"0000:01:000.0",     /* three-digit device */
		"123456789:00:00.0", /* domain over 8 digits */
		"0000:01:00",        /* no function */
		"0000:01.00.0",      /* mixed separators */
		"0000.01:00.0",
		"0000:01:00:0",
		"01.00.0",
		"0000::00.0",
		"0000:01:00.0 ",
		" 0000:01:00.0",
		"0000:01:00.0.0",
		"00:00:01:00.0",
		"g000:01:00.0",
		"0x0:01:00.0",
		"traddr:0000:01:00.0",
	};
	struct nvp_pci_addr a = { .domain = 9 };
	size_t i;

	for (i = 0; i < NVP_COUNTOF(bad); i++) {
		if (nvp_pci_addr_parse(&a, bad[i]) != -EINVAL) {
			printf("  accepted \"%s\"\n", bad[i]);
			CU_FAIL("bad PCI address accepted");
		}
	}
	CU_ASSERT_EQUAL(a.domain, 9);
	CU_ASSERT_EQUAL(nvp_pci_addr_parse(NULL, "0000:01:00.0"), -EINVAL);
	CU_ASSERT_EQUAL(nvp_pci_addr_parse(&a, NULL), -EINVAL);
}

static void
test_fmt(void)
{
	struct nvp_pci_addr a = { .domain = 0, .bus = 1, .dev = 0x1f, .func = 7 };
	struct nvp_pci_addr b;
	char buf[NVP_PCI_ADDR_STRLEN];
	/* volatile: keeps gcc -O3 from warning about the truncation this test wants */
	volatile size_t short_len = 12;

	CU_ASSERT_EQUAL(nvp_pci_addr_fmt(buf, sizeof(buf), &a), 0);
	CU_ASSERT_STRING_EQUAL(buf, "0000:01:1f.7");
	a.domain = 0x10002;
	CU_ASSERT_EQUAL(nvp_pci_addr_fmt(buf, sizeof(buf), &a), 0);
	CU_ASSERT_STRING_EQUAL(buf, "10002:01:1f.7");
	a.domain = 0xffffffff;
	a.bus = 0xff;
	CU_ASSERT_EQUAL(nvp_pci_addr_fmt(buf, sizeof(buf), &a), 0);
	CU_ASSERT_STRING_EQUAL(buf, "ffffffff:ff:1f.7");
	/* Round trip. */
	CU_ASSERT_EQUAL(nvp_pci_addr_parse(&b, buf), 0);
	CU_ASSERT_EQUAL(nvp_pci_addr_compare(&a, &b), 0);
	/* Exactly enough room, one byte short, none. */
	a.domain = 0;
	CU_ASSERT_EQUAL(nvp_pci_addr_fmt(buf, 13, &a), 0);
	CU_ASSERT_STRING_EQUAL(buf, "0000:ff:1f.7");
	CU_ASSERT_EQUAL(nvp_pci_addr_fmt(buf, short_len, &a), -ENOSPC);
	CU_ASSERT_EQUAL(nvp_pci_addr_fmt(buf, 0, &a), -ENOSPC);
	CU_ASSERT_EQUAL(nvp_pci_addr_fmt(NULL, 13, &a), -ENOSPC);
}

static void
test_compare(void)
{
	struct nvp_pci_addr a = { 0, 1, 2, 3 };
	struct nvp_pci_addr b = a;

	CU_ASSERT_EQUAL(nvp_pci_addr_compare(&a, &b), 0);
	b.func = 4;
	CU_ASSERT(nvp_pci_addr_compare(&a, &b) < 0);
	CU_ASSERT(nvp_pci_addr_compare(&b, &a) > 0);
	b = a;
	b.dev = 1;
	CU_ASSERT(nvp_pci_addr_compare(&a, &b) > 0);
	b = a;
	b.bus = 2;
	b.func = 0;
	CU_ASSERT(nvp_pci_addr_compare(&a, &b) < 0);
	/* The domain dominates, compared as a number (no sign trouble at 0x80000000). */
	b = a;
	b.domain = 0x80000000u;
	b.bus = 0;
	CU_ASSERT(nvp_pci_addr_compare(&a, &b) < 0);
	CU_ASSERT(nvp_pci_addr_compare(&b, &a) > 0);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_parse),
		UT_TEST(test_parse_errors),
		UT_TEST(test_fmt),
		UT_TEST(test_compare),
	};

	return ut_run("pci_addr", tests, NVP_COUNTOF(tests));
}

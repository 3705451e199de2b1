/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/emu/emu_opts.c: defaults, every key, both separators, bad values with
 * the message naming the key, atomic failure, validation of options built in code and the
 * usage table.
 */
#include "emu_ut_helpers.h"

static struct nvp_emu_opts g_o;
static char g_err[256];

static int
parse(const char *s)
{
	nvp_emu_opts_init(&g_o, sizeof(g_o));
	return nvp_emu_opts_parse(&g_o, s, g_err, sizeof(g_err));
}

static void
test_defaults(void)
{
	nvp_emu_opts_init(&g_o, sizeof(g_o));
	CU_ASSERT_EQUAL(g_o.opts_size, sizeof(g_o));
	CU_ASSERT_STRING_EQUAL(g_o.name, "");
	CU_ASSERT_EQUAL(g_o.nn, 1);
	CU_ASSERT_EQUAL(g_o.ns_size, 64ull << 20);
	CU_ASSERT_EQUAL(g_o.lba_size[0], 512);
	CU_ASSERT_EQUAL(g_o.lba_size[15], 512);
	CU_ASSERT_EQUAL(g_o.backend, NVP_EMU_BACKEND_RAM);
	CU_ASSERT_EQUAL(g_o.mqes, 1023);
	CU_ASSERT_EQUAL(g_o.dstrd, 0);
	CU_ASSERT_EQUAL(g_o.to, 20);
	CU_ASSERT_EQUAL(g_o.mpsmax, 4);
	CU_ASSERT_EQUAL(g_o.rdy_delay_ms, 0);
	CU_ASSERT_EQUAL(g_o.max_queues, 64);
	CU_ASSERT_EQUAL(g_o.mdts, 5);
	CU_ASSERT_EQUAL(g_o.read_us, 0);
	CU_ASSERT_EQUAL(g_o.write_us, 0);
	CU_ASSERT_EQUAL(g_o.channels, 4);
	CU_ASSERT(g_o.vwc);
	CU_ASSERT_EQUAL(g_o.fw_slots, 3);
	CU_ASSERT_EQUAL(g_o.fault, NVP_EMU_FAULT_NONE);
	CU_ASSERT_EQUAL(g_o.fault_count, 1);
	CU_ASSERT_EQUAL(g_o.fault_skip, 0);
	CU_ASSERT_EQUAL(g_o.fault_arg, 0);
	CU_ASSERT(g_o.prefault);
	CU_ASSERT_EQUAL(emu_opts_validate(&g_o, g_err, sizeof(g_err)), 0);
	/* a smaller caller struct is filled only up to its size */
	{
		uint8_t small[64];

		memset(small, 0xab, sizeof(small));
		nvp_emu_opts_init((struct nvp_emu_opts *)(void *)small, 40);
		CU_ASSERT_EQUAL(small[40], 0xab);
	}
}

static void
test_every_key(void)
{
	CU_ASSERT_EQUAL(parse("name=disk-1 nn=3 size=2G lba=4096 backend=null mqes=255 dstrd=2 "
			      "to=30 mpsmax=1 rdy_delay_ms=5 queues=16 mdts=0 read_us=80 "
			      "write_us=20 channels=8 vwc=off fw_slots=7 fault=slow fault_count=3 "
			      "fault_skip=2 fault_arg=0x100 ms=64 mset=1"),
			0);
	CU_ASSERT_STRING_EQUAL(g_o.name, "disk-1");
	CU_ASSERT_EQUAL(g_o.nn, 3);
	CU_ASSERT_EQUAL(g_o.ns_size, 2ull << 30);
	CU_ASSERT_EQUAL(g_o.lba_size[0], 4096);
	CU_ASSERT_EQUAL(g_o.lba_size[15], 4096);
	CU_ASSERT_EQUAL(g_o.backend, NVP_EMU_BACKEND_NULL);
	CU_ASSERT_EQUAL(g_o.mqes, 255);
	CU_ASSERT_EQUAL(g_o.dstrd, 2);
	CU_ASSERT_EQUAL(g_o.to, 30);
	CU_ASSERT_EQUAL(g_o.mpsmax, 1);
	CU_ASSERT_EQUAL(g_o.rdy_delay_ms, 5);
	CU_ASSERT_EQUAL(g_o.max_queues, 16);
	CU_ASSERT_EQUAL(g_o.mdts, 0);
	CU_ASSERT_EQUAL(g_o.read_us, 80);
	CU_ASSERT_EQUAL(g_o.write_us, 20);
	CU_ASSERT_EQUAL(g_o.channels, 8);
	CU_ASSERT_FALSE(g_o.vwc);
	CU_ASSERT_EQUAL(g_o.fw_slots, 7);
	CU_ASSERT_EQUAL(g_o.fault, NVP_EMU_FAULT_SLOW);
	CU_ASSERT_EQUAL(g_o.fault_count, 3);
	CU_ASSERT_EQUAL(g_o.fault_skip, 2);
	CU_ASSERT_EQUAL(g_o.fault_arg, 0x100);
	CU_ASSERT_EQUAL(g_o.ms, 64);
	CU_ASSERT_TRUE(g_o.mset);
	CU_ASSERT_EQUAL(emu_opts_validate(&g_o, g_err, sizeof(g_err)), 0);
	/* Each boolean lands in its own field. */
	CU_ASSERT_EQUAL(parse("vwc=1 mset=0"), 0);
	CU_ASSERT_TRUE(g_o.vwc);
	CU_ASSERT_FALSE(g_o.mset);
	CU_ASSERT_EQUAL(parse("ms=257"), -EINVAL);
	CU_ASSERT(strstr(g_err, "'ms'") != NULL);
}

static void
test_separators_and_lists(void)
{
	/* "key:value" as in a transport ID, commas, tabs */
	CU_ASSERT_EQUAL(parse("nn:4,lba:512/4096/4096\tbackend:file:/tmp/x y"), -EINVAL);
	CU_ASSERT(strstr(g_err, "'y'") != NULL);
	CU_ASSERT_EQUAL(parse("nn:4,lba:512/4096/4096\tbackend:file:/tmp/x"), 0);
	CU_ASSERT_EQUAL(g_o.nn, 4);
	CU_ASSERT_EQUAL(g_o.lba_size[0], 512);
	CU_ASSERT_EQUAL(g_o.lba_size[1], 4096);
	CU_ASSERT_EQUAL(g_o.lba_size[2], 4096);
	CU_ASSERT_EQUAL(g_o.lba_size[3], 4096); /* the last one repeats */
	CU_ASSERT_EQUAL(g_o.backend, NVP_EMU_BACKEND_FILE);
	CU_ASSERT_STRING_EQUAL(g_o.backend_path, "/tmp/x");
	/* file=PATH: the file backend without a ':' (fio splits its filenames at ':') */
	CU_ASSERT_EQUAL(parse("nn=1 file=/tmp/img"), 0);
	CU_ASSERT_EQUAL(g_o.backend, NVP_EMU_BACKEND_FILE);
	CU_ASSERT_STRING_EQUAL(g_o.backend_path, "/tmp/img");
	CU_ASSERT_EQUAL(parse("prefault=0 vwc=1"), 0);
	CU_ASSERT(!g_o.prefault);
	CU_ASSERT(g_o.vwc);
	CU_ASSERT_EQUAL(parse("prefault=on vwc=0"), 0);
	CU_ASSERT(g_o.prefault);
	CU_ASSERT(!g_o.vwc);
	CU_ASSERT_EQUAL(parse("backend=RAM size=64k"), 0);
	CU_ASSERT_EQUAL(g_o.backend, NVP_EMU_BACKEND_RAM);
	CU_ASSERT_EQUAL(g_o.ns_size, 65536);
	CU_ASSERT_EQUAL(parse(""), 0);
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&g_o, NULL, g_err, sizeof(g_err)), 0);
	CU_ASSERT_EQUAL(parse("fault=DROP_CPL"), 0);
	CU_ASSERT_EQUAL(g_o.fault, NVP_EMU_FAULT_DROP_CPL);
	for (int f = NVP_EMU_FAULT_NONE; f <= NVP_EMU_FAULT_RDY_NEVER; f++) {
		char s[32];

		snprintf(s, sizeof(s), "fault=%s", emu_fault_name((enum nvp_emu_fault_type)f));
		CU_ASSERT_EQUAL(parse(s), 0);
		CU_ASSERT_EQUAL(g_o.fault, (enum nvp_emu_fault_type)f);
	}
}

/* A bad value: -EINVAL, the message names the key, the options are unchanged. */
static void
expect_bad(const char *s, const char *key)
{
	struct nvp_emu_opts before;

	nvp_emu_opts_init(&g_o, sizeof(g_o));
	before = g_o;
	g_err[0] = '\0';
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&g_o, s, g_err, sizeof(g_err)), -EINVAL);
	if (strstr(g_err, key) == NULL) {
		fprintf(stderr, "\n  '%s': message '%s' does not name '%s'\n", s, g_err, key);
	}
	CU_ASSERT(strstr(g_err, key) != NULL);
	CU_ASSERT(memcmp(&before, &g_o, sizeof(g_o)) == 0);
}

static void
test_bad_values(void)
{
	expect_bad("nn=0", "nn");
	expect_bad("nn=17", "nn");
	expect_bad("nn=two", "nn");
	expect_bad("size=1000", "size");
	expect_bad("size=0", "size");
	expect_bad("size=32T", "size");
	expect_bad("size=12q", "size");
	expect_bad("lba=1024", "lba");
	expect_bad("lba=512//4096", "lba");
	expect_bad("lba=", "lba");
	expect_bad("backend=tape", "backend");
	expect_bad("backend=file:", "backend");
	expect_bad("file=", "file");
	/* an unknown key names the key and where users find the list, not a C function */
	expect_bad("bogus=1", "'nvp help emu'");
	CU_ASSERT(strstr(g_err, "nvp_emu_opts_usage") == NULL);
	expect_bad("mqes=0", "mqes");
	expect_bad("mqes=65536", "mqes");
	expect_bad("dstrd=16", "dstrd");
	expect_bad("to=0", "to");
	expect_bad("to=256", "to");
	expect_bad("mpsmax=16", "mpsmax");
	expect_bad("rdy_delay_ms=-1", "rdy_delay_ms");
	expect_bad("queues=0", "queues");
	expect_bad("queues=1025", "queues");
	expect_bad("mdts=17", "mdts");
	expect_bad("read_us=x", "read_us");
	expect_bad("write_us=99999999", "write_us");
	expect_bad("channels=0", "channels");
	expect_bad("channels=257", "channels");
	expect_bad("vwc=maybe", "vwc");
	expect_bad("fw_slots=0", "fw_slots");
	expect_bad("fw_slots=8", "fw_slots");
	expect_bad("fault=meltdown", "fault");
	expect_bad("fault_count=-3", "fault_count");
	expect_bad("name=", "name");
	expect_bad("name=has/slash", "name");
	expect_bad("name=0123456789012345678901234567890123", "name");
	expect_bad("nn=2 colour=blue", "colour");
	expect_bad("=5", "malformed");
}

static void
test_validate(void)
{
	nvp_emu_opts_init(&g_o, sizeof(g_o));
	g_o.mqes = 0;
	CU_ASSERT_EQUAL(emu_opts_validate(&g_o, g_err, sizeof(g_err)), -EINVAL);
	CU_ASSERT(strstr(g_err, "mqes") != NULL);
	nvp_emu_opts_init(&g_o, sizeof(g_o));
	g_o.ns_size = 4097;
	CU_ASSERT_EQUAL(emu_opts_validate(&g_o, g_err, sizeof(g_err)), -EINVAL);
	nvp_emu_opts_init(&g_o, sizeof(g_o));
	g_o.nn = 2;
	g_o.lba_size[1] = 2048;
	CU_ASSERT_EQUAL(emu_opts_validate(&g_o, g_err, sizeof(g_err)), -EINVAL);
	CU_ASSERT(strstr(g_err, "lba") != NULL);
	nvp_emu_opts_init(&g_o, sizeof(g_o));
	g_o.backend = NVP_EMU_BACKEND_FILE;
	CU_ASSERT_EQUAL(emu_opts_validate(&g_o, g_err, sizeof(g_err)), -EINVAL);
	nvp_emu_opts_init(&g_o, sizeof(g_o));
	g_o.fault = NVP_EMU_FAULT_ERROR;
	CU_ASSERT_EQUAL(emu_opts_validate(&g_o, g_err, sizeof(g_err)), -EINVAL);
	CU_ASSERT(strstr(g_err, "fault_arg") != NULL);
	/* says what is missing and gives an example, not "bad value '(for fault=error)'" */
	CU_ASSERT(strstr(g_err, "needs fault_arg") != NULL);
	CU_ASSERT(strstr(g_err, "e.g. fault_arg=0x281") != NULL);
	CU_ASSERT(strstr(g_err, "bad value") == NULL);
	g_o.fault_arg = 0x281;
	CU_ASSERT_EQUAL(emu_opts_validate(&g_o, g_err, sizeof(g_err)), 0);
	nvp_emu_opts_init(&g_o, sizeof(g_o));
	nvp_strlcpy(g_o.name, "a b", sizeof(g_o.name));
	CU_ASSERT_EQUAL(emu_opts_validate(&g_o, g_err, sizeof(g_err)), -EINVAL);
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(NULL, "nn=1", g_err, sizeof(g_err)), -EINVAL);
}

static void
test_usage(void)
{
	static const char *const keys[] = {
		"name=",        "nn=",         "size=",      "lba=",          "backend=",  "mqes=",
		"dstrd=",       "to=",         "mpsmax=",    "rdy_delay_ms=", "queues=",   "mdts=",
		"read_us=",     "write_us=",   "channels=",  "vwc=",          "fw_slots=", "fault=",
		"fault_count=", "fault_skip=", "fault_arg=", "file=",         "prefault=",
	};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	nvp_emu_opts_usage(f);
	fclose(f);
	for (uint32_t i = 0; i < NVP_COUNTOF(keys); i++) {
		CU_ASSERT(strstr(text, keys[i]) != NULL);
	}
	CU_ASSERT(strstr(text, "mqes=1023") != NULL);
	CU_ASSERT(strstr(text, "(1..65535)") != NULL);
	free(text);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_defaults),
		UT_TEST(test_every_key),
		UT_TEST(test_separators_and_lists),
		UT_TEST(test_bad_values),
		UT_TEST(test_validate),
		UT_TEST(test_usage),
	};

	return ut_run("emu_opts", tests, NVP_COUNTOF(tests));
}

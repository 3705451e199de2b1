/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for app/cli/cli_args.c: subcommand lookup, the option forms nvme-cli users
 * type (--long, --long=v, --long v, -s v, -sv), number ranges, options a subcommand does
 * not take, required options and the device argument. Every error must come back as
 * -EINVAL with a message that names what was wrong.
 */
#include <errno.h>
#include <string.h>

#include "cli_args.c"

#include "ut_main.h"

static struct cli_args g_a;
static char g_err[512];

/* Parse a NULL-terminated list of words. */
static int
parse(const char *first, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;

	va_start(ap, first);
	for (const char *w = first; w != NULL && argc < 31; w = va_arg(ap, const char *)) {
		argv[argc++] = (char *)w;
	}
	va_end(ap);
	argv[argc] = NULL;
	g_err[0] = '\0';
	return cli_args_parse(argc, argv, &g_a, g_err, sizeof(g_err));
}

static void
test_lookup(void)
{
	for (int i = 0; i < CLI_CMD_COUNT; i++) {
		CU_ASSERT_EQUAL(cli_cmd_lookup(cli_cmd_name((enum cli_cmd_id)i)), i);
	}
	CU_ASSERT_EQUAL(cli_cmd_lookup("--help"), CLI_CMD_HELP);
	CU_ASSERT_EQUAL(cli_cmd_lookup("-h"), CLI_CMD_HELP);
	CU_ASSERT_EQUAL(cli_cmd_lookup("--version"), CLI_CMD_VERSION);
	CU_ASSERT_EQUAL(cli_cmd_lookup("id_ctrl"), CLI_CMD_COUNT);
	CU_ASSERT_EQUAL(cli_cmd_lookup(""), CLI_CMD_COUNT);
	CU_ASSERT_TRUE(cli_cmd_needs_device(CLI_CMD_ID_CTRL));
	CU_ASSERT_FALSE(cli_cmd_needs_device(CLI_CMD_LIST));
	CU_ASSERT_FALSE(cli_cmd_needs_device(CLI_CMD_COUNT));
}

static void
test_output_parse(void)
{
	enum cli_output o = CLI_OUT_NORMAL;

	CU_ASSERT_EQUAL(cli_output_parse("json", &o), 0);
	CU_ASSERT_EQUAL(o, CLI_OUT_JSON);
	CU_ASSERT_EQUAL(cli_output_parse("binary", &o), 0);
	CU_ASSERT_EQUAL(o, CLI_OUT_BINARY);
	CU_ASSERT_EQUAL(cli_output_parse("normal", &o), 0);
	CU_ASSERT_EQUAL(o, CLI_OUT_NORMAL);
	CU_ASSERT_EQUAL(cli_output_parse("JSON", &o), -EINVAL);
	CU_ASSERT_EQUAL(cli_output_parse("", &o), -EINVAL);
}

static void
test_option_forms(void)
{
	CU_ASSERT_EQUAL(parse("id-ns", "emu:", "-n", "2", "-o", "json", "-H", NULL), 0);
	CU_ASSERT_EQUAL(g_a.cmd, CLI_CMD_ID_NS);
	CU_ASSERT_STRING_EQUAL(g_a.device, "emu:");
	CU_ASSERT_TRUE(g_a.nsid_set);
	CU_ASSERT_EQUAL(g_a.nsid, 2);
	CU_ASSERT_EQUAL(g_a.output, CLI_OUT_JSON);
	CU_ASSERT_TRUE(g_a.human);

	CU_ASSERT_EQUAL(parse("id-ns", "--namespace-id=0x10", "--output-format=binary",
			      "0000:01:00.0", NULL),
			0);
	CU_ASSERT_EQUAL(g_a.nsid, 16);
	CU_ASSERT_EQUAL(g_a.output, CLI_OUT_BINARY);
	CU_ASSERT_STRING_EQUAL(g_a.device, "0000:01:00.0");

	CU_ASSERT_EQUAL(parse("id-ns", "-n3", "--human-readable", "emu:", NULL), 0);
	CU_ASSERT_EQUAL(g_a.nsid, 3);
	CU_ASSERT_TRUE(g_a.human);
	CU_ASSERT_FALSE(g_a.help);
}

/* The same short letter means different things in different subcommands. */
static void
test_per_command_letters(void)
{
	CU_ASSERT_EQUAL(parse("get-feature", "emu:", "-f", "6", "-s", "3", "-c", "1", NULL), 0);
	CU_ASSERT_EQUAL(g_a.fid, 6);
	CU_ASSERT_EQUAL(g_a.sel, 3);
	CU_ASSERT_EQUAL(g_a.cdw11, 1);

	CU_ASSERT_EQUAL(parse("set-feature", "emu:", "-f", "6", "-v", "0", "-s", NULL), 0);
	CU_ASSERT_TRUE(g_a.value_set);
	CU_ASSERT_EQUAL(g_a.value, 0);
	CU_ASSERT_TRUE(g_a.save);

	CU_ASSERT_EQUAL(parse("format", "emu:", "-l", "1", "-s", "1", "--force", NULL), 0);
	CU_ASSERT_EQUAL(g_a.lbaf, 1);
	CU_ASSERT_EQUAL(g_a.ses, 1);
	CU_ASSERT_TRUE(g_a.force);

	CU_ASSERT_EQUAL(parse("fw-commit", "emu:", "-s", "2", "-a", "3", NULL), 0);
	CU_ASSERT_EQUAL(g_a.slot, 2);
	CU_ASSERT_EQUAL(g_a.action, 3);

	CU_ASSERT_EQUAL(parse("fw-download", "emu:", "-f", "img.bin", NULL), 0);
	CU_ASSERT_STRING_EQUAL(g_a.fw_file, "img.bin");
	CU_ASSERT_EQUAL(parse("fw-download", "emu:", "--fw=a.bin", NULL), 0);
	CU_ASSERT_STRING_EQUAL(g_a.fw_file, "a.bin");

	CU_ASSERT_EQUAL(parse("error-log", "emu:", "-e", "4", NULL), 0);
	CU_ASSERT_EQUAL(g_a.log_entries, 4);
}

static void
expect_error(int rc, const char *needle)
{
	CU_ASSERT_EQUAL(rc, -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_err, needle));
	if (strstr(g_err, needle) == NULL) {
		fprintf(stderr, "  message '%s' lacks '%s'\n", g_err, needle);
	}
}

static void
test_errors(void)
{
	expect_error(parse("bogus", NULL), "unknown command 'bogus'");
	expect_error(parse("id-ctrl", NULL), "missing device");
	expect_error(parse("id-ctrl", "emu:", "--bogus", NULL), "unknown option '--bogus'");
	expect_error(parse("id-ctrl", "emu:", "-z", NULL), "unknown option '-z'");
	/* an option of another subcommand */
	expect_error(parse("id-ctrl", "emu:", "--lbaf", "1", NULL), "unknown option '--lbaf'");
	expect_error(parse("id-ctrl", "emu:", "-o", "xml", NULL), "invalid output format 'xml'");
	expect_error(parse("id-ns", "emu:", "-n", NULL), "needs a value");
	expect_error(parse("id-ns", "emu:", "-n", "abc", NULL), "invalid value 'abc'");
	expect_error(parse("id-ns", "emu:", "-n", "0", NULL),
		     "invalid value '0' for --namespace-id");
	expect_error(parse("id-ns", "emu:", "-n", "4294967296", NULL), "invalid value");
	expect_error(parse("id-ns", "emu:", "-n", "-1", NULL), "invalid value '-1'");
	expect_error(parse("id-ctrl", "emu:", "-H=1", NULL), "takes no value");
	expect_error(parse("id-ctrl", "emu:", "--human-readable=yes", NULL), "takes no value");
	expect_error(parse("id-ctrl", "emu:", "extra", NULL), "unexpected argument 'extra'");
	expect_error(parse("set-feature", "emu:", "-v", "1", NULL), "--feature-id is required");
	expect_error(parse("get-feature", "emu:", "-b", NULL), "needs one --feature-id");
	expect_error(parse("get-feature", "emu:", "-f", "0", NULL), "expected a number 1..255");
	expect_error(parse("get-feature", "emu:", "-f", "256", NULL), "invalid value '256'");
	expect_error(parse("get-feature", "emu:", "-f", "6", "-s", "4", NULL), "invalid value '4'");
	expect_error(parse("set-feature", "emu:", "-f", "6", NULL), "--value is required");
	expect_error(parse("format", "emu:", "--lbaf", "16", NULL), "invalid value '16'");
	expect_error(parse("format", "emu:", "--ses", "3", NULL), "invalid value '3'");
	expect_error(parse("format", "emu:", "--force=1", NULL), "takes no value");
	expect_error(parse("fw-download", "emu:", NULL), "--fw FILE is required");
	expect_error(parse("fw-commit", "emu:", "-a", "4", NULL), "invalid value '4'");
	expect_error(parse("fw-commit", "emu:", "-s", "8", NULL), "invalid value '8'");
	expect_error(parse("error-log", "emu:", "-e", "0", NULL), "for --log-entries");
	expect_error(parse("error-log", "emu:", "-e", "257", NULL), "invalid value '257'");
	expect_error(parse("list", "-o", "binary", NULL), "binary output");
	expect_error(parse("help", "nope", NULL), "unknown command 'nope'");
	expect_error(parse("help", "id-ctrl", "x", NULL), "unexpected argument 'x'");
	expect_error(parse("version", "x", NULL), "unexpected argument 'x'");
}

static void
test_help_and_defaults(void)
{
	CU_ASSERT_EQUAL(parse("help", NULL), 0);
	CU_ASSERT_EQUAL(g_a.cmd, CLI_CMD_HELP);
	CU_ASSERT_EQUAL(g_a.help_topic, CLI_CMD_COUNT);
	CU_ASSERT_EQUAL(parse("help", "format", NULL), 0);
	CU_ASSERT_EQUAL(g_a.help_topic, CLI_CMD_FORMAT);
	CU_ASSERT_EQUAL(parse("help", "emu", NULL), 0);
	CU_ASSERT_TRUE(g_a.help_emu);
	/* "CMD --help" needs no device and skips the required-option checks */
	CU_ASSERT_EQUAL(parse("set-feature", "--help", NULL), 0);
	CU_ASSERT_TRUE(g_a.help);
	CU_ASSERT_EQUAL(parse("list", NULL), 0);
	CU_ASSERT_PTR_NULL(g_a.device);
	CU_ASSERT_EQUAL(g_a.output, CLI_OUT_NORMAL);
	CU_ASSERT_EQUAL(parse("list", "emu:", "-o", "json", NULL), 0);
	CU_ASSERT_STRING_EQUAL(g_a.device, "emu:");
	CU_ASSERT_EQUAL(parse("fw-commit", "emu:", NULL), 0);
	CU_ASSERT_FALSE(g_a.slot_set);
	CU_ASSERT_EQUAL(g_a.slot, 0);
	CU_ASSERT_EQUAL(g_a.action, 0);
	CU_ASSERT_EQUAL(parse("version", NULL), 0);
}

/* Usage text mentions every option a command takes. */
static void
test_usage(void)
{
	char buf[8192] = "";
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	cli_usage(f, CLI_CMD_FORMAT);
	cli_usage(f, CLI_CMD_COUNT);
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--lbaf"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--force"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--ses"));
	CU_ASSERT_PTR_NULL(strstr(buf, "--feature-id"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "fw-download"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "emu:"));
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_lookup),       UT_TEST(test_output_parse),
		UT_TEST(test_option_forms), UT_TEST(test_per_command_letters),
		UT_TEST(test_errors),       UT_TEST(test_help_and_defaults),
		UT_TEST(test_usage),
	};

	return ut_run("cli_args", tests, NVP_COUNTOF(tests));
}

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
#include "cli_opts.c"

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

/*
 * The table: no letter or long name twice in one subcommand, every option id knows where
 * its value goes, and -n says what it means for each subcommand (issue 27: one shared
 * text told nobody what io-passthru's -n was).
 */
static void
test_option_table(void)
{
	const char *ns_help[CLI_CMD_COUNT] = { NULL };

	for (size_t i = 0; i < cli_opt_count; i++) {
		const struct opt_def *o = &cli_opt_defs[i];
		const struct opt_store *st = &cli_opt_store[o->id];

		CU_ASSERT(st->kind != OPT_K_NUM || st->size != 0);
		CU_ASSERT(o->help != NULL && o->help[0] != '\0');
		for (size_t j = i + 1; j < cli_opt_count; j++) {
			const struct opt_def *p = &cli_opt_defs[j];

			if ((o->cmds & p->cmds) == 0) {
				continue;
			}
			CU_ASSERT(strcmp(o->lname, p->lname) != 0);
			CU_ASSERT(o->sname == 0 || o->sname != p->sname);
			if (strcmp(o->lname, p->lname) == 0 || (o->sname && o->sname == p->sname)) {
				fprintf(stderr, "  --%s (-%c) and --%s (-%c) collide\n", o->lname,
					o->sname, p->lname, p->sname);
			}
		}
		if (strcmp(o->lname, "namespace-id") != 0) {
			continue;
		}
		for (int c = 0; c < CLI_CMD_COUNT; c++) {
			if (o->cmds & CMD_BIT(c)) {
				ns_help[c] = o->help;
			}
		}
	}
	/* -n of these says something different in each */
	static const enum cli_cmd_id own[] = {
		CLI_CMD_ID_NS,       CLI_CMD_SMART_LOG,    CLI_CMD_GET_FEATURE, CLI_CMD_SET_FEATURE,
		CLI_CMD_FORMAT,      CLI_CMD_READ,         CLI_CMD_WRITE,       CLI_CMD_COMPARE,
		CLI_CMD_FLUSH,       CLI_CMD_WRITE_ZEROES, CLI_CMD_DSM,         CLI_CMD_GET_LOG,
		CLI_CMD_IO_PASSTHRU,
	};
	for (size_t i = 0; i < NVP_COUNTOF(own); i++) {
		CU_ASSERT_PTR_NOT_NULL_FATAL(ns_help[own[i]]);
		for (size_t j = i + 1; j < NVP_COUNTOF(own); j++) {
			CU_ASSERT(strcmp(ns_help[own[i]], ns_help[own[j]]) != 0);
		}
	}
	/* io-passthru and admin-passthru send -n as given: 0 is allowed there only */
	CU_ASSERT_EQUAL(parse("io-passthru", "emu:", "-o", "0", "-n", "0", NULL), 0);
	CU_ASSERT_TRUE(g_a.nsid_set);
	CU_ASSERT_EQUAL(parse("read", "emu:", "-z", "512", "-n", "0", NULL), -EINVAL);
}

/* nvme-cli 2.3's names and letters of the I/O, log and passthru commands. */
static void
test_io_options(void)
{
	CU_ASSERT_EQUAL(parse("read", "emu:", "-s", "1k", "-c", "65535", "-z", "4k", "-y", "8",
			      "-d", "out", "-M", "md", "-v", "-w", "-t", "--force", NULL),
			0);
	CU_ASSERT_EQUAL(g_a.io.slba, 1024);
	CU_ASSERT_EQUAL(g_a.io.nlb, 65535);
	CU_ASSERT_EQUAL(g_a.io.data_size, 4096);
	CU_ASSERT_EQUAL(g_a.io.md_size, 8);
	CU_ASSERT_STRING_EQUAL(g_a.io.data, "out");
	CU_ASSERT_STRING_EQUAL(g_a.io.md, "md");
	CU_ASSERT_TRUE(g_a.io.show && g_a.io.dry_run && g_a.io.latency && g_a.force);
	CU_ASSERT_EQUAL(parse("write-zeroes", "emu:", "--start-block=9", "--block-count", "2",
			      "--deac", "--force-unit-access", NULL),
			0);
	CU_ASSERT_TRUE(g_a.io.deac && g_a.io.fua);
	CU_ASSERT_EQUAL(parse("dsm", "emu:", "--slbs", "1,2", "--blocks", "8", "--ad", "--idw",
			      "--idr", "-c", "4", NULL),
			0);
	CU_ASSERT_TRUE(g_a.io.ad && g_a.io.idw && g_a.io.idr && g_a.cdw11_set);
	CU_ASSERT_EQUAL(parse("flush", "emu:", "-n", "0xffffffff", NULL), 0);
	CU_ASSERT_EQUAL(parse("get-log", "emu:", "--log-id", "2", "--log-len", "512", "--lpo", "4k",
			      "--rae", "-b", NULL),
			0);
	CU_ASSERT_EQUAL(g_a.log.lpo, 4096);
	CU_ASSERT_EQUAL(g_a.output, CLI_OUT_BINARY);
	CU_ASSERT_EQUAL(parse("io-passthru", "emu:", "--opcode", "2", "--namespace-id", "1",
			      "--data-len", "512", "--read", "--input-file", "f", "--raw-binary",
			      "--metadata-len", "8", "--metadata", "m", "--timeout", "100",
			      "--dry-run", "--show-command", "--latency", "--prefill", "0xff",
			      NULL),
			0);
	CU_ASSERT_TRUE(g_a.pt.read && g_a.pt.dry_run && g_a.pt.show && g_a.pt.latency);
	CU_ASSERT_EQUAL(g_a.pt.data_len, 512);
	CU_ASSERT_EQUAL(g_a.pt.prefill, 0xff);
	CU_ASSERT_EQUAL(parse("format", "emu:", "-t", "1000", "-i", "1", "-p", "1", "-m", "1", "-r",
			      "-b", "4096", NULL),
			0);
	CU_ASSERT_TRUE(g_a.reset_after);
	CU_ASSERT_EQUAL(g_a.block_size, 4096);
	CU_ASSERT_FALSE(g_a.lbaf_set);
	CU_ASSERT_EQUAL(parse("id-ctrl", "emu:", "-v", NULL), 0);
	CU_ASSERT_TRUE(g_a.vendor_specific);
	CU_ASSERT_EQUAL(parse("fw-download", "emu:", "-f", "x", "-x", "8192", "-o", "4", NULL), 0);
	CU_ASSERT_EQUAL(g_a.xfer, 8192);
	CU_ASSERT_EQUAL(g_a.fw_offset, 4);
	CU_ASSERT_EQUAL(parse("set-feature", "emu:", "-f", "6", "-v", "1", "-c", "7", NULL), 0);
	CU_ASSERT_EQUAL(g_a.cdw12, 7);
	CU_ASSERT_EQUAL(parse("list", "-v", NULL), 0);
	CU_ASSERT_TRUE(g_a.verbose);
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
	/* the I/O, log and passthru commands */
	expect_error(parse("read", "emu:", "-s", "0", "-c", "0", NULL), "--data-size is required");
	expect_error(parse("read", "emu:", "-z", "512", "-c", "65536", NULL),
		     "invalid value '65536'");
	expect_error(parse("read", "emu:", "-z", "0", NULL), "invalid value '0' for --data-size");
	expect_error(parse("write", "emu:", "-z", "512", "-M", "m", NULL), "needs --metadata-size");
	expect_error(parse("write", "emu:", "-z", "512", "-T", "16", NULL), "invalid value '16'");
	expect_error(parse("write", "emu:", "-z", "512", "-p", "16", NULL), "invalid value '16'");
	expect_error(parse("write", "emu:", "-z", "512", "-g", "1", NULL), "unknown option '-g'");
	expect_error(parse("compare", "emu:", "-z", "512", "-r", "0x100000000", NULL),
		     "for --ref-tag");
	expect_error(parse("write-zeroes", "emu:", "-z", "512", NULL), "unknown option '-z'");
	expect_error(parse("dsm", "emu:", NULL), "no range given");
	expect_error(parse("dsm", "emu:", "-s", "1,,2", NULL), "--slbs needs");
	expect_error(parse("dsm", "emu:", "-s", "1,", NULL), "--slbs needs");
	expect_error(parse("dsm", "emu:", "-b", "0x100000000", NULL), "--blocks needs");
	expect_error(parse("get-log", "emu:", "-l", "512", NULL), "--log-id is required");
	expect_error(parse("get-log", "emu:", "-i", "2", NULL), "--log-len is required");
	expect_error(parse("get-log", "emu:", "-i", "2", "-l", "5", NULL), "not a multiple of 4");
	expect_error(parse("get-log", "emu:", "-i", "256", "-l", "4", NULL), "invalid value '256'");
	expect_error(parse("get-log", "emu:", "-i", "2", "-l", "4", "-s", "128", NULL),
		     "for --lsp");
	expect_error(parse("io-passthru", "emu:", NULL), "--opcode is required");
	expect_error(parse("io-passthru", "emu:", "-o", "0x100", NULL), "invalid value '0x100'");
	expect_error(parse("io-passthru", "emu:", "-o", "0", "-l", "512", NULL),
		     "data direction not given");
	expect_error(parse("admin-passthru", "emu:", "-o", "6", "-w", "-l", "8", NULL),
		     "both directions");
	expect_error(parse("admin-passthru", "emu:", "-o", "0xc0", "-r", "-w", "-m", "8", NULL),
		     "both directions");
	/* without data, the direction bits of an opcode (0xff: both) do not matter */
	CU_ASSERT_EQUAL(parse("admin-passthru", "emu:", "-o", "0xff", NULL), 0);
	expect_error(parse("format", "emu:", "-l", "1", "-b", "4096", NULL), "exclude each other");
	expect_error(parse("format", "emu:", "-b", "1000", NULL), "not a power of two");
	expect_error(parse("format", "emu:", "-i", "4", NULL), "invalid value '4'");
	expect_error(parse("fw-download", "emu:", "-f", "x", "-x", "6000", NULL),
		     "not a multiple of 4096");
	expect_error(parse("list", "-v", "-z", NULL), "unknown option '-z'");
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
		UT_TEST(test_usage),        UT_TEST(test_option_table),
		UT_TEST(test_io_options),
	};

	return ut_run("cli_args", tests, NVP_COUNTOF(tests));
}

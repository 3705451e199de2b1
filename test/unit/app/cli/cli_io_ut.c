/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for app/cli/cli_io.c and cli_passthru.c: the commands nvp builds from a
 * command line, dword for dword, and nvme-cli's hex dump, byte for byte.
 *
 * The expected values are what nvme-cli 2.3 (Debian 12) sends for the same command line:
 * read from its ioctl argument (an LD_PRELOAD shim in place of the kernel) and, for the
 * hex dump, from its output on QEMU's controller.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "cli_args.c"
#include "cli_opts.c"
#include "cli_dev.c"
#include "cli_io.c"
#include "cli_passthru.c"

#include "ut_main.h"

static struct cli_args g_a;

static void
parse(const char *first, ...)
{
	char *argv[48];
	char err[512] = "";
	int argc = 0;
	va_list ap;

	va_start(ap, first);
	for (const char *w = first; w != NULL && argc < 47; w = va_arg(ap, const char *)) {
		argv[argc++] = (char *)w;
	}
	va_end(ap);
	argv[argc] = NULL;
	if (cli_args_parse(argc, argv, &g_a, err, sizeof(err)) != 0) {
		fprintf(stderr, "  %s\n", err);
		CU_FAIL("command line rejected");
	}
}

/* nvme read /dev/nvme0n1 -n 1 -s 0x10 -c 7 -z 32768 -a 0x1234 -m 0xffff -r 77 -p 0xf -l -f
 * -T 2 -S 3 -D 0x5 */
static void
test_rw_encode(void)
{
	struct nvme_cmd cmd;

	parse("read", "emu:", "-n", "1", "-s", "0x10", "-c", "7", "-z", "32768", "-a", "0x1234",
	      "-m", "0xffff", "-r", "77", "-p", "0xf", "-l", "-f", "-T", "2", "-S", "3", "-D",
	      "0x5", NULL);
	cli_io_encode(&g_a.io, NVME_OPC_READ, 1, &cmd);
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_READ);
	CU_ASSERT_EQUAL(cmd.nsid, 1);
	CU_ASSERT_EQUAL(cmd.cdw10, 0x10);
	CU_ASSERT_EQUAL(cmd.cdw11, 0);
	CU_ASSERT_EQUAL(cmd.cdw12, 0xfc200007);
	CU_ASSERT_EQUAL(cmd.cdw13, 0x00030005);
	CU_ASSERT_EQUAL(cmd.cdw14, 77);
	CU_ASSERT_EQUAL(cmd.cdw15, 0xffff1234);

	/* dspec goes to CDW13 without a directive type too; -C is STC, CDW12 bit 24; a 64-bit
	 * LBA and a size suffix */
	parse("write", "emu:", "-s", "0x100000002", "-z", "4k", "-S", "3", "-D", "5", "-C", NULL);
	cli_io_encode(&g_a.io, NVME_OPC_WRITE, 1, &cmd);
	CU_ASSERT_EQUAL(g_a.io.data_size, 4096);
	CU_ASSERT_EQUAL(cmd.cdw10, 2);
	CU_ASSERT_EQUAL(cmd.cdw11, 1);
	CU_ASSERT_EQUAL(cmd.cdw12, 0x01000000);
	CU_ASSERT_EQUAL(cmd.cdw13, 0x00030005);

	/* nvme write-zeroes -n 1 -s 8 -c 3 --deac -f -p 8 -r 5 -a 2 -m 3 -l */
	parse("write-zeroes", "emu:", "-s", "8", "-c", "3", "--deac", "-f", "-p", "8", "-r", "5",
	      "-a", "2", "-m", "3", "-l", NULL);
	cli_io_encode(&g_a.io, NVME_OPC_WRITE_ZEROES, 1, &cmd);
	CU_ASSERT_EQUAL(cmd.cdw10, 8);
	CU_ASSERT_EQUAL(cmd.cdw12, 0xe2000003);
	CU_ASSERT_EQUAL(cmd.cdw13, 0);
	CU_ASSERT_EQUAL(cmd.cdw14, 5);
	CU_ASSERT_EQUAL(cmd.cdw15, 0x00030002);
}

/* nvme dsm -s 8,100 -b 4,8 -a 1 -d: two ranges; a short list leaves zeros */
static void
test_dsm_ranges(void)
{
	struct nvme_dsm_range r[CLI_DSM_MAX_RANGES];

	parse("dsm", "emu:", "-s", "8,100", "-b", "4,8", "-a", "1", "-d", NULL);
	CU_ASSERT_EQUAL_FATAL(cli_dsm_ranges(&g_a.io, r), 2);
	CU_ASSERT_EQUAL(r[0].starting_lba, 8);
	CU_ASSERT_EQUAL(r[0].length, 4);
	CU_ASSERT_EQUAL(r[0].attributes, 1);
	CU_ASSERT_EQUAL(r[1].starting_lba, 100);
	CU_ASSERT_EQUAL(r[1].length, 8);
	CU_ASSERT_EQUAL(r[1].attributes, 0);
	CU_ASSERT_TRUE(g_a.io.ad);
}

/* nvme get-log -i 2 -l 64 -o 4096 -s 1 -S 7 -U 2 -y 1 -O -r; -a 0x30201 */
static void
test_log_encode(void)
{
	struct nvme_cmd cmd;

	parse("get-log", "emu:", "-i", "2", "-l", "64", "-o", "4096", "-s", "1", "-S", "7", "-U",
	      "2", "-y", "1", "-O", "-r", NULL);
	cli_log_encode(&g_a.log, 0xffffffff, &cmd);
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_GET_LOG_PAGE);
	CU_ASSERT_EQUAL(cmd.nsid, 0xffffffff);
	CU_ASSERT_EQUAL(cmd.cdw10, 0x000f8102);
	CU_ASSERT_EQUAL(cmd.cdw11, 0x00070000);
	CU_ASSERT_EQUAL(cmd.cdw12, 0x1000);
	CU_ASSERT_EQUAL(cmd.cdw13, 0);
	CU_ASSERT_EQUAL(cmd.cdw14, 0x01800002);

	parse("get-log", "emu:", "-a", "0x30201", NULL);
	cli_log_encode(&g_a.log, 0xffffffff, &cmd);
	CU_ASSERT_EQUAL(cmd.cdw10, 0x03ff0003);

	/* NUMDU: 1 MiB is 0x40000 dwords */
	parse("get-log", "emu:", "-i", "0xc0", "-l", "1048576", NULL);
	cli_log_encode(&g_a.log, 1, &cmd);
	CU_ASSERT_EQUAL(cmd.cdw10, 0xffff00c0);
	CU_ASSERT_EQUAL(cmd.cdw11, 0x3);
}

/* nvme admin-passthru -o 0xc0 -f 0x41 -R 0x1234 -n 5 --cdw2 2 --cdw3 3 -4 10 ... -9 15 */
static void
test_pt_encode(void)
{
	struct nvme_cmd cmd;

	parse("admin-passthru", "emu:", "-o", "0xc0", "-f", "0x41", "-R", "0x1234", "-n", "5",
	      "--cdw2", "2", "--cdw3", "3", "-4", "10", "-5", "11", "-6", "12", "-7", "13", "-8",
	      "14", "-9", "15", "-t", "500", NULL);
	cli_pt_encode(&g_a, &cmd);
	CU_ASSERT_EQUAL(cmd.opc, 0xc0);
	CU_ASSERT_EQUAL(cmd.fuse, 1);
	CU_ASSERT_EQUAL(cmd.psdt, 1);
	CU_ASSERT_EQUAL(cmd.cid, 0); /* the driver's; --rsvd is not sent */
	CU_ASSERT_EQUAL(cmd.nsid, 5);
	CU_ASSERT_EQUAL(cmd.cdw2, 2);
	CU_ASSERT_EQUAL(cmd.cdw3, 3);
	CU_ASSERT_EQUAL(cmd.cdw10, 10);
	CU_ASSERT_EQUAL(cmd.cdw11, 11);
	CU_ASSERT_EQUAL(cmd.cdw12, 12);
	CU_ASSERT_EQUAL(cmd.cdw13, 13);
	CU_ASSERT_EQUAL(cmd.cdw14, 14);
	CU_ASSERT_EQUAL(cmd.cdw15, 15);
	CU_ASSERT_EQUAL(g_a.timeout_ms, 500);
	CU_ASSERT_EQUAL(g_a.pt.rsvd, 0x1234);
	CU_ASSERT_STRING_EQUAL(cli_opcode_name(true, 0x06), "Identify");
	CU_ASSERT_STRING_EQUAL(cli_opcode_name(false, 0x09), "Dataset Management");
	CU_ASSERT_STRING_EQUAL(cli_opcode_name(true, 0xc0), "Vendor Specific");
}

static char *
dump(const uint8_t *buf, size_t len)
{
	static char out[4096];
	FILE *f = fmemopen(out, sizeof(out) - 1, "w");

	memset(out, 0, sizeof(out));
	if (f != NULL) {
		cli_hexdump(f, buf, len);
		fclose(f);
	}
	return out;
}

/* nvme-cli 2.3's d(): its header, "%04x:" offsets, ASCII between quotes, and the extra
 * character after a partial last line (what the line above left in that column). */
static void
test_hexdump(void)
{
	uint8_t b[40];

	for (size_t i = 0; i < sizeof(b); i++) {
		b[i] = (uint8_t)(i * 7 + 0x20);
	}
	CU_ASSERT_STRING_EQUAL(
		dump(b, 40),
		"       0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f\n"
		"0000: 20 27 2e 35 3c 43 4a 51 58 5f 66 6d 74 7b 82 89 \".'.5<CJQX_fmt{..\"\n"
		"0010: 90 97 9e a5 ac b3 ba c1 c8 cf d6 dd e4 eb f2 f9 \"................\"\n"
		"0020: 00 07 0e 15 1c 23 2a 31                          \".....#*1.\"\n");
	CU_ASSERT_STRING_EQUAL(
		dump(b, 16),
		"       0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f\n"
		"0000: 20 27 2e 35 3c 43 4a 51 58 5f 66 6d 74 7b 82 89 \".'.5<CJQX_fmt{..\"\n");
	CU_ASSERT_STRING_EQUAL(
		dump(b, 5), "       0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f\n"
			    "0000: 20 27 2e 35 3c                                   \".'.5<\"\n");
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_rw_encode), UT_TEST(test_dsm_ranges), UT_TEST(test_log_encode),
		UT_TEST(test_pt_encode), UT_TEST(test_hexdump),
	};

	return ut_run("cli_io", tests, NVP_COUNTOF(tests));
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp's nvme-cli 2.3 I/O and passthru commands against software controllers: what is
 * written comes back byte for byte (through read, compare, a passthru read, standard
 * input and output, separate metadata), the controller's answers show as nvme-cli shows
 * them, and bad input exits 2 (usage) or 1 (the device or a file said no) with a message
 * that names it, never a crash. Also format -b/-r, fw-download -x/-o, id-ctrl -v,
 * list -v, and the man page: every command and option `nvp help` lists is in it.
 *
 * A software controller lives for one invocation, so a sequence on one runs as one
 * chained invocation ("write emu:... + read emu:...").
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "subproc.h"

#define DEV "emu:size=1M"

static char g_prog[PATH_MAX];
static char g_dir[] = "/tmp/nvp_cli_io.XXXXXX";

static struct {
	char *out;
	size_t out_len;
	char *err;
} g_run;

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	*len = 0;
	if (f == NULL) {
		return calloc(1, 1);
	}
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = calloc(1, (size_t)n + 1);
		if (buf != NULL && fread(buf, 1, (size_t)n, f) == (size_t)n) {
			*len = (size_t)n;
		}
	}
	fclose(f);
	return buf != NULL ? buf : calloc(1, 1);
}

/* Remove the files a test writes: nvp, as nvme-cli, does not truncate an output file. */
static void
fresh(void)
{
	static const char *const outs[] = { "out", "out2", "mdout", "dry" };

	for (size_t i = 0; i < NVP_COUNTOF(outs); i++) {
		char p[sizeof(g_dir) + 16];

		snprintf(p, sizeof(p), "%s/%s", g_dir, outs[i]);
		unlink(p);
	}
}

/* A file of the test directory. */
static const char *
path(const char *name)
{
	static char p[4][sizeof(g_dir) + 64];
	static int next;
	char *r = p[next++ % 4];

	snprintf(r, sizeof(p[0]), "%s/%s", g_dir, name);
	return r;
}

/* Run nvp @args (printf style), stdin from @in. \return its exit status, -1: no exit. */
static int __attribute__((format(printf, 2, 3))) run_in(const char *in, const char *fmt, ...)
{
	char args[3 * PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	free(g_run.out);
	free(g_run.err);
	return fx_run_split(g_prog, args, in, &g_run.out, &g_run.out_len, &g_run.err);
}

#define run(...) run_in("/dev/null", __VA_ARGS__)

static void
write_file(const char *name, const void *buf, size_t len)
{
	FILE *f = fopen(path(name), "wb");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(fwrite(buf, 1, len, f), len);
	fclose(f);
}

/* The file holds exactly @len bytes equal to @buf. */
static bool
file_is(const char *name, const void *buf, size_t len)
{
	size_t n;
	char *d = slurp(path(name), &n);
	bool same = n == len && memcmp(d, buf, len) == 0;

	if (!same) {
		fprintf(stderr, "  %s: %zu bytes, expected %zu%s\n", name, n, len,
			n == len ? " (contents differ)" : "");
	}
	free(d);
	return same;
}

static void
fill(uint8_t *buf, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (uint8_t)(seed >> 16);
	}
}

static bool
has(const char *hay, const char *needle)
{
	if (strstr(hay, needle) != NULL) {
		return true;
	}
	fprintf(stderr, "  missing '%s' in:\n%s\n", needle, hay);
	return false;
}

/* write a file's bytes, read them back (to a file and to stdout), compare: identical */
static void
test_round_trip(void)
{
	static uint8_t data[8192], zero[8192];

	fresh();

	fill(data, sizeof(data), 1);
	write_file("in", data, sizeof(data));
	CU_ASSERT_EQUAL(run("write " DEV " -s 8 -c 15 -z 8192 -d '%s' + read " DEV
			    " -s 8 -c 15 -z 8192 -d '%s' + compare " DEV
			    " --start-block=8 --block-count=15 --data-size=8192 --data='%s'",
			    path("in"), path("out"), path("in")),
			0);
	CU_ASSERT(file_is("out", data, sizeof(data)));
	CU_ASSERT(has(g_run.err, "write: Success\nread: Success\ncompare: Success\n"));
	CU_ASSERT_EQUAL(g_run.out_len, 0);

	/* standard input in, standard output out */
	CU_ASSERT_EQUAL(run_in(path("in"), "write " DEV " -s 100 -c 7 -z 4096 + read " DEV
					   " -s 100 -c 7 -z 4096"),
			0);
	CU_ASSERT_EQUAL_FATAL(g_run.out_len, 4096);
	CU_ASSERT(memcmp(g_run.out, data, 4096) == 0);

	/* one block off: the controller says Compare Failure, exit 1 */
	CU_ASSERT_EQUAL(run("write " DEV " -s 8 -c 15 -z 8192 -d '%s' + compare " DEV
			    " -s 9 -c 15 -z 8192 -d '%s'",
			    path("in"), path("in")),
			1);
	CU_ASSERT(has(g_run.err, "compare: NVMe status: Compare Failure (0x285)"));

	/* -z below the blocks: nvme-cli's rounding message, -z bytes out */
	CU_ASSERT_EQUAL(run("read " DEV " -s 0 -c 1 -z 100"), 0);
	CU_ASSERT_EQUAL(g_run.out_len, 100);
	CU_ASSERT(has(g_run.err, "Rounding data size to fit block count (1024 bytes)"));

	/* a short input file: the rest of the blocks are zeros */
	write_file("short", data, 700);
	CU_ASSERT_EQUAL(run("write " DEV " -s 0 -c 1 -z 1024 -d '%s' + read " DEV
			    " -s 0 -c 1 -z 1024 -d '%s'",
			    path("short"), path("out2")),
			0);
	memcpy(zero, data, 700);
	CU_ASSERT(file_is("out2", zero, 1024));
}

/* write-zeroes, dsm deallocate (DLFEAT: reads zeros), flush, with nvme-cli's messages */
static void
test_zeroes_dsm_flush(void)
{
	static uint8_t data[8192], expect[8192];

	fresh();

	fill(data, sizeof(data), 2);
	write_file("in", data, sizeof(data));
	memcpy(expect, data, sizeof(expect));
	memset(expect + 2 * 512, 0, 2 * 512);  /* write-zeroes -s 2 -c 1 */
	memset(expect + 8 * 512, 0, 4 * 512);  /* dsm -s 8 -b 4 */
	memset(expect + 14 * 512, 0, 1 * 512); /* dsm -s 14 -b 1 */
	CU_ASSERT_EQUAL(run("write " DEV " -s 0 -c 15 -z 8192 -d '%s' + write-zeroes " DEV
			    " -s 2 -c 1 + dsm " DEV " -s 8,14 -b 4,1 -d + flush " DEV " + read " DEV
			    " -s 0 -c 15 -z 8192 -d '%s'",
			    path("in"), path("out")),
			0);
	CU_ASSERT(file_is("out", expect, sizeof(expect)));
	CU_ASSERT(has(g_run.out,
		      "NVME Write Zeroes Success\nNVMe DSM: success\nNVMe Flush: success\n"));
	CU_ASSERT_EQUAL(run("write-zeroes " DEV " -s 2047 -c 1"), 1);
	CU_ASSERT(has(g_run.err, "write-zeroes: NVMe status: LBA Out of Range (0x80)"));
}

/* separate metadata (-y, -M) through the metadata pointer */
static void
test_metadata(void)
{
	static uint8_t data[2048], md[32];

	fresh();

	fill(data, sizeof(data), 3);
	fill(md, sizeof(md), 4);
	write_file("in", data, sizeof(data));
	write_file("md", md, sizeof(md));
	CU_ASSERT_EQUAL(run("write emu:size=1M,ms=8 -s 4 -c 3 -z 2048 -y 32 -d '%s' -M '%s' + read "
			    "emu:size=1M,ms=8 -s 4 -c 3 -z 2048 -y 32 -d '%s' -M '%s'",
			    path("in"), path("md"), path("out"), path("mdout")),
			0);
	CU_ASSERT(file_is("out", data, sizeof(data)));
	CU_ASSERT(file_is("mdout", md, sizeof(md)));
	/* without -M, as nvme-cli: the metadata goes to standard output, not after the data */
	CU_ASSERT_EQUAL(run("write emu:size=1M,ms=8 -s 4 -c 3 -z 2048 -y 32 -d '%s' -M '%s' + read "
			    "emu:size=1M,ms=8 -s 5 -c 0 -z 512 -y 8 -d '%s'",
			    path("in"), path("md"), path("out2")),
			0);
	CU_ASSERT(file_is("out2", data + 512, 512));
	CU_ASSERT(g_run.out_len == 8 && memcmp(g_run.out, md + 8, 8) == 0);
}

/* --show-command, --dry-run (nothing sent), --latency */
static void
test_show_dry_latency(void)
{
	fresh();
	CU_ASSERT_EQUAL(
		run("read " DEV " -s 8 -c 1 -z 1024 -d '%s' -w -a 0x12 -m 0xff -p 1", path("dry")),
		0);
	CU_ASSERT(has(g_run.out, "opcode       : 02\nnsid         : 01\nflags        : 00\n"
				 "control      : 0400\nnblocks      : 0001\n"));
	CU_ASSERT(has(g_run.out, "slba         : 8\n"));
	CU_ASSERT(has(g_run.out, "apptag       : 0012\nappmask      : 00ff\n"));
	CU_ASSERT(strstr(g_run.err, "Success") == NULL);
	CU_ASSERT_EQUAL(run("write " DEV " -z 512 -t -v -d '%s'", path("dry")), 0);
	CU_ASSERT(has(g_run.out, "opcode       : 01\n"));
	CU_ASSERT(has(g_run.out, " latency: write: "));
	CU_ASSERT_EQUAL(run("io-passthru " DEV " -o 2 -n 1 -l 512 -r --cdw10 8 -d --prefill 1"), 0);
	CU_ASSERT(has(g_run.out, "opcode       : 02\nflags        : 00\nrsvd1        : 0000\n"
				 "nsid         : 00000001\n"));
	CU_ASSERT(has(g_run.out, "data_len     : 00000200\n"));
	CU_ASSERT(has(g_run.out, "cdw10        : 00000008\n"));
	CU_ASSERT(strstr(g_run.err, "Success") == NULL);
}

/* get-log and admin-passthru return the bytes fw-log -b and id-ctrl -b return */
static void
test_get_log_admin_passthru(void)
{
	size_t n;
	char *ref;

	CU_ASSERT_EQUAL(run("fw-log " DEV " -b"), 0);
	write_file("fwlog", g_run.out, g_run.out_len);
	CU_ASSERT_EQUAL(run("get-log " DEV " -i 3 -l 512 -b"), 0);
	CU_ASSERT_EQUAL_FATAL(g_run.out_len, 512);
	CU_ASSERT(file_is("fwlog", g_run.out, 512));
	CU_ASSERT_EQUAL(run("get-log " DEV " --log-id=3 --log-len=32"), 0);
	CU_ASSERT(has(g_run.out, "Device:" DEV " log-id:3 namespace-id:0xffffffff\n"
				 "       0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f\n0000: "));
	CU_ASSERT(has(g_run.out, "\n0010: "));

	CU_ASSERT_EQUAL(run("id-ctrl " DEV " -b"), 0);
	write_file("idctrl", g_run.out, g_run.out_len);
	CU_ASSERT_EQUAL(
		run("admin-passthru " DEV " --opcode=6 --data-len=4096 --read --cdw10=1 -b"), 0);
	CU_ASSERT(file_is("idctrl", g_run.out, 4096));
	CU_ASSERT(has(g_run.err, "Admin Command Identify is Success and result: 0x00000000\n"));
	/* the controller moves 4096 bytes whatever -l says: they land in nvp's buffer (with
	 * nvme-cli on the heap, which glibc then aborts on) */
	CU_ASSERT_EQUAL(run("admin-passthru " DEV " -o 6 -l 64 --cdw10 1 -b"), 0);
	CU_ASSERT_EQUAL_FATAL(g_run.out_len, 64);
	ref = slurp(path("idctrl"), &n);
	CU_ASSERT(n == 4096 && memcmp(ref, g_run.out, 64) == 0);
	free(ref);
	CU_ASSERT_EQUAL(run("admin-passthru " DEV " -o 6 -l 16 --cdw10 1"), 0);
	CU_ASSERT(has(g_run.out, "0000: "));
	CU_ASSERT(strstr(g_run.out, "0010: ") == NULL);
	/* the controller refuses: its status, exit 1 */
	CU_ASSERT_EQUAL(run("admin-passthru " DEV " -o 0xff"), 1);
	CU_ASSERT(has(g_run.err, "admin-passthru: NVMe status: Invalid Command Opcode (0x1)"));
	CU_ASSERT_EQUAL(run("get-log " DEV " -i 0x42 -l 64"), 1);
	CU_ASSERT(has(g_run.err, "get-log: NVMe status: "));
	CU_ASSERT_EQUAL(g_run.out_len, 0);
}

/* io-passthru writes with -i, reads into -i and as a hex dump */
static void
test_io_passthru(void)
{
	static uint8_t data[512];

	fresh();

	fill(data, sizeof(data), 5);
	write_file("in", data, sizeof(data));
	CU_ASSERT_EQUAL(run("io-passthru " DEV " -o 1 -n 1 -l 512 -w --cdw10 8 -i '%s' + read " DEV
			    " -s 8 -z 512 -d '%s' + io-passthru " DEV
			    " -o 2 -n 1 -l 512 --cdw10 8 -i '%s' --latency",
			    path("in"), path("out"), path("out2")),
			0);
	CU_ASSERT(file_is("out", data, sizeof(data)));
	CU_ASSERT(file_is("out2", data, sizeof(data)));
	CU_ASSERT(has(g_run.err, "IO Command Write is Success and result: 0x00000000\n"));
	CU_ASSERT(has(g_run.err, "IO Command Read is Success and result: 0x00000000\n"));
	CU_ASSERT(has(g_run.out, "IO Command Read latency: "));
	CU_ASSERT_EQUAL(run("io-passthru " DEV " -o 0x7f -n 1"), 1);
	CU_ASSERT(has(g_run.err, "io-passthru: NVMe status: Invalid Command Opcode (0x1)"));
	/* one range: 4 blocks at LBA 8, deallocate */
	write_file("range", &(struct nvme_dsm_range){ .length = 4, .starting_lba = 8 }, 16);
	CU_ASSERT_EQUAL(
		run("io-passthru " DEV " -o 9 -n 1 -l 16 -w --cdw11 4 -i '%s'", path("range")), 0);
	CU_ASSERT(has(g_run.err, "IO Command Dataset Management is Success"));
}

/* Bad input: usage errors exit 2 before anything is sent; the rest exit 1, named. */
static void
test_bad_input(void)
{
	static const char *const usage[] = {
		"read " DEV " -s 0 -c 0",
		"read " DEV " -z 512 -c 65536",
		"read " DEV " -z abc",
		"write " DEV " -z 512 -M md",
		"compare " DEV " -z 512 -p 16",
		"write-zeroes " DEV " -z 512",
		"dsm " DEV,
		"dsm " DEV " -s 1,,2",
		"flush " DEV " -n 0",
		"get-log " DEV " -l 512",
		"get-log " DEV " -i 2",
		"get-log " DEV " -i 2 -l 6",
		"io-passthru " DEV,
		"io-passthru " DEV " -o 0x100",
		"io-passthru " DEV " -o 0 -l 512",
		"admin-passthru " DEV " -o 6 -w -l 4096",
		"format " DEV " -l 1 -b 4096",
		"format " DEV " -b 1000",
		"fw-download " DEV " -f x -x 6000",
		"read " DEV " -z 512 + bogus",
	};

	for (size_t i = 0; i < NVP_COUNTOF(usage); i++) {
		int rc = run("%s", usage[i]);

		if (rc != 2 || strstr(g_run.err, "nvp help") == NULL || g_run.out_len != 0) {
			fprintf(stderr, "  nvp %s: exit %d, stderr '%s'\n", usage[i], rc,
				g_run.err);
		}
		CU_ASSERT_EQUAL(rc, 2);
		CU_ASSERT_PTR_NOT_NULL(strstr(g_run.err, "nvp help"));
		CU_ASSERT_EQUAL(g_run.out_len, 0);
	}
	/* past the end of the namespace: the controller's status */
	CU_ASSERT_EQUAL(run("read " DEV " -s 2047 -c 1 -z 1024"), 1);
	CU_ASSERT(has(g_run.err, "read: NVMe status: LBA Out of Range (0x80)"));
	CU_ASSERT_EQUAL(g_run.out_len, 0);
	/* more than MDTS (5: 128 KiB) in one command */
	CU_ASSERT_EQUAL(run("read " DEV " -c 511 -z 256k"), 1);
	CU_ASSERT(has(g_run.err, "read: 512 blocks are 262144 bytes, more than the controller "
				 "moves in one command (131072 bytes)"));
	CU_ASSERT_EQUAL(run("get-log " DEV " -i 2 -l 262144"), 1);
	CU_ASSERT(has(g_run.err, "more than the controller moves in one command"));
	/* files that cannot be read or written */
	CU_ASSERT_EQUAL(run("write " DEV " -z 512 -d /nonexistent/in"), 1);
	CU_ASSERT(
		has(g_run.err, "write: cannot open '/nonexistent/in': No such file or directory"));
	CU_ASSERT_EQUAL(run("write " DEV " -z 512 -d /"), 1);
	CU_ASSERT(has(g_run.err, "write: cannot read '/': Is a directory"));
	CU_ASSERT_EQUAL(run("read " DEV " -z 512 -d /nonexistent/out"), 1);
	CU_ASSERT(has(g_run.err, "read: cannot open '/nonexistent/out'"));
	CU_ASSERT_EQUAL(run("io-passthru " DEV " -o 1 -n 1 -l 512 -i /nonexistent/in"), 1);
	CU_ASSERT(has(g_run.err, "cannot open '/nonexistent/in'"));
	/* a namespace the controller does not have */
	CU_ASSERT_EQUAL(run("read " DEV " -n 9 -z 512"), 1);
	CU_ASSERT(has(g_run.err, "read: namespace 9 is not active"));
	CU_ASSERT_EQUAL(run("flush " DEV " -n 9"), 1);
	CU_ASSERT(has(g_run.err, "flush: NVMe status: "));
}

/* format -b picks the format by data size; -r resets after it; id-ctrl -v dumps vs[] */
static void
test_admin_options(void)
{
	CU_ASSERT_EQUAL(run("format " DEV " -b 4096 --force -r + id-ns " DEV), 0);
	CU_ASSERT(has(g_run.out, "Success formatting namespace:1\n"));
	CU_ASSERT(has(g_run.out, "lbaf  1 : ms:0   lbads:12 rp:0 (in use)"));
	/* no -l, no -b: the current format stays */
	CU_ASSERT_EQUAL(run("format " DEV " -b 4096 --force + format " DEV " --force + id-ns " DEV),
			0);
	CU_ASSERT(has(g_run.out, "lbaf  1 : ms:0   lbads:12 rp:0 (in use)"));
	CU_ASSERT_EQUAL(run("format " DEV " -b 1024 --force"), 1);
	CU_ASSERT(has(g_run.err, "no LBA format of 1024-byte blocks"));
	/* with metadata offered: -b picks the format without (lbaf 1, not 3) */
	CU_ASSERT_EQUAL(run("format emu:size=1M,ms=8 -b 4096 --force + id-ns emu:size=1M,ms=8"), 0);
	CU_ASSERT(has(g_run.out, "lbaf  1 : ms:0   lbads:12 rp:0 (in use)"));

	CU_ASSERT_EQUAL(run("id-ctrl " DEV " -v"), 0);
	CU_ASSERT(has(g_run.out, "\nvs[]:\n       0  1  2"));
	CU_ASSERT(has(g_run.out, "\n03f0: "));
	CU_ASSERT_EQUAL(run("set-feature " DEV " -f 6 -v 0 -c 5"), 0);
	CU_ASSERT(has(g_run.out, "cdw12:0x00000005"));
}

static void
test_fw_download_xfer(void)
{
	static uint8_t img[16384];

	memcpy(img, "NVPX-3.0", 8);
	fill(img + 8, sizeof(img) - 8, 6);
	write_file("fw.bin", img, sizeof(img));
	/* four commands of 4 KiB, then commit and reset: slot 2 runs it */
	CU_ASSERT_EQUAL(run("fw-download " DEV " -f '%s' -x 4096 + fw-commit " DEV
			    " -s 2 -a 1 + reset " DEV " + fw-log " DEV,
			    path("fw.bin")),
			0);
	CU_ASSERT(has(g_run.out, "Firmware download success\n"));
	CU_ASSERT(has(g_run.out, "frs2 : NVPX-3.0"));
	/* -o past the image; --xfer above the transfer limit */
	CU_ASSERT_EQUAL(run("fw-download " DEV " -f '%s' -o 4096", path("fw.bin")), 1);
	CU_ASSERT(has(g_run.err, "past the end"));
	CU_ASSERT_EQUAL(run("fw-download " DEV " -f '%s' -x 1M", path("fw.bin")), 2);
}

/* list -v: nvme-cli 2.3's three tables */
static void
test_list_verbose(void)
{
	CU_ASSERT_EQUAL(run("list -v emu:nn=2,size=1M,lba=512/4096"), 0);
	CU_ASSERT(has(g_run.out, "Subsystem        Subsystem-NQN"));
	CU_ASSERT(has(g_run.out, "\nDevice   SN                   MN                   "));
	CU_ASSERT(has(g_run.out, "\nDevice       Generic      NSID     Usage                 "));
	CU_ASSERT(has(g_run.out, "nvp-subsys0 "));
	CU_ASSERT(has(g_run.out, " emu    "));
	CU_ASSERT(has(g_run.out, "1          1.05  MB /   1.05  MB    512   B +  0 B   nvp0\n"));
	CU_ASSERT(has(g_run.out, "2          1.05  MB /   1.05  MB      4 KiB +  0 B   nvp0\n"));
	CU_ASSERT_EQUAL(run("list emu:size=1M"), 0);
	CU_ASSERT(has(g_run.out, "Node                  Generic               SN "));
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "round_trip", test_round_trip },
		{ "zeroes_dsm_flush", test_zeroes_dsm_flush },
		{ "metadata", test_metadata },
		{ "show_dry_latency", test_show_dry_latency },
		{ "get_log_admin_passthru", test_get_log_admin_passthru },
		{ "io_passthru", test_io_passthru },
		{ "bad_input", test_bad_input },
		{ "admin_options", test_admin_options },
		{ "fw_download_xfer", test_fw_download_xfer },
		{ "list_verbose", test_list_verbose },
	};
	char cmd[sizeof(g_dir) + 16];
	int rc;

	if (fx_find_program("../../bin/nvp", g_prog, sizeof(g_prog)) != 0) {
		fprintf(stderr, "nvp_cli_io: %s not found: build the apps first (make)\n", g_prog);
		return 1;
	}
	if (mkdtemp(g_dir) == NULL) {
		fprintf(stderr, "nvp_cli_io: mkdtemp %s: %s\n", g_dir, strerror(errno));
		return 1;
	}
	rc = fx_main(argc, argv, "nvp_cli_io", tests, NVP_COUNTOF(tests));
	free(g_run.out);
	free(g_run.err);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "nvp_cli_io: could not remove %s\n", g_dir);
	}
	return rc;
}

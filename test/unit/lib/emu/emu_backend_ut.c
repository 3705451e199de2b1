/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/emu/emu_backend.c: the ram, null and file backends through their ops
 * table (read/write through scatter lists, zero, compare, flush), file persistence and
 * sizing, LBA formats, and namespace identifiers.
 */
#include "emu_ut_helpers.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static struct emu_ctrlr g_c; /* only opts are used by the backends */

static void
ctrlr_opts(enum nvp_emu_backend b, const char *path, uint64_t size)
{
	memset(&g_c, 0, sizeof(g_c));
	nvp_emu_opts_init(&g_c.opts, sizeof(g_c.opts));
	nvp_strlcpy(g_c.opts.name, "be", sizeof(g_c.opts.name));
	g_c.opts.backend = b;
	g_c.opts.ns_size = size;
	if (path != NULL) {
		nvp_strlcpy(g_c.opts.backend_path, path, sizeof(g_c.opts.backend_path));
	}
}

/* A scatter list of three uneven pieces of @buf. */
static void
make_sgl(struct emu_sgl *sgl, uint8_t *buf, uint64_t len)
{
	sgl->segs[0].addr = buf;
	sgl->segs[0].len = 100;
	sgl->segs[1].addr = buf + 100;
	sgl->segs[1].len = 1000;
	sgl->segs[2].addr = buf + 1100;
	sgl->segs[2].len = len - 1100;
	sgl->nsegs = 3;
	sgl->len = len;
}

static void
fill(uint8_t *p, uint64_t len, uint32_t seed)
{
	for (uint64_t i = 0; i < len; i++) {
		p[i] = (uint8_t)(i * 11 + seed);
	}
}

/* Write, read back, compare, zero: the same contract for ram and file. */
static void
exercise(struct emu_ns *ns)
{
	struct emu_sgl sgl;
	uint8_t w[8192], r[8192], bounce[256];
	bool eq = false;

	CU_ASSERT_EQUAL_FATAL(emu_sgl_init(&sgl, 4), 0);
	fill(w, sizeof(w), 3);
	make_sgl(&sgl, w, sizeof(w));
	CU_ASSERT_EQUAL(ns->ops->write(ns, 4096, &sgl), 0);
	memset(r, 0, sizeof(r));
	make_sgl(&sgl, r, sizeof(r));
	CU_ASSERT_EQUAL(ns->ops->read(ns, 4096, &sgl), 0);
	CU_ASSERT(memcmp(w, r, sizeof(w)) == 0);
	CU_ASSERT_EQUAL(ns->ops->read_buf(ns, 4096 + 5000, r, 100), 0);
	CU_ASSERT(memcmp(w + 5000, r, 100) == 0);
	/* compare through a small bounce buffer: equal, then one byte off at the end */
	make_sgl(&sgl, w, sizeof(w));
	CU_ASSERT_EQUAL(emu_backend_compare(ns, 4096, &sgl, bounce, sizeof(bounce), &eq), 0);
	CU_ASSERT(eq);
	w[8191] ^= 0x80;
	CU_ASSERT_EQUAL(emu_backend_compare(ns, 4096, &sgl, bounce, sizeof(bounce), &eq), 0);
	CU_ASSERT_FALSE(eq);
	w[8191] ^= 0x80;
	/* zero an unaligned middle range */
	CU_ASSERT_EQUAL(ns->ops->zero(ns, 4096 + 512, 3000), 0);
	make_sgl(&sgl, r, sizeof(r));
	CU_ASSERT_EQUAL(ns->ops->read(ns, 4096, &sgl), 0);
	CU_ASSERT(memcmp(r, w, 512) == 0);
	for (int i = 512; i < 3512; i++) {
		if (r[i] != 0) {
			CU_FAIL("not zeroed");
			break;
		}
	}
	CU_ASSERT(memcmp(r + 3512, w + 3512, sizeof(w) - 3512) == 0);
	CU_ASSERT_EQUAL(ns->ops->flush(ns), 0);
	emu_sgl_fini(&sgl);
}

static void
test_ram(void)
{
	struct emu_ns ns;
	uint8_t buf[4096];

	ctrlr_opts(NVP_EMU_BACKEND_RAM, NULL, 4u << 20);
	CU_ASSERT_EQUAL_FATAL(emu_ns_init(&g_c, &ns, 1, 512), 0);
	CU_ASSERT_STRING_EQUAL(ns.ops->name, "ram");
	CU_ASSERT_EQUAL(ns.nsze, (4u << 20) / 512);
	exercise(&ns);
	/* a large zero goes back to the kernel (sparse) and still reads zeroes */
	memset(ns.mem, 0x5a, 1u << 20);
	CU_ASSERT_EQUAL(ns.ops->zero(&ns, 100, (1u << 20) - 200), 0);
	CU_ASSERT_EQUAL(ns.mem[99], 0x5a);
	CU_ASSERT_EQUAL(ns.mem[100], 0);
	CU_ASSERT_EQUAL(ns.mem[(1u << 19)], 0);
	CU_ASSERT_EQUAL(ns.mem[(1u << 20) - 101], 0);
	CU_ASSERT_EQUAL(ns.mem[(1u << 20) - 100], 0x5a);
	CU_ASSERT_EQUAL(ns.ops->read_buf(&ns, 8192, buf, sizeof(buf)), 0);
	CU_ASSERT_EQUAL(buf[0], 0);
	emu_ns_fini(&ns);
	CU_ASSERT_PTR_NULL(ns.ops);
}

/* Pages of [p, p + len) resident in memory (mincore). */
static uint64_t
resident_pages(const void *p, uint64_t len)
{
	static unsigned char vec[(16u << 20) / 4096];
	uint64_t n = len / 4096, count = 0;

	CU_ASSERT_FATAL(n <= sizeof(vec));
	CU_ASSERT_EQUAL_FATAL(mincore((void *)p, len, vec), 0);
	for (uint64_t i = 0; i < n; i++) {
		count += vec[i] & 1;
	}
	return count;
}

/*
 * The ram backend is faulted in at creation (the first pass of a benchmark must not run at
 * page-fault speed), unless prefault=0 keeps it sparse.
 */
static void
test_ram_prefault(void)
{
	struct emu_ns ns;

	ctrlr_opts(NVP_EMU_BACKEND_RAM, NULL, 16u << 20);
	CU_ASSERT_EQUAL_FATAL(emu_ns_init(&g_c, &ns, 1, 512), 0);
	CU_ASSERT_EQUAL(resident_pages(ns.mem, 16u << 20), (16u << 20) / 4096);
	emu_ns_fini(&ns);
	ctrlr_opts(NVP_EMU_BACKEND_RAM, NULL, 16u << 20);
	g_c.opts.prefault = false;
	CU_ASSERT_EQUAL_FATAL(emu_ns_init(&g_c, &ns, 1, 512), 0);
	CU_ASSERT(resident_pages(ns.mem, 16u << 20) < 16);
	emu_ns_fini(&ns);
}

static void
test_null(void)
{
	struct emu_ns ns;
	struct emu_sgl sgl;
	uint8_t buf[4096];
	bool eq = false;

	ctrlr_opts(NVP_EMU_BACKEND_NULL, NULL, 1ull << 40);
	CU_ASSERT_EQUAL_FATAL(emu_ns_init(&g_c, &ns, 1, 4096), 0);
	CU_ASSERT_EQUAL(ns.nsze, (1ull << 40) / 4096);
	CU_ASSERT_EQUAL_FATAL(emu_sgl_init(&sgl, 4), 0);
	memset(buf, 0x77, sizeof(buf));
	make_sgl(&sgl, buf, sizeof(buf));
	CU_ASSERT_EQUAL(ns.ops->write(&ns, 0, &sgl), 0);
	CU_ASSERT_EQUAL(ns.ops->read(&ns, 0, &sgl), 0);
	CU_ASSERT_EQUAL(buf[0], 0);
	CU_ASSERT_EQUAL(buf[4095], 0);
	CU_ASSERT_EQUAL(emu_backend_compare(&ns, 0, &sgl, buf + 2048, 64, &eq), 0);
	CU_ASSERT_EQUAL(ns.ops->zero(&ns, 0, 1ull << 40), 0);
	CU_ASSERT_EQUAL(ns.ops->flush(&ns), 0);
	emu_ns_fini(&ns);
	emu_sgl_fini(&sgl);
}

static void
test_file(void)
{
	char dir[] = "/tmp/emu_be_XXXXXX", prefix[64], path[96];
	struct emu_ns ns;
	struct stat sb;
	uint8_t buf[512];

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(prefix, sizeof(prefix), "%s/d", dir);
	snprintf(path, sizeof(path), "%s.ns3", prefix);
	ctrlr_opts(NVP_EMU_BACKEND_FILE, prefix, 2u << 20);
	CU_ASSERT_EQUAL_FATAL(emu_ns_init(&g_c, &ns, 3, 4096), 0);
	CU_ASSERT_EQUAL(stat(path, &sb), 0);
	CU_ASSERT_EQUAL(sb.st_size, 2u << 20);
	exercise(&ns);
	memcpy(buf, "on disk", 8);
	{
		struct emu_sgl sgl = { .segs = &(struct emu_seg){ buf, 512 },
				       .nsegs = 1,
				       .len = 512 };

		CU_ASSERT_EQUAL(ns.ops->write(&ns, 1 << 20, &sgl), 0);
	}
	emu_ns_fini(&ns);
	/* reopen: same data; a different size resizes the file */
	CU_ASSERT_EQUAL_FATAL(emu_ns_init(&g_c, &ns, 3, 512), 0);
	memset(buf, 0, sizeof(buf));
	CU_ASSERT_EQUAL(ns.ops->read_buf(&ns, 1 << 20, buf, 512), 0);
	CU_ASSERT_STRING_EQUAL((char *)buf, "on disk");
	emu_ns_fini(&ns);
	ctrlr_opts(NVP_EMU_BACKEND_FILE, prefix, 4u << 20);
	CU_ASSERT_EQUAL_FATAL(emu_ns_init(&g_c, &ns, 3, 512), 0);
	CU_ASSERT_EQUAL(stat(path, &sb), 0);
	CU_ASSERT_EQUAL(sb.st_size, 4u << 20);
	emu_ns_fini(&ns);
	unlink(path);
	rmdir(dir);
	/* a directory that does not exist */
	ctrlr_opts(NVP_EMU_BACKEND_FILE, "/nonexistent/dir/d", 1u << 20);
	CU_ASSERT_EQUAL(emu_ns_init(&g_c, &ns, 1, 512), -EIO);
	emu_ns_fini(&ns);
}

static void
test_formats_and_ids(void)
{
	struct emu_ns a, b, c2;

	ctrlr_opts(NVP_EMU_BACKEND_NULL, NULL, 1u << 20);
	CU_ASSERT_EQUAL_FATAL(emu_ns_init(&g_c, &a, 1, 512), 0);
	CU_ASSERT_EQUAL_FATAL(emu_ns_init(&g_c, &b, 2, 512), 0);
	CU_ASSERT_EQUAL(a.lbaf, 0);
	CU_ASSERT_EQUAL(a.lba_shift, 9);
	emu_ns_set_format(&a, 1);
	CU_ASSERT_EQUAL(a.lba_shift, 12);
	CU_ASSERT_EQUAL(a.nsze, 256);
	CU_ASSERT_EQUAL(a.size, 1u << 20);
	CU_ASSERT(memcmp(a.nguid, b.nguid, 16) != 0);
	CU_ASSERT(memcmp(a.eui64, b.eui64, 8) != 0);
	nvp_strlcpy(g_c.opts.name, "other", sizeof(g_c.opts.name));
	CU_ASSERT_EQUAL_FATAL(emu_ns_init(&g_c, &c2, 1, 512), 0);
	CU_ASSERT(memcmp(a.nguid, c2.nguid, 16) != 0);
	CU_ASSERT_EQUAL(a.eui64[0], (EMU_IEEE_OUI >> 16) & 0xff);
	emu_ns_fini(&a);
	emu_ns_fini(&b);
	emu_ns_fini(&c2);
	CU_ASSERT_PTR_NULL(emu_backend_get((enum nvp_emu_backend)7));
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_ram),  UT_TEST(test_ram_prefault),    UT_TEST(test_null),
		UT_TEST(test_file), UT_TEST(test_formats_and_ids),
	};

	return ut_run("emu_backend", tests, NVP_COUNTOF(tests));
}

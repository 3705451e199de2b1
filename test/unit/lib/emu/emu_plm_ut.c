/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/emu/emu_plm.c, the file backend's power-loss model: undo records for
 * unflushed writes, Flush emptying them (or not, when it lies), the cache's size bound,
 * and what a cut leaves on the file: never a flushed block touched, every outcome (kept,
 * lost, torn at a block boundary) reachable.
 */
#include "emu_ut_helpers.h"

#include <unistd.h>

#define BS 512u

static struct emu_ctrlr g_c; /* opts, ns[0] and stats are used */
static char g_path[64];

static struct emu_ns *
ns_open(uint32_t power_loss, uint32_t wcache_mb)
{
	struct emu_ns *ns = &g_c.ns[0];

	memset(&g_c, 0, sizeof(g_c));
	nvp_emu_opts_init(&g_c.opts, sizeof(g_c.opts));
	nvp_strlcpy(g_c.opts.name, "plm", sizeof(g_c.opts.name));
	snprintf(g_path, sizeof(g_path), "/tmp/nvp_plm_ut.%d", (int)getpid());
	g_c.opts.backend = NVP_EMU_BACKEND_FILE;
	nvp_strlcpy(g_c.opts.backend_path, g_path, sizeof(g_c.opts.backend_path));
	g_c.opts.ns_size = 1u << 20;
	g_c.opts.nn = 1;
	g_c.opts.power_loss = power_loss;
	g_c.opts.wcache_mb = wcache_mb;
	CU_ASSERT_EQUAL_FATAL(emu_ns_init(&g_c, ns, 1, BS), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ns->plm);
	return ns;
}

static void
ns_close(struct emu_ns *ns)
{
	char path[80];

	emu_ns_fini(ns);
	snprintf(path, sizeof(path), "%s.ns1", g_path);
	unlink(path);
}

/* Write @nblk blocks at @lba, every byte of block b = (gen << 4 | b & 15). */
static int
put(struct emu_ns *ns, uint32_t lba, uint32_t nblk, uint8_t gen)
{
	uint8_t buf[16 * BS];
	struct emu_sgl sgl;
	int rc;

	for (uint32_t b = 0; b < nblk; b++) {
		memset(buf + b * BS, (gen << 4) | ((lba + b) & 15), BS);
	}
	if (emu_sgl_init(&sgl, 1) != 0) {
		return -ENOMEM;
	}
	sgl.segs[0].addr = buf;
	sgl.segs[0].len = nblk * BS;
	sgl.nsegs = 1;
	sgl.len = nblk * BS;
	rc = ns->ops->write(ns, (uint64_t)lba * BS, &sgl);
	emu_sgl_fini(&sgl);
	return rc;
}

/* The generation block @lba holds, or -1 if the block is not one whole generation. */
static int
gen_of(struct emu_ns *ns, uint32_t lba)
{
	uint8_t buf[BS];

	if (ns->ops->read_buf(ns, (uint64_t)lba * BS, buf, BS) != 0) {
		return -1;
	}
	for (uint32_t i = 1; i < BS; i++) {
		if (buf[i] != buf[0]) {
			return -1;
		}
	}
	if (buf[0] == 0) {
		return 0; /* never written */
	}
	return (buf[0] & 15) == (lba & 15) ? buf[0] >> 4 : -1;
}

static void
test_flush_empties_log(void)
{
	struct emu_ns *ns = ns_open(1, 0);

	CU_ASSERT_EQUAL(put(ns, 0, 4, 1), 0);
	CU_ASSERT_EQUAL(put(ns, 8, 2, 2), 0);
	CU_ASSERT_EQUAL(ns->plm->count, 2);
	CU_ASSERT_EQUAL(ns->plm->bytes, 6 * BS);
	CU_ASSERT_EQUAL(ns->ops->flush(ns), 0);
	CU_ASSERT_EQUAL(ns->plm->count, 0);
	CU_ASSERT_EQUAL(ns->plm->bytes, 0);
	/* zeroing is a write too */
	CU_ASSERT_EQUAL(ns->ops->zero(ns, 0, BS), 0);
	CU_ASSERT_EQUAL(ns->plm->count, 1);
	ns_close(ns);
}

static void
test_lying_flush_keeps_log(void)
{
	struct emu_ns *ns = ns_open(2, 0);

	CU_ASSERT_EQUAL(put(ns, 0, 4, 1), 0);
	CU_ASSERT_EQUAL(ns->ops->flush(ns), 0);
	CU_ASSERT_EQUAL(ns->plm->count, 1);
	ns_close(ns);
}

/* The log never holds more than the cache; what falls out is durable. */
static void
test_cache_bound(void)
{
	struct emu_ns *ns = ns_open(1, 1);

	for (uint32_t i = 0; i < 1000; i++) {
		CU_ASSERT_EQUAL_FATAL(put(ns, (i * 16) % 2000, 16, 1 + i % 14), 0);
		CU_ASSERT(ns->plm->bytes <= (1u << 20));
	}
	CU_ASSERT(ns->plm->count >= (1u << 20) / (16 * BS) - 1);
	CU_ASSERT(ns->plm->cap_recs >= ns->plm->count);
	ns_close(ns);
}

/* A write larger than the cache is written through: nothing recorded. */
static void
test_larger_than_cache(void)
{
	struct emu_ns *ns = ns_open(1, 1);

	CU_ASSERT_EQUAL(put(ns, 0, 1, 3), 0);
	CU_ASSERT_EQUAL(ns->ops->zero(ns, 0, 2u << 20), 0);
	CU_ASSERT_EQUAL(ns->plm->count, 0);
	ns_close(ns);
}

/*
 * Many cuts of the same history, each with another seed: blocks 0-3 flushed at gen 1
 * must hold gen 1 or a later unflushed one (2, 3); blocks 4-7 only ever unflushed hold
 * 0 (never written) or 3; no block ever holds a mixture.
 */
static void
test_cut_outcomes(void)
{
	uint64_t lost = 0, torn = 0, kept = 0;

	for (uint64_t seed = 1; seed <= 64; seed++) {
		struct emu_ns *ns = ns_open(1, 0);
		uint64_t rng = seed * 0x9e3779b97f4a7c15ull;

		CU_ASSERT_EQUAL(put(ns, 0, 4, 1), 0);
		CU_ASSERT_EQUAL(ns->ops->flush(ns), 0);
		CU_ASSERT_EQUAL(put(ns, 0, 2, 2), 0);
		CU_ASSERT_EQUAL(put(ns, 2, 6, 3), 0);
		cut_ns(&g_c, ns, &rng);
		CU_ASSERT_EQUAL(ns->plm->count, 0);
		for (uint32_t b = 0; b < 8; b++) {
			int g = gen_of(ns, b);

			if (b < 2) {
				CU_ASSERT(g == 1 || g == 2);
			} else if (b < 4) {
				CU_ASSERT(g == 1 || g == 3);
			} else {
				CU_ASSERT(g == 0 || g == 3);
			}
		}
		ns_close(ns);
		lost += g_c.stats.plm_lost_writes;
		torn += g_c.stats.plm_torn_writes;
		kept += g_c.stats.plm_kept_writes;
	}
	printf("(lost %llu torn %llu kept %llu) ", (unsigned long long)lost,
	       (unsigned long long)torn, (unsigned long long)kept);
	CU_ASSERT(lost > 0);
	CU_ASSERT(torn > 0);
	CU_ASSERT(kept > 0);
}

static void
test_opts_need_file_and_vwc(void)
{
	struct nvp_emu_opts o;
	char err[256];

	/* a cross-key rule: checked when the controller is made (emu_opts_validate) */
	nvp_emu_opts_init(&o, sizeof(o));
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&o, "power_loss=1", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(emu_opts_validate(&o, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "power_loss"));
	nvp_emu_opts_init(&o, sizeof(o));
	CU_ASSERT_EQUAL(
		nvp_emu_opts_parse(&o, "backend=file:/tmp/x,vwc=0,power_loss=1", err, sizeof(err)),
		0);
	CU_ASSERT_EQUAL(emu_opts_validate(&o, err, sizeof(err)), -EINVAL);
	nvp_emu_opts_init(&o, sizeof(o));
	CU_ASSERT_EQUAL(
		nvp_emu_opts_parse(&o, "backend=file:/tmp/x,power_loss=1", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(emu_opts_validate(&o, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(o.power_loss, 1);
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&o, "power_loss=3", err, sizeof(err)), -EINVAL);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_flush_empties_log), UT_TEST(test_lying_flush_keeps_log),
		UT_TEST(test_cache_bound),       UT_TEST(test_larger_than_cache),
		UT_TEST(test_cut_outcomes),      UT_TEST(test_opts_need_file_and_vwc),
	};

	return ut_run("emu_plm", tests, NVP_COUNTOF(tests));
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Format NVM (section 5.23): changes the LBA format of a namespace (512 B <-> 4 KiB),
 * erases its data, and the driver's namespace object follows (sector size, number of
 * sectors, identify data). Other namespaces are left alone unless the format is for all
 * of them. An LBA format the namespace does not offer gets Invalid Format.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

static int
format_ns(struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid, uint32_t lbaf, uint32_t ses,
	  struct nvme_cpl *cpl)
{
	union nvme_format_cdw10 f;

	f.raw = 0;
	f.bits.lbaf = lbaf;
	f.bits.ses = ses;
	return nvp_nvme_ctrlr_format(ctrlr, nsid, f, cpl);
}

/* The namespace object, its cached data and the device agree on the format. */
static void
check_format(struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid, uint32_t lbaf, uint32_t bs, uint64_t size)
{
	struct nvp_nvme_ns *ns = nvp_nvme_ctrlr_get_ns(ctrlr, nsid);
	struct nvme_ns_data *fresh;
	const struct nvme_ns_data *nd;

	CU_ASSERT_PTR_NOT_NULL_FATAL(ns);
	nd = nvp_nvme_ns_get_data(ns);
	CU_ASSERT_EQUAL(nd->flbas & NVME_FLBAS_FORMAT_MASK, lbaf);
	CU_ASSERT_EQUAL(1u << nd->lbaf[lbaf].lbads, bs);
	CU_ASSERT_EQUAL(nd->nsze, size / bs);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_sector_size(ns), bs);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_num_sectors(ns), size / bs);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_size(ns), size);

	fresh = fx_dma_alloc(sizeof(*fresh));
	CU_ASSERT_EQUAL(
		nvp_nvme_ctrlr_identify(ctrlr, NVME_IDENTIFY_NS, nsid, fresh, sizeof(*fresh), NULL),
		0);
	CU_ASSERT_EQUAL(fresh->flbas & NVME_FLBAS_FORMAT_MASK, lbaf);
	CU_ASSERT_EQUAL(fresh->nsze, size / bs);
	CU_ASSERT_EQUAL(memcmp(fresh, nd, sizeof(*fresh)), 0);
	nvp_env_dma_free(fresh);
}

/* Write @n blocks of pattern @tag at @lba and read them back. */
static void
write_verify(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, uint8_t *buf, uint64_t lba,
	     uint32_t n, uint32_t tag)
{
	uint32_t bs = nvp_nvme_ns_get_sector_size(ns);

	fx_pattern_fill(buf, lba, n, bs, tag);
	CU_ASSERT_EQUAL(fx_io(ns, qpair, FX_WRITE, buf, lba, n, 0, NULL), 0);
	memset(buf, 0, (size_t)n * bs);
	CU_ASSERT_EQUAL(fx_io(ns, qpair, FX_READ, buf, lba, n, 0, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, lba, n, bs, tag) < 0);
}

static void
test_format_512_to_4k_and_back(void)
{
	const uint64_t size = 8u << 20;
	struct fx_ctrlr fx;
	struct nvme_cpl cpl;
	uint8_t *buf;
	uint64_t last;

	FX_NEEDS_EMU("LBA formats 0 = 512 B and 1 = 4 KiB (format_real formats a real one)");
	if (fx_open(&fx, "size=8M,lba=512") != 0) {
		fx_close(&fx);
		return;
	}
	buf = fx_dma_alloc(64 * 1024);
	check_format(fx.ctrlr, 1, 0, 512, size);
	write_verify(fx.ns, fx.qpair, buf, 0, 64, 0x61);
	write_verify(fx.ns, fx.qpair, buf, size / 512 - 8, 8, 0x62);

	/* 512 -> 4096. */
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(format_ns(fx.ctrlr, 1, 1, 0, &cpl), 0);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&cpl));
	check_format(fx.ctrlr, 1, 1, 4096, size);

	/* Erased. */
	memset(buf, 0xee, 64 * 1024);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 0, 8, 0, NULL), 0);
	CU_ASSERT(fx_is_zero(buf, 8 * 4096));
	last = size / 4096 - 1;
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, last, 1, 0, NULL), 0);
	CU_ASSERT(fx_is_zero(buf, 4096));

	/* The new geometry is what the driver checks against, and I/O works in it. */
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, last + 1, 1, 0, NULL), -ERANGE);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, size / 512 - 1, 1, 0, NULL), -ERANGE);
	write_verify(fx.ns, fx.qpair, buf, 0, 16, 0x63);
	write_verify(fx.ns, fx.qpair, buf, last, 1, 0x64);

	/* 4096 -> 512, with user data erase. */
	CU_ASSERT_EQUAL(format_ns(fx.ctrlr, 1, 0, 1, &cpl), 0);
	check_format(fx.ctrlr, 1, 0, 512, size);
	memset(buf, 0xee, 64 * 1024);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 0, 128, 0, NULL), 0);
	CU_ASSERT(fx_is_zero(buf, 128 * 512));
	write_verify(fx.ns, fx.qpair, buf, size / 512 - 1, 1, 0x65);

	nvp_env_dma_free(buf);
	fx_close(&fx);
}

static void
test_format_invalid(void)
{
	const struct nvme_ns_data *nd;
	union nvme_format_cdw10 f;
	struct fx_ctrlr fx;
	struct nvme_cpl cpl;
	uint8_t *buf;
	uint32_t nsid, lbaf, bs;
	uint64_t size;

	if (fx_open(&fx, "size=4M,lba=512") != 0) {
		fx_close(&fx);
		return;
	}
	/* Software controller: nsid 1, format 0, 512 B, 4 MiB; a real one: as it is now. */
	nsid = nvp_nvme_ns_get_id(fx.ns);
	bs = nvp_nvme_ns_get_sector_size(fx.ns);
	size = nvp_nvme_ns_get_size(fx.ns);
	buf = fx_dma_alloc(4096);
	write_verify(fx.ns, fx.qpair, buf, 5, 1, 0x66);
	nd = nvp_nvme_ns_get_data(fx.ns);
	lbaf = nd->flbas & NVME_FLBAS_FORMAT_MASK;

	/* An LBA format past NLBAF. */
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(format_ns(fx.ctrlr, nsid, nd->nlbaf + 1u, 0, &cpl), -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_FORMAT);

	/* Protection information with a format that has no metadata for it (the software
	 * controller offers no PI at all, DPC 0). */
	f.raw = 0;
	f.bits.lbaf = lbaf;
	f.bits.pi = 1;
	CU_ASSERT_EQUAL(nd->lbaf[lbaf].ms, 0);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_format(fx.ctrlr, nsid, f, &cpl), -EIO);

	/* A namespace that does not exist. */
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(format_ns(fx.ctrlr,
				  fx_is_emu(&fx) ? 9 : nvp_nvme_ctrlr_get_data(fx.ctrlr)->nn + 1, 1,
				  0, &cpl) < 0,
			1);

	/* Nothing changed: format and data are intact. */
	check_format(fx.ctrlr, nsid, lbaf, bs, size);
	memset(buf, 0, bs);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 5, 1, 0, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, 5, 1, bs, 0x66) < 0);

	nvp_env_dma_free(buf);
	fx_close(&fx);
}

static void
test_format_one_of_two(void)
{
	struct nvp_nvme_ns *ns1, *ns2;
	struct fx_ctrlr fx;
	uint8_t *buf;

	FX_NEEDS_EMU("two namespaces to format one of, and all (format_real keeps the others)");
	if (fx_open(&fx, "nn=2,size=4M,lba=512") != 0) {
		fx_close(&fx);
		return;
	}
	ns1 = nvp_nvme_ctrlr_get_ns(fx.ctrlr, 1);
	ns2 = nvp_nvme_ctrlr_get_ns(fx.ctrlr, 2);
	buf = fx_dma_alloc(8192);
	write_verify(ns1, fx.qpair, buf, 3, 4, 0x71);
	write_verify(ns2, fx.qpair, buf, 3, 4, 0x72);

	CU_ASSERT_EQUAL(format_ns(fx.ctrlr, 2, 1, 0, NULL), 0);
	check_format(fx.ctrlr, 1, 0, 512, 4u << 20);
	check_format(fx.ctrlr, 2, 1, 4096, 4u << 20);
	ns2 = nvp_nvme_ctrlr_get_ns(fx.ctrlr, 2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ns2);

	/* ns1 keeps its data; ns2 is erased. */
	CU_ASSERT_EQUAL(fx_io(ns1, fx.qpair, FX_READ, buf, 3, 4, 0, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, 3, 4, 512, 0x71) < 0);
	CU_ASSERT_EQUAL(fx_io(ns2, fx.qpair, FX_READ, buf, 0, 2, 0, NULL), 0);
	CU_ASSERT(fx_is_zero(buf, 8192));

	/* All namespaces at once. */
	CU_ASSERT_EQUAL(format_ns(fx.ctrlr, NVME_GLOBAL_NS_TAG, 1, 0, NULL), 0);
	check_format(fx.ctrlr, 1, 1, 4096, 4u << 20);
	check_format(fx.ctrlr, 2, 1, 4096, 4u << 20);
	ns1 = nvp_nvme_ctrlr_get_ns(fx.ctrlr, 1);
	CU_ASSERT_EQUAL(fx_io(ns1, fx.qpair, FX_READ, buf, 0, 2, 0, NULL), 0);
	CU_ASSERT(fx_is_zero(buf, 8192));
	write_verify(ns1, fx.qpair, buf, 1, 2, 0x73);

	nvp_env_dma_free(buf);
	fx_close(&fx);
}

/* The index of an LBA format of @bs bytes without metadata, or -1. */
static int
find_lbaf(const struct nvme_ns_data *nd, uint32_t bs)
{
	unsigned int i;

	for (i = 0; i <= nd->nlbaf && i < NVME_MAX_LBAF; i++) {
		if (nd->lbaf[i].ms == 0 && (1u << nd->lbaf[i].lbads) == bs) {
			return (int)i;
		}
	}
	return -1;
}

/*
 * A real controller (NVP_TEST_TRID): format the namespace to the other LBA size (512 B
 * <-> 4 KiB), check geometry, erasure and I/O, and format it back (its data is gone, its
 * shape is what it was, for the tests that run after).
 */
static void
test_format_real(void)
{
	const struct nvme_ns_data *nd;
	struct fx_ctrlr fx;
	struct nvme_cpl cpl;
	uint32_t nsid, bs, other_bs, lbaf;
	int other;
	uint64_t size, last;
	uint8_t *buf;

	if (fx_real_trid() == NULL) {
		return; /* the tests above cover the software controller */
	}
	if (fx_open(&fx, NULL) != 0) {
		fx_close(&fx);
		return;
	}
	nsid = nvp_nvme_ns_get_id(fx.ns);
	bs = nvp_nvme_ns_get_sector_size(fx.ns);
	size = nvp_nvme_ns_get_size(fx.ns);
	nd = nvp_nvme_ns_get_data(fx.ns);
	lbaf = nd->flbas & NVME_FLBAS_FORMAT_MASK;
	other_bs = bs == 512 ? 4096 : 512;
	other = find_lbaf(nd, other_bs);
	printf("  nsid %u: format %u (%u B) -> format %d (%u B), %u formats\n", nsid, lbaf, bs,
	       other, other_bs, nd->nlbaf + 1u);
	CU_ASSERT_FATAL(other >= 0);
	CU_ASSERT(nvp_nvme_ctrlr_get_data(fx.ctrlr)->oacs & NVME_OACS_FORMAT);
	buf = fx_dma_alloc(64 * 1024);
	check_format(fx.ctrlr, nsid, lbaf, bs, size);
	write_verify(fx.ns, fx.qpair, buf, 0, 16384 / bs, 0x81);
	write_verify(fx.ns, fx.qpair, buf, size / bs - 1, 1, 0x82);

	/* To the other size: new geometry, erased (QEMU writes zeroes), I/O works. */
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(format_ns(fx.ctrlr, nsid, (uint32_t)other, 0, &cpl), 0);
	fx_print_cpl("format", &cpl);
	check_format(fx.ctrlr, nsid, (uint32_t)other, other_bs, size);
	fx.ns = nvp_nvme_ctrlr_get_ns(fx.ctrlr, nsid);
	CU_ASSERT_PTR_NOT_NULL_FATAL(fx.ns);
	last = size / other_bs - 1;
	memset(buf, 0xee, 64 * 1024);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 0, 16384 / other_bs, 0, NULL), 0);
	CU_ASSERT(fx_is_zero(buf, 16384));
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, last, 1, 0, NULL), 0);
	CU_ASSERT(fx_is_zero(buf, other_bs));
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, last + 1, 1, 0, NULL), -ERANGE);
	write_verify(fx.ns, fx.qpair, buf, 0, 16384 / other_bs, 0x83);
	write_verify(fx.ns, fx.qpair, buf, last, 1, 0x84);

	/* And back. */
	CU_ASSERT_EQUAL(format_ns(fx.ctrlr, nsid, lbaf, 0, &cpl), 0);
	check_format(fx.ctrlr, nsid, lbaf, bs, size);
	fx.ns = nvp_nvme_ctrlr_get_ns(fx.ctrlr, nsid);
	CU_ASSERT_PTR_NOT_NULL_FATAL(fx.ns);
	memset(buf, 0xee, 64 * 1024);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 0, 16384 / bs, 0, NULL), 0);
	CU_ASSERT(fx_is_zero(buf, 16384));
	write_verify(fx.ns, fx.qpair, buf, size / bs - 1, 1, 0x85);

	nvp_env_dma_free(buf);
	fx_close(&fx);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "format_512_to_4k_and_back", test_format_512_to_4k_and_back },
		{ "format_invalid", test_format_invalid },
		{ "format_one_of_two", test_format_one_of_two },
		{ "format_real", test_format_real },
	};

	return fx_main(argc, argv, "nvme_format", tests, NVP_COUNTOF(tests));
}

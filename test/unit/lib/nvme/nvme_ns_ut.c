/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of namespaces (nvme_ns.c) with Identify answered by a fake: the active
 * namespace list across pages, the pre-1.1 fallback, sector size from FLBAS and the LBA
 * format table, metadata-extended formats, max transfer, inactive namespaces, stable
 * objects across re-identify, Format NVM (the command, then the namespace re-read).
 */
#include "nvme/nvme_ns.c"

#include "ut_nvme.h"

/* ---- a fake Identify ---- */

#define MAX_NSID 2000u

static uint32_t g_num_ids;
static uint32_t g_ids[MAX_NSID]; /* active ids, increasing */
static struct nvme_ns_data g_nsdata[MAX_NSID + 1];
static uint32_t g_identify_calls;
static int g_identify_rc;
static uint8_t g_identify_sc;

int
nvp_nvme_ctrlr_identify(struct nvp_nvme_ctrlr *ctrlr, uint8_t cns, uint32_t nsid, void *buf,
			uint32_t len, struct nvme_cpl *cpl)
{
	uint32_t i, n = 0;

	(void)ctrlr;
	g_identify_calls++;
	CU_ASSERT_EQUAL(len, 4096);
	if (g_identify_rc != 0) {
		if (cpl != NULL) {
			memset(cpl, 0, sizeof(*cpl));
			cpl->status.sc = g_identify_sc;
		}
		return g_identify_rc;
	}
	if (cns == NVME_IDENTIFY_ACTIVE_NS_LIST) {
		struct nvme_ns_list *list = buf;

		memset(list, 0, sizeof(*list));
		for (i = 0; i < g_num_ids && n < 1024; i++) {
			if (g_ids[i] > nsid) {
				list->ns_list[n++] = g_ids[i];
			}
		}
		return 0;
	}
	CU_ASSERT_EQUAL(cns, NVME_IDENTIFY_NS);
	memcpy(buf, &g_nsdata[nsid <= MAX_NSID ? nsid : 0], sizeof(struct nvme_ns_data));
	return 0;
}

/* ---- the admin commands format uses ---- */

static struct nvme_cmd g_admin_cmd;
static uint32_t g_admin_cmds;
static uint8_t g_admin_sc;

void
nvme_ctrlr_lock(struct nvp_nvme_ctrlr *ctrlr)
{
	pthread_mutex_lock(&ctrlr->adminq_lock);
}

void
nvme_ctrlr_unlock(struct nvp_nvme_ctrlr *ctrlr)
{
	pthread_mutex_unlock(&ctrlr->adminq_lock);
}

int
nvp_nvme_ctrlr_cmd_admin_sync(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, void *buf,
			      uint32_t len, struct nvme_cpl *cpl)
{
	(void)ctrlr;
	(void)buf;
	(void)len;
	g_admin_cmd = *cmd;
	g_admin_cmds++;
	if (cpl != NULL) {
		memset(cpl, 0, sizeof(*cpl));
		cpl->status.sc = g_admin_sc;
	}
	return g_admin_sc != 0 ? -EIO : 0;
}

/* Namespace @nsid: @blocks of 2^@lbads bytes (format index 1 of two). */
static void
make_ns(uint32_t nsid, uint64_t blocks, uint8_t lbads)
{
	struct nvme_ns_data *d = &g_nsdata[nsid];

	memset(d, 0, sizeof(*d));
	d->nsze = d->ncap = blocks;
	d->nlbaf = 1;
	d->lbaf[0].lbads = 9;
	d->lbaf[1].lbads = 12;
	d->lbaf[1].ms = 8;
	d->flbas = lbads == 12 ? 1 : 0;
}

static struct nvp_nvme_ctrlr g_ctrlr;

static void
setup(uint32_t vs)
{
	nvme_ctrlr_free_namespaces(&g_ctrlr);
	memset(&g_ctrlr, 0, sizeof(g_ctrlr));
	g_ctrlr.vs.raw = vs;
	g_ctrlr.max_xfer_size = 128 * 1024;
	g_identify_calls = 0;
	g_identify_rc = 0;
	memset(g_nsdata, 0, sizeof(g_nsdata));
	g_num_ids = 0;
}

static void
test_active_list(void)
{
	setup(NVME_VERSION(1, 4, 0));
	g_ids[0] = 1;
	g_ids[1] = 2;
	g_ids[2] = 5;
	g_num_ids = 3;
	g_ctrlr.cdata.nn = 8;
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_active_ns(&g_ctrlr), 0);
	CU_ASSERT_EQUAL(g_ctrlr.num_active_ns, 3);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_num_ns(&g_ctrlr), 8);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_first_active_ns(&g_ctrlr), 1);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_next_active_ns(&g_ctrlr, 1), 2);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_next_active_ns(&g_ctrlr, 2), 5);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_next_active_ns(&g_ctrlr, 3), 5);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_next_active_ns(&g_ctrlr, 5), 0);
	CU_ASSERT_TRUE(nvp_nvme_ctrlr_is_active_ns(&g_ctrlr, 5));
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_active_ns(&g_ctrlr, 3));
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_active_ns(&g_ctrlr, 0));
	/* No namespaces. */
	g_num_ids = 0;
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_active_ns(&g_ctrlr), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_first_active_ns(&g_ctrlr), 0);
	CU_ASSERT_PTR_NULL(nvp_nvme_ctrlr_get_ns(&g_ctrlr, 1));
}

static void
test_active_list_pages(void)
{
	uint32_t i;

	setup(NVME_VERSION(1, 4, 0));
	for (i = 0; i < 1500; i++) {
		g_ids[i] = i + 1;
	}
	g_num_ids = 1500;
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_active_ns(&g_ctrlr), 0);
	CU_ASSERT_EQUAL(g_ctrlr.num_active_ns, 1500);
	CU_ASSERT_EQUAL(g_identify_calls, 2);
	CU_ASSERT_EQUAL(g_ctrlr.active_ns[1024], 1025);
	CU_ASSERT_TRUE(nvp_nvme_ctrlr_is_active_ns(&g_ctrlr, 1500));
	/* Exactly one full page: a second, empty page ends the list. */
	g_num_ids = 1024;
	g_identify_calls = 0;
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_active_ns(&g_ctrlr), 0);
	CU_ASSERT_EQUAL(g_ctrlr.num_active_ns, 1024);
	CU_ASSERT_EQUAL(g_identify_calls, 2);
	/* A broken list (not increasing) is an error, not an endless loop. */
	g_ids[0] = 5;
	g_ids[1] = 3;
	g_num_ids = 2;
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_active_ns(&g_ctrlr), -EIO);
	/* Identify failing. */
	g_identify_rc = -ETIMEDOUT;
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_active_ns(&g_ctrlr), -ETIMEDOUT);
}

static void
test_pre_1_1_fallback(void)
{
	setup(NVME_VERSION(1, 0, 0));
	g_ctrlr.cdata.nn = 3;
	make_ns(1, 1000, 9);
	make_ns(3, 2000, 12);
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_active_ns(&g_ctrlr), 0);
	CU_ASSERT_EQUAL(g_identify_calls, 0); /* no CNS 02h before 1.1 */
	CU_ASSERT_EQUAL(g_ctrlr.num_active_ns, 3);
	/* Namespace 2 identifies as all zeroes: inactive, dropped. */
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_namespaces(&g_ctrlr, NVME_GLOBAL_NS_TAG), 0);
	CU_ASSERT_EQUAL(g_ctrlr.num_active_ns, 2);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_next_active_ns(&g_ctrlr, 1), 3);
	CU_ASSERT_PTR_NULL(nvp_nvme_ctrlr_get_ns(&g_ctrlr, 2));
}

static void
test_ns_formats(void)
{
	struct nvp_nvme_ns *ns1, *ns2;

	setup(NVME_VERSION(1, 4, 0));
	g_ids[0] = 1;
	g_ids[1] = 2;
	g_num_ids = 2;
	make_ns(1, 131072, 9);
	make_ns(2, 16384, 12);
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_active_ns(&g_ctrlr), 0);
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_namespaces(&g_ctrlr, NVME_GLOBAL_NS_TAG), 0);
	ns1 = nvp_nvme_ctrlr_get_ns(&g_ctrlr, 1);
	ns2 = nvp_nvme_ctrlr_get_ns(&g_ctrlr, 2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ns1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ns2);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_id(ns1), 1);
	CU_ASSERT_PTR_EQUAL(nvp_nvme_ns_get_ctrlr(ns1), &g_ctrlr);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_sector_size(ns1), 512);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_num_sectors(ns1), 131072);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_size(ns1), 64ull * 1024 * 1024);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_max_io_xfer_size(ns1), 128 * 1024);
	CU_ASSERT_EQUAL(ns1->max_io_sectors, 256);
	CU_ASSERT_EQUAL(ns1->plain_max_sectors, 256);     /* reads and writes on the fast path */
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_md_size(ns1), 0); /* format 0: no metadata */
	CU_ASSERT(!nvp_nvme_ns_has_separate_md(ns1));
	CU_ASSERT(!nvp_nvme_ns_supports_extended_lba(ns1));
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_optimal_io_boundary(ns1), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_sector_size(ns2), 4096);
	CU_ASSERT_EQUAL(ns2->max_io_sectors, 32);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_data(ns2)->flbas, 1);
	/* Reformat namespace 1 to 4 KiB with metadata interleaved: same object. */
	make_ns(1, 16384, 12);
	g_nsdata[1].flbas = 1 | NVME_FLBAS_EXTENDED;
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_namespaces(&g_ctrlr, 1), 0);
	CU_ASSERT_PTR_EQUAL(nvp_nvme_ctrlr_get_ns(&g_ctrlr, 1), ns1);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_sector_size(ns1), 4104);
	CU_ASSERT_EQUAL(ns1->max_io_sectors, 131072 / 4104);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_max_io_xfer_size(ns1), (131072 / 4104) * 4104);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_md_size(ns1), 8);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_data_sector_size(ns1), 4096);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_extended_sector_size(ns1), 4104);
	CU_ASSERT(nvp_nvme_ns_supports_extended_lba(ns1));
	CU_ASSERT(!nvp_nvme_ns_has_separate_md(ns1));
	CU_ASSERT_EQUAL(ns1->plain_max_sectors, 131072 / 4104); /* interleaved: no MPTR */
	/* The same format with the metadata separate; PI type 1 first; NOIOB. */
	g_nsdata[1].flbas = 1;
	g_nsdata[1].dps = 1 | NVME_DPS_PI_FIRST;
	g_nsdata[1].noiob = 96;
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_namespaces(&g_ctrlr, 1), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_sector_size(ns1), 4096);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_extended_sector_size(ns1), 4104);
	CU_ASSERT_EQUAL(ns1->max_io_sectors, 32);
	CU_ASSERT(nvp_nvme_ns_has_separate_md(ns1));
	CU_ASSERT(!nvp_nvme_ns_supports_extended_lba(ns1));
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_pi_type(ns1), 1);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_optimal_io_boundary(ns1), 96);
	CU_ASSERT_EQUAL(ns1->plain_max_sectors, 0); /* every I/O takes the general path */
	/* Namespace 2's format has 8 bytes of metadata, extended bit clear: separate. */
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_md_size(ns2), 8);
	CU_ASSERT(nvp_nvme_ns_has_separate_md(ns2));
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_pi_type(ns2), 0);
	CU_ASSERT_EQUAL(ns2->plain_max_sectors, 0); /* separate metadata needs an MPTR */
	/* A huge max transfer is capped by the 16-bit block count. */
	g_ctrlr.max_xfer_size = 64u * 1024 * 1024;
	make_ns(1, 1u << 20, 9);
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_namespaces(&g_ctrlr, 1), 0);
	CU_ASSERT_EQUAL(ns1->max_io_sectors, 65536);
	/* An unsupported LBA data size makes the namespace unusable, not a crash. */
	g_nsdata[2].lbaf[1].lbads = 40;
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_namespaces(&g_ctrlr, NVME_GLOBAL_NS_TAG), 0);
	CU_ASSERT_PTR_NULL(nvp_nvme_ctrlr_get_ns(&g_ctrlr, 2));
	CU_ASSERT_FALSE(ns2->active);
	CU_ASSERT_PTR_EQUAL(nvp_nvme_ctrlr_get_ns(&g_ctrlr, 1), ns1);
}

static void
test_ns_identify_errors(void)
{
	setup(NVME_VERSION(1, 4, 0));
	g_ids[0] = 1;
	g_num_ids = 1;
	make_ns(1, 100, 9);
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_active_ns(&g_ctrlr), 0);
	/* Gone between the list and the identify: inactive, not an error. */
	g_identify_rc = -EIO;
	g_identify_sc = NVME_SC_INVALID_NAMESPACE_OR_FORMAT;
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_namespaces(&g_ctrlr, NVME_GLOBAL_NS_TAG), 0);
	CU_ASSERT_EQUAL(g_ctrlr.num_active_ns, 0);
	/* Any other failure is reported. */
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_active_ns(&g_ctrlr), -EIO);
	g_identify_rc = 0;
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_active_ns(&g_ctrlr), 0);
	g_identify_rc = -ETIMEDOUT;
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_namespaces(&g_ctrlr, NVME_GLOBAL_NS_TAG), -ETIMEDOUT);
	nvme_ctrlr_free_namespaces(&g_ctrlr);
}

/* Found by test/fuzz/fuzz_identify: a device's identify data that is not self-consistent
 * makes the namespace unusable (with a message), never a wrong sector size or size. */
static void
test_ns_bad_identify_data(void)
{
	setup(NVME_VERSION(1, 4, 0));
	g_ids[0] = 1;
	g_ids[1] = 2;
	g_num_ids = 2;
	make_ns(1, 1000, 9);
	make_ns(2, 1000, 9);
	/* FLBAS names format 5 while NLBAF says 2 formats: entry 5 is not valid. */
	g_nsdata[1].flbas = 5;
	g_nsdata[1].lbaf[5].lbads = 12;
	/* 2^62 blocks of 4 KiB: the size does not fit in 64 bits. */
	g_nsdata[2].flbas = 1;
	g_nsdata[2].nsze = 1ull << 62;
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_active_ns(&g_ctrlr), 0);
	ut_log_clear();
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_namespaces(&g_ctrlr, NVME_GLOBAL_NS_TAG), 0);
	CU_ASSERT_PTR_NULL(nvp_nvme_ctrlr_get_ns(&g_ctrlr, 1));
	CU_ASSERT_PTR_NULL(nvp_nvme_ctrlr_get_ns(&g_ctrlr, 2));
	CU_ASSERT_EQUAL(g_ctrlr.num_active_ns, 0);
	CU_ASSERT_TRUE(ut_log_has("format 5 in use, but only 2 formats"));
	CU_ASSERT_TRUE(ut_log_has("overflow 64 bits"));
	/* The last valid format index (NLBAF, 0's based) is fine. */
	g_nsdata[1].flbas = 1;
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_active_ns(&g_ctrlr), 0);
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_namespaces(&g_ctrlr, NVME_GLOBAL_NS_TAG), 0);
	CU_ASSERT_PTR_NOT_NULL(nvp_nvme_ctrlr_get_ns(&g_ctrlr, 1));
	nvme_ctrlr_free_namespaces(&g_ctrlr);
}

/*
 * Namespaces attached over time arrive out of id order (a namespace change adds a lower
 * id): lookups still find every one, objects stay in id order, and a pointer handed out
 * before stays valid when later objects are inserted before it.
 */
static void
test_ns_lookup_many(void)
{
	struct nvp_nvme_ns *ns700;
	uint32_t i, nsid, n;

	setup(NVME_VERSION(1, 4, 0));
	for (i = 0; i < 500; i++) {
		g_ids[i] = 501 + 2 * i; /* odd ids 501..1499 */
		make_ns(g_ids[i], 1000 + g_ids[i], 9);
	}
	g_num_ids = 500;
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_active_ns(&g_ctrlr), 0);
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_namespaces(&g_ctrlr, NVME_GLOBAL_NS_TAG), 0);
	ns700 = nvp_nvme_ctrlr_get_ns(&g_ctrlr, 701);
	CU_ASSERT_FATAL(ns700 != NULL);
	/* Then every id 1..1500 becomes active. */
	for (i = 0; i < 1500; i++) {
		g_ids[i] = i + 1;
		make_ns(i + 1, 1000 + i + 1, 9);
	}
	g_num_ids = 1500;
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_active_ns(&g_ctrlr), 0);
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_namespaces(&g_ctrlr, NVME_GLOBAL_NS_TAG), 0);
	CU_ASSERT_EQUAL(g_ctrlr.num_ns_objs, 1500);
	for (i = 1; i < g_ctrlr.num_ns_objs; i++) {
		CU_ASSERT_TRUE(g_ctrlr.ns[i - 1]->id < g_ctrlr.ns[i]->id);
	}
	CU_ASSERT_PTR_EQUAL(nvp_nvme_ctrlr_get_ns(&g_ctrlr, 701), ns700);
	CU_ASSERT_NOT_EQUAL(ns700->plain_max_sectors, 0);
	n = 0;
	for (nsid = nvp_nvme_ctrlr_get_first_active_ns(&g_ctrlr); nsid != 0;
	     nsid = nvp_nvme_ctrlr_get_next_active_ns(&g_ctrlr, nsid)) {
		struct nvp_nvme_ns *ns = nvp_nvme_ctrlr_get_ns(&g_ctrlr, nsid);

		CU_ASSERT_EQUAL(nsid, n + 1);
		CU_ASSERT_FATAL(ns != NULL);
		CU_ASSERT_EQUAL(ns->id, nsid);
		CU_ASSERT_EQUAL(ns->num_sectors, 1000 + nsid);
		n++;
	}
	CU_ASSERT_EQUAL(n, 1500);
	CU_ASSERT_PTR_NULL(nvp_nvme_ctrlr_get_ns(&g_ctrlr, 1501));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_next_active_ns(&g_ctrlr, UINT32_MAX), 0);
	/* Only the even ids stay active: the odd ones' objects remain, inactive. */
	for (i = 0; i < 750; i++) {
		g_ids[i] = 2 * (i + 1);
	}
	g_num_ids = 750;
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_active_ns(&g_ctrlr), 0);
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_namespaces(&g_ctrlr, NVME_GLOBAL_NS_TAG), 0);
	CU_ASSERT_EQUAL(g_ctrlr.num_ns_objs, 1500);
	CU_ASSERT_FALSE(ns700->active);
	/* the fast read and write path knows an inactive namespace by this alone */
	CU_ASSERT_EQUAL(ns700->plain_max_sectors, 0);
	CU_ASSERT_PTR_NULL(nvp_nvme_ctrlr_get_ns(&g_ctrlr, 701));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_next_active_ns(&g_ctrlr, 700), 702);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_next_active_ns(&g_ctrlr, 1500), 0);
	nvme_ctrlr_free_namespaces(&g_ctrlr);
}

/* Format NVM: the command as asked, then that namespace re-read (not after a failure). */
static void
test_format(void)
{
	union nvme_format_cdw10 f = { .raw = 0 };
	struct nvp_nvme_ns *ns;
	uint32_t calls;

	setup(NVME_VERSION(1, 4, 0));
	g_ids[0] = 2;
	g_num_ids = 1;
	make_ns(2, 131072, 9);
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_active_ns(&g_ctrlr), 0);
	CU_ASSERT_EQUAL(nvme_ctrlr_identify_namespaces(&g_ctrlr, NVME_GLOBAL_NS_TAG), 0);
	ns = nvp_nvme_ctrlr_get_ns(&g_ctrlr, 2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ns);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_sector_size(ns), 512);
	g_admin_cmds = 0;
	g_admin_sc = 0;
	f.bits.lbaf = 1;
	f.bits.ses = 1;
	make_ns(2, 16384, 12); /* what the device reports after the format */
	calls = g_identify_calls;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_format(&g_ctrlr, 2, f, NULL), 0);
	CU_ASSERT_EQUAL(g_admin_cmds, 1);
	CU_ASSERT_EQUAL(g_admin_cmd.opc, NVME_OPC_FORMAT_NVM);
	CU_ASSERT_EQUAL(g_admin_cmd.nsid, 2);
	CU_ASSERT_EQUAL(g_admin_cmd.cdw10, f.raw);
	CU_ASSERT_EQUAL(g_identify_calls, calls + 1);
	CU_ASSERT_EQUAL(nvp_nvme_ns_get_sector_size(ns), 4096);
	/* Refused: an error, and nothing re-read. */
	g_admin_sc = NVME_SC_INVALID_FORMAT;
	calls = g_identify_calls;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_format(&g_ctrlr, 2, f, NULL), -EIO);
	CU_ASSERT_EQUAL(g_identify_calls, calls);
	g_admin_sc = 0;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_format(NULL, 2, f, NULL), -EINVAL);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	nvp_log_set_callback(ut_log_cb);
	s = CU_add_suite("nvme_ns", NULL, NULL);
	CU_ADD_TEST(s, test_active_list);
	CU_ADD_TEST(s, test_active_list_pages);
	CU_ADD_TEST(s, test_pre_1_1_fallback);
	CU_ADD_TEST(s, test_ns_formats);
	CU_ADD_TEST(s, test_ns_identify_errors);
	CU_ADD_TEST(s, test_ns_bad_identify_data);
	CU_ADD_TEST(s, test_ns_lookup_many);
	CU_ADD_TEST(s, test_format);
	return ut_run();
}

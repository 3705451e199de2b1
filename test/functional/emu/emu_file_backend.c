/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Software controller backends, driven through the driver: the file backend keeps data
 * across destroying and re-creating the controller on the same path (one file per
 * namespace, PATH.nsN, of the namespace's size), also when the controller is made and
 * destroyed by a "trtype:emu" attach/detach; the null backend drops writes and reads
 * zeroes; the RAM backend starts empty.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"

static char g_dir[64];

static int
suite_dir(void)
{
	snprintf(g_dir, sizeof(g_dir), "/tmp/nvp_emu_file_XXXXXX");
	return mkdtemp(g_dir) != NULL ? 0 : -errno;
}

/* Remove the temporary directory and whatever the backend left in it (the namespace
 * files, and any side files the controller keeps next to them). */
static int
remove_dir(const char *dir)
{
	char path[512];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (d == NULL) {
		return -errno;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) {
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	return rmdir(dir) == 0 ? 0 : -errno;
}

static void
remove_files(const char *prefix, unsigned int nn)
{
	char path[256];
	unsigned int i;

	for (i = 1; i <= nn; i++) {
		snprintf(path, sizeof(path), "%s.ns%u", prefix, i);
		unlink(path);
	}
}

static void
write_both(struct fx_ctrlr *fx, uint8_t *buf, uint32_t tag)
{
	struct nvp_nvme_ns *ns1 = nvp_nvme_ctrlr_get_ns(fx->ctrlr, 1);
	struct nvp_nvme_ns *ns2 = nvp_nvme_ctrlr_get_ns(fx->ctrlr, 2);
	uint64_t last1 = nvp_nvme_ns_get_num_sectors(ns1) - 1;
	uint64_t last2 = nvp_nvme_ns_get_num_sectors(ns2) - 1;

	fx_pattern_fill(buf, 0, 64, 512, tag);
	CU_ASSERT_EQUAL(fx_io(ns1, fx->qpair, FX_WRITE, buf, 0, 64, 0, NULL), 0);
	fx_pattern_fill(buf, last1, 1, 512, tag);
	CU_ASSERT_EQUAL(fx_io(ns1, fx->qpair, FX_WRITE, buf, last1, 1, 0, NULL), 0);
	fx_pattern_fill(buf, 0, 8, 4096, tag + 1);
	CU_ASSERT_EQUAL(fx_io(ns2, fx->qpair, FX_WRITE, buf, 0, 8, 0, NULL), 0);
	fx_pattern_fill(buf, last2, 1, 4096, tag + 1);
	CU_ASSERT_EQUAL(fx_io(ns2, fx->qpair, FX_WRITE, buf, last2, 1, 0, NULL), 0);
}

static void
verify_both(struct fx_ctrlr *fx, uint8_t *buf, uint32_t tag)
{
	struct nvp_nvme_ns *ns1 = nvp_nvme_ctrlr_get_ns(fx->ctrlr, 1);
	struct nvp_nvme_ns *ns2 = nvp_nvme_ctrlr_get_ns(fx->ctrlr, 2);
	uint64_t last1, last2;

	CU_ASSERT_PTR_NOT_NULL_FATAL(ns1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ns2);
	last1 = nvp_nvme_ns_get_num_sectors(ns1) - 1;
	last2 = nvp_nvme_ns_get_num_sectors(ns2) - 1;

	memset(buf, 0, 32768);
	CU_ASSERT_EQUAL(fx_io(ns1, fx->qpair, FX_READ, buf, 0, 64, 0, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, 0, 64, 512, tag) < 0);
	CU_ASSERT_EQUAL(fx_io(ns1, fx->qpair, FX_READ, buf, last1, 1, 0, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, last1, 1, 512, tag) < 0);
	memset(buf, 0, 32768);
	CU_ASSERT_EQUAL(fx_io(ns2, fx->qpair, FX_READ, buf, 0, 8, 0, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, 0, 8, 4096, tag + 1) < 0);
	CU_ASSERT_EQUAL(fx_io(ns2, fx->qpair, FX_READ, buf, last2, 1, 0, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, last2, 1, 4096, tag + 1) < 0);
	/* Blocks never written read as zeroes. */
	CU_ASSERT_EQUAL(fx_io(ns1, fx->qpair, FX_READ, buf, 1000, 8, 0, NULL), 0);
	CU_ASSERT(fx_is_zero(buf, 8 * 512));
}

static void
test_file_survives_restart(void)
{
	char prefix[128], opts[256], path[160];
	struct fx_ctrlr fx;
	struct stat st;
	uint8_t *buf;
	unsigned int i;

	snprintf(prefix, sizeof(prefix), "%s/restart", g_dir);
	snprintf(opts, sizeof(opts), "nn=2,lba=512/4096,size=4M,backend=file:%s", prefix);
	buf = fx_dma_alloc(32768);

	if (fx_open(&fx, opts) != 0) {
		fx_close(&fx);
		nvp_env_dma_free(buf);
		return;
	}
	write_both(&fx, buf, 0xe1);
	verify_both(&fx, buf, 0xe1);
	fx_close(&fx);

	/* One file per namespace, at the namespace size. */
	for (i = 1; i <= 2; i++) {
		snprintf(path, sizeof(path), "%s.ns%u", prefix, i);
		CU_ASSERT_EQUAL(stat(path, &st), 0);
		CU_ASSERT_EQUAL(st.st_size, 4 << 20);
	}

	/* A new controller on the same path sees the data, twice over. */
	for (i = 0; i < 2; i++) {
		if (fx_open(&fx, opts) != 0) {
			fx_close(&fx);
			break;
		}
		verify_both(&fx, buf, 0xe1);
		fx_close(&fx);
	}

	/* Overwrite, restart, see the new data. */
	if (fx_open(&fx, opts) == 0) {
		write_both(&fx, buf, 0xe5);
		fx_close(&fx);
		if (fx_open(&fx, opts) == 0) {
			verify_both(&fx, buf, 0xe5);
		}
	}
	fx_close(&fx);

	nvp_env_dma_free(buf);
	remove_files(prefix, 2);
}

/* The same through "trtype:emu": detach destroys the device, attach makes it again. */
static void
test_file_via_trid(void)
{
	char prefix[128], trid[384];
	struct fx_ctrlr fx;
	uint8_t *buf;
	int rc;

	snprintf(prefix, sizeof(prefix), "%s/trid", g_dir);
	snprintf(trid, sizeof(trid),
		 "trtype:emu name:fbtrid nn=2 lba=512/4096 size=4M backend=file:%s", prefix);
	buf = fx_dma_alloc(32768);

	memset(&fx, 0, sizeof(fx));
	rc = fx_connect_str(trid, NULL, &fx.ctrlr);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc == 0) {
		CU_ASSERT_EQUAL(fx_qpair_alloc(fx.ctrlr, 0, 0, 0, false, &fx.qpair), 0);
		write_both(&fx, buf, 0xe9);
		fx_close(&fx);
	}
	CU_ASSERT_PTR_NULL(nvp_emu_ctrlr_find("fbtrid"));
	CU_ASSERT_EQUAL(access(prefix, F_OK) != 0, 1); /* only PATH.nsN files */

	memset(&fx, 0, sizeof(fx));
	rc = fx_connect_str(trid, NULL, &fx.ctrlr);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc == 0) {
		CU_ASSERT_EQUAL(fx_qpair_alloc(fx.ctrlr, 0, 0, 0, false, &fx.qpair), 0);
		verify_both(&fx, buf, 0xe9);
		fx_close(&fx);
	}
	nvp_env_dma_free(buf);
	remove_files(prefix, 2);
}

/* Format on a file backend erases the file's data too. */
static void
test_file_format_erases(void)
{
	char prefix[128], opts[256];
	union nvme_format_cdw10 f;
	struct fx_ctrlr fx;
	uint8_t *buf;

	snprintf(prefix, sizeof(prefix), "%s/format", g_dir);
	snprintf(opts, sizeof(opts), "size=4M,backend=file:%s", prefix);
	buf = fx_dma_alloc(4096);
	if (fx_open(&fx, opts) == 0) {
		fx_pattern_fill(buf, 3, 1, 512, 0xea);
		CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, 3, 1, 0, NULL), 0);
		f.raw = 0;
		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_format(fx.ctrlr, 1, f, NULL), 0);
		fx.ns = nvp_nvme_ctrlr_get_ns(fx.ctrlr, 1);
		memset(buf, 0xff, 512);
		CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 3, 1, 0, NULL), 0);
		CU_ASSERT(fx_is_zero(buf, 512));
	}
	fx_close(&fx);
	if (fx_open(&fx, opts) == 0) {
		memset(buf, 0xff, 512);
		CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 3, 1, 0, NULL), 0);
		CU_ASSERT(fx_is_zero(buf, 512));
	}
	fx_close(&fx);
	nvp_env_dma_free(buf);
	remove_files(prefix, 1);
}

static void
test_null_backend(void)
{
	struct fx_ctrlr fx;
	uint8_t *buf;

	buf = fx_dma_alloc(8192);
	if (fx_open(&fx, "size=1G,backend=null") == 0) {
		CU_ASSERT_EQUAL(nvp_nvme_ns_get_size(fx.ns), 1ull << 30);
		fx_pattern_fill(buf, 77, 16, 512, 0xeb);
		CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, 77, 16, 0, NULL), 0);
		memset(buf, 0xff, 8192);
		CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 77, 16, 0, NULL), 0);
		CU_ASSERT(fx_is_zero(buf, 8192));
		/* The whole 1 GiB is addressable without memory behind it. */
		CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf,
				      nvp_nvme_ns_get_num_sectors(fx.ns) - 16, 16, 0, NULL),
				0);
	}
	fx_close(&fx);
	nvp_env_dma_free(buf);
}

static void
test_ram_backend_starts_empty(void)
{
	struct fx_ctrlr fx;
	uint8_t *buf;

	buf = fx_dma_alloc(4096);
	if (fx_open(&fx, "name=ramfb,size=4M") == 0) {
		fx_pattern_fill(buf, 0, 1, 512, 0xec);
		CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, 0, 1, 0, NULL), 0);
	}
	fx_close(&fx);
	if (fx_open(&fx, "name=ramfb,size=4M") == 0) {
		memset(buf, 0xff, 512);
		CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 0, 1, 0, NULL), 0);
		CU_ASSERT(fx_is_zero(buf, 512));
	}
	fx_close(&fx);
	nvp_env_dma_free(buf);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "file_survives_restart", test_file_survives_restart },
		{ "file_via_trid", test_file_via_trid },
		{ "file_format_erases", test_file_format_erases },
		{ "null_backend", test_null_backend },
		{ "ram_backend_starts_empty", test_ram_backend_starts_empty },
	};
	int rc;

	if (suite_dir() != 0) {
		fprintf(stderr, "emu_file_backend: cannot make a temporary directory\n");
		return 1;
	}
	rc = fx_main(argc, argv, "emu_file_backend", tests, NVP_COUNTOF(tests));
	if (remove_dir(g_dir) != 0) {
		fprintf(stderr, "emu_file_backend: cannot remove %s\n", g_dir);
		rc = 1;
	}
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for real PCI functions (pci_real.c, pci_sysfs.c, pci_uio.c, pci_vfio.c)
 * against a fake sysfs tree built by test/common/fake_sysfs.sh under a temporary
 * directory named by NVP_SYSFS_ROOT: enumeration and its parsing, driver / IOMMU group /
 * NUMA lookups, the registry, the precise errors (bound to nvme, no driver, vanished, BAR
 * too small, IOMMU group not viable, no physical addresses for uio) and the uio path
 * itself, whose resource0 and config files are ordinary files here.
 */
#define _GNU_SOURCE
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "env_common/opts.c"
#include "env_common/pci.c"
#include "env_common/pci_addr.c"
#include "env_common/pci_real.c"
#include "env_common/pci_sysfs.c"
#include "env_common/sigbus.c"
#include "env_common/pci_uio.c"
#include "env_common/pci_vfio.c"

#include "../../util/ut_main.h"

static char g_root[256];
static char g_last_err[1024];
static bool g_phys;
static char g_vfio_bdf[32];
static int g_vfio_group = -1;

/* ---- backend stubs ---- */

int
env_backend_vfio_open(const char *bdf, int group, int *device_fd)
{
	snprintf(g_vfio_bdf, sizeof(g_vfio_bdf), "%s", bdf);
	g_vfio_group = group;
	*device_fd = -1;
	return -ENXIO;
}

void
env_backend_vfio_close(const char *bdf, int group, int device_fd)
{
	(void)bdf;
	(void)group;
	(void)device_fd;
}

bool
env_backend_iova_is_phys(char *why, size_t whylen)
{
	snprintf(why, whylen, "the test says no physical addresses");
	return g_phys;
}

static void
capture_log(enum nvp_log_level level, const char *component, const char *msg)
{
	(void)component;
	if (level <= NVP_LOG_ERROR) {
		snprintf(g_last_err, sizeof(g_last_err), "%s", msg);
	}
	fprintf(stderr, "  [log] %s\n", msg);
}

static struct nvp_pci_device *
find(const char *bdf)
{
	struct nvp_pci_addr a;

	CU_ASSERT_EQUAL_FATAL(nvp_pci_addr_parse(&a, bdf), 0);
	return nvp_pci_device_find(&a);
}

static int
map(const char *bdf, void **addr, uint64_t *size)
{
	struct nvp_pci_device *dev = find(bdf);
	uint64_t phys;

	CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
	g_last_err[0] = '\0';
	return dev->ops->map_bar(dev, 0, addr, &phys, size);
}

/* ---- tests ---- */

struct seen {
	struct nvp_pci_info v[16];
	int n;
};

static int
collect(void *ctx, const struct nvp_pci_info *info)
{
	struct seen *s = ctx;

	if (s->n < 16) {
		s->v[s->n++] = *info;
	}
	return 0;
}

static void
test_scan(void)
{
	struct seen s = { .n = 0 };

	CU_ASSERT_TRUE(env_sysfs_is_fake());
	CU_ASSERT_EQUAL(nvp_pci_scan(NVP_PCI_CLASS_NVME, collect, &s), 0);
	CU_ASSERT_EQUAL_FATAL(s.n, 6); /* not the NIC, not the VGA function */
	CU_ASSERT_STRING_EQUAL(s.v[0].bdf, "0000:01:00.0");
	CU_ASSERT_STRING_EQUAL(s.v[0].driver, "nvme");
	CU_ASSERT_EQUAL(s.v[0].iommu_group, 1);
	CU_ASSERT_STRING_EQUAL(s.v[2].bdf, "0000:03:00.0");
	CU_ASSERT_STRING_EQUAL(s.v[2].driver, "uio_pci_generic");
	CU_ASSERT_EQUAL(s.v[2].numa_node, 1);
	CU_ASSERT_EQUAL(s.v[2].id.vendor_id, 0x1b36);
	CU_ASSERT_EQUAL(s.v[2].id.device_id, 0x0010);
	CU_ASSERT_EQUAL(s.v[2].id.subvendor_id, 0x1af4);
	CU_ASSERT_EQUAL(s.v[2].id.subdevice_id, 0x1100);
	CU_ASSERT_EQUAL(s.v[2].id.class_id, NVP_PCI_CLASS_NVME);
	CU_ASSERT_STRING_EQUAL(s.v[5].bdf, "0000:06:00.0");
	CU_ASSERT_STRING_EQUAL(s.v[5].driver, "");
	CU_ASSERT_EQUAL(s.v[5].numa_node, -1);

	s.n = 0;
	CU_ASSERT_EQUAL(nvp_pci_scan(0, collect, &s), 0);
	CU_ASSERT_EQUAL(s.n, 8);
	CU_ASSERT_STRING_EQUAL(s.v[0].bdf, "0000:00:02.0");
	CU_ASSERT_EQUAL(s.v[0].iommu_group, -1);
}

static void
test_iommu(void)
{
	char why[256];

	CU_ASSERT_TRUE(nvp_env_iommu_present());
	CU_ASSERT_EQUAL(nvp_env_iommu_group_viable(2, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(nvp_env_iommu_group_viable(5, why, sizeof(why)), -EPERM);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "0000:05:00.1 in the same group is bound to e1000e"));
	CU_ASSERT_EQUAL(nvp_env_iommu_group_viable(99, why, sizeof(why)), -ENOENT);
}

static int
count_offered(void *ctx, struct nvp_pci_device *dev)
{
	int *n = ctx;

	CU_ASSERT_FALSE(dev->is_virtual);
	CU_ASSERT_TRUE(strcmp(dev->driver, "vfio-pci") == 0 ||
		       strcmp(dev->driver, "uio_pci_generic") == 0);
	(*n)++;
	return 0;
}

static void
test_enumerate_and_find(void)
{
	struct nvp_pci_device *dev;
	int n = 0;

	/* Offered: the ones bound to vfio-pci or uio_pci_generic (02, 03, 04, 05). */
	CU_ASSERT_EQUAL(nvp_pci_enumerate(NVP_PCI_CLASS_NVME, count_offered, &n), 0);
	CU_ASSERT_EQUAL(n, 4);
	n = 0;
	CU_ASSERT_EQUAL(nvp_pci_enumerate(0x020000, count_offered, &n), 0);
	CU_ASSERT_EQUAL(n, 0);

	dev = find("0000:03:00.0");
	CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
	CU_ASSERT_FALSE(dev->is_virtual);
	CU_ASSERT_STRING_EQUAL(dev->driver, "uio_pci_generic");
	CU_ASSERT_EQUAL(dev->numa_node, 1);
	CU_ASSERT_PTR_EQUAL(find("03:00.0"), dev); /* same entry every time */
	/* Found even when unusable, so that attaching can say why. */
	CU_ASSERT_PTR_NOT_NULL(find("0000:01:00.0"));
	CU_ASSERT_PTR_NULL(find("0000:09:00.0"));
	CU_ASSERT_PTR_NULL(find("0000:05:00.1")); /* not NVMe */
}

static void
test_refusals(void)
{
	void *addr = NULL;
	uint64_t size = 0;

	CU_ASSERT_EQUAL(map("0000:01:00.0", &addr, &size), -EBUSY);
	CU_ASSERT_STRING_EQUAL(g_last_err, "0000:01:00.0 is bound to nvme (kernel driver): run "
					   "scripts/setup.sh to give it to vfio-pci or "
					   "uio_pci_generic");
	CU_ASSERT_EQUAL(map("0000:06:00.0", &addr, &size), -ENODEV);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_last_err, "0000:06:00.0 is not bound to any driver"));

	/* vfio: group 5 is shared with a NIC the kernel drives. */
	CU_ASSERT_EQUAL(map("0000:05:00.0", &addr, &size), -EPERM);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_last_err, "IOMMU group 5 is not viable"));
	/* A viable group goes to the backend's container, which the stub refuses. */
	CU_ASSERT_EQUAL(map("0000:02:00.0", &addr, &size), -ENXIO);
	CU_ASSERT_STRING_EQUAL(g_vfio_bdf, "0000:02:00.0");
	CU_ASSERT_EQUAL(g_vfio_group, 2);

	/* uio without physical addresses. */
	g_phys = false;
	CU_ASSERT_EQUAL(map("0000:03:00.0", &addr, &size), -ENOTSUP);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_last_err, "needs physical DMA addresses"));
	g_phys = true;
	CU_ASSERT_EQUAL(map("0000:04:00.0", &addr, &size), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_last_err, "BAR0 is 4096 bytes, too small"));
	CU_ASSERT_EQUAL(find("0000:04:00.0")->ops->unmap_bar(find("0000:04:00.0"), 0, NULL),
			0); /* nothing mapped: harmless */
}

static void
test_uio_attach(void)
{
	struct nvp_pci_device *dev = find("0000:03:00.0");
	char path[512];
	uint16_t cmd = 0xffff;
	uint8_t cfg[8];
	void *addr = NULL;
	uint64_t size = 0;
	FILE *f;

	g_phys = true;
	CU_ASSERT_EQUAL_FATAL(map("0000:03:00.0", &addr, &size), 0);
	CU_ASSERT_EQUAL(size, 16384);
	CU_ASSERT_EQUAL(((volatile uint32_t *)addr)[0], 0x0f0107ff); /* CAP low word */
	/* Bus mastering the way the driver turns it on: config space read-modify-write. */
	CU_ASSERT_EQUAL(nvp_pci_cfg_read16(dev, &cmd, NVP_PCI_CFG_COMMAND), 0);
	CU_ASSERT_EQUAL(cmd, 0);
	CU_ASSERT_EQUAL(nvp_pci_cfg_write16(dev, NVP_PCI_COMMAND_MEMORY | NVP_PCI_COMMAND_MASTER,
					    NVP_PCI_CFG_COMMAND),
			0);
	snprintf(path, sizeof(path), "%s/bus/pci/devices/0000:03:00.0/config", g_root);
	f = fopen(path, "rb");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(fread(cfg, 1, sizeof(cfg), f), sizeof(cfg));
	fclose(f);
	CU_ASSERT_EQUAL(cfg[4], NVP_PCI_COMMAND_MEMORY | NVP_PCI_COMMAND_MASTER);
	CU_ASSERT_EQUAL(dev->ops->unmap_bar(dev, 0, addr), 0);
	CU_ASSERT_EQUAL(((struct real_dev *)dev->dev_ctx)->kind, REAL_CLOSED);
}

static void
test_vanished(void)
{
	struct nvp_pci_device *dev = find("0000:03:00.0");
	char cmd[600];
	void *addr = NULL;
	uint64_t size = 0;
	int n = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/bus/pci/devices/0000:03:00.0'", g_root);
	CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
	CU_ASSERT_EQUAL(dev->ops->map_bar(dev, 0, &addr, &(uint64_t){ 0 }, &size), -ENODEV);
	CU_ASSERT_PTR_NOT_NULL(strstr(g_last_err, "0000:03:00.0: the function vanished"));
	CU_ASSERT_EQUAL(nvp_pci_enumerate(NVP_PCI_CLASS_NVME, count_offered, &n), 0);
	CU_ASSERT_EQUAL(n, 3); /* no longer offered */
}

static void
test_no_pci(void)
{
	struct nvp_env_opts opts;
	int n = 0;

	nvp_env_opts_init(&opts, sizeof(opts));
	opts.no_pci = true;
	env_opts_set(&opts);
	CU_ASSERT_EQUAL(nvp_pci_enumerate(NVP_PCI_CLASS_NVME, count_offered, &n), 0);
	/* Entries already known stay; no_pci only stops new scans. Fresh ones: none. */
	CU_ASSERT_PTR_NULL(find("0000:07:00.0"));
	opts.no_pci = false;
	env_opts_set(&opts);
}

struct skipped {
	char bdf[8][NVP_PCI_ADDR_STRLEN];
	char why[8][384];
	int n;
};

static void
skipped_cb(void *ctx, const struct nvp_pci_addr *addr, const char *reason)
{
	struct skipped *s = ctx;

	if (s->n < 8) {
		nvp_pci_addr_fmt(s->bdf[s->n], sizeof(s->bdf[0]), addr);
		snprintf(s->why[s->n], sizeof(s->why[0]), "%s", reason);
		fprintf(stderr, "  skipped %s: %s\n", s->bdf[s->n], reason);
		s->n++;
	}
}

/* Every NVMe function not taken is named with its reason and what to do. */
static void
test_skipped(void)
{
	struct skipped s = { .n = 0 };

	CU_ASSERT_EQUAL(nvp_pci_skipped(NVP_PCI_CLASS_NVME, NULL, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_pci_skipped(0x020000, skipped_cb, &s), 0);
	CU_ASSERT_EQUAL(nvp_pci_skipped(NVP_PCI_CLASS_NVME, skipped_cb, &s), 3);
	CU_ASSERT_EQUAL_FATAL(s.n, 3);
	CU_ASSERT_STRING_EQUAL(s.bdf[0], "0000:01:00.0");
	CU_ASSERT_STRING_EQUAL(s.why[0],
			       "bound to nvme (kernel driver): run scripts/setup.sh config");
	CU_ASSERT_STRING_EQUAL(s.bdf[1], "0000:05:00.0");
	CU_ASSERT_PTR_NOT_NULL(strstr(s.why[1], "IOMMU group 5 is not viable"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s.why[1], "0000:05:00.1"));
	CU_ASSERT_STRING_EQUAL(s.bdf[2], "0000:06:00.0");
	CU_ASSERT_PTR_NOT_NULL(strstr(s.why[2], "no driver bound"));
}

static int
make_tree(const char *self)
{
	char script[512], cmd[1024], dir[512];

	snprintf(g_root, sizeof(g_root), "/tmp/nvp_fake_sysfs.XXXXXX");
	if (mkdtemp(g_root) == NULL) {
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s", self);
	snprintf(script, sizeof(script), "%s/../../../../common/fake_sysfs.sh", dirname(dir));
	snprintf(cmd, sizeof(cmd), "bash '%s' '%s'", script, g_root);
	if (system(cmd) != 0) {
		return -1;
	}
	return setenv("NVP_SYSFS_ROOT", g_root, 1);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_scan),     UT_TEST(test_iommu),      UT_TEST(test_enumerate_and_find),
		UT_TEST(test_refusals), UT_TEST(test_uio_attach), UT_TEST(test_vanished),
		UT_TEST(test_skipped),  UT_TEST(test_no_pci),
	};
	char cmd[300];
	int rc;

	if (make_tree(__FILE__) != 0) {
		fprintf(stderr, "pci_real_ut: cannot build the fake sysfs tree\n");
		return 1;
	}
	nvp_log_set_callback(capture_log);
	rc = ut_run("pci_real", tests, NVP_COUNTOF(tests));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_root);
	(void)system(cmd);
	return rc;
}

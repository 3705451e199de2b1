/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PCI functions as sysfs describes them (Documentation/ABI/testing/sysfs-bus-pci):
 * /sys/bus/pci/devices/<BDF>/{vendor,device,subsystem_vendor,subsystem_device,class,
 * numa_node} files, and the driver and iommu_group symlinks. The bus scan itself uses
 * libpciaccess (a class match on 0x010802), except under a fake tree ($NVP_SYSFS_ROOT),
 * which libpciaccess cannot be pointed at: there the directory is read instead.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pciaccess.h>

#include "pci_sysfs.h"
#include "nvpoll/util.h"

#define MAX_FUNCS 256

const char *
nvp_env_sysfs_root(void)
{
	const char *root = getenv("NVP_SYSFS_ROOT");

	return root != NULL && root[0] != '\0' ? root : "/sys";
}

bool
env_sysfs_is_fake(void)
{
	return strcmp(nvp_env_sysfs_root(), "/sys") != 0;
}

static void
dev_path(char *buf, size_t len, const char *bdf, const char *file)
{
	snprintf(buf, len, "%s/bus/pci/devices/%s%s%s", nvp_env_sysfs_root(), bdf, file ? "/" : "",
		 file ? file : "");
}

bool
env_pci_sysfs_exists(const char *bdf)
{
	char path[PATH_MAX];

	dev_path(path, sizeof(path), bdf, NULL);
	return access(path, F_OK) == 0;
}

/* Read a number such as "0x1b36" or "-1" from a one-line file. \return 0 or -errno. */
static int
read_num(const char *bdf, const char *file, long long *value)
{
	char path[PATH_MAX], line[64], *end;
	FILE *f;

	dev_path(path, sizeof(path), bdf, file);
	f = fopen(path, "re");
	if (f == NULL) {
		return -errno;
	}
	if (fgets(line, sizeof(line), f) == NULL) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	errno = 0;
	*value = strtoll(line, &end, 0);
	if (errno != 0 || end == line) {
		return -EINVAL;
	}
	return 0;
}

/* Last component of the symlink @file of @bdf ("driver", "iommu_group"), or "" if none. */
static void
read_link_base(const char *bdf, const char *file, char *out, size_t len)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *slash;
	ssize_t n;

	out[0] = '\0';
	dev_path(path, sizeof(path), bdf, file);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0) {
		return;
	}
	target[n] = '\0';
	slash = strrchr(target, '/');
	nvp_strlcpy(out, slash != NULL ? slash + 1 : target, len);
}

int
env_pci_sysfs_read(const char *bdf, struct nvp_pci_info *info)
{
	long long v[6];
	static const char *const files[] = { "vendor",           "device", "subsystem_vendor",
					     "subsystem_device", "class",  "numa_node" };
	char group[32];
	uint64_t g;
	size_t i;

	memset(info, 0, sizeof(*info));
	if (nvp_pci_addr_parse(&info->addr, bdf) != 0) {
		return -EINVAL;
	}
	nvp_pci_addr_fmt(info->bdf, sizeof(info->bdf), &info->addr);
	if (!env_pci_sysfs_exists(info->bdf)) {
		return -ENODEV;
	}
	for (i = 0; i < NVP_COUNTOF(files); i++) {
		if (read_num(info->bdf, files[i], &v[i]) != 0) {
			v[i] = i == 5 ? -1 : 0; /* no numa_node file on a non-NUMA kernel */
		}
	}
	info->id.vendor_id = (uint16_t)v[0];
	info->id.device_id = (uint16_t)v[1];
	info->id.subvendor_id = (uint16_t)v[2];
	info->id.subdevice_id = (uint16_t)v[3];
	info->id.class_id = (uint32_t)v[4] & 0xffffff;
	info->numa_node = (int)v[5];
	read_link_base(info->bdf, "driver", info->driver, sizeof(info->driver));
	read_link_base(info->bdf, "iommu_group", group, sizeof(group));
	info->iommu_group = nvp_strtou64(group, 0, INT_MAX, &g) == 0 ? (int)g : -1;
	return 0;
}

/* ---- the bus scan ---- */

struct scan_list {
	struct nvp_pci_info *v;
	size_t n;
};

static void
scan_add(struct scan_list *list, uint32_t class_id, const char *bdf)
{
	struct nvp_pci_info *info;

	if (list->n == MAX_FUNCS) {
		return;
	}
	info = &list->v[list->n];
	if (env_pci_sysfs_read(bdf, info) != 0) {
		return; /* gone between the scan and the read */
	}
	if (class_id == 0 || info->id.class_id == class_id) {
		list->n++;
	}
}

static int
scan_fake(struct scan_list *list, uint32_t class_id)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/bus/pci/devices", nvp_env_sysfs_root());
	d = opendir(path);
	if (d == NULL) {
		return errno == ENOENT ? 0 : -errno;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] != '.') {
			scan_add(list, class_id, de->d_name);
		}
	}
	closedir(d);
	return 0;
}

/* libpciaccess: pci_system_init() reads the real /sys/bus/pci; match on the class code. */
static int
scan_pciaccess(struct scan_list *list, uint32_t class_id)
{
	struct pci_id_match match = {
		.vendor_id = PCI_MATCH_ANY,
		.device_id = PCI_MATCH_ANY,
		.subvendor_id = PCI_MATCH_ANY,
		.subdevice_id = PCI_MATCH_ANY,
		.device_class = class_id,
		.device_class_mask = class_id != 0 ? 0xffffff : 0,
	};
	struct pci_device_iterator *it;
	struct pci_device *pdev;
	char bdf[NVP_PCI_ADDR_STRLEN];
	int rc;

	rc = pci_system_init();
	if (rc != 0) {
		/* No /sys/bus/pci (a container): no real functions, not an error. */
		return rc == ENOENT ? 0 : -rc;
	}
	it = pci_id_match_iterator_create(&match);
	if (it == NULL) {
		pci_system_cleanup();
		return -ENOMEM;
	}
	while ((pdev = pci_device_next(it)) != NULL) {
		snprintf(bdf, sizeof(bdf), "%04x:%02x:%02x.%x", (unsigned)pdev->domain, pdev->bus,
			 pdev->dev, pdev->func);
		scan_add(list, class_id, bdf);
	}
	pci_iterator_destroy(it);
	pci_system_cleanup();
	return 0;
}

static int
info_cmp(const void *a, const void *b)
{
	return nvp_pci_addr_compare(&((const struct nvp_pci_info *)a)->addr,
				    &((const struct nvp_pci_info *)b)->addr);
}

int
nvp_pci_scan(uint32_t class_id, int (*cb)(void *ctx, const struct nvp_pci_info *info), void *ctx)
{
	struct scan_list list = { calloc(MAX_FUNCS, sizeof(struct nvp_pci_info)), 0 };
	size_t i;
	int rc;

	if (list.v == NULL) {
		return -ENOMEM;
	}
	rc = env_sysfs_is_fake() ? scan_fake(&list, class_id) : scan_pciaccess(&list, class_id);
	qsort(list.v, list.n, sizeof(*list.v), info_cmp);
	for (i = 0; rc == 0 && i < list.n; i++) {
		rc = cb(ctx, &list.v[i]);
	}
	free(list.v);
	return rc;
}

/* ---- IOMMU ---- */

bool
nvp_env_iommu_present(void)
{
	char path[PATH_MAX];
	struct dirent *de;
	bool found = false;
	DIR *d;

	snprintf(path, sizeof(path), "%s/kernel/iommu_groups", nvp_env_sysfs_root());
	d = opendir(path);
	if (d == NULL) {
		return false;
	}
	while (!found && (de = readdir(d)) != NULL) {
		found = de->d_name[0] != '.';
	}
	closedir(d);
	return found;
}

/* Drivers the kernel lets share a group with vfio (they do no DMA of their own). */
static bool
driver_vfio_compatible(const char *driver)
{
	return driver[0] == '\0' || strcmp(driver, "vfio-pci") == 0 ||
	       strcmp(driver, "pci-stub") == 0 || strcmp(driver, "pcieport") == 0;
}

int
nvp_env_iommu_group_viable(int group, char *why, size_t whylen)
{
	char path[PATH_MAX], driver[32];
	struct dirent *de;
	int rc = 0;
	DIR *d;

	why[0] = '\0';
	snprintf(path, sizeof(path), "%s/kernel/iommu_groups/%d/devices", nvp_env_sysfs_root(),
		 group);
	d = opendir(path);
	if (d == NULL) {
		snprintf(why, whylen, "IOMMU group %d does not exist (%s)", group, path);
		return -ENOENT;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.') {
			continue;
		}
		read_link_base(de->d_name, "driver", driver, sizeof(driver));
		if (!driver_vfio_compatible(driver)) {
			snprintf(
				why, whylen,
				"IOMMU group %d is not viable: %s in the same group is bound to %s; "
				"bind every function of the group to vfio-pci (scripts/setup.sh) or "
				"unbind %s",
				group, de->d_name, driver, de->d_name);
			rc = -EPERM;
		}
	}
	closedir(d);
	return rc;
}

int
nvp_pci_usable(const struct nvp_pci_info *info, char *why, size_t whylen)
{
	why[0] = '\0';
	if (strcmp(info->driver, "vfio-pci") == 0 || strcmp(info->driver, "uio_pci_generic") == 0) {
		return 0;
	}
	if (info->driver[0] == '\0') {
		snprintf(why, whylen,
			 "%s is not bound to any driver: run scripts/setup.sh to give it to "
			 "vfio-pci or uio_pci_generic",
			 info->bdf);
		return -ENODEV;
	}
	snprintf(why, whylen,
		 "%s is bound to %s (kernel driver): run scripts/setup.sh to give it to vfio-pci "
		 "or uio_pci_generic",
		 info->bdf, info->driver);
	return -EBUSY;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What real PCI functions need from DPDK: the VFIO container holding DPDK's memory, and
 * the IOVA mode.
 *
 * vfio-pci: the EAL opens its default VFIO container at start-up whenever the vfio module
 * is loaded, even with --no-pci. rte_vfio_setup_device() puts the function's IOMMU group
 * in that container; for the first group it sets the type1 IOMMU, maps every DPDK memory
 * segment (IOVA = VA in our --iova-mode=va) and registers a callback that maps memory the
 * heap grows by later. So device and hugepage memory share one container without any
 * bookkeeping here - the same choice SPDK made before it kept its own map.
 *
 * uio_pci_generic: no IOMMU, the device sees physical addresses, so the EAL must run with
 * --iova-mode=pa (hugepages, root). dpdk_init.c chooses it at start-up when the NVMe
 * functions on the bus are bound only to uio_pci_generic (see env_dpdk_want_iova_pa());
 * env_backend_iova_is_phys() tells pci_uio.c whether that happened. NVP_IOVA_MODE=pa or
 * va in the environment overrides the choice (pa still needs hugepages and root).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_vfio.h>

#define NVP_LOG_COMPONENT "env"
#include "env_common/pci_sysfs.h"
#include "env_dpdk_internal.h"
#include "nvpoll/log.h"

int
env_backend_vfio_open(const char *bdf, int group, int *device_fd)
{
	struct vfio_device_info info = { .argsz = sizeof(info) };
	char sysfs[256];
	int rc;

	(void)group;
	if (!rte_vfio_is_enabled("vfio")) {
		NVP_ERRLOG("%s: DPDK did not find VFIO when it started (was the vfio-pci module "
			   "loaded before this program?): modprobe vfio-pci, then restart",
			   bdf);
		return -ENODEV;
	}
	snprintf(sysfs, sizeof(sysfs), "%s/bus/pci/devices", nvp_env_sysfs_root());
	rc = rte_vfio_setup_device(sysfs, bdf, device_fd, &info);
	if (rc != 0) {
		NVP_ERRLOG("%s: DPDK could not attach the function to its VFIO container (rc %d; "
			   "NVP_LOG_LEVEL=debug shows the EAL's reason)",
			   bdf, rc);
		return -EIO;
	}
	return 0;
}

void
env_backend_vfio_close(const char *bdf, int group, int device_fd)
{
	char sysfs[256];

	(void)group;
	snprintf(sysfs, sizeof(sysfs), "%s/bus/pci/devices", nvp_env_sysfs_root());
	if (rte_vfio_release_device(sysfs, bdf, device_fd) != 0) {
		NVP_WARNLOG("%s: DPDK could not release the VFIO device", bdf);
	}
}

bool
env_backend_iova_is_phys(char *why, size_t whylen)
{
	if (rte_eal_iova_mode() == RTE_IOVA_PA) {
		return true;
	}
	snprintf(why, whylen,
		 "DPDK runs with IOVA = VA (%s); it chooses physical addresses at start-up "
		 "only when hugepages are reserved, the program runs as root, and the NVMe "
		 "functions are bound to uio_pci_generic and none to vfio-pci",
		 rte_eal_has_hugepages() ? "some NVMe function is bound to vfio-pci, or not root" :
					   "no hugepages");
	return false;
}

/* ---- the IOVA mode at start-up ---- */

struct drivers_seen {
	int uio;
	int vfio;
};

static int
count_driver(void *ctx, const struct nvp_pci_info *info)
{
	struct drivers_seen *seen = ctx;

	if (strcmp(info->driver, "uio_pci_generic") == 0) {
		seen->uio++;
	} else if (strcmp(info->driver, "vfio-pci") == 0) {
		seen->vfio++;
	}
	return 0;
}

int
env_dpdk_count_user_nvme(void)
{
	struct drivers_seen seen = { 0, 0 };

	(void)nvp_pci_scan(NVP_PCI_CLASS_NVME, count_driver, &seen);
	return seen.uio + seen.vfio;
}

bool
env_dpdk_want_iova_pa(const struct nvp_env_opts *opts, bool no_huge)
{
	struct drivers_seen seen = { 0, 0 };
	const char *force = getenv("NVP_IOVA_MODE");

	if (force != NULL && (strcmp(force, "pa") == 0 || strcmp(force, "va") == 0)) {
		if (strcmp(force, "pa") == 0 && no_huge) {
			NVP_WARNLOG(
				"NVP_IOVA_MODE=pa needs hugepages; none are used, so IOVA = VA");
			return false;
		}
		return strcmp(force, "pa") == 0;
	}
	if (opts->no_pci || no_huge) {
		return false;
	}
	(void)nvp_pci_scan(NVP_PCI_CLASS_NVME, count_driver, &seen);
	if (seen.uio == 0) {
		return false;
	}
	if (seen.vfio > 0) {
		NVP_WARNLOG("NVMe functions are bound to both uio_pci_generic (%d) and vfio-pci "
			    "(%d); using IOVA = VA for vfio-pci, so the uio_pci_generic ones will "
			    "be refused - bind them all to one driver (scripts/setup.sh)",
			    seen.uio, seen.vfio);
		return false;
	}
	if (geteuid() != 0) {
		NVP_WARNLOG("%d NVMe function(s) bound to uio_pci_generic need physical "
			    "addresses, which only root can read; they will be refused",
			    seen.uio);
		return false;
	}
	return true;
}

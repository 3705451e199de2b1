/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Real PCI functions: NVMe functions found on the bus (pci_sysfs.c) join the env registry
 * as struct nvp_pci_device with is_virtual = false, the kernel driver's name and NUMA
 * node. Their ops open the function through the driver bound at attach time - vfio-pci
 * (pci_vfio.c) or uio_pci_generic (pci_uio.c) - and refuse precisely otherwise: the
 * function vanished, is still bound to the kernel nvme driver, or to no driver.
 *
 * Entries are never freed (a driver may hold a pointer); a function that leaves sysfs is
 * marked vanished and no longer offered.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define NVP_LOG_COMPONENT "env"
#include "pci_real.h"
#include "nvpoll/log.h"
#include "nvpoll/util.h"

static pthread_mutex_t g_real_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static TAILQ_HEAD(, real_dev) g_real = TAILQ_HEAD_INITIALIZER(g_real);

static const struct nvp_pci_device_ops g_real_ops;

static struct real_dev *
real_find_locked(const struct nvp_pci_addr *addr)
{
	struct real_dev *rd;

	TAILQ_FOREACH (rd, &g_real, link) {
		if (nvp_pci_addr_compare(&rd->pub.addr, addr) == 0) {
			return rd;
		}
	}
	return NULL;
}

static void
real_update(struct real_dev *rd, const struct nvp_pci_info *info)
{
	rd->pub.id = info->id;
	rd->pub.numa_node = info->numa_node;
	nvp_strlcpy(rd->pub.driver, info->driver, sizeof(rd->pub.driver));
	rd->iommu_group = info->iommu_group;
	rd->vanished = false;
}

/* Scan callback: add new functions, refresh the ones nobody has attached to. */
static int
real_add(void *ctx, const struct nvp_pci_info *info)
{
	struct real_dev *rd;

	(void)ctx;
	rd = real_find_locked(&info->addr);
	if (rd != NULL) {
		if (rd->kind == REAL_CLOSED) {
			real_update(rd, info);
		}
		rd->vanished = false;
		return 0;
	}
	rd = calloc(1, sizeof(*rd));
	if (rd == NULL) {
		return -ENOMEM;
	}
	rd->pub.addr = info->addr;
	rd->pub.is_virtual = false;
	rd->pub.ops = &g_real_ops;
	rd->pub.dev_ctx = rd;
	nvp_strlcpy(rd->bdf, info->bdf, sizeof(rd->bdf));
	rd->dev_fd = -1;
	rd->cfg_fd = -1;
	rd->uio_fd = -1;
	rd->req_fd = -1;
	real_update(rd, info);
	TAILQ_INSERT_TAIL(&g_real, rd, link);
	return 0;
}

/* Rescan the bus for NVMe functions. Caller holds g_real_lock. */
static int
real_rescan_locked(void)
{
	struct real_dev *rd;
	int rc;

	if (env_opts_get()->no_pci) {
		return 0;
	}
	TAILQ_FOREACH (rd, &g_real, link) {
		rd->vanished = true;
	}
	rc = nvp_pci_scan(NVP_PCI_CLASS_NVME, real_add, NULL);
	if (rc != 0) {
		NVP_WARNLOG("PCI scan for NVMe functions failed: %s", strerror(-rc));
	}
	return rc;
}

static bool
real_is_usable(const struct real_dev *rd)
{
	return !rd->vanished && (strcmp(rd->pub.driver, "vfio-pci") == 0 ||
				 strcmp(rd->pub.driver, "uio_pci_generic") == 0);
}

int
env_pci_enumerate_real(uint32_t class_id, int (*cb)(void *ctx, struct nvp_pci_device *dev),
		       void *ctx)
{
	struct real_dev *rd;
	int rc = 0;

	if (class_id != 0 && class_id != NVP_PCI_CLASS_NVME) {
		return 0; /* we only look for NVMe functions */
	}
	pthread_mutex_lock(&g_real_lock);
	(void)real_rescan_locked();
	TAILQ_FOREACH (rd, &g_real, link) {
		/* Offer only what a userspace driver can take; say why about the others. */
		if (!real_is_usable(rd)) {
			if (!rd->vanished) {
				NVP_INFOLOG("%s: skipped, bound to %s", rd->bdf,
					    rd->pub.driver[0] ? rd->pub.driver : "no driver");
			}
			continue;
		}
		rc = cb(ctx, &rd->pub);
		if (rc != 0) {
			break;
		}
	}
	pthread_mutex_unlock(&g_real_lock);
	return rc;
}

/*
 * Why a function found on the bus is not offered, in one line for people: the driver it
 * is bound to (or none), or an IOMMU group vfio cannot use. Empty if it is usable.
 */
static void
real_skip_reason(const struct real_dev *rd, char *why, size_t len)
{
	const char *drv = rd->pub.driver;

	why[0] = '\0';
	if (drv[0] == '\0') {
		snprintf(why, len, "no driver bound: run scripts/setup.sh config");
	} else if (strcmp(drv, "nvme") == 0) {
		snprintf(why, len, "bound to nvme (kernel driver): run scripts/setup.sh config");
	} else if (strcmp(drv, "vfio-pci") == 0 && rd->iommu_group >= 0 &&
		   nvp_env_iommu_group_viable(rd->iommu_group, why, len) != 0) {
		return; /* @why says which function of the group is in the way */
	} else if (strcmp(drv, "vfio-pci") != 0 && strcmp(drv, "uio_pci_generic") != 0) {
		snprintf(why, len,
			 "bound to %s (not vfio-pci or uio_pci_generic): run scripts/setup.sh "
			 "config",
			 drv);
	}
}

int
env_pci_skipped_real(uint32_t class_id,
		     void (*cb)(void *ctx, const struct nvp_pci_addr *addr, const char *reason),
		     void *ctx)
{
	struct real_dev *rd;
	char why[384];
	int n = 0;

	if (class_id != 0 && class_id != NVP_PCI_CLASS_NVME) {
		return 0;
	}
	pthread_mutex_lock(&g_real_lock);
	(void)real_rescan_locked();
	TAILQ_FOREACH (rd, &g_real, link) {
		if (rd->vanished || rd->kind != REAL_CLOSED) {
			continue; /* gone, or open: in use by this process */
		}
		real_skip_reason(rd, why, sizeof(why));
		if (why[0] != '\0') {
			cb(ctx, &rd->pub.addr, why);
			n++;
		}
	}
	pthread_mutex_unlock(&g_real_lock);
	return n;
}

struct nvp_pci_device *
env_pci_device_find_real(const struct nvp_pci_addr *addr)
{
	struct real_dev *rd;

	pthread_mutex_lock(&g_real_lock);
	rd = real_find_locked(addr);
	if (rd == NULL || (rd->kind == REAL_CLOSED && !env_pci_sysfs_exists(rd->bdf))) {
		(void)real_rescan_locked();
		rd = real_find_locked(addr);
	}
	pthread_mutex_unlock(&g_real_lock);
	return rd != NULL ? &rd->pub : NULL;
}

/* ---- BAR size ---- */

uint64_t
env_nvme_bar_min(uint32_t dstrd)
{
	return ENV_NVME_REG_DBS + 2ull * (4ull << dstrd);
}

int
env_nvme_bar_check(const struct real_dev *rd, const volatile void *bar, uint64_t len)
{
	const volatile uint32_t *cap = bar;
	uint32_t dstrd = 0;

	/* CAP.DSTRD is bits 35:32 of CAP (NVMe 1.4 section 3.1.1), i.e. 3:0 of its high word. */
	if (len >= 8) {
		dstrd = cap[1] & 0xf;
	}
	if (len < env_nvme_bar_min(dstrd)) {
		NVP_ERRLOG(
			"%s: BAR0 is %" PRIu64 " bytes, too small for an NVMe controller: it "
			"needs at least 0x%" PRIx64 " (registers to 0x%x plus the admin "
			"doorbells at stride %u); is this function's BAR0 its NVMe register BAR?",
			rd->bdf, len, env_nvme_bar_min(dstrd), ENV_NVME_REG_DBS, 4u << dstrd);
		return -EIO;
	}
	return 0;
}

/* ---- open by driver ---- */

/*
 * Before touching the function: is it still there, and bound to a driver we can use?
 * Re-reads sysfs, as setup.sh may have rebound it since the scan.
 */
static int
real_open(struct real_dev *rd)
{
	struct nvp_pci_info info;
	char why[256];
	int rc;

	if (rd->kind != REAL_CLOSED) {
		return 0;
	}
	if (env_pci_sysfs_read(rd->bdf, &info) != 0) {
		rd->vanished = true;
		NVP_ERRLOG("%s: the function vanished (%s/bus/pci/devices/%s is gone): removed "
			   "or hot-unplugged; check lspci and rescan",
			   rd->bdf, nvp_env_sysfs_root(), rd->bdf);
		return -ENODEV;
	}
	real_update(rd, &info);
	rc = nvp_pci_usable(&info, why, sizeof(why));
	if (rc != 0) {
		NVP_ERRLOG("%s", why);
		return rc;
	}
	if (strcmp(info.driver, "vfio-pci") == 0) {
		return env_vfio_dev_open(rd);
	}
	return env_uio_dev_open(rd);
}

static void
real_close_locked(struct real_dev *rd)
{
	if (rd->bar != NULL) {
		munmap(rd->bar, rd->bar_len);
		rd->bar = NULL;
	}
	if (rd->kind == REAL_VFIO) {
		env_vfio_dev_close(rd);
	} else if (rd->kind == REAL_UIO) {
		env_uio_dev_close(rd);
	}
	rd->kind = REAL_CLOSED;
}

static int
real_map_bar(struct nvp_pci_device *dev, uint32_t bar, void **mapped_addr, uint64_t *phys_addr,
	     uint64_t *size)
{
	struct real_dev *rd = dev->dev_ctx;
	int rc;

	if (bar != 0) {
		NVP_ERRLOG("%s: only BAR0 (the NVMe registers) can be mapped, not BAR%u", rd->bdf,
			   bar);
		return -EINVAL;
	}
	pthread_mutex_lock(&g_real_lock);
	rc = real_open(rd);
	if (rc == 0 && rd->bar == NULL) {
		rc = rd->kind == REAL_VFIO ? env_vfio_map_bar0(rd) : env_uio_map_bar0(rd);
	}
	if (rc != 0) {
		real_close_locked(rd);
	} else {
		/* A removal under I/O must not kill the process (sigbus.c). */
		(void)nvp_env_sigbus_register(rd->bar, rd->bar_len);
		*mapped_addr = rd->bar;
		*phys_addr = rd->bar_phys;
		*size = rd->bar_len;
	}
	pthread_mutex_unlock(&g_real_lock);
	return rc;
}

/* The driver unmaps BAR0 when it lets the function go: close it completely then. */
static int
real_unmap_bar(struct nvp_pci_device *dev, uint32_t bar, void *addr)
{
	struct real_dev *rd = dev->dev_ctx;

	if (bar != 0 || addr != rd->bar) {
		return -EINVAL;
	}
	pthread_mutex_lock(&g_real_lock);
	nvp_env_sigbus_unregister(rd->bar);
	real_close_locked(rd);
	pthread_mutex_unlock(&g_real_lock);
	return 0;
}

static int
real_cfg_rw(struct nvp_pci_device *dev, void *value, uint32_t len, uint32_t offset, bool write)
{
	struct real_dev *rd = dev->dev_ctx;
	int rc;

	pthread_mutex_lock(&g_real_lock);
	rc = real_open(rd);
	if (rc == 0) {
		rc = rd->kind == REAL_VFIO ? env_vfio_cfg_rw(rd, value, len, offset, write) :
					     env_uio_cfg_rw(rd, value, len, offset, write);
	}
	pthread_mutex_unlock(&g_real_lock);
	return rc;
}

static int
real_cfg_read(struct nvp_pci_device *dev, void *value, uint32_t len, uint32_t offset)
{
	return real_cfg_rw(dev, value, len, offset, false);
}

static int
real_cfg_write(struct nvp_pci_device *dev, const void *value, uint32_t len, uint32_t offset)
{
	return real_cfg_rw(dev, (void *)value, len, offset, true);
}

static int
real_irq_fd(struct nvp_pci_device *dev, uint32_t vector, uint32_t *vector_out)
{
	struct real_dev *rd = dev->dev_ctx;
	int rc;

	pthread_mutex_lock(&g_real_lock);
	rc = real_open(rd);
	if (rc == 0) {
		rc = rd->kind == REAL_VFIO ? env_vfio_irq_fd(rd, vector, vector_out) :
					     env_uio_irq_fd(rd, vector, vector_out);
	}
	pthread_mutex_unlock(&g_real_lock);
	return rc;
}

/*
 * uio_pci_generic sets INTx Disable each time the line fires; clear it (through the
 * config file, as DPDK does: the driver has no irqcontrol). MSI-X needs nothing.
 */
static int
real_irq_unmask(struct nvp_pci_device *dev, uint32_t vector)
{
	struct real_dev *rd = dev->dev_ctx;
	uint16_t cmd;
	int rc;

	(void)vector;
	if (rd->kind != REAL_UIO || rd->uio_fd < 0) {
		return 0;
	}
	rc = env_uio_cfg_rw(rd, &cmd, sizeof(cmd), NVP_PCI_CFG_COMMAND, false);
	if (rc == 0 && (cmd & NVP_PCI_COMMAND_INTX_DISABLE)) {
		cmd &= (uint16_t)~NVP_PCI_COMMAND_INTX_DISABLE;
		rc = env_uio_cfg_rw(rd, &cmd, sizeof(cmd), NVP_PCI_CFG_COMMAND, true);
	}
	return rc;
}

static bool
real_release_requested(struct nvp_pci_device *dev)
{
	struct real_dev *rd = dev->dev_ctx;

	return rd->kind == REAL_VFIO && env_vfio_release_requested(rd);
}

static const struct nvp_pci_device_ops g_real_ops = {
	.map_bar = real_map_bar,
	.unmap_bar = real_unmap_bar,
	.cfg_read = real_cfg_read,
	.cfg_write = real_cfg_write,
	.irq_fd = real_irq_fd,
	.irq_unmask = real_irq_unmask,
	.release_requested = real_release_requested,
};

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vfio-pci (Documentation/driver-api/vfio.rst): a function's IOMMU group joins a
 * container with the type1 IOMMU; the device fd then exposes BAR0 and configuration space
 * as regions (VFIO_DEVICE_GET_REGION_INFO) to mmap or pread/pwrite. Which container holds
 * the group is the backend's choice (env_backend_vfio_open()): DMA memory must be mapped in
 * the same one. For backends without one of their own, a generic container is here, with
 * every registered DMA buffer mapped at IOVA = its registered IOVA.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/vfio.h>

#define NVP_LOG_COMPONENT "env"
#include "pci_real.h"
#include "nvpoll/log.h"
#include "nvpoll/util.h"

/* ---- the device: regions, BAR0, config space ---- */

/* Give interrupt @index of the device the eventfds @fds[0..n) (n = 0: none). */
static int
irq_set(struct real_dev *rd, uint32_t index, const int *fds, uint32_t n)
{
	size_t len = sizeof(struct vfio_irq_set) + n * sizeof(int32_t);
	struct vfio_irq_set *set = calloc(1, len);
	int rc = 0;

	if (set == NULL) {
		return -ENOMEM;
	}
	set->argsz = (uint32_t)len;
	set->flags = (n ? VFIO_IRQ_SET_DATA_EVENTFD : VFIO_IRQ_SET_DATA_NONE) |
		     VFIO_IRQ_SET_ACTION_TRIGGER;
	set->index = index;
	set->start = 0;
	set->count = n;
	if (n != 0) {
		memcpy(set->data, fds, n * sizeof(int32_t));
	}
	if (ioctl(rd->dev_fd, VFIO_DEVICE_SET_IRQS, set) != 0) {
		rc = -errno;
	}
	free(set);
	return rc;
}

/*
 * The device request interrupt: when the function is being unbound from vfio-pci, the
 * kernel signals it and waits (repeating the request) until the process closes the
 * device. Without an eventfd on it the unbind just waits for the process to end. Best
 * effort: a kernel or function without it leaves req_fd at -1.
 */
static void
req_open(struct real_dev *rd)
{
	struct vfio_irq_info info = { .argsz = sizeof(info), .index = VFIO_PCI_REQ_IRQ_INDEX };
	int fd, rc;

	if (ioctl(rd->dev_fd, VFIO_DEVICE_GET_IRQ_INFO, &info) != 0 || info.count == 0 ||
	    !(info.flags & VFIO_IRQ_INFO_EVENTFD)) {
		NVP_INFOLOG("%s: no VFIO device request interrupt: an unbind waits for the "
			    "process to end",
			    rd->bdf);
		return;
	}
	fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fd < 0) {
		return;
	}
	rc = irq_set(rd, VFIO_PCI_REQ_IRQ_INDEX, &fd, 1);
	if (rc != 0) {
		NVP_WARNLOG("%s: VFIO_DEVICE_SET_IRQS (device request) failed: %s", rd->bdf,
			    strerror(-rc));
		close(fd);
		return;
	}
	rd->req_fd = fd;
	rd->release_requested = false;
}

static void
req_close(struct real_dev *rd)
{
	if (rd->req_fd < 0) {
		return;
	}
	if (rd->dev_fd >= 0) {
		(void)irq_set(rd, VFIO_PCI_REQ_IRQ_INDEX, NULL, 0);
	}
	close(rd->req_fd);
	rd->req_fd = -1;
}

bool
env_vfio_release_requested(struct real_dev *rd)
{
	uint64_t v;

	if (!__atomic_load_n(&rd->release_requested, __ATOMIC_ACQUIRE) && rd->req_fd >= 0 &&
	    read(rd->req_fd, &v, sizeof(v)) == (ssize_t)sizeof(v)) {
		NVP_WARNLOG("%s: the kernel asks for the function back (it is being unbound "
			    "from vfio-pci): giving it up",
			    rd->bdf);
		__atomic_store_n(&rd->release_requested, true, __ATOMIC_RELEASE);
	}
	return __atomic_load_n(&rd->release_requested, __ATOMIC_ACQUIRE);
}

static int
region_info(struct real_dev *rd, uint32_t index, struct vfio_region_info *info)
{
	memset(info, 0, sizeof(*info));
	info->argsz = sizeof(*info);
	info->index = index;
	if (ioctl(rd->dev_fd, VFIO_DEVICE_GET_REGION_INFO, info) != 0) {
		int rc = -errno;

		NVP_ERRLOG("%s: VFIO_DEVICE_GET_REGION_INFO(%u) failed: %s", rd->bdf, index,
			   strerror(-rc));
		return rc;
	}
	return 0;
}

int
env_vfio_dev_open(struct real_dev *rd)
{
	struct vfio_region_info cfg;
	char why[256];
	int rc;

	if (rd->iommu_group < 0) {
		NVP_ERRLOG("%s is bound to vfio-pci but has no IOMMU group: boot with the IOMMU "
			   "on (intel_iommu=on or amd_iommu=on) or use uio_pci_generic",
			   rd->bdf);
		return -ENODEV;
	}
	rc = nvp_env_iommu_group_viable(rd->iommu_group, why, sizeof(why));
	if (rc != 0) {
		NVP_ERRLOG("%s: %s", rd->bdf, why);
		return rc == -EPERM ? -EPERM : -ENODEV;
	}
	rc = env_backend_vfio_open(rd->bdf, rd->iommu_group, &rd->dev_fd);
	if (rc != 0) {
		rd->dev_fd = -1;
		return rc;
	}
	rd->kind = REAL_VFIO;
	rc = region_info(rd, VFIO_PCI_CONFIG_REGION_INDEX, &cfg);
	if (rc != 0) {
		env_vfio_dev_close(rd);
		rd->kind = REAL_CLOSED;
		return rc;
	}
	rd->cfg_offset = cfg.offset;
	req_open(rd);
	return 0;
}

int
env_vfio_map_bar0(struct real_dev *rd)
{
	struct vfio_region_info bar;
	void *addr;
	int rc;

	rc = region_info(rd, VFIO_PCI_BAR0_REGION_INDEX, &bar);
	if (rc != 0) {
		return rc;
	}
	if ((bar.flags & VFIO_REGION_INFO_FLAG_MMAP) == 0 || bar.size == 0) {
		NVP_ERRLOG("%s: vfio says BAR0 (%" PRIu64 " bytes) cannot be mmapped", rd->bdf,
			   (uint64_t)bar.size);
		return -EIO;
	}
	addr = mmap(NULL, bar.size, PROT_READ | PROT_WRITE, MAP_SHARED, rd->dev_fd,
		    (off_t)bar.offset);
	if (addr == MAP_FAILED) {
		rc = -errno;
		NVP_ERRLOG("%s: mmap of BAR0 (%" PRIu64 " bytes) failed: %s", rd->bdf,
			   (uint64_t)bar.size, strerror(-rc));
		return rc;
	}
	rc = env_nvme_bar_check(rd, addr, bar.size);
	if (rc != 0) {
		munmap(addr, bar.size);
		return rc;
	}
	rd->bar = addr;
	rd->bar_len = bar.size;
	rd->bar_phys = 0; /* not known through vfio, and not needed */
	return 0;
}

int
env_vfio_cfg_rw(struct real_dev *rd, void *value, uint32_t len, uint32_t offset, bool write)
{
	off_t off = (off_t)(rd->cfg_offset + offset);
	ssize_t n;

	n = write ? pwrite(rd->dev_fd, value, len, off) : pread(rd->dev_fd, value, len, off);
	if (n != (ssize_t)len) {
		int rc = n < 0 ? -errno : -EIO;

		NVP_ERRLOG("%s: config space %s of %u bytes at 0x%x failed: %s", rd->bdf,
			   write ? "write" : "read", len, offset, strerror(-rc));
		return rc;
	}
	return 0;
}

/* ---- interrupts: MSI-X vectors delivered as eventfds ---- */

#define VFIO_MAX_VECTORS 64u

static int
msix_enable(struct real_dev *rd)
{
	struct vfio_irq_info info = { .argsz = sizeof(info), .index = VFIO_PCI_MSIX_IRQ_INDEX };
	uint32_t n;
	int rc;

	if (ioctl(rd->dev_fd, VFIO_DEVICE_GET_IRQ_INFO, &info) != 0 || info.count == 0 ||
	    !(info.flags & VFIO_IRQ_INFO_EVENTFD)) {
		NVP_ERRLOG("%s: no MSI-X vectors through vfio: interrupts unavailable", rd->bdf);
		return -ENOTSUP;
	}
	n = NVP_MIN(info.count, VFIO_MAX_VECTORS);
	rd->irq_fds = calloc(n, sizeof(int));
	if (rd->irq_fds == NULL) {
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		rd->irq_fds[i] = eventfd(0, EFD_CLOEXEC);
		if (rd->irq_fds[i] < 0) {
			rc = -errno;
			rd->irq_n = i;
			env_vfio_irq_close(rd);
			return rc;
		}
	}
	rd->irq_n = n;
	rc = irq_set(rd, VFIO_PCI_MSIX_IRQ_INDEX, rd->irq_fds, n);
	if (rc != 0) {
		NVP_ERRLOG("%s: VFIO_DEVICE_SET_IRQS (MSI-X, %u vectors) failed: %s", rd->bdf, n,
			   strerror(-rc));
		env_vfio_irq_close(rd);
		return rc;
	}
	NVP_INFOLOG("%s: %u MSI-X vectors to eventfds (the function has %u)", rd->bdf, n,
		    info.count);
	return 0;
}

/*
 * Vector 0 belongs to the admin queue; I/O queues get 1.. and share them round robin
 * when the function has fewer vectors than queues.
 */
int
env_vfio_irq_fd(struct real_dev *rd, uint32_t vector, uint32_t *vector_out)
{
	uint32_t v;
	int rc;

	if (rd->irq_n == 0) {
		rc = msix_enable(rd);
		if (rc != 0) {
			return rc;
		}
	}
	v = vector == 0 || rd->irq_n == 1 ? 0 : 1 + (vector - 1) % (rd->irq_n - 1);
	*vector_out = v;
	return rd->irq_fds[v];
}

void
env_vfio_irq_close(struct real_dev *rd)
{
	if (rd->irq_fds == NULL) {
		return;
	}
	if (rd->irq_n > 0 && rd->dev_fd >= 0) {
		(void)irq_set(rd, VFIO_PCI_MSIX_IRQ_INDEX, NULL, 0);
	}
	for (uint32_t i = 0; i < rd->irq_n; i++) {
		close(rd->irq_fds[i]);
	}
	free(rd->irq_fds);
	rd->irq_fds = NULL;
	rd->irq_n = 0;
}

void
env_vfio_dev_close(struct real_dev *rd)
{
	env_vfio_irq_close(rd);
	req_close(rd);
	if (rd->dev_fd >= 0) {
		env_backend_vfio_close(rd->bdf, rd->iommu_group, rd->dev_fd);
	}
	rd->dev_fd = -1;
}

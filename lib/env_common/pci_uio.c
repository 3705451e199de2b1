/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * uio_pci_generic: no IOMMU and no device fd of our own - BAR0 is the sysfs resource0
 * file (mmap), configuration space the sysfs config file (pread/pwrite). The device DMAs
 * to physical addresses, so this works only when the backend hands out physical IOVAs
 * (DPDK with --iova-mode=pa on hugepages, as root): checked before anything is mapped.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define NVP_LOG_COMPONENT "env"
#include "pci_real.h"
#include "nvpoll/log.h"

static void
uio_path(char *buf, size_t len, const struct real_dev *rd, const char *file)
{
	snprintf(buf, len, "%s/bus/pci/devices/%s/%s", nvp_env_sysfs_root(), rd->bdf, file);
}

int
env_uio_dev_open(struct real_dev *rd)
{
	char path[PATH_MAX], why[256];
	int rc;

	if (!env_backend_iova_is_phys(why, sizeof(why))) {
		NVP_ERRLOG("%s is bound to uio_pci_generic, which needs physical DMA addresses, "
			   "but %s; bind it to vfio-pci instead if the machine has an IOMMU",
			   rd->bdf, why);
		return -ENOTSUP;
	}
	uio_path(path, sizeof(path), rd, "config");
	rd->cfg_fd = open(path, O_RDWR | O_CLOEXEC);
	if (rd->cfg_fd < 0) {
		rc = -errno;
		NVP_ERRLOG("%s: cannot open %s: %s%s", rd->bdf, path, strerror(-rc),
			   rc == -EACCES || rc == -EPERM ? " - run as root" : "");
		return rc;
	}
	rd->kind = REAL_UIO;
	return 0;
}

int
env_uio_map_bar0(struct real_dev *rd)
{
	char path[PATH_MAX];
	struct stat st;
	void *addr;
	int fd, rc;

	uio_path(path, sizeof(path), rd, "resource0");
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		rc = -errno;
		NVP_ERRLOG("%s: cannot open %s: %s", rd->bdf, path, strerror(-rc));
		if (fd >= 0) {
			close(fd);
		}
		return rc;
	}
	addr = st.st_size > 0 ?
		       mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) :
		       MAP_FAILED;
	rc = addr == MAP_FAILED ? (st.st_size > 0 ? -errno : -EIO) : 0;
	close(fd);
	if (rc != 0) {
		NVP_ERRLOG("%s: mmap of %s (%lld bytes) failed: %s", rd->bdf, path,
			   (long long)st.st_size, strerror(-rc));
		return rc;
	}
	rc = env_nvme_bar_check(rd, addr, (uint64_t)st.st_size);
	if (rc != 0) {
		munmap(addr, (size_t)st.st_size);
		return rc;
	}
	rd->bar = addr;
	rd->bar_len = (uint64_t)st.st_size;
	return 0;
}

int
env_uio_cfg_rw(struct real_dev *rd, void *value, uint32_t len, uint32_t offset, bool write)
{
	ssize_t n;

	n = write ? pwrite(rd->cfg_fd, value, len, offset) : pread(rd->cfg_fd, value, len, offset);
	if (n != (ssize_t)len) {
		int rc = n < 0 ? -errno : -EIO;

		NVP_ERRLOG("%s: config space %s of %u bytes at 0x%x failed: %s", rd->bdf,
			   write ? "write" : "read", len, offset, strerror(-rc));
		return rc;
	}
	return 0;
}

/*
 * The legacy interrupt: /dev/uioN of the function (sysfs .../uio/uioN). uio_pci_generic
 * masks INTx in the command register each time it fires; the waiter unmasks it before it
 * blocks (nvp_pci_device_irq_unmask(), lib/poll). One line for every queue: a wake-up
 * says "some queue of this function", the waiter polls them all.
 */
int
env_uio_irq_fd(struct real_dev *rd, uint32_t vector, uint32_t *vector_out)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	(void)vector;
	*vector_out = 0;
	if (rd->uio_fd >= 0) {
		return rd->uio_fd;
	}
	uio_path(path, sizeof(path), rd, "uio");
	d = opendir(path);
	while (d != NULL && (de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "uio", 3) == 0) {
			snprintf(path, sizeof(path), "/dev/%.32s", de->d_name);
			rd->uio_fd = open(path, O_RDWR | O_CLOEXEC);
			break;
		}
	}
	if (d != NULL) {
		closedir(d);
	}
	if (rd->uio_fd < 0) {
		NVP_ERRLOG("%s: no uio device node for the interrupt (%s): %s", rd->bdf, path,
			   strerror(errno));
		return -ENOTSUP;
	}
	return rd->uio_fd;
}

void
env_uio_dev_close(struct real_dev *rd)
{
	if (rd->uio_fd >= 0) {
		close(rd->uio_fd);
		rd->uio_fd = -1;
	}
	if (rd->cfg_fd >= 0) {
		close(rd->cfg_fd);
	}
	rd->cfg_fd = -1;
}

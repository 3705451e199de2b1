/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Real PCI functions inside env_common: the registry entry (struct real_dev) and the
 * two ways to reach a function from userspace, vfio-pci (pci_vfio.c) and uio_pci_generic
 * (pci_uio.c). pci_real.c picks one by the kernel driver bound at attach time.
 */
#ifndef NVP_ENV_PCI_REAL_H
#define NVP_ENV_PCI_REAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "env_internal.h"
#include "pci_sysfs.h"

/* NVMe BAR0: registers up to 0x1000, then the doorbells (NVMe 1.4 section 3.1). */
#define ENV_NVME_REG_DBS 0x1000u

enum real_kind {
	REAL_CLOSED,
	REAL_VFIO,
	REAL_UIO
};

struct real_dev {
	struct nvp_pci_device pub; /* what the driver sees; pub.dev_ctx points back here */
	char bdf[NVP_PCI_ADDR_STRLEN];
	int iommu_group;
	bool vanished; /* was in sysfs, is not any more */

	enum real_kind kind;
	int dev_fd;          /* vfio device fd */
	int cfg_fd;          /* uio: the sysfs config file */
	uint64_t cfg_offset; /* vfio: offset of the config region in dev_fd */
	void *bar;
	uint64_t bar_len;
	uint64_t bar_phys;
	int *irq_fds;           /* vfio: one eventfd per MSI-X vector enabled */
	uint32_t irq_n;         /* vfio: vectors enabled (0 = none yet) */
	int uio_fd;             /* uio: /dev/uioN, the INTx line every queue shares; -1 = closed */
	int req_fd;             /* vfio: eventfd of the device request interrupt; -1 = none */
	bool release_requested; /* vfio: the kernel asked for the function back */
	TAILQ_ENTRY(real_dev) link;
};

/* Look up a real NVMe function by address (rescanning sysfs once if unknown). */
struct nvp_pci_device *env_pci_device_find_real(const struct nvp_pci_addr *addr);

/*
 * Minimum BAR0 length for an NVMe controller whose CAP.DSTRD is @dstrd: the registers plus
 * the admin queue's two doorbells. A smaller BAR gets a precise error.
 */
uint64_t env_nvme_bar_min(uint32_t dstrd);

/* Check @len against the CAP read from the mapped @bar. \return 0 or -EIO (logged). */
int env_nvme_bar_check(const struct real_dev *rd, const volatile void *bar, uint64_t len);

/* vfio-pci (pci_vfio.c). \return 0 or -errno, with a message logged. */
int env_vfio_dev_open(struct real_dev *rd);
int env_vfio_map_bar0(struct real_dev *rd);
int env_vfio_cfg_rw(struct real_dev *rd, void *value, uint32_t len, uint32_t offset, bool write);
void env_vfio_dev_close(struct real_dev *rd);
/* MSI-X vectors to eventfds (VFIO_DEVICE_SET_IRQS), all at the first call. */
int env_vfio_irq_fd(struct real_dev *rd, uint32_t vector, uint32_t *vector_out);
void env_vfio_irq_close(struct real_dev *rd);
/* vfio: whether the kernel has asked for the function back (device request interrupt). */
bool env_vfio_release_requested(struct real_dev *rd);

/* uio_pci_generic (pci_uio.c). \return 0 or -errno, with a message logged. */
int env_uio_dev_open(struct real_dev *rd);
int env_uio_map_bar0(struct real_dev *rd);
int env_uio_cfg_rw(struct real_dev *rd, void *value, uint32_t len, uint32_t offset, bool write);
void env_uio_dev_close(struct real_dev *rd);
/* The INTx line through /dev/uioN (shared: *vector_out = 0). */
int env_uio_irq_fd(struct real_dev *rd, uint32_t vector, uint32_t *vector_out);

#endif /* NVP_ENV_PCI_REAL_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Real PCI functions. None are enumerated yet: the PCIe issue fills this in with
 * libpciaccess (scan for class 0x010802, report the bound kernel driver) and the
 * vfio-pci / uio_pci_generic ops for BAR mapping and configuration space.
 */
#include "env_internal.h"

int
env_pci_enumerate_real(uint32_t class_id, int (*cb)(void *ctx, struct nvp_pci_device *dev),
		       void *ctx)
{
	(void)class_id;
	(void)cb;
	(void)ctx;
	return 0;
}

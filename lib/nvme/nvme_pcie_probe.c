/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PCI functions behind the PCIe transport: which function a transport ID names, the
 * unclaimed NVMe functions a probe offers (the transport's scan), and why env left one
 * out. Only env is called from here; nvme_pcie_ctrlr.c builds the controller on the function.
 *
 * A transport ID names either a PCI function ("trtype:PCIe traddr:0000:01:00.0"), or a
 * virtual device to be made on demand by an env provider registered under the trtype
 * ("trtype:emu name:emu0 nn:2"): the provider creates it and registers its virtual PCI
 * function, which is then driven exactly as a real one. The device is destroyed again
 * when the controller is (nvme_pcie_device_put()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvme_pcie_internal.h"

/* Why env did not offer the function at @addr, for the message of a failed connect. */
struct skipped_why {
	const struct nvp_pci_addr *addr;
	char reason[256];
};

static void
skipped_match(void *ctx, const struct nvp_pci_addr *addr, const char *reason)
{
	struct skipped_why *w = ctx;

	if (addr->domain == w->addr->domain && addr->bus == w->addr->bus &&
	    addr->dev == w->addr->dev && addr->func == w->addr->func) {
		nvp_strlcpy(w->reason, reason, sizeof(w->reason));
	}
}

/* Probe of every function: name each NVMe function env did not offer, and why. */
static void
skipped_notice(void *ctx, const struct nvp_pci_addr *addr, const char *reason)
{
	char a[NVP_PCI_ADDR_STRLEN];

	(void)ctx;
	nvp_pci_addr_fmt(a, sizeof(a), addr);
	NVP_NOTICELOG("probe: %s not taken: %s", a, reason);
}

/* A PCIe transport ID's traddr, if it has one, is a PCI address. */
int
nvme_pcie_trid_check(const struct nvp_nvme_transport_id *trid)
{
	struct nvp_pci_addr addr;

	if (trid->trtype == NVP_NVME_TRANSPORT_PCIE && trid->traddr[0] != '\0' &&
	    nvp_pci_addr_parse(&addr, trid->traddr) != 0) {
		NVP_ERRLOG("transport ID: traddr '%s' is not a PCI address (dddd:bb:dd.f)",
			   trid->traddr);
		return -EINVAL;
	}
	return 0;
}

/* The function at traddr. \return 0, -EINVAL (no address), -ENODEV (none there). */
static int
device_find(const struct nvp_nvme_transport_id *trid, struct nvp_pci_device **out)
{
	struct nvp_pci_addr addr;
	struct nvp_pci_device *dev;

	if (trid->traddr[0] == '\0' || nvp_pci_addr_parse(&addr, trid->traddr) != 0) {
		NVP_ERRLOG("connect: a PCIe transport ID needs traddr:<PCI address>");
		return -EINVAL;
	}
	dev = nvp_pci_device_find(&addr);
	if (dev == NULL) {
		struct skipped_why why = { &addr, "" };

		(void)nvp_pci_skipped(NVP_PCI_CLASS_NVME, skipped_match, &why);
		if (why.reason[0] != '\0') {
			NVP_ERRLOG("connect: %s cannot be used: %s", trid->traddr, why.reason);
		} else {
			NVP_ERRLOG("connect: no PCI function at %s (bound to vfio-pci or "
				   "uio_pci_generic, or a virtual function?)",
				   trid->traddr);
		}
		return -ENODEV;
	}
	*out = dev;
	return 0;
}

/* Ask the provider named by trtype for a device; \return 0 and its function, or -errno. */
static int
device_make(const struct nvp_nvme_transport_id *trid, struct nvp_pci_device **out,
	    struct nvme_pcie_vdev *vdev)
{
	struct nvp_env_vdev_provider *provider = nvp_env_vdev_provider_find(trid->trstring);
	struct nvp_pci_addr addr;
	char err[256] = "";
	int rc;

	if (provider == NULL) {
		NVP_ERRLOG("connect: no virtual device provider '%s' (is the library that "
			   "provides it linked in?)",
			   trid->trstring);
		return -EINVAL;
	}
	rc = provider->create(trid->name, trid->args, &addr, err, sizeof(err));
	if (rc != 0) {
		NVP_ERRLOG("connect: %s device '%s' not created: %s", provider->name, trid->name,
			   err[0] ? err : strerror(-rc));
		return rc == -EEXIST ? -EBUSY : rc;
	}
	vdev->provider = provider;
	vdev->addr = addr;
	*out = nvp_pci_device_find(&addr);
	if (*out == NULL) {
		nvme_pcie_device_put(vdev);
		return -ENODEV;
	}
	return 0;
}

int
nvme_pcie_device_get(const struct nvp_nvme_transport_id *trid, struct nvp_pci_device **out,
		     struct nvme_pcie_vdev *vdev)
{
	char addr[NVP_PCI_ADDR_STRLEN];
	struct nvp_pci_device *dev = NULL;
	int rc;

	memset(vdev, 0, sizeof(*vdev));
	rc = trid->trtype == NVP_NVME_TRANSPORT_VDEV ? device_make(trid, &dev, vdev) :
						       device_find(trid, &dev);
	if (rc != 0) {
		return rc;
	}
	if (dev->id.class_id != NVP_PCI_CLASS_NVME) {
		nvp_pci_addr_fmt(addr, sizeof(addr), &dev->addr);
		NVP_ERRLOG("PCI function %s is not an NVMe controller (class 0x%06x)", addr,
			   dev->id.class_id);
		nvme_pcie_device_put(vdev);
		return -ENODEV;
	}
	*out = dev;
	return 0;
}

void
nvme_pcie_device_put(struct nvme_pcie_vdev *vdev)
{
	int rc;

	if (vdev->provider == NULL) {
		return;
	}
	rc = vdev->provider->destroy(&vdev->addr);
	if (rc != 0) {
		NVP_WARNLOG("detach: %s device not destroyed (%s)", vdev->provider->name,
			    strerror(-rc));
	}
	vdev->provider = NULL;
}

/* ---------------------------------------------------------------------------------------
 * The transport's scan: every unclaimed NVMe function env offers
 * ------------------------------------------------------------------------------------- */

struct probe_list {
	struct nvp_pci_addr *addrs;
	size_t n;
	size_t cap;
};

static int
probe_collect(void *ctx, struct nvp_pci_device *dev)
{
	struct probe_list *list = ctx;

	if (dev->claimed) {
		return 0;
	}
	if (list->n == list->cap) {
		size_t cap = list->cap ? list->cap * 2 : 16;
		struct nvp_pci_addr *a = realloc(list->addrs, cap * sizeof(*a));

		if (a == NULL) {
			return -ENOMEM;
		}
		list->addrs = a;
		list->cap = cap;
	}
	list->addrs[list->n++] = dev->addr;
	return 0;
}

/*
 * The functions are listed first and offered after: @found connects to them, which
 * changes env's registry (claims) while it would be walked.
 */
int
nvme_pcie_scan(void *ctx, nvme_transport_found_cb found)
{
	struct probe_list list = { NULL, 0, 0 };
	int rc, first_err = 0;
	size_t i;

	rc = nvp_pci_enumerate(NVP_PCI_CLASS_NVME, probe_collect, &list);
	(void)nvp_pci_skipped(NVP_PCI_CLASS_NVME, skipped_notice, NULL);
	if (rc != 0 || list.n == 0) {
		free(list.addrs);
		return rc != 0 ? rc : -ENODEV;
	}
	for (i = 0; i < list.n; i++) {
		struct nvp_nvme_transport_id trid;

		memset(&trid, 0, sizeof(trid));
		trid.trtype = NVP_NVME_TRANSPORT_PCIE;
		nvp_strlcpy(trid.trstring, "PCIe", sizeof(trid.trstring));
		nvp_pci_addr_fmt(trid.traddr, sizeof(trid.traddr), &list.addrs[i]);
		rc = found(ctx, &trid);
		if (rc < 0 && first_err == 0) {
			first_err = rc;
		}
	}
	free(list.addrs);
	return first_err;
}

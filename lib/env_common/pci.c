/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PCI function registry both environments share: virtual functions registered by
 * device models, enumeration (virtual first, then real ones through the backend hook),
 * lookup, claim/release, and configuration space helpers.
 *
 * Locking: one recursive mutex, statically initialised so device models can register
 * from constructors before nvp_env_init(). Enumeration callbacks run with it held, so a
 * callback may call find/claim/release/register (the mutex is recursive) and may
 * unregister the function it was handed, but must not wait for another thread that
 * needs the registry.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

#define NVP_LOG_COMPONENT "env"
#include "env_internal.h"
#include "nvpoll/log.h"
#include "nvpoll/util.h"

/* Virtual functions live in PCI domains from here up, which no real bus uses (Linux
 * domains are 16 bit; VMD's synthetic domains start at 0x10000 too but are not ours). */
#define VIRTUAL_DOMAIN_BASE 0x10000u

static pthread_mutex_t g_pci_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static TAILQ_HEAD(, nvp_pci_device) g_pci_devices = TAILQ_HEAD_INITIALIZER(g_pci_devices);
static uint32_t g_next_virtual;

/* Caller holds g_pci_lock. */
static struct nvp_pci_device *
find_locked(const struct nvp_pci_addr *addr)
{
	struct nvp_pci_device *dev;

	TAILQ_FOREACH (dev, &g_pci_devices, link) {
		if (nvp_pci_addr_compare(&dev->addr, addr) == 0) {
			return dev;
		}
	}
	return NULL;
}

/* Caller holds g_pci_lock. */
static bool
is_registered_locked(const struct nvp_pci_device *dev)
{
	const struct nvp_pci_device *d;

	TAILQ_FOREACH (d, &g_pci_devices, link) {
		if (d == dev) {
			return true;
		}
	}
	return false;
}

int
nvp_pci_device_register(struct nvp_pci_device *dev)
{
	char name[NVP_PCI_ADDR_STRLEN];
	int rc = 0;

	if (dev == NULL || dev->ops == NULL || dev->ops->map_bar == NULL ||
	    dev->ops->cfg_read == NULL || dev->ops->cfg_write == NULL) {
		NVP_ERRLOG("pci: cannot register a virtual function without map_bar, cfg_read "
			   "and cfg_write ops");
		return -EINVAL;
	}
	nvp_pci_addr_fmt(name, sizeof(name), &dev->addr);

	pthread_mutex_lock(&g_pci_lock);
	if (is_registered_locked(dev) || find_locked(&dev->addr) != NULL) {
		rc = -EEXIST;
	} else {
		dev->is_virtual = true;
		dev->claimed = false;
		if (dev->driver[0] == '\0') {
			nvp_strlcpy(dev->driver, "virtual", sizeof(dev->driver));
		}
		TAILQ_INSERT_TAIL(&g_pci_devices, dev, link);
	}
	pthread_mutex_unlock(&g_pci_lock);

	if (rc == -EEXIST) {
		NVP_ERRLOG("pci: %s is already registered; take addresses for virtual functions "
			   "from nvp_pci_virtual_addr_alloc()",
			   name);
	} else {
		NVP_DEBUGLOG("pci: registered virtual function %s (class %06x)", name,
			     dev->id.class_id);
	}
	return rc;
}

int
nvp_pci_device_unregister(struct nvp_pci_device *dev)
{
	int rc = 0;

	if (dev == NULL) {
		return -ENOENT;
	}
	pthread_mutex_lock(&g_pci_lock);
	if (!is_registered_locked(dev)) {
		rc = -ENOENT;
	} else if (dev->claimed) {
		rc = -EBUSY;
	} else {
		TAILQ_REMOVE(&g_pci_devices, dev, link);
	}
	pthread_mutex_unlock(&g_pci_lock);
	return rc;
}

int
nvp_pci_virtual_addr_alloc(struct nvp_pci_addr *addr)
{
	int rc = -ENOSPC;

	if (addr == NULL) {
		return -EINVAL;
	}
	pthread_mutex_lock(&g_pci_lock);
	while (g_next_virtual <= UINT32_MAX - VIRTUAL_DOMAIN_BASE) {
		struct nvp_pci_addr a = { .domain = VIRTUAL_DOMAIN_BASE + g_next_virtual };

		g_next_virtual++;
		if (find_locked(&a) == NULL) {
			*addr = a;
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&g_pci_lock);
	return rc;
}

int
nvp_pci_skipped(uint32_t class_id,
		void (*cb)(void *ctx, const struct nvp_pci_addr *addr, const char *reason),
		void *ctx)
{
	if (cb == NULL) {
		return -EINVAL;
	}
	return env_pci_skipped_real(class_id, cb, ctx);
}

int
nvp_pci_enumerate(uint32_t class_id, int (*cb)(void *ctx, struct nvp_pci_device *dev), void *ctx)
{
	struct nvp_pci_device *dev, *next;
	int rc = 0;

	if (cb == NULL) {
		return -EINVAL;
	}
	pthread_mutex_lock(&g_pci_lock);
	for (dev = TAILQ_FIRST(&g_pci_devices); dev != NULL; dev = next) {
		/* Read next first: the callback may unregister the function it is given. */
		next = TAILQ_NEXT(dev, link);
		if (class_id != 0 && dev->id.class_id != class_id) {
			continue;
		}
		rc = cb(ctx, dev);
		if (rc != 0) {
			break;
		}
	}
	pthread_mutex_unlock(&g_pci_lock);
	if (rc != 0) {
		return rc;
	}
	return env_pci_enumerate_real(class_id, cb, ctx);
}

struct nvp_pci_device *
nvp_pci_device_find(const struct nvp_pci_addr *addr)
{
	struct nvp_pci_device *dev;

	if (addr == NULL) {
		return NULL;
	}
	pthread_mutex_lock(&g_pci_lock);
	dev = find_locked(addr);
	pthread_mutex_unlock(&g_pci_lock);
	if (dev == NULL && addr->domain < VIRTUAL_DOMAIN_BASE) {
		dev = env_pci_device_find_real(addr);
	}
	return dev;
}

int
nvp_pci_device_claim(struct nvp_pci_device *dev)
{
	int rc = 0;

	if (dev == NULL) {
		return -EINVAL;
	}
	pthread_mutex_lock(&g_pci_lock);
	if (dev->claimed) {
		rc = -EBUSY;
	} else {
		dev->claimed = true;
	}
	pthread_mutex_unlock(&g_pci_lock);
	return rc;
}

void
nvp_pci_device_release(struct nvp_pci_device *dev)
{
	if (dev == NULL) {
		return;
	}
	pthread_mutex_lock(&g_pci_lock);
	dev->claimed = false;
	pthread_mutex_unlock(&g_pci_lock);
}

int
nvp_pci_device_irq_fd(struct nvp_pci_device *dev, uint32_t vector, uint32_t *vector_out)
{
	if (dev == NULL || dev->ops == NULL || vector_out == NULL) {
		return -EINVAL;
	}
	return dev->ops->irq_fd != NULL ? dev->ops->irq_fd(dev, vector, vector_out) : -ENOTSUP;
}

int
nvp_pci_device_irq_unmask(struct nvp_pci_device *dev, uint32_t vector)
{
	if (dev == NULL || dev->ops == NULL) {
		return -EINVAL;
	}
	return dev->ops->irq_unmask != NULL ? dev->ops->irq_unmask(dev, vector) : 0;
}

bool
nvp_pci_device_release_requested(struct nvp_pci_device *dev)
{
	return dev != NULL && dev->ops != NULL && dev->ops->release_requested != NULL &&
	       dev->ops->release_requested(dev);
}

/* ---- configuration space (little endian, PCI Local Bus spec 6.1) ---- */

static int
cfg_access(struct nvp_pci_device *dev, void *value, uint32_t len, uint32_t offset, bool write)
{
	if (dev == NULL || dev->ops == NULL || value == NULL) {
		return -EINVAL;
	}
	if ((offset & (len - 1)) != 0) {
		return -EINVAL; /* config accesses are naturally aligned */
	}
	if (write) {
		return dev->ops->cfg_write ? dev->ops->cfg_write(dev, value, len, offset) :
					     -ENOTSUP;
	}
	return dev->ops->cfg_read ? dev->ops->cfg_read(dev, value, len, offset) : -ENOTSUP;
}

int
nvp_pci_cfg_read16(struct nvp_pci_device *dev, uint16_t *value, uint32_t offset)
{
	uint16_t raw;
	int rc;

	if (value == NULL) {
		return -EINVAL;
	}
	rc = cfg_access(dev, &raw, sizeof(raw), offset, false);
	if (rc == 0) {
		*value = le16toh(raw);
	}
	return rc;
}

int
nvp_pci_cfg_write16(struct nvp_pci_device *dev, uint16_t value, uint32_t offset)
{
	uint16_t raw = htole16(value);

	return cfg_access(dev, &raw, sizeof(raw), offset, true);
}

int
nvp_pci_cfg_read32(struct nvp_pci_device *dev, uint32_t *value, uint32_t offset)
{
	uint32_t raw;
	int rc;

	if (value == NULL) {
		return -EINVAL;
	}
	rc = cfg_access(dev, &raw, sizeof(raw), offset, false);
	if (rc == 0) {
		*value = le32toh(raw);
	}
	return rc;
}

int
nvp_pci_cfg_write32(struct nvp_pci_device *dev, uint32_t value, uint32_t offset)
{
	uint32_t raw = htole32(value);

	return cfg_access(dev, &raw, sizeof(raw), offset, true);
}

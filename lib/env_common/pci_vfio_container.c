/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A VFIO container of our own for backends whose DMA memory DPDK does not manage
 * (env_posix): /dev/vfio/vfio with the type1 IOMMU, the IOMMU groups of attached functions,
 * and every DMA buffer the backend registered mapped at its IOVA (VFIO_IOMMU_MAP_DMA) -
 * the buffers present when the first group joins, and each one allocated later; unmapped
 * on free. Kept apart from pci_vfio.c so that the backend's memory code links without the
 * PCI code.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/vfio.h>

#define NVP_LOG_COMPONENT "env"
#include "env_internal.h"
#include "nvpoll/log.h"

struct dma_region {
	uint64_t vaddr;
	uint64_t iova;
	uint64_t len;
};

struct group_ref {
	int group;
	int fd;
	int devices;
};

#define MAX_GROUPS 32

static pthread_mutex_t g_vfio_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static int g_container = -1;
static struct group_ref g_groups[MAX_GROUPS];
static int g_ngroups;
static struct dma_region *g_dma;
static size_t g_ndma, g_dma_cap;

static int
dma_map(const struct dma_region *r)
{
	struct vfio_iommu_type1_dma_map map = {
		.argsz = sizeof(map),
		.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
		.vaddr = r->vaddr,
		.iova = r->iova,
		.size = r->len,
	};

	if (ioctl(g_container, VFIO_IOMMU_MAP_DMA, &map) != 0) {
		int rc = -errno;

		NVP_ERRLOG("VFIO_IOMMU_MAP_DMA of %" PRIu64 " bytes at IOVA 0x%" PRIx64 " failed: "
			   "%s%s",
			   r->len, r->iova, strerror(-rc),
			   rc == -ENOMEM ? " - raise the locked-memory limit (ulimit -l) or run "
					   "as root" :
					   " - does the IOMMU cover this address width?");
		return rc;
	}
	return 0;
}

static void
dma_unmap(const struct dma_region *r)
{
	struct vfio_iommu_type1_dma_unmap unmap = {
		.argsz = sizeof(unmap),
		.iova = r->iova,
		.size = r->len,
	};

	if (ioctl(g_container, VFIO_IOMMU_UNMAP_DMA, &unmap) != 0) {
		NVP_WARNLOG("VFIO_IOMMU_UNMAP_DMA at IOVA 0x%" PRIx64 " failed: %s", r->iova,
			    strerror(errno));
	}
}

int
env_dma_register(void *vaddr, uint64_t iova, uint64_t len)
{
	struct dma_region r = { (uint64_t)(uintptr_t)vaddr, iova, len };
	int rc = 0;

	pthread_mutex_lock(&g_vfio_lock);
	if (g_ndma == g_dma_cap) {
		size_t cap = g_dma_cap ? g_dma_cap * 2 : 64;
		struct dma_region *v = realloc(g_dma, cap * sizeof(*v));

		if (v == NULL) {
			pthread_mutex_unlock(&g_vfio_lock);
			return -ENOMEM;
		}
		g_dma = v;
		g_dma_cap = cap;
	}
	if (g_container >= 0 && g_ngroups > 0) {
		rc = dma_map(&r);
	}
	if (rc == 0) {
		g_dma[g_ndma++] = r;
	}
	pthread_mutex_unlock(&g_vfio_lock);
	return rc;
}

void
env_dma_unregister(void *vaddr)
{
	size_t i;

	pthread_mutex_lock(&g_vfio_lock);
	for (i = 0; i < g_ndma; i++) {
		if (g_dma[i].vaddr == (uint64_t)(uintptr_t)vaddr) {
			if (g_container >= 0 && g_ngroups > 0) {
				dma_unmap(&g_dma[i]);
			}
			g_dma[i] = g_dma[--g_ndma];
			break;
		}
	}
	pthread_mutex_unlock(&g_vfio_lock);
}

static int
container_open(void)
{
	int fd = -1, rc;

	fd = open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		NVP_ERRLOG("cannot open /dev/vfio/vfio: %s - load the vfio-pci module "
			   "(modprobe vfio-pci) and run as root",
			   strerror(-rc));
		return rc;
	}
	if (ioctl(fd, VFIO_GET_API_VERSION) != VFIO_API_VERSION ||
	    ioctl(fd, VFIO_CHECK_EXTENSION, VFIO_TYPE1_IOMMU) <= 0) {
		NVP_ERRLOG("/dev/vfio/vfio: unknown VFIO API version or no type1 IOMMU support");
		close(fd);
		return -ENOTSUP;
	}
	g_container = fd;
	return 0;
}

/* Open group @group and put it in the container; the first group sets the IOMMU type. */
static int
group_attach(int group, int *group_fd)
{
	struct vfio_group_status status = { .argsz = sizeof(status) };
	char path[64];
	int fd = -1, rc;

	snprintf(path, sizeof(path), "/dev/vfio/%d", group);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		NVP_ERRLOG("cannot open %s: %s%s", path, strerror(-rc),
			   rc == -EBUSY ? " - another process holds this IOMMU group" :
					  " - run as root, or give this user the group file");
		return rc;
	}
	if (ioctl(fd, VFIO_GROUP_GET_STATUS, &status) != 0 ||
	    (status.flags & VFIO_GROUP_FLAGS_VIABLE) == 0) {
		NVP_ERRLOG("IOMMU group %d is not viable: bind every function in "
			   "/sys/kernel/iommu_groups/%d/devices to vfio-pci (scripts/setup.sh)",
			   group, group);
		close(fd);
		return -EPERM;
	}
	if (ioctl(fd, VFIO_GROUP_SET_CONTAINER, &g_container) != 0 ||
	    (g_ngroups == 0 && ioctl(g_container, VFIO_SET_IOMMU, VFIO_TYPE1_IOMMU) != 0)) {
		rc = -errno;
		NVP_ERRLOG("IOMMU group %d: cannot join the VFIO container with the type1 "
			   "IOMMU: %s",
			   group, strerror(-rc));
		close(fd);
		return rc;
	}
	*group_fd = fd;
	return 0;
}

static struct group_ref *
group_get(int group)
{
	int i;

	for (i = 0; i < g_ngroups; i++) {
		if (g_groups[i].group == group) {
			return &g_groups[i];
		}
	}
	return NULL;
}

/* A new container maps every DMA buffer registered so far. */
static int
map_all(void)
{
	size_t i;
	int rc;

	for (i = 0; i < g_ndma; i++) {
		rc = dma_map(&g_dma[i]);
		if (rc != 0) {
			return rc;
		}
	}
	return 0;
}

static int
generic_group_ref(int group, struct group_ref **out)
{
	struct group_ref *g = group_get(group);
	int fd = -1, rc;

	if (g != NULL) {
		*out = g;
		return 0;
	}
	if (g_ngroups == MAX_GROUPS) {
		return -ENOSPC;
	}
	if (g_container < 0) {
		rc = container_open();
		if (rc != 0) {
			return rc;
		}
	}
	rc = group_attach(group, &fd);
	if (rc != 0) {
		return rc;
	}
	g = &g_groups[g_ngroups++];
	*g = (struct group_ref){ group, fd, 0 };
	if (g_ngroups == 1) {
		rc = map_all();
		if (rc != 0) {
			close(fd);
			g_ngroups--;
			return rc;
		}
	}
	*out = g;
	return 0;
}

int
env_vfio_generic_open(const char *bdf, int group, int *device_fd)
{
	struct group_ref *g;
	int fd = -1, rc;

	pthread_mutex_lock(&g_vfio_lock);
	rc = generic_group_ref(group, &g);
	if (rc == 0) {
		fd = ioctl(g->fd, VFIO_GROUP_GET_DEVICE_FD, bdf);
		if (fd < 0) {
			rc = -errno;
			NVP_ERRLOG("%s: VFIO_GROUP_GET_DEVICE_FD failed: %s", bdf, strerror(-rc));
		} else {
			g->devices++;
			*device_fd = fd;
		}
	}
	pthread_mutex_unlock(&g_vfio_lock);
	return rc;
}

void
env_vfio_generic_close(const char *bdf, int group, int device_fd)
{
	struct group_ref *g;

	(void)bdf;
	pthread_mutex_lock(&g_vfio_lock);
	close(device_fd);
	g = group_get(group);
	if (g != NULL && --g->devices <= 0) {
		/* The last group out unmaps everything: closing the group leaves the container. */
		if (g_ngroups == 1) {
			size_t i;

			for (i = 0; i < g_ndma; i++) {
				dma_unmap(&g_dma[i]);
			}
		}
		close(g->fd);
		*g = g_groups[--g_ngroups];
	}
	pthread_mutex_unlock(&g_vfio_lock);
}

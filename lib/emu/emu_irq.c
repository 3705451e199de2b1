/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Interrupts of the software controller (NVMe 1.4 section 7.5): a completion queue
 * created with IEN = 1 signals its vector (CDW11 IV) when an entry is posted. The
 * virtual function delivers a vector as an eventfd, which env hands to the driver
 * (nvp_pci_device_irq_fd()), as vfio-pci hands out MSI-X vectors.
 *
 * Interrupt coalescing (Set Features 0x08, section 5.21.1.8): a vector fires once THR + 1
 * entries are waiting or TIME x 100 us after the first of them, unless Interrupt Vector
 * Configuration (0x09) set CD (coalescing disable) for it. Vector 0 (the admin queue) is
 * never coalesced, as the spec says.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "emu_internal.h"

#define FEAT_IVC_CD (1u << 16)

int
emu_irq_init(struct emu_ctrlr *c)
{
	uint32_t n = c->opts.max_queues + 1;

	c->irq = calloc(n, sizeof(*c->irq));
	if (c->irq == NULL) {
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		c->irq[i].fd = -1;
	}
	c->nirq = n;
	return 0;
}

void
emu_irq_fini(struct emu_ctrlr *c)
{
	for (uint32_t i = 0; c->irq != NULL && i < c->nirq; i++) {
		if (c->irq[i].fd >= 0) {
			close(c->irq[i].fd);
		}
	}
	free(c->irq);
	c->irq = NULL;
}

/* The pci op: make (once) and give the eventfd of @vector. Driver thread, cfg_lock. */
int
emu_irq_fd(struct emu_ctrlr *c, uint32_t vector, uint32_t *vector_out)
{
	int fd;

	if (vector >= c->nirq) {
		return -ERANGE;
	}
	pthread_mutex_lock(&c->cfg_lock);
	fd = __atomic_load_n(&c->irq[vector].fd, __ATOMIC_ACQUIRE);
	if (fd < 0) {
		fd = eventfd(0, EFD_CLOEXEC);
		if (fd < 0) {
			fd = -errno;
		} else {
			__atomic_store_n(&c->irq[vector].fd, fd, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&c->cfg_lock);
	*vector_out = vector;
	return fd;
}

static void
irq_fire(struct emu_ctrlr *c, struct emu_irq *v)
{
	uint64_t one = 1;
	int fd = __atomic_load_n(&v->fd, __ATOMIC_ACQUIRE);

	v->pending = 0;
	if (fd >= 0 && write(fd, &one, sizeof(one)) == sizeof(one)) {
		EMU_STAT_ADD(c, interrupts, 1);
	}
}

static bool
coalesced(const struct emu_ctrlr *c, uint16_t iv)
{
	return iv != 0 && (c->feat.int_coalescing & 0xffffu) != 0 &&
	       !((c->feat.int_vector_cfg & FEAT_IVC_CD) &&
		 (c->feat.int_vector_cfg & 0xffffu) == iv);
}

/* An entry was posted on a CQ with interrupts enabled. */
void
emu_irq_raise(struct emu_ctrlr *c, uint16_t iv, uint64_t now)
{
	struct emu_irq *v = &c->irq[iv];
	uint32_t thr = (c->feat.int_coalescing & 0xffu) + 1;

	if (!coalesced(c, iv)) {
		irq_fire(c, v);
		return;
	}
	if (v->pending++ == 0) {
		v->first = now;
		c->irq_waiting++;
	}
	if (v->pending >= thr) {
		irq_fire(c, v);
		c->irq_waiting--;
	}
}

/* Fire coalesced vectors whose aggregation time has run out. */
void
emu_irq_flush(struct emu_ctrlr *c, uint64_t now)
{
	uint64_t t = emu_us_to_ticks(c, ((c->feat.int_coalescing >> 8) & 0xffu) * 100u);

	for (uint32_t i = 1; i < c->nirq && c->irq_waiting > 0; i++) {
		struct emu_irq *v = &c->irq[i];

		if (v->pending > 0 && now - v->first >= t) {
			irq_fire(c, v);
			c->irq_waiting--;
		}
	}
}

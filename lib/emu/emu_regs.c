/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The register page (BAR0), the CC/CSTS state machine and the PCI configuration space
 * of the virtual function.
 *
 * BAR0 is ordinary anonymous memory shared with the driver: the driver writes CC, AQA,
 * ASQ, ACQ and doorbells with MMIO helpers; the controller thread reads them with
 * atomic loads and answers through CSTS (NVMe 1.4, section 3.1 and 7.6).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emu_internal.h"

#define EMU_BAR0_BASE 0x4000000000ull /* fake bus address of the first BAR */
#define REG_PAGE 4096u

static inline uint32_t
reg_load32(const volatile void *p)
{
	return __atomic_load_n((const volatile uint32_t *)p, __ATOMIC_ACQUIRE);
}

static inline void
reg_store32(volatile void *p, uint32_t v)
{
	__atomic_store_n((volatile uint32_t *)p, v, __ATOMIC_RELEASE);
}

static uint64_t
reg_load64(const volatile void *p)
{
	const volatile uint32_t *d = p;

	return (uint64_t)reg_load32(&d[0]) | ((uint64_t)reg_load32(&d[1]) << 32);
}

static uint64_t
cap_value(const struct emu_ctrlr *c)
{
	union nvme_cap_register cap = { .raw = 0 };

	cap.bits.mqes = c->opts.mqes;
	cap.bits.cqr = 1; /* I/O queues must be physically contiguous */
	cap.bits.ams = 0; /* round robin only */
	cap.bits.to = c->opts.to;
	cap.bits.dstrd = c->opts.dstrd;
	cap.bits.css = NVME_CAP_CSS_NVM;
	cap.bits.mpsmin = 0;
	cap.bits.mpsmax = c->opts.mpsmax;
	return cap.raw;
}

volatile uint32_t *
emu_db_ptr(const struct emu_ctrlr *c, uint32_t qid, int is_cq)
{
	uintptr_t off = NVME_REG_DBS + (2u * qid + (is_cq ? 1u : 0u)) * (uintptr_t)c->db_stride;

	return (volatile uint32_t *)(void *)((uint8_t *)c->regs + off);
}

int
emu_regs_init(struct emu_ctrlr *c)
{
	size_t size = NVME_REG_DBS + 2u * ((size_t)c->opts.max_queues + 1u) * c->db_stride;
	void *p;

	size = NVP_ALIGN_UP(size, (size_t)REG_PAGE);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		NVP_ERRLOG("emu %s: cannot map a %zu byte register page: %s", c->opts.name, size,
			   strerror(errno));
		return -ENOMEM;
	}
	c->regs = p;
	c->regs_size = size;
	c->regs->cap.raw = cap_value(c);
	c->regs->vs.raw = NVME_VERSION(1, 4, 0);
	c->csts.raw = 0;
	emu_csts_write(c);
	return 0;
}

void
emu_regs_fini(struct emu_ctrlr *c)
{
	if (c->regs != NULL) {
		munmap(c->regs, c->regs_size);
		c->regs = NULL;
	}
}

/* Publish the CSTS shadow; the driver polls it. */
void
emu_csts_write(struct emu_ctrlr *c)
{
	if (!c->fault_all_ones) {
		reg_store32(&c->regs->csts.raw, c->csts.raw);
	}
}

/* CAP, VS and CSTS are read-only to the host: undo stray writes (slow path). */
void
emu_regs_check_ro(struct emu_ctrlr *c)
{
	uint64_t cap = cap_value(c);

	if (c->fault_all_ones) {
		return;
	}
	if (reg_load64(&c->regs->cap.raw) != cap) {
		nvp_mmio_write8(&c->regs->cap.raw, cap);
	}
	if (reg_load32(&c->regs->vs.raw) != NVME_VERSION(1, 4, 0)) {
		reg_store32(&c->regs->vs.raw, NVME_VERSION(1, 4, 0));
	}
	if (reg_load32(&c->regs->csts.raw) != c->csts.raw) {
		emu_csts_write(c);
	}
}

static int
fail_enable(struct emu_ctrlr *c, const char *what, uint64_t value)
{
	NVP_WARNLOG("emu %s: CC.EN=1 rejected: %s (0x%llx); controller fatal status set, "
		    "reset with CC.EN=0 and fix the configuration",
		    c->opts.name, what, (unsigned long long)value);
	c->state = EMU_STATE_FAILED;
	c->csts.bits.cfs = 1;
	c->csts.bits.rdy = 0;
	emu_csts_write(c);
	return -EINVAL;
}

/* Validate CC and the admin queue registers (section 7.6.1), set up the admin queues. */
static int
check_cc(struct emu_ctrlr *c, union nvme_cc_register cc)
{
	if (cc.bits.css != 0) {
		return fail_enable(c, "CC.CSS is not the NVM command set", cc.bits.css);
	}
	if (cc.bits.mps > c->opts.mpsmax) {
		return fail_enable(c, "CC.MPS above CAP.MPSMAX", cc.bits.mps);
	}
	if (cc.bits.ams != 0) {
		return fail_enable(c, "CC.AMS: only round robin is supported", cc.bits.ams);
	}
	if (cc.bits.iosqes != 6 || cc.bits.iocqes != 4) {
		return fail_enable(c, "CC.IOSQES/IOCQES must be 6/4", cc.raw);
	}
	return 0;
}

static int
setup_admin_queue(struct emu_ctrlr *c, uint16_t entries, uint64_t base, int is_cq)
{
	uint64_t bytes = (uint64_t)entries *
			 (is_cq ? sizeof(struct nvme_cpl) : sizeof(struct nvme_cmd));
	void *va;

	if (base == 0 || (base & (c->page_size - 1)) != 0) {
		return fail_enable(c, is_cq ? "ACQ not page aligned" : "ASQ not page aligned",
				   base);
	}
	va = nvp_env_iova_to_vaddr(base, bytes);
	if (va == NULL) {
		EMU_STAT_ADD(c, dma_rejects, 1);
		return fail_enable(c, is_cq ? "ACQ is not DMA memory" : "ASQ is not DMA memory",
				   base);
	}
	if (is_cq) {
		struct emu_cq *cq = &c->cqs[0];

		cq->base = va;
		cq->iova = base;
		cq->size = entries;
		cq->head = cq->tail = cq->db_last = 0;
		cq->phase = 1;
		cq->nsq = 1;
		cq->dup_pending = false;
		cq->valid = true;
	} else {
		struct emu_sq *sq = &c->sqs[0];

		sq->base = va;
		sq->iova = base;
		sq->size = entries;
		sq->head = sq->tail = sq->db_last = 0;
		sq->cqid = 0;
		sq->skip = calloc(entries, 1);
		if (sq->skip == NULL) {
			return fail_enable(c, "out of memory for the admin queue", entries);
		}
		sq->valid = true;
	}
	return 0;
}

static void
enable(struct emu_ctrlr *c, union nvme_cc_register cc, uint64_t now)
{
	union nvme_aqa_register aqa = { .raw = reg_load32(&c->regs->aqa.raw) };
	uint64_t asq = reg_load64(&c->regs->asq);
	uint64_t acq = reg_load64(&c->regs->acq);

	c->csts.bits.shst = NVME_SHST_NORMAL;
	if (check_cc(c, cc) != 0) {
		return;
	}
	c->page_size = 4096u << cc.bits.mps;
	if (aqa.bits.asqs == 0 || aqa.bits.acqs == 0) {
		fail_enable(c, "AQA: admin queues need at least 2 entries", aqa.raw);
		return;
	}
	*emu_db_ptr(c, 0, 0) = 0;
	*emu_db_ptr(c, 0, 1) = 0;
	if (setup_admin_queue(c, aqa.bits.acqs + 1, acq, 1) != 0 ||
	    setup_admin_queue(c, aqa.bits.asqs + 1, asq, 0) != 0) {
		emu_queues_reset(c);
		return;
	}
	c->state = EMU_STATE_ENABLING;
	c->state_at = now + emu_us_to_ticks(c, (uint64_t)c->opts.rdy_delay_ms * 1000u);
	emu_csts_write(c);
}

/* CC.EN 1 -> 0: controller reset (section 7.3.2). */
static void
disable(struct emu_ctrlr *c, uint64_t now)
{
	emu_queues_reset(c);
	emu_aen_reset(c);
	emu_features_reset(c);
	emu_fw_reset(c);
	EMU_STAT_ADD(c, resets, 1);
	c->csts.bits.cfs = c->fault_cfs ? 1 : 0;
	c->state = EMU_STATE_DISABLING;
	c->state_at = now + emu_us_to_ticks(c, (uint64_t)c->opts.rdy_delay_ms * 1000u);
	emu_csts_write(c);
}

/* CC.SHN: flush everything, then report shutdown complete (section 7.6.2). */
static void
shutdown(struct emu_ctrlr *c, uint32_t shn)
{
	if (shn == NVME_SHN_NONE) {
		c->csts.bits.shst = NVME_SHST_NORMAL;
		emu_csts_write(c);
		return;
	}
	c->csts.bits.shst = NVME_SHST_OCCURRING;
	emu_csts_write(c);
	for (uint32_t i = 0; i < c->nn; i++) {
		if (c->ns[i].ops != NULL) {
			c->ns[i].ops->flush(&c->ns[i]);
		}
	}
	c->csts.bits.shst = NVME_SHST_COMPLETE;
	emu_csts_write(c);
}

static void
cc_changed(struct emu_ctrlr *c, union nvme_cc_register old, union nvme_cc_register cc, uint64_t now)
{
	if (!old.bits.en && cc.bits.en) {
		enable(c, cc, now);
	} else if (old.bits.en && !cc.bits.en) {
		disable(c, now);
	}
	if (old.bits.shn != cc.bits.shn) {
		shutdown(c, cc.bits.shn);
	}
}

/* RDY follows EN once the configured delay has passed. */
static int
state_timer(struct emu_ctrlr *c, uint64_t now)
{
	if (now < c->state_at) {
		return 0;
	}
	if (c->state == EMU_STATE_ENABLING && !c->fault_rdy_never && !c->fault_cfs) {
		c->state = EMU_STATE_READY;
		c->csts.bits.rdy = 1;
		emu_csts_write(c);
		return 1;
	}
	if (c->state == EMU_STATE_DISABLING) {
		c->state = EMU_STATE_DISABLED;
		c->csts.bits.rdy = 0;
		emu_csts_write(c);
		return 1;
	}
	return 0;
}

/* One look at CC. \return work done (state changes). */
int
emu_regs_poll(struct emu_ctrlr *c, uint64_t now)
{
	union nvme_cc_register cc = { .raw = reg_load32(&c->regs->cc.raw) };
	int work = 0;

	if (nvp_unlikely(cc.raw != c->cc)) {
		union nvme_cc_register old = { .raw = c->cc };

		c->cc = cc.raw;
		cc_changed(c, old, cc, now);
		work = 1;
	}
	if (nvp_unlikely(c->state == EMU_STATE_ENABLING || c->state == EMU_STATE_DISABLING)) {
		work += state_timer(c, now);
	}
	return work;
}

/*
 * Surprise removal: every register reads as all ones. The values are saved and put
 * back when the fault is switched off.
 */
void
emu_all_ones_set(struct emu_ctrlr *c, bool on)
{
	uint8_t *regs = (uint8_t *)c->regs;

	if (on == c->fault_all_ones) {
		return;
	}
	if (on) {
		memcpy(c->saved_regs, regs, sizeof(c->saved_regs));
		__atomic_store_n(&c->fault_all_ones, true, __ATOMIC_RELEASE);
		memset(regs, 0xff, sizeof(c->saved_regs));
		return;
	}
	memcpy(regs, c->saved_regs, sizeof(c->saved_regs));
	__atomic_store_n(&c->fault_all_ones, false, __ATOMIC_RELEASE);
	emu_csts_write(c);
}

/* ---- PCI configuration space ---- */

static void
cfg_put(uint8_t *cfg, uint32_t off, uint32_t val, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++) {
		cfg[off + i] = (uint8_t)(val >> (8 * i));
	}
}

static uint64_t
bar0_size(const struct emu_ctrlr *c)
{
	uint64_t size = 16384;

	while (size < c->regs_size) {
		size <<= 1;
	}
	return size;
}

void
emu_pci_init(struct emu_ctrlr *c)
{
	uint64_t bar = EMU_BAR0_BASE + (uint64_t)c->cntlid * (1ull << 32);
	uint64_t size = bar0_size(c);

	memset(c->cfg, 0, sizeof(c->cfg));
	memset(c->cfg_wmask, 0, sizeof(c->cfg_wmask));
	cfg_put(c->cfg, NVP_PCI_CFG_VENDOR_ID, EMU_PCI_VID, 2);
	cfg_put(c->cfg, NVP_PCI_CFG_DEVICE_ID, EMU_PCI_DID, 2);
	cfg_put(c->cfg, NVP_PCI_CFG_CLASS_REV, (NVP_PCI_CLASS_NVME << 8) | EMU_PCI_REV, 4);
	/* BAR0/1: 64-bit non-prefetchable memory BAR; sizing works through the mask. */
	cfg_put(c->cfg, NVP_PCI_CFG_BAR0, (uint32_t)bar | 0x4u, 4);
	cfg_put(c->cfg, NVP_PCI_CFG_BAR0 + 4, (uint32_t)(bar >> 32), 4);
	cfg_put(c->cfg, NVP_PCI_CFG_SUBVENDOR_ID, EMU_PCI_VID, 2);
	cfg_put(c->cfg, NVP_PCI_CFG_SUBDEVICE_ID, EMU_PCI_DID, 2);
	c->cfg[0x3d] = 1; /* interrupt pin INTA (never raised: vectors are eventfds) */
	cfg_put(c->cfg_wmask, NVP_PCI_CFG_COMMAND,
		NVP_PCI_COMMAND_MEMORY | NVP_PCI_COMMAND_MASTER | NVP_PCI_COMMAND_INTX_DISABLE, 2);
	cfg_put(c->cfg_wmask, NVP_PCI_CFG_BAR0, (uint32_t) ~(size - 1) & 0xfffffff0u, 4);
	cfg_put(c->cfg_wmask, NVP_PCI_CFG_BAR0 + 4, 0xffffffffu, 4);
	c->cfg_wmask[0x0c] = 0xff; /* cache line size */
	c->cfg_wmask[0x3c] = 0xff; /* interrupt line */
	c->cfg_command = 0;
	c->pci.ops = &emu_pci_ops;
	c->pci.dev_ctx = c;
}

bool
emu_pci_bus_master(struct emu_ctrlr *c)
{
	return (__atomic_load_n(&c->cfg_command, __ATOMIC_ACQUIRE) & NVP_PCI_COMMAND_MASTER) != 0;
}

static struct emu_ctrlr *
pci_ctrlr(struct nvp_pci_device *dev)
{
	return dev != NULL ? dev->dev_ctx : NULL;
}

static int
pci_map_bar(struct nvp_pci_device *dev, uint32_t bar, void **mapped_addr, uint64_t *phys_addr,
	    uint64_t *size)
{
	struct emu_ctrlr *c = pci_ctrlr(dev);
	uint32_t lo, hi;

	if (c == NULL || bar != 0 || mapped_addr == NULL) {
		return -EINVAL;
	}
	pthread_mutex_lock(&c->cfg_lock);
	memcpy(&lo, &c->cfg[NVP_PCI_CFG_BAR0], 4);
	memcpy(&hi, &c->cfg[NVP_PCI_CFG_BAR0 + 4], 4);
	pthread_mutex_unlock(&c->cfg_lock);
	*mapped_addr = c->regs;
	if (phys_addr != NULL) {
		*phys_addr = ((uint64_t)hi << 32) | (lo & 0xfffffff0u);
	}
	if (size != NULL) {
		*size = c->regs_size;
	}
	return 0;
}

static int
pci_unmap_bar(struct nvp_pci_device *dev, uint32_t bar, void *addr)
{
	struct emu_ctrlr *c = pci_ctrlr(dev);

	if (c == NULL || bar != 0 || (addr != NULL && addr != c->regs)) {
		return -EINVAL;
	}
	return 0;
}

static int
pci_cfg_read(struct nvp_pci_device *dev, void *value, uint32_t len, uint32_t offset)
{
	struct emu_ctrlr *c = pci_ctrlr(dev);

	if (c == NULL || value == NULL || len == 0 || offset >= EMU_PCI_CFG_SIZE ||
	    len > EMU_PCI_CFG_SIZE - offset) {
		return -EINVAL;
	}
	pthread_mutex_lock(&c->cfg_lock);
	if (__atomic_load_n(&c->fault_all_ones, __ATOMIC_RELAXED)) {
		memset(value, 0xff, len); /* a removed function reads as all ones */
	} else {
		memcpy(value, &c->cfg[offset], len);
	}
	pthread_mutex_unlock(&c->cfg_lock);
	return 0;
}

static int
pci_cfg_write(struct nvp_pci_device *dev, const void *value, uint32_t len, uint32_t offset)
{
	struct emu_ctrlr *c = pci_ctrlr(dev);
	const uint8_t *v = value;
	uint16_t cmd;

	if (c == NULL || value == NULL || len == 0 || offset >= EMU_PCI_CFG_SIZE ||
	    len > EMU_PCI_CFG_SIZE - offset) {
		return -EINVAL;
	}
	pthread_mutex_lock(&c->cfg_lock);
	for (uint32_t i = 0; i < len; i++) {
		uint8_t m = c->cfg_wmask[offset + i];

		c->cfg[offset + i] = (uint8_t)((c->cfg[offset + i] & ~m) | (v[i] & m));
	}
	cmd = (uint16_t)(c->cfg[NVP_PCI_CFG_COMMAND] | (c->cfg[NVP_PCI_CFG_COMMAND + 1] << 8));
	__atomic_store_n(&c->cfg_command, cmd, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&c->cfg_lock);
	return 0;
}

static int
pci_irq_fd(struct nvp_pci_device *dev, uint32_t vector, uint32_t *vector_out)
{
	return emu_irq_fd(pci_ctrlr(dev), vector, vector_out);
}

const struct nvp_pci_device_ops emu_pci_ops = {
	.map_bar = pci_map_bar,
	.unmap_bar = pci_unmap_bar,
	.cfg_read = pci_cfg_read,
	.cfg_write = pci_cfg_write,
	.irq_fd = pci_irq_fd,
};

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVM command set (NVMe 1.4 NVM command set, section 6): read, write, compare, flush,
 * write zeroes and dataset management, against the namespace backends.
 *
 * Checks, in order: fused/SGL (INVALID_FIELD), namespace (INVALID_NAMESPACE_OR_FORMAT),
 * LBA range (LBA_OUT_OF_RANGE), MDTS (INVALID_FIELD), then the PRPs (INVALID_PRP_OFFSET,
 * DATA_TRANSFER_ERROR). Nothing is transferred unless every check passed.
 */
#include <string.h>

#include "emu_internal.h"

#define NSID_ALL 0xffffffffu

/*
 * Map the data pointer of @cmd for @len bytes into c->sgl: the MDTS check, the PRP walk
 * and the IOMMU check (counted in stats.dma_rejects).
 */
uint16_t
emu_map_data(struct emu_ctrlr *c, const struct nvme_cmd *cmd, uint64_t len)
{
	uint16_t st;

	if (nvp_unlikely(len > c->max_xfer)) {
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	st = emu_prp_map(&c->sgl, cmd->dptr.prp.prp1, cmd->dptr.prp.prp2, len, c->page_size);
	if (nvp_unlikely(st != EMU_ST_OK)) {
		if (EMU_ST_EQ(st, EMU_GEN(NVME_SC_DATA_TRANSFER_ERROR))) {
			EMU_STAT_ADD(c, dma_rejects, 1);
		}
	}
	return st;
}

static inline struct emu_ns *
io_ns(struct emu_ctrlr *c, uint32_t nsid)
{
	if (nvp_unlikely(nsid == 0 || nsid > c->nn)) {
		return NULL;
	}
	return &c->ns[nsid - 1];
}

/* SLBA in CDW10/11, NLB (0's based) in CDW12 15:0. */
static inline uint16_t
io_range(const struct emu_ns *ns, const struct nvme_cmd *cmd, uint64_t *off, uint64_t *len)
{
	uint64_t slba = ((uint64_t)cmd->cdw11 << 32) | cmd->cdw10;
	uint64_t nlb = (cmd->cdw12 & 0xffffu) + 1u;

	if (nvp_unlikely(slba >= ns->nsze || nlb > ns->nsze - slba)) {
		return EMU_GEN(NVME_SC_LBA_OUT_OF_RANGE);
	}
	*off = slba << ns->lba_shift;
	*len = nlb << ns->lba_shift;
	return EMU_ST_OK;
}

static uint16_t
io_rw(struct emu_ctrlr *c, const struct nvme_cmd *cmd, bool write, uint64_t *svc)
{
	struct emu_ns *ns = io_ns(c, cmd->nsid);
	uint64_t off, len;
	uint32_t stream = 0;
	uint16_t st;

	if (ns == NULL) {
		return EMU_GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT);
	}
	st = io_range(ns, cmd, &off, &len);
	if (st == EMU_ST_OK && write) {
		st = emu_dir_write_stream(c, ns, cmd, &stream);
	}
	if (st == EMU_ST_OK) {
		st = emu_map_data(c, cmd, len);
	}
	if (nvp_unlikely(st != EMU_ST_OK)) {
		return st;
	}
	if (write) {
		if (nvp_unlikely(ns->ops->write(ns, off, &c->sgl) != 0)) {
			return EMU_MEDIA(NVME_SC_WRITE_FAULTS);
		}
		EMU_STAT_ADD(c, write_cmds, 1);
		EMU_STAT_ADD(c, bytes_written, len);
		c->smart.write_cmds++;
		c->smart.bytes_written += len;
		*svc = emu_model_write(c, off, len, c->now);
		emu_ns_ftl_write(c, ns, off, len, stream, svc);
	} else {
		if (nvp_unlikely(ns->ops->read(ns, off, &c->sgl) != 0)) {
			return EMU_MEDIA(NVME_SC_UNRECOVERED_READ_ERROR);
		}
		EMU_STAT_ADD(c, read_cmds, 1);
		EMU_STAT_ADD(c, bytes_read, len);
		c->smart.read_cmds++;
		c->smart.bytes_read += len;
		*svc = emu_model_read(c, off, len, c->now);
	}
	return EMU_ST_OK;
}

static uint16_t
io_compare(struct emu_ctrlr *c, const struct nvme_cmd *cmd, uint64_t *svc)
{
	struct emu_ns *ns = io_ns(c, cmd->nsid);
	uint64_t off, len;
	bool equal;
	uint16_t st;

	if (ns == NULL) {
		return EMU_GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT);
	}
	st = io_range(ns, cmd, &off, &len);
	if (st == EMU_ST_OK) {
		st = emu_map_data(c, cmd, len);
	}
	if (st != EMU_ST_OK) {
		return st;
	}
	if (emu_backend_compare(ns, off, &c->sgl, c->bounce, EMU_BOUNCE_SIZE, &equal) != 0) {
		return EMU_MEDIA(NVME_SC_UNRECOVERED_READ_ERROR);
	}
	c->smart.read_cmds++;
	c->smart.bytes_read += len;
	*svc = emu_model_read(c, off, len, c->now);
	return equal ? EMU_ST_OK : EMU_MEDIA(NVME_SC_COMPARE_FAILURE);
}

static uint16_t
io_flush(struct emu_ctrlr *c, const struct nvme_cmd *cmd, uint64_t *svc)
{
	struct emu_ns *ns = io_ns(c, cmd->nsid);
	int rc = 0;

	if (cmd->nsid == NSID_ALL) {
		for (uint32_t i = 0; i < c->nn; i++) {
			rc |= c->ns[i].ops->flush(&c->ns[i]);
		}
	} else if (ns == NULL) {
		return EMU_GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT);
	} else {
		rc = ns->ops->flush(ns);
	}
	*svc = emu_model_flush(c, c->now); /* the write cache drains first */
	return rc == 0 ? EMU_ST_OK : EMU_MEDIA(NVME_SC_WRITE_FAULTS);
}

/* Write Zeroes; DEAC (CDW12 bit 25) deallocates, which reads back as zeroes too. */
static uint16_t
io_write_zeroes(struct emu_ctrlr *c, const struct nvme_cmd *cmd)
{
	struct emu_ns *ns = io_ns(c, cmd->nsid);
	uint64_t off, len;
	uint16_t st;

	if (ns == NULL) {
		return EMU_GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT);
	}
	st = io_range(ns, cmd, &off, &len);
	if (st != EMU_ST_OK) {
		return st;
	}
	if (ns->ops->zero(ns, off, len) != 0) {
		return EMU_MEDIA(NVME_SC_WRITE_FAULTS);
	}
	emu_ns_ftl_trim(ns, off, len); /* zeroes are deallocated blocks (DLFEAT) */
	return EMU_ST_OK;
}

/* Dataset Management: CDW10 NR 7:0 (ranges, 0's based), CDW11 AD bit 2 (deallocate). */
static uint16_t
io_dsm(struct emu_ctrlr *c, const struct nvme_cmd *cmd)
{
	struct nvme_dsm_range r[NVME_DSM_MAX_RANGES];
	struct emu_ns *ns = io_ns(c, cmd->nsid);
	uint32_t nr = (cmd->cdw10 & 0xff) + 1;
	uint16_t st;

	if (ns == NULL) {
		return EMU_GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT);
	}
	st = emu_map_data(c, cmd, nr * sizeof(r[0]));
	if (st != EMU_ST_OK) {
		return st;
	}
	emu_sgl_from_host(&c->sgl, r, nr * sizeof(r[0]));
	for (uint32_t i = 0; i < nr; i++) {
		uint64_t slba = r[i].starting_lba, nlb = r[i].length;

		if (slba > ns->nsze || nlb > ns->nsze - slba) {
			return EMU_GEN(NVME_SC_LBA_OUT_OF_RANGE);
		}
	}
	if (!(cmd->cdw11 & NVME_DSM_ATTR_DEALLOCATE)) {
		return EMU_ST_OK; /* hints only */
	}
	for (uint32_t i = 0; i < nr; i++) {
		if (r[i].length != 0 &&
		    ns->ops->zero(ns, r[i].starting_lba << ns->lba_shift,
				  (uint64_t)r[i].length << ns->lba_shift) != 0) {
			return EMU_MEDIA(NVME_SC_WRITE_FAULTS);
		}
		emu_ns_ftl_trim(ns, r[i].starting_lba << ns->lba_shift,
				(uint64_t)r[i].length << ns->lba_shift);
	}
	return EMU_ST_OK;
}

/*
 * Execute an I/O command now (at c->now). *@service_ticks is the service time of the
 * device model (emu_model.c) for reads, compares, writes and flushes; others: none.
 */
uint16_t
emu_io_execute(struct emu_ctrlr *c, struct emu_cmd *slot, uint64_t *service_ticks)
{
	const struct nvme_cmd *cmd = &slot->cmd;

	*service_ticks = 0;
	if (nvp_unlikely(cmd->fuse != 0 || cmd->psdt != NVME_PSDT_PRP)) {
		return EMU_GEN(NVME_SC_INVALID_FIELD); /* FUSES = 0, SGLS = 0 */
	}
	switch (cmd->opc) {
	case NVME_OPC_READ:
		return io_rw(c, cmd, false, service_ticks);
	case NVME_OPC_WRITE:
		return io_rw(c, cmd, true, service_ticks);
	case NVME_OPC_COMPARE:
		return io_compare(c, cmd, service_ticks);
	case NVME_OPC_FLUSH:
		return io_flush(c, cmd, service_ticks);
	case NVME_OPC_WRITE_ZEROES:
		return io_write_zeroes(c, cmd);
	case NVME_OPC_DATASET_MANAGEMENT:
		return io_dsm(c, cmd);
	default:
		return EMU_GEN(NVME_SC_INVALID_OPCODE);
	}
}

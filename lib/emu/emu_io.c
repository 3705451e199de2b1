/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVM command set (NVMe 1.4 NVM command set, section 6): read, write, compare, flush,
 * write zeroes and dataset management, against the namespace backends.
 *
 * Checks, in order: fused/SGL (INVALID_FIELD), namespace (INVALID_NAMESPACE_OR_FORMAT),
 * LBA range (LBA_OUT_OF_RANGE), MDTS (INVALID_FIELD), then the PRPs (INVALID_PRP_OFFSET,
 * DATA_TRANSFER_ERROR), then on a separate-metadata format MPTR (INVALID_FIELD if not
 * dword aligned, DATA_TRANSFER_ERROR if not DMA memory). Nothing is transferred unless
 * every check passed.
 *
 * Metadata formats (section 5.2.3, 8.2): extended LBAs carry each block's metadata right
 * after its data in the data buffer (MDTS counts it); separate metadata is one
 * contiguous buffer at MPTR, ms bytes per block.
 */
#include <errno.h>
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

/* ---- metadata (formats 2 and 3) ---- */

/*
 * The metadata pointer of a separate-metadata command: one range of @len bytes of DMA
 * memory, dword aligned (section 4.2), checked as the IOMMU checks PRPs. MPTR = 0 is
 * what a driver that forgot it sends: a real device would DMA to bus address 0.
 */
static uint16_t
map_md(struct emu_ctrlr *c, uint64_t mptr, uint64_t len, uint8_t **md)
{
	if (nvp_unlikely((mptr & 3u) != 0)) {
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	*md = nvp_env_iova_to_vaddr(mptr, len);
	if (nvp_unlikely(*md == NULL)) {
		EMU_STAT_ADD(c, dma_rejects, 1);
		NVP_NOTICELOG("emu %s: metadata pointer 0x%llx (%llu bytes) is not DMA memory",
			      c->opts.name, (unsigned long long)mptr, (unsigned long long)len);
		return EMU_GEN(NVME_SC_DATA_TRANSFER_ERROR);
	}
	return EMU_ST_OK;
}

/* A position in c->sgl, for interleaved data and metadata. */
struct sgl_cur {
	const struct emu_sgl *sgl;
	uint32_t seg;
	uint64_t off;
};

static void
cur_copy(struct sgl_cur *cur, uint8_t *buf, uint64_t len, bool to_host)
{
	while (len > 0) {
		const struct emu_seg *sg = &cur->sgl->segs[cur->seg];
		uint64_t n = NVP_MIN(len, sg->len - cur->off);

		if (to_host) {
			memcpy(sg->addr + cur->off, buf, n);
		} else {
			memcpy(buf, sg->addr + cur->off, n);
		}
		buf += n;
		len -= n;
		cur->off += n;
		if (cur->off == sg->len) {
			cur->seg++;
			cur->off = 0;
		}
	}
}

/*
 * Extended LBAs: each block is data then metadata in the host buffer. Block by block
 * through the bounce buffer (data to the backend, metadata to ns->md).
 */
static int
rw_extended(struct emu_ctrlr *c, struct emu_ns *ns, uint64_t slba, uint64_t nlb, bool write)
{
	uint32_t bs = 1u << ns->lba_shift;
	struct emu_seg seg = { .addr = c->bounce, .len = bs };
	struct emu_sgl one = { .segs = &seg, .nsegs = 1, .max_segs = 1, .len = bs };
	struct sgl_cur cur = { .sgl = &c->sgl };

	for (uint64_t lba = slba; lba < slba + nlb; lba++) {
		uint8_t *md = ns->md + lba * ns->ms;

		if (write) {
			cur_copy(&cur, c->bounce, bs, false);
			cur_copy(&cur, md, ns->ms, false);
			if (ns->ops->write(ns, lba << ns->lba_shift, &one) != 0) {
				return -EIO;
			}
		} else {
			if (ns->ops->read(ns, lba << ns->lba_shift, &one) != 0) {
				return -EIO;
			}
			cur_copy(&cur, c->bounce, bs, true);
			cur_copy(&cur, md, ns->ms, true);
		}
	}
	return 0;
}

/* Map the data (and MPTR) of a command on @ns's current format. *@host: bytes moved. */
static uint16_t
map_rw(struct emu_ctrlr *c, struct emu_ns *ns, const struct nvme_cmd *cmd, uint64_t len,
       uint8_t **md, uint64_t *host)
{
	uint64_t nlb = len >> ns->lba_shift;
	uint16_t st;

	*host = len;
	*md = NULL;
	if (ns->ms != 0 && ns->mset) {
		*host = len + nlb * ns->ms; /* MDTS counts interleaved metadata */
	}
	st = emu_map_data(c, cmd, *host);
	if (st == EMU_ST_OK && ns->ms != 0 && !ns->mset) {
		st = map_md(c, cmd->mptr, nlb * ns->ms, md);
		*host += nlb * ns->ms;
	}
	return st;
}

/* Move the data (and metadata) of a read or write. \return 0 or -EIO. */
static int
rw_move(struct emu_ctrlr *c, struct emu_ns *ns, uint64_t off, uint64_t len, uint8_t *md, bool write)
{
	uint64_t slba = off >> ns->lba_shift, nlb = len >> ns->lba_shift;

	if (ns->ms != 0 && ns->mset) {
		return rw_extended(c, ns, slba, nlb, write);
	}
	if (md != NULL) {
		if (write) {
			memcpy(ns->md + slba * ns->ms, md, nlb * ns->ms);
		} else {
			memcpy(md, ns->md + slba * ns->ms, nlb * ns->ms);
		}
	}
	return write ? ns->ops->write(ns, off, &c->sgl) : ns->ops->read(ns, off, &c->sgl);
}

static uint16_t
io_rw(struct emu_ctrlr *c, const struct nvme_cmd *cmd, bool write, uint64_t *svc)
{
	struct emu_ns *ns = io_ns(c, cmd->nsid);
	uint64_t off, len, host = 0;
	uint8_t *md = NULL;
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
		st = map_rw(c, ns, cmd, len, &md, &host);
	}
	if (nvp_unlikely(st != EMU_ST_OK)) {
		return st;
	}
	if (nvp_unlikely(rw_move(c, ns, off, len, md, write) != 0)) {
		return write ? EMU_MEDIA(NVME_SC_WRITE_FAULTS) :
			       EMU_MEDIA(NVME_SC_UNRECOVERED_READ_ERROR);
	}
	if (write) {
		EMU_STAT_ADD(c, write_cmds, 1);
		EMU_STAT_ADD(c, bytes_written, host);
		c->smart.write_cmds++;
		c->smart.bytes_written += host;
		*svc = emu_model_write(c, off, len, c->now);
		emu_ns_ftl_write(c, ns, off, len, stream, svc);
	} else {
		EMU_STAT_ADD(c, read_cmds, 1);
		EMU_STAT_ADD(c, bytes_read, host);
		c->smart.read_cmds++;
		c->smart.bytes_read += host;
		*svc = emu_model_read(c, off, len, c->now);
	}
	return EMU_ST_OK;
}

/* Compare on a metadata format: data and metadata both must match. */
static int
compare_md(struct emu_ctrlr *c, struct emu_ns *ns, uint64_t off, uint64_t len, const uint8_t *md,
	   bool *equal)
{
	uint32_t bs = 1u << ns->lba_shift;
	uint64_t slba = off >> ns->lba_shift, nlb = len >> ns->lba_shift;
	struct sgl_cur cur = { .sgl = &c->sgl };
	uint8_t *host = c->bounce + bs;

	if (!ns->mset) {
		*equal = memcmp(md, ns->md + slba * ns->ms, nlb * ns->ms) == 0;
		return *equal ? emu_backend_compare(ns, off, &c->sgl, c->bounce, EMU_BOUNCE_SIZE,
						    equal) :
				0;
	}
	*equal = true;
	for (uint64_t lba = slba; lba < slba + nlb && *equal; lba++) {
		if (ns->ops->read_buf(ns, lba << ns->lba_shift, c->bounce, bs) != 0) {
			return -EIO;
		}
		cur_copy(&cur, host, bs + ns->ms, false);
		*equal = memcmp(c->bounce, host, bs) == 0 &&
			 memcmp(ns->md + lba * ns->ms, host + bs, ns->ms) == 0;
	}
	return 0;
}

static uint16_t
io_compare(struct emu_ctrlr *c, const struct nvme_cmd *cmd, uint64_t *svc)
{
	struct emu_ns *ns = io_ns(c, cmd->nsid);
	uint64_t off, len, host = 0;
	uint8_t *md = NULL;
	bool equal;
	uint16_t st;
	int rc;

	if (ns == NULL) {
		return EMU_GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT);
	}
	st = io_range(ns, cmd, &off, &len);
	if (st == EMU_ST_OK) {
		st = map_rw(c, ns, cmd, len, &md, &host);
	}
	if (st != EMU_ST_OK) {
		return st;
	}
	if (ns->ms != 0) {
		rc = compare_md(c, ns, off, len, md, &equal);
	} else {
		rc = emu_backend_compare(ns, off, &c->sgl, c->bounce, EMU_BOUNCE_SIZE, &equal);
	}
	if (rc != 0) {
		return EMU_MEDIA(NVME_SC_UNRECOVERED_READ_ERROR);
	}
	c->smart.read_cmds++;
	c->smart.bytes_read += host;
	*svc = emu_model_read(c, off, len, c->now);
	return equal ? EMU_ST_OK : EMU_MEDIA(NVME_SC_COMPARE_FAILURE);
}

/* Deallocated and zeroed blocks have zeroed metadata too. */
static int
zero_range(struct emu_ns *ns, uint64_t slba, uint64_t nlb)
{
	if (ns->ms != 0) {
		memset(ns->md + slba * ns->ms, 0, nlb * ns->ms);
	}
	return ns->ops->zero(ns, slba << ns->lba_shift, nlb << ns->lba_shift);
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
	if (zero_range(ns, off >> ns->lba_shift, len >> ns->lba_shift) != 0) {
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
		if (r[i].length != 0 && zero_range(ns, r[i].starting_lba, r[i].length) != 0) {
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
	case NVME_OPC_IO_MGMT_RECEIVE:
		return emu_fdp_io_mgmt_recv(c, cmd);
	case NVME_OPC_IO_MGMT_SEND:
		return emu_fdp_io_mgmt_send(c, cmd);
	default:
		return EMU_GEN(NVME_SC_INVALID_OPCODE);
	}
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Directives (NVMe 1.4 section 9): the Identify directive and Streams, and the glue
 * between the NVM command set and the FTL model (emu_ftl.c).
 *
 * With streams=0 the controller has no Directives support (OACS bit 5 clear) and both
 * Directive commands are invalid opcodes, as on a controller that predates them. With
 * streams=N it offers N streams (MSL = NSSA = N) shared by its namespaces:
 *  - Directive Receive, Identify, Return Parameters: Identify and Streams supported,
 *    Streams enabled per namespace; the enabled state survives controller resets
 *    (persistent bit set, NVMe 2.0 figure "Return Parameters Data Structure").
 *  - Directive Send, Identify, Enable Directive (CDW12 ENDIR, TDTYPE): Streams on or off
 *    for one namespace; off releases its streams.
 *  - Streams, Return Parameters (9.3): MSL, NSSA, NSSO, SWS = one 4 KiB FTL page in
 *    logical blocks, SGS = one erase block in SWS units, NSA, NSO.
 *  - Streams, Allocate Resources: NSA = min(NSR, streams not allocated elsewhere).
 *  - Streams, Get Status / Release Identifier / Release Resources.
 * A write with DTYPE = 1 needs Streams enabled on its namespace and a stream identifier
 * 1..MSL in DSPEC (CDW13 31:16); the identifier opens the stream and chooses the FTL's
 * open erase block. Streams parameters can be read before Streams are enabled; Get
 * Status, Allocate and Send need them enabled. Anything else is Invalid Field in
 * Command. DTYPE 2 (Data Placement) belongs to Flexible Data Placement (emu_fdp.c): with
 * fdp=N the Directive commands exist for the Identify directive, which reports Data
 * Placement supported and enabled while FDP is (enabled by Set Features FDP, not by
 * Directive Send), and Streams operations are Invalid Field.
 */
#include <errno.h>
#include <string.h>

#include "emu_internal.h"

#define NSID_ALL 0xffffffffu
#define DIR_BUF_SIZE 4096u

static uint32_t
streams_allocated(const struct emu_ctrlr *c)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->nn; i++) {
		n += c->ns[i].streams_alloc;
	}
	return n;
}

static uint32_t
streams_open(const struct emu_ctrlr *c)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->nn; i++) {
		n += (uint32_t)__builtin_popcountll(c->ns[i].streams_open);
	}
	return n;
}

static void
streams_release(struct emu_ns *ns)
{
	ns->streams_alloc = 0;
	ns->streams_open = 0;
}

/* Directive commands exist: Streams or FDP offered (OACS bit 5). */
static bool
dir_offered(const struct emu_ctrlr *c)
{
	return c->opts.streams != 0 || c->opts.fdp != 0;
}

static struct emu_ns *
dir_ns(struct emu_ctrlr *c, uint32_t nsid)
{
	return nsid == 0 || nsid > c->nn ? NULL : &c->ns[nsid - 1];
}

/* Identify, Enable Directive: CDW12 bit 0 ENDIR, bits 15:8 TDTYPE. */
static uint16_t
dir_enable(const struct emu_ctrlr *c, struct emu_ns *ns, uint32_t cdw12)
{
	if (((cdw12 >> 8) & 0xffu) != NVME_DIRECTIVE_TYPE_STREAMS || c->opts.streams == 0) {
		return EMU_GEN(NVME_SC_INVALID_FIELD); /* Identify cannot be switched off */
	}
	ns->streams_enabled = (cdw12 & 1u) != 0;
	if (!ns->streams_enabled) {
		streams_release(ns);
	}
	return EMU_ST_OK;
}

uint16_t
emu_dir_send(struct emu_ctrlr *c, const struct nvme_cmd *cmd)
{
	uint8_t doper = cmd->cdw11 & 0xffu, dtype = (cmd->cdw11 >> 8) & 0xffu;
	uint16_t dspec = (uint16_t)(cmd->cdw11 >> 16);
	struct emu_ns *ns = dir_ns(c, cmd->nsid);

	if (!dir_offered(c)) {
		return EMU_GEN(NVME_SC_INVALID_OPCODE);
	}
	if (ns == NULL) {
		return EMU_GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT);
	}
	if (dtype == NVME_DIRECTIVE_TYPE_IDENTIFY && doper == NVME_DIR_SEND_IDENTIFY_ENABLE) {
		return dir_enable(c, ns, cmd->cdw12);
	}
	if (dtype != NVME_DIRECTIVE_TYPE_STREAMS || !ns->streams_enabled) {
		return EMU_GEN(NVME_SC_INVALID_FIELD); /* also every Streams operation under FDP */
	}
	switch (doper) {
	case NVME_DIR_SEND_STREAMS_RELEASE_ID:
		if (dspec == 0 || dspec > c->opts.streams) {
			return EMU_GEN(NVME_SC_INVALID_FIELD);
		}
		ns->streams_open &= ~(1ull << (dspec - 1));
		return EMU_ST_OK;
	case NVME_DIR_SEND_STREAMS_RELEASE_RES:
		streams_release(ns);
		return EMU_ST_OK;
	default:
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
}

static uint32_t
build_identify(const struct emu_ctrlr *c, const struct emu_ns *ns, uint8_t *buf)
{
	struct nvme_dir_identify_params *p = (void *)buf;
	uint8_t streams = c->opts.streams != 0 ? 1u << NVME_DIRECTIVE_TYPE_STREAMS : 0;
	uint8_t dp = c->opts.fdp != 0 ? 1u << NVME_DIRECTIVE_TYPE_DATA_PLACEMENT : 0;

	p->supported[0] = (uint8_t)(1u << NVME_DIRECTIVE_TYPE_IDENTIFY | streams | dp);
	p->enabled[0] = (uint8_t)(1u << NVME_DIRECTIVE_TYPE_IDENTIFY |
				  (ns->streams_enabled ? streams : 0) |
				  (emu_fdp_dir_enabled(c) ? dp : 0));
	p->persistent[0] = (uint8_t)(streams | dp);
	return sizeof(*p);
}

static uint32_t
build_params(const struct emu_ctrlr *c, const struct emu_ns *ns, uint8_t *buf)
{
	struct nvme_dir_streams_params *p = (void *)buf;

	p->msl = (uint16_t)c->opts.streams;
	p->nssa = (uint16_t)(c->opts.streams - streams_allocated(c));
	p->nsso = (uint16_t)streams_open(c);
	p->sws = 1u << (EMU_FTL_PAGE_SHIFT - ns->lba_shift);
	p->sgs = (uint16_t)NVP_MIN(c->opts.ftl_ppb, 0xffffu);
	p->nsa = ns->streams_alloc;
	p->nso = (uint16_t)__builtin_popcountll(ns->streams_open);
	return sizeof(*p);
}

static uint32_t
build_status(const struct emu_ns *ns, uint8_t *buf)
{
	uint16_t n = 0;

	for (uint32_t sid = 1; sid <= EMU_FTL_MAX_STREAMS; sid++) {
		if (ns->streams_open & (1ull << (sid - 1))) {
			n++;
			memcpy(buf + 2u * n, &(uint16_t){ (uint16_t)sid }, 2);
		}
	}
	memcpy(buf, &n, 2);
	return 2u * (n + 1u);
}

/* Allocate Resources: CDW12 NSR 15:0; DW0 15:0 NSA. */
static uint16_t
streams_alloc(struct emu_ctrlr *c, struct emu_ns *ns, uint32_t cdw12, uint32_t *cdw0)
{
	uint32_t nsr = cdw12 & 0xffffu;
	uint32_t avail = c->opts.streams - streams_allocated(c) + ns->streams_alloc;

	ns->streams_alloc = (uint16_t)NVP_MIN(nsr, avail);
	*cdw0 = ns->streams_alloc;
	return EMU_ST_OK;
}

static uint16_t
dir_copy_out(struct emu_ctrlr *c, const struct nvme_cmd *cmd, const uint8_t *buf)
{
	uint64_t len = ((uint64_t)cmd->cdw10 + 1u) * 4u;
	uint16_t st;

	/* @buf is zero past the structure; a host may ask for more than DIR_BUF_SIZE (Get
	 * Status of 65536 streams): the bytes past it are left as they were */
	len = NVP_MIN(len, (uint64_t)DIR_BUF_SIZE);
	st = emu_map_data(c, cmd, len);
	if (st == EMU_ST_OK) {
		emu_sgl_to_host(&c->sgl, buf, len);
	}
	return st;
}

uint16_t
emu_dir_receive(struct emu_ctrlr *c, const struct nvme_cmd *cmd, uint32_t *cdw0)
{
	_Alignas(8) uint8_t buf[DIR_BUF_SIZE];
	uint8_t doper = cmd->cdw11 & 0xffu, dtype = (cmd->cdw11 >> 8) & 0xffu;
	struct emu_ns *ns = dir_ns(c, cmd->nsid);
	uint32_t size = 0;

	if (!dir_offered(c)) {
		return EMU_GEN(NVME_SC_INVALID_OPCODE);
	}
	if (ns == NULL) {
		return EMU_GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT);
	}
	memset(buf, 0, sizeof(buf));
	if (dtype == NVME_DIRECTIVE_TYPE_IDENTIFY && doper == NVME_DIR_RECV_IDENTIFY_PARAMS) {
		size = build_identify(c, ns, buf);
	} else if (c->opts.streams == 0) {
		size = 0; /* FDP only: no Streams operations */
	} else if (dtype == NVME_DIRECTIVE_TYPE_STREAMS && doper == NVME_DIR_RECV_STREAMS_PARAMS) {
		size = build_params(c, ns, buf); /* readable before enabling, as a capability */
	} else if (dtype == NVME_DIRECTIVE_TYPE_STREAMS && ns->streams_enabled) {
		switch (doper) {
		case NVME_DIR_RECV_STREAMS_STATUS:
			size = build_status(ns, buf);
			break;
		case NVME_DIR_RECV_STREAMS_ALLOC_RES:
			return streams_alloc(c, ns, cmd->cdw12, cdw0);
		default:
			break;
		}
	}
	if (size == 0) {
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	return dir_copy_out(c, cmd, buf);
}

/*
 * The stream of a write: 0 without a directive, else its DSPEC after the checks above.
 * Opens the stream. \return EMU_ST_OK or Invalid Field.
 */
uint16_t
emu_dir_write_stream(struct emu_ctrlr *c, struct emu_ns *ns, const struct nvme_cmd *cmd,
		     uint32_t *stream)
{
	uint32_t dtype = (cmd->cdw12 >> NVME_IO_FLAGS_DTYPE_SHIFT) & 0xfu;
	uint32_t sid = cmd->cdw13 >> NVME_IO_FLAGS_DSPEC_SHIFT;

	*stream = 0;
	if (nvp_likely(dtype == 0)) {
		return EMU_ST_OK; /* FDP: placement handle 0, the FTL's stream 0 */
	}
	if (dtype == NVME_DIRECTIVE_TYPE_DATA_PLACEMENT) {
		return emu_fdp_write_pid(c, ns, (uint16_t)sid, stream);
	}
	if (dtype != NVME_DIRECTIVE_TYPE_STREAMS || !ns->streams_enabled || sid == 0 ||
	    sid > c->opts.streams) {
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	ns->streams_open |= 1ull << (sid - 1);
	EMU_STAT_ADD(c, stream_writes, 1);
	*stream = sid;
	return EMU_ST_OK;
}

/* ---- the FTL model behind a namespace ---- */

int
emu_ns_ftl_init(struct emu_ctrlr *c, struct emu_ns *ns)
{
	struct emu_ftl_cfg cfg;
	int rc;

	if (!c->opts.ftl) {
		return 0;
	}
	cfg.lpages = ns->size >> EMU_FTL_PAGE_SHIFT;
	cfg.ppb = c->opts.ftl_ppb;
	cfg.op_pct = c->opts.ftl_op;
	/* FDP: reclaim unit handle h is open block h, handle 0 that of writes without one */
	cfg.nstreams = c->opts.fdp != 0 ? c->opts.fdp - 1 : c->opts.streams;
	cfg.gc = c->opts.ftl_gc ? EMU_FTL_GC_COST_BENEFIT : EMU_FTL_GC_GREEDY;
	rc = emu_ftl_create(&cfg, &ns->ftl);
	if (rc == -EINVAL) {
		NVP_ERRLOG(
			"emu %s: ftl: %llu pages of 4 KiB with ftl_ppb=%u ftl_op=%u streams=%u (or "
			"fdp handles - 1) "
			"leave too few spare erase blocks for GC, or too many pages: raise "
			"ftl_op or size, or lower ftl_ppb",
			c->opts.name, (unsigned long long)cfg.lpages, cfg.ppb, cfg.op_pct,
			cfg.nstreams);
	}
	return rc;
}

/* Account a host write of [off, off + len) bytes; GC's channel time goes into *@svc. */
void
emu_ns_ftl_write(struct emu_ctrlr *c, struct emu_ns *ns, uint64_t off, uint64_t len,
		 uint32_t stream, uint64_t *svc)
{
	const struct emu_ftl_counters *cnt;
	uint64_t first = off >> EMU_FTL_PAGE_SHIFT, last = (off + len - 1) >> EMU_FTL_PAGE_SHIFT;
	uint64_t host, nand, gc, erases;

	if (ns->ftl == NULL || len == 0) {
		return;
	}
	cnt = emu_ftl_counters(ns->ftl);
	host = cnt->host_pages;
	nand = cnt->nand_pages;
	gc = cnt->gc_pages;
	erases = cnt->erases;
	/* -ENOSPC cannot happen: emu_ftl_create() refuses geometries where GC can stall */
	(void)emu_ftl_write(ns->ftl, first, last - first + 1, stream);
	gc = cnt->gc_pages - gc;
	EMU_STAT_ADD(c, ftl_host_pages, cnt->host_pages - host);
	EMU_STAT_ADD(c, ftl_nand_pages, cnt->nand_pages - nand);
	EMU_STAT_ADD(c, ftl_gc_pages, gc);
	EMU_STAT_ADD(c, ftl_erases, cnt->erases - erases);
	EMU_STAT_ADD(c, ftl_gc_busy_us, gc * c->opts.ftl_gc_us);
	*svc += gc * c->gc_page_ticks;
}

/* Deallocate the whole pages inside [off, off + len). */
void
emu_ns_ftl_trim(struct emu_ns *ns, uint64_t off, uint64_t len)
{
	uint64_t first = (off + (1u << EMU_FTL_PAGE_SHIFT) - 1) >> EMU_FTL_PAGE_SHIFT;
	uint64_t end = (off + len) >> EMU_FTL_PAGE_SHIFT;

	if (ns->ftl != NULL && end > first) {
		emu_ftl_trim(ns->ftl, first, end - first);
	}
}

static void
log_add(struct nvp_emu_ftl_log *l, const struct emu_ftl_counters *k)
{
	l->pages_per_block = k->pages_per_block;
	l->free_blocks += k->free_blocks;
	l->blocks += k->blocks;
	l->logical_pages += k->logical_pages;
	l->valid_pages += k->valid_pages;
	l->host_pages += k->host_pages;
	l->nand_pages += k->nand_pages;
	l->gc_pages += k->gc_pages;
	l->erases += k->erases;
	l->gc_runs += k->gc_runs;
	l->trimmed_pages += k->trimmed_pages;
	l->stream_pages += k->stream_pages;
}

/* Vendor log page C0h for @nsid (0 / FFFFFFFFh: all). \return its size, 0 bad nsid. */
uint32_t
emu_ftl_build_log(struct emu_ctrlr *c, uint32_t nsid, uint8_t *buf)
{
	struct nvp_emu_ftl_log *l = (void *)buf;
	bool all = nsid == 0 || nsid == NSID_ALL;

	if (!all && dir_ns(c, nsid) == NULL) {
		return 0;
	}
	memset(l, 0, sizeof(*l));
	memcpy(l->signature, NVP_EMU_FTL_LOG_SIGNATURE, sizeof(l->signature));
	l->version = 1;
	l->page_size = 1u << EMU_FTL_PAGE_SHIFT;
	l->op_pct = c->opts.ftl ? c->opts.ftl_op : 0;
	l->gc_policy = c->opts.ftl_gc;
	l->streams = c->opts.streams;
	for (uint32_t i = 0; i < c->nn; i++) {
		struct emu_ftl_counters k;

		if ((!all && i + 1 != nsid) || c->ns[i].ftl == NULL) {
			continue;
		}
		emu_ftl_get_counters(c->ns[i].ftl, &k);
		log_add(l, &k);
		l->nsid_count++;
	}
	l->gc_busy_us = l->gc_pages * c->opts.ftl_gc_us;
	return sizeof(*l);
}

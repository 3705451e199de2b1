/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flexible Data Placement (NVMe 2.0 TP4146; NVMe 2.1 base 8.1.10, NVM command set 4.2).
 *
 * With fdp=N the controller is an FDP controller: CTRATT bit 19 (FDPS), one endurance
 * group (ENDGID 1, ENDGIDMAX 1) that holds every namespace, and one FDP configuration
 * of one reclaim group (RGIF 0: a placement identifier is just the placement handle)
 * and N reclaim unit handles, each initially isolated. A reclaim unit is one erase block
 * of the FTL model (RUNS = ftl_ppb x 4 KiB); a reclaim unit handle is an open erase
 * block, as a stream is (emu_ftl.c): handle h writes through the FTL's open block h, and
 * handle 0 is also where writes without a directive go (TP4146: "placement handle 0").
 * Every namespace has placement handles 0..N-1 referring to handles 0..N-1. The FTL
 * model is per namespace, so the handles of two namespaces are distinct open blocks: a
 * simplification of the shared reclaim units of an endurance group.
 *
 * FDP is enabled from creation, as on a drive configured before it shipped; Set Features
 * FDP (1Dh) may switch it off and on again (the software controller has no namespace
 * management, so it does not insist the endurance group be empty, as the spec does).
 *  - Get Log Page, LSI = ENDGID: 20h configurations, 21h RUH usage, 22h statistics
 *    (host bytes written, media bytes written, media bytes erased since FDP was
 *    enabled; from the FTL model's pages, or media = host without ftl=1), 23h events
 *    (host events: Invalid Placement Identifier; no controller events).
 *  - Directive Receive, Identify: Data Placement supported, enabled while FDP is.
 *  - Write with DTYPE 2: DSPEC is the placement identifier; an invalid one goes to
 *    placement handle 0 and logs an Invalid Placement Identifier event (TP4146), a write
 *    with DTYPE 2 while FDP is disabled is Invalid Field.
 *  - I/O Management Receive MO 1 (RUH Status): one descriptor per placement handle, RUAMW
 *    = logical blocks left in the handle's open reclaim unit.
 *  - I/O Management Send MO 1 (RUH Update): the listed handles leave their reclaim unit;
 *    the next write through them starts a fresh one.
 */
#include <errno.h>
#include <string.h>

#include "emu_internal.h"

#define FDP_BUF_SIZE 2048u

void
emu_fdp_init(struct emu_ctrlr *c)
{
	memset(&c->fdp, 0, sizeof(c->fdp));
	c->fdp.enabled = c->opts.fdp != 0;
}

void
emu_fdp_identify_ctrlr(const struct emu_ctrlr *c, struct nvme_ctrlr_data *cd)
{
	if (c->opts.fdp == 0) {
		return;
	}
	cd->ctratt |= NVME_CTRATT_FDPS;
	cd->endgidmax = EMU_FDP_ENDGID;
	cd->oacs |= NVME_OACS_DIRECTIVES; /* Identify directive reports Data Placement */
}

void
emu_fdp_identify_ns(const struct emu_ctrlr *c, struct nvme_ns_data *nd)
{
	if (c->opts.fdp != 0) {
		nd->endgid = EMU_FDP_ENDGID;
	}
}

/* Is the Data Placement directive enabled (Identify directive, write DTYPE 2)? */
bool
emu_fdp_dir_enabled(const struct emu_ctrlr *c)
{
	return c->opts.fdp != 0 && c->fdp.enabled;
}

/* Media counters of the endurance group, in 4 KiB pages, summed over namespaces. */
static void
media_pages(const struct emu_ctrlr *c, uint64_t *written, uint64_t *erased)
{
	*written = 0;
	*erased = 0;
	for (uint32_t i = 0; i < c->nn; i++) {
		const struct emu_ftl_counters *k;

		if (c->ns[i].ftl == NULL) {
			continue;
		}
		k = emu_ftl_counters(c->ns[i].ftl);
		*written += k->nand_pages;
		*erased += k->erases * c->opts.ftl_ppb;
	}
}

static void
stats_rebase(struct emu_ctrlr *c)
{
	c->fdp.base_host_bytes = c->smart.bytes_written;
	media_pages(c, &c->fdp.base_nand_pages, &c->fdp.base_erased_pages);
	c->fdp.ev_first = 0;
	c->fdp.ev_count = 0;
}

/* Get Features FDP: CDW11 ENDGID; DW0 FDPE bit 0, FDPCIDX 15:8. */
uint16_t
emu_fdp_get_feature(const struct emu_ctrlr *c, uint32_t cdw11, bool dflt, uint32_t *val)
{
	if (c->opts.fdp == 0 || (cdw11 & 0xffffu) != EMU_FDP_ENDGID) {
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	*val = NVME_FEAT_FDP_CDW12(dflt ? true : c->fdp.enabled, 0);
	return EMU_ST_OK;
}

/* Set Features FDP: CDW11 ENDGID, CDW12 FDPE bit 0, FDPCIDX 15:8 (only 0 exists). */
uint16_t
emu_fdp_set_feature(struct emu_ctrlr *c, uint32_t cdw11, uint32_t cdw12)
{
	bool enable = NVME_FEAT_FDP_FDPE(cdw12);

	if (c->opts.fdp == 0 || (cdw11 & 0xffffu) != EMU_FDP_ENDGID ||
	    (enable && NVME_FEAT_FDP_FDPCIDX(cdw12) != 0)) {
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	if (enable && !c->fdp.enabled) {
		stats_rebase(c);
	}
	c->fdp.enabled = enable;
	return EMU_ST_OK;
}

/* ---- log pages ---- */

static uint32_t
build_configs(const struct emu_ctrlr *c, uint8_t *buf)
{
	struct nvme_fdp_config_log *h = (void *)buf;
	struct nvme_fdp_config_desc *d = (void *)(buf + sizeof(*h));
	struct nvme_fdp_ruh_desc *r = (void *)(buf + sizeof(*h) + sizeof(*d));
	uint32_t n = c->opts.fdp;

	d->dsze = (uint16_t)(sizeof(*d) + n * sizeof(*r));
	d->fdpa = NVME_FDPA_VALID | (c->opts.vwc ? NVME_FDPA_VWC : 0); /* RGIF 0 */
	d->nrg = 1;
	d->nruh = (uint16_t)n;
	d->maxpids = (uint16_t)(n - 1);
	d->nnss = NVP_EMU_MAX_NS;
	d->runs = (uint64_t)c->opts.ftl_ppb << EMU_FTL_PAGE_SHIFT;
	for (uint32_t i = 0; i < n; i++) {
		r[i].ruht = NVME_RUHT_INITIALLY_ISOLATED;
	}
	h->numfdpc = 0;
	h->size = (uint32_t)sizeof(*h) + d->dsze;
	return h->size;
}

static uint32_t
build_usage(const struct emu_ctrlr *c, uint8_t *buf)
{
	struct nvme_fdp_ruhu_log *h = (void *)buf;
	struct nvme_fdp_ruhu_desc *d = (void *)(buf + sizeof(*h));

	h->nruh = (uint16_t)c->opts.fdp;
	for (uint32_t i = 0; i < c->opts.fdp; i++) {
		/* every namespace's placement handle i refers to handle i */
		d[i].ruha = c->fdp.enabled ? NVME_RUHA_HOST : NVME_RUHA_UNUSED;
	}
	return (uint32_t)(sizeof(*h) + c->opts.fdp * sizeof(*d));
}

static uint32_t
build_stats(const struct emu_ctrlr *c, uint8_t *buf)
{
	struct nvme_fdp_stats_log *s = (void *)buf;
	uint64_t written, erased;

	if (!c->fdp.enabled) {
		return sizeof(*s); /* all zero */
	}
	media_pages(c, &written, &erased);
	s->hbmw[0] = c->smart.bytes_written - c->fdp.base_host_bytes;
	if (c->ns[0].ftl == NULL) {
		s->mbmw[0] = s->hbmw[0]; /* no FTL model: media writes are the host's */
	} else {
		s->mbmw[0] = (written - c->fdp.base_nand_pages) << EMU_FTL_PAGE_SHIFT;
		s->mbe[0] = (erased - c->fdp.base_erased_pages) << EMU_FTL_PAGE_SHIFT;
	}
	return sizeof(*s);
}

/* LSP bit 0: 0 host events, 1 controller events (none are generated). */
static uint32_t
build_events(const struct emu_ctrlr *c, uint32_t lsp, uint8_t *buf)
{
	struct nvme_fdp_events_log *h = (void *)buf;
	struct nvme_fdp_event *e = (void *)(buf + sizeof(*h));

	if ((lsp & 1u) == 0) {
		for (uint32_t i = 0; i < c->fdp.ev_count; i++) {
			e[i] = c->fdp.events[(c->fdp.ev_first + i) % EMU_FDP_MAX_EVENTS];
		}
		h->nevents = c->fdp.ev_count;
	}
	return (uint32_t)(sizeof(*h) + h->nevents * sizeof(*e));
}

/*
 * FDP log page of @cmd (LID 20h..23h, LSI = ENDGID in CDW11 31:16) into @buf (4 KiB,
 * zeroed). *@size = 0 when the controller has no FDP (the caller answers Invalid Log
 * Page). \return Invalid Field for another endurance group, else OK.
 */
uint16_t
emu_fdp_build_log(struct emu_ctrlr *c, const struct nvme_cmd *cmd, uint8_t *buf, uint32_t *size)
{
	uint8_t lid = cmd->cdw10 & 0xffu;

	*size = 0;
	if (c->opts.fdp == 0) {
		return EMU_ST_OK;
	}
	if ((cmd->cdw11 >> 16) != EMU_FDP_ENDGID) {
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	switch (lid) {
	case NVME_LOG_FDP_CONFIGS:
		*size = build_configs(c, buf);
		break;
	case NVME_LOG_FDP_RUH_USAGE:
		*size = build_usage(c, buf);
		break;
	case NVME_LOG_FDP_STATS:
		*size = build_stats(c, buf);
		break;
	case NVME_LOG_FDP_EVENTS:
		*size = build_events(c, (cmd->cdw10 >> 8) & 0xfu, buf);
		break;
	default:
		break;
	}
	return EMU_ST_OK;
}

/* ---- writes ---- */

static void
event_add(struct emu_ctrlr *c, uint8_t type, uint32_t nsid, uint16_t pid)
{
	struct emu_fdp *f = &c->fdp;
	struct nvme_fdp_event *e;
	uint64_t ms = nvp_ticks_to_ms(nvp_env_get_ticks() - c->create_ticks, c->ticks_hz);

	if (f->ev_count == EMU_FDP_MAX_EVENTS) {
		f->ev_first = (f->ev_first + 1) % EMU_FDP_MAX_EVENTS; /* drop the oldest */
		f->ev_count--;
	}
	e = &f->events[(f->ev_first + f->ev_count++) % EMU_FDP_MAX_EVENTS];
	memset(e, 0, sizeof(*e));
	e->type = type;
	e->flags = NVME_FDP_EVT_F_PIV | NVME_FDP_EVT_F_NSIDV;
	e->pid = pid;
	memcpy(e->timestamp, &ms, 6);
	e->nsid = nsid;
}

/*
 * The reclaim unit handle (= FTL open block) of a write with DTYPE 2 and placement
 * identifier @pid. \return OK, or Invalid Field while FDP is disabled.
 */
uint16_t
emu_fdp_write_pid(struct emu_ctrlr *c, struct emu_ns *ns, uint16_t pid, uint32_t *stream)
{
	if (!emu_fdp_dir_enabled(c)) {
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	EMU_STAT_ADD(c, placement_writes, 1);
	if (pid >= c->opts.fdp) { /* RGIF 0: reclaim group 0 only, handle = pid */
		event_add(c, NVME_FDP_EVT_INVALID_PID, ns->nsid, pid);
		pid = 0;
	}
	*stream = pid;
	return EMU_ST_OK;
}

/* ---- I/O Management Receive / Send ---- */

static struct emu_ns *
mgmt_ns(struct emu_ctrlr *c, uint32_t nsid)
{
	return nsid == 0 || nsid > c->nn ? NULL : &c->ns[nsid - 1];
}

static void
build_ruh_status(const struct emu_ctrlr *c, const struct emu_ns *ns, uint8_t *buf)
{
	struct nvme_fdp_ruh_status *h = (void *)buf;
	struct nvme_fdp_ruh_status_desc *d = (void *)(buf + sizeof(*h));
	uint32_t blocks_per_page = 1u << (EMU_FTL_PAGE_SHIFT - ns->lba_shift);

	h->nruhsd = (uint16_t)c->opts.fdp;
	for (uint32_t i = 0; i < c->opts.fdp; i++) {
		uint32_t room = ns->ftl != NULL ? emu_ftl_open_room(ns->ftl, i) : c->opts.ftl_ppb;

		d[i].pid = (uint16_t)i;
		d[i].ruhid = (uint16_t)i;
		d[i].ruamw = (uint64_t)room * blocks_per_page;
	}
}

/* CDW10 MO 7:0 (1 = RUH Status), CDW11 NUMD (0's based). */
uint16_t
emu_fdp_io_mgmt_recv(struct emu_ctrlr *c, const struct nvme_cmd *cmd)
{
	_Alignas(8) uint8_t buf[FDP_BUF_SIZE];
	struct emu_ns *ns = mgmt_ns(c, cmd->nsid);
	uint64_t len = ((uint64_t)cmd->cdw11 + 1u) * 4u;
	uint16_t st;

	if (c->opts.fdp == 0) {
		return EMU_GEN(NVME_SC_INVALID_OPCODE);
	}
	if (ns == NULL) {
		return EMU_GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT);
	}
	if ((cmd->cdw10 & 0xffu) != NVME_IO_MGMT_RECV_RUH_STATUS || !c->fdp.enabled) {
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	memset(buf, 0, sizeof(buf));
	build_ruh_status(c, ns, buf);
	st = emu_map_data(c, cmd, len);
	if (st == EMU_ST_OK) {
		/* bytes past the structure read as zeroes, up to the buffer; past it untouched */
		emu_sgl_to_host(&c->sgl, buf, NVP_MIN(len, (uint64_t)FDP_BUF_SIZE));
	}
	return st;
}

/* CDW10 MO 7:0 (1 = RUH Update), MOS 31:16 = placement identifiers - 1, listed in data. */
uint16_t
emu_fdp_io_mgmt_send(struct emu_ctrlr *c, const struct nvme_cmd *cmd)
{
	uint16_t pids[EMU_FTL_MAX_STREAMS];
	struct emu_ns *ns = mgmt_ns(c, cmd->nsid);
	uint32_t n = (cmd->cdw10 >> 16) + 1u;
	uint16_t st;

	if (c->opts.fdp == 0) {
		return EMU_GEN(NVME_SC_INVALID_OPCODE);
	}
	if (ns == NULL) {
		return EMU_GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT);
	}
	if ((cmd->cdw10 & 0xffu) != NVME_IO_MGMT_SEND_RUH_UPDATE || !c->fdp.enabled ||
	    n > c->opts.fdp) {
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	st = emu_map_data(c, cmd, n * sizeof(pids[0]));
	if (st != EMU_ST_OK) {
		return st;
	}
	emu_sgl_from_host(&c->sgl, pids, n * sizeof(pids[0]));
	for (uint32_t i = 0; i < n; i++) {
		if (pids[i] >= c->opts.fdp) {
			return EMU_GEN(NVME_SC_INVALID_FIELD); /* nothing updated */
		}
	}
	for (uint32_t i = 0; i < n && ns->ftl != NULL; i++) {
		(void)emu_ftl_close_stream(ns->ftl, pids[i]);
	}
	return EMU_ST_OK;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Admin command set (NVMe 1.4, section 5): identify, features, queue management, abort,
 * format. Log pages and async events live in emu_log.c, firmware in emu_fw.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

#define NSID_ALL 0xffffffffu
#define EMU_RAB 3u /* recommended arbitration burst: 8 commands */

/* ---- identify (section 5.15) ---- */

static void
put_le(uint8_t *p, uint64_t v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		p[i] = (uint8_t)(v >> (8 * i));
	}
}

static void
identify_ctrlr_ids(const struct emu_ctrlr *c, struct nvme_ctrlr_data *cd)
{
	char sn[32], nqn[sizeof(cd->subnqn)];
	uint32_t h = nvp_crc32c(~0u, c->opts.name, strlen(c->opts.name));

	cd->vid = EMU_PCI_VID;
	cd->ssvid = EMU_PCI_VID;
	snprintf(sn, sizeof(sn), "EMU%08X%.9s", h, c->opts.name);
	nvp_strpad(cd->sn, sn, sizeof(cd->sn), ' ');
	nvp_strpad(cd->mn, EMU_MODEL, sizeof(cd->mn), ' ');
	memcpy(cd->fr, c->fw_rev[c->fw_active - 1], sizeof(cd->fr));
	put_le(cd->ieee, EMU_IEEE_OUI, 3);
	snprintf(nqn, sizeof(nqn), "%s%s", EMU_SUBNQN_PREFIX, c->opts.name);
	nvp_strlcpy(cd->subnqn, nqn, sizeof(cd->subnqn));
}

static void
identify_ctrlr(const struct emu_ctrlr *c, struct nvme_ctrlr_data *cd)
{
	uint64_t cap = c->opts.ns_size * c->nn;

	identify_ctrlr_ids(c, cd);
	cd->rab = EMU_RAB;
	cd->mdts = (uint8_t)c->opts.mdts;
	cd->cntlid = c->cntlid;
	cd->ver = NVME_VERSION(1, 4, 0);
	cd->cntrltype = 1; /* I/O controller */
	cd->oacs = NVME_OACS_FORMAT | NVME_OACS_FIRMWARE |
		   (c->opts.dbbuf ? NVME_OACS_DOORBELL_BUFFER_CONFIG : 0);
	if (c->opts.streams != 0) {
		cd->oacs |= NVME_OACS_DIRECTIVES; /* emu_dir.c */
	}
	emu_fdp_identify_ctrlr(c, cd); /* CTRATT.FDPS, ENDGIDMAX */
	cd->acl = EMU_ACL;
	cd->aerl = EMU_AERL;
	cd->frmw = (uint8_t)(NVME_FRMW_SLOT1_RO | (c->opts.fw_slots << NVME_FRMW_NUM_SLOTS_SHIFT));
	cd->lpa = NVME_LPA_EXTENDED_DATA;
	cd->elpe = EMU_ELPE;
	cd->npss = 0;
	cd->wctemp = EMU_WCTEMP;
	cd->cctemp = EMU_CCTEMP;
	cd->tnvmcap[0] = cap;
	cd->fwug = 0xff; /* no download granularity restriction */
	cd->sqes = 0x66;
	cd->cqes = 0x44;
	cd->nn = c->nn;
	cd->oncs = NVME_ONCS_COMPARE | NVME_ONCS_DSM | NVME_ONCS_WRITE_ZEROES;
	/* bit 0 present, bits 2:1 = 11b: Flush supports NSID FFFFFFFFh (1.4, figure 247) */
	cd->vwc = c->opts.vwc ? 0x7 : 0;
	cd->sgls = 0;
	cd->psd[0].mp = 900; /* 9 W */
}

static void
identify_ns(const struct emu_ns *ns, struct nvme_ns_data *nd)
{
	nd->nsze = ns->nsze;
	nd->ncap = ns->nsze;
	nd->nuse = ns->nsze;
	nd->nlbaf = 1;
	nd->flbas = ns->lbaf;
	nd->lbaf[0].lbads = 9;
	nd->lbaf[0].rp = 1;
	nd->lbaf[1].lbads = 12;
	nd->lbaf[1].rp = 0;
	if (ns->ms_opt != 0) {
		/* The same sizes with metadata; MC: extended and separate both supported. */
		nd->nlbaf = 3;
		nd->lbaf[2].lbads = 9;
		nd->lbaf[2].ms = ns->ms_opt;
		nd->lbaf[2].rp = 1;
		nd->lbaf[3].lbads = 12;
		nd->lbaf[3].ms = ns->ms_opt;
		nd->mc = 0x3;
		nd->flbas |= ns->mset && ns->ms != 0 ? NVME_FLBAS_EXTENDED : 0;
	}
	/* deallocated blocks read as zeroes; Write Zeroes honours DEAC */
	nd->dlfeat = NVME_DLFEAT_READ_ZEROES | (1u << 3);
	nd->nvmcap[0] = ns->size;
	memcpy(nd->nguid, ns->nguid, sizeof(nd->nguid));
	memcpy(nd->eui64, ns->eui64, sizeof(nd->eui64));
}

static void
identify_active_ns(const struct emu_ctrlr *c, uint32_t start, struct nvme_ns_list *list)
{
	uint32_t n = 0;

	for (uint32_t nsid = start + 1; nsid <= c->nn && n < NVP_COUNTOF(list->ns_list); nsid++) {
		list->ns_list[n++] = nsid;
	}
}

/* Namespace identification descriptors (CNS 03h): EUI64 then NGUID. */
static void
identify_ns_desc(const struct emu_ns *ns, uint8_t *buf)
{
	buf[0] = 0x1; /* NIDT EUI64 */
	buf[1] = 8;
	memcpy(&buf[4], ns->eui64, 8);
	buf[12] = 0x2; /* NIDT NGUID */
	buf[13] = 16;
	memcpy(&buf[16], ns->nguid, 16);
}

static struct emu_ns *
ns_lookup(struct emu_ctrlr *c, uint32_t nsid)
{
	if (nsid == 0 || nsid > c->nn) {
		return NULL;
	}
	return &c->ns[nsid - 1];
}

static uint16_t
admin_identify(struct emu_ctrlr *c, const struct nvme_cmd *cmd)
{
	union {
		uint8_t raw[4096];
		struct nvme_ctrlr_data cd;
		struct nvme_ns_data nd;
		struct nvme_ns_list list;
	} buf;
	struct emu_ns *ns = ns_lookup(c, cmd->nsid);
	uint16_t st;

	memset(&buf, 0, sizeof(buf));
	switch (cmd->cdw10 & 0xff) {
	case NVME_IDENTIFY_NS:
	case NVME_IDENTIFY_NS_ID_DESCRIPTOR_LIST:
		if (ns == NULL) {
			return EMU_GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT);
		}
		if ((cmd->cdw10 & 0xff) == NVME_IDENTIFY_NS) {
			identify_ns(ns, &buf.nd);
			emu_fdp_identify_ns(c, &buf.nd);
		} else {
			identify_ns_desc(ns, buf.raw);
		}
		break;
	case NVME_IDENTIFY_CTRLR:
		identify_ctrlr(c, &buf.cd);
		break;
	case NVME_IDENTIFY_ACTIVE_NS_LIST:
		if (cmd->nsid >= 0xfffffffeu) {
			return EMU_GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT);
		}
		identify_active_ns(c, cmd->nsid, &buf.list);
		break;
	default:
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	st = emu_map_data(c, cmd, sizeof(buf));
	if (st == EMU_ST_OK) {
		emu_sgl_to_host(&c->sgl, buf.raw, sizeof(buf));
	}
	return st;
}

/* ---- features (section 5.21) ---- */

void
emu_features_reset(struct emu_ctrlr *c)
{
	struct emu_features *f = &c->feat;

	memset(f, 0, sizeof(*f));
	f->arbitration = EMU_RAB;
	f->temp_over = EMU_WCTEMP;
	f->temp_under = 0;
	f->wce = c->opts.vwc ? 1 : 0;
	f->nsq = (uint16_t)c->opts.max_queues;
	f->ncq = (uint16_t)c->opts.max_queues;
	c->burst = 1u << EMU_RAB;
	c->smart.critical_warning &= (uint8_t)~NVME_CRIT_WARN_TEMPERATURE;
}

static bool
io_queues_exist(const struct emu_ctrlr *c)
{
	for (uint32_t q = 1; q <= c->opts.max_queues; q++) {
		if (c->sqs[q].valid || c->cqs[q].valid) {
			return true;
		}
	}
	return false;
}

static uint16_t
feat_temp_get(const struct emu_ctrlr *c, uint32_t cdw11, bool dflt, uint32_t *val)
{
	union nvme_feat_temperature_threshold t = { .raw = cdw11 };
	uint16_t th;

	if ((t.bits.tmpsel != 0 && t.bits.tmpsel != 0xf) || t.bits.thsel > 1) {
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	if (t.bits.thsel == 0) {
		th = dflt ? EMU_WCTEMP : c->feat.temp_over;
	} else {
		th = dflt ? 0 : c->feat.temp_under;
	}
	t.bits.tmpth = th;
	*val = t.raw;
	return EMU_ST_OK;
}

static uint16_t
feat_temp_set(struct emu_ctrlr *c, uint32_t cdw11)
{
	union nvme_feat_temperature_threshold t = { .raw = cdw11 };

	if ((t.bits.tmpsel != 0 && t.bits.tmpsel != 0xf) || t.bits.thsel > 1) {
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	if (t.bits.thsel == 0) {
		c->feat.temp_over = (uint16_t)t.bits.tmpth;
	} else {
		c->feat.temp_under = (uint16_t)t.bits.tmpth;
	}
	emu_temp_update(c);
	return EMU_ST_OK;
}

static uint16_t
feat_nq_set(struct emu_ctrlr *c, uint32_t cdw11, uint32_t *cdw0)
{
	union nvme_feat_number_of_queues nq = { .raw = cdw11 };

	if (nq.bits.nsqr == 0xffff || nq.bits.ncqr == 0xffff) {
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	/* Once per reset, before any I/O queue exists (section 5.21.1.7). */
	if (c->feat.nq_set || io_queues_exist(c)) {
		return EMU_GEN(NVME_SC_COMMAND_SEQUENCE_ERROR);
	}
	c->feat.nsq = (uint16_t)NVP_MIN(nq.bits.nsqr + 1u, c->opts.max_queues);
	c->feat.ncq = (uint16_t)NVP_MIN(nq.bits.ncqr + 1u, c->opts.max_queues);
	c->feat.nq_set = true;
	*cdw0 = ((uint32_t)(c->feat.ncq - 1) << 16) | (uint32_t)(c->feat.nsq - 1);
	return EMU_ST_OK;
}

/* Current (or default) value of a feature. */
static uint16_t
feat_get_value(const struct emu_ctrlr *c, uint8_t fid, uint32_t cdw11, bool dflt, uint32_t *val)
{
	const struct emu_features *f = &c->feat;
	uint32_t mq = c->opts.max_queues - 1;

	switch (fid) {
	case NVME_FEAT_ARBITRATION:
		*val = dflt ? EMU_RAB : f->arbitration;
		return EMU_ST_OK;
	case NVME_FEAT_POWER_MANAGEMENT:
		*val = dflt ? 0 : f->power_mgmt;
		return EMU_ST_OK;
	case NVME_FEAT_TEMPERATURE_THRESHOLD:
		return feat_temp_get(c, cdw11, dflt, val);
	case NVME_FEAT_FDP:
		return emu_fdp_get_feature(c, cdw11, dflt, val);
	case NVME_FEAT_ERROR_RECOVERY:
		*val = dflt ? 0 : f->err_recovery;
		return EMU_ST_OK;
	case NVME_FEAT_VOLATILE_WRITE_CACHE:
		if (!c->opts.vwc) {
			return EMU_GEN(NVME_SC_INVALID_FIELD);
		}
		*val = dflt ? 1 : f->wce;
		return EMU_ST_OK;
	case NVME_FEAT_NUMBER_OF_QUEUES:
		*val = dflt ? (mq << 16 | mq) : ((uint32_t)(f->ncq - 1) << 16 | (f->nsq - 1u));
		return EMU_ST_OK;
	case NVME_FEAT_INTERRUPT_COALESCING:
		*val = dflt ? 0 : f->int_coalescing;
		return EMU_ST_OK;
	case NVME_FEAT_INTERRUPT_VECTOR_CONFIGURATION:
		if ((cdw11 & 0xffff) > c->opts.max_queues) {
			return EMU_GEN(NVME_SC_INVALID_FIELD);
		}
		*val = (cdw11 & 0xffff) | (dflt ? 0 : (f->int_vector_cfg & 0x10000u));
		return EMU_ST_OK;
	case NVME_FEAT_WRITE_ATOMICITY:
		*val = dflt ? 0 : f->write_atomicity;
		return EMU_ST_OK;
	case NVME_FEAT_ASYNC_EVENT_CONFIGURATION:
		*val = dflt ? 0 : f->aec;
		return EMU_ST_OK;
	default:
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
}

static uint16_t
feat_set_simple(struct emu_ctrlr *c, uint8_t fid, uint32_t cdw11)
{
	struct emu_features *f = &c->feat;

	switch (fid) {
	case NVME_FEAT_ARBITRATION: {
		union nvme_feat_arbitration a = { .raw = cdw11 };

		f->arbitration = cdw11;
		c->burst = a.bits.ab == 7 ? UINT32_MAX : 1u << a.bits.ab;
		return EMU_ST_OK;
	}
	case NVME_FEAT_POWER_MANAGEMENT:
		if ((cdw11 & 0x1f) != 0) { /* only power state 0 (NPSS = 0) */
			return EMU_GEN(NVME_SC_INVALID_FIELD);
		}
		f->power_mgmt = cdw11 & 0xff;
		return EMU_ST_OK;
	case NVME_FEAT_ERROR_RECOVERY:
		if (cdw11 & (1u << 16)) { /* DULBE needs NSFEAT bit 2 */
			return EMU_GEN(NVME_SC_INVALID_FIELD);
		}
		f->err_recovery = cdw11 & 0xffff;
		return EMU_ST_OK;
	case NVME_FEAT_VOLATILE_WRITE_CACHE:
		if (!c->opts.vwc) {
			return EMU_GEN(NVME_SC_INVALID_FIELD);
		}
		f->wce = cdw11 & 1u;
		return EMU_ST_OK;
	case NVME_FEAT_INTERRUPT_COALESCING:
		f->int_coalescing = cdw11 & 0xffff;
		return EMU_ST_OK;
	case NVME_FEAT_INTERRUPT_VECTOR_CONFIGURATION:
		if ((cdw11 & 0xffff) > c->opts.max_queues) {
			return EMU_GEN(NVME_SC_INVALID_FIELD);
		}
		f->int_vector_cfg = cdw11 & 0x1ffffu;
		return EMU_ST_OK;
	case NVME_FEAT_WRITE_ATOMICITY:
		f->write_atomicity = cdw11 & 1u;
		return EMU_ST_OK;
	case NVME_FEAT_ASYNC_EVENT_CONFIGURATION:
		f->aec = cdw11 & 0x3ffu;
		emu_temp_update(c);
		return EMU_ST_OK;
	default:
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
}

static bool
feat_supported(const struct emu_ctrlr *c, uint8_t fid)
{
	switch (fid) {
	case NVME_FEAT_ARBITRATION:
	case NVME_FEAT_POWER_MANAGEMENT:
	case NVME_FEAT_TEMPERATURE_THRESHOLD:
	case NVME_FEAT_ERROR_RECOVERY:
	case NVME_FEAT_NUMBER_OF_QUEUES:
	case NVME_FEAT_INTERRUPT_COALESCING:
	case NVME_FEAT_INTERRUPT_VECTOR_CONFIGURATION:
	case NVME_FEAT_WRITE_ATOMICITY:
	case NVME_FEAT_ASYNC_EVENT_CONFIGURATION:
		return true;
	case NVME_FEAT_VOLATILE_WRITE_CACHE:
		return c->opts.vwc;
	case NVME_FEAT_FDP:
		return c->opts.fdp != 0;
	default:
		return false;
	}
}

static uint16_t
admin_set_features(struct emu_ctrlr *c, const struct nvme_cmd *cmd, uint32_t *cdw0)
{
	uint8_t fid = cmd->cdw10 & 0xff;

	if (!feat_supported(c, fid)) {
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	if (cmd->cdw10 & (1u << 31)) { /* SV: nothing is saveable */
		return EMU_CS(NVME_SC_FEATURE_ID_NOT_SAVEABLE);
	}
	switch (fid) {
	case NVME_FEAT_NUMBER_OF_QUEUES:
		return feat_nq_set(c, cmd->cdw11, cdw0);
	case NVME_FEAT_TEMPERATURE_THRESHOLD:
		return feat_temp_set(c, cmd->cdw11);
	case NVME_FEAT_FDP:
		return emu_fdp_set_feature(c, cmd->cdw11, cmd->cdw12);
	default:
		return feat_set_simple(c, fid, cmd->cdw11);
	}
}

static uint16_t
admin_get_features(struct emu_ctrlr *c, const struct nvme_cmd *cmd, uint32_t *cdw0)
{
	uint8_t fid = cmd->cdw10 & 0xff;
	uint32_t sel = (cmd->cdw10 >> 8) & 0x7;
	uint16_t st;

	switch (sel) {
	case NVME_FEAT_SEL_CURRENT:
		return feat_get_value(c, fid, cmd->cdw11, false, cdw0);
	case NVME_FEAT_SEL_DEFAULT:
	case NVME_FEAT_SEL_SAVED: /* saving is not supported: saved = default */
		return feat_get_value(c, fid, cmd->cdw11, true, cdw0);
	case NVME_FEAT_SEL_SUPPORTED:
		st = feat_get_value(c, fid, cmd->cdw11, true, cdw0);
		/* capabilities: bit 2 changeable, bit 1 namespace specific, bit 0 saveable */
		*cdw0 = st == EMU_ST_OK ? (1u << 2) : 0;
		return st;
	default:
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
}

/* ---- queue management (sections 5.3-5.7) ---- */

/* Translate a queue's base: page aligned (PC = 1 only) and DMA memory. */
static uint16_t
queue_base(struct emu_ctrlr *c, uint64_t prp1, uint64_t bytes, void **va)
{
	if (prp1 == 0 || (prp1 & (c->page_size - 1)) != 0) {
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	*va = nvp_env_iova_to_vaddr(prp1, bytes);
	if (*va == NULL) {
		EMU_STAT_ADD(c, dma_rejects, 1);
		return EMU_GEN(NVME_SC_DATA_TRANSFER_ERROR);
	}
	return EMU_ST_OK;
}

static uint16_t
check_new_queue(const struct emu_ctrlr *c, uint32_t qid, uint32_t granted, bool in_use,
		uint32_t qsize_0s, uint32_t cdw11)
{
	if (qid == 0 || qid > granted || in_use) {
		return EMU_CS(NVME_SC_INVALID_QUEUE_IDENTIFIER);
	}
	if (qsize_0s == 0 || qsize_0s > c->opts.mqes) {
		return EMU_CS(NVME_SC_INVALID_QUEUE_SIZE);
	}
	if (!(cdw11 & NVME_CREATE_IO_CQ_PC)) { /* CAP.CQR = 1 */
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	return EMU_ST_OK;
}

static uint16_t
admin_create_cq(struct emu_ctrlr *c, const struct nvme_cmd *cmd)
{
	uint32_t qid = cmd->cdw10 & 0xffff, qs = cmd->cdw10 >> 16;
	bool in_use = qid <= c->opts.max_queues && c->cqs[qid].valid;
	struct emu_cq *cq;
	uint16_t st;
	void *va;

	st = check_new_queue(c, qid, c->feat.ncq, in_use, qs, cmd->cdw11);
	if (st != EMU_ST_OK) {
		return st;
	}
	if ((cmd->cdw11 & NVME_CREATE_IO_CQ_IEN) && (cmd->cdw11 >> 16) > c->opts.max_queues) {
		return EMU_CS(NVME_SC_INVALID_INTERRUPT_VECTOR);
	}
	st = queue_base(c, cmd->dptr.prp.prp1, (uint64_t)(qs + 1) * sizeof(struct nvme_cpl), &va);
	if (st != EMU_ST_OK) {
		return st;
	}
	cq = &c->cqs[qid];
	cq->base = va;
	cq->iova = cmd->dptr.prp.prp1;
	cq->size = qs + 1;
	cq->head = cq->tail = cq->db_last = 0;
	cq->phase = 1;
	cq->nsq = 0;
	cq->dup_pending = false;
	cq->ien = (cmd->cdw11 & NVME_CREATE_IO_CQ_IEN) != 0;
	cq->iv = (uint16_t)(cmd->cdw11 >> 16);
	*cq->db = 0;
	emu_dbbuf_attach(c, qid);
	cq->valid = true;
	return EMU_ST_OK;
}

static uint16_t
admin_create_sq(struct emu_ctrlr *c, const struct nvme_cmd *cmd)
{
	uint32_t qid = cmd->cdw10 & 0xffff, qs = cmd->cdw10 >> 16;
	uint32_t cqid = cmd->cdw11 >> NVME_CREATE_IO_SQ_CQID_SHIFT;
	bool in_use = qid <= c->opts.max_queues && c->sqs[qid].valid;
	struct emu_sq *sq;
	uint16_t st;
	void *va;

	st = check_new_queue(c, qid, c->feat.nsq, in_use, qs, cmd->cdw11);
	if (st != EMU_ST_OK) {
		return st;
	}
	if (cqid == 0 || cqid > c->opts.max_queues || !c->cqs[cqid].valid) {
		return EMU_CS(NVME_SC_COMPLETION_QUEUE_INVALID);
	}
	st = queue_base(c, cmd->dptr.prp.prp1, (uint64_t)(qs + 1) * sizeof(struct nvme_cmd), &va);
	if (st != EMU_ST_OK) {
		return st;
	}
	sq = &c->sqs[qid];
	sq->skip = calloc(qs + 1, 1);
	if (sq->skip == NULL) {
		return EMU_GEN(NVME_SC_INTERNAL_DEVICE_ERROR);
	}
	sq->base = va;
	sq->iova = cmd->dptr.prp.prp1;
	sq->size = qs + 1;
	sq->head = sq->tail = sq->db_last = 0;
	sq->inflight = 0;
	sq->cqid = (uint16_t)cqid;
	sq->qprio = (cmd->cdw11 >> NVME_CREATE_IO_SQ_QPRIO_SHIFT) & 0x3;
	sq->deleting = false;
	*sq->db = 0;
	emu_dbbuf_attach(c, qid);
	sq->valid = true;
	c->cqs[cqid].nsq++;
	emu_sq_list_rebuild(c);
	return EMU_ST_OK;
}

static uint16_t
admin_delete_cq(struct emu_ctrlr *c, const struct nvme_cmd *cmd)
{
	uint32_t qid = cmd->cdw10 & 0xffff;
	struct emu_cq *cq;

	if (qid == 0 || qid > c->opts.max_queues || !c->cqs[qid].valid) {
		return EMU_CS(NVME_SC_INVALID_QUEUE_IDENTIFIER);
	}
	cq = &c->cqs[qid];
	if (cq->nsq > 0) {
		return EMU_CS(NVME_SC_INVALID_QUEUE_DELETION);
	}
	cq->valid = false;
	cq->base = NULL;
	*cq->db = 0;
	cq->db_last = 0;
	return EMU_ST_OK;
}

static enum emu_exec_result
admin_delete_sq(struct emu_ctrlr *c, uint16_t idx)
{
	struct emu_cmd *s = &c->slots[idx];
	uint32_t qid = s->cmd.cdw10 & 0xffff;

	if (qid == 0 || qid > c->opts.max_queues || !c->sqs[qid].valid || c->sqs[qid].deleting) {
		s->st = EMU_CS(NVME_SC_INVALID_QUEUE_IDENTIFIER);
		return EMU_EXEC_DONE;
	}
	emu_sq_delete_start(c, &c->sqs[qid], idx);
	return EMU_EXEC_HELD;
}

/* ---- abort (section 5.1) ---- */

static uint16_t
admin_abort(struct emu_ctrlr *c, struct emu_cmd *s)
{
	uint16_t sqid = s->cmd.cdw10 & 0xffff;
	uint16_t cid = (uint16_t)(s->cmd.cdw10 >> 16);

	if (c->aborts_outstanding >= EMU_ACL + 1) {
		return EMU_CS(NVME_SC_ABORT_COMMAND_LIMIT_EXCEEDED);
	}
	c->aborts_outstanding++;
	s->flags |= EMU_SLOT_F_ABORT;
	s->cdw0 = NVME_ABORT_CPL_NOT_ABORTED;
	if (emu_sq_abort_waiting(c, sqid, cid) == 0) {
		s->cdw0 = 0;
	}
	return EMU_ST_OK;
}

/* ---- format NVM (section 5.23) ---- */

static uint16_t
format_one(struct emu_ns *ns, uint8_t lbaf, bool mset)
{
	if (lbaf > 1 && ns->ms_opt == 0) {
		return EMU_CS(NVME_SC_INVALID_FORMAT);
	}
	if (ns->ops->zero(ns, 0, ns->size) != 0) {
		return EMU_GEN(NVME_SC_INTERNAL_DEVICE_ERROR);
	}
	if (lbaf > 1) {
		ns->mset = mset;
	}
	emu_ns_set_format(ns, lbaf);
	if (ns->ftl != NULL) {
		emu_ftl_reset(ns->ftl); /* every block deallocated */
	}
	return EMU_ST_OK;
}

static uint16_t
admin_format(struct emu_ctrlr *c, const struct nvme_cmd *cmd)
{
	union nvme_format_cdw10 f = { .raw = cmd->cdw10 };
	uint16_t st = EMU_ST_OK;

	if (cmd->nsid != NSID_ALL && ns_lookup(c, cmd->nsid) == NULL) {
		return EMU_GEN(NVME_SC_INVALID_NAMESPACE_OR_FORMAT);
	}
	if (f.bits.lbaf > 3 || (f.bits.mset && f.bits.lbaf < 2) || f.bits.pi || f.bits.pil) {
		return EMU_CS(NVME_SC_INVALID_FORMAT);
	}
	if (f.bits.ses > 1) { /* no cryptographic erase */
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	for (uint32_t i = 0; i < c->nn && st == EMU_ST_OK; i++) {
		if (cmd->nsid == NSID_ALL || cmd->nsid == i + 1) {
			st = format_one(&c->ns[i], (uint8_t)f.bits.lbaf, f.bits.mset);
		}
	}
	return st;
}

/* ---- Doorbell Buffer Config (NVMe 1.3 section 5.7) ---- */

/*
 * PRP1: the shadow doorbell page, PRP2: the EventIdx page, each one memory page, page
 * aligned. From now on I/O queues take the host's doorbell values from the shadow page
 * and report what they have seen in the EventIdx page; the host rings MMIO only when
 * EventIdx asks for it.
 */
static uint16_t
admin_dbbuf_config(struct emu_ctrlr *c, const struct nvme_cmd *cmd)
{
	uint64_t db = cmd->dptr.prp.prp1, ei = cmd->dptr.prp.prp2;
	void *db_va, *ei_va;

	if (!c->opts.dbbuf) {
		return EMU_GEN(NVME_SC_INVALID_OPCODE);
	}
	if (db == 0 || ei == 0 || ((db | ei) & (c->page_size - 1)) != 0) {
		return EMU_GEN(NVME_SC_INVALID_FIELD);
	}
	db_va = nvp_env_iova_to_vaddr(db, c->page_size);
	ei_va = nvp_env_iova_to_vaddr(ei, c->page_size);
	if (db_va == NULL || ei_va == NULL) {
		EMU_STAT_ADD(c, dma_rejects, 1);
		return EMU_GEN(NVME_SC_DATA_TRANSFER_ERROR);
	}
	c->dbbuf_db = db_va;
	c->dbbuf_ei = ei_va;
	for (uint32_t q = 1; q <= c->opts.max_queues; q++) {
		emu_dbbuf_attach(c, q);
		/* Queues that exist already: the shadow starts where MMIO left them. */
		if (c->sqs[q].shadow != NULL && c->sqs[q].valid) {
			*c->sqs[q].shadow = c->sqs[q].db_last;
		}
		if (c->cqs[q].shadow != NULL && c->cqs[q].valid) {
			*c->cqs[q].shadow = c->cqs[q].db_last;
		}
	}
	return EMU_ST_OK;
}

/* ---- dispatch ---- */

static uint16_t
admin_dispatch(struct emu_ctrlr *c, struct emu_cmd *s)
{
	const struct nvme_cmd *cmd = &s->cmd;

	switch (cmd->opc) {
	case NVME_OPC_CREATE_IO_SQ:
		return admin_create_sq(c, cmd);
	case NVME_OPC_GET_LOG_PAGE:
		return emu_log_get_page(c, cmd);
	case NVME_OPC_DELETE_IO_CQ:
		return admin_delete_cq(c, cmd);
	case NVME_OPC_CREATE_IO_CQ:
		return admin_create_cq(c, cmd);
	case NVME_OPC_IDENTIFY:
		return admin_identify(c, cmd);
	case NVME_OPC_ABORT:
		return admin_abort(c, s);
	case NVME_OPC_SET_FEATURES:
		return admin_set_features(c, cmd, &s->cdw0);
	case NVME_OPC_GET_FEATURES:
		return admin_get_features(c, cmd, &s->cdw0);
	case NVME_OPC_FIRMWARE_COMMIT:
		return emu_fw_commit(c, cmd);
	case NVME_OPC_FIRMWARE_IMAGE_DOWNLOAD:
		return emu_fw_download(c, cmd);
	case NVME_OPC_FORMAT_NVM:
		return admin_format(c, cmd);
	case NVME_OPC_DIRECTIVE_SEND:
		return emu_dir_send(c, cmd);
	case NVME_OPC_DIRECTIVE_RECEIVE:
		return emu_dir_receive(c, cmd, &s->cdw0);
	case NVME_OPC_DOORBELL_BUFFER_CONFIG:
		return admin_dbbuf_config(c, cmd);
	default:
		return EMU_GEN(NVME_SC_INVALID_OPCODE);
	}
}

/* Execute the admin command in slot @idx. */
enum emu_exec_result
emu_admin_execute(struct emu_ctrlr *c, uint16_t idx)
{
	struct emu_cmd *s = &c->slots[idx];

	s->st = EMU_ST_OK;
	s->cdw0 = 0;
	if (s->cmd.fuse != 0 || s->cmd.psdt != NVME_PSDT_PRP) {
		/* no fused operations; admin commands use PRPs (section 4.2) */
		s->st = EMU_GEN(NVME_SC_INVALID_FIELD);
		return EMU_EXEC_DONE;
	}
	if (nvp_unlikely(c->afault_count != 0) && s->cmd.opc == (c->afault_arg >> 16)) {
		if (c->afault_skip > 0) {
			c->afault_skip--;
		} else {
			c->afault_count--;
			if (c->afault_type == NVP_EMU_FAULT_ADMIN_BAD_PHASE) {
				/* executed; its completion carries the old phase tag */
				s->flags |= EMU_SLOT_F_BAD_PHASE;
			} else {
				/* admin_error: refused, not executed (a status the host may
				 * retry) */
				s->st = (uint16_t)(c->afault_arg & 0x7ffu);
				return EMU_EXEC_DONE;
			}
		}
	}
	switch (s->cmd.opc) {
	case NVME_OPC_DELETE_IO_SQ:
		return admin_delete_sq(c, idx);
	case NVME_OPC_ASYNC_EVENT_REQUEST:
		return emu_aer_submit(c, idx);
	default:
		s->st = admin_dispatch(c, s);
		return EMU_EXEC_DONE;
	}
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flexible Data Placement (NVMe 2.0 TP4146): the host side.
 *
 * An FDP controller (CTRATT bit 19) writes a namespace's data through placement handles,
 * each referring to a reclaim unit handle: an open reclaim unit of the controller's
 * media, as a stream is an open erase block. FDP is configured per endurance group:
 * Get/Set Features FDP (1Dh, CDW11 = ENDGID) says whether it is enabled and with which
 * configuration of the FDP Configurations log (20h); the logs 20h-23h are read with
 * LSI = ENDGID. The placement identifiers a namespace may use come from I/O Management
 * Receive, Reclaim Unit Handle Status (an I/O command: the helpers below take a qpair,
 * or create and free a small one on the calling thread); a write carries one with
 * DTYPE 2 in CDW12 and the identifier in DSPEC (CDW13 31:16).
 *
 * Hints (nvme_dir.c) use FDP as Linux does (nvme_query_fdp_info): when the namespace's
 * endurance group has FDP enabled, the hint classes are spread over its placement
 * identifiers of reclaim group 0 other than placement handle 0, which is where writes
 * without a directive go. Nothing here enables FDP: that changes how the drive
 * arranges its media and is the administrator's choice (`nvp fdp enable`).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nvme_internal.h"

#define FDP_LOG_HDR_SIZE ((uint32_t)sizeof(struct nvme_fdp_config_log))
#define FDP_RUHS_BUF_SIZE 4096u /* header + 127 descriptors */
#define FDP_QPAIR_TIMEOUT_US 10000000u

bool
nvp_nvme_ctrlr_fdp_supported(const struct nvp_nvme_ctrlr *ctrlr)
{
	return ctrlr != NULL && (ctrlr->cdata.ctratt & NVME_CTRATT_FDPS) != 0;
}

uint16_t
nvp_nvme_ns_get_endgid(const struct nvp_nvme_ns *ns)
{
	return ns != NULL ? ns->data.endgid : 0;
}

int
nvp_nvme_ctrlr_fdp_get_log(struct nvp_nvme_ctrlr *ctrlr, uint8_t lid, uint16_t endgid, uint8_t lsp,
			   void *buf, uint32_t len, struct nvme_cpl *cpl)
{
	struct nvme_cmd cmd;
	uint32_t numd = len / 4u;

	if (ctrlr == NULL || buf == NULL || len == 0 || (len & 3u) != 0 || lsp > 0xfu) {
		return -EINVAL;
	}
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_GET_LOG_PAGE;
	cmd.cdw10 = NVME_GET_LOG_CDW10(lid, numd) | (uint32_t)lsp << 8;
	cmd.cdw11 = NVME_GET_LOG_CDW11(numd) | NVME_GET_LOG_CDW11_LSI(endgid);
	return nvp_nvme_ctrlr_cmd_admin_sync(ctrlr, &cmd, buf, len, cpl);
}

int
nvp_nvme_ctrlr_fdp_get_feature(struct nvp_nvme_ctrlr *ctrlr, uint16_t endgid, bool *enabled,
			       uint8_t *cfg_idx, struct nvme_cpl *cpl)
{
	uint32_t dw0 = 0;
	int rc;

	if (enabled == NULL) {
		return -EINVAL;
	}
	rc = nvp_nvme_ctrlr_get_feature(ctrlr, NVME_FEAT_FDP, NVME_FEAT_SEL_CURRENT, endgid, 0,
					&dw0, NULL, 0, cpl);
	*enabled = rc == 0 && NVME_FEAT_FDP_FDPE(dw0);
	if (cfg_idx != NULL) {
		*cfg_idx = rc == 0 ? NVME_FEAT_FDP_FDPCIDX(dw0) : 0;
	}
	return rc;
}

int
nvp_nvme_ctrlr_fdp_set_feature(struct nvp_nvme_ctrlr *ctrlr, uint16_t endgid, bool enable,
			       uint8_t cfg_idx, struct nvme_cpl *cpl)
{
	return nvp_nvme_ctrlr_set_feature(ctrlr, NVME_FEAT_FDP, endgid,
					  NVME_FEAT_FDP_CDW12(enable, cfg_idx), 0, false, NULL,
					  NULL, 0, cpl);
}

/* ---- parsing the FDP Configurations log ---- */

int
nvp_nvme_fdp_config_find(const void *log, size_t len, uint16_t idx,
			 struct nvme_fdp_config_desc *desc, size_t *offset)
{
	struct nvme_fdp_config_log h;
	const uint8_t *p = log;
	size_t off = FDP_LOG_HDR_SIZE, end;

	if (log == NULL || desc == NULL || len < FDP_LOG_HDR_SIZE) {
		return -EINVAL;
	}
	memcpy(&h, log, sizeof(h));
	/* the page says how long it is; the caller may have read less of it */
	end = h.size < FDP_LOG_HDR_SIZE ? 0 : NVP_MIN((size_t)h.size, len);
	for (uint32_t i = 0; i <= h.numfdpc; i++) {
		struct nvme_fdp_config_desc d;

		if (end < off + sizeof(d)) {
			return -EINVAL; /* truncated */
		}
		/* descriptors are DSZE bytes each: the next one need not be 8-byte aligned */
		memcpy(&d, p + off, sizeof(d));
		if (d.dsze < sizeof(d) || end - off < d.dsze ||
		    (size_t)d.nruh * sizeof(struct nvme_fdp_ruh_desc) > d.dsze - sizeof(d)) {
			return -EINVAL; /* inconsistent sizes */
		}
		if (i == idx) {
			*desc = d;
			if (offset != NULL) {
				*offset = off;
			}
			return 0;
		}
		off += d.dsze;
	}
	return -ENOENT;
}

/* Read the whole configurations log of @endgid into a buffer the caller frees. */
static int
read_configs(struct nvp_nvme_ctrlr *ctrlr, uint16_t endgid, uint8_t **out, uint32_t *len,
	     struct nvme_cpl *cpl)
{
	struct nvme_fdp_config_log h;
	uint32_t size;
	int rc;

	rc = nvp_nvme_ctrlr_fdp_get_log(ctrlr, NVME_LOG_FDP_CONFIGS, endgid, 0, &h, sizeof(h), cpl);
	if (rc != 0) {
		return rc;
	}
	size = (NVP_MAX(h.size, FDP_LOG_HDR_SIZE) + 3u) & ~3u;
	if (size > ctrlr->max_xfer_size) {
		return -EINVAL;
	}
	*out = calloc(1, size);
	if (*out == NULL) {
		return -ENOMEM;
	}
	rc = nvp_nvme_ctrlr_fdp_get_log(ctrlr, NVME_LOG_FDP_CONFIGS, endgid, 0, *out, size, cpl);
	if (rc != 0) {
		free(*out);
		*out = NULL;
	}
	*len = size;
	return rc;
}

int
nvp_nvme_ctrlr_fdp_get_config(struct nvp_nvme_ctrlr *ctrlr, uint16_t endgid, uint16_t idx,
			      struct nvme_fdp_config_desc *out, struct nvme_cpl *cpl)
{
	uint8_t *log = NULL;
	uint32_t len = 0;
	int rc;

	if (ctrlr == NULL || out == NULL) {
		return -EINVAL;
	}
	rc = read_configs(ctrlr, endgid, &log, &len, cpl);
	if (rc == 0) {
		rc = nvp_nvme_fdp_config_find(log, len, idx, out, NULL);
	}
	free(log);
	return rc;
}

/* ---- I/O Management Receive / Send, synchronously ---- */

struct sync_io {
	bool done;
	struct nvme_cpl cpl;
};

static void
sync_io_done(void *arg, const struct nvme_cpl *cpl)
{
	struct sync_io *s = arg;

	s->cpl = *cpl;
	s->done = true;
}

static int
temp_qpair(struct nvp_nvme_ctrlr *ctrlr, struct nvp_nvme_qpair **qpair)
{
	struct nvp_nvme_io_qpair_opts o;

	nvp_nvme_ctrlr_get_default_io_qpair_opts(ctrlr, &o, sizeof(o));
	o.io_queue_size = 2;
	o.io_queue_requests = 2;
	o.timeout_us = FDP_QPAIR_TIMEOUT_US; /* a lost completion ends in the timeout path */
	o.interrupts = false;
	return nvp_nvme_ctrlr_alloc_io_qpair(ctrlr, &o, qpair);
}

/* Run @cmd on @qpair (NULL: a temporary one) with @len bytes of DMA bounce for @buf. */
static int
io_sync(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, const struct nvme_cmd *cmd, void *buf,
	uint32_t len, bool to_host, struct nvme_cpl *cpl)
{
	struct nvp_nvme_qpair *q = qpair;
	struct sync_io s = { .done = false };
	void *dma;
	int rc = 0;

	dma = nvp_env_dma_zmalloc(len, 4096, NULL);
	if (dma == NULL) {
		return -ENOMEM;
	}
	if (!to_host) {
		memcpy(dma, buf, len);
	}
	if (q == NULL) {
		rc = temp_qpair(ns->ctrlr, &q);
	}
	if (rc == 0) {
		rc = nvp_nvme_ctrlr_cmd_io_raw(ns->ctrlr, q, cmd, dma, len, sync_io_done, &s);
	}
	while (rc == 0 && !s.done) {
		int32_t n = nvp_nvme_qpair_process_completions(q, 0);

		rc = n < 0 ? (int)n : 0;
	}
	if (rc == 0 && nvme_cpl_is_error(&s.cpl)) {
		rc = -EIO;
	} else if (rc == 0 && to_host) {
		memcpy(buf, dma, len);
	}
	if (cpl != NULL) {
		*cpl = s.cpl;
	}
	if (q != NULL && q != qpair) {
		(void)nvp_nvme_ctrlr_free_io_qpair(q);
	}
	nvp_env_dma_free(dma);
	return rc;
}

int
nvp_nvme_ns_fdp_ruh_status(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, void *buf,
			   uint32_t len, struct nvme_cpl *cpl)
{
	struct nvme_cmd cmd;

	if (ns == NULL || !ns->active || buf == NULL || len < sizeof(struct nvme_fdp_ruh_status) ||
	    (len & 3u) != 0) {
		return -EINVAL;
	}
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_IO_MGMT_RECEIVE;
	cmd.nsid = ns->id;
	cmd.cdw10 = NVME_IO_MGMT_CDW10(NVME_IO_MGMT_RECV_RUH_STATUS, 0);
	cmd.cdw11 = len / 4u - 1u; /* NUMD, 0's based */
	return io_sync(ns, qpair, &cmd, buf, len, true, cpl);
}

int
nvp_nvme_ns_fdp_ruh_update(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair,
			   const uint16_t *pids, uint32_t npids, struct nvme_cpl *cpl)
{
	uint16_t list[NVP_NVME_FDP_MAX_UPDATE];
	struct nvme_cmd cmd;
	uint32_t len = (npids * 2u + 3u) & ~3u;

	if (ns == NULL || !ns->active || pids == NULL || npids == 0 ||
	    npids > NVP_NVME_FDP_MAX_UPDATE) {
		return -EINVAL;
	}
	memset(list, 0, sizeof(list));
	memcpy(list, pids, npids * sizeof(*pids));
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_IO_MGMT_SEND;
	cmd.nsid = ns->id;
	cmd.cdw10 = NVME_IO_MGMT_CDW10(NVME_IO_MGMT_SEND_RUH_UPDATE, npids - 1u);
	return io_sync(ns, qpair, &cmd, list, len, false, cpl);
}

/* ---- hints ---- */

/*
 * The placement identifiers hints may use, from a RUH Status of @len bytes: those of
 * reclaim group 0 (the top @rgif bits) and a placement handle other than 0, in the
 * controller's order, at most @max. \return how many.
 */
uint32_t
nvme_fdp_hint_pids(const void *ruhs, uint32_t len, uint8_t rgif, uint16_t *pids, uint32_t max)
{
	const struct nvme_fdp_ruh_status *h = ruhs;
	const struct nvme_fdp_ruh_status_desc *d = (const void *)(h + 1);
	uint32_t fit = (len - (uint32_t)sizeof(*h)) / (uint32_t)sizeof(*d);
	uint32_t nd = NVP_MIN((uint32_t)h->nruhsd, fit), n = 0;
	uint32_t ph_bits = 16u - NVP_MIN(rgif, 16u);

	for (uint32_t i = 0; i < nd && n < max; i++) {
		uint32_t pid = d[i].pid;
		uint32_t ph = ph_bits == 0 ? 0 : pid & ((1u << ph_bits) - 1u);

		if ((ph_bits < 16 && (pid >> ph_bits) != 0) || ph == 0) {
			continue; /* another reclaim group, or handle 0: the default */
		}
		pids[n++] = (uint16_t)pid;
	}
	return n;
}

static int
fdp_step(struct nvp_nvme_ns *ns, int rc, const char *what, const struct nvme_cpl *cpl)
{
	char st[96];

	if (rc == -EIO) {
		NVP_INFOLOG("%s ns %u: FDP %s refused (%s)", ns->ctrlr->name, ns->id, what,
			    nvp_nvme_cpl_fmt(st, sizeof(st), cpl));
	} else if (rc != 0) {
		NVP_INFOLOG("%s ns %u: FDP %s failed: %d", ns->ctrlr->name, ns->id, what, rc);
	}
	return rc;
}

/* The configuration FDP is enabled with on the endurance group of @ns; -ENODEV if none. */
static int
enabled_config(struct nvp_nvme_ns *ns, uint16_t endgid, struct nvme_fdp_config_desc *cfg)
{
	struct nvme_cpl cpl;
	bool enabled = false;
	uint8_t idx = 0;
	int rc;

	rc = fdp_step(ns, nvp_nvme_ctrlr_fdp_get_feature(ns->ctrlr, endgid, &enabled, &idx, &cpl),
		      "get feature", &cpl);
	if (rc == 0 && !enabled) {
		NVP_INFOLOG("%s ns %u: FDP supported, not enabled on endurance group %u",
			    ns->ctrlr->name, ns->id, endgid);
		return -ENODEV;
	}
	if (rc == 0) {
		rc = fdp_step(ns, nvp_nvme_ctrlr_fdp_get_config(ns->ctrlr, endgid, idx, cfg, &cpl),
			      "configurations log", &cpl);
	}
	return rc;
}

/*
 * Set @ns up to carry hints as placement identifiers when its endurance group has FDP
 * enabled. \return 0 with ns->placement FDP, -ENODEV when FDP is not in use (the caller
 * tries Streams), -EIO refused, or a host error.
 */
int
nvme_fdp_hints_setup(struct nvp_nvme_ns *ns, uint16_t max_ids)
{
	uint16_t pids[NVP_NVME_WRITE_HINT_COUNT - 1];
	struct nvme_fdp_config_desc cfg;
	uint16_t endgid = ns->data.endgid;
	struct nvme_cpl cpl;
	uint8_t *ruhs;
	uint32_t n = 0;
	int rc;

	if (endgid == 0) {
		return -ENODEV; /* not in an endurance group: no FDP for it */
	}
	rc = enabled_config(ns, endgid, &cfg);
	if (rc != 0) {
		return rc;
	}
	ruhs = calloc(1, FDP_RUHS_BUF_SIZE);
	if (ruhs == NULL) {
		return -ENOMEM;
	}
	rc = fdp_step(ns, nvp_nvme_ns_fdp_ruh_status(ns, NULL, ruhs, FDP_RUHS_BUF_SIZE, &cpl),
		      "reclaim unit handle status", &cpl);
	if (rc == 0) {
		max_ids = max_ids != 0 ? max_ids : NVP_NVME_WRITE_HINT_COUNT - 1;
		n = nvme_fdp_hint_pids(ruhs, FDP_RUHS_BUF_SIZE, NVME_FDPA_RGIF(cfg.fdpa), pids,
				       NVP_MIN(max_ids, (uint16_t)NVP_COUNTOF(pids)));
		nvme_hint_map_build(ns, (uint16_t)n, pids, NVP_NVME_PLACEMENT_FDP);
		NVP_INFOLOG("%s ns %u: FDP: %u placement identifiers for write hints (%u handles, "
			    "reclaim unit %llu bytes)",
			    ns->ctrlr->name, ns->id, n, cfg.nruh, (unsigned long long)cfg.runs);
	}
	free(ruhs);
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Discovery over NVMe/TCP (NVMe-oF 1.1 section 5): connect to a discovery controller
 * (the well-known NQN unless the trid names another), enable it through properties, read
 * the discovery log page (log identifier 0x70, section 5.3) and hand each record to the
 * caller as a transport ID ready for nvp_nvme_connect(). The discovery controller has no
 * I/O queues and no namespaces: the driver's init state machine is not run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvme_tcp_internal.h"

#define DISCOVERY_MAX_RECORDS 256u
#define DISCOVERY_READY_MS 5000u

/* CC.EN = 1 and wait for CSTS.RDY: the discovery controller answers Get Log Page then. */
static int
discovery_enable(struct nvp_nvme_ctrlr *ctrlr)
{
	union nvme_cc_register cc = { .raw = 0 };
	union nvme_csts_register csts;
	uint64_t v, deadline = nvme_ticks(ctrlr) + nvme_ms_to_ticks(ctrlr, DISCOVERY_READY_MS);
	int rc;

	cc.bits.en = 1;
	cc.bits.iosqes = 6;
	cc.bits.iocqes = 4;
	v = cc.raw;
	rc = nvme_tcp_reg_access(ctrlr, NVME_REG_CC, false, &v, true);
	while (rc == 0) {
		rc = nvme_tcp_reg_access(ctrlr, NVME_REG_CSTS, false, &v, false);
		csts.raw = (uint32_t)v;
		if (rc != 0 || csts.bits.rdy) {
			break;
		}
		if (csts.bits.cfs || nvme_ticks(ctrlr) >= deadline) {
			NVP_ERRLOG("%s: discovery controller not ready (CSTS 0x%08x)", ctrlr->name,
				   csts.raw);
			return -ETIMEDOUT;
		}
		nvp_env_delay_us(1000);
	}
	return rc;
}

static int
get_log(struct nvme_tcp_ctrlr *tc, void *buf, uint32_t len)
{
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;
	uint32_t numd = len / 4 - 1;
	int rc;

	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_GET_LOG_PAGE;
	cmd.cdw10 = NVME_LOG_DISCOVERY | (numd & 0xffffu) << 16;
	cmd.cdw11 = numd >> 16;
	rc = nvme_tcp_fabric_sync(nvme_tcp_qpair(tc->ctrlr.adminq), &cmd, buf, len, false, &cpl);
	if (rc == -EIO) {
		NVP_ERRLOG("%s: Get Log Page (discovery) failed: %s", tc->ctrlr.name,
			   nvp_nvme_fabrics_status_string(0xff, cpl.status.sct, cpl.status.sc));
	}
	return rc;
}

/* A space-padded field of @n bytes into a terminated string. */
static void
field_str(char *dst, size_t dlen, const char *src, size_t n)
{
	size_t len = nvp_strpadlen(src, n);

	while (len > 0 && src[len - 1] == '\0') {
		len--;
	}
	len = NVP_MIN(len, dlen - 1);
	memcpy(dst, src, len);
	dst[len] = '\0';
}

static void
entry_fill(struct nvp_nvme_discovery_entry *e, const struct nvme_discovery_log_entry *r)
{
	static const char *const types[] = {
		[NVME_TRTYPE_RDMA] = "RDMA", [NVME_TRTYPE_FC] = "FC", [NVME_TRTYPE_TCP] = "TCP"
	};
	const char *type = r->trtype < NVP_COUNTOF(types) && types[r->trtype] ? types[r->trtype] :
										"loop";

	memset(e, 0, sizeof(*e));
	e->trtype = r->trtype;
	e->adrfam = r->adrfam;
	e->subtype = r->subtype;
	e->portid = r->portid;
	e->cntlid = r->cntlid;
	field_str(e->traddr, sizeof(e->traddr), r->traddr, sizeof(r->traddr));
	field_str(e->trsvcid, sizeof(e->trsvcid), r->trsvcid, sizeof(r->trsvcid));
	field_str(e->subnqn, sizeof(e->subnqn), r->subnqn, sizeof(r->subnqn));
	e->trid.trtype = r->trtype == NVME_TRTYPE_TCP ? NVP_NVME_TRANSPORT_TCP : 0;
	nvp_strlcpy(e->trid.trstring, type, sizeof(e->trid.trstring));
	nvp_strlcpy(e->trid.traddr, e->traddr, sizeof(e->trid.traddr));
	nvp_strlcpy(e->trid.subnqn, e->subnqn, sizeof(e->trid.subnqn));
	snprintf(e->trid.args, sizeof(e->trid.args), "adrfam=%s trsvcid=%.32s",
		 r->adrfam == NVME_ADRFAM_IPV6 ? "IPv6" : "IPv4", e->trsvcid);
}

/* Header first (how many records), then the whole page; each record to @cb. */
static int
read_records(struct nvme_tcp_ctrlr *tc, nvp_nvme_discover_cb cb, void *cb_arg)
{
	struct nvme_discovery_log_header *h = calloc(1, sizeof(*h));
	struct nvp_nvme_discovery_entry e;
	uint8_t *page = NULL;
	uint32_t n, i;
	int rc;

	if (h == NULL) {
		return -ENOMEM;
	}
	rc = get_log(tc, h, sizeof(*h));
	n = rc == 0 ? (uint32_t)NVP_MIN(h->numrec, (uint64_t)DISCOVERY_MAX_RECORDS) : 0;
	if (rc == 0 && n > 0) {
		page = calloc(1, sizeof(*h) + (size_t)n * sizeof(struct nvme_discovery_log_entry));
		rc = page == NULL ? -ENOMEM : get_log(tc, page, (uint32_t)(sizeof(*h) + n * 1024u));
	}
	if (rc == 0 && page != NULL) {
		/* The page may have shrunk between the reads: trust its own count. */
		n = (uint32_t)NVP_MIN((uint64_t)n,
				      ((struct nvme_discovery_log_header *)page)->numrec);
		for (i = 0; i < n; i++) {
			entry_fill(&e, (const void *)(page + sizeof(*h) + (size_t)i * 1024u));
			cb(cb_arg, &e);
		}
	}
	free(page);
	free(h);
	return rc == 0 ? (int)n : rc;
}

int
nvp_nvme_discover(const struct nvp_nvme_transport_id *trid, nvp_nvme_discover_cb cb, void *cb_arg)
{
	struct nvp_nvme_transport_id t;
	struct nvp_nvme_ctrlr_opts opts;
	struct nvme_tcp_ctrlr *tc;
	int rc;

	if (trid == NULL || cb == NULL || strcasecmp(trid->trstring, "TCP") != 0) {
		NVP_ERRLOG(
			"discover: needs a TCP transport ID (trtype:TCP traddr:... trsvcid:...)");
		return -EINVAL;
	}
	if (!nvp_env_is_initialized()) {
		NVP_ERRLOG("discover: call nvp_env_init() first");
		return -EINVAL;
	}
	t = *trid;
	t.trtype = NVP_NVME_TRANSPORT_TCP;
	if (t.subnqn[0] == '\0') {
		nvp_strlcpy(t.subnqn, NVME_DISCOVERY_NQN, sizeof(t.subnqn));
	}
	nvp_nvme_ctrlr_opts_init(&opts, sizeof(opts));
	tc = calloc(1, sizeof(*tc));
	if (tc == NULL) {
		return -ENOMEM;
	}
	rc = nvme_ctrlr_construct(&tc->ctrlr, &t, &opts, &g_nvme_tcp_transport);
	if (rc != 0) {
		free(tc);
		return rc;
	}
	rc = nvme_tcp_parse_trid(tc, &t);
	tc->kato_ms = 0; /* a short session: no keep-alive */
	nvme_tcp_set_name(tc, "discovery");
	if (rc == 0) {
		rc = nvme_tcp_qpair_create(&tc->ctrlr, 0, NULL, &tc->ctrlr.adminq);
	}
	if (rc == 0) {
		rc = nvme_tcp_admin_connect(tc);
	}
	if (rc == 0) {
		rc = discovery_enable(&tc->ctrlr);
	}
	if (rc == 0) {
		rc = read_records(tc, cb, cb_arg);
	}
	nvme_tcp_ctrlr_destruct(&tc->ctrlr);
	return rc;
}

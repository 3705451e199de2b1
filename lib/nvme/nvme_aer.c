/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asynchronous events (NVMe 1.4 section 5.2): the Asynchronous Event Requests kept
 * outstanding on the admin queue, each event handed to the application's callback and
 * the request re-armed; a namespace change re-reads the active list and the namespaces
 * (nvme_ns.c). The application's poll of the admin queue is here too: the re-read an
 * event deferred runs there, on a thread that may wait for admin commands.
 *
 * This file sits above the admin commands (nvme_ctrlr_cmd.c) and the namespaces, which
 * use the admin commands; the controller's init arms the requests.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nvme_internal.h"

static int submit_aer(struct nvp_nvme_ctrlr *ctrlr);
static void aer_ns_changed(struct nvp_nvme_ctrlr *ctrlr);

/* A namespace changed: read the changed list (clears the event) and re-identify. */
static void
aer_ns_changed(struct nvp_nvme_ctrlr *ctrlr)
{
	uint32_t *list = malloc(NVME_IDENTIFY_SIZE);

	if (list != NULL) {
		(void)nvp_nvme_ctrlr_get_log_page(ctrlr, NVME_LOG_CHANGED_NS_LIST, 0, list,
						  NVME_IDENTIFY_SIZE, 0, NULL);
		free(list);
	}
	if (nvme_ctrlr_identify_active_ns(ctrlr) == 0) {
		(void)nvme_ctrlr_identify_namespaces(ctrlr, NVME_GLOBAL_NS_TAG);
	}
}

static void
aer_cb(void *cb_arg, const struct nvme_cpl *cpl)
{
	struct nvp_nvme_ctrlr *ctrlr = cb_arg;
	union nvme_async_event_completion ev = { .raw = cpl->cdw0 };

	if (cpl->status.sct == NVME_SCT_GENERIC && cpl->status.sc == NVME_SC_ABORTED_SQ_DELETION) {
		return; /* reset, detach or failure: not an event */
	}
	if (cpl->status.sct == NVME_SCT_PATH && cpl->status.sc == NVME_SC_HOST_PATH_ERROR) {
		return; /* the host's, for a lost connection (said once by the transport): a
			 * reset, the reconnect's or the application's, arms them again */
	}
	if (nvme_cpl_is_error(cpl)) {
		char buf[96];

		NVP_WARNLOG("%s: asynchronous event request failed (%s); not re-armed", ctrlr->name,
			    nvp_nvme_cpl_fmt(buf, sizeof(buf), cpl));
		return;
	}
	NVP_NOTICELOG("%s: asynchronous event: type %u info 0x%02x log page 0x%02x", ctrlr->name,
		      ev.bits.async_event_type, ev.bits.async_event_info,
		      ev.bits.log_page_identifier);
	if (ev.bits.async_event_type == NVME_ASYNC_EVENT_TYPE_NOTICE &&
	    ev.bits.async_event_info == NVME_ASYNC_EVENT_NS_ATTR_CHANGED) {
		ctrlr->ns_changed = true; /* handled by the next admin poll */
	}
	if (ctrlr->aer_cb != NULL) {
		ctrlr->aer_cb(ctrlr->aer_cb_arg, cpl);
	}
	(void)submit_aer(ctrlr);
}

static int
submit_aer(struct nvp_nvme_ctrlr *ctrlr)
{
	struct nvme_cmd cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_ASYNC_EVENT_REQUEST;
	return nvme_ctrlr_submit_admin(ctrlr, &cmd, NULL, 0, aer_cb, ctrlr);
}

/*
 * Enable the events we understand, then keep min(AERL + 1, 4) requests armed, but never
 * more than half the admin queue's slots: commands need the rest.
 */
int
nvme_ctrlr_configure_aer(struct nvp_nvme_ctrlr *ctrlr)
{
	union nvme_feat_async_event_configuration cfg = { .raw = 0 };
	uint32_t n = NVP_MIN(NVP_MIN(ctrlr->cdata.aerl + 1u, NVME_MAX_AERS),
			     ctrlr->adminq->num_slots / 2);
	uint32_t i;
	int rc;

	cfg.bits.crit_warn = 0xff;
	cfg.bits.ns_attr_notice = (ctrlr->cdata.oaes >> 8) & 1u;
	cfg.bits.fw_activation_notice = (ctrlr->cdata.oaes >> 9) & 1u;
	cfg.bits.ana_change_notice = (ctrlr->cdata.oaes >> 11) &
				     1u; /* nvme_mpath.c reads the log */
	rc = nvp_nvme_ctrlr_set_feature(ctrlr, NVME_FEAT_ASYNC_EVENT_CONFIGURATION, cfg.raw, 0, 0,
					false, NULL, NULL, 0, NULL);
	if (rc != 0 && (cfg.bits.ns_attr_notice || cfg.bits.fw_activation_notice ||
			cfg.bits.ana_change_notice)) {
		/* Some controllers accept only the notices OAES lists (the Linux kernel's nvmet
		 * refuses the SMART critical warning bits with Invalid Field): ask for those
		 * alone, as the kernel's own host does. */
		cfg.bits.crit_warn = 0;
		rc = nvp_nvme_ctrlr_set_feature(ctrlr, NVME_FEAT_ASYNC_EVENT_CONFIGURATION, cfg.raw,
						0, 0, false, NULL, NULL, 0, NULL);
		if (rc == 0) {
			NVP_INFOLOG("%s: the controller refused SMART critical warning events; "
				    "only the notices it lists in OAES are enabled",
				    ctrlr->name);
		}
	}
	if (rc != 0) {
		NVP_WARNLOG("%s: Set Features (Async Event Configuration) failed (%d); "
			    "events may not be reported",
			    ctrlr->name, rc);
	}
	for (i = 0; i < n; i++) {
		rc = submit_aer(ctrlr);
		if (rc != 0) {
			NVP_WARNLOG("%s: cannot arm asynchronous event request %u (%d)",
				    ctrlr->name, i, rc);
			return rc;
		}
	}
	ctrlr->num_aers = n;
	return 0;
}

void
nvp_nvme_ctrlr_register_aer_callback(struct nvp_nvme_ctrlr *ctrlr, nvp_nvme_cmd_cb cb, void *cb_arg)
{
	nvme_ctrlr_lock(ctrlr);
	ctrlr->aer_cb = cb;
	ctrlr->aer_cb_arg = cb_arg;
	nvme_ctrlr_unlock(ctrlr);
}

int32_t
nvp_nvme_ctrlr_process_admin_completions(struct nvp_nvme_ctrlr *ctrlr)
{
	int32_t n;

	if (ctrlr == NULL) {
		return -EINVAL;
	}
	nvme_ctrlr_lock(ctrlr);
	if (nvp_unlikely(nvme_ctrlr_is_reconnecting(ctrlr))) {
		nvme_ctrlr_reconnect_poll(ctrlr);
		if (nvme_ctrlr_is_reconnecting(ctrlr)) {
			nvme_ctrlr_unlock(ctrlr);
			return 0;
		}
	}
	n = nvme_qpair_process(ctrlr->adminq, 0);
	nvme_admin_cq_stuck_reset(ctrlr);
	if (ctrlr->ns_changed && n >= 0) {
		/* Deferred from the AER callback: it may have run on an I/O thread that
		 * must not wait for admin commands. */
		ctrlr->ns_changed = false;
		aer_ns_changed(ctrlr);
	}
	nvme_ctrlr_unlock(ctrlr);
	return n;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The top of the driver: connect to the controller a transport ID names, detach it, and
 * probe (every controller a transport finds by itself, or the one a transport ID names).
 *
 * Connect is the transport's construct (it finds or makes the device and fills the
 * controller's generic part), then the controller's init state machine (nvme_ctrlr.c);
 * detach is the controller's shutdown, then the transport's destruct. Transport IDs,
 * options and the transports by name are below, in nvme.c.
 */
#include <errno.h>
#include <string.h>

#include "nvme_internal.h"

/* ---------------------------------------------------------------------------------------
 * Connect and detach
 * ------------------------------------------------------------------------------------- */

/* The transport makes the controller (and finds or makes its device), then the init. */
static int
connect_transport(const struct nvp_nvme_transport_id *trid, const struct nvp_nvme_ctrlr_opts *opts,
		  struct nvp_nvme_ctrlr **out)
{
	const struct nvme_transport_ops *transport = nvme_transport_for(trid);
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	int rc;

	if (transport == NULL) {
		NVP_ERRLOG("connect: transport %s is not available in this build", trid->trstring);
		return -EINVAL;
	}
	rc = transport->ctrlr_construct(trid, opts, &ctrlr);
	if (rc != 0) {
		return rc;
	}
	rc = nvme_ctrlr_init(ctrlr);
	if (rc != 0) {
		NVP_ERRLOG("%s: initialisation failed (%s)", ctrlr->name, strerror(-rc));
		transport->ctrlr_destruct(ctrlr);
		return rc;
	}
	NVP_INFOLOG("%s: attached, %u I/O queues, %u namespaces", ctrlr->name, ctrlr->num_io_queues,
		    ctrlr->num_active_ns);
	*out = ctrlr;
	return 0;
}

int
nvp_nvme_connect(const struct nvp_nvme_transport_id *trid,
		 const struct nvp_nvme_ctrlr_opts *user_opts, struct nvp_nvme_ctrlr **ctrlr)
{
	struct nvp_nvme_transport_id t;
	struct nvp_nvme_ctrlr_opts opts;
	int rc;

	if (trid == NULL || ctrlr == NULL) {
		return -EINVAL;
	}
	if (!nvp_env_is_initialized()) {
		NVP_ERRLOG("connect: the environment is not initialised: call nvp_env_init() "
			   "first");
		return -EINVAL;
	}
	nvme_ctrlr_opts_copy(&opts, user_opts);
	rc = nvme_ctrlr_opts_check(&opts);
	if (rc != 0) {
		return rc;
	}
	t = *trid;
	rc = nvme_trid_resolve_type(&t);
	if (rc != 0) {
		return rc;
	}
	return connect_transport(&t, &opts, ctrlr);
}

int
nvp_nvme_detach(struct nvp_nvme_ctrlr *ctrlr)
{
	int rc;

	if (ctrlr == NULL) {
		return -EINVAL;
	}
	nvme_ctrlr_reconnect_finish(ctrlr); /* a reset this thread steps */
	nvme_ctrlr_free_io_qpairs(ctrlr);
	nvme_ctrlr_lock(ctrlr);
	rc = nvme_ctrlr_shutdown(ctrlr);
	/* AERs and anything else still on the admin queue. */
	nvme_qpair_abort_all(ctrlr->adminq, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION, true);
	nvme_ctrlr_unlock(ctrlr);
	NVP_INFOLOG("%s: detached", ctrlr->name);
	ctrlr->transport->ctrlr_destruct(ctrlr); /* and the device made for it, if any */
	return rc == -ETIMEDOUT ? rc : 0;
}

/* ---------------------------------------------------------------------------------------
 * Probe
 * ------------------------------------------------------------------------------------- */

/* Offer @trid to probe_cb, connect, report to attach_cb. \return 0, 1 (declined), -errno. */
static int
probe_one(const struct nvp_nvme_transport_id *trid, void *cb_ctx, nvp_nvme_probe_cb probe_cb,
	  nvp_nvme_attach_cb attach_cb)
{
	struct nvp_nvme_ctrlr_opts opts;
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	int rc;

	nvp_nvme_ctrlr_opts_init(&opts, sizeof(opts));
	if (probe_cb != NULL && !probe_cb(cb_ctx, trid, &opts)) {
		return 1;
	}
	rc = nvp_nvme_connect(trid, &opts, &ctrlr);
	if (rc == 0 && attach_cb != NULL) {
		attach_cb(cb_ctx, trid, ctrlr, &ctrlr->opts);
	}
	return rc;
}

struct probe_ctx {
	void *cb_ctx;
	nvp_nvme_probe_cb probe_cb;
	nvp_nvme_attach_cb attach_cb;
};

static int
probe_found(void *ctx, const struct nvp_nvme_transport_id *trid)
{
	struct probe_ctx *p = ctx;

	return probe_one(trid, p->cb_ctx, p->probe_cb, p->attach_cb);
}

/* Every controller @transport finds by itself (its scan). */
static int
probe_all(const struct nvme_transport_ops *transport, void *cb_ctx, nvp_nvme_probe_cb probe_cb,
	  nvp_nvme_attach_cb attach_cb)
{
	struct probe_ctx p = { cb_ctx, probe_cb, attach_cb };

	if (transport == NULL || transport->scan == NULL) {
		NVP_ERRLOG("probe: transport %s cannot list its controllers: give an address",
			   transport != NULL ? transport->name : "(none)");
		return -EINVAL;
	}
	return transport->scan(&p, probe_found);
}

int
nvp_nvme_probe(const struct nvp_nvme_transport_id *trid, void *cb_ctx, nvp_nvme_probe_cb probe_cb,
	       nvp_nvme_attach_cb attach_cb)
{
	struct nvp_nvme_transport_id t;
	int rc;

	if (!nvp_env_is_initialized()) {
		NVP_ERRLOG("probe: the environment is not initialised: call nvp_env_init() first");
		return -EINVAL;
	}
	if (trid == NULL) {
		return probe_all(nvme_transport_get("PCIe"), cb_ctx, probe_cb, attach_cb);
	}
	t = *trid;
	rc = nvme_trid_resolve_type(&t);
	if (rc != 0) {
		return rc;
	}
	if (t.trtype == NVP_NVME_TRANSPORT_PCIE && t.traddr[0] == '\0') {
		return probe_all(nvme_transport_for(&t), cb_ctx, probe_cb, attach_cb);
	}
	rc = probe_one(&t, cb_ctx, probe_cb, attach_cb);
	return rc > 0 ? 0 : rc;
}

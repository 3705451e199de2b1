/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Admin commands (NVMe 1.4 section 5): the raw interface, completion processing, the
 * synchronous helper, and the commands the driver itself needs: identify, features,
 * log pages, queue creation and deletion, firmware download and commit, abort. Format
 * (which re-reads namespaces) is in nvme_ns.c, asynchronous events in nvme_aer.c: both
 * use these commands, and this file uses neither.
 *
 * The admin queue is shared by every thread; each use holds ctrlr->adminq_lock
 * (nvme_ctrlr_lock.c), for the time of one submission or one poll: a synchronous command
 * waits without it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "nvme_internal.h"

/* ---------------------------------------------------------------------------------------
 * Submission and completion
 * ------------------------------------------------------------------------------------- */

/*
 * Queue an admin command; @buf (DMA memory or NULL) is the payload. With no payload the
 * command's data pointer is sent as given (queue creation puts the ring address there).
 * \return 0, -ENOMEM (no request object), -EFAULT/-EINVAL (payload), -ENXIO.
 */
int
nvme_ctrlr_submit_admin(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, void *buf,
			uint32_t len, nvp_nvme_cmd_cb cb, void *cb_arg)
{
	struct nvme_request *req;
	int rc;

	nvme_ctrlr_lock(ctrlr);
	if (nvp_unlikely(nvme_ctrlr_is_reconnecting(ctrlr) && !atomic_load(&ctrlr->resetting))) {
		/* no admin connection until the reconnect's reset (a reconnect attempt's new
		 * one is not the controller's before its Connect is answered) */
		nvme_ctrlr_unlock(ctrlr);
		return -ENXIO;
	}
	req = nvme_qpair_alloc_request(ctrlr->adminq);
	if (req == NULL) {
		nvme_ctrlr_unlock(ctrlr);
		return -ENOMEM;
	}
	nvme_request_init(req, cb, cb_arg);
	req->cmd = *cmd;
	nvme_request_set_contig(req, buf, len);
	rc = nvme_qpair_submit_request(ctrlr->adminq, req);
	nvme_ctrlr_unlock(ctrlr);
	return rc;
}

static int
check_admin_buf(const struct nvp_nvme_ctrlr *ctrlr, const void *buf, uint32_t len)
{
	if ((len != 0 && buf == NULL) || ((uintptr_t)buf & 3u) != 0) {
		return -EINVAL;
	}
	if (len > ctrlr->max_xfer_size) {
		NVP_ERRLOG("%s: admin payload of %u bytes exceeds the max transfer size %u",
			   ctrlr->name, len, ctrlr->max_xfer_size);
		return -EINVAL;
	}
	return 0;
}

int
nvp_nvme_ctrlr_cmd_admin_raw(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, void *buf,
			     uint32_t len, nvp_nvme_cmd_cb cb, void *cb_arg)
{
	struct nvme_cmd c;
	int rc;

	if (ctrlr == NULL || cmd == NULL) {
		return -EINVAL;
	}
	rc = check_admin_buf(ctrlr, buf, len);
	if (rc != 0) {
		return rc;
	}
	if (nvme_ctrlr_is_failed(ctrlr)) {
		return -ENXIO;
	}
	c = *cmd;
	memset(&c.dptr, 0, sizeof(c.dptr)); /* the driver builds the PRPs */
	return nvme_ctrlr_submit_admin(ctrlr, &c, len ? buf : NULL, len, cb, cb_arg);
}

/*
 * A poll found the admin CQ stuck behind an entry with a stale phase tag
 * (nvme_qpair_check_deadlines()): no admin completion will be seen again, and only a
 * controller reset rebuilds the admin queue. Admin lock held, outside any poll of it. The
 * admin commands outstanding complete with ABORTED SQ DELETION; the I/O qpairs re-create
 * their queues at their next poll, as after any reset.
 */
void
nvme_admin_cq_stuck_reset(struct nvp_nvme_ctrlr *ctrlr)
{
	if (nvp_likely(!ctrlr->adminq->cq_stuck)) {
		return;
	}
	ctrlr->adminq->cq_stuck = false;
	(void)ctrlr->recovery->reset(ctrlr);
}

/* From an I/O thread moving its Aborts along: never wait for the admin lock. */
int32_t
nvme_ctrlr_process_admin_trylock(struct nvp_nvme_ctrlr *ctrlr)
{
	int32_t n;

	if (pthread_mutex_trylock(&ctrlr->adminq_lock) != 0) {
		return 0;
	}
	n = nvme_qpair_process(ctrlr->adminq, 0);
	nvme_ctrlr_unlock(ctrlr);
	return n;
}

/* ---------------------------------------------------------------------------------------
 * The synchronous helper
 * ------------------------------------------------------------------------------------- */

struct sync_wait {
	struct nvme_cpl cpl;
	atomic_bool done; /* set by sync_cb on whichever thread polled the completion */
};

static void
sync_cb(void *cb_arg, const struct nvme_cpl *cpl)
{
	struct sync_wait *w = cb_arg;

	w->cpl = *cpl;
	/* Release: the waiter reads cpl after it sees done (it may not hold the lock). */
	atomic_store_explicit(&w->done, true, memory_order_release);
}

static bool
sync_done(struct sync_wait *w)
{
	return atomic_load_explicit(&w->done, memory_order_acquire);
}

/* A timed-out command completed after all: only its bounce buffer is left to free. */
static void
orphan_cb(void *cb_arg, const struct nvme_cpl *cpl)
{
	(void)cpl;
	nvp_env_dma_free(cb_arg);
}

/*
 * The waiter gives up (admin lock held): the request keeps the bounce buffer (the device
 * may still write it) and frees it if it ever completes; an Abort is sent for it.
 * \return -ENXIO if the controller turned out dead, else -ETIMEDOUT.
 */
static int
sync_timeout(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, struct sync_wait *w,
	     void **bounce)
{
	uint16_t cid = 0;

	NVP_ERRLOG("%s: admin command (opcode 0x%02x) did not complete within %u ms", ctrlr->name,
		   cmd->opc, ctrlr->opts.admin_timeout_ms);
	if (ctrlr->recovery->check_health(ctrlr, "admin command timeout")) {
		(void)nvme_qpair_process(ctrlr->adminq, 0); /* completes it with an error */
		return -ENXIO;
	}
	if (nvme_qpair_orphan_request(ctrlr->adminq, sync_cb, w, orphan_cb, *bounce, &cid)) {
		*bounce = NULL;
		(void)nvme_ctrlr_cmd_abort(ctrlr, 0, cid, NULL, NULL, false);
	}
	return -ETIMEDOUT;
}

/* One look at the admin queue, the lock held for that look only. \return as process. */
static int32_t
sync_poll(struct nvp_nvme_ctrlr *ctrlr)
{
	int32_t n;

	nvme_ctrlr_lock(ctrlr);
	n = nvme_qpair_process(ctrlr->adminq, 0);
	nvme_admin_cq_stuck_reset(ctrlr);
	nvme_ctrlr_unlock(ctrlr);
	return n;
}

/* The deadline passed: give up under the lock, unless the completion just came. */
static int
sync_expire(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, void **bounce,
	    struct sync_wait *w)
{
	int rc = 0;

	nvme_ctrlr_lock(ctrlr);
	if (!sync_done(w)) {
		rc = sync_timeout(ctrlr, cmd, w, bounce);
	}
	nvme_ctrlr_unlock(ctrlr);
	return rc;
}

/*
 * Submit, then poll the admin queue until done. The admin lock is taken to submit and for
 * each poll, never across the wait: other threads' admin commands go out and complete
 * meanwhile (whoever polls completes everybody's; each waiter watches its own status),
 * so a slow command makes nobody else wait for the admin timeout.
 */
static int
sync_run(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, void **bounce, uint32_t len,
	 struct sync_wait *w)
{
	uint64_t deadline = nvme_ticks(ctrlr) +
			    nvme_ms_to_ticks(ctrlr, ctrlr->opts.admin_timeout_ms);
	uint32_t idle = 0;
	int rc;

	rc = nvme_ctrlr_submit_admin(ctrlr, cmd, *bounce, len, sync_cb, w);
	while (rc == 0 && !sync_done(w)) {
		if (sync_poll(ctrlr) < 0 && !sync_done(w)) {
			rc = -ENXIO;
		} else if (sync_done(w)) {
			break;
		} else if (nvme_ticks(ctrlr) >= deadline) {
			rc = sync_expire(ctrlr, cmd, bounce, w);
		} else if (nvme_fiber_yield()) {
			/* a reconnect's reset: the next poll of its thread looks again */
		} else if (++idle > 1000) {
			nvp_env_delay_us(50); /* a slow command (format): stop spinning hard */
		} else {
			nvp_pause();
		}
	}
	if (rc == 0 && sync_done(w) && nvme_ctrlr_is_failed(ctrlr) &&
	    ((w->cpl.status.sct == NVME_SCT_GENERIC &&
	      w->cpl.status.sc == NVME_SC_ABORTED_SQ_DELETION) ||
	     (w->cpl.status.sct == NVME_SCT_PATH && w->cpl.status.sc == NVME_SC_HOST_PATH_ERROR))) {
		rc = -ENXIO;
	}
	return rc;
}

/*
 * The synchronous core. @keep_dptr: a payload-less command keeps its data pointer
 * (queue creation); otherwise the driver owns it.
 */
static int
admin_sync(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, void *buf, uint32_t len,
	   struct nvme_cpl *cpl, bool keep_dptr)
{
	enum nvme_data_transfer dir = nvme_opc_get_data_transfer((uint8_t)cmd->opc);
	struct sync_wait w;
	struct nvme_cmd c = *cmd;
	void *bounce = NULL;
	int rc;

	memset(&w, 0, sizeof(w));
	atomic_init(&w.done, false);
	if (nvme_ctrlr_is_failed(ctrlr)) {
		return -ENXIO;
	}
	if (len != 0) {
		bounce = nvp_env_dma_zmalloc(len, ctrlr->page_size, NULL);
		if (bounce == NULL) {
			return -ENOMEM;
		}
		if (dir & NVME_DATA_HOST_TO_CONTROLLER) {
			memcpy(bounce, buf, len);
		}
	}
	if (!keep_dptr || len != 0) {
		memset(&c.dptr, 0, sizeof(c.dptr));
	}
	rc = sync_run(ctrlr, &c, &bounce, len, &w);
	if (rc == 0 && sync_done(&w)) {
		if (cpl != NULL) {
			*cpl = w.cpl;
		}
		if (nvme_cpl_is_error(&w.cpl)) {
			rc = -EIO;
		} else if (len != 0 && (dir & NVME_DATA_CONTROLLER_TO_HOST)) {
			memcpy(buf, bounce, len);
		}
	}
	nvp_env_dma_free(bounce);
	return rc;
}

int
nvp_nvme_ctrlr_cmd_admin_sync(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, void *buf,
			      uint32_t len, struct nvme_cpl *cpl)
{
	int rc;

	if (ctrlr == NULL || cmd == NULL) {
		return -EINVAL;
	}
	if ((len != 0 && buf == NULL) || len > ctrlr->max_xfer_size) {
		NVP_ERRLOG("%s: admin sync: bad payload (%u bytes, max %u)", ctrlr->name, len,
			   ctrlr->max_xfer_size);
		return -EINVAL;
	}
	rc = admin_sync(ctrlr, cmd, buf, len, cpl, false);
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * Identify, features, log pages
 * ------------------------------------------------------------------------------------- */

int
nvp_nvme_ctrlr_identify(struct nvp_nvme_ctrlr *ctrlr, uint8_t cns, uint32_t nsid, void *buf,
			uint32_t len, struct nvme_cpl *cpl)
{
	struct nvme_cmd cmd;
	uint8_t *tmp;
	int rc;

	if (ctrlr == NULL || buf == NULL || len == 0 || len > NVME_IDENTIFY_SIZE) {
		return -EINVAL;
	}
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_IDENTIFY;
	cmd.nsid = nsid;
	cmd.cdw10 = cns;
	/* The controller always transfers a whole 4 KiB structure. */
	if (len == NVME_IDENTIFY_SIZE) {
		return admin_sync(ctrlr, &cmd, buf, len, cpl, false);
	}
	tmp = malloc(NVME_IDENTIFY_SIZE);
	if (tmp == NULL) {
		return -ENOMEM;
	}
	rc = admin_sync(ctrlr, &cmd, tmp, NVME_IDENTIFY_SIZE, cpl, false);
	if (rc == 0) {
		memcpy(buf, tmp, len);
	}
	free(tmp);
	return rc;
}

int
nvp_nvme_ctrlr_get_log_page(struct nvp_nvme_ctrlr *ctrlr, uint8_t lid, uint32_t nsid, void *buf,
			    uint32_t len, uint64_t offset, struct nvme_cpl *cpl)
{
	struct nvme_cmd cmd;
	uint32_t numd = len / 4u;

	if (ctrlr == NULL || buf == NULL || len == 0 || (len & 3u) != 0 || (offset & 3u) != 0) {
		return -EINVAL;
	}
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_GET_LOG_PAGE;
	cmd.nsid = nsid;
	cmd.cdw10 = NVME_GET_LOG_CDW10(lid, numd);
	cmd.cdw11 = NVME_GET_LOG_CDW11(numd);
	cmd.cdw12 = (uint32_t)offset;
	cmd.cdw13 = (uint32_t)(offset >> 32);
	return nvp_nvme_ctrlr_cmd_admin_sync(ctrlr, &cmd, buf, len, cpl);
}

/* Run @cmd synchronously; hand back completion DW0 on success and the completion. */
static int
admin_sync_dw0(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, void *buf, uint32_t len,
	       uint32_t *result, struct nvme_cpl *cpl)
{
	struct nvme_cpl c;
	int rc;

	memset(&c, 0, sizeof(c));
	rc = nvp_nvme_ctrlr_cmd_admin_sync(ctrlr, cmd, buf, len, &c);
	if (rc == 0 && result != NULL) {
		*result = c.cdw0;
	}
	if (cpl != NULL) {
		*cpl = c;
	}
	return rc;
}

int
nvp_nvme_ctrlr_get_feature(struct nvp_nvme_ctrlr *ctrlr, uint8_t fid, uint8_t sel, uint32_t cdw11,
			   uint32_t nsid, uint32_t *result, void *buf, uint32_t len,
			   struct nvme_cpl *cpl)
{
	struct nvme_cmd cmd;

	if (ctrlr == NULL) {
		return -EINVAL;
	}
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_GET_FEATURES;
	cmd.nsid = nsid;
	cmd.cdw10 = fid | ((uint32_t)(sel & 0x7u) << 8);
	cmd.cdw11 = cdw11;
	return admin_sync_dw0(ctrlr, &cmd, buf, len, result, cpl);
}

int
nvp_nvme_ctrlr_set_feature(struct nvp_nvme_ctrlr *ctrlr, uint8_t fid, uint32_t cdw11,
			   uint32_t cdw12, uint32_t nsid, bool save, uint32_t *result, void *buf,
			   uint32_t len, struct nvme_cpl *cpl)
{
	struct nvme_cmd cmd;

	if (ctrlr == NULL) {
		return -EINVAL;
	}
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_SET_FEATURES;
	cmd.nsid = nsid;
	cmd.cdw10 = fid | (save ? 1u << 31 : 0u);
	cmd.cdw11 = cdw11;
	cmd.cdw12 = cdw12;
	return admin_sync_dw0(ctrlr, &cmd, buf, len, result, cpl);
}

/* Identify Controller into ctrlr->cdata (init state IDENTIFY). */
int
nvme_ctrlr_cmd_identify_ctrlr(struct nvp_nvme_ctrlr *ctrlr)
{
	struct nvme_cpl cpl;
	int rc;

	memset(&cpl, 0, sizeof(cpl));
	rc = nvp_nvme_ctrlr_identify(ctrlr, NVME_IDENTIFY_CTRLR, 0, &ctrlr->cdata,
				     sizeof(ctrlr->cdata), &cpl);
	if (rc == -EIO) {
		nvme_cpl_log("Identify Controller", &cpl);
	}
	return rc;
}

/* Set Features, Number of Queues (section 5.21.1.7): both counts 0's based. */
int
nvme_ctrlr_cmd_set_num_queues(struct nvp_nvme_ctrlr *ctrlr, uint32_t wanted, uint32_t *granted)
{
	union nvme_feat_number_of_queues nq = { .raw = 0 };
	struct nvme_cpl cpl;
	uint32_t result = 0;
	int rc;

	nq.bits.nsqr = wanted - 1;
	nq.bits.ncqr = wanted - 1;
	memset(&cpl, 0, sizeof(cpl));
	rc = nvp_nvme_ctrlr_set_feature(ctrlr, NVME_FEAT_NUMBER_OF_QUEUES, nq.raw, 0, 0, false,
					&result, NULL, 0, &cpl);
	if (rc != 0) {
		if (rc == -EIO) {
			nvme_cpl_log("Set Features (Number of Queues)", &cpl);
		}
		return rc;
	}
	nq.raw = result;
	*granted = NVP_MIN(nq.bits.nsqr, nq.bits.ncqr) + 1u;
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * Firmware
 * ------------------------------------------------------------------------------------- */

/* Chunk size for firmware download: the max transfer, in multiples of FWUG if given. */
static uint32_t
fw_chunk_size(const struct nvp_nvme_ctrlr *ctrlr)
{
	uint32_t fwug = ctrlr->cdata.fwug;
	uint32_t gran;

	if (fwug == 0 || fwug == 0xff) {
		return ctrlr->max_xfer_size;
	}
	gran = fwug * 4096u;
	if (gran > ctrlr->max_xfer_size) {
		return 0;
	}
	return ctrlr->max_xfer_size / gran * gran;
}

int
nvp_nvme_ctrlr_fw_download(struct nvp_nvme_ctrlr *ctrlr, const void *image, size_t size,
			   struct nvme_cpl *cpl)
{
	uint32_t chunk;
	size_t offset;

	if (ctrlr == NULL || image == NULL || size == 0 || (size & 3u) != 0 ||
	    size / 4u > UINT32_MAX) {
		return -EINVAL;
	}
	chunk = fw_chunk_size(ctrlr);
	if (chunk == 0) {
		NVP_ERRLOG("%s: FWUG (%u x 4 KiB) exceeds the max transfer size %u", ctrlr->name,
			   ctrlr->cdata.fwug, ctrlr->max_xfer_size);
		return -EINVAL;
	}
	for (offset = 0; offset < size; offset += chunk) {
		uint32_t n = (uint32_t)NVP_MIN((size_t)chunk, size - offset);
		struct nvme_cmd cmd;
		int rc;

		memset(&cmd, 0, sizeof(cmd));
		cmd.opc = NVME_OPC_FIRMWARE_IMAGE_DOWNLOAD;
		cmd.cdw10 = n / 4u - 1u;             /* NUMD, 0's based */
		cmd.cdw11 = (uint32_t)(offset / 4u); /* OFST, dwords */
		rc = nvp_nvme_ctrlr_cmd_admin_sync(ctrlr, &cmd, (uint8_t *)image + offset, n, cpl);
		if (rc != 0) {
			return rc;
		}
	}
	return 0;
}

int
nvp_nvme_ctrlr_fw_commit(struct nvp_nvme_ctrlr *ctrlr, uint8_t slot,
			 enum nvme_fw_commit_action action, struct nvme_cpl *cpl)
{
	union nvme_fw_commit_cdw10 cdw10 = { .raw = 0 };
	struct nvme_cmd cmd;

	if (ctrlr == NULL || slot > 7 || (uint32_t)action > 7) {
		return -EINVAL;
	}
	cdw10.bits.fs = slot;
	cdw10.bits.ca = action;
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_FIRMWARE_COMMIT;
	cmd.cdw10 = cdw10.raw;
	return nvp_nvme_ctrlr_cmd_admin_sync(ctrlr, &cmd, NULL, 0, cpl);
}

/* ---------------------------------------------------------------------------------------
 * Queues and abort (used by the transport and the timeout path)
 * ------------------------------------------------------------------------------------- */

static int
queue_cmd(struct nvp_nvme_ctrlr *ctrlr, struct nvme_cmd *cmd, const char *what, uint16_t qid)
{
	struct nvme_cpl cpl;
	int rc;

	memset(&cpl, 0, sizeof(cpl));
	rc = admin_sync(ctrlr, cmd, NULL, 0, &cpl, true);
	if (rc == -EIO) {
		char buf[96];

		NVP_ERRLOG("%s: %s %u failed: %s", ctrlr->name, what, qid,
			   nvp_nvme_cpl_fmt(buf, sizeof(buf), &cpl));
	}
	return rc;
}

void
nvme_ctrlr_cmd_build_create_io_cq(struct nvme_cmd *cmd, uint16_t qid, int32_t iv, uint32_t entries,
				  uint64_t iova)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = NVME_OPC_CREATE_IO_CQ;
	cmd->dptr.prp.prp1 = iova;
	cmd->cdw10 = NVME_CREATE_IO_Q_CDW10(qid, entries);
	cmd->cdw11 = NVME_CREATE_IO_CQ_PC; /* iv < 0: polled, no interrupts */
	if (iv >= 0) {
		cmd->cdw11 |= NVME_CREATE_IO_CQ_IEN | ((uint32_t)iv << 16);
	}
}

void
nvme_ctrlr_cmd_build_create_io_sq(struct nvme_cmd *cmd, uint16_t qid, uint32_t entries,
				  uint64_t iova, uint8_t qprio)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = NVME_OPC_CREATE_IO_SQ;
	cmd->dptr.prp.prp1 = iova;
	cmd->cdw10 = NVME_CREATE_IO_Q_CDW10(qid, entries);
	cmd->cdw11 = NVME_CREATE_IO_SQ_PC |
		     ((uint32_t)(qprio & 3u) << NVME_CREATE_IO_SQ_QPRIO_SHIFT) |
		     ((uint32_t)qid << NVME_CREATE_IO_SQ_CQID_SHIFT);
}

int
nvme_ctrlr_cmd_create_io_cq(struct nvp_nvme_ctrlr *ctrlr, uint16_t qid, int32_t iv,
			    uint32_t entries, uint64_t iova)
{
	struct nvme_cmd cmd;

	nvme_ctrlr_cmd_build_create_io_cq(&cmd, qid, iv, entries, iova);
	return queue_cmd(ctrlr, &cmd, "Create I/O CQ", qid);
}

int
nvme_ctrlr_cmd_create_io_sq(struct nvp_nvme_ctrlr *ctrlr, uint16_t qid, uint32_t entries,
			    uint64_t iova, uint8_t qprio)
{
	struct nvme_cmd cmd;

	nvme_ctrlr_cmd_build_create_io_sq(&cmd, qid, entries, iova, qprio);
	return queue_cmd(ctrlr, &cmd, "Create I/O SQ", qid);
}

/* Shadow doorbells and EventIdx (section 5.7 of NVMe 1.3): one page each. */
int
nvme_ctrlr_cmd_doorbell_buffer_config(struct nvp_nvme_ctrlr *ctrlr, uint64_t db_iova,
				      uint64_t ei_iova)
{
	struct nvme_cmd cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_DOORBELL_BUFFER_CONFIG;
	cmd.dptr.prp.prp1 = db_iova;
	cmd.dptr.prp.prp2 = ei_iova;
	return queue_cmd(ctrlr, &cmd, "Doorbell Buffer Config for queues from", 1);
}

int
nvme_ctrlr_cmd_delete_io_queue(struct nvp_nvme_ctrlr *ctrlr, uint8_t opc, uint16_t qid)
{
	struct nvme_cmd cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = opc;
	cmd.cdw10 = qid;
	return queue_cmd(ctrlr, &cmd,
			 opc == NVME_OPC_DELETE_IO_SQ ? "Delete I/O SQ" : "Delete I/O CQ", qid);
}

/*
 * Send Abort (SQID, CID). With @trylock, never wait for the admin lock: -EAGAIN when it
 * is busy or no admin request object is free (the caller retries on its next poll).
 */
int
nvme_ctrlr_cmd_abort(struct nvp_nvme_ctrlr *ctrlr, uint16_t sqid, uint16_t cid, nvp_nvme_cmd_cb cb,
		     void *cb_arg, bool trylock)
{
	struct nvme_cmd cmd;
	int rc;

	if (trylock) {
		if (pthread_mutex_trylock(&ctrlr->adminq_lock) != 0) {
			return -EAGAIN;
		}
	} else {
		nvme_ctrlr_lock(ctrlr);
	}
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_ABORT;
	cmd.cdw10 = NVME_ABORT_CDW10(sqid, cid);
	rc = nvme_ctrlr_submit_admin(ctrlr, &cmd, NULL, 0, cb, cb_arg);
	nvme_ctrlr_unlock(ctrlr);
	return rc == -ENOMEM ? -EAGAIN : rc;
}

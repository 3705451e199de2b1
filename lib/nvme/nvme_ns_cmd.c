/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVM commands (NVMe 1.4 NVM command set, section 6): validate what the caller asked
 * for, fill a preallocated request, hand it to the qpair. Everything that can be checked
 * before the device sees the command is checked here and reported as -errno:
 *   -EINVAL  count 0 or a payload above 4 GiB; buffer not dword aligned; bad flags;
 *            payload not meeting the PRP rules (from the transport); plain I/O on a
 *            namespace with separate metadata, or a metadata buffer where there is none
 *   -ERANGE  LBA range past the end of the namespace
 *   -EFAULT  buffer not DMA memory (from the transport), metadata buffer not one
 *            IOVA-contiguous range of DMA memory
 *   -ENOMEM  every request object of the qpair in use
 *   -ENXIO   failed controller
 * A request above the transfer limit or across the optimal I/O boundary goes out in
 * pieces (nvme_ns_split.c).
 *
 * A contiguous read, write or compare within the transfer limit, with no protection
 * information flags, on an active namespace without NOIOB, protection information or separate
 * metadata takes the fast path (ns_rw, inline): one compare of the count against
 * ns->plain_max_sectors sends everything else to the general path (ns_rw_any).
 */
#include <errno.h>
#include <string.h>

#include "nvme_qpair_internal.h"

/*
 * The qpair's owner, an I/O qpair of the namespace's controller, an active namespace. A
 * reset identifies the namespaces again, each inactive until its answer is in; a
 * reconnect's reset takes several polls of its thread (nvme_fiber.c), between which the
 * application may submit: the request then waits with the others for the reset's end.
 */
static inline int
check_target(const struct nvp_nvme_ns *ns, const struct nvp_nvme_qpair *qpair)
{
	int rc = nvme_qpair_check_owner(qpair);

	if (nvp_unlikely(rc != 0)) {
		return rc;
	}
	if (nvp_unlikely(ns->ctrlr != qpair->ctrlr || qpair->is_admin)) {
		return -EINVAL;
	}
	if (nvp_unlikely(!ns->active) &&
	    !atomic_load_explicit(&ns->ctrlr->resetting, memory_order_relaxed)) {
		return -EINVAL;
	}
	return 0;
}

/* Checks common to every command with an LBA range; @lba_size 0 = no data transfer. */
static inline int
check_range(const struct nvp_nvme_ns *ns, const struct nvp_nvme_qpair *qpair, uint64_t lba,
	    uint32_t lba_count, uint32_t lba_size)
{
	int rc = check_target(ns, qpair);

	if (nvp_unlikely(rc != 0)) {
		return rc;
	}
	/* Larger requests are split, but one payload's size must fit in 32 bits. */
	if (nvp_unlikely(lba_count == 0 || (uint64_t)lba_count * lba_size > UINT32_MAX)) {
		return -EINVAL;
	}
	if (nvp_unlikely(lba >= ns->num_sectors || lba_count > ns->num_sectors - lba)) {
		return -ERANGE;
	}
	return 0;
}

/*
 * Metadata and protection information (section 5.2.3, 8.2, 8.3). A namespace with
 * separate metadata never gets a command without a metadata pointer: MPTR = 0 would have
 * the controller DMA to bus address 0. Only with PRACT and 8 bytes of metadata (all of it
 * protection information, inserted and stripped by the controller) is none needed.
 */
static int
check_md(const struct nvp_nvme_ns *ns, uint32_t io_flags, const void *md_buf)
{
	bool pract_only = (io_flags & NVME_IO_FLAGS_PRACT) != 0 && ns->md_size == 8;

	if (nvp_unlikely((io_flags & NVME_IO_FLAGS_PRINFO_MASK) != 0 && ns->pi_type == 0)) {
		NVP_ERRLOG("namespace %u is not formatted with protection information: PRACT "
			   "and PRCHK flags are not allowed",
			   ns->id);
		return -EINVAL;
	}
	if (md_buf == NULL) {
		if (nvp_unlikely(ns->md_separate && !pract_only)) {
			NVP_ERRLOG("namespace %u has %u bytes of separate metadata per block: use "
				   "the _with_md calls with a metadata buffer (or PRACT, for "
				   "protection information only)",
				   ns->id, ns->md_size);
			return -EINVAL;
		}
		return 0;
	}
	if (nvp_unlikely(!ns->md_separate)) {
		NVP_ERRLOG("namespace %u has no separate metadata (%s): pass no metadata buffer",
			   ns->id, ns->md_size ? "it is interleaved with the data" : "none");
		return -EINVAL;
	}
	return 0;
}

/* CDW10/11 = starting LBA, CDW12 = NLB (0's based) | flags. */
static inline void
set_lba_cmd(struct nvme_request *req, const struct nvp_nvme_ns *ns, uint8_t opc, uint64_t lba,
	    uint32_t lba_count, uint32_t io_flags)
{
	req->cmd.opc = opc;
	req->cmd.nsid = ns->id;
	req->cmd.cdw10 = (uint32_t)lba;
	req->cmd.cdw11 = (uint32_t)(lba >> 32);
	req->cmd.cdw12 = ((lba_count - 1u) & 0xffffu) | io_flags;
}

/* What a read, write or compare carries besides its LBA range. */
struct rw_args {
	uint8_t opc;
	uint32_t io_flags;
	void *buf; /* contiguous payload, or NULL for an SGL */
	nvp_nvme_req_reset_sgl_cb reset_sgl_fn;
	nvp_nvme_req_next_sge_cb next_sge_fn;
	void *md_buf;
	uint16_t apptag_mask;
	uint16_t apptag;
	uint32_t cdw13; /* directive writes: DSPEC */
};

/* One command, or a parent whose children the split code sends. */
static int
submit_rw(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, struct nvme_request *req,
	  uint64_t lba, uint32_t lba_count)
{
	int rc;

	if (nvp_likely(!nvme_split_needed(lba, lba_count, ns->max_io_sectors, ns->noiob))) {
		if (nvp_unlikely(req->md_buf != NULL)) {
			rc = nvme_md_iova(req->md_buf, lba_count * ns->md_size, &req->cmd.mptr);
			if (rc != 0) {
				nvme_qpair_free_request(qpair, req);
				return rc;
			}
		}
		return nvme_qpair_submit_request(qpair, req);
	}
	req->ns = ns;
	req->split_lba = lba;
	req->split_left = lba_count;
	return nvme_split_submit(qpair, req);
}

/* Read, write, compare: contiguous or SGL payload, optional separate metadata. */
static int
ns_rw_any(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, const struct rw_args *a,
	  uint64_t lba, uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg)
{
	uint32_t lba_size = nvme_ns_host_lba_size(ns, a->io_flags);
	struct nvme_request *req;
	int rc = check_range(ns, qpair, lba, lba_count, lba_size);

	if (nvp_unlikely(rc != 0)) {
		return rc;
	}
	if (nvp_unlikely((a->io_flags & ~NVME_IO_FLAGS_RW_VALID) != 0 ||
			 (a->buf == NULL && (a->reset_sgl_fn == NULL || a->next_sge_fn == NULL)) ||
			 ((uintptr_t)a->buf & 3u) != 0)) {
		return -EINVAL;
	}
	rc = check_md(ns, a->io_flags, a->md_buf);
	if (nvp_unlikely(rc != 0)) {
		return rc;
	}
	req = nvme_qpair_alloc_request(qpair);
	if (nvp_unlikely(req == NULL)) {
		return -ENOMEM;
	}
	nvme_request_init(req, cb, cb_arg);
	set_lba_cmd(req, ns, a->opc, lba, lba_count, a->io_flags);
	req->cmd.cdw13 = a->cdw13;
	if (ns->pi_type == 1 || ns->pi_type == 2) {
		req->cmd.cdw14 = (uint32_t)lba; /* ILBRT: types 1 and 2 check it against the LBA */
	}
	req->cmd.cdw15 = ((uint32_t)a->apptag_mask << 16) | a->apptag;
	req->md_buf = a->md_buf;
	if (a->buf != NULL) {
		nvme_request_set_contig(req, a->buf, lba_count * lba_size);
	} else {
		req->payload.type = NVME_PAYLOAD_SGL;
		req->payload.size = lba_count * lba_size;
		req->payload.reset_sgl_fn = a->reset_sgl_fn;
		req->payload.next_sge_fn = a->next_sge_fn;
		req->payload.sgl_arg = cb_arg; /* as SPDK: the SGL callbacks get the cb_arg */
	}
	return submit_rw(ns, qpair, req, lba, lba_count);
}

/*
 * Read, write, compare on a contiguous buffer (inline in each: no second call per I/O).
 * The common case costs one compare more than a driver that never splits: a count of 0
 * or above ns->plain_max_sectors (0 for NOIOB, protection information or separate
 * metadata) and protection information flags go to the general path, which checks all.
 */
static inline __attribute__((always_inline)) int
ns_rw(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, uint8_t opc, void *buf, uint64_t lba,
      uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags, uint32_t cdw13)
{
	struct nvme_request *req;
	struct nvme_tracker *tr;
	int rc;

	if (nvp_unlikely(lba_count - 1u >= ns->plain_max_sectors ||
			 (io_flags & ~NVME_IO_FLAGS_RW_PLAIN) != 0)) {
		struct rw_args a = { .opc = opc, .io_flags = io_flags, .buf = buf, .cdw13 = cdw13 };

		return buf == NULL ? -EINVAL : ns_rw_any(ns, qpair, &a, lba, lba_count, cb, cb_arg);
	}
	/* check_target() but for active: an inactive namespace's plain_max_sectors is 0 */
	rc = nvme_qpair_check_owner(qpair);
	if (nvp_unlikely(rc != 0)) {
		return rc;
	}
	if (nvp_unlikely(ns->ctrlr != qpair->ctrlr || qpair->is_admin)) {
		return -EINVAL;
	}
	if (nvp_unlikely(lba >= ns->num_sectors || lba_count > ns->num_sectors - lba)) {
		return -ERANGE;
	}
	if (nvp_unlikely(buf == NULL || ((uintptr_t)buf & 3u) != 0)) {
		return -EINVAL;
	}
	tr = nvme_qpair_free_slot(qpair); /* before the request is built (see there) */
	req = nvme_qpair_alloc_request(qpair);
	if (nvp_unlikely(req == NULL)) {
		return -ENOMEM;
	}
	nvme_request_init(req, cb, cb_arg);
	set_lba_cmd(req, ns, opc, lba, lba_count, io_flags);
	req->cmd.cdw13 = cdw13;
	/* nvme_request_set_contig() knowing the payload is not empty (buf checked, the size
	 * at most the max transfer): the transport's test of its type folds away (5
	 * instructions fewer per I/O, bench/driver_cost) */
	req->payload.buf = buf;
	req->payload.size = lba_count * ns->sector_size;
	req->payload.type = NVME_PAYLOAD_CONTIG;
	return nvme_qpair_submit_in(qpair, tr, req);
}

int
nvp_nvme_ns_cmd_read(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, void *buf, uint64_t lba,
		     uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags)
{
	return ns_rw(ns, qpair, NVME_OPC_READ, buf, lba, lba_count, cb, cb_arg, io_flags, 0);
}

int
nvp_nvme_ns_cmd_write(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, void *buf, uint64_t lba,
		      uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags)
{
	return ns_rw(ns, qpair, NVME_OPC_WRITE, buf, lba, lba_count, cb, cb_arg, io_flags, 0);
}

int
nvp_nvme_ns_cmd_compare(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, void *buf,
			uint64_t lba, uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg,
			uint32_t io_flags)
{
	return ns_rw(ns, qpair, NVME_OPC_COMPARE, buf, lba, lba_count, cb, cb_arg, io_flags, 0);
}

int
nvp_nvme_ns_cmd_readv(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, uint64_t lba,
		      uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags,
		      nvp_nvme_req_reset_sgl_cb reset_sgl_fn, nvp_nvme_req_next_sge_cb next_sge_fn)
{
	struct rw_args a = { .opc = NVME_OPC_READ,
			     .io_flags = io_flags,
			     .reset_sgl_fn = reset_sgl_fn,
			     .next_sge_fn = next_sge_fn };

	return ns_rw_any(ns, qpair, &a, lba, lba_count, cb, cb_arg);
}

int
nvp_nvme_ns_cmd_writev(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, uint64_t lba,
		       uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags,
		       nvp_nvme_req_reset_sgl_cb reset_sgl_fn, nvp_nvme_req_next_sge_cb next_sge_fn)
{
	struct rw_args a = { .opc = NVME_OPC_WRITE,
			     .io_flags = io_flags,
			     .reset_sgl_fn = reset_sgl_fn,
			     .next_sge_fn = next_sge_fn };

	return ns_rw_any(ns, qpair, &a, lba, lba_count, cb, cb_arg);
}

/* A write with a directive: DTYPE in @io_flags (CDW12 23:20), @dspec in CDW13 31:16. */
int
nvp_nvme_ns_cmd_write_directive(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, void *buf,
				uint64_t lba, uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg,
				uint32_t io_flags, uint16_t dspec)
{
	return ns_rw(ns, qpair, NVME_OPC_WRITE, buf, lba, lba_count, cb, cb_arg, io_flags,
		     (uint32_t)dspec << NVME_IO_FLAGS_DSPEC_SHIFT);
}

int
nvp_nvme_ns_cmd_writev_directive(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, uint64_t lba,
				 uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg,
				 uint32_t io_flags, uint16_t dspec,
				 nvp_nvme_req_reset_sgl_cb reset_sgl_fn,
				 nvp_nvme_req_next_sge_cb next_sge_fn)
{
	struct rw_args a = { .opc = NVME_OPC_WRITE,
			     .io_flags = io_flags,
			     .reset_sgl_fn = reset_sgl_fn,
			     .next_sge_fn = next_sge_fn,
			     .cdw13 = (uint32_t)dspec << NVME_IO_FLAGS_DSPEC_SHIFT };

	return ns_rw_any(ns, qpair, &a, lba, lba_count, cb, cb_arg);
}

/* ---- separate metadata (MPTR) ---- */

static int
ns_rw_md(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, struct rw_args *a, void *md_buf,
	 uint64_t lba, uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg, uint16_t apptag_mask,
	 uint16_t apptag)
{
	a->md_buf = md_buf;
	a->apptag_mask = apptag_mask;
	a->apptag = apptag;
	return ns_rw_any(ns, qpair, a, lba, lba_count, cb, cb_arg);
}

int
nvp_nvme_ns_cmd_read_with_md(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, void *buf,
			     void *md_buf, uint64_t lba, uint32_t lba_count, nvp_nvme_cmd_cb cb,
			     void *cb_arg, uint32_t io_flags, uint16_t apptag_mask, uint16_t apptag)
{
	struct rw_args a = { .opc = NVME_OPC_READ, .io_flags = io_flags, .buf = buf };

	if (buf == NULL) {
		return -EINVAL;
	}
	return ns_rw_md(ns, qpair, &a, md_buf, lba, lba_count, cb, cb_arg, apptag_mask, apptag);
}

int
nvp_nvme_ns_cmd_write_with_md(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, void *buf,
			      void *md_buf, uint64_t lba, uint32_t lba_count, nvp_nvme_cmd_cb cb,
			      void *cb_arg, uint32_t io_flags, uint16_t apptag_mask,
			      uint16_t apptag)
{
	struct rw_args a = { .opc = NVME_OPC_WRITE, .io_flags = io_flags, .buf = buf };

	if (buf == NULL) {
		return -EINVAL;
	}
	return ns_rw_md(ns, qpair, &a, md_buf, lba, lba_count, cb, cb_arg, apptag_mask, apptag);
}

int
nvp_nvme_ns_cmd_readv_with_md(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, uint64_t lba,
			      uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg,
			      uint32_t io_flags, nvp_nvme_req_reset_sgl_cb reset_sgl_fn,
			      nvp_nvme_req_next_sge_cb next_sge_fn, void *md_buf,
			      uint16_t apptag_mask, uint16_t apptag)
{
	struct rw_args a = { .opc = NVME_OPC_READ,
			     .io_flags = io_flags,
			     .reset_sgl_fn = reset_sgl_fn,
			     .next_sge_fn = next_sge_fn };

	return ns_rw_md(ns, qpair, &a, md_buf, lba, lba_count, cb, cb_arg, apptag_mask, apptag);
}

int
nvp_nvme_ns_cmd_writev_with_md(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, uint64_t lba,
			       uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg,
			       uint32_t io_flags, nvp_nvme_req_reset_sgl_cb reset_sgl_fn,
			       nvp_nvme_req_next_sge_cb next_sge_fn, void *md_buf,
			       uint16_t apptag_mask, uint16_t apptag)
{
	struct rw_args a = { .opc = NVME_OPC_WRITE,
			     .io_flags = io_flags,
			     .reset_sgl_fn = reset_sgl_fn,
			     .next_sge_fn = next_sge_fn };

	return ns_rw_md(ns, qpair, &a, md_buf, lba, lba_count, cb, cb_arg, apptag_mask, apptag);
}

int
nvp_nvme_ns_cmd_write_zeroes(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, uint64_t lba,
			     uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg,
			     uint32_t io_flags)
{
	struct nvme_request *req;
	int rc = check_range(ns, qpair, lba, lba_count, 0);

	if (nvp_unlikely(rc != 0)) {
		return rc;
	}
	if (nvp_unlikely((io_flags & ~NVME_IO_FLAGS_WZ_VALID) != 0)) {
		return -EINVAL;
	}
	req = nvme_qpair_alloc_request(qpair);
	if (nvp_unlikely(req == NULL)) {
		return -ENOMEM;
	}
	nvme_request_init(req, cb, cb_arg);
	set_lba_cmd(req, ns, NVME_OPC_WRITE_ZEROES, lba, lba_count, io_flags);
	if (nvp_likely(lba_count <= NVME_MAX_LBA_COUNT)) {
		return nvme_qpair_submit_request(qpair, req);
	}
	/* NLB is 16 bits: more blocks go as several commands. */
	req->md_buf = NULL;
	req->ns = ns;
	req->split_lba = lba;
	req->split_left = lba_count;
	return nvme_split_submit(qpair, req);
}

static int
check_dsm_ranges(const struct nvp_nvme_ns *ns, const struct nvme_dsm_range *ranges,
		 uint16_t num_ranges)
{
	uint16_t i;

	if (ranges == NULL || num_ranges == 0 || num_ranges > NVME_DSM_MAX_RANGES) {
		return -EINVAL;
	}
	for (i = 0; i < num_ranges; i++) {
		uint64_t slba = ranges[i].starting_lba;

		if (slba > ns->num_sectors || ranges[i].length > ns->num_sectors - slba) {
			return -ERANGE;
		}
	}
	return 0;
}

int
nvp_nvme_ns_cmd_dataset_management(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair,
				   uint32_t attributes, const struct nvme_dsm_range *ranges,
				   uint16_t num_ranges, nvp_nvme_cmd_cb cb, void *cb_arg)
{
	struct nvme_request *req;
	void *page;
	uint32_t len = (uint32_t)num_ranges * sizeof(struct nvme_dsm_range);
	int rc = nvme_qpair_check_owner(qpair);

	if (rc != 0) {
		return rc;
	}
	if (ns->ctrlr != qpair->ctrlr || qpair->is_admin || !ns->active) {
		return -EINVAL;
	}
	rc = check_dsm_ranges(ns, ranges, num_ranges);
	if (rc != 0) {
		return rc;
	}
	req = nvme_qpair_alloc_request(qpair);
	if (req == NULL) {
		return -ENOMEM;
	}
	nvme_request_init(req, cb, cb_arg);
	/* The caller's ranges may be any memory: copy them into a DMA page of the qpair. */
	page = nvme_qpair_get_dsm_page(qpair, req);
	if (page == NULL) {
		nvme_qpair_free_request(qpair, req);
		return -ENOMEM;
	}
	memcpy(page, ranges, len);
	req->cmd.opc = NVME_OPC_DATASET_MANAGEMENT;
	req->cmd.nsid = ns->id;
	req->cmd.cdw10 = num_ranges - 1u; /* NR, 0's based */
	req->cmd.cdw11 = attributes;
	nvme_request_set_contig(req, page, len);
	return nvme_qpair_submit_request(qpair, req);
}

int
nvp_nvme_ns_cmd_flush(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, nvp_nvme_cmd_cb cb,
		      void *cb_arg)
{
	struct nvme_request *req;
	int rc = nvme_qpair_check_owner(qpair);

	if (rc != 0) {
		return rc;
	}
	if (ns->ctrlr != qpair->ctrlr || qpair->is_admin || !ns->active) {
		return -EINVAL;
	}
	req = nvme_qpair_alloc_request(qpair);
	if (req == NULL) {
		return -ENOMEM;
	}
	nvme_request_init(req, cb, cb_arg);
	req->cmd.opc = NVME_OPC_FLUSH;
	req->cmd.nsid = ns->id;
	return nvme_qpair_submit_request(qpair, req);
}

int
nvp_nvme_ctrlr_cmd_io_raw(struct nvp_nvme_ctrlr *ctrlr, struct nvp_nvme_qpair *qpair,
			  const struct nvme_cmd *cmd, void *buf, uint32_t len, nvp_nvme_cmd_cb cb,
			  void *cb_arg)
{
	struct nvme_request *req;
	int rc;

	if (ctrlr == NULL || qpair == NULL || cmd == NULL) {
		return -EINVAL;
	}
	rc = nvme_qpair_check_owner(qpair);
	if (rc != 0) {
		return rc;
	}
	if (qpair->ctrlr != ctrlr || qpair->is_admin || (len != 0 && buf == NULL) ||
	    ((uintptr_t)buf & 3u) != 0 || len > ctrlr->max_xfer_size) {
		return -EINVAL;
	}
	req = nvme_qpair_alloc_request(qpair);
	if (req == NULL) {
		return -ENOMEM;
	}
	nvme_request_init(req, cb, cb_arg);
	req->cmd = *cmd;
	memset(&req->cmd.dptr, 0, sizeof(req->cmd.dptr)); /* the driver builds the PRPs */
	nvme_request_set_contig(req, len ? buf : NULL, len);
	return nvme_qpair_submit_request(qpair, req);
}

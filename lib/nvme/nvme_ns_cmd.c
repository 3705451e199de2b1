/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVM commands (NVMe 1.4 NVM command set, section 6): validate what the caller asked
 * for, fill a preallocated request, hand it to the qpair. Everything that can be checked
 * before the device sees the command is checked here and reported as -errno:
 *   -EINVAL  count 0, above 65536 or above the max transfer; buffer not dword aligned;
 *            bad flags; payload not meeting the PRP rules (from the transport)
 *   -ERANGE  LBA range past the end of the namespace
 *   -EFAULT  buffer not DMA memory (from the transport)
 *   -ENOMEM  every request object of the qpair in use
 *   -ENXIO   failed controller
 */
#include <errno.h>
#include <string.h>

#include "nvme_internal.h"

/* Checks common to every command with an LBA range. */
static inline int
check_range(const struct nvp_nvme_ns *ns, const struct nvp_nvme_qpair *qpair, uint64_t lba,
	    uint32_t lba_count, bool transfers)
{
	int rc = nvme_qpair_check_owner(qpair);

	if (nvp_unlikely(rc != 0)) {
		return rc;
	}
	if (nvp_unlikely(ns->ctrlr != qpair->ctrlr || qpair->is_admin || !ns->active)) {
		return -EINVAL;
	}
	if (nvp_unlikely(lba_count == 0 || lba_count > NVME_MAX_LBA_COUNT ||
			 (transfers && lba_count > ns->max_io_sectors))) {
		return -EINVAL;
	}
	if (nvp_unlikely(lba >= ns->num_sectors || lba_count > ns->num_sectors - lba)) {
		return -ERANGE;
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
	req->cmd.cdw12 = (lba_count - 1u) | io_flags;
}

/* Read, write, compare on a contiguous buffer (inline in each: no second call per I/O). */
static inline __attribute__((always_inline)) int
ns_rw(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, uint8_t opc, void *buf, uint64_t lba,
      uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags, uint32_t cdw13)
{
	struct nvme_request *req;
	int rc = check_range(ns, qpair, lba, lba_count, true);

	if (nvp_unlikely(rc != 0)) {
		return rc;
	}
	if (nvp_unlikely(buf == NULL || ((uintptr_t)buf & 3u) != 0 ||
			 (io_flags & ~NVME_IO_FLAGS_RW_VALID) != 0)) {
		return -EINVAL;
	}
	req = nvme_qpair_alloc_request(qpair);
	if (nvp_unlikely(req == NULL)) {
		return -ENOMEM;
	}
	nvme_request_init(req, cb, cb_arg);
	set_lba_cmd(req, ns, opc, lba, lba_count, io_flags);
	req->cmd.cdw13 = cdw13;
	nvme_request_set_contig(req, buf, lba_count * ns->sector_size);
	return nvme_qpair_submit_request(qpair, req);
}

/* Readv, writev: the payload is walked through the caller's SGL callbacks. */
static int
ns_rwv(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, uint8_t opc, uint64_t lba,
       uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags, uint32_t cdw13,
       nvp_nvme_req_reset_sgl_cb reset_sgl_fn, nvp_nvme_req_next_sge_cb next_sge_fn)
{
	struct nvme_request *req;
	int rc = check_range(ns, qpair, lba, lba_count, true);

	if (nvp_unlikely(rc != 0)) {
		return rc;
	}
	if (nvp_unlikely(reset_sgl_fn == NULL || next_sge_fn == NULL ||
			 (io_flags & ~NVME_IO_FLAGS_RW_VALID) != 0)) {
		return -EINVAL;
	}
	req = nvme_qpair_alloc_request(qpair);
	if (nvp_unlikely(req == NULL)) {
		return -ENOMEM;
	}
	nvme_request_init(req, cb, cb_arg);
	set_lba_cmd(req, ns, opc, lba, lba_count, io_flags);
	req->cmd.cdw13 = cdw13;
	req->payload.type = NVME_PAYLOAD_SGL;
	req->payload.size = lba_count * ns->sector_size;
	req->payload.reset_sgl_fn = reset_sgl_fn;
	req->payload.next_sge_fn = next_sge_fn;
	req->payload.sgl_arg = cb_arg; /* as SPDK: the SGL callbacks get the cb_arg */
	return nvme_qpair_submit_request(qpair, req);
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
	return ns_rwv(ns, qpair, NVME_OPC_READ, lba, lba_count, cb, cb_arg, io_flags, 0,
		      reset_sgl_fn, next_sge_fn);
}

int
nvp_nvme_ns_cmd_writev(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, uint64_t lba,
		       uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags,
		       nvp_nvme_req_reset_sgl_cb reset_sgl_fn, nvp_nvme_req_next_sge_cb next_sge_fn)
{
	return ns_rwv(ns, qpair, NVME_OPC_WRITE, lba, lba_count, cb, cb_arg, io_flags, 0,
		      reset_sgl_fn, next_sge_fn);
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
	return ns_rwv(ns, qpair, NVME_OPC_WRITE, lba, lba_count, cb, cb_arg, io_flags,
		      (uint32_t)dspec << NVME_IO_FLAGS_DSPEC_SHIFT, reset_sgl_fn, next_sge_fn);
}

int
nvp_nvme_ns_cmd_write_zeroes(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, uint64_t lba,
			     uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg,
			     uint32_t io_flags)
{
	struct nvme_request *req;
	int rc = check_range(ns, qpair, lba, lba_count, false);

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
	return nvme_qpair_submit_request(qpair, req);
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

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Split requests. A read, write or compare larger than the controller's transfer limit
 * (MDTS, section 5.15.2.1, and opts.max_io_size), or crossing the namespace's optimal I/O
 * boundary (NOIOB, section 5.15.2.2), and a write zeroes of more than 65536 blocks (NLB
 * is 16 bits), go to the device as several commands, "children", and complete once.
 *
 * The parent is a request object of the qpair that never reaches the device: it keeps
 * the caller's command, payload, metadata buffer and callback, and how far it has got.
 * Children are request objects too, taken from the qpair's free list as they are sent,
 * never allocated. A parent keeps at most split_max_children() children in flight. A
 * child's completion gives its request object back just before its callback runs (see
 * complete_request() in nvme_qpair.c), so that callback can always take the object again
 * for the next piece: a parent with one child in flight never waits for an object, and a
 * request needing more children than the qpair has objects at all still completes. The
 * bound keeps a few large requests from taking every object while the caller submits
 * others: with at most (requests / entries - 1) children each, as many parents as the
 * queue has slots fit in the qpair's objects.
 *
 * Each child's payload is the parent's from the child's byte offset on: a contiguous
 * buffer plus the offset, or the caller's SGL callbacks through a wrapper that adds the
 * offset to reset_sgl. A payload that meets the PRP rules (section 4.3) as a whole gives
 * children that meet them: a child's inner element boundaries are the parent's, and its
 * first and last element may start and end anywhere (dword aligned, as blocks are).
 * The parent completes with the status of the first child that failed; once one has
 * failed no more are sent.
 */
#include <errno.h>
#include <string.h>

#include "nvme_internal.h"

/* Most children one parent keeps in flight, whatever the qpair's size. */
#define SPLIT_MAX_CHILDREN 64u

/*
 * The bus address of @len bytes of metadata at @md_buf: one IOVA-contiguous range of DMA
 * memory, dword aligned (MPTR, section 4.2). \return 0, -EINVAL (alignment), -EFAULT.
 */
int
nvme_md_iova(const void *md_buf, uint32_t len, uint64_t *iova)
{
	uint64_t seg = len;

	if (md_buf == NULL || ((uintptr_t)md_buf & 3u) != 0) {
		return -EINVAL;
	}
	*iova = nvp_env_vtophys(md_buf, &seg);
	if (*iova == NVP_ENV_BAD_IOVA || seg < len) {
		return -EFAULT;
	}
	return 0;
}

/* A parent's children in flight at most: see the comment at the top. */
static uint32_t
split_max_children(const struct nvp_nvme_qpair *qpair)
{
	uint32_t per_entry = qpair->num_entries ? qpair->num_requests / qpair->num_entries : 1;

	return NVP_MAX(1u, NVP_MIN(per_entry > 1 ? per_entry - 1 : 1, SPLIT_MAX_CHILDREN));
}

/* A child's SGL: the parent's, from the child's offset on. */
static void
child_reset_sgl(void *arg, uint32_t offset)
{
	struct nvme_request *child = arg;
	struct nvme_request *parent = child->parent;

	parent->payload.reset_sgl_fn(parent->payload.sgl_arg, child->split_offset + offset);
}

static int
child_next_sge(void *arg, void **address, uint32_t *length)
{
	struct nvme_request *parent = ((struct nvme_request *)arg)->parent;

	return parent->payload.next_sge_fn(parent->payload.sgl_arg, address, length);
}

static inline uint64_t
cmd_lba(const struct nvme_cmd *cmd)
{
	return (uint64_t)cmd->cdw10 | ((uint64_t)cmd->cdw11 << 32);
}

static void child_cb(void *arg, const struct nvme_cpl *cpl);

/* Fill @child with the parent's next @count LBAs. \return 0 or -EFAULT (metadata). */
static int
child_build(struct nvme_request *parent, struct nvme_request *child, uint32_t count)
{
	const struct nvp_nvme_ns *ns = parent->ns;
	uint64_t first = cmd_lba(&parent->cmd);
	uint64_t lba = parent->split_lba;
	uint32_t bytes = count * nvme_ns_host_lba_size(ns, parent->cmd.cdw12);

	nvme_request_init(child, child_cb, parent);
	child->parent = parent;
	child->cmd = parent->cmd;
	child->cmd.cdw10 = (uint32_t)lba;
	child->cmd.cdw11 = (uint32_t)(lba >> 32);
	child->cmd.cdw12 = (parent->cmd.cdw12 & 0xffff0000u) | (count - 1u);
	/* Protection information types 1 and 2: the reference tag follows the LBA. */
	child->cmd.cdw14 = parent->cmd.cdw14 + (uint32_t)(lba - first);
	if (parent->md_buf != NULL) {
		uint8_t *md = (uint8_t *)parent->md_buf + (lba - first) * ns->md_size;
		int rc = nvme_md_iova(md, count * ns->md_size, &child->cmd.mptr);

		if (rc != 0) {
			return rc;
		}
	}
	switch (parent->payload.type) {
	case NVME_PAYLOAD_CONTIG:
		nvme_request_set_contig(
			child, (uint8_t *)parent->payload.buf + parent->split_offset, bytes);
		break;
	case NVME_PAYLOAD_SGL:
		child->payload.type = NVME_PAYLOAD_SGL;
		child->payload.size = bytes;
		child->payload.reset_sgl_fn = child_reset_sgl;
		child->payload.next_sge_fn = child_next_sge;
		child->payload.sgl_arg = child;
		child->split_offset = parent->split_offset;
		break;
	default:
		break;
	}
	parent->split_lba += count;
	parent->split_left -= count;
	parent->split_offset += parent->payload.type == NVME_PAYLOAD_NONE ? 0 : bytes;
	return 0;
}

/*
 * A status for a child the host could not send: its errno as an NVMe status. -ENXIO (the
 * controller or qpair failed) may be retried after a reset unless the device is removed or
 * the qpair is being freed; any other errno (a payload its callbacks now refuse) will not
 * do better the next time (DNR).
 */
static uint16_t
errno_status(const struct nvp_nvme_qpair *qpair, int rc)
{
	struct nvme_cpl cpl;

	memset(&cpl, 0, sizeof(cpl));
	if (rc == -ENXIO) {
		nvme_cpl_set_status(&cpl, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION,
				    nvme_qpair_gone_for_good(qpair));
	} else {
		nvme_cpl_set_status(&cpl, NVME_SCT_GENERIC, NVME_SC_DATA_TRANSFER_ERROR, true);
	}
	return cpl.status_raw;
}

/* LBAs of the parent's next child. */
static inline uint32_t
next_count(const struct nvme_request *parent)
{
	if (parent->payload.type == NVME_PAYLOAD_NONE) {
		/* Write zeroes: only NLB's 16 bits limit it. */
		return nvme_split_count(parent->split_lba, parent->split_left, NVME_MAX_LBA_COUNT,
					0);
	}
	return nvme_split_count(parent->split_lba, parent->split_left, parent->ns->max_io_sectors,
				parent->ns->noiob);
}

/* Build and send one child in @child. \return 0 or -errno (@child given back). */
static int
issue_one(struct nvp_nvme_qpair *qpair, struct nvme_request *parent, struct nvme_request *child)
{
	int rc = child_build(parent, child, next_count(parent));

	if (nvp_unlikely(rc != 0)) {
		nvme_qpair_free_request(qpair, child);
		return rc;
	}
	parent->num_children++;
	rc = nvme_qpair_submit_request(qpair, child); /* gives @child back on error */
	if (nvp_unlikely(rc != 0)) {
		parent->num_children--;
	}
	return rc;
}

/*
 * Send children while the parent has LBAs left, no child failed, fewer than the bound
 * are in flight and the qpair has free objects; one SQ doorbell for them all.
 * \return 0, or the -errno of a child that could not be sent (no more are sent then).
 */
static int
split_issue(struct nvp_nvme_qpair *qpair, struct nvme_request *parent)
{
	uint32_t max_children = split_max_children(qpair);
	bool batch = qpair->in_batch;
	int rc = 0;

	if (!batch) {
		/* Submissions in a batch take their deadline from poll_ticks: make it now. */
		qpair->poll_ticks = nvme_ticks(qpair->ctrlr);
	}
	qpair->in_batch = true;
	while (parent->split_left > 0 && parent->split_status == 0 &&
	       parent->num_children < max_children) {
		struct nvme_request *child = nvme_qpair_alloc_request(qpair);

		if (child == NULL) {
			break;
		}
		rc = issue_one(qpair, parent, child);
		if (nvp_unlikely(rc != 0)) {
			parent->split_status = errno_status(qpair, rc);
			break;
		}
	}
	qpair->in_batch = batch;
	if (!batch && !qpair->delay_doorbell && qpair->sq_dirty) {
		qpair->transport->qpair_ring_doorbell(qpair);
		qpair->sq_dirty = false;
	}
	return rc;
}

/* Every child has completed (or none will be sent): give the parent back, call back. */
static void
parent_complete(struct nvme_request *parent, uint16_t last_cid)
{
	struct nvp_nvme_qpair *qpair = parent->qpair;
	nvp_nvme_cmd_cb cb = parent->cb_fn;
	void *cb_arg = parent->cb_arg;
	struct nvme_cpl cpl;

	memset(&cpl, 0, sizeof(cpl));
	cpl.sqid = qpair->id;
	cpl.cid = last_cid;
	cpl.status_raw = parent->split_status;
	nvme_qpair_free_request(qpair, parent);
	if (cb != NULL) {
		cb(cb_arg, &cpl);
	}
}

/*
 * A child completed. Its object is free again: the next child takes it, so a parent with
 * a child in flight always gets one.
 */
static void
child_cb(void *arg, const struct nvme_cpl *cpl)
{
	struct nvme_request *parent = arg;

	parent->num_children--;
	if (nvp_unlikely(nvme_cpl_is_error(cpl)) && parent->split_status == 0) {
		parent->split_status = cpl->status_raw;
	}
	if (parent->split_left > 0 && parent->split_status == 0) {
		split_issue(parent->qpair, parent);
	}
	if (parent->num_children == 0) {
		if (parent->split_left > 0 && parent->split_status == 0) {
			/* No object although one was just freed: cannot happen; never hang. */
			parent->split_status = errno_status(parent->qpair, -ENOMEM);
		}
		parent_complete(parent, cpl->cid);
	}
}

/*
 * Check every child's payload and metadata as the transport will when it is sent, so that
 * a bad buffer is reported by the submit call as for any request. The children are built
 * on the stack and the parent's progress is rewound afterwards.
 */
static int
split_check(struct nvp_nvme_qpair *qpair, struct nvme_request *parent)
{
	uint64_t lba = parent->split_lba;
	uint32_t left = parent->split_left;
	struct nvme_request probe;
	int rc = 0;

	while (rc == 0 && parent->split_left > 0) {
		rc = child_build(parent, &probe, next_count(parent));
		if (rc == 0 && probe.payload.type != NVME_PAYLOAD_NONE) {
			rc = qpair->transport->qpair_check_request(qpair, &probe);
		}
	}
	parent->split_lba = lba;
	parent->split_left = left;
	parent->split_offset = 0;
	return rc;
}

/*
 * Send @parent (command, payload, md_buf, ns and callback filled; its first LBA in
 * cdw10/11 and split_lba, its count in split_left) as children.
 * \return 0 (@parent completes through its callback), or -errno with @parent given back
 * and no callback: -ENOMEM when the qpair has no object for the first child, the
 * payload's -EINVAL/-EFAULT, -ENXIO.
 */
int
nvme_split_submit(struct nvp_nvme_qpair *qpair, struct nvme_request *parent)
{
	int rc;

	parent->qpair = qpair;
	parent->split_offset = 0;
	parent->num_children = 0;
	parent->split_status = 0;
	rc = split_check(qpair, parent);
	if (rc == 0 && SLIST_EMPTY(&qpair->free_req)) {
		rc = -ENOMEM;
	}
	if (rc == 0) {
		rc = split_issue(qpair, parent);
		if (parent->num_children > 0) {
			return 0; /* a later failure completes through the callback */
		}
	}
	nvme_qpair_free_request(qpair, parent);
	return rc != 0 ? rc : -ENOMEM;
}

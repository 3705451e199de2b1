/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Directives (NVMe 1.4 section 9) and write lifetime hints on top of them.
 *
 * Directive Send (19h) / Receive (1Ah) as synchronous admin helpers, the Identify and
 * Streams operations a host needs, and the hint layer: nvp_nvme_ns_hints_setup() asks
 * the controller once what it offers and builds a per-namespace table hint -> stream;
 * nvp_nvme_ns_cmd_write_hint() then costs one table lookup per write. As the Linux driver
 * did (nvme_configure_directives), nothing is sent to a controller whose OACS lacks the
 * Directives bit and whose CTRATT lacks FDPS, so probing such a controller (QEMU 7.2's)
 * changes nothing; a hint on a namespace without placement goes out as a plain write
 * and is counted. Where Flexible Data Placement is enabled (nvme_fdp.c) hints become
 * placement identifiers with DTYPE 2 instead of streams.
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "nvme_internal.h"

/* ---- Directive Send / Receive ---- */

int
nvp_nvme_ctrlr_directive(struct nvp_nvme_ctrlr *ctrlr, bool send, uint32_t nsid, uint8_t dtype,
			 uint8_t doper, uint16_t dspec, uint32_t cdw12, void *buf, uint32_t len,
			 uint32_t *result, struct nvme_cpl *cpl)
{
	struct nvme_cpl tmp;
	struct nvme_cmd cmd;
	int rc;

	if (ctrlr == NULL || (len & 3u) != 0 || (len != 0 && buf == NULL)) {
		return -EINVAL;
	}
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = send ? NVME_OPC_DIRECTIVE_SEND : NVME_OPC_DIRECTIVE_RECEIVE;
	cmd.nsid = nsid;
	cmd.cdw10 = len != 0 ? len / 4u - 1u : 0; /* NUMD, 0's based */
	cmd.cdw11 = NVME_DIR_CDW11(doper, dtype, dspec);
	cmd.cdw12 = cdw12;
	memset(&tmp, 0, sizeof(tmp));
	rc = nvp_nvme_ctrlr_cmd_admin_sync(ctrlr, &cmd, buf, len, &tmp);
	if (result != NULL) {
		*result = tmp.cdw0;
	}
	if (cpl != NULL) {
		*cpl = tmp;
	}
	return rc;
}

int
nvp_nvme_ns_identify_directives(struct nvp_nvme_ns *ns, struct nvme_dir_identify_params *out,
				struct nvme_cpl *cpl)
{
	if (ns == NULL || out == NULL) {
		return -EINVAL;
	}
	return nvp_nvme_ctrlr_directive(ns->ctrlr, false, ns->id, NVME_DIRECTIVE_TYPE_IDENTIFY,
					NVME_DIR_RECV_IDENTIFY_PARAMS, 0, 0, out, sizeof(*out),
					NULL, cpl);
}

int
nvp_nvme_ns_streams_enable(struct nvp_nvme_ns *ns, bool enable, struct nvme_cpl *cpl)
{
	if (ns == NULL) {
		return -EINVAL;
	}
	return nvp_nvme_ctrlr_directive(ns->ctrlr, true, ns->id, NVME_DIRECTIVE_TYPE_IDENTIFY,
					NVME_DIR_SEND_IDENTIFY_ENABLE, 0,
					NVME_DIR_ENABLE_CDW12(NVME_DIRECTIVE_TYPE_STREAMS, enable),
					NULL, 0, NULL, cpl);
}

int
nvp_nvme_ns_streams_get_params(struct nvp_nvme_ns *ns, struct nvme_dir_streams_params *out,
			       struct nvme_cpl *cpl)
{
	if (ns == NULL || out == NULL) {
		return -EINVAL;
	}
	return nvp_nvme_ctrlr_directive(ns->ctrlr, false, ns->id, NVME_DIRECTIVE_TYPE_STREAMS,
					NVME_DIR_RECV_STREAMS_PARAMS, 0, 0, out, sizeof(*out), NULL,
					cpl);
}

int
nvp_nvme_ns_streams_allocate(struct nvp_nvme_ns *ns, uint16_t nsr, uint16_t *nsa,
			     struct nvme_cpl *cpl)
{
	uint32_t dw0 = 0;
	int rc;

	if (ns == NULL || nsa == NULL) {
		return -EINVAL;
	}
	rc = nvp_nvme_ctrlr_directive(ns->ctrlr, false, ns->id, NVME_DIRECTIVE_TYPE_STREAMS,
				      NVME_DIR_RECV_STREAMS_ALLOC_RES, 0, nsr, NULL, 0, &dw0, cpl);
	*nsa = rc == 0 ? (uint16_t)(dw0 & 0xffffu) : 0;
	return rc;
}

/* ---- hints ---- */

/* A status error ends the set-up with no placement; a host error is returned. */
static int
setup_step(struct nvp_nvme_ns *ns, int rc, const char *what, const struct nvme_cpl *cpl)
{
	char st[96];

	if (rc == -EIO) {
		NVP_INFOLOG("%s ns %u: %s refused (%s): write hints dropped", ns->ctrlr->name,
			    ns->id, what, nvp_nvme_cpl_fmt(st, sizeof(st), cpl));
	}
	return rc;
}

static int
streams_setup(struct nvp_nvme_ns *ns, uint16_t max_streams)
{
	struct nvme_dir_streams_params p;
	struct nvme_cpl cpl;
	uint16_t nsa = 0;
	int rc;

	rc = setup_step(ns, nvp_nvme_ns_streams_enable(ns, true, &cpl), "enable streams", &cpl);
	if (rc == 0) {
		rc = setup_step(ns, nvp_nvme_ns_streams_get_params(ns, &p, &cpl),
				"streams parameters", &cpl);
	}
	if (rc == 0) {
		max_streams = max_streams != 0 ? max_streams : NVP_NVME_WRITE_HINT_COUNT - 1;
		rc = setup_step(
			ns,
			nvp_nvme_ns_streams_allocate(ns, NVP_MIN(max_streams, p.msl), &nsa, &cpl),
			"streams allocation", &cpl);
	}
	if (rc == 0) {
		nvme_hint_map_build(ns, NVP_MIN(nsa, max_streams), NULL,
				    NVP_NVME_PLACEMENT_STREAMS);
		NVP_INFOLOG("%s ns %u: %u streams for write hints (MSL %u, SWS %u, SGS %u)",
			    ns->ctrlr->name, ns->id, ns->num_streams, p.msl, p.sws, p.sgs);
	}
	return rc;
}

int
nvp_nvme_ns_hints_setup(struct nvp_nvme_ns *ns, uint16_t max_streams)
{
	struct nvme_dir_identify_params id;
	struct nvme_cpl cpl;
	int rc;

	if (ns == NULL || !ns->active) {
		return -EINVAL;
	}
	nvme_hint_map_build(ns, 0, NULL, NVP_NVME_PLACEMENT_NONE);
	if (ns->ctrlr->cdata.ctratt & NVME_CTRATT_FDPS) {
		rc = nvme_fdp_hints_setup(ns, max_streams);
		if (rc != -ENODEV) {
			/* FDP in use, or it failed (logged): no Streams under FDP either way */
			return rc == -ENXIO || rc == -ETIMEDOUT || rc == -ENOMEM ? rc : 0;
		}
	}
	if (!(ns->ctrlr->cdata.oacs & NVME_OACS_DIRECTIVES)) {
		return 0; /* no directives: not a single command sent */
	}
	rc = setup_step(ns, nvp_nvme_ns_identify_directives(ns, &id, &cpl), "identify directives",
			&cpl);
	if (rc == 0 && (id.supported[0] & (1u << NVME_DIRECTIVE_TYPE_STREAMS))) {
		rc = streams_setup(ns, max_streams);
	}
	return rc == -EIO ? 0 : rc;
}

enum nvp_nvme_placement
nvp_nvme_ns_get_placement(const struct nvp_nvme_ns *ns)
{
	return ns != NULL ? ns->placement : NVP_NVME_PLACEMENT_NONE;
}

uint16_t
nvp_nvme_ns_get_num_streams(const struct nvp_nvme_ns *ns)
{
	return ns != NULL ? ns->num_streams : 0;
}

uint16_t
nvp_nvme_ns_get_hint_stream(const struct nvp_nvme_ns *ns, enum nvp_nvme_write_hint hint)
{
	if (ns == NULL || (unsigned)hint >= NVP_NVME_WRITE_HINT_COUNT) {
		return 0;
	}
	return ns->hint_dspec[hint];
}

uint64_t
nvp_nvme_ns_get_hints_dropped(const struct nvp_nvme_ns *ns)
{
	return ns != NULL ? __atomic_load_n(&ns->hints_dropped, __ATOMIC_RELAXED) : 0;
}

/* The directive of a hinted write into *@io_flags / *@dspec. \return 0 or -EINVAL. */
static inline int
hint_directive(struct nvp_nvme_ns *ns, enum nvp_nvme_write_hint hint, uint32_t *io_flags,
	       uint16_t *dspec)
{
	if (nvp_unlikely((unsigned)hint >= NVP_NVME_WRITE_HINT_COUNT ||
			 (*io_flags & NVME_IO_FLAGS_DTYPE_MASK) != 0)) {
		return -EINVAL;
	}
	*dspec = ns->hint_dspec[hint];
	if (*dspec != 0) {
		*io_flags |= ns->hint_dtype;
	} else if (hint != NVP_NVME_WRITE_HINT_NONE && ns->placement == NVP_NVME_PLACEMENT_NONE) {
		__atomic_fetch_add(&ns->hints_dropped, 1, __ATOMIC_RELAXED);
	}
	return 0;
}

int
nvp_nvme_ns_cmd_write_hint(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, void *buf,
			   uint64_t lba, uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg,
			   uint32_t io_flags, enum nvp_nvme_write_hint hint)
{
	uint16_t dspec;

	if (nvp_unlikely(ns == NULL) || hint_directive(ns, hint, &io_flags, &dspec) != 0) {
		return -EINVAL;
	}
	return nvp_nvme_ns_cmd_write_directive(ns, qpair, buf, lba, lba_count, cb, cb_arg, io_flags,
					       dspec);
}

int
nvp_nvme_ns_cmd_writev_hint(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, uint64_t lba,
			    uint32_t lba_count, nvp_nvme_cmd_cb cb, void *cb_arg, uint32_t io_flags,
			    enum nvp_nvme_write_hint hint, nvp_nvme_req_reset_sgl_cb reset_sgl_fn,
			    nvp_nvme_req_next_sge_cb next_sge_fn)
{
	uint16_t dspec;

	if (nvp_unlikely(ns == NULL) || hint_directive(ns, hint, &io_flags, &dspec) != 0) {
		return -EINVAL;
	}
	return nvp_nvme_ns_cmd_writev_directive(ns, qpair, lba, lba_count, cb, cb_arg, io_flags,
						dspec, reset_sgl_fn, next_sge_fn);
}

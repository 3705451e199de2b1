/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one place where generic code picks a transport on the I/O path: PCIe's submit,
 * doorbell and completion functions are called inline when the qpair is PCIe's (no
 * indirect call per I/O, and the compiler can fold the submission into its caller, as
 * SPDK does); every other transport goes through its struct nvme_transport_ops.
 *
 * Layering: nvme_internal.h (generic) <- nvme_pcie_internal.h (PCIe) <- this header <-
 * the generic qpair code (nvme_qpair_internal.h, nvme_qpair.c) and, through the qpair's
 * inline submission, the reads and writes of nvme_ns_cmd.c. Generic files include this
 * header, never a transport's internal header, and name no transport's fields. It calls
 * only the transports: the submission built on it is the qpair's (nvme_qpair_internal.h).
 */
#ifndef NVP_NVME_TRANSPORT_H
#define NVP_NVME_TRANSPORT_H

#include "nvme_pcie_internal.h"

static inline bool
nvme_transport_is_pcie(const struct nvp_nvme_qpair *qpair)
{
	return qpair->transport == &g_nvme_pcie_transport;
}

/* Put @req into the queue in slot @tr (see qpair_submit in struct nvme_transport_ops). */
static inline __attribute__((always_inline)) int
nvme_transport_qpair_submit(struct nvp_nvme_qpair *qpair, struct nvme_tracker *tr,
			    struct nvme_request *req)
{
	if (nvp_likely(nvme_transport_is_pcie(qpair))) {
		return nvme_pcie_qpair_submit(qpair, tr, req);
	}
	return qpair->transport->qpair_submit(qpair, tr, req);
}

/* Tell the device about the entries written since the last doorbell. */
static inline void
nvme_transport_qpair_ring_doorbell(struct nvp_nvme_qpair *qpair)
{
	if (nvp_likely(nvme_transport_is_pcie(qpair))) {
		nvme_pcie_qpair_ring_doorbell(qpair);
	} else {
		qpair->transport->qpair_ring_doorbell(qpair);
	}
}

static inline int32_t
nvme_transport_qpair_process_completions(struct nvp_nvme_qpair *qpair, uint32_t max)
{
	if (nvp_likely(nvme_transport_is_pcie(qpair))) {
		return nvme_pcie_qpair_process_completions(qpair, max);
	}
	return qpair->transport->qpair_process_completions(qpair, max);
}

static inline int
nvme_transport_qpair_check_request(struct nvp_nvme_qpair *qpair, struct nvme_request *req)
{
	if (nvp_likely(nvme_transport_is_pcie(qpair))) {
		return nvme_pcie_qpair_check_request(qpair, req);
	}
	return qpair->transport->qpair_check_request(qpair, req);
}

/* True if the qpair's SQ has a doorbell the host can write without MMIO (a shadow). */
static inline bool
nvme_transport_qpair_has_shadow(struct nvp_nvme_qpair *qpair)
{
	if (nvme_transport_is_pcie(qpair)) {
		return to_pcie_qpair(qpair)->sq_shadow != NULL;
	}
	return qpair->transport->qpair_ring_shadow != NULL;
}

/*
 * The SQ doorbell through the shadow only (nvme_transport_qpair_has_shadow() said yes).
 * \return true if the controller was told; false leaves the MMIO write owed.
 */
static inline bool
nvme_transport_qpair_ring_shadow(struct nvp_nvme_qpair *qpair)
{
	if (nvme_transport_is_pcie(qpair)) {
		return nvme_pcie_qpair_ring_shadow(qpair);
	}
	return qpair->transport->qpair_ring_shadow(qpair);
}

#endif /* NVP_NVME_TRANSPORT_H */

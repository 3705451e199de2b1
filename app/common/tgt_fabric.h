/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a fabrics controller answers the same way whatever is behind it (NVMe-oF 1.1),
 * once for both targets: nvp_tgt (app/tgt, bdevs behind it) and the tools' small target
 * (nvme_tcp_tgt.c, a driven controller behind it). Connect's own checks and its Invalid
 * Parameters status, Property Get/Set on the registers a fabrics controller keeps, the
 * fabrics part of Identify Controller, a discovery log record. Pure functions over the
 * spec's structures; which subsystem, host or controller a Connect reaches is the
 * target's.
 */
#ifndef NVP_APP_TGT_FABRIC_H
#define NVP_APP_TGT_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvpoll/nvme_spec.h"
#include "nvpoll/nvme_tcp_spec.h"

/* The registers of a fabrics controller, properties (NVMe-oF 1.1 section 3.5). */
struct tgt_fabric_regs {
	uint64_t cap;
	uint32_t vs;
	uint32_t cc, csts;
};

/* Status @sct/@sc with DNR: the same command would fail again. */
void tgt_fabric_status(struct nvme_cpl *cpl, uint8_t sct, uint8_t sc);
/* Connect Invalid Parameters naming the parameter: byte @off of the data (@in_data) or of
 * the command (NVMe-oF 1.1 figure 21: bit 16 of dword 0 for the data, bits 15:0 the offset). */
void tgt_fabric_connect_invalid(struct nvme_cpl *cpl, bool in_data, uint32_t off);
/*
 * Connect's own parameters: data of @len bytes (the Connect data's 1024), RECFMT 0, SQSIZE
 * 1..@max_sqsize; the NQNs of @d terminated for the caller's lookups.
 * \return 0, or -1 with the status in @cpl.
 */
int tgt_fabric_connect_check(const struct nvme_fabric_connect_cmd *fc,
			     struct nvme_fabric_connect_data *d, uint32_t len, uint32_t max_sqsize,
			     struct nvme_cpl *cpl);
/*
 * Property Get or Set @p on @regs: CAP, VS, CC, CSTS read; CC written (CSTS.RDY follows
 * CC.EN, a shutdown completes at once); any other property Invalid Field.
 */
void tgt_fabric_property(const struct nvme_fabric_prop_cmd *p, struct tgt_fabric_regs *regs,
			 struct nvme_cpl *cpl);
/*
 * The fabrics part of Identify Controller @cd: CNTLID, SGL support (keyed data blocks,
 * offsets for in-capsule data), SUBNQN, and the capsule sizes for @in_capsule bytes of
 * in-capsule data in an I/O command (NVMe-oF 1.1 section 4.1).
 */
void tgt_fabric_identify(struct nvme_ctrlr_data *cd, uint16_t cntlid, const char *subnqn,
			 uint32_t in_capsule);
/* @src into the @n bytes of a space-padded, unterminated field (SN, MN, FR, TRADDR ...). */
void tgt_fabric_pad_copy(char *dst, size_t n, const char *src);
/*
 * A discovery log record (NVMe-oF 1.1 figure 39): NVMe subsystem @subnqn over TCP at
 * @traddr port @trsvcid (@ipv6 or IPv4), port id @portid, any controller, admin queues
 * of up to @asqsz entries.
 */
void tgt_fabric_disc_entry(struct nvme_discovery_log_entry *e, bool ipv6, const char *traddr,
			   const char *trsvcid, const char *subnqn, uint16_t portid,
			   uint16_t asqsz);

#endif /* NVP_APP_TGT_FABRIC_H */

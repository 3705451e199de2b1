/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fabrics controller's answers that do not depend on what is behind it, shared by
 * nvp_tgt and the tools' small target (see tgt_fabric.h). Section and figure numbers are
 * NVMe-oF 1.1's; registers NVMe 1.4's section 3.1.
 */
#include <stddef.h>
#include <string.h>

#include "nvpoll/util.h"
#include "tgt_fabric.h"

void
tgt_fabric_status(struct nvme_cpl *cpl, uint8_t sct, uint8_t sc)
{
	cpl->status.sct = sct & 7u;
	cpl->status.sc = sc;
	cpl->status.dnr = 1;
}

void
tgt_fabric_connect_invalid(struct nvme_cpl *cpl, bool in_data, uint32_t off)
{
	tgt_fabric_status(cpl, NVME_SCT_COMMAND_SPECIFIC, NVME_SC_CONNECT_INVALID_PARAMETERS);
	cpl->cdw0 = (in_data ? 1u << 16 : 0u) | off;
}

int
tgt_fabric_connect_check(const struct nvme_fabric_connect_cmd *fc,
			 struct nvme_fabric_connect_data *d, uint32_t len, uint32_t max_sqsize,
			 struct nvme_cpl *cpl)
{
	if (len != sizeof(*d)) {
		tgt_fabric_connect_invalid(cpl, false,
					   offsetof(struct nvme_fabric_connect_cmd, sgl1));
		return -1;
	}
	if (fc->recfmt != 0) {
		tgt_fabric_connect_invalid(cpl, false,
					   offsetof(struct nvme_fabric_connect_cmd, recfmt));
		return -1;
	}
	if (fc->sqsize == 0 || fc->sqsize > max_sqsize) {
		tgt_fabric_connect_invalid(cpl, false,
					   offsetof(struct nvme_fabric_connect_cmd, sqsize));
		return -1;
	}
	d->subnqn[sizeof(d->subnqn) - 1] = '\0';
	d->hostnqn[sizeof(d->hostnqn) - 1] = '\0';
	return 0;
}

void
tgt_fabric_property(const struct nvme_fabric_prop_cmd *p, struct tgt_fabric_regs *regs,
		    struct nvme_cpl *cpl)
{
	uint64_t v;

	if (p->fctype == NVME_FCTYPE_PROPERTY_SET) {
		union nvme_cc_register cc = { .raw = (uint32_t)p->value };
		union nvme_csts_register csts = { .raw = regs->csts };

		if (p->ofst != NVME_REG_CC) {
			tgt_fabric_status(cpl, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
			return;
		}
		/* no controller to wait for: ready as soon as enabled, shut down at once */
		csts.bits.rdy = cc.bits.en;
		csts.bits.shst = cc.bits.shn != 0 ? NVME_SHST_COMPLETE : 0;
		regs->cc = cc.raw;
		regs->csts = csts.raw;
		return;
	}
	switch (p->ofst) {
	case NVME_REG_CAP:
		v = regs->cap;
		break;
	case NVME_REG_VS:
		v = regs->vs;
		break;
	case NVME_REG_CC:
		v = regs->cc;
		break;
	case NVME_REG_CSTS:
		v = regs->csts;
		break;
	default:
		tgt_fabric_status(cpl, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
		return;
	}
	cpl->cdw0 = (uint32_t)v;
	cpl->cdw1 = (uint32_t)(v >> 32);
}

void
tgt_fabric_identify(struct nvme_ctrlr_data *cd, uint16_t cntlid, const char *subnqn,
		    uint32_t in_capsule)
{
	struct nvme_fabric_ctrlr_data *f = (void *)cd->nvmf_specific;

	cd->cntlid = cntlid;
	cd->sgls = 0x100005; /* SGLs, keyed data block, offsets (in-capsule data) */
	memset(cd->subnqn, 0, sizeof(cd->subnqn));
	nvp_strlcpy(cd->subnqn, subnqn, sizeof(cd->subnqn));
	memset(f, 0, sizeof(*f));
	f->ioccsz = (64u + in_capsule) / 16u; /* the command and its data, 16-byte units */
	f->iorcsz = 1;
	f->msdbd = 1;
}

void
tgt_fabric_pad_copy(char *dst, size_t n, const char *src)
{
	size_t l = strlen(src);

	memset(dst, ' ', n);
	memcpy(dst, src, l < n ? l : n);
}

void
tgt_fabric_disc_entry(struct nvme_discovery_log_entry *e, bool ipv6, const char *traddr,
		      const char *trsvcid, const char *subnqn, uint16_t portid, uint16_t asqsz)
{
	memset(e, 0, sizeof(*e));
	e->trtype = NVME_TRTYPE_TCP;
	e->adrfam = ipv6 ? NVME_ADRFAM_IPV6 : NVME_ADRFAM_IPV4;
	e->subtype = NVME_SUBTYPE_NVME;
	e->treq = 2; /* secure channel not required */
	e->portid = portid;
	e->cntlid = NVME_FABRIC_CNTLID_DYNAMIC;
	e->asqsz = asqsz;
	tgt_fabric_pad_copy(e->trsvcid, sizeof(e->trsvcid), trsvcid);
	tgt_fabric_pad_copy(e->traddr, sizeof(e->traddr), traddr);
	nvp_strlcpy(e->subnqn, subnqn, sizeof(e->subnqn));
}

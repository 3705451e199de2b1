/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz the namespace side of Identify (nvme_ns.c): the input is what a controller says.
 * Bytes 0-8: VS (1.0 or 1.4), CDATA.NN, CDATA.MDTS, CAP.MPSMIN and the driver's own cap
 * on a transfer (KiB, 0 = the default 2 MiB): the controller's max transfer comes out of
 * them as at attach (MDTS 0 and 255 included); then one
 * Identify Namespace data structure (4 KiB, zero padded: every namespace gets it), then an
 * Active Namespace ID list page (returned for every page asked: a device may repeat).
 * Checks: enumeration ends, namespace objects stay in id order, and a namespace reported active has a sector size of 512 B
 * to 16 MiB plus metadata, a size that fits 64 bits, a max transfer of at least one
 * sector within the controller's, and a format index the controller advertised.
 */
#include "nvp_config.h"

#include "nvme/nvme_ns.c"

#include <inttypes.h>

#include "fuzz.h"

static const uint8_t *g_in;
static size_t g_in_size;

/* Copy @len bytes of the input from @off into @buf, zeroes past its end. */
static void
fz_copy(void *buf, size_t off, size_t len)
{
	size_t n = off < g_in_size ? NVP_MIN(len, g_in_size - off) : 0;

	memset(buf, 0, len);
	if (n > 0) {
		memcpy(buf, g_in + off, n);
	}
}

int
nvp_nvme_ctrlr_identify(struct nvp_nvme_ctrlr *ctrlr, uint8_t cns, uint32_t nsid, void *buf,
			uint32_t len, struct nvme_cpl *cpl)
{
	(void)ctrlr;
	(void)nsid;
	FZ_CHECK(len == 4096, "identify of %u bytes", len);
	if (cpl != NULL) {
		memset(cpl, 0, sizeof(*cpl));
	}
	fz_copy(buf, cns == NVME_IDENTIFY_NS ? 9 : 9 + 4096, len);
	return 0;
}

/* Format (in nvme_ns.c too) is not fuzzed: its admin command and lock are not reached. */
int
nvp_nvme_ctrlr_cmd_admin_sync(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, void *buf,
			      uint32_t len, struct nvme_cpl *cpl)
{
	(void)ctrlr;
	(void)cmd;
	(void)buf;
	(void)len;
	(void)cpl;
	FZ_CHECK(false, "format is not fuzzed");
	return -ENOTSUP;
}

void
nvme_ctrlr_lock(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
}

void
nvme_ctrlr_unlock(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
}

static void
fz_check_ns(const struct nvp_nvme_ctrlr *ctrlr, const struct nvp_nvme_ns *ns)
{
	const struct nvme_ns_data *d = &ns->data;
	uint32_t fmt = d->flbas & NVME_FLBAS_FORMAT_MASK;

	if (!ns->active) {
		return;
	}
	FZ_CHECK(fmt <= d->nlbaf, "ns %u active with format %u of %u", ns->id, fmt, d->nlbaf + 1u);
	FZ_CHECK(ns->sector_size >= 512 && ns->sector_size <= (1u << 24) + 65535u,
		 "ns %u: sector size %u", ns->id, ns->sector_size);
	FZ_CHECK(ns->num_sectors != 0 && ns->num_sectors <= UINT64_MAX / ns->sector_size,
		 "ns %u: %" PRIu64 " sectors of %u bytes overflow", ns->id, ns->num_sectors,
		 ns->sector_size);
	FZ_CHECK(ns->max_io_sectors >= 1 && ns->max_io_sectors <= NVME_MAX_LBA_COUNT,
		 "ns %u: max %u sectors per I/O", ns->id, ns->max_io_sectors);
	FZ_CHECK(ns->max_xfer_size <= ctrlr->max_xfer_size &&
			 ns->max_xfer_size == ns->max_io_sectors * ns->sector_size,
		 "ns %u: max transfer %u (controller %u)", ns->id, ns->max_xfer_size,
		 ctrlr->max_xfer_size);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int done;
	struct nvp_nvme_ctrlr ctrlr;
	uint32_t i, nsid, prev = 0;

	if (!done) {
		done = 1;
		FZ_CHECK(fz_env_init() == 0, "env init failed");
	}
	if (size < 9) {
		return 0;
	}
	g_in = data;
	g_in_size = size;
	memset(&ctrlr, 0, sizeof(ctrlr));
	ctrlr.vs.raw = data[0] & 1 ? NVME_VERSION(1, 4, 0) : NVME_VERSION(1, 0, 0);
	memcpy(&ctrlr.cdata.nn, data + 1, 4);
	ctrlr.cdata.mdts = data[5];
	ctrlr.cap.bits.mpsmin = data[6] & 0xfu;
	ctrlr.max_xfer_size = (uint32_t)(data[7] | data[8] << 8) * 1024u;
	if (ctrlr.max_xfer_size == 0) {
		ctrlr.max_xfer_size = 2u << 20;
	}
	ctrlr.max_xfer_size = nvme_mdts_max_xfer(ctrlr.cdata.mdts, ctrlr.cap.bits.mpsmin,
						 ctrlr.max_xfer_size);
	FZ_CHECK(ctrlr.max_xfer_size >= 1024, "max transfer %u from MDTS %u", ctrlr.max_xfer_size,
		 ctrlr.cdata.mdts);
	if (nvme_ctrlr_identify_active_ns(&ctrlr) == 0 &&
	    nvme_ctrlr_identify_namespaces(&ctrlr, NVME_GLOBAL_NS_TAG) == 0) {
		for (i = 0; i < ctrlr.num_ns_objs; i++) {
			FZ_CHECK(i == 0 || ctrlr.ns[i - 1]->id < ctrlr.ns[i]->id,
				 "namespace objects out of id order at %u", i);
			fz_check_ns(&ctrlr, ctrlr.ns[i]);
		}
		for (nsid = nvp_nvme_ctrlr_get_first_active_ns(&ctrlr); nsid != 0;
		     nsid = nvp_nvme_ctrlr_get_next_active_ns(&ctrlr, nsid)) {
			FZ_CHECK(nsid > prev, "active namespaces not increasing");
			FZ_CHECK(nvp_nvme_ctrlr_get_ns(&ctrlr, nsid) != NULL, "ns %u missing",
				 nsid);
			prev = nsid;
		}
	}
	nvme_ctrlr_free_namespaces(&ctrlr);

	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Namespaces: the active namespace list (Identify CNS 02h, NVMe 1.1 and later; before
 * that every id 1..NN is tried), and one object per namespace built from Identify
 * Namespace: sector size from FLBAS and the LBA format table, metadata (size, extended
 * or separate, protection information type from DPS), size, max transfer, optimal I/O
 * boundary (NOIOB). Format NVM, whose completion changes a namespace's format and size,
 * is here too: the namespace is re-read after it.
 *
 * Namespace objects are never freed before detach: a caller's pointer stays valid across
 * format, reset and namespace changes (an inactive namespace just reports inactive).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "nvme_internal.h"

/* Ids per active namespace list page. */
#define NS_LIST_ENTRIES (sizeof(struct nvme_ns_list) / sizeof(uint32_t))
/* Without CNS 02h, ids 1..NN are probed one by one: bound the work. */
#define NS_PROBE_MAX 1024u

static int
append_id(uint32_t **ids, uint32_t *n, uint32_t *cap, uint32_t nsid)
{
	if (*n == *cap) {
		uint32_t c = *cap ? *cap * 2 : 16;
		uint32_t *p = realloc(*ids, c * sizeof(*p));

		if (p == NULL) {
			return -ENOMEM;
		}
		*ids = p;
		*cap = c;
	}
	(*ids)[(*n)++] = nsid;
	return 0;
}

/* Page through CNS 02h: ids greater than the NSID field, increasing, zero terminated. */
static int
read_active_list(struct nvp_nvme_ctrlr *ctrlr, uint32_t **ids, uint32_t *n)
{
	struct nvme_ns_list *list = malloc(sizeof(*list));
	uint32_t cap = 0, start = 0, prev, i;
	int rc = 0;

	if (list == NULL) {
		return -ENOMEM;
	}
	for (;;) {
		rc = nvp_nvme_ctrlr_identify(ctrlr, NVME_IDENTIFY_ACTIVE_NS_LIST, start, list,
					     sizeof(*list), NULL);
		prev = start;
		for (i = 0; rc == 0 && i < NS_LIST_ENTRIES && list->ns_list[i] != 0; i++) {
			if (list->ns_list[i] <= prev) {
				NVP_ERRLOG("%s: active namespace list not increasing (%u after "
					   "%u)",
					   ctrlr->name, list->ns_list[i], prev);
				rc = -EIO; /* a broken controller: stop rather than loop */
				break;
			}
			prev = list->ns_list[i];
			rc = append_id(ids, n, &cap, prev);
		}
		if (rc != 0 || i < NS_LIST_ENTRIES) {
			break;
		}
		start = list->ns_list[NS_LIST_ENTRIES - 1];
	}
	free(list);
	return rc;
}

int
nvme_ctrlr_identify_active_ns(struct nvp_nvme_ctrlr *ctrlr)
{
	uint32_t *ids = NULL, n = 0, cap = 0, nsid;
	int rc = 0;

	if (ctrlr->vs.raw >= NVME_VERSION(1, 1, 0)) {
		rc = read_active_list(ctrlr, &ids, &n);
	} else {
		uint32_t last = NVP_MIN(ctrlr->cdata.nn, NS_PROBE_MAX);

		for (nsid = 1; rc == 0 && nsid <= last; nsid++) {
			rc = append_id(&ids, &n, &cap, nsid);
		}
	}
	if (rc != 0) {
		free(ids);
		return rc;
	}
	free(ctrlr->active_ns);
	ctrlr->active_ns = ids;
	ctrlr->num_active_ns = n;
	return 0;
}

/*
 * Index of the first of @n increasing ids in @ids that is >= @nsid (@n when none is):
 * lookups stay logarithmic for a controller with thousands of namespaces.
 */
static uint32_t
id_lower_bound(const uint32_t *ids, uint32_t n, uint32_t nsid)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ids[mid] < nsid) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo;
}

/* Index of the first namespace object whose id is >= @nsid (objects are sorted by id). */
static uint32_t
ns_lower_bound(const struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid)
{
	uint32_t lo = 0, hi = ctrlr->num_ns_objs;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ctrlr->ns[mid]->id < nsid) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo;
}

static struct nvp_nvme_ns *
ns_find(const struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid)
{
	uint32_t i = ns_lower_bound(ctrlr, nsid);

	return i < ctrlr->num_ns_objs && ctrlr->ns[i]->id == nsid ? ctrlr->ns[i] : NULL;
}

/* The object for @nsid, created on first use and kept in id order. */
static struct nvp_nvme_ns *
ns_get_or_create(struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid)
{
	uint32_t i = ns_lower_bound(ctrlr, nsid);
	struct nvp_nvme_ns *ns;

	if (i < ctrlr->num_ns_objs && ctrlr->ns[i]->id == nsid) {
		return ctrlr->ns[i];
	}
	if (ctrlr->num_ns_objs == ctrlr->ns_objs_cap) {
		uint32_t cap = ctrlr->ns_objs_cap ? ctrlr->ns_objs_cap * 2 : 8;
		struct nvp_nvme_ns **objs = realloc(ctrlr->ns, cap * sizeof(*objs));

		if (objs == NULL) {
			return NULL;
		}
		ctrlr->ns = objs;
		ctrlr->ns_objs_cap = cap;
	}
	ns = calloc(1, sizeof(*ns));
	if (ns == NULL) {
		return NULL;
	}
	ns->ctrlr = ctrlr;
	ns->id = nsid;
	memmove(&ctrlr->ns[i + 1], &ctrlr->ns[i], (ctrlr->num_ns_objs - i) * sizeof(ctrlr->ns[0]));
	ctrlr->ns[i] = ns;
	ctrlr->num_ns_objs++;
	return ns;
}

/* Inactive: plain_max_sectors 0 too, so that the fast read and write path (nvme_ns_cmd.c)
 * sends every request to the general one, which checks active (no test of its own). */
static void
ns_set_inactive(struct nvp_nvme_ns *ns)
{
	ns->active = false;
	ns->plain_max_sectors = 0;
}

/* Derive sector size, size and max transfer from the identify data. */
static void
ns_update(struct nvp_nvme_ns *ns)
{
	const struct nvme_ns_data *d = &ns->data;
	uint32_t fmt = d->flbas & NVME_FLBAS_FORMAT_MASK;
	const struct nvme_lbaf *lbaf = &d->lbaf[fmt];
	uint32_t sector;

	ns_set_inactive(ns);
	if (d->nsze == 0) {
		return; /* identify of an inactive id returns zeroes */
	}
	if (fmt > d->nlbaf) {
		/* FLBAS names a format beyond NLBAF (0's based): its entry is not valid. */
		NVP_WARNLOG("%s: namespace %u: format %u in use, but only %u formats; ignored",
			    ns->ctrlr->name, ns->id, fmt, d->nlbaf + 1u);
		return;
	}
	if (lbaf->lbads < 9 || lbaf->lbads > 24) {
		NVP_WARNLOG("%s: namespace %u: LBA data size 2^%u not supported; ignored",
			    ns->ctrlr->name, ns->id, lbaf->lbads);
		return;
	}
	sector = 1u << lbaf->lbads;
	ns->data_size = sector;
	ns->md_size = lbaf->ms;
	ns->md_separate = lbaf->ms != 0 && (d->flbas & NVME_FLBAS_EXTENDED) == 0;
	ns->pi_type = d->dps & NVME_DPS_PI_TYPE_MASK;
	ns->noiob = d->noiob;
	if (d->flbas & NVME_FLBAS_EXTENDED) {
		sector += lbaf->ms; /* metadata interleaved with the data */
	}
	if (d->nsze > UINT64_MAX / sector) {
		NVP_WARNLOG("%s: namespace %u: %" PRIu64 " blocks of %u bytes overflow 64 bits; "
			    "ignored",
			    ns->ctrlr->name, ns->id, d->nsze, sector);
		return;
	}
	ns->sector_size = sector;
	ns->num_sectors = d->nsze;
	ns->max_io_sectors = NVP_MIN(ns->ctrlr->max_xfer_size / sector, NVME_MAX_LBA_COUNT);
	ns->max_xfer_size = ns->max_io_sectors * sector;
	ns->plain_max_sectors = (ns->noiob == 0 && ns->pi_type == 0 && !ns->md_separate) ?
					ns->max_io_sectors :
					0;
	ns->active = ns->max_io_sectors > 0;
}

static int
ns_identify(struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid)
{
	struct nvp_nvme_ns *ns = ns_get_or_create(ctrlr, nsid);
	struct nvme_cpl cpl;
	int rc;

	if (ns == NULL) {
		return -ENOMEM;
	}
	memset(&cpl, 0, sizeof(cpl));
	rc = nvp_nvme_ctrlr_identify(ctrlr, NVME_IDENTIFY_NS, nsid, &ns->data, sizeof(ns->data),
				     &cpl);
	if (rc == -EIO && cpl.status.sct == NVME_SCT_GENERIC &&
	    cpl.status.sc == NVME_SC_INVALID_NAMESPACE_OR_FORMAT) {
		memset(&ns->data, 0, sizeof(ns->data)); /* gone meanwhile */
		rc = 0;
	}
	if (rc != 0) {
		return rc;
	}
	ns_update(ns);
	return 0;
}

/* Drop ids whose namespace turned out inactive from the active list. */
static void
prune_active_list(struct nvp_nvme_ctrlr *ctrlr)
{
	uint32_t i, j = 0;

	for (i = 0; i < ctrlr->num_active_ns; i++) {
		struct nvp_nvme_ns *ns = ns_get_or_create(ctrlr, ctrlr->active_ns[i]);

		if (ns != NULL && ns->active) {
			ctrlr->active_ns[j++] = ctrlr->active_ns[i];
		}
	}
	ctrlr->num_active_ns = j;
}

/*
 * Identify namespace @nsid, or every active one (NVME_GLOBAL_NS_TAG); objects of ids no
 * longer active are marked inactive.
 */
int
nvme_ctrlr_identify_namespaces(struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid)
{
	uint32_t i;
	int rc;

	if (nsid != NVME_GLOBAL_NS_TAG && nsid != 0) {
		rc = ns_identify(ctrlr, nsid);
		prune_active_list(ctrlr);
		return rc;
	}
	for (i = 0; i < ctrlr->num_ns_objs; i++) {
		ns_set_inactive(ctrlr->ns[i]);
	}
	for (i = 0; i < ctrlr->num_active_ns; i++) {
		rc = ns_identify(ctrlr, ctrlr->active_ns[i]);
		if (rc != 0) {
			return rc;
		}
	}
	prune_active_list(ctrlr);
	return 0;
}

void
nvme_ctrlr_free_namespaces(struct nvp_nvme_ctrlr *ctrlr)
{
	uint32_t i;

	for (i = 0; i < ctrlr->num_ns_objs; i++) {
		free(ctrlr->ns[i]);
	}
	free(ctrlr->ns);
	ctrlr->ns = NULL;
	ctrlr->num_ns_objs = 0;
	ctrlr->ns_objs_cap = 0;
	free(ctrlr->active_ns);
	ctrlr->active_ns = NULL;
	ctrlr->num_active_ns = 0;
}

/* ---------------------------------------------------------------------------------------
 * Public API
 * ------------------------------------------------------------------------------------- */

uint32_t
nvp_nvme_ctrlr_get_num_ns(const struct nvp_nvme_ctrlr *ctrlr)
{
	return ctrlr->cdata.nn;
}

uint32_t
nvp_nvme_ctrlr_get_first_active_ns(const struct nvp_nvme_ctrlr *ctrlr)
{
	return ctrlr->num_active_ns > 0 ? ctrlr->active_ns[0] : 0;
}

uint32_t
nvp_nvme_ctrlr_get_next_active_ns(const struct nvp_nvme_ctrlr *ctrlr, uint32_t prev_nsid)
{
	uint32_t i;

	if (prev_nsid == UINT32_MAX) {
		return 0;
	}
	i = id_lower_bound(ctrlr->active_ns, ctrlr->num_active_ns, prev_nsid + 1);
	return i < ctrlr->num_active_ns ? ctrlr->active_ns[i] : 0;
}

bool
nvp_nvme_ctrlr_is_active_ns(const struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid)
{
	uint32_t i = id_lower_bound(ctrlr->active_ns, ctrlr->num_active_ns, nsid);

	return i < ctrlr->num_active_ns && ctrlr->active_ns[i] == nsid;
}

struct nvp_nvme_ns *
nvp_nvme_ctrlr_get_ns(struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid)
{
	if (ctrlr == NULL || !nvp_nvme_ctrlr_is_active_ns(ctrlr, nsid)) {
		return NULL;
	}
	return ns_find(ctrlr, nsid);
}

uint32_t
nvp_nvme_ns_get_id(const struct nvp_nvme_ns *ns)
{
	return ns->id;
}

struct nvp_nvme_ctrlr *
nvp_nvme_ns_get_ctrlr(const struct nvp_nvme_ns *ns)
{
	return ns->ctrlr;
}

const struct nvme_ns_data *
nvp_nvme_ns_get_data(const struct nvp_nvme_ns *ns)
{
	return &ns->data;
}

uint32_t
nvp_nvme_ns_get_sector_size(const struct nvp_nvme_ns *ns)
{
	return ns->sector_size;
}

uint64_t
nvp_nvme_ns_get_num_sectors(const struct nvp_nvme_ns *ns)
{
	return ns->num_sectors;
}

uint64_t
nvp_nvme_ns_get_size(const struct nvp_nvme_ns *ns)
{
	return ns->num_sectors * ns->data_size; /* data capacity: metadata not counted */
}

uint32_t
nvp_nvme_ns_get_max_io_xfer_size(const struct nvp_nvme_ns *ns)
{
	return ns->max_xfer_size;
}

uint32_t
nvp_nvme_ns_get_extended_sector_size(const struct nvp_nvme_ns *ns)
{
	return ns->data_size + ns->md_size;
}

uint32_t
nvp_nvme_ns_get_data_sector_size(const struct nvp_nvme_ns *ns)
{
	return ns->data_size;
}

uint32_t
nvp_nvme_ns_get_md_size(const struct nvp_nvme_ns *ns)
{
	return ns->md_size;
}

bool
nvp_nvme_ns_supports_extended_lba(const struct nvp_nvme_ns *ns)
{
	return ns->md_size != 0 && !ns->md_separate;
}

bool
nvp_nvme_ns_has_separate_md(const struct nvp_nvme_ns *ns)
{
	return ns->md_separate;
}

uint32_t
nvp_nvme_ns_get_pi_type(const struct nvp_nvme_ns *ns)
{
	return ns->pi_type;
}

uint32_t
nvp_nvme_ns_get_optimal_io_boundary(const struct nvp_nvme_ns *ns)
{
	return ns->noiob;
}

/* The LBA format and size may change: the namespace is re-read after the format. */
int
nvp_nvme_ctrlr_format(struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid, union nvme_format_cdw10 format,
		      struct nvme_cpl *cpl)
{
	struct nvme_cmd cmd;
	int rc;

	if (ctrlr == NULL) {
		return -EINVAL;
	}
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_FORMAT_NVM;
	cmd.nsid = nsid;
	cmd.cdw10 = format.raw;
	rc = nvp_nvme_ctrlr_cmd_admin_sync(ctrlr, &cmd, NULL, 0, cpl);
	if (rc != 0) {
		return rc;
	}
	/* The LBA format and size may have changed: re-read the namespace data. */
	nvme_ctrlr_lock(ctrlr);
	rc = nvme_ctrlr_identify_namespaces(ctrlr, nsid);
	nvme_ctrlr_unlock(ctrlr);
	return rc;
}

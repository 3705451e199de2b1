/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp list: one row per active namespace of every controller. Without a device argument
 * every NVMe function env offers is probed (real ones bound to vfio-pci/uio, virtual
 * ones already registered); on a machine without NVMe devices the table is empty and
 * the JSON is {"Devices": []}. "nvp list emu:..." lists a software controller made for
 * the occasion.
 *
 * The text is nvme-cli 2.3's: a row per namespace ("Node Generic SN Model Namespace Usage
 * Format FW Rev"), or with -v its three tables (subsystems, controllers, namespaces).
 * nvpoll has no device nodes: a namespace is "<address>/ns<nsid>", a controller "nvpN"
 * (N counting controllers in list order), its subsystem "nvp-subsysN", and there is no
 * generic device ("-").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "nvpoll/env.h"
#include "nvpoll/nvme_mpath.h"
#include "nvpoll/util.h"

#include "nvp_cli.h"

#define MAX_CTRLRS 64
#define MAX_ROWS 1024

struct list_ctx {
	struct nvp_nvme_ctrlr *ctrlrs[MAX_CTRLRS];
	uint32_t count;
};

#define MAX_SKIPPED 64

struct list_rows {
	struct cli_list_entry rows[MAX_ROWS];
	struct nvme_ns_data nsdata[MAX_ROWS];
	char paths[MAX_ROWS][NVP_NVME_TRARGS_MAX + 64];
	char addrs[MAX_CTRLRS][NVP_NVME_TRARGS_MAX + 32];
	char names[MAX_CTRLRS][16];
	uint32_t count;
	uint32_t nctrlrs;
	/* NVMe functions env found but could not offer, and why */
	char skipped[MAX_SKIPPED][NVP_PCI_ADDR_STRLEN];
	char skipped_why[MAX_SKIPPED][384];
	uint32_t nskipped;
};

static void
attach_cb(void *cb_ctx, const struct nvp_nvme_transport_id *trid, struct nvp_nvme_ctrlr *ctrlr,
	  const struct nvp_nvme_ctrlr_opts *opts)
{
	struct list_ctx *ctx = cb_ctx;

	(void)trid;
	(void)opts;
	if (ctx->count < MAX_CTRLRS) {
		ctx->ctrlrs[ctx->count++] = ctrlr;
	} else {
		nvp_nvme_detach(ctrlr);
	}
}

/* Add one row per active namespace of @ctrlr. */
static void
add_rows(struct list_rows *r, struct nvp_nvme_ctrlr *ctrlr)
{
	const struct nvp_nvme_transport_id *trid = nvp_nvme_ctrlr_get_transport_id(ctrlr);
	char *base = r->addrs[r->nctrlrs];
	char *name = r->names[r->nctrlrs];
	char trid_addr[sizeof(r->addrs[0])];

	if (r->nctrlrs >= MAX_CTRLRS) {
		return;
	}
	if (trid->traddr[0] != '\0') {
		nvp_strlcpy(base, trid->traddr, sizeof(r->addrs[0]));
	} else if (nvp_nvme_transport_id_fmt(base, sizeof(r->addrs[0]), trid) != 0) {
		nvp_strlcpy(base, "?", sizeof(r->addrs[0]));
	}
	snprintf(name, sizeof(r->names[0]), "nvp%u", r->nctrlrs);
	r->nctrlrs++;
	nvp_strlcpy(trid_addr, base, sizeof(trid_addr));
	for (uint32_t nsid = nvp_nvme_ctrlr_get_first_active_ns(ctrlr);
	     nsid != 0 && r->count < MAX_ROWS;
	     nsid = nvp_nvme_ctrlr_get_next_active_ns(ctrlr, nsid)) {
		struct cli_list_entry *e = &r->rows[r->count];
		uint8_t ana;

		/* Fresh data, as id-ns: the cached copy may predate a format. */
		if (nvp_nvme_ctrlr_identify(ctrlr, NVME_IDENTIFY_NS, nsid, &r->nsdata[r->count],
					    sizeof(r->nsdata[0]), NULL) != 0) {
			continue;
		}
		snprintf(r->paths[r->count], sizeof(r->paths[0]), "%s/ns%u", trid_addr, nsid);
		e->nsid = nsid;
		e->device_path = r->paths[r->count];
		e->ctrl_name = name;
		e->address = base;
		e->transport = trid->trtype == NVP_NVME_TRANSPORT_VDEV ? "emu" :
			       trid->trtype == NVP_NVME_TRANSPORT_TCP  ? "tcp" :
									 "pcie";
		e->cdata = nvp_nvme_ctrlr_get_data(ctrlr);
		e->nsdata = &r->nsdata[r->count];
		e->ana_state = nvp_nvme_ctrlr_get_ana_state(ctrlr, nsid, &ana) == 0 ?
				       nvp_nvme_ana_state_name(ana) :
				       NULL;
		r->count++;
	}
}

static const char g_dash[] = "------------------------------------------------------------------"
			     "----------------------------------";

/* nvme-cli's suffix_si_get(): a value in units of 1000, and the unit's letter. */
static const char *
si_suffix(double *v)
{
	static const struct {
		double magnitude;
		const char *suffix;
	} s[] = { { 1e15, "P" }, { 1e12, "T" },  { 1e9, "G" },  { 1e6, "M" },
		  { 1e3, "k" },  { 1e0, "" },    { 1e-3, "m" }, { 1e-6, "u" },
		  { 1e-9, "n" }, { 1e-12, "p" }, { 1e-15, "f" } };

	for (size_t i = 0; i < NVP_COUNTOF(s); i++) {
		if (*v >= s[i].magnitude) {
			*v /= s[i].magnitude;
			return s[i].suffix;
		}
	}
	return "";
}

/* nvme-cli's suffix_binary_get(): a value in units of 1024 (rounded), and the unit. */
static const char *
binary_suffix(uint64_t *v)
{
	static const char *const s[] = { "Pi", "Ti", "Gi", "Mi", "Ki" };

	for (unsigned int i = 0; i < NVP_COUNTOF(s); i++) {
		unsigned int shift = 50 - 10 * i;

		if (*v >= UINT64_C(1) << shift) {
			*v = (*v + (UINT64_C(1) << (shift - 1))) >> shift;
			return s[i];
		}
	}
	return "";
}

/* The Usage and Format columns: "  1.05  MB /   1.05  MB", "512   B +  0 B". */
static void
usage_format(const struct cli_list_entry *e, char *usage, size_t ulen, char *fmt, size_t flen)
{
	const struct nvme_ns_data *nd = e->nsdata;
	uint32_t lbads = nd->lbaf[nd->flbas & NVME_FLBAS_FORMAT_MASK].lbads;
	uint64_t lba = lbads < 32 ? UINT64_C(1) << lbads : 0, lba_shown = lba;
	double nsze = (double)nd->nsze * (double)lba, nuse = (double)nd->nuse * (double)lba;
	const char *s_suffix = si_suffix(&nsze), *u_suffix = si_suffix(&nuse);
	const char *l_suffix = binary_suffix(&lba_shown);

	snprintf(usage, ulen, "%6.2f %2sB / %6.2f %2sB", nuse, u_suffix, nsze, s_suffix);
	snprintf(fmt, flen, "%3.0f %2sB + %2u B", (double)lba_shown, l_suffix,
		 nd->lbaf[nd->flbas & NVME_FLBAS_FORMAT_MASK].ms);
}

static void
print_simple(FILE *f, const struct cli_list_entry *entries, uint32_t count)
{
	fprintf(f, "%-21s %-21s %-20s %-40s %-9s %-26s %-16s %-8s\n", "Node", "Generic", "SN",
		"Model", "Namespace", "Usage", "Format", "FW Rev");
	fprintf(f, "%-.21s %-.21s %-.20s %-.40s %-.9s %-.26s %-.16s %-.8s\n", g_dash, g_dash,
		g_dash, g_dash, g_dash, g_dash, g_dash, g_dash);
	for (uint32_t i = 0; i < count; i++) {
		const struct nvme_ctrlr_data *cd = entries[i].cdata;
		char sn[24], mn[44], fr[12], usage[64], fmt[40];

		usage_format(&entries[i], usage, sizeof(usage), fmt, sizeof(fmt));
		fprintf(f, "%-21s %-21s %-20s %-40s %-9u %-26s %-16s %-8s\n",
			entries[i].device_path, "-",
			cli_strfield(sn, sizeof(sn), cd->sn, sizeof(cd->sn)),
			cli_strfield(mn, sizeof(mn), cd->mn, sizeof(cd->mn)), entries[i].nsid,
			usage, fmt, cli_strfield(fr, sizeof(fr), cd->fr, sizeof(cd->fr)));
	}
}

/* The subsystem of a controller "nvpN": "nvp-subsysN", one controller each. */
static const char *
subsys_name(const struct cli_list_entry *e, char *buf, size_t len)
{
	snprintf(buf, len, "nvp-subsys%s", e->ctrl_name + 3);
	return buf;
}

/* One row per controller: entries of a controller are adjacent (same identify data). */
static void
print_detailed_ctrls(FILE *f, const struct cli_list_entry *e, uint32_t count)
{
	char sn[24], mn[44], fr[12], ss[32];

	fprintf(f, "%-8s %-20s %-40s %-8s %-6s %-14s %-12s %-16s\n", "Device", "SN", "MN", "FR",
		"TxPort", "Address", "Subsystem", "Namespaces");
	fprintf(f, "%-.8s %-.20s %-.40s %-.8s %-.6s %-.14s %-.12s %-.16s\n", g_dash, g_dash, g_dash,
		g_dash, g_dash, g_dash, g_dash, g_dash);
	for (uint32_t i = 0; i < count; i++) {
		const struct nvme_ctrlr_data *cd = e[i].cdata;

		fprintf(f, "%-8s %-20s %-40s %-8s %-6s %-14s %-12s ", e[i].ctrl_name,
			cli_strfield(sn, sizeof(sn), cd->sn, sizeof(cd->sn)),
			cli_strfield(mn, sizeof(mn), cd->mn, sizeof(cd->mn)),
			cli_strfield(fr, sizeof(fr), cd->fr, sizeof(cd->fr)), e[i].transport,
			e[i].address, subsys_name(&e[i], ss, sizeof(ss)));
		for (uint32_t j = i; j < count && e[j].cdata == cd; i = j++) {
			fprintf(f, "%s%s", j > i ? ", " : "", e[j].device_path);
		}
		fprintf(f, "\n");
	}
}

/* nvme-cli 2.3's list -v: subsystems, controllers, namespaces. */
static void
print_detailed(FILE *f, const struct cli_list_entry *e, uint32_t count)
{
	char nqn[260], ss[32], usage[64], fmt[40];

	fprintf(f, "%-16s %-96s %-.16s\n", "Subsystem", "Subsystem-NQN", "Controllers");
	fprintf(f, "%-.16s %-.96s %-.16s\n", g_dash, g_dash, g_dash);
	for (uint32_t i = 0; i < count; i++) {
		if (i == 0 || e[i].cdata != e[i - 1].cdata) {
			fprintf(f, "%-16s %-96s %s\n", subsys_name(&e[i], ss, sizeof(ss)),
				cli_strfield(nqn, sizeof(nqn), e[i].cdata->subnqn,
					     sizeof(e[i].cdata->subnqn)),
				e[i].ctrl_name);
		}
	}
	fprintf(f, "\n");
	print_detailed_ctrls(f, e, count);
	fprintf(f, "\n");
	fprintf(f, "%-12s %-12s %-8s %-26s %-16s %-16s\n", "Device", "Generic", "NSID", "Usage",
		"Format", "Controllers");
	fprintf(f, "%-.12s %-.12s %-.8s %-.26s %-.16s %-.16s\n", g_dash, g_dash, g_dash, g_dash,
		g_dash, g_dash);
	for (uint32_t i = 0; i < count; i++) {
		usage_format(&e[i], usage, sizeof(usage), fmt, sizeof(fmt));
		fprintf(f, "%-12s %-12s %-8u %-26s %-16s %s\n", e[i].device_path, "-", e[i].nsid,
			usage, fmt, e[i].ctrl_name);
	}
}

static int
print_rows(const struct cli_args *a, struct list_rows *r)
{
	struct json_object *obj;

	if (a->output == CLI_OUT_BINARY) {
		fprintf(stderr,
			"list: binary output is not defined for list; use normal or json\n");
		return CLI_EXIT_USAGE;
	}
	/* What was not taken, one line each, on stderr: stdout stays nvme-cli's table. */
	for (uint32_t i = 0; i < r->nskipped; i++) {
		fprintf(stderr, "%s: %s\n", r->skipped[i], r->skipped_why[i]);
	}
	if (a->output == CLI_OUT_NORMAL && a->verbose) {
		print_detailed(stdout, r->rows, r->count);
		return CLI_EXIT_OK;
	}
	if (a->output == CLI_OUT_NORMAL) {
		print_simple(stdout, r->rows, r->count);
		return CLI_EXIT_OK;
	}
	obj = cli_json_list(r->rows, r->count, a->verbose);
	if (obj == NULL) {
		return CLI_EXIT_FAIL;
	}
	/* nvpoll's addition to nvme-cli's keys, present only when something was skipped */
	if (r->nskipped > 0) {
		struct json_object *arr = json_object_new_array();

		for (uint32_t i = 0; i < r->nskipped; i++) {
			struct json_object *e = json_object_new_object();

			json_object_object_add(e, "Address", json_object_new_string(r->skipped[i]));
			json_object_object_add(e, "Reason",
					       json_object_new_string(r->skipped_why[i]));
			json_object_array_add(arr, e);
		}
		json_object_object_add(obj, "Skipped", arr);
	}
	cli_json_print(stdout, obj);
	json_object_put(obj);
	return CLI_EXIT_OK;
}

static void
skipped_cb(void *ctx, const struct nvp_pci_addr *addr, const char *reason)
{
	struct list_rows *r = ctx;

	if (r->nskipped >= MAX_SKIPPED) {
		return;
	}
	if (nvp_pci_addr_fmt(r->skipped[r->nskipped], sizeof(r->skipped[0]), addr) != 0) {
		nvp_strlcpy(r->skipped[r->nskipped], "?", sizeof(r->skipped[0]));
	}
	nvp_strlcpy(r->skipped_why[r->nskipped], reason, sizeof(r->skipped_why[0]));
	r->nskipped++;
}

int
cli_cmd_list(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	struct list_rows *r = calloc(1, sizeof(*r));
	struct list_ctx ctx = { .count = 0 };
	int rc;

	if (r == NULL) {
		fprintf(stderr, "list: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	if (ctrlr != NULL) {
		add_rows(r, ctrlr);
	} else {
		if (cli_env_init(false) != 0) {
			free(r);
			return CLI_EXIT_FAIL;
		}
		/* -ENODEV: nothing to list. Other errors: list what did attach, then warn. */
		rc = nvp_nvme_probe(NULL, &ctx, NULL, attach_cb);
		if (rc != 0 && rc != -ENODEV) {
			fprintf(stderr, "list: some controllers did not attach: %s\n",
				strerror(-rc));
		}
		for (uint32_t i = 0; i < ctx.count; i++) {
			add_rows(r, ctx.ctrlrs[i]);
		}
		(void)nvp_pci_skipped(NVP_PCI_CLASS_NVME, skipped_cb, r);
	}
	rc = print_rows(a, r);
	for (uint32_t i = 0; i < ctx.count; i++) {
		nvp_nvme_detach(ctx.ctrlrs[i]);
	}
	free(r);
	return rc;
}

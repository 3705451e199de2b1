/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp list: one row per active namespace of every controller. Without a device argument
 * every NVMe function env offers is probed (real ones bound to vfio-pci/uio, virtual
 * ones already registered); on a machine without NVMe devices the table is empty and
 * the JSON is {"Devices": []}. "nvp list emu:..." lists a software controller made for
 * the occasion.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nvpoll/env.h"
#include "nvpoll/util.h"

#include "nvp_cli.h"

#define MAX_CTRLRS 64
#define MAX_ROWS 1024

struct list_ctx {
	struct nvp_nvme_ctrlr *ctrlrs[MAX_CTRLRS];
	uint32_t count;
};

struct list_rows {
	struct cli_list_entry rows[MAX_ROWS];
	struct nvme_ns_data nsdata[MAX_ROWS];
	char paths[MAX_ROWS][NVP_NVME_TRARGS_MAX + 64];
	uint32_t count;
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
	char base[NVP_NVME_TRARGS_MAX + 32];

	if (trid->traddr[0] != '\0') {
		nvp_strlcpy(base, trid->traddr, sizeof(base));
	} else if (nvp_nvme_transport_id_fmt(base, sizeof(base), trid) != 0) {
		nvp_strlcpy(base, "?", sizeof(base));
	}
	for (uint32_t nsid = nvp_nvme_ctrlr_get_first_active_ns(ctrlr);
	     nsid != 0 && r->count < MAX_ROWS;
	     nsid = nvp_nvme_ctrlr_get_next_active_ns(ctrlr, nsid)) {
		struct cli_list_entry *e = &r->rows[r->count];

		/* Fresh data, as id-ns: the cached copy may predate a format. */
		if (nvp_nvme_ctrlr_identify(ctrlr, NVME_IDENTIFY_NS, nsid, &r->nsdata[r->count],
					    sizeof(r->nsdata[0]), NULL) != 0) {
			continue;
		}
		snprintf(r->paths[r->count], sizeof(r->paths[0]), "%s/ns%u", base, nsid);
		e->nsid = nsid;
		e->device_path = r->paths[r->count];
		e->cdata = nvp_nvme_ctrlr_get_data(ctrlr);
		e->nsdata = &r->nsdata[r->count];
		r->count++;
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
	if (a->output == CLI_OUT_NORMAL) {
		cli_print_list(stdout, r->rows, r->count);
		return CLI_EXIT_OK;
	}
	obj = cli_json_list(r->rows, r->count);
	if (obj == NULL) {
		return CLI_EXIT_FAIL;
	}
	cli_json_print(stdout, obj);
	json_object_put(obj);
	return CLI_EXIT_OK;
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
	}
	rc = print_rows(a, r);
	for (uint32_t i = 0; i < ctx.count; i++) {
		nvp_nvme_detach(ctx.ctrlrs[i]);
	}
	free(r);
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp dir-receive and nvp waf.
 *
 * dir-receive is nvme-cli's: Directive Receive with -D type (0 identify, 1 streams),
 * -O operation (1 return parameters; streams: 2 get status, 3 allocate resources with
 * -r streams), decoded: the directives supported and enabled, the streams parameters
 * (MSL, NSSA, NSSO, SWS, SGS, NSA, NSO), the open streams, or the streams allocated.
 *
 * waf reads the software controller's vendor log page C0h (struct nvp_emu_ftl_log):
 * host and NAND pages written, GC work, write amplification. Another controller's C0h
 * (or none) is reported as such.
 */
#include <errno.h>
#include <stdlib.h>

#include "nvpoll/emu.h"
#include "nvpoll/util.h"

#include "nvp_cli.h"

#define STATUS_BYTES 4096u

static const char *const g_dir_names[] = { "Identify", "Stream", "Data Placement" };

static uint32_t
dir_nsid(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	return a->nsid_set ? a->nsid : nvp_nvme_ctrlr_get_first_active_ns(ctrlr);
}

static int
json_out(struct json_object *o)
{
	if (o == NULL) {
		fprintf(stderr, "nvp: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	cli_json_print(stdout, o);
	json_object_put(o);
	return CLI_EXIT_OK;
}

static void
add_int(struct json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_int64((int64_t)v));
}

static struct json_object *
json_identify(struct json_object *o, const struct nvme_dir_identify_params *p)
{
	struct json_object *sup = json_object_new_object(), *en = json_object_new_object();

	for (uint32_t t = 0; t < NVP_COUNTOF(g_dir_names); t++) {
		json_object_object_add(sup, g_dir_names[t],
				       json_object_new_boolean((p->supported[0] >> t) & 1));
		json_object_object_add(en, g_dir_names[t],
				       json_object_new_boolean((p->enabled[0] >> t) & 1));
	}
	json_object_object_add(o, "supported", sup);
	json_object_object_add(o, "enabled", en);
	return o;
}

static void
print_identify(const struct nvme_dir_identify_params *p)
{
	printf("\tDirective support\n");
	for (uint32_t t = 0; t < NVP_COUNTOF(g_dir_names); t++) {
		printf("\t\t%-25s: %ssupported\n", g_dir_names[t],
		       (p->supported[0] >> t) & 1 ? "" : "not ");
	}
	printf("\tDirective status\n");
	for (uint32_t t = 0; t < NVP_COUNTOF(g_dir_names); t++) {
		printf("\t\t%-25s: %s\n", g_dir_names[t],
		       (p->enabled[0] >> t) & 1 ? "enabled" : "disabled");
	}
}

static void
streams_params(const struct nvme_dir_streams_params *p, struct json_object *o)
{
	const struct {
		const char *key, *text;
		uint32_t v;
	} f[] = {
		{ "msl", "Max Streams Limit                          (MSL)", p->msl },
		{ "nssa", "NVM Subsystem Streams Available           (NSSA)", p->nssa },
		{ "nsso", "NVM Subsystem Streams Open                (NSSO)", p->nsso },
		{ "nssc", "NVM Subsystem Stream Capability           (NSSC)", p->nssc },
		{ "sws", "Stream Write Size (in unit of LB size)     (SWS)", p->sws },
		{ "sgs", "Stream Granularity Size (in unit of SWS)   (SGS)", p->sgs },
		{ "nsa", "Namespace Streams Allocated                (NSA)", p->nsa },
		{ "nso", "Namespace Streams Open                     (NSO)", p->nso },
	};

	for (uint32_t i = 0; i < NVP_COUNTOF(f); i++) {
		if (o != NULL) {
			add_int(o, f[i].key, f[i].v);
		} else {
			printf("\t%s: %u\n", f[i].text, f[i].v);
		}
	}
}

static void
streams_status(const uint8_t *buf, struct json_object *o)
{
	const struct nvme_dir_streams_status *s = (const void *)buf;
	uint32_t n = NVP_MIN((uint32_t)s->osc, (STATUS_BYTES - 2) / 2);
	struct json_object *ids = o != NULL ? json_object_new_array() : NULL;

	if (o == NULL) {
		printf("\tOpen Stream Count  : %u\n", s->osc);
	}
	for (uint32_t i = 0; i < n; i++) {
		if (ids != NULL) {
			json_object_array_add(ids, json_object_new_int(s->sid[i]));
		} else {
			printf("\tStream Identifier %06u : %u\n", i + 1, s->sid[i]);
		}
	}
	if (o != NULL) {
		add_int(o, "osc", s->osc);
		json_object_object_add(o, "sids", ids);
	}
}

/* Decode @buf for the (type, operation) asked, into @o (JSON) or stdout. */
static void
dir_decode(const struct cli_args *a, uint8_t oper, const uint8_t *buf, uint32_t result,
	   struct json_object *o)
{
	if (a->dir_type == NVME_DIRECTIVE_TYPE_IDENTIFY) {
		if (o != NULL) {
			json_identify(o, (const void *)buf);
		} else {
			print_identify((const void *)buf);
		}
	} else if (oper == NVME_DIR_RECV_STREAMS_PARAMS) {
		streams_params((const void *)buf, o);
	} else if (oper == NVME_DIR_RECV_STREAMS_STATUS) {
		streams_status(buf, o);
	} else if (o != NULL) {
		add_int(o, "nsa", result & 0xffffu);
	} else {
		printf("\tNamespace Streams Allocated                (NSA): %u\n",
		       result & 0xffffu);
	}
}

static uint32_t
dir_len(uint8_t type, uint8_t oper)
{
	if (type == NVME_DIRECTIVE_TYPE_IDENTIFY) {
		return sizeof(struct nvme_dir_identify_params);
	}
	switch (oper) {
	case NVME_DIR_RECV_STREAMS_PARAMS:
		return sizeof(struct nvme_dir_streams_params);
	case NVME_DIR_RECV_STREAMS_STATUS:
		return STATUS_BYTES;
	default:
		return 0;
	}
}

int
cli_cmd_dir_receive(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	uint8_t oper = a->dir_oper != 0 ? a->dir_oper : NVME_DIR_RECV_IDENTIFY_PARAMS;
	uint32_t nsid = dir_nsid(a, ctrlr), len = dir_len(a->dir_type, oper), result = 0;
	uint32_t cdw12 = oper == NVME_DIR_RECV_STREAMS_ALLOC_RES ? a->nsr : 0;
	struct json_object *o;
	struct nvme_cpl cpl;
	uint8_t *buf = calloc(1, STATUS_BYTES);
	int rc;

	if (buf == NULL) {
		return CLI_EXIT_FAIL;
	}
	rc = nvp_nvme_ctrlr_directive(ctrlr, false, nsid, a->dir_type, oper, (uint16_t)a->dir_spec,
				      cdw12, len ? buf : NULL, len, &result, &cpl);
	if (rc != 0) {
		cli_report_error("dir-receive", rc, &cpl);
		free(buf);
		return CLI_EXIT_FAIL;
	}
	if (a->output == CLI_OUT_BINARY) {
		fwrite(buf, 1, len, stdout);
		free(buf);
		return CLI_EXIT_OK;
	}
	if (a->output == CLI_OUT_JSON) {
		o = json_object_new_object();
		add_int(o, "type", a->dir_type);
		add_int(o, "operation", oper);
		add_int(o, "spec", a->dir_spec);
		add_int(o, "nsid", nsid);
		add_int(o, "result", result);
		dir_decode(a, oper, buf, result, o);
		free(buf);
		return json_out(o);
	}
	printf("dir_receive: type %#x, operation %#x, spec %#x, nsid %#x, result %#x\n",
	       a->dir_type, oper, a->dir_spec, nsid, result);
	dir_decode(a, oper, buf, result, NULL);
	free(buf);
	return CLI_EXIT_OK;
}

/* ---- waf ---- */

static struct json_object *
json_waf(const struct nvp_emu_ftl_log *l, double waf)
{
	struct json_object *o = json_object_new_object();

	add_int(o, "namespaces", l->nsid_count);
	add_int(o, "page_size", l->page_size);
	add_int(o, "pages_per_block", l->pages_per_block);
	add_int(o, "op_pct", l->op_pct);
	json_object_object_add(o, "gc_policy",
			       json_object_new_string(l->gc_policy ? "cost-benefit" : "greedy"));
	add_int(o, "streams", l->streams);
	add_int(o, "blocks", l->blocks);
	add_int(o, "free_blocks", l->free_blocks);
	add_int(o, "logical_pages", l->logical_pages);
	add_int(o, "valid_pages", l->valid_pages);
	add_int(o, "host_pages", l->host_pages);
	add_int(o, "nand_pages", l->nand_pages);
	add_int(o, "gc_pages", l->gc_pages);
	add_int(o, "erases", l->erases);
	add_int(o, "gc_runs", l->gc_runs);
	add_int(o, "trimmed_pages", l->trimmed_pages);
	add_int(o, "stream_pages", l->stream_pages);
	add_int(o, "gc_busy_us", l->gc_busy_us);
	json_object_object_add(o, "waf", json_object_new_double(waf));
	return o;
}

static void
print_waf(const struct nvp_emu_ftl_log *l, uint32_t nsid, double waf)
{
	printf("FTL model of the software controller (log page 0xc0) for nsid %#x: %u "
	       "namespace(s)\n",
	       nsid, l->nsid_count);
	printf("page size                 : %u\n", l->page_size);
	printf("pages per erase block     : %u\n", l->pages_per_block);
	printf("over-provisioning         : %u %%\n", l->op_pct);
	printf("GC policy                 : %s\n", l->gc_policy ? "cost-benefit" : "greedy");
	printf("streams offered           : %u\n", l->streams);
	printf("erase blocks              : %llu (%u free)\n", (unsigned long long)l->blocks,
	       l->free_blocks);
	printf("logical pages             : %llu (%llu valid)\n",
	       (unsigned long long)l->logical_pages, (unsigned long long)l->valid_pages);
	printf("host pages written        : %llu (%llu with a stream)\n",
	       (unsigned long long)l->host_pages, (unsigned long long)l->stream_pages);
	printf("NAND pages written        : %llu\n", (unsigned long long)l->nand_pages);
	printf("pages relocated by GC     : %llu in %llu collections\n",
	       (unsigned long long)l->gc_pages, (unsigned long long)l->gc_runs);
	printf("erases                    : %llu\n", (unsigned long long)l->erases);
	printf("pages deallocated         : %llu\n", (unsigned long long)l->trimmed_pages);
	printf("GC channel time           : %llu us\n", (unsigned long long)l->gc_busy_us);
	printf("write amplification       : %.3f\n", waf);
}

int
cli_cmd_waf(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	uint32_t nsid = a->nsid_set ? a->nsid : NVME_GLOBAL_NS_TAG;
	struct nvp_emu_ftl_log l;
	struct nvme_cpl cpl;
	double waf;
	int rc;

	memset(&l, 0, sizeof(l));
	rc = nvp_nvme_ctrlr_get_log_page(ctrlr, NVP_EMU_LOG_FTL, nsid, &l, sizeof(l), 0, &cpl);
	if (rc != 0) {
		cli_report_error("waf: get log page 0xc0", rc, &cpl);
		return CLI_EXIT_FAIL;
	}
	if (memcmp(l.signature, NVP_EMU_FTL_LOG_SIGNATURE, sizeof(l.signature)) != 0) {
		fprintf(stderr, "waf: log page 0xc0 of this controller is not nvpoll's FTL page "
				"(only the software controller has one)\n");
		return CLI_EXIT_FAIL;
	}
	if (l.pages_per_block == 0) {
		fprintf(stderr,
			"waf: the FTL model is off on this controller (emu option ftl=1)\n");
		return CLI_EXIT_FAIL;
	}
	waf = l.host_pages != 0 ? (double)l.nand_pages / (double)l.host_pages : 0.0;
	if (a->output == CLI_OUT_JSON) {
		return json_out(json_waf(&l, waf));
	}
	print_waf(&l, nsid, waf);
	return CLI_EXIT_OK;
}

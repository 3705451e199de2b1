/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp fdp <configs|usage|stats|events|status|update|feature>: Flexible Data Placement
 * (NVMe 2.0 TP4146), in the style of nvme-cli's fdp plugin.
 *
 *   configs  FDP Configurations log (20h): each configuration, its handles
 *   usage    Reclaim Unit Handle Usage log (21h)
 *   stats    FDP Statistics log (22h): host / media bytes written, media bytes erased
 *   events   FDP Events log (23h), host events
 *   status   I/O Management Receive, RUH Status of a namespace (its placement ids)
 *   update   I/O Management Send, RUH Update of the placement identifiers given
 *   feature  Get Features FDP; with -E CONF or -d, Set Features FDP first
 * The logs and the feature are per endurance group: -e, or the group of the namespace
 * (-n, default the first active one). A controller without FDP (CTRATT bit 19) is
 * reported as such before any command is sent.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nvpoll/util.h"

#include "nvp_cli.h"

#define FDP_BUF 4096u

static uint32_t
fdp_nsid(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	return a->nsid_set ? a->nsid : nvp_nvme_ctrlr_get_first_active_ns(ctrlr);
}

static int
fdp_endgid(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr, uint16_t *endgid)
{
	struct nvp_nvme_ns *ns = nvp_nvme_ctrlr_get_ns(ctrlr, fdp_nsid(a, ctrlr));

	*endgid = a->endgid_set ? (uint16_t)a->endgid : nvp_nvme_ns_get_endgid(ns);
	if (*endgid == 0) {
		fprintf(stderr, "fdp: namespace %u reports no endurance group: give one with -e\n",
			fdp_nsid(a, ctrlr));
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

static void
kv(struct json_object *o, const char *key, const char *text, uint64_t v)
{
	if (o != NULL) {
		json_object_object_add(o, key, json_object_new_int64((int64_t)v));
	} else {
		printf("%-36s: %llu\n", text, (unsigned long long)v);
	}
}

static int
finish(struct json_object *o)
{
	if (o != NULL) {
		cli_json_print(stdout, o);
		json_object_put(o);
	}
	return CLI_EXIT_OK;
}

static struct json_object *
new_obj(const struct cli_args *a)
{
	return a->output == CLI_OUT_JSON ? json_object_new_object() : NULL;
}

static void
print_config(const struct nvme_fdp_config_desc *d, const struct nvme_fdp_ruh_desc *r, uint32_t i,
	     struct json_object *arr)
{
	struct json_object *o = arr != NULL ? json_object_new_object() : NULL;
	struct json_object *ruhs = arr != NULL ? json_object_new_array() : NULL;

	if (o == NULL) {
		printf("FDP configuration %u%s\n", i,
		       d->fdpa & NVME_FDPA_VALID ? "" : " (invalid)");
	}
	kv(o, "index", "  index", i);
	kv(o, "fdpa", "  attributes (FDPA)", d->fdpa);
	kv(o, "rgif", "  reclaim group id format (RGIF)", NVME_FDPA_RGIF(d->fdpa));
	kv(o, "nrg", "  reclaim groups (NRG)", d->nrg);
	kv(o, "nruh", "  reclaim unit handles (NRUH)", d->nruh);
	kv(o, "maxpids", "  max placement ids (MAXPIDS, 0's)", d->maxpids);
	kv(o, "nnss", "  namespaces supported (NNSS)", d->nnss);
	kv(o, "runs", "  reclaim unit nominal size (RUNS)", d->runs);
	kv(o, "erutl", "  est. reclaim unit time limit (s)", d->erutl);
	for (uint32_t h = 0; h < d->nruh; h++) {
		const char *t = r[h].ruht == NVME_RUHT_INITIALLY_ISOLATED ?
					"initially isolated" :
				r[h].ruht == NVME_RUHT_PERSISTENTLY_ISOLATED ?
					"persistently isolated" :
					"reserved";

		if (ruhs != NULL) {
			json_object_array_add(ruhs, json_object_new_int(r[h].ruht));
		} else {
			printf("  handle %-4u type %u (%s)\n", h, r[h].ruht, t);
		}
	}
	if (o != NULL) {
		json_object_object_add(o, "ruht", ruhs);
		json_object_array_add(arr, o);
	}
}

static int
cmd_configs(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr, uint16_t endgid, uint8_t *buf)
{
	const struct nvme_fdp_config_log *h = (const void *)buf;
	struct json_object *o = new_obj(a), *arr = o != NULL ? json_object_new_array() : NULL;
	struct nvme_cpl cpl;
	int rc;

	rc = nvp_nvme_ctrlr_fdp_get_log(ctrlr, NVME_LOG_FDP_CONFIGS, endgid, 0, buf, FDP_BUF, &cpl);
	if (rc != 0) {
		cli_report_error("fdp configs: get log page 0x20", rc, &cpl);
		return CLI_EXIT_FAIL;
	}
	kv(o, "endgid", "endurance group", endgid);
	kv(o, "numfdpc", "configurations", h->numfdpc + 1u);
	for (uint32_t i = 0; i <= h->numfdpc; i++) {
		struct nvme_fdp_config_desc d;
		size_t off = 0;

		rc = nvp_nvme_fdp_config_find(buf, FDP_BUF, (uint16_t)i, &d, &off);
		if (rc != 0) {
			fprintf(stderr,
				"fdp configs: configuration %u: the page is malformed (%s)\n", i,
				rc == -ENOENT ? "missing" : "sizes out of bounds");
			json_object_put(o);
			return CLI_EXIT_FAIL;
		}
		print_config(&d, (const void *)(buf + off + sizeof(d)), i, arr);
	}
	if (o != NULL) {
		json_object_object_add(o, "configs", arr);
	}
	return finish(o);
}

static int
cmd_usage(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr, uint16_t endgid, uint8_t *buf)
{
	static const char *const ruha[] = { "unused", "host specified", "controller specified" };
	const struct nvme_fdp_ruhu_log *h = (const void *)buf;
	const struct nvme_fdp_ruhu_desc *d = (const void *)(h + 1);
	struct json_object *o = new_obj(a), *arr = o != NULL ? json_object_new_array() : NULL;
	struct nvme_cpl cpl;
	uint32_t n;
	int rc;

	rc = nvp_nvme_ctrlr_fdp_get_log(ctrlr, NVME_LOG_FDP_RUH_USAGE, endgid, 0, buf, FDP_BUF,
					&cpl);
	if (rc != 0) {
		cli_report_error("fdp usage: get log page 0x21", rc, &cpl);
		return CLI_EXIT_FAIL;
	}
	n = NVP_MIN((uint32_t)h->nruh, (FDP_BUF - 8u) / 8u);
	kv(o, "nruh", "reclaim unit handles", h->nruh);
	for (uint32_t i = 0; i < n; i++) {
		if (arr != NULL) {
			json_object_array_add(arr, json_object_new_int(d[i].ruha));
		} else {
			printf("handle %-4u attributes %u (%s)\n", i, d[i].ruha,
			       d[i].ruha < NVP_COUNTOF(ruha) ? ruha[d[i].ruha] : "reserved");
		}
	}
	if (o != NULL) {
		json_object_object_add(o, "ruha", arr);
	}
	return finish(o);
}

static int
cmd_stats(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr, uint16_t endgid, uint8_t *buf)
{
	const struct nvme_fdp_stats_log *s = (const void *)buf;
	struct json_object *o = new_obj(a);
	struct nvme_cpl cpl;
	int rc;

	rc = nvp_nvme_ctrlr_fdp_get_log(ctrlr, NVME_LOG_FDP_STATS, endgid, 0, buf, sizeof(*s),
					&cpl);
	if (rc != 0) {
		cli_report_error("fdp stats: get log page 0x22", rc, &cpl);
		return CLI_EXIT_FAIL;
	}
	if (s->hbmw[1] | s->mbmw[1] | s->mbe[1]) {
		fprintf(stderr, "fdp stats: a counter is past 2^64 bytes; low 64 bits shown\n");
	}
	kv(o, "hbmw", "host bytes with metadata written", s->hbmw[0]);
	kv(o, "mbmw", "media bytes with metadata written", s->mbmw[0]);
	kv(o, "mbe", "media bytes erased", s->mbe[0]);
	if (o == NULL && s->hbmw[0] != 0) {
		printf("%-36s: %.3f\n", "media / host bytes written",
		       (double)s->mbmw[0] / (double)s->hbmw[0]);
	}
	return finish(o);
}

static int
cmd_events(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr, uint16_t endgid, uint8_t *buf)
{
	const struct nvme_fdp_events_log *h = (const void *)buf;
	const struct nvme_fdp_event *e = (const void *)(h + 1);
	struct json_object *o = new_obj(a), *arr = o != NULL ? json_object_new_array() : NULL;
	struct nvme_cpl cpl;
	uint32_t n;
	int rc;

	rc = nvp_nvme_ctrlr_fdp_get_log(ctrlr, NVME_LOG_FDP_EVENTS, endgid, 0, buf, FDP_BUF, &cpl);
	if (rc != 0) {
		cli_report_error("fdp events: get log page 0x23", rc, &cpl);
		return CLI_EXIT_FAIL;
	}
	n = NVP_MIN(h->nevents, (FDP_BUF - 64u) / 64u);
	kv(o, "nevents", "host events", h->nevents);
	for (uint32_t i = 0; i < n; i++) {
		if (arr != NULL) {
			struct json_object *ev = json_object_new_object();

			kv(ev, "type", "", e[i].type);
			kv(ev, "flags", "", e[i].flags);
			kv(ev, "pid", "", e[i].pid);
			kv(ev, "nsid", "", e[i].nsid);
			json_object_array_add(arr, ev);
		} else {
			printf("event %-3u type %#04x%s flags %#x pid %u nsid %u\n", i, e[i].type,
			       e[i].type == NVME_FDP_EVT_INVALID_PID ?
				       " (invalid placement id)" :
			       e[i].type == NVME_FDP_EVT_RU_NOT_WRITTEN_FULLY ?
				       " (reclaim unit not fully written)" :
				       "",
			       e[i].flags, e[i].pid, e[i].nsid);
		}
	}
	if (o != NULL) {
		json_object_object_add(o, "events", arr);
	}
	return finish(o);
}

static int
cmd_status(const struct cli_args *a, struct nvp_nvme_ns *ns, uint8_t *buf)
{
	const struct nvme_fdp_ruh_status *h = (const void *)buf;
	const struct nvme_fdp_ruh_status_desc *d = (const void *)(h + 1);
	struct json_object *o = new_obj(a), *arr = o != NULL ? json_object_new_array() : NULL;
	struct nvme_cpl cpl;
	uint32_t n;
	int rc;

	rc = nvp_nvme_ns_fdp_ruh_status(ns, NULL, buf, FDP_BUF, &cpl);
	if (rc != 0) {
		cli_report_error("fdp status: I/O management receive", rc, &cpl);
		return CLI_EXIT_FAIL;
	}
	n = NVP_MIN((uint32_t)h->nruhsd, (FDP_BUF - 16u) / 32u);
	kv(o, "nruhsd", "placement identifiers", h->nruhsd);
	for (uint32_t i = 0; i < n; i++) {
		if (arr != NULL) {
			struct json_object *x = json_object_new_object();

			kv(x, "pid", "", d[i].pid);
			kv(x, "ruhid", "", d[i].ruhid);
			kv(x, "earutr", "", d[i].earutr);
			kv(x, "ruamw", "", d[i].ruamw);
			json_object_array_add(arr, x);
		} else {
			printf("pid 0x%04x  ruhid %-4u  earutr %-6u  ruamw %llu\n", d[i].pid,
			       d[i].ruhid, d[i].earutr, (unsigned long long)d[i].ruamw);
		}
	}
	if (o != NULL) {
		json_object_object_add(o, "ruhss", arr);
	}
	return finish(o);
}

static int
cmd_update(const struct cli_args *a, struct nvp_nvme_ns *ns)
{
	uint16_t pids[NVP_NVME_FDP_MAX_UPDATE];
	struct nvme_cpl cpl;
	int n = cli_fdp_parse_pids(a->pids, pids, NVP_COUNTOF(pids));
	int rc;

	rc = nvp_nvme_ns_fdp_ruh_update(ns, NULL, pids, (uint32_t)n, &cpl);
	if (rc != 0) {
		cli_report_error("fdp update: I/O management send", rc, &cpl);
		return CLI_EXIT_FAIL;
	}
	if (a->output != CLI_OUT_JSON) {
		printf("fdp update: %d placement identifier(s) moved to new reclaim units\n", n);
	}
	return CLI_EXIT_OK;
}

static int
cmd_feature(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr, uint16_t endgid)
{
	struct json_object *o = new_obj(a);
	struct nvme_cpl cpl;
	bool en = false;
	uint8_t idx = 0;
	int rc = 0;

	if (a->fdp_enable_set || a->fdp_disable) {
		rc = nvp_nvme_ctrlr_fdp_set_feature(ctrlr, endgid, a->fdp_enable_set, a->fdp_enable,
						    &cpl);
		if (rc != 0) {
			cli_report_error("fdp feature: set features 0x1d", rc, &cpl);
			json_object_put(o);
			return CLI_EXIT_FAIL;
		}
	}
	rc = nvp_nvme_ctrlr_fdp_get_feature(ctrlr, endgid, &en, &idx, &cpl);
	if (rc != 0) {
		cli_report_error("fdp feature: get features 0x1d", rc, &cpl);
		json_object_put(o);
		return CLI_EXIT_FAIL;
	}
	kv(o, "endgid", "endurance group", endgid);
	kv(o, "fdpe", "FDP enabled (FDPE)", en);
	kv(o, "fdpcidx", "configuration index (FDPCIDX)", idx);
	return finish(o);
}

static int
run_ns_cmd(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr, uint8_t *buf)
{
	uint32_t nsid = fdp_nsid(a, ctrlr);
	struct nvp_nvme_ns *ns = nvp_nvme_ctrlr_get_ns(ctrlr, nsid);

	if (ns == NULL || !nvp_nvme_ctrlr_is_active_ns(ctrlr, nsid)) {
		fprintf(stderr, "fdp: namespace %u is not active on this controller\n", nsid);
		return CLI_EXIT_FAIL;
	}
	return a->cmd == CLI_CMD_FDP_STATUS ? cmd_status(a, ns, buf) : cmd_update(a, ns);
}

static int
run_group_cmd(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr, uint8_t *buf)
{
	uint16_t endgid;
	int rc = fdp_endgid(a, ctrlr, &endgid);

	if (rc != CLI_EXIT_OK) {
		return rc;
	}
	switch (a->cmd) {
	case CLI_CMD_FDP_CONFIGS:
		return cmd_configs(a, ctrlr, endgid, buf);
	case CLI_CMD_FDP_USAGE:
		return cmd_usage(a, ctrlr, endgid, buf);
	case CLI_CMD_FDP_STATS:
		return cmd_stats(a, ctrlr, endgid, buf);
	case CLI_CMD_FDP_EVENTS:
		return cmd_events(a, ctrlr, endgid, buf);
	default:
		return cmd_feature(a, ctrlr, endgid);
	}
}

int
cli_cmd_fdp(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	uint8_t *buf;
	int rc;

	if (!nvp_nvme_ctrlr_fdp_supported(ctrlr)) {
		fprintf(stderr, "fdp: this controller does not support Flexible Data Placement "
				"(CTRATT bit 19 clear; the software controller has it with emu "
				"option fdp=N)\n");
		return CLI_EXIT_FAIL;
	}
	buf = calloc(1, FDP_BUF);
	if (buf == NULL) {
		fprintf(stderr, "nvp: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	if (a->cmd == CLI_CMD_FDP_STATUS || a->cmd == CLI_CMD_FDP_UPDATE) {
		rc = run_ns_cmd(a, ctrlr, buf);
	} else {
		rc = run_group_cmd(a, ctrlr, buf);
	}
	free(buf);
	return rc;
}

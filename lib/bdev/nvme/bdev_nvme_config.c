/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bdev_nvme_attach_controller, the nvme module's configuration method: SPDK's parameters
 * made into a transport ID string, and for trtype "emu" the software controller's options
 * as further parameters (checked by its own option parser, for a message naming them).
 * SPDK's bdev_nvme_set_options sets timeout_us and action_on_timeout for the controllers
 * attached after it (as SPDK's module options do; an attach's own timeout_us and
 * action_on_timeout win), its other parameters accepted and ignored, as is
 * bdev_nvme_set_hotplug. Registered with the loader (bdev_config.c).
 */
#undef NVP_LOG_COMPONENT
#define NVP_LOG_COMPONENT "bdev_config"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nvpoll/bdev.h"
#include "nvpoll/emu.h"
#include "nvpoll/log.h"
#include "nvpoll/nvme.h"
#include "nvpoll/util.h"

#include "bdev/bdev_config_internal.h"

#define CFG_TRID_MAX 1024

static int nvme_config_attach(struct bdev_config *cfg, struct json_object *params);
static int nvme_config_set_options(struct bdev_config *cfg, struct json_object *params);
static int nvme_config_detach(const char *name);

/* bdev_nvme_set_options' timeout parameters: the defaults of later attaches */
struct nvme_module_params {
	uint64_t timeout_us;
	enum nvp_bdev_nvme_timeout_action action_on_timeout;
};
static struct nvme_module_params g_module_params;

static struct bdev_config_method g_nvme_methods[] = {
	{ "bdev_nvme_attach_controller", "nvme", 10, nvme_config_attach, nvme_config_detach, NULL },
	/* SPDK's module options: the timeouts (the rest accepted and ignored) */
	{ "bdev_nvme_set_options", NULL, 11, nvme_config_set_options, NULL, NULL },
	{ "bdev_nvme_set_hotplug", NULL, 12, NULL, NULL, NULL },
};
/* bdev_nvme_attach_controller: SPDK's parameters, and for trtype "emu" the software
 * controller's options as further parameters. */
struct nvme_params {
	const char *name;
	const char *trtype;
	const char *traddr;
	const char *adrfam;
	const char *trsvcid;
	const char *subnqn;
	const char *hostnqn;   /* TCP: the host NQN the Connect commands carry */
	const char *multipath; /* SPDK's: "failover" or "multipath" make or extend a
				* multipath controller of that name; "disable" (or none) not */
	uint32_t io_queue_size;
	int32_t ctrlr_loss_timeout_sec;
	uint32_t reconnect_delay_sec;
	uint32_t fast_io_fail_timeout_sec; /* TCP: the driver's reconnect */
	uint64_t timeout_us;               /* bdev_nvme_set_options' unless given */
	enum nvp_bdev_nvme_timeout_action action_on_timeout;
	bool hdgst; /* TCP: header and data digests (CRC32C) */
	bool ddgst;
	struct bdev_config *cfg;
	char extra[CFG_TRID_MAX / 2]; /* "key=value,key=value" of the other parameters */
	char first_extra[64];
};

#define NVME_OPT(field) offsetof(struct nvme_params, field)

/* SPDK's action_on_timeout: "none", "reset" or "abort" (any case) */
static int
nvme_param_timeout_action(struct json_object *v, void *out)
{
	static const char *const names[] = { "none", "reset", "abort" };
	const char *str;
	size_t i;

	if (!json_object_is_type(v, json_type_string)) {
		return -EINVAL;
	}
	str = json_object_get_string(v);
	for (i = 0; i < NVP_COUNTOF(names); i++) {
		if (strcasecmp(str, names[i]) == 0) {
			*(enum nvp_bdev_nvme_timeout_action *)out =
				(enum nvp_bdev_nvme_timeout_action)i;
			return 0;
		}
	}
	return -EINVAL;
}

#define NVME_TIMEOUT_ACTION_WHAT "none, reset or abort"

static const struct bdev_config_param g_nvme_params[] = {
	{ "name", CFG_PT_STR, true, NVME_OPT(name), NULL, NULL },
	{ "trtype", CFG_PT_STR, true, NVME_OPT(trtype), NULL, NULL },
	{ "traddr", CFG_PT_STR, false, NVME_OPT(traddr), NULL, NULL },
	{ "adrfam", CFG_PT_STR, false, NVME_OPT(adrfam), NULL, NULL },
	{ "trsvcid", CFG_PT_STR, false, NVME_OPT(trsvcid), NULL, NULL },
	{ "subnqn", CFG_PT_STR, false, NVME_OPT(subnqn), NULL, NULL },
	{ "io_queue_size", CFG_PT_U32, false, NVME_OPT(io_queue_size), NULL, NULL },
	{ "hostnqn", CFG_PT_STR, false, NVME_OPT(hostnqn), NULL, NULL },
	{ "hostaddr", CFG_PT_IGNORE, false, 0, NULL, NULL },
	{ "hostsvcid", CFG_PT_IGNORE, false, 0, NULL, NULL },
	{ "prchk_reftag", CFG_PT_IGNORE, false, 0, NULL, NULL },
	{ "prchk_guard", CFG_PT_IGNORE, false, 0, NULL, NULL },
	{ "hdgst", CFG_PT_BOOL, false, NVME_OPT(hdgst), NULL, NULL },
	{ "ddgst", CFG_PT_BOOL, false, NVME_OPT(ddgst), NULL, NULL },
	{ "ctrlr_loss_timeout_sec", CFG_PT_S32, false, NVME_OPT(ctrlr_loss_timeout_sec), NULL,
	  NULL },
	{ "reconnect_delay_sec", CFG_PT_U32, false, NVME_OPT(reconnect_delay_sec), NULL, NULL },
	{ "timeout_us", CFG_PT_U64, false, NVME_OPT(timeout_us), NULL, NULL },
	{ "action_on_timeout", CFG_PT_FN, false, NVME_OPT(action_on_timeout),
	  nvme_param_timeout_action, NVME_TIMEOUT_ACTION_WHAT },
	{ "fast_io_fail_timeout_sec", CFG_PT_U32, false, NVME_OPT(fast_io_fail_timeout_sec), NULL,
	  NULL },
	{ "multipath", CFG_PT_STR, false, NVME_OPT(multipath), NULL, NULL },
	{ "num_io_queues", CFG_PT_IGNORE, false, 0, NULL, NULL },
	{ NULL, CFG_PT_IGNORE, false, 0, NULL, NULL },
};

/*
 * A value pasted into the transport ID string: nvp_nvme_transport_id_parse() splits that
 * string at white space, so a value with a space would add pairs of its own choosing
 * ("0000:01:00.0 trtype:emu"). Control characters are refused with it: no value needs one.
 */
static bool
trid_value_ok(const char *v)
{
	for (; *v != '\0'; v++) {
		if (isspace((unsigned char)*v) || iscntrl((unsigned char)*v)) {
			return false;
		}
	}
	return true;
}

/* A parameter bdev_nvme_attach_controller does not know: kept as "key=value" (used only
 * when trtype is emu). */
static int
nvme_extra(void *ctx, const char *key, struct json_object *v)
{
	struct nvme_params *np = ctx;
	const char *val;
	size_t n = strlen(np->extra);
	char num[24];
	uint64_t u;

	if (json_object_is_type(v, json_type_boolean)) {
		val = json_object_get_boolean(v) ? "1" : "0";
	} else if (json_object_is_type(v, json_type_string) ||
		   json_object_is_type(v, json_type_int)) {
		val = json_object_get_string(v);
	} else if (json_object_is_type(v, json_type_double) &&
		   bdev_config_json_number_u64(json_object_get_string(v), UINT64_MAX, &u) == 0) {
		snprintf(num, sizeof(num), "%" PRIu64, u); /* 1e3: the option parser's 1000 */
		val = num;
	} else {
		NVP_ERRLOG("%s.params.%s: %s is not an integer, a string or a boolean "
			   "(a software controller option%s)",
			   bdev_config_where(np->cfg), key, json_object_to_json_string(v),
			   json_object_is_type(v, json_type_double) ? " must be an integer" : "");
		return -EINVAL;
	}
	if (!trid_value_ok(val) || strchr(val, ',') != NULL ||
	    strlen(key) + strlen(val) + 2 > sizeof(np->extra) - n) {
		NVP_ERRLOG("%s.params.%s: '%s' has a space or comma, or is too long",
			   bdev_config_where(np->cfg), key, val);
		return -EINVAL;
	}
	snprintf(np->extra + n, sizeof(np->extra) - n, "%s%s=%s", n != 0 ? "," : "", key, val);
	if (np->first_extra[0] == '\0') {
		nvp_strlcpy(np->first_extra, key, sizeof(np->first_extra));
	}
	return 0;
}

/* The emu options must be the software controller's: ask it, for a message naming them. */
static int
nvme_emu_check(struct nvme_params *np)
{
	struct nvp_emu_opts eo;
	char err[256];

	nvp_emu_opts_init(&eo, sizeof(eo));
	if (nvp_emu_opts_parse(&eo, np->extra, err, sizeof(err)) != 0) {
		NVP_ERRLOG("%s.params: software controller option: %s", bdev_config_where(np->cfg),
			   err);
		return -EINVAL;
	}
	return 0;
}

/* The string parameters that go into the transport ID: each one token, not empty. */
static int
nvme_trid_values_check(const struct nvme_params *np, bool emu)
{
	/* the longest each may be: the transport ID's field, a bdev name "<name>n<nsid>" with
	 * room for the nsid, an NQN's 223 bytes (NVMe Base 4.6) */
	const struct {
		const char *key;
		const char *val;
		size_t max;
	} vals[] = {
		{ "name", np->name, emu ? NVP_NVME_TRNAME_MAX - 1 : NVP_BDEV_NAME_MAX - 12 },
		{ "trtype", np->trtype, NVP_NVME_TRSTRING_MAX - 1 },
		{ "traddr", np->traddr, NVP_NVME_TRADDR_MAX - 1 },
		{ "adrfam", np->adrfam, 15 },
		{ "trsvcid", np->trsvcid, 31 },
		{ "subnqn", np->subnqn, 223 },
		{ "hostnqn", np->hostnqn, 223 },
	};
	size_t i;

	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		if (vals[i].val != NULL &&
		    (vals[i].val[0] == '\0' || !trid_value_ok(vals[i].val))) {
			NVP_ERRLOG("%s.params.%s: '%s' is empty or has white space or a control "
				   "character (a transport ID value is one word)",
				   bdev_config_where(np->cfg), vals[i].key, vals[i].val);
			return -EINVAL;
		}
		if (vals[i].val != NULL && strlen(vals[i].val) > vals[i].max) {
			NVP_ERRLOG("%s.params.%s: '%.32s...' is %zu characters long; at most %zu",
				   bdev_config_where(np->cfg), vals[i].key, vals[i].val,
				   strlen(vals[i].val), vals[i].max);
			return -EINVAL;
		}
	}
	return 0;
}

/* The transport ID string nvp_bdev_nvme_attach() takes. */
static int
nvme_trid(struct nvme_params *np, char *trid, size_t len)
{
	bool emu = strcasecmp(np->trtype, "emu") == 0; /* as the trid parser: any case */
	bool tcp = strcasecmp(np->trtype, "TCP") == 0;
	size_t n;
	char *p;

	if (nvme_trid_values_check(np, emu) != 0) {
		return -EINVAL;
	}
	if (!emu && np->first_extra[0] != '\0') {
		NVP_ERRLOG("%s.params.%s: unknown parameter (trtype %s takes name, trtype, "
			   "traddr, adrfam, trsvcid, subnqn, io_queue_size, and for TCP hostnqn, "
			   "hdgst, ddgst; other parameters "
			   "are the software controller's, with trtype emu)",
			   bdev_config_where(np->cfg), np->first_extra, np->trtype);
		return -EINVAL;
	}
	if (emu && nvme_emu_check(np) != 0) {
		return -EINVAL;
	}
	if (!tcp && (np->hostnqn != NULL || np->hdgst || np->ddgst)) {
		NVP_ERRLOG("%s.params: hostnqn, hdgst and ddgst are NVMe/TCP's; trtype is %s",
			   bdev_config_where(np->cfg), np->trtype);
		return -EINVAL;
	}
	n = (size_t)snprintf(trid, len, "trtype:%s", np->trtype);
	if (emu) {
		n += (size_t)snprintf(trid + n, len - n, " name:%s", np->name);
	}
#define TRID_ADD(key)                                                              \
	if (np->key != NULL && n < len) {                                          \
		n += (size_t)snprintf(trid + n, len - n, " " #key ":%s", np->key); \
	}
	TRID_ADD(traddr)
	TRID_ADD(adrfam)
	TRID_ADD(trsvcid)
	TRID_ADD(subnqn)
	TRID_ADD(hostnqn)
#undef TRID_ADD
	if (np->hdgst && n < len) {
		n += (size_t)snprintf(trid + n, len - n, " hdgst:1");
	}
	if (np->ddgst && n < len) {
		n += (size_t)snprintf(trid + n, len - n, " ddgst:1");
	}
	if (np->extra[0] != '\0' && n < len) {
		n += (size_t)snprintf(trid + n, len - n, " %s", np->extra);
		for (p = trid + n - strlen(np->extra); *p != '\0'; p++) {
			*p = *p == ',' ? ' ' : *p;
		}
	}
	if (n >= len) {
		NVP_ERRLOG("%s.params: the transport ID they make is longer than %zu characters",
			   bdev_config_where(np->cfg), len - 1);
		return -EINVAL;
	}
	return 0;
}

/* "multipath": "failover" | "multipath": the first attach of a name makes the multipath
 * controller (undone if the load fails later), the others add a path to it. */
static int
nvme_config_attach_mpath(struct nvme_params *np, const char *trid)
{
	uint32_t paths = 0;
	int rc;

	rc = nvp_bdev_nvme_mpath_attach(np->name, trid, np->multipath, NULL, NULL, &paths);
	if (rc != 0) {
		NVP_ERRLOG("%s: controller %s (multipath %s): path %s not attached (%d)",
			   bdev_config_where(np->cfg), np->name, np->multipath, trid, rc);
		return rc;
	}
	NVP_INFOLOG("%s: controller %s: %" PRIu32 " path(s), multipath %s",
		    bdev_config_where(np->cfg), np->name, paths, np->multipath);
	return paths == 1 ? bdev_config_made(np->cfg, &g_nvme_methods[0], np->name) : 0;
}

/* Undo an attach: a multipath controller's name, else a controller's. */
static int
nvme_config_detach(const char *name)
{
	int rc = nvp_bdev_nvme_mpath_detach(name);

	return rc != -ENODEV ? rc : nvp_bdev_nvme_detach(name);
}

static int
nvme_config_attach(struct bdev_config *cfg, struct json_object *params)
{
	struct nvp_bdev_nvme_opts o;
	struct nvme_params *np;
	uint32_t count = 0;
	char *trid;
	int rc;

	np = calloc(1, sizeof(*np) + CFG_TRID_MAX);
	if (np == NULL) {
		return -ENOMEM;
	}
	trid = (char *)(np + 1);
	np->cfg = cfg;
	np->timeout_us = g_module_params.timeout_us;
	np->action_on_timeout = g_module_params.action_on_timeout;
	rc = bdev_config_params_parse(cfg, params, g_nvme_params, np, nvme_extra, np);
	if (rc == 0) {
		rc = nvme_trid(np, trid, CFG_TRID_MAX);
	}
	if (rc == 0 && np->multipath != NULL && strcmp(np->multipath, "disable") != 0) {
		rc = nvme_config_attach_mpath(np, trid);
		free(np);
		return rc;
	}
	if (rc == 0) {
		nvp_bdev_nvme_opts_init(&o, sizeof(o));
		o.name = np->name;
		o.io_queue_size = np->io_queue_size;
		o.ctrlr_loss_timeout_sec = np->ctrlr_loss_timeout_sec;
		o.reconnect_delay_sec = np->reconnect_delay_sec;
		o.fast_io_fail_timeout_sec = np->fast_io_fail_timeout_sec;
		o.timeout_us = np->timeout_us;
		o.action_on_timeout = np->action_on_timeout;
		rc = nvp_bdev_nvme_attach(trid, &o, NULL, 0, &count);
	}
	if (rc == 0) {
		NVP_INFOLOG("%s: controller %s attached (%s), %" PRIu32 " bdev(s)",
			    bdev_config_where(cfg), np->name, trid, count);
		rc = bdev_config_made(cfg, &g_nvme_methods[0], np->name);
	}
	free(np);
	return rc;
}

#define NVME_MOPT(field) offsetof(struct nvme_module_params, field)

static const struct bdev_config_param g_nvme_set_options_params[] = {
	{ "timeout_us", CFG_PT_U64, false, NVME_MOPT(timeout_us), NULL, NULL },
	{ "action_on_timeout", CFG_PT_FN, false, NVME_MOPT(action_on_timeout),
	  nvme_param_timeout_action, NVME_TIMEOUT_ACTION_WHAT },
	{ NULL, CFG_PT_IGNORE, false, 0, NULL, NULL },
};

/* SPDK's other module options (retry counts, admin timeouts, ...): nothing to set here. */
static int
nvme_set_options_other(void *ctx, const char *key, struct json_object *v)
{
	(void)ctx;
	(void)key;
	(void)v;
	return 0;
}

/*
 * bdev_nvme_set_options: timeout_us and action_on_timeout for the controllers attached
 * after it, in this configuration and later ones (SPDK's module options are the
 * module's, not a controller's). A bad value changes nothing.
 */
static int
nvme_config_set_options(struct bdev_config *cfg, struct json_object *params)
{
	struct nvme_module_params mp = g_module_params;
	int rc;

	rc = bdev_config_params_parse(cfg, params, g_nvme_set_options_params, &mp,
				      nvme_set_options_other, NULL);
	if (rc == 0) {
		g_module_params = mp;
	}
	return rc;
}

__attribute__((constructor)) static void
nvme_config_register(void)
{
	size_t i;

	for (i = 0; i < sizeof(g_nvme_methods) / sizeof(g_nvme_methods[0]); i++) {
		bdev_config_method_register(&g_nvme_methods[i]);
	}
}

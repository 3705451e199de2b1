/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bdevs from a configuration, in SPDK's JSON shape so users can bring theirs:
 *
 *   {"subsystems": [{"subsystem": "bdev", "config": [
 *       {"method": "bdev_nvme_attach_controller",
 *        "params": {"name": "nvme0", "trtype": "PCIe", "traddr": "0000:01:00.0"}},
 *       {"method": "bdev_malloc_create",
 *        "params": {"name": "m0", "num_blocks": 2048, "block_size": 512}}]}]}
 *
 * or in one line for tools ("malloc:name=m0,num_blocks=2048;nvme:name=emu0,trtype=emu").
 * Both become a list of (method, params) run in order by one executor; the one-line form
 * is turned into JSON objects first (values as strings, which every number and boolean
 * parameter also accepts).
 *
 * The JSON text must be RFC 8259's (bdev_config_json.c checks it before json-c, which takes
 * more, parses it). Methods and their parameters are tables (g_methods). A parameter nobody
 * knows, a method nobody knows, a key given twice in an object, a wrong type or a create
 * call's refusal stops the load with a message naming it and where it is: line and column
 * for malformed JSON and a key given twice; otherwise the entry's line and column and the
 * JSON path ("bdev.json:9:5: subsystems[0].config[2] (bdev_null_create).params.num_blocks"),
 * or the item of the one-line form. Then everything the load had made so far is deleted
 * again, newest first, and stage choices it had made are put back: nothing half-created.
 *
 * SPDK parameters that mean nothing here (a malloc bdev's uuid, reconnect timers) are
 * accepted and ignored, so a file from SPDK's save_config loads;
 * subsystems other than "bdev" are skipped with a notice.
 */
#undef NVP_LOG_COMPONENT
#define NVP_LOG_COMPONENT "bdev_config"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "nvpoll/bdev.h"
#include "nvpoll/emu.h"
#include "nvpoll/log.h"
#include "nvpoll/util.h"

#include "bdev_config_internal.h"

#define CFG_TRID_MAX 1024

/* ---- what a load made, to undo it on failure ---- */

enum made_kind {
	MADE_MALLOC,
	MADE_NULL,
	MADE_URING,
	MADE_NVME,
	MADE_SCHED,
	MADE_ADMIT,
	MADE_ACCT
};

struct made {
	enum made_kind kind;
	char name[NVP_BDEV_NAME_MAX];
	char prev[NVP_BDEV_NAME_MAX]; /* stage choices: the stage before */
	char *prev_params;            /* its params (owned; NULL: none) */
	bool prev_acct;               /* accounting switches: the setting before */
};

struct cfg {
	struct made *made;
	size_t num_made;
	size_t cap_made;
	char where[WHERE_MAX]; /* the method being run, for messages */
	const char *text;      /* the JSON text (NULL for the one-line form) */
	const char *origin;    /* its file name, or "(string)" */
};

/* Record what the load made or changed, for cfg_undo(); @prev_params is owned by the
 * record from here on (freed also on failure). */
static int
cfg_record(struct cfg *cfg, enum made_kind kind, const char *name, const char *prev,
	   char *prev_params)
{
	struct made *m;

	if (cfg->num_made == cfg->cap_made) {
		size_t cap = cfg->cap_made != 0 ? cfg->cap_made * 2 : 8;

		m = realloc(cfg->made, cap * sizeof(*m));
		if (m == NULL) {
			free(prev_params);
			return -ENOMEM;
		}
		cfg->made = m;
		cfg->cap_made = cap;
	}
	m = &cfg->made[cfg->num_made++];
	m->kind = kind;
	nvp_strlcpy(m->name, name, sizeof(m->name));
	nvp_strlcpy(m->prev, prev != NULL ? prev : "none", sizeof(m->prev));
	m->prev_params = prev_params;
	m->prev_acct = false;
	return 0;
}

static void
cfg_records_free(struct cfg *cfg)
{
	size_t i;

	for (i = 0; i < cfg->num_made; i++) {
		free(cfg->made[i].prev_params);
	}
	cfg->num_made = 0;
}

static void
cfg_undo(struct cfg *cfg)
{
	struct nvp_bdev *bdev;
	struct made *m;
	size_t i;

	for (i = cfg->num_made; i-- > 0;) {
		m = &cfg->made[i];
		bdev = nvp_bdev_get_by_name(m->name);
		switch (m->kind) {
		case MADE_MALLOC:
			nvp_bdev_malloc_delete(m->name);
			break;
		case MADE_NULL:
			nvp_bdev_null_delete(m->name);
			break;
		case MADE_URING:
			nvp_bdev_uring_delete(m->name);
			break;
		case MADE_NVME:
			nvp_bdev_nvme_detach(m->name);
			break;
		case MADE_SCHED:
			if (bdev != NULL) {
				nvp_bdev_set_scheduler(bdev, m->prev, m->prev_params);
			}
			break;
		case MADE_ADMIT:
			if (bdev != NULL) {
				nvp_bdev_set_admission(bdev, m->prev, m->prev_params);
			}
			break;
		case MADE_ACCT:
			if (bdev != NULL) {
				nvp_bdev_set_accounting(bdev, m->prev_acct);
			}
			break;
		}
	}
	if (cfg->num_made != 0) {
		NVP_NOTICELOG("undid the %zu object(s) the configuration had made or changed",
			      cfg->num_made);
	}
	cfg_records_free(cfg);
}

/* The entry being run, for messages (truncated if very long). */
static void __attribute__((format(printf, 2, 3))) where_set(struct cfg *cfg, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cfg->where, sizeof(cfg->where), fmt, ap);
	va_end(ap);
}

/* ---- parameters ---- */

enum ptype {
	PT_STR,    /* const char * (valid while the JSON lives) */
	PT_U64,    /* uint64_t */
	PT_U32,    /* uint32_t */
	PT_S32,    /* int32_t, -1 .. INT32_MAX (SPDK's "-1 = for ever") */
	PT_BOOL,   /* bool */
	PT_IOPOLL, /* enum nvp_bdev_uring_iopoll: "auto", "on"/true, "off"/false */
	PT_IGNORE, /* SPDK's, meaningless here: accepted, not used */
	PT_ZERO,   /* SPDK's, not supported here: accepted only at its default 0 (off) */
	PT_MINUS1, /* the same with default -1 */
};

struct pdef {
	const char *key;
	enum ptype type;
	bool required;
	size_t off;
};

static const char *const g_type_names[] = {
	[PT_STR] = "a string",
	[PT_U64] = "an unsigned integer",
	[PT_U32] = "an unsigned integer",
	[PT_S32] = "-1 or an unsigned integer",
	[PT_BOOL] = "a boolean",
	[PT_IOPOLL] = "auto, on or off",
	[PT_IGNORE] = "anything",
	[PT_ZERO] = "an integer",
	[PT_MINUS1] = "an integer",
};

/* A JSON string with "\u0000" in it: as a C string it would end there ("m\u0000x" -> "m"). */
static bool
json_has_nul(struct json_object *v)
{
	return json_object_is_type(v, json_type_string) &&
	       strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v);
}

static int
param_u64(struct json_object *v, uint64_t max, uint64_t *out)
{
	int64_t i;

	if (json_object_is_type(v, json_type_int)) {
		i = json_object_get_int64(v);
		if (i < 0 || (uint64_t)i > max) {
			return -EINVAL;
		}
		*out = (uint64_t)i;
		return 0;
	}
	if (json_object_is_type(v, json_type_string)) {
		return nvp_strtou64(json_object_get_string(v), 0, max, out);
	}
	if (json_object_is_type(v, json_type_double)) {
		/* 1e3, 1024.0: json-c keeps the number's text, read exactly */
		return bdev_config_json_number_u64(json_object_get_string(v), max, out);
	}
	return -EINVAL;
}

/* An SPDK feature nvpoll does not have: only its default value (@def), which turns it off,
 * is taken. \return 0, -EINVAL (not a number) or -ENOTSUP (another value). */
static int
param_neutral(struct json_object *v, int64_t def)
{
	uint64_t u;
	int64_t i;
	char *end;

	if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_boolean)) {
		i = json_object_get_int64(v);
	} else if (json_object_is_type(v, json_type_double)) {
		if (bdev_config_json_number_u64(json_object_get_string(v), INT64_MAX, &u) != 0) {
			return -EINVAL;
		}
		i = (int64_t)u;
	} else if (json_object_is_type(v, json_type_string)) {
		errno = 0;
		i = strtoll(json_object_get_string(v), &end, 0);
		if (errno != 0 || end == json_object_get_string(v) || *end != '\0') {
			return -EINVAL;
		}
	} else {
		return -EINVAL;
	}
	return i == def ? 0 : -ENOTSUP;
}

static int
param_bool(struct json_object *v, bool *out)
{
	if (json_object_is_type(v, json_type_boolean)) {
		*out = json_object_get_boolean(v);
		return 0;
	}
	if (json_object_is_type(v, json_type_string)) {
		return nvp_parse_bool(json_object_get_string(v), out);
	}
	return -EINVAL;
}

static int
param_iopoll(struct json_object *v, enum nvp_bdev_uring_iopoll *out)
{
	bool b;

	if (json_object_is_type(v, json_type_string) &&
	    strcmp(json_object_get_string(v), "auto") == 0) {
		*out = NVP_BDEV_URING_IOPOLL_AUTO;
		return 0;
	}
	if (param_bool(v, &b) != 0) {
		return -EINVAL;
	}
	*out = b ? NVP_BDEV_URING_IOPOLL_ON : NVP_BDEV_URING_IOPOLL_OFF;
	return 0;
}

/* Store @v as @d says into @base. */
static int
param_store(const struct pdef *d, struct json_object *v, void *base)
{
	uint8_t *p = (uint8_t *)base + d->off;
	uint64_t u;
	int rc = 0;

	switch (d->type) {
	case PT_STR:
		if (!json_object_is_type(v, json_type_string)) {
			return -EINVAL;
		}
		*(const char **)p = json_object_get_string(v);
		break;
	case PT_U64:
		rc = param_u64(v, UINT64_MAX, (uint64_t *)p);
		break;
	case PT_U32:
		rc = param_u64(v, UINT32_MAX, &u);
		if (rc == 0) {
			*(uint32_t *)p = (uint32_t)u;
		}
		break;
	case PT_S32:
		if ((json_object_is_type(v, json_type_int) && json_object_get_int64(v) == -1) ||
		    (json_object_is_type(v, json_type_string) &&
		     strcmp(json_object_get_string(v), "-1") == 0)) {
			*(int32_t *)p = -1;
			break;
		}
		rc = param_u64(v, INT32_MAX, &u);
		if (rc == 0) {
			*(int32_t *)p = (int32_t)u;
		}
		break;
	case PT_BOOL:
		rc = param_bool(v, (bool *)p);
		break;
	case PT_IOPOLL:
		rc = param_iopoll(v, (enum nvp_bdev_uring_iopoll *)p);
		break;
	case PT_ZERO:
	case PT_MINUS1:
		rc = param_neutral(v, d->type == PT_ZERO ? 0 : -1);
		break;
	case PT_IGNORE:
		break;
	}
	return rc;
}

static const struct pdef *
pdef_find(const struct pdef *defs, const char *key)
{
	for (; defs->key != NULL; defs++) {
		if (strcmp(defs->key, key) == 0) {
			return defs;
		}
	}
	return NULL;
}

/* "a, b, c" of the parameters a method knows (ignored SPDK ones left out). */
static void
pdef_list(const struct pdef *defs, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (; defs->key != NULL && n < len; defs++) {
		if (defs->type != PT_IGNORE && defs->type != PT_ZERO && defs->type != PT_MINUS1) {
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n != 0 ? ", " : "",
					      defs->key);
		}
	}
}

/*
 * Parse @params by @defs into @base. A key not in @defs goes to @extra(ctx, key, value)
 * when given, else it is an error. \return 0 or -EINVAL (message logged).
 */
static int
params_parse(struct cfg *cfg, struct json_object *params, const struct pdef *defs, void *base,
	     int (*extra)(void *ctx, const char *key, struct json_object *v), void *ctx)
{
	char known[256];
	const struct pdef *d;
	int rc;

	if (params != NULL && !json_object_is_type(params, json_type_object)) {
		NVP_ERRLOG("%s.params: not an object", cfg->where);
		return -EINVAL;
	}
	if (params == NULL) {
		goto required;
	}
	json_object_object_foreach(params, key, v)
	{
		if (json_has_nul(v)) {
			NVP_ERRLOG("%s.params.%s: the string has a NUL character (\\u0000)",
				   cfg->where, key);
			return -EINVAL;
		}
		d = pdef_find(defs, key);
		if (d == NULL && extra != NULL) {
			if (extra(ctx, key, v) != 0) {
				return -EINVAL;
			}
			continue;
		}
		if (d == NULL) {
			pdef_list(defs, known, sizeof(known));
			NVP_ERRLOG("%s.params.%s: unknown parameter (known: %s)", cfg->where, key,
				   known);
			return -EINVAL;
		}
		rc = param_store(d, v, base);
		if (rc == -ENOTSUP) {
			NVP_ERRLOG(
				"%s.params.%s: %s is not supported: nvpoll does not have this SPDK "
				"feature (only %d, SPDK's default, is accepted)",
				cfg->where, key, json_object_to_json_string(v),
				d->type == PT_ZERO ? 0 : -1);
			return -EINVAL;
		}
		if (rc != 0) {
			NVP_ERRLOG("%s.params.%s: %s is not %s", cfg->where, key,
				   json_object_to_json_string(v), g_type_names[d->type]);
			return -EINVAL;
		}
	}
required:
	for (d = defs; d->key != NULL; d++) {
		if (d->required &&
		    (params == NULL || !json_object_object_get_ex(params, d->key, NULL))) {
			NVP_ERRLOG("%s.params: missing parameter %s", cfg->where, d->key);
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- methods ---- */

/* SPDK's malloc and null parameters: what only places or names the bdev is ignored; end-to-end
 * protection (DIF/DIX) is taken only turned off, its SPDK default. */
#define SPDK_IGNORED_GEOMETRY                                                                \
	{ "uuid", PT_IGNORE, false, 0 }, { "physical_block_size", PT_IGNORE, false, 0 },     \
		{ "md_interleave", PT_IGNORE, false, 0 }, { "dif_type", PT_ZERO, false, 0 }, \
		{ "dif_is_head_of_md", PT_IGNORE, false, 0 },                                \
	{                                                                                    \
		"dif_pi_format", PT_ZERO, false, 0                                           \
	}

#define OPT(type, field) offsetof(type, field)

static const struct pdef g_malloc_params[] = {
	{ "name", PT_STR, true, OPT(struct nvp_bdev_malloc_opts, name) },
	{ "num_blocks", PT_U64, true, OPT(struct nvp_bdev_malloc_opts, num_blocks) },
	{ "block_size", PT_U32, false, OPT(struct nvp_bdev_malloc_opts, block_size) },
	{ "md_size", PT_U32, false, OPT(struct nvp_bdev_malloc_opts, md_size) },
	{ "optimal_io_boundary", PT_U32, false,
	  OPT(struct nvp_bdev_malloc_opts, optimal_io_boundary) },
	{ "max_xfer_blocks", PT_U32, false, OPT(struct nvp_bdev_malloc_opts, max_xfer_blocks) },
	SPDK_IGNORED_GEOMETRY,
	{ "numa_id", PT_MINUS1, false, 0 }, /* SPDK's NUMA node for the buffer: -1 = any */
	{ NULL, PT_IGNORE, false, 0 },
};

static int
m_malloc_create(struct cfg *cfg, struct json_object *params)
{
	struct nvp_bdev_malloc_opts o;
	int rc;

	nvp_bdev_malloc_opts_init(&o, sizeof(o));
	rc = params_parse(cfg, params, g_malloc_params, &o, NULL, NULL);
	if (rc == 0) {
		rc = nvp_bdev_malloc_create(&o, NULL);
	}
	return rc != 0 ? rc : cfg_record(cfg, MADE_MALLOC, o.name, NULL, NULL);
}

static const struct pdef g_null_params[] = {
	{ "name", PT_STR, true, OPT(struct nvp_bdev_null_opts, name) },
	{ "num_blocks", PT_U64, true, OPT(struct nvp_bdev_null_opts, num_blocks) },
	{ "block_size", PT_U32, false, OPT(struct nvp_bdev_null_opts, block_size) },
	{ "md_size", PT_U32, false, OPT(struct nvp_bdev_null_opts, md_size) },
	{ "max_xfer_blocks", PT_U32, false, OPT(struct nvp_bdev_null_opts, max_xfer_blocks) },
	SPDK_IGNORED_GEOMETRY,
	{ NULL, PT_IGNORE, false, 0 },
};

static int
m_null_create(struct cfg *cfg, struct json_object *params)
{
	struct nvp_bdev_null_opts o;
	int rc;

	nvp_bdev_null_opts_init(&o, sizeof(o));
	rc = params_parse(cfg, params, g_null_params, &o, NULL, NULL);
	if (rc == 0) {
		rc = nvp_bdev_null_create(&o, NULL);
	}
	return rc != 0 ? rc : cfg_record(cfg, MADE_NULL, o.name, NULL, NULL);
}

static const struct pdef g_uring_params[] = {
	{ "name", PT_STR, true, OPT(struct nvp_bdev_uring_opts, name) },
	{ "filename", PT_STR, true, OPT(struct nvp_bdev_uring_opts, filename) },
	{ "block_size", PT_U32, false, OPT(struct nvp_bdev_uring_opts, block_size) },
	{ "iopoll", PT_IOPOLL, false, OPT(struct nvp_bdev_uring_opts, iopoll) },
	{ "uuid", PT_IGNORE, false, 0 },
	{ NULL, PT_IGNORE, false, 0 },
};

static int
m_uring_create(struct cfg *cfg, struct json_object *params)
{
	struct nvp_bdev_uring_opts o;
	int rc;

	nvp_bdev_uring_opts_init(&o, sizeof(o));
	rc = params_parse(cfg, params, g_uring_params, &o, NULL, NULL);
	if (rc == 0) {
		rc = nvp_bdev_uring_create(&o, NULL);
	}
	return rc != 0 ? rc : cfg_record(cfg, MADE_URING, o.name, NULL, NULL);
}

/* bdev_nvme_attach_controller: SPDK's parameters, and for trtype "emu" the software
 * controller's options as further parameters. */
struct nvme_params {
	const char *name;
	const char *trtype;
	const char *traddr;
	const char *adrfam;
	const char *trsvcid;
	const char *subnqn;
	const char *hostnqn; /* TCP: the host NQN the Connect commands carry */
	uint32_t io_queue_size;
	int32_t ctrlr_loss_timeout_sec;
	uint32_t reconnect_delay_sec;
	bool hdgst; /* TCP: header and data digests (CRC32C) */
	bool ddgst;
	struct cfg *cfg;
	char extra[CFG_TRID_MAX / 2]; /* "key=value,key=value" of the other parameters */
	char first_extra[64];
};

#define NVME_OPT(field) offsetof(struct nvme_params, field)

static const struct pdef g_nvme_params[] = {
	{ "name", PT_STR, true, NVME_OPT(name) },
	{ "trtype", PT_STR, true, NVME_OPT(trtype) },
	{ "traddr", PT_STR, false, NVME_OPT(traddr) },
	{ "adrfam", PT_STR, false, NVME_OPT(adrfam) },
	{ "trsvcid", PT_STR, false, NVME_OPT(trsvcid) },
	{ "subnqn", PT_STR, false, NVME_OPT(subnqn) },
	{ "io_queue_size", PT_U32, false, NVME_OPT(io_queue_size) },
	{ "hostnqn", PT_STR, false, NVME_OPT(hostnqn) },
	{ "hostaddr", PT_IGNORE, false, 0 },
	{ "hostsvcid", PT_IGNORE, false, 0 },
	{ "prchk_reftag", PT_IGNORE, false, 0 },
	{ "prchk_guard", PT_IGNORE, false, 0 },
	{ "hdgst", PT_BOOL, false, NVME_OPT(hdgst) },
	{ "ddgst", PT_BOOL, false, NVME_OPT(ddgst) },
	{ "ctrlr_loss_timeout_sec", PT_S32, false, NVME_OPT(ctrlr_loss_timeout_sec) },
	{ "reconnect_delay_sec", PT_U32, false, NVME_OPT(reconnect_delay_sec) },
	{ "fast_io_fail_timeout_sec", PT_IGNORE, false, 0 },
	{ "multipath", PT_IGNORE, false, 0 },
	{ "num_io_queues", PT_IGNORE, false, 0 },
	{ NULL, PT_IGNORE, false, 0 },
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
			   np->cfg->where, key, json_object_to_json_string(v),
			   json_object_is_type(v, json_type_double) ? " must be an integer" : "");
		return -EINVAL;
	}
	if (!trid_value_ok(val) || strchr(val, ',') != NULL ||
	    strlen(key) + strlen(val) + 2 > sizeof(np->extra) - n) {
		NVP_ERRLOG("%s.params.%s: '%s' has a space or comma, or is too long",
			   np->cfg->where, key, val);
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
		NVP_ERRLOG("%s.params: software controller option: %s", np->cfg->where, err);
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
				   np->cfg->where, vals[i].key, vals[i].val);
			return -EINVAL;
		}
		if (vals[i].val != NULL && strlen(vals[i].val) > vals[i].max) {
			NVP_ERRLOG("%s.params.%s: '%.32s...' is %zu characters long; at most %zu",
				   np->cfg->where, vals[i].key, vals[i].val, strlen(vals[i].val),
				   vals[i].max);
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
			   np->cfg->where, np->first_extra, np->trtype);
		return -EINVAL;
	}
	if (emu && nvme_emu_check(np) != 0) {
		return -EINVAL;
	}
	if (!tcp && (np->hostnqn != NULL || np->hdgst || np->ddgst)) {
		NVP_ERRLOG("%s.params: hostnqn, hdgst and ddgst are NVMe/TCP's; trtype is %s",
			   np->cfg->where, np->trtype);
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
			   np->cfg->where, len - 1);
		return -EINVAL;
	}
	return 0;
}

static int
m_nvme_attach(struct cfg *cfg, struct json_object *params)
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
	rc = params_parse(cfg, params, g_nvme_params, np, nvme_extra, np);
	if (rc == 0) {
		rc = nvme_trid(np, trid, CFG_TRID_MAX);
	}
	if (rc == 0) {
		nvp_bdev_nvme_opts_init(&o, sizeof(o));
		o.name = np->name;
		o.io_queue_size = np->io_queue_size;
		o.ctrlr_loss_timeout_sec = np->ctrlr_loss_timeout_sec;
		o.reconnect_delay_sec = np->reconnect_delay_sec;
		rc = nvp_bdev_nvme_attach(trid, &o, NULL, 0, &count);
	}
	if (rc == 0) {
		NVP_INFOLOG("%s: controller %s attached (%s), %" PRIu32 " bdev(s)", cfg->where,
			    np->name, trid, count);
		rc = cfg_record(cfg, MADE_NVME, np->name, NULL, NULL);
	}
	free(np);
	return rc;
}

/* Our own: the pipeline stages and accounting of a bdev, chosen in the same file. */
struct stage_params {
	const char *name;
	const char *stage;
	const char *params;
	bool enable;
};

static const struct pdef g_sched_params[] = {
	{ "name", PT_STR, true, offsetof(struct stage_params, name) },
	{ "scheduler", PT_STR, true, offsetof(struct stage_params, stage) },
	{ "params", PT_STR, false, offsetof(struct stage_params, params) },
	{ NULL, PT_IGNORE, false, 0 },
};

static const struct pdef g_admit_params[] = {
	{ "name", PT_STR, true, offsetof(struct stage_params, name) },
	{ "admission", PT_STR, true, offsetof(struct stage_params, stage) },
	{ "params", PT_STR, false, offsetof(struct stage_params, params) },
	{ NULL, PT_IGNORE, false, 0 },
};

static const struct pdef g_acct_params[] = {
	{ "name", PT_STR, true, offsetof(struct stage_params, name) },
	{ "enable", PT_BOOL, true, offsetof(struct stage_params, enable) },
	{ NULL, PT_IGNORE, false, 0 },
};

static struct nvp_bdev *
stage_bdev(struct cfg *cfg, const char *name)
{
	struct nvp_bdev *bdev = nvp_bdev_get_by_name(name);
	char list[256];

	if (bdev == NULL) {
		NVP_ERRLOG("%s.params.name: no bdev '%s' (bdevs: %s)", cfg->where, name,
			   nvp_bdev_list_names(list, sizeof(list)));
	}
	return bdev;
}

static int
m_set_stage(struct cfg *cfg, struct json_object *params, bool sched)
{
	struct stage_params sp = { 0 };
	char prev[NVP_BDEV_NAME_MAX];
	const char *prev_params;
	char *copy = NULL;
	struct nvp_bdev *bdev;
	int rc;

	rc = params_parse(cfg, params, sched ? g_sched_params : g_admit_params, &sp, NULL, NULL);
	if (rc != 0) {
		return rc;
	}
	bdev = stage_bdev(cfg, sp.name);
	if (bdev == NULL) {
		return -ENODEV;
	}
	nvp_strlcpy(prev, sched ? nvp_bdev_get_scheduler(bdev) : nvp_bdev_get_admission(bdev),
		    sizeof(prev));
	/* its params too, so that a failure later in the load puts back the same stage */
	prev_params = sched ? nvp_bdev_get_scheduler_params(bdev) :
			      nvp_bdev_get_admission_params(bdev);
	if (prev_params != NULL && (copy = strdup(prev_params)) == NULL) {
		return -ENOMEM;
	}
	rc = sched ? nvp_bdev_set_scheduler(bdev, sp.stage, sp.params) :
		     nvp_bdev_set_admission(bdev, sp.stage, sp.params);
	if (rc != 0) {
		free(copy);
		return rc;
	}
	return cfg_record(cfg, sched ? MADE_SCHED : MADE_ADMIT, sp.name, prev, copy);
}

static int
m_set_scheduler(struct cfg *cfg, struct json_object *params)
{
	return m_set_stage(cfg, params, true);
}

static int
m_set_admission(struct cfg *cfg, struct json_object *params)
{
	return m_set_stage(cfg, params, false);
}

static int
m_set_accounting(struct cfg *cfg, struct json_object *params)
{
	struct stage_params sp = { 0 };
	struct nvp_bdev *bdev;
	bool prev;
	int rc;

	rc = params_parse(cfg, params, g_acct_params, &sp, NULL, NULL);
	if (rc != 0) {
		return rc;
	}
	bdev = stage_bdev(cfg, sp.name);
	if (bdev == NULL) {
		return -ENODEV;
	}
	prev = nvp_bdev_get_accounting(bdev);
	rc = cfg_record(cfg, MADE_ACCT, sp.name, NULL, NULL);
	if (rc != 0) {
		return rc;
	}
	cfg->made[cfg->num_made - 1].prev_acct = prev;
	nvp_bdev_set_accounting(bdev, sp.enable);
	return 0;
}

/* SPDK methods with nothing to do here (options of SPDK's own runtime). */
static int
m_ignore(struct cfg *cfg, struct json_object *params)
{
	(void)params;
	NVP_INFOLOG("%s: ignored (nothing to set in nvpoll)", cfg->where);
	return 0;
}

struct method {
	const char *name;
	const char *short_name; /* of the one-line form, or NULL */
	int (*fn)(struct cfg *cfg, struct json_object *params);
};

static const struct method g_methods[] = {
	{ "bdev_nvme_attach_controller", "nvme", m_nvme_attach },
	{ "bdev_malloc_create", "malloc", m_malloc_create },
	{ "bdev_null_create", "null", m_null_create },
	{ "bdev_uring_create", "uring", m_uring_create },
	{ "bdev_set_scheduler", "scheduler", m_set_scheduler },
	{ "bdev_set_admission", "admission", m_set_admission },
	{ "bdev_set_accounting", "accounting", m_set_accounting },
	{ "bdev_set_options", NULL, m_ignore },
	{ "bdev_nvme_set_options", NULL, m_ignore },
	{ "bdev_nvme_set_hotplug", NULL, m_ignore },
	{ "bdev_raid_set_options", NULL, m_ignore },
	{ "bdev_iscsi_set_options", NULL, m_ignore },
	{ "bdev_wait_for_examine", NULL, m_ignore },
};

static const struct method *
method_find(const char *name, bool short_form)
{
	size_t i;

	for (i = 0; i < sizeof(g_methods) / sizeof(g_methods[0]); i++) {
		const char *n = short_form ? g_methods[i].short_name : g_methods[i].name;

		if (n != NULL && strcmp(n, name) == 0) {
			return &g_methods[i];
		}
	}
	return NULL;
}

static void
method_list(bool short_form, char *buf, size_t len)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(g_methods) / sizeof(g_methods[0]) && n < len; i++) {
		const char *name = short_form ? g_methods[i].short_name : g_methods[i].name;

		if (name != NULL && g_methods[i].fn != m_ignore) {
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n != 0 ? ", " : "", name);
		}
	}
}

/* Run one method; cfg->where already names the entry. */
static int
method_run(struct cfg *cfg, const char *name, bool short_form, struct json_object *params)
{
	const struct method *m = method_find(name, short_form);
	char list[512];
	int rc;

	if (m == NULL) {
		method_list(short_form, list, sizeof(list));
		NVP_ERRLOG("%s: unknown method '%s' (known: %s)", cfg->where, name, list);
		return -EINVAL;
	}
	rc = m->fn(cfg, params);
	if (rc != 0) {
		NVP_ERRLOG("%s: %s failed: %s", cfg->where, m->name, strerror(-rc));
	}
	return rc;
}

/* ---- the JSON form ---- */

/* Only the keys in @allowed (NULL-terminated) may appear in object @o. */
static int
keys_check(const char *where, struct json_object *o, const char *const *allowed)
{
	const char *const *a;

	json_object_object_foreach(o, key, v)
	{
		(void)v;
		for (a = allowed; *a != NULL && strcmp(*a, key) != 0; a++) {
		}
		if (*a == NULL) {
			NVP_ERRLOG("%s.%s: unknown key (allowed: %s%s%s)", where, key, allowed[0],
				   allowed[1] != NULL ? ", " : "",
				   allowed[1] != NULL ? allowed[1] : "");
			return -EINVAL;
		}
	}
	return 0;
}

static int
run_entry(struct cfg *cfg, struct json_object *entry, const char *path, const char *pos)
{
	static const char *const keys[] = { "method", "params", NULL };
	struct json_object *method = NULL, *params = NULL;

	if (!json_object_is_type(entry, json_type_object)) {
		NVP_ERRLOG("%s: not an object {\"method\": ..., \"params\": {...}}", path);
		return -EINVAL;
	}
	if (keys_check(path, entry, keys) != 0) {
		return -EINVAL;
	}
	if (!json_object_object_get_ex(entry, "method", &method) ||
	    !json_object_is_type(method, json_type_string) || json_has_nul(method)) {
		NVP_ERRLOG("%s.method: missing, not a string, or with a NUL character", path);
		return -EINVAL;
	}
	json_object_object_get_ex(entry, "params", &params);
	where_set(cfg, "%s%s (%s)", pos, path, json_object_get_string(method));
	return method_run(cfg, json_object_get_string(method), false, params);
}

static int
run_subsystem(struct cfg *cfg, struct json_object *sub, size_t index)
{
	static const char *const keys[] = { "subsystem", "config", NULL };
	struct json_object *name = NULL, *config = NULL;
	char path[WHERE_MAX], pos[WHERE_MAX];
	size_t i;
	int rc;

	snprintf(path, sizeof(path), "subsystems[%zu]", index);
	if (!json_object_is_type(sub, json_type_object) || keys_check(path, sub, keys) != 0 ||
	    !json_object_object_get_ex(sub, "subsystem", &name) ||
	    !json_object_is_type(name, json_type_string)) {
		NVP_ERRLOG("%s: want {\"subsystem\": NAME, \"config\": [...]}", path);
		return -EINVAL;
	}
	if (strcmp(json_object_get_string(name), "bdev") != 0) {
		NVP_NOTICELOG("%s: subsystem '%s' skipped (nvpoll configures bdevs only)", path,
			      json_object_get_string(name));
		return 0;
	}
	if (!json_object_object_get_ex(sub, "config", &config) || config == NULL) {
		return 0;
	}
	if (!json_object_is_type(config, json_type_array)) {
		NVP_ERRLOG("%s.config: not an array", path);
		return -EINVAL;
	}
	for (i = 0; i < json_object_array_length(config); i++) {
		snprintf(path, sizeof(path), "subsystems[%zu].config[%zu]", index, i);
		bdev_config_entry_pos(cfg->text, cfg->origin, index, i, pos, sizeof(pos));
		rc = run_entry(cfg, json_object_array_get_idx(config, i), path, pos);
		if (rc != 0) {
			return rc;
		}
	}
	return 0;
}

static int
run_json(struct cfg *cfg, struct json_object *root)
{
	static const char *const keys[] = { "subsystems", NULL };
	struct json_object *subs = NULL;
	size_t i;
	int rc;

	if (!json_object_is_type(root, json_type_object) || keys_check("(top)", root, keys) != 0 ||
	    !json_object_object_get_ex(root, "subsystems", &subs) ||
	    !json_object_is_type(subs, json_type_array)) {
		NVP_ERRLOG("(top): want {\"subsystems\": [{\"subsystem\": \"bdev\", \"config\": "
			   "[...]}]}");
		return -EINVAL;
	}
	for (i = 0; i < json_object_array_length(subs); i++) {
		rc = run_subsystem(cfg, json_object_array_get_idx(subs, i), i);
		if (rc != 0) {
			return rc;
		}
	}
	return 0;
}

/* What json-c's answer means, in words for the message. */
static const char *
json_error(struct json_object *root, enum json_tokener_error err)
{
	if (root != NULL && err == json_tokener_success) {
		return "text after the end of the document";
	}
	if (err == json_tokener_continue || err == json_tokener_success) {
		return "the text ends inside the document (or is empty)";
	}
	return json_tokener_error_desc(err);
}

/*
 * Parse @text (@origin names it in messages); malformed JSON is reported by line:column.
 * RFC 8259 is checked first: json-c would take more (see bdev_config_json.c).
 */
static struct json_object *
json_parse(const char *text, const char *origin)
{
	struct json_tokener *tok;
	struct json_object *root;
	enum json_tokener_error err;
	size_t end, line, col, len = strlen(text);

	if (bdev_config_json_check(text, origin) != 0) {
		return NULL;
	}
	/* as deep as the check lets through (json-c counts one level more) */
	tok = json_tokener_new_ex(CFG_JSON_DEPTH + 1);
	if (tok == NULL) {
		return NULL;
	}
	root = json_tokener_parse_ex(tok, text, (int)len);
	err = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (root != NULL && err == json_tokener_success) {
		/* only white space may follow the document */
		while (end < len && strchr(" \t\r\n", text[end]) != NULL) {
			end++;
		}
	}
	if (root == NULL || err != json_tokener_success || end < len) {
		bdev_config_text_pos(text, text + (end < len ? end : len), &line, &col);
		NVP_ERRLOG("%s:%zu:%zu: malformed JSON: %s", origin, line, col,
			   json_error(root, err));
		json_object_put(root);
		root = NULL;
	}
	json_tokener_free(tok);
	return root;
}

static int
cfg_finish(struct cfg *cfg, int rc, const char *origin)
{
	if (rc != 0) {
		cfg_undo(cfg);
		NVP_ERRLOG("%s: configuration not loaded (%s); nothing of it is left", origin,
			   strerror(-rc));
	}
	cfg_records_free(cfg);
	free(cfg->made);
	return rc;
}

static int
load_json_text(const char *text, const char *origin)
{
	struct cfg cfg = { 0 };
	struct json_object *root;
	int rc;

	root = json_parse(text, origin);
	if (root == NULL) {
		return cfg_finish(&cfg, -EINVAL, origin);
	}
	cfg.text = text;
	cfg.origin = origin;
	rc = bdev_config_dup_check(cfg.text, cfg.origin);
	if (rc == 0) {
		rc = run_json(&cfg, root);
	}
	json_object_put(root);
	return cfg_finish(&cfg, rc, origin);
}

int
nvp_bdev_load_config_string(const char *json)
{
	if (json == NULL) {
		return -EINVAL;
	}
	return load_json_text(json, "(string)");
}

int
nvp_bdev_load_config_file(const char *path)
{
	char *text = NULL;
	size_t len = 0, n;
	FILE *f;
	int rc;

	if (path == NULL) {
		return -EINVAL;
	}
	f = fopen(path, "r");
	if (f == NULL) {
		rc = -errno;
		NVP_ERRLOG("%s: cannot open the configuration: %s", path, strerror(errno));
		return rc;
	}
	rc = 0;
	do {
		char *t = realloc(text, len + 65536 + 1);

		if (t == NULL) {
			rc = -ENOMEM;
			break;
		}
		text = t;
		errno = 0;
		n = fread(text + len, 1, 65536, f);
		len += n;
	} while (n == 65536);
	if (rc == 0 && ferror(f)) {
		/* a directory opens but does not read (EISDIR); an I/O error the same way */
		rc = errno != 0 ? -errno : -EIO;
		NVP_ERRLOG("%s: cannot read the configuration: %s", path, strerror(-rc));
	}
	fclose(f);
	if (rc == 0) {
		text[len] = '\0';
		rc = strlen(text) == len ? load_json_text(text, path) : -EINVAL;
		if (strlen(text) != len) {
			NVP_ERRLOG("%s: a NUL byte in the file: not a JSON text", path);
		}
	}
	free(text);
	return rc;
}

/* ---- the one-line form: "malloc:name=m0,num_blocks=1024;nvme:name=emu0,trtype=emu" ---- */

/* "k=v,k=v" into a JSON object of strings. \return 0 or -EINVAL (message logged). */
static int
line_params(struct cfg *cfg, char *pairs, struct json_object *params)
{
	char *save = NULL, *pair, *eq;
	struct json_object *v;

	for (pair = strtok_r(pairs, ",", &save); pair != NULL; pair = strtok_r(NULL, ",", &save)) {
		eq = strchr(pair, '=');
		if (eq == NULL || eq == pair) {
			NVP_ERRLOG("%s: '%s' is not key=value", cfg->where, pair);
			return -EINVAL;
		}
		*eq = '\0';
		if (json_object_object_get_ex(params, pair, NULL)) {
			NVP_ERRLOG("%s: parameter %s given twice", cfg->where, pair);
			return -EINVAL;
		}
		v = json_object_new_string(eq + 1);
		if (v == NULL || json_object_object_add(params, pair, v) != 0) {
			json_object_put(v);
			return -ENOMEM;
		}
	}
	return 0;
}

static int
line_item(struct cfg *cfg, char *item, size_t index)
{
	struct json_object *params;
	char *colon;
	int rc;

	while (*item == ' ' || *item == '\t') {
		item++;
	}
	colon = strchr(item, ':');
	if (colon != NULL) {
		*colon = '\0';
	}
	where_set(cfg, "item %zu (%s)", index + 1, item);
	params = json_object_new_object();
	if (params == NULL) {
		return -ENOMEM;
	}
	rc = colon != NULL ? line_params(cfg, colon + 1, params) : 0;
	if (rc == 0) {
		rc = method_run(cfg, item, true, params);
	}
	json_object_put(params);
	return rc;
}

int
nvp_bdev_load_config_line(const char *line)
{
	struct cfg cfg = { 0 };
	char *copy, *save = NULL, *item;
	size_t index = 0;
	int rc = 0;

	if (line == NULL) {
		return -EINVAL;
	}
	copy = strdup(line);
	if (copy == NULL) {
		return -ENOMEM;
	}
	for (item = strtok_r(copy, ";", &save); item != NULL && rc == 0;
	     item = strtok_r(NULL, ";", &save)) {
		rc = line_item(&cfg, item, index++);
	}
	if (rc == 0 && index == 0) {
		NVP_ERRLOG("bdev configuration line: empty (want e.g. "
			   "\"malloc:name=m0,num_blocks=1024;null:name=n0,num_blocks=1024\")");
		rc = -EINVAL;
	}
	free(copy);
	return cfg_finish(&cfg, rc, "bdev configuration line");
}

int
nvp_bdev_load_config(const char *arg)
{
	const char *p = arg;
	FILE *f;

	if (arg == NULL || arg[0] == '\0') {
		NVP_ERRLOG("bdev configuration: empty argument (a JSON file, a JSON text, or "
			   "\"malloc:name=m0,num_blocks=1024;...\")");
		return -EINVAL;
	}
	while (*p == ' ' || *p == '\t' || *p == '\n') {
		p++;
	}
	if (*p == '{') {
		return nvp_bdev_load_config_string(arg);
	}
	f = fopen(arg, "r");
	if (f != NULL) {
		fclose(f);
		return nvp_bdev_load_config_file(arg);
	}
	if (strchr(arg, ':') == NULL && strchr(arg, '=') == NULL) {
		/* no "kind:" part: meant as a file name */
		return nvp_bdev_load_config_file(arg);
	}
	return nvp_bdev_load_config_line(arg);
}

bool
nvp_bdev_config_error_is_usage(int rc)
{
	switch (-rc) {
	case EINVAL: /* malformed, unknown, of the wrong type, or refused by a module */
	case EEXIST: /* a bdev or controller name given twice, or taken already */
		return true;
	case ENOENT: /* a file (the configuration, a uring bdev's) that cannot be opened */
	case ENOTDIR:
	case EISDIR:
	case EACCES:
	case ENAMETOOLONG:
	case ELOOP:
		return true;
	default:
		return false;
	}
}

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
#include <string.h>

#include "nvpoll/bdev.h"
#include "nvpoll/log.h"
#include "nvpoll/util.h"

#include "bdev_config_internal.h"

/* ---- what a load made, to undo it on failure ---- */

enum made_kind {
	MADE_MODULE, /* a module's object: undone by its method */
	MADE_SCHED,
	MADE_ADMIT,
	MADE_ACCT
};

struct made {
	enum made_kind kind;
	const struct bdev_config_method *method; /* MADE_MODULE: what made it */
	char name[NVP_BDEV_NAME_MAX];
	char prev[NVP_BDEV_NAME_MAX]; /* stage choices: the stage before */
	char *prev_params;            /* its params (owned; NULL: none) */
	bool prev_acct;               /* accounting switches: the setting before */
};

struct bdev_config {
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
cfg_record(struct bdev_config *cfg, enum made_kind kind, const char *name, const char *prev,
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
	m->method = NULL;
	return 0;
}

static void
cfg_records_free(struct bdev_config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->num_made; i++) {
		free(cfg->made[i].prev_params);
	}
	cfg->num_made = 0;
}

static void
cfg_undo(struct bdev_config *cfg)
{
	struct nvp_bdev *bdev;
	struct made *m;
	size_t i;

	for (i = cfg->num_made; i-- > 0;) {
		m = &cfg->made[i];
		bdev = nvp_bdev_get_by_name(m->name);
		switch (m->kind) {
		case MADE_MODULE:
			(void)m->method->undo(m->name);
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
static void __attribute__((format(printf, 2, 3)))
where_set(struct bdev_config *cfg, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cfg->where, sizeof(cfg->where), fmt, ap);
	va_end(ap);
}

/* ---- parameters ---- */

static const char *const g_type_names[] = {
	[CFG_PT_STR] = "a string",
	[CFG_PT_U64] = "an unsigned integer",
	[CFG_PT_U32] = "an unsigned integer",
	[CFG_PT_S32] = "-1 or an unsigned integer",
	[CFG_PT_BOOL] = "a boolean",
	[CFG_PT_FN] = "valid", /* the parameter's own what */
	[CFG_PT_IGNORE] = "anything",
	[CFG_PT_ZERO] = "an integer",
	[CFG_PT_MINUS1] = "an integer",
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

int
bdev_config_param_bool(struct json_object *v, bool *out)
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

/* Store @v as @d says into @base. */
static int
param_store(const struct bdev_config_param *d, struct json_object *v, void *base)
{
	uint8_t *p = (uint8_t *)base + d->off;
	uint64_t u;
	int rc = 0;

	switch (d->type) {
	case CFG_PT_STR:
		if (!json_object_is_type(v, json_type_string)) {
			return -EINVAL;
		}
		*(const char **)p = json_object_get_string(v);
		break;
	case CFG_PT_U64:
		rc = param_u64(v, UINT64_MAX, (uint64_t *)p);
		break;
	case CFG_PT_U32:
		rc = param_u64(v, UINT32_MAX, &u);
		if (rc == 0) {
			*(uint32_t *)p = (uint32_t)u;
		}
		break;
	case CFG_PT_S32:
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
	case CFG_PT_BOOL:
		rc = bdev_config_param_bool(v, (bool *)p);
		break;
	case CFG_PT_FN:
		rc = d->parse(v, p);
		break;
	case CFG_PT_ZERO:
	case CFG_PT_MINUS1:
		rc = param_neutral(v, d->type == CFG_PT_ZERO ? 0 : -1);
		break;
	case CFG_PT_IGNORE:
		break;
	}
	return rc;
}

static const struct bdev_config_param *
pdef_find(const struct bdev_config_param *defs, const char *key)
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
pdef_list(const struct bdev_config_param *defs, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (; defs->key != NULL && n < len; defs++) {
		if (defs->type != CFG_PT_IGNORE && defs->type != CFG_PT_ZERO &&
		    defs->type != CFG_PT_MINUS1) {
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n != 0 ? ", " : "",
					      defs->key);
		}
	}
}

int
bdev_config_params_parse(struct bdev_config *cfg, struct json_object *params,
			 const struct bdev_config_param *defs, void *base,
			 int (*extra)(void *ctx, const char *key, struct json_object *v), void *ctx)
{
	char known[256];
	const struct bdev_config_param *d;
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
				d->type == CFG_PT_ZERO ? 0 : -1);
			return -EINVAL;
		}
		if (rc != 0) {
			NVP_ERRLOG("%s.params.%s: %s is not %s", cfg->where, key,
				   json_object_to_json_string(v),
				   d->type == CFG_PT_FN ? d->what : g_type_names[d->type]);
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

/* ---- the core's own methods ---- */

/* Our own: the pipeline stages and accounting of a bdev, chosen in the same file. */
struct stage_params {
	const char *name;
	const char *stage;
	const char *params;
	bool enable;
};

static const struct bdev_config_param g_sched_params[] = {
	{ "name", CFG_PT_STR, true, offsetof(struct stage_params, name), NULL, NULL },
	{ "scheduler", CFG_PT_STR, true, offsetof(struct stage_params, stage), NULL, NULL },
	{ "params", CFG_PT_STR, false, offsetof(struct stage_params, params), NULL, NULL },
	{ NULL, CFG_PT_IGNORE, false, 0, NULL, NULL },
};

static const struct bdev_config_param g_admit_params[] = {
	{ "name", CFG_PT_STR, true, offsetof(struct stage_params, name), NULL, NULL },
	{ "admission", CFG_PT_STR, true, offsetof(struct stage_params, stage), NULL, NULL },
	{ "params", CFG_PT_STR, false, offsetof(struct stage_params, params), NULL, NULL },
	{ NULL, CFG_PT_IGNORE, false, 0, NULL, NULL },
};

static const struct bdev_config_param g_acct_params[] = {
	{ "name", CFG_PT_STR, true, offsetof(struct stage_params, name), NULL, NULL },
	{ "enable", CFG_PT_BOOL, true, offsetof(struct stage_params, enable), NULL, NULL },
	{ NULL, CFG_PT_IGNORE, false, 0, NULL, NULL },
};

static struct nvp_bdev *
stage_bdev(struct bdev_config *cfg, const char *name)
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
m_set_stage(struct bdev_config *cfg, struct json_object *params, bool sched)
{
	struct stage_params sp = { 0 };
	char prev[NVP_BDEV_NAME_MAX];
	const char *prev_params;
	char *copy = NULL;
	struct nvp_bdev *bdev;
	int rc;

	rc = bdev_config_params_parse(cfg, params, sched ? g_sched_params : g_admit_params, &sp,
				      NULL, NULL);
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
m_set_scheduler(struct bdev_config *cfg, struct json_object *params)
{
	return m_set_stage(cfg, params, true);
}

static int
m_set_admission(struct bdev_config *cfg, struct json_object *params)
{
	return m_set_stage(cfg, params, false);
}

static int
m_set_accounting(struct bdev_config *cfg, struct json_object *params)
{
	struct stage_params sp = { 0 };
	struct nvp_bdev *bdev;
	bool prev;
	int rc;

	rc = bdev_config_params_parse(cfg, params, g_acct_params, &sp, NULL, NULL);
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

/* The core's methods, after the modules' in the lists; SPDK's with nothing to do here
 * (options of SPDK's own runtime) have no run(): accepted and ignored, not listed. */
static struct bdev_config_method g_core_methods[] = {
	{ "bdev_set_scheduler", "scheduler", 100, m_set_scheduler, NULL, NULL },
	{ "bdev_set_admission", "admission", 101, m_set_admission, NULL, NULL },
	{ "bdev_set_accounting", "accounting", 102, m_set_accounting, NULL, NULL },
	{ "bdev_set_options", NULL, 103, NULL, NULL, NULL },
	{ "bdev_raid_set_options", NULL, 104, NULL, NULL, NULL },
	{ "bdev_iscsi_set_options", NULL, 105, NULL, NULL, NULL },
	{ "bdev_wait_for_examine", NULL, 106, NULL, NULL, NULL },
};

/* Every method, by order (registered from constructors: no lock needed). */
static struct bdev_config_method *g_methods;

void
bdev_config_method_register(struct bdev_config_method *m)
{
	struct bdev_config_method **p = &g_methods;

	while (*p != NULL && (*p)->order <= m->order) {
		p = &(*p)->next;
	}
	m->next = *p;
	*p = m;
}

__attribute__((constructor)) static void
core_methods_register(void)
{
	size_t i;

	for (i = 0; i < sizeof(g_core_methods) / sizeof(g_core_methods[0]); i++) {
		bdev_config_method_register(&g_core_methods[i]);
	}
}

const char *
bdev_config_where(const struct bdev_config *cfg)
{
	return cfg->where;
}

int
bdev_config_made(struct bdev_config *cfg, const struct bdev_config_method *m, const char *name)
{
	int rc = cfg_record(cfg, MADE_MODULE, name, NULL, NULL);

	if (rc == 0) {
		cfg->made[cfg->num_made - 1].method = m;
	}
	return rc;
}

static const struct bdev_config_method *
method_find(const char *name, bool short_form)
{
	const struct bdev_config_method *m;

	for (m = g_methods; m != NULL; m = m->next) {
		const char *n = short_form ? m->short_name : m->name;

		if (n != NULL && strcmp(n, name) == 0) {
			return m;
		}
	}
	return NULL;
}

static void
method_list(bool short_form, char *buf, size_t len)
{
	const struct bdev_config_method *m;
	size_t n = 0;

	buf[0] = '\0';
	for (m = g_methods; m != NULL && n < len; m = m->next) {
		const char *name = short_form ? m->short_name : m->name;

		if (name != NULL && m->run != NULL) {
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n != 0 ? ", " : "", name);
		}
	}
}

/* Run one method; cfg->where already names the entry. */
static int
method_run(struct bdev_config *cfg, const char *name, bool short_form, struct json_object *params)
{
	const struct bdev_config_method *m = method_find(name, short_form);
	char list[512];
	int rc;

	if (m == NULL) {
		method_list(short_form, list, sizeof(list));
		NVP_ERRLOG("%s: unknown method '%s' (known: %s)", cfg->where, name, list);
		return -EINVAL;
	}
	if (m->run == NULL) {
		NVP_INFOLOG("%s: ignored (nothing to set in nvpoll)", cfg->where);
		return 0;
	}
	rc = m->run(cfg, params);
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
run_entry(struct bdev_config *cfg, struct json_object *entry, const char *path, const char *pos)
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
run_subsystem(struct bdev_config *cfg, struct json_object *sub, size_t index)
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
		/* e.g. nvp_tgt's "nvmf": the program that loaded the file reads it */
		NVP_NOTICELOG("%s: subsystem '%s' is not the bdev layer's: left to the program",
			      path, json_object_get_string(name));
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
run_json(struct bdev_config *cfg, struct json_object *root)
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
cfg_finish(struct bdev_config *cfg, int rc, const char *origin)
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
	struct bdev_config cfg = { 0 };
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

struct line_params_ctx {
	struct bdev_config *cfg;
	struct json_object *params;
};

static int
line_param_bad(void *arg, const char *pair)
{
	const struct line_params_ctx *c = arg;

	NVP_ERRLOG("%s: '%s' is not key=value", c->cfg->where, pair);
	return -EINVAL;
}

static int
line_param(void *arg, const char *key, const char *value)
{
	const struct line_params_ctx *c = arg;
	struct json_object *v;

	if (json_object_object_get_ex(c->params, key, NULL)) {
		NVP_ERRLOG("%s: parameter %s given twice", c->cfg->where, key);
		return -EINVAL;
	}
	v = json_object_new_string(value);
	if (v == NULL || json_object_object_add(c->params, key, v) != 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

/* "k=v,k=v" into a JSON object of strings. \return 0 or -EINVAL (message logged). */
static int
line_params(struct bdev_config *cfg, const char *pairs, struct json_object *params)
{
	/* commas only (a value may hold spaces and colons), '=' in every pair */
	static const struct nvp_kv_syntax syn = {
		.seps = ",", .assign = "=", .need_assign = true, .malformed = line_param_bad
	};
	struct line_params_ctx c = { cfg, params };

	return nvp_kv_parse_ext(pairs, &syn, line_param, &c);
}

static int
line_item(struct bdev_config *cfg, char *item, size_t index)
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
	struct bdev_config cfg = { 0 };
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

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the configuration loader (bdev_config.c), its check of the JSON text
 * (bdev_config_json.c), its scanner of the text (bdev_config_text.c) and the modules'
 * config methods (<module>/bdev_<module>_config.c) share. A module registers its methods
 * (bdev_config_method_register(), from a constructor); the loader knows none by name.
 */
#ifndef NVP_BDEV_CONFIG_INTERNAL_H
#define NVP_BDEV_CONFIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

#define WHERE_MAX 512     /* a JSON path or an entry's name, for messages */
#define CFG_JSON_DEPTH 32 /* objects and arrays nested in a configuration, at most */

/*
 * Whether @text is JSON as RFC 8259 has it (bdev_config_json.c), nested at most
 * CFG_JSON_DEPTH deep. \return 0 or -EINVAL, the first error logged as
 * "@origin:line:column: malformed JSON: ...".
 */
int bdev_config_json_check(const char *text, const char *origin);
/*
 * The JSON number @num (checked text) if it is an integer 0..@max however written (1e3,
 * 1024.0): \return 0, or -EINVAL (a fraction, negative, or above @max).
 */
int bdev_config_json_number_u64(const char *num, uint64_t max, uint64_t *out);
/* The line and column (from 1, in bytes) of @p in @text. */
void bdev_config_text_pos(const char *text, const char *p, size_t *line, size_t *col);
/* "origin:line:column: " of subsystems[@sub].config[@entry] in @text, or "". */
void bdev_config_entry_pos(const char *text, const char *origin, size_t sub, size_t entry,
			   char *buf, size_t len);
/* Keys given twice in one object of @text: \return 0, -EINVAL (message logged), -ENOMEM. */
int bdev_config_dup_check(const char *text, const char *origin);

/* ---- the registration interface of a module's config methods ---- */

/* A load in progress (bdev_config.c): what it made, for undoing it, and where it is. */
struct bdev_config;

/* How a parameter's JSON value is read (into the field at its offset). */
enum bdev_config_ptype {
	CFG_PT_STR,    /* const char * (valid while the JSON lives) */
	CFG_PT_U64,    /* uint64_t */
	CFG_PT_U32,    /* uint32_t */
	CFG_PT_S32,    /* int32_t, -1 .. INT32_MAX (SPDK's "-1 = for ever") */
	CFG_PT_BOOL,   /* bool */
	CFG_PT_FN,     /* the parameter's own parse(), its values described by what */
	CFG_PT_IGNORE, /* SPDK's, meaningless here: accepted, not used */
	CFG_PT_ZERO,   /* SPDK's, not supported here: accepted only at its default 0 (off) */
	CFG_PT_MINUS1, /* the same with default -1 */
};

/* A parameter of a method; a table of them ends with a NULL key. */
struct bdev_config_param {
	const char *key;
	enum bdev_config_ptype type;
	bool required;
	size_t off;
	/* CFG_PT_FN: read @v into @out; \return 0 or -EINVAL ("... is not <what>") */
	int (*parse)(struct json_object *v, void *out);
	const char *what;
};

/* SPDK's malloc and null parameters that only place or name the bdev: ignored; end-to-end
 * protection (DIF/DIX) is taken only turned off, its SPDK default. */
#define BDEV_CONFIG_SPDK_GEOMETRY                                               \
	{ "uuid", CFG_PT_IGNORE, false, 0, NULL, NULL },                        \
		{ "physical_block_size", CFG_PT_IGNORE, false, 0, NULL, NULL }, \
		{ "md_interleave", CFG_PT_IGNORE, false, 0, NULL, NULL },       \
		{ "dif_type", CFG_PT_ZERO, false, 0, NULL, NULL },              \
		{ "dif_is_head_of_md", CFG_PT_IGNORE, false, 0, NULL, NULL },   \
	{                                                                       \
		"dif_pi_format", CFG_PT_ZERO, false, 0, NULL, NULL              \
	}

/* A method of the configuration: its JSON name, its one-line form's name, what runs it and
 * what undoes it when a later entry of the same load fails. */
struct bdev_config_method {
	const char *name;       /* "bdev_malloc_create" */
	const char *short_name; /* "malloc" in the one-line form, or NULL */
	/* where it goes in the lists of known methods, lowest first (messages only) */
	unsigned int order;
	/* Make what @params say; bdev_config_made() for what must be undone on failure.
	 * \return 0 or -errno (the message logged, naming bdev_config_where()). */
	int (*run)(struct bdev_config *cfg, struct json_object *params);
	/* Delete the object named @name that run() made. */
	int (*undo)(const char *name);
	struct bdev_config_method *next; /* the registry's link */
};

/* Add @m to the methods a configuration may name (from a constructor). */
void bdev_config_method_register(struct bdev_config_method *m);

/* The entry being run, for messages: "bdev.json:9:5: subsystems[0].config[2] (method)". */
const char *bdev_config_where(const struct bdev_config *cfg);

/*
 * Parse @params by @defs into @base. A key not in @defs goes to @extra(ctx, key, value)
 * when given, else it is an error. \return 0 or -EINVAL (message logged).
 */
int bdev_config_params_parse(struct bdev_config *cfg, struct json_object *params,
			     const struct bdev_config_param *defs, void *base,
			     int (*extra)(void *ctx, const char *key, struct json_object *v),
			     void *ctx);

/* A boolean: true/false, or a string nvp_parse_bool() takes. \return 0 or -EINVAL. */
int bdev_config_param_bool(struct json_object *v, bool *out);

/* @m made the object @name: undone (m->undo(name)) if the load fails later.
 * \return 0 or -ENOMEM. */
int bdev_config_made(struct bdev_config *cfg, const struct bdev_config_method *m, const char *name);

#endif

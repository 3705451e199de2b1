/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration loader's walks over the JSON text itself, which json-c does not keep:
 * where an entry is (for messages), and keys given twice in an object (which json-c
 * silently takes the last of).
 */
#undef NVP_LOG_COMPONENT
#define NVP_LOG_COMPONENT "bdev_config"

#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvpoll/log.h"

#include "bdev_config_internal.h"

/*
 * Where an entry is in the text, for messages: json-c keeps no positions, so a small
 * scanner walks the text along subsystems[i].config[j]. The text is JSON as RFC 8259 has
 * it (bdev_config_json_check() said so): white space is four characters, strings are in
 * double quotes, and nothing else (no comment) comes between tokens.
 */
static const char *
skip_ws(const char *p)
{
	return p + strspn(p, " \t\n\r");
}

/* @p at a string's opening quote: past its closing one. */
static const char *
skip_string(const char *p)
{
	for (p++; *p != '\0' && *p != '"'; p++) {
		p += *p == '\\' && p[1] != '\0';
	}
	return *p != '\0' ? p + 1 : p;
}

static const char *
skip_value(const char *p)
{
	int depth = 0;

	do {
		p = skip_ws(p);
		if (*p == '"') {
			p = skip_string(p);
		} else if (*p == '{' || *p == '[') {
			depth++;
			p++;
		} else if (*p == '}' || *p == ']') {
			depth--;
			p++;
		} else if (*p == ',' || *p == ':') {
			p++;
		} else if (*p != '\0') {
			/* a number, true, false, null: up to what ends it */
			p += 1 + strcspn(p + 1, ",:}] \t\r\n");
		}
	} while (depth > 0 && *p != '\0');
	return p;
}

/* @p at '{': the value of @key, or NULL. */
static const char *
find_key(const char *p, const char *key)
{
	size_t len = strlen(key);
	bool match;

	for (p = skip_ws(p + 1); *p == '"';) {
		match = strncmp(p + 1, key, len) == 0 && p[len + 1] == '"';
		p = skip_ws(skip_value(p)); /* the key */
		p = skip_ws(p + 1);         /* ':' */
		if (match) {
			return p;
		}
		p = skip_ws(skip_value(p));
		p = *p == ',' ? skip_ws(p + 1) : p;
	}
	return NULL;
}

/* @p at '[': element @index, or NULL. */
static const char *
find_index(const char *p, size_t index)
{
	for (p = skip_ws(p + 1); *p != '\0' && *p != ']'; index--) {
		if (index == 0) {
			return p;
		}
		p = skip_ws(skip_value(p));
		p = *p == ',' ? skip_ws(p + 1) : p;
	}
	return NULL;
}

/* The line and column (from 1, in bytes) of @p in @text. */
void
bdev_config_text_pos(const char *text, const char *p, size_t *line, size_t *col)
{
	*line = 1;
	*col = 1;
	for (; text < p; text++) {
		*line += *text == '\n';
		*col = *text == '\n' ? 1 : *col + 1;
	}
}

/* "origin:line:column: " of subsystems[@sub].config[@entry] in @text, or "". */
void
bdev_config_entry_pos(const char *text, const char *origin, size_t sub, size_t entry, char *buf,
		      size_t len)
{
	const char *p = text != NULL ? skip_ws(text) : NULL;
	size_t line, col;

	buf[0] = '\0';
	if (p == NULL || *p != '{' || (p = find_key(p, "subsystems")) == NULL || *p != '[' ||
	    (p = find_index(p, sub)) == NULL || *p != '{' || (p = find_key(p, "config")) == NULL ||
	    *p != '[' || (p = find_index(p, entry)) == NULL) {
		return;
	}
	bdev_config_text_pos(text, p, &line, &col);
	snprintf(buf, len, "%s:%zu:%zu: ", origin, line, col);
}

/*
 * Keys given twice in one object: json-c keeps the last one, SPDK's decoder refuses them, and
 * so does this walk over the (checked, so at most CFG_JSON_DEPTH levels deep) text. It keeps
 * the keys of the objects open on the way decoded by json-c itself, so that other spellings
 * of a key ("a", "\u0061") are the same key, as they are to json-c.
 */
struct dup_scan {
	const char *text;
	const char *origin;
	struct json_tokener *tok;
	struct json_object **keys; /* of the open objects, outermost first */
	size_t num_keys;
	size_t cap_keys;
	char path[WHERE_MAX]; /* of the value being walked, "" at the top */
};

static int dup_value(struct dup_scan *s, const char **pp);

/* Decode the key from @p (at its quote) to @end and push it. \return 0 or -ENOMEM. */
static int
dup_push(struct dup_scan *s, const char *p, const char *end)
{
	struct json_object **keys, *key;

	if (s->num_keys == s->cap_keys) {
		keys = realloc(s->keys, (s->cap_keys + 16) * sizeof(*keys));
		if (keys == NULL) {
			return -ENOMEM;
		}
		s->keys = keys;
		s->cap_keys += 16;
	}
	json_tokener_reset(s->tok);
	key = json_tokener_parse_ex(s->tok, p, (int)(end - p));
	if (key == NULL) {
		return -ENOMEM; /* it parsed before: only memory can fail */
	}
	s->keys[s->num_keys++] = key;
	return 0;
}

/* Is the key just pushed already a key of its object, whose first key is keys[@base]? */
static bool
dup_found(const struct dup_scan *s, size_t base, const char *at)
{
	const char *key = json_object_get_string(s->keys[s->num_keys - 1]);
	size_t i, line, col;

	for (i = base; i + 1 < s->num_keys; i++) {
		if (strcmp(json_object_get_string(s->keys[i]), key) == 0) {
			bdev_config_text_pos(s->text, at, &line, &col);
			NVP_ERRLOG("%s:%zu:%zu: %s: duplicate key '%s' (a key may be given once)",
				   s->origin, line, col, s->path[0] != '\0' ? s->path : "(top)",
				   key);
			return true;
		}
	}
	return false;
}

/* @*pp at '{': past its '}'. */
static int
dup_object(struct dup_scan *s, const char **pp)
{
	const char *p = skip_ws(*pp + 1), *end;
	size_t base = s->num_keys, n = strlen(s->path);
	int rc = 0;

	while (rc == 0 && *p == '"') {
		end = skip_string(p);
		rc = dup_push(s, p, end);
		if (rc == 0 && dup_found(s, base, p)) {
			rc = -EINVAL;
		}
		if (rc != 0) {
			break;
		}
		snprintf(s->path + n, sizeof(s->path) - n, "%s%s", n != 0 ? "." : "",
			 json_object_get_string(s->keys[s->num_keys - 1]));
		p = skip_ws(end) + 1; /* ':' */
		rc = dup_value(s, &p);
		s->path[n] = '\0';
		p = skip_ws(p);
		p = *p == ',' ? skip_ws(p + 1) : p;
	}
	while (s->num_keys > base) {
		json_object_put(s->keys[--s->num_keys]);
	}
	*pp = *p == '}' ? p + 1 : p;
	return rc;
}

/* @*pp at '[': past its ']'. */
static int
dup_array(struct dup_scan *s, const char **pp)
{
	const char *p = skip_ws(*pp + 1);
	size_t i, n = strlen(s->path);
	int rc = 0;

	for (i = 0; rc == 0 && *p != ']' && *p != '\0'; i++) {
		snprintf(s->path + n, sizeof(s->path) - n, "[%zu]", i);
		rc = dup_value(s, &p);
		s->path[n] = '\0';
		p = skip_ws(p);
		p = *p == ',' ? skip_ws(p + 1) : p;
	}
	*pp = *p == ']' ? p + 1 : p;
	return rc;
}

static int
dup_value(struct dup_scan *s, const char **pp)
{
	*pp = skip_ws(*pp);
	if (**pp == '{') {
		return dup_object(s, pp);
	}
	if (**pp == '[') {
		return dup_array(s, pp);
	}
	*pp = skip_value(*pp);
	return 0;
}

/* \return 0, -EINVAL for a key given twice in an object (message logged), or -ENOMEM. */
int
bdev_config_dup_check(const char *text, const char *origin)
{
	struct dup_scan s = { .text = text, .origin = origin };
	const char *p = text;
	int rc;

	s.tok = json_tokener_new();
	if (s.tok == NULL) {
		return -ENOMEM;
	}
	rc = dup_value(&s, &p);
	json_tokener_free(s.tok);
	free(s.keys);
	return rc;
}

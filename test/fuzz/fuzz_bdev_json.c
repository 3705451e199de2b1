/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz the bdev configuration loader's check of its text against RFC 8259
 * (lib/bdev/bdev_config_json.c): any bytes, up to the first NUL. A text it takes must be one
 * json-c parses whole (json-c takes more than JSON, never less); a text it refuses must come
 * with exactly one "malformed JSON" message, at a line and column inside the text.
 */
#include "nvp_config.h"

#include <json-c/json.h>

#include "bdev/bdev_config_json.c"
#include "bdev/bdev_config_text.c"

#include "fuzz.h"

static unsigned int g_msgs;
static char g_msg[512];

static void
log_keep(enum nvp_log_level level, const char *component, const char *msg)
{
	(void)level;
	(void)component;
	g_msgs++;
	snprintf(g_msg, sizeof(g_msg), "%s", msg);
}

/* Is "f:LINE:COL: malformed JSON: ..." a place in @text? */
static int
place_ok(const char *text)
{
	unsigned long line, col, l = 1;
	size_t len = 0;
	const char *p;

	if (sscanf(g_msg, "f:%lu:%lu: malformed JSON: ", &line, &col) != 2 || line == 0 ||
	    col == 0 || strstr(g_msg, ": malformed JSON: ") == NULL) {
		return 0;
	}
	for (p = text; l < line && *p != '\0'; p++) {
		l += *p == '\n';
	}
	if (l != line) {
		return 0;
	}
	len = strcspn(p, "\n");
	return col <= len + 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_tokener *tok;
	struct json_object *o;
	size_t end, len;
	char *text;
	int rc;

	text = malloc(size + 1);
	FZ_CHECK(text != NULL, "out of memory");
	memcpy(text, data, size);
	text[size] = '\0';
	len = strlen(text);
	nvp_log_set_callback(log_keep);
	g_msgs = 0;
	rc = bdev_config_json_check(text, "f");
	if (rc != 0) {
		FZ_CHECK(rc == -EINVAL && g_msgs == 1, "refused with %d and %u messages", rc,
			 g_msgs);
		FZ_CHECK(place_ok(text), "refused, but the message is not at a place: %s", g_msg);
		free(text);
		return 0;
	}
	FZ_CHECK(g_msgs == 0, "taken, with a message: %s", g_msg);
	/* json-c, as the loader makes it; the NUL ends a number at the very end */
	tok = json_tokener_new_ex(CFG_JSON_DEPTH + 1);
	FZ_CHECK(tok != NULL, "out of memory");
	o = json_tokener_parse_ex(tok, text, (int)len + 1);
	end = json_tokener_get_parse_end(tok);
	/* (a top-level null is NULL, with success) */
	FZ_CHECK(json_tokener_get_error(tok) == json_tokener_success,
		 "taken as JSON, but json-c says %s: '%s'",
		 json_tokener_error_desc(json_tokener_get_error(tok)), text);
	FZ_CHECK(end >= len || strspn(text + end, " \t\r\n") == len - end,
		 "taken as JSON, but json-c stops at byte %zu: '%s'", end, text);
	json_object_put(o);
	json_tokener_free(tok);
	free(text);
	return 0;
}

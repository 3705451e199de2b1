/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one parser of numeric "key=value" parameters: a table of names with their ranges,
 * walked by nvp_kv_parse(), every error logged naming the key, its value and what was
 * expected. The schedulers and the writeback throttle read their parameters with it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nvpoll/log.h"
#include "nvpoll/util.h"

struct kv_nums_ctx {
	const struct nvp_kv_num *nums;
	const char *component;
	const char *who;
	int (*other)(void *ctx, const char *key, const char *value);
	void *other_ctx;
};

/* "a, b, c": the table's keys, for the message about an unknown one. */
static void
known_keys(const struct nvp_kv_num *nums, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (; nums->key != NULL && used < len; nums++) {
		int n = snprintf(buf + used, len - used, "%s%s", used > 0 ? ", " : "", nums->key);

		if (n < 0) {
			break;
		}
		used += (size_t)n;
	}
}

static int
num_cb(void *arg, const char *key, const char *value)
{
	const struct kv_nums_ctx *c = arg;
	const char *sep = c->who != NULL ? ": " : "";
	const char *who = c->who != NULL ? c->who : "";
	const struct nvp_kv_num *n;
	char known[256];

	for (n = c->nums; n->key != NULL; n++) {
		if (strcmp(n->key, key) != 0) {
			continue;
		}
		if (nvp_strtou64(value, n->min, n->max, n->out) != 0) {
			nvp_log(NVP_LOG_ERROR, c->component,
				"%s%s%s='%s': expected a whole number from %llu to %llu", who, sep,
				key, value, (unsigned long long)n->min, (unsigned long long)n->max);
			return -EINVAL;
		}
		return 0;
	}
	if (c->other != NULL) {
		return c->other(c->other_ctx, key, value);
	}
	known_keys(c->nums, known, sizeof(known));
	nvp_log(NVP_LOG_ERROR, c->component, "%s%sunknown parameter '%s' (known: %s)", who, sep,
		key, known);
	return -EINVAL;
}

int
nvp_kv_parse_nums(const char *str, const struct nvp_kv_num *nums, const char *component,
		  const char *who, int (*other)(void *ctx, const char *key, const char *value),
		  void *ctx)
{
	struct kv_nums_ctx c = { nums, component, who, other, ctx };

	if (nums == NULL) {
		return -EINVAL;
	}
	return nvp_kv_parse(str, num_cb, &c);
}

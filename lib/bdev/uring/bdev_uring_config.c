/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bdev_uring_create, the uring module's configuration method, with iopoll "auto", "on"
 * or "off" (or a boolean). Registered with the loader (bdev_config.c).
 */
#undef NVP_LOG_COMPONENT
#define NVP_LOG_COMPONENT "bdev_config"

#include <errno.h>
#include <json-c/json.h>
#include <stddef.h>
#include <string.h>

#include "nvpoll/bdev.h"
#include "nvpoll/log.h"

#include "bdev/bdev_config_internal.h"

/* "auto", or a boolean for on/off, into an enum nvp_bdev_uring_iopoll. */
static int
uring_param_iopoll(struct json_object *v, void *out)
{
	enum nvp_bdev_uring_iopoll *iopoll = out;
	bool b;

	if (json_object_is_type(v, json_type_string) &&
	    strcmp(json_object_get_string(v), "auto") == 0) {
		*iopoll = NVP_BDEV_URING_IOPOLL_AUTO;
		return 0;
	}
	if (bdev_config_param_bool(v, &b) != 0) {
		return -EINVAL;
	}
	*iopoll = b ? NVP_BDEV_URING_IOPOLL_ON : NVP_BDEV_URING_IOPOLL_OFF;
	return 0;
}

static const struct bdev_config_param g_uring_params[] = {
	{ "name", CFG_PT_STR, true, offsetof(struct nvp_bdev_uring_opts, name), NULL, NULL },
	{ "filename", CFG_PT_STR, true, offsetof(struct nvp_bdev_uring_opts, filename), NULL,
	  NULL },
	{ "block_size", CFG_PT_U32, false, offsetof(struct nvp_bdev_uring_opts, block_size), NULL,
	  NULL },
	{ "iopoll", CFG_PT_FN, false, offsetof(struct nvp_bdev_uring_opts, iopoll),
	  uring_param_iopoll, "auto, on or off" },
	{ "uuid", CFG_PT_IGNORE, false, 0, NULL, NULL },
	{ NULL, CFG_PT_IGNORE, false, 0, NULL, NULL },
};

static int uring_config_create(struct bdev_config *cfg, struct json_object *params);

static struct bdev_config_method g_uring_method = {
	.name = "bdev_uring_create",
	.short_name = "uring",
	.order = 40,
	.run = uring_config_create,
	.undo = nvp_bdev_uring_delete,
};

static int
uring_config_create(struct bdev_config *cfg, struct json_object *params)
{
	struct nvp_bdev_uring_opts o;
	int rc;

	nvp_bdev_uring_opts_init(&o, sizeof(o));
	rc = bdev_config_params_parse(cfg, params, g_uring_params, &o, NULL, NULL);
	if (rc == 0) {
		rc = nvp_bdev_uring_create(&o, NULL);
	}
	return rc != 0 ? rc : bdev_config_made(cfg, &g_uring_method, o.name);
}

__attribute__((constructor)) static void
uring_config_register(void)
{
	bdev_config_method_register(&g_uring_method);
}

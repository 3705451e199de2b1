/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bdev_null_create, the null module's configuration method: SPDK's parameters, those that
 * only place or name the bdev ignored. Registered with the loader (bdev_config.c).
 */
#undef NVP_LOG_COMPONENT
#define NVP_LOG_COMPONENT "bdev_config"

#include <stddef.h>

#include "nvpoll/bdev.h"
#include "nvpoll/log.h"

#include "bdev/bdev_config_internal.h"

static const struct bdev_config_param g_null_params[] = {
	{ "name", CFG_PT_STR, true, offsetof(struct nvp_bdev_null_opts, name), NULL, NULL },
	{ "num_blocks", CFG_PT_U64, true, offsetof(struct nvp_bdev_null_opts, num_blocks), NULL,
	  NULL },
	{ "block_size", CFG_PT_U32, false, offsetof(struct nvp_bdev_null_opts, block_size), NULL,
	  NULL },
	{ "md_size", CFG_PT_U32, false, offsetof(struct nvp_bdev_null_opts, md_size), NULL, NULL },
	{ "max_xfer_blocks", CFG_PT_U32, false,
	  offsetof(struct nvp_bdev_null_opts, max_xfer_blocks), NULL, NULL },
	BDEV_CONFIG_SPDK_GEOMETRY,
	{ NULL, CFG_PT_IGNORE, false, 0, NULL, NULL },
};

static int null_config_create(struct bdev_config *cfg, struct json_object *params);

static struct bdev_config_method g_null_method = {
	.name = "bdev_null_create",
	.short_name = "null",
	.order = 30,
	.run = null_config_create,
	.undo = nvp_bdev_null_delete,
};

static int
null_config_create(struct bdev_config *cfg, struct json_object *params)
{
	struct nvp_bdev_null_opts o;
	int rc;

	nvp_bdev_null_opts_init(&o, sizeof(o));
	rc = bdev_config_params_parse(cfg, params, g_null_params, &o, NULL, NULL);
	if (rc == 0) {
		rc = nvp_bdev_null_create(&o, NULL);
	}
	return rc != 0 ? rc : bdev_config_made(cfg, &g_null_method, o.name);
}

__attribute__((constructor)) static void
null_config_register(void)
{
	bdev_config_method_register(&g_null_method);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bdev_malloc_create, the malloc module's configuration method: SPDK's parameters, those
 * that only place or name the bdev ignored. Registered with the loader (bdev_config.c).
 */
#undef NVP_LOG_COMPONENT
#define NVP_LOG_COMPONENT "bdev_config"

#include <stddef.h>

#include "nvpoll/bdev.h"
#include "nvpoll/log.h"

#include "bdev/bdev_config_internal.h"

static const struct bdev_config_param g_malloc_params[] = {
	{ "name", CFG_PT_STR, true, offsetof(struct nvp_bdev_malloc_opts, name), NULL, NULL },
	{ "num_blocks", CFG_PT_U64, true, offsetof(struct nvp_bdev_malloc_opts, num_blocks), NULL,
	  NULL },
	{ "block_size", CFG_PT_U32, false, offsetof(struct nvp_bdev_malloc_opts, block_size), NULL,
	  NULL },
	{ "md_size", CFG_PT_U32, false, offsetof(struct nvp_bdev_malloc_opts, md_size), NULL,
	  NULL },
	{ "optimal_io_boundary", CFG_PT_U32, false,
	  offsetof(struct nvp_bdev_malloc_opts, optimal_io_boundary), NULL, NULL },
	{ "max_xfer_blocks", CFG_PT_U32, false,
	  offsetof(struct nvp_bdev_malloc_opts, max_xfer_blocks), NULL, NULL },
	BDEV_CONFIG_SPDK_GEOMETRY,
	/* SPDK's NUMA node for the buffer: -1 = any */
	{ "numa_id", CFG_PT_MINUS1, false, 0, NULL, NULL },
	{ NULL, CFG_PT_IGNORE, false, 0, NULL, NULL },
};

static int malloc_config_create(struct bdev_config *cfg, struct json_object *params);

static struct bdev_config_method g_malloc_method = {
	.name = "bdev_malloc_create",
	.short_name = "malloc",
	.order = 20,
	.run = malloc_config_create,
	.undo = nvp_bdev_malloc_delete,
};

static int
malloc_config_create(struct bdev_config *cfg, struct json_object *params)
{
	struct nvp_bdev_malloc_opts o;
	int rc;

	nvp_bdev_malloc_opts_init(&o, sizeof(o));
	rc = bdev_config_params_parse(cfg, params, g_malloc_params, &o, NULL, NULL);
	if (rc == 0) {
		rc = nvp_bdev_malloc_create(&o, NULL);
	}
	return rc != 0 ? rc : bdev_config_made(cfg, &g_malloc_method, o.name);
}

__attribute__((constructor)) static void
malloc_config_register(void)
{
	bdev_config_method_register(&g_malloc_method);
}

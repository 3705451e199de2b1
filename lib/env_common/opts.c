/* SPDX-License-Identifier: BSD-3-Clause */
/* nvp_env_opts: defaults and the opts_size-aware copy both backends use. */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "env_internal.h"
#include "nvpoll/util.h"

void
nvp_env_opts_init(struct nvp_env_opts *opts, size_t opts_size)
{
	struct nvp_env_opts def = {
		.opts_size = sizeof(def),
		.name = "nvpoll",
		.core_mask = "0x1",
		.mem_size_mb = 0,
		.no_huge = false,
		.no_pci = false,
		.quiet = false,
	};

	if (opts == NULL || opts_size == 0) {
		return;
	}
	/* An older caller's struct is a prefix of ours: fill only what it has. */
	memcpy(opts, &def, NVP_MIN(opts_size, sizeof(def)));
	opts->opts_size = opts_size;
}

int
env_opts_copy(struct nvp_env_opts *dst, const struct nvp_env_opts *src)
{
	size_t n;

	nvp_env_opts_init(dst, sizeof(*dst));
	if (src == NULL) {
		return 0;
	}
	if (src->opts_size < offsetof(struct nvp_env_opts, name) + sizeof(src->name)) {
		return -EINVAL;
	}
	n = NVP_MIN(src->opts_size, sizeof(*dst));
	memcpy(dst, src, n);
	dst->opts_size = sizeof(*dst);
	if (dst->name == NULL) {
		dst->name = "nvpoll";
	}
	if (dst->core_mask == NULL) {
		dst->core_mask = "0x1";
	}
	return 0;
}

static pthread_mutex_t g_opts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nvp_env_opts g_opts;
static char g_name[64];
static char g_core_mask[64];

void
env_opts_set(const struct nvp_env_opts *opts)
{
	pthread_mutex_lock(&g_opts_lock);
	if (env_opts_copy(&g_opts, opts) == 0) {
		nvp_strlcpy(g_name, g_opts.name, sizeof(g_name));
		nvp_strlcpy(g_core_mask, g_opts.core_mask, sizeof(g_core_mask));
	} else {
		nvp_env_opts_init(&g_opts, sizeof(g_opts));
	}
	g_opts.name = g_name;
	g_opts.core_mask = g_core_mask;
	pthread_mutex_unlock(&g_opts_lock);
}

const struct nvp_env_opts *
env_opts_get(void)
{
	pthread_mutex_lock(&g_opts_lock);
	if (g_opts.opts_size == 0) {
		nvp_env_opts_init(&g_opts, sizeof(g_opts));
	}
	pthread_mutex_unlock(&g_opts_lock);
	return &g_opts;
}

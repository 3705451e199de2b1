/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Virtual device providers: device models (the software controller, "emu") register
 * here by trtype name, usually from a constructor, so the driver can turn a transport ID
 * such as "trtype:emu name:emu0" into a virtual PCI function without knowing the model.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <strings.h>

#define NVP_LOG_COMPONENT "env"
#include "env_internal.h"
#include "nvpoll/log.h"

static pthread_mutex_t g_vdev_lock = PTHREAD_MUTEX_INITIALIZER;
static TAILQ_HEAD(, nvp_env_vdev_provider) g_providers = TAILQ_HEAD_INITIALIZER(g_providers);

/* Caller holds g_vdev_lock. */
static struct nvp_env_vdev_provider *
find_locked(const char *name)
{
	struct nvp_env_vdev_provider *p;

	TAILQ_FOREACH (p, &g_providers, link) {
		if (strcasecmp(p->name, name) == 0) {
			return p;
		}
	}
	return NULL;
}

int
nvp_env_vdev_provider_register(struct nvp_env_vdev_provider *provider)
{
	struct nvp_env_vdev_provider *p;
	int rc = 0;

	if (provider == NULL || provider->name == NULL || provider->name[0] == '\0' ||
	    provider->create == NULL || provider->destroy == NULL) {
		NVP_ERRLOG("vdev: a provider needs a name, create and destroy");
		return -EINVAL;
	}
	pthread_mutex_lock(&g_vdev_lock);
	TAILQ_FOREACH (p, &g_providers, link) {
		if (p == provider) {
			rc = -EEXIST;
		}
	}
	if (rc == 0 && find_locked(provider->name) != NULL) {
		rc = -EEXIST;
	}
	if (rc == 0) {
		TAILQ_INSERT_TAIL(&g_providers, provider, link);
	}
	pthread_mutex_unlock(&g_vdev_lock);
	if (rc != 0) {
		NVP_ERRLOG("vdev: a provider named \"%s\" is already registered", provider->name);
	}
	return rc;
}

void
env_vdev_quiesce_all(void)
{
	struct nvp_env_vdev_provider *p;

	pthread_mutex_lock(&g_vdev_lock);
	TAILQ_FOREACH (p, &g_providers, link) {
		if (p->quiesce != NULL) {
			p->quiesce();
		}
	}
	pthread_mutex_unlock(&g_vdev_lock);
}

struct nvp_env_vdev_provider *
nvp_env_vdev_provider_find(const char *name)
{
	struct nvp_env_vdev_provider *p;

	if (name == NULL) {
		return NULL;
	}
	pthread_mutex_lock(&g_vdev_lock);
	p = find_locked(name);
	pthread_mutex_unlock(&g_vdev_lock);
	return p;
}

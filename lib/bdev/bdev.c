/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bdev registry and lifetimes: register/unregister/hot-remove, descriptors and their
 * events, the getters, the registries of modules and pipeline stages, and the per-bdev
 * choice of stages. Nothing here is on the I/O path; one recursive mutex guards it all
 * (recursive so that an event callback or a module's destruct may call back in).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bdev/bdev_internal.h"

static pthread_mutex_t g_bdev_mutex;
static pthread_once_t g_bdev_mutex_once = PTHREAD_ONCE_INIT;
static TAILQ_HEAD(, nvp_bdev) g_bdevs = TAILQ_HEAD_INITIALIZER(g_bdevs);
static struct nvp_bdev_module *g_modules;

#define MAX_STAGES 16
static const struct nvp_bdev_admission_ops *g_admission[MAX_STAGES];
static const struct nvp_bdev_sched_ops *g_sched[MAX_STAGES];

static const struct nvp_bdev_admission_ops g_admission_none = { .name = "none" };
static const struct nvp_bdev_sched_ops g_sched_none = { .name = "none" };

static const char *const g_io_type_names[NVP_BDEV_NUM_IO_TYPES] = {
	"read", "write", "write_zeroes", "unmap", "flush", "compare",
};

static void
bdev_mutex_init(void)
{
	pthread_mutexattr_t attr;

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&g_bdev_mutex, &attr);
	pthread_mutexattr_destroy(&attr);
}

void
bdev_lock(void)
{
	pthread_once(&g_bdev_mutex_once, bdev_mutex_init);
	pthread_mutex_lock(&g_bdev_mutex);
}

void
bdev_unlock(void)
{
	pthread_mutex_unlock(&g_bdev_mutex);
}

/*
 * Whether @desc is an open descriptor, @ch a channel that exists: looked for by address
 * among the bdevs', never read through (a caller closing or destroying twice passes
 * memory already freed). Every open descriptor and its channels hang off a bdev still
 * in g_bdevs: a removed bdev leaves it only with its last close. Caller holds the lock.
 */
bool
bdev_desc_is_open(const struct nvp_bdev_desc *desc)
{
	const struct nvp_bdev_desc *d;
	const struct nvp_bdev *bdev;

	TAILQ_FOREACH (bdev, &g_bdevs, link) {
		TAILQ_FOREACH (d, &bdev->descs, link) {
			if (d == desc) {
				return true;
			}
		}
	}
	return false;
}

bool
bdev_channel_exists(const struct nvp_bdev_channel *ch)
{
	const struct nvp_bdev_channel *c;
	const struct nvp_bdev *bdev;

	TAILQ_FOREACH (bdev, &g_bdevs, link) {
		TAILQ_FOREACH (c, &bdev->channels, bdev_link) {
			if (c == ch) {
				return true;
			}
		}
	}
	return false;
}

const char *
nvp_bdev_io_type_name(enum nvp_bdev_io_type type)
{
	if ((unsigned int)type >= NVP_BDEV_NUM_IO_TYPES) {
		return "unknown";
	}
	return g_io_type_names[type];
}

/* ---- registry ---- */

static struct nvp_bdev *
bdev_find_locked(const char *name)
{
	struct nvp_bdev *bdev;

	TAILQ_FOREACH (bdev, &g_bdevs, link) {
		if (strcmp(bdev->name, name) == 0) {
			return bdev;
		}
	}
	return NULL;
}

static int
spec_check(const struct nvp_bdev_spec *spec)
{
	const char *bad = NULL;

	if (spec->name == NULL || spec->name[0] == '\0' ||
	    strlen(spec->name) >= NVP_BDEV_NAME_MAX) {
		bad = "name (1 to 63 characters)";
	} else if (spec->module_name == NULL || strlen(spec->module_name) >= BDEV_MODULE_NAME_MAX) {
		bad = "module_name";
	} else if (spec->block_size == 0 || spec->block_size <= spec->md_size) {
		bad = "block_size (> md_size)";
	} else if (spec->num_blocks == 0 || spec->num_blocks > UINT64_MAX / spec->block_size) {
		bad = "num_blocks";
	} else if (spec->fn_table == NULL || spec->fn_table->submit == NULL ||
		   spec->fn_table->poll == NULL) {
		bad = "fn_table (submit and poll are required)";
	}
	if (bad != NULL) {
		NVP_ERRLOG("register bdev '%s': bad %s", spec->name ? spec->name : "(null)", bad);
		return -EINVAL;
	}
	return 0;
}

static void
bdev_fill(struct nvp_bdev *bdev, const struct nvp_bdev_spec *spec)
{
	int t;

	nvp_strlcpy(bdev->name, spec->name, sizeof(bdev->name));
	nvp_strlcpy(bdev->module_name, spec->module_name, sizeof(bdev->module_name));
	bdev->block_size = spec->block_size;
	bdev->md_size = spec->md_size;
	bdev->md_interleaved = spec->md_size != 0 && spec->md_interleaved;
	bdev->write_cache = spec->write_cache;
	bdev->num_blocks = spec->num_blocks;
	bdev->max_xfer_blocks = spec->max_xfer_blocks;
	bdev->optimal_io_boundary = spec->optimal_io_boundary;
	bdev->may_split = spec->max_xfer_blocks != 0 || spec->optimal_io_boundary != 0;
	bdev->io_ctx_size = spec->io_ctx_size;
	bdev->fn = spec->fn_table;
	bdev->ctx = spec->ctx;
	bdev->accounting = true;
	for (t = 0; t < NVP_BDEV_NUM_IO_TYPES; t++) {
		if (spec->fn_table->io_type_supported != NULL) {
			bdev->supported[t] = spec->fn_table->io_type_supported(spec->ctx, t);
		} else {
			bdev->supported[t] = t == NVP_BDEV_IO_READ || t == NVP_BDEV_IO_WRITE;
		}
	}
	bdev->admit_ops = &g_admission_none;
	bdev->sched_ops = &g_sched_none;
	TAILQ_INIT(&bdev->descs);
	TAILQ_INIT(&bdev->channels);
}

int
nvp_bdev_register(const struct nvp_bdev_spec *spec, struct nvp_bdev **out)
{
	struct nvp_bdev *bdev;
	int rc;

	if (spec == NULL) {
		return -EINVAL;
	}
	rc = spec_check(spec);
	if (rc != 0) {
		return rc;
	}
	bdev = calloc(1, sizeof(*bdev));
	if (bdev == NULL) {
		return -ENOMEM;
	}
	bdev_fill(bdev, spec);
	bdev_lock();
	if (bdev_find_locked(spec->name) != NULL) {
		bdev_unlock();
		NVP_ERRLOG("register bdev '%s': a bdev of that name exists; choose another name",
			   spec->name);
		free(bdev);
		return -EEXIST;
	}
	TAILQ_INSERT_TAIL(&g_bdevs, bdev, link);
	bdev_unlock();
	if (out != NULL) {
		*out = bdev;
	}
	return 0;
}

/* Free a bdev already out of the list: stages' device-wide state, the module's. */
static void
bdev_destruct(struct nvp_bdev *bdev)
{
	if (bdev->admit_ops->fini != NULL) {
		bdev->admit_ops->fini(bdev->admit_ctx);
	}
	if (bdev->sched_ops->fini != NULL) {
		bdev->sched_ops->fini(bdev->sched_ctx);
	}
	if (bdev->fn->destruct != NULL) {
		bdev->fn->destruct(bdev->ctx);
	}
	free(bdev->admit_params);
	free(bdev->sched_params);
	free(bdev->retired);
	free(bdev);
}

int
nvp_bdev_unregister(struct nvp_bdev *bdev)
{
	if (bdev == NULL) {
		return -EINVAL;
	}
	bdev_lock();
	if (bdev->open_count != 0) {
		NVP_ERRLOG("bdev '%s': %u descriptor(s) still open; close them first", bdev->name,
			   bdev->open_count);
		bdev_unlock();
		return -EBUSY;
	}
	TAILQ_REMOVE(&g_bdevs, bdev, link);
	bdev_destruct(bdev);
	bdev_unlock();
	return 0;
}

void
nvp_bdev_hot_remove(struct nvp_bdev *bdev)
{
	struct nvp_bdev_desc *desc, *tmp;
	struct nvp_bdev_channel *ch;

	bdev_lock();
	if (bdev->removed) {
		bdev_unlock();
		return;
	}
	__atomic_store_n(&bdev->removed, true, __ATOMIC_RELEASE);
	/* channels refuse new I/O from now on (their owners see it at their next call) */
	TAILQ_FOREACH (ch, &bdev->channels, bdev_link) {
		__atomic_store_n(&ch->allowed, 0u, __ATOMIC_RELAXED);
	}
	NVP_WARNLOG("bdev '%s' removed: outstanding I/O fails, new I/O returns -ENXIO", bdev->name);
	bdev->notifying = true;
	TAILQ_FOREACH_SAFE (desc, &bdev->descs, link, tmp) {
		desc->event_cb(NVP_BDEV_EVENT_REMOVE, bdev, desc->event_ctx);
	}
	bdev->notifying = false;
	if (bdev->open_count == 0) {
		TAILQ_REMOVE(&g_bdevs, bdev, link);
		bdev_destruct(bdev);
	}
	bdev_unlock();
}

int
nvp_bdev_notify_blockcnt_change(struct nvp_bdev *bdev, uint64_t num_blocks)
{
	struct nvp_bdev_channel *ch;
	struct nvp_bdev_desc *desc;

	if (bdev == NULL || num_blocks == 0) {
		return -EINVAL;
	}
	bdev_lock();
	__atomic_store_n(&bdev->num_blocks, num_blocks, __ATOMIC_RELAXED);
	TAILQ_FOREACH (ch, &bdev->channels, bdev_link) {
		__atomic_store_n(&ch->num_blocks, num_blocks, __ATOMIC_RELAXED);
	}
	TAILQ_FOREACH (desc, &bdev->descs, link) {
		desc->event_cb(NVP_BDEV_EVENT_RESIZE, bdev, desc->event_ctx);
	}
	bdev_unlock();
	return 0;
}

/* ---- lookup and getters ---- */

struct nvp_bdev *
nvp_bdev_get_by_name(const char *name)
{
	struct nvp_bdev *bdev;

	if (name == NULL) {
		return NULL;
	}
	bdev_lock();
	bdev = bdev_find_locked(name);
	bdev_unlock();
	return bdev;
}

struct nvp_bdev *
nvp_bdev_first(void)
{
	struct nvp_bdev *bdev;

	bdev_lock();
	bdev = TAILQ_FIRST(&g_bdevs);
	bdev_unlock();
	return bdev;
}

struct nvp_bdev *
nvp_bdev_next(struct nvp_bdev *prev)
{
	struct nvp_bdev *bdev;

	bdev_lock();
	bdev = prev != NULL ? TAILQ_NEXT(prev, link) : NULL;
	bdev_unlock();
	return bdev;
}

char *
nvp_bdev_list_names(char *buf, size_t len)
{
	struct nvp_bdev *bdev;
	size_t off = 0;
	int n;

	if (buf == NULL || len == 0) {
		return buf;
	}
	buf[0] = '\0';
	bdev_lock();
	TAILQ_FOREACH (bdev, &g_bdevs, link) {
		n = snprintf(buf + off, len - off, "%s%s", off ? ", " : "", bdev->name);
		if (n < 0 || (size_t)n >= len - off) {
			if (len > 4) {
				memcpy(buf + len - 4, "...", 4);
			}
			break;
		}
		off += (size_t)n;
	}
	bdev_unlock();
	return buf;
}

const char *
nvp_bdev_get_name(const struct nvp_bdev *bdev)
{
	return bdev->name;
}

const char *
nvp_bdev_get_module_name(const struct nvp_bdev *bdev)
{
	return bdev->module_name;
}

uint32_t
nvp_bdev_get_block_size(const struct nvp_bdev *bdev)
{
	return bdev->block_size;
}

uint64_t
nvp_bdev_get_num_blocks(const struct nvp_bdev *bdev)
{
	return __atomic_load_n(&bdev->num_blocks, __ATOMIC_RELAXED);
}

uint32_t
nvp_bdev_get_md_size(const struct nvp_bdev *bdev)
{
	return bdev->md_size;
}

bool
nvp_bdev_is_md_interleaved(const struct nvp_bdev *bdev)
{
	return bdev->md_interleaved;
}

uint32_t
nvp_bdev_get_max_xfer_blocks(const struct nvp_bdev *bdev)
{
	return bdev->max_xfer_blocks;
}

uint32_t
nvp_bdev_get_optimal_io_boundary(const struct nvp_bdev *bdev)
{
	return bdev->optimal_io_boundary;
}

/*
 * The pieces split_len() cuts: a range of n blocks crosses at most ceil((n - 1) / b)
 * boundaries, so it lies in s <= that + 1 segments; a segment of L blocks takes
 * ceil(L / m) pieces, at most floor((L - 1) / m) + 1, which sum to at most
 * s + ceil(n / m) - 1 over the segments.
 */
uint32_t
nvp_bdev_get_max_ios_per_request(const struct nvp_bdev *bdev, uint64_t nbytes)
{
	uint64_t n, segments = 1, pieces;
	uint32_t m, b;

	if (bdev == NULL || !bdev->may_split || nbytes == 0) {
		return 1;
	}
	m = bdev->max_xfer_blocks;
	b = bdev->optimal_io_boundary;
	n = (nbytes + bdev->block_size - 1) / bdev->block_size;
	if (b != 0) {
		segments += (n - 1 + b - 1) / b;
	}
	pieces = m != 0 ? segments + (n + m - 1) / m - 1 : segments;
	return pieces <= 1 ? 1 : (uint32_t)NVP_MIN(pieces, BDEV_SPLIT_MAX_CHILDREN) + 1;
}

bool
nvp_bdev_has_write_cache(const struct nvp_bdev *bdev)
{
	return bdev->write_cache;
}

bool
nvp_bdev_io_type_supported(const struct nvp_bdev *bdev, enum nvp_bdev_io_type type)
{
	return (unsigned int)type < NVP_BDEV_NUM_IO_TYPES && bdev->supported[type];
}

void *
nvp_bdev_get_module_ctx(const struct nvp_bdev *bdev)
{
	return bdev->ctx;
}

bool
nvp_bdev_is_removed(const struct nvp_bdev *bdev)
{
	return __atomic_load_n(&bdev->removed, __ATOMIC_ACQUIRE);
}

uint32_t
nvp_bdev_get_open_count(const struct nvp_bdev *bdev)
{
	uint32_t n;

	bdev_lock();
	n = bdev->open_count;
	bdev_unlock();
	return n;
}

void
nvp_bdev_set_accounting(struct nvp_bdev *bdev, bool enable)
{
	struct nvp_bdev_channel *ch;

	if (bdev == NULL) {
		return;
	}
	bdev_lock();
	__atomic_store_n(&bdev->accounting, enable, __ATOMIC_RELAXED);
	/* each channel's owner picks the change up at its next poll */
	TAILQ_FOREACH (ch, &bdev->channels, bdev_link) {
		__atomic_store_n(&ch->mode_dirty, true, __ATOMIC_RELAXED);
	}
	bdev_unlock();
}

/* ---- descriptors ---- */

int
nvp_bdev_open(const char *name, bool write, nvp_bdev_event_cb event_cb, void *event_ctx,
	      struct nvp_bdev_desc **out)
{
	struct nvp_bdev_desc *desc;
	struct nvp_bdev *bdev;
	char names[256];

	if (name == NULL || event_cb == NULL || out == NULL) {
		NVP_ERRLOG("open: name, event callback and descriptor pointer are required");
		return -EINVAL;
	}
	desc = calloc(1, sizeof(*desc));
	if (desc == NULL) {
		return -ENOMEM;
	}
	bdev_lock();
	bdev = bdev_find_locked(name);
	if (bdev == NULL) {
		bdev_unlock();
		nvp_bdev_list_names(names, sizeof(names));
		NVP_ERRLOG("open: no bdev '%s'; bdevs: %s", name, names[0] ? names : "(none)");
		free(desc);
		return -ENODEV;
	}
	if (bdev->removed) {
		bdev_unlock();
		NVP_ERRLOG("open: bdev '%s' is being removed", name);
		free(desc);
		return -ENXIO;
	}
	desc->bdev = bdev;
	desc->write = write;
	desc->event_cb = event_cb;
	desc->event_ctx = event_ctx;
	TAILQ_INSERT_TAIL(&bdev->descs, desc, link);
	bdev->open_count++;
	bdev_unlock();
	*out = desc;
	return 0;
}

int
nvp_bdev_close(struct nvp_bdev_desc *desc)
{
	struct nvp_bdev_channel *ch;
	struct nvp_bdev *bdev;
	uint64_t inflight = 0;

	if (desc == NULL) {
		return -EINVAL;
	}
	bdev_lock();
	if (!bdev_desc_is_open(desc)) {
		bdev_unlock();
		NVP_ERRLOG("close: %p is not an open descriptor (closed twice?)", (void *)desc);
		return -EINVAL;
	}
	bdev = desc->bdev;
	if (desc->num_channels != 0) {
		TAILQ_FOREACH (ch, &bdev->channels, bdev_link) {
			if (ch->desc == desc) {
				inflight += ch_outstanding(ch);
			}
		}
		NVP_ERRLOG("close '%s': %u channel(s) of this descriptor still exist, %" PRIu64
			   " I/O(s) in flight; complete the I/O, destroy the channels, then close",
			   bdev->name, desc->num_channels, inflight);
		bdev_unlock();
		return -EBUSY;
	}
	TAILQ_REMOVE(&bdev->descs, desc, link);
	bdev->open_count--;
	if (bdev->open_count == 0 && bdev->removed && !bdev->notifying) {
		TAILQ_REMOVE(&g_bdevs, bdev, link);
		bdev_destruct(bdev);
	}
	bdev_unlock();
	free(desc);
	return 0;
}

struct nvp_bdev *
nvp_bdev_desc_get_bdev(const struct nvp_bdev_desc *desc)
{
	return desc->bdev;
}

bool
nvp_bdev_desc_is_writable(const struct nvp_bdev_desc *desc)
{
	return desc->write;
}

int
nvp_bdev_desc_set_tenant(struct nvp_bdev_desc *desc, uint32_t tenant)
{
	if (desc == NULL || tenant >= NVP_BDEV_MAX_TENANTS) {
		NVP_ERRLOG("tenant %u: must be below %u", tenant, NVP_BDEV_MAX_TENANTS);
		return -EINVAL;
	}
	desc->tenant = (uint8_t)tenant;
	return 0;
}

uint32_t
nvp_bdev_desc_get_tenant(const struct nvp_bdev_desc *desc)
{
	return desc->tenant;
}

int
nvp_bdev_desc_set_write_hint(struct nvp_bdev_desc *desc, enum nvp_nvme_write_hint hint)
{
	if (desc == NULL || (unsigned)hint > NVP_NVME_WRITE_HINT_EXTREME) {
		NVP_ERRLOG("write hint %d: must be 0 (none) to %d (extreme)", (int)hint,
			   NVP_NVME_WRITE_HINT_EXTREME);
		return -EINVAL;
	}
	desc->write_hint = (uint32_t)hint << NVP_BDEV_WRITE_HINT_SHIFT;
	return 0;
}

enum nvp_nvme_write_hint
nvp_bdev_desc_get_write_hint(const struct nvp_bdev_desc *desc)
{
	return (enum nvp_nvme_write_hint)(desc->write_hint >> NVP_BDEV_WRITE_HINT_SHIFT);
}

/* ---- modules ---- */

void
nvp_bdev_module_register(struct nvp_bdev_module *module)
{
	bdev_lock();
	module->next = g_modules;
	g_modules = module;
	bdev_unlock();
}

int
nvp_bdev_fini(void)
{
	struct nvp_bdev_module *m;
	struct nvp_bdev *bdev, *tmp;
	int rc = 0;

	bdev_lock();
	TAILQ_FOREACH (bdev, &g_bdevs, link) {
		if (bdev->open_count != 0) {
			NVP_ERRLOG("fini: bdev '%s' has %u open descriptor(s); close them first",
				   bdev->name, bdev->open_count);
			rc = -EBUSY;
		}
	}
	bdev_unlock();
	if (rc != 0) {
		return rc;
	}
	/* modules first, without our lock: they take theirs, then ours */
	for (m = g_modules; m != NULL; m = m->next) {
		if (m->fini != NULL) {
			m->fini();
		}
	}
	bdev_lock();
	TAILQ_FOREACH_SAFE (bdev, &g_bdevs, link, tmp) {
		nvp_bdev_unregister(bdev);
	}
	bdev_unlock();
	return 0;
}

/* ---- pipeline stages ---- */

const struct nvp_bdev_admission_ops *
bdev_admission_none(void)
{
	return &g_admission_none;
}

const struct nvp_bdev_sched_ops *
bdev_sched_none(void)
{
	return &g_sched_none;
}

/* Register @ops (an admission or sched ops table; both start with the name) in @table. */
static int
stage_register(const void **table, const char *name, const void *ops, const char *kind)
{
	const char *const *slot_name;
	int i, free_slot = -1;

	if (ops == NULL || name == NULL || name[0] == '\0' || strcmp(name, "none") == 0) {
		return -EINVAL;
	}
	bdev_lock();
	for (i = 0; i < MAX_STAGES; i++) {
		if (table[i] == NULL) {
			free_slot = free_slot < 0 ? i : free_slot;
			continue;
		}
		slot_name = table[i];
		if (strcmp(*slot_name, name) == 0) {
			bdev_unlock();
			NVP_ERRLOG("%s '%s' is already registered", kind, name);
			return -EEXIST;
		}
	}
	if (free_slot < 0) {
		bdev_unlock();
		return -ENOSPC;
	}
	table[free_slot] = ops;
	bdev_unlock();
	return 0;
}

int
nvp_bdev_admission_register(const struct nvp_bdev_admission_ops *ops)
{
	return stage_register((const void **)g_admission, ops ? ops->name : NULL, ops,
			      "admission stage");
}

int
nvp_bdev_scheduler_register(const struct nvp_bdev_sched_ops *ops)
{
	return stage_register((const void **)g_sched, ops ? ops->name : NULL, ops, "scheduler");
}

static const void *
stage_find(const void **table, const void *none, const char *name, const char *kind)
{
	char names[256] = "none";
	const char *const *slot_name;
	size_t off = 4;
	int i;

	if (strcmp(name, "none") == 0) {
		return none;
	}
	for (i = 0; i < MAX_STAGES; i++) {
		slot_name = table[i];
		if (slot_name != NULL && strcmp(*slot_name, name) == 0) {
			return table[i];
		}
	}
	for (i = 0; i < MAX_STAGES && off < sizeof(names); i++) {
		slot_name = table[i];
		if (slot_name != NULL) {
			off += (size_t)snprintf(names + off, sizeof(names) - off, ", %s",
						*slot_name);
		}
	}
	NVP_ERRLOG("no %s '%s'; registered: %s", kind, name, names);
	return NULL;
}

/* Replace one stage of @bdev. @init/@fini are the new/old ops' hooks. */
static int
stage_set_check(struct nvp_bdev *bdev, const char *name, const char *kind)
{
	if (bdev == NULL || name == NULL) {
		return -EINVAL;
	}
	if (bdev->num_channels != 0) {
		NVP_ERRLOG("bdev '%s': cannot change the %s while %u channel(s) exist; destroy "
			   "them first",
			   bdev->name, kind, bdev->num_channels);
		return -EBUSY;
	}
	return 0;
}

/* A copy of a stage's @params, kept for its getter (and a configuration's undo). \return
 * 0 (*@copy NULL for none) or -ENOMEM. */
static int
stage_params_copy(const char *params, char **copy)
{
	*copy = NULL;
	if (params != NULL && (*copy = strdup(params)) == NULL) {
		return -ENOMEM;
	}
	return 0;
}

int
nvp_bdev_set_admission(struct nvp_bdev *bdev, const char *name, const char *params)
{
	const struct nvp_bdev_admission_ops *ops;
	void *ctx = NULL;
	char *copy;
	int rc;

	rc = stage_params_copy(params, &copy);
	if (rc != 0) {
		return rc;
	}
	bdev_lock();
	rc = stage_set_check(bdev, name, "admission stage");
	if (rc == 0) {
		ops = stage_find((const void **)g_admission, &g_admission_none, name,
				 "admission stage");
		rc = ops == NULL ? -ENOENT : 0;
	}
	if (rc == 0 && ops->init != NULL) {
		rc = ops->init(bdev, params, &ctx);
	}
	if (rc == 0) {
		if (bdev->admit_ops->fini != NULL) {
			bdev->admit_ops->fini(bdev->admit_ctx);
		}
		bdev->admit_ops = ops;
		bdev->admit_ctx = ctx;
		free(bdev->admit_params);
		bdev->admit_params = copy;
		copy = NULL;
	}
	bdev_unlock();
	free(copy);
	return rc;
}

int
nvp_bdev_set_scheduler(struct nvp_bdev *bdev, const char *name, const char *params)
{
	const struct nvp_bdev_sched_ops *ops;
	void *ctx = NULL;
	char *copy;
	int rc;

	rc = stage_params_copy(params, &copy);
	if (rc != 0) {
		return rc;
	}
	bdev_lock();
	rc = stage_set_check(bdev, name, "scheduler");
	if (rc == 0) {
		ops = stage_find((const void **)g_sched, &g_sched_none, name, "scheduler");
		rc = ops == NULL ? -ENOENT : 0;
	}
	if (rc == 0 && ops->init != NULL) {
		rc = ops->init(bdev, params, &ctx);
	}
	if (rc == 0) {
		if (bdev->sched_ops->fini != NULL) {
			bdev->sched_ops->fini(bdev->sched_ctx);
		}
		bdev->sched_ops = ops;
		bdev->sched_ctx = ctx;
		free(bdev->sched_params);
		bdev->sched_params = copy;
		copy = NULL;
	}
	bdev_unlock();
	free(copy);
	return rc;
}

void *
nvp_bdev_get_admission_ctx(const struct nvp_bdev *bdev, const struct nvp_bdev_admission_ops *ops)
{
	void *ctx = NULL;

	bdev_lock();
	if (bdev->admit_ops == ops) {
		ctx = bdev->admit_ctx;
	}
	bdev_unlock();
	return ctx;
}

void *
nvp_bdev_get_scheduler_ctx(const struct nvp_bdev *bdev, const struct nvp_bdev_sched_ops *ops)
{
	void *ctx = NULL;

	bdev_lock();
	if (bdev->sched_ops == ops) {
		ctx = bdev->sched_ctx;
	}
	bdev_unlock();
	return ctx;
}

uint32_t
nvp_bdev_get_tenant_weight(const struct nvp_bdev *bdev, uint32_t tenant)
{
	const struct nvp_bdev_sched_ops *ops = bdev->sched_ops;

	if (ops->tenant_weight == NULL || tenant >= NVP_BDEV_MAX_TENANTS) {
		return 0;
	}
	return ops->tenant_weight(bdev->sched_ctx, tenant);
}

const char *
nvp_bdev_get_admission(const struct nvp_bdev *bdev)
{
	return bdev->admit_ops->name;
}

const char *
nvp_bdev_get_scheduler(const struct nvp_bdev *bdev)
{
	return bdev->sched_ops->name;
}

const char *
nvp_bdev_get_admission_params(const struct nvp_bdev *bdev)
{
	return bdev->admit_params;
}

const char *
nvp_bdev_get_scheduler_params(const struct nvp_bdev *bdev)
{
	return bdev->sched_params;
}

bool
nvp_bdev_get_accounting(const struct nvp_bdev *bdev)
{
	return __atomic_load_n(&bdev->accounting, __ATOMIC_RELAXED);
}

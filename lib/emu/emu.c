/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The software controller's life: create/destroy, the controller thread and its poll
 * loop, fault injection, statistics, and the "emu" virtual device provider that turns
 * "trtype:emu name:emu0 ..." into a virtual PCI function.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "emu_internal.h"

#define IDLE_BEFORE_SLEEP_US 1000u /* spin this long after the last work */
#define IDLE_SLEEP_US 30u          /* then sleep this long between polls */
#define IDLE_LONG_US 50000u        /* idle this long: a long sleep tier saves CPU */
#define IDLE_LONG_SLEEP_US 200u
#define SLOW_PATH_INTERVAL 256u /* polls between doorbell scans and register checks */

static pthread_mutex_t g_emu_lock = PTHREAD_MUTEX_INITIALIZER;
static TAILQ_HEAD(, emu_ctrlr) g_emu_ctrlrs = TAILQ_HEAD_INITIALIZER(g_emu_ctrlrs);
static uint16_t g_next_cntlid = 1;

/* ---- the poll loop ---- */

/*
 * One iteration of the controller: faults, CC/CSTS, then queues. The thread calls this
 * in a loop; unit tests call it directly. \return work done (0 = idle).
 */
int
emu_ctrlr_poll(struct emu_ctrlr *c)
{
	uint64_t now = nvp_env_get_ticks();
	int work;

	if (nvp_unlikely(__atomic_load_n(&c->fault_pending, __ATOMIC_ACQUIRE) != 0)) {
		emu_fault_sync(c);
	}
	if (nvp_unlikely(c->fault_all_ones)) {
		return 0;
	}
	work = emu_regs_poll(c, now);
	if (!emu_ctrlr_running(c)) {
		return work;
	}
	if (nvp_unlikely(!emu_pci_bus_master(c))) {
		/* After a shutdown notification a driver may clear bus mastering: no news. */
		if (!c->bm_warned && c->csts.bits.shst == NVME_SHST_NORMAL) {
			NVP_WARNLOG(
				"emu %s: controller enabled but PCI bus mastering is off; queues "
				"are not processed until the driver sets the command register's "
				"bus master bit",
				c->opts.name);
			c->bm_warned = true;
		}
		return work;
	}
	c->bm_warned = false;
	work += emu_queue_poll(c, now);
	if (nvp_unlikely(++c->poll_count % SLOW_PATH_INTERVAL == 0)) {
		emu_db_scan_unused(c);
		emu_regs_check_ro(c);
	}
	return work;
}

static void
idle_sleep(struct emu_ctrlr *c, uint64_t now, uint64_t idle_ticks)
{
	uint64_t next = emu_next_due(c);
	uint64_t us = IDLE_SLEEP_US;
	struct timespec ts;

	if (idle_ticks > emu_us_to_ticks(c, IDLE_LONG_US)) {
		us = IDLE_LONG_SLEEP_US;
	}

	if (next != UINT64_MAX) {
		uint64_t wait_us = next > now ? nvp_ticks_to_us(next - now, c->ticks_hz) : 0;

		if (wait_us < 10) {
			return; /* due soon: keep spinning */
		}
		us = NVP_MIN(us, wait_us / 2);
	}
	ts.tv_sec = 0;
	ts.tv_nsec = (long)(us * 1000u);
	nanosleep(&ts, NULL);
}

static void *
ctrlr_thread(void *arg)
{
	struct emu_ctrlr *c = arg;
	uint64_t idle_ticks = emu_us_to_ticks(c, IDLE_BEFORE_SLEEP_US);
	uint64_t idle_start = 0;
	char name[16];

	/* Short sleeps must stay short: default timer slack is 50 us. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	snprintf(name, sizeof(name), "emu:%.11s", c->opts.name);
	pthread_setname_np(pthread_self(), name);
	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		uint64_t now;

		if (emu_ctrlr_poll(c) > 0) {
			idle_start = 0;
			continue;
		}
		now = nvp_env_get_ticks();
		if (idle_start == 0) {
			idle_start = now;
		} else if (now - idle_start >= idle_ticks) {
			idle_sleep(c, now, now - idle_start);
		} else {
			nvp_pause();
		}
	}
	return NULL;
}

static int start_thread(struct emu_ctrlr *c);
static void stop_thread(struct emu_ctrlr *c);

/*
 * Run the controller from the caller's thread instead of its own (benchmarks that count
 * the driver's instructions: the controller's work then happens at known points and can
 * be left out of the count, and no poll of the driver finds nothing because the
 * controller thread was late).
 */
int
nvp_emu_ctrlr_set_inline(struct nvp_emu_ctrlr *ctrlr, bool on)
{
	struct emu_ctrlr *c = emu_ctrlr_from_pub(ctrlr);

	if (c == NULL) {
		return -EINVAL;
	}
	if (on) {
		stop_thread(c);
		return 0;
	}
	if (c->thread_started) {
		return 0;
	}
	__atomic_store_n(&c->stop, false, __ATOMIC_RELEASE);
	return start_thread(c);
}

int
nvp_emu_ctrlr_poll(struct nvp_emu_ctrlr *ctrlr)
{
	struct emu_ctrlr *c = emu_ctrlr_from_pub(ctrlr);

	if (c == NULL || c->thread_started) {
		return -EINVAL;
	}
	return emu_ctrlr_poll(c);
}

uint64_t
nvp_emu_ctrlr_next_due(struct nvp_emu_ctrlr *ctrlr)
{
	struct emu_ctrlr *c = emu_ctrlr_from_pub(ctrlr);

	return c == NULL || c->thread_started ? UINT64_MAX : emu_next_due(c);
}

/* ---- fault injection ---- */

static enum emu_fault_cat
fault_cat(enum nvp_emu_fault_type type)
{
	switch (type) {
	case NVP_EMU_FAULT_CFS:
		return EMU_FAULT_CAT_CFS;
	case NVP_EMU_FAULT_ALL_ONES:
		return EMU_FAULT_CAT_ALL_ONES;
	case NVP_EMU_FAULT_RDY_NEVER:
		return EMU_FAULT_CAT_RDY_NEVER;
	case NVP_EMU_FAULT_ADMIN_ERROR:
	case NVP_EMU_FAULT_ADMIN_BAD_PHASE:
		return EMU_FAULT_CAT_ADMIN;
	default:
		return EMU_FAULT_CAT_CMD;
	}
}

static void
fault_apply(struct emu_ctrlr *c, enum emu_fault_cat cat, const struct emu_fault_req *r)
{
	bool on = r->count != 0;

	switch (cat) {
	case EMU_FAULT_CAT_CMD:
		c->cfault = on ? r->type : NVP_EMU_FAULT_NONE;
		c->cfault_count = r->count;
		c->cfault_skip = r->skip;
		c->cfault_arg = r->arg;
		break;
	case EMU_FAULT_CAT_CFS:
		c->fault_cfs = on;
		if (on && c->state == EMU_STATE_READY) {
			/* Fatal: latched until the host resets (CC.EN 1 -> 0); switching the
			 * fault off does not let the controller go on with its queues. */
			c->state = EMU_STATE_FAILED;
		}
		c->csts.bits.cfs = on || c->state == EMU_STATE_FAILED;
		emu_csts_write(c);
		break;
	case EMU_FAULT_CAT_ALL_ONES:
		if (c->powered_off) {
			NVP_WARNLOG("emu %s: powered off: registers stay all ones until the "
				    "controller is destroyed and created again",
				    c->opts.name);
			return;
		}
		emu_all_ones_set(c, on);
		break;
	case EMU_FAULT_CAT_POWER_NOW:
		if (!c->powered_off) {
			emu_plm_cut(c, r->arg);
		}
		return;
	case EMU_FAULT_CAT_ADMIN:
		c->afault_type = r->type;
		c->afault_count = r->count;
		c->afault_skip = r->skip;
		c->afault_arg = r->arg;
		break;
	default:
		c->fault_rdy_never = on;
		break;
	}
	NVP_NOTICELOG("emu %s: fault %s %s (count %u, skip %u, arg %u)", c->opts.name,
		      emu_fault_name(r->type), on ? "on" : "off", r->count, r->skip, r->arg);
}

/* Apply fault requests from the API thread (controller thread). */
void
emu_fault_sync(struct emu_ctrlr *c)
{
	struct emu_fault_req req[EMU_FAULT_CAT_COUNT];
	uint32_t pending;

	pthread_mutex_lock(&c->fault_lock);
	pending = c->fault_pending;
	memcpy(req, c->fault_req, sizeof(req));
	__atomic_store_n(&c->fault_pending, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&c->fault_lock);
	for (uint32_t cat = 0; cat < EMU_FAULT_CAT_COUNT; cat++) {
		if (pending & (1u << cat)) {
			fault_apply(c, (enum emu_fault_cat)cat, &req[cat]);
		}
	}
}

/*
 * The command fault for one fetched I/O command. ERROR sets the slot's status (the
 * command is not executed), SLOW adds to *@extra_ticks.
 * \return true if the completion must be dropped (DROP_CPL; the command still executes).
 */
bool
emu_fault_take(struct emu_ctrlr *c, struct emu_cmd *slot, uint64_t *extra_ticks)
{
	enum nvp_emu_fault_type type = c->cfault;

	if (c->cfault_skip > 0) {
		c->cfault_skip--;
		return false;
	}
	if (--c->cfault_count == 0) {
		c->cfault = NVP_EMU_FAULT_NONE;
	}
	switch (type) {
	case NVP_EMU_FAULT_DROP_CPL:
		return true;
	case NVP_EMU_FAULT_ERROR:
		slot->st = (uint16_t)((c->cfault_arg & 0x7ffu) | 0x8000u);
		slot->flags |= EMU_SLOT_F_SKIPPED;
		return false;
	case NVP_EMU_FAULT_SLOW:
		*extra_ticks = emu_us_to_ticks(c, c->cfault_arg);
		return false;
	case NVP_EMU_FAULT_POWER_CUT:
		emu_plm_cut(c, c->cfault_arg);
		slot->flags |= EMU_SLOT_F_SKIPPED;
		return true;
	case NVP_EMU_FAULT_BAD_CID:
		slot->flags |= EMU_SLOT_F_BAD_CID;
		return false;
	case NVP_EMU_FAULT_DUP_CPL:
		slot->flags |= EMU_SLOT_F_DUP;
		return false;
	case NVP_EMU_FAULT_WRONG_CQ:
		slot->flags |= EMU_SLOT_F_WRONG_CQ;
		return false;
	case NVP_EMU_FAULT_BAD_PHASE:
		slot->flags |= EMU_SLOT_F_BAD_PHASE;
		return false;
	case NVP_EMU_FAULT_BAD_SQHD:
		slot->flags |= EMU_SLOT_F_BAD_SQHD;
		return false;
	default:
		return false;
	}
}

static int
fault_request(struct emu_ctrlr *c, enum nvp_emu_fault_type type, uint32_t count, uint32_t skip,
	      uint32_t arg)
{
	enum emu_fault_cat cat = fault_cat(type);

	if ((unsigned)type > NVP_EMU_FAULT_ADMIN_BAD_PHASE ||
	    (type == NVP_EMU_FAULT_ERROR && count != 0 && (arg == 0 || arg > 0x7ff)) ||
	    (type == NVP_EMU_FAULT_ADMIN_ERROR && count != 0 &&
	     ((arg & 0x7ff) == 0 || (arg & 0xf800) != 0 || arg > 0xffffff)) ||
	    (type == NVP_EMU_FAULT_ADMIN_BAD_PHASE && count != 0 && arg > 0xffffff)) {
		return -EINVAL;
	}
	pthread_mutex_lock(&c->fault_lock);
	c->fault_req[cat].type = type;
	c->fault_req[cat].count = type == NVP_EMU_FAULT_NONE ? 0 : count;
	c->fault_req[cat].skip = skip;
	c->fault_req[cat].arg = arg;
	__atomic_store_n(&c->fault_pending, c->fault_pending | (1u << cat), __ATOMIC_RELEASE);
	pthread_mutex_unlock(&c->fault_lock);
	return 0;
}

/*
 * The controller thread applies fault requests at the top of an iteration, before it looks
 * at the queues. Waiting for that here makes injection synchronous: a command whose
 * doorbell is rung after this returns is guaranteed to see the fault (without the wait, a
 * thread already past the check would service it unfaulted).
 */
static void
wait_fault_applied(struct emu_ctrlr *c)
{
	uint64_t deadline = nvp_env_get_ticks() + nvp_env_get_ticks_hz();

	while (__atomic_load_n(&c->fault_pending, __ATOMIC_ACQUIRE) != 0) {
		if (nvp_env_get_ticks() > deadline) {
			NVP_WARNLOG("emu %s: controller thread did not take the fault within 1 s",
				    c->opts.name);
			return;
		}
		sched_yield();
	}
}

int
nvp_emu_ctrlr_power_cut(struct nvp_emu_ctrlr *ctrlr, uint32_t seed)
{
	struct emu_ctrlr *c = emu_ctrlr_from_pub(ctrlr);

	if (ctrlr == NULL) {
		return -EINVAL;
	}
	pthread_mutex_lock(&c->fault_lock);
	c->fault_req[EMU_FAULT_CAT_POWER_NOW].type = NVP_EMU_FAULT_POWER_CUT;
	c->fault_req[EMU_FAULT_CAT_POWER_NOW].count = 1;
	c->fault_req[EMU_FAULT_CAT_POWER_NOW].skip = 0;
	c->fault_req[EMU_FAULT_CAT_POWER_NOW].arg = seed;
	__atomic_store_n(&c->fault_pending, c->fault_pending | (1u << EMU_FAULT_CAT_POWER_NOW),
			 __ATOMIC_RELEASE);
	pthread_mutex_unlock(&c->fault_lock);
	if (c->thread_started) {
		wait_fault_applied(c);
	}
	return 0;
}

int
nvp_emu_ctrlr_inject_fault(struct nvp_emu_ctrlr *ctrlr, enum nvp_emu_fault_type type,
			   uint32_t count, uint32_t skip, uint32_t arg)
{
	struct emu_ctrlr *c = emu_ctrlr_from_pub(ctrlr);
	int rc;

	if (ctrlr == NULL) {
		return -EINVAL;
	}
	rc = fault_request(c, type, count, skip, arg);
	if (rc == 0 && c->thread_started) {
		wait_fault_applied(c);
	}
	return rc;
}

/* ---- create / destroy ---- */

static int
ctrlr_init_parts(struct emu_ctrlr *c)
{
	int rc;

	rc = emu_model_init(c);
	if (rc == 0) {
		rc = emu_irq_init(c);
	}
	if (rc == 0) {
		rc = emu_regs_init(c);
	}
	if (rc == 0) {
		rc = emu_queues_init(c);
	}
	if (rc == 0) {
		rc = emu_sgl_init(&c->sgl, (uint32_t)(c->max_xfer / 4096u) + 2);
	}
	if (rc == 0) {
		c->bounce = malloc(EMU_BOUNCE_SIZE);
		rc = c->bounce == NULL ? -ENOMEM : 0;
	}
	for (uint32_t i = 0; rc == 0 && i < c->opts.nn; i++) {
		rc = emu_ns_init(c, &c->ns[i], i + 1, c->opts.lba_size[i]);
		c->nn = rc == 0 ? i + 1 : c->nn;
		if (rc == 0) {
			rc = emu_ns_ftl_init(c, &c->ns[i]);
		}
	}
	return rc;
}

/* Build a controller without a thread or PCI registration (tests use this directly). */
int
emu_ctrlr_alloc(const struct nvp_emu_opts *opts, struct emu_ctrlr **out)
{
	struct emu_ctrlr *c = calloc(1, sizeof(*c));
	int rc;

	if (c == NULL) {
		return -ENOMEM;
	}
	c->opts = *opts;
	c->ticks_hz = nvp_env_get_ticks_hz();
	c->gc_page_ticks = emu_us_to_ticks(c, opts->ftl_gc_us);
	c->db_stride = 4u << opts->dstrd;
	c->page_size = 4096;
	c->max_xfer = opts->mdts ? (4096ull << opts->mdts) : EMU_MAX_XFER_UNLIMITED;
	c->create_ticks = nvp_env_get_ticks();
	pthread_mutex_init(&c->cfg_lock, NULL);
	pthread_mutex_init(&c->fault_lock, NULL);
	c->cntlid = __atomic_fetch_add(&g_next_cntlid, 1, __ATOMIC_RELAXED);
	if (c->cntlid == 0 || c->cntlid >= 0xfff0) { /* 0xFFF0-0xFFFF are reserved */
		__atomic_store_n(&g_next_cntlid, 2, __ATOMIC_RELAXED);
		c->cntlid = 1;
	}
	emu_log_init(c);
	emu_fw_init(c);
	emu_fdp_init(c);
	rc = ctrlr_init_parts(c);
	if (rc != 0) {
		emu_ctrlr_free(c);
		return rc;
	}
	emu_smart_load(c);
	emu_features_reset(c);
	emu_pci_init(c);
	c->state = EMU_STATE_DISABLED;
	if (opts->fault != NVP_EMU_FAULT_NONE) {
		fault_request(c, opts->fault, opts->fault_count, opts->fault_skip, opts->fault_arg);
		emu_fault_sync(c);
	}
	*out = c;
	return 0;
}

void
emu_ctrlr_free(struct emu_ctrlr *c)
{
	if (c == NULL) {
		return;
	}
	for (uint32_t i = 0; i < NVP_EMU_MAX_NS; i++) {
		emu_ftl_destroy(c->ns[i].ftl);
		emu_ns_fini(&c->ns[i]);
	}
	emu_sgl_fini(&c->sgl);
	free(c->bounce);
	emu_fw_fini(c);
	emu_queues_fini(c);
	emu_regs_fini(c);
	emu_model_fini(c);
	emu_irq_fini(c);
	pthread_mutex_destroy(&c->cfg_lock);
	pthread_mutex_destroy(&c->fault_lock);
	free(c);
}

static struct emu_ctrlr *
find_locked(const char *name)
{
	struct emu_ctrlr *c;

	TAILQ_FOREACH (c, &g_emu_ctrlrs, link) {
		if (strcmp(c->opts.name, name) == 0) {
			return c;
		}
	}
	return NULL;
}

static void
pick_name(struct nvp_emu_opts *o)
{
	for (uint32_t i = 0;; i++) {
		snprintf(o->name, sizeof(o->name), "emu%u", i);
		if (find_locked(o->name) == NULL) {
			return;
		}
	}
}

static int
register_function(struct emu_ctrlr *c)
{
	struct nvp_pci_device *d = &c->pci;
	int rc;

	rc = nvp_pci_virtual_addr_alloc(&d->addr);
	if (rc != 0) {
		return rc;
	}
	d->id.class_id = NVP_PCI_CLASS_NVME;
	d->id.vendor_id = EMU_PCI_VID;
	d->id.device_id = EMU_PCI_DID;
	d->id.subvendor_id = EMU_PCI_VID;
	d->id.subdevice_id = EMU_PCI_DID;
	d->numa_node = -1;
	nvp_strlcpy(d->driver, "virtual", sizeof(d->driver));
	d->is_virtual = true;
	nvp_pci_addr_fmt(c->traddr, sizeof(c->traddr), &d->addr);
	rc = nvp_pci_device_register(d);
	c->pci_registered = rc == 0;
	return rc;
}

static int
start_thread(struct emu_ctrlr *c)
{
	int rc = pthread_create(&c->thread, NULL, ctrlr_thread, c);

	if (rc != 0) {
		NVP_ERRLOG("emu %s: cannot start the controller thread: %s", c->opts.name,
			   strerror(rc));
		return -rc;
	}
	c->thread_started = true;
	return 0;
}

static void
stop_thread(struct emu_ctrlr *c)
{
	if (c->thread_started) {
		__atomic_store_n(&c->stop, true, __ATOMIC_RELEASE);
		pthread_join(c->thread, NULL);
		c->thread_started = false;
	}
}

static int
merge_opts(const struct nvp_emu_opts *in, struct nvp_emu_opts *o)
{
	char err[160];
	size_t n;

	nvp_emu_opts_init(o, sizeof(*o));
	n = in->opts_size == 0 || in->opts_size > sizeof(*o) ? sizeof(*o) : in->opts_size;
	memcpy(o, in, n);
	o->opts_size = sizeof(*o);
	if (emu_opts_validate(o, err, sizeof(err)) != 0) {
		NVP_ERRLOG("%s", err);
		return -EINVAL;
	}
	return 0;
}

static int
create_locked(struct nvp_emu_opts *o, struct emu_ctrlr **out)
{
	struct emu_ctrlr *c;
	int rc;

	if (o->name[0] == '\0') {
		pick_name(o);
	} else if (find_locked(o->name) != NULL) {
		NVP_ERRLOG("emu: a controller named '%s' exists; pick another name=", o->name);
		return -EEXIST;
	}
	rc = emu_ctrlr_alloc(o, &c);
	if (rc != 0) {
		return rc;
	}
	rc = register_function(c);
	if (rc == 0) {
		rc = start_thread(c);
	}
	if (rc != 0) {
		if (c->pci_registered) {
			nvp_pci_device_unregister(&c->pci);
		}
		emu_ctrlr_free(c);
		return rc;
	}
	TAILQ_INSERT_TAIL(&g_emu_ctrlrs, c, link);
	*out = c;
	return 0;
}

int
nvp_emu_ctrlr_create(const struct nvp_emu_opts *opts, struct nvp_emu_ctrlr **ctrlr)
{
	struct nvp_emu_opts o;
	struct emu_ctrlr *c = NULL;
	int rc;

	if (opts == NULL || ctrlr == NULL) {
		return -EINVAL;
	}
	if (!nvp_env_is_initialized()) {
		NVP_ERRLOG("emu: the environment is not initialised; call nvp_env_init() first");
		return -EINVAL;
	}
	rc = merge_opts(opts, &o);
	if (rc != 0) {
		return rc;
	}
	pthread_mutex_lock(&g_emu_lock);
	rc = create_locked(&o, &c);
	pthread_mutex_unlock(&g_emu_lock);
	if (rc == 0) {
		NVP_INFOLOG("emu %s: created at %s (%u namespace(s) of %llu bytes, backend %s)",
			    c->opts.name, c->traddr, c->nn, (unsigned long long)c->opts.ns_size,
			    c->ns[0].ops->name);
		*ctrlr = (struct nvp_emu_ctrlr *)(void *)c;
	}
	return rc;
}

int
nvp_emu_ctrlr_destroy(struct nvp_emu_ctrlr *ctrlr)
{
	struct emu_ctrlr *c = emu_ctrlr_from_pub(ctrlr);
	int rc;

	if (c == NULL) {
		return -EINVAL;
	}
	pthread_mutex_lock(&g_emu_lock);
	if (c->pci_registered) {
		rc = nvp_pci_device_unregister(&c->pci);
		if (rc == -EBUSY) {
			pthread_mutex_unlock(&g_emu_lock);
			NVP_ERRLOG(
				"emu %s: cannot destroy: %s is still claimed by a driver; detach "
				"it first",
				c->opts.name, c->traddr);
			return -EBUSY;
		}
		c->pci_registered = false;
	}
	TAILQ_REMOVE(&g_emu_ctrlrs, c, link);
	pthread_mutex_unlock(&g_emu_lock);
	stop_thread(c);
	emu_smart_save(c);
	emu_ctrlr_free(c);
	return 0;
}

struct nvp_emu_ctrlr *
nvp_emu_ctrlr_find(const char *name)
{
	struct emu_ctrlr *c;

	if (name == NULL) {
		return NULL;
	}
	pthread_mutex_lock(&g_emu_lock);
	c = find_locked(name);
	pthread_mutex_unlock(&g_emu_lock);
	return (struct nvp_emu_ctrlr *)(void *)c;
}

const char *
nvp_emu_ctrlr_get_name(const struct nvp_emu_ctrlr *ctrlr)
{
	return ctrlr != NULL ? emu_ctrlr_from_pub(ctrlr)->opts.name : NULL;
}

const struct nvp_pci_addr *
nvp_emu_ctrlr_get_pci_addr(const struct nvp_emu_ctrlr *ctrlr)
{
	return ctrlr != NULL ? &emu_ctrlr_from_pub(ctrlr)->pci.addr : NULL;
}

const char *
nvp_emu_ctrlr_get_traddr(const struct nvp_emu_ctrlr *ctrlr)
{
	return ctrlr != NULL ? emu_ctrlr_from_pub(ctrlr)->traddr : NULL;
}

#define STAT_COPY(dst, src, f) (dst)->f = __atomic_load_n(&(src)->f, __ATOMIC_RELAXED)

int
nvp_emu_ctrlr_get_stats(const struct nvp_emu_ctrlr *ctrlr, struct nvp_emu_stats *stats)
{
	const struct nvp_emu_stats *s;

	if (ctrlr == NULL || stats == NULL || stats->info_size < sizeof(*stats)) {
		return -EINVAL;
	}
	s = &emu_ctrlr_from_pub(ctrlr)->stats;
	STAT_COPY(stats, s, admin_cmds);
	STAT_COPY(stats, s, io_cmds);
	STAT_COPY(stats, s, read_cmds);
	STAT_COPY(stats, s, write_cmds);
	STAT_COPY(stats, s, bytes_read);
	STAT_COPY(stats, s, bytes_written);
	STAT_COPY(stats, s, dma_rejects);
	STAT_COPY(stats, s, invalid_doorbells);
	STAT_COPY(stats, s, aborted_cmds);
	STAT_COPY(stats, s, dropped_cpls);
	STAT_COPY(stats, s, resets);
	STAT_COPY(stats, s, max_sq_depth_seen);
	STAT_COPY(stats, s, ftl_host_pages);
	STAT_COPY(stats, s, ftl_nand_pages);
	STAT_COPY(stats, s, ftl_gc_pages);
	STAT_COPY(stats, s, ftl_erases);
	STAT_COPY(stats, s, ftl_gc_busy_us);
	STAT_COPY(stats, s, stream_writes);
	STAT_COPY(stats, s, placement_writes);
	STAT_COPY(stats, s, timed_cpls);
	STAT_COPY(stats, s, late_ns_sum);
	STAT_COPY(stats, s, late_ns_max);
	STAT_COPY(stats, s, late_over_10us);
	STAT_COPY(stats, s, reads_delayed);
	STAT_COPY(stats, s, writes_throttled);
	STAT_COPY(stats, s, reads_suspended);
	STAT_COPY(stats, s, interrupts);
	STAT_COPY(stats, s, power_cuts);
	STAT_COPY(stats, s, plm_lost_writes);
	STAT_COPY(stats, s, plm_torn_writes);
	STAT_COPY(stats, s, plm_kept_writes);
	return 0;
}

/* ---- the "emu" virtual device provider ---- */

static int
vdev_create(const char *name, const char *args, struct nvp_pci_addr *addr, char *err, size_t errlen)
{
	struct nvp_emu_opts o;
	struct nvp_emu_ctrlr *c;
	int rc;

	nvp_emu_opts_init(&o, sizeof(o));
	if (err != NULL && errlen > 0) {
		err[0] = '\0';
	}
	rc = nvp_emu_opts_parse(&o, args, err, errlen);
	if (rc != 0) {
		return rc;
	}
	if (name != NULL && name[0] != '\0') {
		if (strlen(name) >= sizeof(o.name)) {
			if (err != NULL && errlen > 0) {
				snprintf(err, errlen, "emu: name '%s' is longer than %d characters",
					 name, NVP_EMU_NAME_MAX - 1);
			}
			return -EINVAL;
		}
		nvp_strlcpy(o.name, name, sizeof(o.name));
	}
	rc = nvp_emu_ctrlr_create(&o, &c);
	if (rc != 0) {
		if (err != NULL && errlen > 0) {
			snprintf(err, errlen, "emu: cannot create controller '%s': %s", o.name,
				 rc == -EEXIST ? "the name exists" : strerror(-rc));
		}
		return rc;
	}
	*addr = *nvp_emu_ctrlr_get_pci_addr(c);
	return 0;
}

static int
vdev_destroy(const struct nvp_pci_addr *addr)
{
	struct emu_ctrlr *c, *found = NULL;

	pthread_mutex_lock(&g_emu_lock);
	TAILQ_FOREACH (c, &g_emu_ctrlrs, link) {
		if (nvp_pci_addr_compare(&c->pci.addr, addr) == 0) {
			found = c;
			break;
		}
	}
	pthread_mutex_unlock(&g_emu_lock);
	if (found == NULL) {
		return -ENOENT;
	}
	return nvp_emu_ctrlr_destroy((struct nvp_emu_ctrlr *)(void *)found);
}

/* nvp_env_fini(): every controller's thread ends before DMA memory is freed. */
static void
vdev_quiesce(void)
{
	struct emu_ctrlr *c;

	pthread_mutex_lock(&g_emu_lock);
	TAILQ_FOREACH (c, &g_emu_ctrlrs, link) {
		stop_thread(c);
	}
	pthread_mutex_unlock(&g_emu_lock);
}

static struct nvp_env_vdev_provider g_emu_provider = {
	.name = "emu",
	.create = vdev_create,
	.destroy = vdev_destroy,
	.quiesce = vdev_quiesce,
};

__attribute__((constructor)) static void
emu_provider_register(void)
{
	nvp_env_vdev_provider_register(&g_emu_provider);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queues and the service-time model.
 *
 * A command lives in a slot from fetch to completion. I/O slots are the controller's
 * channels: a command is fetched from an SQ only when a channel is free, so under load
 * commands really wait in the SQ (where Abort can find them). An I/O command executes
 * (moves its data) when fetched; its completion is due at fetch time + the service time
 * and completions are posted in due order (a heap). SQs are served round robin with the
 * arbitration burst (section 4.13). A completion whose CQ is full waits on the held list
 * until the host advances the CQ head doorbell: a CQ is never overrun.
 *
 * Admin commands use a separate small slot pool and execute in order when fetched.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

#define ADMIN_BATCH 16u

static inline uint32_t
db_load(const volatile uint32_t *db)
{
	return __atomic_load_n(db, __ATOMIC_ACQUIRE);
}

/* ---- slots ---- */

static void
slots_reset(struct emu_ctrlr *c)
{
	c->io_free = EMU_NO_SLOT;
	c->admin_free = EMU_NO_SLOT;
	for (uint32_t i = c->nslots; i-- > 0;) {
		struct emu_cmd *s = &c->slots[i];

		s->kind = i < emu_io_slots(c) ? EMU_SLOT_IO : EMU_SLOT_ADMIN;
		if (s->kind == EMU_SLOT_IO) {
			s->next = c->io_free;
			c->io_free = (uint16_t)i;
		} else {
			s->next = c->admin_free;
			c->admin_free = (uint16_t)i;
		}
	}
	c->io_busy = 0;
	c->heap_len = 0;
	c->held_head = EMU_NO_SLOT;
	c->held_tail = EMU_NO_SLOT;
	c->naer = 0;
	c->aborts_outstanding = 0;
}

uint16_t
emu_slot_alloc(struct emu_ctrlr *c, enum emu_slot_kind kind)
{
	uint16_t *head = kind == EMU_SLOT_IO ? &c->io_free : &c->admin_free;
	uint16_t idx = *head;
	struct emu_cmd *s;

	if (idx == EMU_NO_SLOT) {
		return EMU_NO_SLOT;
	}
	s = &c->slots[idx];
	*head = s->next;
	s->next = EMU_NO_SLOT;
	s->flags = 0;
	s->st = EMU_ST_OK;
	s->cdw0 = 0;
	s->due = 0;
	if (kind == EMU_SLOT_IO) {
		c->io_busy++;
	}
	return idx;
}

void
emu_slot_free(struct emu_ctrlr *c, uint16_t idx)
{
	struct emu_cmd *s = &c->slots[idx];

	if (s->kind == EMU_SLOT_IO) {
		s->next = c->io_free;
		c->io_free = idx;
		c->io_busy--;
	} else {
		s->next = c->admin_free;
		c->admin_free = idx;
	}
}

int
emu_queues_init(struct emu_ctrlr *c)
{
	uint32_t nq = c->opts.max_queues + 1;

	c->sqs = calloc(nq, sizeof(*c->sqs));
	c->cqs = calloc(nq, sizeof(*c->cqs));
	c->io_sqs = calloc(nq, sizeof(*c->io_sqs));
	c->nslots = emu_io_slots(c) + EMU_ADMIN_SLOTS;
	c->slots = calloc(c->nslots, sizeof(*c->slots));
	c->heap = calloc(emu_io_slots(c), sizeof(*c->heap));
	if (c->sqs == NULL || c->cqs == NULL || c->io_sqs == NULL || c->slots == NULL ||
	    c->heap == NULL) {
		emu_queues_fini(c);
		return -ENOMEM;
	}
	for (uint32_t q = 0; q < nq; q++) {
		c->sqs[q].qid = (uint16_t)q;
		c->sqs[q].db = emu_db_ptr(c, q, 0);
		c->cqs[q].qid = (uint16_t)q;
		c->cqs[q].db = emu_db_ptr(c, q, 1);
	}
	slots_reset(c);
	return 0;
}

void
emu_queues_fini(struct emu_ctrlr *c)
{
	if (c->sqs != NULL) {
		for (uint32_t q = 0; q <= c->opts.max_queues; q++) {
			free(c->sqs[q].skip);
		}
	}
	free(c->sqs);
	free(c->cqs);
	free(c->io_sqs);
	free(c->slots);
	free(c->heap);
	c->sqs = NULL;
	c->cqs = NULL;
	c->io_sqs = NULL;
	c->slots = NULL;
	c->heap = NULL;
}

/* ---- the due-time heap of in-flight I/O ---- */

static inline bool
heap_less(const struct emu_ctrlr *c, uint32_t a, uint32_t b)
{
	return c->slots[c->heap[a]].due < c->slots[c->heap[b]].due;
}

static void
heap_swap(struct emu_ctrlr *c, uint32_t a, uint32_t b)
{
	uint16_t t = c->heap[a];

	c->heap[a] = c->heap[b];
	c->heap[b] = t;
}

static void
heap_down(struct emu_ctrlr *c, uint32_t i)
{
	while (true) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < c->heap_len && heap_less(c, l, m)) {
			m = l;
		}
		if (r < c->heap_len && heap_less(c, r, m)) {
			m = r;
		}
		if (m == i) {
			return;
		}
		heap_swap(c, i, m);
		i = m;
	}
}

static void
heap_push(struct emu_ctrlr *c, uint16_t idx)
{
	uint32_t i = c->heap_len++;

	c->heap[i] = idx;
	while (i > 0 && heap_less(c, i, (i - 1) / 2)) {
		heap_swap(c, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static uint16_t
heap_pop(struct emu_ctrlr *c)
{
	uint16_t top = c->heap[0];

	c->heap[0] = c->heap[--c->heap_len];
	heap_down(c, 0);
	return top;
}

uint64_t
emu_next_due(const struct emu_ctrlr *c)
{
	return c->heap_len > 0 ? c->slots[c->heap[0]].due : UINT64_MAX;
}

/* ---- completion queues ---- */

uint32_t
emu_cq_free_entries(const struct emu_cq *cq)
{
	uint32_t used = (cq->tail + cq->size - cq->head) % cq->size;

	return cq->size - 1 - used;
}

/* A new CQ head from the host: it may only release entries we posted. */
static void
cq_db_apply(struct emu_ctrlr *c, struct emu_cq *cq, uint32_t v)
{
	uint32_t used = (cq->tail + cq->size - cq->head) % cq->size;

	cq->db_last = v;
	if (v >= cq->size || (v + cq->size - cq->head) % cq->size > used) {
		emu_invalid_doorbell(c, cq->qid, 1, v, EMU_AER_INFO_INVALID_DB_VALUE);
		return;
	}
	cq->head = v;
}

/*
 * The host's latest doorbell value: its shadow doorbell once Doorbell Buffer Config gave
 * us one (the MMIO doorbell only tells us to look, and we look anyway), else MMIO.
 */
static inline uint32_t
db_value(volatile uint32_t *mmio, volatile uint32_t *shadow)
{
	return db_load(shadow != NULL ? shadow : mmio);
}

/*
 * EventIdx (NVMe 1.3 section 5.7): we have seen @v; the host rings MMIO again only when
 * it moves past it. Written after reading the shadow value, as the host writes its
 * shadow value before reading EventIdx.
 */
static inline void
ei_store(volatile uint32_t *ei, uint32_t v)
{
	if (ei != NULL) {
		__atomic_store_n(ei, v, __ATOMIC_RELEASE);
	}
}

static void
cq_refresh_head(struct emu_ctrlr *c, struct emu_cq *cq)
{
	uint32_t v = db_value(cq->db, cq->shadow);

	if (v != cq->db_last) {
		cq_db_apply(c, cq, v);
		ei_store(cq->ei, v);
	}
}

/*
 * Write one completion entry. The phase tag goes last, after a release barrier: the host
 * must never see the new phase with stale contents (section 4.6).
 * \return false if the CQ is full.
 */
/* How a completion entry is written: normally, or wrongly on purpose (fault injection). */
struct cpl_form {
	uint16_t sqhd;
	uint16_t phase_flip; /* 1: write the old phase tag */
};

static bool
cq_post_form(struct emu_ctrlr *c, uint16_t cqid, uint16_t sqid, uint16_t cid, uint32_t cdw0,
	     uint16_t st, const struct cpl_form *form)
{
	struct emu_cq *cq = &c->cqs[cqid];
	struct nvme_cpl *e;
	uint16_t status;

	if (nvp_unlikely(!cq->valid)) {
		return true; /* nowhere to post (queue gone): nothing can be done */
	}
	if (nvp_unlikely(emu_cq_free_entries(cq) == 0)) {
		cq_refresh_head(c, cq);
		if (emu_cq_free_entries(cq) == 0) {
			return false;
		}
	}
	e = &cq->base[cq->tail];
	status = (uint16_t)((cq->phase ^ form->phase_flip) | ((uint16_t)EMU_ST_SC(st) << 1) |
			    ((uint16_t)EMU_ST_SCT(st) << 9) | ((uint16_t)EMU_ST_DNR(st) << 15));
	e->cdw0 = cdw0;
	e->cdw1 = 0;
	e->sqhd = form->sqhd;
	e->sqid = sqid;
	e->cid = cid;
	__atomic_store_n(&e->status_raw, status, __ATOMIC_RELEASE);
	if (++cq->tail == cq->size) {
		cq->tail = 0;
		cq->phase ^= 1;
	}
	if (nvp_unlikely(cq->ien)) {
		emu_irq_raise(c, cq->iv, c->now);
	}
	return true;
}

/* The duplicate dup_cpl left on @cq, if there is room for it now. */
static void
post_late_dup(struct emu_ctrlr *c, uint16_t cqid)
{
	struct emu_cq *cq = &c->cqs[cqid];
	struct cpl_form form = { .sqhd = cq->dup_sqhd, .phase_flip = 0 };

	if (emu_cq_free_entries(cq) > 0) {
		cq->dup_pending = false;
		cq_post_form(c, cqid, cq->dup_sqid, cq->dup_cid, cq->dup_cdw0, cq->dup_st, &form);
		NVP_NOTICELOG("emu %s: completion of cid %u (sq %u) posted a second time on "
			      "purpose, after a later one",
			      c->opts.name, cq->dup_cid, cq->dup_sqid);
	}
}

bool
emu_cq_post(struct emu_ctrlr *c, uint16_t cqid, uint16_t sqid, uint16_t cid, uint32_t cdw0,
	    uint16_t st)
{
	struct cpl_form form = { .sqhd = (uint16_t)c->sqs[sqid].head, .phase_flip = 0 };

	if (!cq_post_form(c, cqid, sqid, cid, cdw0, st, &form)) {
		return false;
	}
	if (nvp_unlikely(c->cqs[cqid].dup_pending)) {
		post_late_dup(c, cqid);
	}
	return true;
}

/* Post a completion the way an injected completion fault says (EMU_SLOT_F_MANGLE). */
static bool
post_mangled(struct emu_ctrlr *c, struct emu_cmd *s, const struct emu_sq *sq)
{
	struct cpl_form form = { .sqhd = (uint16_t)sq->head, .phase_flip = 0 };
	uint16_t cqid = sq->cqid, cid = s->cmd.cid;

	if (s->flags & EMU_SLOT_F_BAD_CID) {
		cid = 0xffff;
	}
	if (s->flags & EMU_SLOT_F_BAD_SQHD) {
		form.sqhd = (uint16_t)(sq->size + 7);
	}
	if (s->flags & EMU_SLOT_F_BAD_PHASE) {
		form.phase_flip = 1;
	}
	if (s->flags & EMU_SLOT_F_WRONG_CQ) {
		cqid = cqid != 0 ? 0 : (c->n_io_sqs > 0 ? c->io_sqs[0]->cqid : 0);
	}
	if (!cq_post_form(c, cqid, s->sqid, cid, s->cdw0, s->st, &form)) {
		return false;
	}
	if (c->cqs[cqid].dup_pending) { /* an earlier copy still waiting: this is "next" */
		post_late_dup(c, cqid);
	}
	if (s->flags & EMU_SLOT_F_DUP) { /* the copy after the next completion on this CQ */
		struct emu_cq *cq = &c->cqs[cqid];

		if (cq->dup_pending) {
			return true; /* no room for the earlier copy yet: this one is not kept */
		}
		cq->dup_pending = true;
		cq->dup_sqid = s->sqid;
		cq->dup_cid = cid;
		cq->dup_st = s->st;
		cq->dup_sqhd = form.sqhd;
		cq->dup_cdw0 = s->cdw0;
	}
	NVP_NOTICELOG("emu %s: completion of cid %u (sq %u) posted wrongly on purpose (flags "
		      "0x%x)",
		      c->opts.name, s->cmd.cid, s->sqid, s->flags);
	return true;
}

static bool
post_slot(struct emu_ctrlr *c, uint16_t idx)
{
	struct emu_cmd *s = &c->slots[idx];
	struct emu_sq *sq = &c->sqs[s->sqid];

	if (nvp_unlikely(s->flags & EMU_SLOT_F_MANGLE)) {
		if (!post_mangled(c, s, sq)) {
			return false;
		}
	} else if (!emu_cq_post(c, sq->cqid, s->sqid, s->cmd.cid, s->cdw0, s->st)) {
		return false;
	}
	if (sq->inflight > 0) {
		sq->inflight--;
	}
	if (s->flags & EMU_SLOT_F_ABORT) {
		c->aborts_outstanding--;
	}
	emu_slot_free(c, idx);
	return true;
}

static void
hold(struct emu_ctrlr *c, uint16_t idx)
{
	struct emu_cmd *s = &c->slots[idx];

	s->next = EMU_NO_SLOT;
	s->flags |= EMU_SLOT_F_HELD;
	if (c->held_tail == EMU_NO_SLOT) {
		c->held_head = idx;
	} else {
		c->slots[c->held_tail].next = idx;
	}
	c->held_tail = idx;
}

/* The command's status is final: log errors, post or hold the completion. */
void
emu_cmd_complete(struct emu_ctrlr *c, uint16_t idx)
{
	struct emu_cmd *s = &c->slots[idx];

	if (nvp_unlikely(EMU_ST_IS_ERR(s->st))) {
		emu_log_error(c, s->sqid, &s->cmd, s->st, 0);
	}
	if (nvp_likely(c->held_head == EMU_NO_SLOT) && post_slot(c, idx)) {
		return;
	}
	hold(c, idx);
}

/* Post held completions whose CQ has room again, oldest first. */
static int
drain_held(struct emu_ctrlr *c)
{
	uint16_t prev = EMU_NO_SLOT, idx = c->held_head;
	int n = 0;

	while (idx != EMU_NO_SLOT) {
		uint16_t next = c->slots[idx].next;

		if (post_slot(c, idx)) {
			if (prev == EMU_NO_SLOT) {
				c->held_head = next;
			} else {
				c->slots[prev].next = next;
			}
			if (c->held_tail == idx) {
				c->held_tail = prev;
			}
			n++;
		} else {
			prev = idx;
		}
		idx = next;
	}
	return n;
}

static int
complete_due(struct emu_ctrlr *c, uint64_t now)
{
	int n = 0;

	while (c->heap_len > 0 && c->slots[c->heap[0]].due <= now) {
		emu_model_note_lateness(c, c->slots[c->heap[0]].due, now);
		emu_cmd_complete(c, heap_pop(c));
		n++;
	}
	return n;
}

/* ---- submission queues ---- */

static void
note_depth(struct emu_ctrlr *c, const struct emu_sq *sq)
{
	uint64_t depth = (sq->tail + sq->size - sq->head) % sq->size + sq->inflight;

	if (depth > __atomic_load_n(&c->stats.max_sq_depth_seen, __ATOMIC_RELAXED)) {
		__atomic_store_n(&c->stats.max_sq_depth_seen, depth, __ATOMIC_RELAXED);
	}
}

static int
sq_db_poll(struct emu_ctrlr *c, struct emu_sq *sq)
{
	uint32_t v = db_value(sq->db, sq->shadow);

	if (nvp_likely(v == sq->db_last)) {
		return 0;
	}
	sq->db_last = v;
	if (nvp_unlikely(v >= sq->size)) {
		emu_invalid_doorbell(c, sq->qid, 0, v, EMU_AER_INFO_INVALID_DB_VALUE);
		return 0;
	}
	if (nvp_unlikely(sq->deleting)) {
		return 0;
	}
	sq->tail = v;
	ei_store(sq->ei, v);
	note_depth(c, sq);
	return 1;
}

/* Execute a fetched I/O command and schedule its completion. */
static void
io_start(struct emu_ctrlr *c, uint16_t idx, uint64_t now)
{
	struct emu_cmd *s = &c->slots[idx];
	uint64_t svc = 0, extra = 0;
	bool drop = false;

	EMU_STAT_ADD(c, io_cmds, 1);
	if (nvp_unlikely(c->cfault != NVP_EMU_FAULT_NONE)) {
		drop = emu_fault_take(c, s, &extra);
	}
	if (nvp_likely(!(s->flags & EMU_SLOT_F_SKIPPED))) {
		c->now = now;
		s->st = emu_io_execute(c, s, &svc);
	}
	if (nvp_unlikely(drop)) {
		EMU_STAT_ADD(c, dropped_cpls, 1);
		c->sqs[s->sqid].inflight--;
		emu_slot_free(c, idx);
		return;
	}
	if (nvp_likely(svc + extra == 0)) {
		emu_cmd_complete(c, idx);
		return;
	}
	s->due = now + svc + extra;
	heap_push(c, idx);
}

static int
sq_fetch_io(struct emu_ctrlr *c, struct emu_sq *sq, uint64_t now, uint32_t budget)
{
	int n = 0;

	while (budget-- > 0 && sq->head != sq->tail && c->io_free != EMU_NO_SLOT &&
	       !c->powered_off) {
		uint32_t pos = sq->head;
		uint16_t idx;

		sq->head = pos + 1 == sq->size ? 0 : pos + 1;
		if (nvp_unlikely(sq->skip[pos])) {
			sq->skip[pos] = 0; /* aborted while waiting: already completed */
			continue;
		}
		idx = emu_slot_alloc(c, EMU_SLOT_IO);
		memcpy(&c->slots[idx].cmd, &sq->base[pos], sizeof(struct nvme_cmd));
		c->slots[idx].sqid = sq->qid;
		sq->inflight++;
		io_start(c, idx, now);
		n++;
	}
	return n;
}

static int
io_fetch(struct emu_ctrlr *c, uint64_t now)
{
	uint32_t n = c->n_io_sqs;
	int work = 0;

	if (n == 0) {
		return 0;
	}
	for (uint32_t i = 0, start = c->rr_next; i < n && c->io_free != EMU_NO_SLOT; i++) {
		uint32_t at = (start + i) % n;
		struct emu_sq *sq = c->io_sqs[at];

		if (sq->head != sq->tail && !sq->deleting) {
			work += sq_fetch_io(c, sq, now, c->burst);
			c->rr_next = (at + 1) % n; /* the next round starts after the last served */
		}
	}
	return work;
}

static int
admin_fetch(struct emu_ctrlr *c)
{
	struct emu_sq *sq = &c->sqs[0];
	int n = 0;

	while (sq->head != sq->tail && n < (int)ADMIN_BATCH && sq->valid) {
		uint32_t pos = sq->head;
		struct emu_cmd *s;
		uint16_t idx;

		if (sq->skip[pos]) {
			sq->skip[pos] = 0;
			sq->head = (pos + 1) % sq->size;
			continue;
		}
		idx = emu_slot_alloc(c, EMU_SLOT_ADMIN);
		if (idx == EMU_NO_SLOT) {
			break;
		}
		s = &c->slots[idx];
		memcpy(&s->cmd, &sq->base[pos], sizeof(struct nvme_cmd));
		sq->head = (pos + 1) % sq->size;
		s->sqid = 0;
		sq->inflight++;
		EMU_STAT_ADD(c, admin_cmds, 1);
		if (emu_admin_execute(c, idx) == EMU_EXEC_DONE) {
			emu_cmd_complete(c, idx);
		}
		n++;
	}
	return n;
}

/* ---- Abort and Delete I/O SQ support ---- */

/*
 * Abort the command @cid if it still waits in SQ @sqid (between head and tail): it
 * completes now with ABORTED_BY_REQUEST and is skipped when its entry is reached.
 * \return 0 if aborted, -ENOENT if not found, -EBUSY if no slot for the completion.
 */
int
emu_sq_abort_waiting(struct emu_ctrlr *c, uint16_t sqid, uint16_t cid)
{
	struct emu_sq *sq;

	if (sqid > c->opts.max_queues || !c->sqs[sqid].valid || c->sqs[sqid].deleting) {
		return -ENOENT;
	}
	sq = &c->sqs[sqid];
	for (uint32_t pos = sq->head; pos != sq->tail; pos = (pos + 1) % sq->size) {
		struct emu_cmd *s;
		uint16_t idx;

		if (sq->skip[pos] || sq->base[pos].cid != cid) {
			continue;
		}
		idx = emu_slot_alloc(c, EMU_SLOT_ADMIN);
		if (idx == EMU_NO_SLOT) {
			return -EBUSY;
		}
		s = &c->slots[idx];
		memcpy(&s->cmd, &sq->base[pos], sizeof(struct nvme_cmd));
		s->sqid = sqid;
		s->st = EMU_ST_RETRY(NVME_SCT_GENERIC, NVME_SC_ABORTED_BY_REQUEST);
		sq->skip[pos] = 1;
		sq->inflight++;
		EMU_STAT_ADD(c, aborted_cmds, 1);
		emu_cmd_complete(c, idx);
		return 0;
	}
	return -ENOENT;
}

/*
 * Start deleting an I/O SQ: commands waiting for their service time and commands still
 * in the SQ complete with ABORTED_SQ_DELETION; the Delete command (@slot) completes
 * when all of them are posted.
 */
void
emu_sq_delete_start(struct emu_ctrlr *c, struct emu_sq *sq, uint16_t slot)
{
	sq->deleting = true;
	sq->delete_slot = slot;
	c->n_deleting++;
	for (uint32_t i = 0; i < c->heap_len; i++) {
		struct emu_cmd *s = &c->slots[c->heap[i]];

		if (s->sqid == sq->qid) {
			s->st = EMU_ST_RETRY(NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION);
			s->due = 0;
		}
	}
	for (uint32_t i = c->heap_len / 2 + 1; i-- > 0;) {
		heap_down(c, i);
	}
}

static void
sq_finish_delete(struct emu_ctrlr *c, struct emu_sq *sq)
{
	uint16_t slot = sq->delete_slot;

	c->cqs[sq->cqid].nsq--;
	free(sq->skip);
	sq->skip = NULL;
	sq->valid = false;
	sq->deleting = false;
	sq->base = NULL;
	*sq->db = 0;
	sq->db_last = 0;
	c->n_deleting--;
	emu_sq_list_rebuild(c);
	emu_cmd_complete(c, slot);
}

static int
sq_drain(struct emu_ctrlr *c, struct emu_sq *sq)
{
	int n = 0;

	while (sq->head != sq->tail) {
		uint32_t pos = sq->head;

		if (sq->skip[pos]) {
			sq->skip[pos] = 0;
		} else if (!emu_cq_post(
				   c, sq->cqid, sq->qid, sq->base[pos].cid, 0,
				   EMU_ST_RETRY(NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION))) {
			break;
		}
		sq->head = (pos + 1) % sq->size;
		n++;
	}
	if (sq->head == sq->tail && sq->inflight == 0) {
		sq_finish_delete(c, sq);
		n++;
	}
	return n;
}

static int
drain_deletes(struct emu_ctrlr *c)
{
	int n = 0;

	for (uint32_t i = 0; i < c->n_io_sqs && c->n_deleting > 0;) {
		struct emu_sq *sq = c->io_sqs[i];
		uint32_t before = c->n_io_sqs;

		if (sq->deleting) {
			n += sq_drain(c, sq);
		}
		if (c->n_io_sqs == before) {
			i++; /* the list shrinks when a deletion finishes */
		}
	}
	return n;
}

/* ---- queue set maintenance ---- */

void
emu_sq_list_rebuild(struct emu_ctrlr *c)
{
	uint32_t n = 0;

	for (uint32_t q = 1; q <= c->opts.max_queues; q++) {
		if (c->sqs[q].valid) {
			c->io_sqs[n++] = &c->sqs[q];
		}
	}
	c->n_io_sqs = n;
	if (c->rr_next >= n) {
		c->rr_next = 0;
	}
}

/* Controller reset: every queue and every command in flight is gone. */
void
emu_queues_reset(struct emu_ctrlr *c)
{
	for (uint32_t q = 0; q <= c->opts.max_queues; q++) {
		struct emu_sq *sq = &c->sqs[q];
		struct emu_cq *cq = &c->cqs[q];

		free(sq->skip);
		memset(sq, 0, sizeof(*sq));
		sq->qid = (uint16_t)q;
		sq->db = emu_db_ptr(c, q, 0);
		*sq->db = 0;
		memset(cq, 0, sizeof(*cq));
		cq->qid = (uint16_t)q;
		cq->db = emu_db_ptr(c, q, 1);
		*cq->db = 0;
	}
	c->n_io_sqs = 0;
	c->n_deleting = 0;
	c->rr_next = 0;
	c->dbbuf_db = c->dbbuf_ei = NULL; /* a reset forgets the doorbell buffers */
	slots_reset(c);
}

/*
 * Shadow doorbells of I/O queue @qid, at the offsets of its doorbells in BAR0 within the
 * Doorbell Buffer Config pages (none beyond a page, none for the admin queue, whose
 * doorbells hosts keep writing to MMIO only).
 */
void
emu_dbbuf_attach(struct emu_ctrlr *c, uint32_t qid)
{
	struct emu_sq *sq = &c->sqs[qid];
	struct emu_cq *cq = &c->cqs[qid];
	uint32_t stride = c->db_stride / (uint32_t)sizeof(uint32_t);
	uint32_t i = 2u * qid * stride;

	sq->shadow = sq->ei = cq->shadow = cq->ei = NULL;
	if (c->dbbuf_db == NULL || qid == 0 ||
	    (uint64_t)(i + stride + 1) * sizeof(uint32_t) > c->page_size) {
		return;
	}
	sq->shadow = &c->dbbuf_db[i];
	sq->ei = &c->dbbuf_ei[i];
	cq->shadow = &c->dbbuf_db[i + stride];
	cq->ei = &c->dbbuf_ei[i + stride];
}

/*
 * Doorbell writes for queues that do not exist, and CQ head values (read lazily on the
 * hot path), are checked here every few hundred polls.
 */
void
emu_db_scan_unused(struct emu_ctrlr *c)
{
	for (uint32_t q = 0; q <= c->opts.max_queues; q++) {
		struct emu_sq *sq = &c->sqs[q];
		struct emu_cq *cq = &c->cqs[q];
		uint32_t v;

		if (!sq->valid && (v = db_load(sq->db)) != 0) {
			*sq->db = 0;
			emu_invalid_doorbell(c, (uint16_t)q, 0, v, EMU_AER_INFO_INVALID_DB_REG);
		}
		if (!cq->valid && (v = db_load(cq->db)) != 0) {
			*cq->db = 0;
			emu_invalid_doorbell(c, (uint16_t)q, 1, v, EMU_AER_INFO_INVALID_DB_REG);
		} else if (cq->valid) {
			cq_refresh_head(c, cq);
		}
	}
}

/* One pass over doorbells, fetch, completion. \return work done. */
int
emu_queue_poll(struct emu_ctrlr *c, uint64_t now)
{
	int work = 0;

	work += sq_db_poll(c, &c->sqs[0]);
	for (uint32_t i = 0; i < c->n_io_sqs; i++) {
		work += sq_db_poll(c, c->io_sqs[i]);
	}
	if (work > 0) {
		/* New commands start their service time when seen, not at @now, read before the
		 * doorbells: a thread preempted in between would complete them early. */
		now = NVP_MAX(now, nvp_env_get_ticks());
	}
	work += admin_fetch(c);
	work += io_fetch(c, now);
	if (nvp_unlikely(c->powered_off)) {
		return work; /* a power cut while fetching: nothing more is completed */
	}
	c->now = now;
	if (c->heap_len > 0) {
		work += complete_due(c, now);
	}
	if (nvp_unlikely(c->held_head != EMU_NO_SLOT)) {
		work += drain_held(c);
	}
	if (nvp_unlikely(c->n_deleting > 0)) {
		work += drain_deletes(c);
	}
	if (nvp_unlikely(c->irq_waiting > 0)) {
		emu_irq_flush(c, now);
	}
	return work;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The I/O threads of a fault-matrix cell: each owns a qpair (raw) or a bdev channel and
 * a range of blocks, keeps FM_QD requests in flight, and judges every block it reads
 * against what it knows was written: the last acknowledged write, or a failed write after
 * it (a failed write may or may not have reached the media). A completion seen twice is
 * a duplicate; a request that never completes is lost (counted by the main thread).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fm.h"
#include "nvpoll/env.h"

#define FM_K 0x9e3779b97f4a7c15ull

uint64_t
fm_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

void
fm_fill(uint8_t *buf, uint32_t lba, uint32_t n, uint32_t gen)
{
	for (uint32_t b = 0; b < n; b++) {
		uint64_t *w = (uint64_t *)(void *)(buf + (size_t)b * FM_BS);
		uint64_t v = (uint64_t)gen << 32 | (lba + b);

		for (uint32_t i = 0; i < FM_BS / 8; i++) {
			w[i] = v ^ (i * FM_K);
		}
	}
}

/*
 * The generation a block holds: 0 if it was never written (the media starts zeroed and
 * generations start at 1: a prefill write may fail), -1 if it is not one whole write of
 * this LBA.
 */
static int64_t
decode(const uint8_t *blk, uint32_t lba)
{
	const uint64_t *w = (const void *)blk;
	uint64_t v = w[0];
	uint32_t z;

	for (z = 0; z < FM_BS / 8 && w[z] == 0; z++) {
	}
	if (z == FM_BS / 8) {
		return 0;
	}

	for (uint32_t i = 1; i < FM_BS / 8; i++) {
		if ((w[i] ^ (i * FM_K)) != v) {
			return -1;
		}
	}
	return (uint32_t)v == lba ? (int64_t)(v >> 32) : -1;
}

static void
judge(struct fm_thread *t, uint32_t lba, const uint8_t *data)
{
	const struct fm_blk *b = &t->blk[lba - t->base];
	int64_t g = decode(data, lba);
	bool ok = g >= 0 && (uint32_t)g == b->good;

	if (b->nmaybe > FM_MAYBE) {
		return; /* too many failed writes since the last good one to say */
	}
	for (uint32_t i = 0; !ok && g >= 0 && i < b->nmaybe; i++) {
		ok = (uint32_t)g == b->maybe[i];
	}
	t->verified++;
	if (!ok) {
		if (t->corrupted++ < 3) {
			fprintf(stderr,
				"fault_matrix: thread %u block %u holds gen %lld, expected %u "
				"(or one of %u failed writes)\n",
				t->idx, lba, (long long)g, b->good, b->nmaybe);
		}
	}
}

static void
note_result(struct fm_thread *t, bool error)
{
	uint64_t now = nvp_env_get_ticks();

	if (error) {
		t->err++;
		t->t_last_err = now;
		t->waiting_ok = true;
	} else {
		t->ok++;
		if (t->waiting_ok) {
			t->waiting_ok = false;
			t->t_ok_after_err = now;
		}
	}
}

/* A Flush came back: what was acknowledged before it was sent is durable, if it succeeded. */
static void
flush_done(struct fm_thread *t, bool error)
{
	t->flushing = false;
	if (error) {
		return;
	}
	t->flushes++;
	for (uint32_t i = 0; i < t->nblk; i++) {
		t->blk[i].durable = t->blk[i].snap;
	}
}

static void
io_done(void *arg, const struct nvme_cpl *cpl)
{
	struct fm_slot *s = arg;
	struct fm_thread *t = s->t;
	bool error = nvme_cpl_is_error(cpl);

	if (atomic_fetch_add(&s->calls, 1) != 0 || !s->busy) {
		t->dup++;
		return;
	}
	note_result(t, error);
	if (error && t->err == 1) {
		fprintf(stderr,
			"fault_matrix: thread %u: first error: %s, sct 0x%x sc 0x%02x dnr %u\n",
			t->idx,
			s->flush    ? "flush" :
			s->gen != 0 ? "write" :
				      "read",
			cpl->status.sct, cpl->status.sc, cpl->status.dnr);
	}
	if (s->flush) {
		flush_done(t, error);
		s->busy = false;
		return;
	}
	for (uint32_t i = 0; i < s->n; i++) {
		struct fm_blk *b = &t->blk[s->lba + i - t->base];

		b->busy = false;
		if (s->gen == 0) {
			if (!error) {
				judge(t, s->lba + i, s->buf + (size_t)i * FM_BS);
			}
		} else if (!error) {
			b->good = s->gen;
			b->nmaybe = 0;
		} else if (b->nmaybe < FM_MAYBE) {
			b->maybe[b->nmaybe++] = s->gen;
		} else {
			b->nmaybe = FM_MAYBE + 1;
		}
	}
	if (s->gen != 0 && !error) {
		t->acked_since_flush++;
	}
	s->busy = false;
}

static int
poll_once(struct fm_thread *t)
{
	if (t->waiter != NULL) {
		return nvp_poll_waiter_wait(t->waiter);
	}
	return t->cell->bdev ? nvp_bdev_channel_poll(t->ch) :
			       nvp_nvme_qpair_process_completions(t->qpair, 0);
}

int
fm_poll(struct fm_thread *t)
{
	return poll_once(t);
}

static int
issue(struct fm_thread *t, struct fm_slot *s)
{
	struct fm_cell *c = t->cell;

	if (s->flush) {
		return c->bdev ?
			       nvp_bdev_flush_blocks(t->desc, t->ch, 0, c->num_blocks, io_done, s) :
			       nvp_nvme_ns_cmd_flush(c->ns, t->qpair, io_done, s);
	}
	if (s->gen != 0) {
		fm_fill(s->buf, s->lba, s->n, s->gen);
		return c->bdev ? nvp_bdev_write_blocks(t->desc, t->ch, s->buf, s->lba, s->n, 0,
						       io_done, s) :
				 nvp_nvme_ns_cmd_write(c->ns, t->qpair, s->buf, s->lba, s->n,
						       io_done, s, 0);
	}
	return c->bdev ? nvp_bdev_read_blocks(t->desc, t->ch, s->buf, s->lba, s->n, io_done, s) :
			 nvp_nvme_ns_cmd_read(c->ns, t->qpair, s->buf, s->lba, s->n, io_done, s, 0);
}

/* A random free range of this thread's blocks. */
static bool
pick(struct fm_thread *t, uint32_t *lba, uint32_t *n)
{
	for (int tries = 0; tries < 8; tries++) {
		uint32_t l = (uint32_t)(fm_rand(&t->rng) % t->nblk);
		uint32_t k = 1 + (uint32_t)(fm_rand(&t->rng) % FM_MAX_BLKS), i;

		k = l + k > t->nblk ? t->nblk - l : k;
		for (i = 0; i < k && !t->blk[l + i].busy; i++) {
		}
		if (i == k) {
			*lba = t->base + l;
			*n = k;
			return true;
		}
	}
	return false;
}

static bool
want_write(struct fm_thread *t)
{
	switch (t->cell->workload) {
	case FM_RANDREAD:
		return false;
	case FM_RANDWRITE:
		return true;
	default:
		return (fm_rand(&t->rng) & 1) != 0;
	}
}

/*
 * Send a Flush from free slot @s: what each block holds acknowledged now becomes durable
 * when it succeeds. One in flight per thread. \return 0 or the submit's -errno.
 */
static int
flush_submit(struct fm_thread *t, struct fm_slot *s)
{
	int rc;

	for (uint32_t i = 0; i < t->nblk; i++) {
		t->blk[i].snap = t->blk[i].good;
	}
	s->flush = true;
	s->n = 0;
	atomic_store(&s->calls, 0);
	s->busy = true;
	rc = issue(t, s);
	if (rc != 0) {
		s->busy = false;
		s->flush = false;
		return rc;
	}
	t->flushing = true;
	t->acked_since_flush = 0;
	t->issued++;
	return 0;
}

/* Fill free slots. \return false if the driver refused a request (stop for this round). */
static bool
submit_free(struct fm_thread *t)
{
	for (uint32_t i = 0; i < FM_QD; i++) {
		struct fm_slot *s = &t->slots[i];
		int rc;

		if (s->busy) {
			continue;
		}
		if (!t->flushing && t->acked_since_flush >= FM_FLUSH_EVERY) {
			if (flush_submit(t, s) != 0) {
				t->refused++;
				return false;
			}
			continue;
		}
		if (!pick(t, &s->lba, &s->n)) {
			return true;
		}
		s->flush = false;
		s->gen = want_write(t) ? ++t->next_gen : 0;
		atomic_store(&s->calls, 0);
		s->busy = true;
		for (uint32_t b = 0; b < s->n; b++) {
			t->blk[s->lba + b - t->base].busy = true;
		}
		rc = issue(t, s);
		if (rc != 0) {
			s->busy = false;
			for (uint32_t b = 0; b < s->n; b++) {
				t->blk[s->lba + b - t->base].busy = false;
			}
			t->refused++;
			return false;
		}
		t->issued++;
		for (uint32_t b = 0; b < s->n && s->gen != 0; b++) {
			t->blk[s->lba + b - t->base].issued = s->gen;
		}
	}
	return true;
}

bool
fm_failed(const struct fm_cell *c)
{
	return nvp_nvme_ctrlr_is_failed(c->ctrlr) ||
	       (c->backend != NULL && nvp_nvme_ctrlr_is_failed(c->backend));
}

uint32_t
fm_thread_outstanding(const struct fm_thread *t)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < FM_QD; i++) {
		n += t->slots[i].busy;
	}
	return n;
}

/* Wait here while the main thread resets the controller. */
void
fm_park_point(struct fm_thread *t)
{
	struct fm_cell *c = t->cell;

	if (!atomic_load(&c->park)) {
		return;
	}
	atomic_store(&t->parked, true);
	while (atomic_load(&c->park)) {
		usleep(100);
	}
	atomic_store(&t->parked, false);
}

void *
fm_thread_main(void *arg)
{
	struct fm_thread *t = arg;
	struct fm_cell *c = t->cell;
	uint64_t hz = nvp_env_get_ticks_hz(), deadline;

	while (!atomic_load(&c->stop)) {
		fm_park_point(t);
		if (poll_once(t) == -ENXIO) {
			/* A failed controller is the supervisor's to judge; a failed qpair on a
			 * live one (its queues could not be re-created) needs a reset. */
			if (nvp_nvme_ctrlr_is_failed(c->ctrlr)) {
				atomic_store(&c->dead, true);
			} else {
				atomic_store(&c->want_reset, true);
			}
		}
		/* a failed controller fails every request at once: wait for the reset as an
		 * application would, instead of spinning on errors */
		if (fm_failed(c)) {
			usleep(1000);
		}
		if (!submit_free(t)) {
			sched_yield();
		}
	}
	/* Drain: every request must come back (bounded: a lost one is counted, not waited
	 * for forever). Recovery by timeout + abort takes a few timeouts at most. */
	deadline = nvp_env_get_ticks() + hz * (10 + 4ull * c->timeout_ms / 1000);
	while (fm_thread_outstanding(t) > 0 && nvp_env_get_ticks() < deadline) {
		fm_park_point(t);
		poll_once(t);
	}
	return NULL;
}

/* Synchronous helper for prefill and verification: one request, polled to the end. */
static int
sync_io(struct fm_thread *t, struct fm_slot *s, uint32_t lba, uint32_t gen)
{
	uint64_t deadline = nvp_env_get_ticks() + nvp_env_get_ticks_hz() * 10;
	int rc;

	s->lba = lba;
	s->n = 1;
	s->gen = gen;
	s->flush = false;
	atomic_store(&s->calls, 0);
	s->busy = true;
	rc = issue(t, s);
	if (rc != 0) {
		s->busy = false;
		return rc;
	}
	while (s->busy && nvp_env_get_ticks() < deadline) {
		poll_once(t);
	}
	return s->busy ? -ETIMEDOUT : 0;
}

/* Write every block once (generation 1 of the cell), before the fault. */
int
fm_prefill(struct fm_thread *t)
{
	int rc;

	for (uint32_t i = 0; i < t->nblk; i++) {
		uint32_t gen = ++t->next_gen;
		rc = sync_io(t, &t->slots[0], t->base + i, gen);
		if (rc != 0) {
			return rc;
		}
		t->blk[i].issued = gen;
	}
	/* a Flush that failed (a timeout on a loaded host) is sent again, a few times */
	for (int tries = 0; (rc = fm_flush_sync(t)) != 0 && tries < 5; tries++) {
		usleep(10 * 1000);
	}
	if (rc != 0) {
		fprintf(stderr, "fault_matrix: thread %u: prefill's Flush failed: %s\n", t->idx,
			strerror(-rc));
		return rc;
	}
	/* A prefill write that failed (a timeout on a starved machine) is not the cell's
	 * error, nor its recovery. */
	t->issued = t->ok = t->err = 0;
	t->t_last_err = t->t_ok_after_err = 0;
	t->waiting_ok = false;
	return 0;
}

/* Read every block back and judge it (after the run, on a working controller). */
void
fm_verify_all(struct fm_thread *t)
{
	for (uint32_t i = 0; i < t->nblk; i++) {
		if (t->blk[i].busy) {
			continue; /* its request was lost: counted elsewhere */
		}
		/* An error now (a timeout on a loaded host, a device still coming back) is
		 * retried every 100 ms, as an application would, for 2 s: then the qpair is
		 * not healthy and the rest stays unverified. */
		int tries = 0, rc;
		uint64_t err;

		for (;;) {
			err = t->err;
			rc = sync_io(t, &t->slots[0], t->base + i, 0);
			if (rc != 0 || t->err == err || ++tries == 20) {
				break;
			}
			usleep(100 * 1000);
			poll_once(t);
		}
		if (rc != 0 || t->err != err) {
			fprintf(stderr,
				"fault_matrix: thread %u: read-back stopped at block %u of %u (%s)\n",
				t->idx, i, t->nblk, rc != 0 ? strerror(-rc) : "error status");
			break;
		}
	}
}

/* A Flush, polled to the end: what every block holds now is durable. */
int
fm_flush_sync(struct fm_thread *t)
{
	struct fm_slot *s = &t->slots[0];
	uint64_t deadline = nvp_env_get_ticks() + nvp_env_get_ticks_hz() * 10;
	uint64_t flushes = t->flushes;
	int rc = flush_submit(t, s);

	while (rc == 0 && s->busy && nvp_env_get_ticks() < deadline) {
		poll_once(t);
	}
	if (rc != 0) {
		return rc;
	}
	return s->busy ? -ETIMEDOUT : t->flushes != flushes ? 0 : -EIO;
}

struct raw_wait {
	bool done, error;
};

static void
raw_done(void *arg, const struct nvme_cpl *cpl)
{
	struct raw_wait *w = arg;

	w->error = nvme_cpl_is_error(cpl);
	w->done = true;
}

/* One block read on a qpair of the caller's, polled to the end (10 s at most). */
static int
raw_read(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, uint8_t *buf, uint32_t lba)
{
	uint64_t deadline = nvp_env_get_ticks() + nvp_env_get_ticks_hz() * 10;
	struct raw_wait w = { .done = false };
	int rc = nvp_nvme_ns_cmd_read(ns, qpair, buf, lba, 1, raw_done, &w, 0);

	while (rc == 0 && !w.done && nvp_env_get_ticks() < deadline) {
		if (nvp_nvme_qpair_process_completions(qpair, 0) < 0) {
			return -ENXIO;
		}
	}
	if (rc != 0) {
		return rc;
	}
	return !w.done ? -ETIMEDOUT : w.error ? -EIO : 0;
}

/*
 * After a power cut, on the controller powered on again (@ns, @qpair: the caller's, on
 * this thread): every block must hold what it held when the last Flush that succeeded was
 * sent, or a write sent after that (the generations of a thread only grow). A block with
 * no write sent since must hold exactly that. Counts into verified and corrupted.
 */
void
fm_verify_after_power_cut(struct fm_thread *t, struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair)
{
	uint8_t *buf = t->slots[0].buf;

	for (uint32_t i = 0; i < t->nblk; i++) {
		const struct fm_blk *b = &t->blk[i];
		int64_t g;
		bool ok;

		if (raw_read(ns, qpair, buf, t->base + i) != 0) {
			t->unread++;
			continue;
		}
		g = decode(buf, t->base + i);
		ok = b->issued == b->durable ? g == b->durable : g >= b->durable && g <= b->issued;
		t->verified++;
		if (!ok && t->corrupted++ < 3) {
			fprintf(stderr,
				"fault_matrix: after the power cut thread %u block %u holds gen "
				"%lld, flushed %u, last sent %u\n",
				t->idx, t->base + i, (long long)g, b->durable, b->issued);
		}
	}
}

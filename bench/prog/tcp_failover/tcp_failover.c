/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_tcp_failover: bench/tcp_failover's program. An NVMe/TCP host with the controller's
 * reconnect options (ctrlr_loss_timeout_sec, reconnect_delay_sec, fast_io_fail_timeout_sec)
 * runs verified I/O against `nvp serve` serving a file-backed software controller in
 * another process (tf_target.c), and kills that process (SIGKILL) at random points of
 * the I/O, restarting it on the same port and the same file after a random time.
 *
 *   nvp_tcp_failover [--kills N] [--seed S] [--qd N] [--blocks N] [--gap-ms MIN,MAX]
 *                    [--down-ms MAX] [--loss-s S] [--delay-s S] [--fast-fail-s S]
 *                    [--nvp PATH] [--ram] [--flips N]
 *
 * One thread does everything, as an application that owns one qpair: it polls the admin
 * queue (which drives the reconnect) and its qpair, and keeps --qd requests of 1 to 4
 * blocks of 4 KiB in flight over --blocks blocks; writes (half of them) go to the first
 * three quarters, reads anywhere, so that blocks never written are read too (they must
 * read as zeroes). A write's blocks hold a pattern of their LBA and the write's generation;
 * a read is judged against what the host knows: the last acknowledged write, or a write
 * that failed after it (it may or may not have landed). Counted: lost (a block holds an
 * older generation than its last acknowledged write, or zeroes after one), corrupted (not
 * a whole write of this LBA, or a generation never written there), duplicated
 * completions, errors, and requests that never completed (stuck). After the last kill,
 * the I/O drains and every block is read back once more.
 *
 * Per kill it prints
 *   kill i=N at_s=T down_ms=D outage_ms=O loss_ms=L reconnect_ms=R inflight=Q errors=E
 * down_ms: the pause chosen before restarting; outage_ms: from the kill to the restarted
 * target printing its transport ID (it listens); loss_ms: to the host seeing the loss
 * (nvp_nvme_ctrlr_is_reconnecting()); reconnect_ms: to the first good completion after
 * the controller stopped reconnecting (-1: never); errors: completions with an error in
 * between. At the end one line:
 *   result seed=S kills=N issued=N ok=N errors=N path_errors=N dup=N stuck=N lost=N
 *   corrupted=N verified=N unwritten_verified=N readback=N starts=N failed=0|1
 * --ram serves a RAM-backed controller instead, whose data die with the process: the
 * control, which must report lost blocks (or the judging proves nothing).
 *
 * --flips N runs the path flips instead of the kills (tf_paths.c): the target is this
 * process's, two loopback listeners of one subsystem (two paths, both ANA optimized) in
 * front of a RAM-backed software controller, and the same verified I/O goes through a
 * multipath controller (failover policy: one path at a time). N times, at a random point,
 * the path the I/O uses is flipped: alternately made ANA inaccessible (with the change
 * notice) or killed (connects refused, its connections reset); once the I/O has moved, the
 * path is put back and awaited. Per flip it prints
 *   flip i=N kind=ana|kill from=P at_s=T failover_ms=F moved=0|1 restore_ms=R inflight=Q
 *        errors=E
 * failover_ms: from the flip to the first good completion of a request sent after it (one
 * the flipped path cannot have served: it answers those with an ANA status or is gone),
 * -1 never; moved: the other path got commands after the flip; restore_ms: to the host
 * seeing the flipped path usable again. Then the result line, and
 *   multipath path0_ios=N path1_ios=N path_errors=N retries=N no_path_waits=N
 * (the path errors the layer met and sent again: the caller sees none of them).
 * Exit 0 when it ran (whatever it found), 1 set-up failure, 2 usage.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <libgen.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nvpoll/env.h"
#include "nvpoll/nvme.h"
#include "nvpoll/nvme_mpath.h"
#include "nvpoll/util.h"
#include "tf.h"

#define TF_BS 4096u
#define TF_MAX_QD 64u
#define TF_MAX_BLKS 4u
#define TF_MAYBE 4u
#define TF_MAX_KILLS 1000u
#define TF_MAX_FLIPS 1000u
#define TF_RECONNECT_MS 200u /* --flips: a killed path is tried again this often */
#define TF_K 0x9e3779b97f4a7c15ull
#define TF_NQN "nqn.2026-01.io.nvpoll:serve"

struct tf;

struct tf_blk {
	uint32_t good;            /* generation of the last acknowledged write (0: none) */
	uint32_t maybe[TF_MAYBE]; /* failed writes since: they may or may not have landed */
	uint8_t nmaybe;           /* TF_MAYBE + 1: too many to judge */
	bool busy;
};

struct tf_slot {
	struct tf *f;
	uint8_t *buf;
	uint32_t lba, n, gen; /* gen 0: a read */
	uint32_t calls;       /* completions seen: must end at exactly 1 */
	uint64_t t_issue;     /* ticks */
	bool busy;
};

struct tf_kill {
	uint64_t at, up, loss, back; /* ticks; 0: not yet */
	uint32_t down_ms, inflight;
	uint64_t err_at; /* errors when it was killed */
	uint64_t errors;
};

/* A path flip (--flips): path @from made inaccessible or killed under the I/O. */
struct tf_flip {
	uint64_t at, back, restored; /* ticks; 0: not yet */
	uint32_t from, inflight;
	bool kill;  /* the path killed; else its ANA state made inaccessible */
	bool moved; /* the other path got commands after the flip */
	uint64_t err_at, errors;
};

struct tf {
	/* options */
	uint32_t kills, qd, nblk, gap_min_ms, gap_max_ms, down_max_ms;
	int32_t loss_s;
	uint32_t delay_s, fast_s;
	uint64_t seed;
	bool ram;       /* the control: a RAM-backed controller, whose data die with it */
	uint32_t flips; /* the path-flip run instead of the kills: this many flips */
	char dir[64];
	/* objects */
	struct tf_target tgt;
	struct nvp_nvme_ctrlr *ctrlr;
	struct nvp_nvme_ns *ns;
	struct nvp_nvme_qpair *qpair;
	struct tf_paths paths;         /* --flips: the target's two paths, the host's mpath */
	struct nvp_nvme_mpath_io *mio; /* --flips: the I/O goes through it, not qpair */
	struct tf_blk *blk;
	struct tf_slot slots[TF_MAX_QD];
	/* state */
	uint64_t rng, hz;
	uint32_t next_gen;
	bool submitting;
	struct tf_kill kill[TF_MAX_KILLS];
	uint32_t nkills;        /* kills done */
	struct tf_kill *active; /* the kill whose reconnect is awaited, or NULL */
	struct tf_flip flip[TF_MAX_FLIPS];
	uint32_t nflips;
	struct tf_flip *flipping; /* the flip whose failover is awaited, or NULL */
	/* counters */
	uint64_t issued, ok, err, path_err, dup, lost, corrupted, verified, unwritten, refused;
	uint64_t readback;
};

static uint64_t
rnd(struct tf *f)
{
	f->rng ^= f->rng << 13;
	f->rng ^= f->rng >> 7;
	f->rng ^= f->rng << 17;
	return f->rng;
}

static uint32_t
rnd_range(struct tf *f, uint32_t lo, uint32_t hi)
{
	return hi <= lo ? lo : lo + (uint32_t)(rnd(f) % (hi - lo + 1));
}

static uint64_t
ms_ticks(const struct tf *f, uint64_t ms)
{
	return f->hz * ms / 1000u;
}

static double
ticks_ms(const struct tf *f, uint64_t t)
{
	return (double)t * 1e3 / (double)f->hz;
}

static void
fill(uint8_t *buf, uint32_t lba, uint32_t n, uint32_t gen)
{
	for (uint32_t b = 0; b < n; b++) {
		uint64_t *w = (uint64_t *)(void *)(buf + (size_t)b * TF_BS);
		uint64_t v = (uint64_t)gen << 32 | (lba + b);

		for (uint32_t i = 0; i < TF_BS / 8; i++) {
			w[i] = v ^ (i * TF_K);
		}
	}
}

/* The generation a block holds: 0 all zeroes (never written), -1 not one whole write of
 * this LBA. */
static int64_t
decode(const uint8_t *blk, uint32_t lba)
{
	const uint64_t *w = (const void *)blk;
	uint32_t z;

	for (z = 0; z < TF_BS / 8 && w[z] == 0; z++) {
	}
	if (z == TF_BS / 8) {
		return 0;
	}
	for (uint32_t i = 1; i < TF_BS / 8; i++) {
		if ((w[i] ^ (i * TF_K)) != w[0]) {
			return -1;
		}
	}
	return (uint32_t)w[0] == lba ? (int64_t)(w[0] >> 32) : -1;
}

/* A block read back: what the host knows it may hold, or lost, or corrupted. */
static void
judge(struct tf *f, uint32_t lba, const uint8_t *data)
{
	const struct tf_blk *b = &f->blk[lba];
	int64_t g = decode(data, lba);
	bool ok = g >= 0 && (uint32_t)g == b->good;

	if (b->nmaybe > TF_MAYBE) {
		return;
	}
	for (uint32_t i = 0; !ok && g >= 0 && i < b->nmaybe; i++) {
		ok = (uint32_t)g == b->maybe[i];
	}
	f->verified++;
	if (b->good == 0 && b->nmaybe == 0) {
		f->unwritten++;
	}
	if (ok) {
		return;
	}
	if (g >= 0 && (uint32_t)g < b->good) {
		if (f->lost++ < 3) {
			fprintf(stderr,
				"tcp_failover: block %u holds gen %lld, older than its last "
				"acknowledged write %u: lost\n",
				lba, (long long)g, b->good);
		}
	} else if (f->corrupted++ < 3) {
		fprintf(stderr,
			"tcp_failover: block %u holds %s%lld, expected gen %u (or one of %u failed "
			"writes): corrupted\n",
			lba, g < 0 ? "no whole write, " : "gen ", (long long)g, b->good, b->nmaybe);
	}
}

static void
io_done(void *arg, const struct nvme_cpl *cpl)
{
	struct tf_slot *s = arg;
	struct tf *f = s->f;
	bool error = nvme_cpl_is_error(cpl);
	uint64_t now;

	if (s->calls++ != 0 || !s->busy) {
		f->dup++;
		return;
	}
	s->busy = false;
	if (error) {
		f->err++;
		if (cpl->status.sct == NVME_SCT_PATH) {
			f->path_err++;
		}
	} else {
		f->ok++;
		/* A request sent after the flip cannot have been served by the flipped path (it
		 * answers with an ANA status, or is gone): its good completion is the first I/O
		 * done on the other path that the flip can be charged with. */
		if (f->flipping != NULL && f->flipping->back == 0 &&
		    s->t_issue >= f->flipping->at) {
			f->flipping->back = nvp_env_get_ticks();
		}
		/* the first good completion once the host has seen the loss and reconnected */
		if (f->active != NULL && f->active->loss != 0 && f->active->back == 0 &&
		    !nvp_nvme_ctrlr_is_reconnecting(f->ctrlr)) {
			now = nvp_env_get_ticks();
			f->active->back = now;
		}
	}
	for (uint32_t i = 0; i < s->n; i++) {
		struct tf_blk *b = &f->blk[s->lba + i];

		b->busy = false;
		if (s->gen == 0) {
			if (!error) {
				judge(f, s->lba + i, s->buf + (size_t)i * TF_BS);
			}
		} else if (!error) {
			b->good = s->gen;
			b->nmaybe = 0;
		} else if (b->nmaybe < TF_MAYBE) {
			b->maybe[b->nmaybe++] = s->gen;
		} else {
			b->nmaybe = TF_MAYBE + 1;
		}
	}
}

/* A random range of free blocks: writes in the first three quarters, reads anywhere. */
static bool
pick(struct tf *f, bool write, uint32_t *lba, uint32_t *n)
{
	uint32_t span = write ? f->nblk * 3 / 4 : f->nblk;

	for (int tries = 0; tries < 8; tries++) {
		uint32_t l = (uint32_t)(rnd(f) % span), k = rnd_range(f, 1, TF_MAX_BLKS), i;

		k = l + k > span ? span - l : k;
		for (i = 0; i < k && !f->blk[l + i].busy; i++) {
		}
		if (i == k) {
			*lba = l;
			*n = k;
			return true;
		}
	}
	return false;
}

static int
issue(struct tf *f, struct tf_slot *s)
{
	int rc;

	s->calls = 0;
	s->busy = true;
	s->t_issue = nvp_env_get_ticks();
	for (uint32_t b = 0; b < s->n; b++) {
		f->blk[s->lba + b].busy = true;
	}
	if (s->gen != 0) {
		fill(s->buf, s->lba, s->n, s->gen);
		rc = f->mio != NULL ?
			     nvp_nvme_mpath_cmd_write(f->mio, s->buf, s->lba, s->n, io_done, s, 0) :
			     nvp_nvme_ns_cmd_write(f->ns, f->qpair, s->buf, s->lba, s->n, io_done,
						   s, 0);
	} else {
		memset(s->buf, 0xa5, (size_t)s->n * TF_BS); /* a read that moves nothing fails */
		rc = f->mio != NULL ?
			     nvp_nvme_mpath_cmd_read(f->mio, s->buf, s->lba, s->n, io_done, s, 0) :
			     nvp_nvme_ns_cmd_read(f->ns, f->qpair, s->buf, s->lba, s->n, io_done, s,
						  0);
	}
	if (rc != 0) {
		s->busy = false;
		for (uint32_t b = 0; b < s->n; b++) {
			f->blk[s->lba + b].busy = false;
		}
		f->refused++;
		return rc;
	}
	f->issued++;
	return 0;
}

static void
submit_free(struct tf *f)
{
	for (uint32_t i = 0; i < f->qd && f->submitting; i++) {
		struct tf_slot *s = &f->slots[i];
		bool write = (rnd(f) & 1) != 0;

		if (s->busy) {
			continue;
		}
		if (!pick(f, write, &s->lba, &s->n)) {
			return;
		}
		s->gen = write ? ++f->next_gen : 0;
		if (issue(f, s) != 0) {
			return;
		}
	}
}

static uint32_t
outstanding(const struct tf *f)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < f->qd; i++) {
		n += f->slots[i].busy ? 1u : 0u;
	}
	return n;
}

/* One round of the application: the admin poll (it drives the reconnect), the I/O poll,
 * free slots refilled. \return false once the controller is failed for good. */
static bool
pump(struct tf *f)
{
	if (f->mio != NULL) {
		(void)nvp_nvme_mpath_process_admin_completions(f->paths.mp);
		(void)nvp_nvme_mpath_io_process_completions(f->mio);
		submit_free(f);
		return true;
	}
	(void)nvp_nvme_ctrlr_process_admin_completions(f->ctrlr);
	(void)nvp_nvme_qpair_process_completions(f->qpair, 0);
	if (f->active != NULL && f->active->loss == 0 && nvp_nvme_ctrlr_is_reconnecting(f->ctrlr)) {
		f->active->loss = nvp_env_get_ticks();
	}
	if (nvp_nvme_ctrlr_is_failed(f->ctrlr)) {
		return false;
	}
	submit_free(f);
	return true;
}

/* Pump until @until (ticks). \return false if the controller failed. */
static bool
pump_until(struct tf *f, uint64_t until)
{
	while (nvp_env_get_ticks() < until) {
		if (!pump(f)) {
			return false;
		}
	}
	return true;
}

/* Wait for the (re)started target to listen, pumping. \return 0 or -errno. */
static int
target_wait(struct tf *f, bool io)
{
	uint64_t end = nvp_env_get_ticks() + f->hz * 30, next = 0;
	int rc;

	for (;;) {
		uint64_t now = nvp_env_get_ticks();

		if (now >= end) {
			fprintf(stderr,
				"tcp_failover: the target did not listen within 30 s (%s)\n",
				f->tgt.log);
			return -ETIMEDOUT;
		}
		if (io && !pump(f)) {
			return -ENXIO;
		}
		if (now < next) {
			continue;
		}
		next = now + ms_ticks(f, 2);
		rc = tf_target_ready(&f->tgt);
		if (rc == 1) {
			return 0;
		}
		if (rc < 0) {
			/* it exited (the port still held?): its log says; try again */
			if (f->tgt.starts > f->nkills + 20) {
				fprintf(stderr, "tcp_failover: the target keeps exiting; see %s\n",
					f->tgt.log);
				return rc;
			}
			usleep(10000);
			rc = tf_target_spawn(&f->tgt);
			if (rc != 0) {
				return rc;
			}
		}
	}
}

/*
 * One kill: SIGKILL at a random point of the I/O, a random pause, a restart on the same
 * port and file, then I/O until the first good completion after the reconnect (or the
 * loss timeout).
 */
static int
one_kill(struct tf *f, struct tf_kill *k)
{
	uint64_t end;
	int rc;

	k->inflight = outstanding(f);
	k->err_at = f->err;
	f->active = k;
	tf_target_kill(&f->tgt, SIGKILL);
	k->at = nvp_env_get_ticks();
	k->down_ms = rnd_range(f, 0, f->down_max_ms);
	if (!pump_until(f, k->at + ms_ticks(f, k->down_ms))) {
		return -ENXIO;
	}
	rc = tf_target_spawn(&f->tgt);
	if (rc == 0) {
		rc = target_wait(f, true);
	}
	if (rc != 0) {
		return rc;
	}
	k->up = nvp_env_get_ticks();
	end = k->at + f->hz * (uint64_t)(f->loss_s > 0 ? f->loss_s + 5 : 60);
	while (k->back == 0 && nvp_env_get_ticks() < end) {
		if (!pump(f)) {
			break;
		}
	}
	k->errors = f->err - k->err_at;
	f->active = NULL;
	return 0;
}

static void
print_kill(const struct tf *f, uint32_t i, const struct tf_kill *k, uint64_t t0)
{
	printf("kill i=%u at_s=%.2f down_ms=%u outage_ms=%.1f loss_ms=%.1f reconnect_ms=%.1f "
	       "inflight=%u errors=%" PRIu64 "\n",
	       i + 1, ticks_ms(f, k->at - t0) / 1e3, k->down_ms, ticks_ms(f, k->up - k->at),
	       k->loss != 0 ? ticks_ms(f, k->loss - k->at) : -1.0,
	       k->back != 0 ? ticks_ms(f, k->back - k->at) : -1.0, k->inflight, k->errors);
	fflush(stdout);
}

/* Every block read back (the I/O drained first), a few at a time. */
static void
read_back(struct tf *f)
{
	struct tf_slot *s = &f->slots[0];
	uint64_t end;

	for (uint32_t l = 0; l < f->nblk; l += TF_MAX_BLKS) {
		s->lba = l;
		s->n = NVP_MIN(TF_MAX_BLKS, f->nblk - l);
		s->gen = 0;
		if (issue(f, s) != 0) {
			fprintf(stderr, "tcp_failover: read-back stopped at block %u\n", l);
			return;
		}
		end = nvp_env_get_ticks() + f->hz * 30;
		while (s->busy && nvp_env_get_ticks() < end) {
			(void)pump(f);
		}
		if (s->busy) {
			fprintf(stderr, "tcp_failover: read-back: block %u did not come back\n", l);
			return;
		}
		f->readback += s->n;
	}
}

static int
run(struct tf *f)
{
	uint64_t t0 = nvp_env_get_ticks(), end;
	bool alive = true;
	int rc = 0;

	f->submitting = true;
	for (uint32_t i = 0; i < f->kills && alive && rc == 0; i++) {
		alive = pump_until(f, nvp_env_get_ticks() + ms_ticks(f, rnd_range(f, f->gap_min_ms,
										  f->gap_max_ms)));
		if (alive) {
			rc = one_kill(f, &f->kill[i]);
			f->nkills++;
			print_kill(f, i, &f->kill[i], t0);
		}
	}
	if (alive && rc == 0) {
		alive = pump_until(f, nvp_env_get_ticks() + ms_ticks(f, f->gap_max_ms));
	}
	/* drain: every request must come back; then every block is read back */
	f->submitting = false;
	end = nvp_env_get_ticks() + f->hz * (uint64_t)(f->loss_s > 0 ? f->loss_s + 10 : 60);
	while (outstanding(f) != 0 && nvp_env_get_ticks() < end) {
		(void)pump(f);
	}
	if (outstanding(f) == 0 && !nvp_nvme_ctrlr_is_failed(f->ctrlr)) {
		read_back(f);
	}
	return rc;
}

/* Commands sent down each path so far. */
static void
path_ios(const struct tf *f, uint64_t *ios)
{
	struct nvp_nvme_mpath_io_stats st = { .info_size = sizeof(st) };

	(void)nvp_nvme_mpath_io_get_stats(f->mio, &st);
	for (uint32_t i = 0; i < TF_PATHS; i++) {
		ios[i] = st.path_ios[i];
	}
}

/* Path @i usable again as the host sees it: connected and optimized. */
static bool
path_back(const struct tf *f, uint32_t i)
{
	struct nvp_nvme_mpath_path_info pi = { .info_size = sizeof(pi) };

	return nvp_nvme_mpath_get_path_info(f->paths.mp, i, &pi) == 0 && pi.connected &&
	       pi.ana_state == NVME_ANA_OPTIMIZED;
}

/*
 * One flip: the path the I/O goes down (failover policy: one) made inaccessible (with
 * the ANA change notice) or killed, I/O until the first good completion of a request sent
 * after the flip, then the path put back and awaited, so that the next flip starts with
 * two usable paths (the I/O stays where it went: both are optimized).
 */
static int
one_flip(struct tf *f, struct tf_flip *fl, uint32_t i)
{
	uint64_t before[TF_PATHS], after[TF_PATHS], end;
	int rc = 0;

	path_ios(f, before);
	if (!pump_until(f, nvp_env_get_ticks() +
				   ms_ticks(f, rnd_range(f, f->gap_min_ms, f->gap_max_ms)))) {
		return -ENXIO;
	}
	path_ios(f, after);
	fl->from = after[1] - before[1] > after[0] - before[0] ? 1u : 0u;
	fl->kill = (i & 1u) != 0;
	fl->inflight = outstanding(f);
	fl->err_at = f->err;
	f->flipping = fl;
	if (fl->kill) {
		rc = tf_paths_set_alive(&f->paths, fl->from, false, &fl->at);
	} else {
		fl->at = nvp_env_get_ticks();
		tf_paths_set_ana(&f->paths, fl->from, NVME_ANA_INACCESSIBLE);
	}
	path_ios(f, before);
	end = fl->at + f->hz * 30;
	while (rc == 0 && fl->back == 0 && nvp_env_get_ticks() < end) {
		(void)pump(f);
	}
	path_ios(f, after);
	fl->moved = after[fl->from ^ 1u] > before[fl->from ^ 1u];
	fl->errors = f->err - fl->err_at;
	f->flipping = NULL;
	if (fl->kill) {
		rc = rc != 0 ? rc : tf_paths_set_alive(&f->paths, fl->from, true, NULL);
	} else {
		tf_paths_set_ana(&f->paths, fl->from, NVME_ANA_OPTIMIZED);
	}
	end = nvp_env_get_ticks() + f->hz * 30;
	while (rc == 0 && !path_back(f, fl->from) && nvp_env_get_ticks() < end) {
		(void)pump(f);
	}
	fl->restored = path_back(f, fl->from) ? nvp_env_get_ticks() : 0;
	return rc;
}

static void
print_flip(const struct tf *f, uint32_t i, const struct tf_flip *fl, uint64_t t0)
{
	printf("flip i=%u kind=%s from=%u at_s=%.2f failover_ms=%.3f moved=%d restore_ms=%.1f "
	       "inflight=%u errors=%" PRIu64 "\n",
	       i + 1, fl->kill ? "kill" : "ana", fl->from, ticks_ms(f, fl->at - t0) / 1e3,
	       fl->back != 0 ? ticks_ms(f, fl->back - fl->at) : -1.0, fl->moved ? 1 : 0,
	       fl->restored != 0 ? ticks_ms(f, fl->restored - fl->at) : -1.0, fl->inflight,
	       fl->errors);
	fflush(stdout);
}

/* The path-flip run: flips under the I/O, then the drain and the read-back. */
static int
run_flips(struct tf *f)
{
	uint64_t t0 = nvp_env_get_ticks(), end;
	int rc = 0;

	f->submitting = true;
	for (uint32_t i = 0; i < f->flips && rc == 0; i++) {
		rc = one_flip(f, &f->flip[i], i);
		f->nflips++;
		print_flip(f, i, &f->flip[i], t0);
	}
	f->submitting = false;
	end = nvp_env_get_ticks() + f->hz * 60;
	while (outstanding(f) != 0 && nvp_env_get_ticks() < end) {
		(void)pump(f);
	}
	if (outstanding(f) == 0) {
		read_back(f);
	}
	return rc;
}

static void
usage(FILE *o)
{
	fprintf(o, "usage: nvp_tcp_failover [--kills N] [--seed S] [--qd N] [--blocks N] "
		   "[--gap-ms MIN,MAX]\n"
		   "                        [--down-ms MAX] [--loss-s S] [--delay-s S] "
		   "[--fast-fail-s S] [--nvp PATH] [--ram]\n"
		   "                        [--flips N]  (the path-flip run instead)\n");
}

static int
parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

static int
parse_args(struct tf *f, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "kills", required_argument, NULL, 'k' },
		{ "seed", required_argument, NULL, 's' },
		{ "qd", required_argument, NULL, 'q' },
		{ "blocks", required_argument, NULL, 'b' },
		{ "gap-ms", required_argument, NULL, 'g' },
		{ "down-ms", required_argument, NULL, 'd' },
		{ "loss-s", required_argument, NULL, 'l' },
		{ "delay-s", required_argument, NULL, 'r' },
		{ "fast-fail-s", required_argument, NULL, 'f' },
		{ "nvp", required_argument, NULL, 'n' },
		{ "ram", no_argument, NULL, 'R' },
		{ "flips", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t loss;
	int o, rc = 0;

	while (rc == 0 && (o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (o) {
		case 'k':
			rc = parse_u32(optarg, 1, TF_MAX_KILLS, &f->kills);
			break;
		case 's':
			f->seed = strtoull(optarg, NULL, 0);
			break;
		case 'q':
			rc = parse_u32(optarg, 1, TF_MAX_QD, &f->qd);
			break;
		case 'b':
			rc = parse_u32(optarg, 16, 16384, &f->nblk);
			break;
		case 'g':
			rc = sscanf(optarg, "%u,%u", &f->gap_min_ms, &f->gap_max_ms) == 2 &&
					     f->gap_min_ms <= f->gap_max_ms ?
				     0 :
				     -EINVAL;
			break;
		case 'd':
			rc = parse_u32(optarg, 0, 60000, &f->down_max_ms);
			break;
		case 'l':
			rc = parse_u32(optarg, 1, 3600, &loss);
			f->loss_s = (int32_t)loss;
			break;
		case 'r':
			rc = parse_u32(optarg, 1, 3600, &f->delay_s);
			break;
		case 'f':
			rc = parse_u32(optarg, 0, 3600, &f->fast_s);
			break;
		case 'n':
			nvp_strlcpy(f->tgt.nvp, optarg, sizeof(f->tgt.nvp));
			break;
		case 'R':
			f->ram = true;
			break;
		case 'F':
			rc = parse_u32(optarg, 1, TF_MAX_FLIPS, &f->flips);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			rc = -EINVAL;
		}
	}
	if (rc != 0 || optind != argc) {
		fprintf(stderr, "nvp_tcp_failover: bad option%s%s\n", optind < argc ? " near " : "",
			optind < argc ? argv[optind] : "");
		return -EINVAL;
	}
	return 0;
}

/* build/bench/nvp_tcp_failover -> build/bin/nvp */
static void
default_nvp(struct tf *f)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0) {
		nvp_strlcpy(f->tgt.nvp, "nvp", sizeof(f->tgt.nvp));
		return;
	}
	self[n] = '\0';
	snprintf(f->tgt.nvp, sizeof(f->tgt.nvp), "%s/../bin/nvp", dirname(self));
}

/* The slots' buffers and the blocks' records. */
static int
host_mem(struct tf *f)
{
	for (uint32_t i = 0; i < f->qd; i++) {
		f->slots[i].f = f;
		f->slots[i].buf = nvp_env_dma_zmalloc(TF_MAX_BLKS * TF_BS, 4096, NULL);
		if (f->slots[i].buf == NULL) {
			return -ENOMEM;
		}
	}
	f->blk = calloc(f->nblk, sizeof(*f->blk));
	return f->blk == NULL ? -ENOMEM : 0;
}

/* The host side: env, the controller with the reconnect options, a qpair, the memory. */
static int
host_setup(struct tf *f)
{
	struct nvp_nvme_transport_id trid;
	struct nvp_nvme_ctrlr_opts co;
	struct nvp_nvme_io_qpair_opts qo;
	int rc;

	rc = nvp_nvme_transport_id_parse(&trid, f->tgt.trid);
	if (rc != 0) {
		return rc;
	}
	nvp_nvme_ctrlr_opts_init(&co, sizeof(co));
	co.ctrlr_loss_timeout_sec = f->loss_s;
	co.reconnect_delay_sec = f->delay_s;
	co.fast_io_fail_timeout_sec = f->fast_s;
	rc = nvp_nvme_connect(&trid, &co, &f->ctrlr);
	if (rc != 0) {
		fprintf(stderr, "nvp_tcp_failover: connect %s: %s\n", f->tgt.trid, strerror(-rc));
		return rc;
	}
	f->ns = nvp_nvme_ctrlr_get_ns(f->ctrlr, 1);
	if (f->ns == NULL || nvp_nvme_ns_get_sector_size(f->ns) != TF_BS ||
	    nvp_nvme_ns_get_num_sectors(f->ns) < f->nblk) {
		fprintf(stderr, "nvp_tcp_failover: namespace 1 is not %u blocks of 4 KiB\n",
			f->nblk);
		return -ENODEV;
	}
	nvp_nvme_ctrlr_get_default_io_qpair_opts(f->ctrlr, &qo, sizeof(qo));
	qo.io_queue_size = 2 * f->qd;
	qo.io_queue_requests = 4 * f->qd;
	rc = nvp_nvme_ctrlr_alloc_io_qpair(f->ctrlr, &qo, &f->qpair);
	return rc != 0 ? rc : host_mem(f);
}

/* --flips: the in-process target's two paths, the multipath controller and its handle. */
static int
flip_setup(struct tf *f)
{
	struct nvp_nvme_io_qpair_opts qo;
	int rc;

	rc = tf_paths_open(&f->paths, f->nblk, TF_RECONNECT_MS);
	if (rc != 0) {
		fprintf(stderr, "nvp_tcp_failover: the two-path target: %s\n", strerror(-rc));
		return rc;
	}
	f->ns = nvp_nvme_mpath_get_ns(f->paths.mp, 0);
	if (f->ns == NULL || nvp_nvme_ns_get_sector_size(f->ns) != TF_BS ||
	    nvp_nvme_ns_get_num_sectors(f->ns) < f->nblk) {
		fprintf(stderr, "nvp_tcp_failover: the namespace is not %u blocks of 4 KiB\n",
			f->nblk);
		return -ENODEV;
	}
	nvp_nvme_ctrlr_get_default_io_qpair_opts(nvp_nvme_ns_get_ctrlr(f->ns), &qo, sizeof(qo));
	qo.io_queue_size = 2 * f->qd;
	qo.io_queue_requests = 4 * f->qd;
	rc = nvp_nvme_mpath_io_alloc(f->paths.mp, &qo, &f->mio);
	return rc != 0 ? rc : host_mem(f);
}

static void
host_teardown(struct tf *f)
{
	if (f->qpair != NULL && outstanding(f) == 0) {
		(void)nvp_nvme_ctrlr_free_io_qpair(f->qpair);
	}
	if (f->mio != NULL && outstanding(f) == 0 && nvp_nvme_mpath_io_free(f->mio) == 0) {
		tf_paths_close(&f->paths);
	}
	if (f->ctrlr != NULL) {
		(void)nvp_nvme_detach(f->ctrlr);
	}
	for (uint32_t i = 0; i < f->qd; i++) {
		nvp_env_dma_free(f->slots[i].buf);
	}
	free(f->blk);
	if (nvp_env_is_initialized()) {
		nvp_env_fini();
	}
}

static void
remove_files(struct tf *f)
{
	static const char *const names[] = { "tf.ns1", "tf.smart", "serve.log" };
	char path[128];

	for (size_t i = 0; i < NVP_COUNTOF(names); i++) {
		snprintf(path, sizeof(path), "%s/%s", f->dir, names[i]);
		unlink(path);
	}
	rmdir(f->dir);
}

int
main(int argc, char **argv)
{
	static struct tf f;
	struct nvp_env_opts eo;
	bool failed;
	int rc;

	f.kills = 20;
	f.qd = 16;
	f.nblk = 4096;
	f.gap_min_ms = 200;
	f.gap_max_ms = 1500;
	f.down_max_ms = 2000;
	f.loss_s = 30;
	f.delay_s = 1;
	f.fast_s = 5;
	f.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
	default_nvp(&f);
	if (parse_args(&f, argc, argv) != 0) {
		usage(stderr);
		return 2;
	}
	f.rng = f.seed * 0x2545f4914f6cdd1dull | 1;
	snprintf(f.dir, sizeof(f.dir), "/tmp/nvp_tf_XXXXXX");
	if (mkdtemp(f.dir) == NULL) {
		perror("nvp_tcp_failover: mkdtemp");
		return 1;
	}
	if (f.ram) {
		snprintf(f.tgt.dev, sizeof(f.tgt.dev), "emu:size=64M,lba=4096");
	} else {
		snprintf(f.tgt.dev, sizeof(f.tgt.dev), "emu:file=%s/tf,size=64M,lba=4096", f.dir);
	}
	snprintf(f.tgt.log, sizeof(f.tgt.log), "%s/serve.log", f.dir);
	if (f.flips != 0) {
		printf("tcp_failover seed=%" PRIu64 " flips=%u qd=%u blocks=%u policy=failover "
		       "path_reconnect_ms=%u target=\"two loopback listeners in this process, a "
		       "RAM-backed software controller\"\n",
		       f.seed, f.flips, f.qd, f.nblk, TF_RECONNECT_MS);
	} else {
		printf("tcp_failover seed=%" PRIu64 " kills=%u qd=%u blocks=%u loss_s=%d "
		       "delay_s=%u fast_fail_s=%u target=\"%s serve -r %s\"\n",
		       f.seed, f.kills, f.qd, f.nblk, f.loss_s, f.delay_s, f.fast_s, f.tgt.nvp,
		       f.tgt.dev);
	}
	fflush(stdout);
	nvp_env_opts_init(&eo, sizeof(eo));
	eo.name = "tcp_failover";
	eo.no_pci = true;
	eo.no_huge = true;
	eo.quiet = true;
	rc = nvp_env_init(&eo);
	if (rc != 0) {
		fprintf(stderr, "nvp_tcp_failover: env: %s\n", strerror(-rc));
		return 1;
	}
	f.hz = nvp_env_get_ticks_hz();
	if (f.flips != 0) {
		rc = flip_setup(&f);
		rc = rc != 0 ? rc : run_flips(&f);
	} else {
		rc = tf_target_spawn(&f.tgt);
		rc = rc != 0 ? rc : target_wait(&f, false);
		rc = rc != 0 ? rc : host_setup(&f);
		rc = rc != 0 ? rc : run(&f);
	}
	failed = f.ctrlr != NULL && nvp_nvme_ctrlr_is_failed(f.ctrlr);
	if (f.ctrlr != NULL || f.mio != NULL) {
		printf("result seed=%" PRIu64 " flips=%u kills=%u issued=%" PRIu64 " ok=%" PRIu64
		       " errors=%" PRIu64 " path_errors=%" PRIu64 " dup=%" PRIu64 " stuck=%u"
		       " lost=%" PRIu64 " corrupted=%" PRIu64 " verified=%" PRIu64
		       " unwritten_verified=%" PRIu64 " readback=%" PRIu64 " starts=%u failed=%d\n",
		       f.seed, f.nflips, f.nkills, f.issued, f.ok, f.err, f.path_err, f.dup,
		       outstanding(&f), f.lost, f.corrupted, f.verified, f.unwritten, f.readback,
		       f.tgt.starts, failed ? 1 : 0);
		if (f.mio != NULL) {
			struct nvp_nvme_mpath_io_stats st = { .info_size = sizeof(st) };

			(void)nvp_nvme_mpath_io_get_stats(f.mio, &st);
			printf("multipath path0_ios=%" PRIu64 " path1_ios=%" PRIu64
			       " path_errors=%" PRIu64 " retries=%" PRIu64 " no_path_waits=%" PRIu64
			       "\n",
			       st.path_ios[0], st.path_ios[1], st.path_errors, st.retries,
			       st.no_path_waits);
		}
		fflush(stdout);
	}
	if (rc != 0) {
		fprintf(stderr, "nvp_tcp_failover: %s (the target's log: %s)\n", strerror(-rc),
			f.tgt.log);
	}
	host_teardown(&f);
	tf_target_kill(&f.tgt, SIGTERM);
	if (rc == 0) {
		remove_files(&f);
	}
	return rc == 0 ? 0 : 1;
}

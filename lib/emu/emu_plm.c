/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Power-loss model of the file backend (power_loss=1 with vwc=1): the volatile write
 * cache a power cut can lose.
 *
 * Writes go to the file at once (reads see them), and each write's pre-image (what the
 * blocks held before) is kept in an undo log, oldest first. A Flush empties the log:
 * what was written before it is now durable. The log holds at most wcache_mb MiB (64 MiB
 * when unset); past that the oldest records are dropped, i.e. destaged by the device on
 * its own. A power cut walks the log newest to oldest and, for each record, keeps the
 * write, loses it (writes the pre-image back) or tears it at a logical-block boundary
 * (the blocks from a random boundary on are lost): the outcomes a real cache allows for
 * data that was never flushed. Restoring pre-images newest first leaves every block
 * holding either its last flushed contents or a later unflushed write; flushed data is
 * never touched. Then the controller goes dark (every register reads all ones) and must
 * be destroyed and created again on the same files: the restart after the outage.
 *
 * power_loss=2 makes Flush lie (the log is not emptied): a broken device that the power
 * loss test must catch.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu_internal.h"

#define PLM_DEFAULT_CAP (64ull << 20)

struct plm_rec {
	uint64_t off;
	uint64_t len;
	uint8_t *pre; /* the blocks' contents before the write */
};

struct emu_plm {
	struct plm_rec *recs; /* ring of cap_recs records */
	uint32_t cap_recs;    /* a power of two */
	uint32_t head;        /* oldest */
	uint32_t count;
	uint64_t bytes;     /* pre-image bytes held */
	uint64_t cap_bytes; /* the cache's size */
	bool lying_flush;
};

int
emu_plm_init(struct emu_ctrlr *c, struct emu_ns *ns)
{
	struct emu_plm *p;

	if (c->opts.power_loss == 0) {
		return 0;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		return -ENOMEM;
	}
	p->cap_recs = 64;
	p->recs = calloc(p->cap_recs, sizeof(*p->recs));
	if (p->recs == NULL) {
		free(p);
		return -ENOMEM;
	}
	p->cap_bytes = c->opts.wcache_mb != 0 ? (uint64_t)c->opts.wcache_mb << 20 : PLM_DEFAULT_CAP;
	p->lying_flush = c->opts.power_loss == 2;
	ns->plm = p;
	return 0;
}

static struct plm_rec *
rec_at(struct emu_plm *p, uint32_t i)
{
	return &p->recs[(p->head + i) & (p->cap_recs - 1)];
}

/* Drop the oldest record: the device destaged it, it is durable. */
static void
drop_oldest(struct emu_plm *p)
{
	struct plm_rec *r = rec_at(p, 0);

	p->bytes -= r->len;
	free(r->pre);
	r->pre = NULL;
	p->head = (p->head + 1) & (p->cap_recs - 1);
	p->count--;
}

static void
drop_all(struct emu_plm *p)
{
	while (p->count > 0) {
		drop_oldest(p);
	}
}

void
emu_plm_fini(struct emu_ns *ns)
{
	if (ns->plm == NULL) {
		return;
	}
	drop_all(ns->plm);
	free(ns->plm->recs);
	free(ns->plm);
	ns->plm = NULL;
}

static int
grow(struct emu_plm *p)
{
	struct plm_rec *n = calloc((size_t)p->cap_recs * 2, sizeof(*n));

	if (n == NULL) {
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < p->count; i++) {
		n[i] = *rec_at(p, i);
	}
	free(p->recs);
	p->recs = n;
	p->head = 0;
	p->cap_recs *= 2;
	return 0;
}

/*
 * Before the backend writes @len bytes at @off: keep their pre-image. A write larger
 * than the whole cache goes through durably (everything before it destaged first), as a
 * device writes through when its cache cannot hold the data.
 * \return 0, or -errno (the write must then fail: nothing was changed).
 */
int
emu_plm_record(struct emu_ns *ns, uint64_t off, uint64_t len)
{
	struct emu_plm *p = ns->plm;
	struct plm_rec *r;
	uint8_t *pre;
	int rc;

	if (len > p->cap_bytes) {
		drop_all(p);
		return 0;
	}
	while (p->count > 0 && p->bytes + len > p->cap_bytes) {
		drop_oldest(p);
	}
	if (p->count == p->cap_recs && grow(p) != 0) {
		return -ENOMEM;
	}
	pre = malloc(len);
	if (pre == NULL) {
		return -ENOMEM;
	}
	rc = ns->ops->read_buf(ns, off, pre, len);
	if (rc != 0) {
		free(pre);
		return rc;
	}
	r = rec_at(p, p->count);
	r->off = off;
	r->len = len;
	r->pre = pre;
	p->count++;
	p->bytes += len;
	return 0;
}

/* A Flush made everything written so far durable. */
void
emu_plm_flushed(struct emu_ns *ns)
{
	if (ns->plm != NULL && !ns->plm->lying_flush) {
		drop_all(ns->plm);
	}
}

/* Write back the pre-image of @r from block @from_blk on. */
static int
restore(struct emu_ctrlr *c, struct emu_ns *ns, const struct plm_rec *r, uint64_t from)
{
	uint8_t *buf = r->pre + from;
	uint64_t off = r->off + from, len = r->len - from;

	while (len > 0) {
		ssize_t n = pwrite(ns->fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			NVP_ERRLOG("emu %s: power cut: cannot restore %llu bytes at %llu of "
				   "namespace %u",
				   c->opts.name, (unsigned long long)len, (unsigned long long)off,
				   ns->nsid);
			return -EIO;
		}
		buf += n;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

static void
cut_ns(struct emu_ctrlr *c, struct emu_ns *ns, uint64_t *rng)
{
	struct emu_plm *p = ns->plm;
	uint64_t bs = 1ull << ns->lba_shift;

	for (uint32_t i = p->count; i-- > 0;) {
		const struct plm_rec *r = rec_at(p, i);
		uint64_t blocks = r->len / bs, pick = emu_rng_next(rng) % 4;

		if (pick == 2 || (pick == 3 && blocks < 2)) {
			EMU_STAT_ADD(c, plm_kept_writes, 1);
			continue;
		}
		if (pick == 3) {
			/* Torn: blocks [k, blocks) never reached the media, 1 <= k < blocks. */
			uint64_t k = 1 + emu_rng_next(rng) % (blocks - 1);

			if (restore(c, ns, r, k * bs) == 0) {
				EMU_STAT_ADD(c, plm_torn_writes, 1);
			}
			continue;
		}
		if (restore(c, ns, r, 0) == 0) {
			EMU_STAT_ADD(c, plm_lost_writes, 1);
		}
	}
	drop_all(p);
	fdatasync(ns->fd);
}

/*
 * Cut the power (controller thread): lose or tear what the cache held, then go dark.
 * Commands fetched later are never executed and nothing more is completed.
 */
void
emu_plm_cut(struct emu_ctrlr *c, uint64_t seed)
{
	uint64_t rng = seed != 0 ? seed : c->opts.seed + c->stats.io_cmds;

	for (uint32_t i = 0; i < c->opts.nn; i++) {
		if (c->ns[i].plm != NULL) {
			cut_ns(c, &c->ns[i], &rng);
		}
	}
	EMU_STAT_ADD(c, power_cuts, 1);
	c->powered_off = true;
	emu_all_ones_set(c, true);
	NVP_NOTICELOG("emu %s: power cut after %llu I/O commands", c->opts.name,
		      (unsigned long long)c->stats.io_cmds);
}

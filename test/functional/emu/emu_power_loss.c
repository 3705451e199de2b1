/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Power loss, driven through the driver: a verifying writer on a software controller
 * with a file backend and a volatile write cache (power_loss=1) flushes at random points
 * while the power is cut at a random command; the controller is then created again on
 * the same files (the power comes back) and every block is read and judged:
 *   lost       the block holds something older than what a completed Flush covered
 *   corrupted  the block is not one whole write (torn inside a block), or holds a write
 *              that never covered it
 * Both must be 0 over every round. Writes that were never flushed may be lost: the
 * counts of those show that the model really dropped data. A second test runs the same
 * against a controller whose Flush lies (power_loss=2) and must find lost blocks: the
 * checker can fail. NVP_PLM_ROUNDS sets the number of rounds (default 8).
 *
 * The flush rule (NVMe base spec, Flush): data of writes that completed before the
 * Flush was submitted is durable when the Flush completes. Writes never overlap a block
 * that has a write in flight, so the generations a block saw are ordered.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

#define BS 4096u
#define NBLK 512u   /* blocks the test writes (of 1024) */
#define QD 16u      /* writes in flight at most */
#define MAX_BLKS 8u /* blocks per write at most */
#define MAX_WRITES 40000u

struct wrec {
	uint32_t lba;
	uint32_t n;
};

struct slot {
	struct fx_cpl cpl;
	uint32_t gen;  /* 0 = a flush */
	uint32_t upto; /* flush: writes completed before it was submitted */
	bool busy;
	uint8_t *buf;
};

struct plm_state {
	struct wrec w[MAX_WRITES + 1]; /* by generation; 0 = never written */
	uint32_t ngen;
	uint32_t durable[NBLK];  /* generation a completed Flush covers */
	uint32_t last_cpl[NBLK]; /* newest completed write */
	bool busy[NBLK];
	uint32_t order[MAX_WRITES]; /* completed writes, in completion order */
	uint32_t ncpl;
	uint32_t flushed_upto; /* order[0..flushed_upto) are durable */
	uint64_t rng;
	struct slot slots[QD];
	uint64_t lost, corrupted, unflushed_lost, hangs, dup_cpls;
	/* the controller's own count (nvp_emu_ctrlr_get_stats()) */
	uint64_t plm_dropped;
};

static char g_dir[64];

static uint64_t
rnd(struct plm_state *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return s->rng;
}

static void
fill(uint8_t *buf, uint32_t lba, uint32_t n, uint32_t gen)
{
	for (uint32_t b = 0; b < n; b++) {
		uint64_t *w = (uint64_t *)(void *)(buf + (size_t)b * BS);
		uint64_t v = (uint64_t)gen << 32 | (lba + b);

		for (uint32_t i = 0; i < BS / 8; i++) {
			w[i] = v ^ (i * 0x9e3779b97f4a7c15ull);
		}
	}
}

/* The generation a block read back holds: 0 never written, -1 not one whole write. */
static int64_t
decode(const uint8_t *blk, uint32_t lba)
{
	const uint64_t *w = (const void *)blk;
	uint64_t v = w[0];

	uint64_t any = 0;

	for (uint32_t i = 0; i < BS / 8; i++) {
		any |= w[i];
	}
	if (any == 0) {
		return 0;
	}
	for (uint32_t i = 1; i < BS / 8; i++) {
		if ((w[i] ^ (i * 0x9e3779b97f4a7c15ull)) != v) {
			return -1;
		}
	}
	return (uint32_t)v == lba ? (int64_t)(v >> 32) : -1;
}

static void
on_write_done(struct plm_state *s, struct slot *sl)
{
	const struct wrec *w = &s->w[sl->gen];

	if (!nvme_cpl_is_error(&sl->cpl.cpl)) {
		s->order[s->ncpl++] = sl->gen;
		for (uint32_t b = 0; b < w->n; b++) {
			s->last_cpl[w->lba + b] = sl->gen;
		}
	}
	for (uint32_t b = 0; b < w->n; b++) {
		s->busy[w->lba + b] = false;
	}
}

static void
on_flush_done(struct plm_state *s, struct slot *sl)
{
	if (nvme_cpl_is_error(&sl->cpl.cpl)) {
		return;
	}
	for (; s->flushed_upto < sl->upto; s->flushed_upto++) {
		const struct wrec *w = &s->w[s->order[s->flushed_upto]];

		for (uint32_t b = 0; b < w->n; b++) {
			uint32_t *d = &s->durable[w->lba + b];

			*d = s->order[s->flushed_upto] > *d ? s->order[s->flushed_upto] : *d;
		}
	}
}

/* Reap finished slots. \return slots busy. */
static uint32_t
reap(struct plm_state *s)
{
	uint32_t busy = 0;

	for (uint32_t i = 0; i < QD; i++) {
		struct slot *sl = &s->slots[i];

		if (!sl->busy) {
			continue;
		}
		if (sl->cpl.calls == 0) {
			busy++;
			continue;
		}
		if (sl->cpl.calls > 1) {
			s->dup_cpls++;
		}
		sl->busy = false;
		if (sl->gen != 0) {
			on_write_done(s, sl);
		} else {
			on_flush_done(s, sl);
		}
	}
	return busy;
}

/* A random range of free blocks. \return false if none was found quickly. */
static bool
pick_range(struct plm_state *s, uint32_t *lba, uint32_t *n)
{
	for (int tries = 0; tries < 8; tries++) {
		uint32_t l = (uint32_t)(rnd(s) % NBLK), k = 1 + (uint32_t)(rnd(s) % MAX_BLKS), i;

		k = l + k > NBLK ? NBLK - l : k;
		for (i = 0; i < k && !s->busy[l + i]; i++) {
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
submit_one(struct plm_state *s, struct fx_ctrlr *fx, struct slot *sl, uint32_t *until_flush)
{
	uint32_t lba, n;
	int rc;

	memset(&sl->cpl, 0, sizeof(sl->cpl));
	if (*until_flush == 0) {
		*until_flush = 1 + (uint32_t)(rnd(s) % 40);
		sl->gen = 0;
		sl->upto = s->ncpl;
		rc = nvp_nvme_ns_cmd_flush(fx->ns, fx->qpair, fx_cpl_cb, &sl->cpl);
	} else {
		if (s->ngen == MAX_WRITES || !pick_range(s, &lba, &n)) {
			return -EAGAIN;
		}
		(*until_flush)--;
		sl->gen = ++s->ngen;
		s->w[sl->gen].lba = lba;
		s->w[sl->gen].n = n;
		fill(sl->buf, lba, n, sl->gen);
		rc = nvp_nvme_ns_cmd_write(fx->ns, fx->qpair, sl->buf, lba, n, fx_cpl_cb, &sl->cpl,
					   0);
		for (uint32_t b = 0; rc == 0 && b < n; b++) {
			s->busy[lba + b] = true;
		}
	}
	sl->busy = rc == 0;
	return rc;
}

/*
 * Write and flush until the controller goes dark (the cut), then until every request
 * came back (the driver fails them once it sees the device gone).
 */
static void
run_until_cut(struct plm_state *s, struct fx_ctrlr *fx)
{
	uint64_t deadline = fx_now_us() + 20u * 1000 * 1000;
	uint32_t until_flush = 1 + (uint32_t)(rnd(s) % 40);
	bool dead = false;

	while (fx_now_us() < deadline) {
		int rc = nvp_nvme_qpair_process_completions(fx->qpair, 0);
		uint32_t busy = reap(s);

		dead = dead || rc < 0 || nvp_nvme_ctrlr_is_failed(fx->ctrlr);
		if (dead && busy == 0) {
			return;
		}
		for (uint32_t i = 0; !dead && i < QD; i++) {
			if (!s->slots[i].busy &&
			    submit_one(s, fx, &s->slots[i], &until_flush) < 0) {
				break;
			}
		}
	}
	fprintf(stderr, "  a request never came back within 20 s of the cut\n");
	s->hangs++;
}

/* After the restart: read every block and judge it; its contents become the baseline. */
static void
judge(struct plm_state *s, struct fx_ctrlr *fx, uint8_t *buf)
{
	for (uint32_t b = 0; b < NBLK; b++) {
		int64_t g;

		if (fx_io(fx->ns, fx->qpair, FX_READ, buf, b, 1, 0, NULL) != 0) {
			s->corrupted++;
			continue;
		}
		g = decode(buf, b);
		if (g < 0 || (g > 0 && (s->w[g].lba > b || s->w[g].lba + s->w[g].n <= b))) {
			if (s->corrupted++ < 5) {
				fprintf(stderr, "  block %u: not a whole write of it\n", b);
			}
			continue;
		}
		if ((uint32_t)g < s->durable[b]) {
			if (s->lost++ < 5) {
				fprintf(stderr,
					"  block %u: holds gen %" PRId64
					", a Flush covered gen %u\n",
					b, g, s->durable[b]);
			}
		} else if ((uint32_t)g < s->last_cpl[b]) {
			s->unflushed_lost++;
		}
		s->durable[b] = (uint32_t)g;
		s->last_cpl[b] = (uint32_t)g;
	}
	s->ncpl = 0;
	s->flushed_upto = 0;
}

/* What the controller says the cut did, as a caller of nvp_emu_ctrlr_get_stats() sees it. */
static void
count_cut(struct plm_state *s, struct fx_ctrlr *fx)
{
	struct nvp_emu_stats st = { .info_size = sizeof(st) };

	CU_ASSERT_EQUAL_FATAL(nvp_emu_ctrlr_get_stats(fx->emu, &st), 0);
	CU_ASSERT_EQUAL(st.power_cuts, 1); /* the round's fault went off (a fresh controller) */
	s->plm_dropped += st.plm_lost_writes + st.plm_torn_writes;
}

static void
rounds(uint32_t power_loss, uint32_t nrounds, bool stop_at_loss, struct plm_state *s)
{
	char opts[256], prefix[128];
	uint8_t *rbuf = fx_dma_alloc(BS);
	struct fx_ctrlr fx;

	snprintf(prefix, sizeof(prefix), "%s/pl%u", g_dir, power_loss);
	for (uint32_t i = 0; i < QD; i++) {
		s->slots[i].buf = fx_dma_alloc(MAX_BLKS * BS);
	}
	for (uint32_t r = 0; r < nrounds && s->ngen < MAX_WRITES - 4000; r++) {
		uint32_t skip = 30 + (uint32_t)(rnd(s) % 1500);

		snprintf(opts, sizeof(opts),
			 "size=4M,lba=4096,channels=4,vwc=1,backend=file:%s,power_loss=%u", prefix,
			 power_loss);
		if (fx_open(&fx, opts) != 0) {
			fx_close(&fx);
			break;
		}
		if (r > 0) {
			judge(s, &fx, rbuf);
			if (stop_at_loss && s->lost > 0) {
				break;
			}
		}
		CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(fx.emu, NVP_EMU_FAULT_POWER_CUT, 1, skip,
							   (uint32_t)rnd(s) | 1),
				0);
		run_until_cut(s, &fx);
		count_cut(s, &fx);
		fx_close(&fx);
	}
	if (!(stop_at_loss && s->lost > 0) && fx_open(&fx, opts) == 0) {
		judge(s, &fx, rbuf);
	}
	fx_close(&fx);
	for (uint32_t i = 0; i < QD; i++) {
		nvp_env_dma_free(s->slots[i].buf);
	}
	nvp_env_dma_free(rbuf);
}

static uint32_t
nrounds(void)
{
	const char *e = getenv("NVP_PLM_ROUNDS");
	long v = e != NULL ? strtol(e, NULL, 10) : 8;

	return v > 0 && v < 10000 ? (uint32_t)v : 8;
}

static void
test_flushed_data_survives(void)
{
	struct plm_state *s = calloc(1, sizeof(*s));

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	s->rng = 0x2545f4914f6cdd1dull;
	rounds(1, nrounds(), false, s);
	printf("(%u writes, lost %" PRIu64 " corrupted %" PRIu64 " hangs %" PRIu64
	       ", unflushed writes lost %" PRIu64 ", the controller dropped %" PRIu64 ") ",
	       s->ngen, s->lost, s->corrupted, s->hangs, s->unflushed_lost, s->plm_dropped);
	CU_ASSERT(s->ngen > 0);
	CU_ASSERT_EQUAL(s->lost, 0);
	CU_ASSERT_EQUAL(s->corrupted, 0);
	CU_ASSERT_EQUAL(s->hangs, 0);
	CU_ASSERT_EQUAL(s->dup_cpls, 0);
	/* The model really lost data that was never flushed (else this proves nothing), and
	 * the controller's counters say so too. */
	CU_ASSERT(s->unflushed_lost > 0);
	CU_ASSERT(s->plm_dropped > 0);
	free(s);
}

/* A Flush that lies: the same judge must see flushed blocks lost. */
static void
test_lying_flush_is_caught(void)
{
	struct plm_state *s = calloc(1, sizeof(*s));

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	s->rng = 0x9e3779b97f4a7c15ull;
	rounds(2, nrounds(), true, s);
	printf("(lost %" PRIu64 " corrupted %" PRIu64 ") ", s->lost, s->corrupted);
	CU_ASSERT(s->lost > 0);
	CU_ASSERT_EQUAL(s->corrupted, 0);
	free(s);
}

static int
remove_dir(const char *dir)
{
	char path[512];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (d == NULL) {
		return -errno;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			unlink(path);
		}
	}
	closedir(d);
	return rmdir(dir) == 0 ? 0 : -errno;
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "flushed_data_survives", test_flushed_data_survives },
		{ "lying_flush_is_caught", test_lying_flush_is_caught },
	};
	int rc;

	snprintf(g_dir, sizeof(g_dir), "/tmp/nvp_power_loss_XXXXXX");
	if (mkdtemp(g_dir) == NULL) {
		fprintf(stderr, "emu_power_loss: cannot make a temporary directory\n");
		return 1;
	}
	rc = fx_main(argc, argv, "emu_power_loss", tests, NVP_COUNTOF(tests));
	if (remove_dir(g_dir) != 0) {
		fprintf(stderr, "emu_power_loss: cannot remove %s\n", g_dir);
		rc = 1;
	}
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The FTL model behind a namespace: what NAND writes a stream of host writes costs.
 *
 * A page-mapped flash translation layer with 4 KiB pages grouped in erase blocks of
 * `ftl_ppb` pages. The physical space is the logical space plus `ftl_op` percent of
 * over-provisioning, nothing more: the open blocks and the free blocks garbage collection
 * needs come out of that spare space, as on a real drive.
 *
 * Writes go to the open block of their stream (0 = no stream, 1..N = NVMe stream
 * identifiers), so data of one lifetime shares erase blocks. When fewer than
 * EMU_FTL_GC_LOW blocks are free, garbage collection picks a closed victim (greedy:
 * fewest valid pages; cost-benefit: Rosenblum and Ousterhout's (1 - u) / 2u x age),
 * copies its valid pages to the GC block of the victim's stream and erases it: each
 * stream has a GC block of its own, so relocation does not mix lifetimes the host kept
 * apart (without streams that is the usual single host block + single GC block). Every page
 * programmed counts as a NAND write; a host page counts as a host write; write
 * amplification = NAND writes / host writes. Deallocation (DSM, Write Zeroes) unmaps
 * pages, which is what lets GC skip them.
 *
 * The model holds no data (the backend does); it costs 8 bytes per physical page.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

#define UNMAPPED UINT32_MAX
#define NO_BLOCK UINT32_MAX

enum ftl_block_state {
	BLK_FREE = 0,
	BLK_OPEN,
	BLK_CLOSED,
};

struct ftl_block {
	uint32_t valid; /* pages still mapped */
	uint32_t wp;    /* pages programmed */
	uint64_t stamp; /* host page clock at the last program: age for cost-benefit */
	uint8_t state;
	uint8_t stream; /* open block index it was written through */
};

struct emu_ftl {
	struct emu_ftl_cfg cfg;
	uint32_t nblocks;
	uint32_t *l2p; /* [lpages] physical page, UNMAPPED */
	uint32_t *p2l; /* [nblocks * ppb] logical page, UNMAPPED when invalid */
	struct ftl_block *blk;
	uint32_t *free_stack;
	uint32_t nfree;
	uint32_t nopen; /* 2 x (streams + 1): host 0..streams, then GC 0..streams */
	uint32_t open[2 * (EMU_FTL_MAX_STREAMS + 1)];
	uint64_t clock; /* host pages written */
	struct emu_ftl_counters cnt;
};

/* Where GC moves the valid pages of a block written through open block @src. */
static inline uint32_t
gc_stream(const struct emu_ftl *f, uint32_t src)
{
	uint32_t host = f->cfg.nstreams + 1;

	return src >= host ? src : host + src;
}

/* Blocks for @lpages logical pages plus @op_pct percent, rounded up. */
static uint64_t
ftl_blocks(uint64_t lpages, uint32_t ppb, uint32_t op_pct)
{
	uint64_t phys = lpages + (lpages * op_pct + 99) / 100;

	return (phys + ppb - 1) / ppb;
}

int
emu_ftl_create(const struct emu_ftl_cfg *cfg, struct emu_ftl **out)
{
	struct emu_ftl *f;
	uint64_t nb, pp;

	if (cfg->ppb < 2 || cfg->ppb > EMU_FTL_MAX_PPB || cfg->lpages == 0 ||
	    cfg->nstreams > EMU_FTL_MAX_STREAMS) {
		return -EINVAL;
	}
	nb = ftl_blocks(cfg->lpages, cfg->ppb, cfg->op_pct);
	pp = nb * cfg->ppb;
	/* a GC victim with a free page must always exist once the open blocks are full */
	if (pp >= UNMAPPED ||
	    nb < cfg->lpages / cfg->ppb + 2 * (cfg->nstreams + 1) + EMU_FTL_GC_LOW) {
		return -EINVAL;
	}
	f = calloc(1, sizeof(*f));
	if (f == NULL) {
		return -ENOMEM;
	}
	f->cfg = *cfg;
	f->nblocks = (uint32_t)nb;
	f->nopen = 2 * (cfg->nstreams + 1);
	f->l2p = malloc(cfg->lpages * sizeof(uint32_t));
	f->p2l = malloc(pp * sizeof(uint32_t));
	f->blk = calloc(nb, sizeof(*f->blk));
	f->free_stack = malloc(nb * sizeof(uint32_t));
	if (f->l2p == NULL || f->p2l == NULL || f->blk == NULL || f->free_stack == NULL) {
		emu_ftl_destroy(f);
		return -ENOMEM;
	}
	emu_ftl_reset(f);
	*out = f;
	return 0;
}

void
emu_ftl_destroy(struct emu_ftl *f)
{
	if (f == NULL) {
		return;
	}
	free(f->l2p);
	free(f->p2l);
	free(f->blk);
	free(f->free_stack);
	free(f);
}

/* Everything unmapped and erased (format); the counters keep counting. */
void
emu_ftl_reset(struct emu_ftl *f)
{
	memset(f->l2p, 0xff, f->cfg.lpages * sizeof(uint32_t));
	memset(f->p2l, 0xff, (uint64_t)f->nblocks * f->cfg.ppb * sizeof(uint32_t));
	memset(f->blk, 0, (uint64_t)f->nblocks * sizeof(*f->blk));
	f->nfree = 0;
	for (uint32_t b = f->nblocks; b-- > 0;) {
		f->free_stack[f->nfree++] = b; /* block 0 on top */
	}
	for (uint32_t s = 0; s < NVP_COUNTOF(f->open); s++) {
		f->open[s] = NO_BLOCK;
	}
}

static void
invalidate(struct emu_ftl *f, uint32_t ppn)
{
	if (ppn == UNMAPPED) {
		return;
	}
	f->p2l[ppn] = UNMAPPED;
	f->blk[ppn / f->cfg.ppb].valid--;
}

/* Program logical page @lp into the open block of @stream; takes a free block if needed. */
static int
program(struct emu_ftl *f, uint32_t stream, uint64_t lp)
{
	uint32_t b = f->open[stream];
	uint32_t ppn;

	if (b == NO_BLOCK || f->blk[b].wp == f->cfg.ppb) {
		if (b != NO_BLOCK) {
			f->blk[b].state = BLK_CLOSED;
		}
		if (f->nfree == 0) {
			f->open[stream] = NO_BLOCK;
			return -ENOSPC;
		}
		b = f->free_stack[--f->nfree];
		f->blk[b].state = BLK_OPEN;
		f->blk[b].stream = (uint8_t)stream;
		f->open[stream] = b;
	}
	ppn = b * f->cfg.ppb + f->blk[b].wp++;
	invalidate(f, f->l2p[lp]);
	f->l2p[lp] = ppn;
	f->p2l[ppn] = (uint32_t)lp;
	f->blk[b].valid++;
	f->blk[b].stamp = f->clock;
	f->cnt.nand_pages++;
	return 0;
}

/* Is closed block @a a better victim than @b (NO_BLOCK: none yet)? */
static bool
better_victim(const struct emu_ftl *f, uint32_t a, uint32_t b)
{
	const struct ftl_block *x = &f->blk[a], *y;
	double sx, sy;

	if (b == NO_BLOCK) {
		return true;
	}
	y = &f->blk[b];
	if (f->cfg.gc == EMU_FTL_GC_GREEDY || x->valid == 0 || y->valid == 0) {
		return x->valid < y->valid || (x->valid == y->valid && x->stamp < y->stamp);
	}
	/* benefit / cost = free space gained x age / (read + write of the live data) */
	sx = (double)(f->cfg.ppb - x->valid) * (double)(f->clock - x->stamp) / (2.0 * x->valid);
	sy = (double)(f->cfg.ppb - y->valid) * (double)(f->clock - y->stamp) / (2.0 * y->valid);
	return sx > sy;
}

static uint32_t
pick_victim(const struct emu_ftl *f)
{
	uint32_t v = NO_BLOCK;

	for (uint32_t b = 0; b < f->nblocks; b++) {
		if (f->blk[b].state == BLK_CLOSED && better_victim(f, b, v)) {
			v = b;
		}
	}
	return v;
}

/* Collect one block: relocate its valid pages, erase it. \return 0 or -ENOSPC. */
static int
gc_one(struct emu_ftl *f)
{
	uint32_t v = pick_victim(f);
	uint32_t base;

	if (v == NO_BLOCK || f->blk[v].valid == f->cfg.ppb) {
		return -ENOSPC; /* nothing to gain: the device is full of valid data */
	}
	base = v * f->cfg.ppb;
	for (uint32_t i = 0; i < f->blk[v].wp && f->blk[v].valid > 0; i++) {
		uint32_t lp = f->p2l[base + i];

		if (lp == UNMAPPED) {
			continue;
		}
		if (program(f, gc_stream(f, f->blk[v].stream), lp) != 0) {
			return -ENOSPC;
		}
		f->cnt.gc_pages++;
	}
	f->blk[v].state = BLK_FREE;
	f->blk[v].wp = 0;
	f->blk[v].valid = 0;
	f->free_stack[f->nfree++] = v;
	f->cnt.erases++;
	f->cnt.gc_runs++;
	return 0;
}

/* Before a host stream takes a block: collect until EMU_FTL_GC_LOW blocks are free. */
static int
ensure_free(struct emu_ftl *f)
{
	uint32_t guard = f->nblocks;

	while (f->nfree < EMU_FTL_GC_LOW && guard-- > 0) {
		if (gc_one(f) != 0) {
			break;
		}
	}
	return f->nfree > 0 ? 0 : -ENOSPC;
}

/*
 * Host write of @npages pages from logical page @lpage on @stream (0 = none; streams past
 * the configured count use stream 0). \return 0, -ERANGE, or -ENOSPC (GC found no victim:
 * only possible with no over-provisioning).
 */
int
emu_ftl_write(struct emu_ftl *f, uint64_t lpage, uint64_t npages, uint32_t stream)
{
	if (lpage >= f->cfg.lpages || npages > f->cfg.lpages - lpage) {
		return -ERANGE;
	}
	if (stream > f->cfg.nstreams) {
		stream = 0;
	}
	for (uint64_t i = 0; i < npages; i++) {
		uint32_t b = f->open[stream];

		if ((b == NO_BLOCK || f->blk[b].wp == f->cfg.ppb) && ensure_free(f) != 0) {
			return -ENOSPC;
		}
		f->clock++;
		if (program(f, stream, lpage + i) != 0) {
			return -ENOSPC;
		}
		f->cnt.host_pages++;
		if (stream != 0) {
			f->cnt.stream_pages++;
		}
	}
	return 0;
}

/* Deallocate @npages pages from @lpage: GC no longer copies them. */
void
emu_ftl_trim(struct emu_ftl *f, uint64_t lpage, uint64_t npages)
{
	if (lpage >= f->cfg.lpages) {
		return;
	}
	npages = NVP_MIN(npages, f->cfg.lpages - lpage);
	for (uint64_t i = 0; i < npages; i++) {
		uint32_t ppn = f->l2p[lpage + i];

		if (ppn != UNMAPPED) {
			invalidate(f, ppn);
			f->l2p[lpage + i] = UNMAPPED;
			f->cnt.trimmed_pages++;
		}
	}
}

void
emu_ftl_get_counters(const struct emu_ftl *f, struct emu_ftl_counters *out)
{
	uint64_t valid = 0;

	*out = f->cnt;
	for (uint32_t b = 0; b < f->nblocks; b++) {
		valid += f->blk[b].valid;
	}
	out->valid_pages = valid;
	out->free_blocks = f->nfree;
	out->blocks = f->nblocks;
	out->pages_per_block = f->cfg.ppb;
	out->logical_pages = f->cfg.lpages;
}

/* The live counters (no snapshot fields): cheap, for the I/O path. */
const struct emu_ftl_counters *
emu_ftl_counters(const struct emu_ftl *f)
{
	return &f->cnt;
}

/* Pages left in the open block of @stream: a whole block when none is open or it is full. */
uint32_t
emu_ftl_open_room(const struct emu_ftl *f, uint32_t stream)
{
	uint32_t b = stream < f->nopen / 2 ? f->open[stream] : NO_BLOCK;

	return b == NO_BLOCK || f->blk[b].wp == f->cfg.ppb ? f->cfg.ppb : f->cfg.ppb - f->blk[b].wp;
}

/*
 * Close the open block of host stream @stream, partly written or not: the next write
 * through it takes a fresh block (an FDP reclaim unit handle update). \return whether
 * a block with room left was closed.
 */
bool
emu_ftl_close_stream(struct emu_ftl *f, uint32_t stream)
{
	uint32_t b = stream < f->nopen / 2 ? f->open[stream] : NO_BLOCK;
	bool partial;

	if (b == NO_BLOCK) {
		return false;
	}
	partial = f->blk[b].wp < f->cfg.ppb;
	f->blk[b].state = BLK_CLOSED;
	f->open[stream] = NO_BLOCK;
	return partial;
}

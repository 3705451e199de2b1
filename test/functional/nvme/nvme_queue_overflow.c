/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * More requests than queue entries: a 16-entry queue with 64 requests outstanding. The
 * requests that find no free slot wait on the qpair's queued list and go out as slots
 * free up; every one completes exactly once with the right data, and the device never
 * sees more than 15 commands in the SQ at once (a full ring of 16 holds 15). Also with
 * delay_doorbell, whose SQ doorbell is rung only by process_completions() or
 * ring_doorbell(), and with callbacks that submit from inside a completion. And a qpair
 * made with opts.async_mode, whose queues its polls create.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

#define ENTRIES 16
#define REQS 64

struct req {
	struct fx_cpl c;
	uint8_t *buf;
};

static int
submit_all(struct fx_ctrlr *fx, struct nvp_nvme_qpair *qpair, struct req *reqs, bool write,
	   uint32_t bs, uint32_t tag)
{
	unsigned int i;
	int rc, failed = 0;

	for (i = 0; i < REQS; i++) {
		memset(&reqs[i].c, 0, sizeof(reqs[i].c));
		if (write) {
			fx_pattern_fill(reqs[i].buf, i * 3, 2, bs, tag);
			rc = nvp_nvme_ns_cmd_write(fx->ns, qpair, reqs[i].buf, i * 3, 2, fx_cpl_cb,
						   &reqs[i].c, 0);
		} else {
			memset(reqs[i].buf, 0, 2 * bs);
			rc = nvp_nvme_ns_cmd_read(fx->ns, qpair, reqs[i].buf, i * 3, 2, fx_cpl_cb,
						  &reqs[i].c, 0);
		}
		if (rc != 0) {
			fprintf(stderr, "  request %u of %u refused: %d\n", i, REQS, rc);
			failed++;
		}
	}
	return failed;
}

static void
wait_all(struct nvp_nvme_qpair *qpair, struct req *reqs)
{
	unsigned int i;

	for (i = 0; i < REQS; i++) {
		CU_ASSERT_EQUAL(fx_poll_until(qpair, &reqs[i].c.calls, 1, FX_WAIT_MS), 0);
		CU_ASSERT_FALSE(nvme_cpl_is_error(&reqs[i].c.cpl));
	}
	fx_poll_for(qpair, 10);
	for (i = 0; i < REQS; i++) {
		CU_ASSERT_EQUAL(reqs[i].c.calls, 1);
	}
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(qpair), 0);
}

static void
overflow(const char *emu_opts, bool delay_doorbell)
{
	static struct req reqs[REQS];
	struct nvp_nvme_qpair *qpair = NULL;
	struct nvp_emu_stats stats = { .info_size = sizeof(stats) };
	struct fx_ctrlr fx;
	struct fx_cpl extra = { 0 };
	uint32_t bs;
	unsigned int i;

	if (fx_open(&fx, emu_opts) != 0) {
		fx_close(&fx);
		return;
	}
	bs = nvp_nvme_ns_get_sector_size(fx.ns);
	if (fx_qpair_alloc(fx.ctrlr, ENTRIES, REQS, 0, delay_doorbell, &qpair) != 0) {
		CU_FAIL("qpair with 16 entries and 64 requests");
		fx_close(&fx);
		return;
	}
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_size(qpair), ENTRIES);
	for (i = 0; i < REQS; i++) {
		reqs[i].buf = fx_dma_alloc(2 * bs);
	}

	CU_ASSERT_EQUAL(submit_all(&fx, qpair, reqs, true, bs, 0x0f), 0);
	/* Nothing completes before the owner polls: all 64 are outstanding. */
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(qpair), REQS);
	/* Every request object is in use: the 65th is refused, not lost. */
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(fx.ns, qpair, reqs[0].buf, 0, 1, fx_cpl_cb, &extra, 0),
			-ENOMEM);
	wait_all(qpair, reqs);
	CU_ASSERT_EQUAL(extra.calls, 0);

	CU_ASSERT_EQUAL(submit_all(&fx, qpair, reqs, false, bs, 0x0f), 0);
	wait_all(qpair, reqs);
	for (i = 0; i < REQS; i++) {
		CU_ASSERT(fx_pattern_check(reqs[i].buf, i * 3, 2, bs, 0x0f) < 0);
	}

	if (fx_is_emu(&fx)) {
		nvp_emu_ctrlr_get_stats(fx.emu, &stats);
		CU_ASSERT(stats.max_sq_depth_seen <= ENTRIES - 1);
		CU_ASSERT(stats.write_cmds >= REQS);
		CU_ASSERT(stats.read_cmds >= REQS);
	}

	for (i = 0; i < REQS; i++) {
		nvp_env_dma_free(reqs[i].buf);
	}
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(qpair), 0);
	fx_close(&fx);
}

static void
test_overflow(void)
{
	overflow("size=4M,lba=512", false);
}

static void
test_overflow_delay_doorbell(void)
{
	overflow("size=4M,lba=512", true);
}

static void
test_overflow_slow_device(void)
{
	FX_NEEDS_EMU("service times and channels (read_us, write_us, channels)");
	/* One command serviced at a time: the SQ really fills and stays full. */
	overflow("size=4M,lba=4096,channels=1,write_us=100,read_us=50", false);
}

static void
test_overflow_slow_device_delay_doorbell(void)
{
	FX_NEEDS_EMU("service times and channels (read_us, write_us, channels)");
	overflow("size=4M,lba=4096,channels=1,write_us=100,read_us=50", true);
}

/* With delay_doorbell the device sees nothing until the doorbell is rung. */
static void
test_delay_doorbell_semantics(void)
{
	struct nvp_nvme_qpair *qpair = NULL;
	struct nvp_emu_stats before = { .info_size = sizeof(before) };
	struct nvp_emu_stats now = { .info_size = sizeof(now) };
	struct fx_cpl c[8];
	struct fx_ctrlr fx;
	uint8_t *buf;
	unsigned int i;
	uint64_t deadline;

	FX_NEEDS_EMU("the device's command counters (what it has seen before the doorbell)");
	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, 32, 0, 0, true, &qpair), 0);
	buf = fx_dma_alloc(8 * 512);
	memset(c, 0, sizeof(c));
	nvp_emu_ctrlr_get_stats(fx.emu, &before);
	for (i = 0; i < 8; i++) {
		CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(fx.ns, qpair, buf + i * 512, i, 1, fx_cpl_cb,
						      &c[i], 0),
				0);
	}
	usleep(50 * 1000);
	nvp_emu_ctrlr_get_stats(fx.emu, &now);
	CU_ASSERT_EQUAL(now.io_cmds, before.io_cmds);

	/* One doorbell write releases the batch; the device executes it without any
	 * completion processing by the host. */
	nvp_nvme_qpair_ring_doorbell(qpair);
	deadline = fx_now_us() + 5u * 1000 * 1000;
	do {
		nvp_emu_ctrlr_get_stats(fx.emu, &now);
	} while (now.io_cmds < before.io_cmds + 8 && fx_now_us() < deadline);
	CU_ASSERT_EQUAL(now.io_cmds, before.io_cmds + 8);
	for (i = 0; i < 8; i++) {
		CU_ASSERT_EQUAL(fx_poll_until(qpair, &c[i].calls, 1, FX_WAIT_MS), 0);
		CU_ASSERT_FALSE(nvme_cpl_is_error(&c[i].cpl));
	}
	/* Ringing with nothing pending is harmless. */
	nvp_nvme_qpair_ring_doorbell(qpair);
	nvp_env_dma_free(buf);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(qpair), 0);
	fx_close(&fx);
}

/* Completion callbacks that submit the next request (re-entrant submission). */
struct chain {
	struct fx_ctrlr *fx;
	struct nvp_nvme_qpair *qpair;
	uint8_t *buf;
	unsigned int started;
	unsigned int completed;
	unsigned int errors;
	unsigned int target;
};

static void
chain_cb(void *arg, const struct nvme_cpl *cpl)
{
	struct chain *ch = arg;

	ch->completed++;
	if (nvme_cpl_is_error(cpl)) {
		ch->errors++;
	}
	if (ch->started < ch->target) {
		uint64_t lba = ch->started % 1000;

		if (nvp_nvme_ns_cmd_write(ch->fx->ns, ch->qpair, ch->buf, lba, 1, chain_cb, ch,
					  0) == 0) {
			ch->started++;
		} else {
			ch->errors++;
		}
	}
}

static void
test_submit_from_callback(void)
{
	struct fx_ctrlr fx;
	struct chain ch;
	unsigned int i;

	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	memset(&ch, 0, sizeof(ch));
	ch.fx = &fx;
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, ENTRIES, REQS, 0, false, &ch.qpair), 0);
	ch.buf = fx_dma_alloc(nvp_nvme_ns_get_sector_size(fx.ns));
	ch.target = 2000;
	/* Fill every request object, then let completions keep the pipe full. */
	for (i = 0; i < REQS; i++) {
		CU_ASSERT_EQUAL(
			nvp_nvme_ns_cmd_write(fx.ns, ch.qpair, ch.buf, i, 1, chain_cb, &ch, 0), 0);
		ch.started++;
	}
	CU_ASSERT_EQUAL(fx_poll_until(ch.qpair, &ch.completed, ch.target, 20000), 0);
	fx_poll_for(ch.qpair, 10);
	CU_ASSERT_EQUAL(ch.started, ch.target);
	CU_ASSERT_EQUAL(ch.completed, ch.target);
	CU_ASSERT_EQUAL(ch.errors, 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(ch.qpair), 0);
	nvp_env_dma_free(ch.buf);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(ch.qpair), 0);
	fx_close(&fx);
}

/* Freeing a qpair with requests still queued completes them with SQ deletion. */
static void
test_free_with_outstanding(void)
{
	static struct req reqs[REQS];
	struct nvp_nvme_qpair *qpair = NULL;
	struct fx_ctrlr fx;
	unsigned int i, aborted = 0, ok = 0;
	uint32_t bs;

	if (fx_open(&fx, "size=4M,channels=1,write_us=2000") != 0) {
		fx_close(&fx);
		return;
	}
	bs = nvp_nvme_ns_get_sector_size(fx.ns);
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, ENTRIES, REQS, 0, false, &qpair), 0);
	for (i = 0; i < REQS; i++) {
		reqs[i].buf = fx_dma_alloc(2 * bs);
	}
	CU_ASSERT_EQUAL(submit_all(&fx, qpair, reqs, true, bs, 1), 0);
	nvp_nvme_qpair_process_completions(qpair, 0);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(qpair), 0);
	/* Every callback ran exactly once, successfully or with ABORTED_SQ_DELETION. */
	for (i = 0; i < REQS; i++) {
		CU_ASSERT_EQUAL(reqs[i].c.calls, 1);
		if (reqs[i].c.calls == 0) {
			continue;
		}
		if (!nvme_cpl_is_error(&reqs[i].c.cpl)) {
			ok++;
		} else if (reqs[i].c.cpl.status.sct == NVME_SCT_GENERIC &&
			   reqs[i].c.cpl.status.sc == NVME_SC_ABORTED_SQ_DELETION) {
			aborted++;
		}
		nvp_env_dma_free(reqs[i].buf);
	}
	CU_ASSERT_EQUAL(ok + aborted, REQS);
	/* A 2 ms write keeps requests in flight; a real device's timing is its own (it may
	 * finish all of them before the SQ is deleted). */
	if (fx_is_emu(&fx)) {
		CU_ASSERT(aborted > 0);
	} else {
		printf("  %u completed, %u aborted by SQ deletion\n", ok, aborted);
	}
	fx_close(&fx);
}

/* Every granted queue id in use at once, doorbells far into BAR0 (stride 64 bytes). */
static void
many_qpairs(const char *emu_opts)
{
	static struct nvp_nvme_qpair *q[64];
	struct fx_ctrlr fx;
	uint32_t n, i, bs, allocated = 0;
	uint8_t *buf;

	if (fx_open(&fx, emu_opts) != 0) {
		fx_close(&fx);
		return;
	}
	bs = nvp_nvme_ns_get_sector_size(fx.ns);
	CU_ASSERT_FATAL(bs <= 4096);
	/* fx.qpair holds one id. */
	n = nvp_nvme_ctrlr_get_num_io_queues(fx.ctrlr) - 1;
	CU_ASSERT_FATAL(n <= 64);
	buf = fx_dma_alloc((size_t)n * 4096);
	memset(q, 0, sizeof(q));
	for (i = 0; i < n; i++) {
		if (fx_qpair_alloc(fx.ctrlr, 4, 0, 0, i % 2 == 1, &q[i]) == 0) {
			allocated++;
		}
	}
	CU_ASSERT_EQUAL(allocated, n);
	for (i = 0; i < n; i++) {
		if (q[i] == NULL) {
			continue;
		}
		fx_pattern_fill(buf + (size_t)i * 4096, i, 1, bs, 0x60);
		CU_ASSERT_EQUAL(fx_io(fx.ns, q[i], FX_WRITE, buf + (size_t)i * 4096, i, 1, 0, NULL),
				0);
	}
	/* Read each block back through the next qpair. */
	for (i = 0; i < n; i++) {
		struct nvp_nvme_qpair *rq = q[(i + 1) % n] != NULL ? q[(i + 1) % n] : q[i];

		if (q[i] == NULL || rq == NULL) {
			continue;
		}
		memset(buf + (size_t)i * 4096, 0, bs);
		CU_ASSERT_EQUAL(fx_io(fx.ns, rq, FX_READ, buf + (size_t)i * 4096, i, 1, 0, NULL),
				0);
		CU_ASSERT(fx_pattern_check(buf + (size_t)i * 4096, i, 1, bs, 0x60) < 0);
	}
	for (i = 0; i < n; i++) {
		if (q[i] != NULL) {
			CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(q[i]), 0);
		}
	}
	nvp_env_dma_free(buf);
	fx_close(&fx);
}

static void
test_many_qpairs(void)
{
	many_qpairs("size=4M,queues=64");
}

static void
test_many_qpairs_wide_stride(void)
{
	FX_NEEDS_EMU("a doorbell stride option (dstrd=4)");
	many_qpairs("size=4M,queues=64,dstrd=4");
}

/* A deep queue: 4096 entries (QSIZE 4095), 8192 requests in flight, twice round. A real
 * controller: as deep as its MQES allows (QEMU: 2048 entries), twice as many requests. */
static void
test_large_queue(void)
{
	static struct fx_cpl c[8192];
	struct nvp_nvme_qpair *qpair = NULL;
	struct nvp_emu_stats stats = { .info_size = sizeof(stats) };
	struct fx_ctrlr fx;
	uint8_t *buf;
	unsigned int i, errors = 0, refused = 0;
	uint32_t entries = 4096, nreq, bs, chunk;

	if (fx_open(&fx, "size=8M,mqes=4095") != 0) {
		fx_close(&fx);
		return;
	}
	if (!fx_is_emu(&fx)) {
		uint32_t mqes = nvp_nvme_ctrlr_get_regs_cap(fx.ctrlr).bits.mqes;

		entries = mqes + 1u < 4096 ? mqes + 1u : 4096;
	}
	nreq = 2 * entries;
	bs = nvp_nvme_ns_get_sector_size(fx.ns);
	chunk = nvp_nvme_ns_get_max_io_xfer_size(fx.ns) / bs;
	chunk = chunk < 256 ? chunk : 256;
	CU_ASSERT_FATAL(chunk >= 1);
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, entries, nreq, 0, false, &qpair), 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_size(qpair), entries);
	buf = fx_dma_alloc((size_t)nreq * bs);
	memset(c, 0, sizeof(c));
	for (i = 0; i < nreq; i++) {
		fx_pattern_fill(buf + (size_t)i * bs, i, 1, bs, 0x62);
		if (nvp_nvme_ns_cmd_write(fx.ns, qpair, buf + (size_t)i * bs, i, 1, fx_cpl_cb,
					  &c[i], 0) != 0) {
			refused++;
		}
	}
	CU_ASSERT_EQUAL(refused, 0);
	for (i = 0; i < nreq; i++) {
		CU_ASSERT_EQUAL(fx_poll_until(qpair, &c[i].calls, 1, FX_WAIT_MS), 0);
		errors += nvme_cpl_is_error(&c[i].cpl) ? 1 : 0;
	}
	CU_ASSERT_EQUAL(errors, 0);
	if (fx_is_emu(&fx)) {
		nvp_emu_ctrlr_get_stats(fx.emu, &stats);
		CU_ASSERT(stats.max_sq_depth_seen <= 4095);
	}
	memset(buf, 0, (size_t)nreq * bs);
	for (i = 0; i < nreq; i += chunk) {
		uint32_t n = nreq - i < chunk ? nreq - i : chunk;

		CU_ASSERT_EQUAL(fx_io(fx.ns, qpair, FX_READ, buf + (size_t)i * bs, i, n, 0, NULL),
				0);
	}
	CU_ASSERT(fx_pattern_check(buf, 0, nreq, bs, 0x62) < 0);
	nvp_env_dma_free(buf);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(qpair), 0);
	fx_close(&fx);
}

static int
async_alloc(struct nvp_nvme_ctrlr *ctrlr, struct nvp_nvme_qpair **qpair)
{
	struct nvp_nvme_io_qpair_opts opts;

	nvp_nvme_ctrlr_get_default_io_qpair_opts(ctrlr, &opts, sizeof(opts));
	opts.async_mode = true;
	return nvp_nvme_ctrlr_alloc_io_qpair(ctrlr, &opts, qpair);
}

static uint64_t
emu_admin_cmds(struct fx_ctrlr *fx)
{
	struct nvp_emu_stats stats = { .info_size = sizeof(stats) };

	nvp_emu_ctrlr_get_stats(fx->emu, &stats);
	return stats.admin_cmds;
}

/*
 * opts.async_mode: the call returns with the qpair allocated and no queue created (no
 * admin command reached the device); a submission waits on the queued list; the owner's
 * polls create the queues and send it; verified I/O follows. A qpair freed while its
 * Create I/O CQ is in flight, or before any poll, leaves nothing behind: its queue id is
 * used again, and a reset re-creates what connected.
 */
static void
test_async_connect(void)
{
	struct nvp_nvme_qpair *qpair = NULL, *other = NULL;
	struct fx_ctrlr fx;
	struct fx_cpl c = { 0 };
	uint64_t admin0;
	uint8_t *buf;
	uint32_t bs, i;

	FX_NEEDS_EMU("counting the admin commands the device received");
	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	bs = nvp_nvme_ns_get_sector_size(fx.ns);
	buf = fx_dma_alloc(4 * bs);
	admin0 = emu_admin_cmds(&fx);
	CU_ASSERT_EQUAL_FATAL(async_alloc(fx.ctrlr, &qpair), 0);
	CU_ASSERT_FALSE(nvp_nvme_qpair_is_connected(qpair));
	CU_ASSERT_EQUAL(emu_admin_cmds(&fx), admin0); /* no Create I/O CQ/SQ sent yet */
	fx_pattern_fill(buf, 8, 4, bs, 0x71);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(fx.ns, qpair, buf, 8, 4, fx_cpl_cb, &c, 0), 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(qpair), 1); /* queued */
	CU_ASSERT_EQUAL(fx_poll_until(qpair, &c.calls, 1, FX_WAIT_MS), 0);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&c.cpl));
	CU_ASSERT_TRUE(nvp_nvme_qpair_is_connected(qpair));
	CU_ASSERT(emu_admin_cmds(&fx) >= admin0 + 2); /* the polls created CQ and SQ */
	memset(buf, 0, 4 * bs);
	CU_ASSERT_EQUAL(fx_io(fx.ns, qpair, FX_READ, buf, 8, 4, 0, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, 8, 4, bs, 0x71) < 0);

	/* freed before any poll, then after one (its Create I/O CQ sent), many times */
	for (i = 0; i < 80; i++) {
		CU_ASSERT_EQUAL_FATAL(async_alloc(fx.ctrlr, &other), 0);
		if (i % 2 == 1) {
			(void)nvp_nvme_qpair_process_completions(other, 0);
		}
		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(other), 0);
	}

	/* a reset: the async qpair's queues are re-created like any other's */
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_ctrlr_reset(fx.ctrlr), 0);
	memset(buf, 0, 4 * bs);
	CU_ASSERT_EQUAL(fx_io(fx.ns, qpair, FX_READ, buf, 8, 4, 0, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, 8, 4, bs, 0x71) < 0);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 8, 4, 0, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, 8, 4, bs, 0x71) < 0);
	nvp_env_dma_free(buf);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(qpair), 0);
	fx_close(&fx);
}

/* Reset over and over, with I/O in between: nothing leaks, nothing drifts. */
static void
test_reset_loop(void)
{
	struct fx_ctrlr fx;
	uint8_t *buf;
	unsigned int i;
	uint32_t bs, queues;

	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	bs = nvp_nvme_ns_get_sector_size(fx.ns);
	queues = nvp_nvme_ctrlr_get_num_io_queues(fx.ctrlr);
	buf = fx_dma_alloc(4096);
	for (i = 0; i < 20; i++) {
		fx_pattern_fill(buf, i, 1, bs, 0x61);
		CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, i, 1, 0, NULL), 0);
		CU_ASSERT_EQUAL_FATAL(nvp_nvme_ctrlr_reset(fx.ctrlr), 0);
		memset(buf, 0, bs);
		CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, i, 1, 0, NULL), 0);
		CU_ASSERT(fx_pattern_check(buf, i, 1, bs, 0x61) < 0);
	}
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_num_io_queues(fx.ctrlr), queues);
	if (fx_is_emu(&fx)) {
		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_num_io_queues(fx.ctrlr), 64);
	}
	nvp_env_dma_free(buf);
	fx_close(&fx);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "overflow", test_overflow },
		{ "overflow_delay_doorbell", test_overflow_delay_doorbell },
		{ "overflow_slow_device", test_overflow_slow_device },
		{ "overflow_slow_device_delay_doorbell", test_overflow_slow_device_delay_doorbell },
		{ "delay_doorbell_semantics", test_delay_doorbell_semantics },
		{ "submit_from_callback", test_submit_from_callback },
		{ "free_with_outstanding", test_free_with_outstanding },
		{ "many_qpairs", test_many_qpairs },
		{ "many_qpairs_wide_stride", test_many_qpairs_wide_stride },
		{ "large_queue", test_large_queue },
		{ "reset_loop", test_reset_loop },
		{ "async_connect", test_async_connect },
	};

	return fx_main(argc, argv, "nvme_queue_overflow", tests, NVP_COUNTOF(tests));
}

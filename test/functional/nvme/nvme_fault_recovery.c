/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Recovery in the corners: faults that meet a full queue, queued requests and resets.
 *  - An injected error status reaches exactly the request it was meant for.
 *  - A dropped completion on a queue with one usable slot (2 entries): the requests
 *    queued behind it still complete (the driver must not wait forever for a slot the
 *    device has long given back).
 *  - Deadlines of requests still on the software queued list.
 *  - A controller that stops answering (all-ones registers) with requests in flight:
 *    every request completes once, with an error, in bounded time.
 *  - A reset with requests on the queued list: each completes exactly once (the lost
 *    ones sent again by the default retry policy, the queued ones after the reset).
 *  - A completion written with a stale phase tag: the CQ is stuck behind it; the driver
 *    re-makes the queues, every request completes once, and the qpair works again.
 *  - The same on the admin queue: the driver resets the controller, which rebuilds the
 *    admin queue; the admin commands behind the stale entry fail once, later ones and
 *    the I/O qpair work again.
 *  - Several controllers at once, with their data kept apart.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

/* The requests of one test: a completion record and a block each. */
struct batch {
	unsigned int n;
	struct fx_cpl c[64];
	uint8_t *buf;
};

static void
batch_init(struct batch *b, unsigned int n)
{
	memset(b, 0, sizeof(*b));
	b->n = n;
	b->buf = fx_dma_alloc((size_t)n * 4096);
}

static void
batch_fini(struct batch *b)
{
	nvp_env_dma_free(b->buf);
}

/* Submit @b->n one-block writes (pattern @tag) to LBAs 0..n-1. \return refusals. */
static unsigned int
batch_write(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, struct batch *b, uint32_t tag)
{
	unsigned int i, refused = 0;

	for (i = 0; i < b->n; i++) {
		memset(&b->c[i], 0, sizeof(b->c[i]));
		fx_pattern_fill(b->buf + (size_t)i * 4096, i, 1, 512, tag);
		if (nvp_nvme_ns_cmd_write(ns, qpair, b->buf + (size_t)i * 4096, i, 1, fx_cpl_cb,
					  &b->c[i], 0) != 0) {
			refused++;
		}
	}
	return refused;
}

/* Wait for every request; count errors. \return -ETIMEDOUT if one never came. */
static int
batch_wait(struct nvp_nvme_qpair *qpair, struct batch *b, uint32_t ms, unsigned int *errors)
{
	unsigned int i;
	int rc = 0;

	*errors = 0;
	for (i = 0; i < b->n; i++) {
		int r = fx_poll_until(qpair, &b->c[i].calls, 1, ms);

		if (r == -ETIMEDOUT) {
			fprintf(stderr, "  request %u of %u never completed\n", i, b->n);
			rc = -ETIMEDOUT;
			break;
		}
	}
	fx_poll_for(qpair, 20);
	for (i = 0; i < b->n; i++) {
		CU_ASSERT(b->c[i].calls <= 1);
		if (b->c[i].calls == 1 && nvme_cpl_is_error(&b->c[i].cpl)) {
			(*errors)++;
		}
	}
	return rc;
}

static void
test_injected_error_status(void)
{
	struct nvme_error_information_entry *log;
	struct fx_ctrlr fx;
	struct nvme_cpl cpl;
	uint8_t *buf;
	uint32_t status = (NVME_SCT_MEDIA_ERROR << 8) | NVME_SC_UNRECOVERED_READ_ERROR;

	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	buf = fx_dma_alloc(4096);
	log = fx_dma_alloc(4096);
	/* The third I/O command from now fails with Unrecovered Read Error. */
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(fx.emu, NVP_EMU_FAULT_ERROR, 1, 2, status), 0);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, 0, 1, 0, NULL), 0);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, 1, 1, 0, NULL), 0);
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 0, 1, 0, &cpl), -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_MEDIA_ERROR, NVME_SC_UNRECOVERED_READ_ERROR);
	/* Only that one. */
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 0, 1, 0, NULL), 0);
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(fx.ctrlr));
	/* Recorded in the error log. */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_log_page(fx.ctrlr, NVME_LOG_ERROR, NVME_GLOBAL_NS_TAG,
						    log, 64, 0, NULL),
			0);
	CU_ASSERT_EQUAL(log->status.sct, NVME_SCT_MEDIA_ERROR);
	CU_ASSERT_EQUAL(log->status.sc, NVME_SC_UNRECOVERED_READ_ERROR);
	nvp_env_dma_free(log);
	nvp_env_dma_free(buf);
	fx_close(&fx);
}

/*
 * A dropped completion on queues with very few slots; requests queued behind it. A
 * deadline counts from the submit call, so requests that waited behind a lost one may
 * time out as well (on the queued list, never sent, or in the device): at least every
 * dropped one ends in an error, each exactly once, none lost.
 */
static void
drop_on_small_queue(uint32_t entries, uint32_t drops)
{
	struct nvp_emu_stats before = { .info_size = sizeof(before) };
	struct nvp_emu_stats after = { .info_size = sizeof(after) };
	struct nvp_nvme_qpair *qpair = NULL;
	struct fx_ctrlr fx;
	struct batch b;
	unsigned int errors = 0;
	uint64_t start;

	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, entries, 16, 200000, false, &qpair), 0);
	batch_init(&b, 16);
	nvp_emu_ctrlr_get_stats(fx.emu, &before);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(fx.emu, NVP_EMU_FAULT_DROP_CPL, drops, 0, 0), 0);
	start = fx_now_us();
	CU_ASSERT_EQUAL(batch_write(fx.ns, qpair, &b, 0x31), 0);
	CU_ASSERT_EQUAL(batch_wait(qpair, &b, 5000, &errors), 0);
	nvp_emu_ctrlr_get_stats(fx.emu, &after);
	fprintf(stderr, "  %u-entry queue, %" PRIu64 " dropped: %u errors, %" PRIu64 " ms\n",
		entries, after.dropped_cpls - before.dropped_cpls, errors,
		(fx_now_us() - start) / 1000);
	CU_ASSERT(after.dropped_cpls > before.dropped_cpls);
	CU_ASSERT(errors >= after.dropped_cpls - before.dropped_cpls);
	/* Drops not reached (their requests expired before they were sent) are cancelled. */
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(fx.emu, NVP_EMU_FAULT_NONE, 0, 0, 0), 0);

	/* And the qpair is usable afterwards, at full depth. */
	CU_ASSERT_EQUAL(batch_write(fx.ns, qpair, &b, 0x32), 0);
	CU_ASSERT_EQUAL(batch_wait(qpair, &b, 5000, &errors), 0);
	CU_ASSERT_EQUAL(errors, 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(qpair), 0);
	batch_fini(&b);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(qpair), 0);
	fx_close(&fx);
}

static void
test_drop_on_two_entry_queue(void)
{
	drop_on_small_queue(2, 1);
}

static void
test_drops_fill_four_entry_queue(void)
{
	/* Every usable slot of a 4-entry queue (3) loses its completion. */
	drop_on_small_queue(4, 3);
}

/* More lost completions than the queue has spare command identifiers. */
static void
test_drops_exhaust_two_entry_queue(void)
{
	drop_on_small_queue(2, 2);
}

static void
test_drops_exhaust_four_entry_queue(void)
{
	drop_on_small_queue(4, 7);
}

/*
 * 16 requests on a 4-entry queue of a device that takes 30 ms per write, deadline
 * 150 ms: the last requests wait longer than the deadline on the queued list. Whatever
 * the driver decides for them, each completes once, and successful ones were written.
 */
static void
test_deadline_while_queued(void)
{
	struct nvp_nvme_qpair *qpair = NULL;
	struct fx_ctrlr fx;
	struct batch b;
	unsigned int errors = 0, i;
	uint8_t *rd;

	if (fx_open(&fx, "size=4M,channels=1,write_us=30000") != 0) {
		fx_close(&fx);
		return;
	}
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, 4, 16, 150000, false, &qpair), 0);
	batch_init(&b, 16);
	CU_ASSERT_EQUAL(batch_write(fx.ns, qpair, &b, 0x33), 0);
	CU_ASSERT_EQUAL(batch_wait(qpair, &b, 15000, &errors), 0);
	fprintf(stderr, "  %u of 16 queued requests ended in an error\n", errors);
	fx_poll_for(qpair, 600);
	rd = fx_dma_alloc(4096);
	for (i = 0; i < b.n; i++) {
		CU_ASSERT_EQUAL(b.c[i].calls, 1);
		if (b.c[i].calls == 1 && !nvme_cpl_is_error(&b.c[i].cpl)) {
			CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, rd, i, 1, 0, NULL), 0);
			CU_ASSERT(fx_pattern_check(rd, i, 1, 512, 0x33) < 0);
		}
	}
	nvp_env_dma_free(rd);
	batch_fini(&b);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(qpair), 0);
	fx_close(&fx);
}

/* The device goes away (registers read all ones) with requests in flight. */
static void
test_all_ones_with_requests_in_flight(void)
{
	struct nvp_nvme_ctrlr_opts opts;
	struct nvp_nvme_qpair *qpair = NULL;
	struct fx_ctrlr fx;
	struct batch b;
	unsigned int i, done = 0, errors = 0;
	uint64_t start, deadline;
	int32_t rc = 0;

	nvp_nvme_ctrlr_opts_init(&opts, sizeof(opts));
	opts.admin_timeout_ms = 1000;
	if (fx_open_opts(&fx, "size=4M,channels=1,write_us=100000,to=2", &opts) != 0) {
		fx_close(&fx);
		return;
	}
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, 16, 16, 200000, false, &qpair), 0);
	batch_init(&b, 8);
	CU_ASSERT_EQUAL(batch_write(fx.ns, qpair, &b, 0x34), 0);
	nvp_nvme_qpair_process_completions(qpair, 0);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(fx.emu, NVP_EMU_FAULT_ALL_ONES, 1, 0, 0), 0);

	start = fx_now_us();
	deadline = start + 20u * 1000 * 1000;
	while (fx_now_us() < deadline) {
		rc = nvp_nvme_qpair_process_completions(qpair, 0);
		for (i = 0, done = 0; i < b.n; i++) {
			done += b.c[i].calls;
		}
		if (done == b.n || rc < 0) {
			break;
		}
	}
	fprintf(stderr, "  %u of %u completed, process_completions %d, after %" PRIu64 " ms\n",
		done, b.n, rc, (fx_now_us() - start) / 1000);
	CU_ASSERT_EQUAL(done, b.n);
	for (i = 0; i < b.n; i++) {
		CU_ASSERT_EQUAL(b.c[i].calls, 1);
		if (nvme_cpl_is_error(&b.c[i].cpl)) {
			errors++;
		}
	}
	/* The first write may have finished before the device vanished; not the rest. */
	CU_ASSERT(errors >= b.n - 1);
	CU_ASSERT_TRUE(nvp_nvme_ctrlr_is_failed(fx.ctrlr));
	CU_ASSERT_EQUAL(nvp_nvme_qpair_process_completions(qpair, 0), -ENXIO);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(fx.ns, qpair, b.buf, 0, 1, fx_cpl_cb, &b.c[0], 0),
			-ENXIO);

	nvp_nvme_ctrlr_free_io_qpair(qpair);
	nvp_nvme_ctrlr_free_io_qpair(fx.qpair);
	fx.qpair = NULL;
	nvp_nvme_detach(fx.ctrlr);
	fx.ctrlr = NULL;
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(fx.emu, NVP_EMU_FAULT_ALL_ONES, 0, 0, 0), 0);
	batch_fini(&b);
	fx_close(&fx);
}

/* Reset with 32 requests on a 4-entry queue: in the device and on the queued list. */
static void
test_reset_with_queued_requests(void)
{
	struct nvp_nvme_qpair *qpair = NULL;
	struct fx_ctrlr fx;
	struct batch b;
	unsigned int errors = 0, i;

	if (fx_open(&fx, "size=4M,channels=1,write_us=20000") != 0) {
		fx_close(&fx);
		return;
	}
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, 4, 32, 0, false, &qpair), 0);
	batch_init(&b, 32);
	CU_ASSERT_EQUAL(batch_write(fx.ns, qpair, &b, 0x35), 0);
	nvp_nvme_qpair_process_completions(qpair, 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(qpair), 32);
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_ctrlr_reset(fx.ctrlr), 0);
	CU_ASSERT_EQUAL(batch_wait(qpair, &b, 10000, &errors), 0);
	for (i = 0; i < b.n; i++) {
		CU_ASSERT_EQUAL(b.c[i].calls, 1);
	}
	fprintf(stderr, "  %u of 32 ended with an error status\n", errors);
	/* The default retry policy sends the lost ones again; queued ones were never lost. */
	CU_ASSERT_EQUAL(errors, 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(qpair), 0);
	/* Working again at full depth. */
	CU_ASSERT_EQUAL(batch_write(fx.ns, qpair, &b, 0x36), 0);
	CU_ASSERT_EQUAL(batch_wait(qpair, &b, 10000, &errors), 0);
	CU_ASSERT_EQUAL(errors, 0);
	batch_fini(&b);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(qpair), 0);
	fx_close(&fx);
}

/* Read LBAs 0..n-1 back: a block whose write succeeded holds @tag; one whose write failed
 * holds @tag or @old (it may or may not have been written). \return blocks that do not. */
static unsigned int
batch_verify(struct fx_ctrlr *fx, const struct batch *b, uint32_t tag, uint32_t old)
{
	uint8_t *rd = fx_dma_alloc(512);
	unsigned int i, bad = 0;

	for (i = 0; i < b->n; i++) {
		bool ok = b->c[i].calls == 1 && !nvme_cpl_is_error(&b->c[i].cpl);

		CU_ASSERT_EQUAL(fx_io(fx->ns, fx->qpair, FX_READ, rd, i, 1, 0, NULL), 0);
		if (fx_pattern_check(rd, i, 1, 512, tag) < 0) {
			continue;
		}
		if (ok || fx_pattern_check(rd, i, 1, 512, old) >= 0) {
			fprintf(stderr,
				"  LBA %u holds neither its last acknowledged write nor a "
				"failed one after it\n",
				i);
			bad++;
		}
	}
	nvp_env_dma_free(rd);
	return bad;
}

/* Write the batch one request at a time (queue depth 1). \return refusals. */
static unsigned int
batch_write_qd1(struct nvp_nvme_ns *ns, struct nvp_nvme_qpair *qpair, struct batch *b, uint32_t tag,
		unsigned int *errors)
{
	unsigned int i, refused = 0;

	*errors = 0;
	for (i = 0; i < b->n; i++) {
		memset(&b->c[i], 0, sizeof(b->c[i]));
		fx_pattern_fill(b->buf + (size_t)i * 4096, i, 1, 512, tag);
		if (nvp_nvme_ns_cmd_write(ns, qpair, b->buf + (size_t)i * 4096, i, 1, fx_cpl_cb,
					  &b->c[i], 0) != 0) {
			refused++;
			continue;
		}
		CU_ASSERT_EQUAL(fx_poll_until(qpair, &b->c[i].calls, 1, 5000), 0);
		if (b->c[i].calls == 1 && nvme_cpl_is_error(&b->c[i].cpl)) {
			(*errors)++;
		}
	}
	return refused;
}

/*
 * @stale completions in a row are written with the previous pass's phase tag (bad_phase):
 * the host sees neither them nor anything the device posts after them on that CQ. With @depth 16 the
 * requests after it complete in the device behind it; with @depth 1 nothing follows until
 * the next request. The driver must see that the device posted past an entry it cannot
 * see, re-make the queues and retry or fail what the device had: every request completes
 * exactly once, what was acknowledged reads back, and the qpair works again at the
 * first deadline (@timeout_us) or the once-a-second look when nothing completes,
 * whichever comes first -- not only once every command identifier has been quarantined
 * (47 of them: seconds).
 */
static void
stale_phase(unsigned int depth, unsigned int stale, uint64_t timeout_us)
{
	struct nvp_nvme_qpair *qpair = NULL;
	struct nvp_nvme_qpair_stats st = { .info_size = sizeof(st) };
	struct fx_ctrlr fx;
	struct batch b;
	unsigned int errors = 0, i;
	uint64_t start;

	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, 32, 64, timeout_us, false, &qpair), 0);
	batch_init(&b, 16);
	CU_ASSERT_EQUAL(batch_write(fx.ns, qpair, &b, 0x51), 0);
	CU_ASSERT_EQUAL(batch_wait(qpair, &b, 5000, &errors), 0);
	CU_ASSERT_EQUAL(errors, 0);

	/* The fourth write from now (and the @stale - 1 after it) is posted with a stale
	 * phase tag. */
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(fx.emu, NVP_EMU_FAULT_BAD_PHASE, stale,
						   depth > 1 ? 3 : 0, 0),
			0);
	start = fx_now_us();
	if (depth > 1) {
		CU_ASSERT_EQUAL(batch_write(fx.ns, qpair, &b, 0x52), 0);
		CU_ASSERT_EQUAL(batch_wait(qpair, &b, 5000, &errors), 0);
	} else {
		CU_ASSERT_EQUAL(batch_write_qd1(fx.ns, qpair, &b, 0x52, &errors), 0);
		fx_poll_for(qpair, 20);
	}
	for (i = 0; i < b.n; i++) {
		CU_ASSERT_EQUAL(b.c[i].calls, 1);
	}
	fprintf(stderr,
		"  depth %u, deadline %" PRIu64 " ms: %u of %u writes failed after %u "
		"stale phase tag(s) in a row\n",
		depth, timeout_us / 1000, errors, b.n, stale);
	/* With a deadline longer than the once-a-second look, the requests behind the
	 * stuck entry are found within it and sent again: none fails. */
	if (timeout_us > 2000000) {
		CU_ASSERT_EQUAL(errors, 0);
	}
	CU_ASSERT_EQUAL(batch_verify(&fx, &b, 0x52, 0x51), 0);

	/* The qpair works again: a full batch, no error, each within 2 s (10 deadlines). */
	CU_ASSERT_EQUAL(batch_write(fx.ns, qpair, &b, 0x53), 0);
	CU_ASSERT_EQUAL(batch_wait(qpair, &b, 2000, &errors), 0);
	CU_ASSERT_EQUAL(errors, 0);
	fprintf(stderr, "  the qpair worked again %" PRIu64 " ms after the fault\n",
		(fx_now_us() - start) / 1000);
	CU_ASSERT_EQUAL(batch_verify(&fx, &b, 0x53, 0x53), 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(qpair), 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_stats(qpair, &st), 0);
	CU_ASSERT_EQUAL(st.cq_stalls, 1);
	batch_fini(&b);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(qpair), 0);
	fx_close(&fx);
}

static void
test_stale_phase_behind_many(void)
{
	stale_phase(16, 1, 200000);
}

static void
test_stale_phase_at_depth_one(void)
{
	stale_phase(1, 1, 200000);
}

static void
test_stale_phase_within_deadline(void)
{
	stale_phase(16, 1, 5000000);
}

/* Two stale entries back to back: the device's next proper entry is two past the head. */
static void
test_two_stale_phases_within_deadline(void)
{
	stale_phase(16, 2, 5000000);
}

/* Get Features (Number of Queues): an admin command that changes nothing. */
static void
get_num_queues_cmd(struct nvme_cmd *cmd)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = NVME_OPC_GET_FEATURES;
	cmd->cdw10 = NVME_FEAT_NUMBER_OF_QUEUES;
}

static int
get_num_queues(struct nvp_nvme_ctrlr *ctrlr, struct nvme_cpl *cpl)
{
	struct nvme_cmd cmd;

	get_num_queues_cmd(&cmd);
	return nvp_nvme_ctrlr_cmd_admin_sync(ctrlr, &cmd, NULL, 0, cpl);
}

static uint64_t
emu_resets(struct fx_ctrlr *fx)
{
	struct nvp_emu_stats st = { .info_size = sizeof(st) };

	CU_ASSERT_EQUAL(nvp_emu_ctrlr_get_stats(fx->emu, &st), 0);
	return st.resets;
}

/* After the admin queue was rebuilt: admin commands and the I/O qpair work again. */
static void
admin_rebuilt_check(struct fx_ctrlr *fx, uint64_t resets_before)
{
	uint32_t bs = nvp_nvme_ns_get_sector_size(fx->ns);
	uint8_t *buf = fx_dma_alloc(bs);

	CU_ASSERT_EQUAL(get_num_queues(fx->ctrlr, NULL), 0);
	CU_ASSERT_EQUAL(emu_resets(fx), resets_before + 1);
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(fx->ctrlr));
	fx_pattern_fill(buf, 5, 1, bs, 0xad);
	CU_ASSERT_EQUAL(fx_io(fx->ns, fx->qpair, FX_WRITE, buf, 5, 1, 0, NULL), 0);
	memset(buf, 0, bs);
	CU_ASSERT_EQUAL(fx_io(fx->ns, fx->qpair, FX_READ, buf, 5, 1, 0, NULL), 0);
	CU_ASSERT_EQUAL(fx_pattern_check(buf, 5, 1, bs, 0xad), -1);
	nvp_env_dma_free(buf);
}

/*
 * A synchronous admin command's completion is written with a stale phase tag (emu fault
 * admin_bad_phase). Nothing follows it, so it looks like a lost completion: the command
 * times out (and the driver sends Abort for it, whose completion lands behind the stale
 * entry). The next command finds the admin CQ stuck: the controller is reset, which
 * rebuilds the admin queue; that command completes with ABORTED SQ DELETION (DNR clear)
 * and the one after it succeeds. Without the reset every admin command from the first
 * on times out.
 */
static void
test_admin_stale_phase_sync(void)
{
	struct nvp_nvme_ctrlr_opts opts;
	struct nvme_cpl cpl;
	struct fx_ctrlr fx;
	uint64_t resets;
	int rc;

	FX_NEEDS_EMU("fault injection (admin completion with a stale phase tag)");
	nvp_nvme_ctrlr_opts_init(&opts, sizeof(opts));
	opts.admin_timeout_ms = 1000;
	if (fx_open_opts(&fx, "size=4M", &opts) != 0) {
		fx_close(&fx);
		return;
	}
	resets = emu_resets(&fx);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(fx.emu, NVP_EMU_FAULT_ADMIN_BAD_PHASE, 1, 0,
						   (uint32_t)NVME_OPC_GET_FEATURES << 16),
			0);
	CU_ASSERT_EQUAL(get_num_queues(fx.ctrlr, NULL), -ETIMEDOUT);
	memset(&cpl, 0, sizeof(cpl));
	rc = get_num_queues(fx.ctrlr, &cpl);
	fprintf(stderr, "  the admin command after the stale entry: %d (sct 0x%x sc 0x%02x)\n", rc,
		cpl.status.sct, cpl.status.sc);
	CU_ASSERT_EQUAL(rc, -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION);
	CU_ASSERT_EQUAL(cpl.status.dnr, 0);
	admin_rebuilt_check(&fx, resets);
	fx_close(&fx);
}

/*
 * Three admin commands in flight, the first two completions written with stale phase
 * tags, the third properly behind them: the admin CQ is stuck behind two entries. The
 * application's admin polls find it (nothing completed for a second) and the controller
 * is reset: each command completes once with ABORTED SQ DELETION, DNR clear, and the
 * admin queue and the I/O qpair work again. Without the reset no callback ever runs.
 */
static void
test_admin_two_stale_phases_async(void)
{
	struct fx_cpl c[3];
	struct nvme_cmd cmd;
	struct fx_ctrlr fx;
	uint64_t resets, deadline;
	unsigned int i, done = 0, ok = 0;

	FX_NEEDS_EMU("fault injection (admin completions with stale phase tags)");
	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	resets = emu_resets(&fx);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(fx.emu, NVP_EMU_FAULT_ADMIN_BAD_PHASE, 2, 0,
						   (uint32_t)NVME_OPC_GET_FEATURES << 16),
			0);
	memset(c, 0, sizeof(c));
	get_num_queues_cmd(&cmd);
	for (i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(
			nvp_nvme_ctrlr_cmd_admin_raw(fx.ctrlr, &cmd, NULL, 0, fx_cpl_cb, &c[i]), 0);
	}
	deadline = fx_now_us() + (uint64_t)FX_WAIT_MS * 1000u; /* a hang guard only */
	while (done < 3 && fx_now_us() < deadline) {
		CU_ASSERT(nvp_nvme_ctrlr_process_admin_completions(fx.ctrlr) >= 0);
		for (i = 0, done = 0; i < 3; i++) {
			done += c[i].calls > 0;
		}
		nvp_env_delay_us(100);
	}
	(void)nvp_nvme_ctrlr_process_admin_completions(fx.ctrlr); /* a duplicate shows here */
	for (i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(c[i].calls, 1);
		ok += c[i].cpl.status.sct == NVME_SCT_GENERIC &&
		      c[i].cpl.status.sc == NVME_SC_ABORTED_SQ_DELETION && c[i].cpl.status.dnr == 0;
	}
	fprintf(stderr,
		"  %u of 3 admin commands completed behind two stale entries, %u with ABORTED "
		"SQ DELETION and DNR clear\n",
		done, ok);
	CU_ASSERT_EQUAL(ok, 3);
	admin_rebuilt_check(&fx, resets);
	fx_close(&fx);
}

/* Three controllers attached at once: separate storage, separate queues. */
static void
test_three_controllers(void)
{
	struct fx_ctrlr fx[3];
	uint8_t *buf;
	unsigned int i, round;
	int ok = 1;

	memset(fx, 0, sizeof(fx));
	buf = fx_dma_alloc(8 * 4096);
	for (i = 0; i < 3 && ok; i++) {
		ok = fx_open(&fx[i], i == 1 ? "size=4M,lba=4096,dstrd=3" : "size=4M") == 0;
	}
	for (round = 0; round < 2 && ok; round++) {
		for (i = 0; i < 3; i++) {
			uint32_t bs = nvp_nvme_ns_get_sector_size(fx[i].ns);
			uint32_t n = 8 * 4096 / bs;

			if (round == 0) {
				fx_pattern_fill(buf, 0, n, bs, 0x40 + i);
				CU_ASSERT_EQUAL(
					fx_io(fx[i].ns, fx[i].qpair, FX_WRITE, buf, 0, n, 0, NULL),
					0);
			} else {
				memset(buf, 0, 8 * 4096);
				CU_ASSERT_EQUAL(
					fx_io(fx[i].ns, fx[i].qpair, FX_READ, buf, 0, n, 0, NULL),
					0);
				CU_ASSERT(fx_pattern_check(buf, 0, n, bs, 0x40 + i) < 0);
			}
		}
	}
	CU_ASSERT(ok);
	for (i = 0; i < 3; i++) {
		fx_close(&fx[i]);
	}
	nvp_env_dma_free(buf);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "injected_error_status", test_injected_error_status },
		{ "drop_on_two_entry_queue", test_drop_on_two_entry_queue },
		{ "drops_fill_four_entry_queue", test_drops_fill_four_entry_queue },
		{ "drops_exhaust_two_entry_queue", test_drops_exhaust_two_entry_queue },
		{ "drops_exhaust_four_entry_queue", test_drops_exhaust_four_entry_queue },
		{ "deadline_while_queued", test_deadline_while_queued },
		{ "all_ones_with_requests_in_flight", test_all_ones_with_requests_in_flight },
		{ "reset_with_queued_requests", test_reset_with_queued_requests },
		{ "stale_phase_behind_many", test_stale_phase_behind_many },
		{ "stale_phase_at_depth_one", test_stale_phase_at_depth_one },
		{ "stale_phase_within_deadline", test_stale_phase_within_deadline },
		{ "two_stale_phases_within_deadline", test_two_stale_phases_within_deadline },
		{ "admin_stale_phase_sync", test_admin_stale_phase_sync },
		{ "admin_two_stale_phases_async", test_admin_two_stale_phases_async },
		{ "three_controllers", test_three_controllers },
	};

	return fx_main(argc, argv, "nvme_fault_recovery", tests, NVP_COUNTOF(tests));
}

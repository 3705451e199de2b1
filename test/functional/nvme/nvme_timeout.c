/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lost and late commands. The software controller drops a completion or makes a
 * command slow on request; the driver must notice the request's deadline, tell the
 * application (timeout callback), recover (Abort, then reset if needed) and complete the
 * request exactly once with an error status. Nothing is lost, nothing completes twice,
 * and the qpair carries on. A controller reset sends outstanding requests again (the
 * retry policy, opts.io_retry_count) or, with no retries, completes them with Aborted -
 * SQ Deletion.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

#define TIMEOUT_US 200000u

struct timeouts {
	unsigned int calls;
	struct nvp_nvme_qpair *qpair;
	uint16_t cid;
	bool admin;
};

static void
timeout_cb(void *cb_arg, struct nvp_nvme_ctrlr *ctrlr, struct nvp_nvme_qpair *qpair, uint16_t cid)
{
	struct timeouts *t = cb_arg;

	(void)ctrlr;
	t->calls++;
	t->qpair = qpair;
	t->cid = cid;
	if (qpair == NULL) {
		t->admin = true;
	}
}

/* Write and read back a block on @qpair: the qpair works. */
static void
qpair_works(struct fx_ctrlr *fx, struct nvp_nvme_qpair *qpair, uint64_t lba, uint32_t tag)
{
	uint8_t *buf = fx_dma_alloc(4096);

	fx_pattern_fill(buf, lba, 1, 512, tag);
	CU_ASSERT_EQUAL(fx_io(fx->ns, qpair, FX_WRITE, buf, lba, 1, 0, NULL), 0);
	memset(buf, 0, 512);
	CU_ASSERT_EQUAL(fx_io(fx->ns, qpair, FX_READ, buf, lba, 1, 0, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, lba, 1, 512, tag) < 0);
	nvp_env_dma_free(buf);
}

static void
test_dropped_completion(void)
{
	struct nvp_nvme_qpair *qpair = NULL;
	struct timeouts t = { 0 };
	struct nvp_emu_stats stats = { .info_size = sizeof(stats) };
	struct fx_cpl c = { 0 };
	struct fx_ctrlr fx;
	uint64_t start, elapsed;
	uint8_t *buf;

	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	nvp_nvme_ctrlr_register_timeout_callback(fx.ctrlr, timeout_cb, &t);
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, 32, 0, TIMEOUT_US, false, &qpair), 0);
	buf = fx_dma_alloc(4096);
	qpair_works(&fx, qpair, 1, 0x91);

	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(fx.emu, NVP_EMU_FAULT_DROP_CPL, 1, 0, 0), 0);
	start = fx_now_us();
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_ns_cmd_read(fx.ns, qpair, buf, 1, 1, fx_cpl_cb, &c, 0), 0);
	CU_ASSERT_EQUAL(fx_poll_until(qpair, &c.calls, 1, 10000), 0);
	elapsed = fx_now_us() - start;
	fprintf(stderr, "  dropped completion reported after %" PRIu64 " us\n", elapsed);

	/* Reported: after the deadline, not before, and with an error status. */
	CU_ASSERT_EQUAL(c.calls, 1);
	CU_ASSERT(elapsed >= TIMEOUT_US * 3 / 4);
	CU_ASSERT(nvme_cpl_is_error(&c.cpl));
	fx_print_cpl("dropped completion", &c.cpl);
	CU_ASSERT(t.calls >= 1);
	CU_ASSERT_PTR_EQUAL(t.qpair, qpair);
	CU_ASSERT_FALSE(t.admin);

	/* Never twice, even much later. */
	fx_poll_for(qpair, 2 * TIMEOUT_US / 1000);
	CU_ASSERT_EQUAL(c.calls, 1);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(qpair), 0);

	nvp_emu_ctrlr_get_stats(fx.emu, &stats);
	CU_ASSERT_EQUAL(stats.dropped_cpls, 1);
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(fx.ctrlr));

	/* The qpair, and the default one, carry on. */
	qpair_works(&fx, qpair, 2, 0x92);
	qpair_works(&fx, fx.qpair, 3, 0x93);

	nvp_env_dma_free(buf);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(qpair), 0);
	fx_close(&fx);
}

/* One dropped completion among many requests: only that one fails. */
static void
test_dropped_among_many(void)
{
	struct nvp_nvme_qpair *qpair = NULL;
	struct timeouts t = { 0 };
	struct fx_cpl c[16];
	struct fx_ctrlr fx;
	uint8_t *buf;
	unsigned int i, errors = 0;

	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	nvp_nvme_ctrlr_register_timeout_callback(fx.ctrlr, timeout_cb, &t);
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, 32, 0, TIMEOUT_US, false, &qpair), 0);
	buf = fx_dma_alloc(16 * 4096);
	memset(c, 0, sizeof(c));

	/* Let 5 commands through, drop the 6th. */
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(fx.emu, NVP_EMU_FAULT_DROP_CPL, 1, 5, 0), 0);
	for (i = 0; i < 16; i++) {
		CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(fx.ns, qpair, buf + i * 4096, i * 8, 8,
						      fx_cpl_cb, &c[i], 0),
				0);
	}
	for (i = 0; i < 16; i++) {
		CU_ASSERT_EQUAL(fx_poll_until(qpair, &c[i].calls, 1, 10000), 0);
	}
	fx_poll_for(qpair, 2 * TIMEOUT_US / 1000);
	for (i = 0; i < 16; i++) {
		CU_ASSERT_EQUAL(c[i].calls, 1);
		if (nvme_cpl_is_error(&c[i].cpl)) {
			errors++;
		}
	}
	CU_ASSERT_EQUAL(errors, 1);
	CU_ASSERT(t.calls >= 1);
	qpair_works(&fx, qpair, 500, 0x94);

	nvp_env_dma_free(buf);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(qpair), 0);
	fx_close(&fx);
}

/* A command far slower than its deadline is not waited for. */
static void
test_slow_command(void)
{
	struct nvp_nvme_qpair *qpair = NULL;
	struct timeouts t = { 0 };
	struct fx_cpl c = { 0 };
	struct fx_ctrlr fx;
	uint64_t start, elapsed;
	uint8_t *buf;

	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	nvp_nvme_ctrlr_register_timeout_callback(fx.ctrlr, timeout_cb, &t);
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, 32, 0, TIMEOUT_US, false, &qpair), 0);
	buf = fx_dma_alloc(4096);

	/* 5 s extra service time for the next command; deadline 200 ms. */
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(fx.emu, NVP_EMU_FAULT_SLOW, 1, 0, 5000000), 0);
	start = fx_now_us();
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_ns_cmd_read(fx.ns, qpair, buf, 0, 1, fx_cpl_cb, &c, 0), 0);
	CU_ASSERT_EQUAL(fx_poll_until(qpair, &c.calls, 1, 15000), 0);
	elapsed = fx_now_us() - start;
	fprintf(stderr, "  slow command completed after %" PRIu64 " us\n", elapsed);
	fx_print_cpl("slow command", &c.cpl);
	CU_ASSERT(t.calls >= 1);
	CU_ASSERT(nvme_cpl_is_error(&c.cpl));
	/* Recovered well before the device would have finished. */
	CU_ASSERT(elapsed < 4000000);
	fx_poll_for(qpair, 100);
	CU_ASSERT_EQUAL(c.calls, 1);
	qpair_works(&fx, qpair, 7, 0x95);

	nvp_env_dma_free(buf);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(qpair), 0);
	fx_close(&fx);
}

/*
 * Abort of commands still waiting in the SQ: one internal channel and 1 s per read, so of
 * three reads one is in service and two wait; all pass their 300 ms deadline and the
 * driver aborts them. The waiting ones come back Aborted by Request. (The margins are wide
 * so that a loaded machine cannot make the write afterwards miss its deadline.)
 */
static void
test_abort_waiting_in_sq(void)
{
	struct nvp_nvme_qpair *qpair = NULL;
	struct timeouts t = { 0 };
	struct nvp_emu_stats stats = { .info_size = sizeof(stats) };
	struct fx_cpl c[3];
	struct fx_ctrlr fx;
	uint8_t *buf;
	unsigned int i, by_request = 0;

	if (fx_open(&fx, "size=4M,channels=1,read_us=1000000") != 0) {
		fx_close(&fx);
		return;
	}
	nvp_nvme_ctrlr_register_timeout_callback(fx.ctrlr, timeout_cb, &t);
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, 32, 0, 300000, false, &qpair), 0);
	buf = fx_dma_alloc(3 * 4096);
	memset(c, 0, sizeof(c));
	for (i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(fx.ns, qpair, buf + i * 4096, i, 1, fx_cpl_cb,
						     &c[i], 0),
				0);
	}
	for (i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(fx_poll_until(qpair, &c[i].calls, 1, 10000), 0);
	}
	fx_poll_for(qpair, 1000); /* the read in service ends; its late completion arrives */
	for (i = 0; i < 3; i++) {
		char s[128];

		CU_ASSERT_EQUAL(c[i].calls, 1);
		fprintf(stderr, "  read %u: %s\n", i, nvp_nvme_cpl_fmt(s, sizeof(s), &c[i].cpl));
		if (c[i].cpl.status.sct == NVME_SCT_GENERIC &&
		    c[i].cpl.status.sc == NVME_SC_ABORTED_BY_REQUEST) {
			by_request++;
		}
	}
	CU_ASSERT(t.calls >= 2);
	CU_ASSERT(by_request >= 1);
	nvp_emu_ctrlr_get_stats(fx.emu, &stats);
	CU_ASSERT(stats.aborted_cmds >= 1);
	/* Reads still outlast this qpair's deadline; writes and flushes do not. */
	CU_ASSERT_EQUAL(fx_io(fx.ns, qpair, FX_WRITE, buf, 9, 1, 0, NULL), 0);
	CU_ASSERT_EQUAL(fx_io(fx.ns, qpair, FX_FLUSH, NULL, 0, 0, 0, NULL), 0);
	qpair_works(&fx, fx.qpair, 9, 0x96);

	nvp_env_dma_free(buf);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(qpair), 0);
	fx_close(&fx);
}

/* Abort of a command the controller does not have: completes, "not aborted". */
static void
test_abort_unknown_cid(void)
{
	struct fx_ctrlr fx;
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;

	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_ABORT;
	cmd.cdw10 = NVME_ABORT_CDW10(nvp_nvme_qpair_get_id(fx.qpair), 0xfffe);
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_sync(fx.ctrlr, &cmd, NULL, 0, &cpl), 0);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&cpl));
	CU_ASSERT(cpl.cdw0 & NVME_ABORT_CPL_NOT_ABORTED);
	qpair_works(&fx, fx.qpair, 1, 0x97);
	fx_close(&fx);
}

/* Without a deadline a dropped completion stays outstanding; freeing the qpair
 * completes it (Aborted - SQ Deletion) rather than losing it. */
static void
test_no_timeout_free_completes(void)
{
	struct nvp_nvme_qpair *qpair = NULL;
	struct timeouts t = { 0 };
	struct fx_cpl c = { 0 };
	struct fx_ctrlr fx;
	uint8_t *buf;

	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	nvp_nvme_ctrlr_register_timeout_callback(fx.ctrlr, timeout_cb, &t);
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, 32, 0, 0, false, &qpair), 0);
	buf = fx_dma_alloc(4096);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(fx.emu, NVP_EMU_FAULT_DROP_CPL, 1, 0, 0), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(fx.ns, qpair, buf, 0, 1, fx_cpl_cb, &c, 0), 0);
	fx_poll_for(qpair, 300);
	CU_ASSERT_EQUAL(c.calls, 0);
	CU_ASSERT_EQUAL(t.calls, 0);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(qpair), 1);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(qpair), 0);
	CU_ASSERT_EQUAL(c.calls, 1);
	FX_ASSERT_STATUS(&c.cpl, NVME_SCT_GENERIC, NVME_SC_ABORTED_SQ_DELETION);
	nvp_env_dma_free(buf);
	fx_close(&fx);
}

/* Reset with requests in the device, no retries (io_retry_count 0): each completes
 * once, the unfinished ones with Aborted - SQ Deletion, and the qpair works after the
 * reset. */
static void
test_reset_with_outstanding(void)
{
	struct nvp_emu_stats before = { .info_size = sizeof(before) };
	struct nvp_emu_stats after = { .info_size = sizeof(after) };
	struct nvp_nvme_ctrlr_opts opts;
	struct fx_cpl c[4];
	struct fx_ctrlr fx;
	uint8_t *buf;
	unsigned int i, deleted = 0;

	nvp_nvme_ctrlr_opts_init(&opts, sizeof(opts));
	opts.io_retry_count = 0;
	if (fx_open_opts(&fx, "size=4M,channels=1,read_us=1000000", &opts) != 0) {
		fx_close(&fx);
		return;
	}
	buf = fx_dma_alloc(4 * 4096);
	memset(c, 0, sizeof(c));
	nvp_emu_ctrlr_get_stats(fx.emu, &before);
	for (i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_read(fx.ns, fx.qpair, buf + i * 4096, i, 1,
						     fx_cpl_cb, &c[i], 0),
				0);
	}
	nvp_nvme_qpair_process_completions(fx.qpair, 0);
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_ctrlr_reset(fx.ctrlr), 0);
	for (i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(fx_poll_until(fx.qpair, &c[i].calls, 1, 5000), 0);
	}
	fx_poll_for(fx.qpair, 300);
	for (i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(c[i].calls, 1);
		if (c[i].cpl.status.sct == NVME_SCT_GENERIC &&
		    c[i].cpl.status.sc == NVME_SC_ABORTED_SQ_DELETION) {
			deleted++;
		}
	}
	CU_ASSERT(deleted >= 3);
	nvp_emu_ctrlr_get_stats(fx.emu, &after);
	CU_ASSERT(after.resets >= before.resets + 1);
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(fx.ctrlr));
	qpair_works(&fx, fx.qpair, 11, 0x98);
	nvp_env_dma_free(buf);
	fx_close(&fx);
}

/*
 * The default policy: requests the device lost in a reset are sent again. Writes of a
 * known pattern in flight at the reset all succeed, and read back intact.
 */
static void
test_reset_retries_by_default(void)
{
	struct nvp_nvme_ctrlr_opts opts;
	struct fx_cpl c[4];
	struct fx_ctrlr fx;
	uint8_t *buf;
	unsigned int i;

	nvp_nvme_ctrlr_opts_init(&opts, sizeof(opts));
	CU_ASSERT(opts.io_retry_count > 0);
	if (fx_open(&fx, "size=4M,channels=1,write_us=200000") != 0) {
		fx_close(&fx);
		return;
	}
	buf = fx_dma_alloc(4 * 4096);
	memset(c, 0, sizeof(c));
	for (i = 0; i < 4; i++) {
		fx_pattern_fill(buf + i * 4096, 20 + i, 1, 512, 0x77);
		CU_ASSERT_EQUAL(nvp_nvme_ns_cmd_write(fx.ns, fx.qpair, buf + i * 4096, 20 + i, 1,
						      fx_cpl_cb, &c[i], 0),
				0);
	}
	nvp_nvme_qpair_process_completions(fx.qpair, 0);
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_ctrlr_reset(fx.ctrlr), 0);
	for (i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(fx_poll_until(fx.qpair, &c[i].calls, 1, 10000), 0);
	}
	fx_poll_for(fx.qpair, 100);
	memset(buf, 0, 4 * 4096);
	for (i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(c[i].calls, 1);
		CU_ASSERT_FALSE(nvme_cpl_is_error(&c[i].cpl));
		CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 20 + i, 1, 0, NULL), 0);
		CU_ASSERT(fx_pattern_check(buf, 20 + i, 1, 512, 0x77) < 0);
	}
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(fx.qpair), 0);
	nvp_env_dma_free(buf);
	fx_close(&fx);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "dropped_completion", test_dropped_completion },
		{ "dropped_among_many", test_dropped_among_many },
		{ "slow_command", test_slow_command },
		{ "abort_waiting_in_sq", test_abort_waiting_in_sq },
		{ "abort_unknown_cid", test_abort_unknown_cid },
		{ "no_timeout_free_completes", test_no_timeout_free_completes },
		{ "reset_with_outstanding", test_reset_with_outstanding },
		{ "reset_retries_by_default", test_reset_retries_by_default },
	};

	return fx_main(argc, argv, "nvme_timeout", tests, NVP_COUNTOF(tests));
}

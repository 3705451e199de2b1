/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/emu/emu_queue.c: phase tags, the channel/service-time model, CQ full
 * back-pressure, Abort of commands waiting in an SQ, round robin arbitration, invalid
 * doorbells, Delete I/O SQ with commands pending, reset, and garbage commands.
 */
#include "emu_ut_helpers.h"

static uint8_t *g_buf;
static uint64_t g_iova;

static void
read_cmd(struct nvme_cmd *cmd, uint64_t slba)
{
	ut_rw_cmd(cmd, NVME_OPC_READ, 1, slba, 1, g_iova, 0);
}

static struct nvme_cmd
admin_cmd(uint8_t opc, uint32_t cdw10, uint32_t cdw11)
{
	struct nvme_cmd cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = opc;
	cmd.cdw10 = cdw10;
	cmd.cdw11 = cdw11;
	return cmd;
}

static void
test_phase_wrap(void)
{
	struct ut_host h;
	struct nvme_cmd cmd;
	struct nvme_cpl cpl = { 0 };

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, ""), 0);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 4), 0);
	for (uint32_t i = 0; i < 13; i++) {
		read_cmd(&cmd, i);
		CU_ASSERT_EQUAL(ut_cmd(&h, 1, &cmd, &cpl), 0);
		CU_ASSERT_EQUAL(cpl.status.p, ((i / 4) & 1) ? 0 : 1);
		CU_ASSERT_EQUAL(cpl.sqhd, (i + 1) % 4);
		CU_ASSERT_EQUAL(cpl.cid, cmd.cid);
		CU_ASSERT_EQUAL(ut_st(&cpl), 0);
	}
	ut_host_fini(&h);
}

static void
test_cq_full_hold(void)
{
	struct ut_host h;
	struct nvme_cmd cmd;
	struct nvme_cpl cpl = { 0 };
	uint32_t n = 0;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, ""), 0);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 8), 0);
	h.hold_cq_db = true;
	for (uint32_t i = 0; i < 7; i++) {
		read_cmd(&cmd, i);
		ut_submit(&h, 1, &cmd, false);
	}
	ut_poll(h.c, 10);
	while (ut_reap(&h, 1, &cpl)) {
		n++;
	}
	CU_ASSERT_EQUAL(n, 7); /* an 8-entry CQ holds 7 */
	/* the host consumed them but has not told the controller: 3 more must wait */
	for (uint32_t i = 0; i < 3; i++) {
		read_cmd(&cmd, i);
		ut_submit(&h, 1, &cmd, false);
	}
	ut_poll(h.c, 100);
	CU_ASSERT_FALSE(ut_reap(&h, 1, &cpl));
	CU_ASSERT_NOT_EQUAL(h.c->held_head, EMU_NO_SLOT);
	ut_cq_ring(&h, 1);
	ut_poll(h.c, 5);
	n = 0;
	while (ut_reap(&h, 1, &cpl)) {
		CU_ASSERT_EQUAL(ut_st(&cpl), 0);
		n++;
	}
	CU_ASSERT_EQUAL(n, 3);
	CU_ASSERT_EQUAL(h.c->held_head, EMU_NO_SLOT);
	ut_host_fini(&h);
}

static bool
reap_all(struct ut_host *h, uint16_t qid, struct nvme_cpl *out, uint32_t want)
{
	uint64_t end = nvp_env_get_ticks() + 3 * nvp_env_get_ticks_hz();
	uint32_t n = 0;

	while (n < want && nvp_env_get_ticks() < end) {
		if (!ut_reap(h, qid, &out[n])) {
			emu_ctrlr_poll(h->c);
			continue;
		}
		n++;
	}
	return n == want;
}

/* slots=3 with channels=1: the controller holds three commands, whatever its channels. */
static void
test_slots(void)
{
	struct ut_host h;
	struct nvme_cmd cmd;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "channels=1 slots=3 read_us=150000"), 0);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 16), 0);
	for (uint32_t i = 0; i < 5; i++) {
		read_cmd(&cmd, i);
		ut_submit(&h, 1, &cmd, false);
	}
	ut_poll(h.c, 10);
	CU_ASSERT_EQUAL(h.c->io_busy, 3);
	CU_ASSERT_EQUAL(h.c->sqs[1].head, 3);
	ut_host_fini(&h);
}

/* channels=2 and a long service time: commands 3 and 4 really wait in the SQ. */
static void
test_channels_and_abort(void)
{
	struct ut_host h;
	struct nvme_cmd cmd, ab;
	struct nvme_cpl cpl = { 0 }, cpls[4];
	struct nvp_emu_stats st = { .info_size = sizeof(st) };
	uint16_t cid[4];

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "channels=2 read_us=150000"), 0);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 16), 0);
	for (uint32_t i = 0; i < 4; i++) {
		read_cmd(&cmd, i);
		cid[i] = ut_submit(&h, 1, &cmd, false);
	}
	ut_poll(h.c, 10);
	CU_ASSERT_EQUAL(h.c->io_busy, 2);
	CU_ASSERT_EQUAL(h.c->sqs[1].head, 2);
	/* abort the 4th: still in the SQ */
	ab = admin_cmd(NVME_OPC_ABORT, NVME_ABORT_CDW10(1, cid[3]), 0);
	CU_ASSERT_EQUAL(ut_cmd(&h, 0, &ab, &cpl), 0);
	CU_ASSERT_EQUAL(ut_st(&cpl), 0);
	CU_ASSERT_EQUAL(cpl.cdw0 & 1u, 0);
	CU_ASSERT(ut_reap(&h, 1, &cpls[0]));
	CU_ASSERT_EQUAL(cpls[0].cid, cid[3]);
	CU_ASSERT_EQUAL(ut_st(&cpls[0]), UT_SC(0, NVME_SC_ABORTED_BY_REQUEST));
	/* the 1st is being serviced: not aborted */
	ab = admin_cmd(NVME_OPC_ABORT, NVME_ABORT_CDW10(1, cid[0]), 0);
	CU_ASSERT_EQUAL(ut_cmd(&h, 0, &ab, &cpl), 0);
	CU_ASSERT_EQUAL(cpl.cdw0 & 1u, 1u);
	/* an unknown SQ or CID: not aborted either */
	ab = admin_cmd(NVME_OPC_ABORT, NVME_ABORT_CDW10(9, cid[1]), 0);
	CU_ASSERT_EQUAL(ut_cmd(&h, 0, &ab, &cpl), 0);
	CU_ASSERT_EQUAL(cpl.cdw0 & 1u, 1u);
	/* the other three complete after their service time, the aborted one is skipped */
	CU_ASSERT(reap_all(&h, 1, cpls, 3));
	CU_ASSERT_EQUAL(cpls[0].cid, cid[0]);
	CU_ASSERT_EQUAL(cpls[1].cid, cid[1]);
	CU_ASSERT_EQUAL(cpls[2].cid, cid[2]);
	ut_poll(h.c, 50);
	CU_ASSERT_FALSE(ut_reap(&h, 1, &cpl));
	CU_ASSERT_EQUAL(h.c->sqs[1].head, 4); /* the aborted entry was consumed */
	CU_ASSERT_EQUAL(h.c->io_busy, 0);
	nvp_emu_ctrlr_get_stats((struct nvp_emu_ctrlr *)h.c, &st);
	CU_ASSERT_EQUAL(st.aborted_cmds, 1);
	CU_ASSERT(st.max_sq_depth_seen >= 4);
	CU_ASSERT_EQUAL(st.io_cmds, 3);
	ut_host_fini(&h);
}

/* A slow command completes after a fast one fetched later: completions in due order. */
static void
test_due_order(void)
{
	struct ut_host h;
	struct nvme_cmd cmd;
	struct nvme_cpl cpls[2];
	uint16_t a, b;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "fault=slow fault_arg=30000 fault_count=1"), 0);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 16), 0);
	read_cmd(&cmd, 0);
	a = ut_submit(&h, 1, &cmd, false);
	read_cmd(&cmd, 1);
	b = ut_submit(&h, 1, &cmd, false);
	CU_ASSERT(reap_all(&h, 1, cpls, 2));
	CU_ASSERT_EQUAL(cpls[0].cid, b);
	CU_ASSERT_EQUAL(cpls[1].cid, a);
	ut_host_fini(&h);
}

/* Completion faults: each posts the first command's completion wrongly, the next right. */
static void
test_completion_faults(void)
{
	static const char *const faults[] = { "bad_cid", "dup_cpl", "bad_sqhd", "wrong_cq",
					      "bad_phase" };

	for (uint32_t f = 0; f < NVP_COUNTOF(faults); f++) {
		struct ut_host h;
		struct nvme_cmd cmd;
		struct nvme_cpl cpls[2];
		char opts[64];
		uint16_t a, b;

		snprintf(opts, sizeof(opts), "fault=%s fault_count=1", faults[f]);
		CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, opts), 0);
		CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 16), 0);
		read_cmd(&cmd, 0);
		a = ut_submit(&h, 1, &cmd, false);
		ut_poll(h.c, 4);
		read_cmd(&cmd, 1);
		b = ut_submit(&h, 1, &cmd, false);
		ut_poll(h.c, 4);
		if (f == 0) { /* bad_cid: 0xffff, then b */
			CU_ASSERT(reap_all(&h, 1, cpls, 2));
			CU_ASSERT_EQUAL(cpls[0].cid, 0xffff);
			CU_ASSERT_EQUAL(cpls[1].cid, b);
		} else if (f == 1) { /* dup_cpl: a, b, then a again (the host may reuse a's CID
				      * before the copy comes) */
			struct nvme_cpl third;

			CU_ASSERT(reap_all(&h, 1, cpls, 2));
			CU_ASSERT_EQUAL(cpls[0].cid, a);
			CU_ASSERT_EQUAL(cpls[1].cid, b);
			CU_ASSERT(reap_all(&h, 1, &third, 1));
			CU_ASSERT_EQUAL(third.cid, a);
			CU_ASSERT_EQUAL(third.sqhd, cpls[0].sqhd);
		} else if (f == 2) { /* bad_sqhd: past the 16-entry queue */
			CU_ASSERT(reap_all(&h, 1, cpls, 2));
			CU_ASSERT_EQUAL(cpls[0].cid, a);
			CU_ASSERT(cpls[0].sqhd >= 16);
			CU_ASSERT(cpls[1].sqhd < 16);
		} else if (f == 3) { /* wrong_cq: a on the admin queue, b on its own */
			CU_ASSERT(reap_all(&h, 0, cpls, 1));
			CU_ASSERT_EQUAL(cpls[0].cid, a);
			CU_ASSERT_EQUAL(cpls[0].sqid, 1);
			CU_ASSERT(reap_all(&h, 1, &cpls[1], 1));
			CU_ASSERT_EQUAL(cpls[1].cid, b);
		} else { /* bad_phase: the host sees nothing, not even b behind it */
			CU_ASSERT_FALSE(reap_all(&h, 1, cpls, 1));
			CU_ASSERT_EQUAL(h.q[1].cq[0].cid, a);
			CU_ASSERT_EQUAL(h.q[1].cq[1].cid, b);
		}
		ut_host_fini(&h);
	}
}

/* Arbitration burst 1 and one channel: SQs are served alternately. */
static void
test_round_robin(void)
{
	struct ut_host h;
	struct nvme_cmd cmd = admin_cmd(NVME_OPC_SET_FEATURES, NVME_FEAT_ARBITRATION, 0);
	struct nvme_cpl cpl = { 0 };
	uint16_t order[8];
	uint32_t n = 0;
	uint64_t end;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "channels=1 read_us=500"), 0);
	CU_ASSERT_EQUAL(ut_admin_st(&h, &cmd, NULL), 0);
	CU_ASSERT_EQUAL(h.c->burst, 1);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 16), 0);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 2, 16), 0);
	for (uint32_t i = 0; i < 4; i++) {
		read_cmd(&cmd, i);
		ut_submit(&h, 1, &cmd, false);
	}
	for (uint32_t i = 0; i < 4; i++) {
		read_cmd(&cmd, i);
		ut_submit(&h, 2, &cmd, false);
	}
	end = nvp_env_get_ticks() + 3 * nvp_env_get_ticks_hz();
	while (n < 8 && nvp_env_get_ticks() < end) {
		emu_ctrlr_poll(h.c);
		for (uint16_t q = 1; q <= 2; q++) {
			while (ut_reap(&h, q, &cpl)) {
				order[n++] = cpl.sqid;
			}
		}
	}
	CU_ASSERT_EQUAL_FATAL(n, 8);
	for (uint32_t i = 1; i < 8; i++) {
		CU_ASSERT_NOT_EQUAL(order[i], order[i - 1]);
	}
	ut_host_fini(&h);
}

static void
test_invalid_doorbells(void)
{
	struct ut_host h;
	struct nvme_cmd aer = admin_cmd(NVME_OPC_ASYNC_EVENT_REQUEST, 0, 0);
	struct nvme_cmd cmd;
	struct nvme_cpl cpl = { 0 };
	struct nvp_emu_stats st = { .info_size = sizeof(st) };
	uint16_t aer_cid;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "queues=4"), 0);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 8), 0);
	aer_cid = ut_submit(&h, 0, &aer, false);
	ut_poll(h.c, 5);
	CU_ASSERT_FALSE(ut_reap(&h, 0, &cpl));
	/* SQ tail beyond the queue size */
	nvp_mmio_write4(ut_db(&h, 1, 0), 8);
	CU_ASSERT_EQUAL(ut_wait(&h, 0, &cpl), 0);
	CU_ASSERT_EQUAL(cpl.cid, aer_cid);
	CU_ASSERT_EQUAL(cpl.cdw0 & 0x7u, NVME_ASYNC_EVENT_TYPE_ERROR);
	CU_ASSERT_EQUAL((cpl.cdw0 >> 8) & 0xffu, EMU_AER_INFO_INVALID_DB_VALUE);
	CU_ASSERT_EQUAL((cpl.cdw0 >> 16) & 0xffu, NVME_LOG_ERROR);
	nvp_emu_ctrlr_get_stats((struct nvp_emu_ctrlr *)h.c, &st);
	CU_ASSERT_EQUAL(st.invalid_doorbells, 1);
	/* the queue still works from its previous tail */
	read_cmd(&cmd, 0);
	CU_ASSERT_EQUAL(ut_cmd(&h, 1, &cmd, &cpl), 0);
	CU_ASSERT_EQUAL(ut_st(&cpl), 0);
	/* a doorbell of a queue that does not exist, and one past the last queue */
	nvp_mmio_write4(ut_db(&h, 3, 0), 1);
	nvp_mmio_write4(ut_db(&h, 4, 1), 1);
	ut_poll(h.c, SLOW_PATH_INTERVAL + 1);
	nvp_emu_ctrlr_get_stats((struct nvp_emu_ctrlr *)h.c, &st);
	CU_ASSERT_EQUAL(st.invalid_doorbells, 3);
	/* a CQ head the controller never posted up to */
	nvp_mmio_write4(ut_db(&h, 1, 1), 5);
	ut_poll(h.c, SLOW_PATH_INTERVAL + 1);
	nvp_emu_ctrlr_get_stats((struct nvp_emu_ctrlr *)h.c, &st);
	CU_ASSERT_EQUAL(st.invalid_doorbells, 4);
	/* the error events wait until the error log is read (AER masked meanwhile) */
	aer_cid = ut_submit(&h, 0, &aer, false);
	ut_poll(h.c, 5);
	CU_ASSERT_FALSE(ut_reap(&h, 0, &cpl));
	ut_host_fini(&h);
}

static void
test_delete_sq_pending(void)
{
	struct ut_host h;
	struct nvme_cmd cmd;
	struct nvme_cpl cpl = { 0 }, cpls[3];
	uint16_t del_cid;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "channels=1 read_us=100000"), 0);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 8), 0);
	/* a CQ still in use cannot be deleted */
	cmd = admin_cmd(NVME_OPC_DELETE_IO_CQ, 1, 0);
	CU_ASSERT_EQUAL(ut_admin_st(&h, &cmd, NULL),
			UT_SC(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QUEUE_DELETION));
	for (uint32_t i = 0; i < 3; i++) {
		read_cmd(&cmd, i);
		ut_submit(&h, 1, &cmd, false);
	}
	ut_poll(h.c, 5);
	CU_ASSERT_EQUAL(h.c->io_busy, 1);
	cmd = admin_cmd(NVME_OPC_DELETE_IO_SQ, 1, 0);
	del_cid = ut_submit(&h, 0, &cmd, false);
	CU_ASSERT(reap_all(&h, 1, cpls, 3));
	for (uint32_t i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(ut_st(&cpls[i]), UT_SC(0, NVME_SC_ABORTED_SQ_DELETION));
	}
	CU_ASSERT_EQUAL(ut_wait(&h, 0, &cpl), 0);
	CU_ASSERT_EQUAL(cpl.cid, del_cid);
	CU_ASSERT_EQUAL(ut_st(&cpl), 0);
	CU_ASSERT_FALSE(h.c->sqs[1].valid);
	CU_ASSERT_EQUAL(h.c->n_io_sqs, 0);
	cmd = admin_cmd(NVME_OPC_DELETE_IO_CQ, 1, 0);
	CU_ASSERT_EQUAL(ut_admin_st(&h, &cmd, NULL), 0);
	/* deleting again: no such queue */
	cmd = admin_cmd(NVME_OPC_DELETE_IO_SQ, 1, 0);
	CU_ASSERT_EQUAL(ut_admin_st(&h, &cmd, NULL),
			UT_SC(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QUEUE_IDENTIFIER));
	ut_host_fini(&h);
}

static void
test_reset_with_commands_in_flight(void)
{
	struct ut_host h;
	struct nvme_cmd cmd;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "channels=2 read_us=100000"), 0);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 8), 0);
	for (uint32_t i = 0; i < 5; i++) {
		read_cmd(&cmd, i);
		ut_submit(&h, 1, &cmd, false);
	}
	ut_poll(h.c, 5);
	CU_ASSERT_EQUAL(h.c->heap_len, 2);
	nvp_mmio_write4(&h.c->regs->cc.raw, 0);
	CU_ASSERT(ut_wait_rdy(h.c, 0, 100));
	CU_ASSERT_EQUAL(h.c->heap_len, 0);
	CU_ASSERT_EQUAL(h.c->io_busy, 0);
	CU_ASSERT_FALSE(h.c->sqs[1].valid);
	CU_ASSERT_FALSE(h.c->cqs[0].valid);
	CU_ASSERT_EQUAL(*ut_db(&h, 1, 0), 0);
	ut_host_fini(&h);
}

static uint64_t g_rng = 88172645463325252ull;

static uint64_t
rnd(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return g_rng;
}

static void
random_cmd(struct nvme_cmd *cmd)
{
	uint64_t *w = (uint64_t *)cmd;

	for (uint32_t i = 0; i < 8; i++) {
		w[i] = rnd();
	}
	if (rnd() & 1) {
		cmd->fuse = 0;
		cmd->psdt = 0;
		cmd->nsid = (uint32_t)(rnd() % 4);
		cmd->cdw12 &= 0xff;
	}
}

/*
 * A command's service time starts when the controller sees it: a poll whose clock was read
 * long before it looked at the doorbells (its thread preempted in between) must not date
 * the command back to then, or the host sees it complete faster than the device does.
 */
static void
test_service_starts_when_seen(void)
{
	struct ut_host h;
	struct nvme_cmd cmd;
	uint64_t t_sub;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "read_us=1000"), 0);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 16), 0);
	read_cmd(&cmd, 0);
	t_sub = nvp_env_get_ticks();
	ut_submit(&h, 1, &cmd, false);
	emu_queue_poll(h.c, t_sub / 2); /* a clock read from before the submission */
	CU_ASSERT_EQUAL_FATAL(h.c->heap_len, 1);
	CU_ASSERT(h.c->slots[h.c->heap[0]].due >= t_sub + emu_us_to_ticks(h.c, 1000));
	ut_host_fini(&h);
}

/* Garbage in both queues: every command completes with some status, nothing crashes. */
static void
test_garbage_commands(void)
{
	struct ut_host h;
	struct nvme_cmd cmd;
	struct nvme_cpl cpl = { 0 };
	uint32_t got = 0;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "nn=2 size=1M"), 0);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 64), 0);
	for (uint32_t i = 0; i < 3000; i++) {
		random_cmd(&cmd);
		ut_submit(&h, 1, &cmd, false);
		CU_ASSERT_EQUAL(ut_wait(&h, 1, &cpl), 0);
		got += cpl.cid == cmd.cid;
	}
	CU_ASSERT_EQUAL(got, 3000);
	for (uint32_t i = 0; i < 2000; i++) {
		random_cmd(&cmd);
		if (cmd.opc == NVME_OPC_ASYNC_EVENT_REQUEST || cmd.opc == NVME_OPC_DELETE_IO_SQ ||
		    cmd.opc == NVME_OPC_DELETE_IO_CQ) {
			continue; /* held, or would take our queue away */
		}
		ut_submit(&h, 0, &cmd, false);
		CU_ASSERT_EQUAL(ut_wait(&h, 0, &cpl), 0);
		CU_ASSERT_EQUAL(cpl.cid, cmd.cid);
	}
	/* still alive */
	read_cmd(&cmd, 0);
	CU_ASSERT_EQUAL(ut_cmd(&h, 1, &cmd, &cpl), 0);
	ut_host_fini(&h);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_phase_wrap),
		UT_TEST(test_cq_full_hold),
		UT_TEST(test_slots),
		UT_TEST(test_channels_and_abort),
		UT_TEST(test_due_order),
		UT_TEST(test_completion_faults),
		UT_TEST(test_round_robin),
		UT_TEST(test_invalid_doorbells),
		UT_TEST(test_delete_sq_pending),
		UT_TEST(test_reset_with_commands_in_flight),
		UT_TEST(test_garbage_commands),
		UT_TEST(test_service_starts_when_seen),
	};
	int rc;

	ut_env_init();
	g_buf = nvp_env_dma_zmalloc(4096, 4096, &g_iova);
	rc = ut_run("emu_queue", tests, NVP_COUNTOF(tests));
	return rc;
}

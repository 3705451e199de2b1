/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/emu/emu_log.c: the error log ring, Get Log Page arguments (offset,
 * NUMDL/NUMDU, unknown pages), SMART/health counters, asynchronous events with their
 * masking rules, and the temperature threshold model.
 */
#include "emu_ut_helpers.h"

#define CS(sc) UT_SC(NVME_SCT_COMMAND_SPECIFIC, sc)
#define GEN(sc) UT_SC(NVME_SCT_GENERIC, sc)
#define BIG (264u * 1024u)

static uint8_t *g_buf;
static uint64_t *g_list;

/* Get Log Page of @numd dwords at byte offset @off into g_buf. */
static uint16_t
get_log(struct ut_host *h, uint8_t lid, uint32_t nsid, uint32_t numd, uint64_t off, bool rae)
{
	struct nvme_cmd cmd;
	uint64_t prp1, prp2;

	memset(g_buf, 0xee, BIG);
	ut_prps(g_buf, (uint64_t)numd * 4, g_list, &prp1, &prp2);
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_GET_LOG_PAGE;
	cmd.nsid = nsid;
	cmd.cdw10 = NVME_GET_LOG_CDW10(lid, numd) | (rae ? 1u << 15 : 0);
	cmd.cdw11 = NVME_GET_LOG_CDW11(numd);
	cmd.cdw12 = (uint32_t)off;
	cmd.cdw13 = (uint32_t)(off >> 32);
	cmd.dptr.prp.prp1 = prp1;
	cmd.dptr.prp.prp2 = prp2;
	return ut_admin_st(h, &cmd, NULL);
}

static uint16_t
bad_read(struct ut_host *h, uint32_t nsid)
{
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;

	ut_rw_cmd(&cmd, NVME_OPC_READ, nsid, 0, 1, nvp_env_vtophys(g_buf, NULL), 0);
	ut_cmd(h, 1, &cmd, &cpl);
	return cmd.cid;
}

static void
test_error_log_ring(void)
{
	struct ut_host h;
	const struct nvme_error_information_entry *e = (void *)g_buf;
	uint16_t last_cid = 0;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, ""), 0);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 16), 0);
	CU_ASSERT_EQUAL(get_log(&h, NVME_LOG_ERROR, 0, 1024, 0, false), 0);
	CU_ASSERT_EQUAL(e[0].error_count, 0); /* empty */
	for (uint32_t i = 0; i < 70; i++) {
		last_cid = bad_read(&h, 9);
	}
	CU_ASSERT_EQUAL(get_log(&h, NVME_LOG_ERROR, 0, 1024, 0, false), 0);
	CU_ASSERT_EQUAL(e[0].error_count, 70);
	CU_ASSERT_EQUAL(e[0].cid, last_cid);
	CU_ASSERT_EQUAL(e[0].sqid, 1);
	CU_ASSERT_EQUAL(e[0].nsid, 9);
	CU_ASSERT_EQUAL(e[0].status.sc, NVME_SC_INVALID_NAMESPACE_OR_FORMAT);
	CU_ASSERT_EQUAL(e[0].status.p, 0);
	CU_ASSERT_EQUAL(e[63].error_count, 7);
	for (uint32_t i = 1; i < 64; i++) {
		CU_ASSERT_EQUAL(e[i].error_count, e[i - 1].error_count - 1);
	}
	/* offset one entry, one entry long */
	CU_ASSERT_EQUAL(get_log(&h, NVME_LOG_ERROR, 0, 16, 64, false), 0);
	CU_ASSERT_EQUAL(e[0].error_count, 69);
	CU_ASSERT_EQUAL(g_buf[64], 0xee); /* nothing written past the requested length */
	ut_host_fini(&h);
}

static void
test_get_log_arguments(void)
{
	struct ut_host h;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "mdts=0"), 0);
	CU_ASSERT_EQUAL(get_log(&h, 0x7f, 0, 128, 0, false), CS(NVME_SC_INVALID_LOG_PAGE));
	CU_ASSERT_EQUAL(get_log(&h, NVME_LOG_CHANGED_NS_LIST, 0, 128, 0, false),
			CS(NVME_SC_INVALID_LOG_PAGE));
	CU_ASSERT_EQUAL(get_log(&h, NVME_LOG_HEALTH_INFORMATION, 0, 128, 2, false),
			GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(get_log(&h, NVME_LOG_HEALTH_INFORMATION, 0, 128, 512, false),
			GEN(NVME_SC_INVALID_FIELD));
	CU_ASSERT_EQUAL(get_log(&h, NVME_LOG_HEALTH_INFORMATION, 1, 128, 0, false),
			GEN(NVME_SC_INVALID_FIELD)); /* no per-namespace SMART */
	CU_ASSERT_EQUAL(get_log(&h, NVME_LOG_HEALTH_INFORMATION, 0xffffffff, 128, 0, false), 0);
	/* longer than the page: the rest reads as zeroes */
	CU_ASSERT_EQUAL(get_log(&h, NVME_LOG_FIRMWARE_SLOT, 0, 256, 0, false), 0);
	CU_ASSERT_EQUAL(g_buf[0], 1);
	CU_ASSERT_EQUAL(g_buf[1000], 0);
	CU_ASSERT_EQUAL(g_buf[1024], 0xee);
	/* NUMDU: 65537 dwords, past a 4 KiB page boundary in a PRP list */
	CU_ASSERT_EQUAL(get_log(&h, NVME_LOG_ERROR, 0, 65537, 0, false), 0);
	CU_ASSERT_EQUAL(g_buf[4096], 0);
	CU_ASSERT_EQUAL(g_buf[65537 * 4 - 1], 0);
	CU_ASSERT_EQUAL(g_buf[65537 * 4], 0xee);
	ut_host_fini(&h);
	/* MDTS bounds a log transfer too */
	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "mdts=1"), 0);
	CU_ASSERT_EQUAL(get_log(&h, NVME_LOG_ERROR, 0, 4096, 0, false), GEN(NVME_SC_INVALID_FIELD));
	ut_host_fini(&h);
}

static uint16_t
write_blocks(struct ut_host *h, uint32_t nlb)
{
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;
	uint64_t prp1, prp2;

	ut_prps(g_buf, (uint64_t)nlb * 512, g_list, &prp1, &prp2);
	ut_rw_cmd(&cmd, NVME_OPC_WRITE, 1, 0, nlb, prp1, prp2);
	ut_cmd(h, 1, &cmd, &cpl);
	return ut_st(&cpl);
}

static void
test_smart_counters(void)
{
	struct ut_host h;
	const struct nvme_health_information_page *s = (void *)g_buf;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, ""), 0);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 16), 0);
	CU_ASSERT_EQUAL(get_log(&h, NVME_LOG_HEALTH_INFORMATION, 0, 128, 0, false), 0);
	CU_ASSERT_EQUAL(s->temperature, EMU_TEMP_KELVIN);
	CU_ASSERT_EQUAL(s->critical_warning, 0);
	CU_ASSERT_EQUAL(s->power_cycles[0], 1);
	CU_ASSERT_EQUAL(s->data_units_written[0], 0);
	CU_ASSERT_EQUAL(s->available_spare, 100);
	/* 1000 blocks of 512 B: one data unit; one more block: two (rounded up) */
	for (uint32_t i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(write_blocks(&h, 250), 0);
	}
	CU_ASSERT_EQUAL(get_log(&h, NVME_LOG_HEALTH_INFORMATION, 0, 128, 0, false), 0);
	CU_ASSERT_EQUAL(s->data_units_written[0], 1);
	CU_ASSERT_EQUAL(s->host_write_commands[0], 4);
	CU_ASSERT_EQUAL(write_blocks(&h, 1), 0);
	bad_read(&h, 0);
	CU_ASSERT_EQUAL(get_log(&h, NVME_LOG_HEALTH_INFORMATION, 0, 128, 0, false), 0);
	CU_ASSERT_EQUAL(s->data_units_written[0], 2);
	CU_ASSERT_EQUAL(s->host_write_commands[0], 5);
	CU_ASSERT_EQUAL(s->host_read_commands[0], 0);
	CU_ASSERT_EQUAL(s->num_error_info_log_entries[0], 1);
	CU_ASSERT_EQUAL(s->media_errors[0], 0);
	CU_ASSERT_EQUAL(s->power_on_hours[0], 0);
	/* injected media errors count */
	nvp_emu_ctrlr_inject_fault((struct nvp_emu_ctrlr *)h.c, NVP_EMU_FAULT_ERROR, 1, 0,
				   (NVME_SCT_MEDIA_ERROR << 8) | NVME_SC_WRITE_FAULTS);
	CU_ASSERT_EQUAL(write_blocks(&h, 1), UT_SC(NVME_SCT_MEDIA_ERROR, NVME_SC_WRITE_FAULTS));
	CU_ASSERT_EQUAL(get_log(&h, NVME_LOG_HEALTH_INFORMATION, 0, 128, 0, false), 0);
	CU_ASSERT_EQUAL(s->media_errors[0], 1);
	CU_ASSERT_EQUAL(s->num_error_info_log_entries[0], 2);
	ut_host_fini(&h);
}

static uint16_t
setf(struct ut_host *h, uint32_t fid, uint32_t cdw11)
{
	struct nvme_cmd cmd = { .opc = NVME_OPC_SET_FEATURES, .cdw10 = fid, .cdw11 = cdw11 };

	return ut_admin_st(h, &cmd, NULL);
}

static uint16_t
submit_aer(struct ut_host *h)
{
	struct nvme_cmd cmd = { .opc = NVME_OPC_ASYNC_EVENT_REQUEST };

	return ut_submit(h, 0, &cmd, false);
}

/* Reap admin completions until the one for @cid; others (the Set Features) are skipped. */
static bool
aer_done(struct ut_host *h, uint16_t cid, struct nvme_cpl *out)
{
	struct nvme_cpl cpl;

	ut_poll(h->c, 3);
	while (ut_reap(h, 0, &cpl)) {
		if (cpl.cid == cid) {
			*out = cpl;
			return true;
		}
	}
	return false;
}

static void
test_temperature_events(void)
{
	struct ut_host h;
	const struct nvme_health_information_page *s = (void *)g_buf;
	struct nvme_cpl cpl;
	uint16_t aer;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, ""), 0);
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_ASYNC_EVENT_CONFIGURATION, NVME_CRIT_WARN_TEMPERATURE),
			0);
	aer = submit_aer(&h);
	CU_ASSERT_FALSE(aer_done(&h, aer, &cpl));
	/* threshold below the composite temperature: warning and event */
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_TEMPERATURE_THRESHOLD, 300), 0);
	CU_ASSERT_EQUAL(h.c->smart.critical_warning, NVME_CRIT_WARN_TEMPERATURE);
	CU_ASSERT(aer_done(&h, aer, &cpl));
	CU_ASSERT_EQUAL(cpl.cdw0 & 7u, NVME_ASYNC_EVENT_TYPE_SMART);
	CU_ASSERT_EQUAL((cpl.cdw0 >> 8) & 0xffu, NVME_ASYNC_EVENT_TEMPERATURE_THRESHOLD);
	CU_ASSERT_EQUAL((cpl.cdw0 >> 16) & 0xffu, NVME_LOG_HEALTH_INFORMATION);
	/* back above: cleared; below again: an event, masked until the log is read */
	aer = submit_aer(&h);
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_TEMPERATURE_THRESHOLD, 350), 0);
	CU_ASSERT_EQUAL(h.c->smart.critical_warning, 0);
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_TEMPERATURE_THRESHOLD, 313), 0);
	CU_ASSERT_FALSE(aer_done(&h, aer, &cpl));
	CU_ASSERT_EQUAL(get_log(&h, NVME_LOG_HEALTH_INFORMATION, 0, 128, 0, true), 0); /* RAE */
	CU_ASSERT_EQUAL(s->critical_warning, NVME_CRIT_WARN_TEMPERATURE);
	CU_ASSERT_FALSE(aer_done(&h, aer, &cpl));
	CU_ASSERT_EQUAL(get_log(&h, NVME_LOG_HEALTH_INFORMATION, 0, 128, 0, false), 0);
	CU_ASSERT(aer_done(&h, aer, &cpl));
	CU_ASSERT_EQUAL(cpl.cdw0 & 7u, NVME_ASYNC_EVENT_TYPE_SMART);
	/* the under-temperature threshold works the same way */
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_TEMPERATURE_THRESHOLD, 350), 0);
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_TEMPERATURE_THRESHOLD, (1u << 20) | 320), 0);
	CU_ASSERT_EQUAL(h.c->smart.critical_warning, NVME_CRIT_WARN_TEMPERATURE);
	aer = submit_aer(&h);
	CU_ASSERT_EQUAL(get_log(&h, NVME_LOG_HEALTH_INFORMATION, 0, 128, 0, false), 0);
	CU_ASSERT(aer_done(&h, aer, &cpl));
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_TEMPERATURE_THRESHOLD, (1u << 20) | 0), 0);
	CU_ASSERT_EQUAL(h.c->smart.critical_warning, 0);
	/* masked by the async event configuration: no event at all */
	CU_ASSERT_EQUAL(get_log(&h, NVME_LOG_HEALTH_INFORMATION, 0, 128, 0, false), 0);
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_ASYNC_EVENT_CONFIGURATION, 0), 0);
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_TEMPERATURE_THRESHOLD, 350), 0);
	CU_ASSERT_EQUAL(setf(&h, NVME_FEAT_TEMPERATURE_THRESHOLD, 300), 0);
	aer = submit_aer(&h);
	CU_ASSERT_FALSE(aer_done(&h, aer, &cpl));
	CU_ASSERT_EQUAL(h.c->nevents, 0);
	ut_host_fini(&h);
}

/* Error events cannot be masked; they queue while no AER is outstanding. */
static void
test_error_events_queue(void)
{
	struct ut_host h;
	struct nvme_cpl cpl;
	uint16_t aer;

	CU_ASSERT_EQUAL_FATAL(ut_host_init(&h, "queues=2"), 0);
	nvp_mmio_write4(ut_db(&h, 2, 0), 3); /* queue 2 does not exist */
	ut_poll(h.c, SLOW_PATH_INTERVAL + 1);
	CU_ASSERT_EQUAL(h.c->nevents, 1);
	aer = submit_aer(&h);
	CU_ASSERT(aer_done(&h, aer, &cpl));
	CU_ASSERT_EQUAL(cpl.cdw0, NVME_ASYNC_EVENT_TYPE_ERROR | (EMU_AER_INFO_INVALID_DB_REG << 8) |
					  (NVME_LOG_ERROR << 16));
	CU_ASSERT_EQUAL(get_log(&h, NVME_LOG_ERROR, 0, 16, 0, false), 0);
	CU_ASSERT_EQUAL(((struct nvme_error_information_entry *)g_buf)->sqid, 2);
	CU_ASSERT_EQUAL(((struct nvme_error_information_entry *)g_buf)->command_specific, 3);
	ut_host_fini(&h);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_error_log_ring),     UT_TEST(test_get_log_arguments),
		UT_TEST(test_smart_counters),     UT_TEST(test_temperature_events),
		UT_TEST(test_error_events_queue),
	};

	ut_env_init();
	g_buf = nvp_env_dma_zmalloc(BIG, 4096, NULL);
	g_list = nvp_env_dma_zmalloc(4096, 4096, NULL);
	return ut_run("emu_log", tests, NVP_COUNTOF(tests));
}

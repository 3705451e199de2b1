/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Admin commands other than identify: SMART / health counters that follow the I/O done,
 * the error information log, get/set features (number of queues and how the driver
 * honours it, volatile write cache, arbitration, temperature threshold raising an
 * asynchronous event that the driver delivers and re-arms), and the statuses of
 * unknown opcodes, features and log pages.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

static void
get_health(struct nvp_nvme_ctrlr *ctrlr, struct nvme_health_information_page *h)
{
	memset(h, 0xcc, sizeof(*h));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_log_page(ctrlr, NVME_LOG_HEALTH_INFORMATION,
						    NVME_GLOBAL_NS_TAG, h, sizeof(*h), 0, NULL),
			0);
}

/* Thousands of 512-byte units, rounded up (section 5.14.1.2). */
static uint64_t
data_units(uint64_t bytes)
{
	uint64_t units = bytes / 512;

	return (units + 999) / 1000;
}

static void
test_smart_counters(void)
{
	struct nvme_health_information_page h0, h1;
	struct fx_ctrlr fx;
	uint64_t written = 0, read = 0;
	uint8_t *buf;
	unsigned int i;

	if (fx_open(&fx, "size=16M,lba=512") != 0) {
		fx_close(&fx);
		return;
	}
	buf = fx_dma_alloc(128 * 1024);
	get_health(fx.ctrlr, &h0);
	/* A fresh controller has moved no data. */
	CU_ASSERT_EQUAL(h0.data_units_read[0], 0);
	CU_ASSERT_EQUAL(h0.data_units_written[0], 0);
	CU_ASSERT_EQUAL(h0.host_read_commands[0], 0);
	CU_ASSERT_EQUAL(h0.host_write_commands[0], 0);
	CU_ASSERT_EQUAL(h0.critical_warning, 0);
	CU_ASSERT(h0.temperature > 273 && h0.temperature < 373);
	CU_ASSERT(h0.available_spare <= 100);
	CU_ASSERT(h0.available_spare >= h0.available_spare_threshold);

	for (i = 0; i < 10; i++) {
		CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, i * 128, 128, 0, NULL), 0);
		written += 128 * 512;
	}
	for (i = 0; i < 7; i++) {
		CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, i * 8, 8, 0, NULL), 0);
		read += 8 * 512;
	}
	get_health(fx.ctrlr, &h1);
	CU_ASSERT_EQUAL(h1.host_write_commands[0], 10);
	CU_ASSERT_EQUAL(h1.host_read_commands[0], 7);
	CU_ASSERT_EQUAL(h1.data_units_written[0], data_units(written));
	CU_ASSERT_EQUAL(h1.data_units_read[0], data_units(read));
	CU_ASSERT_EQUAL(h1.host_write_commands[1], 0);

	/* 1 MiB more in 128 KiB writes. */
	for (i = 0; i < 8; i++) {
		CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, 4096 + i * 256, 256, 0, NULL),
				0);
		written += 256 * 512;
	}
	get_health(fx.ctrlr, &h1);
	CU_ASSERT_EQUAL(h1.host_write_commands[0], 18);
	CU_ASSERT_EQUAL(h1.data_units_written[0], data_units(written));
	fprintf(stderr, "  SMART: %" PRIu64 " write cmds, %" PRIu64 " data units written, %u K\n",
		h1.host_write_commands[0], h1.data_units_written[0], h1.temperature);

	nvp_env_dma_free(buf);
	fx_close(&fx);
}

static void
test_error_log(void)
{
	struct nvme_error_information_entry *log;
	struct nvme_health_information_page h;
	struct fx_ctrlr fx;
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;
	uint8_t *buf;
	uint64_t nsze, first_count;

	if (fx_open(&fx, "size=4M,lba=512") != 0) {
		fx_close(&fx);
		return;
	}
	nsze = nvp_nvme_ns_get_num_sectors(fx.ns);
	buf = fx_dma_alloc(4096);
	log = fx_dma_alloc(4 * sizeof(*log));

	/* An error the device reports: read past the end through the raw path. */
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_READ;
	cmd.nsid = 1;
	cmd.cdw10 = (uint32_t)nsze;
	CU_ASSERT_EQUAL(fx_io_raw(fx.ctrlr, fx.qpair, &cmd, buf, 512, &cpl), -EIO);

	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_log_page(fx.ctrlr, NVME_LOG_ERROR, NVME_GLOBAL_NS_TAG,
						    log, 4 * sizeof(*log), 0, NULL),
			0);
	CU_ASSERT(log[0].error_count >= 1);
	CU_ASSERT_EQUAL(log[0].sqid, nvp_nvme_qpair_get_id(fx.qpair));
	CU_ASSERT_EQUAL(log[0].cid, cpl.cid);
	CU_ASSERT_EQUAL(log[0].status.sct, NVME_SCT_GENERIC);
	CU_ASSERT_EQUAL(log[0].status.sc, NVME_SC_LBA_OUT_OF_RANGE);
	CU_ASSERT_EQUAL(log[0].nsid, 1);
	CU_ASSERT_EQUAL(log[0].lba, nsze);
	first_count = log[0].error_count;

	get_health(fx.ctrlr, &h);
	CU_ASSERT(h.num_error_info_log_entries[0] >= 1);

	/* A second error is the newest entry, with a higher count. */
	cmd.opc = NVME_OPC_WRITE;
	cmd.cdw10 = (uint32_t)nsze + 5;
	CU_ASSERT_EQUAL(fx_io_raw(fx.ctrlr, fx.qpair, &cmd, buf, 512, &cpl), -EIO);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_log_page(fx.ctrlr, NVME_LOG_ERROR, NVME_GLOBAL_NS_TAG,
						    log, 4 * sizeof(*log), 0, NULL),
			0);
	CU_ASSERT(log[0].error_count > first_count);
	CU_ASSERT_EQUAL(log[0].lba, nsze + 5);
	CU_ASSERT_EQUAL(log[1].error_count, first_count);

	/* A log page read from an offset (LPOL): entry 1 alone. */
	{
		struct nvme_error_information_entry one;

		memset(&one, 0xcc, sizeof(one));
		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_log_page(fx.ctrlr, NVME_LOG_ERROR,
							    NVME_GLOBAL_NS_TAG, &one, sizeof(one),
							    sizeof(one), NULL),
				0);
		CU_ASSERT_EQUAL(memcmp(&one, &log[1], sizeof(one)), 0);
	}

	nvp_env_dma_free(log);
	nvp_env_dma_free(buf);
	fx_close(&fx);
}

static void
test_number_of_queues(void)
{
	union nvme_feat_number_of_queues nq;
	struct nvp_nvme_ctrlr_opts opts;
	struct nvp_nvme_qpair *q[4] = { NULL };
	struct nvp_nvme_qpair *extra = NULL;
	struct fx_ctrlr fx;
	uint32_t result = 0;
	unsigned int i;

	/* The controller supports 4 pairs; the driver asks for 64 and gets 4. */
	if (fx_open(&fx, "size=4M,queues=4") != 0) {
		fx_close(&fx);
		return;
	}
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_num_io_queues(fx.ctrlr), 4);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_feature(fx.ctrlr, NVME_FEAT_NUMBER_OF_QUEUES, 0, 0, 0,
						   &result, NULL, 0, NULL),
			0);
	nq.raw = result;
	CU_ASSERT_EQUAL(nq.bits.nsqr + 1u, 4);
	CU_ASSERT_EQUAL(nq.bits.ncqr + 1u, 4);

	/* fx.qpair holds one id; three more fit, a fifth does not. */
	for (i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(fx_qpair_alloc(fx.ctrlr, 8, 0, 0, false, &q[i]), 0);
	}
	CU_ASSERT_EQUAL(fx_qpair_alloc(fx.ctrlr, 8, 0, 0, false, &extra), -EBUSY);
	/* Freeing one makes its id available again. */
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(q[1]), 0);
	q[1] = NULL;
	CU_ASSERT_EQUAL(fx_qpair_alloc(fx.ctrlr, 8, 0, 0, false, &q[1]), 0);
	for (i = 0; i < 3; i++) {
		if (q[i] != NULL) {
			CU_ASSERT(nvp_nvme_qpair_get_id(q[i]) >= 1 &&
				  nvp_nvme_qpair_get_id(q[i]) <= 4);
			CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(q[i]), 0);
		}
	}
	fx_close(&fx);

	/* The driver asks for 2 of 64: it gets 2 and uses no more. */
	nvp_nvme_ctrlr_opts_init(&opts, sizeof(opts));
	opts.num_io_queues = 2;
	if (fx_open_opts(&fx, "size=4M,queues=64", &opts) != 0) {
		fx_close(&fx);
		return;
	}
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_num_io_queues(fx.ctrlr), 2);
	CU_ASSERT_EQUAL(fx_qpair_alloc(fx.ctrlr, 8, 0, 0, false, &q[0]), 0);
	CU_ASSERT_EQUAL(fx_qpair_alloc(fx.ctrlr, 8, 0, 0, false, &extra), -EBUSY);
	if (q[0] != NULL) {
		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(q[0]), 0);
	}
	fx_close(&fx);
}

static void
test_volatile_write_cache(void)
{
	union nvme_feat_volatile_write_cache vwc;
	struct fx_ctrlr fx;
	struct nvme_cpl cpl;
	uint32_t result;

	if (fx_open(&fx, "size=4M,vwc=1") != 0) {
		fx_close(&fx);
		return;
	}
	vwc.raw = 0;
	vwc.bits.wce = 0;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_set_feature(fx.ctrlr, NVME_FEAT_VOLATILE_WRITE_CACHE,
						   vwc.raw, 0, 0, false, NULL, NULL, 0, &cpl),
			0);
	result = 0xffffffff;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_feature(fx.ctrlr, NVME_FEAT_VOLATILE_WRITE_CACHE, 0, 0,
						   0, &result, NULL, 0, NULL),
			0);
	CU_ASSERT_EQUAL(result & 1, 0);

	vwc.bits.wce = 1;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_set_feature(fx.ctrlr, NVME_FEAT_VOLATILE_WRITE_CACHE,
						   vwc.raw, 0, 0, false, NULL, NULL, 0, &cpl),
			0);
	result = 0;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_feature(fx.ctrlr, NVME_FEAT_VOLATILE_WRITE_CACHE, 0, 0,
						   0, &result, NULL, 0, NULL),
			0);
	CU_ASSERT_EQUAL(result & 1, 1);
	/* I/O and flush work either way. */
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_FLUSH, NULL, 0, 0, 0, NULL), 0);
	fx_close(&fx);

	/* No volatile write cache: enabling it is refused (section 5.21.1.6). */
	if (fx_open(&fx, "size=4M,vwc=0") != 0) {
		fx_close(&fx);
		return;
	}
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_data(fx.ctrlr)->vwc & 1, 0);
	memset(&cpl, 0, sizeof(cpl));
	vwc.bits.wce = 1;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_set_feature(fx.ctrlr, NVME_FEAT_VOLATILE_WRITE_CACHE,
						   vwc.raw, 0, 0, false, NULL, NULL, 0, &cpl),
			-EIO);
	fx_print_cpl("VWC set without a cache", &cpl);
	fx_close(&fx);
}

static void
test_arbitration(void)
{
	union nvme_feat_arbitration arb, got;
	struct fx_ctrlr fx;
	uint32_t result = 0;

	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	arb.raw = 0;
	arb.bits.ab = 3;
	arb.bits.lpw = 1;
	arb.bits.mpw = 2;
	arb.bits.hpw = 3;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_set_feature(fx.ctrlr, NVME_FEAT_ARBITRATION, arb.raw, 0, 0,
						   false, NULL, NULL, 0, NULL),
			0);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_feature(fx.ctrlr, NVME_FEAT_ARBITRATION, 0, 0, 0,
						   &result, NULL, 0, NULL),
			0);
	got.raw = result;
	CU_ASSERT_EQUAL(got.bits.ab, 3);
	CU_ASSERT_EQUAL(got.bits.lpw, 1);
	CU_ASSERT_EQUAL(got.bits.mpw, 2);
	CU_ASSERT_EQUAL(got.bits.hpw, 3);
	fx_close(&fx);
}

struct aer_ctx {
	unsigned int calls;
	struct nvme_cpl cpl;
};

static void
aer_cb(void *cb_arg, const struct nvme_cpl *cpl)
{
	struct aer_ctx *a = cb_arg;

	a->calls++;
	a->cpl = *cpl;
}

static int
set_temp_threshold(struct nvp_nvme_ctrlr *ctrlr, uint16_t kelvin)
{
	union nvme_feat_temperature_threshold tt;

	tt.raw = 0;
	tt.bits.tmpth = kelvin;
	tt.bits.tmpsel = 0; /* composite */
	tt.bits.thsel = 0;  /* over-temperature threshold */
	return nvp_nvme_ctrlr_set_feature(ctrlr, NVME_FEAT_TEMPERATURE_THRESHOLD, tt.raw, 0, 0,
					  false, NULL, NULL, 0, NULL);
}

static void
check_temperature_event(const struct aer_ctx *a)
{
	union nvme_async_event_completion ev;

	ev.raw = a->cpl.cdw0;
	CU_ASSERT_FALSE(nvme_cpl_is_error(&a->cpl));
	CU_ASSERT_EQUAL(ev.bits.async_event_type, NVME_ASYNC_EVENT_TYPE_SMART);
	CU_ASSERT_EQUAL(ev.bits.async_event_info, NVME_ASYNC_EVENT_TEMPERATURE_THRESHOLD);
	CU_ASSERT_EQUAL(ev.bits.log_page_identifier, NVME_LOG_HEALTH_INFORMATION);
}

static void
test_temperature_threshold_aer(void)
{
	union nvme_feat_temperature_threshold tt;
	struct nvme_health_information_page h;
	struct aer_ctx a = { 0 };
	struct fx_ctrlr fx;
	uint32_t result = 0;
	uint16_t temp;

	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	nvp_nvme_ctrlr_register_aer_callback(fx.ctrlr, aer_cb, &a);
	get_health(fx.ctrlr, &h);
	temp = h.temperature;
	CU_ASSERT_FATAL(temp > 273);
	CU_ASSERT_EQUAL(h.critical_warning & NVME_CRIT_WARN_TEMPERATURE, 0);

	/* Nothing happens on its own. */
	CU_ASSERT_EQUAL(fx_poll_admin_until(fx.ctrlr, &a.calls, 1, 100), -ETIMEDOUT);

	/* Threshold below the current temperature: a SMART/health event. */
	CU_ASSERT_EQUAL(set_temp_threshold(fx.ctrlr, temp - 10), 0);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_feature(fx.ctrlr, NVME_FEAT_TEMPERATURE_THRESHOLD, 0, 0,
						   0, &result, NULL, 0, NULL),
			0);
	tt.raw = result;
	CU_ASSERT_EQUAL(tt.bits.tmpth, temp - 10);
	CU_ASSERT_EQUAL(fx_poll_admin_until(fx.ctrlr, &a.calls, 1, 5000), 0);
	CU_ASSERT_EQUAL(a.calls, 1);
	check_temperature_event(&a);
	get_health(fx.ctrlr, &h);
	CU_ASSERT(h.critical_warning & NVME_CRIT_WARN_TEMPERATURE);

	/* Back above the temperature: the warning clears. */
	CU_ASSERT_EQUAL(set_temp_threshold(fx.ctrlr, temp + 50), 0);
	get_health(fx.ctrlr, &h);
	CU_ASSERT_EQUAL(h.critical_warning & NVME_CRIT_WARN_TEMPERATURE, 0);

	/* The driver re-armed the AER: a second crossing is delivered too. */
	CU_ASSERT_EQUAL(set_temp_threshold(fx.ctrlr, temp - 10), 0);
	CU_ASSERT_EQUAL(fx_poll_admin_until(fx.ctrlr, &a.calls, 2, 5000), 0);
	CU_ASSERT_EQUAL(a.calls, 2);
	check_temperature_event(&a);
	get_health(fx.ctrlr, &h);
	CU_ASSERT_EQUAL(set_temp_threshold(fx.ctrlr, temp + 50), 0);

	/* After a controller reset the AERs are armed again. */
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_ctrlr_reset(fx.ctrlr), 0);
	CU_ASSERT_EQUAL(set_temp_threshold(fx.ctrlr, temp - 10), 0);
	CU_ASSERT_EQUAL(fx_poll_admin_until(fx.ctrlr, &a.calls, 3, 5000), 0);
	CU_ASSERT_EQUAL(a.calls, 3);
	check_temperature_event(&a);
	get_health(fx.ctrlr, &h);
	CU_ASSERT_EQUAL(set_temp_threshold(fx.ctrlr, temp + 50), 0);

	/* I/O is unaffected. */
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_FLUSH, NULL, 0, 0, 0, NULL), 0);
	fx_close(&fx);
}

/* An AER callback that reads the log page at once, synchronously (the usual way to
 * acknowledge an event), from inside admin completion processing. */
struct aer_reader {
	struct nvp_nvme_ctrlr *ctrlr;
	unsigned int calls;
	int log_rc;
	uint8_t crit;
};

static void
aer_reader_cb(void *cb_arg, const struct nvme_cpl *cpl)
{
	struct aer_reader *r = cb_arg;
	struct nvme_health_information_page h;

	(void)cpl;
	r->calls++;
	r->log_rc = nvp_nvme_ctrlr_get_log_page(r->ctrlr, NVME_LOG_HEALTH_INFORMATION,
						NVME_GLOBAL_NS_TAG, &h, sizeof(h), 0, NULL);
	r->crit = h.critical_warning;
}

static void
test_aer_callback_reads_log(void)
{
	struct nvme_health_information_page h;
	struct aer_reader r;
	struct fx_ctrlr fx;

	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	memset(&r, 0, sizeof(r));
	r.ctrlr = fx.ctrlr;
	r.log_rc = -1;
	nvp_nvme_ctrlr_register_aer_callback(fx.ctrlr, aer_reader_cb, &r);
	get_health(fx.ctrlr, &h);
	CU_ASSERT_EQUAL(set_temp_threshold(fx.ctrlr, h.temperature - 10), 0);
	CU_ASSERT_EQUAL(fx_poll_admin_until(fx.ctrlr, &r.calls, 1, 5000), 0);
	CU_ASSERT_EQUAL(r.log_rc, 0);
	CU_ASSERT(r.crit & NVME_CRIT_WARN_TEMPERATURE);
	CU_ASSERT_EQUAL(set_temp_threshold(fx.ctrlr, h.temperature + 50), 0);
	/* The admin queue still works from this thread too. */
	get_health(fx.ctrlr, &h);
	nvp_nvme_ctrlr_register_aer_callback(fx.ctrlr, NULL, NULL);
	fx_close(&fx);
}

/* Per-namespace SMART data when LPA says it is supported. */
static void
test_smart_per_namespace(void)
{
	struct nvme_health_information_page h;
	struct fx_ctrlr fx;
	struct nvme_cpl cpl;
	int rc;

	if (fx_open(&fx, "size=4M,nn=2") != 0) {
		fx_close(&fx);
		return;
	}
	memset(&cpl, 0, sizeof(cpl));
	rc = nvp_nvme_ctrlr_get_log_page(fx.ctrlr, NVME_LOG_HEALTH_INFORMATION, 1, &h, sizeof(h), 0,
					 &cpl);
	if (nvp_nvme_ctrlr_get_data(fx.ctrlr)->lpa & NVME_LPA_NS_SMART) {
		CU_ASSERT_EQUAL(rc, 0);
	} else {
		/* Section 5.14.1.2: without per-namespace data, NSID other than 0 or FFFFFFFFh
		 * is Invalid Field in Command. */
		CU_ASSERT_EQUAL(rc, -EIO);
		FX_ASSERT_STATUS(&cpl, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
	}
	fx_close(&fx);
}

static void
test_invalid_admin(void)
{
	struct fx_ctrlr fx;
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;
	uint8_t *buf;
	uint32_t result;

	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	buf = fx_dma_alloc(4096);

	/* A reserved admin opcode. */
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = 0x3c;
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_sync(fx.ctrlr, &cmd, NULL, 0, &cpl), -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE);

	/* A reserved feature id. */
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_feature(fx.ctrlr, 0x7d, 0, 0, 0, &result, NULL, 0, &cpl),
			-EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(
		nvp_nvme_ctrlr_set_feature(fx.ctrlr, 0x7d, 1, 0, 0, false, &result, NULL, 0, &cpl),
		-EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);

	/* A log page the controller does not have. */
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(
		nvp_nvme_ctrlr_get_log_page(fx.ctrlr, 0x7e, NVME_GLOBAL_NS_TAG, buf, 512, 0, &cpl),
		-EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_LOG_PAGE);

	/* Queue management with bad ids (section 5.4, 5.5): the device's own checks. */
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_DELETE_IO_SQ;
	cmd.cdw10 = 0; /* the admin queue */
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_sync(fx.ctrlr, &cmd, NULL, 0, &cpl), -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QUEUE_IDENTIFIER);
	cmd.cdw10 = 0xfff0; /* beyond what the controller supports */
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_sync(fx.ctrlr, &cmd, NULL, 0, &cpl), -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QUEUE_IDENTIFIER);

	/* The CQ of a live qpair is still in use by its SQ. */
	cmd.opc = NVME_OPC_DELETE_IO_CQ;
	cmd.cdw10 = nvp_nvme_qpair_get_id(fx.qpair);
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_sync(fx.ctrlr, &cmd, NULL, 0, &cpl), -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QUEUE_DELETION);

	/* Admin commands with a buffer that is not DMA memory are refused up front. */
	{
		static uint8_t plain[4096];
		struct fx_cpl c = { 0 };

		memset(&cmd, 0, sizeof(cmd));
		cmd.opc = NVME_OPC_IDENTIFY;
		cmd.cdw10 = NVME_IDENTIFY_CTRLR;
		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_cmd_admin_raw(fx.ctrlr, &cmd, plain, sizeof(plain),
							     fx_cpl_cb, &c),
				-EFAULT);
		nvp_nvme_ctrlr_process_admin_completions(fx.ctrlr);
		CU_ASSERT_EQUAL(c.calls, 0);
	}

	/* After all that, the controller and the qpair are fine. */
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(fx.ctrlr));
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 0, 1, 0, NULL), 0);
	nvp_env_dma_free(buf);
	fx_close(&fx);
}

/* One admin command with a DMA buffer that must outlive it (queue memory): raw submit,
 * then poll. \return 0, -EIO with *@cpl, or -errno. */
static int
admin_raw_wait(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, void *buf, uint32_t len,
	       struct nvme_cpl *cpl)
{
	struct fx_cpl c = { 0 };
	int rc;

	rc = nvp_nvme_ctrlr_cmd_admin_raw(ctrlr, cmd, buf, len, fx_cpl_cb, &c);
	if (rc != 0) {
		return rc;
	}
	rc = fx_poll_admin_until(ctrlr, &c.calls, 1, 5000);
	if (rc != 0) {
		return rc;
	}
	*cpl = c.cpl;
	return nvme_cpl_is_error(&c.cpl) ? -EIO : 0;
}

static void
queue_cmd(struct nvme_cmd *cmd, uint8_t opc, uint16_t qid, uint32_t entries, uint32_t cdw11)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = opc;
	cmd->cdw10 = NVME_CREATE_IO_Q_CDW10(qid, entries);
	cmd->cdw11 = cdw11;
}

/* The controller's own checks on queue creation and deletion (sections 5.3-5.7). */
static void
test_queue_management_validation(void)
{
	const uint32_t sq_attr = NVME_CREATE_IO_SQ_PC | (4u << NVME_CREATE_IO_SQ_CQID_SHIFT);
	struct fx_ctrlr fx;
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;
	uint8_t *cq_mem, *sq_mem;
	uint16_t used;

	/* MQES 63, four queue pairs: the driver's qpair takes qid 1, the test uses qid 4. */
	if (fx_open(&fx, "size=4M,mqes=63,queues=4") != 0) {
		fx_close(&fx);
		return;
	}
	used = nvp_nvme_qpair_get_id(fx.qpair);
	CU_ASSERT_FATAL(used != 4);
	cq_mem = fx_dma_alloc(4096);
	sq_mem = fx_dma_alloc(4096);

	/* A qid that is in use, one past the granted queues: Invalid Queue Identifier. */
	queue_cmd(&cmd, NVME_OPC_CREATE_IO_CQ, used, 16, NVME_CREATE_IO_CQ_PC);
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(admin_raw_wait(fx.ctrlr, &cmd, cq_mem, 4096, &cpl), -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QUEUE_IDENTIFIER);
	queue_cmd(&cmd, NVME_OPC_CREATE_IO_CQ, 5, 16, NVME_CREATE_IO_CQ_PC);
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(admin_raw_wait(fx.ctrlr, &cmd, cq_mem, 4096, &cpl), -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QUEUE_IDENTIFIER);

	/* Sizes: above MQES + 1, and a single entry. */
	queue_cmd(&cmd, NVME_OPC_CREATE_IO_CQ, 4, 65, NVME_CREATE_IO_CQ_PC);
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(admin_raw_wait(fx.ctrlr, &cmd, cq_mem, 4096, &cpl), -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QUEUE_SIZE);
	queue_cmd(&cmd, NVME_OPC_CREATE_IO_CQ, 4, 1, NVME_CREATE_IO_CQ_PC);
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(admin_raw_wait(fx.ctrlr, &cmd, cq_mem, 4096, &cpl), -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QUEUE_SIZE);

	/* An SQ for a CQ that does not exist: Completion Queue Invalid. */
	queue_cmd(&cmd, NVME_OPC_CREATE_IO_SQ, 4, 16, sq_attr);
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(admin_raw_wait(fx.ctrlr, &cmd, sq_mem, 4096, &cpl), -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_COMMAND_SPECIFIC, NVME_SC_COMPLETION_QUEUE_INVALID);

	/* The right way round works; a CQ with its SQ still there cannot be deleted. */
	queue_cmd(&cmd, NVME_OPC_CREATE_IO_CQ, 4, 16, NVME_CREATE_IO_CQ_PC);
	CU_ASSERT_EQUAL(admin_raw_wait(fx.ctrlr, &cmd, cq_mem, 4096, &cpl), 0);
	queue_cmd(&cmd, NVME_OPC_CREATE_IO_SQ, 4, 16, sq_attr);
	CU_ASSERT_EQUAL(admin_raw_wait(fx.ctrlr, &cmd, sq_mem, 4096, &cpl), 0);
	queue_cmd(&cmd, NVME_OPC_DELETE_IO_CQ, 4, 1, 0);
	cmd.cdw10 = 4;
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(admin_raw_wait(fx.ctrlr, &cmd, NULL, 0, &cpl), -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QUEUE_DELETION);
	/* Creating the same SQ again: Invalid Queue Identifier. */
	queue_cmd(&cmd, NVME_OPC_CREATE_IO_SQ, 4, 16, sq_attr);
	memset(&cpl, 0, sizeof(cpl));
	CU_ASSERT_EQUAL(admin_raw_wait(fx.ctrlr, &cmd, sq_mem, 4096, &cpl), -EIO);
	FX_ASSERT_STATUS(&cpl, NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_QUEUE_IDENTIFIER);
	/* Tear down in order. */
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_DELETE_IO_SQ;
	cmd.cdw10 = 4;
	CU_ASSERT_EQUAL(admin_raw_wait(fx.ctrlr, &cmd, NULL, 0, &cpl), 0);
	cmd.opc = NVME_OPC_DELETE_IO_CQ;
	CU_ASSERT_EQUAL(admin_raw_wait(fx.ctrlr, &cmd, NULL, 0, &cpl), 0);

	/* The driver's own qpair never noticed. */
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, sq_mem, 0, 8, 0, NULL), 0);
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(fx.ctrlr));
	nvp_env_dma_free(sq_mem);
	nvp_env_dma_free(cq_mem);
	fx_close(&fx);
}

/* The asynchronous admin path: submit raw, poll, callback. */
static void
test_admin_raw_async(void)
{
	struct nvme_ctrlr_data *cd;
	struct fx_cpl c = { 0 };
	struct fx_ctrlr fx;
	struct nvme_cmd cmd;

	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	cd = fx_dma_alloc(sizeof(*cd));
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_IDENTIFY;
	cmd.cdw10 = NVME_IDENTIFY_CTRLR;
	CU_ASSERT_EQUAL_FATAL(
		nvp_nvme_ctrlr_cmd_admin_raw(fx.ctrlr, &cmd, cd, sizeof(*cd), fx_cpl_cb, &c), 0);
	CU_ASSERT_EQUAL(fx_poll_admin_until(fx.ctrlr, &c.calls, 1, 5000), 0);
	CU_ASSERT_EQUAL(c.calls, 1);
	CU_ASSERT_FALSE(nvme_cpl_is_error(&c.cpl));
	CU_ASSERT_EQUAL(memcmp(cd, nvp_nvme_ctrlr_get_data(fx.ctrlr), sizeof(*cd)), 0);
	nvp_env_dma_free(cd);
	fx_close(&fx);
}

/* Small admin queues: the driver's AERs must not take every slot. */
static void
test_small_admin_queue(void)
{
	static const uint32_t sizes[] = { 2, 3, 4, 8 };
	struct nvp_nvme_ctrlr_opts opts;
	struct nvme_health_information_page h;
	struct fx_ctrlr fx;
	unsigned int i, j, errors;

	for (i = 0; i < NVP_COUNTOF(sizes); i++) {
		nvp_nvme_ctrlr_opts_init(&opts, sizeof(opts));
		opts.admin_queue_size = sizes[i];
		opts.admin_timeout_ms = 2000;
		if (fx_open_opts(&fx, "size=4M", &opts) != 0) {
			fprintf(stderr, "  admin queue of %u entries: attach failed\n", sizes[i]);
			fx_close(&fx);
			continue;
		}
		errors = 0;
		for (j = 0; j < 40; j++) {
			if (nvp_nvme_ctrlr_get_log_page(fx.ctrlr, NVME_LOG_HEALTH_INFORMATION,
							NVME_GLOBAL_NS_TAG, &h, sizeof(h), 0,
							NULL) != 0) {
				errors++;
			}
		}
		if (errors != 0) {
			fprintf(stderr, "  admin queue of %u entries: %u of 40 commands failed\n",
				sizes[i], errors);
		}
		CU_ASSERT_EQUAL(errors, 0);
		fx_close(&fx);
	}
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "smart_counters", test_smart_counters },
		{ "error_log", test_error_log },
		{ "number_of_queues", test_number_of_queues },
		{ "volatile_write_cache", test_volatile_write_cache },
		{ "arbitration", test_arbitration },
		{ "temperature_threshold_aer", test_temperature_threshold_aer },
		{ "aer_callback_reads_log", test_aer_callback_reads_log },
		{ "smart_per_namespace", test_smart_per_namespace },
		{ "invalid_admin", test_invalid_admin },
		{ "admin_raw_async", test_admin_raw_async },
		{ "queue_management_validation", test_queue_management_validation },
		{ "small_admin_queue", test_small_admin_queue },
	};

	return fx_main(argc, argv, "nvme_admin_features", tests, NVP_COUNTOF(tests));
}

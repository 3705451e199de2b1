/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Request timeouts of the nvme module (timeout_us, action_on_timeout) over the software
 * controller, a completion dropped by fault injection: abort and reset end the I/O with
 * one callback and the bdev goes on; none counts the timeout and leaves the I/O
 * outstanding until its channel is destroyed, which completes it (an error) once; a
 * channel destroyed with dropped and slow I/O outstanding completes each once and the
 * controller detaches cleanly (run under ASan by CI's sanitizer build). The JSON
 * configuration's bdev_nvme_set_options and attach parameters reach the module.
 * Counters and statuses only: the waits have a generous deadline, nothing is timed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bdev_fx.h"
#include "nvpoll/bdev_module.h"
#include "nvpoll/emu.h"

#define TO_US 100000u /* each test's timeout_us: 100 ms */
#define WAIT_US (20u * 1000 * 1000)

static int
attach(const char *name, const char *emu_opts, uint64_t timeout_us,
       enum nvp_bdev_nvme_timeout_action action)
{
	static struct nvp_nvme_ctrlr_opts co;
	struct nvp_bdev_nvme_opts o;
	char trid[256];

	nvp_nvme_ctrlr_opts_init(&co, sizeof(co));
	co.admin_timeout_ms = 2000;
	nvp_bdev_nvme_opts_init(&o, sizeof(o));
	o.name = name;
	o.ctrlr_opts = &co;
	o.timeout_us = timeout_us;
	o.action_on_timeout = action;
	snprintf(trid, sizeof(trid), "trtype:emu name:%s size:4M %s", name, emu_opts);
	return nvp_bdev_nvme_attach(trid, &o, NULL, 0, NULL);
}

static struct nvp_bdev_nvme_ctrlr_stats
stats_of(struct nvp_bdev_desc *desc)
{
	struct nvp_bdev_nvme_ctrlr_stats st;

	memset(&st, 0, sizeof(st));
	st.info_size = sizeof(st);
	CU_ASSERT_EQUAL(nvp_bdev_nvme_get_ctrlr_stats(nvp_bdev_desc_get_bdev(desc), &st), 0);
	return st;
}

/* The timeout counter alone, read in wait loops (no assertion per poll). */
static uint64_t
timeouts_of(struct nvp_bdev_desc *desc)
{
	struct nvp_bdev_nvme_ctrlr_stats st;

	memset(&st, 0, sizeof(st));
	st.info_size = sizeof(st);
	(void)nvp_bdev_nvme_get_ctrlr_stats(nvp_bdev_desc_get_bdev(desc), &st);
	return st.timeouts;
}

struct events {
	unsigned int remove;
};

static void
event_cb(enum nvp_bdev_event_type type, struct nvp_bdev *bdev, void *ctx)
{
	struct events *e = ctx;

	(void)bdev;
	if (type == NVP_BDEV_EVENT_REMOVE) {
		__atomic_add_fetch(&e->remove, 1, __ATOMIC_RELAXED);
	}
}

/* Poll @ch until the callbacks of @c[0..n) ran or the deadline passed. \return calls. */
static unsigned int
poll_calls(struct nvp_bdev_channel *ch, struct fx_cpl *c, unsigned int n)
{
	uint64_t deadline = fx_now_us() + WAIT_US;
	unsigned int i, calls = 0;

	while (fx_now_us() < deadline) {
		nvp_bdev_channel_poll(ch);
		for (i = 0, calls = 0; i < n; i++) {
			calls += c[i].calls;
		}
		if (calls >= n) {
			break;
		}
	}
	return calls;
}

/* Poll @ch for @us more (a second completion would show up in the callbacks' counts). */
static void
poll_for(struct nvp_bdev_channel *ch, uint64_t us)
{
	uint64_t end = fx_now_us() + us;

	while (fx_now_us() < end) {
		nvp_bdev_channel_poll(ch);
	}
}

/* The data written before the fault reads back, and a new write too: the bdev goes on. */
static void
check_goes_on(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, uint8_t *buf)
{
	memset(buf, 0, 8 * 512);
	CU_ASSERT_EQUAL(bfx_io(desc, ch, BFX_READ, buf, 0, 8, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, 0, 8, 512, 7) < 0);
	fx_pattern_fill(buf, 8, 8, 512, 8);
	CU_ASSERT_EQUAL(bfx_io(desc, ch, BFX_WRITE, buf, 8, 8, NULL), 0);
	memset(buf, 0, 8 * 512);
	CU_ASSERT_EQUAL(bfx_io(desc, ch, BFX_READ, buf, 8, 8, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, 8, 8, 512, 8) < 0);
}

/*
 * One read among four has its completion dropped; the channel was opened on @name with
 * @action. \return the dropped read's record (c[0]); the others completed fine.
 */
static void
dropped_read(const char *name, struct nvp_bdev_desc **desc, struct nvp_bdev_channel **ch,
	     uint8_t **buf, struct fx_cpl *c, struct events *ev)
{
	char bdev[NVP_BDEV_NAME_MAX];
	unsigned int i;

	snprintf(bdev, sizeof(bdev), "%sn1", name);
	memset(ev, 0, sizeof(*ev));
	memset(c, 0, 4 * sizeof(*c));
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open(bdev, true, event_cb, ev, desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(*desc, NULL, ch), 0);
	*buf = fx_dma_alloc(5 * 4096);
	fx_pattern_fill(*buf, 0, 8, 512, 7);
	CU_ASSERT_EQUAL(bfx_io(*desc, *ch, BFX_WRITE, *buf, 0, 8, NULL), 0);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(nvp_emu_ctrlr_find(name), NVP_EMU_FAULT_DROP_CPL,
						   1, 0, 0),
			0);
	for (i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(nvp_bdev_read_blocks(*desc, *ch, *buf + 4096 + i * 4096, 0, 8,
						     bfx_cpl_cb, &c[i]),
				0);
	}
}

static void
finish(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch, uint8_t *buf, const char *name)
{
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_nvme_detach(name), 0);
	nvp_env_dma_free(buf);
}

/* abort: the dropped read ends with one callback (the Abort's verdict), the bdev goes on. */
static void
test_timeout_abort(void)
{
	struct nvp_bdev_nvme_ctrlr_stats st;
	struct nvp_emu_stats es;
	struct nvp_bdev_channel *ch;
	struct nvp_bdev_desc *desc;
	struct fx_cpl c[4];
	struct events ev;
	uint8_t *buf;
	unsigned int i;

	FX_NEEDS_EMU("fault injection");
	CU_ASSERT_EQUAL_FATAL(attach("bto1", "", TO_US, NVP_BDEV_NVME_TIMEOUT_ABORT), 0);
	dropped_read("bto1", &desc, &ch, &buf, c, &ev);
	CU_ASSERT_EQUAL(poll_calls(ch, c, 4), 4);
	poll_for(ch, 3 * TO_US);
	for (i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(c[i].calls, 1);
	}
	/* the dropped one: completed by the driver after the Abort (not aborted: the command
	 * had run), the others as the device answered */
	CU_ASSERT_EQUAL(c[0].cpl.status.sct, NVME_SCT_PATH);
	CU_ASSERT_EQUAL(c[0].cpl.status.sc, NVME_SC_ABORTED_BY_HOST);
	for (i = 1; i < 4; i++) {
		CU_ASSERT_FALSE(nvme_cpl_is_error(&c[i].cpl));
	}
	st = stats_of(desc);
	CU_ASSERT_EQUAL(st.timeouts, 1);
	CU_ASSERT_EQUAL(st.timeout_resets, 0);
	CU_ASSERT_EQUAL(st.resets, 0);
	memset(&es, 0, sizeof(es));
	es.info_size = sizeof(es);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_get_stats(nvp_emu_ctrlr_find("bto1"), &es), 0);
	CU_ASSERT_EQUAL(es.dropped_cpls, 1);
	CU_ASSERT_EQUAL(es.resets, 0);
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_outstanding(ch), 0);
	check_goes_on(desc, ch, buf);
	CU_ASSERT_EQUAL(ev.remove, 0);
	finish(desc, ch, buf, "bto1");
}

/* reset: the controller is reset once, every read completes once, the bdev goes on. */
static void
test_timeout_reset(void)
{
	struct nvp_bdev_nvme_ctrlr_stats st;
	struct nvp_emu_stats es;
	struct nvp_bdev_channel *ch;
	struct nvp_bdev_desc *desc;
	struct fx_cpl c[4];
	struct events ev;
	uint8_t *buf;
	unsigned int i;

	FX_NEEDS_EMU("fault injection");
	CU_ASSERT_EQUAL_FATAL(attach("bto2", "", TO_US, NVP_BDEV_NVME_TIMEOUT_RESET), 0);
	dropped_read("bto2", &desc, &ch, &buf, c, &ev);
	CU_ASSERT_EQUAL(poll_calls(ch, c, 4), 4);
	poll_for(ch, 3 * TO_US);
	for (i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(c[i].calls, 1);
	}
	/* past its deadline when the reset took it back: not sent again, an error that
	 * allows a retry */
	CU_ASSERT_EQUAL(c[0].cpl.status.sct, NVME_SCT_GENERIC);
	CU_ASSERT_EQUAL(c[0].cpl.status.sc, NVME_SC_ABORTED_SQ_DELETION);
	CU_ASSERT_EQUAL(c[0].cpl.status.dnr, 0);
	for (i = 1; i < 4; i++) {
		CU_ASSERT_FALSE(nvme_cpl_is_error(&c[i].cpl));
	}
	st = stats_of(desc);
	CU_ASSERT_EQUAL(st.timeouts, 1);
	CU_ASSERT_EQUAL(st.timeout_resets, 1);
	CU_ASSERT_EQUAL(st.resets, 1);
	memset(&es, 0, sizeof(es));
	es.info_size = sizeof(es);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_get_stats(nvp_emu_ctrlr_find("bto2"), &es), 0);
	CU_ASSERT_EQUAL(es.resets, 1);
	CU_ASSERT_EQUAL(es.aborted_cmds, 0); /* a reset, no Abort */
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_outstanding(ch), 0);
	check_goes_on(desc, ch, buf);
	CU_ASSERT_EQUAL(ev.remove, 0);
	CU_ASSERT_FALSE(nvp_bdev_is_removed(nvp_bdev_desc_get_bdev(desc)));
	finish(desc, ch, buf, "bto2");
}

/*
 * none: the timeout is counted (once) and the read stays outstanding, the others and new
 * I/O go on; destroying the channel completes it, once, with an error.
 */
static void
test_timeout_none(void)
{
	struct nvp_bdev_nvme_ctrlr_stats st;
	struct nvp_bdev_channel *ch;
	struct nvp_bdev_desc *desc;
	struct fx_cpl c[4];
	struct events ev;
	uint64_t deadline;
	uint8_t *buf;
	unsigned int i;

	FX_NEEDS_EMU("fault injection");
	CU_ASSERT_EQUAL_FATAL(attach("bto3", "", TO_US, NVP_BDEV_NVME_TIMEOUT_NONE), 0);
	dropped_read("bto3", &desc, &ch, &buf, c, &ev);
	CU_ASSERT_EQUAL(poll_calls(ch, c + 1, 3), 3);
	deadline = fx_now_us() + WAIT_US;
	while (fx_now_us() < deadline && timeouts_of(desc) == 0) {
		nvp_bdev_channel_poll(ch);
	}
	poll_for(ch, 3 * TO_US);
	st = stats_of(desc);
	CU_ASSERT_EQUAL(st.timeouts, 1); /* reported once, not at every poll */
	CU_ASSERT_EQUAL(st.timeout_resets, 0);
	CU_ASSERT_EQUAL(c[0].calls, 0);
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_outstanding(ch), 1);
	for (i = 1; i < 4; i++) {
		CU_ASSERT_EQUAL(c[i].calls, 1);
		CU_ASSERT_FALSE(nvme_cpl_is_error(&c[i].cpl));
	}
	check_goes_on(desc, ch, buf);
	CU_ASSERT_EQUAL(c[0].calls, 0);
	/* the application closes: destroy completes it */
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
	CU_ASSERT_EQUAL(c[0].calls, 1);
	CU_ASSERT_TRUE(nvme_cpl_is_error(&c[0].cpl));
	CU_ASSERT_EQUAL(c[0].cpl.status.sc, NVME_SC_ABORTED_SQ_DELETION);
	st = stats_of(desc);
	CU_ASSERT_EQUAL(st.aborted_at_destroy, 1);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_nvme_detach("bto3"), 0);
	nvp_env_dma_free(buf);
}

/*
 * Closing with I/O outstanding: dropped completions (no timeout of the module's) and slow
 * reads (2 s of service time) are completed with an error by the channel's destruction,
 * each once; the controller detaches (its thread stopped) before the buffers are freed.
 */
static void
test_close_outstanding(void)
{
	struct nvp_bdev_nvme_ctrlr_stats st;
	struct nvp_bdev_channel *ch;
	struct nvp_bdev_desc *desc;
	struct fx_cpl c[8];
	struct events ev;
	uint8_t *buf;
	unsigned int i;

	FX_NEEDS_EMU("fault injection");
	CU_ASSERT_EQUAL_FATAL(attach("bto4", "", 0, NVP_BDEV_NVME_TIMEOUT_NONE), 0);
	memset(&ev, 0, sizeof(ev));
	memset(c, 0, sizeof(c));
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("bto4n1", true, event_cb, &ev, &desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch), 0);
	buf = fx_dma_alloc(8 * 4096);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(nvp_emu_ctrlr_find("bto4"),
						   NVP_EMU_FAULT_DROP_CPL, 4, 0, 0),
			0);
	for (i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(nvp_bdev_write_blocks(desc, ch, buf + i * 4096, i * 8, 8, 0,
						      bfx_cpl_cb, &c[i]),
				0);
	}
	nvp_bdev_channel_poll(ch);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(nvp_emu_ctrlr_find("bto4"), NVP_EMU_FAULT_SLOW,
						   4, 0, 2000000),
			0);
	for (i = 4; i < 8; i++) {
		CU_ASSERT_EQUAL(
			nvp_bdev_read_blocks(desc, ch, buf + i * 4096, i * 8, 8, bfx_cpl_cb, &c[i]),
			0);
	}
	nvp_bdev_channel_poll(ch);
	CU_ASSERT_EQUAL(nvp_bdev_channel_get_outstanding(ch), 8);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
	for (i = 0; i < 8; i++) {
		CU_ASSERT_EQUAL(c[i].calls, 1);
		CU_ASSERT_TRUE(nvme_cpl_is_error(&c[i].cpl));
	}
	st = stats_of(desc);
	CU_ASSERT_EQUAL(st.aborted_at_destroy, 8);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	CU_ASSERT_EQUAL(nvp_bdev_nvme_detach("bto4"), 0);
	nvp_env_dma_free(buf);
	for (i = 0; i < 8; i++) {
		CU_ASSERT_EQUAL(c[i].calls, 1); /* nothing more after the detach */
	}
	CU_ASSERT_EQUAL(ev.remove, 0);
}

/* The JSON configuration: bdev_nvme_set_options' timeouts reach a later attach, an
 * attach's own win, a bad action is refused naming the values. */
static void
test_config(void)
{
	struct nvp_bdev_channel *ch;
	struct nvp_bdev_desc *desc;
	struct fx_cpl c[4];
	struct events ev;
	uint64_t deadline;
	uint8_t *buf;

	FX_NEEDS_EMU("fault injection");
	CU_ASSERT_EQUAL(
		nvp_bdev_load_config_string("{\"subsystems\":[{\"subsystem\":\"bdev\",\"config\":["
					    "{\"method\":\"bdev_nvme_set_options\",\"params\":"
					    "{\"action_on_timeout\":\"explode\"}}]}]}"),
		-EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_load_config_string(
				"{\"subsystems\":[{\"subsystem\":\"bdev\",\"config\":["
				"{\"method\":\"bdev_nvme_set_options\",\"params\":"
				"{\"timeout_us\":100000,\"action_on_timeout\":\"none\","
				"\"retry_count\":4}},"
				"{\"method\":\"bdev_nvme_attach_controller\",\"params\":"
				"{\"name\":\"bto5\",\"trtype\":\"emu\",\"size\":\"4M\"}},"
				"{\"method\":\"bdev_nvme_attach_controller\",\"params\":"
				"{\"name\":\"bto6\",\"trtype\":\"emu\",\"size\":\"4M\","
				"\"action_on_timeout\":\"Abort\"}}]}]}"),
			0);
	/* bto5: none from the module options */
	dropped_read("bto5", &desc, &ch, &buf, c, &ev);
	CU_ASSERT_EQUAL(poll_calls(ch, c + 1, 3), 3);
	deadline = fx_now_us() + WAIT_US;
	while (fx_now_us() < deadline && timeouts_of(desc) == 0) {
		nvp_bdev_channel_poll(ch);
	}
	CU_ASSERT_EQUAL(stats_of(desc).timeouts, 1);
	CU_ASSERT_EQUAL(c[0].calls, 0);
	finish(desc, ch, buf, "bto5");
	CU_ASSERT_EQUAL(c[0].calls, 1);
	/* bto6: the module's timeout_us, its own action */
	dropped_read("bto6", &desc, &ch, &buf, c, &ev);
	CU_ASSERT_EQUAL(poll_calls(ch, c, 4), 4);
	CU_ASSERT_EQUAL(c[0].cpl.status.sc, NVME_SC_ABORTED_BY_HOST);
	CU_ASSERT_EQUAL(stats_of(desc).timeouts, 1);
	finish(desc, ch, buf, "bto6");
	/* back to the defaults for whatever runs next in this process */
	CU_ASSERT_EQUAL(nvp_bdev_load_config_string(
				"{\"subsystems\":[{\"subsystem\":\"bdev\",\"config\":["
				"{\"method\":\"bdev_nvme_set_options\",\"params\":"
				"{\"timeout_us\":0,\"action_on_timeout\":\"none\"}}]}]}"),
			0);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "timeout_abort", test_timeout_abort },
		{ "timeout_reset", test_timeout_reset },
		{ "timeout_none", test_timeout_none },
		{ "close_outstanding", test_close_outstanding },
		{ "config", test_config },
	};

	return fx_main(argc, argv, "bdev_nvme_timeout", tests, NVP_COUNTOF(tests));
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/bdev/nvme/bdev_nvme.c without a controller: the scatter-list
 * cursor the driver walks for readv/writev, parameter checks naming the parameter,
 * detach of an unknown controller, the controller of a non-nvme bdev, a channel's
 * queue size against its hint, the timeout callback's marks (action_on_timeout), and
 * how a channel tells a qpair that failed alone from a poll that raced with a reset.
 */
#include "ut_bdev.h"

#include "bdev/nvme/bdev_nvme.c"

static void
test_sgl_cursor(void)
{
	static uint8_t mem[8192];
	struct {
		struct nvp_bdev_io io;
		struct nvme_io nio;
	} __attribute__((aligned(64))) x;
	struct iovec iov[3];
	void *addr;
	uint32_t len;

	memset(&x, 0, sizeof(x));
	iov[0].iov_base = mem;
	iov[0].iov_len = 1000;
	iov[1].iov_base = mem + 4096;
	iov[1].iov_len = 3000;
	iov[2].iov_base = mem + 7096;
	iov[2].iov_len = 96;
	x.io.iovs = iov;
	x.io.iovcnt = 3;
	nvme_reset_sgl(&x.io, 0);
	CU_ASSERT_EQUAL(nvme_next_sge(&x.io, &addr, &len), 0);
	CU_ASSERT_PTR_EQUAL(addr, mem);
	CU_ASSERT_EQUAL(len, 1000);
	CU_ASSERT_EQUAL(nvme_next_sge(&x.io, &addr, &len), 0);
	CU_ASSERT_PTR_EQUAL(addr, mem + 4096);
	/* rewind into the middle of the second element */
	nvme_reset_sgl(&x.io, 1500);
	CU_ASSERT_EQUAL(nvme_next_sge(&x.io, &addr, &len), 0);
	CU_ASSERT_PTR_EQUAL(addr, mem + 4096 + 500);
	CU_ASSERT_EQUAL(len, 2500);
	CU_ASSERT_EQUAL(nvme_next_sge(&x.io, &addr, &len), 0);
	CU_ASSERT_EQUAL(len, 96);
	CU_ASSERT_EQUAL(nvme_next_sge(&x.io, &addr, &len), -EINVAL);
}

static void
test_bad_input(void)
{
	struct nvp_bdev_nvme_opts o;

	nvp_bdev_nvme_opts_init(&o, sizeof(o));
	CU_ASSERT_PTR_NULL(o.ctrlr_opts);
	CU_ASSERT_EQUAL(nvp_bdev_nvme_attach("trtype:emu name:x", &o, NULL, 0, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "name") != NULL);
	o.name = "this-name-is-far-too-long-for-a-ctrlr";
	CU_ASSERT_EQUAL(nvp_bdev_nvme_attach("trtype:emu name:x", &o, NULL, 0, NULL), -EINVAL);
	o.name = "c0";
	CU_ASSERT_EQUAL(nvp_bdev_nvme_attach(NULL, &o, NULL, 0, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "trid") != NULL);
	CU_ASSERT_EQUAL(nvp_bdev_nvme_attach("trtype:emu name:x", NULL, NULL, 0, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "opts") != NULL);
	CU_ASSERT_EQUAL(nvp_bdev_nvme_attach("nonsense", &o, NULL, 0, NULL), -EINVAL);
	/* a queue size no controller takes: refused at attach, not at each channel create */
	o.io_queue_size = 1;
	CU_ASSERT_EQUAL(nvp_bdev_nvme_attach("trtype:emu name:x", &o, NULL, 0, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "bad parameter io_queue_size 1 ") != NULL);
	CU_ASSERT(strstr(g_ut_last_log, "2 .. 65536") != NULL);
	o.io_queue_size = 65537;
	CU_ASSERT_EQUAL(nvp_bdev_nvme_attach("trtype:emu name:x", &o, NULL, 0, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "bad parameter io_queue_size 65537 ") != NULL);
	o.io_queue_size = 100000;
	CU_ASSERT_EQUAL(nvp_bdev_nvme_attach("trtype:emu name:x", &o, NULL, 0, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "bad parameter io_queue_size 100000 ") != NULL);
	o.io_queue_size = 0;
	CU_ASSERT_EQUAL(nvp_bdev_nvme_detach("c0"), -ENODEV);
	CU_ASSERT_EQUAL(nvp_bdev_nvme_detach(NULL), -EINVAL);
	CU_ASSERT_PTR_NULL(nvp_bdev_nvme_get_ctrlr(ut_stub_register("s", 8, 0, 0)));
	CU_ASSERT_PTR_NULL(nvp_bdev_nvme_get_ctrlr(NULL));
	CU_ASSERT_EQUAL(nvp_bdev_fini(), 0);
}

/*
 * The write path's hint decoding without a device: hints 5-7 (the core refuses them
 * first; the module too) fail before the driver is called, hinted writes (plain and
 * vectored) go to the driver's _hint calls and one it refuses is not counted, and the
 * counters of live channels and of destroyed ones add up.
 */
static void
test_hint_mapping(void)
{
	static uint8_t mem[4096];
	struct {
		struct nvp_bdev_io io;
		struct nvme_io nio;
	} __attribute__((aligned(64))) x;
	struct nvme_ns_bdev nb;
	struct nvme_channel ch, gone;
	uint64_t sum[NVP_BDEV_NUM_HINTS];
	unsigned int h;

	memset(&x, 0, sizeof(x));
	memset(&nb, 0, sizeof(nb));
	memset(&ch, 0, sizeof(ch));
	pthread_mutex_init(&nb.ch_mutex, NULL);
	TAILQ_INIT(&nb.channels);
	ch.nb = &nb; /* nb.ns NULL: the driver's _hint calls refuse it with -EINVAL */
	x.io.type = NVP_BDEV_IO_WRITE;
	x.io.num_blocks = 1;
	x.io.internal.iov[0].iov_base = mem;
	x.io.internal.iov[0].iov_len = sizeof(mem);
	x.io.iovs = x.io.internal.iov;
	x.io.iovcnt = 1;
	for (h = 5; h <= 7; h++) {
		x.io.flags = h << NVP_BDEV_WRITE_HINT_SHIFT;
		CU_ASSERT_EQUAL(nvme_submit(&ch, &x.io), -EINVAL);
	}
	for (h = NVP_NVME_WRITE_HINT_SHORT; h < NVP_BDEV_NUM_HINTS; h++) {
		x.io.flags = nvp_bdev_write_flags(0, (enum nvp_nvme_write_hint)h);
		x.io.iovcnt = 1 + h % 2; /* the vectored calls too */
		CU_ASSERT_EQUAL(nvme_submit(&ch, &x.io), -EINVAL);
		CU_ASSERT_EQUAL(ch.hint_writes[h], 0);
	}
	/* folding: a destroyed channel's counts stay with the namespace */
	memset(&gone, 0, sizeof(gone));
	gone.hint_writes[NVP_NVME_WRITE_HINT_SHORT] = 3;
	ch.hint_writes[NVP_NVME_WRITE_HINT_SHORT] = 2;
	ch.hint_writes[NVP_NVME_WRITE_HINT_EXTREME] = 7;
	TAILQ_INSERT_TAIL(&nb.channels, &gone, link);
	TAILQ_INSERT_TAIL(&nb.channels, &ch, link);
	hint_writes_sum(&nb, sum);
	CU_ASSERT_EQUAL(sum[NVP_NVME_WRITE_HINT_SHORT], 5);
	channel_unlink(&nb, &gone);
	CU_ASSERT_EQUAL(nb.hint_writes[NVP_NVME_WRITE_HINT_SHORT], 3);
	hint_writes_sum(&nb, sum);
	CU_ASSERT_EQUAL(sum[NVP_NVME_WRITE_HINT_SHORT], 5);
	CU_ASSERT_EQUAL(sum[NVP_NVME_WRITE_HINT_EXTREME], 7);
	CU_ASSERT_EQUAL(sum[NVP_NVME_WRITE_HINT_NONE], 0);
	channel_unlink(&nb, &ch);
	CU_ASSERT_TRUE(TAILQ_EMPTY(&nb.channels));
	CU_ASSERT_EQUAL(nb.hint_writes[NVP_NVME_WRITE_HINT_EXTREME], 7);
	pthread_mutex_destroy(&nb.ch_mutex);
}

static void
test_hint_stats_bad_input(void)
{
	struct nvp_bdev_nvme_hint_stats st = { .info_size = sizeof(st) };

	CU_ASSERT_EQUAL(nvp_bdev_nvme_get_hint_stats(NULL, &st), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "not an nvme bdev") != NULL);
	CU_ASSERT_EQUAL(nvp_bdev_nvme_get_hint_stats(ut_stub_register("h", 8, 0, 0), &st), -EINVAL);
	CU_ASSERT_EQUAL(nvp_bdev_fini(), 0);
}

/*
 * A channel's queue size: the hint (module_queue_depth) raises the attach's size or the
 * default, never lowers it (a QD1 hint made a two-entry queue, 2-3.5x slower under
 * QEMU), and is fitted to what a controller takes (here none: 2 .. 65536).
 */
static void
test_channel_queue_size(void)
{
	CU_ASSERT_EQUAL(channel_queue_size(NULL, 256, 0), 256);
	CU_ASSERT_EQUAL(channel_queue_size(NULL, 256, 2), 256);
	CU_ASSERT_EQUAL(channel_queue_size(NULL, 256, 256), 256);
	CU_ASSERT_EQUAL(channel_queue_size(NULL, 256, 1025), 1025);
	CU_ASSERT_EQUAL(channel_queue_size(NULL, 64, 33), 64);
	CU_ASSERT_EQUAL(channel_queue_size(NULL, 64, 100000), 65536);
}

/*
 * The driver's timeout callback: every timeout counted; with action_on_timeout reset
 * (and a timeout_us of the module's) the channel of the qpair, and only it, is marked
 * for a reset after its poll, and the mark survives the delivery of what completed in
 * the same poll; none and abort mark nothing.
 */
static void
test_timeout_marks(void)
{
	struct nvme_ctrlr_entry c;
	struct nvme_ns_bdev nb;
	struct nvme_channel ch, other;
	struct nvp_nvme_qpair *qp = (struct nvp_nvme_qpair *)&ch; /* never dereferenced */
	struct nvp_nvme_qpair *qp2 = (struct nvp_nvme_qpair *)&other;

	memset(&c, 0, sizeof(c));
	memset(&nb, 0, sizeof(nb));
	memset(&ch, 0, sizeof(ch));
	memset(&other, 0, sizeof(other));
	snprintf(c.name, sizeof(c.name), "t0");
	TAILQ_INIT(&c.bdevs);
	TAILQ_INSERT_TAIL(&c.bdevs, &nb, link);
	nb.c = &c;
	pthread_mutex_init(&nb.ch_mutex, NULL);
	TAILQ_INIT(&nb.channels);
	ch.nb = &nb;
	ch.qpair = qp;
	other.nb = &nb;
	other.qpair = qp2;
	nvp_bdev_io_list_init(&ch.done);
	TAILQ_INSERT_TAIL(&nb.channels, &other, link);
	TAILQ_INSERT_TAIL(&nb.channels, &ch, link);

	c.timeout_us = 1000;
	c.timeout_action = NVP_BDEV_NVME_TIMEOUT_NONE;
	nvme_timeout_cb(&c, NULL, qp, 3);
	CU_ASSERT_EQUAL(c.timeouts, 1);
	CU_ASSERT_FALSE(ch.reset_wanted || ch.failed);
	c.timeout_action = NVP_BDEV_NVME_TIMEOUT_ABORT;
	nvme_timeout_cb(&c, NULL, qp, 3);
	CU_ASSERT_EQUAL(c.timeouts, 2);
	CU_ASSERT_FALSE(ch.reset_wanted || ch.failed);
	/* timeout_us 0: the controller's own timeout, the driver's Abort */
	c.timeout_us = 0;
	c.timeout_action = NVP_BDEV_NVME_TIMEOUT_RESET;
	nvme_timeout_cb(&c, NULL, qp, 3);
	CU_ASSERT_EQUAL(c.timeouts, 3);
	CU_ASSERT_FALSE(ch.reset_wanted || ch.failed);
	c.timeout_us = 1000;
	nvme_timeout_cb(&c, NULL, NULL, 3); /* the admin queue: not the channels' */
	CU_ASSERT_EQUAL(c.timeouts, 3);
	CU_ASSERT_FALSE(ch.reset_wanted || other.reset_wanted);
	nvme_timeout_cb(&c, NULL, qp, 3);
	CU_ASSERT_EQUAL(c.timeouts, 4);
	CU_ASSERT_TRUE(ch.reset_wanted);
	CU_ASSERT_TRUE(ch.failed); /* what the poll looks at */
	CU_ASSERT_FALSE(other.reset_wanted || other.failed);
	/* completions delivered in the same poll (the batch end) keep the poll's look */
	nvme_deliver(&ch, 0);
	CU_ASSERT_TRUE(ch.failed);
	CU_ASSERT_TRUE(ch.reset_wanted);
	pthread_mutex_destroy(&nb.ch_mutex);
}

/*
 * The reconnect options: refused at attach by SPDK's rules for fast_io_fail_timeout_sec;
 * for NVMe/TCP with a loss timeout the three go to the controller over the caller's
 * ctrlr_opts (whose other fields stay); other transports, no loss timeout, or a caller's
 * struct of a bad size (the connect names it) get the caller's options untouched.
 */
static void
test_reconnect_opts(void)
{
	struct nvp_nvme_transport_id tcp, emu; /* emu: any non-TCP transport */
	struct nvp_nvme_ctrlr_opts user, co;
	const struct nvp_nvme_ctrlr_opts *got;
	struct nvp_bdev_nvme_opts o;

	nvp_bdev_nvme_opts_init(&o, sizeof(o));
	o.name = "c0";
	o.ctrlr_loss_timeout_sec = 10;
	o.reconnect_delay_sec = 2;
	o.fast_io_fail_timeout_sec = 1; /* below the delay */
	CU_ASSERT_EQUAL(nvp_bdev_nvme_attach("trtype:emu name:x", &o, NULL, 0, NULL), -EINVAL);
	CU_ASSERT(strstr(g_ut_last_log, "fast_io_fail_timeout_sec") != NULL);
	o.fast_io_fail_timeout_sec = 11; /* past the loss timeout */
	CU_ASSERT_EQUAL(nvp_bdev_nvme_attach("trtype:emu name:x", &o, NULL, 0, NULL), -EINVAL);
	o.ctrlr_loss_timeout_sec = 0; /* without reconnect */
	o.reconnect_delay_sec = 0;
	o.fast_io_fail_timeout_sec = 5;
	CU_ASSERT_EQUAL(nvp_bdev_nvme_attach("trtype:emu name:x", &o, NULL, 0, NULL), -EINVAL);

	memset(&tcp, 0, sizeof(tcp));
	tcp.trtype = NVP_NVME_TRANSPORT_TCP;
	memset(&emu, 0, sizeof(emu));
	emu.trtype = NVP_NVME_TRANSPORT_PCIE;
	nvp_nvme_ctrlr_opts_init(&user, sizeof(user));
	user.admin_timeout_ms = 1234;
	o.ctrlr_loss_timeout_sec = -1;
	o.reconnect_delay_sec = 3;
	o.fast_io_fail_timeout_sec = 7;
	o.ctrlr_opts = &user;
	got = attach_ctrlr_opts(&o, &tcp, &co);
	CU_ASSERT_PTR_EQUAL(got, &co);
	CU_ASSERT_EQUAL(co.ctrlr_loss_timeout_sec, -1);
	CU_ASSERT_EQUAL(co.reconnect_delay_sec, 3);
	CU_ASSERT_EQUAL(co.fast_io_fail_timeout_sec, 7);
	CU_ASSERT_EQUAL(co.admin_timeout_ms, 1234);
	CU_ASSERT_EQUAL(co.opts_size, sizeof(co));
	CU_ASSERT_EQUAL(user.ctrlr_loss_timeout_sec, 0); /* the caller's own stay */
	o.ctrlr_opts = NULL;                             /* the defaults, with the three */
	got = attach_ctrlr_opts(&o, &tcp, &co);
	CU_ASSERT_PTR_EQUAL(got, &co);
	CU_ASSERT_EQUAL(co.reconnect_delay_sec, 3);
	CU_ASSERT_NOT_EQUAL(co.admin_timeout_ms, 0);
	CU_ASSERT_PTR_NULL(attach_ctrlr_opts(&o, &emu, &co));
	o.ctrlr_opts = &user;
	CU_ASSERT_PTR_EQUAL(attach_ctrlr_opts(&o, &emu, &co), &user);
	o.ctrlr_loss_timeout_sec = 0;
	CU_ASSERT_PTR_EQUAL(attach_ctrlr_opts(&o, &tcp, &co), &user);
	o.ctrlr_loss_timeout_sec = -1;
	user.opts_size = sizeof(user) + 8;
	CU_ASSERT_PTR_EQUAL(attach_ctrlr_opts(&o, &tcp, &co), &user);
}

/*
 * A qpair that failed alone (its controller did not): the first -ENXIO may be a poll that
 * raced with a reset, the second with no reset tried in between is not, and the channel
 * resets. A reset tried in between starts the count again.
 */
static void
test_enxio_again(void)
{
	struct nvme_channel ch;

	memset(&ch, 0, sizeof(ch));
	CU_ASSERT_FALSE(nvme_enxio_again(&ch, 0));
	CU_ASSERT_TRUE(nvme_enxio_again(&ch, 0));
	CU_ASSERT_TRUE(nvme_enxio_again(&ch, 0));  /* until a reset is tried */
	CU_ASSERT_FALSE(nvme_enxio_again(&ch, 1)); /* one was */
	CU_ASSERT_TRUE(nvme_enxio_again(&ch, 1));
	CU_ASSERT_FALSE(nvme_enxio_again(&ch, 3));
	CU_ASSERT_FALSE(nvme_enxio_again(&ch, 4));
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_sgl_cursor),         UT_TEST(test_bad_input),
		UT_TEST(test_hint_mapping),       UT_TEST(test_hint_stats_bad_input),
		UT_TEST(test_channel_queue_size), UT_TEST(test_timeout_marks),
		UT_TEST(test_reconnect_opts),     UT_TEST(test_enxio_again),
	};

	return ut_run("bdev_nvme", tests, sizeof(tests) / sizeof(tests[0]));
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The nvme module over NVMe/TCP (the test target on loopback, serving a software
 * controller): an I/O connection that the host closes on a malformed PDU (a wrong data
 * digest, a wrong header digest) fails that qpair alone, the controller staying up. Its
 * channel must bring it back (a reset) and go on: the failed request completes once with
 * an error the caller may retry, the next I/O succeeds, the data are right, and the bdev
 * stays. Every wait has a deadline; nothing is timed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bdev_fx.h"
#include "nvme_tcp_tgt.h"
#include "nvpoll/bdev_module.h"

#define BS 512u
#define NBLK 64u

struct tfx {
	struct fx_ctrlr backend;
	struct tcp_tgt *tgt;
	struct nvp_bdev_desc *desc;
	struct nvp_bdev_channel *ch;
	uint8_t *buf;
	unsigned int events;
};

static void
event_cb(enum nvp_bdev_event_type type, struct nvp_bdev *bdev, void *ctx)
{
	struct tfx *f = ctx;

	(void)type;
	(void)bdev;
	f->events++;
}

static int
tfx_open(struct tfx *f, const char *name)
{
	struct nvp_nvme_ctrlr_opts co;
	struct nvp_bdev_nvme_opts o;
	struct tcp_tgt_opts to;
	char trid[512], bdev[40];
	int rc;

	memset(f, 0, sizeof(*f));
	rc = fx_open(&f->backend, "size=8M,lba=512");
	if (rc != 0) {
		return rc;
	}
	tcp_tgt_opts_init(&to);
	rc = tcp_tgt_start(f->backend.ctrlr, &to, &f->tgt);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	tcp_tgt_trid(f->tgt, "hdgst:1 ddgst:1", trid, sizeof(trid));
	nvp_nvme_ctrlr_opts_init(&co, sizeof(co));
	co.admin_timeout_ms = 5000;
	nvp_bdev_nvme_opts_init(&o, sizeof(o));
	o.name = name;
	o.ctrlr_opts = &co;
	rc = nvp_bdev_nvme_attach(trid, &o, NULL, 0, NULL);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	snprintf(bdev, sizeof(bdev), "%sn1", name);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open(bdev, true, event_cb, f, &f->desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(f->desc, NULL, &f->ch), 0);
	f->buf = fx_dma_alloc(NBLK * BS);
	return 0;
}

static void
tfx_close(struct tfx *f)
{
	struct tcp_tgt_stats st;

	nvp_env_dma_free(f->buf);
	if (f->ch != NULL) {
		CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(f->ch), 0);
	}
	if (f->desc != NULL) {
		CU_ASSERT_EQUAL(nvp_bdev_close(f->desc), 0);
	}
	CU_ASSERT_EQUAL(nvp_bdev_fini(), 0);
	if (f->tgt != NULL) {
		tcp_tgt_get_stats(f->tgt, &st);
		CU_ASSERT_EQUAL(st.bad_host_pdus, 0);
		tcp_tgt_stop(f->tgt);
	}
	fx_close(&f->backend);
}

/*
 * @fault on the target's next answer to @op: that request fails (once, DNR clear); the
 * reads after it succeed within the deadline and hold what was written; no event.
 */
static void
qpair_fault_recovers(const char *name, enum tcp_tgt_fault fault, enum bfx_op op)
{
	struct nvme_cpl cpl;
	struct tfx f;
	uint64_t deadline;
	int rc;

	if (tfx_open(&f, name) != 0) {
		tfx_close(&f);
		return;
	}
	fx_pattern_fill(f.buf, 0, NBLK, BS, 7);
	CU_ASSERT_EQUAL(bfx_io(f.desc, f.ch, BFX_WRITE, f.buf, 0, NBLK, NULL), 0);
	tcp_tgt_set_fault(f.tgt, fault);
	memset(&cpl, 0, sizeof(cpl));
	rc = bfx_io(f.desc, f.ch, op, f.buf, 0, 8, &cpl);
	CU_ASSERT_EQUAL(rc, -EIO); /* the connection closed under it */
	if (rc == -EIO) {
		CU_ASSERT_EQUAL(cpl.status.dnr, 0);
	}
	/* the channel brings its qpair back: the next reads succeed (a few may fail while the
	 * reset runs; none may hang) */
	deadline = fx_now_us() + (uint64_t)FX_WAIT_MS * 1000u;
	do {
		memset(f.buf, 0, NBLK * BS);
		rc = bfx_io(f.desc, f.ch, BFX_READ, f.buf, 0, NBLK, NULL);
	} while (rc == -EIO && fx_now_us() < deadline);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT(fx_pattern_check(f.buf, 0, NBLK, BS, 7) < 0);
	CU_ASSERT_EQUAL(f.events, 0);
	CU_ASSERT_FALSE(nvp_bdev_is_removed(nvp_bdev_desc_get_bdev(f.desc)));
	/* and again: the module did not give the controller up after one reset */
	fx_pattern_fill(f.buf, 0, NBLK, BS, 8);
	CU_ASSERT_EQUAL(bfx_io(f.desc, f.ch, BFX_WRITE, f.buf, 0, NBLK, NULL), 0);
	memset(f.buf, 0, NBLK * BS);
	CU_ASSERT_EQUAL(bfx_io(f.desc, f.ch, BFX_READ, f.buf, 0, NBLK, NULL), 0);
	CU_ASSERT(fx_pattern_check(f.buf, 0, NBLK, BS, 8) < 0);
	tfx_close(&f);
}

static void
test_bad_data_digest(void)
{
	qpair_fault_recovers("btcp0", TCP_TGT_FAULT_BAD_DDGST, BFX_READ);
}

static void
test_bad_header_digest(void)
{
	qpair_fault_recovers("btcp1", TCP_TGT_FAULT_BAD_HDGST, BFX_WRITE);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "bad_data_digest", test_bad_data_digest },
		{ "bad_header_digest", test_bad_header_digest },
	};

	return fx_main(argc, argv, "bdev_nvme_tcp", tests, NVP_COUNTOF(tests));
}

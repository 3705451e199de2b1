/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Paths no other test reaches:
 *  - every DMA allocation of the PCIe transport failing in turn (injected through env),
 *    when a qpair is allocated and when a controller is attached: each failure is an
 *    error return (-ENOMEM, or a fallback that still works), nothing leaks (the ASan run
 *    checks), and the next try without a failure works;
 *  - nvp_nvme_probe() with a transport ID naming one function, and naming none.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

/* Allocate a qpair with DMA allocation @k failing; \return the allocations failed. */
static uint32_t
qpair_alloc_failing(struct fx_ctrlr *fx, uint32_t k, int *rc)
{
	struct nvp_nvme_qpair *qpair = NULL;
	uint32_t failed;

	nvp_env_dma_inject_failure(k, 1);
	*rc = nvp_nvme_ctrlr_alloc_io_qpair(fx->ctrlr, NULL, &qpair);
	failed = nvp_env_dma_get_injected_failures();
	nvp_env_dma_inject_failure(0, 0);
	if (*rc == 0) {
		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(qpair), 0);
	}
	return failed;
}

static void
test_qpair_dma_failures(void)
{
	struct fx_ctrlr fx;
	uint32_t k, points = 0, fallbacks = 0;
	uint8_t *buf;
	int rc = 0;

	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	for (k = 0; k < 64; k++) {
		if (qpair_alloc_failing(&fx, k, &rc) == 0) {
			CU_ASSERT_EQUAL(rc, 0); /* every allocation passed: success */
			break;
		}
		points++;
		CU_ASSERT(rc == -ENOMEM || rc == 0);
		fallbacks += rc == 0;
	}
	fprintf(stderr,
		"  qpair allocation: %u DMA allocation points failed in turn, %u "
		"fell back\n",
		points, fallbacks);
	CU_ASSERT(points >= 3); /* SQ, CQ, PRP list pages at least */
	CU_ASSERT(k < 64);
	/* The controller and its qpairs are unharmed. */
	buf = fx_dma_alloc(4096);
	fx_pattern_fill(buf, 3, 1, 512, 0x61);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, 3, 1, 0, NULL), 0);
	memset(buf, 0, 4096);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 3, 1, 0, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, 3, 1, 512, 0x61) < 0);
	nvp_env_dma_free(buf);
	fx_close(&fx);
}

/* Attach to an existing function with DMA allocation @k failing. */
static void
test_connect_dma_failures(void)
{
	struct nvp_nvme_transport_id trid;
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	struct nvp_emu_ctrlr *emu = NULL;
	char str[128];
	uint32_t k, points = 0;
	int rc = 0;

	FX_NEEDS_EMU("a software controller to attach to");
	CU_ASSERT_EQUAL_FATAL(fx_emu_create("name=dmafail0,size=4M", &emu), 0);
	snprintf(str, sizeof(str), "trtype:PCIe traddr:%s", nvp_emu_ctrlr_get_traddr(emu));
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_transport_id_parse(&trid, str), 0);
	for (k = 0; k < 64; k++) {
		nvp_env_dma_inject_failure(k, 1);
		rc = nvp_nvme_connect(&trid, NULL, &ctrlr);
		if (nvp_env_dma_get_injected_failures() == 0) {
			nvp_env_dma_inject_failure(0, 0);
			CU_ASSERT_EQUAL(rc, 0);
			break;
		}
		nvp_env_dma_inject_failure(0, 0);
		points++;
		CU_ASSERT_NOT_EQUAL(rc, 0);
		if (rc == 0) {
			nvp_nvme_detach(ctrlr);
		}
	}
	fprintf(stderr, "  attach: %u DMA allocation points failed in turn\n", points);
	CU_ASSERT(points >= 1);
	if (rc == 0) {
		CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(ctrlr));
		CU_ASSERT_EQUAL(nvp_nvme_detach(ctrlr), 0);
	}
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(emu), 0);
}

struct probe_ctx {
	unsigned int probed, attached;
	struct nvp_nvme_ctrlr *ctrlr;
	char traddr[NVP_NVME_TRADDR_MAX];
};

static bool
probe_cb(void *cb_ctx, const struct nvp_nvme_transport_id *trid, struct nvp_nvme_ctrlr_opts *opts)
{
	struct probe_ctx *ctx = cb_ctx;

	(void)opts;
	ctx->probed++;
	snprintf(ctx->traddr, sizeof(ctx->traddr), "%s", trid->traddr);
	return true;
}

static void
attach_cb(void *cb_ctx, const struct nvp_nvme_transport_id *trid, struct nvp_nvme_ctrlr *ctrlr,
	  const struct nvp_nvme_ctrlr_opts *opts)
{
	struct probe_ctx *ctx = cb_ctx;

	(void)trid;
	(void)opts;
	ctx->attached++;
	ctx->ctrlr = ctrlr;
}

/* Probe with a transport ID: only the function it names is offered and attached. */
static void
test_probe_with_trid(void)
{
	struct nvp_emu_ctrlr *a = NULL, *b = NULL;
	struct nvp_nvme_transport_id trid;
	struct probe_ctx ctx;
	char str[128];

	FX_NEEDS_EMU("software controllers to probe for");
	CU_ASSERT_EQUAL_FATAL(fx_emu_create("name=probetrid0,size=4M", &a), 0);
	CU_ASSERT_EQUAL_FATAL(fx_emu_create("name=probetrid1,size=4M", &b), 0);
	snprintf(str, sizeof(str), "trtype:PCIe traddr:%s", nvp_emu_ctrlr_get_traddr(b));
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_transport_id_parse(&trid, str), 0);
	memset(&ctx, 0, sizeof(ctx));
	CU_ASSERT_EQUAL(nvp_nvme_probe(&trid, &ctx, probe_cb, attach_cb), 0);
	CU_ASSERT_EQUAL(ctx.probed, 1);
	CU_ASSERT_EQUAL(ctx.attached, 1);
	CU_ASSERT_STRING_EQUAL(ctx.traddr, nvp_emu_ctrlr_get_traddr(b));
	if (ctx.ctrlr != NULL) {
		CU_ASSERT_STRING_EQUAL(nvp_nvme_ctrlr_get_transport_id(ctx.ctrlr)->traddr,
				       nvp_emu_ctrlr_get_traddr(b));
		/* Claimed: a second probe of the same trid finds nothing free. */
		memset(&ctx.probed, 0, sizeof(ctx.probed));
		CU_ASSERT_NOT_EQUAL(nvp_nvme_probe(&trid, &ctx, probe_cb, attach_cb), 0);
		CU_ASSERT_EQUAL(nvp_nvme_detach(ctx.ctrlr), 0);
	}
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(b), 0);
	/* The function named is gone: -ENODEV, the other one untouched. */
	memset(&ctx, 0, sizeof(ctx));
	CU_ASSERT_EQUAL(nvp_nvme_probe(&trid, &ctx, probe_cb, attach_cb), -ENODEV);
	CU_ASSERT_EQUAL(ctx.attached, 0);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(a), 0);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "qpair_dma_failures", test_qpair_dma_failures },
		{ "connect_dma_failures", test_connect_dma_failures },
		{ "probe_with_trid", test_probe_with_trid },
	};

	return fx_main(argc, argv, "nvme_coverage", tests, NVP_COUNTOF(tests));
}

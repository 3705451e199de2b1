/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/env_common/pci.c: the PCI function registry. The real-bus hook
 * (env_pci_enumerate_real) is stubbed here to offer one fake "real" function.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "env_common/pci.c"
#include "env_common/pci_addr.c"

#include "../../util/ut_main.h"

/* ---- stub of the real-bus hook ---- */

static struct nvp_pci_device g_real_dev;
static bool g_offer_real;
static int g_real_calls;

int
env_pci_enumerate_real(uint32_t class_id, int (*cb)(void *ctx, struct nvp_pci_device *dev),
		       void *ctx)
{
	g_real_calls++;
	if (g_offer_real && (class_id == 0 || class_id == g_real_dev.id.class_id)) {
		return cb(ctx, &g_real_dev);
	}
	return 0;
}

int
env_pci_skipped_real(uint32_t class_id,
		     void (*cb)(void *ctx, const struct nvp_pci_addr *addr, const char *reason),
		     void *ctx)
{
	(void)class_id;
	(void)cb;
	(void)ctx;
	return 0;
}

struct nvp_pci_device *
env_pci_device_find_real(const struct nvp_pci_addr *addr)
{
	if (g_offer_real && nvp_pci_addr_compare(addr, &g_real_dev.addr) == 0) {
		return &g_real_dev;
	}
	return NULL;
}

/* ---- a fake virtual function with a RAM configuration space ---- */

struct fake_fn {
	struct nvp_pci_device dev;
	uint8_t cfg[256];
	int cfg_reads;
	int cfg_writes;
};

static int
fake_map_bar(struct nvp_pci_device *dev, uint32_t bar, void **addr, uint64_t *pa, uint64_t *size)
{
	(void)dev;
	(void)bar;
	*addr = NULL;
	*pa = 0;
	*size = 0;
	return -ENOTSUP;
}

static int
fake_cfg_read(struct nvp_pci_device *dev, void *value, uint32_t len, uint32_t offset)
{
	struct fake_fn *f = dev->dev_ctx;

	if (offset + len > sizeof(f->cfg)) {
		return -EINVAL;
	}
	f->cfg_reads++;
	memcpy(value, &f->cfg[offset], len);
	return 0;
}

static int
fake_cfg_write(struct nvp_pci_device *dev, const void *value, uint32_t len, uint32_t offset)
{
	struct fake_fn *f = dev->dev_ctx;

	if (offset + len > sizeof(f->cfg)) {
		return -EINVAL;
	}
	f->cfg_writes++;
	memcpy(&f->cfg[offset], value, len);
	return 0;
}

static const struct nvp_pci_device_ops g_fake_ops = {
	.map_bar = fake_map_bar,
	.cfg_read = fake_cfg_read,
	.cfg_write = fake_cfg_write,
};

static void
fake_init(struct fake_fn *f, uint32_t domain, uint32_t class_id)
{
	memset(f, 0, sizeof(*f));
	f->dev.addr.domain = domain;
	f->dev.id.class_id = class_id;
	f->dev.id.vendor_id = 0x1b36;
	f->dev.numa_node = -1;
	f->dev.ops = &g_fake_ops;
	f->dev.dev_ctx = f;
}

static void
test_register_validation(void)
{
	struct nvp_pci_device_ops no_cfg = { .map_bar = fake_map_bar };
	struct fake_fn f;

	fake_init(&f, 0x20000, NVP_PCI_CLASS_NVME);
	CU_ASSERT_EQUAL(nvp_pci_device_register(NULL), -EINVAL);
	f.dev.ops = NULL;
	CU_ASSERT_EQUAL(nvp_pci_device_register(&f.dev), -EINVAL);
	f.dev.ops = &no_cfg;
	CU_ASSERT_EQUAL(nvp_pci_device_register(&f.dev), -EINVAL);
	CU_ASSERT_PTR_NULL(nvp_pci_device_find(&f.dev.addr));
}

static void
test_register_find_unregister(void)
{
	struct fake_fn a, b, c;

	fake_init(&a, 0x20000, NVP_PCI_CLASS_NVME);
	fake_init(&b, 0x20000, NVP_PCI_CLASS_NVME); /* same address as a */
	fake_init(&c, 0x20001, NVP_PCI_CLASS_NVME);
	a.dev.claimed = true; /* register resets env-owned fields */

	CU_ASSERT_EQUAL(nvp_pci_device_register(&a.dev), 0);
	CU_ASSERT_TRUE(a.dev.is_virtual);
	CU_ASSERT_FALSE(a.dev.claimed);
	CU_ASSERT_STRING_EQUAL(a.dev.driver, "virtual");
	CU_ASSERT_EQUAL(nvp_pci_device_register(&a.dev), -EEXIST);
	CU_ASSERT_EQUAL(nvp_pci_device_register(&b.dev), -EEXIST);
	nvp_strlcpy(c.dev.driver, "emu", sizeof(c.dev.driver));
	CU_ASSERT_EQUAL(nvp_pci_device_register(&c.dev), 0);
	CU_ASSERT_STRING_EQUAL(c.dev.driver, "emu"); /* kept when set */

	CU_ASSERT_PTR_EQUAL(nvp_pci_device_find(&a.dev.addr), &a.dev);
	CU_ASSERT_PTR_EQUAL(nvp_pci_device_find(&c.dev.addr), &c.dev);
	CU_ASSERT_PTR_NULL(nvp_pci_device_find(&(struct nvp_pci_addr){ .domain = 0x20002 }));
	CU_ASSERT_PTR_NULL(nvp_pci_device_find(NULL));

	CU_ASSERT_EQUAL(nvp_pci_device_unregister(&a.dev), 0);
	CU_ASSERT_EQUAL(nvp_pci_device_unregister(&a.dev), -ENOENT);
	CU_ASSERT_EQUAL(nvp_pci_device_unregister(&b.dev), -ENOENT);
	CU_ASSERT_EQUAL(nvp_pci_device_unregister(NULL), -ENOENT);
	CU_ASSERT_PTR_NULL(nvp_pci_device_find(&a.dev.addr));
	/* The address is free again. */
	CU_ASSERT_EQUAL(nvp_pci_device_register(&b.dev), 0);
	CU_ASSERT_EQUAL(nvp_pci_device_unregister(&b.dev), 0);
	CU_ASSERT_EQUAL(nvp_pci_device_unregister(&c.dev), 0);
	CU_ASSERT_TRUE(TAILQ_EMPTY(&g_pci_devices));
}

static void
test_claim_release(void)
{
	struct fake_fn a;

	fake_init(&a, 0x20010, NVP_PCI_CLASS_NVME);
	CU_ASSERT_EQUAL(nvp_pci_device_register(&a.dev), 0);
	CU_ASSERT_EQUAL(nvp_pci_device_claim(&a.dev), 0);
	CU_ASSERT_TRUE(a.dev.claimed);
	CU_ASSERT_EQUAL(nvp_pci_device_claim(&a.dev), -EBUSY);
	CU_ASSERT_EQUAL(nvp_pci_device_unregister(&a.dev), -EBUSY);
	CU_ASSERT_PTR_EQUAL(nvp_pci_device_find(&a.dev.addr), &a.dev);
	nvp_pci_device_release(&a.dev);
	CU_ASSERT_FALSE(a.dev.claimed);
	CU_ASSERT_EQUAL(nvp_pci_device_claim(&a.dev), 0);
	nvp_pci_device_release(&a.dev);
	nvp_pci_device_release(NULL);
	CU_ASSERT_EQUAL(nvp_pci_device_claim(NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_pci_device_unregister(&a.dev), 0);
}

static void
test_virtual_addr_alloc(void)
{
	struct nvp_pci_addr a1, a2, a3;
	struct fake_fn f;

	CU_ASSERT_EQUAL(nvp_pci_virtual_addr_alloc(&a1), 0);
	CU_ASSERT_EQUAL(nvp_pci_virtual_addr_alloc(&a2), 0);
	CU_ASSERT(a1.domain >= 0x10000);
	CU_ASSERT(a2.domain >= 0x10000);
	CU_ASSERT_EQUAL(a1.bus, 0);
	CU_ASSERT_EQUAL(a1.dev, 0);
	CU_ASSERT_EQUAL(a1.func, 0);
	CU_ASSERT_NOT_EQUAL(nvp_pci_addr_compare(&a1, &a2), 0);
	/* An address registered by hand is skipped. */
	fake_init(&f, a2.domain + 1, NVP_PCI_CLASS_NVME);
	CU_ASSERT_EQUAL(nvp_pci_device_register(&f.dev), 0);
	CU_ASSERT_EQUAL(nvp_pci_virtual_addr_alloc(&a3), 0);
	CU_ASSERT_EQUAL(a3.domain, a2.domain + 2);
	CU_ASSERT_EQUAL(nvp_pci_device_unregister(&f.dev), 0);
	CU_ASSERT_EQUAL(nvp_pci_virtual_addr_alloc(NULL), -EINVAL);
}

/* ---- enumeration ---- */

struct enum_ctx {
	int n;
	struct nvp_pci_device *seen[8];
	int stop_after; /* return 7 after this many, 0 = never */
	bool claim;
	bool unregister;
};

static int
enum_cb(void *arg, struct nvp_pci_device *dev)
{
	struct enum_ctx *ctx = arg;

	if (ctx->n < 8) {
		ctx->seen[ctx->n] = dev;
	}
	ctx->n++;
	if (ctx->claim && nvp_pci_device_claim(dev) != 0) {
		return -1; /* must not deadlock: the registry lock is recursive */
	}
	if (ctx->unregister && dev->is_virtual && nvp_pci_device_unregister(dev) != 0) {
		return -2;
	}
	return ctx->n == ctx->stop_after ? 7 : 0;
}

static void
test_enumerate(void)
{
	struct fake_fn a, b, c;
	struct enum_ctx ctx = { 0 };

	fake_init(&a, 0x20100, NVP_PCI_CLASS_NVME);
	fake_init(&b, 0x20101, 0x020000); /* a NIC */
	fake_init(&c, 0x20102, NVP_PCI_CLASS_NVME);
	memset(&g_real_dev, 0, sizeof(g_real_dev));
	g_real_dev.id.class_id = NVP_PCI_CLASS_NVME;
	CU_ASSERT_EQUAL(nvp_pci_device_register(&a.dev), 0);
	CU_ASSERT_EQUAL(nvp_pci_device_register(&b.dev), 0);
	CU_ASSERT_EQUAL(nvp_pci_device_register(&c.dev), 0);

	/* Virtual ones first, in registration order, then the real bus. */
	g_offer_real = true;
	g_real_calls = 0;
	CU_ASSERT_EQUAL(nvp_pci_enumerate(NVP_PCI_CLASS_NVME, enum_cb, &ctx), 0);
	CU_ASSERT_EQUAL(ctx.n, 3);
	CU_ASSERT_PTR_EQUAL(ctx.seen[0], &a.dev);
	CU_ASSERT_PTR_EQUAL(ctx.seen[1], &c.dev);
	CU_ASSERT_PTR_EQUAL(ctx.seen[2], &g_real_dev);
	CU_ASSERT_EQUAL(g_real_calls, 1);

	memset(&ctx, 0, sizeof(ctx));
	CU_ASSERT_EQUAL(nvp_pci_enumerate(0, enum_cb, &ctx), 0);
	CU_ASSERT_EQUAL(ctx.n, 4);
	CU_ASSERT_PTR_EQUAL(ctx.seen[1], &b.dev);

	/* A non-zero return stops the walk, before the real bus. */
	memset(&ctx, 0, sizeof(ctx));
	ctx.stop_after = 1;
	g_real_calls = 0;
	CU_ASSERT_EQUAL(nvp_pci_enumerate(0, enum_cb, &ctx), 7);
	CU_ASSERT_EQUAL(ctx.n, 1);
	CU_ASSERT_EQUAL(g_real_calls, 0);
	CU_ASSERT_EQUAL(nvp_pci_enumerate(0, NULL, NULL), -EINVAL);

	/* The callback may claim (takes the registry lock again). */
	g_offer_real = false;
	memset(&ctx, 0, sizeof(ctx));
	ctx.claim = true;
	CU_ASSERT_EQUAL(nvp_pci_enumerate(NVP_PCI_CLASS_NVME, enum_cb, &ctx), 0);
	CU_ASSERT_TRUE(a.dev.claimed && c.dev.claimed && !b.dev.claimed);
	nvp_pci_device_release(&a.dev);
	nvp_pci_device_release(&c.dev);

	/* ... and may unregister the function it was handed. */
	memset(&ctx, 0, sizeof(ctx));
	ctx.unregister = true;
	CU_ASSERT_EQUAL(nvp_pci_enumerate(0, enum_cb, &ctx), 0);
	CU_ASSERT_EQUAL(ctx.n, 3);
	CU_ASSERT_TRUE(TAILQ_EMPTY(&g_pci_devices));
}

static void
test_cfg_helpers(void)
{
	struct fake_fn f;
	uint16_t v16 = 0;
	uint32_t v32 = 0;

	fake_init(&f, 0x20200, NVP_PCI_CLASS_NVME);
	/* Configuration space is little endian. */
	f.cfg[0] = 0x36;
	f.cfg[1] = 0x1b;
	f.cfg[8] = 0x02;
	f.cfg[9] = 0x02;
	f.cfg[10] = 0x08;
	f.cfg[11] = 0x01;
	CU_ASSERT_EQUAL(nvp_pci_cfg_read16(&f.dev, &v16, NVP_PCI_CFG_VENDOR_ID), 0);
	CU_ASSERT_EQUAL(v16, 0x1b36);
	CU_ASSERT_EQUAL(nvp_pci_cfg_read32(&f.dev, &v32, NVP_PCI_CFG_CLASS_REV), 0);
	CU_ASSERT_EQUAL(v32 >> 8, NVP_PCI_CLASS_NVME);
	CU_ASSERT_EQUAL(v32 & 0xff, 2);

	CU_ASSERT_EQUAL(nvp_pci_cfg_write16(&f.dev, NVP_PCI_COMMAND_MEMORY | NVP_PCI_COMMAND_MASTER,
					    NVP_PCI_CFG_COMMAND),
			0);
	CU_ASSERT_EQUAL(f.cfg[4], 0x06);
	CU_ASSERT_EQUAL(f.cfg[5], 0x00);
	CU_ASSERT_EQUAL(nvp_pci_cfg_write32(&f.dev, 0xdeadbeef, NVP_PCI_CFG_BAR0), 0);
	CU_ASSERT_EQUAL(f.cfg[0x10], 0xef);
	CU_ASSERT_EQUAL(f.cfg[0x13], 0xde);
	CU_ASSERT_EQUAL(nvp_pci_cfg_read32(&f.dev, &v32, NVP_PCI_CFG_BAR0), 0);
	CU_ASSERT_EQUAL(v32, 0xdeadbeef);

	/* Misaligned, out of range, missing device or ops. */
	f.cfg_reads = 0;
	CU_ASSERT_EQUAL(nvp_pci_cfg_read16(&f.dev, &v16, 1), -EINVAL);
	CU_ASSERT_EQUAL(nvp_pci_cfg_read32(&f.dev, &v32, 2), -EINVAL);
	CU_ASSERT_EQUAL(nvp_pci_cfg_write32(&f.dev, 0, 6), -EINVAL);
	CU_ASSERT_EQUAL(f.cfg_reads, 0);
	CU_ASSERT_EQUAL(nvp_pci_cfg_read32(&f.dev, &v32, 256), -EINVAL); /* from the ops */
	CU_ASSERT_EQUAL(nvp_pci_cfg_read16(NULL, &v16, 0), -EINVAL);
	CU_ASSERT_EQUAL(nvp_pci_cfg_read16(&f.dev, NULL, 0), -EINVAL);
	f.dev.ops = NULL;
	CU_ASSERT_EQUAL(nvp_pci_cfg_write16(&f.dev, 1, 4), -EINVAL);
}

/* Device models register from their own threads: no lost or duplicated entries. */
#define REG_THREADS 4
#define REG_PER_THREAD 50

static struct fake_fn g_thread_fns[REG_THREADS][REG_PER_THREAD];
static int g_thread_errors;

static void *
register_thread(void *arg)
{
	struct fake_fn *fns = arg;
	int i, errors = 0;

	for (i = 0; i < REG_PER_THREAD; i++) {
		struct nvp_pci_addr addr;

		if (nvp_pci_virtual_addr_alloc(&addr) != 0) {
			errors++;
			continue;
		}
		fake_init(&fns[i], addr.domain, NVP_PCI_CLASS_NVME);
		if (nvp_pci_device_register(&fns[i].dev) != 0) {
			errors++;
		}
	}
	__atomic_add_fetch(&g_thread_errors, errors, __ATOMIC_RELAXED);
	return NULL;
}

static int
count_cb(void *ctx, struct nvp_pci_device *dev)
{
	(void)dev;
	(*(int *)ctx)++;
	return 0;
}

static void
test_concurrent_register(void)
{
	pthread_t t[REG_THREADS];
	int i, j, n = 0;

	for (i = 0; i < REG_THREADS; i++) {
		pthread_create(&t[i], NULL, register_thread, g_thread_fns[i]);
	}
	for (i = 0; i < REG_THREADS; i++) {
		pthread_join(t[i], NULL);
	}
	CU_ASSERT_EQUAL(g_thread_errors, 0);
	CU_ASSERT_EQUAL(nvp_pci_enumerate(0, count_cb, &n), 0);
	CU_ASSERT_EQUAL(n, REG_THREADS * REG_PER_THREAD);
	for (i = 0; i < REG_THREADS; i++) {
		for (j = 0; j < REG_PER_THREAD; j++) {
			CU_ASSERT_EQUAL(nvp_pci_device_unregister(&g_thread_fns[i][j].dev), 0);
		}
	}
	CU_ASSERT_TRUE(TAILQ_EMPTY(&g_pci_devices));
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_register_validation), UT_TEST(test_register_find_unregister),
		UT_TEST(test_claim_release),       UT_TEST(test_virtual_addr_alloc),
		UT_TEST(test_enumerate),           UT_TEST(test_cfg_helpers),
		UT_TEST(test_concurrent_register),
	};

	/* The registry logs its refusals; keep the test output to the results. */
	nvp_log_set_level(NVP_LOG_DISABLED);
	return ut_run("pci", tests, NVP_COUNTOF(tests));
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/emu/emu.c: the public API (create/destroy/find/stats/faults), PCI
 * registration, the "emu" virtual device provider, and a self test with the real
 * controller thread: a minimal driver that finds the function in env, maps BAR0, enables
 * the controller, identifies it, creates a queue pair and moves data.
 */
#include "emu_ut_helpers.h"

#include <sys/stat.h>
#include <unistd.h>

static struct nvp_emu_ctrlr *
create(const char *optstr)
{
	struct nvp_emu_opts o;
	struct nvp_emu_ctrlr *c = NULL;
	char err[256];

	nvp_emu_opts_init(&o, sizeof(o));
	if (nvp_emu_opts_parse(&o, optstr, err, sizeof(err)) != 0) {
		return NULL;
	}
	if (nvp_emu_ctrlr_create(&o, &c) != 0) {
		return NULL;
	}
	return c;
}

static void
test_create_find_destroy(void)
{
	struct nvp_emu_ctrlr *c = create("nn=2 size=1M"), *d;
	struct nvp_pci_device *dev;
	struct nvp_pci_addr addr;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_STRING_EQUAL(nvp_emu_ctrlr_get_name(c), "emu0");
	CU_ASSERT_PTR_EQUAL(nvp_emu_ctrlr_find("emu0"), c);
	d = create("size=1M");
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_STRING_EQUAL(nvp_emu_ctrlr_get_name(d), "emu1");
	addr = *nvp_emu_ctrlr_get_pci_addr(c);
	CU_ASSERT(addr.domain >= 0x10000);
	CU_ASSERT_EQUAL(nvp_pci_addr_parse(&addr, nvp_emu_ctrlr_get_traddr(c)), 0);
	CU_ASSERT_EQUAL(nvp_pci_addr_compare(&addr, nvp_emu_ctrlr_get_pci_addr(c)), 0);
	dev = nvp_pci_device_find(&addr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
	CU_ASSERT_EQUAL(dev->id.class_id, NVP_PCI_CLASS_NVME);
	CU_ASSERT_EQUAL(dev->id.vendor_id, EMU_PCI_VID);
	CU_ASSERT(dev->is_virtual);
	CU_ASSERT_STRING_EQUAL(dev->driver, "virtual");
	/* claimed: cannot be destroyed */
	CU_ASSERT_EQUAL(nvp_pci_device_claim(dev), 0);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(c), -EBUSY);
	CU_ASSERT_PTR_EQUAL(nvp_emu_ctrlr_find("emu0"), c);
	nvp_pci_device_release(dev);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(c), 0);
	CU_ASSERT_PTR_NULL(nvp_emu_ctrlr_find("emu0"));
	CU_ASSERT_PTR_NULL(nvp_pci_device_find(&addr));
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(d), 0);
	CU_ASSERT_PTR_NULL(nvp_emu_ctrlr_find(NULL));
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(NULL), -EINVAL);
}

static void
test_create_errors(void)
{
	struct nvp_emu_opts o;
	struct nvp_emu_ctrlr *c, *c2;

	c = create("name=dup size=1M");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	nvp_emu_opts_init(&o, sizeof(o));
	nvp_strlcpy(o.name, "dup", sizeof(o.name));
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_create(&o, &c2), -EEXIST);
	nvp_emu_opts_init(&o, sizeof(o));
	o.ns_size = 1000; /* not a multiple of 4 KiB */
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_create(&o, &c2), -EINVAL);
	nvp_emu_opts_init(&o, sizeof(o));
	o.lba_size[0] = 1024;
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_create(&o, &c2), -EINVAL);
	nvp_emu_opts_init(&o, sizeof(o));
	o.backend = NVP_EMU_BACKEND_FILE;
	nvp_strlcpy(o.backend_path, "/nonexistent/dir/x", sizeof(o.backend_path));
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_create(&o, &c2), -EIO);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_create(NULL, &c2), -EINVAL);
	/* an older, smaller options struct: the rest are defaults */
	nvp_emu_opts_init(&o, sizeof(o));
	o.opts_size = offsetof(struct nvp_emu_opts, lba_size);
	o.ns_size = 1 << 20;
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_create(&o, &c2), 0);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(c2), 0);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(NULL, NVP_EMU_FAULT_CFS, 1, 0, 0), -EINVAL);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(c), 0);
}

static void
test_vdev_provider(void)
{
	struct nvp_env_vdev_provider *p = nvp_env_vdev_provider_find("EMU");
	struct nvp_pci_addr addr;
	struct nvp_emu_ctrlr *c;
	char err[256];

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(p->create("v0", "nn=2 lba:4096 size=2M", &addr, err, sizeof(err)), 0);
	c = nvp_emu_ctrlr_find("v0");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(emu_ctrlr_from_pub(c)->nn, 2);
	CU_ASSERT_EQUAL(emu_ctrlr_from_pub(c)->ns[1].lba_shift, 12);
	CU_ASSERT_EQUAL(nvp_pci_addr_compare(&addr, nvp_emu_ctrlr_get_pci_addr(c)), 0);
	CU_ASSERT_EQUAL(p->create("v0", "", &addr, err, sizeof(err)), -EEXIST);
	CU_ASSERT(strstr(err, "v0") != NULL);
	CU_ASSERT_EQUAL(p->create("v1", "nn=99", &addr, err, sizeof(err)), -EINVAL);
	CU_ASSERT(strstr(err, "nn") != NULL);
	CU_ASSERT_EQUAL(p->create("v1", "bogus=1", &addr, err, sizeof(err)), -EINVAL);
	CU_ASSERT(strstr(err, "bogus") != NULL);
	CU_ASSERT_EQUAL(p->create("bad name!", "", &addr, err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(p->destroy(nvp_emu_ctrlr_get_pci_addr(c)), 0);
	CU_ASSERT_PTR_NULL(nvp_emu_ctrlr_find("v0"));
	CU_ASSERT_EQUAL(p->destroy(&addr), -ENOENT);
}

/* Attach as a driver would: find the function, map BAR0, set bus mastering. */
static int
attach(struct ut_host *h, struct nvp_emu_ctrlr *pub)
{
	struct nvp_pci_device *dev = nvp_pci_device_find(nvp_emu_ctrlr_get_pci_addr(pub));
	uint64_t phys, size;
	uint16_t cmd;
	void *bar;

	memset(h, 0, sizeof(*h));
	h->threaded = true;
	h->c = emu_ctrlr_from_pub(pub);
	if (dev == NULL || nvp_pci_device_claim(dev) != 0 ||
	    dev->ops->map_bar(dev, 0, &bar, &phys, &size) != 0 || bar != h->c->regs) {
		return -1;
	}
	nvp_pci_cfg_read16(dev, &cmd, NVP_PCI_CFG_COMMAND);
	nvp_pci_cfg_write16(dev, cmd | NVP_PCI_COMMAND_MASTER | NVP_PCI_COMMAND_MEMORY,
			    NVP_PCI_CFG_COMMAND);
	return ut_host_enable(h, 32);
}

static void
detach(struct ut_host *h)
{
	struct nvp_pci_device *dev = &h->c->pci;
	union nvme_cc_register cc = { .raw = nvp_mmio_read4(&h->c->regs->cc.raw) };
	uint64_t end = nvp_env_get_ticks() + nvp_env_get_ticks_hz();

	cc.bits.shn = NVME_SHN_NORMAL;
	nvp_mmio_write4(&h->c->regs->cc.raw, cc.raw);
	while (((ut_csts(h->c) >> 2) & 3u) != NVME_SHST_COMPLETE && nvp_env_get_ticks() < end) {
		nvp_env_delay_us(10);
	}
	CU_ASSERT_EQUAL((ut_csts(h->c) >> 2) & 3u, NVME_SHST_COMPLETE);
	nvp_pci_device_release(dev);
	for (int i = 0; i < UT_MAX_Q; i++) {
		ut_q_free(&h->q[i]);
	}
}

static uint16_t
rw(struct ut_host *h, uint8_t opc, uint64_t slba, uint32_t nlb, void *buf, uint64_t *list)
{
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;
	uint64_t prp1, prp2;

	ut_prps(buf, (uint64_t)nlb * 512, list, &prp1, &prp2);
	ut_rw_cmd(&cmd, opc, 1, slba, nlb, prp1, prp2);
	if (ut_cmd(h, 1, &cmd, &cpl) != 0) {
		return 0xffff;
	}
	return ut_st(&cpl);
}

static void
test_threaded_self_test(void)
{
	struct nvp_emu_ctrlr *pub = create("size=4M read_us=20 write_us=20");
	struct ut_host h;
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;
	struct nvp_emu_stats st = { .info_size = sizeof(st) };
	uint8_t *wbuf = nvp_env_dma_zmalloc(65536, 4096, NULL);
	uint8_t *rbuf = nvp_env_dma_zmalloc(65536, 4096, NULL);
	uint64_t *list = nvp_env_dma_zmalloc(4096, 4096, NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(pub);
	CU_ASSERT_EQUAL_FATAL(attach(&h, pub), 0);
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_OPC_IDENTIFY;
	cmd.cdw10 = NVME_IDENTIFY_CTRLR;
	cmd.dptr.prp.prp1 = nvp_env_vtophys(rbuf, NULL);
	CU_ASSERT_EQUAL(ut_admin_st(&h, &cmd, &cpl), 0);
	CU_ASSERT(memcmp(((struct nvme_ctrlr_data *)rbuf)->mn, EMU_MODEL, 8) == 0);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 32), 0);
	for (uint32_t i = 0; i < 65536; i++) {
		wbuf[i] = (uint8_t)(i * 3 + (i >> 12));
	}
	for (uint32_t i = 0; i < 8; i++) {
		CU_ASSERT_EQUAL(rw(&h, NVME_OPC_WRITE, i * 128, 128, wbuf, list), 0);
		memset(rbuf, 0, 65536);
		CU_ASSERT_EQUAL(rw(&h, NVME_OPC_READ, i * 128, 128, rbuf, list), 0);
		CU_ASSERT(memcmp(wbuf, rbuf, 65536) == 0);
	}
	/* the controller thread goes idle and sleeps, then wakes for new work */
	nvp_env_delay_us(5000);
	CU_ASSERT_EQUAL(rw(&h, NVME_OPC_READ, 0, 8, rbuf, list), 0);
	nvp_emu_ctrlr_get_stats(pub, &st);
	CU_ASSERT_EQUAL(st.write_cmds, 8);
	CU_ASSERT_EQUAL(st.read_cmds, 9);
	CU_ASSERT_EQUAL(st.bytes_written, 8 * 65536);
	detach(&h);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(pub), 0);
	nvp_env_dma_free(wbuf);
	nvp_env_dma_free(rbuf);
	nvp_env_dma_free(list);
}

static void
smart(struct ut_host *h, void *buf)
{
	struct nvme_cmd cmd = { .opc = NVME_OPC_GET_LOG_PAGE,
				.nsid = 0xffffffff,
				.cdw10 = NVME_GET_LOG_CDW10(NVME_LOG_HEALTH_INFORMATION, 128) };

	cmd.dptr.prp.prp1 = nvp_env_vtophys(buf, NULL);
	CU_ASSERT_EQUAL(ut_admin_st(h, &cmd, NULL), 0);
}

/* The file backend keeps data (and SMART counters) across destroy + create on a path. */
static void
test_file_backend_survives_restart(void)
{
	char dir[] = "/tmp/emu_ut_XXXXXX", opts[128], path[160];
	struct nvp_emu_ctrlr *pub;
	struct ut_host h;
	uint8_t *buf = nvp_env_dma_zmalloc(8192, 4096, NULL);
	uint64_t *list = nvp_env_dma_zmalloc(4096, 4096, NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(opts, sizeof(opts), "name=f0 size=1M nn=2 backend=file:%s/disk", dir);
	pub = create(opts);
	CU_ASSERT_PTR_NOT_NULL_FATAL(pub);
	CU_ASSERT_EQUAL_FATAL(attach(&h, pub), 0);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 8), 0);
	memcpy(buf, "persistent data", 16);
	CU_ASSERT_EQUAL(rw(&h, NVME_OPC_WRITE, 77, 16, buf, list), 0);
	detach(&h);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(pub), 0);

	pub = create(opts);
	CU_ASSERT_PTR_NOT_NULL_FATAL(pub);
	CU_ASSERT_EQUAL_FATAL(attach(&h, pub), 0);
	CU_ASSERT_EQUAL_FATAL(ut_create_qpair(&h, 1, 8), 0);
	memset(buf, 0, 8192);
	CU_ASSERT_EQUAL(rw(&h, NVME_OPC_READ, 77, 16, buf, list), 0);
	CU_ASSERT_STRING_EQUAL((char *)buf, "persistent data");
	smart(&h, buf);
	CU_ASSERT_EQUAL(((struct nvme_health_information_page *)buf)->power_cycles[0], 2);
	CU_ASSERT_EQUAL(((struct nvme_health_information_page *)buf)->host_write_commands[0], 1);
	CU_ASSERT_EQUAL(((struct nvme_health_information_page *)buf)->unsafe_shutdowns[0], 0);
	/* power off without a shutdown notification: an unsafe shutdown */
	nvp_pci_device_release(&h.c->pci);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(pub), 0);
	for (int i = 0; i < UT_MAX_Q; i++) {
		ut_q_free(&h.q[i]);
	}
	pub = create(opts);
	CU_ASSERT_PTR_NOT_NULL_FATAL(pub);
	CU_ASSERT_EQUAL_FATAL(attach(&h, pub), 0);
	smart(&h, buf);
	CU_ASSERT_EQUAL(((struct nvme_health_information_page *)buf)->power_cycles[0], 3);
	CU_ASSERT_EQUAL(((struct nvme_health_information_page *)buf)->unsafe_shutdowns[0], 1);
	detach(&h);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(pub), 0);
	snprintf(path, sizeof(path), "%s/disk.smart", dir);
	CU_ASSERT_EQUAL(unlink(path), 0);
	for (int ns = 1; ns <= 2; ns++) {
		struct stat sb;

		snprintf(path, sizeof(path), "%s/disk.ns%d", dir, ns);
		CU_ASSERT_EQUAL(stat(path, &sb), 0);
		CU_ASSERT_EQUAL(sb.st_size, 1 << 20);
		unlink(path);
	}
	rmdir(dir);
	nvp_env_dma_free(buf);
	nvp_env_dma_free(list);
}

static void
test_fault_from_options(void)
{
	struct nvp_emu_ctrlr *pub = create("fault=cfs size=1M");
	struct ut_host h;

	CU_ASSERT_PTR_NOT_NULL_FATAL(pub);
	CU_ASSERT_NOT_EQUAL(attach(&h, pub), 0); /* never ready */
	CU_ASSERT_EQUAL(ut_csts(h.c) & 2u, 2u);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(pub, NVP_EMU_FAULT_CFS, 0, 0, 0), 0);
	for (int i = 0; i < 1000 && (ut_csts(h.c) & 2u) != 0; i++) {
		nvp_env_delay_us(1000); /* the thread applies it at its next poll */
	}
	CU_ASSERT_EQUAL(ut_csts(h.c) & 2u, 0);
	/* No longer failed, it becomes ready at one of its next polls. */
	for (int i = 0; i < 1000 && (ut_csts(h.c) & 1u) == 0; i++) {
		nvp_env_delay_us(1000);
	}
	CU_ASSERT(ut_csts(h.c) & 1u);
	nvp_pci_device_release(&h.c->pci);
	for (int i = 0; i < UT_MAX_Q; i++) {
		ut_q_free(&h.q[i]);
	}
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(pub), 0);
}

/*
 * nvp_emu_ctrlr_get_stats() hands over every counter (the power-loss ones were left out),
 * leaves the caller's info_size alone and refuses one too small.
 */
static void
test_get_stats_every_counter(void)
{
	struct emu_ctrlr *c = ut_ctrlr_new("");
	struct nvp_emu_stats st = { .info_size = sizeof(st) };
	uint64_t v[sizeof(st) / sizeof(uint64_t)];

	_Static_assert(sizeof(st) % sizeof(uint64_t) == 0, "nvp_emu_stats: uint64_t counters");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	for (uint32_t i = 0; i < NVP_COUNTOF(v); i++) {
		v[i] = 1000 + i;
	}
	memcpy(&c->stats, v, sizeof(v));
	memset(&st, 0, sizeof(st));
	st.info_size = sizeof(st);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_get_stats((const struct nvp_emu_ctrlr *)c, &st), 0);
	CU_ASSERT_EQUAL(st.info_size, sizeof(st));
	CU_ASSERT(memcmp((char *)&st + sizeof(st.info_size), (char *)v + sizeof(st.info_size),
			 sizeof(v) - sizeof(st.info_size)) == 0);
	st.info_size = sizeof(st) - 1;
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_get_stats((const struct nvp_emu_ctrlr *)c, &st), -EINVAL);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_get_stats(NULL, &st), -EINVAL);
	CU_ASSERT_EQUAL(st.power_cuts, c->stats.power_cuts);
	CU_ASSERT_EQUAL(st.plm_torn_writes, c->stats.plm_torn_writes);
	emu_ctrlr_free(c);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_create_find_destroy),
		UT_TEST(test_create_errors),
		UT_TEST(test_vdev_provider),
		UT_TEST(test_threaded_self_test),
		UT_TEST(test_file_backend_survives_restart),
		UT_TEST(test_fault_from_options),
		UT_TEST(test_get_stats_every_counter),
	};

	return ut_run("emu", tests, NVP_COUNTOF(tests));
}

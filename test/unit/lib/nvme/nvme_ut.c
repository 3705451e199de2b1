/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the driver's front door (nvme.c): transport ID parsing (good and bad)
 * and formatting, option defaults, status strings for every status code of
 * nvme_spec.h, and connect/probe/detach over env's real PCI registry with a fake
 * virtual device provider and a fake PCIe transport, which finds its functions (and
 * scans) with the real nvme_pcie_probe.c.
 */
#include "nvme/nvme.c"
#include "nvme/nvme_connect.c"
#include "nvme/nvme_pcie_probe.c"
#include "nvme/nvme_fiber.c"

/* No reconnect here: nothing for a detach or a qpair free to finish. */
void
nvme_ctrlr_reconnect_finish(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
}

#include "ut_nvme.h"

/* ---- fake PCIe transport: claims the function, nothing more ---- */

static uint32_t g_constructs, g_destructs;

struct fake_ctrlr {
	struct nvp_nvme_ctrlr ctrlr; /* first */
	struct nvp_pci_device *dev;
	struct nvme_pcie_vdev vdev;
};

static int
fake_ctrlr_construct(const struct nvp_nvme_transport_id *trid,
		     const struct nvp_nvme_ctrlr_opts *opts, struct nvp_nvme_ctrlr **out)
{
	struct nvp_pci_device *dev;
	struct nvme_pcie_vdev vdev;
	struct fake_ctrlr *fc;
	int rc = nvme_pcie_device_get(trid, &dev, &vdev);

	if (rc != 0) {
		return rc;
	}
	rc = nvp_pci_device_claim(dev);
	if (rc != 0) {
		nvme_pcie_device_put(&vdev);
		return rc;
	}
	fc = calloc(1, sizeof(*fc));
	fc->dev = dev;
	fc->vdev = vdev;
	fc->ctrlr.trid = *trid;
	fc->ctrlr.opts = *opts;
	fc->ctrlr.transport = &g_nvme_pcie_transport;
	nvp_strlcpy(fc->ctrlr.name, trid->name, sizeof(fc->ctrlr.name));
	g_constructs++;
	*out = &fc->ctrlr;
	return 0;
}

static struct nvp_pci_device *g_devs[8];

static void
fake_ctrlr_destruct(struct nvp_nvme_ctrlr *ctrlr)
{
	struct fake_ctrlr *fc = (struct fake_ctrlr *)ctrlr;

	nvp_pci_device_release(fc->dev);
	nvme_pcie_device_put(&fc->vdev);
	g_destructs++;
	free(fc);
}

const struct nvme_transport_ops g_nvme_pcie_transport = {
	.name = "PCIe",
	.type = NVP_NVME_TRANSPORT_PCIE,
	.scan = nvme_pcie_scan,
	.trid_check = nvme_pcie_trid_check,
	.ctrlr_construct = fake_ctrlr_construct,
	.ctrlr_destruct = fake_ctrlr_destruct,
};

/* ---- stubs of the neighbours ---- */

static int g_init_rc;
static uint32_t g_shutdowns, g_admin_aborts, g_qpair_frees;

int
nvme_ctrlr_init(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	return g_init_rc;
}

void
nvme_ctrlr_free_io_qpairs(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	g_qpair_frees++;
}

void
nvme_ctrlr_lock(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
}

void
nvme_ctrlr_unlock(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
}

int
nvme_ctrlr_shutdown(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
	g_shutdowns++;
	return 0;
}

void
nvme_qpair_abort_all(struct nvp_nvme_qpair *qpair, uint8_t sct, uint8_t sc, bool dnr)
{
	(void)qpair;
	(void)sct;
	(void)sc;
	CU_ASSERT_TRUE(dnr); /* detach: the application ends them */
	g_admin_aborts++;
}

/* ---- a fake virtual device provider "utdev" ---- */

static int
fake_map_bar(struct nvp_pci_device *dev, uint32_t bar, void **addr, uint64_t *phys, uint64_t *size)
{
	(void)dev;
	(void)bar;
	(void)addr;
	(void)phys;
	(void)size;
	return -ENOTSUP;
}

static int
fake_cfg(struct nvp_pci_device *dev, void *value, uint32_t len, uint32_t offset)
{
	(void)dev;
	(void)offset;
	memset(value, 0, len);
	return 0;
}

static int
fake_cfg_write(struct nvp_pci_device *dev, const void *value, uint32_t len, uint32_t offset)
{
	(void)dev;
	(void)value;
	(void)len;
	(void)offset;
	return 0;
}

static const struct nvp_pci_device_ops g_fake_pci_ops = {
	.map_bar = fake_map_bar,
	.cfg_read = fake_cfg,
	.cfg_write = fake_cfg_write,
};

static char g_last_args[NVP_NVME_TRARGS_MAX];
static uint32_t g_vdev_creates, g_vdev_destroys;

/* Register a fake function of @class_id; \return its slot. */
static int
add_function(uint32_t class_id, struct nvp_pci_addr *addr)
{
	uint32_t i;

	for (i = 0; i < NVP_COUNTOF(g_devs) && g_devs[i] != NULL; i++) {
	}
	if (i == NVP_COUNTOF(g_devs)) {
		return -ENOSPC;
	}
	g_devs[i] = calloc(1, sizeof(*g_devs[i]));
	g_devs[i]->ops = &g_fake_pci_ops;
	g_devs[i]->id.class_id = class_id;
	nvp_pci_virtual_addr_alloc(&g_devs[i]->addr);
	CU_ASSERT_EQUAL(nvp_pci_device_register(g_devs[i]), 0);
	*addr = g_devs[i]->addr;
	return (int)i;
}

static void
remove_function(const struct nvp_pci_addr *addr)
{
	uint32_t i;

	for (i = 0; i < NVP_COUNTOF(g_devs); i++) {
		if (g_devs[i] != NULL && nvp_pci_addr_compare(&g_devs[i]->addr, addr) == 0) {
			CU_ASSERT_EQUAL(nvp_pci_device_unregister(g_devs[i]), 0);
			free(g_devs[i]);
			g_devs[i] = NULL;
		}
	}
}

static int
vdev_create(const char *name, const char *args, struct nvp_pci_addr *addr, char *err, size_t errlen)
{
	nvp_strlcpy(g_last_args, args, sizeof(g_last_args));
	if (strcmp(name, "bad") == 0) {
		snprintf(err, errlen, "option 'nn': 99 out of range 1..16");
		return -EINVAL;
	}
	g_vdev_creates++;
	return add_function(strcmp(name, "notnvme") == 0 ? 0x020000 : NVP_PCI_CLASS_NVME, addr) <
			       0 ?
		       -ENOSPC :
		       0;
}

static int
vdev_destroy(const struct nvp_pci_addr *addr)
{
	g_vdev_destroys++;
	remove_function(addr);
	return 0;
}

static struct nvp_env_vdev_provider g_provider = {
	.name = "utdev",
	.create = vdev_create,
	.destroy = vdev_destroy,
};

static int
suite_init(void)
{
	if (ut_env_init() != 0) {
		return -1;
	}
	return nvp_env_vdev_provider_register(&g_provider);
}

static int
suite_fini(void)
{
	nvp_env_fini();
	return 0;
}

/* ---- transport IDs ---- */

static void
test_trid_parse_good(void)
{
	struct nvp_nvme_transport_id trid;

	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, "trtype:PCIe traddr:0000:01:00.0"), 0);
	CU_ASSERT_EQUAL(trid.trtype, NVP_NVME_TRANSPORT_PCIE);
	CU_ASSERT_STRING_EQUAL(trid.trstring, "PCIe");
	CU_ASSERT_STRING_EQUAL(trid.traddr, "0000:01:00.0");
	CU_ASSERT_STRING_EQUAL(trid.args, "");
	/* '=' separators, case, tabs and repeated blanks. */
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, "  TRTYPE=pcie\t\ttraddr=01:00.0  "), 0);
	CU_ASSERT_EQUAL(trid.trtype, NVP_NVME_TRANSPORT_PCIE);
	CU_ASSERT_STRING_EQUAL(trid.traddr, "01:00.0");
	/* PCIe without traddr: "every function" for probe. */
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, "trtype:PCIe"), 0);
	/* A virtual device: unknown keys are kept for the provider. */
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, "trtype:utdev name:u0 nn:2 "
							   "lba:512/4096 backend=file:/tmp/x ns:3"),
			0);
	CU_ASSERT_EQUAL(trid.trtype, NVP_NVME_TRANSPORT_VDEV);
	CU_ASSERT_STRING_EQUAL(trid.trstring, "utdev");
	CU_ASSERT_STRING_EQUAL(trid.name, "u0");
	CU_ASSERT_EQUAL(trid.nsid, 3);
	CU_ASSERT_STRING_EQUAL(trid.args, "nn=2 lba=512/4096 backend=file:/tmp/x");
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, "trtype:UTDEV subnqn:nqn.x:y"), 0);
	CU_ASSERT_STRING_EQUAL(trid.subnqn, "nqn.x:y");
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, "trtype:TCP traddr:10.0.0.1"), 0);
	CU_ASSERT_EQUAL(trid.trtype, NVP_NVME_TRANSPORT_TCP);
}

static void
test_trid_parse_bad(void)
{
	static const char *const bad[] = {
		"", /* no trtype */
		"   ",
		"traddr:0000:01:00.0",       /* no trtype */
		"trtype:bogus name:x",       /* unknown type */
		"trtype:PCIe traddr:zz:top", /* not a PCI address */
		"trtype",                    /* no separator */
		":PCIe",                     /* empty key */
		"trtype:",                   /* empty value */
		"trtype:PCIe ns:0",          /* ns 0 */
		"trtype:PCIe ns:abc",
		"trtype:ThisTypeNameIsFarTooLong",
		"trtype:utdev name:a-name-of-more-than-thirty-two-chars",
	};
	struct nvp_nvme_transport_id trid;
	char big[1200];
	size_t i;

	for (i = 0; i < NVP_COUNTOF(bad); i++) {
		CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, bad[i]), -EINVAL);
	}
	ut_log_clear();
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, "trtype:bogus"), -EINVAL);
	CU_ASSERT_TRUE(ut_log_has("unknown transport type 'bogus'"));
	CU_ASSERT_TRUE(ut_log_has("PCIe"));
	/* Provider options that do not fit. */
	snprintf(big, sizeof(big), "trtype:utdev");
	for (i = 0; i < 60; i++) {
		nvp_strlcpy(big + strlen(big), " key=0123456789", sizeof(big) - strlen(big));
	}
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, big), -EINVAL);
	CU_ASSERT_TRUE(ut_log_has("options longer than"));
	/* The messages name the pair or the key. */
	ut_log_clear();
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, "trtype:PCIe traddr"), -EINVAL);
	CU_ASSERT_TRUE(ut_log_has("malformed pair 'traddr': expected key:value or key=value"));
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, "=PCIe"), -EINVAL);
	CU_ASSERT_TRUE(ut_log_has("malformed pair '=PCIe'"));
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, "trtype:PCIe traddr="), -EINVAL);
	CU_ASSERT_TRUE(ut_log_has("'traddr' has an empty value"));
	memset(big, 'n', 1000);
	big[1000] = '\0';
	memcpy(big, "trtype:utdev name:", 18);
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, big), -EINVAL);
	CU_ASSERT_TRUE(ut_log_has("value of 'name' is longer than"));
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(NULL, "trtype:PCIe"), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, NULL), -EINVAL);
}

/* The lookup of one of a transport ID's other pairs, as the TCP transport and tools use. */
static void
test_trid_get_arg(void)
{
	struct nvp_nvme_transport_id trid;
	char v[8];

	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, "trtype:TCP traddr:10.0.0.1 "
							   "trsvcid:4421 hdgst=1 KATO=500"),
			0);
	CU_ASSERT_STRING_EQUAL(trid.args, "trsvcid=4421 hdgst=1 KATO=500");
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_get_arg(&trid, "trsvcid", v, sizeof(v)), 0);
	CU_ASSERT_STRING_EQUAL(v, "4421");
	/* Keys without regard to case, as the parse's own. */
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_get_arg(&trid, "kato", v, sizeof(v)), 0);
	CU_ASSERT_STRING_EQUAL(v, "500");
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_get_arg(&trid, "HDGST", v, sizeof(v)), 0);
	CU_ASSERT_STRING_EQUAL(v, "1");
	/* Absent, or only a key that starts the same or a value that holds the key. */
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_get_arg(&trid, "ddgst", v, sizeof(v)), -ENOENT);
	CU_ASSERT_STRING_EQUAL(v, "");
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_get_arg(&trid, "trsvc", v, sizeof(v)), -ENOENT);
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_get_arg(&trid, "4421", v, sizeof(v)), -ENOENT);
	/* A key given twice is refused, whichever value is asked for first. */
	ut_log_clear();
	nvp_strlcpy(trid.args, "kato=1 hdgst=1 Kato=2", sizeof(trid.args));
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_get_arg(&trid, "kato", v, sizeof(v)), -EINVAL);
	CU_ASSERT_TRUE(ut_log_has("'kato' is given twice"));
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_get_arg(&trid, "hdgst", v, sizeof(v)), 0);
	/* An empty value (filled in by hand: the parse refuses it first). */
	ut_log_clear();
	nvp_strlcpy(trid.args, "hostnqn= kato=5", sizeof(trid.args));
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_get_arg(&trid, "hostnqn", v, sizeof(v)), -EINVAL);
	CU_ASSERT_TRUE(ut_log_has("'hostnqn' has an empty value"));
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_get_arg(&trid, "kato", v, sizeof(v)), 0);
	CU_ASSERT_STRING_EQUAL(v, "5");
	/* Too long for the caller: said, not cut short; a second one is still a duplicate. */
	ut_log_clear();
	nvp_strlcpy(trid.args, "trsvcid=123456789", sizeof(trid.args));
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_get_arg(&trid, "trsvcid", v, sizeof(v)), -ENOSPC);
	CU_ASSERT_STRING_EQUAL(v, "");
	CU_ASSERT_TRUE(ut_log_has("value of 'trsvcid' is longer than 7 characters"));
	nvp_strlcpy(trid.args, "trsvcid=123456789 trsvcid=1", sizeof(trid.args));
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_get_arg(&trid, "trsvcid", v, sizeof(v)), -EINVAL);
	/* No quoting: a quote is part of the value, and a blank ends it. */
	nvp_strlcpy(trid.args, "hostnqn=\"a b\"", sizeof(trid.args));
	ut_log_clear();
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_get_arg(&trid, "hostnqn", v, sizeof(v)), -EINVAL);
	CU_ASSERT_TRUE(ut_log_has("malformed pair 'b\"'"));
	nvp_strlcpy(trid.args, "hostnqn=\"a\"", sizeof(trid.args));
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_get_arg(&trid, "hostnqn", v, sizeof(v)), 0);
	CU_ASSERT_STRING_EQUAL(v, "\"a\"");
	/* A value may hold '=' (only the first one splits); pairs may be apart by blanks. */
	nvp_strlcpy(trid.args, "  a=b=c  ", sizeof(trid.args));
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_get_arg(&trid, "a", v, sizeof(v)), 0);
	CU_ASSERT_STRING_EQUAL(v, "b=c");
	/* Nothing there, or bad arguments. */
	trid.args[0] = '\0';
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_get_arg(&trid, "a", v, sizeof(v)), -ENOENT);
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_get_arg(NULL, "a", v, sizeof(v)), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_get_arg(&trid, NULL, v, sizeof(v)), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_get_arg(&trid, "", v, sizeof(v)), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_get_arg(&trid, "a", NULL, sizeof(v)), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_get_arg(&trid, "a", v, 0), -EINVAL);
	memset(trid.args, 'x', sizeof(trid.args));
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_get_arg(&trid, "a", v, sizeof(v)), -EINVAL);
}

static void
test_trid_fmt(void)
{
	struct nvp_nvme_transport_id trid, again;
	char buf[256];

	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, "trtype=utdev name=u1 nn=2 ns=1"), 0);
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_fmt(buf, sizeof(buf), &trid), 0);
	CU_ASSERT_STRING_EQUAL(buf, "trtype:utdev name:u1 ns:1 nn=2");
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&again, buf), 0);
	CU_ASSERT_EQUAL(memcmp(&trid, &again, sizeof(trid)), 0);
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, "trtype:pcie traddr:0000:01:00.0"), 0);
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_fmt(buf, sizeof(buf), &trid), 0);
	CU_ASSERT_STRING_EQUAL(buf, "trtype:pcie traddr:0000:01:00.0");
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_fmt(buf, 10, &trid), -ENOSPC);
	/* Built by hand without the string form. */
	memset(&trid, 0, sizeof(trid));
	trid.trtype = NVP_NVME_TRANSPORT_PCIE;
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_fmt(buf, sizeof(buf), &trid), 0);
	CU_ASSERT_STRING_EQUAL(buf, "trtype:PCIe");
}

/* ---- options ---- */

static void
test_opts(void)
{
	struct nvp_nvme_ctrlr_opts opts, copy;

	memset(&opts, 0xff, sizeof(opts));
	nvp_nvme_ctrlr_opts_init(&opts, sizeof(opts));
	CU_ASSERT_EQUAL(opts.opts_size, sizeof(opts));
	CU_ASSERT_EQUAL(opts.num_io_queues, 64);
	CU_ASSERT_EQUAL(opts.io_queue_size, 256);
	CU_ASSERT_EQUAL(opts.io_queue_requests, 1024);
	CU_ASSERT_EQUAL(opts.admin_queue_size, 32);
	CU_ASSERT_EQUAL(opts.admin_timeout_ms, 10000);
	CU_ASSERT_EQUAL(opts.io_timeout_us, 30000000);
	CU_ASSERT_EQUAL(opts.max_io_size, 2 * 1024 * 1024);
	CU_ASSERT_FALSE(opts.no_shn_notification);
	/* An older caller that knows only the first fields. */
	opts.num_io_queues = 3;
	opts.io_queue_size = 7;
	opts.opts_size = offsetof(struct nvp_nvme_ctrlr_opts, io_queue_size);
	nvme_ctrlr_opts_copy(&copy, &opts);
	CU_ASSERT_EQUAL(copy.num_io_queues, 3);
	CU_ASSERT_EQUAL(copy.io_queue_size, 256);
	CU_ASSERT_EQUAL(copy.opts_size, sizeof(copy));
	nvme_ctrlr_opts_copy(&copy, NULL);
	CU_ASSERT_EQUAL(copy.num_io_queues, 64);
	copy.admin_queue_size = 1;
	CU_ASSERT_EQUAL(nvme_ctrlr_opts_check(&copy), -EINVAL);
	copy.admin_queue_size = 4097;
	CU_ASSERT_EQUAL(nvme_ctrlr_opts_check(&copy), -EINVAL);
	copy.admin_queue_size = 4096;
	CU_ASSERT_EQUAL(nvme_ctrlr_opts_check(&copy), 0);
	copy.io_queue_size = 1;
	CU_ASSERT_EQUAL(nvme_ctrlr_opts_check(&copy), -EINVAL);
}

/* ---- status strings ---- */

struct sc_case {
	uint8_t sct;
	uint8_t sc;
};

static void
test_status_strings(void)
{
	/* Every status code nvme_spec.h defines. */
	static const struct sc_case all[] = {
		{ 0, NVME_SC_SUCCESS },
		{ 0, NVME_SC_INVALID_OPCODE },
		{ 0, NVME_SC_INVALID_FIELD },
		{ 0, NVME_SC_COMMAND_ID_CONFLICT },
		{ 0, NVME_SC_DATA_TRANSFER_ERROR },
		{ 0, NVME_SC_ABORTED_POWER_LOSS },
		{ 0, NVME_SC_INTERNAL_DEVICE_ERROR },
		{ 0, NVME_SC_ABORTED_BY_REQUEST },
		{ 0, NVME_SC_ABORTED_SQ_DELETION },
		{ 0, NVME_SC_ABORTED_FAILED_FUSED },
		{ 0, NVME_SC_ABORTED_MISSING_FUSED },
		{ 0, NVME_SC_INVALID_NAMESPACE_OR_FORMAT },
		{ 0, NVME_SC_COMMAND_SEQUENCE_ERROR },
		{ 0, NVME_SC_INVALID_SGL_SEG_DESCRIPTOR },
		{ 0, NVME_SC_INVALID_NUM_SGL_DESCRIPTORS },
		{ 0, NVME_SC_DATA_SGL_LENGTH_INVALID },
		{ 0, NVME_SC_METADATA_SGL_LENGTH_INVALID },
		{ 0, NVME_SC_SGL_DESCRIPTOR_TYPE_INVALID },
		{ 0, NVME_SC_INVALID_CONTROLLER_MEM_BUF },
		{ 0, NVME_SC_INVALID_PRP_OFFSET },
		{ 0, NVME_SC_ATOMIC_WRITE_UNIT_EXCEEDED },
		{ 0, NVME_SC_OPERATION_DENIED },
		{ 0, NVME_SC_INVALID_SGL_OFFSET },
		{ 0, NVME_SC_HOSTID_INCONSISTENT_FORMAT },
		{ 0, NVME_SC_KEEP_ALIVE_EXPIRED },
		{ 0, NVME_SC_KEEP_ALIVE_INVALID },
		{ 0, NVME_SC_ABORTED_PREEMPT },
		{ 0, NVME_SC_SANITIZE_FAILED },
		{ 0, NVME_SC_SANITIZE_IN_PROGRESS },
		{ 0, NVME_SC_SGL_DATA_BLOCK_GRANULARITY_INVALID },
		{ 0, NVME_SC_COMMAND_INVALID_IN_CMB },
		{ 0, NVME_SC_NAMESPACE_IS_WRITE_PROTECTED },
		{ 0, NVME_SC_COMMAND_INTERRUPTED },
		{ 0, NVME_SC_TRANSIENT_TRANSPORT_ERROR },
		{ 0, NVME_SC_LBA_OUT_OF_RANGE },
		{ 0, NVME_SC_CAPACITY_EXCEEDED },
		{ 0, NVME_SC_NAMESPACE_NOT_READY },
		{ 0, NVME_SC_RESERVATION_CONFLICT },
		{ 0, NVME_SC_FORMAT_IN_PROGRESS },
		{ 1, NVME_SC_COMPLETION_QUEUE_INVALID },
		{ 1, NVME_SC_INVALID_QUEUE_IDENTIFIER },
		{ 1, NVME_SC_INVALID_QUEUE_SIZE },
		{ 1, NVME_SC_ABORT_COMMAND_LIMIT_EXCEEDED },
		{ 1, NVME_SC_ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED },
		{ 1, NVME_SC_INVALID_FIRMWARE_SLOT },
		{ 1, NVME_SC_INVALID_FIRMWARE_IMAGE },
		{ 1, NVME_SC_INVALID_INTERRUPT_VECTOR },
		{ 1, NVME_SC_INVALID_LOG_PAGE },
		{ 1, NVME_SC_INVALID_FORMAT },
		{ 1, NVME_SC_FIRMWARE_REQ_CONVENTIONAL_RESET },
		{ 1, NVME_SC_INVALID_QUEUE_DELETION },
		{ 1, NVME_SC_FEATURE_ID_NOT_SAVEABLE },
		{ 1, NVME_SC_FEATURE_NOT_CHANGEABLE },
		{ 1, NVME_SC_FEATURE_NOT_NAMESPACE_SPECIFIC },
		{ 1, NVME_SC_FIRMWARE_REQ_NVM_RESET },
		{ 1, NVME_SC_FIRMWARE_REQ_RESET },
		{ 1, NVME_SC_FIRMWARE_REQ_MAX_TIME_VIOLATION },
		{ 1, NVME_SC_FIRMWARE_ACTIVATION_PROHIBITED },
		{ 1, NVME_SC_OVERLAPPING_RANGE },
		{ 1, NVME_SC_NAMESPACE_INSUFFICIENT_CAPACITY },
		{ 1, NVME_SC_NAMESPACE_ID_UNAVAILABLE },
		{ 1, NVME_SC_NAMESPACE_ALREADY_ATTACHED },
		{ 1, NVME_SC_NAMESPACE_IS_PRIVATE },
		{ 1, NVME_SC_NAMESPACE_NOT_ATTACHED },
		{ 1, NVME_SC_THINPROVISIONING_NOT_SUPPORTED },
		{ 1, NVME_SC_CONTROLLER_LIST_INVALID },
		{ 1, NVME_SC_DEVICE_SELF_TEST_IN_PROGRESS },
		{ 1, NVME_SC_BOOT_PARTITION_WRITE_PROHIBITED },
		{ 1, NVME_SC_INVALID_CTRLR_ID },
		{ 1, NVME_SC_INVALID_SECONDARY_CTRLR_STATE },
		{ 1, NVME_SC_INVALID_NUM_CTRLR_RESOURCES },
		{ 1, NVME_SC_INVALID_RESOURCE_ID },
		{ 1, NVME_SC_CONFLICTING_ATTRIBUTES },
		{ 1, NVME_SC_INVALID_PROTECTION_INFO },
		{ 1, NVME_SC_ATTEMPTED_WRITE_TO_RO_RANGE },
		{ 2, NVME_SC_WRITE_FAULTS },
		{ 2, NVME_SC_UNRECOVERED_READ_ERROR },
		{ 2, NVME_SC_GUARD_CHECK_ERROR },
		{ 2, NVME_SC_APPLICATION_TAG_CHECK_ERROR },
		{ 2, NVME_SC_REFERENCE_TAG_CHECK_ERROR },
		{ 2, NVME_SC_COMPARE_FAILURE },
		{ 2, NVME_SC_ACCESS_DENIED },
		{ 2, NVME_SC_DEALLOCATED_OR_UNWRITTEN_BLOCK },
		{ 3, NVME_SC_INTERNAL_PATH_ERROR },
		{ 3, NVME_SC_CONTROLLER_PATH_ERROR },
		{ 3, NVME_SC_HOST_PATH_ERROR },
		{ 3, NVME_SC_ABORTED_BY_HOST },
	};
	struct nvme_cpl cpl;
	char buf[128];
	size_t i;

	for (i = 0; i < NVP_COUNTOF(all); i++) {
		const char *s = nvp_nvme_status_string(all[i].sct, all[i].sc);

		CU_ASSERT_STRING_NOT_EQUAL(s, "Unknown");
	}
	CU_ASSERT_STRING_EQUAL(nvp_nvme_status_string(0, 0x02), "Invalid Field in Command");
	CU_ASSERT_STRING_EQUAL(nvp_nvme_status_string(0, 0x80), "LBA Out of Range");
	CU_ASSERT_STRING_EQUAL(nvp_nvme_status_string(2, 0x85), "Compare Failure");
	CU_ASSERT_STRING_EQUAL(nvp_nvme_status_string(3, 0x71), "Command Aborted By Host");
	CU_ASSERT_STRING_EQUAL(nvp_nvme_status_string(0, 0x7f), "Unknown");
	/* Fabrics: Connect's own codes by their Fabrics meaning, not the I/O set's names */
	CU_ASSERT_STRING_EQUAL(nvp_nvme_status_string(1, 0x82),
			       "Attempted Write to Read Only Range");
	CU_ASSERT_STRING_EQUAL(nvp_nvme_fabrics_status_string(NVME_FCTYPE_CONNECT, 1, 0x82),
			       "Connect Invalid Parameters");
	CU_ASSERT_STRING_EQUAL(nvp_nvme_fabrics_status_string(NVME_FCTYPE_CONNECT, 1, 0x84),
			       "Connect Invalid Host");
	CU_ASSERT_STRING_EQUAL(nvp_nvme_fabrics_status_string(NVME_FCTYPE_CONNECT, 1, 0x80),
			       "Connect Incompatible Format");
	CU_ASSERT_STRING_EQUAL(nvp_nvme_fabrics_status_string(0xff, 1, 0x90), "Discovery Restart");
	CU_ASSERT_STRING_EQUAL(nvp_nvme_fabrics_status_string(NVME_FCTYPE_CONNECT, 1, 0x91),
			       "Authentication Required");
	/* Connect's codes only for Connect; everything else as the base names it */
	CU_ASSERT_STRING_EQUAL(nvp_nvme_fabrics_status_string(NVME_FCTYPE_PROPERTY_GET, 1, 0x82),
			       "Attempted Write to Read Only Range");
	CU_ASSERT_STRING_EQUAL(nvp_nvme_fabrics_status_string(NVME_FCTYPE_CONNECT, 0, 0x02),
			       "Invalid Field in Command");
	CU_ASSERT_STRING_EQUAL(nvp_nvme_fabrics_status_string(0xff, 1, 0x09), "Invalid Log Page");
	CU_ASSERT_STRING_EQUAL(nvp_nvme_status_string(5, 0), "Unknown");
	CU_ASSERT_STRING_EQUAL(nvp_nvme_sct_string(0), "Generic Command Status");
	CU_ASSERT_STRING_EQUAL(nvp_nvme_sct_string(2), "Media and Data Integrity Errors");
	CU_ASSERT_STRING_EQUAL(nvp_nvme_sct_string(6), "Unknown");
	memset(&cpl, 0, sizeof(cpl));
	cpl.status.sc = NVME_SC_INVALID_FIELD;
	CU_ASSERT_PTR_EQUAL(nvp_nvme_cpl_fmt(buf, sizeof(buf), &cpl), buf);
	CU_ASSERT_STRING_EQUAL(buf, "Invalid Field in Command (sct 0x0, sc 0x2)");
	cpl.status.dnr = 1;
	nvp_nvme_cpl_fmt(buf, sizeof(buf), &cpl);
	CU_ASSERT_STRING_EQUAL(buf, "Invalid Field in Command (sct 0x0, sc 0x2, dnr)");
	nvp_nvme_cpl_fmt(buf, 8, &cpl);
	CU_ASSERT_EQUAL(strlen(buf), 7);
}

/* ---- connect, detach, probe ---- */

static void
test_connect_vdev(void)
{
	struct nvp_nvme_transport_id trid;
	struct nvp_nvme_ctrlr *ctrlr = NULL;

	g_vdev_creates = g_vdev_destroys = g_constructs = g_destructs = 0;
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, "trtype:utdev name:u0 nn=2"), 0);
	CU_ASSERT_EQUAL(nvp_nvme_connect(&trid, NULL, &ctrlr), 0);
	CU_ASSERT_EQUAL(g_vdev_creates, 1);
	CU_ASSERT_STRING_EQUAL(g_last_args, "nn=2");
	CU_ASSERT_PTR_NOT_NULL_FATAL(ctrlr);
	CU_ASSERT_PTR_EQUAL(((struct fake_ctrlr *)ctrlr)->vdev.provider, &g_provider);
	CU_ASSERT_EQUAL(ctrlr->opts.io_queue_size, 256); /* defaults */
	CU_ASSERT_EQUAL(nvp_nvme_detach(ctrlr), 0);
	CU_ASSERT_EQUAL(g_vdev_destroys, 1);
	CU_ASSERT_EQUAL(g_destructs, 1);
	CU_ASSERT_EQUAL(g_shutdowns, 1);
	CU_ASSERT_TRUE(g_admin_aborts >= 1);
	/* The provider refuses: its message is passed on. */
	ut_log_clear();
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, "trtype:utdev name:bad nn=99"), 0);
	CU_ASSERT_EQUAL(nvp_nvme_connect(&trid, NULL, &ctrlr), -EINVAL);
	CU_ASSERT_TRUE(ut_log_has("option 'nn': 99 out of range 1..16"));
	/* Initialisation fails: the device made for it is destroyed again. */
	g_init_rc = -ETIMEDOUT;
	g_vdev_destroys = 0;
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, "trtype:utdev name:u2"), 0);
	CU_ASSERT_EQUAL(nvp_nvme_connect(&trid, NULL, &ctrlr), -ETIMEDOUT);
	CU_ASSERT_EQUAL(g_vdev_destroys, 1);
	g_init_rc = 0;
	/* A function that is not an NVMe controller. */
	g_vdev_destroys = 0;
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, "trtype:utdev name:notnvme"), 0);
	CU_ASSERT_EQUAL(nvp_nvme_connect(&trid, NULL, &ctrlr), -ENODEV);
	CU_ASSERT_EQUAL(g_vdev_destroys, 1);
}

static void
test_connect_pcie(void)
{
	struct nvp_nvme_transport_id trid;
	struct nvp_nvme_ctrlr *c1 = NULL, *c2 = NULL;
	struct nvp_nvme_ctrlr_opts opts;
	struct nvp_pci_addr addr;
	char str[128];

	CU_ASSERT(add_function(NVP_PCI_CLASS_NVME, &addr) >= 0);
	memset(&trid, 0, sizeof(trid));
	nvp_strlcpy(trid.trstring, "PCIe", sizeof(trid.trstring));
	nvp_pci_addr_fmt(trid.traddr, sizeof(trid.traddr), &addr);
	CU_ASSERT_EQUAL(nvp_nvme_connect(&trid, NULL, &c1), 0);
	/* Already attached. */
	CU_ASSERT_EQUAL(nvp_nvme_connect(&trid, NULL, &c2), -EBUSY);
	CU_ASSERT_EQUAL(nvp_nvme_detach(c1), 0);
	/* Bad options. */
	nvp_nvme_ctrlr_opts_init(&opts, sizeof(opts));
	opts.admin_queue_size = 0;
	CU_ASSERT_EQUAL(nvp_nvme_connect(&trid, &opts, &c1), -EINVAL);
	remove_function(&addr);
	/* Nothing there. */
	CU_ASSERT_EQUAL(nvp_nvme_connect(&trid, NULL, &c1), -ENODEV);
	/* No traddr. */
	trid.traddr[0] = '\0';
	CU_ASSERT_EQUAL(nvp_nvme_connect(&trid, NULL, &c1), -EINVAL);
	/* No TCP transport in this build. */
	snprintf(str, sizeof(str), "trtype:TCP traddr:1.2.3.4");
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&trid, str), 0);
	CU_ASSERT_EQUAL(nvp_nvme_connect(&trid, NULL, &c1), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_connect(NULL, NULL, &c1), -EINVAL);
	CU_ASSERT_EQUAL(nvp_nvme_detach(NULL), -EINVAL);
}

static uint32_t g_probed, g_attached;
static bool g_probe_accept;
static struct nvp_nvme_ctrlr *g_attached_ctrlrs[8];

static bool
probe_cb(void *ctx, const struct nvp_nvme_transport_id *trid, struct nvp_nvme_ctrlr_opts *opts)
{
	(void)ctx;
	CU_ASSERT_EQUAL(trid->trtype, NVP_NVME_TRANSPORT_PCIE);
	opts->io_queue_size = 64;
	g_probed++;
	return g_probe_accept;
}

static void
attach_cb(void *ctx, const struct nvp_nvme_transport_id *trid, struct nvp_nvme_ctrlr *ctrlr,
	  const struct nvp_nvme_ctrlr_opts *opts)
{
	(void)ctx;
	(void)trid;
	CU_ASSERT_EQUAL(opts->io_queue_size, 64);
	g_attached_ctrlrs[g_attached++ % 8] = ctrlr;
}

static void
test_probe(void)
{
	struct nvp_pci_addr a1, a2, a3;
	uint32_t i;

	g_probed = g_attached = 0;
	/* Nothing to find. */
	CU_ASSERT_EQUAL(nvp_nvme_probe(NULL, NULL, probe_cb, attach_cb), -ENODEV);
	add_function(NVP_PCI_CLASS_NVME, &a1);
	add_function(NVP_PCI_CLASS_NVME, &a2);
	add_function(0x020000, &a3); /* a NIC: not offered */
	g_probe_accept = false;
	CU_ASSERT_EQUAL(nvp_nvme_probe(NULL, NULL, probe_cb, attach_cb), 0);
	CU_ASSERT_EQUAL(g_probed, 2);
	CU_ASSERT_EQUAL(g_attached, 0);
	g_probe_accept = true;
	g_probed = 0;
	CU_ASSERT_EQUAL(nvp_nvme_probe(NULL, NULL, probe_cb, attach_cb), 0);
	CU_ASSERT_EQUAL(g_probed, 2);
	CU_ASSERT_EQUAL(g_attached, 2);
	/* Claimed functions are not offered again. */
	g_probed = 0;
	CU_ASSERT_EQUAL(nvp_nvme_probe(NULL, NULL, probe_cb, attach_cb), -ENODEV);
	CU_ASSERT_EQUAL(g_probed, 0);
	for (i = 0; i < g_attached; i++) {
		nvp_nvme_detach(g_attached_ctrlrs[i]);
	}
	remove_function(&a1);
	remove_function(&a2);
	remove_function(&a3);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	/* What the real PCIe transport does when the library loads. */
	if (nvme_transport_register(&g_nvme_pcie_transport) != 0 ||
	    nvme_transport_register(&g_nvme_pcie_transport) != -EEXIST) {
		return 1;
	}
	s = CU_add_suite("nvme", suite_init, suite_fini);
	CU_ADD_TEST(s, test_trid_parse_good);
	CU_ADD_TEST(s, test_trid_parse_bad);
	CU_ADD_TEST(s, test_trid_get_arg);
	CU_ADD_TEST(s, test_trid_fmt);
	CU_ADD_TEST(s, test_opts);
	CU_ADD_TEST(s, test_status_strings);
	CU_ADD_TEST(s, test_connect_vdev);
	CU_ADD_TEST(s, test_connect_pcie);
	CU_ADD_TEST(s, test_probe);
	return ut_run();
}

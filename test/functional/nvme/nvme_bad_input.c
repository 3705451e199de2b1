/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bad input never crashes or hangs: transport ID strings (malformed, unknown transport,
 * bad PCI address, too long), software controller options (through nvp_emu_opts_parse
 * and through "trtype:emu"), queue depths (0, 1, above MQES + 1), request parameters
 * (zero or oversize count, LBA past the end) each give a negative errno, leave nothing
 * behind, and leave what was working still working.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

static void
test_trid_parse_valid(void)
{
	struct nvp_nvme_transport_id t, t2;
	char buf[1024];

	memset(&t, 0, sizeof(t));
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_transport_id_parse(&t, "trtype:PCIe traddr:0000:01:00.0"),
			      0);
	CU_ASSERT_EQUAL(t.trtype, NVP_NVME_TRANSPORT_PCIE);
	CU_ASSERT_STRING_EQUAL(t.trstring, "PCIe");
	CU_ASSERT_STRING_EQUAL(t.traddr, "0000:01:00.0");
	CU_ASSERT_EQUAL(t.nsid, 0);

	/* '=' separators, tabs and runs of spaces; a namespace id. */
	memset(&t, 0, sizeof(t));
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&t, "trtype=PCIe \t traddr=0000:01:00.0 ns=3"),
			0);
	CU_ASSERT_EQUAL(t.trtype, NVP_NVME_TRANSPORT_PCIE);
	CU_ASSERT_EQUAL(t.nsid, 3);

	/* A virtual device: name, and the other pairs kept for the provider. */
	memset(&t, 0, sizeof(t));
	CU_ASSERT_EQUAL_FATAL(
		nvp_nvme_transport_id_parse(&t, "trtype:emu name:emu7 nn:2 lba:512/4096"), 0);
	CU_ASSERT_EQUAL(t.trtype, NVP_NVME_TRANSPORT_VDEV);
	CU_ASSERT_STRING_EQUAL(t.name, "emu7");
	CU_ASSERT_PTR_NOT_NULL(strstr(t.args, "nn"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t.args, "512/4096"));
	CU_ASSERT_PTR_NULL(strstr(t.args, "trtype"));
	CU_ASSERT_PTR_NULL(strstr(t.args, "emu7"));

	/* A value that contains ':' keeps it (split at the first separator). */
	memset(&t, 0, sizeof(t));
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(
				&t, "trtype:emu name:q subnqn:nqn.2014-08.org.nvmexpress:uuid:12"),
			0);
	CU_ASSERT_STRING_EQUAL(t.subnqn, "nqn.2014-08.org.nvmexpress:uuid:12");

	/* Format and parse again: the same transport ID. */
	memset(&t, 0, sizeof(t));
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&t, "trtype:emu name:rt nn:3 size:8M"), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_transport_id_fmt(buf, sizeof(buf), &t), 0);
	memset(&t2, 0, sizeof(t2));
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_transport_id_parse(&t2, buf), 0);
	CU_ASSERT_EQUAL(t2.trtype, t.trtype);
	CU_ASSERT_STRING_EQUAL(t2.name, t.name);
	CU_ASSERT_STRING_EQUAL(t2.args, t.args);
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_fmt(buf, 4, &t), -ENOSPC);

	memset(&t, 0, sizeof(t));
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&t, "trtype:PCIe traddr:0000:01:00.0"), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_nvme_transport_id_fmt(buf, sizeof(buf), &t), 0);
	memset(&t2, 0, sizeof(t2));
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&t2, buf), 0);
	CU_ASSERT_STRING_EQUAL(t2.traddr, "0000:01:00.0");
}

static void
test_trid_parse_invalid(void)
{
	static const char *const bad[] = {
		"",
		"   ",
		"traddr:0000:01:00.0",                                      /* no trtype */
		"trtype:",                                                  /* empty trtype */
		"trtype:nosuch name:x",                                     /* unknown transport */
		"trtype:PCIe traddr:zz:01:00.0",                            /* not a PCI address */
		"trtype:PCIe traddr:0000:01:00",                            /* no function */
		"trtype:PCIe traddr:0000:01:00.9",                          /* function > 7 */
		"trtype:PCIe traddr:0000:01:40.0",                          /* device > 31 */
		"trtype:PCIe traddr:0000:100:00.0",                         /* bus > 255 */
		"trtype:emu :value",                                        /* empty key */
		"trtype:emu name:x ns:abc",                                 /* ns not a number */
		"trtype:emu name:0123456789012345678901234567890123456789", /* name too long */
	};
	struct nvp_nvme_transport_id t;
	char *huge;
	unsigned int i;

	for (i = 0; i < NVP_COUNTOF(bad); i++) {
		memset(&t, 0, sizeof(t));
		if (nvp_nvme_transport_id_parse(&t, bad[i]) != -EINVAL) {
			fprintf(stderr, "  accepted or wrong errno: \"%s\"\n", bad[i]);
			CU_FAIL("malformed transport ID not refused with -EINVAL");
		}
	}

	/* Arguments that do not fit in args[]. */
	huge = malloc(2048);
	CU_ASSERT_PTR_NOT_NULL_FATAL(huge);
	{
		size_t pos = (size_t)snprintf(huge, 2048, "trtype:emu name:big");

		for (i = 0; i < 60; i++) {
			pos += (size_t)snprintf(huge + pos, 2048 - pos, " size=64M");
		}
	}
	memset(&t, 0, sizeof(t));
	CU_ASSERT_EQUAL(nvp_nvme_transport_id_parse(&t, huge), -EINVAL);
	free(huge);
}

/* The same refusals on a real controller (NVP_TEST_TRID). */
static void
connect_invalid_real(void)
{
	struct nvp_nvme_ctrlr *ctrlr = NULL, *second = NULL;
	struct nvp_nvme_ctrlr_opts opts;
	uint32_t nn;
	int rc;

	/* Attached already: -EBUSY, and the first attachment is unharmed. */
	CU_ASSERT_EQUAL_FATAL(fx_connect_str(fx_real_trid(), NULL, &ctrlr), 0);
	nn = nvp_nvme_ctrlr_get_num_ns(ctrlr);
	CU_ASSERT_EQUAL(fx_connect_str(fx_real_trid(), NULL, &second), -EBUSY);
	CU_ASSERT_PTR_NULL(second);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_num_ns(ctrlr), nn);
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(ctrlr));
	CU_ASSERT_EQUAL(nvp_nvme_detach(ctrlr), 0);

	/* Controller options the driver cannot honour: refused, the function stays free. */
	nvp_nvme_ctrlr_opts_init(&opts, sizeof(opts));
	opts.admin_queue_size = 1;
	ctrlr = NULL;
	rc = fx_connect_str(fx_real_trid(), &opts, &ctrlr);
	CU_ASSERT_EQUAL(rc, -EINVAL);
	if (rc == 0) {
		nvp_nvme_detach(ctrlr);
	}
	ctrlr = NULL;
	CU_ASSERT_EQUAL(fx_connect_str(fx_real_trid(), NULL, &ctrlr), 0);
	if (ctrlr != NULL) {
		CU_ASSERT_EQUAL(nvp_nvme_detach(ctrlr), 0);
	}
}

static void
test_connect_invalid(void)
{
	struct nvp_nvme_transport_id t;
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	struct nvp_emu_ctrlr *emu = NULL;
	int rc;

	/* A transport that does not exist (struct filled by hand). */
	memset(&t, 0, sizeof(t));
	t.trtype = (enum nvp_nvme_transport_type)99;
	CU_ASSERT(nvp_nvme_connect(&t, NULL, &ctrlr) < 0);
	CU_ASSERT_PTR_NULL(ctrlr);

	/* The reserved TCP transport is not available yet. */
	memset(&t, 0, sizeof(t));
	t.trtype = NVP_NVME_TRANSPORT_TCP;
	snprintf(t.trstring, sizeof(t.trstring), "TCP");
	snprintf(t.traddr, sizeof(t.traddr), "127.0.0.1");
	CU_ASSERT(nvp_nvme_connect(&t, NULL, &ctrlr) < 0);

	/* No function at that address. */
	CU_ASSERT_EQUAL(fx_connect_str("trtype:PCIe traddr:10fff:00:1f.7", NULL, &ctrlr), -ENODEV);
	CU_ASSERT_PTR_NULL(ctrlr);

	if (fx_real_trid() != NULL) {
		connect_invalid_real();
		return;
	}

	/* Attached already: -EBUSY, and the first attachment is unharmed. */
	CU_ASSERT_EQUAL_FATAL(fx_emu_create("name=busy0,size=4M", &emu), 0);
	CU_ASSERT_EQUAL_FATAL(fx_connect_pcie(emu, NULL, &ctrlr), 0);
	{
		struct nvp_nvme_ctrlr *second = NULL;

		CU_ASSERT_EQUAL(fx_connect_pcie(emu, NULL, &second), -EBUSY);
		CU_ASSERT_PTR_NULL(second);
	}
	/* A "trtype:emu" with the name of an existing controller. */
	{
		struct nvp_nvme_ctrlr *second = NULL;

		rc = fx_connect_str("trtype:emu name:busy0", NULL, &second);
		CU_ASSERT(rc < 0);
		CU_ASSERT_PTR_NULL(second);
	}
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_num_ns(ctrlr), 1);
	CU_ASSERT_PTR_EQUAL(nvp_emu_ctrlr_find("busy0"), emu);
	CU_ASSERT_EQUAL(nvp_nvme_detach(ctrlr), 0);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(emu), 0);

	/* Controller options the driver cannot honour. */
	{
		struct nvp_nvme_ctrlr_opts opts;

		nvp_nvme_ctrlr_opts_init(&opts, sizeof(opts));
		opts.admin_queue_size = 1;
		ctrlr = NULL;
		rc = fx_connect_str("trtype:emu name:badopts size:4M", &opts, &ctrlr);
		CU_ASSERT_EQUAL(rc, -EINVAL);
		if (rc == 0) {
			nvp_nvme_detach(ctrlr);
		}
		CU_ASSERT_PTR_NULL(nvp_emu_ctrlr_find("badopts"));
	}
}

/* Malformed software controller options through the transport ID. */
static void
test_emu_trid_options_invalid(void)
{
	static const char *const bad[] = {
		"nn:0",       "nn:17",      "lba:1000",     "lba:512/777", "bogus:1",
		"size:abc",   "size:0",     "fault:nosuch", "mqes:0",      "mqes:65536",
		"queues:0",   "channels:0", "to:0",         "to:256",      "fw_slots:8",
		"fw_slots:0", "dstrd:16",   "backend:tape", "vwc:maybe",   "mpsmax:99",
	};
	char trid[256];
	unsigned int i;
	int rc;

	for (i = 0; i < NVP_COUNTOF(bad); i++) {
		struct nvp_nvme_ctrlr *ctrlr = NULL;

		snprintf(trid, sizeof(trid), "trtype:emu name:bad%u size:4M %s", i, bad[i]);
		rc = fx_connect_str(trid, NULL, &ctrlr);
		if (rc != -EINVAL) {
			fprintf(stderr, "  \"%s\": %d, want -EINVAL\n", trid, rc);
			CU_FAIL("bad emu option not refused with -EINVAL");
		}
		if (rc == 0) {
			nvp_nvme_detach(ctrlr);
		}
		/* Nothing left behind. */
		snprintf(trid, sizeof(trid), "bad%u", i);
		CU_ASSERT_PTR_NULL(nvp_emu_ctrlr_find(trid));
	}
}

static void
test_emu_opts_parse(void)
{
	static const char *const bad[] = {
		"nn=0",         "nn=17",    "lba=1000",    "bogus=1",       "size=abc",
		"fault=nosuch", "mqes=0",   "queues=2000", "channels=257",  "to=0",
		"fw_slots=8",   "dstrd=16", "=5",          "backend=file:", "fault_arg=notanumber",
	};
	struct nvp_emu_opts opts;
	char err[256];
	unsigned int i;
	FILE *f;
	long len;

	for (i = 0; i < NVP_COUNTOF(bad); i++) {
		nvp_emu_opts_init(&opts, sizeof(opts));
		err[0] = '\0';
		if (nvp_emu_opts_parse(&opts, bad[i], err, sizeof(err)) != -EINVAL) {
			fprintf(stderr, "  \"%s\" not refused\n", bad[i]);
			CU_FAIL("bad emu option accepted");
		} else if (strlen(err) == 0) {
			fprintf(stderr, "  \"%s\": no message\n", bad[i]);
			CU_FAIL("no message for a bad emu option");
		}
	}

	/* Good options land in the struct. */
	nvp_emu_opts_init(&opts, sizeof(opts));
	CU_ASSERT_EQUAL(opts.nn, 1);
	CU_ASSERT_EQUAL(opts.mqes, 1023);
	CU_ASSERT_EQUAL(opts.ns_size, 64ull << 20);
	CU_ASSERT_EQUAL(nvp_emu_opts_parse(&opts,
					   "nn=2,lba=512/4096 size=1G mqes:127,fault=drop_cpl,"
					   "fault_count=3,backend=file:/tmp/x",
					   err, sizeof(err)),
			0);
	CU_ASSERT_EQUAL(opts.nn, 2);
	CU_ASSERT_EQUAL(opts.lba_size[0], 512);
	CU_ASSERT_EQUAL(opts.lba_size[1], 4096);
	CU_ASSERT_EQUAL(opts.ns_size, 1ull << 30);
	CU_ASSERT_EQUAL(opts.mqes, 127);
	CU_ASSERT_EQUAL(opts.fault, NVP_EMU_FAULT_DROP_CPL);
	CU_ASSERT_EQUAL(opts.fault_count, 3);
	CU_ASSERT_EQUAL(opts.backend, NVP_EMU_BACKEND_FILE);
	CU_ASSERT_STRING_EQUAL(opts.backend_path, "/tmp/x");

	/* The usage text lists the options. */
	f = tmpfile();
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	nvp_emu_opts_usage(f);
	len = ftell(f);
	CU_ASSERT(len > 200);
	fclose(f);
}

static void
test_emu_create_invalid(void)
{
	struct nvp_emu_ctrlr *a = NULL, *b = NULL;
	struct nvp_emu_opts opts;

	CU_ASSERT_EQUAL_FATAL(fx_emu_create("name=dup0,size=4M", &a), 0);
	CU_ASSERT_EQUAL(fx_emu_create("name=dup0,size=4M", &b), -EEXIST);
	CU_ASSERT_PTR_EQUAL(nvp_emu_ctrlr_find("dup0"), a);
	CU_ASSERT_STRING_EQUAL(nvp_emu_ctrlr_get_name(a), "dup0");
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(a), 0);
	CU_ASSERT_PTR_NULL(nvp_emu_ctrlr_find("dup0"));

	/* A struct filled by hand with values out of range. */
	nvp_emu_opts_init(&opts, sizeof(opts));
	opts.nn = 0;
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_create(&opts, &b), -EINVAL);
	nvp_emu_opts_init(&opts, sizeof(opts));
	opts.lba_size[0] = 1024;
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_create(&opts, &b), -EINVAL);
	nvp_emu_opts_init(&opts, sizeof(opts));
	opts.mqes = 0;
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_create(&opts, &b), -EINVAL);

	/* A file backend in a directory that does not exist. */
	CU_ASSERT_EQUAL(fx_emu_create("size=4M,backend=file:/nonexistent/dir/nvp", &b), -EIO);

	/* Unknown fault injection. */
	CU_ASSERT_EQUAL_FATAL(fx_emu_create("size=4M", &a), 0);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_inject_fault(a, (enum nvp_emu_fault_type)77, 1, 0, 0),
			-EINVAL);
	CU_ASSERT_EQUAL(nvp_emu_ctrlr_destroy(a), 0);
}

static void
test_qpair_sizes(void)
{
	struct nvp_nvme_io_qpair_opts o;
	struct nvp_nvme_qpair *q = NULL;
	struct fx_ctrlr fx;
	uint32_t bad_sizes[] = { 0, 1, 65, 1000, 65537 };
	uint32_t big = 64;
	unsigned int i;

	/* MQES 63: queues of 2..64 entries; the controller grants 4 queue pairs. */
	if (fx_open(&fx, "size=4M,mqes=63,queues=4") != 0) {
		fx_close(&fx);
		return;
	}
	if (!fx_is_emu(&fx)) {
		/* A real controller: its own MQES (QEMU: 2047). */
		big = nvp_nvme_ctrlr_get_regs_cap(fx.ctrlr).bits.mqes + 1u;
		bad_sizes[2] = big + 1;
		bad_sizes[3] = big + 1000;
	}
	for (i = 0; i < NVP_COUNTOF(bad_sizes); i++) {
		q = NULL;
		nvp_nvme_ctrlr_get_default_io_qpair_opts(fx.ctrlr, &o, sizeof(o));
		o.io_queue_size = bad_sizes[i];
		o.io_queue_requests = 65537;
		if (nvp_nvme_ctrlr_alloc_io_qpair(fx.ctrlr, &o, &q) != -EINVAL) {
			fprintf(stderr, "  queue size %u not refused\n", bad_sizes[i]);
			CU_FAIL("bad queue size not refused with -EINVAL");
		}
		CU_ASSERT_PTR_NULL(q);
	}
	/* Fewer requests than entries. */
	nvp_nvme_ctrlr_get_default_io_qpair_opts(fx.ctrlr, &o, sizeof(o));
	CU_ASSERT(o.io_queue_size <= big);
	o.io_queue_size = 32;
	o.io_queue_requests = 16;
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_alloc_io_qpair(fx.ctrlr, &o, &q), -EINVAL);

	/* None of the refusals used up a queue id: the three free ones still allocate, at
	 * the smallest and the largest sizes. */
	{
		struct nvp_nvme_qpair *ok[3] = { NULL };

		CU_ASSERT_EQUAL(fx_qpair_alloc(fx.ctrlr, 2, 0, 0, false, &ok[0]), 0);
		CU_ASSERT_EQUAL(fx_qpair_alloc(fx.ctrlr, big, 0, 0, false, &ok[1]), 0);
		CU_ASSERT_EQUAL(
			fx_qpair_alloc(fx.ctrlr, big, big > 256 ? big : 256, 0, false, &ok[2]), 0);
		for (i = 0; i < 3; i++) {
			if (ok[i] != NULL) {
				CU_ASSERT_EQUAL(fx_io(fx.ns, ok[i], FX_FLUSH, NULL, 0, 0, 0, NULL),
						0);
				CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(ok[i]), 0);
			}
		}
	}
	fx_close(&fx);
}

/* Two-entry queue, many requests: the queued list still works at the smallest size. */
static void
test_smallest_queue(void)
{
	struct nvp_nvme_qpair *q = NULL;
	struct fx_cpl c[8];
	struct fx_ctrlr fx;
	uint8_t *buf;
	unsigned int i;
	uint32_t bs;

	if (fx_open(&fx, "size=4M") != 0) {
		fx_close(&fx);
		return;
	}
	bs = nvp_nvme_ns_get_sector_size(fx.ns);
	CU_ASSERT_EQUAL_FATAL(fx_qpair_alloc(fx.ctrlr, 2, 8, 0, false, &q), 0);
	buf = fx_dma_alloc(8 * bs);
	memset(c, 0, sizeof(c));
	for (i = 0; i < 8; i++) {
		fx_pattern_fill(buf + i * bs, i, 1, bs, 0xb1);
		CU_ASSERT_EQUAL(
			nvp_nvme_ns_cmd_write(fx.ns, q, buf + i * bs, i, 1, fx_cpl_cb, &c[i], 0),
			0);
	}
	for (i = 0; i < 8; i++) {
		CU_ASSERT_EQUAL(fx_poll_until(q, &c[i].calls, 1, FX_WAIT_MS), 0);
		CU_ASSERT_FALSE(nvme_cpl_is_error(&c[i].cpl));
	}
	memset(buf, 0, 8 * bs);
	CU_ASSERT_EQUAL(fx_io(fx.ns, q, FX_READ, buf, 0, 8, 0, NULL), 0);
	CU_ASSERT(fx_pattern_check(buf, 0, 8, bs, 0xb1) < 0);
	nvp_env_dma_free(buf);
	CU_ASSERT_EQUAL(nvp_nvme_ctrlr_free_io_qpair(q), 0);
	fx_close(&fx);
}

static void
test_request_params(void)
{
	struct nvp_emu_stats before = { .info_size = sizeof(before) };
	struct nvp_emu_stats after = { .info_size = sizeof(after) };
	struct fx_ctrlr fx;
	uint8_t *buf;
	uint64_t nsze;
	uint32_t max_blocks, bs;
	struct fx_sgl s;

	if (fx_open(&fx, "size=4M,lba=512") != 0) {
		fx_close(&fx);
		return;
	}
	nsze = nvp_nvme_ns_get_num_sectors(fx.ns);
	bs = nvp_nvme_ns_get_sector_size(fx.ns);
	max_blocks = nvp_nvme_ns_get_max_io_xfer_size(fx.ns) / bs;
	buf = fx_dma_alloc((size_t)(max_blocks + 8) * bs);
	memset(&before, 0, sizeof(before));
	before.info_size = sizeof(before);
	memset(&after, 0, sizeof(after));
	after.info_size = sizeof(after);
	if (fx_is_emu(&fx)) {
		nvp_emu_ctrlr_get_stats(fx.emu, &before);
	}

	/* Zero blocks. */
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 0, 0, 0, NULL), -EINVAL);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, 0, 0, 0, NULL), -EINVAL);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_COMPARE, buf, 0, 0, 0, NULL), -EINVAL);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE_ZEROES, NULL, 0, 0, 0, NULL), -EINVAL);
	/* More than one payload can describe (4 GiB); more than a command carries (65536
	 * blocks, the transfer limit) is split (nvme_io_verify checks the data). */
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 0, UINT32_MAX / bs + 1, 0, NULL),
			-EINVAL);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE_ZEROES, NULL, 0, UINT32_MAX, 0, NULL),
			nsze > UINT32_MAX ? 0 : -ERANGE);
	/* Past the end. */
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, nsze, 1, 0, NULL), -ERANGE);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, nsze + 100000, 1, 0, NULL), -ERANGE);
	/* readv/writev without the SGL callbacks. */
	fx_sgl_init(&s);
	fx_sgl_add(&s, buf, 4096);
	CU_ASSERT(nvp_nvme_ns_cmd_readv(fx.ns, fx.qpair, 0, 8, fx_cpl_cb, &s, 0, NULL, NULL) < 0);
	CU_ASSERT(nvp_nvme_ns_cmd_writev(fx.ns, fx.qpair, 0, 8, fx_cpl_cb, &s, 0, fx_sgl_reset_cb,
					 NULL) < 0);
	fx_poll_for(fx.qpair, 5);
	CU_ASSERT_EQUAL(s.done.calls, 0);

	/* Nothing reached the device; nothing is held. */
	if (fx_is_emu(&fx)) {
		nvp_emu_ctrlr_get_stats(fx.emu, &after);
	}
	CU_ASSERT_EQUAL(after.io_cmds, before.io_cmds);
	CU_ASSERT_EQUAL(nvp_nvme_qpair_get_num_outstanding(fx.qpair), 0);
	/* The largest legal request works; larger ones are split. */
	CU_ASSERT_EQUAL(
		fx_io(fx.ns, fx.qpair, FX_WRITE, buf, nsze - max_blocks, max_blocks, 0, NULL), 0);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_READ, buf, 0, max_blocks + 1, 0, NULL), 0);
	CU_ASSERT_EQUAL(fx_io(fx.ns, fx.qpair, FX_WRITE, buf, 0, max_blocks + 8, 0, NULL), 0);

	/* Admin helpers with impossible arguments. */
	CU_ASSERT(nvp_nvme_ctrlr_identify(fx.ctrlr, NVME_IDENTIFY_CTRLR, 0, NULL, 4096, NULL) < 0);
	CU_ASSERT(nvp_nvme_ctrlr_get_log_page(fx.ctrlr, NVME_LOG_HEALTH_INFORMATION,
					      NVME_GLOBAL_NS_TAG, buf, 0, 0, NULL) < 0);
	CU_ASSERT(nvp_nvme_ctrlr_get_log_page(fx.ctrlr, NVME_LOG_HEALTH_INFORMATION,
					      NVME_GLOBAL_NS_TAG, buf, 6, 0, NULL) < 0);
	CU_ASSERT_FALSE(nvp_nvme_ctrlr_is_failed(fx.ctrlr));

	nvp_env_dma_free(buf);
	fx_close(&fx);
}

/*
 * Option structs grow at the end; opts_size says how much the caller knows. The init
 * functions fill only that much, and the library reads only that much.
 */
static void
test_opts_abi(void)
{
	union {
		struct nvp_nvme_ctrlr_opts o;
		uint8_t raw[sizeof(struct nvp_nvme_ctrlr_opts) + 16];
	} c;
	union {
		struct nvp_nvme_io_qpair_opts o;
		uint8_t raw[sizeof(struct nvp_nvme_io_qpair_opts) + 16];
	} q;
	union {
		struct nvp_emu_opts o;
		uint8_t raw[sizeof(struct nvp_emu_opts) + 16];
	} e;
	struct nvp_nvme_io_qpair_opts qo;
	struct nvp_nvme_ctrlr_opts full;
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	size_t small, i;
	struct fx_ctrlr fx;

	/* Defaults as documented. */
	nvp_nvme_ctrlr_opts_init(&full, sizeof(full));
	CU_ASSERT_EQUAL(full.opts_size, sizeof(full));
	CU_ASSERT_EQUAL(full.num_io_queues, 64);
	CU_ASSERT_EQUAL(full.io_queue_size, 256);
	CU_ASSERT_EQUAL(full.io_queue_requests, 1024);
	CU_ASSERT_EQUAL(full.admin_queue_size, 32);
	CU_ASSERT_EQUAL(full.admin_timeout_ms, 10000);
	CU_ASSERT_EQUAL(full.io_timeout_us, 30u * 1000 * 1000);
	CU_ASSERT_EQUAL(full.max_io_size, 2u << 20);
	CU_ASSERT_FALSE(full.no_shn_notification);

	/* An older caller that knows only the first two fields. */
	small = offsetof(struct nvp_nvme_ctrlr_opts, num_io_queues) + sizeof(uint32_t);
	memset(&c, 0xab, sizeof(c));
	nvp_nvme_ctrlr_opts_init(&c.o, small);
	CU_ASSERT_EQUAL(c.o.opts_size, small);
	CU_ASSERT_EQUAL(c.o.num_io_queues, 64);
	for (i = small; i < sizeof(c.raw); i++) {
		if (c.raw[i] != 0xab) {
			CU_FAIL("nvp_nvme_ctrlr_opts_init wrote past opts_size");
			break;
		}
	}
	/* ... and connects with it: the rest are defaults. */
	CU_ASSERT_EQUAL(fx_connect_str("trtype:emu name:abi0 size:4M", &c.o, &ctrlr), 0);
	if (ctrlr != NULL) {
		CU_ASSERT_EQUAL(nvp_nvme_ctrlr_get_max_xfer_size(ctrlr), 128u * 1024);
		CU_ASSERT_EQUAL(nvp_nvme_detach(ctrlr), 0);
	}

	small = offsetof(struct nvp_nvme_io_qpair_opts, io_queue_size) + sizeof(uint32_t);
	if (fx_open(&fx, "size=4M") == 0) {
		nvp_nvme_ctrlr_get_default_io_qpair_opts(fx.ctrlr, &qo, sizeof(qo));
		CU_ASSERT_EQUAL(qo.io_queue_size, 256);
		CU_ASSERT_EQUAL(qo.io_queue_requests, 1024);
		CU_ASSERT_EQUAL(qo.timeout_us, 30u * 1000 * 1000);
		CU_ASSERT_TRUE(qo.delay_doorbell); /* batched by default (issue 10) */
		memset(&q, 0xab, sizeof(q));
		nvp_nvme_ctrlr_get_default_io_qpair_opts(fx.ctrlr, &q.o, small);
		CU_ASSERT_EQUAL(q.o.io_queue_size, 256);
		for (i = small; i < sizeof(q.raw); i++) {
			if (q.raw[i] != 0xab) {
				CU_FAIL("get_default_io_qpair_opts wrote past opts_size");
				break;
			}
		}
	}
	fx_close(&fx);

	small = offsetof(struct nvp_emu_opts, nn) + sizeof(uint32_t);
	memset(&e, 0xab, sizeof(e));
	nvp_emu_opts_init(&e.o, small);
	CU_ASSERT_EQUAL(e.o.nn, 1);
	for (i = small; i < sizeof(e.raw); i++) {
		if (e.raw[i] != 0xab) {
			CU_FAIL("nvp_emu_opts_init wrote past opts_size");
			break;
		}
	}
}

/* Status strings for people. */
static void
test_status_strings(void)
{
	struct nvme_cpl cpl;
	char buf[128];

	CU_ASSERT_STRING_EQUAL(nvp_nvme_status_string(NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD),
			       "Invalid Field in Command");
	CU_ASSERT_STRING_EQUAL(nvp_nvme_status_string(NVME_SCT_GENERIC, 0xfe), "Unknown");
	CU_ASSERT_PTR_NOT_NULL(nvp_nvme_sct_string(NVME_SCT_MEDIA_ERROR));
	CU_ASSERT_PTR_NOT_NULL(nvp_nvme_sct_string(6));
	memset(&cpl, 0, sizeof(cpl));
	cpl.status.sct = NVME_SCT_GENERIC;
	cpl.status.sc = NVME_SC_INVALID_FIELD;
	CU_ASSERT_PTR_EQUAL(nvp_nvme_cpl_fmt(buf, sizeof(buf), &cpl), buf);
	CU_ASSERT_STRING_EQUAL(buf, "Invalid Field in Command (sct 0x0, sc 0x2)");
	/* A tiny buffer is still terminated. */
	nvp_nvme_cpl_fmt(buf, 5, &cpl);
	CU_ASSERT(strlen(buf) <= 4);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "trid_parse_valid", test_trid_parse_valid },
		{ "trid_parse_invalid", test_trid_parse_invalid },
		{ "connect_invalid", test_connect_invalid },
		{ "emu_trid_options_invalid", test_emu_trid_options_invalid },
		{ "emu_opts_parse", test_emu_opts_parse },
		{ "emu_create_invalid", test_emu_create_invalid },
		{ "qpair_sizes", test_qpair_sizes },
		{ "smallest_queue", test_smallest_queue },
		{ "request_params", test_request_params },
		{ "opts_abi", test_opts_abi },
		{ "status_strings", test_status_strings },
	};

	return fx_main(argc, argv, "nvme_bad_input", tests, NVP_COUNTOF(tests));
}

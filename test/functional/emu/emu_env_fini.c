/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A process that ends with I/O outstanding: nvp_env_fini() with a software controller
 * still working on reads into DMA buffers, without detaching or destroying anything (what
 * a program stopped by a failed assertion does). The controller's thread must stop before
 * the memory goes: before it did, the reads completing into freed memory crashed the
 * process at exit. Runs the controller's reads slow (50 ms), sends them, polls a little,
 * ends the environment, then waits longer than the reads take: any DMA after the memory
 * is gone is a crash (or, under ASan, a report).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "nvpoll/emu.h"
#include "nvpoll/env.h"
#include "nvpoll/nvme.h"
#include "nvpoll/util.h"

#define READS 16u

static unsigned int g_done;

static void
read_done(void *arg, const struct nvme_cpl *cpl)
{
	(void)arg;
	(void)cpl;
	g_done++;
}

static int
fail(const char *what, int rc)
{
	fprintf(stderr, "FAIL: %s: %s\n", what, strerror(rc < 0 ? -rc : rc));
	return 1;
}

int
main(void)
{
	struct nvp_env_opts eo;
	struct nvp_emu_opts mo;
	struct nvp_emu_ctrlr *emu;
	struct nvp_nvme_transport_id trid;
	struct nvp_nvme_ctrlr *ctrlr;
	struct nvp_nvme_qpair *qpair;
	struct nvp_nvme_ns *ns;
	char str[128];
	void *buf[READS];
	int rc;

#if defined(__SANITIZE_ADDRESS__)
	/* what such a process leaves allocated is the point here, not a leak to report */
	__lsan_disable();
#endif
	nvp_env_opts_init(&eo, sizeof(eo));
	eo.name = "emu_env_fini";
	eo.no_pci = true;
	eo.no_huge = true;
	eo.quiet = true;
	rc = nvp_env_init(&eo);
	if (rc != 0) {
		return fail("nvp_env_init", rc);
	}
	nvp_emu_opts_init(&mo, sizeof(mo));
	nvp_strlcpy(mo.name, "fini0", sizeof(mo.name));
	rc = nvp_emu_opts_parse(&mo, "size=16M,read_us=50000,channels=1", str, sizeof(str));
	if (rc == 0) {
		rc = nvp_emu_ctrlr_create(&mo, &emu);
	}
	if (rc != 0) {
		return fail("software controller", rc);
	}
	snprintf(str, sizeof(str), "trtype:PCIe traddr:%s", nvp_emu_ctrlr_get_traddr(emu));
	rc = nvp_nvme_transport_id_parse(&trid, str);
	if (rc == 0) {
		rc = nvp_nvme_connect(&trid, NULL, &ctrlr);
	}
	if (rc == 0) {
		rc = nvp_nvme_ctrlr_alloc_io_qpair(ctrlr, NULL, &qpair);
	}
	if (rc != 0) {
		return fail("attach", rc);
	}
	ns = nvp_nvme_ctrlr_get_ns(ctrlr, 1);
	for (unsigned int i = 0; i < READS; i++) {
		buf[i] = nvp_env_dma_zmalloc(64 * 1024, 4096, NULL);
		if (buf[i] == NULL) {
			return fail("DMA buffer", -ENOMEM);
		}
		rc = nvp_nvme_ns_cmd_read(ns, qpair, buf[i], i * 128, 128, read_done, NULL, 0);
		if (rc != 0) {
			return fail("read", rc);
		}
	}
	nvp_nvme_qpair_process_completions(qpair, 0);
	/* one channel, 50 ms a read: most are still in flight */
	nvp_env_fini();
	usleep(READS * 50 * 1000 + 200 * 1000);
	printf("environment ended with %u of %u reads completed; no DMA after it\n", g_done, READS);
	return 0;
}

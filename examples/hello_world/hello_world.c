/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hello_world: the smallest complete nvpoll program.
 *
 * It attaches one NVMe controller (by default a software controller made on the spot),
 * prints what the controller says about itself and its namespaces, then writes
 * "Hello world!\n" to LBA 0 of the first namespace and reads it back, polling for each
 * completion on its own I/O queue pair.
 *
 *   hello_world                                  # software controller "emu0"
 *   hello_world -r "trtype:emu name:emu0 nn:2 lba:4096"
 *   hello_world -r "trtype:PCIe traddr:0000:01:00.0"
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvpoll/env.h"
#include "nvpoll/nvme.h"
#include "nvpoll/util.h"

#define DEFAULT_TRID "trtype:emu name:emu0"
#define HELLO "Hello world!\n"

/* Exit statuses: 1 = the run failed, 2 = the command line was wrong. */
#define EXIT_USAGE 2

/* Lets a completion callback tell the polling loop that it ran, and how it went. */
struct io_wait {
	bool done;
	struct nvme_cpl cpl;
};

static void
io_done(void *cb_arg, const struct nvme_cpl *cpl)
{
	struct io_wait *wait = cb_arg;

	wait->cpl = *cpl;
	wait->done = true;
}

/*
 * Poll the qpair until the request completes. There are no interrupts in nvpoll: the
 * thread that owns a qpair finds its completions by calling process_completions(). A
 * completion that does not come is ended by the driver's request timeout (an Abort, then
 * the request completed as aborted); until then, say once a few seconds what we wait for.
 */
static int
wait_for_completion(struct nvp_nvme_qpair *qpair, struct io_wait *wait, const char *what)
{
	uint64_t hz = nvp_env_get_ticks_hz(), t0 = nvp_env_get_ticks(), next_note = t0 + hz;
	struct nvp_nvme_ctrlr_opts copts;
	char status[128];

	nvp_nvme_ctrlr_opts_init(&copts, sizeof(copts));
	while (!wait->done) {
		int32_t rc = nvp_nvme_qpair_process_completions(qpair, 0);
		uint64_t now = nvp_env_get_ticks();

		if (rc < 0) {
			fprintf(stderr, "%s: controller failed (%s)\n", what, strerror(-rc));
			return rc;
		}
		if (now >= next_note) {
			fprintf(stderr,
				"%s: no completion after %.0f s; still waiting: the driver aborts "
				"the request when its %.0f s timeout passes\n",
				what, (double)(now - t0) / (double)hz,
				(double)copts.io_timeout_us / 1e6);
			next_note = now + 5 * hz;
		}
	}
	if (nvme_cpl_is_error(&wait->cpl)) {
		fprintf(stderr, "%s failed: %s\n", what,
			nvp_nvme_cpl_fmt(status, sizeof(status), &wait->cpl));
		return -EIO;
	}
	return 0;
}

/* Identify strings are space padded, not NUL terminated: print only the text. */
static void
print_field(const char *label, const char *field, size_t len)
{
	printf("  %-14s %.*s\n", label, (int)nvp_strpadlen(field, len), field);
}

static void
print_controller(struct nvp_nvme_ctrlr *ctrlr)
{
	const struct nvme_ctrlr_data *cdata = nvp_nvme_ctrlr_get_data(ctrlr);
	union nvme_vs_register vs = nvp_nvme_ctrlr_get_regs_vs(ctrlr);
	char trid[NVP_NVME_TRARGS_MAX + 128];
	uint32_t nsid;

	if (nvp_nvme_transport_id_fmt(trid, sizeof(trid), nvp_nvme_ctrlr_get_transport_id(ctrlr))) {
		trid[0] = '\0';
	}
	printf("Attached to %s\n", trid);
	print_field("Model:", cdata->mn, sizeof(cdata->mn));
	print_field("Serial:", cdata->sn, sizeof(cdata->sn));
	print_field("Firmware:", cdata->fr, sizeof(cdata->fr));
	printf("  %-14s %u.%u\n", "NVMe version:", vs.bits.mjr, vs.bits.mnr);

	for (nsid = nvp_nvme_ctrlr_get_first_active_ns(ctrlr); nsid != 0;
	     nsid = nvp_nvme_ctrlr_get_next_active_ns(ctrlr, nsid)) {
		struct nvp_nvme_ns *ns = nvp_nvme_ctrlr_get_ns(ctrlr, nsid);

		printf("  Namespace %-4u %" PRIu64 " MiB, %u-byte sectors, %" PRIu64 " sectors\n",
		       nsid, nvp_nvme_ns_get_size(ns) >> 20, nvp_nvme_ns_get_sector_size(ns),
		       nvp_nvme_ns_get_num_sectors(ns));
	}
}

/* Write HELLO to LBA 0, read it back into a second buffer, print it and compare. */
static int
hello_world(struct nvp_nvme_ctrlr *ctrlr, struct nvp_nvme_ns *ns)
{
	uint32_t sector_size = nvp_nvme_ns_get_sector_size(ns);
	struct nvp_nvme_io_qpair_opts qopts;
	struct nvp_nvme_qpair *qpair = NULL;
	struct io_wait wait;
	char *wbuf = NULL, *rbuf = NULL;
	int rc;

	/* One I/O queue pair with the controller's default options; it belongs to this thread. */
	nvp_nvme_ctrlr_get_default_io_qpair_opts(ctrlr, &qopts, sizeof(qopts));
	rc = nvp_nvme_ctrlr_alloc_io_qpair(ctrlr, &qopts, &qpair);
	if (rc != 0) {
		fprintf(stderr, "cannot allocate an I/O queue pair: %s\n", strerror(-rc));
		return rc;
	}

	/* Data buffers must be DMA memory: the controller reads and writes them itself. */
	wbuf = nvp_env_dma_zmalloc(sector_size, 4096, NULL);
	rbuf = nvp_env_dma_zmalloc(sector_size, 4096, NULL);
	if (wbuf == NULL || rbuf == NULL) {
		fprintf(stderr, "cannot allocate %u bytes of DMA memory\n", sector_size);
		rc = -ENOMEM;
		goto out;
	}
	memcpy(wbuf, HELLO, sizeof(HELLO));

	memset(&wait, 0, sizeof(wait));
	rc = nvp_nvme_ns_cmd_write(ns, qpair, wbuf, 0, 1, io_done, &wait, 0);
	if (rc != 0) {
		fprintf(stderr, "cannot submit the write: %s\n", strerror(-rc));
		goto out;
	}
	rc = wait_for_completion(qpair, &wait, "write");
	if (rc != 0) {
		goto out;
	}

	memset(&wait, 0, sizeof(wait));
	rc = nvp_nvme_ns_cmd_read(ns, qpair, rbuf, 0, 1, io_done, &wait, 0);
	if (rc != 0) {
		fprintf(stderr, "cannot submit the read: %s\n", strerror(-rc));
		goto out;
	}
	rc = wait_for_completion(qpair, &wait, "read");
	if (rc != 0) {
		goto out;
	}

	printf("Read back from namespace %u, LBA 0: %s", nvp_nvme_ns_get_id(ns), rbuf);
	if (memcmp(wbuf, rbuf, sector_size) != 0) {
		fprintf(stderr, "data read back differs from data written\n");
		rc = -EIO;
	}

out:
	nvp_env_dma_free(rbuf);
	nvp_env_dma_free(wbuf);
	nvp_nvme_ctrlr_free_io_qpair(qpair);
	return rc;
}

static void
usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [-r TRID] [-h|--help]\n"
		"Write \"Hello world!\" to an NVMe namespace and read it back.\n\n"
		"  -r TRID     controller to attach (default \"%s\"), e.g.\n"
		"              \"trtype:emu name:emu0 nn:2 lba:512/4096\" (software controller)\n"
		"              \"trtype:PCIe traddr:0000:01:00.0\"      (a PCI function)\n"
		"  -h, --help  this help\n"
		"Exit status: 0 the data read back matches, 1 a failure, 2 a usage error.\n",
		prog, DEFAULT_TRID);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct nvp_nvme_transport_id trid;
	struct nvp_env_opts env_opts;
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	struct nvp_nvme_ns *ns;
	const char *trid_str = DEFAULT_TRID;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "r:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r':
			trid_str = optarg;
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			usage(stderr, argv[0]);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
		usage(stderr, argv[0]);
		return EXIT_USAGE;
	}
	if (nvp_nvme_transport_id_parse(&trid, trid_str) != 0) {
		fprintf(stderr, "%s: invalid transport ID \"%s\" (try -h)\n", argv[0], trid_str);
		return EXIT_USAGE;
	}

	/* The environment provides DMA memory and the PCI functions (real or virtual). */
	nvp_env_opts_init(&env_opts, sizeof(env_opts));
	env_opts.name = "hello_world";
	rc = nvp_env_init(&env_opts);
	if (rc != 0) {
		fprintf(stderr, "cannot initialise the environment: %s\n", strerror(-rc));
		return 1;
	}

	rc = nvp_nvme_connect(&trid, NULL, &ctrlr);
	if (rc != 0) {
		fprintf(stderr, "cannot attach to \"%s\": %s\n", trid_str, strerror(-rc));
		nvp_env_fini();
		return 1;
	}
	print_controller(ctrlr);

	ns = nvp_nvme_ctrlr_get_ns(ctrlr, nvp_nvme_ctrlr_get_first_active_ns(ctrlr));
	if (ns == NULL) {
		fprintf(stderr, "the controller has no active namespace\n");
		rc = -ENODEV;
	} else {
		rc = hello_world(ctrlr, ns);
	}

	nvp_nvme_detach(ctrlr);
	nvp_env_fini();
	if (rc == 0) {
		printf("Hello world test passed.\n");
	}
	return rc == 0 ? 0 : 1;
}

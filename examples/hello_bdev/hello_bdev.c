/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hello_bdev: the smallest program using the bdev layer.
 *
 * It makes a block device — the namespaces of an NVMe controller (by default a software
 * controller made on the spot, bdev "emu0n1") or a RAM disk (--malloc) — opens it, makes
 * an I/O channel for this thread, writes "Hello world!\n" to block 0 and reads it back,
 * polling the channel for each completion, and prints the bdev's I/O statistics.
 *
 *   hello_bdev                                     # software controller, bdev emu0n1
 *   hello_bdev -r "trtype:emu name:emuX"            # software controller emuX, bdev emuXn1
 *   hello_bdev -r "trtype:PCIe traddr:0000:01:00.0" # a real controller, bdev nvme0n1
 *   hello_bdev --malloc                            # RAM disk "malloc0"
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvpoll/bdev.h"
#include "nvpoll/env.h"
#include "nvpoll/util.h"

#define DEFAULT_TRID "trtype:emu name:emu0"
#define HELLO "Hello world!\n"
#define EXIT_USAGE 2

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

/* No interrupts: the thread that owns a channel finds its completions by polling it. */
static int
wait_for(struct nvp_bdev_channel *ch, struct io_wait *wait, const char *what)
{
	char status[128];

	while (!wait->done) {
		nvp_bdev_channel_poll(ch);
	}
	if (nvme_cpl_is_error(&wait->cpl)) {
		fprintf(stderr, "%s failed: %s\n", what,
			nvp_nvme_cpl_fmt(status, sizeof(status), &wait->cpl));
		return -EIO;
	}
	return 0;
}

static void
on_event(enum nvp_bdev_event_type type, struct nvp_bdev *bdev, void *ctx)
{
	(void)ctx;
	if (type == NVP_BDEV_EVENT_REMOVE) {
		fprintf(stderr, "bdev %s was removed\n", nvp_bdev_get_name(bdev));
	}
}

/*
 * The name of the controller at @tr, which names its bdevs ("<name>n1"): a software
 * controller's own (name:X), else emu0 or nvme0.
 */
static const char *
ctrlr_name(const struct nvp_nvme_transport_id *tr)
{
	if (tr->trtype != NVP_NVME_TRANSPORT_VDEV) {
		return "nvme0";
	}
	return tr->name[0] != '\0' ? tr->name : "emu0";
}

/* Make the bdev: the first namespace of controller @ctrlr at @trid, or a RAM disk. */
static int
make_bdev(const char *trid, const char *ctrlr, bool use_malloc, char *name, size_t len)
{
	struct nvp_bdev_malloc_opts mo;
	struct nvp_bdev_nvme_opts no;
	struct nvp_bdev *bdev;
	uint32_t count = 0;
	int rc;

	if (use_malloc) {
		nvp_bdev_malloc_opts_init(&mo, sizeof(mo));
		mo.name = "malloc0";
		mo.num_blocks = 2048;
		mo.block_size = 512;
		rc = nvp_bdev_malloc_create(&mo, &bdev);
	} else {
		nvp_bdev_nvme_opts_init(&no, sizeof(no));
		no.name = ctrlr;
		rc = nvp_bdev_nvme_attach(trid, &no, &bdev, 1, &count);
	}
	if (rc == 0) {
		nvp_strlcpy(name, nvp_bdev_get_name(bdev), len);
	}
	return rc;
}

static int
hello(struct nvp_bdev_desc *desc, struct nvp_bdev_channel *ch)
{
	struct nvp_bdev *bdev = nvp_bdev_desc_get_bdev(desc);
	uint32_t bs = nvp_bdev_get_block_size(bdev);
	struct io_wait wait = { 0 };
	char *buf;
	int rc;

	/* DMA memory: what an NVMe device can read from and write to */
	buf = nvp_env_dma_zmalloc(bs, 4096, NULL);
	if (buf == NULL) {
		fprintf(stderr, "no DMA memory for a %u-byte block\n", bs);
		return -ENOMEM;
	}
	memcpy(buf, HELLO, sizeof(HELLO));
	rc = nvp_bdev_write_blocks(desc, ch, buf, 0, 1, 0, io_done, &wait);
	if (rc == 0) {
		rc = wait_for(ch, &wait, "write");
	}
	if (rc == 0) {
		memset(buf, 0, bs);
		wait.done = false;
		rc = nvp_bdev_read_blocks(desc, ch, buf, 0, 1, io_done, &wait);
	}
	if (rc == 0) {
		rc = wait_for(ch, &wait, "read");
	}
	if (rc == 0) {
		printf("read back from %s: %s", nvp_bdev_get_name(bdev), buf);
	}
	nvp_env_dma_free(buf);
	return rc;
}

static void
print_stats(struct nvp_bdev *bdev)
{
	struct nvp_bdev_stats *st = calloc(1, sizeof(*st));
	int t;

	if (st != NULL) {
		st->info_size = sizeof(*st);
	}
	if (st == NULL || nvp_bdev_get_stats(bdev, st) != 0) {
		free(st);
		return;
	}
	for (t = 0; t < NVP_BDEV_NUM_IO_TYPES; t++) {
		if (st->op[t].ios != 0) {
			printf("  %-6s %" PRIu64 " I/O, %" PRIu64 " bytes, device time %.1f us\n",
			       nvp_bdev_io_type_name(t), st->op[t].ios, st->op[t].bytes,
			       nvp_histogram_mean(&st->op[t].device) * 1e6 / (double)st->ticks_hz);
		}
	}
	free(st);
}

static int
run(const char *trid, const char *ctrlr, bool use_malloc)
{
	struct nvp_bdev_channel *ch = NULL;
	struct nvp_bdev_desc *desc = NULL;
	char name[NVP_BDEV_NAME_MAX];
	int rc;

	rc = make_bdev(trid, ctrlr, use_malloc, name, sizeof(name));
	if (rc != 0) {
		fprintf(stderr, "cannot make the bdev: %s\n", strerror(-rc));
		return rc;
	}
	rc = nvp_bdev_open(name, true, on_event, NULL, &desc);
	if (rc == 0) {
		rc = nvp_bdev_channel_create(desc, NULL, &ch);
	}
	if (rc == 0) {
		rc = hello(desc, ch);
		print_stats(nvp_bdev_desc_get_bdev(desc));
		nvp_bdev_channel_destroy(ch);
	} else {
		fprintf(stderr, "cannot open %s: %s\n", name, strerror(-rc));
	}
	if (desc != NULL) {
		nvp_bdev_close(desc);
	}
	nvp_bdev_fini();
	return rc;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: hello_bdev [-r TRID | --malloc]\n"
		"  -r TRID     NVMe controller (default \"%s\")\n"
		"  --malloc    a RAM disk instead\n"
		"  -h, --help  this help\n"
		"Exit status: 0 the block read back, 1 a failure, 2 a usage error.\n",
		DEFAULT_TRID);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "malloc", no_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *trid = DEFAULT_TRID;
	struct nvp_nvme_transport_id tr;
	struct nvp_env_opts eo;
	bool use_malloc = false;
	int c, rc;

	while ((c = getopt_long(argc, argv, "r:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			trid = optarg;
			break;
		case 'm':
			use_malloc = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!use_malloc && nvp_nvme_transport_id_parse(&tr, trid) != 0) {
		fprintf(stderr, "hello_bdev: bad transport ID \"%s\"\n", trid);
		return EXIT_USAGE;
	}
	nvp_env_opts_init(&eo, sizeof(eo));
	eo.name = "hello_bdev";
	eo.no_pci = strstr(trid, "PCIe") == NULL;
	rc = nvp_env_init(&eo);
	if (rc != 0) {
		fprintf(stderr, "env init failed: %s\n", strerror(-rc));
		return 1;
	}
	rc = run(trid, use_malloc ? NULL : ctrlr_name(&tr), use_malloc);
	nvp_env_fini();
	return rc == 0 ? 0 : 1;
}

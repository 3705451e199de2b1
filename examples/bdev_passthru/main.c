/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bdev_passthru: stack the passthru module (passthru.c) on a bdev from a configuration,
 * write a pattern through it, read it back, and print what the module counted.
 *
 *   bdev_passthru                                   a malloc bdev as the base
 *   bdev_passthru -c "nvme:name=emu0,trtype=emu" -b emu0n1 -n 256
 *   bdev_passthru -c bdev.json -b Malloc0
 *
 * Exit status: 0 data and counts as expected, 1 a failure, 2 a usage error (a bad option,
 * or an error in the configuration itself: malformed, a bdev name given twice, ...).
 * Built in the tree and, by test/functional/examples, from the installed headers and
 * libnvpoll with pkg-config only.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvpoll/bdev.h>
#include <nvpoll/env.h>

#include "passthru.h"

#define IO_BLOCKS 8u
#define QD 4u

struct run {
	struct nvp_bdev_desc *desc;
	struct nvp_bdev_channel *ch;
	uint32_t bs;
	uint32_t done;
	uint32_t errors;
};

static void
io_done(void *arg, const struct nvme_cpl *cpl)
{
	struct run *r = arg;

	r->done++;
	r->errors += nvme_cpl_is_error(cpl) ? 1 : 0;
}

static void
ignore_event(enum nvp_bdev_event_type type, struct nvp_bdev *bdev, void *ctx)
{
	(void)type;
	(void)bdev;
	(void)ctx;
}

static void
fill(uint8_t *buf, size_t len, uint64_t seed)
{
	size_t i;

	for (i = 0; i < len; i++) {
		buf[i] = (uint8_t)((seed * 131 + i * 7) ^ (i >> 8));
	}
}

/* Poll until @want completions (or ten seconds). */
static int
wait_for(struct run *r, uint32_t want)
{
	time_t end = time(NULL) + 10;

	while (r->done < want && time(NULL) <= end) {
		nvp_bdev_channel_poll(r->ch);
	}
	return r->done >= want ? 0 : -ETIMEDOUT;
}

/* @n I/Os of IO_BLOCKS blocks at QD, writes or reads into @bufs[i % QD]. */
static int
pass(struct run *r, uint8_t **bufs, uint32_t n, bool write)
{
	uint32_t i, base = r->done;
	int rc;

	for (i = 0; i < n; i++) {
		uint8_t *b = bufs[i % QD];
		uint64_t lba = (uint64_t)i * IO_BLOCKS;

		if (i >= QD && wait_for(r, base + i - QD + 1) != 0) {
			return -ETIMEDOUT;
		}
		if (write) {
			fill(b, (size_t)IO_BLOCKS * r->bs, i);
			rc = nvp_bdev_write_blocks(r->desc, r->ch, b, lba, IO_BLOCKS, 0, io_done,
						   r);
		} else {
			rc = nvp_bdev_read_blocks(r->desc, r->ch, b, lba, IO_BLOCKS, io_done, r);
		}
		if (rc != 0) {
			return rc;
		}
		/* check a read once its slot is reused or at the end */
		if (!write && (i + 1 == n || (i + 1) % QD == 0)) {
			uint32_t j, first = i + 1 - ((i % QD) + 1);
			uint8_t *want = malloc((size_t)IO_BLOCKS * r->bs);

			if (want == NULL || wait_for(r, base + i + 1) != 0) {
				free(want);
				return -ETIMEDOUT;
			}
			for (j = first; j <= i; j++) {
				fill(want, (size_t)IO_BLOCKS * r->bs, j);
				if (memcmp(want, bufs[j % QD], (size_t)IO_BLOCKS * r->bs) != 0) {
					fprintf(stderr,
						"bdev_passthru: data mismatch at block %u\n",
						j * IO_BLOCKS);
					r->errors++;
				}
			}
			free(want);
		}
	}
	return wait_for(r, base + n);
}

static int
run_io(const char *name, uint32_t n)
{
	struct run r = { 0 };
	uint8_t *bufs[QD] = { NULL };
	uint32_t i;
	int rc;

	rc = nvp_bdev_open(name, true, ignore_event, NULL, &r.desc);
	if (rc != 0) {
		return rc;
	}
	r.bs = nvp_bdev_get_block_size(nvp_bdev_desc_get_bdev(r.desc));
	if ((uint64_t)n * IO_BLOCKS > nvp_bdev_get_num_blocks(nvp_bdev_desc_get_bdev(r.desc))) {
		fprintf(stderr, "bdev_passthru: -n %u needs %u blocks; the bdev has fewer\n", n,
			n * IO_BLOCKS);
		nvp_bdev_close(r.desc);
		return -EINVAL;
	}
	rc = nvp_bdev_channel_create(r.desc, NULL, &r.ch);
	for (i = 0; i < QD && rc == 0; i++) {
		bufs[i] = nvp_env_dma_malloc((size_t)IO_BLOCKS * r.bs, 4096, NULL);
		rc = bufs[i] == NULL ? -ENOMEM : 0;
	}
	if (rc == 0) {
		rc = pass(&r, bufs, n, true);
	}
	if (rc == 0) {
		rc = pass(&r, bufs, n, false);
	}
	if (rc == 0 && r.errors != 0) {
		rc = -EIO;
	}
	for (i = 0; i < QD; i++) {
		nvp_env_dma_free(bufs[i]);
	}
	if (r.ch != NULL) {
		nvp_bdev_channel_destroy(r.ch);
	}
	nvp_bdev_close(r.desc);
	return rc;
}

static int
usage(FILE *f, int status)
{
	fprintf(f, "usage: bdev_passthru [-c CONFIG] [-b BASE] [-n IOS]\n"
		   "  -c CONFIG   JSON file, JSON text or one-line bdev configuration "
		   "(default: malloc:name=Malloc0,num_blocks=4096)\n"
		   "  -b BASE     the bdev to stack on (default: the first one)\n"
		   "  -n IOS      writes, then as many reads, of 8 blocks each (default 64)\n"
		   "  -h, --help  this help\n"
		   "Exit status: 0 data and counts as expected, 1 a failure, 2 a usage error "
		   "(the configuration's own errors too).\n");
	return status;
}

static int
report(uint32_t n)
{
	struct passthru_counts c;
	int t;

	if (passthru_get_counts("pt0", &c) != 0) {
		return 1;
	}
	printf("passthru pt0 counted:\n");
	for (t = 0; t < NVP_BDEV_NUM_IO_TYPES; t++) {
		if (c.ios[t] != 0) {
			printf("  %-12s %8" PRIu64 " I/Os %12" PRIu64 " bytes\n",
			       nvp_bdev_io_type_name((enum nvp_bdev_io_type)t), c.ios[t],
			       c.bytes[t]);
		}
	}
	printf("  errors       %8" PRIu64 "\n", c.errors);
	if (c.ios[NVP_BDEV_IO_READ] != n || c.ios[NVP_BDEV_IO_WRITE] != n || c.errors != 0) {
		fprintf(stderr, "bdev_passthru: expected %u reads and %u writes\n", n, n);
		return 1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cfg = "malloc:name=Malloc0,num_blocks=4096", *base = NULL;
	struct nvp_env_opts env;
	unsigned long n = 64;
	char *end;
	int c, rc, status = 1;

	while ((c = getopt_long(argc, argv, "c:b:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cfg = optarg;
			break;
		case 'b':
			base = optarg;
			break;
		case 'n':
			n = strtoul(optarg, &end, 10);
			if (*end != '\0' || n == 0 || n > 1000000) {
				fprintf(stderr, "bdev_passthru: -n wants 1 .. 1000000\n");
				return 2;
			}
			break;
		case 'h':
			return usage(stdout, 0);
		default:
			return usage(stderr, 2);
		}
	}
	if (optind != argc) {
		return usage(stderr, 2);
	}
	nvp_env_opts_init(&env, sizeof(env));
	env.name = "bdev_passthru";
	env.quiet = true;
	env.no_huge = true;
	if (nvp_env_init(&env) != 0) {
		return 1;
	}
	rc = nvp_bdev_load_config(cfg);
	if (rc != 0) {
		/* the loader said what and where; a wrong configuration is a usage error */
		status = nvp_bdev_config_error_is_usage(rc) ? 2 : 1;
		goto out;
	}
	if (base == NULL && nvp_bdev_first() != NULL) {
		base = nvp_bdev_get_name(nvp_bdev_first());
	}
	rc = passthru_create("pt0", base != NULL ? base : "(none)");
	if (rc != 0) {
		fprintf(stderr, "bdev_passthru: cannot stack on '%s': %s\n", base, strerror(-rc));
		goto out;
	}
	printf("pt0 on %s (%s)\n", base, nvp_bdev_get_module_name(nvp_bdev_get_by_name(base)));
	rc = run_io("pt0", (uint32_t)n);
	if (rc != 0) {
		fprintf(stderr, "bdev_passthru: I/O through pt0 failed: %s\n", strerror(-rc));
	} else {
		status = report((uint32_t)n);
	}
	passthru_delete("pt0");
out:
	nvp_bdev_fini();
	nvp_env_fini();
	return status;
}

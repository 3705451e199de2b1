/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_perf command line, with spdk_nvme_perf's flags. Every bad value prints what was
 * wrong, the accepted values and the --help hint; the caller exits 2.
 */
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include "nvpoll/emu.h"
#include "nvp_config.h"
#include "nvpoll/util.h"

#include "perf.h"

enum {
	OPT_NO_HUGE = 256,
	OPT_JSON,
	OPT_PLOT,
	OPT_IO_TIMEOUT,
	OPT_VERSION,
	OPT_JSON_CONFIG,
	OPT_POLL,
	OPT_THINK_NS,
	OPT_JOB,
};

static const struct option g_long_opts[] = {
	{ "no-huge", no_argument, NULL, OPT_NO_HUGE },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "plot", required_argument, NULL, OPT_PLOT },
	{ "io-timeout", required_argument, NULL, OPT_IO_TIMEOUT },
	{ "think-ns", required_argument, NULL, OPT_THINK_NS },
	{ "json-config", required_argument, NULL, OPT_JSON_CONFIG },
	{ "bdev-config", required_argument, NULL, PERF_OPT_BDEV_CONFIG },
	{ "poll", required_argument, NULL, OPT_POLL },
	{ "job", required_argument, NULL, OPT_JOB },
	{ "sched", required_argument, NULL, PERF_OPT_SCHED },
	{ "wbt", required_argument, NULL, PERF_OPT_WBT },
	{ "tenant", required_argument, NULL, PERF_OPT_TENANT },
	{ "write-hint", required_argument, NULL, PERF_OPT_WRITE_HINT },
	{ "write-class", required_argument, NULL, PERF_OPT_WRITE_CLASS },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static void
usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [options]\n"
		"Measure IOPS, bandwidth and latency of NVMe namespaces with polled I/O queues,\n"
		"as spdk_nvme_perf does. Default target: the software controller \"%s\".\n\n"
		"  -q DEPTH     I/O requests outstanding per namespace per I/O thread (default 32)\n"
		"  -o SIZE      I/O size in bytes, k/M suffixes; a multiple of the sector size\n"
		"               (default 4096)\n"
		"  -w PATTERN   read, write, randread, randwrite, rw, randrw (default randread)\n"
		"  -M PERCENT   reads in a rw/randrw mix, 0..100 (default 50)\n"
		"  -t SECONDS   run time, 1..86400 (default 5)\n"
		"  -a SECONDS   warm-up: run this long first and discard it, 0..3600 (default 0)\n"
		"  -c MASK      core mask: one pinned I/O thread per core, each with its own\n"
		"               queue pairs (default 0x1; the main thread is the first core's)\n"
		"  -r TRID      controller to attach, repeatable (default \"%s\"), e.g.\n"
		"               \"trtype:emu name:emu0 read_us:80 channels:8\" or\n"
		"               \"trtype:emu name:emu0 preset=tlc\" (device model options and the\n"
		"               scm/tlc/qlc presets with their figures: nvp help emu) or\n"
		"               \"trtype:PCIe traddr:0000:01:00.0\"\n"
		"  -P NUM       I/O queue pairs per namespace per I/O thread (default 1)\n"
		"  -L           latency percentiles per device; -LL adds the histogram\n"
		"  -s MB        DMA memory to reserve, MiB (default: the environment's)\n"
		"  --no-huge    DMA memory from ordinary pages, not hugepages\n"
		"  --io-timeout MS  per-request timeout, 1..3600000 (default %u): an I/O\n"
		"               older than this is aborted by the driver (then the controller\n"
		"               reset); it also bounds the wait for I/O still out at the end\n"
		"  --think-ns NS  after each completion spin NS nanoseconds, 0..10000000 (default\n"
		"               0), before submitting again: an application's work per I/O\n"
		"               (fio's thinktime_spin), counted in the CPU per I/O\n"
		"  --json FILE  write the results as JSON (\"-\": to standard output, the report\n"
		"               then goes to standard error); a failed run writes\n"
		"               {\"status\": \"failed\", \"error\": ...}\n"
		"  --plot FILE  write an SVG: latency percentiles per job target and core, IOPS\n"
		"               over time per job target and in total\n"
		"  -b NAME      bdev mode: run through the block layer on bdev NAME (repeatable;\n"
		"               default: every bdev of the configuration) instead of raw qpairs\n"
		"  --json-config FILE  bdevs from an SPDK-style JSON configuration\n"
		"  --bdev-config LINE  bdevs from one line, e.g.\n"
		"               \"nvme:name=emu0,trtype=emu\" (bdev emu0n1) or\n"
		"               \"malloc:name=m0,num_blocks=262144;null:name=z0,num_blocks=262144\"\n"
		"  --poll MODE  how I/O threads wait: classic, hybrid[:mean|:pN], fixed:US, irq,\n"
		"               umwait (default: spin without lib/poll)\n"
		"  --sched NAME[:K=V,...]  bdev mode: the I/O scheduler of every bdev: none,\n"
		"               deadline, kyber or fair, with its options (sched.h), e.g.\n"
		"               \"kyber:read_lat_us=1000\" or \"fair:depth=32\"\n"
		"  --wbt LAT_US|off  bdev mode: the writeback throttle on every bdev, with this\n"
		"               read latency target in us (the kernel's wbt_lat_usec); off: none\n"
		"  --tenant N[:WEIGHT]  bdev mode: the -b before it (every -b if before any)\n"
		"               submits as tenant N (0..63); WEIGHT 1..1000 under --sched fair.\n"
		"               Give one bdev twice (-b m0 --tenant 1 -b m0 --tenant 2:4) for\n"
		"               two competing jobs on it\n"
		"  --write-hint none|short|medium|long|extreme  bdev mode: lifetime hint of the\n"
		"               writes of the -b before it (every -b if before any)\n"
		"  --write-class background|normal|sync  bdev mode: class of those writes, as\n"
		"               the throttle sees it (background writes are throttled most)\n"
		"  --job SPEC   one of several jobs in one run, repeatable (fio's job sections):\n"
		"               comma-separated KEY=VALUE: name, w, q, o, M (as -w -q -o -M),\n"
		"               core=N or c=MASK (as -c); bdev mode: b=NAME, tenant=N[:WEIGHT],\n"
		"               weight=W, class=background|normal|sync, hint=none|short|...;\n"
		"               raw mode: r=CTRLR (a -r's name, traddr or text), ns=NSID. A key\n"
		"               not given takes its flag's value. Each job has its own rows,\n"
		"               latency, JSON entry and IOPS curve; jobs on one core share its\n"
		"               thread (and poll group). Instead of -b, e.g.\n"
		"               --job name=reader,b=m0,w=randread,q=1\n"
		"               --job name=writer,b=m0,w=write,q=32,o=128k,class=background\n"
		"  -h, --help   this help\n"
		"  --version    print the version\n\n"
		"Ctrl-C (SIGINT) or SIGTERM ends the run early; the results cover the time that\n"
		"ran (\"status\": \"interrupted\" in the JSON). During the -a warm-up nothing\n"
		"was measured: no results (\"status\": \"interrupted_warmup\", 0 I/Os).\n"
		"Exit status: 0 success, 1 attach failure or I/O errors, 2 bad command line.\n\n",
		prog, PERF_DEFAULT_TRID, PERF_DEFAULT_TRID, PERF_DEFAULT_IO_TIMEOUT_MS);
	fprintf(f, "-r \"trtype:emu ...\" takes the software controller's options as key:value\n"
		   "or key=value. ");
	nvp_emu_opts_usage(f);
}

/* "@fmt with @value (@accepted)" as a usage error. \return -EINVAL. */
static int
bad(const char *prog, const char *fmt, const char *value, const char *accepted)
{
	char what[PERF_MSG_MAX];

	(void)prog;
	snprintf(what, sizeof(what), fmt, value);
	return perf_usage("%s (%s)", what, accepted);
}

/*
 * -r "trtype:emu ...": the software controller's options are checked now, as every other
 * value of the command line is, so a bad one is a usage error (exit 2), not an attach
 * failure.
 */
static int
check_emu_opts(const char *arg, const struct nvp_nvme_transport_id *trid)
{
	struct nvp_emu_opts eo;
	char err[256] = "";

	if (strcmp(trid->trstring, "emu") != 0) {
		return 0;
	}
	nvp_emu_opts_init(&eo, sizeof(eo));
	if (nvp_emu_opts_parse(&eo, trid->args, err, sizeof(err)) != 0) {
		return perf_usage("-r \"%s\": %s", arg, err[0] != '\0' ? err : "bad options");
	}
	return 0;
}

static int
parse_u32(const char *prog, const char *flag, const char *str, uint64_t min, uint64_t max,
	  uint32_t *out)
{
	char what[64], range[64];
	uint64_t v;

	if (nvp_strtou64(str, min, max, &v) != 0) {
		snprintf(what, sizeof(what), "invalid %s value '%%s'", flag);
		snprintf(range, sizeof(range), "expected an integer %lu..%lu", (unsigned long)min,
			 (unsigned long)max);
		return bad(prog, what, str, range);
	}
	*out = (uint32_t)v;
	return 0;
}

/* \return 1 for a mix (reads from -M), 0, or -EINVAL. */
static int
parse_workload(struct perf_opts *o, const char *prog, const char *w)
{
	int read_pct, i = perf_workload_lookup(w, &o->random, &read_pct);

	if (i < 0) {
		return bad(prog, "unknown -w workload '%s'", w,
			   "expected read, write, randread, randwrite, rw or randrw");
	}
	o->workload = perf_workload_name(i);
	if (read_pct >= 0) {
		o->read_pct = (uint32_t)read_pct;
	}
	return read_pct < 0;
}

static int
parse_size_opt(struct perf_opts *o, const char *prog, const char *str)
{
	uint64_t v;

	if (nvp_parse_size(str, &v) != 0 || v == 0 || v > (1u << 30)) {
		return bad(prog, "invalid -o I/O size '%s'", str,
			   "expected bytes with an optional k/M suffix, 1..1G, e.g. 4096 or 128k");
	}
	/* A multiple of each namespace's sector size (520, 4104 with metadata) is checked
	 * once the namespaces are known; none is below 512 bytes. */
	if (v < 512) {
		return bad(prog, "-o I/O size '%s' is smaller than any sector (512 bytes)", str,
			   "the I/O size must be a multiple of the sector size");
	}
	o->io_size = (uint32_t)v;
	return 0;
}

static int
parse_core_mask(struct perf_opts *o, const char *prog, const char *str)
{
	char accepted[96];

	if (perf_core_mask_parse(str, &o->core_mask, accepted, sizeof(accepted)) != 0) {
		return bad(prog, "invalid -c core mask '%s'", str, accepted);
	}
	return 0;
}

/* --job SPEC: one more job. */
static int
parse_job(struct perf_opts *o, const char *arg)
{
	if (o->num_bdevs != 0) {
		return perf_usage("-b and --job: give each job its bdev with b=NAME");
	}
	if (o->num_jobs == PERF_MAX_JOBS) {
		return perf_usage("--job '%s': at most %d jobs", arg, PERF_MAX_JOBS);
	}
	o->num_job_flags++;
	return perf_job_parse(&o->jobs[o->num_jobs++], arg);
}

static void
opts_defaults(struct perf_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->queue_depth = 32;
	o->io_size = 4096;
	o->workload = "randread";
	o->random = true;
	o->read_pct = 100;
	o->mix_pct = 50;
	o->time_s = 5;
	o->core_mask = 0x1;
	o->qpairs_per_ns = 1;
	o->io_timeout_ms = PERF_DEFAULT_IO_TIMEOUT_MS;
	perf_bdev_opts_init(o);
}

/* One option; \return 0, 1 (help printed) or -EINVAL. */
static int
parse_one(struct perf_opts *o, const char *prog, int opt, const char *arg, bool *mix, bool *m_given)
{
	struct nvp_nvme_transport_id trid;
	int rc;

	switch (opt) {
	case 'q':
		return parse_u32(prog, "-q queue depth", arg, 1, 65536, &o->queue_depth);
	case 'o':
		return parse_size_opt(o, prog, arg);
	case 'w':
		rc = parse_workload(o, prog, arg);
		if (rc >= 0) {
			*mix = rc == 1;
		}
		return rc < 0 ? rc : 0;
	case 'M':
		*m_given = true;
		return parse_u32(prog, "-M read percent", arg, 0, 100, &o->read_pct);
	case 't':
		return parse_u32(prog, "-t seconds", arg, 1, 86400, &o->time_s);
	case 'a':
		return parse_u32(prog, "-a warm-up seconds", arg, 0, 3600, &o->warmup_s);
	case OPT_IO_TIMEOUT:
		return parse_u32(prog, "--io-timeout milliseconds", arg, 1, 3600000,
				 &o->io_timeout_ms);
	case OPT_THINK_NS:
		return parse_u32(prog, "--think-ns nanoseconds", arg, 0, 10000000, &o->think_ns);
	case 'c':
		return parse_core_mask(o, prog, arg);
	case 'r':
		if (o->num_trids == PERF_MAX_TRIDS) {
			return bad(prog, "too many -r options at '%s'", arg, "at most 16");
		}
		if (nvp_nvme_transport_id_parse(&trid, arg) != 0) {
			return bad(
				prog, "invalid -r transport ID \"%s\"", arg,
				"e.g. \"trtype:emu name:emu0\" or \"trtype:PCIe traddr:0000:01:00.0\"");
		}
		rc = check_emu_opts(arg, &trid);
		if (rc == 0) {
			o->trids[o->num_trids++] = arg;
		}
		return rc;
	case 'P':
		return parse_u32(prog, "-P qpairs per namespace", arg, 1, 64, &o->qpairs_per_ns);
	case 'L':
		o->latency_level++;
		return 0;
	case 's':
		if (nvp_strtou64(arg, 1, 1u << 20, &o->mem_mb) != 0) {
			return bad(prog, "invalid -s memory size '%s'", arg,
				   "expected MiB, an integer 1..1048576");
		}
		return 0;
	case OPT_NO_HUGE:
		o->no_huge = true;
		return 0;
	case OPT_JSON:
		o->json_path = arg;
		return 0;
	case OPT_PLOT:
		if (strcmp(arg, "-") == 0) {
			return bad(prog, "--plot '%s': give a file name", arg,
				   "an SVG file; standard output is for --json -");
		}
		o->plot_path = arg;
		return 0;
	case 'b':
	case OPT_JSON_CONFIG:
	case PERF_OPT_BDEV_CONFIG:
	case PERF_OPT_SCHED:
	case PERF_OPT_WBT:
	case PERF_OPT_TENANT:
	case PERF_OPT_WRITE_HINT:
	case PERF_OPT_WRITE_CLASS:
		return perf_bdev_opt(o, prog, opt, arg);
	case OPT_POLL: {
		struct nvp_poll_opts po;

		nvp_poll_opts_init(&po, sizeof(po));
		if (nvp_poll_mode_parse(arg, &po) != 0) {
			return bad(prog, "invalid --poll mode '%s'", arg,
				   "expected classic, hybrid, hybrid:mean, hybrid:pN, fixed:US, "
				   "irq or umwait");
		}
		o->poll_mode = arg;
		return 0;
	}
	case OPT_JOB:
		return parse_job(o, arg);
	case 'h':
		usage(stdout, prog);
		return 1;
	case OPT_VERSION:
		printf("nvp_perf (nvpoll) %s\n", NVP_VERSION_STRING);
		return 1;
	default:
		return -EINVAL; /* getopt_error() said what */
	}
}

/* getopt's complaint (its own printing is off, so the message is kept for --json). */
static int
getopt_error(int opt, char **argv)
{
	const char *arg = argv[optind - 1];

	if (opt == ':') {
		return perf_usage("option '%s' requires an argument", arg);
	}
	if (optopt != 0 && strncmp(arg, "--", 2) != 0) {
		return perf_usage("invalid option -- '%c'", optopt);
	}
	return perf_usage("unrecognized option '%s'", arg);
}

/* The flags as typed, for the plot's title; -r and output paths are left out. */
static void
record_cmdline(struct perf_opts *o, int argc, char **argv)
{
	size_t len = 0;
	int i;

	o->cmdline[0] = '\0';
	for (i = 1; i < argc && len < sizeof(o->cmdline); i++) {
		const char *a = argv[i];
		bool takes_path = strcmp(a, "-r") == 0 || strcmp(a, "--json") == 0 ||
				  strcmp(a, "--plot") == 0;

		if (takes_path || strncmp(a, "-r", 2) == 0 || strncmp(a, "--json=", 7) == 0 ||
		    strncmp(a, "--plot=", 7) == 0) {
			i += takes_path; /* skip the value too */
			continue;
		}
		len += (size_t)snprintf(o->cmdline + len, sizeof(o->cmdline) - len, "%s%s",
					len ? " " : "", a);
	}
}

const char *
perf_opts_json_path(int argc, char **argv)
{
	const char *path = NULL;
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			break;
		}
		if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
			path = argv[++i];
		} else if (strncmp(argv[i], "--json=", 7) == 0) {
			path = argv[i] + 7;
		}
	}
	return path;
}

int
perf_opts_parse(struct perf_opts *o, int argc, char **argv)
{
	const char *prog = argv[0];
	bool mix = false, m_given = false;
	uint32_t saved_pct = 50;
	int opt, rc;

	perf_msg_init(prog);
	opts_defaults(o);
	optind = 0; /* glibc: full re-initialisation, so it can parse twice */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":q:o:w:M:t:a:c:r:P:Ls:b:h", g_long_opts, NULL)) !=
	       -1) {
		if (opt == ':' || opt == '?') {
			return getopt_error(opt, argv);
		}
		rc = parse_one(o, prog, opt, optarg, &mix, &m_given);
		if (rc != 0) {
			return rc;
		}
		if (opt == 'M') {
			saved_pct = o->read_pct;
		}
	}
	if (optind < argc) {
		return bad(prog, "unexpected argument '%s'", argv[optind], "options only");
	}
	o->mix_pct = saved_pct;
	if (mix) {
		o->read_pct = saved_pct; /* -M before or after -w */
	} else if (m_given && o->num_job_flags == 0) {
		fprintf(stderr, "%s: -M applies to rw and randrw only; ignored for -w %s\n", prog,
			o->workload);
		o->read_pct = strstr(o->workload, "read") != NULL ? 100 : 0;
	}
	if (perf_bdev_opts_check(o, prog) != 0) {
		return -EINVAL;
	}
	if (o->num_trids == 0 && o->bdev_config == NULL) {
		o->trids[o->num_trids++] = PERF_DEFAULT_TRID;
	}
	rc = perf_jobs_resolve(o);
	if (rc != 0) {
		return rc;
	}
	record_cmdline(o, argc, argv);
	return 0;
}

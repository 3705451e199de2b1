/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_perf: an I/O benchmark with spdk_nvme_perf's flags and output. It attaches the
 * controllers named by -r (by default a software controller) or loads a bdev
 * configuration, gives each job (--job, or the one job of the flags) its targets, starts
 * one pinned I/O thread per core of the jobs (the main thread is the first core's), each
 * with its own qpairs or channels per job target, keeps each job's -q requests
 * outstanding for -t seconds, then prints IOPS, bandwidth, latency (from lib/util's
 * histogram) per row and per job and the CPU time the I/O threads used.
 *
 *   nvp_perf -q 32 -o 4096 -w randread -t 5
 *   nvp_perf -q 1 -w randrw -M 70 -LL -r 'trtype:emu name:emu0 read_us:80 channels:8'
 *   nvp_perf --job name=r,w=randread,q=1 --job name=w,w=write,o=128k
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvpoll/env.h"
#include "nvpoll/util.h"

#include "perf.h"

/* The rows of the thread on @core: each target whose job runs there. */
static int
make_rows(struct perf_run *run, struct perf_thread *th)
{
	uint32_t n, r = 0;

	for (n = 0; n < run->num_ns; n++) {
		th->num_ns += (run->ns[n].job->core_mask >> th->core) & 1;
	}
	th->ns_stats = calloc(NVP_MAX(th->num_ns, 1u), sizeof(*th->ns_stats));
	if (th->ns_stats == NULL) {
		return -ENOMEM;
	}
	for (n = 0; n < run->num_ns; n++) {
		struct perf_ns_stats *st = &th->ns_stats[r];

		if (((run->ns[n].job->core_mask >> th->core) & 1) == 0) {
			continue;
		}
		st->ns = &run->ns[n];
		st->hist = malloc(sizeof(struct nvp_histogram));
		if (st->hist == NULL) {
			return -ENOMEM;
		}
		nvp_histogram_init(st->hist);
		r++;
	}
	return 0;
}

/* One thread per core of the jobs' masks; their rows and histograms; samples per target. */
static int
make_threads(struct perf_run *run)
{
	uint32_t core, t = 0;

	run->threads = calloc(run->num_threads, sizeof(*run->threads));
	run->ns_iops = calloc((size_t)run->num_ns * PERF_MAX_SAMPLES, sizeof(double));
	if (run->threads == NULL || run->ns_iops == NULL) {
		return -ENOMEM;
	}
	for (core = 0; core < PERF_MAX_CORES; core++) {
		struct perf_thread *th;

		if ((run->opts.run_mask & (1ull << core)) == 0) {
			continue;
		}
		th = &run->threads[t];
		th->index = t++;
		th->core = core;
		if (make_rows(run, th) != 0) {
			return -ENOMEM;
		}
	}
	return 0;
}

/* A job whose r= controller has no active namespace would leave its cores idle. */
static int
check_jobs_have_targets(const struct perf_run *run)
{
	uint32_t j, n, targets;

	for (j = 0; j < run->opts.num_jobs; j++) {
		for (n = 0, targets = 0; n < run->num_ns; n++) {
			targets += run->ns[n].job == &run->opts.jobs[j];
		}
		if (targets == 0) {
			perf_fail("job %s: no active namespace or bdev to run on",
				  run->opts.jobs[j].name);
			return PERF_EXIT_FAIL;
		}
	}
	return 0;
}

/*
 * The rows' names: the target's, with the job's name when --job named it (or gave jobs),
 * or its tenant (two -b of one bdev as two tenants); still two alike get their job's.
 */
static void
label_rows(struct perf_run *run)
{
	uint32_t i, k;

	for (i = 0; i < run->num_ns; i++) {
		struct perf_ns *pns = &run->ns[i];
		const struct perf_job *j = pns->job;

		if (j->named || j->from_flag) {
			snprintf(pns->label, sizeof(pns->label), "%s: %s", j->name, pns->name);
		} else if (j->tenant >= 0) {
			snprintf(pns->label, sizeof(pns->label), "%s tenant %d", pns->name,
				 j->tenant);
		} else {
			snprintf(pns->label, sizeof(pns->label), "%s", pns->name);
		}
		for (k = 0; k < i; k++) {
			if (strcmp(run->ns[k].label, pns->label) == 0) {
				snprintf(pns->label, sizeof(pns->label), "%s: %s", j->name,
					 pns->name);
				break;
			}
		}
	}
}

/* Start threads 1..N-1, run thread 0 here, join. \return 0 or the first thread's -errno. */
static int
run_threads(struct perf_run *run)
{
	void *(*thread_fn)(void *);
	uint32_t i, started;
	int rc = 0;

	if (pthread_barrier_init(&run->start_barrier, NULL, run->num_threads) != 0) {
		return -ENOMEM;
	}
	perf_io_set_run(run);
	thread_fn = run->opts.bdev_config != NULL ? perf_bdev_thread_main : perf_thread_main;
	run->threads[0].is_main = true;
	for (started = 1; started < run->num_threads; started++) {
		rc = -pthread_create(&run->threads[started].tid, NULL, thread_fn,
				     &run->threads[started]);
		if (rc != 0) {
			/* the barrier counts them: cannot go on without them */
			fprintf(stderr, "cannot start I/O thread %u: %s\n", started, strerror(-rc));
			exit(PERF_EXIT_FAIL);
		}
	}
	thread_fn(&run->threads[0]);
	for (i = 1; i < run->num_threads; i++) {
		pthread_join(run->threads[i].tid, NULL);
	}
	pthread_barrier_destroy(&run->start_barrier);
	for (i = 0; i < run->num_threads; i++) {
		if (rc == 0 && run->threads[i].rc != 0) {
			rc = run->threads[i].rc;
		}
	}
	return rc;
}

static void
cleanup(struct perf_run *run)
{
	uint32_t i, n;
	bool busy;

	for (i = 0; i < run->num_ctrlrs; i++) {
		nvp_nvme_detach(run->ctrlrs[i]);
	}
	if (run->threads != NULL) {
		for (i = 0; i < run->num_threads; i++) {
			for (n = 0; run->threads[i].ns_stats != NULL && n < run->num_ns; n++) {
				free(run->threads[i].ns_stats[n].hist);
			}
			free(run->threads[i].ns_stats);
		}
	}
	free(run->threads);
	free(run->ns_iops);
	busy = perf_bdev_cleanup(run) != 0;
	free(run->ns);
	/* A device that still owns requests (a drain gave up on them) may still write to its
	 * DMA memory, and its controller thread still runs: leave the environment up. */
	if (nvp_env_is_initialized() && !busy) {
		nvp_env_fini();
	}
}

/*
 * Software controllers need no hugepages: when every target is one and none are free,
 * say --no-huge ourselves rather than have the environment warn about it.
 */
static bool
emu_only_without_hugepages(const struct perf_opts *o)
{
	struct nvp_nvme_transport_id trid;
	unsigned long free_pages = 0;
	char line[128];
	FILE *f;
	uint32_t i;

	for (i = 0; i < o->num_trids; i++) {
		if (nvp_nvme_transport_id_parse(&trid, o->trids[i]) != 0 ||
		    trid.trtype != NVP_NVME_TRANSPORT_VDEV) {
			return false;
		}
	}
	f = fopen("/proc/meminfo", "r");
	if (f == NULL) {
		return false;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "HugePages_Free: %lu", &free_pages) == 1) {
			break;
		}
	}
	fclose(f);
	return free_pages == 0;
}

static int
env_start(const struct perf_opts *o)
{
	struct nvp_env_opts env_opts;
	int rc;

	nvp_env_opts_init(&env_opts, sizeof(env_opts));
	env_opts.name = "nvp_perf";
	env_opts.mem_size_mb = o->mem_mb;
	env_opts.no_huge = o->no_huge || emu_only_without_hugepages(o);
	env_opts.quiet = true;
	perf_log_mark();
	rc = nvp_env_init(&env_opts);
	if (rc != 0) {
		char cause[PERF_MSG_MAX];

		perf_fail("cannot initialise the environment: %s",
			  perf_cause(rc, cause, sizeof(cause)));
	}
	return rc;
}

/*
 * A software controller's thread is made by the attach and inherits the caller's CPU
 * affinity: give it the cores the I/O threads do not use, when there are any, so the
 * scheduler never puts it on a core where an I/O thread is spinning. \return how many
 * cores that leaves it (0: every core this process may use has an I/O thread).
 */
static int
keep_off_io_cores(uint64_t io_mask)
{
	cpu_set_t set, others;
	uint32_t cpu;

	if (sched_getaffinity(0, sizeof(set), &set) != 0) {
		return -1;
	}
	CPU_ZERO(&others);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (CPU_ISSET(cpu, &set) && (cpu >= 64 || (io_mask & (1ull << cpu)) == 0)) {
			CPU_SET(cpu, &others);
		}
	}
	if (CPU_COUNT(&others) > 0) {
		sched_setaffinity(0, sizeof(others), &others);
	}
	return CPU_COUNT(&others);
}

/*
 * A software controller whose thread must share a core with a spinning I/O thread: the
 * two take turns at the scheduler's pace and both figures suffer. Said, not refused (a
 * machine may have no core to spare and still be worth measuring).
 */
static void
warn_emu_without_core(const struct perf_run *run)
{
	uint64_t mask = run->opts.run_mask, fewer = mask;

	if (__builtin_popcountll(mask) > 1) {
		fewer &= ~(1ull << (63 - __builtin_clzll(mask))); /* without its highest core */
	}
	fprintf(stderr,
		"nvp_perf: warning: -c 0x%lx gives an I/O thread every core this process may "
		"use (%ld online), so the software controller's thread shares a core with a "
		"spinning I/O thread and both slow down; leave it a core (e.g. -c 0x%lx)\n",
		(unsigned long)mask, sysconf(_SC_NPROCESSORS_ONLN), (unsigned long)fewer);
}

/*
 * The run cannot go on (@exit_status PERF_EXIT_USAGE or _FAIL): its status and the first
 * message of that kind (perf_msg.c) for the JSON; @fallback if nothing said why.
 */
static void
stop_run(struct perf_run *run, int exit_status, const char *fallback)
{
	const char *msg;

	if (run->status == PERF_STATUS_FAILED || run->status == PERF_STATUS_USAGE) {
		return; /* the first reason is the one */
	}
	if (exit_status == PERF_EXIT_USAGE) {
		run->status = PERF_STATUS_USAGE;
		msg = perf_msg_usage(run->error, sizeof(run->error));
	} else {
		run->status = PERF_STATUS_FAILED;
		msg = perf_msg_failure(run->error, sizeof(run->error));
	}
	if (msg == NULL) {
		snprintf(run->error, sizeof(run->error), "%s", fallback);
	}
}

/* Create the --json and --plot files before anything runs. \return 0 or PERF_EXIT_USAGE. */
static int
open_outputs(struct perf_run *run)
{
	const struct perf_opts *o = &run->opts;

	if (o->json_path != NULL) {
		run->json_f = strcmp(o->json_path, "-") == 0 ? stdout : fopen(o->json_path, "w");
		if (run->json_f == NULL) {
			perf_usage("--json %s: cannot create: %s", o->json_path, strerror(errno));
			return PERF_EXIT_USAGE;
		}
	}
	if (o->plot_path != NULL) {
		run->plot_f = fopen(o->plot_path, "w");
		if (run->plot_f == NULL) {
			perf_usage("--plot %s: cannot create: %s", o->plot_path, strerror(errno));
			return PERF_EXIT_USAGE;
		}
	}
	return 0;
}

/* Close an output; \return 0 or PERF_EXIT_FAIL (message printed). */
static int
close_output(FILE **f, const char *flag, const char *path)
{
	int rc = 0;

	if (*f == NULL) {
		return 0;
	}
	if (*f == stdout ? fflush(*f) != 0 : fclose(*f) != 0) {
		fprintf(stderr, "%s %s: write failed: %s\n", flag, path, strerror(errno));
		rc = PERF_EXIT_FAIL;
	}
	*f = NULL;
	return rc;
}

/* Did every I/O thread open its measured window (not stopped during the warm-up)? */
static bool
all_measured(const struct perf_run *run)
{
	uint32_t i;

	for (i = 0; i < run->num_threads; i++) {
		if (!run->threads[i].measured) {
			return false;
		}
	}
	return true;
}

/*
 * Stopped before the warm-up ended: nothing was measured, so no table and no numbers
 * (the warm-up's I/O is not a result; fio reports a ramp_time cut short the same way,
 * without its I/O). The JSON has the status and empty results; no plot is left.
 */
static int
write_warmup_interrupted(struct perf_run *run)
{
	double ran = (double)(nvp_env_get_ticks() - run->io_start_ticks) / (double)run->ticks_hz;
	int status = 0;

	snprintf(run->error, sizeof(run->error),
		 "interrupted during the warm-up (after %.1f s of -a %u): nothing was measured",
		 ran, run->opts.warmup_s);
	fprintf(run->out,
		"\nInterrupted during the warm-up (after %.1f s of -a %u s): nothing "
		"was measured, no results.\n",
		ran, run->opts.warmup_s);
	if (run->json_f != NULL && perf_json_write(run) != 0) {
		status = PERF_EXIT_FAIL;
	}
	if (run->plot_f != NULL) {
		fclose(run->plot_f);
		run->plot_f = NULL;
		unlink(run->opts.plot_path);
	}
	if (close_output(&run->json_f, "--json", run->opts.json_path) != 0) {
		status = PERF_EXIT_FAIL;
	}
	return status;
}

/*
 * A failed run prints no table and writes no numbers: the JSON says "status": "failed"
 * (or "usage_error", whose message and hint were printed already) and why, and the plot
 * file made at the start is removed.
 */
static int
write_outputs(struct perf_run *run)
{
	int status = 0;

	if (run->status == PERF_STATUS_FAILED || run->status == PERF_STATUS_USAGE) {
		if (run->status == PERF_STATUS_FAILED) {
			fprintf(stderr, "nvp_perf: the run failed: %s\n", run->error);
		}
		if (run->json_f != NULL) {
			perf_json_write(run);
		}
		if (run->plot_f != NULL) {
			fclose(run->plot_f);
			run->plot_f = NULL;
			unlink(run->opts.plot_path);
		}
		close_output(&run->json_f, "--json", run->opts.json_path);
		return run->status == PERF_STATUS_USAGE ? PERF_EXIT_USAGE : PERF_EXIT_FAIL;
	}
	if (run->status == PERF_STATUS_INTERRUPTED_WARMUP) {
		return write_warmup_interrupted(run);
	}
	if (run->status == PERF_STATUS_INTERRUPTED) {
		fprintf(run->out, "\nInterrupted: the results cover the %.1f s that ran.\n",
			run->num_threads ?
				(double)run->threads[0].elapsed_ticks / (double)run->ticks_hz :
				0.0);
	}
	perf_report_print(run, run->out);
	if (run->json_f != NULL && perf_json_write(run) != 0) {
		status = PERF_EXIT_FAIL;
	}
	if (run->plot_f != NULL && perf_plot_write(run) != 0) {
		status = PERF_EXIT_FAIL;
	}
	if (close_output(&run->json_f, "--json", run->opts.json_path) != 0 ||
	    close_output(&run->plot_f, "--plot", run->opts.plot_path) != 0) {
		status = PERF_EXIT_FAIL;
	}
	if (perf_total_errors(run) != 0) {
		fprintf(stderr, "%lu I/O errors\n", (unsigned long)perf_total_errors(run));
		status = PERF_EXIT_FAIL;
	}
	return status;
}

static struct perf_run g_run;

/* SIGINT/SIGTERM: end the run as if its time were up. A second one kills (SA_RESETHAND). */
static void
on_signal(int sig)
{
	(void)sig;
	atomic_store_explicit(&g_run.stop, true, memory_order_relaxed);
}

static void
catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* IOPS samples every 100 ms, fewer for runs longer than PERF_MAX_SAMPLES of them. */
static uint64_t
sample_period(const struct perf_run *run)
{
	uint64_t step = nvp_ms_to_ticks(PERF_SAMPLE_MS, run->ticks_hz);
	uint64_t need = (run->ticks_hz * run->opts.time_s + PERF_MAX_SAMPLES - 2) /
			(PERF_MAX_SAMPLES - 1);

	return step > need ? step : need;
}

/* Attach every -r target and make the threads. \return 0, PERF_EXIT_USAGE or _FAIL. */
static int
prepare(struct perf_run *run)
{
	int status = 0, cores_left;

	/* Attach before pinning: the software controller's thread inherits our affinity. */
	cores_left = keep_off_io_cores(run->opts.run_mask);
	status = run->opts.bdev_config != NULL ? perf_bdev_attach(run) : perf_raw_attach(run);
	label_rows(run);
	if (status == 0 && cores_left == 0 && perf_uses_emu(run)) {
		warn_emu_without_core(run);
	}
	if (status == 0 && run->num_ns == 0) {
		perf_fail("no active namespace or bdev in what was given");
		status = PERF_EXIT_FAIL;
	}
	if (status == 0) {
		status = check_jobs_have_targets(run);
	}
	if (status == 0 && make_threads(run) != 0) {
		perf_fail("out of memory");
		status = PERF_EXIT_FAIL;
	}
	if (status != 0) {
		stop_run(run, status, "cannot attach (no reason given)");
	}
	return status;
}

/* Did the I/O threads start? \return 0, or -errno of the first that could not. */
static int
setup_result(const struct perf_run *run)
{
	uint32_t i;

	for (i = 0; i < run->num_threads; i++) {
		if (run->threads[i].setup_rc != 0) {
			return run->threads[i].setup_rc;
		}
	}
	return 0;
}

static int
run_and_report(struct perf_run *run)
{
	int status = 0, rc;

	fprintf(run->out, "Initialization complete. Launching workers.\n");
	if (run->opts.warmup_s > 0) {
		fprintf(run->out, "Warming up for %u s (not measured).\n", run->opts.warmup_s);
	}
	fflush(run->out);
	rc = run_threads(run);
	if (setup_result(run) != 0) {
		char fallback[128];

		snprintf(fallback, sizeof(fallback), "the I/O threads could not start: %s",
			 strerror(-setup_result(run)));
		stop_run(run, PERF_EXIT_FAIL, fallback);
	} else if (rc != 0) {
		/* results up to the failure are still reported; the JSON says why it ended */
		char cause[PERF_MSG_MAX];

		snprintf(run->error, sizeof(run->error), "the run failed: %.400s",
			 perf_msg_failure(cause, sizeof(cause)) != NULL ? cause : strerror(-rc));
		fprintf(stderr, "nvp_perf: %s\n", run->error);
		status = PERF_EXIT_FAIL;
	} else if (atomic_load(&run->stop)) {
		run->status = all_measured(run) ? PERF_STATUS_INTERRUPTED :
						  PERF_STATUS_INTERRUPTED_WARMUP;
	}
	rc = write_outputs(run);
	return status != 0 ? status : rc;
}

int
main(int argc, char **argv)
{
	struct perf_run *run = &g_run;
	int status, rc;

	perf_log_capture();
	rc = perf_opts_parse(&run->opts, argc, argv);
	if (rc != 0) {
		char msg[PERF_MSG_MAX];

		if (rc < 0 && perf_msg_usage(msg, sizeof(msg)) != NULL) {
			perf_json_write_usage(perf_opts_json_path(argc, argv), msg);
		}
		return rc > 0 ? 0 : PERF_EXIT_USAGE;
	}
	run->out = run->opts.json_path != NULL && strcmp(run->opts.json_path, "-") == 0 ? stderr :
											  stdout;
	if (open_outputs(run) != 0) {
		/* a usage error: the --json file made a moment ago says so */
		stop_run(run, PERF_EXIT_USAGE, "cannot create an output file");
		return write_outputs(run);
	}
	run->num_threads = (uint32_t)__builtin_popcountll(run->opts.run_mask);
	if (env_start(&run->opts) != 0) {
		stop_run(run, PERF_EXIT_FAIL, "cannot initialise the environment");
		write_outputs(run);
		return PERF_EXIT_FAIL;
	}
	catch_signals();
	run->ticks_hz = nvp_env_get_ticks_hz();
	run->sample_ticks = sample_period(run);
	status = prepare(run);
	if (status == 0) {
		status = run_and_report(run);
	} else {
		write_outputs(run);
	}
	cleanup(run);
	return status;
}

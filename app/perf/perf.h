/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_perf: what its files share. perf.c runs the show (threads, outputs), perf_opts.c
 * parses the command line and perf_job.c its jobs, perf_raw.c and perf_bdev.c attach the
 * targets, perf_loop.c is the I/O loop both modes share (perf_io.c raw qpairs,
 * perf_bdev.c bdev channels), perf_report.c prints the tables, perf_json.c and
 * perf_plot.c write --json and --plot, perf_msg.c keeps what went wrong.
 */
#ifndef NVP_PERF_H
#define NVP_PERF_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "nvpoll/histogram.h"
#include "nvpoll/bdev.h"
#include "nvpoll/nvme.h"
#include "nvpoll/poll.h"

#define PERF_DEFAULT_TRID "trtype:emu name:emu0"
#define PERF_MAX_TRIDS 16
#define PERF_MAX_CORES 64
#define PERF_MAX_SAMPLES 3600
#define PERF_SAMPLE_MS 100 /* IOPS over time: one sample per 100 ms (longer for long runs) */
#define PERF_DEFAULT_IO_TIMEOUT_MS 10000
#define PERF_MSG_MAX 512 /* a message about what went wrong */

/* Exit statuses: 1 = the run failed (attach, I/O errors), 2 = the command line was wrong. */
#define PERF_EXIT_FAIL 1
#define PERF_EXIT_USAGE 2

#define PERF_MAX_JOBS 16
#define PERF_JOB_SPEC_MAX 512 /* a --job string */

/*
 * One workload (perf_job.c): a --job 'k=v,...', or what the single-job flags make (one
 * job, or one per -b). Unset keys (0, NULL, "", -1) take the flags' values when the
 * command line is resolved; after that every field but the targets is set.
 */
struct perf_job {
	char name[32];        /* name=, else "job<N>" */
	bool named;           /* name= given: the report's rows carry it */
	bool from_flag;       /* a --job (not the single-job flags): messages name its keys */
	const char *workload; /* w= or -w */
	bool random;
	int32_t mix_pct;      /* M= (reads of rw/randrw); -1: -M's */
	uint32_t read_pct;    /* 100 read, 0 write, or the mix */
	uint32_t queue_depth; /* q= or -q: outstanding per target per core */
	uint32_t io_size;     /* o= or -o, bytes */
	uint64_t core_mask;   /* core=N or c=MASK, else -c: one row per core */
	char bdev[64];        /* b= or -b (bdev mode); "": every bdev of the configuration */
	char ctrlr[256];      /* r= (raw mode): a -r by its name, traddr or text; "": every -r */
	uint32_t nsid;        /* ns= (raw mode); 0: every active namespace */
	/* bdev mode; -1 = not given */
	int32_t tenant;      /* nvp_bdev_desc_set_tenant() */
	int32_t weight;      /* the tenant's weight under --sched fair */
	int32_t write_hint;  /* enum nvp_nvme_write_hint */
	int32_t write_class; /* NVP_BDEV_WRITE_BACKGROUND, _NORMAL, _SYNC */
};

/* perf_job.c */
void perf_job_init(struct perf_job *j);
/* One --job string into @j (initialised here). \return 0 or -EINVAL (printed, key named). */
int perf_job_parse(struct perf_job *j, const char *spec);
struct perf_opts;
/* Every job's unset keys from the flags (and one job when none was given); the checks
 * that need the whole command line. \return 0 or -EINVAL (printed). */
int perf_jobs_resolve(struct perf_opts *o);
/* -w names: index into the table (and @random, @read_pct: -1 for a mix), or -1. */
int perf_workload_lookup(const char *w, bool *random, int *read_pct);
const char *perf_workload_name(int index);
int perf_name_lookup(const char *const *names, size_t n, const char *arg);
int perf_write_hint_parse(const char *arg);
int perf_write_class_parse(const char *arg);
const char *perf_write_hint_name(int32_t hint);
const char *perf_write_class_name(int32_t cls);
/* "TENANT[:WEIGHT]"; @weight -1 when not given. \return 0 or -EINVAL. */
int perf_tenant_parse(const char *arg, int32_t *tenant, int32_t *weight);
/* A core mask within the online CPUs; @accepted says what is. \return 0 or -EINVAL. */
int perf_core_mask_parse(const char *str, uint64_t *mask, char *accepted, size_t len);
/* The flags of a job's writes (class and lifetime hint). */
uint32_t perf_job_write_flags(const struct perf_job *j);
/* Does -r @trid_str answer to r=@want: its text, its name: or its traddr:? */
bool perf_job_ctrlr_matches(const char *trid_str, const char *want);
/* A sequential job's first I/O slot on @core: its cores spread over the target. */
uint64_t perf_job_seq_start(const struct perf_job *j, uint32_t core, uint64_t num_ios);
/* "-o 4096" or "--job NAME: o=4096": the I/O size as the user gave it, for messages. */
void perf_job_size_flag(const struct perf_job *j, char *buf, size_t len);

/* bdev-mode long options (perf_opts.c passes them to perf_bdev_opt()). */
enum {
	PERF_OPT_SCHED = 300,
	PERF_OPT_WBT,
	PERF_OPT_TENANT,
	PERF_OPT_WRITE_HINT,
	PERF_OPT_WRITE_CLASS,
	PERF_OPT_BDEV_CONFIG, /* --bdev-config (--json-config: any other) */
};

/* The command line. -q, -o, -w, -M, -c are the jobs' defaults (struct perf_job). */
struct perf_opts {
	uint32_t queue_depth;   /* -q: outstanding per namespace per I/O thread */
	uint32_t io_size;       /* -o: bytes */
	const char *workload;   /* -w as given */
	bool random;            /* rand* workloads */
	uint32_t read_pct;      /* 100 read, 0 write, -M for the mixes */
	uint32_t mix_pct;       /* -M (default 50): the reads of a rw/randrw job */
	uint32_t time_s;        /* -t */
	uint32_t warmup_s;      /* -a: run this long first, then discard and measure */
	uint32_t io_timeout_ms; /* --io-timeout: per-request deadline, bounds the drain */
	uint32_t think_ns;      /* --think-ns: spin this long after each completion */
	uint64_t core_mask;     /* -c: the cores of a job without its own */
	uint64_t run_mask;      /* every job's cores: one I/O thread on each */
	const char *trids[PERF_MAX_TRIDS];
	uint32_t num_trids;
	uint32_t qpairs_per_ns; /* -P */
	uint32_t latency_level; /* -L count */
	uint64_t mem_mb;        /* -s */
	bool no_huge;
	const char *json_path; /* "-": standard output (the report then goes to stderr) */
	const char *plot_path;
	/* What the user typed, for the plot's title: flags only, in order, without -r. */
	char cmdline[512];
	/* bdev mode (perf_bdev.c): -b (each a job), --json-config / --bdev-config */
	uint32_t num_bdevs; /* -b given */
	const char *bdev_config;
	bool bdev_config_is_file; /* --json-config (else --bdev-config's line) */
	const char *poll_mode;    /* --poll: how I/O threads wait (perf_poll.c), NULL = spin */
	const char *sched;        /* --sched NAME[:k=v,...]; NULL: the bdev's own */
	bool wbt_set;             /* --wbt given */
	uint32_t wbt_lat_us;      /* --wbt LAT_US; 0 = off */
	/* the jobs: --job's or -b's in order, or after perf_jobs_resolve() the one job */
	struct perf_job jobs[PERF_MAX_JOBS];
	uint32_t num_jobs;
	uint32_t num_job_flags; /* --job given */
	/* --tenant, --write-hint, --write-class given before any -b: every job's default */
	struct perf_job job_default;
};

/*
 * Parse argv into @opts (defaults first). \return 0 to run, 1 when help was printed
 * (exit 0), or -EINVAL after printing the message and the --help hint (exit 2).
 */
int perf_opts_parse(struct perf_opts *opts, int argc, char **argv);
/* The --json FILE of @argv found without parsing it (for a usage error's JSON), or NULL. */
const char *perf_opts_json_path(int argc, char **argv);

/* One target of one job: a namespace of an attached controller, or a bdev descriptor. */
struct perf_ns {
	struct nvp_nvme_ctrlr *ctrlr;
	struct nvp_nvme_ns *ns;
	const struct perf_job *job;
	uint32_t nsid;
	uint32_t sector_size;
	uint32_t lbas_per_io;
	uint64_t num_ios; /* I/O-size slots in the namespace */
	bool doorbells;   /* PCIe (or emu) qpairs: SQ doorbells to count */
	char name[192];   /* "EMU (emu0) NSID 1", "TCP (10.0.0.1:4420 nqn..) NSID 1" */
	char label[232];  /* the row: name, with the job's name or tenant */
	struct nvp_bdev_desc *bdev_desc; /* bdev mode: ctrlr and ns are NULL */
};

/* What one I/O thread did with one target of a job (a row); written only by that thread. */
struct perf_ns_stats {
	const struct perf_ns *ns;
	_Atomic uint64_t live_ios; /* completions so far, for the IOPS samples per job */
	uint64_t sample_ios;       /* thread 0: live_ios at the last sample */
	/* Inside the measured window only: its IOPS, latencies and errors are over the same
	 * I/Os (a completion drained after the window can carry a stall the window's IOPS
	 * never saw). */
	uint64_t ios;
	uint64_t reads;
	uint64_t writes;
	uint64_t errors;           /* error completions and failed submissions */
	uint64_t submit_errors;    /* of which: submissions refused */
	uint64_t drain_ios;        /* completed after the window, while draining */
	uint64_t drain_errors;     /* of which errors: no result, but the run did not end well */
	uint64_t sq_doorbells;     /* SQ tail doorbell MMIO writes of its qpairs */
	uint64_t cq_doorbells;     /* CQ head doorbell MMIO writes of its qpairs */
	uint64_t doorbell_rekicks; /* both written again after 1 ms with no progress
				    * (shadow doorbells: nvp_nvme_qpair_stats) */
	uint64_t submitted;        /* commands its qpairs wrote into their SQs */
	struct nvp_histogram *hist;
};

/* One I/O thread: its core, its rows' statistics, live counters for progress. */
struct perf_thread {
	uint32_t index;
	uint32_t core;
	pthread_t tid;
	bool is_main;
	struct perf_ns_stats *ns_stats; /* a row per target of each job on this core */
	uint32_t num_ns;
	/* Single writer (this thread), read by thread 0 for the progress line. */
	_Atomic uint64_t live_ios;
	_Atomic uint64_t live_lat_ticks;
	/* Results, set when the thread ends. */
	uint64_t elapsed_ticks; /* the measured window (warm-up and drain excluded) */
	uint64_t cpu_ns;        /* the thread's CPU time in that same window */
	uint64_t cpu_start_ns;  /* the thread's CPU clock as the window opened */
	uint64_t nivcsw, nvcsw; /* its context switches in the window: involuntary
					  * ones (preempted) and voluntary ones (slept) */
	uint64_t nivcsw_start, nvcsw_start;
	int setup_rc;                    /* -errno if the thread could not start its I/O */
	int rc;                          /* 0, or -errno if setup failed or the controller failed */
	struct nvp_poll_stats poll_base; /* its counters as the window opened */
	struct nvp_poll_stats poll_stats; /* --poll: what it did in the window */
	bool has_poll_stats;
	bool measured; /* its window opened (false: stopped during the warm-up) */
};

struct perf_sample {
	double t_s;
	double iops;
	double mib_s;
	double mean_us;
};
/* IOPS of target @n (run->ns[@n], all its cores) in sample @i:
 * run->ns_iops[@n * PERF_MAX_SAMPLES + @i]. */

enum perf_status {
	PERF_STATUS_OK,
	PERF_STATUS_INTERRUPTED,        /* SIGINT/SIGTERM: results cover the time that ran */
	PERF_STATUS_INTERRUPTED_WARMUP, /* SIGINT/SIGTERM before the window: no results */
	PERF_STATUS_FAILED,             /* the run did not start or the controller failed */
	PERF_STATUS_USAGE,              /* a usage error found once the targets were known */
};

/* The whole run. */
struct perf_run {
	struct perf_opts opts;
	FILE *out;    /* the human report: stdout, or stderr with --json - */
	FILE *json_f; /* opened before the run, so a bad path fails first */
	FILE *plot_f;
	enum perf_status status;
	char error[PERF_MSG_MAX]; /* why the run failed or stopped early */
	_Atomic bool stop;        /* set by SIGINT/SIGTERM */
	struct perf_ns *ns;
	uint32_t num_ns;
	struct nvp_nvme_ctrlr *ctrlrs[PERF_MAX_TRIDS];
	uint32_t num_ctrlrs;
	struct perf_thread *threads;
	uint32_t num_threads;
	uint64_t ticks_hz;
	pthread_barrier_t start_barrier;
	uint64_t io_start_ticks; /* set by thread 0 after the barrier: I/O (warm-up) starts */
	uint64_t start_ticks;    /* the measured window starts: io_start + warm-up */
	uint64_t sample_ticks;   /* IOPS sample period */
	struct perf_sample samples[PERF_MAX_SAMPLES];
	double *ns_iops; /* per target of a job, beside each sample */
	uint32_t num_samples;
};

/* perf_raw.c: attach every -r, a target per (job, namespace). \return 0 or PERF_EXIT_*. */
int perf_raw_attach(struct perf_run *run);
/* A zeroed target at the end of run->ns (not counted yet), or NULL (failure kept). */
struct perf_ns *perf_ns_add(struct perf_run *run);

/* perf_io.c: the body of an I/O thread (run directly by the main thread for its core). */
void *perf_thread_main(void *arg);
/* The run a thread belongs to (perf_io.c keeps it). */
void perf_io_set_run(struct perf_run *run);

/*
 * perf_loop.c: the I/O loop both modes share (warm-up, samples, progress lines, SIGINT,
 * bounded drain). A backend embeds struct perf_loop in its per-thread context.
 */
struct perf_loop;

struct perf_loop_ops {
	void (*start_all)(struct perf_loop *l); /* submit -q requests per target */
	int (*poll)(struct perf_loop *l);       /* poll once; -errno: the device failed */
	uint32_t (*outstanding)(const struct perf_loop *l);
	/* The measured window opens (@open) or closes: per-window counters; may be NULL. */
	void (*window)(struct perf_loop *l, bool open);
	const char *drain_note;   /* what ends I/O that does not come back */
	const char *give_up_note; /* what happens to it when the drain gives up */
};

struct perf_loop {
	struct perf_run *run;
	struct perf_thread *thread;
	const struct perf_loop_ops *ops;
	uint64_t drain_limit_ms; /* the drain waits at most this long */
	bool measuring;          /* past the warm-up: statistics count */
	bool draining;           /* completions must not submit again */
	uint64_t ios;            /* mirrors of the live counters, stored relaxed */
	uint64_t lat_ticks;
	uint64_t think_ticks;           /* --think-ns in ticks; 0 = none */
	struct nvp_poll_waiter *waiter; /* --poll, else NULL */
};

/* Submit, poll until the window ends or a signal, drain. \return 0 or -errno. */
int perf_loop_run(struct perf_loop *l);
/* A completion's bookkeeping: histogram, counters, the live counters for progress; then
 * --think-ns of spinning, before the caller submits again. */
void perf_loop_record(struct perf_loop *l, struct perf_ns_stats *st, uint64_t lat, bool is_read,
		      bool error);
/* Both start barriers; thread 0 sets io_start_ticks and start_ticks (after -a). */
void perf_loop_start_barrier(struct perf_run *run, struct perf_thread *th);
/* After the barrier: did any thread fail to set up (then none runs)? */
bool perf_any_setup_failed(const struct perf_run *run);

/* perf_bdev.c: the bdev mode. perf_bdev_opt() takes -b ('b') or a configuration (any
 * other @opt); perf_bdev_opts_check() the combination. \return 0 or -EINVAL (printed). */
int perf_bdev_opt(struct perf_opts *o, const char *prog, int opt, const char *arg);
int perf_bdev_opts_check(const struct perf_opts *o, const char *prog);
/* The bdev-mode defaults (nothing given). */
void perf_bdev_opts_init(struct perf_opts *o);
/* Load the configuration, open the bdevs. \return 0 or PERF_EXIT_*. */
int perf_bdev_attach(struct perf_run *run);
/* The throttle's and the scheduler's state of each bdev, for the report and --json. */
void perf_bdev_report(const struct perf_run *run, FILE *f);
struct json_object *perf_bdev_json(const struct perf_run *run);
/* Close and release the bdevs. \return 0, or -EBUSY if I/O a drain gave up on still holds
 * a bdev (a device may still own memory: the environment must then stay up). */
int perf_bdev_cleanup(struct perf_run *run);
void *perf_bdev_thread_main(void *arg);
void perf_bdev_event(enum nvp_bdev_event_type type, struct nvp_bdev *bdev, void *ctx);

/* perf_msg.c: what went wrong, printed and kept for --json (the first of each kind). */
/* The program name usage messages start with (argv[0]); forget earlier messages. */
void perf_msg_init(const char *prog);
const char *perf_msg_prog(void);
/* A usage error: "PROG: MESSAGE" and the --help hint once, to stderr. \return -EINVAL. */
int perf_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Why the run failed (not printed here: the end of the run prints it once). */
void perf_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The first usage error or failure into @buf, or NULL if there was none. */
const char *perf_msg_usage(char *buf, size_t len);
const char *perf_msg_failure(char *buf, size_t len);
/* The library's log through perf's sink: printed as before, its first error kept. */
void perf_log_capture(void);
/* Forget the library's errors so far: the next one is the cause of what follows. */
void perf_log_mark(void);
/* The cause of -errno @rc: the library's first error since the mark, else strerror. */
const char *perf_cause(int rc, char *buf, size_t len);

/* perf_report.c */
struct perf_lat_summary {
	double mean_us, min_us, max_us;
	double p50_us, p90_us, p99_us, p999_us, p9999_us;
};

void perf_lat_summary_get(const struct perf_run *run, const struct nvp_histogram *h,
			  struct perf_lat_summary *s);
double perf_ticks_to_us(const struct perf_run *run, uint64_t ticks);
/* Merge every row's histogram into @total (initialised here). */
void perf_total_histogram(const struct perf_run *run, struct nvp_histogram *total);
void perf_report_print(const struct perf_run *run, FILE *f);
uint64_t perf_total_errors(const struct perf_run *run);
/* IOPS of one row over the measured window; its MiB/s (at its job's I/O size). */
double perf_row_iops(const struct perf_run *run, const struct perf_thread *th,
		     const struct perf_ns_stats *st);
double perf_row_mibs(const struct perf_run *run, const struct perf_thread *th,
		     const struct perf_ns_stats *st);

/* One job's rows summed: its own I/Os, and its histogram (its latency, no other's). */
struct perf_job_result {
	uint64_t ios, reads, writes, errors;
	double iops, mib_s;
	uint32_t rows;
	uint64_t thread_mask;         /* run->threads[] indexes running it */
	const struct perf_ns *target; /* its first target */
	bool targets_differ;          /* it has more than one */
	struct nvp_histogram *hist;   /* its rows merged; perf_job_result_free() */
};

/* Job @j's result. \return 0 or -ENOMEM. */
int perf_job_result_get(const struct perf_run *run, uint32_t j, struct perf_job_result *r);
void perf_job_result_free(struct perf_job_result *r);

/* perf_json.c: write to run->json_f. \return 0 or -errno (message printed). */
int perf_json_write(const struct perf_run *run);
/* A command line that could not be parsed: {"status": "usage_error", "error": @msg} into
 * @path ("-": standard output; NULL: nothing). \return 0 or -errno (message printed). */
int perf_json_write_usage(const char *path, const char *msg);

/* perf_poll.c: --poll */
int perf_poll_opts(const struct perf_opts *o, struct nvp_poll_opts *po);
bool perf_poll_wants_irq(const struct perf_opts *o);
int perf_poll_setup(struct perf_thread *th, const struct perf_opts *o,
		    struct nvp_nvme_qpair *const *qpairs, uint32_t n, struct nvp_poll_waiter **out);
void perf_poll_teardown(struct nvp_poll_waiter *w);
/* The measured window opens (after the warm-up) and closes (before the drain): the
 * waiter's counters are reported for the window only, as the I/Os and the CPU time are. */
void perf_poll_window_start(struct perf_thread *th, struct nvp_poll_waiter *w);
void perf_poll_window_end(struct perf_thread *th, struct nvp_poll_waiter *w);
void perf_poll_report(const struct perf_run *run, FILE *f);
void perf_emu_lateness_report(const struct perf_run *run, FILE *f);
/* Does the run use a software controller (whose thread needs a core of its own)? */
bool perf_uses_emu(const struct perf_run *run);

/* perf_plot.c: write to run->plot_f. \return 0 or -errno (message printed). */
int perf_plot_write(const struct perf_run *run);
/* The plot's title: "nvp_perf FLAGS -> TARGETS" (@len bytes). */
void perf_plot_title(const struct perf_run *run, char *buf, size_t len);

/* xorshift64*: fast, per thread, good enough to spread offsets. */
static inline uint64_t
perf_rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, n) without a division: the high half of a 64x64 product. */
static inline uint64_t
perf_rng_below(uint64_t *s, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)perf_rng_next(s) * n) >> 64);
}

#endif /* NVP_PERF_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_tgt: serve bdevs over NVMe/TCP (see tgt.h for the objects, nvp_tgt(8) for use).
 *
 *   nvp_tgt -c tgt.json [-m 0x3]
 *
 * The main thread loads the configuration (bdevs, then subsystems and listeners), starts
 * one poll thread per core of the mask, then waits for SIGINT or SIGTERM (blocked in every
 * thread and taken here with sigtimedwait(), so no handler runs inside the library). On
 * one, every poll thread stops reading commands, lets the I/O in flight complete and its
 * responses go out, closes its connections (hosts see them end), and returns; then the
 * bdevs are closed and the program exits 0.
 * Exit status: 0 after a signal or the time limit, 1 a failure of the run, 2 bad usage or
 * a bad configuration (the message says which entry and what to do).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nvp_config.h"
#include "nvpoll/env.h"
#include "nvpoll/util.h"
#include "tgt.h"
#include "tgt_idle.h"

#define IDLE_US \
	200u            /* nothing to do this long: wait in poll(2) (a host at QD1 sends its
			* next command within tens of us; a thread that spins on past that only
			* takes the CPU from the threads it waits for, when it shares one). Or at
			* once, where its hosts' commands come further apart (tgt_idle.h). */
#define YIELD_SPINS 64u /* passes waiting for a device between two sched_yield() */
#define POLL_FDS 256u
#define TICK_MS 10u
#define DRAIN_MS 15000u

struct tgt_args {
	const char *config;
	uint64_t mask;
	uint32_t seconds;
	bool no_huge;
	uint64_t mem_mb;
};

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: nvp_tgt -c CONFIG.json [-m CORE_MASK] [-t SECONDS] [--no-huge]\n"
		"               [--mem-size MB]\n"
		"Serve bdevs over NVMe/TCP until Ctrl-C (SIGINT) or SIGTERM.\n"
		"  -c, --config FILE  JSON in SPDK's shape: a \"bdev\" subsystem (bdev_malloc_create,\n"
		"                     bdev_null_create, bdev_nvme_attach_controller, ...) and an\n"
		"                     \"nvmf\" one (nvmf_create_transport, nvmf_create_subsystem,\n"
		"                     nvmf_subsystem_add_ns, _add_listener, _add_host)\n"
		"  -m, --cpumask MASK poll threads, one per core of MASK (hex; default 0x1)\n"
		"  -t, --time SECONDS stop after SECONDS (default: run until a signal)\n"
		"      --no-huge      DMA memory without hugepages (enough for malloc/null bdevs)\n"
		"      --mem-size MB  DMA memory to reserve\n"
		"  -h, --help         this text;  --version  the version\n"
		"See nvp_tgt(8).\n");
}

static int
parse_args(int argc, char **argv, struct tgt_args *a)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "cpumask", required_argument, NULL, 'm' },
		{ "time", required_argument, NULL, 't' },
		{ "no-huge", no_argument, NULL, 'H' },
		{ "mem-size", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int ch;

	memset(a, 0, sizeof(*a));
	a->mask = 1;
	while ((ch = getopt_long(argc, argv, "c:m:t:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			a->config = optarg;
			break;
		case 'm':
			if (nvp_strtou64(optarg, 1, UINT64_MAX, &a->mask) != 0 ||
			    __builtin_popcountll(a->mask) > (int)TGT_MAX_THREADS) {
				fprintf(stderr,
					"nvp_tgt: -m %s: a core mask such as 0x3 (at most "
					"64 cores)\n",
					optarg);
				return 2;
			}
			break;
		case 't':
			if (nvp_strtou64(optarg, 1, 31536000, &v) != 0) {
				fprintf(stderr, "nvp_tgt: -t %s: seconds, 1 .. 31536000\n", optarg);
				return 2;
			}
			a->seconds = (uint32_t)v;
			break;
		case 'H':
			a->no_huge = true;
			break;
		case 'M':
			if (nvp_strtou64(optarg, 1, 1u << 20, &a->mem_mb) != 0) {
				fprintf(stderr, "nvp_tgt: --mem-size %s: megabytes\n", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("nvp_tgt (nvpoll) %s\n", NVP_VERSION_STRING);
			exit(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nvp_tgt: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (a->config == NULL) {
		fprintf(stderr, "nvp_tgt: no configuration: pass -c FILE (nvp_tgt(8) has an "
				"example)\n");
		usage(stderr);
		return 2;
	}
	return 0;
}

/* ---- poll threads ---- */

/* Thread 0: every pending connection of every listener, given round robin. */
static int
accept_all(struct tgt *t)
{
	int work = 0;

	for (uint32_t i = 0; i < t->num_listeners; i++) {
		int fd, one = 1;

		while ((fd = accept4(t->listeners[i].fd, NULL, NULL,
				     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
			struct tgt_thread *th = &t->threads[t->next_thread++ % t->num_threads];

			(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			work = 1;
			pthread_mutex_lock(&th->inbox_lock);
			if (th->inbox_len == sizeof(th->inbox) / sizeof(th->inbox[0])) {
				pthread_mutex_unlock(&th->inbox_lock);
				fprintf(stderr,
					"nvp_tgt: thread %u has 64 connections waiting: one "
					"refused\n",
					th->idx);
				close(fd);
				continue;
			}
			th->inbox[th->inbox_len++] = fd | (int)(i << 24);
			atomic_store(&th->inbox_n, th->inbox_len);
			pthread_mutex_unlock(&th->inbox_lock);
		}
	}
	return work;
}

static void
take_inbox(struct tgt_thread *th)
{
	int fds[64];
	uint32_t n;

	if (atomic_load(&th->inbox_n) == 0) {
		return;
	}
	pthread_mutex_lock(&th->inbox_lock);
	n = th->inbox_len;
	memcpy(fds, th->inbox, n * sizeof(fds[0]));
	th->inbox_len = 0;
	atomic_store(&th->inbox_n, 0);
	pthread_mutex_unlock(&th->inbox_lock);
	for (uint32_t i = 0; i < n; i++) {
		(void)tgt_conn_create(th, fds[i] & 0xffffff, (uint32_t)fds[i] >> 24);
	}
}

static int
poll_conns(struct tgt_thread *th)
{
	struct tgt_conn *c = th->conns;
	int work = 0;

	while (c != NULL) {
		struct tgt_conn *next = tgt_conn_next(c);

		if (tgt_conn_poll(c) > 0) {
			work = 1;
		}
		c = next;
	}
	return work;
}

static void
tick(struct tgt_thread *th)
{
	uint64_t now = tgt_now_ms();

	if (now < th->next_tick_ms) {
		return;
	}
	th->next_tick_ms = now + TICK_MS;
	for (struct tgt_conn *c = th->conns; c != NULL; c = tgt_conn_next(c)) {
		tgt_ctrlr_check_kato(c, now);
	}
}

/* Nothing to do for a while: wait for a socket (or a millisecond) in poll(2). */
static void
idle_wait(struct tgt_thread *th)
{
	struct pollfd fds[POLL_FDS];
	nfds_t n = 0;

	if (th->idx == 0) {
		for (uint32_t i = 0; i < th->t->num_listeners; i++) {
			fds[n++] = (struct pollfd){ .fd = th->t->listeners[i].fd,
						    .events = POLLIN };
		}
	}
	for (struct tgt_conn *c = th->conns; c != NULL && n < POLL_FDS; c = tgt_conn_next(c)) {
		fds[n++] = (struct pollfd){ .fd = tgt_conn_fd(c), .events = POLLIN };
	}
	(void)poll(fds, n, 1);
}

static void
drain(struct tgt_thread *th)
{
	uint64_t end = tgt_now_ms() + DRAIN_MS;

	take_inbox(th);
	for (struct tgt_conn *c = th->conns; c != NULL; c = tgt_conn_next(c)) {
		tgt_conn_drain(c);
	}
	while (th->conns != NULL && tgt_now_ms() < end) {
		(void)poll_conns(th);
		(void)nvp_bdev_poll_group_poll(th->group);
	}
	if (th->conns != NULL) {
		fprintf(stderr,
			"nvp_tgt: thread %u: %u connections still had I/O at the bdev "
			"after %u s\n",
			th->idx, th->num_conns, DRAIN_MS / 1000u);
	}
}

static void *
poll_thread(void *arg)
{
	struct tgt_thread *th = arg;
	struct tgt *t = th->t;
	uint64_t idle_since = 0, budget = 0;
	uint32_t spins = 0;
	struct tgt_idle idle;

	tgt_idle_init(&idle, nvp_env_get_ticks_hz() * IDLE_US / 1000000u);

	if (th->core >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(th->core, &set);
		if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) {
			fprintf(stderr,
				"nvp_tgt: thread %u: cannot run on core %d (not in this "
				"process's CPU set); it runs unpinned\n",
				th->idx, th->core);
		}
	}
	while (!atomic_load(&t->stop)) {
		int work = 0;

		if (th->idx == 0) {
			work |= accept_all(t);
		}
		take_inbox(th);
		work |= poll_conns(th);
		work |= nvp_bdev_poll_group_poll(th->group) > 0;
		tick(th);
		if (work || nvp_bdev_poll_group_get_outstanding(th->group) != 0) {
			if (idle_since != 0) { /* the idle period's gap, spun or slept */
				tgt_idle_end(&idle, nvp_env_get_ticks() - idle_since);
				idle_since = 0;
			}
			/* waiting for a device: on a CPU shared with its thread (a software
			 * controller, another program), let it run now and then; alone on its
			 * core the call returns at once */
			if (!work && ++spins % YIELD_SPINS == 0) {
				sched_yield();
			}
		} else if (idle_since == 0) {
			idle_since = nvp_env_get_ticks();
			budget = tgt_idle_budget(&idle);
			if (budget == 0) {
				idle_wait(th);
			}
		} else if (nvp_env_get_ticks() - idle_since > budget) {
			/* still idle after a wait (its 1 ms ran out): wait again, no new spin */
			idle_wait(th);
		}
	}
	drain(th);
	return NULL;
}

static int
threads_start(struct tgt *t, uint64_t mask)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	for (int core = 0; core < 64; core++) {
		struct tgt_thread *th;

		if ((mask & (1ull << core)) == 0) {
			continue;
		}
		th = &t->threads[t->num_threads];
		th->t = t;
		th->idx = t->num_threads;
		th->core = core < ncpu ? core : -1;
		pthread_mutex_init(&th->inbox_lock, NULL);
		t->num_threads++;
	}
	return t->num_threads != 0 ? 0 : -EINVAL;
}

/* A poll group belongs to the thread that made it: each thread makes its own. */
static void *
thread_main(void *arg)
{
	struct tgt_thread *th = arg;

	if (nvp_bdev_poll_group_create(&th->group) != 0) {
		fprintf(stderr, "nvp_tgt: thread %u: no memory for its poll group\n", th->idx);
		atomic_store(&th->t->stop, true);
		return NULL;
	}
	(void)poll_thread(th);
	if (th->chans != NULL) {
		fprintf(stderr, "nvp_tgt: thread %u: a bdev channel outlived its connections\n",
			th->idx);
	}
	(void)nvp_bdev_poll_group_destroy(th->group);
	return NULL;
}

/* ---- main ---- */

static void
print_ready(const struct tgt *t)
{
	for (uint32_t i = 0; i < t->num_listeners; i++) {
		const struct tgt_listener *l = &t->listeners[i];

		printf("nvp_tgt: listening on TCP %s %s port %s\n",
		       l->family == AF_INET6 ? "IPv6" : "IPv4", l->traddr, l->trsvcid);
	}
	for (uint32_t s = 1; s < t->num_subsys; s++) {
		const struct tgt_subsys *ss = t->subsys[s];

		printf("nvp_tgt: subsystem %s: %u namespace%s, %s\n", ss->nqn, ss->num_ns,
		       ss->num_ns == 1 ? "" : "s",
		       ss->allow_any_host ? "any host" : "listed hosts only");
	}
	printf("nvp_tgt: ready, %u poll thread%s\n", t->num_threads,
	       t->num_threads == 1 ? "" : "s");
	fflush(stdout);
}

static void
print_summary(struct tgt *t)
{
	printf("nvp_tgt: %llu connections, %llu commands, %.1f MiB read, %.1f MiB written, "
	       "%llu bad PDUs, %llu hosts refused, %llu keep-alive expiries\n",
	       (unsigned long long)atomic_load(&t->stats.connections),
	       (unsigned long long)atomic_load(&t->stats.commands),
	       (double)atomic_load(&t->stats.read_bytes) / 1048576.0,
	       (double)atomic_load(&t->stats.write_bytes) / 1048576.0,
	       (unsigned long long)atomic_load(&t->stats.bad_pdus),
	       (unsigned long long)atomic_load(&t->stats.refused_hosts),
	       (unsigned long long)atomic_load(&t->stats.kato_expired));
}

/* Until SIGINT, SIGTERM or the time limit. \return the signal, or 0 for the time limit. */
static int
wait_signal(const sigset_t *set, uint32_t seconds)
{
	uint64_t end = seconds ? tgt_now_ms() + (uint64_t)seconds * 1000u : 0;
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 100000000 };

	while (end == 0 || tgt_now_ms() < end) {
		int sig = sigtimedwait(set, NULL, &ts);

		if (sig > 0) {
			return sig;
		}
	}
	return 0;
}

static int
env_start(const struct tgt_args *a)
{
	struct nvp_env_opts eo;

	nvp_env_opts_init(&eo, sizeof(eo));
	eo.name = "nvp_tgt";
	eo.no_huge = a->no_huge;
	eo.mem_size_mb = a->mem_mb;
	eo.quiet = true;
	return nvp_env_init(&eo);
}

int
main(int argc, char **argv)
{
	static struct tgt t;
	struct tgt_args a;
	sigset_t set;
	int rc, sig;

	rc = parse_args(argc, argv, &a);
	if (rc != 0) {
		return rc;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	rc = env_start(&a);
	if (rc != 0) {
		fprintf(stderr, "nvp_tgt: environment: %s (try --no-huge)\n", strerror(-rc));
		return 1;
	}
	t.opts.in_capsule = 8192;
	t.opts.maxh2cdata = 65536;
	pthread_mutex_init(&t.ctrlr_lock, NULL);
	rc = nvp_bdev_load_config_file(a.config);
	if (rc == 0) {
		rc = tgt_config_load(&t, a.config);
		rc = rc == -EINVAL ? 2 : rc != 0 ? 1 : 0;
	} else {
		fprintf(stderr, "nvp_tgt: %s: the bdevs could not be made: %s%s\n", a.config,
			strerror(-rc),
			rc == -ENOMEM ? " (malloc bdevs and request buffers are DMA memory: "
					"give more with --mem-size MB, or reserve hugepages)" :
					"");
		rc = nvp_bdev_config_error_is_usage(rc) ? 2 : 1;
	}
	if (rc == 0) {
		rc = threads_start(&t, a.mask) == 0 ? 0 : 1;
	}
	for (uint32_t i = 0; rc == 0 && i < t.num_threads; i++) {
		if (pthread_create(&t.threads[i].tid, NULL, thread_main, &t.threads[i]) != 0) {
			fprintf(stderr, "nvp_tgt: cannot start poll thread %u\n", i);
			atomic_store(&t.stop, true);
			t.num_threads = i;
			rc = 1;
		}
	}
	if (rc == 0) {
		print_ready(&t);
		sig = wait_signal(&set, a.seconds);
		printf("nvp_tgt: %s: stopping\n", sig == SIGINT  ? "SIGINT" :
						  sig == SIGTERM ? "SIGTERM" :
								   "time limit");
		fflush(stdout);
	}
	atomic_store(&t.stop, true);
	for (uint32_t i = 0; i < t.num_threads; i++) {
		pthread_join(t.threads[i].tid, NULL);
		pthread_mutex_destroy(&t.threads[i].inbox_lock);
	}
	if (rc == 0) {
		print_summary(&t);
	}
	tgt_config_free(&t);
	(void)nvp_bdev_fini();
	nvp_env_fini();
	return rc;
}

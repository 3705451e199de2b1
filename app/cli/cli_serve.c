/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp serve: one controller offered over NVMe/TCP, to try the NVMe/TCP host side on one
 * machine (nvp, nvp_perf, the fio engine, the kernel's nvme-tcp):
 *
 *   nvp serve                                    # a software controller on 127.0.0.1:4420
 *   nvp_perf -r 'trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:4420 subnqn:...'
 *
 * The controller is attached as any nvp device (by default "trtype:emu name:emu0", a
 * software controller made for the run) and served by app/common/nvme_tcp_tgt.c: a thread
 * per connection, one command at a time on each. A test and demo target; the real one,
 * with bdevs and poll groups, is to come (nvp_tgt). It runs until Ctrl-C (SIGINT), SIGTERM
 * or the time limit, then closes every connection, detaches and exits 0. SIGINT and
 * SIGTERM are blocked in every thread and taken by the main thread with sigtimedwait(), so
 * no handler runs inside the library.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "nvpoll/env.h"
#include "nvpoll/nvme_mpath.h"
#include "nvpoll/nvme_tcp_spec.h"
#include "nvpoll/util.h"

#include "nvme_tcp_tgt.h"
#include "nvp_cli.h"

#define SERVE_DEFAULT_DEV "trtype:emu name:emu0"
#define SERVE_DEFAULT_NQN "nqn.2026-01.io.nvpoll:serve"
#define SERVE_DEFAULT_PORT 4420u
#define SERVE_MAX_SECONDS 31536000u /* a year */
#define SERVE_NQN_MAX 223u          /* NVMe 1.4 section 7.9: NQNs are at most 223 bytes */
#define SERVE_MAX_PORTS 8u          /* listeners of --ana */

struct serve_args {
	const char *dev;
	const char *addr;
	const char *nqn;
	uint32_t port;
	uint32_t seconds; /* 0 = until a signal */
	bool hdgst;
	bool ddgst;
	uint32_t num_ports;           /* listeners: 1, or one per --ana state */
	uint8_t ana[SERVE_MAX_PORTS]; /* --ana: each listener's ANA state; 0 = no ANA */
};

static void
serve_usage(FILE *f)
{
	fprintf(f,
		"usage: nvp serve [-r DEVICE] [--addr ADDR] [-p PORT] [--nqn NQN] [--hdgst]\n"
		"                 [--ddgst] [-t SECONDS] [--ana STATE[,STATE...]]\n"
		"Serve one controller over NVMe/TCP until Ctrl-C: a test and demo target (a thread\n"
		"per connection, one command at a time on each), not one to measure with.\n"
		"  -r, --trid DEVICE   the controller: a PCI address, a transport ID or emu:OPTS\n"
		"                      (default \"" SERVE_DEFAULT_DEV "\", a software controller)\n"
		"      --addr ADDR     IPv4 or IPv6 address to listen on (default 127.0.0.1)\n"
		"  -p, --port PORT     TCP port, 0..65535; 0: any free one (default 4420)\n"
		"      --nqn NQN       subsystem NQN hosts connect to\n"
		"                      (default " SERVE_DEFAULT_NQN ")\n"
		"      --hdgst         require header digests (default: used when a host asks)\n"
		"      --ddgst         require data digests (default: used when a host asks)\n"
		"  -t, --time SECONDS  stop after this long, 1..%u (default: at Ctrl-C or\n"
		"                      SIGTERM)\n"
		"      --ana STATES    multipath: one listener per state (PORT, PORT+1, ...; each a\n"
		"                      free one with -p 0), the namespaces in ANA group 1 whose\n"
		"                      state through that listener is optimized, non-optimized,\n"
		"                      inaccessible, persistent-loss or change (up to %u)\n"
		"  -h, --help          this help\n"
		"It prints the transport ID to connect to, e.g. for nvp_perf -r 'trtype:TCP\n"
		"adrfam:IPv4 traddr:127.0.0.1 trsvcid:4420 subnqn:" SERVE_DEFAULT_NQN "'.\n"
		"Exit status: 0 stopped by a signal or the time limit, 1 the controller or the\n"
		"port could not be had, 2 usage error.\n",
		SERVE_MAX_SECONDS, SERVE_MAX_PORTS);
}

static int
serve_usage_error(const char *fmt, const char *what)
{
	fprintf(stderr, "nvp serve: ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, "\ntry 'nvp serve --help'\n");
	return CLI_EXIT_USAGE;
}

static int
parse_u32_arg(const char *name, const char *val, uint64_t min, uint64_t max, uint32_t *out)
{
	uint64_t v;

	if (nvp_strtou64(val, min, max, &v) != 0) {
		fprintf(stderr,
			"nvp serve: %s '%s': expected a number from %" PRIu64 " to %" PRIu64
			"\ntry 'nvp serve --help'\n",
			name, val, min, max);
		return CLI_EXIT_USAGE;
	}
	*out = (uint32_t)v;
	return 0;
}

/* --ana's comma-separated states into @a. \return 0 or CLI_EXIT_USAGE. */
static int
parse_ana(const char *val, struct serve_args *a)
{
	static const uint8_t states[] = { NVME_ANA_OPTIMIZED, NVME_ANA_NON_OPTIMIZED,
					  NVME_ANA_INACCESSIBLE, NVME_ANA_PERSISTENT_LOSS,
					  NVME_ANA_CHANGE };
	const char *p = val;

	a->num_ports = 0;
	while (*p != '\0') {
		size_t len = strcspn(p, ",");
		uint8_t st = 0;

		for (size_t i = 0; i < sizeof(states); i++) {
			const char *name = nvp_nvme_ana_state_name(states[i]);

			if (strlen(name) == len && strncmp(p, name, len) == 0) {
				st = states[i];
			}
		}
		if (st == 0 || a->num_ports == SERVE_MAX_PORTS) {
			return serve_usage_error(
				"--ana '%s': expected up to 8 of optimized, "
				"non-optimized, inaccessible, persistent-loss, change "
				"separated by commas",
				val);
		}
		a->ana[a->num_ports++] = st;
		p += len + (p[len] == ',' ? 1 : 0);
	}
	if (a->num_ports == 0) {
		return serve_usage_error("--ana '%s': expected at least one ANA state", val);
	}
	return 0;
}

/* Check what can be checked before anything starts. \return 0 or CLI_EXIT_USAGE. */
static int
serve_check(const struct serve_args *a)
{
	struct nvp_nvme_transport_id trid;
	struct in6_addr in;
	char err[512];

	if (inet_pton(AF_INET, a->addr, &in) != 1 && inet_pton(AF_INET6, a->addr, &in) != 1) {
		return serve_usage_error("--addr '%s': expected an IPv4 or IPv6 address such as "
					 "127.0.0.1 or ::1",
					 a->addr);
	}
	if (a->nqn[0] == '\0' || strlen(a->nqn) > SERVE_NQN_MAX || strpbrk(a->nqn, " \t") != NULL ||
	    strcmp(a->nqn, NVME_DISCOVERY_NQN) == 0) {
		return serve_usage_error(
			"--nqn '%s': expected an NQN of 1..223 characters without "
			"spaces, not the discovery NQN (nqn.2026-01.com.example:disk1)",
			a->nqn);
	}
	if (cli_device_parse(a->dev, &trid, err, sizeof(err)) != 0) {
		return serve_usage_error("%s", err);
	}
	return 0;
}

/* \return 0, or an exit status (help: CLI_EXIT_OK and *@done). */
static int
serve_args_parse(int argc, char **argv, struct serve_args *a, bool *done)
{
	static const struct option longopts[] = {
		{ "trid", required_argument, NULL, 'r' }, { "addr", required_argument, NULL, 'A' },
		{ "port", required_argument, NULL, 'p' }, { "nqn", required_argument, NULL, 'N' },
		{ "hdgst", no_argument, NULL, 'H' },      { "ddgst", no_argument, NULL, 'D' },
		{ "time", required_argument, NULL, 't' }, { "ana", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },       { NULL, 0, NULL, 0 },
	};
	int c, rc = 0;

	optind = 1;
	opterr = 0;
	while (rc == 0 && (c = getopt_long(argc, argv, ":r:p:t:h", longopts, NULL)) != -1) {
		if (c == 'r') {
			a->dev = optarg;
		} else if (c == 'A') {
			a->addr = optarg;
		} else if (c == 'p') {
			rc = parse_u32_arg("--port", optarg, 0, 65535, &a->port);
		} else if (c == 'N') {
			a->nqn = optarg;
		} else if (c == 'H' || c == 'D') {
			*(c == 'H' ? &a->hdgst : &a->ddgst) = true;
		} else if (c == 't') {
			rc = parse_u32_arg("--time", optarg, 1, SERVE_MAX_SECONDS, &a->seconds);
		} else if (c == 'a') {
			rc = parse_ana(optarg, a);
		} else if (c == 'h') {
			serve_usage(stdout);
			*done = true;
			return CLI_EXIT_OK;
		} else {
			return serve_usage_error(c == ':' ? "option '%s' needs a value" :
							    "unknown option '%s'",
						 argv[optind - 1]);
		}
	}
	if (rc == 0 && a->port != 0 && a->port + a->num_ports - 1 > 65535) {
		return serve_usage_error("--ana: %s", "one listener per state needs ports PORT .. "
						      "PORT+N-1 below 65536; choose a lower -p "
						      "or -p 0");
	}
	if (rc == 0 && optind < argc) {
		return serve_usage_error("unexpected argument '%s' (the controller is -r DEVICE)",
					 argv[optind]);
	}
	return rc != 0 ? rc : serve_check(a);
}

/* Wait for SIGINT or SIGTERM (blocked in every thread), or @seconds (0: no limit). */
static void
serve_wait(const sigset_t *set, uint32_t seconds)
{
	struct timespec ts = { .tv_sec = seconds, .tv_nsec = 0 };
	int sig;

	do {
		sig = sigtimedwait(set, NULL, seconds != 0 ? &ts : NULL);
	} while (sig < 0 && errno == EINTR);
	if (sig > 0) {
		printf("nvp serve: %s: stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
	} else {
		printf("nvp serve: %" PRIu32 " s passed: stopping\n", seconds);
	}
	fflush(stdout);
}

static void
print_banner(const struct serve_args *a, struct nvp_nvme_ctrlr *ctrlr, struct tcp_tgt *const *t,
	     uint32_t n_tgt)
{
	char trid[NVP_NVME_TRARGS_MAX];
	uint32_t n = 0;

	for (uint32_t ns = nvp_nvme_ctrlr_get_first_active_ns(ctrlr); ns != 0;
	     ns = nvp_nvme_ctrlr_get_next_active_ns(ctrlr, ns)) {
		n++;
	}
	for (uint32_t i = 0; i < n_tgt; i++) {
		tcp_tgt_trid(t[i], NULL, trid, sizeof(trid));
		printf("nvp serve: %s (%" PRIu32 " namespace%s) over NVMe/TCP on %s:%u, digests "
		       "%s; a test and demo target\n",
		       a->dev, n, n == 1 ? "" : "s", a->addr, tcp_tgt_port(t[i]),
		       a->hdgst && a->ddgst ? "required" :
		       a->hdgst             ? "header required, data when asked" :
		       a->ddgst             ? "data required, header when asked" :
					      "when a host asks");
		if (a->num_ports != 0) {
			printf("ANA group 1: %s through port %u\n",
			       nvp_nvme_ana_state_name(a->ana[i]), tcp_tgt_port(t[i]));
		}
		printf("transport ID: %s\n", trid);
	}
	printf("Ctrl-C or SIGTERM stops it%s.\n", a->seconds != 0 ? ", or the time limit" : "");
	fflush(stdout);
}

/* Listener @i of @a. \return 0 or CLI_EXIT_FAIL (said why). */
static int
serve_listen(const struct serve_args *a, struct nvp_nvme_ctrlr *ctrlr, uint32_t i,
	     struct tcp_tgt **t)
{
	struct tcp_tgt_opts o;
	uint32_t port = a->port != 0 ? a->port + i : 0;
	int rc;

	tcp_tgt_opts_init(&o);
	o.addr = a->addr;
	o.port = (uint16_t)port;
	o.subnqn = a->nqn;
	o.hdgst_required = a->hdgst;
	o.ddgst_required = a->ddgst;
	if (a->num_ports != 0) {
		o.ana_grpid = 1;
		o.ana_state = a->ana[i];
	}
	rc = tcp_tgt_start(ctrlr, &o, t);
	if (rc != 0) {
		fprintf(stderr, "nvp serve: cannot listen on %s:%" PRIu32 ": %s%s\n", a->addr, port,
			strerror(-rc),
			rc == -EADDRINUSE    ? " (another target there? choose a port with -p)" :
			rc == -EADDRNOTAVAIL ? " (not an address of this machine)" :
					       "");
		return CLI_EXIT_FAIL;
	}
	return 0;
}

static int
serve_run(const struct serve_args *a, struct nvp_nvme_ctrlr *ctrlr, const sigset_t *set)
{
	struct tcp_tgt *t[SERVE_MAX_PORTS];
	uint32_t n = a->num_ports != 0 ? a->num_ports : 1, i;
	struct tcp_tgt_stats st, sum;
	int rc = 0;

	for (i = 0; i < n && rc == 0; i++) {
		rc = serve_listen(a, ctrlr, i, &t[i]);
	}
	if (rc != 0) {
		for (uint32_t k = 0; k + 1 < i; k++) {
			tcp_tgt_stop(t[k]);
		}
		return rc;
	}
	print_banner(a, ctrlr, t, n);
	serve_wait(set, a->seconds);
	memset(&sum, 0, sizeof(sum));
	for (i = 0; i < n; i++) {
		tcp_tgt_get_stats(t[i], &st);
		tcp_tgt_stop(t[i]);
		sum.connections += st.connections;
		sum.refused += st.refused;
		sum.capsules += st.capsules;
		sum.hdgsts_checked += st.hdgsts_checked;
		sum.ddgsts_checked += st.ddgsts_checked;
		sum.bad_host_pdus += st.bad_host_pdus;
	}
	printf("nvp serve: %" PRIu64 " connections (%" PRIu64 " refused), %" PRIu64
	       " commands, %" PRIu64 " header and %" PRIu64 " data digests checked, %" PRIu64
	       " bad PDUs from hosts\n",
	       sum.connections, sum.refused, sum.capsules, sum.hdgsts_checked, sum.ddgsts_checked,
	       sum.bad_host_pdus);
	return CLI_EXIT_OK;
}

int
cli_serve_main(int argc, char **argv)
{
	struct serve_args a = {
		.dev = SERVE_DEFAULT_DEV,
		.addr = "127.0.0.1",
		.nqn = SERVE_DEFAULT_NQN,
		.port = SERVE_DEFAULT_PORT,
	};
	struct nvp_nvme_ctrlr *ctrlr;
	bool done = false;
	sigset_t set;
	int rc;

	rc = serve_args_parse(argc, argv, &a, &done);
	if (rc != 0 || done) {
		return rc;
	}
	/* Before any thread exists (env, the software controller, the target's), so that
	 * every one of them inherits the mask and only sigtimedwait() takes the signals. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	rc = cli_device_open(a.dev, 0, &ctrlr);
	if (rc != 0) {
		rc = rc == -EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
	} else {
		rc = serve_run(&a, ctrlr, &set);
		nvp_nvme_detach(ctrlr);
	}
	if (nvp_env_is_initialized()) {
		nvp_env_fini();
	}
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/tcp_failover's target: `nvp serve` on a file-backed software controller, in its
 * own process, so that killing it is a real process kill (SIGKILL: sockets reset by the
 * kernel, nothing flushed by the target) and restarting it finds the data on the file.
 */
#ifndef NVP_BENCH_TF_H
#define NVP_BENCH_TF_H

#include <stdint.h>
#include <sys/types.h>

struct tf_target {
	char nvp[4096];  /* the nvp program */
	char dev[512];   /* its -r: emu:file=DIR/tf,... */
	char log[4096];  /* its standard output and error, appended over every start */
	uint16_t port;   /* 0 until the first start has told it; then every start uses it */
	pid_t pid;       /* 0: not running */
	long log_off;    /* where this start's output begins in the log */
	char trid[512];  /* the transport ID it printed */
	uint32_t starts; /* processes started */
};

/* Start the target (the port it had, or any free one the first time). \return 0 or -errno. */
int tf_target_spawn(struct tf_target *t);
/* Has the started target printed its transport ID? \return 1 yes (trid, port set), 0 not
 * yet, -ECHILD it exited (its log says why). */
int tf_target_ready(struct tf_target *t);
/* Send @sig and reap the process. */
void tf_target_kill(struct tf_target *t, int sig);

#endif

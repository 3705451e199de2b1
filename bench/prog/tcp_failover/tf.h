/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/tcp_failover's target: `nvp serve` on a file-backed software controller, in its
 * own process, so that killing it is a real process kill (SIGKILL: sockets reset by the
 * kernel, nothing flushed by the target) and restarting it finds the data on the file.
 */
#ifndef NVP_BENCH_TF_H
#define NVP_BENCH_TF_H

#include <stdbool.h>
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

/*
 * The path-flip target (tf_paths.c): one software controller (RAM-backed: this target
 * never dies, only its paths do) served in this process by the project's NVMe/TCP target
 * on two loopback listeners, one subsystem, each listener a path with its own ANA state
 * for the namespace's group; the host reaches it as one multipath controller.
 */
#define TF_PATHS 2u

struct tcp_tgt;
struct nvp_emu_ctrlr;
struct nvp_nvme_ctrlr;
struct nvp_nvme_mpath;

struct tf_paths {
	struct nvp_emu_ctrlr *emu;
	struct nvp_nvme_ctrlr *backend; /* the target's controller */
	struct tcp_tgt *tgt[TF_PATHS];
	struct nvp_nvme_mpath *mp; /* the host's multipath controller over both listeners */
};

/* Start the controller (@blocks of 4 KiB), both listeners (ANA optimized) and connect the
 * host (failover policy, a path reconnected every @reconnect_ms). \return 0 or -errno. */
int tf_paths_open(struct tf_paths *p, uint32_t blocks, uint32_t reconnect_ms);
/* Path @i's ANA state through its listener, with an ANA change notice. */
void tf_paths_set_ana(struct tf_paths *p, uint32_t i, uint8_t state);
/* Path @i killed (its listener closed: connects refused; then its connections reset, at
 * *@at in ticks) or listening again (@at unused). \return 0 or -errno. */
int tf_paths_set_alive(struct tf_paths *p, uint32_t i, bool alive, uint64_t *at);
/* Everything stopped and freed (the host's multipath controller first). */
void tf_paths_close(struct tf_paths *p);

#endif

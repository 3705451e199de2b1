/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_tgt: bdevs served over NVMe/TCP (NVMe/TCP Transport Specification 1.0, NVMe-oF 1.1).
 *
 * The objects, from the configuration down to a command:
 * - a subsystem (NQN, serial, model, allow_any_host, hosts, namespaces = bdevs, listeners);
 *   the discovery subsystem (nqn.2014-08.org.nvmexpress.discovery) is always there;
 * - a listener: a nonblocking listening socket, accepted from by poll thread 0;
 * - a poll thread (one per core of -m): a bdev poll group and the connections given to it,
 *   round robin; it runs to completion, never blocks on a socket and never sleeps while a
 *   connection or an I/O has work (idle, it waits in poll(2) for at most a millisecond);
 * - a controller (an association): made by an admin queue's Connect, named by its CNTLID;
 *   its I/O queues' Connects find it in the target's table, from any thread. A host NQN is
 *   a tenant of the namespaces' schedulers (tgt_config.c);
 * - a connection (one queue): the receive state machine (whole PDUs from a byte buffer),
 *   requests preallocated by queue depth, a send queue of PDUs gathered into one sendmsg().
 * Configuration data is read-only once the threads run; a controller's shared state is
 * its reference count, its dead flag and its keep-alive deadline (atomics); the table of
 * controllers has a mutex taken only by Connect and by the end of an association.
 */
#ifndef NVP_APP_TGT_H
#define NVP_APP_TGT_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "nvpoll/bdev.h"
#include "nvpoll/nvme_spec.h"
#include "nvpoll/nvme_tcp_spec.h"

#define TGT_MAX_THREADS 64u
#define TGT_MAX_SUBSYS 32u
#define TGT_MAX_NS 32u        /* per subsystem */
#define TGT_MAX_HOSTS 32u     /* per subsystem */
#define TGT_MAX_LISTENERS 16u /* in all */
#define TGT_MAX_IOQ 64u       /* I/O queues a controller may have */
#define TGT_MQES 127u         /* CAP.MQES: 128 entries a queue */
#define TGT_ADMIN_DEPTH 32u
#define TGT_MDTS 5u                    /* 2^5 x 4 KiB = 128 KiB a command */
#define TGT_MAX_IO (4096u << TGT_MDTS) /* bytes a command may move */
#define TGT_MAX_AERS 4u                /* AERL + 1 */
#define TGT_RXBUF (TGT_MAX_IO + 4096u) /* >= the largest PDU accepted */
#define TGT_KAS_MS 100u                /* Identify KAS: 100 ms granularity */
#define TGT_NQN_MAX 223u               /* NVMe 1.4 section 7.9 */
#define TGT_DEFAULT_SN "NVPOLL0000000001"
#define TGT_DEFAULT_MN "nvpoll nvp_tgt"

struct tgt_conn;
struct tgt_ctrlr;

struct tgt_listener {
	int fd;
	int family; /* AF_INET or AF_INET6 */
	char traddr[INET6_ADDRSTRLEN];
	char trsvcid[8];
	struct sockaddr_storage sa;
	socklen_t salen;
};

struct tgt_host {
	char nqn[NVME_NQN_FIELD_SIZE];
	uint32_t weight; /* 0 = none given */
	uint32_t lat_us; /* 0 = none */
	uint32_t tenant; /* the host's tenant id on every bdev (tgt_config.c) */
};

struct tgt_ns {
	uint32_t nsid;
	struct nvp_bdev *bdev;
	char bdev_name[64];
	uint8_t nguid[16];
};

struct tgt_subsys {
	char nqn[NVME_NQN_FIELD_SIZE];
	char sn[21];
	char mn[41];
	bool allow_any_host;
	bool discovery;
	struct tgt_ns ns[TGT_MAX_NS];
	uint32_t num_ns;
	struct tgt_host hosts[TGT_MAX_HOSTS];
	uint32_t num_hosts;
	bool listener[TGT_MAX_LISTENERS]; /* reachable through listener i */
};

struct tgt_opts {
	uint32_t in_capsule; /* in-capsule data bytes of an I/O command (IOCCSZ - 64) */
	uint32_t maxh2cdata; /* ICResp MAXH2CDATA */
};

struct tgt_stats {
	atomic_uint_fast64_t connections;
	atomic_uint_fast64_t refused_hosts;
	atomic_uint_fast64_t bad_pdus;
	atomic_uint_fast64_t kato_expired;
	atomic_uint_fast64_t commands;
	atomic_uint_fast64_t read_bytes;
	atomic_uint_fast64_t write_bytes;
	atomic_uint_fast64_t read_cmds; /* (the SMART log's host read / write commands) */
	atomic_uint_fast64_t write_cmds;
};

/* A thread's channel on one bdev for one tenant, shared by its connections' namespaces:
 * one device queue per thread and host, not per host queue (an nvme bdev's qpairs are
 * the device's, and a host opens one queue per CPU). */
struct tgt_chan {
	struct tgt_chan *next;
	struct nvp_bdev *bdev;
	uint32_t tenant;
	uint32_t refs;
	struct nvp_bdev_desc *desc;
	struct nvp_bdev_channel *ch;
};

struct tgt_thread {
	struct tgt *t;
	uint32_t idx;
	int core; /* -1: not pinned */
	pthread_t tid;
	struct nvp_bdev_poll_group *group;
	struct tgt_conn *conns; /* this thread's connections */
	struct tgt_chan *chans; /* their channels */
	uint32_t num_conns;
	pthread_mutex_t inbox_lock; /* accepted sockets given to this thread */
	int inbox[64];
	uint32_t inbox_len;
	atomic_uint inbox_n;
	uint64_t next_tick_ms; /* keep-alive and closing checks */
};

struct tgt {
	struct tgt_opts opts;
	struct tgt_subsys *subsys[TGT_MAX_SUBSYS + 1]; /* [0]: discovery */
	uint32_t num_subsys;                           /* with discovery */
	struct tgt_listener listeners[TGT_MAX_LISTENERS];
	uint32_t num_listeners;
	struct tgt_thread threads[TGT_MAX_THREADS];
	uint32_t num_threads;
	uint32_t next_thread; /* round robin of accepted connections (thread 0 only) */
	atomic_bool stop;
	pthread_mutex_t ctrlr_lock;
	struct tgt_ctrlr *ctrlrs; /* live associations */
	uint16_t next_cntlid;
	bool any_weight; /* some host has a weight: namespaces are scheduled by "fair" */
	struct tgt_stats stats;
};

/* ---- tgt_config.c ---- */

/*
 * The "nvmf" subsystem of the configuration file @path (the "bdev" one is loaded by
 * nvp_bdev_load_config_file()); listeners are opened. \return 0, -EINVAL (a message says
 * file, entry and what is wrong), or a socket error (-EADDRINUSE ...).
 */
int tgt_config_load(struct tgt *t, const char *path);
void tgt_config_free(struct tgt *t);
/* Subsystem @nqn, or NULL. */
struct tgt_subsys *tgt_subsys_find(struct tgt *t, const char *nqn);
/* The host entry of @hostnqn in @ss, or NULL. */
const struct tgt_host *tgt_subsys_host(const struct tgt_subsys *ss, const char *hostnqn);
/* Whether @hostnqn may connect to @ss through listener @lidx. */
bool tgt_subsys_allows(const struct tgt_subsys *ss, const char *hostnqn, uint32_t lidx);

/* ---- tgt_conn.c ---- */

/* A connection for accepted socket @fd (nonblocking) on thread @th, through listener @lidx. */
int tgt_conn_create(struct tgt_thread *th, int fd, uint32_t lidx);
/*
 * One pass over a connection: receive and parse what the socket has, send what is queued.
 * \return > 0 work done, 0 nothing to do, < 0 the connection is closed and freed.
 */
int tgt_conn_poll(struct tgt_conn *c);
/*
 * The target stops: commands not begun are answered Aborted SQ Deletion, held AERs too;
 * those begun (data awaited, at the bdev) finish and are answered; then the connection
 * closes (or after 5 s).
 */
void tgt_conn_drain(struct tgt_conn *c);
/* Stop reading commands: the connection closes once its I/O is done and sent. */
void tgt_conn_close(struct tgt_conn *c, const char *why);
int tgt_conn_fd(const struct tgt_conn *c);
struct tgt_conn *tgt_conn_next(const struct tgt_conn *c);
/* The test's bad-PDU injection is not here: a test writes bad bytes itself. */

/* ---- tgt_ctrlr.c ---- */

struct tgt_req;

/*
 * Execute the command of @r (its data, if any, in r->buf): fabrics, admin or I/O. It ends
 * with tgt_req_complete() now or later (I/O, held AERs).
 */
void tgt_cmd_exec(struct tgt_conn *c, struct tgt_req *r);
/* A connection closes: let go of its controller (the association ends with the admin one). */
void tgt_ctrlr_detach(struct tgt_conn *c);
/* Whether the controller of @c is gone (its association ended): close @c. */
bool tgt_ctrlr_is_dead(const struct tgt_conn *c);
/* Keep-alive: end the association if the host sent no Keep Alive within KATO. */
void tgt_ctrlr_check_kato(struct tgt_conn *c, uint64_t now_ms);

uint64_t tgt_now_ms(void);

#endif /* NVP_APP_TGT_H */

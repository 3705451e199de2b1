/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A small NVMe/TCP target, for the functional tests and `nvp serve`: it listens on an
 * IPv4 or IPv6 address (127.0.0.1 by default), speaks the NVMe/TCP PDUs (ICReq/ICResp,
 * capsules, R2T/H2CData, C2HData, digests) and passes the commands to a controller
 * attached with the driver (the software controller, usually), as the kernel's nvmet
 * passes them to a block device. Registers are properties it keeps per admin connection.
 * A thread per connection, one command at a time on each: a target to test and show the
 * host side with, not to measure. It keeps each controller's Keep Alive Timer: no Keep
 * Alive command within the KATO the host's Connect asked for ends the association. It can
 * misbehave on request, once, on the next I/O command, or stall (read and answer nothing
 * for a while, its connections open): the faults a host must survive.
 * The judge of the transport is the kernel's target in the QEMU guest; this one lets
 * `make test` cover it without a VM. Public API only.
 */
#ifndef NVP_APP_TCP_TGT_H
#define NVP_APP_TCP_TGT_H

#include <stdbool.h>
#include <stdint.h>

#include "nvpoll/nvme.h"

enum tcp_tgt_fault {
	TCP_TGT_FAULT_NONE = 0,
	TCP_TGT_FAULT_CLOSE,      /* close the connection instead of answering */
	TCP_TGT_FAULT_BAD_TYPE,   /* a PDU of a type the controller may not send */
	TCP_TGT_FAULT_BAD_PLEN,   /* a CapsuleResp whose PLEN disagrees with its HLEN */
	TCP_TGT_FAULT_BAD_HDGST,  /* a CapsuleResp with a wrong header digest */
	TCP_TGT_FAULT_BAD_DDGST,  /* C2HData with a wrong data digest (the next read) */
	TCP_TGT_FAULT_R2T_BEYOND, /* an R2T for more data than the write has */
	TCP_TGT_FAULT_C2H_BEYOND, /* C2HData past the end of the read's buffer */
	TCP_TGT_FAULT_TERM_REQ,   /* a C2HTermReq */
};

struct tcp_tgt_opts {
	const char *addr;    /* IPv4 or IPv6 address to listen on; "127.0.0.1" */
	uint16_t port;       /* TCP port; 0 = a free one (tcp_tgt_port() says which) */
	bool hdgst_required; /* refuse a connection that does not ask for header digests
			      * (they are used whenever the host asks, required or not) */
	bool ddgst_required; /* the same for data digests */
	const char *subnqn;
	uint32_t incapsule;  /* in-capsule data bytes an I/O command may carry (IOCCSZ) */
	uint32_t maxh2cdata; /* ICResp MAXH2CDATA */
	uint32_t c2h_chunk;  /* bytes per C2HData PDU */
	uint32_t r2t_chunk;  /* bytes per R2T */
	bool c2h_success;    /* reads end with C2HData SUCCESS instead of a CapsuleResp */
	uint32_t ana_grpid;  /* 0: no ANA reporting; else every namespace is in this ANA group,
			      * whose state through this listener tcp_tgt_set_ana_state() sets */
	uint8_t ana_state;   /* its first state; NVME_ANA_OPTIMIZED */
};

struct tcp_tgt_stats {
	uint64_t connections;
	uint64_t capsules;
	uint64_t incapsule_writes;
	uint64_t r2ts;
	uint64_t h2c_pdus;
	uint64_t c2h_pdus;
	uint64_t hdgsts_checked; /* header digests the host sent and the target verified */
	uint64_t ddgsts_checked;
	uint64_t bad_host_pdus; /* anything wrong the host sent (a test expects 0) */
	uint64_t refused;       /* connections refused: a required digest not asked for */
	uint64_t drops;         /* tcp_tgt_drop_conns() calls */
	uint64_t kato_expired;  /* associations ended: no Keep Alive within the host's KATO */
	uint64_t stalls;        /* tcp_tgt_stall() calls */
	uint64_t ana_aens;      /* ANA change notices sent (held AERs completed) */
	uint64_t ana_refused;   /* I/O commands answered with an ANA status (SCT 3h) */
};

struct tcp_tgt;

void tcp_tgt_opts_init(struct tcp_tgt_opts *opts);

/*
 * Listen on opts->addr:opts->port serving @backend, until tcp_tgt_stop(). \return 0;
 * -EINVAL an address that is neither IPv4 nor IPv6, an empty or too long subnqn;
 * -EADDRINUSE the port is taken; another -errno from socket(), bind(), listen() or
 * pthread_create().
 */
int tcp_tgt_start(struct nvp_nvme_ctrlr *backend, const struct tcp_tgt_opts *opts,
		  struct tcp_tgt **out);
uint16_t tcp_tgt_port(const struct tcp_tgt *t);
/* "trtype:TCP adrfam:IPv4|IPv6 traddr:<addr> trsvcid:<port> subnqn:<nqn>" + " " @extra. */
void tcp_tgt_trid(const struct tcp_tgt *t, const char *extra, char *buf, size_t len);
void tcp_tgt_set_fault(struct tcp_tgt *t, enum tcp_tgt_fault fault);
void tcp_tgt_get_stats(struct tcp_tgt *t, struct tcp_tgt_stats *stats);
/*
 * An outage, for reconnect tests: drop every connection now (each is shut down; the host
 * sees its socket end, as when a target restarts), and stop listening (connects are
 * refused) or listen again on the same port. tcp_tgt_set_listening() returns once the
 * listening socket is closed or open again: 0, or -ETIMEDOUT (the port stayed taken).
 */
void tcp_tgt_drop_conns(struct tcp_tgt *t);
int tcp_tgt_set_listening(struct tcp_tgt *t, bool on);
/*
 * A stalled target, for hang tests: for @ms milliseconds from now no connection reads a
 * command or answers one (a command already read waits; its response goes out after);
 * the connections stay open and the data the host sends waits in the sockets. 0 ends a
 * stall now.
 */
void tcp_tgt_stall(struct tcp_tgt *t, uint32_t ms);
/*
 * A slow controller, for reconnect tests: from now on every command of an admin
 * connection (Connect, properties, Identify, Set Features, Keep Alive) is answered @ms
 * milliseconds after it is read (0: at once again). I/O queues are not slowed.
 */
void tcp_tgt_set_admin_delay(struct tcp_tgt *t, uint32_t ms);
/*
 * Asymmetric Namespace Access through this listener (opts.ana_grpid not 0): set the group's
 * state (enum nvme_ana_state); the ANA log page says it from now on, and I/O commands get
 * ANA Inaccessible / Persistent Loss / Transition (SCT 3h) while it is one of those. With
 * @aen, every admin connection holding an Asynchronous Event Request gets an ANA change
 * notice. \return the number of notices sent.
 */
uint32_t tcp_tgt_set_ana_state(struct tcp_tgt *t, uint8_t state, bool aen);
/* Close every connection, join every thread, free everything. */
void tcp_tgt_stop(struct tcp_tgt *t);

#endif /* NVP_APP_TCP_TGT_H */

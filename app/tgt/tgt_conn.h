/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A connection (one NVMe queue over one TCP connection) and its requests, shared by the
 * transport (tgt_conn.c) and the command handlers (tgt_ctrlr.c, tgt_io.c). A request is
 * one slot of the queue: it holds the command, its data buffer (made at first use, kept),
 * the PDUs that answer it, and lives from its capsule to its last PDU sent.
 */
#ifndef NVP_APP_TGT_CONN_H
#define NVP_APP_TGT_CONN_H

#include "tgt.h"

enum tgt_req_state {
	REQ_FREE = 0,
	REQ_WAIT_H2C, /* R2T sent (or queued): H2CData expected */
	REQ_EXEC,     /* at the handler or the bdev */
	REQ_HELD,     /* an Asynchronous Event Request kept for an event */
	REQ_TX,       /* its response queued */
};

#define TGT_REQ_IOVS 6

struct tgt_req {
	/* hot: the command and its progress */
	struct tgt_conn *c;
	struct tgt_req *next; /* free list, send queue, retry list */
	enum tgt_req_state state;
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;
	uint8_t *buf;     /* TGT_MAX_IO bytes of DMA memory, made at first use */
	uint32_t len;     /* the command's data length (its SGL) */
	uint32_t got;     /* H2CData bytes received */
	uint32_t pending; /* DSM: ranges still at the bdev */
	uint16_t idx;     /* the R2T's TTAG */
	bool tx_r2t;      /* the queued PDU is an R2T (the request is not done after it) */
	bool send_data;   /* a read: C2HData before the response */
	/* the PDUs being sent: built by tgt_req_complete() / the R2T */
	struct iovec iov[TGT_REQ_IOVS];
	uint32_t niov;
	uint32_t iov_at; /* first iovec not sent entirely */
	uint8_t hdr_data[NVME_TCP_DATA_HLEN];
	uint8_t hdr_rsp[NVME_TCP_RSP_HLEN];
	uint32_t dg_data[2], dg_rsp[2]; /* digests of the data PDU (or R2T), of the response */
};

struct tgt_ns_ch {
	struct tgt_chan *shared; /* (desc and ch are its, copied for the I/O path) */
	struct nvp_bdev_desc *desc;
	struct nvp_bdev_channel *ch;
	uint32_t block_size;
	uint64_t num_blocks;
};

enum tgt_conn_state {
	CONN_IC = 0, /* waiting for ICReq */
	CONN_RUN,
	CONN_CLOSING, /* no more commands: waits for its I/O, then its send queue */
};

struct tgt_conn {
	/* hot */
	struct tgt_thread *th;
	int fd;
	enum tgt_conn_state state;
	bool hdgst, ddgst;
	uint16_t qid;
	uint16_t depth; /* requests: SQSIZE + 1 once connected */
	struct tgt_ctrlr *ctrlr;
	struct tgt_subsys *ss;
	struct tgt_ns_ch ns[TGT_MAX_NS]; /* I/O queues: a channel per namespace */
	uint32_t outstanding;            /* requests at the bdev */
	uint32_t busy;                   /* requests not free */
	bool draining;                   /* the target stops: new commands are aborted */
	uint8_t *rx;
	uint32_t rx_start, rx_end;
	struct tgt_req *tx_head, **tx_tail;
	struct tgt_req *retry; /* I/O the bdev had no room for (-ENOMEM): tried again */
	struct tgt_req *free;
	struct tgt_req *reqs;
	/* cold */
	struct tgt_conn *next; /* the thread's list */
	uint32_t lidx;         /* listener it came through */
	uint32_t num_reqs;
	uint8_t ic_resp[NVME_TCP_IC_LEN];
	struct tgt_req ctl; /* ICResp and C2HTermReq go out through this one */
	uint8_t term[NVME_TCP_TERM_HLEN];
	uint64_t close_deadline_ms;
	uint64_t last_rx_ms; /* draining: when the host last sent something */
	char peer[INET6_ADDRSTRLEN + 8];
};

/* Queue @r's response (cpl set, data in r->buf for a read with r->send_data). */
void tgt_req_complete(struct tgt_req *r);
/* Set @r's status. */
void tgt_req_status(struct tgt_req *r, uint8_t sct, uint8_t sc);
/* I/O commands (tgt_io.c). */
void tgt_io_exec(struct tgt_conn *c, struct tgt_req *r);
void tgt_io_retry(struct tgt_conn *c);
/* Open the namespaces' channels of an I/O queue on this thread, tagged @tenant. */
int tgt_io_open(struct tgt_conn *c, uint32_t tenant);
/* Close them (no I/O outstanding). */
void tgt_io_close(struct tgt_conn *c);
/* A request's data buffer, made at first use. \return NULL (no memory). */
uint8_t *tgt_req_buf(struct tgt_req *r);

#endif /* NVP_APP_TGT_CONN_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NVMe/TCP transport's own state (NVMe/TCP 1.0, NVMe-oF 1.1), shared by
 * nvme_tcp.c (sockets, connection set-up, fabrics commands, the ops table) and
 * nvme_tcp_pdu.c (building PDUs, the receive state machine that checks every byte the
 * controller sends). One TCP connection per qpair, a non-blocking socket polled by the
 * qpair's owner thread: no thread of its own, no lock on the I/O path, nothing allocated
 * after the qpair is created.
 */
#ifndef NVP_NVME_TCP_INTERNAL_H
#define NVP_NVME_TCP_INTERNAL_H

#include <sys/uio.h>

#include "nvme_internal.h"
#include "nvpoll/nvme_tcp_spec.h"

#define NVME_TCP_RX_BUF_SIZE (64u * 1024)
#define NVME_TCP_MAX_IOV 64u                      /* iovecs per sendmsg() */
#define NVME_TCP_MAX_QUEUE_ENTRIES 4096u          /* CIDs stay below 16 bits with the spare ones */
#define NVME_TCP_MAX_DATA_PDU (16u * 1024 * 1024) /* larger C2HData is malformed */
#define NVME_TCP_ADMIN_INCAPSULE 8192u            /* admin queue in-capsule data (NVMe/TCP 3.3.3) */
#define NVME_TCP_DEFAULT_KATO_MS 30000u

enum nvme_tcp_rx_state {
	NVME_TCP_RX_CH = 0, /* the 8-byte common header */
	NVME_TCP_RX_HDR,    /* the rest of the header and its digest */
	NVME_TCP_RX_PAD,    /* bytes between the header and PDO */
	NVME_TCP_RX_DATA,
	NVME_TCP_RX_DDGST,
};

/* Where a non-blocking connect is (tcp_qpair_connect_poll()): an I/O queue's, or the
 * admin queue's in a reconnect attempt (tcp_ctrlr_reconnect_poll()). */
enum nvme_tcp_async_step {
	NVME_TCP_ASYNC_NONE = 0, /* not started */
	NVME_TCP_ASYNC_SOCK,     /* connect() in progress: waiting for POLLOUT */
	NVME_TCP_ASYNC_IC,       /* ICReq sent, waiting for ICResp */
	NVME_TCP_ASYNC_CONNECT,  /* the Fabrics Connect in flight */
};

enum nvme_tcp_conn_state {
	NVME_TCP_CONN_CLOSED = 0,
	NVME_TCP_CONN_IC,    /* ICReq sent, waiting for ICResp */
	NVME_TCP_CONN_READY, /* capsules may flow */
	NVME_TCP_CONN_FAILED,
};

/* What a send queue entry still has to put on the wire. */
enum nvme_tcp_send_kind {
	NVME_TCP_SEND_NONE = 0,
	NVME_TCP_SEND_CMD, /* CapsuleCmd (with in-capsule data) */
	NVME_TCP_SEND_H2C, /* H2CData PDUs answering the current R2T */
};

/* Per command identifier, preallocated: the capsule and the data transfer state. */
struct nvme_tcp_req {
	struct nvme_request *req; /* NULL = idle */
	STAILQ_ENTRY(nvme_tcp_req) send_link;
	uint8_t send_kind; /* enum nvme_tcp_send_kind, NONE = not on the send queue */
	bool write;        /* host to controller data */
	bool in_capsule;   /* the data went with the command */
	bool r2t_active;   /* an R2T is being answered */
	bool resp_pending; /* the response came while data was still being sent */
	uint16_t ttag;
	uint32_t data_len; /* bytes the command transfers */
	uint32_t c2h_next; /* next C2HData offset expected */
	uint32_t r2t_next; /* next R2T offset expected */
	uint32_t h2c_off;  /* the H2CData PDU being sent: its data offset */
	uint32_t h2c_len;  /* and length */
	uint32_t r2t_end;  /* end of the current R2T's range */
	uint32_t sent;     /* bytes of the current PDU already written */
	struct nvme_cpl resp;
	/* The PDU headers with room for the header digest right after them. */
	struct {
		struct nvme_tcp_cmd cmd;
		uint8_t hdgst[NVME_TCP_DIGEST_LEN];
	} cmd_pdu;
	struct {
		struct nvme_tcp_data_hdr h2c;
		uint8_t hdgst[NVME_TCP_DIGEST_LEN];
	} h2c_pdu;
	uint8_t ddgst[NVME_TCP_DIGEST_LEN];
};

/* The header digest must follow the header with no padding between them. */
_Static_assert(offsetof(struct nvme_tcp_req, cmd_pdu.hdgst) ==
		       offsetof(struct nvme_tcp_req, cmd_pdu) + NVME_TCP_CMD_HLEN,
	       "capsule header digest placement");
_Static_assert(offsetof(struct nvme_tcp_req, h2c_pdu.hdgst) ==
		       offsetof(struct nvme_tcp_req, h2c_pdu) + NVME_TCP_DATA_HLEN,
	       "H2CData header digest placement");

struct nvme_tcp_qpair {
	struct nvp_nvme_qpair qpair; /* first: the generic code only sees this */

	/* Hot. */
	int fd;
	uint8_t conn;           /* enum nvme_tcp_conn_state */
	bool hdgst;             /* negotiated header digest */
	bool ddgst;             /* negotiated data digest */
	uint32_t incapsule_max; /* in-capsule data bytes a write may carry */
	uint32_t maxh2cdata;
	uint8_t cpda;
	/* Ticks: from this poll on, look at the controller's keep-alive (tc->ka_next); a
	 * copy in the qpair's own line, so the poll pays one compare. UINT64_MAX = off. */
	uint64_t ka_due;
	struct nvme_tcp_req *treqs; /* indexed by CID; [num_trackers] = fabrics command */
	STAILQ_HEAD(, nvme_tcp_req) send_q;

	/* Receive: bytes read, not parsed yet, and the PDU being parsed. */
	uint8_t *rx_buf;
	uint32_t rx_pos, rx_len;
	uint8_t rx_state; /* enum nvme_tcp_rx_state */
	uint8_t rx_hdr[NVME_TCP_IC_LEN + NVME_TCP_DIGEST_LEN] __attribute__((aligned(8)));
	uint32_t rx_have, rx_need; /* of the header, padding, data or digest */
	uint8_t *rx_dst;           /* where data goes (a contiguous payload) */
	bool rx_sgl;               /* or into rx_treq's scattered payload; neither: dropped */
	struct nvme_tcp_req *rx_treq;
	uint32_t rx_crc;
	uint32_t rx_cpls; /* completions of this poll */
	/* Why the receive side gave up (nvme_tcp_rx_parse() returned -EPROTO): the caller
	 * fails the qpair with it, sending a H2CTermReq with fes/fei when fes != 0. */
	const char *rx_fail_why;
	uint16_t rx_fail_fes;
	uint32_t rx_fail_fei;

	/* Cold. */
	struct nvme_request fabric_req; /* Connect, Property Get/Set: CID num_trackers */
	bool fabric_done;
	struct nvme_cpl fabric_cpl;
	const char *fail_reason;
	/* The owner's non-blocking reconnect (tcp_qpair_connect_poll()). */
	uint8_t async_step;                         /* enum nvme_tcp_async_step */
	uint64_t async_deadline;                    /* ticks: admin_timeout_ms from its start */
	struct nvme_fabric_connect_data *conn_data; /* the Connect's data while it flies */
};

struct nvme_tcp_ctrlr {
	struct nvp_nvme_ctrlr ctrlr; /* first */
	char traddr[NVP_NVME_TRADDR_MAX];
	char trsvcid[32];
	int family; /* AF_INET or AF_INET6 */
	char hostnqn[NVME_NQN_FIELD_SIZE];
	uint8_t hostid[16];
	/* The admin Connect's CNTLID: stored under the admin lock by the thread making the
	 * association, loaded by owners building their I/O Connect without it (a reset may
	 * be making a new association meanwhile; the reset generation then sends the owner
	 * round again, so either value will do, but the access must be atomic). */
	_Atomic uint16_t cntlid;
	bool want_hdgst, want_ddgst;
	bool admin_fresh; /* the admin connection was just made: SET_ADMIN_QUEUE keeps it */
	uint32_t kato_ms;
	/* Ticks: the next Keep Alive is due (UINT64_MAX = none: KATO 0, or not connected).
	 * Written under the admin lock, read by every qpair's poll when its ka_due passes. */
	_Atomic uint64_t ka_next;
	uint32_t ioccsz_bytes; /* from Identify (fabrics part); 0 until known */
	/* The admin connection a reset (reset generation conn_fail_gen) could not make, and
	 * why: its other property accesses fail at once instead of trying again, and the
	 * reset's one error line says why (tcp_all_ones_cause()). Under the admin lock. */
	uint32_t conn_fail_gen;
	int conn_fail_rc;
	char conn_fail_why[96];
};

static inline struct nvme_tcp_qpair *
nvme_tcp_qpair(struct nvp_nvme_qpair *qpair)
{
	return (struct nvme_tcp_qpair *)qpair;
}

static inline struct nvme_tcp_ctrlr *
nvme_tcp_ctrlr(struct nvp_nvme_ctrlr *ctrlr)
{
	return (struct nvme_tcp_ctrlr *)ctrlr;
}

extern const struct nvme_transport_ops g_nvme_tcp_transport;

/* nvme_tcp_pdu.c */
uint32_t nvme_tcp_digest(const void *buf, size_t len);
void nvme_tcp_build_cmd_pdu(struct nvme_tcp_qpair *tq, struct nvme_tcp_req *treq);
void nvme_tcp_build_h2c_pdu(struct nvme_tcp_qpair *tq, struct nvme_tcp_req *treq);
void nvme_tcp_build_ic_req(struct nvme_tcp_ic_req *ic, bool hdgst, bool ddgst);
int nvme_tcp_check_ic_resp(const struct nvme_tcp_ic_resp *ic, bool hdgst, bool ddgst,
			   const char **why);
uint32_t nvme_tcp_send_iov(struct nvme_tcp_qpair *tq, struct nvme_tcp_req *treq, struct iovec *iov,
			   uint32_t max_iov);
bool nvme_tcp_send_advance(struct nvme_tcp_qpair *tq, struct nvme_tcp_req *treq, size_t *n);
/* \return 0, or -EPROTO: the stream broke a rule; tq->rx_fail_* say which, and the
 * caller fails the qpair (nvme_tcp_qpair_fail()). */
int nvme_tcp_rx_parse(struct nvme_tcp_qpair *tq, uint32_t max_cpls);
void nvme_tcp_rx_reset(struct nvme_tcp_qpair *tq);
void nvme_tcp_treq_done(struct nvme_tcp_qpair *tq, struct nvme_tcp_req *treq,
			const struct nvme_cpl *cpl);

/* nvme_tcp.c */
int nvme_tcp_parse_trid(struct nvme_tcp_ctrlr *tc, const struct nvp_nvme_transport_id *trid);
void nvme_tcp_set_name(struct nvme_tcp_ctrlr *tc, const char *what);
int nvme_tcp_qpair_create(struct nvp_nvme_ctrlr *ctrlr, uint16_t qid,
			  const struct nvp_nvme_io_qpair_opts *opts, struct nvp_nvme_qpair **out);
int nvme_tcp_admin_connect(struct nvme_tcp_ctrlr *tc);
void nvme_tcp_ctrlr_destruct(struct nvp_nvme_ctrlr *ctrlr);
int nvme_tcp_reg_access(struct nvp_nvme_ctrlr *ctrlr, uint32_t offset, bool eight, uint64_t *value,
			bool set);
int nvme_tcp_fabric_sync(struct nvme_tcp_qpair *tq, const struct nvme_cmd *cmd, void *data,
			 uint32_t len, bool write, struct nvme_cpl *cpl);
void nvme_tcp_qpair_fail(struct nvme_tcp_qpair *tq, const char *why, uint16_t fes, uint32_t fei);

#endif /* NVP_NVME_TCP_INTERNAL_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * \file
 * NVMe over Fabrics and the NVMe/TCP transport, as on the wire: the fabrics commands
 * (Connect, Property Get/Set, NVMe-oF 1.1 section 3), the discovery log page (section
 * 5.3), and the NVMe/TCP PDUs (NVMe/TCP Transport Specification 1.0, section 3.6).
 * Every multi-byte field is little-endian; sizes and offsets are checked at build time.
 */
#ifndef NVPOLL_NVME_TCP_SPEC_H
#define NVPOLL_NVME_TCP_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "nvpoll/nvme_spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------
 * Fabrics commands (NVMe-oF 1.1 section 3.1, 3.3)
 * ------------------------------------------------------------------------------------- */

#define NVME_OPC_FABRIC 0x7f

enum nvme_fabric_cmd_type {
	NVME_FCTYPE_PROPERTY_SET = 0x00,
	NVME_FCTYPE_CONNECT = 0x01,
	NVME_FCTYPE_PROPERTY_GET = 0x04,
	NVME_FCTYPE_AUTH_SEND = 0x05,
	NVME_FCTYPE_AUTH_RECV = 0x06,
	NVME_FCTYPE_DISCONNECT = 0x08,
};

/* Command specific status values of Connect (NVMe-oF 1.1 figure 21). */
enum nvme_fabric_connect_status {
	NVME_SC_CONNECT_INCOMPATIBLE_FORMAT = 0x80,
	NVME_SC_CONNECT_CONTROLLER_BUSY = 0x81,
	NVME_SC_CONNECT_INVALID_PARAMETERS = 0x82,
	NVME_SC_CONNECT_RESTART_DISCOVERY = 0x83,
	NVME_SC_CONNECT_INVALID_HOST = 0x84,
	NVME_SC_FABRIC_DISCOVERY_RESTART = 0x90, /* any Fabrics command (NVMe-oF 1.1) */
	NVME_SC_FABRIC_AUTH_REQUIRED = 0x91,
};

#define NVME_FABRIC_CNTLID_DYNAMIC 0xffffu /* admin Connect: any controller */
#define NVME_DISCOVERY_NQN "nqn.2014-08.org.nvmexpress.discovery"
#define NVME_NQN_FIELD_SIZE 256u

/** Property Get and Property Set (attrib.size: 0 = 4 bytes, 1 = 8 bytes). */
struct nvme_fabric_prop_cmd {
	uint8_t opcode; /* 0x7f */
	uint8_t flags;
	uint16_t cid;
	uint8_t fctype;
	uint8_t rsvd5[35];
	uint8_t attrib;
	uint8_t rsvd41[3];
	uint32_t ofst;
	uint64_t value; /* Property Set only */
	uint8_t rsvd56[8];
};

/** Connect: the data (struct nvme_fabric_connect_data) goes in-capsule or by transfer. */
struct nvme_fabric_connect_cmd {
	uint8_t opcode; /* 0x7f */
	uint8_t flags;
	uint16_t cid;
	uint8_t fctype;
	uint8_t rsvd5[19];
	struct nvme_sgl_descriptor sgl1;
	uint16_t recfmt; /* 0 */
	uint16_t qid;
	uint16_t sqsize; /* 0's based */
	uint8_t cattr;
	uint8_t rsvd47;
	uint32_t kato; /* keep alive timeout, ms; 0 = none */
	uint8_t rsvd52[12];
};

struct nvme_fabric_connect_data {
	uint8_t hostid[16];
	uint16_t cntlid;
	uint8_t rsvd18[238];
	char subnqn[NVME_NQN_FIELD_SIZE];
	char hostnqn[NVME_NQN_FIELD_SIZE];
	uint8_t rsvd768[256];
};

/** Identify Controller bytes 1792-2047 on a fabrics controller (NVMe-oF 1.1 figure 27). */
struct nvme_fabric_ctrlr_data {
	uint32_t ioccsz; /* I/O command capsule size, 16-byte units (64 bytes + data) */
	uint32_t iorcsz; /* I/O response capsule size, 16-byte units */
	uint16_t icdoff; /* in-capsule data offset, 16-byte units */
	uint8_t fcatt;
	uint8_t msdbd; /* maximum SGL data block descriptors */
	uint16_t ofcs;
	uint8_t rsvd14[242];
};

/* ---------------------------------------------------------------------------------------
 * Discovery log page (NVMe-oF 1.1 section 5.3, log identifier 0x70)
 * ------------------------------------------------------------------------------------- */

#define NVME_LOG_DISCOVERY 0x70

enum nvme_fabric_trtype {
	NVME_TRTYPE_RDMA = 1,
	NVME_TRTYPE_FC = 2,
	NVME_TRTYPE_TCP = 3,
	NVME_TRTYPE_LOOP = 254,
};

enum nvme_fabric_adrfam {
	NVME_ADRFAM_IPV4 = 1,
	NVME_ADRFAM_IPV6 = 2,
};

enum nvme_fabric_subtype {
	NVME_SUBTYPE_DISCOVERY_REFERRAL = 1,
	NVME_SUBTYPE_NVME = 2,
	NVME_SUBTYPE_DISCOVERY_CURRENT = 3,
};

struct nvme_discovery_log_entry {
	uint8_t trtype;
	uint8_t adrfam;
	uint8_t subtype;
	uint8_t treq;
	uint16_t portid;
	uint16_t cntlid;
	uint16_t asqsz;
	uint8_t rsvd10[22];
	char trsvcid[32]; /* space padded, not terminated */
	uint8_t rsvd64[192];
	char subnqn[NVME_NQN_FIELD_SIZE];
	char traddr[256]; /* space padded, not terminated */
	uint8_t tsas[256];
};

struct nvme_discovery_log_header {
	uint64_t genctr;
	uint64_t numrec;
	uint16_t recfmt;
	uint8_t rsvd18[1006];
	/* followed by numrec struct nvme_discovery_log_entry */
};

/* ---------------------------------------------------------------------------------------
 * NVMe/TCP PDUs (NVMe/TCP 1.0 section 3.6)
 * ------------------------------------------------------------------------------------- */

enum nvme_tcp_pdu_type {
	NVME_TCP_PDU_ICREQ = 0x00,
	NVME_TCP_PDU_ICRESP = 0x01,
	NVME_TCP_PDU_H2C_TERM_REQ = 0x02,
	NVME_TCP_PDU_C2H_TERM_REQ = 0x03,
	NVME_TCP_PDU_CAPSULE_CMD = 0x04,
	NVME_TCP_PDU_CAPSULE_RESP = 0x05,
	NVME_TCP_PDU_H2C_DATA = 0x06,
	NVME_TCP_PDU_C2H_DATA = 0x07,
	NVME_TCP_PDU_R2T = 0x09,
};

/* Common header flags (section 3.6.1). */
#define NVME_TCP_FLAG_HDGSTF 0x01u      /* a header digest follows the header */
#define NVME_TCP_FLAG_DDGSTF 0x02u      /* a data digest follows the data */
#define NVME_TCP_FLAG_LAST_PDU 0x04u    /* H2CData/C2HData: last of the transfer */
#define NVME_TCP_FLAG_C2H_SUCCESS 0x08u /* C2HData: the command succeeded, no response */

/* ICReq/ICResp DGST field. */
#define NVME_TCP_DGST_HDGST 0x01u
#define NVME_TCP_DGST_DDGST 0x02u

#define NVME_TCP_DIGEST_LEN 4u
#define NVME_TCP_PFV_1_0 0u
#define NVME_TCP_DEFAULT_PORT 4420u
/* Largest PDU header of any type (TermReq header plus the offending header it quotes). */
#define NVME_TCP_TERM_REQ_MAX_DATA 152u

/* Fatal error status of a TermReq (section 3.6.2.9, figure 31). */
enum nvme_tcp_term_fes {
	NVME_TCP_FES_INVALID_HEADER_FIELD = 0x01,
	NVME_TCP_FES_PDU_SEQUENCE_ERROR = 0x02,
	NVME_TCP_FES_HDGST_ERROR = 0x03,
	NVME_TCP_FES_DATA_OUT_OF_RANGE = 0x04,
	NVME_TCP_FES_R2T_LIMIT_EXCEEDED = 0x05,
	NVME_TCP_FES_DATA_LIMIT_EXCEEDED = 0x05,
	NVME_TCP_FES_UNSUPPORTED_PARAMETER = 0x06,
};

/** Common header, 8 bytes: what every PDU starts with. */
struct nvme_tcp_common_hdr {
	uint8_t pdu_type;
	uint8_t flags;
	uint8_t hlen;  /* header length, without the header digest */
	uint8_t pdo;   /* data offset from the start of the PDU, 0 = no data */
	uint32_t plen; /* whole PDU: header, digests, padding and data */
};

struct nvme_tcp_ic_req {
	struct nvme_tcp_common_hdr ch;
	uint16_t pfv;
	uint8_t hpda; /* host PDU data alignment, 4-byte units, 0's based */
	uint8_t dgst;
	uint32_t maxr2t; /* 0's based */
	uint8_t rsvd16[112];
};

struct nvme_tcp_ic_resp {
	struct nvme_tcp_common_hdr ch;
	uint16_t pfv;
	uint8_t cpda; /* controller PDU data alignment, 4-byte units, 0's based */
	uint8_t dgst;
	uint32_t maxh2cdata; /* bytes, a multiple of 4, at least 4096 */
	uint8_t rsvd16[112];
};

struct nvme_tcp_term_req_hdr {
	struct nvme_tcp_common_hdr ch;
	uint16_t fes;
	uint32_t fei; /* field in error: byte offset, or the value of a parameter */
	uint8_t rsvd14[10];
} __attribute__((packed));

struct nvme_tcp_cmd {
	struct nvme_tcp_common_hdr ch;
	struct nvme_cmd ccsqe;
};

struct nvme_tcp_rsp {
	struct nvme_tcp_common_hdr ch;
	struct nvme_cpl rccqe;
};

/** H2CData and C2HData share a layout. */
struct nvme_tcp_data_hdr {
	struct nvme_tcp_common_hdr ch;
	uint16_t cccid; /* command capsule CID */
	uint16_t ttag;  /* H2CData: the R2T's tag; C2HData: reserved */
	uint32_t datao; /* offset in the command's data */
	uint32_t datal;
	uint8_t rsvd20[4];
};

struct nvme_tcp_r2t_hdr {
	struct nvme_tcp_common_hdr ch;
	uint16_t cccid;
	uint16_t ttag;
	uint32_t r2to;
	uint32_t r2tl;
	uint8_t rsvd20[4];
};

#define NVME_TCP_IC_LEN 128u
#define NVME_TCP_CMD_HLEN 72u
#define NVME_TCP_RSP_HLEN 24u
#define NVME_TCP_DATA_HLEN 24u
#define NVME_TCP_R2T_HLEN 24u
#define NVME_TCP_TERM_HLEN 24u

/* ---- build-time checks ---- */

_Static_assert(sizeof(struct nvme_fabric_prop_cmd) == 64, "fabric prop cmd size");
_Static_assert(offsetof(struct nvme_fabric_prop_cmd, attrib) == 40, "prop attrib offset");
_Static_assert(offsetof(struct nvme_fabric_prop_cmd, ofst) == 44, "prop ofst offset");
_Static_assert(offsetof(struct nvme_fabric_prop_cmd, value) == 48, "prop value offset");
_Static_assert(sizeof(struct nvme_fabric_connect_cmd) == 64, "connect cmd size");
_Static_assert(offsetof(struct nvme_fabric_connect_cmd, sgl1) == 24, "connect sgl1 offset");
_Static_assert(offsetof(struct nvme_fabric_connect_cmd, qid) == 42, "connect qid offset");
_Static_assert(offsetof(struct nvme_fabric_connect_cmd, kato) == 48, "connect kato offset");
_Static_assert(sizeof(struct nvme_fabric_connect_data) == 1024, "connect data size");
_Static_assert(offsetof(struct nvme_fabric_connect_data, subnqn) == 256, "connect subnqn");
_Static_assert(offsetof(struct nvme_fabric_connect_data, hostnqn) == 512, "connect hostnqn");
_Static_assert(sizeof(struct nvme_fabric_ctrlr_data) == 256, "fabric ctrlr data size");
_Static_assert(sizeof(struct nvme_discovery_log_entry) == 1024, "discovery entry size");
_Static_assert(offsetof(struct nvme_discovery_log_entry, trsvcid) == 32, "trsvcid offset");
_Static_assert(offsetof(struct nvme_discovery_log_entry, subnqn) == 256, "subnqn offset");
_Static_assert(offsetof(struct nvme_discovery_log_entry, traddr) == 512, "traddr offset");
_Static_assert(sizeof(struct nvme_discovery_log_header) == 1024, "discovery header size");
_Static_assert(sizeof(struct nvme_tcp_common_hdr) == 8, "common header size");
_Static_assert(sizeof(struct nvme_tcp_ic_req) == NVME_TCP_IC_LEN, "ICReq size");
_Static_assert(sizeof(struct nvme_tcp_ic_resp) == NVME_TCP_IC_LEN, "ICResp size");
_Static_assert(offsetof(struct nvme_tcp_ic_resp, maxh2cdata) == 12, "maxh2cdata offset");
_Static_assert(sizeof(struct nvme_tcp_term_req_hdr) == NVME_TCP_TERM_HLEN, "TermReq size");
_Static_assert(sizeof(struct nvme_tcp_cmd) == NVME_TCP_CMD_HLEN, "CapsuleCmd size");
_Static_assert(sizeof(struct nvme_tcp_rsp) == NVME_TCP_RSP_HLEN, "CapsuleResp size");
_Static_assert(sizeof(struct nvme_tcp_data_hdr) == NVME_TCP_DATA_HLEN, "data header size");
_Static_assert(offsetof(struct nvme_tcp_data_hdr, datal) == 16, "datal offset");
_Static_assert(sizeof(struct nvme_tcp_r2t_hdr) == NVME_TCP_R2T_HLEN, "R2T size");

#ifdef __cplusplus
}
#endif

#endif /* NVPOLL_NVME_TCP_SPEC_H */

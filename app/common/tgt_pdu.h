/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The controller's side of NVMe/TCP PDUs (NVMe/TCP Transport Specification 1.0, section
 * 3.6), once for both targets: nvp_tgt (app/tgt, polled, whole PDUs in a receive buffer)
 * and the tools' small target (nvme_tcp_tgt.c, a blocking thread per connection, reading
 * a PDU piece by piece). Pure functions over headers and bytes: no socket, no thread, no
 * allocation. Building: what the controller sends (ICResp, CapsuleResp, C2HData, R2T,
 * C2HTermReq) framed as the connection negotiated, as iovecs. Checking: what the host sends
 * (ICReq, CapsuleCmd and its SGL, H2CData), each check naming the field in error for the
 * C2HTermReq (section 3.6.2.7) and a message for people. What a target does about an error
 * (a C2HTermReq, a count, the connection closed) is the caller's.
 */
#ifndef NVP_APP_TGT_PDU_H
#define NVP_APP_TGT_PDU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "nvpoll/nvme_tcp_spec.h"

/* Most iovecs tgt_pdu_frame() adds: header, header digest, data, data digest. */
#define TGT_PDU_IOVS 4u
/* Largest PDO a host may give: PDO is one byte. */
#define TGT_PDU_MAX_PDO 255u

/* A host PDU that breaks the protocol: the C2HTermReq's FES and FEI, and why. */
struct tgt_pdu_err {
	const char *why;
	uint16_t fes;
	uint32_t fei;
};

/* A CapsuleCmd's data, as its SGL and the PDU say (tgt_pdu_capsule()). */
struct tgt_pdu_capsule {
	uint32_t len; /* the command's data bytes (0 when answered with sc) */
	bool inc;     /* they are in the capsule, after PDO */
	uint8_t sct;  /* sc != 0: answer the command with this status, move no data */
	uint8_t sc;
};

/* CRC32C as NVMe/TCP digests use it (section 3.6.1.4). */
uint32_t tgt_pdu_digest(const void *p, size_t n);

/* ---- what the controller sends ---- */

/*
 * Frame a controller PDU: HLEN, PDO, PLEN and the digest flags of the header at @hdr
 * (@hlen bytes, its type set) for @dlen data bytes at @data, with the digests the
 * connection negotiated (C2HTermReq never has a header digest). The digests are computed
 * into @dg[0] (header) and @dg[1] (data), which must live until the PDU is sent; a test
 * may corrupt them after this call. \return the iovecs written to @iov (at most
 * TGT_PDU_IOVS): header, header digest, data, data digest, as present.
 */
uint32_t tgt_pdu_frame(struct iovec *iov, void *hdr, uint32_t hlen, const void *data, uint32_t dlen,
		       bool hdgst, bool ddgst, uint32_t dg[2]);
/* CapsuleResp carrying @cpl for command @cid of queue @sqid. */
void tgt_pdu_rsp(struct nvme_tcp_rsp *h, const struct nvme_cpl *cpl, uint16_t cid, uint16_t sqid);
/* C2HData header: @datal bytes at @datao of command @cid's data; @flags LAST_PDU, SUCCESS. */
void tgt_pdu_c2h(struct nvme_tcp_data_hdr *h, uint16_t cid, uint32_t datao, uint32_t datal,
		 uint8_t flags);
/* R2T asking for [@off, @off + @len) of command @cid's data, tagged @ttag. */
void tgt_pdu_r2t(struct nvme_tcp_r2t_hdr *h, uint16_t cid, uint16_t ttag, uint32_t off,
		 uint32_t len);
/* C2HTermReq naming the field in error (FES @fes, FEI @fei); HLEN and PLEN set. */
void tgt_pdu_term(struct nvme_tcp_term_req_hdr *h, uint16_t fes, uint32_t fei);

/* ---- what the host sends ---- */

/*
 * ICReq @req (all NVME_TCP_IC_LEN bytes): type, HLEN, PLEN, PFV checked; the digests it
 * asks for in *@hdgst, *@ddgst; the ICResp granting them with @maxh2cdata into @resp.
 * \return 0, or -1 with *@err.
 */
int tgt_pdu_icreq(const struct nvme_tcp_ic_req *req, uint32_t maxh2cdata,
		  struct nvme_tcp_ic_resp *resp, bool *hdgst, bool *ddgst, struct tgt_pdu_err *err);
/*
 * The largest PLEN a host PDU of @type may have on a connection with these digests, whose
 * in-capsule data is at most @max_inc bytes and H2CData at most @maxh2cdata; 0 for a type
 * the host may not send once connected (ICReq, or a controller's type).
 */
uint32_t tgt_pdu_max_plen(uint8_t type, bool hdgst, bool ddgst, uint32_t max_inc,
			  uint32_t maxh2cdata);
/*
 * HDGSTF as negotiated and, with header digests, the digest right: the header is at @p
 * (@hlen bytes), its digest right after it. \return 0, or -1 with *@err.
 */
int tgt_pdu_check_hdgst(const uint8_t *p, uint32_t hlen, bool hdgst, struct tgt_pdu_err *err);
/*
 * A PDU carrying @len data bytes: PDO after the header (and its digest), DDGSTF as
 * negotiated, PLEN = PDO + @len (+ the data digest). \return the padding bytes between
 * the header's end and PDO, or -1 with *@err.
 */
int tgt_pdu_check_data(const struct nvme_tcp_common_hdr *ch, uint32_t len, bool hdgst, bool ddgst,
		       struct tgt_pdu_err *err);
/* The data digest @dg of @len bytes at @data. \return 0, or -1 with *@err (fatal, 3.6.2.10). */
int tgt_pdu_check_ddgst(const uint8_t *data, uint32_t len, uint32_t dg, struct tgt_pdu_err *err);
/*
 * The data of CapsuleCmd @cmd whose common header is @ch (NVMe-oF 1.1 section 3.3): an
 * offset data block descriptor of at most @max_inc bytes for in-capsule data, else a
 * transport keyed one of at most @max_io bytes, and a PLEN without data. A wrong keyed
 * SGL or a length over @max_io is the command's error (a status in *@out), a wrong
 * capsule the connection's. The in-capsule data itself is checked by the caller
 * (tgt_pdu_check_data()). \return 0 with *@out, or -1 with *@err.
 */
int tgt_pdu_capsule(const struct nvme_tcp_common_hdr *ch, const struct nvme_cmd *cmd, bool hdgst,
		    uint32_t max_inc, uint32_t max_io, struct tgt_pdu_capsule *out,
		    struct tgt_pdu_err *err);
/*
 * H2CData @h answering an R2T whose data ends at @end, @at bytes of it received: DATAO
 * where the data is, DATAL not 0, within the R2T and @maxh2cdata, LAST_PDU on the last.
 * (Whether CCCID and TTAG name an R2T of the connection is the caller's to check.)
 * \return 0, or -1 with *@err.
 */
int tgt_pdu_check_h2c(const struct nvme_tcp_data_hdr *h, uint32_t at, uint32_t end,
		      uint32_t maxh2cdata, struct tgt_pdu_err *err);

#endif /* NVP_APP_TGT_PDU_H */

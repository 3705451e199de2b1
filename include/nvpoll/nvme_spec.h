/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVM Express base specification definitions (revision 1.4 with the parts of 2.0 that
 * matter here): controller registers, submission and completion queue entries, opcodes,
 * status codes, identify data, features and log pages.
 *
 * Names follow the specification: `nvme_`/`NVME_` plus the spec's own abbreviation.
 * Reserved fields are named by their byte offset. Every size and register offset is
 * checked at build time at the bottom of this file.
 */
#ifndef NVPOLL_NVME_SPEC_H
#define NVPOLL_NVME_SPEC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------
 * Controller registers (NVMe 1.4, section 3.1)
 * ------------------------------------------------------------------------------------- */

/** Controller Capabilities (CAP), offset 0x00. */
union nvme_cap_register {
	uint64_t raw;
	struct {
		uint32_t mqes : 16; /**< maximum queue entries supported, 0's based */
		uint32_t cqr : 1;   /**< contiguous queues required */
		uint32_t ams : 2;   /**< arbitration mechanisms supported */
		uint32_t rsvd19 : 5;
		uint32_t to : 8;    /**< timeout, in 500 ms units */
		uint32_t dstrd : 4; /**< doorbell stride: 2 ^ (2 + DSTRD) bytes */
		uint32_t nssrs : 1; /**< NVM subsystem reset supported */
		uint32_t css : 8;   /**< command sets supported (bit 0: NVM) */
		uint32_t bps : 1;   /**< boot partition support */
		uint32_t rsvd46 : 2;
		uint32_t mpsmin : 4; /**< memory page size minimum: 2 ^ (12 + MPSMIN) */
		uint32_t mpsmax : 4; /**< memory page size maximum: 2 ^ (12 + MPSMAX) */
		uint32_t pmrs : 1;   /**< persistent memory region supported */
		uint32_t cmbs : 1;   /**< controller memory buffer supported */
		uint32_t rsvd58 : 6;
	} bits;
};

/** CAP.CSS bit for the NVM command set. */
#define NVME_CAP_CSS_NVM (1u << 0)

/** Version (VS), offset 0x08. */
union nvme_vs_register {
	uint32_t raw;
	struct {
		uint32_t ter : 8;  /**< tertiary version */
		uint32_t mnr : 8;  /**< minor version */
		uint32_t mjr : 16; /**< major version */
	} bits;
};

#define NVME_VERSION(mjr, mnr, ter) (((uint32_t)(mjr) << 16) | ((uint32_t)(mnr) << 8) | (ter))

/** Controller Configuration (CC), offset 0x14. */
union nvme_cc_register {
	uint32_t raw;
	struct {
		uint32_t en : 1; /**< enable */
		uint32_t rsvd1 : 3;
		uint32_t css : 3;    /**< I/O command set selected */
		uint32_t mps : 4;    /**< memory page size: 2 ^ (12 + MPS) */
		uint32_t ams : 3;    /**< arbitration mechanism selected */
		uint32_t shn : 2;    /**< shutdown notification */
		uint32_t iosqes : 4; /**< I/O submission queue entry size, log2 */
		uint32_t iocqes : 4; /**< I/O completion queue entry size, log2 */
		uint32_t rsvd24 : 8;
	} bits;
};

enum nvme_shn_value {
	NVME_SHN_NONE = 0x0,
	NVME_SHN_NORMAL = 0x1,
	NVME_SHN_ABRUPT = 0x2,
};

/** Controller Status (CSTS), offset 0x1C. */
union nvme_csts_register {
	uint32_t raw;
	struct {
		uint32_t rdy : 1;   /**< ready */
		uint32_t cfs : 1;   /**< controller fatal status */
		uint32_t shst : 2;  /**< shutdown status */
		uint32_t nssro : 1; /**< NVM subsystem reset occurred */
		uint32_t pp : 1;    /**< processing paused */
		uint32_t rsvd6 : 26;
	} bits;
};

enum nvme_shst_value {
	NVME_SHST_NORMAL = 0x0,
	NVME_SHST_OCCURRING = 0x1,
	NVME_SHST_COMPLETE = 0x2,
};

/** Admin Queue Attributes (AQA), offset 0x24. */
union nvme_aqa_register {
	uint32_t raw;
	struct {
		uint32_t asqs : 12; /**< admin submission queue size, 0's based */
		uint32_t rsvd12 : 4;
		uint32_t acqs : 12; /**< admin completion queue size, 0's based */
		uint32_t rsvd28 : 4;
	} bits;
};

/** Register offsets within BAR0. */
enum nvme_reg_offset {
	NVME_REG_CAP = 0x00,
	NVME_REG_VS = 0x08,
	NVME_REG_INTMS = 0x0c,
	NVME_REG_INTMC = 0x10,
	NVME_REG_CC = 0x14,
	NVME_REG_CSTS = 0x1c,
	NVME_REG_NSSR = 0x20,
	NVME_REG_AQA = 0x24,
	NVME_REG_ASQ = 0x28,
	NVME_REG_ACQ = 0x30,
	NVME_REG_CMBLOC = 0x38,
	NVME_REG_CMBSZ = 0x3c,
	NVME_REG_DBS = 0x1000, /**< first doorbell (admin SQ tail) */
};

/** The register file as laid out in BAR0 up to the first doorbell. */
struct nvme_registers {
	union nvme_cap_register cap;   /* 0x00 */
	union nvme_vs_register vs;     /* 0x08 */
	uint32_t intms;                /* 0x0c */
	uint32_t intmc;                /* 0x10 */
	union nvme_cc_register cc;     /* 0x14 */
	uint32_t rsvd18;               /* 0x18 */
	union nvme_csts_register csts; /* 0x1c */
	uint32_t nssr;                 /* 0x20 */
	union nvme_aqa_register aqa;   /* 0x24 */
	uint64_t asq;                  /* 0x28 */
	uint64_t acq;                  /* 0x30 */
	uint32_t cmbloc;               /* 0x38 */
	uint32_t cmbsz;                /* 0x3c */
	uint32_t bpinfo;               /* 0x40 */
	uint32_t bprsel;               /* 0x44 */
	uint64_t bpmbl;                /* 0x48 */
	uint64_t cmbmsc;               /* 0x50 */
	uint32_t cmbsts;               /* 0x58 */
	uint8_t rsvd5c[0xe00 - 0x5c];
	uint32_t pmrcap;  /* 0xe00 */
	uint32_t pmrctl;  /* 0xe04 */
	uint32_t pmrsts;  /* 0xe08 */
	uint32_t pmrebs;  /* 0xe0c */
	uint32_t pmrswtp; /* 0xe10 */
	uint32_t pmrmscl; /* 0xe14 */
	uint32_t pmrmscu; /* 0xe18 */
	uint8_t rsvde1c[0x1000 - 0xe1c];
	uint32_t doorbell[]; /* 0x1000: SQ0TDBL, CQ0HDBL, ... spaced by CAP.DSTRD */
};

/** Byte offset of a queue's doorbell: 0x1000 + (2 * qid + is_cq) * (4 << DSTRD). */
static inline uint32_t
nvme_doorbell_offset(uint16_t qid, int is_cq, uint32_t dstrd)
{
	return NVME_REG_DBS + (2u * qid + (is_cq ? 1u : 0u)) * (4u << dstrd);
}

/* ---------------------------------------------------------------------------------------
 * Submission and completion queue entries (section 4.2, 4.6)
 * ------------------------------------------------------------------------------------- */

/** SGL descriptor (section 4.4), 16 bytes. */
struct nvme_sgl_descriptor {
	uint64_t address;
	uint32_t length;
	uint8_t rsvd12[3];
	uint8_t subtype : 4;
	uint8_t type : 4;
};

enum nvme_psdt_value {
	NVME_PSDT_PRP = 0x0,
	NVME_PSDT_SGL_MPTR_CONTIG = 0x1,
	NVME_PSDT_SGL_MPTR_SGL = 0x2,
};

/** Common command format, 64 bytes. */
struct nvme_cmd {
	/* dword 0 */
	uint16_t opc : 8;  /**< opcode */
	uint16_t fuse : 2; /**< fused operation */
	uint16_t rsvd1 : 4;
	uint16_t psdt : 2; /**< PRP or SGL for data transfer */
	uint16_t cid;      /**< command identifier */

	uint32_t nsid; /* dword 1 */
	uint32_t cdw2;
	uint32_t cdw3;
	uint64_t mptr; /* dwords 4-5: metadata pointer */

	union { /* dwords 6-9: data pointer */
		struct {
			uint64_t prp1;
			uint64_t prp2;
		} prp;
		struct nvme_sgl_descriptor sgl1;
	} dptr;

	uint32_t cdw10;
	uint32_t cdw11;
	uint32_t cdw12;
	uint32_t cdw13;
	uint32_t cdw14;
	uint32_t cdw15;
};

/** Completion status field (bits 31:17 of dword 3 plus the phase tag). */
struct nvme_status {
	uint16_t p : 1;   /**< phase tag */
	uint16_t sc : 8;  /**< status code */
	uint16_t sct : 3; /**< status code type */
	uint16_t crd : 2; /**< command retry delay */
	uint16_t m : 1;   /**< more */
	uint16_t dnr : 1; /**< do not retry */
};

/** Completion queue entry, 16 bytes. */
struct nvme_cpl {
	uint32_t cdw0; /**< command specific */
	uint32_t cdw1; /**< command specific (reserved for most) */
	uint16_t sqhd; /**< submission queue head pointer */
	uint16_t sqid; /**< submission queue identifier */
	uint16_t cid;  /**< command identifier */
	union {
		uint16_t status_raw;
		struct nvme_status status;
	};
};

/** True if the completion carries an error status. */
static inline int
nvme_cpl_is_error(const struct nvme_cpl *cpl)
{
	return cpl->status.sc != 0 || cpl->status.sct != 0;
}

/* ---------------------------------------------------------------------------------------
 * Status codes (section 4.6.1.2)
 * ------------------------------------------------------------------------------------- */

enum nvme_status_code_type {
	NVME_SCT_GENERIC = 0x0,
	NVME_SCT_COMMAND_SPECIFIC = 0x1,
	NVME_SCT_MEDIA_ERROR = 0x2,
	NVME_SCT_PATH = 0x3,
	NVME_SCT_VENDOR_SPECIFIC = 0x7,
};

enum nvme_generic_command_status_code {
	NVME_SC_SUCCESS = 0x00,
	NVME_SC_INVALID_OPCODE = 0x01,
	NVME_SC_INVALID_FIELD = 0x02,
	NVME_SC_COMMAND_ID_CONFLICT = 0x03,
	NVME_SC_DATA_TRANSFER_ERROR = 0x04,
	NVME_SC_ABORTED_POWER_LOSS = 0x05,
	NVME_SC_INTERNAL_DEVICE_ERROR = 0x06,
	NVME_SC_ABORTED_BY_REQUEST = 0x07,
	NVME_SC_ABORTED_SQ_DELETION = 0x08,
	NVME_SC_ABORTED_FAILED_FUSED = 0x09,
	NVME_SC_ABORTED_MISSING_FUSED = 0x0a,
	NVME_SC_INVALID_NAMESPACE_OR_FORMAT = 0x0b,
	NVME_SC_COMMAND_SEQUENCE_ERROR = 0x0c,
	NVME_SC_INVALID_SGL_SEG_DESCRIPTOR = 0x0d,
	NVME_SC_INVALID_NUM_SGL_DESCRIPTORS = 0x0e,
	NVME_SC_DATA_SGL_LENGTH_INVALID = 0x0f,
	NVME_SC_METADATA_SGL_LENGTH_INVALID = 0x10,
	NVME_SC_SGL_DESCRIPTOR_TYPE_INVALID = 0x11,
	NVME_SC_INVALID_CONTROLLER_MEM_BUF = 0x12,
	NVME_SC_INVALID_PRP_OFFSET = 0x13,
	NVME_SC_ATOMIC_WRITE_UNIT_EXCEEDED = 0x14,
	NVME_SC_OPERATION_DENIED = 0x15,
	NVME_SC_INVALID_SGL_OFFSET = 0x16,
	NVME_SC_HOSTID_INCONSISTENT_FORMAT = 0x18,
	NVME_SC_KEEP_ALIVE_EXPIRED = 0x19,
	NVME_SC_KEEP_ALIVE_INVALID = 0x1a,
	NVME_SC_ABORTED_PREEMPT = 0x1b,
	NVME_SC_SANITIZE_FAILED = 0x1c,
	NVME_SC_SANITIZE_IN_PROGRESS = 0x1d,
	NVME_SC_SGL_DATA_BLOCK_GRANULARITY_INVALID = 0x1e,
	NVME_SC_COMMAND_INVALID_IN_CMB = 0x1f,
	NVME_SC_NAMESPACE_IS_WRITE_PROTECTED = 0x20,
	NVME_SC_COMMAND_INTERRUPTED = 0x21,
	NVME_SC_TRANSIENT_TRANSPORT_ERROR = 0x22,

	NVME_SC_LBA_OUT_OF_RANGE = 0x80,
	NVME_SC_CAPACITY_EXCEEDED = 0x81,
	NVME_SC_NAMESPACE_NOT_READY = 0x82,
	NVME_SC_RESERVATION_CONFLICT = 0x83,
	NVME_SC_FORMAT_IN_PROGRESS = 0x84,
};

enum nvme_command_specific_status_code {
	NVME_SC_COMPLETION_QUEUE_INVALID = 0x00,
	NVME_SC_INVALID_QUEUE_IDENTIFIER = 0x01,
	NVME_SC_INVALID_QUEUE_SIZE = 0x02,
	NVME_SC_ABORT_COMMAND_LIMIT_EXCEEDED = 0x03,
	NVME_SC_ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED = 0x05,
	NVME_SC_INVALID_FIRMWARE_SLOT = 0x06,
	NVME_SC_INVALID_FIRMWARE_IMAGE = 0x07,
	NVME_SC_INVALID_INTERRUPT_VECTOR = 0x08,
	NVME_SC_INVALID_LOG_PAGE = 0x09,
	NVME_SC_INVALID_FORMAT = 0x0a,
	NVME_SC_FIRMWARE_REQ_CONVENTIONAL_RESET = 0x0b,
	NVME_SC_INVALID_QUEUE_DELETION = 0x0c,
	NVME_SC_FEATURE_ID_NOT_SAVEABLE = 0x0d,
	NVME_SC_FEATURE_NOT_CHANGEABLE = 0x0e,
	NVME_SC_FEATURE_NOT_NAMESPACE_SPECIFIC = 0x0f,
	NVME_SC_FIRMWARE_REQ_NVM_RESET = 0x10,
	NVME_SC_FIRMWARE_REQ_RESET = 0x11,
	NVME_SC_FIRMWARE_REQ_MAX_TIME_VIOLATION = 0x12,
	NVME_SC_FIRMWARE_ACTIVATION_PROHIBITED = 0x13,
	NVME_SC_OVERLAPPING_RANGE = 0x14,
	NVME_SC_NAMESPACE_INSUFFICIENT_CAPACITY = 0x15,
	NVME_SC_NAMESPACE_ID_UNAVAILABLE = 0x16,
	NVME_SC_NAMESPACE_ALREADY_ATTACHED = 0x18,
	NVME_SC_NAMESPACE_IS_PRIVATE = 0x19,
	NVME_SC_NAMESPACE_NOT_ATTACHED = 0x1a,
	NVME_SC_THINPROVISIONING_NOT_SUPPORTED = 0x1b,
	NVME_SC_CONTROLLER_LIST_INVALID = 0x1c,
	NVME_SC_DEVICE_SELF_TEST_IN_PROGRESS = 0x1d,
	NVME_SC_BOOT_PARTITION_WRITE_PROHIBITED = 0x1e,
	NVME_SC_INVALID_CTRLR_ID = 0x1f,
	NVME_SC_INVALID_SECONDARY_CTRLR_STATE = 0x20,
	NVME_SC_INVALID_NUM_CTRLR_RESOURCES = 0x21,
	NVME_SC_INVALID_RESOURCE_ID = 0x22,

	NVME_SC_CONFLICTING_ATTRIBUTES = 0x80,
	NVME_SC_INVALID_PROTECTION_INFO = 0x81,
	NVME_SC_ATTEMPTED_WRITE_TO_RO_RANGE = 0x82,
};

enum nvme_media_error_status_code {
	NVME_SC_WRITE_FAULTS = 0x80,
	NVME_SC_UNRECOVERED_READ_ERROR = 0x81,
	NVME_SC_GUARD_CHECK_ERROR = 0x82,
	NVME_SC_APPLICATION_TAG_CHECK_ERROR = 0x83,
	NVME_SC_REFERENCE_TAG_CHECK_ERROR = 0x84,
	NVME_SC_COMPARE_FAILURE = 0x85,
	NVME_SC_ACCESS_DENIED = 0x86,
	NVME_SC_DEALLOCATED_OR_UNWRITTEN_BLOCK = 0x87,
};

enum nvme_path_status_code {
	NVME_SC_INTERNAL_PATH_ERROR = 0x00,
	NVME_SC_ANA_PERSISTENT_LOSS = 0x01, /**< the namespace is in ANA Persistent Loss here */
	NVME_SC_ANA_INACCESSIBLE = 0x02,    /**< ... in ANA Inaccessible through this controller */
	NVME_SC_ANA_TRANSITION = 0x03,      /**< ... in ANA Change: try again after ANATT */
	NVME_SC_CONTROLLER_PATH_ERROR = 0x60,
	NVME_SC_HOST_PATH_ERROR = 0x70,
	NVME_SC_ABORTED_BY_HOST = 0x71,
};

/* ---------------------------------------------------------------------------------------
 * Opcodes (section 5 admin, NVM command set section 6)
 * ------------------------------------------------------------------------------------- */

enum nvme_admin_opcode {
	NVME_OPC_DELETE_IO_SQ = 0x00,
	NVME_OPC_CREATE_IO_SQ = 0x01,
	NVME_OPC_GET_LOG_PAGE = 0x02,
	NVME_OPC_DELETE_IO_CQ = 0x04,
	NVME_OPC_CREATE_IO_CQ = 0x05,
	NVME_OPC_IDENTIFY = 0x06,
	NVME_OPC_ABORT = 0x08,
	NVME_OPC_SET_FEATURES = 0x09,
	NVME_OPC_GET_FEATURES = 0x0a,
	NVME_OPC_ASYNC_EVENT_REQUEST = 0x0c,
	NVME_OPC_NS_MANAGEMENT = 0x0d,
	NVME_OPC_FIRMWARE_COMMIT = 0x10,
	NVME_OPC_FIRMWARE_IMAGE_DOWNLOAD = 0x11,
	NVME_OPC_DEVICE_SELF_TEST = 0x14,
	NVME_OPC_NS_ATTACHMENT = 0x15,
	NVME_OPC_KEEP_ALIVE = 0x18,
	NVME_OPC_DIRECTIVE_SEND = 0x19,
	NVME_OPC_DIRECTIVE_RECEIVE = 0x1a,
	NVME_OPC_VIRTUALIZATION_MANAGEMENT = 0x1c,
	NVME_OPC_NVME_MI_SEND = 0x1d,
	NVME_OPC_NVME_MI_RECEIVE = 0x1e,
	NVME_OPC_DOORBELL_BUFFER_CONFIG = 0x7c,
	NVME_OPC_FORMAT_NVM = 0x80,
	NVME_OPC_SECURITY_SEND = 0x81,
	NVME_OPC_SECURITY_RECEIVE = 0x82,
	NVME_OPC_SANITIZE = 0x84,
	NVME_OPC_GET_LBA_STATUS = 0x86,
};

enum nvme_nvm_opcode {
	NVME_OPC_FLUSH = 0x00,
	NVME_OPC_WRITE = 0x01,
	NVME_OPC_READ = 0x02,
	NVME_OPC_WRITE_UNCORRECTABLE = 0x04,
	NVME_OPC_COMPARE = 0x05,
	NVME_OPC_WRITE_ZEROES = 0x08,
	NVME_OPC_DATASET_MANAGEMENT = 0x09,
	NVME_OPC_VERIFY = 0x0c,
	NVME_OPC_RESERVATION_REGISTER = 0x0d,
	NVME_OPC_RESERVATION_REPORT = 0x0e,
	NVME_OPC_RESERVATION_ACQUIRE = 0x11,
	NVME_OPC_RESERVATION_RELEASE = 0x15,
	NVME_OPC_COPY = 0x19,
};

/** Data transfer direction encoded in opcode bits 1:0 (section 4.2). */
enum nvme_data_transfer {
	NVME_DATA_NONE = 0,
	NVME_DATA_HOST_TO_CONTROLLER = 1,
	NVME_DATA_CONTROLLER_TO_HOST = 2,
	NVME_DATA_BIDIRECTIONAL = 3,
};

static inline enum nvme_data_transfer
nvme_opc_get_data_transfer(uint8_t opc)
{
	return (enum nvme_data_transfer)(opc & 3);
}

/* Read/write/compare/write zeroes CDW12 flags. */
#define NVME_IO_FLAGS_FORCE_UNIT_ACCESS (1u << 30)
#define NVME_IO_FLAGS_LIMITED_RETRY (1u << 31)
#define NVME_IO_FLAGS_DEALLOCATE (1u << 25) /**< write zeroes: deallocate (DEAC) */
#define NVME_IO_FLAGS_DTYPE_SHIFT 20        /**< directive type, CDW12 bits 23:20 */
#define NVME_IO_FLAGS_DSPEC_SHIFT 16        /**< directive specific, CDW13 bits 31:16 */
/* PRINFO (CDW12 bits 29:26), section 8.3: protection information action and checks. */
#define NVME_IO_FLAGS_PRACT (1u << 29)        /**< controller inserts/strips PI */
#define NVME_IO_FLAGS_PRCHK_GUARD (1u << 28)  /**< check the guard field */
#define NVME_IO_FLAGS_PRCHK_APPTAG (1u << 27) /**< check the application tag */
#define NVME_IO_FLAGS_PRCHK_REFTAG (1u << 26) /**< check the reference tag */
#define NVME_IO_FLAGS_PRCHK_MASK (7u << 26)

/* ---------------------------------------------------------------------------------------
 * Identify (section 5.15)
 * ------------------------------------------------------------------------------------- */

enum nvme_identify_cns {
	NVME_IDENTIFY_NS = 0x00,
	NVME_IDENTIFY_CTRLR = 0x01,
	NVME_IDENTIFY_ACTIVE_NS_LIST = 0x02,
	NVME_IDENTIFY_NS_ID_DESCRIPTOR_LIST = 0x03,
	NVME_IDENTIFY_ALLOCATED_NS_LIST = 0x10,
};

/** Power state descriptor, 32 bytes. */
struct nvme_power_state {
	uint16_t mp; /**< maximum power, centiwatts */
	uint8_t rsvd2;
	uint8_t mps : 1;  /**< max power scale */
	uint8_t nops : 1; /**< non-operational state */
	uint8_t rsvd3 : 6;
	uint32_t enlat; /**< entry latency, µs */
	uint32_t exlat; /**< exit latency, µs */
	uint8_t rrt : 5;
	uint8_t rsvd12 : 3;
	uint8_t rrl : 5;
	uint8_t rsvd13 : 3;
	uint8_t rwt : 5;
	uint8_t rsvd14 : 3;
	uint8_t rwl : 5;
	uint8_t rsvd15 : 3;
	uint16_t idlp;
	uint8_t rsvd18 : 6;
	uint8_t ips : 2;
	uint8_t rsvd19;
	uint16_t actp;
	uint8_t apw : 3;
	uint8_t rsvd22 : 3;
	uint8_t aps : 2;
	uint8_t rsvd23[9];
};

/* OACS bits */
#define NVME_OACS_SECURITY (1u << 0)
#define NVME_OACS_FORMAT (1u << 1)
#define NVME_OACS_FIRMWARE (1u << 2)
#define NVME_OACS_NS_MANAGE (1u << 3)
#define NVME_OACS_DEVICE_SELF_TEST (1u << 4)
#define NVME_OACS_DIRECTIVES (1u << 5)
#define NVME_OACS_NVME_MI (1u << 6)
#define NVME_OACS_VIRTUALIZATION (1u << 7)
#define NVME_OACS_DOORBELL_BUFFER_CONFIG (1u << 8)
#define NVME_OACS_DOORBELL_BUFFER (1u << 8)

/* ONCS bits */
#define NVME_ONCS_COMPARE (1u << 0)
#define NVME_ONCS_WRITE_UNCORRECTABLE (1u << 1)
#define NVME_ONCS_DSM (1u << 2)
#define NVME_ONCS_WRITE_ZEROES (1u << 3)
#define NVME_ONCS_SAVE_FEATURES (1u << 4)
#define NVME_ONCS_RESERVATIONS (1u << 5)
#define NVME_ONCS_TIMESTAMP (1u << 6)
#define NVME_ONCS_VERIFY (1u << 7)

/* FRMW bits: bit 0 slot 1 read only, bits 3:1 number of slots, bit 4 activation without
 * reset. */
#define NVME_FRMW_SLOT1_RO (1u << 0)
#define NVME_FRMW_NUM_SLOTS_SHIFT 1
#define NVME_FRMW_NUM_SLOTS_MASK 0x7u
#define NVME_FRMW_ACTIVATE_NO_RESET (1u << 4)

/* LPA bits */
#define NVME_LPA_NS_SMART (1u << 0)
#define NVME_LPA_COMMAND_EFFECTS (1u << 1)
#define NVME_LPA_EXTENDED_DATA (1u << 2)

/** Identify controller data structure, 4096 bytes. */
struct nvme_ctrlr_data {
	/* bytes 0-255: controller capabilities and features */
	uint16_t vid;    /**< PCI vendor id */
	uint16_t ssvid;  /**< PCI subsystem vendor id */
	char sn[20];     /**< serial number, ASCII, space padded */
	char mn[40];     /**< model number, ASCII, space padded */
	char fr[8];      /**< firmware revision, ASCII, space padded */
	uint8_t rab;     /**< recommended arbitration burst */
	uint8_t ieee[3]; /**< IEEE OUI identifier */
	uint8_t cmic;    /**< controller multi-path I/O and namespace sharing */
	uint8_t mdts;    /**< maximum data transfer size: 2 ^ MDTS * CAP.MPSMIN, 0 = none */
	uint16_t cntlid; /**< controller id */
	uint32_t ver;    /**< version */
	uint32_t rtd3r;  /**< RTD3 resume latency */
	uint32_t rtd3e;  /**< RTD3 entry latency */
	uint32_t oaes;   /**< optional asynchronous events supported */
	uint32_t ctratt; /**< controller attributes */
	uint16_t rrls;   /**< read recovery levels supported */
	uint8_t rsvd102[9];
	uint8_t cntrltype; /**< controller type */
	uint8_t fguid[16]; /**< FRU globally unique identifier */
	uint16_t crdt1;    /**< command retry delay times */
	uint16_t crdt2;
	uint16_t crdt3;
	uint8_t rsvd134[122];

	/* bytes 256-511: admin command set attributes */
	uint16_t oacs;       /**< optional admin command support */
	uint8_t acl;         /**< abort command limit, 0's based */
	uint8_t aerl;        /**< asynchronous event request limit, 0's based */
	uint8_t frmw;        /**< firmware updates */
	uint8_t lpa;         /**< log page attributes */
	uint8_t elpe;        /**< error log page entries, 0's based */
	uint8_t npss;        /**< number of power states supported, 0's based */
	uint8_t avscc;       /**< admin vendor specific command configuration */
	uint8_t apsta;       /**< autonomous power state transition attributes */
	uint16_t wctemp;     /**< warning composite temperature threshold, kelvin */
	uint16_t cctemp;     /**< critical composite temperature threshold, kelvin */
	uint16_t mtfa;       /**< maximum time for firmware activation, 100 ms units */
	uint32_t hmpre;      /**< host memory buffer preferred size */
	uint32_t hmmin;      /**< host memory buffer minimum size */
	uint64_t tnvmcap[2]; /**< total NVM capacity, bytes, 128-bit */
	uint64_t unvmcap[2]; /**< unallocated NVM capacity, bytes, 128-bit */
	uint32_t rpmbs;      /**< replay protected memory block support */
	uint16_t edstt;      /**< extended device self-test time */
	uint8_t dsto;        /**< device self-test options */
	uint8_t fwug;        /**< firmware update granularity, 4 KiB units, 0xff = none */
	uint16_t kas;        /**< keep alive support */
	uint16_t hctma;      /**< host controlled thermal management attributes */
	uint16_t mntmt;      /**< minimum thermal management temperature */
	uint16_t mxtmt;      /**< maximum thermal management temperature */
	uint32_t sanicap;    /**< sanitize capabilities */
	uint32_t hmminds;    /**< host memory buffer minimum descriptor entry size */
	uint16_t hmmaxd;     /**< host memory maximum descriptors entries */
	uint16_t nsetidmax;  /**< NVM set identifier maximum */
	uint16_t endgidmax;  /**< endurance group identifier maximum */
	uint8_t anatt;       /**< ANA transition time */
	uint8_t anacap;      /**< ANA capabilities */
	uint32_t anagrpmax;  /**< ANA group identifier maximum */
	uint32_t nanagrpid;  /**< number of ANA group identifiers */
	uint32_t pels;       /**< persistent event log size */
	uint8_t rsvd356[156];

	/* bytes 512-703: NVM command set attributes */
	uint8_t sqes;    /**< submission queue entry size: bits 3:0 required, 7:4 max (log2) */
	uint8_t cqes;    /**< completion queue entry size: bits 3:0 required, 7:4 max (log2) */
	uint16_t maxcmd; /**< maximum outstanding commands */
	uint32_t nn;     /**< number of namespaces */
	uint16_t oncs;   /**< optional NVM command support */
	uint16_t fuses;  /**< fused operation support */
	uint8_t fna;     /**< format NVM attributes */
	uint8_t vwc;     /**< volatile write cache: bit 0 present */
	uint16_t awun;   /**< atomic write unit normal */
	uint16_t awupf;  /**< atomic write unit power fail */
	uint8_t nvscc;   /**< NVM vendor specific command configuration */
	uint8_t nwpc;    /**< namespace write protection capabilities */
	uint16_t acwu;   /**< atomic compare and write unit */
	uint16_t rsvd534;
	uint32_t sgls; /**< SGL support */
	uint32_t mnan; /**< maximum number of allowed namespaces */
	uint8_t rsvd544[224];
	char subnqn[256]; /**< NVM subsystem NVMe qualified name */
	uint8_t rsvd1024[768];
	uint8_t nvmf_specific[256];

	/* bytes 2048-3071: power state descriptors */
	struct nvme_power_state psd[32];

	/* bytes 3072-4095: vendor specific */
	uint8_t vs[1024];
};

/** LBA format, 4 bytes. */
struct nvme_lbaf {
	uint16_t ms;    /**< metadata size */
	uint8_t lbads;  /**< LBA data size, log2 */
	uint8_t rp : 2; /**< relative performance */
	uint8_t rsvd3 : 6;
};

#define NVME_FLBAS_FORMAT_MASK 0xfu
#define NVME_FLBAS_EXTENDED (1u << 4)
/* DPS bits 2:0: protection information type (0 = none, 1..3); bit 3: PI first. */
#define NVME_DPS_PI_TYPE_MASK 0x7u
#define NVME_DPS_PI_FIRST (1u << 3)
#define NVME_MAX_LBAF 16

/* NSFEAT bits */
#define NVME_NSFEAT_THIN_PROVISIONING (1u << 0)
#define NVME_NSFEAT_NS_ATOMIC_WRITE (1u << 1)
#define NVME_NSFEAT_DEALLOC_OR_UNWRITTEN_ERROR (1u << 2)
#define NVME_NSFEAT_GUID_NEVER_REUSED (1u << 3)
#define NVME_NSFEAT_OPTIMAL_PERF (1u << 4)

/** Identify namespace data structure, 4096 bytes. */
struct nvme_ns_data {
	uint64_t nsze;      /**< namespace size, in logical blocks */
	uint64_t ncap;      /**< namespace capacity, in logical blocks */
	uint64_t nuse;      /**< namespace utilization, in logical blocks */
	uint8_t nsfeat;     /**< namespace features */
	uint8_t nlbaf;      /**< number of LBA formats, 0's based */
	uint8_t flbas;      /**< formatted LBA size */
	uint8_t mc;         /**< metadata capabilities */
	uint8_t dpc;        /**< end-to-end data protection capabilities */
	uint8_t dps;        /**< end-to-end data protection type settings */
	uint8_t nmic;       /**< namespace multi-path I/O and sharing capabilities */
	uint8_t rescap;     /**< reservation capabilities */
	uint8_t fpi;        /**< format progress indicator */
	uint8_t dlfeat;     /**< deallocate logical block features */
	uint16_t nawun;     /**< namespace atomic write unit normal */
	uint16_t nawupf;    /**< namespace atomic write unit power fail */
	uint16_t nacwu;     /**< namespace atomic compare and write unit */
	uint16_t nabsn;     /**< namespace atomic boundary size normal */
	uint16_t nabo;      /**< namespace atomic boundary offset */
	uint16_t nabspf;    /**< namespace atomic boundary size power fail */
	uint16_t noiob;     /**< namespace optimal I/O boundary */
	uint64_t nvmcap[2]; /**< NVM capacity, bytes, 128-bit */
	uint16_t npwg;      /**< namespace preferred write granularity */
	uint16_t npwa;      /**< namespace preferred write alignment */
	uint16_t npdg;      /**< namespace preferred deallocate granularity */
	uint16_t npda;      /**< namespace preferred deallocate alignment */
	uint16_t nows;      /**< namespace optimal write size */
	uint8_t rsvd74[18];
	uint32_t anagrpid; /**< ANA group identifier */
	uint8_t rsvd96[3];
	uint8_t nsattr;    /**< namespace attributes */
	uint16_t nvmsetid; /**< NVM set identifier */
	uint16_t endgid;   /**< endurance group identifier */
	uint8_t nguid[16]; /**< namespace globally unique identifier */
	uint8_t eui64[8];  /**< IEEE extended unique identifier */
	struct nvme_lbaf lbaf[NVME_MAX_LBAF];
	uint8_t rsvd192[192];
	uint8_t vs[3712];
};

/** DLFEAT bits 2:0: what a read of a deallocated block returns. */
#define NVME_DLFEAT_READ_ZEROES 0x1u

/** Active namespace list: up to 1024 namespace ids in increasing order, zero terminated. */
struct nvme_ns_list {
	uint32_t ns_list[1024];
};

/* ---------------------------------------------------------------------------------------
 * Features (section 5.21.1)
 * ------------------------------------------------------------------------------------- */

enum nvme_feat {
	NVME_FEAT_ARBITRATION = 0x01,
	NVME_FEAT_POWER_MANAGEMENT = 0x02,
	NVME_FEAT_LBA_RANGE_TYPE = 0x03,
	NVME_FEAT_TEMPERATURE_THRESHOLD = 0x04,
	NVME_FEAT_ERROR_RECOVERY = 0x05,
	NVME_FEAT_VOLATILE_WRITE_CACHE = 0x06,
	NVME_FEAT_NUMBER_OF_QUEUES = 0x07,
	NVME_FEAT_INTERRUPT_COALESCING = 0x08,
	NVME_FEAT_INTERRUPT_VECTOR_CONFIGURATION = 0x09,
	NVME_FEAT_WRITE_ATOMICITY = 0x0a,
	NVME_FEAT_ASYNC_EVENT_CONFIGURATION = 0x0b,
	NVME_FEAT_AUTONOMOUS_POWER_STATE_TRANSITION = 0x0c,
	NVME_FEAT_HOST_MEM_BUFFER = 0x0d,
	NVME_FEAT_TIMESTAMP = 0x0e,
	NVME_FEAT_KEEP_ALIVE_TIMER = 0x0f,
	NVME_FEAT_HOST_CONTROLLED_THERMAL_MANAGEMENT = 0x10,
	NVME_FEAT_NON_OPERATIONAL_POWER_STATE_CONFIG = 0x11,
	NVME_FEAT_SOFTWARE_PROGRESS_MARKER = 0x80,
	NVME_FEAT_HOST_IDENTIFIER = 0x81,
	NVME_FEAT_HOST_RESERVE_MASK = 0x82,
	NVME_FEAT_HOST_RESERVE_PERSIST = 0x83,
};

/** Get Features CDW10 SEL field (bits 10:8). */
enum nvme_feat_sel {
	NVME_FEAT_SEL_CURRENT = 0x0,
	NVME_FEAT_SEL_DEFAULT = 0x1,
	NVME_FEAT_SEL_SAVED = 0x2,
	NVME_FEAT_SEL_SUPPORTED = 0x3,
};

/** Arbitration feature (CDW11). */
union nvme_feat_arbitration {
	uint32_t raw;
	struct {
		uint32_t ab : 3; /**< arbitration burst, log2; 7 = no limit */
		uint32_t rsvd3 : 5;
		uint32_t lpw : 8; /**< low priority weight, 0's based */
		uint32_t mpw : 8; /**< medium priority weight, 0's based */
		uint32_t hpw : 8; /**< high priority weight, 0's based */
	} bits;
};

/** Temperature threshold feature (CDW11). */
union nvme_feat_temperature_threshold {
	uint32_t raw;
	struct {
		uint32_t tmpth : 16; /**< threshold, kelvin */
		uint32_t tmpsel : 4; /**< sensor: 0 composite, 1-8 sensors, 0xf all */
		uint32_t thsel : 2;  /**< 0 over threshold, 1 under threshold */
		uint32_t rsvd22 : 10;
	} bits;
};

/** Number of queues feature (CDW11 and completion DW0), both counts 0's based. */
union nvme_feat_number_of_queues {
	uint32_t raw;
	struct {
		uint32_t nsqr : 16;
		uint32_t ncqr : 16;
	} bits;
};

/** Volatile write cache feature (CDW11). */
union nvme_feat_volatile_write_cache {
	uint32_t raw;
	struct {
		uint32_t wce : 1;
		uint32_t rsvd1 : 31;
	} bits;
};

/** Asynchronous event configuration feature (CDW11). */
union nvme_feat_async_event_configuration {
	uint32_t raw;
	struct {
		uint32_t crit_warn : 8;      /**< SMART/health critical warnings */
		uint32_t ns_attr_notice : 1; /**< namespace attribute notices */
		uint32_t fw_activation_notice : 1;
		uint32_t telemetry_log_notice : 1;
		uint32_t ana_change_notice : 1;
		uint32_t rsvd12 : 20;
	} bits;
};

/* ---------------------------------------------------------------------------------------
 * Queue creation, abort, format, firmware, DSM, AER command fields
 * ------------------------------------------------------------------------------------- */

/* Create I/O CQ/SQ: CDW10 = QSIZE (0's based) << 16 | QID. */
/* clang-format 14 reads "(x) - 1" in these macros as a cast: keep them as written */
/* clang-format off */
#define NVME_CREATE_IO_Q_CDW10(qid, entries) \
	((((uint32_t)(entries) - 1u) << 16) | ((uint32_t)(qid) & 0xffffu))
/* clang-format on */
#define NVME_CREATE_IO_CQ_PC (1u << 0)  /**< CDW11: physically contiguous */
#define NVME_CREATE_IO_CQ_IEN (1u << 1) /**< CDW11: interrupts enabled */
#define NVME_CREATE_IO_SQ_PC (1u << 0)
#define NVME_CREATE_IO_SQ_QPRIO_SHIFT 1
#define NVME_CREATE_IO_SQ_CQID_SHIFT 16

/* Abort: CDW10 = CID << 16 | SQID; completion DW0 bit 0 set = command NOT aborted. */
/* clang-format 14 reads "(x) - 1" in these macros as a cast: keep them as written */
/* clang-format off */
#define NVME_ABORT_CDW10(sqid, cid) (((uint32_t)(cid) << 16) | ((uint32_t)(sqid) & 0xffffu))
/* clang-format on */
#define NVME_ABORT_CPL_NOT_ABORTED (1u << 0)

/** Format NVM CDW10. */
union nvme_format_cdw10 {
	uint32_t raw;
	struct {
		uint32_t lbaf : 4; /**< LBA format index */
		uint32_t mset : 1; /**< metadata settings */
		uint32_t pi : 3;   /**< protection information */
		uint32_t pil : 1;  /**< protection information location */
		uint32_t ses : 3;  /**< secure erase settings: 0 none, 1 user data, 2 crypto */
		uint32_t rsvd12 : 20;
	} bits;
};

/** Firmware commit actions (CDW10 bits 5:3). */
enum nvme_fw_commit_action {
	NVME_FW_COMMIT_REPLACE_IMG = 0x0,        /**< download to slot, do not activate */
	NVME_FW_COMMIT_REPLACE_AND_ENABLE = 0x1, /**< download to slot, activate at reset */
	NVME_FW_COMMIT_ENABLE_IMG = 0x2,         /**< activate existing slot at reset */
	NVME_FW_COMMIT_RUN_IMG = 0x3,            /**< activate immediately */
};

/** Firmware commit CDW10. */
union nvme_fw_commit_cdw10 {
	uint32_t raw;
	struct {
		uint32_t fs : 3; /**< firmware slot, 0 = controller chooses */
		uint32_t ca : 3; /**< commit action */
		uint32_t rsvd6 : 25;
		uint32_t bpid : 1; /**< boot partition id */
	} bits;
};

/* Firmware image download: CDW10 = NUMD (dwords, 0's based), CDW11 = OFST (dwords). */

/** Dataset management range, 16 bytes; CDW10 NR = ranges - 1; CDW11 attributes. */
struct nvme_dsm_range {
	uint32_t attributes; /**< context attributes */
	uint32_t length;     /**< number of logical blocks */
	uint64_t starting_lba;
};

#define NVME_DSM_ATTR_INTEGRAL_READ (1u << 0)
#define NVME_DSM_ATTR_INTEGRAL_WRITE (1u << 1)
#define NVME_DSM_ATTR_DEALLOCATE (1u << 2)
#define NVME_DSM_MAX_RANGES 256

/** Asynchronous event types (completion DW0 bits 2:0). */
enum nvme_async_event_type {
	NVME_ASYNC_EVENT_TYPE_ERROR = 0x0,
	NVME_ASYNC_EVENT_TYPE_SMART = 0x1,
	NVME_ASYNC_EVENT_TYPE_NOTICE = 0x2,
	NVME_ASYNC_EVENT_TYPE_IO = 0x6,
	NVME_ASYNC_EVENT_TYPE_VENDOR = 0x7,
};

/** Asynchronous event request completion DW0. */
union nvme_async_event_completion {
	uint32_t raw;
	struct {
		uint32_t async_event_type : 3;
		uint32_t rsvd3 : 5;
		uint32_t async_event_info : 8;
		uint32_t log_page_identifier : 8;
		uint32_t rsvd24 : 8;
	} bits;
};

/* Notice event info values */
#define NVME_ASYNC_EVENT_NS_ATTR_CHANGED 0x00
#define NVME_ASYNC_EVENT_FW_ACTIVATION_START 0x01
#define NVME_ASYNC_EVENT_ANA_CHANGE 0x03 /**< read the ANA log page (0Ch) */
/* SMART event info values */
#define NVME_ASYNC_EVENT_SUBSYSTEM_RELIABILITY 0x00
#define NVME_ASYNC_EVENT_TEMPERATURE_THRESHOLD 0x01
#define NVME_ASYNC_EVENT_SPARE_BELOW_THRESHOLD 0x02

/* ---------------------------------------------------------------------------------------
 * Log pages (section 5.14.1)
 * ------------------------------------------------------------------------------------- */

enum nvme_log_page {
	NVME_LOG_ERROR = 0x01,
	NVME_LOG_HEALTH_INFORMATION = 0x02,
	NVME_LOG_FIRMWARE_SLOT = 0x03,
	NVME_LOG_CHANGED_NS_LIST = 0x04,
	NVME_LOG_COMMAND_EFFECTS_LOG = 0x05,
	NVME_LOG_DEVICE_SELF_TEST = 0x06,
	NVME_LOG_TELEMETRY_HOST_INITIATED = 0x07,
	NVME_LOG_TELEMETRY_CTRLR_INITIATED = 0x08,
	NVME_LOG_ASYMMETRIC_NAMESPACE_ACCESS = 0x0c,
};

/*
 * Asymmetric Namespace Access (NVMe 1.4 section 8.20): a namespace's ANA group has a state
 * per controller (path). Identify Controller: CMIC bit 3 = ANA reporting, OAES bit 11 =
 * ANA change notices (Asynchronous Event Configuration bit 11 enables them), ANACAP says
 * which states are reported, ANAGRPMAX/NANAGRPID bound the group ids; Identify Namespace
 * ANAGRPID names the namespace's group.
 */
#define NVME_CTRLR_CMIC_MULTI_CTRLR (1u << 1)
#define NVME_CTRLR_CMIC_ANA_REPORTING (1u << 3)
#define NVME_CTRLR_OAES_ANA_CHANGE (1u << 11)

enum nvme_ana_state {
	NVME_ANA_OPTIMIZED = 0x1,
	NVME_ANA_NON_OPTIMIZED = 0x2,
	NVME_ANA_INACCESSIBLE = 0x3,
	NVME_ANA_PERSISTENT_LOSS = 0x4,
	NVME_ANA_CHANGE = 0xf,
};

/** ANA log page (5.14.1.12) header; group descriptors follow. LSP bit 0: groups only. */
struct nvme_ana_page {
	uint64_t change_count;
	uint16_t num_ana_group_desc;
	uint8_t rsvd10[6];
};

/** ANA group descriptor; num_of_nsid NSIDs follow (none with LSP RGO set). */
struct nvme_ana_group_desc {
	uint32_t ana_group_id;
	uint32_t num_of_nsid;
	uint64_t change_count;
	uint8_t ana_state; /**< bits 3:0, enum nvme_ana_state */
	uint8_t rsvd17[15];
	uint32_t nsid[];
};

/** Get Log Page CDW10: LID 7:0, LSP 11:8, RAE 15, NUMDL 31:16; CDW11: NUMDU 15:0. */
/* clang-format 14 reads "(x) - 1" in these macros as a cast: keep them as written */
/* clang-format off */
#define NVME_GET_LOG_CDW10(lid, numd) \
	((((uint32_t)(numd) - 1u) & 0xffffu) << 16 | ((uint32_t)(lid) & 0xffu))
#define NVME_GET_LOG_CDW11(numd) ((((uint32_t)(numd) - 1u) >> 16) & 0xffffu)
/* clang-format on */

/** Error information log entry, 64 bytes. */
struct nvme_error_information_entry {
	uint64_t error_count;
	uint16_t sqid;
	uint16_t cid;
	struct nvme_status status;
	uint16_t error_location;
	uint64_t lba;
	uint32_t nsid;
	uint8_t vendor_specific;
	uint8_t trtype;
	uint8_t rsvd30[2];
	uint64_t command_specific;
	uint16_t trtype_specific;
	uint8_t rsvd42[22];
};

/* Critical warning bits */
#define NVME_CRIT_WARN_AVAILABLE_SPARE (1u << 0)
#define NVME_CRIT_WARN_TEMPERATURE (1u << 1)
#define NVME_CRIT_WARN_DEVICE_RELIABILITY (1u << 2)
#define NVME_CRIT_WARN_READ_ONLY (1u << 3)
#define NVME_CRIT_WARN_VOLATILE_MEMORY_BACKUP (1u << 4)

/**
 * SMART / health information log, 512 bytes. Packed: the temperature sits at offset 1.
 * The 128-bit counters are little-endian pairs, [0] low and [1] high; data units are
 * thousands of 512-byte units, rounded up.
 */
struct __attribute__((packed)) nvme_health_information_page {
	uint8_t critical_warning;
	uint16_t temperature; /**< composite temperature, kelvin */
	uint8_t available_spare;
	uint8_t available_spare_threshold;
	uint8_t percentage_used;
	uint8_t endurance_group_critical_warning;
	uint8_t rsvd7[25];
	uint64_t data_units_read[2];
	uint64_t data_units_written[2];
	uint64_t host_read_commands[2];
	uint64_t host_write_commands[2];
	uint64_t controller_busy_time[2];
	uint64_t power_cycles[2];
	uint64_t power_on_hours[2];
	uint64_t unsafe_shutdowns[2];
	uint64_t media_errors[2];
	uint64_t num_error_info_log_entries[2];
	uint32_t warning_temp_time;
	uint32_t critical_temp_time;
	uint16_t temp_sensor[8];
	uint32_t thm_temp1_trans_count;
	uint32_t thm_temp2_trans_count;
	uint32_t thm_temp1_total_time;
	uint32_t thm_temp2_total_time;
	uint8_t rsvd232[280];
};

/** Firmware slot information log, 512 bytes. */
struct nvme_firmware_page {
	uint8_t afi; /**< bits 2:0 active slot, bits 6:4 slot activated at next reset */
	uint8_t rsvd1[7];
	char revision[7][8]; /**< firmware revision per slot 1..7, ASCII, 0 = empty */
	uint8_t rsvd64[448];
};

/* clang-format 14 reads "(x) - 1" in these macros as a cast: keep them as written */
/* clang-format off */
#define NVME_FW_AFI_ACTIVE_SLOT(afi) ((afi) & 0x7u)
/* clang-format on */
#define NVME_FW_AFI_NEXT_SLOT(afi) (((afi) >> 4) & 0x7u)

/* ---------------------------------------------------------------------------------------
 * Directives (NVMe 1.4 section 9; Data Placement: NVMe 2.0 TP4146)
 *
 * Directive Send (19h) and Receive (1Ah): CDW10 NUMD (0's based dwords), CDW11 DOPER 7:0,
 * DTYPE 15:8, DSPEC 31:16, CDW12 operation specific. A write carries DTYPE in CDW12 23:20
 * and DSPEC (stream identifier, placement identifier) in CDW13 31:16.
 * ------------------------------------------------------------------------------------- */

enum nvme_directive_type {
	NVME_DIRECTIVE_TYPE_IDENTIFY = 0x00,
	NVME_DIRECTIVE_TYPE_STREAMS = 0x01,
	NVME_DIRECTIVE_TYPE_DATA_PLACEMENT = 0x02,
};

/* Directive operations (DOPER) per type and direction. */
enum nvme_directive_doper {
	NVME_DIR_SEND_IDENTIFY_ENABLE = 0x01,     /**< CDW12: ENDIR bit 0, TDTYPE 15:8 */
	NVME_DIR_RECV_IDENTIFY_PARAMS = 0x01,     /**< struct nvme_dir_identify_params */
	NVME_DIR_SEND_STREAMS_RELEASE_ID = 0x01,  /**< DSPEC = stream identifier */
	NVME_DIR_SEND_STREAMS_RELEASE_RES = 0x02, /**< all of the namespace's streams */
	NVME_DIR_RECV_STREAMS_PARAMS = 0x01,      /**< struct nvme_dir_streams_params */
	NVME_DIR_RECV_STREAMS_STATUS = 0x02,      /**< open count, then open identifiers */
	NVME_DIR_RECV_STREAMS_ALLOC_RES = 0x03,   /**< CDW12 NSR 15:0, DW0 NSA 15:0 */
};

#define NVME_DIR_CDW11(doper, dtype, dspec) \
	((uint32_t)(doper) | ((uint32_t)(dtype) << 8) | ((uint32_t)(dspec) << 16))
#define NVME_DIR_ENABLE_CDW12(tdtype, enable) (((uint32_t)(tdtype) << 8) | ((enable) ? 1u : 0u))

/** Identify directive, Return Parameters: one bit per directive type in each byte array. */
struct nvme_dir_identify_params {
	uint8_t supported[32];  /**< bit N: directive type N supported */
	uint8_t enabled[32];    /**< bit N: enabled for this namespace */
	uint8_t persistent[32]; /**< bit N: enabled state survives a controller reset (2.0) */
	uint8_t rsvd96[4000];
};

/** Streams directive, Return Parameters (section 9.3), 32 bytes. */
struct nvme_dir_streams_params {
	uint16_t msl;  /**< max streams limit */
	uint16_t nssa; /**< NVM subsystem streams available */
	uint16_t nsso; /**< NVM subsystem streams open */
	uint8_t nssc;  /**< NVM subsystem stream capability (2.0) */
	uint8_t rsvd7[9];
	uint32_t sws; /**< stream write size, logical blocks */
	uint16_t sgs; /**< stream granularity size, units of SWS */
	uint16_t nsa; /**< namespace streams allocated */
	uint16_t nso; /**< namespace streams open */
	uint8_t rsvd26[6];
};

/** Streams directive, Get Status: open stream count, then that many identifiers. */
struct nvme_dir_streams_status {
	uint16_t osc;
	uint16_t sid[];
};

/* ---------------------------------------------------------------------------------------
 * Flexible Data Placement (NVMe 2.0 TP4146; NVMe 2.1 base section 5.2.2 / 8.1.10)
 *
 * An FDP controller (CTRATT bit 19) groups its media in reclaim units (RU), written
 * through reclaim unit handles (RUH). FDP is enabled per endurance group with Set
 * Features FDP (1Dh): CDW11 ENDGID 15:0, CDW12 FDPE bit 0 and FDPCIDX 15:8 (the
 * configuration of the FDP Configurations log to use); Get Features returns FDPE and
 * FDPCIDX in DW0 the same way. The four FDP log pages are endurance-group scoped: Get
 * Log Page CDW11 31:16 (LSI) carries the ENDGID. A namespace reaches the handles through
 * its placement handles; a write selects one with DTYPE 2 (Data Placement) and DSPEC =
 * placement identifier: reclaim group in the top RGIF bits, placement handle below.
 * I/O Management Receive (12h, MO 1) lists a namespace's handles (RUH Status); I/O
 * Management Send (1Dh, MO 1, Reclaim Unit Handle Update) moves the listed handles to
 * fresh reclaim units. Both: CDW10 MO 7:0, MOS 31:16; Receive CDW11 NUMD (0's based).
 * ------------------------------------------------------------------------------------- */

#define NVME_CTRATT_FDPS (1u << 19) /**< Flexible Data Placement supported */

#define NVME_FEAT_FDP 0x1du        /**< Set/Get Features: FDP enable and configuration */
#define NVME_FEAT_FDP_EVENTS 0x1eu /**< Set/Get Features: FDP events enabled per handle */
#define NVME_FEAT_FDP_CDW12(enable, cfg_idx) (((uint32_t)(cfg_idx) << 8) | ((enable) ? 1u : 0u))
#define NVME_FEAT_FDP_FDPE(dw) (((dw)&1u) != 0)
#define NVME_FEAT_FDP_FDPCIDX(dw) ((uint8_t)(((dw) >> 8) & 0xffu))

#define NVME_LOG_FDP_CONFIGS 0x20u /**< struct nvme_fdp_config_log, descriptors follow */
#define NVME_LOG_FDP_RUH_USAGE 0x21u
#define NVME_LOG_FDP_STATS 0x22u
#define NVME_LOG_FDP_EVENTS 0x23u /**< LSP bit 0: 0 host events, 1 controller events */
#define NVME_GET_LOG_CDW11_LSI(lsi) ((uint32_t)(lsi) << 16)

#define NVME_OPC_IO_MGMT_RECEIVE 0x12u
#define NVME_OPC_IO_MGMT_SEND 0x1du
#define NVME_IO_MGMT_RECV_RUH_STATUS 0x01u /**< MO: struct nvme_fdp_ruh_status */
#define NVME_IO_MGMT_SEND_RUH_UPDATE 0x01u /**< MO: MOS = placement ids - 1, list in data */
#define NVME_IO_MGMT_CDW10(mo, mos) ((uint32_t)(mo) | ((uint32_t)(mos) << 16))

/** FDP Configurations log header (LID 20h); NUMFDPC + 1 descriptors follow. */
struct nvme_fdp_config_log {
	uint16_t numfdpc; /**< number of configurations, 0's based */
	uint8_t ver;      /**< 0 */
	uint8_t rsvd3;
	uint32_t size; /**< bytes of the whole log page */
	uint8_t rsvd8[8];
};

#define NVME_FDPA_VALID (1u << 7)          /**< FDPA: configuration valid */
#define NVME_FDPA_VWC (1u << 4)            /**< FDPA: volatile write cache in the RUs */
#define NVME_FDPA_RGIF(fdpa) ((fdpa)&0xfu) /**< reclaim group identifier format, bits */

/** One FDP configuration (DSZE bytes: this header, then NRUH RUH descriptors, then VSS). */
struct nvme_fdp_config_desc {
	uint16_t dsze;    /**< descriptor size, bytes */
	uint8_t fdpa;     /**< attributes: NVME_FDPA_* */
	uint8_t vss;      /**< vendor specific size, bytes */
	uint32_t nrg;     /**< number of reclaim groups */
	uint16_t nruh;    /**< number of reclaim unit handles */
	uint16_t maxpids; /**< max placement identifiers per namespace, 0's based */
	uint32_t nnss;    /**< number of namespaces supported */
	uint64_t runs;    /**< reclaim unit nominal size, bytes */
	uint32_t erutl;   /**< estimated reclaim unit time limit, s (0 = none) */
	uint8_t rsvd28[36];
};

#define NVME_RUHT_INITIALLY_ISOLATED 0x1u
#define NVME_RUHT_PERSISTENTLY_ISOLATED 0x2u

/** Reclaim Unit Handle descriptor of a configuration. */
struct nvme_fdp_ruh_desc {
	uint8_t ruht; /**< NVME_RUHT_* */
	uint8_t rsvd1[3];
};

/** Reclaim Unit Handle Usage log header (LID 21h); NRUH descriptors follow. */
struct nvme_fdp_ruhu_log {
	uint16_t nruh;
	uint8_t rsvd2[6];
};

#define NVME_RUHA_UNUSED 0x0u
#define NVME_RUHA_HOST 0x1u /**< a namespace's placement handle refers to it */
#define NVME_RUHA_CTRLR 0x2u

struct nvme_fdp_ruhu_desc {
	uint8_t ruha; /**< NVME_RUHA_* */
	uint8_t rsvd1[7];
};

/** FDP Statistics log (LID 22h): 128-bit byte counters, low quadword first. */
struct nvme_fdp_stats_log {
	uint64_t hbmw[2]; /**< host bytes with metadata written */
	uint64_t mbmw[2]; /**< media bytes with metadata written */
	uint64_t mbe[2];  /**< media bytes erased */
	uint8_t rsvd48[16];
};

/** FDP Events log header (LID 23h); NEVENTS events of 64 bytes follow. */
struct nvme_fdp_events_log {
	uint32_t nevents;
	uint8_t rsvd4[60];
};

#define NVME_FDP_EVT_RU_NOT_WRITTEN_FULLY 0x00u /**< host event */
#define NVME_FDP_EVT_INVALID_PID 0x03u          /**< host event */
#define NVME_FDP_EVT_F_PIV (1u << 0)            /**< PID valid */
#define NVME_FDP_EVT_F_NSIDV (1u << 1)          /**< NSID valid */

struct nvme_fdp_event {
	uint8_t type;
	uint8_t flags; /**< NVME_FDP_EVT_F_* */
	uint16_t pid;
	uint8_t timestamp[8]; /**< as the Timestamp feature (ms in 47:0), unaligned */
	uint32_t nsid;
	uint8_t type_specific[16];
	uint16_t rgid;
	uint8_t ruhid;
	uint8_t rsvd35[5];
	uint8_t vs[24];
};

/** Reclaim Unit Handle Status (I/O Management Receive MO 1) header. */
struct nvme_fdp_ruh_status {
	uint8_t rsvd0[14];
	uint16_t nruhsd; /**< descriptors that follow */
};

struct nvme_fdp_ruh_status_desc {
	uint16_t pid;    /**< placement identifier (reclaim group | placement handle) */
	uint16_t ruhid;  /**< the reclaim unit handle it refers to */
	uint32_t earutr; /**< estimated active RU time remaining, s (0 = not reported) */
	uint64_t ruamw;  /**< RU available media writes, logical blocks */
	uint8_t rsvd16[16];
};

/* Directive type in a write's io_flags (CDW12 23:20). */
#define NVME_IO_FLAGS_DTYPE_STREAMS \
	((uint32_t)NVME_DIRECTIVE_TYPE_STREAMS << NVME_IO_FLAGS_DTYPE_SHIFT)
#define NVME_IO_FLAGS_DTYPE_PLACEMENT \
	((uint32_t)NVME_DIRECTIVE_TYPE_DATA_PLACEMENT << NVME_IO_FLAGS_DTYPE_SHIFT)

/* ---------------------------------------------------------------------------------------
 * Build-time checks of every size and offset above.
 * ------------------------------------------------------------------------------------- */

#define NVME_CHECK_SIZE(type, size) \
	_Static_assert(sizeof(type) == (size), "incorrect size of " #type)
#define NVME_CHECK_OFFSET(type, field, off) \
	_Static_assert(offsetof(type, field) == (off), "incorrect offset of " #type "." #field)

NVME_CHECK_SIZE(union nvme_cap_register, 8);
NVME_CHECK_SIZE(union nvme_vs_register, 4);
NVME_CHECK_SIZE(union nvme_cc_register, 4);
NVME_CHECK_SIZE(union nvme_csts_register, 4);
NVME_CHECK_SIZE(union nvme_aqa_register, 4);
NVME_CHECK_OFFSET(struct nvme_registers, cap, NVME_REG_CAP);
NVME_CHECK_OFFSET(struct nvme_registers, vs, NVME_REG_VS);
NVME_CHECK_OFFSET(struct nvme_registers, intms, NVME_REG_INTMS);
NVME_CHECK_OFFSET(struct nvme_registers, intmc, NVME_REG_INTMC);
NVME_CHECK_OFFSET(struct nvme_registers, cc, NVME_REG_CC);
NVME_CHECK_OFFSET(struct nvme_registers, csts, NVME_REG_CSTS);
NVME_CHECK_OFFSET(struct nvme_registers, nssr, NVME_REG_NSSR);
NVME_CHECK_OFFSET(struct nvme_registers, aqa, NVME_REG_AQA);
NVME_CHECK_OFFSET(struct nvme_registers, asq, NVME_REG_ASQ);
NVME_CHECK_OFFSET(struct nvme_registers, acq, NVME_REG_ACQ);
NVME_CHECK_OFFSET(struct nvme_registers, cmbloc, NVME_REG_CMBLOC);
NVME_CHECK_OFFSET(struct nvme_registers, cmbsz, NVME_REG_CMBSZ);
NVME_CHECK_OFFSET(struct nvme_registers, pmrcap, 0xe00);
NVME_CHECK_OFFSET(struct nvme_registers, doorbell, NVME_REG_DBS);
NVME_CHECK_SIZE(struct nvme_registers, 0x1000);

NVME_CHECK_SIZE(struct nvme_sgl_descriptor, 16);
NVME_CHECK_SIZE(struct nvme_cmd, 64);
NVME_CHECK_OFFSET(struct nvme_cmd, nsid, 4);
NVME_CHECK_OFFSET(struct nvme_cmd, mptr, 16);
NVME_CHECK_OFFSET(struct nvme_cmd, dptr, 24);
NVME_CHECK_OFFSET(struct nvme_cmd, cdw10, 40);
NVME_CHECK_OFFSET(struct nvme_cmd, cdw15, 60);
NVME_CHECK_SIZE(struct nvme_status, 2);
NVME_CHECK_SIZE(struct nvme_cpl, 16);
NVME_CHECK_OFFSET(struct nvme_cpl, sqhd, 8);
NVME_CHECK_OFFSET(struct nvme_cpl, cid, 12);
NVME_CHECK_OFFSET(struct nvme_cpl, status_raw, 14);

NVME_CHECK_SIZE(struct nvme_power_state, 32);
NVME_CHECK_SIZE(struct nvme_ctrlr_data, 4096);
NVME_CHECK_OFFSET(struct nvme_ctrlr_data, sn, 4);
NVME_CHECK_OFFSET(struct nvme_ctrlr_data, mn, 24);
NVME_CHECK_OFFSET(struct nvme_ctrlr_data, fr, 64);
NVME_CHECK_OFFSET(struct nvme_ctrlr_data, mdts, 77);
NVME_CHECK_OFFSET(struct nvme_ctrlr_data, cntlid, 78);
NVME_CHECK_OFFSET(struct nvme_ctrlr_data, ver, 80);
NVME_CHECK_OFFSET(struct nvme_ctrlr_data, cntrltype, 111);
NVME_CHECK_OFFSET(struct nvme_ctrlr_data, crdt1, 128);
NVME_CHECK_OFFSET(struct nvme_ctrlr_data, oacs, 256);
NVME_CHECK_OFFSET(struct nvme_ctrlr_data, frmw, 260);
NVME_CHECK_OFFSET(struct nvme_ctrlr_data, wctemp, 266);
NVME_CHECK_OFFSET(struct nvme_ctrlr_data, tnvmcap, 280);
NVME_CHECK_OFFSET(struct nvme_ctrlr_data, kas, 320);
NVME_CHECK_OFFSET(struct nvme_ctrlr_data, pels, 352);
NVME_CHECK_OFFSET(struct nvme_ctrlr_data, sqes, 512);
NVME_CHECK_OFFSET(struct nvme_ctrlr_data, nn, 516);
NVME_CHECK_OFFSET(struct nvme_ctrlr_data, oncs, 520);
NVME_CHECK_OFFSET(struct nvme_ctrlr_data, vwc, 525);
NVME_CHECK_OFFSET(struct nvme_ctrlr_data, sgls, 536);
NVME_CHECK_OFFSET(struct nvme_ctrlr_data, subnqn, 768);
NVME_CHECK_OFFSET(struct nvme_ctrlr_data, psd, 2048);
NVME_CHECK_OFFSET(struct nvme_ctrlr_data, vs, 3072);

NVME_CHECK_SIZE(struct nvme_lbaf, 4);
NVME_CHECK_SIZE(struct nvme_ns_data, 4096);
NVME_CHECK_OFFSET(struct nvme_ns_data, nsfeat, 24);
NVME_CHECK_OFFSET(struct nvme_ns_data, flbas, 26);
NVME_CHECK_OFFSET(struct nvme_ns_data, dlfeat, 33);
NVME_CHECK_OFFSET(struct nvme_ns_data, nvmcap, 48);
NVME_CHECK_OFFSET(struct nvme_ns_data, anagrpid, 92);
NVME_CHECK_OFFSET(struct nvme_ns_data, nguid, 104);
NVME_CHECK_OFFSET(struct nvme_ns_data, eui64, 120);
NVME_CHECK_OFFSET(struct nvme_ns_data, lbaf, 128);
NVME_CHECK_OFFSET(struct nvme_ns_data, vs, 384);
NVME_CHECK_SIZE(struct nvme_ns_list, 4096);

NVME_CHECK_SIZE(union nvme_feat_arbitration, 4);
NVME_CHECK_SIZE(union nvme_feat_temperature_threshold, 4);
NVME_CHECK_SIZE(union nvme_feat_number_of_queues, 4);
NVME_CHECK_SIZE(union nvme_feat_volatile_write_cache, 4);
NVME_CHECK_SIZE(union nvme_feat_async_event_configuration, 4);
NVME_CHECK_SIZE(union nvme_format_cdw10, 4);
NVME_CHECK_SIZE(union nvme_fw_commit_cdw10, 4);
NVME_CHECK_SIZE(struct nvme_dsm_range, 16);
NVME_CHECK_SIZE(union nvme_async_event_completion, 4);

NVME_CHECK_SIZE(struct nvme_error_information_entry, 64);
NVME_CHECK_OFFSET(struct nvme_error_information_entry, lba, 16);
NVME_CHECK_OFFSET(struct nvme_error_information_entry, command_specific, 32);
NVME_CHECK_SIZE(struct nvme_health_information_page, 512);
NVME_CHECK_OFFSET(struct nvme_health_information_page, temperature, 1);
NVME_CHECK_OFFSET(struct nvme_health_information_page, data_units_read, 32);
NVME_CHECK_OFFSET(struct nvme_health_information_page, num_error_info_log_entries, 176);
NVME_CHECK_OFFSET(struct nvme_health_information_page, warning_temp_time, 192);
NVME_CHECK_OFFSET(struct nvme_health_information_page, temp_sensor, 200);
NVME_CHECK_OFFSET(struct nvme_health_information_page, rsvd232, 232);
NVME_CHECK_SIZE(struct nvme_firmware_page, 512);
NVME_CHECK_OFFSET(struct nvme_firmware_page, revision, 8);

NVME_CHECK_SIZE(struct nvme_dir_identify_params, 4096);
NVME_CHECK_OFFSET(struct nvme_dir_identify_params, enabled, 32);
NVME_CHECK_SIZE(struct nvme_dir_streams_params, 32);
NVME_CHECK_OFFSET(struct nvme_dir_streams_params, nssc, 6);
NVME_CHECK_OFFSET(struct nvme_dir_streams_params, sws, 16);
NVME_CHECK_OFFSET(struct nvme_dir_streams_params, sgs, 20);
NVME_CHECK_OFFSET(struct nvme_dir_streams_params, nso, 24);
NVME_CHECK_SIZE(struct nvme_dir_streams_status, 2);
NVME_CHECK_SIZE(struct nvme_fdp_config_log, 16);
NVME_CHECK_SIZE(struct nvme_fdp_config_desc, 64);
NVME_CHECK_OFFSET(struct nvme_fdp_config_desc, runs, 16);
NVME_CHECK_OFFSET(struct nvme_fdp_config_desc, erutl, 24);
NVME_CHECK_SIZE(struct nvme_fdp_ruh_desc, 4);
NVME_CHECK_SIZE(struct nvme_fdp_ruhu_log, 8);
NVME_CHECK_SIZE(struct nvme_fdp_ruhu_desc, 8);
NVME_CHECK_SIZE(struct nvme_fdp_stats_log, 64);
NVME_CHECK_SIZE(struct nvme_fdp_events_log, 64);
NVME_CHECK_SIZE(struct nvme_fdp_event, 64);
NVME_CHECK_OFFSET(struct nvme_fdp_event, timestamp, 4);
NVME_CHECK_OFFSET(struct nvme_fdp_event, nsid, 12);
NVME_CHECK_OFFSET(struct nvme_fdp_event, rgid, 32);
NVME_CHECK_OFFSET(struct nvme_fdp_event, vs, 40);
NVME_CHECK_SIZE(struct nvme_fdp_ruh_status, 16);
NVME_CHECK_SIZE(struct nvme_fdp_ruh_status_desc, 32);
NVME_CHECK_SIZE(struct nvme_ana_page, 16);
NVME_CHECK_SIZE(struct nvme_ana_group_desc, 32);
NVME_CHECK_OFFSET(struct nvme_fdp_ruh_status_desc, ruamw, 8);

#ifdef __cplusplus
}
#endif

#endif /* NVPOLL_NVME_SPEC_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The options of every nvp subcommand, with nvme-cli 2.3's long names and letters (its
 * nvme.c OPT_ARGS tables), and where each value goes. A letter means what nvme-cli makes
 * it mean in that subcommand: -s is --sel, --save, --ses, --slot, --start-block, --slbs,
 * --lsp or --show-command. Options nvme-cli has and nvp leaves out are listed, with the
 * reason, in doc/man/nvp.1.md.
 */
#include <stddef.h>

#include "nvpoll/util.h"

#include "cli_opts.h"

#define LOG_CMDS (CMD_BIT(CLI_CMD_SMART_LOG) | CMD_BIT(CLI_CMD_ERROR_LOG) | CMD_BIT(CLI_CMD_FW_LOG))
#define DIR_CMDS (CMD_BIT(CLI_CMD_DIR_RECEIVE) | CMD_BIT(CLI_CMD_WAF))
#define FDP_LOG_CMDS                                                                              \
	(CMD_BIT(CLI_CMD_FDP_CONFIGS) | CMD_BIT(CLI_CMD_FDP_USAGE) | CMD_BIT(CLI_CMD_FDP_STATS) | \
	 CMD_BIT(CLI_CMD_FDP_EVENTS) | CMD_BIT(CLI_CMD_FDP_FEATURE))
#define FDP_NS_CMDS (CMD_BIT(CLI_CMD_FDP_STATUS) | CMD_BIT(CLI_CMD_FDP_UPDATE))
#define OUT_CMDS                                                                     \
	(CMD_BIT(CLI_CMD_LIST) | CMD_BIT(CLI_CMD_ID_CTRL) | CMD_BIT(CLI_CMD_ID_NS) | \
	 CMD_BIT(CLI_CMD_LIST_NS) | LOG_CMDS | CMD_BIT(CLI_CMD_GET_FEATURE) |        \
	 CMD_BIT(CLI_CMD_SHOW_REGS) | DIR_CMDS | FDP_LOG_CMDS | FDP_NS_CMDS)
#define FEAT_CMDS (CMD_BIT(CLI_CMD_GET_FEATURE) | CMD_BIT(CLI_CMD_SET_FEATURE))
#define RWC_CMDS (CMD_BIT(CLI_CMD_READ) | CMD_BIT(CLI_CMD_WRITE) | CMD_BIT(CLI_CMD_COMPARE))
#define LBA_CMDS (RWC_CMDS | CMD_BIT(CLI_CMD_WRITE_ZEROES))
#define PT_CMDS (CMD_BIT(CLI_CMD_IO_PASSTHRU) | CMD_BIT(CLI_CMD_ADMIN_PASSTHRU))
#define ALL_CMDS (~UINT64_C(0))

#define DEFAULT_NS "(default: the first active one)"

const struct opt_def cli_opt_defs[] = {
	{ "output-format", 'o', true, OPT_OUTPUT, OUT_CMDS, "normal|json|binary (default normal)" },
	{ "human-readable", 'H', false, OPT_HUMAN,
	  CMD_BIT(CLI_CMD_ID_CTRL) | CMD_BIT(CLI_CMD_ID_NS) | CMD_BIT(CLI_CMD_SMART_LOG) |
		  CMD_BIT(CLI_CMD_GET_FEATURE) | CMD_BIT(CLI_CMD_SHOW_REGS) |
		  CMD_BIT(CLI_CMD_DIR_RECEIVE),
	  "decode bitfields" },
	/* -n: one text per meaning */
	{ "namespace-id", 'n', true, OPT_NSID, CMD_BIT(CLI_CMD_ID_NS),
	  "namespace to identify " DEFAULT_NS },
	{ "namespace-id", 'n', true, OPT_NSID, CMD_BIT(CLI_CMD_SMART_LOG),
	  "namespace whose health log to read (default 0xffffffff: the whole controller)" },
	{ "namespace-id", 'n', true, OPT_NSID, CMD_BIT(CLI_CMD_GET_FEATURE),
	  "namespace of a per-namespace feature (default 0xffffffff)" },
	{ "namespace-id", 'n', true, OPT_NSID, CMD_BIT(CLI_CMD_SET_FEATURE),
	  "namespace of a per-namespace feature (default 0: the controller)" },
	{ "namespace-id", 'n', true, OPT_NSID, CMD_BIT(CLI_CMD_FORMAT),
	  "namespace to format " DEFAULT_NS "; 0xffffffff: every namespace" },
	{ "namespace-id", 'n', true, OPT_NSID, CMD_BIT(CLI_CMD_DIR_RECEIVE),
	  "namespace whose directives to read " DEFAULT_NS },
	{ "namespace-id", 'n', true, OPT_NSID, CMD_BIT(CLI_CMD_WAF),
	  "namespace of the FTL log (default 0xffffffff: all of them)" },
	{ "namespace-id", 'n', true, OPT_NSID, FDP_LOG_CMDS,
	  "without -e: the namespace whose endurance group to use " DEFAULT_NS },
	{ "namespace-id", 'n', true, OPT_NSID, FDP_NS_CMDS,
	  "namespace whose reclaim unit handles to use " DEFAULT_NS },
	{ "namespace-id", 'n', true, OPT_NSID, CMD_BIT(CLI_CMD_READ),
	  "namespace to read from " DEFAULT_NS },
	{ "namespace-id", 'n', true, OPT_NSID, CMD_BIT(CLI_CMD_WRITE),
	  "namespace to write to " DEFAULT_NS },
	{ "namespace-id", 'n', true, OPT_NSID, CMD_BIT(CLI_CMD_COMPARE),
	  "namespace to compare with " DEFAULT_NS },
	{ "namespace-id", 'n', true, OPT_NSID, CMD_BIT(CLI_CMD_WRITE_ZEROES),
	  "namespace whose blocks to zero " DEFAULT_NS },
	{ "namespace-id", 'n', true, OPT_NSID, CMD_BIT(CLI_CMD_DSM),
	  "namespace the ranges are in " DEFAULT_NS },
	{ "namespace-id", 'n', true, OPT_NSID, CMD_BIT(CLI_CMD_FLUSH),
	  "namespace to flush " DEFAULT_NS "; 0xffffffff: every namespace" },
	{ "namespace-id", 'n', true, OPT_NSID, CMD_BIT(CLI_CMD_GET_LOG),
	  "the command's NSID: the namespace the log page is about (default 0xffffffff)" },
	{ "namespace-id", 'n', true, OPT_PT_NSID, PT_CMDS,
	  "the command's NSID, dword 1, sent as given (default 0)" },
	{ "log-entries", 'e', true, OPT_LOG_ENTRIES, CMD_BIT(CLI_CMD_ERROR_LOG),
	  "entries to read (default: ELPE + 1 of id-ctrl)" },
	{ "feature-id", 'f', true, OPT_FID, FEAT_CMDS,
	  "feature id, 1..255 (set-feature: required; get-feature: default every feature)" },
	{ "sel", 's', true, OPT_SEL, CMD_BIT(CLI_CMD_GET_FEATURE),
	  "0 current, 1 default, 2 saved, 3 supported capabilities" },
	{ "cdw11", 'c', true, OPT_CDW11, CMD_BIT(CLI_CMD_GET_FEATURE), "command dword 11" },
	{ "value", 'v', true, OPT_VALUE, CMD_BIT(CLI_CMD_SET_FEATURE),
	  "new value (command dword 11, required)" },
	{ "cdw12", 'c', true, OPT_CDW12, CMD_BIT(CLI_CMD_SET_FEATURE), "command dword 12" },
	{ "save", 's', false, OPT_SAVE, CMD_BIT(CLI_CMD_SET_FEATURE),
	  "keep the value across power cycles" },
	{ "lbaf", 'l', true, OPT_LBAF, CMD_BIT(CLI_CMD_FORMAT),
	  "LBA format index, 0..15 (default: the namespace's current format)" },
	{ "ses", 's', true, OPT_SES, CMD_BIT(CLI_CMD_FORMAT),
	  "secure erase: 0 none, 1 user data, 2 cryptographic" },
	{ "pi", 'i', true, OPT_PI, CMD_BIT(CLI_CMD_FORMAT),
	  "protection information: 0 off, 1..3 type 1..3" },
	{ "pil", 'p', true, OPT_PIL, CMD_BIT(CLI_CMD_FORMAT),
	  "protection information in the first (1) or last (0) 8 bytes of metadata" },
	{ "ms", 'm', true, OPT_MSET, CMD_BIT(CLI_CMD_FORMAT),
	  "metadata: 1 extended LBA (interleaved with data), 0 a separate buffer" },
	{ "reset", 'r', false, OPT_RESET, CMD_BIT(CLI_CMD_FORMAT),
	  "reset the controller after a successful format" },
	{ "block-size", 'b', true, OPT_BLOCK_SIZE, CMD_BIT(CLI_CMD_FORMAT),
	  "instead of --lbaf: the LBA format with this data size and no metadata" },
	{ "timeout", 't', true, OPT_TIMEOUT, CMD_BIT(CLI_CMD_FORMAT),
	  "milliseconds to wait for the format (default 600000)" },
	{ "force", 0, false, OPT_FORCE, CMD_BIT(CLI_CMD_FORMAT), "do not ask for confirmation" },
	{ "fw", 'f', true, OPT_FW, CMD_BIT(CLI_CMD_FW_DOWNLOAD), "firmware image file (required)" },
	{ "xfer", 'x', true, OPT_XFER, CMD_BIT(CLI_CMD_FW_DOWNLOAD),
	  "bytes per download command, a multiple of 4096 (default: the controller's FWUG and "
	  "transfer limit)" },
	{ "offset", 'o', true, OPT_FW_OFFSET, CMD_BIT(CLI_CMD_FW_DOWNLOAD),
	  "starting dword offset: the image from this dword on goes to this offset (default 0)" },
	{ "slot", 's', true, OPT_SLOT, CMD_BIT(CLI_CMD_FW_COMMIT),
	  "firmware slot 0..7 (0: the controller chooses)" },
	{ "action", 'a', true, OPT_ACTION, CMD_BIT(CLI_CMD_FW_COMMIT),
	  "0 replace, 1 replace and activate at reset, 2 activate at reset, 3 activate now" },
	/* nvme-cli's -b: the raw structure, as -o binary */
	{ "raw-binary", 'b', false, OPT_RAW,
	  CMD_BIT(CLI_CMD_ID_CTRL) | CMD_BIT(CLI_CMD_ID_NS) | LOG_CMDS |
		  CMD_BIT(CLI_CMD_GET_FEATURE),
	  "output the raw structure (as -o binary)" },
	{ "verbose", 'v', false, OPT_VERBOSE, CMD_BIT(CLI_CMD_LIST),
	  "subsystems, controllers and namespaces (nvme-cli's detailed list)" },
	{ "vendor-specific", 'v', false, OPT_VENDOR, CMD_BIT(CLI_CMD_ID_CTRL),
	  "normal output: hex dump of the vendor specific bytes (vs[], 3072..4095)" },
	{ "dir-type", 'D', true, OPT_DIR_TYPE, CMD_BIT(CLI_CMD_DIR_RECEIVE),
	  "directive type: 0 identify (default), 1 streams" },
	{ "dir-oper", 'O', true, OPT_DIR_OPER, CMD_BIT(CLI_CMD_DIR_RECEIVE),
	  "operation: 1 return parameters (default); streams: 2 get status, 3 allocate" },
	{ "dir-spec", 'S', true, OPT_DIR_SPEC, CMD_BIT(CLI_CMD_DIR_RECEIVE),
	  "directive specific value (CDW11 31:16)" },
	{ "req-resource", 'r', true, OPT_NSR, CMD_BIT(CLI_CMD_DIR_RECEIVE),
	  "streams to allocate (streams, operation 3)" },
	{ "endgrp-id", 'e', true, OPT_ENDGID, FDP_LOG_CMDS,
	  "endurance group (default: the one of the namespace, -n or the first active)" },
	{ "pids", 'p', true, OPT_PIDS, CMD_BIT(CLI_CMD_FDP_UPDATE),
	  "placement identifiers to move to new reclaim units, comma separated (required)" },
	{ "enable", 'E', true, OPT_FDP_ENABLE, CMD_BIT(CLI_CMD_FDP_FEATURE),
	  "enable FDP with this configuration index (0..255)" },
	{ "disable", 'd', false, OPT_FDP_DISABLE, CMD_BIT(CLI_CMD_FDP_FEATURE), "disable FDP" },

	/* read, write, compare (nvme-cli's submit_io) and write-zeroes */
	{ "start-block", 's', true, OPT_SLBA, LBA_CMDS, "first logical block, 64-bit (default 0)" },
	{ "block-count", 'c', true, OPT_NLB, LBA_CMDS,
	  "number of blocks, zero based: 0 is one block (default 0)" },
	{ "data-size", 'z', true, OPT_DATA_SIZE, RWC_CMDS,
	  "bytes of data to move to or from the file (required); the buffer holds at least "
	  "the blocks" },
	{ "metadata-size", 'y', true, OPT_MD_SIZE, RWC_CMDS,
	  "bytes of separate metadata (metadata pointer) to move" },
	{ "ref-tag", 'r', true, OPT_REF_TAG, LBA_CMDS,
	  "reference tag of end-to-end protection information (32 bits)" },
	{ "data", 'd', true, OPT_DATA, CMD_BIT(CLI_CMD_READ),
	  "file to write the data to (default standard output)" },
	{ "data", 'd', true, OPT_DATA, CMD_BIT(CLI_CMD_WRITE) | CMD_BIT(CLI_CMD_COMPARE),
	  "file to take the data from (default standard input)" },
	{ "metadata", 'M', true, OPT_MD, RWC_CMDS,
	  "metadata file (read: written; write, compare: read; default standard output, input)" },
	{ "prinfo", 'p', true, OPT_PRINFO, LBA_CMDS,
	  "protection information action and checks: PRACT (8) | guard (4) | app tag (2) | "
	  "ref tag (1)" },
	{ "app-tag-mask", 'm', true, OPT_APPTAG_MASK, LBA_CMDS,
	  "application tag mask of end-to-end protection information" },
	{ "app-tag", 'a', true, OPT_APPTAG, LBA_CMDS,
	  "application tag of end-to-end protection information" },
	{ "limited-retry", 'l', false, OPT_LR, LBA_CMDS, "limit media access attempts" },
	{ "force-unit-access", 'f', false, OPT_FUA, LBA_CMDS,
	  "the data reaches non-volatile media before the command completes" },
	{ "storage-tag-check", 'C', false, OPT_STC, LBA_CMDS,
	  "check the storage tag (STC, CDW12 bit 24)" },
	{ "deac", 'd', false, OPT_DEAC, CMD_BIT(CLI_CMD_WRITE_ZEROES),
	  "deallocate the blocks (DEAC)" },
	{ "dir-type", 'T', true, OPT_IO_DTYPE, RWC_CMDS,
	  "directive type, 0..15 (write: 1 streams, 2 data placement)" },
	{ "dir-spec", 'S', true, OPT_IO_DSPEC, RWC_CMDS,
	  "directive specific value (stream or placement id, CDW13 31:16)" },
	{ "dsm", 'D', true, OPT_IO_DSM, RWC_CMDS, "dataset management attributes, CDW13 bits 7:0" },
	{ "show-command", 'v', false, OPT_SHOW, RWC_CMDS, "print the command before sending it" },
	{ "dry-run", 'w', false, OPT_DRY_RUN, RWC_CMDS, "print the command, do not send it" },
	{ "latency", 't', false, OPT_LATENCY, RWC_CMDS, "print the command's latency" },
	{ "force", 0, false, OPT_FORCE, RWC_CMDS,
	  "accepted for nvme-cli's scripts: nvp always owns the controller alone" },

	/* dsm */
	{ "ctx-attrs", 'a', true, OPT_CTX_ATTRS, CMD_BIT(CLI_CMD_DSM),
	  "context attributes of each range, comma separated" },
	{ "blocks", 'b', true, OPT_BLOCKS, CMD_BIT(CLI_CMD_DSM),
	  "number of blocks of each range (not zero based), comma separated" },
	{ "slbs", 's', true, OPT_SLBS, CMD_BIT(CLI_CMD_DSM),
	  "starting block of each range, comma separated" },
	{ "ad", 'd', false, OPT_AD, CMD_BIT(CLI_CMD_DSM), "attribute deallocate" },
	{ "idw", 'w', false, OPT_IDW, CMD_BIT(CLI_CMD_DSM),
	  "attribute integral dataset for write" },
	{ "idr", 'r', false, OPT_IDR, CMD_BIT(CLI_CMD_DSM), "attribute integral dataset for read" },
	{ "cdw11", 'c', true, OPT_DSM_CDW11, CMD_BIT(CLI_CMD_DSM),
	  "all of command dword 11, instead of -d -w -r" },

	/* get-log */
	{ "log-id", 'i', true, OPT_LOG_ID, CMD_BIT(CLI_CMD_GET_LOG),
	  "log page identifier, 0..255 (required, or --aen)" },
	{ "log-len", 'l', true, OPT_LOG_LEN, CMD_BIT(CLI_CMD_GET_LOG),
	  "bytes to read, a multiple of 4 (required)" },
	{ "aen", 'a', true, OPT_AEN, CMD_BIT(CLI_CMD_GET_LOG),
	  "an asynchronous event's result: its log page id (bits 23:16), 4096 bytes" },
	{ "lpo", 'o', true, OPT_LPO, CMD_BIT(CLI_CMD_GET_LOG), "log page offset, in bytes" },
	{ "lsp", 's', true, OPT_LSP, CMD_BIT(CLI_CMD_GET_LOG), "log specific field, 0..127" },
	{ "lsi", 'S', true, OPT_LSI, CMD_BIT(CLI_CMD_GET_LOG), "log specific identifier" },
	{ "rae", 'r', false, OPT_RAE, CMD_BIT(CLI_CMD_GET_LOG), "retain asynchronous event" },
	{ "uuid-index", 'U', true, OPT_UUIDX, CMD_BIT(CLI_CMD_GET_LOG), "UUID index, 0..127" },
	{ "csi", 'y', true, OPT_CSI, CMD_BIT(CLI_CMD_GET_LOG),
	  "command set identifier (default 0: NVM)" },
	{ "ot", 'O', false, OPT_OT, CMD_BIT(CLI_CMD_GET_LOG),
	  "offset type: --lpo is an index into the page's list, not a byte offset" },
	{ "raw-binary", 'b', false, OPT_RAW, CMD_BIT(CLI_CMD_GET_LOG),
	  "the log page's bytes on standard output, not a hex dump" },

	/* io-passthru, admin-passthru */
	{ "opcode", 'o', true, OPT_OPCODE, PT_CMDS, "opcode (required)" },
	{ "flags", 'f', true, OPT_PT_FLAGS, PT_CMDS,
	  "command flags, dword 0 bits 15:8 (the driver sets PSDT)" },
	{ "prefill", 'p', true, OPT_PREFILL, PT_CMDS, "fill the buffers with this byte first" },
	{ "rsvd", 'R', true, OPT_RSVD, PT_CMDS,
	  "value of dword 0 bits 31:16; shown, not sent: the driver puts the command id there" },
	{ "data-len", 'l', true, OPT_DATA_LEN, PT_CMDS, "bytes of data" },
	{ "metadata-len", 'm', true, OPT_MD_LEN, PT_CMDS,
	  "bytes of metadata, a buffer at the metadata pointer" },
	{ "timeout", 't', true, OPT_TIMEOUT, CMD_BIT(CLI_CMD_IO_PASSTHRU),
	  "milliseconds to wait; then the driver aborts the command, resetting the controller "
	  "if need be (default 30000)" },
	{ "timeout", 't', true, OPT_TIMEOUT, CMD_BIT(CLI_CMD_ADMIN_PASSTHRU),
	  "milliseconds to wait; then the controller is reset, which ends the command "
	  "(default 60000)" },
	{ "cdw2", '2', true, OPT_CDW2, PT_CMDS, "command dword 2" },
	{ "cdw3", '3', true, OPT_CDW3, PT_CMDS, "command dword 3" },
	{ "cdw10", '4', true, OPT_CDW10, PT_CMDS, "command dword 10" },
	{ "cdw11", '5', true, OPT_CDW11_PT, PT_CMDS, "command dword 11" },
	{ "cdw12", '6', true, OPT_CDW12_PT, PT_CMDS, "command dword 12" },
	{ "cdw13", '7', true, OPT_CDW13, PT_CMDS, "command dword 13" },
	{ "cdw14", '8', true, OPT_CDW14, PT_CMDS, "command dword 14" },
	{ "cdw15", '9', true, OPT_CDW15, PT_CMDS, "command dword 15" },
	{ "input-file", 'i', true, OPT_INPUT_FILE, PT_CMDS,
	  "data file: read from (--write) or written to (--read, instead of the hex dump)" },
	{ "metadata", 'M', true, OPT_MD_FILE, PT_CMDS, "metadata file, as --input-file" },
	{ "raw-binary", 'b', false, OPT_RAW, PT_CMDS,
	  "the data read on standard output, not a hex dump" },
	{ "show-command", 's', false, OPT_PT_SHOW, PT_CMDS, "print the command before sending it" },
	{ "dry-run", 'd', false, OPT_PT_DRY_RUN, PT_CMDS, "print the command, do not send it" },
	{ "read", 'r', false, OPT_PT_READ, PT_CMDS,
	  "the controller sends data (also implied by opcode bit 1)" },
	{ "write", 'w', false, OPT_PT_WRITE, PT_CMDS,
	  "the controller receives data (also implied by opcode bit 0)" },
	{ "latency", 'T', false, OPT_PT_LATENCY, PT_CMDS, "print the command's latency" },

	{ "help", 'h', false, OPT_HELP, ALL_CMDS, "this help" },
};

const size_t cli_opt_count = NVP_COUNTOF(cli_opt_defs);

#define F(field) offsetof(struct cli_args, field), sizeof(((struct cli_args *)0)->field)
#define NUM(field, lo, hi)                            \
	{                                             \
		OPT_K_NUM, F(field), lo, hi, 0, false \
	}
#define NUMSET(field, lo, hi, flag)                                                 \
	{                                                                           \
		OPT_K_NUM, F(field), lo, hi, offsetof(struct cli_args, flag), false \
	}
#define SIZE(field, lo, hi)                          \
	{                                            \
		OPT_K_NUM, F(field), lo, hi, 0, true \
	}
#define FLAG(field)                                  \
	{                                            \
		OPT_K_FLAG, F(field), 0, 0, 0, false \
	}
#define STR(field)                                  \
	{                                           \
		OPT_K_STR, F(field), 0, 0, 0, false \
	}

const struct opt_store cli_opt_store[OPT_COUNT] = {
	[OPT_OUTPUT] = { OPT_K_OUTPUT, 0, 0, 0, 0, 0, false },
	[OPT_RAW] = { OPT_K_RAW, 0, 0, 0, 0, 0, false },
	[OPT_HUMAN] = FLAG(human),
	[OPT_NSID] = NUMSET(nsid, 1, UINT32_MAX, nsid_set),
	[OPT_PT_NSID] = NUMSET(nsid, 0, UINT32_MAX, nsid_set),
	[OPT_LOG_ENTRIES] = NUM(log_entries, 1, 256),
	[OPT_FID] = NUMSET(fid, 1, 255, fid_set),
	[OPT_SEL] = NUM(sel, 0, 3),
	[OPT_CDW11] = NUM(cdw11, 0, UINT32_MAX),
	[OPT_VALUE] = NUMSET(value, 0, UINT32_MAX, value_set),
	[OPT_CDW12] = NUM(cdw12, 0, UINT32_MAX),
	[OPT_SAVE] = FLAG(save),
	[OPT_LBAF] = NUMSET(lbaf, 0, 15, lbaf_set),
	[OPT_SES] = NUM(ses, 0, 2),
	[OPT_PI] = NUM(pi, 0, 3),
	[OPT_PIL] = NUM(pil, 0, 1),
	[OPT_MSET] = NUM(mset, 0, 1),
	[OPT_RESET] = FLAG(reset_after),
	[OPT_BLOCK_SIZE] = SIZE(block_size, 1, UINT32_MAX),
	[OPT_TIMEOUT] = NUM(timeout_ms, 1, UINT32_MAX),
	[OPT_FORCE] = FLAG(force),
	[OPT_FW] = STR(fw_file),
	[OPT_XFER] = NUMSET(xfer, 4096, UINT32_MAX, xfer_set),
	[OPT_FW_OFFSET] = NUM(fw_offset, 0, UINT32_MAX / 4),
	[OPT_SLOT] = NUMSET(slot, 0, 7, slot_set),
	[OPT_ACTION] = NUMSET(action, 0, 3, action_set),
	[OPT_VERBOSE] = FLAG(verbose),
	[OPT_VENDOR] = FLAG(vendor_specific),
	[OPT_HELP] = FLAG(help),
	[OPT_DIR_TYPE] = NUM(dir_type, 0, 1),
	[OPT_DIR_OPER] = NUM(dir_oper, 1, 3),
	[OPT_DIR_SPEC] = NUM(dir_spec, 0, 65535),
	[OPT_NSR] = NUM(nsr, 0, 65535),
	[OPT_ENDGID] = NUMSET(endgid, 1, 65535, endgid_set),
	[OPT_PIDS] = STR(pids),
	[OPT_FDP_ENABLE] = NUMSET(fdp_enable, 0, 255, fdp_enable_set),
	[OPT_FDP_DISABLE] = FLAG(fdp_disable),
	[OPT_SLBA] = SIZE(io.slba, 0, UINT64_MAX),
	[OPT_NLB] = NUM(io.nlb, 0, UINT16_MAX),
	[OPT_DATA_SIZE] = SIZE(io.data_size, 1, UINT32_MAX),
	[OPT_MD_SIZE] = SIZE(io.md_size, 0, UINT32_MAX),
	[OPT_REF_TAG] = SIZE(io.ref_tag, 0, UINT32_MAX),
	[OPT_DATA] = STR(io.data),
	[OPT_MD] = STR(io.md),
	[OPT_PRINFO] = NUM(io.prinfo, 0, 15),
	[OPT_APPTAG_MASK] = NUM(io.apptag_mask, 0, UINT16_MAX),
	[OPT_APPTAG] = NUM(io.apptag, 0, UINT16_MAX),
	[OPT_LR] = FLAG(io.limited_retry),
	[OPT_FUA] = FLAG(io.fua),
	[OPT_STC] = FLAG(io.stc),
	[OPT_DEAC] = FLAG(io.deac),
	[OPT_IO_DTYPE] = NUM(io.dtype, 0, 15),
	[OPT_IO_DSPEC] = NUM(io.dspec, 0, UINT16_MAX),
	[OPT_IO_DSM] = NUM(io.dsm, 0, UINT8_MAX),
	[OPT_SHOW] = FLAG(io.show),
	[OPT_DRY_RUN] = FLAG(io.dry_run),
	[OPT_LATENCY] = FLAG(io.latency),
	[OPT_SLBS] = STR(io.slbs),
	[OPT_BLOCKS] = STR(io.blocks),
	[OPT_CTX_ATTRS] = STR(io.ctx_attrs),
	[OPT_AD] = FLAG(io.ad),
	[OPT_IDW] = FLAG(io.idw),
	[OPT_IDR] = FLAG(io.idr),
	[OPT_DSM_CDW11] = NUMSET(cdw11, 0, UINT32_MAX, cdw11_set),
	[OPT_LOG_ID] = NUMSET(log.lid, 0, UINT8_MAX, log.lid_set),
	[OPT_LOG_LEN] = NUM(log.len, 1, UINT32_MAX),
	[OPT_AEN] = NUM(log.aen, 0, UINT32_MAX),
	[OPT_LPO] = SIZE(log.lpo, 0, UINT64_MAX),
	[OPT_LSP] = NUM(log.lsp, 0, 127),
	[OPT_LSI] = NUM(log.lsi, 0, UINT16_MAX),
	[OPT_RAE] = FLAG(log.rae),
	[OPT_UUIDX] = NUM(log.uuidx, 0, 127),
	[OPT_CSI] = NUM(log.csi, 0, UINT8_MAX),
	[OPT_OT] = FLAG(log.ot),
	[OPT_OPCODE] = NUMSET(pt.opcode, 0, UINT8_MAX, pt.opcode_set),
	[OPT_PT_FLAGS] = NUM(pt.flags, 0, UINT8_MAX),
	[OPT_PREFILL] = NUM(pt.prefill, 0, UINT8_MAX),
	[OPT_RSVD] = NUM(pt.rsvd, 0, UINT16_MAX),
	[OPT_DATA_LEN] = NUM(pt.data_len, 0, UINT32_MAX),
	[OPT_MD_LEN] = NUM(pt.md_len, 0, UINT32_MAX),
	[OPT_CDW2] = NUM(pt.cdw[2], 0, UINT32_MAX),
	[OPT_CDW3] = NUM(pt.cdw[3], 0, UINT32_MAX),
	[OPT_CDW10] = NUM(pt.cdw[10], 0, UINT32_MAX),
	[OPT_CDW11_PT] = NUM(pt.cdw[11], 0, UINT32_MAX),
	[OPT_CDW12_PT] = NUM(pt.cdw[12], 0, UINT32_MAX),
	[OPT_CDW13] = NUM(pt.cdw[13], 0, UINT32_MAX),
	[OPT_CDW14] = NUM(pt.cdw[14], 0, UINT32_MAX),
	[OPT_CDW15] = NUM(pt.cdw[15], 0, UINT32_MAX),
	[OPT_INPUT_FILE] = STR(pt.input_file),
	[OPT_MD_FILE] = STR(pt.md_file),
	[OPT_PT_SHOW] = FLAG(pt.show),
	[OPT_PT_DRY_RUN] = FLAG(pt.dry_run),
	[OPT_PT_READ] = FLAG(pt.read),
	[OPT_PT_WRITE] = FLAG(pt.write),
	[OPT_PT_LATENCY] = FLAG(pt.latency),
};

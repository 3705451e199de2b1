/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp: an nvme-cli style command line tool over the nvpoll driver. Internal header
 * shared by the files of app/cli (and by its unit tests, which #include the .c files).
 *
 *   cli_args.c    command line -> struct cli_args (no I/O, no device: unit tested)
 *   cli_json.c    NVMe data structures -> json-c objects with nvme-cli's key names
 *   cli_print.c   the "normal" (text) output, -H decoding of bitfields
 *   cli_dev.c     device argument -> transport ID, attach/detach, list probing
 *   cli_opts.c    the option table: nvme-cli's names, letters and ranges per subcommand
 *   cli_cmds.c    one function per subcommand (admin commands)
 *   cli_io.c      read, write, compare, write-zeroes, dsm, flush: NVM commands encoded as
 *                 nvme-cli 2.3 (through libnvme) encodes them, on a qpair of their own
 *   cli_passthru.c  io-passthru, admin-passthru, get-log, and nvme-cli's hex dump
 *   cli_list.c    list: probe every controller, one row per namespace (-v: the tree)
 *   cli_serve.c   serve: a controller over NVMe/TCP (../common/nvme_tcp_tgt.c)
 *   nvp.c         main: parse every command of a chain, then run them
 */
#ifndef NVP_CLI_H
#define NVP_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "nvpoll/nvme.h"

/* NVP_VERSION_STRING: ./configure's NVP_VERSION, the one place the version is written. */
#include "nvp_config.h"

/* Exit statuses, as nvme-cli: 0 success, 1 the device or the system said no, 2 usage. */
#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2

/* A lone argument with this text separates commands run in one invocation (see usage). */
#define CLI_CHAIN_SEP "+"

enum cli_cmd_id {
	CLI_CMD_LIST = 0,
	CLI_CMD_ID_CTRL,
	CLI_CMD_ID_NS,
	CLI_CMD_LIST_NS,
	CLI_CMD_SMART_LOG,
	CLI_CMD_ERROR_LOG,
	CLI_CMD_FW_LOG,
	CLI_CMD_GET_FEATURE,
	CLI_CMD_SET_FEATURE,
	CLI_CMD_FORMAT,
	CLI_CMD_FW_DOWNLOAD,
	CLI_CMD_FW_COMMIT,
	CLI_CMD_RESET,
	CLI_CMD_SHOW_REGS,
	CLI_CMD_HELP,
	CLI_CMD_VERSION,
	CLI_CMD_DIR_RECEIVE, /* cli_dir.c */
	CLI_CMD_WAF,
	CLI_CMD_DISCOVER,    /* cli_discover.c */
	CLI_CMD_FDP_CONFIGS, /* cli_fdp.c */
	CLI_CMD_FDP_USAGE,
	CLI_CMD_FDP_STATS,
	CLI_CMD_FDP_EVENTS,
	CLI_CMD_FDP_STATUS,
	CLI_CMD_FDP_UPDATE,
	CLI_CMD_FDP_FEATURE,
	CLI_CMD_READ, /* cli_io.c */
	CLI_CMD_WRITE,
	CLI_CMD_COMPARE,
	CLI_CMD_WRITE_ZEROES,
	CLI_CMD_DSM,
	CLI_CMD_FLUSH,
	CLI_CMD_GET_LOG, /* cli_passthru.c */
	CLI_CMD_IO_PASSTHRU,
	CLI_CMD_ADMIN_PASSTHRU,
	CLI_CMD_COUNT,
};

enum cli_output {
	CLI_OUT_NORMAL = 0,
	CLI_OUT_JSON,
	CLI_OUT_BINARY,
};

/*
 * read, write, compare, write-zeroes, dsm: nvme-cli 2.3's submit_io(), write_zeroes() and
 * dsm() options. Lists (dsm) stay strings here; they are checked at parse time.
 */
struct cli_io_args {
	uint64_t slba;      /**< -s --start-block */
	uint16_t nlb;       /**< -c --block-count, zero based */
	uint64_t data_size; /**< -z --data-size (required by read/write/compare) */
	uint64_t md_size;   /**< -y --metadata-size */
	uint32_t ref_tag;   /**< -r --ref-tag (32 bits: 16-bit guard protection information) */
	const char *data;   /**< -d --data FILE (default stdin/stdout) */
	const char *md;     /**< -M --metadata FILE */
	uint8_t prinfo;     /**< -p --prinfo: PRACT and PRCHK, CDW12 bits 29:26 */
	uint16_t apptag_mask;
	uint16_t apptag;
	bool limited_retry;
	bool fua;
	bool stc;      /**< -C --storage-tag-check */
	bool deac;     /**< write-zeroes -d --deac */
	uint8_t dtype; /**< -T --dir-type */
	uint16_t dspec;
	uint8_t dsm;           /**< -D --dsm: CDW13 bits 7:0 */
	bool show;             /**< -v --show-command */
	bool dry_run;          /**< -w --dry-run */
	bool latency;          /**< -t --latency */
	const char *slbs;      /**< dsm -s --slbs LIST */
	const char *blocks;    /**< dsm -b --blocks LIST */
	const char *ctx_attrs; /**< dsm -a --ctx-attrs LIST */
	bool ad, idw, idr;     /**< dsm attributes (CDW11 bits 2, 1, 0) */
};

/* get-log: nvme-cli 2.3's get_log() options. */
struct cli_log_args {
	bool lid_set;
	uint8_t lid;   /**< -i --log-id */
	uint32_t len;  /**< -l --log-len, bytes (a multiple of 4) */
	uint32_t aen;  /**< -a --aen: log id from an AER result, 4096 bytes */
	uint64_t lpo;  /**< -o --lpo */
	uint8_t lsp;   /**< -s --lsp */
	uint16_t lsi;  /**< -S --lsi */
	bool rae;      /**< -r --rae */
	uint8_t uuidx; /**< -U --uuid-index */
	uint8_t csi;   /**< -y --csi */
	bool ot;       /**< -O --ot */
};

/* io-passthru, admin-passthru: nvme-cli 2.3's passthru() options. */
struct cli_pt_args {
	bool opcode_set;
	uint8_t opcode;
	uint8_t flags;
	uint8_t prefill;
	uint16_t rsvd;
	uint32_t data_len;
	uint32_t md_len;
	uint32_t cdw[16];       /**< 2, 3 and 10..15 are set by --cdwN */
	const char *input_file; /**< -i: data in (write) or out (read) */
	const char *md_file;    /**< -M */
	bool show;
	bool dry_run;
	bool read;
	bool write;
	bool latency;
};

/* One parsed command. Pointers point into argv. */
struct cli_args {
	enum cli_cmd_id cmd;
	const char *device; /**< device argument, NULL if none was given */
	enum cli_output output;
	bool human;    /**< -H */
	bool verbose;  /**< list -v */
	bool help;     /**< CMD --help: print the command's usage and exit 0 */
	bool nsid_set; /**< -n given */
	uint32_t nsid;
	uint32_t log_entries; /**< error-log -e; 0 = ELPE + 1 */
	bool fid_set;
	uint8_t fid;
	uint8_t sel;
	uint32_t cdw11;
	bool value_set;
	uint32_t value; /**< set-feature -v (CDW11) */
	uint32_t cdw12;
	bool save;
	uint8_t lbaf;
	uint8_t ses;
	bool force;
	const char *fw_file;
	bool slot_set;
	uint8_t slot;
	bool action_set;
	uint8_t action;
	uint8_t dir_type; /**< dir-receive -D */
	uint8_t dir_oper; /**< dir-receive -O */
	uint32_t dir_spec;
	uint32_t nsr;               /**< dir-receive -r: streams to allocate */
	bool endgid_set;            /**< fdp -e given */
	uint32_t endgid;            /**< fdp -e: endurance group */
	const char *pids;           /**< fdp update -p: "1,2,3" */
	bool fdp_enable_set;        /**< fdp feature -E given */
	uint8_t fdp_enable;         /**< fdp feature -E: configuration to enable */
	bool fdp_disable;           /**< fdp feature -d */
	enum cli_cmd_id help_topic; /**< "help CMD"; CLI_CMD_COUNT = general help */
	bool help_emu;              /**< "help emu": the software controller's options */
	bool vendor_specific;       /**< id-ctrl -v: hex dump of the vendor specific area */
	uint32_t timeout_ms;        /**< format, *-passthru -t (0: the default) */
	bool lbaf_set;              /**< format -l given (else the current format, or -b) */
	uint8_t pi;                 /**< format -i */
	uint8_t pil;                /**< format -p */
	uint8_t mset;               /**< format -m */
	bool reset_after;           /**< format -r */
	uint64_t block_size;        /**< format -b: the LBA format with this data size */
	bool xfer_set;              /**< fw-download -x given */
	uint32_t xfer;              /**< fw-download -x: bytes per command */
	uint32_t fw_offset;         /**< fw-download -o: starting dword offset */
	bool cdw11_set;             /**< dsm -c given */
	struct cli_io_args io;
	struct cli_log_args log;
	struct cli_pt_args pt;
};

/* ---- cli_args.c ---- */

/** Name of a subcommand ("id-ctrl"). */
const char *cli_cmd_name(enum cli_cmd_id cmd);
/** Look a subcommand up by name. \return its id or CLI_CMD_COUNT. */
enum cli_cmd_id cli_cmd_lookup(const char *name);
/** True if the subcommand needs a device argument. */
bool cli_cmd_needs_device(enum cli_cmd_id cmd);

/**
 * Parse one command: argv[0] is the subcommand, the rest its options and device.
 * \return 0, or -EINVAL with a message for people in @err.
 */
int cli_args_parse(int argc, char **argv, struct cli_args *args, char *err, size_t errlen);

/** Most ranges of one dsm command (NR is 8 bits, zero based). */
#define CLI_DSM_MAX_RANGES 256u

/**
 * A comma separated list of numbers, each 0..@max ("1,0x10,3"), into @vals (at most
 * @nmax). \return the count (>= 1) or -EINVAL.
 */
int cli_parse_list(const char *str, uint64_t max, uint64_t *vals, uint32_t nmax);

/** fdp update -p: parse "1,2,0x3" into @pids (at most @max). \return the count or -EINVAL. */
int cli_fdp_parse_pids(const char *str, uint16_t *pids, uint32_t max);

/** Parse "normal", "json", "binary". \return 0 or -EINVAL. */
int cli_output_parse(const char *str, enum cli_output *out);

/** General usage (@cmd == CLI_CMD_COUNT) or one command's usage, to @f. */
void cli_usage(FILE *f, enum cli_cmd_id cmd);

/* ---- cli_json.c: builders return a new object (json_object_put() it) or NULL ---- */

struct cli_list_entry {
	uint32_t nsid;
	const char *device_path; /**< "<address>/ns<nsid>" */
	const char *ctrl_name;   /**< "nvp<N>", N counting controllers in list order */
	const char *address;     /**< PCI address or transport ID */
	const char *transport;   /**< "pcie", "emu" or "tcp" */
	const struct nvme_ctrlr_data *cdata;
	const struct nvme_ns_data *nsdata;
	const char *ana_state; /**< the namespace's ANA state through this controller, or NULL
				* (no ANA reporting) */
};

struct json_object *cli_json_id_ctrl(const struct nvme_ctrlr_data *cd);
struct json_object *cli_json_id_ns(const struct nvme_ns_data *nd);
struct json_object *cli_json_smart_log(const struct nvme_health_information_page *sl);
struct json_object *cli_json_error_log(const struct nvme_error_information_entry *entries,
				       uint32_t count);
struct json_object *cli_json_fw_log(const struct nvme_firmware_page *fw, const char *devname);
/** list (simple) or list -v (@verbose: host / subsystem / controller tree). */
struct json_object *cli_json_list(const struct cli_list_entry *entries, uint32_t count,
				  bool verbose);
struct json_object *cli_json_list_ns(const uint32_t *nsids, uint32_t count);
struct json_object *cli_json_feature(uint8_t fid, uint32_t result);
struct json_object *cli_json_regs(union nvme_cap_register cap, union nvme_vs_register vs,
				  union nvme_csts_register csts);

/** A 16-byte identifier as a dashed UUID string (8-4-4-4-12). */
const char *cli_uuid_str(char *buf, size_t len, const uint8_t b[16]);
/** Copy a space-padded identify string without the padding into @buf. */
const char *cli_strfield(char *buf, size_t len, const char *field, size_t field_len);
/** A 128-bit little-endian counter as a decimal string (exact). */
const char *cli_u128_str(char *buf, size_t len, const uint64_t v[2]);
/*
 * The 128-bit counters of the SMART page (packed: read them with memcpy at the offset),
 * with nvme-cli's JSON key and the name used in normal output.
 */
struct cli_u128_field {
	const char *json_key;
	const char *text_key;
	size_t offset;
};
extern const struct cli_u128_field cli_smart_u128[10];

/** Print a json object to @f as nvme-cli does (pretty, then a newline). */
void cli_json_print(FILE *f, struct json_object *obj);

/* ---- cli_print.c: normal output ---- */

void cli_print_id_ctrl(FILE *f, const struct nvme_ctrlr_data *cd, bool human);
void cli_print_id_ns(FILE *f, const struct nvme_ns_data *nd, uint32_t nsid, bool human);
void cli_print_smart_log(FILE *f, const struct nvme_health_information_page *sl, uint32_t nsid,
			 const char *devname, bool human);
void cli_print_error_log(FILE *f, const struct nvme_error_information_entry *e, uint32_t count,
			 const char *devname);
void cli_print_fw_log(FILE *f, const struct nvme_firmware_page *fw, const char *devname);
void cli_print_feature(FILE *f, uint8_t fid, uint8_t sel, uint32_t result, bool human);
void cli_print_regs(FILE *f, union nvme_cap_register cap, union nvme_vs_register vs,
		    union nvme_csts_register csts, bool human);
/** Name of a feature id ("Volatile Write Cache"). */
const char *cli_feature_name(uint8_t fid);

/* ---- cli_dev.c ---- */

/**
 * Turn a device argument into a transport ID: a PCI address ("0000:01:00.0"), a
 * transport ID string ("trtype:PCIe traddr:…", "trtype:emu name:emu0 nn:2") or
 * "emu:OPTS" (a software controller with the emu options OPTS, commas or spaces).
 * \return 0, or -EINVAL with a message in @err.
 */
int cli_device_parse(const char *dev, struct nvp_nvme_transport_id *trid, char *err, size_t errlen);

/**
 * Initialise env once, quietly. @no_huge when only software controllers will be used
 * (they need no hugepages, so no hint about reserving them). \return 0 or -errno
 * (message printed).
 */
int cli_env_init(bool no_huge);

/** nvp bdev-list (cli_bdev.c): @argv[0] is "bdev-list". \return an exit status. */
int cli_bdev_list_main(int argc, char **argv);

/** nvp serve (cli_serve.c): @argv[0] is "serve". \return an exit status. */
int cli_serve_main(int argc, char **argv);

/**
 * Attach to @dev; @admin_timeout_ms > 0 raises the driver's admin command timeout (a
 * format's -t). \return 0, -EINVAL (usage; message printed) or -errno (printed).
 */
int cli_device_open(const char *dev, uint32_t admin_timeout_ms, struct nvp_nvme_ctrlr **ctrlr);

/** Print the failure of an admin command: the NVMe status for -EIO, else the errno. */
void cli_report_error(const char *what, int rc, const struct nvme_cpl *cpl);

/* ---- cli_list.c ---- */

/** list: @ctrlr given (a device argument), or every NVMe function env offers. */
int cli_cmd_list(const struct cli_args *args, struct nvp_nvme_ctrlr *ctrlr);

/* ---- cli_cmds.c ---- */

/**
 * Run one parsed command on @ctrlr (NULL for list/help/version, or list without device).
 * \return an exit status (CLI_EXIT_*).
 */
int cli_cmd_run(const struct cli_args *args, struct nvp_nvme_ctrlr *ctrlr);

/* ---- cli_fdp.c ---- */

/** The fdp-* commands ("nvp fdp configs" = "nvp fdp-configs"). \return an exit status. */
int cli_cmd_fdp(const struct cli_args *args, struct nvp_nvme_ctrlr *ctrlr);

/* ---- cli_dir.c ---- */

/** dir-receive: Directive Receive, decoded as nvme-cli does. \return an exit status. */
int cli_cmd_dir_receive(const struct cli_args *args, struct nvp_nvme_ctrlr *ctrlr);
/** waf: the software controller's FTL log page (C0h): write amplification. */
int cli_cmd_waf(const struct cli_args *args, struct nvp_nvme_ctrlr *ctrlr);

/* ---- cli_io.c ---- */

/** read, write, compare, write-zeroes, dsm, flush. \return an exit status. */
int cli_cmd_io(const struct cli_args *args, struct nvp_nvme_ctrlr *ctrlr);
/** CDW10..15 of an NVM command (read, write, compare, write zeroes) as libnvme's nvme_io(). */
void cli_io_encode(const struct cli_io_args *io, uint8_t opc, uint32_t nsid, struct nvme_cmd *cmd);
/** dsm's ranges from its lists into @r (CLI_DSM_MAX_RANGES). \return the count or -EINVAL. */
int cli_dsm_ranges(const struct cli_io_args *io, struct nvme_dsm_range *r);
/**
 * Send @cmd on an I/O qpair made for it (deadline @timeout_ms, 0 = the driver's) and wait.
 * @buf: DMA memory of @len bytes. \return 0, -EIO (status in *@cpl) or -errno; the time
 * from submission to completion in *@lat_us when not NULL.
 */
int cli_io_run(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, void *buf, uint32_t len,
	       uint32_t timeout_ms, struct nvme_cpl *cpl, uint64_t *lat_us);
/*
 * A command's data buffer, rounded up to whole pages: a controller writes the whole
 * transfer its command defines through PRP1 (Identify: 4096 bytes) even when the caller
 * asked for less, which must land in memory of this buffer (with nvme-cli it lands on the
 * heap, and glibc aborts).
 */
#define CLI_DMA_PAGE 4096u
size_t cli_dma_size(uint64_t len);
/** Microseconds of CLOCK_MONOTONIC. */
uint64_t cli_now_us(void);
/*
 * Data files as nvme-cli opens them: @path NULL is standard input (@input) or output; an
 * output file is created (0664) and not truncated. Errors are printed, naming @what.
 */
int cli_file_open(const char *what, const char *path, bool input);
void cli_file_close(int fd);
/** Up to @len bytes (less at end of file). \return the bytes read or -1. */
ssize_t cli_file_read(const char *what, const char *path, int fd, void *buf, size_t len);
/** All @len bytes. \return 0 or -1. */
int cli_file_write(const char *what, const char *path, int fd, const void *buf, size_t len);

/* ---- cli_passthru.c ---- */

/** get-log, io-passthru, admin-passthru. \return an exit status. */
int cli_cmd_passthru(const struct cli_args *args, struct nvp_nvme_ctrlr *ctrlr);
/** nvme-cli 2.3's hex dump (its d(buf, len, 16, 1)), quirks included. */
void cli_hexdump(FILE *f, const uint8_t *buf, size_t len);
/** Get Log Page as libnvme's nvme_get_log() builds it. */
void cli_log_encode(const struct cli_log_args *log, uint32_t nsid, struct nvme_cmd *cmd);
/** A passthru command from its options (dwords 0..3, 10..15). */
void cli_pt_encode(const struct cli_args *args, struct nvme_cmd *cmd);
/** nvme-cli's name of an opcode ("Get Log Page"), "Vendor Specific" if it has none. */
const char *cli_opcode_name(bool admin, uint8_t opc);

/* ---- cli_discover.c ---- */

/** discover: an NVMe-oF discovery controller's log page (no controller is attached). */
int cli_cmd_discover(const struct cli_args *args);

#endif /* NVP_CLI_H */

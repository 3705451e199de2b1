/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp: an nvme-cli style command line tool over the nvpoll driver. Internal header
 * shared by the files of app/cli (and by its unit tests, which #include the .c files).
 *
 *   cli_args.c    command line -> struct cli_args (no I/O, no device: unit tested)
 *   cli_json.c    NVMe data structures -> json-c objects with nvme-cli's key names
 *   cli_print.c   the "normal" (text) output, -H decoding of bitfields
 *   cli_dev.c     device argument -> transport ID, attach/detach, list probing
 *   cli_cmds.c    one function per subcommand
 *   cli_list.c    list: probe every controller, one row per namespace
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
	CLI_CMD_COUNT,
};

enum cli_output {
	CLI_OUT_NORMAL = 0,
	CLI_OUT_JSON,
	CLI_OUT_BINARY,
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
	const char *transport;   /**< "pcie" or "emu" */
	const struct nvme_ctrlr_data *cdata;
	const struct nvme_ns_data *nsdata;
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
void cli_print_list(FILE *f, const struct cli_list_entry *entries, uint32_t count);
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

/** Attach to @dev. \return 0, -EINVAL (usage; message printed) or -errno (printed). */
int cli_device_open(const char *dev, struct nvp_nvme_ctrlr **ctrlr);

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

/* ---- cli_discover.c ---- */

/** discover: an NVMe-oF discovery controller's log page (no controller is attached). */
int cli_cmd_discover(const struct cli_args *args);

#endif /* NVP_CLI_H */

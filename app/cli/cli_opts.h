/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The option table of nvp, shared by the parser (cli_args.c) and the table (cli_opts.c).
 *
 * One entry per option and meaning: an option whose help differs between subcommands
 * (what -n names for id-ns, for smart-log, for io-passthru) has one entry per group of
 * subcommands, with the same long name and letter. Where the value goes is said once per
 * option id (struct opt_store): a flag, a string, or a number with its range, so parsing
 * needs no code per option.
 */
#ifndef CLI_OPTS_H
#define CLI_OPTS_H

#include "nvp_cli.h"

#define CMD_BIT(c) (UINT64_C(1) << (c))

enum opt_id {
	OPT_OUTPUT,
	OPT_HUMAN,
	OPT_NSID,
	OPT_PT_NSID,
	OPT_LOG_ENTRIES,
	OPT_FID,
	OPT_SEL,
	OPT_CDW11,
	OPT_VALUE,
	OPT_CDW12,
	OPT_SAVE,
	OPT_LBAF,
	OPT_SES,
	OPT_PI,
	OPT_PIL,
	OPT_MSET,
	OPT_RESET,
	OPT_BLOCK_SIZE,
	OPT_TIMEOUT,
	OPT_FORCE,
	OPT_FW,
	OPT_XFER,
	OPT_FW_OFFSET,
	OPT_SLOT,
	OPT_ACTION,
	OPT_RAW,
	OPT_VERBOSE,
	OPT_VENDOR,
	OPT_HELP,
	OPT_DIR_TYPE,
	OPT_DIR_OPER,
	OPT_DIR_SPEC,
	OPT_NSR,
	OPT_ENDGID,
	OPT_PIDS,
	OPT_FDP_ENABLE,
	OPT_FDP_DISABLE,
	/* read, write, compare, write-zeroes */
	OPT_SLBA,
	OPT_NLB,
	OPT_DATA_SIZE,
	OPT_MD_SIZE,
	OPT_REF_TAG,
	OPT_DATA,
	OPT_MD,
	OPT_PRINFO,
	OPT_APPTAG_MASK,
	OPT_APPTAG,
	OPT_LR,
	OPT_FUA,
	OPT_STC,
	OPT_DEAC,
	OPT_IO_DTYPE,
	OPT_IO_DSPEC,
	OPT_IO_DSM,
	OPT_SHOW,
	OPT_DRY_RUN,
	OPT_LATENCY,
	/* dsm */
	OPT_SLBS,
	OPT_BLOCKS,
	OPT_CTX_ATTRS,
	OPT_AD,
	OPT_IDW,
	OPT_IDR,
	OPT_DSM_CDW11,
	/* get-log */
	OPT_LOG_ID,
	OPT_LOG_LEN,
	OPT_AEN,
	OPT_LPO,
	OPT_LSP,
	OPT_LSI,
	OPT_RAE,
	OPT_UUIDX,
	OPT_CSI,
	OPT_OT,
	/* io-passthru, admin-passthru */
	OPT_OPCODE,
	OPT_PT_FLAGS,
	OPT_PREFILL,
	OPT_RSVD,
	OPT_DATA_LEN,
	OPT_MD_LEN,
	OPT_CDW2,
	OPT_CDW3,
	OPT_CDW10,
	OPT_CDW11_PT,
	OPT_CDW12_PT,
	OPT_CDW13,
	OPT_CDW14,
	OPT_CDW15,
	OPT_INPUT_FILE,
	OPT_MD_FILE,
	OPT_PT_SHOW,
	OPT_PT_DRY_RUN,
	OPT_PT_READ,
	OPT_PT_WRITE,
	OPT_PT_LATENCY,
	OPT_COUNT,
};

struct opt_def {
	const char *lname;
	char sname; /* 0: long name only */
	bool has_arg;
	enum opt_id id;
	uint64_t cmds; /* CMD_BIT()s of the subcommands this entry serves */
	const char *help;
};

enum opt_kind {
	OPT_K_NUM = 0, /* a number within [min, max]; with .suffix "4k" style sizes too */
	OPT_K_FLAG,    /* a bool set to true */
	OPT_K_STR,     /* a const char * pointing into argv */
	OPT_K_OUTPUT,  /* -o normal|json|binary */
	OPT_K_RAW,     /* -b: binary output */
};

/* Where an option's value goes in struct cli_args. */
struct opt_store {
	enum opt_kind kind;
	size_t off;
	size_t size; /* numbers: 1, 2, 4 or 8 bytes */
	uint64_t min;
	uint64_t max;
	size_t set_off; /* numbers: a bool set when the option is given; 0 = none */
	bool suffix;    /* numbers: nvme-cli's OPT_SUFFIX ("4k", "1M") */
};

extern const struct opt_def cli_opt_defs[];
extern const size_t cli_opt_count;
extern const struct opt_store cli_opt_store[OPT_COUNT];

#endif /* CLI_OPTS_H */

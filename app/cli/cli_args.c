/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Command line parsing for nvp. Each subcommand accepts a subset of one option table,
 * with nvme-cli's long and short names. A short letter may mean different options in
 * different subcommands (-s is --sel, --save, --ses or --slot), as in nvme-cli.
 * No I/O happens here: everything a user can get wrong is caught before a device is
 * touched, and the caller turns -EINVAL into exit status 2.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include "nvpoll/util.h"

#include "nvp_cli.h"

#define CMD_BIT(c) (1u << (c))
#define LOG_CMDS (CMD_BIT(CLI_CMD_SMART_LOG) | CMD_BIT(CLI_CMD_ERROR_LOG) | CMD_BIT(CLI_CMD_FW_LOG))
#define OUT_CMDS                                                                     \
	(CMD_BIT(CLI_CMD_LIST) | CMD_BIT(CLI_CMD_ID_CTRL) | CMD_BIT(CLI_CMD_ID_NS) | \
	 CMD_BIT(CLI_CMD_LIST_NS) | LOG_CMDS | CMD_BIT(CLI_CMD_GET_FEATURE) |        \
	 CMD_BIT(CLI_CMD_SHOW_REGS) | DIR_CMDS | FDP_CMDS)
#define FEAT_CMDS (CMD_BIT(CLI_CMD_GET_FEATURE) | CMD_BIT(CLI_CMD_SET_FEATURE))
#define DIR_CMDS (CMD_BIT(CLI_CMD_DIR_RECEIVE) | CMD_BIT(CLI_CMD_WAF))
#define FDP_LOG_CMDS                                                                              \
	(CMD_BIT(CLI_CMD_FDP_CONFIGS) | CMD_BIT(CLI_CMD_FDP_USAGE) | CMD_BIT(CLI_CMD_FDP_STATS) | \
	 CMD_BIT(CLI_CMD_FDP_EVENTS) | CMD_BIT(CLI_CMD_FDP_FEATURE))
#define FDP_CMDS (FDP_LOG_CMDS | CMD_BIT(CLI_CMD_FDP_STATUS) | CMD_BIT(CLI_CMD_FDP_UPDATE))

enum opt_id {
	OPT_OUTPUT,
	OPT_HUMAN,
	OPT_NSID,
	OPT_LOG_ENTRIES,
	OPT_FID,
	OPT_SEL,
	OPT_CDW11,
	OPT_VALUE,
	OPT_CDW12,
	OPT_SAVE,
	OPT_LBAF,
	OPT_SES,
	OPT_FORCE,
	OPT_FW,
	OPT_SLOT,
	OPT_ACTION,
	OPT_RAW,
	OPT_VERBOSE,
	OPT_HELP,
	OPT_DIR_TYPE,
	OPT_DIR_OPER,
	OPT_DIR_SPEC,
	OPT_NSR,
	OPT_ENDGID,
	OPT_PIDS,
	OPT_FDP_ENABLE,
	OPT_FDP_DISABLE,
};

struct opt_def {
	const char *lname;
	char sname;
	bool has_arg;
	enum opt_id id;
	uint32_t cmds; /* CMD_BIT()s of the subcommands that accept it */
	const char *help;
};

static const struct opt_def g_opts[] = {
	{ "output-format", 'o', true, OPT_OUTPUT, OUT_CMDS, "normal|json|binary (default normal)" },
	{ "human-readable", 'H', false, OPT_HUMAN,
	  CMD_BIT(CLI_CMD_ID_CTRL) | CMD_BIT(CLI_CMD_ID_NS) | CMD_BIT(CLI_CMD_SMART_LOG) |
		  CMD_BIT(CLI_CMD_GET_FEATURE) | CMD_BIT(CLI_CMD_SHOW_REGS) |
		  CMD_BIT(CLI_CMD_DIR_RECEIVE),
	  "decode bitfields" },
	{ "namespace-id", 'n', true, OPT_NSID,
	  CMD_BIT(CLI_CMD_ID_NS) | CMD_BIT(CLI_CMD_SMART_LOG) | FEAT_CMDS |
		  CMD_BIT(CLI_CMD_FORMAT) | DIR_CMDS | FDP_CMDS,
	  "namespace id (default: the first active one; smart-log, get-feature, waf: 0xffffffff)" },
	{ "log-entries", 'e', true, OPT_LOG_ENTRIES, CMD_BIT(CLI_CMD_ERROR_LOG),
	  "entries to read (default: ELPE + 1 of id-ctrl)" },
	{ "feature-id", 'f', true, OPT_FID, FEAT_CMDS,
	  "feature id, 1..255 (set-feature: required; get-feature: default every feature)" },
	{ "sel", 's', true, OPT_SEL, CMD_BIT(CLI_CMD_GET_FEATURE),
	  "0 current, 1 default, 2 saved, 3 supported capabilities" },
	{ "cdw11", 'c', true, OPT_CDW11, CMD_BIT(CLI_CMD_GET_FEATURE), "command dword 11" },
	{ "value", 'v', true, OPT_VALUE, CMD_BIT(CLI_CMD_SET_FEATURE),
	  "new value (command dword 11, required)" },
	{ "cdw12", 0, true, OPT_CDW12, CMD_BIT(CLI_CMD_SET_FEATURE), "command dword 12" },
	{ "save", 's', false, OPT_SAVE, CMD_BIT(CLI_CMD_SET_FEATURE),
	  "keep the value across power cycles" },
	{ "lbaf", 'l', true, OPT_LBAF, CMD_BIT(CLI_CMD_FORMAT), "LBA format index, 0..15" },
	{ "ses", 's', true, OPT_SES, CMD_BIT(CLI_CMD_FORMAT),
	  "secure erase: 0 none, 1 user data, 2 cryptographic" },
	{ "force", 0, false, OPT_FORCE, CMD_BIT(CLI_CMD_FORMAT), "do not ask for confirmation" },
	{ "fw", 'f', true, OPT_FW, CMD_BIT(CLI_CMD_FW_DOWNLOAD), "firmware image file (required)" },
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
	  "list: the host / subsystem / controller / namespace tree" },
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
	{ "help", 'h', false, OPT_HELP, 0xffffffffu, "this help" },
};

struct cmd_def {
	const char *name;
	bool needs_device;
	const char *summary;
};

static const struct cmd_def g_cmds[CLI_CMD_COUNT] = {
	[CLI_CMD_LIST] = { "list", false, "list NVMe controllers and namespaces" },
	[CLI_CMD_ID_CTRL] = { "id-ctrl", true, "identify controller" },
	[CLI_CMD_ID_NS] = { "id-ns", true, "identify namespace" },
	[CLI_CMD_LIST_NS] = { "list-ns", true, "list active namespace ids" },
	[CLI_CMD_SMART_LOG] = { "smart-log", true, "SMART / health information log" },
	[CLI_CMD_ERROR_LOG] = { "error-log", true, "error information log" },
	[CLI_CMD_FW_LOG] = { "fw-log", true, "firmware slot information log" },
	[CLI_CMD_GET_FEATURE] = { "get-feature", true, "get a feature's value" },
	[CLI_CMD_SET_FEATURE] = { "set-feature", true, "set a feature's value" },
	[CLI_CMD_FORMAT] = { "format", true, "format a namespace (destroys its data)" },
	[CLI_CMD_FW_DOWNLOAD] = { "fw-download", true, "download a firmware image" },
	[CLI_CMD_FW_COMMIT] = { "fw-commit", true, "commit / activate a firmware image" },
	[CLI_CMD_RESET] = { "reset", true, "reset the controller" },
	[CLI_CMD_SHOW_REGS] = { "show-regs", true, "controller registers CAP, VS, CSTS" },
	[CLI_CMD_HELP] = { "help", false, "general or command help" },
	[CLI_CMD_VERSION] = { "version", false, "print the version" },
	[CLI_CMD_DIR_RECEIVE] = { "dir-receive", true, "directive receive (identify, streams)" },
	[CLI_CMD_WAF] = { "waf", true, "write amplification of the software controller's FTL" },
	[CLI_CMD_DISCOVER] = { "discover", true,
			       "NVMe/TCP discovery log page (device: \"trtype:TCP traddr:... "
			       "trsvcid:...\")" },
	[CLI_CMD_FDP_CONFIGS] = { "fdp-configs", true, "FDP configurations log (fdp configs)" },
	[CLI_CMD_FDP_USAGE] = { "fdp-usage", true, "FDP reclaim unit handle usage (fdp usage)" },
	[CLI_CMD_FDP_STATS] = { "fdp-stats", true, "FDP statistics log (fdp stats)" },
	[CLI_CMD_FDP_EVENTS] = { "fdp-events", true, "FDP host events log (fdp events)" },
	[CLI_CMD_FDP_STATUS] = { "fdp-status", true,
				 "reclaim unit handle status of a namespace (fdp status)" },
	[CLI_CMD_FDP_UPDATE] = { "fdp-update", true,
				 "move placement identifiers to new reclaim units (fdp update)" },
	[CLI_CMD_FDP_FEATURE] = { "fdp-feature", true,
				  "FDP enabled? enable (-E CONF) or disable (-d) it (fdp feature)" },
};

const char *
cli_cmd_name(enum cli_cmd_id cmd)
{
	return cmd < CLI_CMD_COUNT ? g_cmds[cmd].name : "?";
}

enum cli_cmd_id
cli_cmd_lookup(const char *name)
{
	for (int i = 0; i < CLI_CMD_COUNT; i++) {
		if (strcmp(name, g_cmds[i].name) == 0) {
			return (enum cli_cmd_id)i;
		}
	}
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
		return CLI_CMD_HELP;
	}
	if (strcmp(name, "--version") == 0) {
		return CLI_CMD_VERSION;
	}
	return CLI_CMD_COUNT;
}

bool
cli_cmd_needs_device(enum cli_cmd_id cmd)
{
	return cmd < CLI_CMD_COUNT && g_cmds[cmd].needs_device;
}

int
cli_output_parse(const char *str, enum cli_output *out)
{
	if (strcmp(str, "normal") == 0) {
		*out = CLI_OUT_NORMAL;
	} else if (strcmp(str, "json") == 0) {
		*out = CLI_OUT_JSON;
	} else if (strcmp(str, "binary") == 0) {
		*out = CLI_OUT_BINARY;
	} else {
		return -EINVAL;
	}
	return 0;
}

static int __attribute__((format(printf, 3, 4)))
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static const struct opt_def *
find_long(enum cli_cmd_id cmd, const char *name, size_t len)
{
	for (size_t i = 0; i < NVP_COUNTOF(g_opts); i++) {
		if ((g_opts[i].cmds & CMD_BIT(cmd)) && strlen(g_opts[i].lname) == len &&
		    strncmp(g_opts[i].lname, name, len) == 0) {
			return &g_opts[i];
		}
	}
	return NULL;
}

static const struct opt_def *
find_short(enum cli_cmd_id cmd, char c)
{
	for (size_t i = 0; i < NVP_COUNTOF(g_opts); i++) {
		if ((g_opts[i].cmds & CMD_BIT(cmd)) && g_opts[i].sname == c) {
			return &g_opts[i];
		}
	}
	return NULL;
}

/*
 * Numeric options: the accepted range, where the value goes (a uint8_t or uint32_t field
 * of struct cli_args) and the "given" flag to set, if any. Zero is refused where the
 * specification reserves it (namespace id 0, feature id 0).
 */
struct num_spec {
	uint64_t min;
	uint64_t max;
	size_t off;
	size_t size;
	size_t set_off; /* 0: no flag */
};

#define NUM(field, lo, hi, flag)                                                                 \
	{                                                                                        \
		lo, hi, offsetof(struct cli_args, field), sizeof(((struct cli_args *)0)->field), \
			flag                                                                     \
	}
#define SET(field) offsetof(struct cli_args, field)

static const struct num_spec g_num[] = {
	[OPT_NSID] = NUM(nsid, 1, UINT32_MAX, SET(nsid_set)),
	[OPT_LOG_ENTRIES] = NUM(log_entries, 1, 256, 0),
	[OPT_FID] = NUM(fid, 1, 255, SET(fid_set)),
	[OPT_SEL] = NUM(sel, 0, 3, 0),
	[OPT_CDW11] = NUM(cdw11, 0, UINT32_MAX, 0),
	[OPT_VALUE] = NUM(value, 0, UINT32_MAX, SET(value_set)),
	[OPT_CDW12] = NUM(cdw12, 0, UINT32_MAX, 0),
	[OPT_LBAF] = NUM(lbaf, 0, 15, 0),
	[OPT_SES] = NUM(ses, 0, 2, 0),
	[OPT_SLOT] = NUM(slot, 0, 7, SET(slot_set)),
	[OPT_ACTION] = NUM(action, 0, 3, SET(action_set)),
	[OPT_DIR_TYPE] = NUM(dir_type, 0, 1, 0),
	[OPT_DIR_OPER] = NUM(dir_oper, 1, 3, 0),
	[OPT_DIR_SPEC] = NUM(dir_spec, 0, 65535, 0),
	[OPT_NSR] = NUM(nsr, 0, 65535, 0),
	[OPT_ENDGID] = NUM(endgid, 1, 65535, SET(endgid_set)),
	[OPT_FDP_ENABLE] = NUM(fdp_enable, 0, 255, SET(fdp_enable_set)),
};

static int
store_num(struct cli_args *a, const struct opt_def *o, const char *val, char *err, size_t errlen)
{
	const struct num_spec *n = &g_num[o->id];
	char *base = (char *)a;
	uint64_t v;

	if (nvp_strtou64(val, n->min, n->max, &v) != 0) {
		return fail(err, errlen,
			    "invalid value '%s' for --%s: expected a number %llu..%llu%s", val,
			    o->lname, (unsigned long long)n->min, (unsigned long long)n->max,
			    n->max > 9 ? " (or 0x hex)" : "");
	}
	if (n->size == sizeof(uint8_t)) {
		uint8_t v8 = (uint8_t)v;

		memcpy(base + n->off, &v8, sizeof(v8));
	} else {
		uint32_t v32 = (uint32_t)v;

		memcpy(base + n->off, &v32, sizeof(v32));
	}
	if (n->set_off != 0) {
		*(bool *)(base + n->set_off) = true;
	}
	return 0;
}

/* Store one option's value. */
static int
apply_opt(struct cli_args *a, const struct opt_def *o, const char *val, char *err, size_t errlen)
{
	switch (o->id) {
	case OPT_OUTPUT:
		if (cli_output_parse(val, &a->output) != 0) {
			return fail(err, errlen,
				    "invalid output format '%s': expected normal, json or binary",
				    val);
		}
		return 0;
	case OPT_HUMAN:
		a->human = true;
		return 0;
	case OPT_SAVE:
		a->save = true;
		return 0;
	case OPT_FORCE:
		a->force = true;
		return 0;
	case OPT_HELP:
		a->help = true;
		return 0;
	case OPT_RAW:
		a->output = CLI_OUT_BINARY;
		return 0;
	case OPT_VERBOSE:
		a->verbose = true;
		return 0;
	case OPT_FW:
		a->fw_file = val;
		return 0;
	case OPT_PIDS:
		a->pids = val;
		return 0;
	case OPT_FDP_DISABLE:
		a->fdp_disable = true;
		return 0;
	default:
		return store_num(a, o, val, err, errlen);
	}
}

/*
 * One option at argv[*i]: "--name", "--name=value", "--name value", "-x", "-xvalue",
 * "-x value". Advances *i past what it used.
 */
static int
parse_opt(struct cli_args *a, int argc, char **argv, int *i, char *err, size_t errlen)
{
	const char *arg = argv[*i];
	const char *cmd = cli_cmd_name(a->cmd);
	const struct opt_def *o;
	const char *val = NULL;

	if (arg[1] == '-') {
		const char *eq = strchr(arg + 2, '=');
		size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);

		o = find_long(a->cmd, arg + 2, len);
		if (o == NULL) {
			return fail(err, errlen, "%s: unknown option '%.*s'", cmd, (int)len + 2,
				    arg);
		}
		if (eq != NULL && !o->has_arg) {
			return fail(err, errlen, "%s: option --%s takes no value", cmd, o->lname);
		}
		val = eq ? eq + 1 : NULL;
	} else {
		o = find_short(a->cmd, arg[1]);
		if (o == NULL) {
			return fail(err, errlen, "%s: unknown option '-%c'", cmd, arg[1]);
		}
		if (arg[2] != '\0') {
			if (!o->has_arg) {
				return fail(err, errlen, "%s: option -%c takes no value ('%s')",
					    cmd, arg[1], arg);
			}
			val = arg + 2;
		}
	}
	if (o->has_arg && val == NULL) {
		if (*i + 1 >= argc) {
			return fail(err, errlen, "%s: option --%s needs a value", cmd, o->lname);
		}
		*i += 1;
		val = argv[*i];
	}
	*i += 1;
	return apply_opt(a, o, val, err, errlen);
}

int
cli_fdp_parse_pids(const char *str, uint16_t *pids, uint32_t max)
{
	char tok[16];
	uint32_t n = 0;

	while (*str != '\0') {
		size_t len = strcspn(str, ",");
		uint64_t v;

		if (len == 0 || len >= sizeof(tok) || n == max) {
			return -EINVAL;
		}
		memcpy(tok, str, len);
		tok[len] = '\0';
		if (nvp_strtou64(tok, 0, 65535, &v) != 0) {
			return -EINVAL;
		}
		pids[n++] = (uint16_t)v;
		str += len;
		if (*str == ',' && *++str == '\0') {
			return -EINVAL; /* trailing comma */
		}
	}
	return n == 0 ? -EINVAL : (int)n;
}

/* What a command needs beyond its options' own ranges. */
static int
check_args(const struct cli_args *a, char *err, size_t errlen)
{
	const char *cmd = cli_cmd_name(a->cmd);

	if (cli_cmd_needs_device(a->cmd) && a->device == NULL) {
		return fail(err, errlen,
			    "%s: missing device (a PCI address, a transport ID or emu:)", cmd);
	}
	if (a->cmd == CLI_CMD_SET_FEATURE && !a->fid_set) {
		return fail(err, errlen, "%s: --feature-id is required", cmd);
	}
	if (a->cmd == CLI_CMD_GET_FEATURE && !a->fid_set && a->output == CLI_OUT_BINARY) {
		return fail(err, errlen, "%s: binary output needs one --feature-id", cmd);
	}
	if (a->cmd == CLI_CMD_SET_FEATURE && !a->value_set) {
		return fail(err, errlen, "%s: --value is required", cmd);
	}
	if (a->cmd == CLI_CMD_FW_DOWNLOAD && a->fw_file == NULL) {
		return fail(err, errlen, "%s: --fw FILE is required", cmd);
	}
	if (a->cmd == CLI_CMD_DIR_RECEIVE && a->dir_type == NVME_DIRECTIVE_TYPE_IDENTIFY &&
	    a->dir_oper > 1) {
		return fail(err, errlen, "%s: the identify directive has operation 1 only", cmd);
	}
	if (a->cmd == CLI_CMD_FDP_UPDATE) {
		uint16_t pids[NVP_NVME_FDP_MAX_UPDATE];

		if (a->pids == NULL || cli_fdp_parse_pids(a->pids, pids, NVP_COUNTOF(pids)) < 0) {
			return fail(err, errlen,
				    "%s: --pids needs 1..%u placement identifiers, comma separated "
				    "(0..65535 each)",
				    cmd, NVP_NVME_FDP_MAX_UPDATE);
		}
	}
	if (a->cmd == CLI_CMD_FDP_FEATURE && a->fdp_enable_set && a->fdp_disable) {
		return fail(err, errlen, "%s: --enable and --disable exclude each other", cmd);
	}
	if ((a->cmd == CLI_CMD_LIST || a->cmd == CLI_CMD_SHOW_REGS || a->cmd == CLI_CMD_WAF ||
	     (CMD_BIT(a->cmd) & FDP_CMDS)) &&
	    a->output == CLI_OUT_BINARY) {
		return fail(err, errlen, "%s: binary output is not defined for %s", cmd, cmd);
	}
	return 0;
}

static void
args_init(struct cli_args *a, enum cli_cmd_id cmd)
{
	memset(a, 0, sizeof(*a));
	a->cmd = cmd;
	a->output = CLI_OUT_NORMAL;
	a->help_topic = CLI_CMD_COUNT;
}

/* "help [CMD]" */
static int
parse_help(struct cli_args *a, int argc, char **argv, char *err, size_t errlen)
{
	if (argc > 2) {
		return fail(err, errlen, "help: unexpected argument '%s'", argv[2]);
	}
	if (argc == 2 && strcmp(argv[1], "emu") == 0) {
		a->help_emu = true;
	} else if (argc == 2) {
		a->help_topic = cli_cmd_lookup(argv[1]);
		if (a->help_topic == CLI_CMD_COUNT) {
			return fail(err, errlen, "help: unknown command '%s'", argv[1]);
		}
	}
	return 0;
}

int
cli_args_parse(int argc, char **argv, struct cli_args *a, char *err, size_t errlen)
{
	enum cli_cmd_id cmd;
	int i = 1, rc;

	if (argc < 1 || argv[0] == NULL) {
		return fail(err, errlen, "missing command");
	}
	cmd = cli_cmd_lookup(argv[0]);
	if (strcmp(argv[0], "fdp") == 0) { /* nvme-cli's "fdp configs": our "fdp-configs" */
		char name[32];

		if (argc < 2 || argv[1][0] == '-') {
			return fail(err, errlen,
				    "fdp: missing subcommand (configs, usage, stats, "
				    "events, status, update, feature)");
		}
		snprintf(name, sizeof(name), "fdp-%s", argv[1]);
		cmd = cli_cmd_lookup(name);
		if (cmd == CLI_CMD_COUNT) {
			return fail(err, errlen, "fdp: unknown subcommand '%s'", argv[1]);
		}
		argc--;
		argv++;
	} else if (cmd == CLI_CMD_COUNT) {
		return fail(err, errlen, "unknown command '%s'", argv[0]);
	}
	args_init(a, cmd);
	if (cmd == CLI_CMD_HELP) {
		return parse_help(a, argc, argv, err, errlen);
	}
	while (i < argc) {
		const char *arg = argv[i];

		if (arg[0] == '-' && arg[1] != '\0') {
			rc = parse_opt(a, argc, argv, &i, err, errlen);
			if (rc != 0) {
				return rc;
			}
			continue;
		}
		if (a->device != NULL || cmd == CLI_CMD_VERSION) {
			return fail(err, errlen, "%s: unexpected argument '%s'", cli_cmd_name(cmd),
				    arg);
		}
		a->device = arg;
		i++;
	}
	return a->help ? 0 : check_args(a, err, errlen);
}

void
cli_usage(FILE *f, enum cli_cmd_id cmd)
{
	if (cmd >= CLI_CMD_COUNT) {
		fprintf(f, "usage: nvp <command> [<device>] [<options>] [+ <command> ...]\n\n"
			   "Commands:\n");
		for (int i = 0; i < CLI_CMD_COUNT; i++) {
			fprintf(f, "  %-13s %s\n", g_cmds[i].name, g_cmds[i].summary);
		}
		/* cli_bdev.c, dispatched before the chain parser */
		fprintf(f, "  %-13s %s\n", "bdev-list",
			"list the bdevs of a configuration (--json-config FILE | -c LINE)");
		/* cli_serve.c, likewise */
		fprintf(f, "  %-13s %s\n", "serve",
			"serve a controller over NVMe/TCP (a test and demo target)");
		fprintf(f,
			"\n<device> is one of:\n"
			"  0000:01:00.0                   a PCI function bound to vfio-pci/uio\n"
			"  \"trtype:PCIe traddr:0000:01:00.0\"   an SPDK-style transport ID\n"
			"  \"trtype:emu name:emu0 nn:2\"    a software controller made for this run\n"
			"  emu:nn=2,lba=4096              the same, with emu options (nvp help emu)\n"
			"A software controller lives for one nvp invocation; use\n"
			"emu:backend=file:PATH to keep data and SMART counters across invocations, or\n"
			"chain commands on one device in one invocation with a lone '+':\n"
			"  nvp fw-download emu: --fw img + fw-commit emu: -a 1 + reset emu: + fw-log emu:\n"
			"Exit status: 0 success, 1 device or system error, 2 usage error.\n"
			"'nvp help <command>' or 'nvp <command> --help' shows a command's options.\n");
		return;
	}
	fprintf(f, "usage: nvp %s%s [<options>]\n%s\n\nOptions:\n", g_cmds[cmd].name,
		g_cmds[cmd].needs_device ? " <device>" : (cmd == CLI_CMD_LIST ? " [<device>]" : ""),
		g_cmds[cmd].summary);
	for (size_t i = 0; i < NVP_COUNTOF(g_opts); i++) {
		const struct opt_def *o = &g_opts[i];
		char name[40];

		if (!(o->cmds & CMD_BIT(cmd))) {
			continue;
		}
		snprintf(name, sizeof(name), "%c%c%s--%s%s", o->sname ? '-' : ' ',
			 o->sname ? o->sname : ' ', o->sname ? ", " : "  ", o->lname,
			 o->has_arg ? " <v>" : "");
		fprintf(f, "  %-26s %s\n", name, o->help);
	}
}

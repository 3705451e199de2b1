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

#include "cli_opts.h"

#define FDP_CMDS                                                                                  \
	(CMD_BIT(CLI_CMD_FDP_CONFIGS) | CMD_BIT(CLI_CMD_FDP_USAGE) | CMD_BIT(CLI_CMD_FDP_STATS) | \
	 CMD_BIT(CLI_CMD_FDP_EVENTS) | CMD_BIT(CLI_CMD_FDP_FEATURE) |                             \
	 CMD_BIT(CLI_CMD_FDP_STATUS) | CMD_BIT(CLI_CMD_FDP_UPDATE))
#define RWC_CMDS (CMD_BIT(CLI_CMD_READ) | CMD_BIT(CLI_CMD_WRITE) | CMD_BIT(CLI_CMD_COMPARE))
#define PT_CMDS (CMD_BIT(CLI_CMD_IO_PASSTHRU) | CMD_BIT(CLI_CMD_ADMIN_PASSTHRU))

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
	[CLI_CMD_READ] = { "read", true, "read logical blocks into a file (or standard output)" },
	[CLI_CMD_WRITE] = { "write", true, "write a file (or standard input) to logical blocks" },
	[CLI_CMD_COMPARE] = { "compare", true, "compare logical blocks with a file" },
	[CLI_CMD_WRITE_ZEROES] = { "write-zeroes", true, "set logical blocks to zero" },
	[CLI_CMD_DSM] = { "dsm", true, "dataset management: deallocate or describe ranges" },
	[CLI_CMD_FLUSH] = { "flush", true, "commit the volatile write cache to media" },
	[CLI_CMD_GET_LOG] = { "get-log", true, "any log page, as a hex dump or raw bytes" },
	[CLI_CMD_IO_PASSTHRU] = { "io-passthru", true, "send any I/O command" },
	[CLI_CMD_ADMIN_PASSTHRU] = { "admin-passthru", true, "send any admin command" },
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
	for (size_t i = 0; i < cli_opt_count; i++) {
		const struct opt_def *o = &cli_opt_defs[i];

		if ((o->cmds & CMD_BIT(cmd)) && strlen(o->lname) == len &&
		    strncmp(o->lname, name, len) == 0) {
			return o;
		}
	}
	return NULL;
}

static const struct opt_def *
find_short(enum cli_cmd_id cmd, char c)
{
	for (size_t i = 0; i < cli_opt_count; i++) {
		if ((cli_opt_defs[i].cmds & CMD_BIT(cmd)) && cli_opt_defs[i].sname == c) {
			return &cli_opt_defs[i];
		}
	}
	return NULL;
}

/* A number within its option's range, stored in a field of 1, 2, 4 or 8 bytes. */
static int
store_num(struct cli_args *a, const struct opt_def *o, const char *val, char *err, size_t errlen)
{
	const struct opt_store *n = &cli_opt_store[o->id];
	char *base = (char *)a;
	uint64_t v;
	int rc;

	rc = n->suffix ? nvp_parse_size(val, &v) : nvp_strtou64(val, n->min, n->max, &v);
	if (rc != 0 || v < n->min || v > n->max) {
		return fail(err, errlen,
			    "invalid value '%s' for --%s: expected a number %llu..%llu%s%s", val,
			    o->lname, (unsigned long long)n->min, (unsigned long long)n->max,
			    n->max > 9 ? " (or 0x hex)" : "", n->suffix ? ", or with k/M/G" : "");
	}
	switch (n->size) {
	case sizeof(uint8_t):
		memcpy(base + n->off, &(uint8_t){ (uint8_t)v }, sizeof(uint8_t));
		break;
	case sizeof(uint16_t):
		memcpy(base + n->off, &(uint16_t){ (uint16_t)v }, sizeof(uint16_t));
		break;
	case sizeof(uint32_t):
		memcpy(base + n->off, &(uint32_t){ (uint32_t)v }, sizeof(uint32_t));
		break;
	default:
		memcpy(base + n->off, &v, sizeof(v));
		break;
	}
	if (n->set_off != 0) {
		*(bool *)(base + n->set_off) = true;
	}
	return 0;
}

/* Store one option's value where cli_opt_store says. */
static int
apply_opt(struct cli_args *a, const struct opt_def *o, const char *val, char *err, size_t errlen)
{
	const struct opt_store *st = &cli_opt_store[o->id];
	char *base = (char *)a;

	switch (st->kind) {
	case OPT_K_OUTPUT:
		if (cli_output_parse(val, &a->output) != 0) {
			return fail(err, errlen,
				    "invalid output format '%s': expected normal, json or binary",
				    val);
		}
		return 0;
	case OPT_K_RAW:
		a->output = CLI_OUT_BINARY;
		return 0;
	case OPT_K_FLAG:
		*(bool *)(base + st->off) = true;
		return 0;
	case OPT_K_STR:
		memcpy(base + st->off, &val, sizeof(val));
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

int
cli_parse_list(const char *str, uint64_t max, uint64_t *vals, uint32_t nmax)
{
	char tok[24];
	uint32_t n = 0;

	while (*str != '\0') {
		size_t len = strcspn(str, ",");

		if (len == 0 || len >= sizeof(tok) || n == nmax) {
			return -EINVAL;
		}
		memcpy(tok, str, len);
		tok[len] = '\0';
		if (nvp_strtou64(tok, 0, max, &vals[n]) != 0) {
			return -EINVAL;
		}
		n++;
		str += len;
		if (*str == ',' && *++str == '\0') {
			return -EINVAL; /* trailing comma */
		}
	}
	return n == 0 ? -EINVAL : (int)n;
}

/* dsm: each list parses; the longest gives the number of ranges, 1..256. */
static int
check_dsm_args(const struct cli_io_args *io, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		uint64_t max;
	} lists[] = { { "slbs", UINT64_MAX },
		      { "blocks", UINT32_MAX },
		      { "ctx-attrs", UINT32_MAX } };
	const char *strs[] = { io->slbs, io->blocks, io->ctx_attrs };
	uint64_t vals[CLI_DSM_MAX_RANGES];
	bool any = false;

	for (size_t i = 0; i < NVP_COUNTOF(lists); i++) {
		if (strs[i] == NULL) {
			continue;
		}
		if (cli_parse_list(strs[i], lists[i].max, vals, CLI_DSM_MAX_RANGES) < 0) {
			return fail(err, errlen,
				    "dsm: --%s needs 1..%u numbers, comma separated (0..%llu each)",
				    lists[i].name, CLI_DSM_MAX_RANGES,
				    (unsigned long long)lists[i].max);
		}
		any = true;
	}
	if (!any) {
		return fail(err, errlen,
			    "dsm: no range given: --slbs and --blocks (and --ctx-attrs) list them");
	}
	return 0;
}

/* read, write, compare, write-zeroes, dsm */
static int
check_io_args(const struct cli_args *a, char *err, size_t errlen)
{
	const char *cmd = cli_cmd_name(a->cmd);

	if (a->cmd == CLI_CMD_DSM) {
		return check_dsm_args(&a->io, err, errlen);
	}
	if (!(CMD_BIT(a->cmd) & RWC_CMDS)) {
		return 0;
	}
	if (a->io.data_size == 0) {
		return fail(err, errlen,
			    "%s: --data-size is required: the bytes to move, at least "
			    "(block-count + 1) x the block size",
			    cmd);
	}
	if (a->io.md != NULL && a->io.md_size == 0) {
		return fail(err, errlen, "%s: --metadata FILE needs --metadata-size", cmd);
	}
	return 0;
}

/* get-log: a log page id, a length in dwords */
static int
check_log_args(const struct cli_args *a, char *err, size_t errlen)
{
	if (!a->log.lid_set && a->log.aen == 0) {
		return fail(err, errlen,
			    "get-log: --log-id is required (nvme-cli 2.3 would silently ask for "
			    "log page 0xff)");
	}
	if (a->log.aen == 0 && a->log.len == 0) {
		return fail(err, errlen, "get-log: --log-len is required (bytes, non-zero)");
	}
	if (a->log.len % 4 != 0) {
		return fail(err, errlen,
			    "get-log: --log-len %u is not a multiple of 4: the command counts "
			    "dwords",
			    a->log.len);
	}
	return 0;
}

/* io-passthru, admin-passthru: an opcode, one direction for any data */
static int
check_pt_args(const struct cli_args *a, char *err, size_t errlen)
{
	const char *cmd = cli_cmd_name(a->cmd);
	bool rd = a->pt.read || (a->pt.opcode & 2u), wr = a->pt.write || (a->pt.opcode & 1u);

	if (!a->pt.opcode_set) {
		return fail(err, errlen, "%s: --opcode is required", cmd);
	}
	if (a->pt.data_len == 0 && a->pt.md_len == 0) {
		return 0; /* no data: the direction means nothing */
	}
	if (rd && wr) {
		return fail(err, errlen,
			    "%s: data in both directions (--read and --write, or opcode %#04x) is "
			    "not supported",
			    cmd, a->pt.opcode);
	}
	if (!rd && !wr) {
		return fail(err, errlen,
			    "%s: data direction not given: --read or --write (opcode %#04x "
			    "transfers no data by its bits 1:0)",
			    cmd, a->pt.opcode);
	}
	return 0;
}

/* format: -l or -b; fw-download: whole pages a command */
static int
check_admin_args(const struct cli_args *a, char *err, size_t errlen)
{
	const char *cmd = cli_cmd_name(a->cmd);

	if (a->cmd == CLI_CMD_FORMAT && a->lbaf_set && a->block_size != 0) {
		return fail(err, errlen, "%s: --lbaf and --block-size exclude each other", cmd);
	}
	if (a->cmd == CLI_CMD_FORMAT && a->block_size != 0 && !NVP_IS_POW2(a->block_size)) {
		return fail(err, errlen, "%s: --block-size %llu is not a power of two", cmd,
			    (unsigned long long)a->block_size);
	}
	if (a->cmd == CLI_CMD_FW_DOWNLOAD && a->xfer_set && a->xfer % 4096 != 0) {
		return fail(err, errlen, "%s: --xfer %u is not a multiple of 4096", cmd, a->xfer);
	}
	return 0;
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
	if (a->cmd == CLI_CMD_GET_LOG) {
		return check_log_args(a, err, errlen);
	}
	if (CMD_BIT(a->cmd) & PT_CMDS) {
		return check_pt_args(a, err, errlen);
	}
	return a->cmd == CLI_CMD_FORMAT || a->cmd == CLI_CMD_FW_DOWNLOAD ?
		       check_admin_args(a, err, errlen) :
		       check_io_args(a, err, errlen);
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
			fprintf(f, "  %-15s %s\n", g_cmds[i].name, g_cmds[i].summary);
		}
		/* cli_bdev.c, dispatched before the chain parser */
		fprintf(f, "  %-15s %s\n", "bdev-list",
			"list the bdevs of a configuration (--json-config FILE | -c LINE)");
		/* cli_serve.c, likewise */
		fprintf(f, "  %-15s %s\n", "serve",
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
	for (size_t i = 0; i < cli_opt_count; i++) {
		const struct opt_def *o = &cli_opt_defs[i];
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

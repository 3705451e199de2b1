/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp: NVMe management from user space, in the style of nvme-cli, over nvpoll.
 *
 *   nvp list
 *   nvp id-ctrl 0000:01:00.0 -o json
 *   nvp id-ns "trtype:emu name:emu0 nn:2" -n 2 -H
 *   nvp smart-log emu:backend=file:/tmp/disk -o json
 *   nvp fw-download emu: --fw img.bin + fw-commit emu: -s 2 -a 1 + reset emu: + fw-log emu:
 *
 * Several commands may run in one invocation, separated by a lone "+"; commands naming
 * the same device string share one attached controller. That is how a software
 * controller ("emu:"), which lives only as long as the process, can be formatted and
 * then identified, or given new firmware, reset and asked for its firmware log.
 *
 * Every command line is parsed before any device is touched: a usage error exits with 2
 * and nothing is done.
 */
#include <errno.h>
#include <string.h>

#include "nvpoll/env.h"
#include "nvpoll/util.h"

#include "nvp_cli.h"

#define MAX_CHAIN 32

struct open_dev {
	const char *name;
	struct nvp_nvme_ctrlr *ctrlr;
};

struct run_state {
	struct open_dev devs[MAX_CHAIN];
	uint32_t ndevs;
	const struct cli_args *cmds; /* the whole chain, parsed */
	uint32_t ncmds;
};

/* nvme-cli's format timeout when -t is not given. */
#define FORMAT_DEFAULT_TIMEOUT_MS 600000u

static int
usage_error(const char *msg)
{
	fprintf(stderr, "nvp: %s\ntry 'nvp help'\n", msg);
	return CLI_EXIT_USAGE;
}

/* Split argv at "+" and parse each command. \return 0 or an exit status. */
static int
parse_chain(int argc, char **argv, struct cli_args *cmds, uint32_t *ncmds)
{
	struct nvp_nvme_transport_id trid;
	char err[512];
	int start = 1;

	*ncmds = 0;
	for (int i = 1; i <= argc; i++) {
		if (i < argc && strcmp(argv[i], CLI_CHAIN_SEP) != 0) {
			continue;
		}
		if (i == start) {
			return usage_error("empty command (a '+' with nothing on one side)");
		}
		if (*ncmds == MAX_CHAIN) {
			return usage_error("too many chained commands");
		}
		if (cli_args_parse(i - start, argv + start, &cmds[*ncmds], err, sizeof(err)) != 0) {
			return usage_error(err);
		}
		if (cmds[*ncmds].device != NULL && !cmds[*ncmds].help &&
		    cli_device_parse(cmds[*ncmds].device, &trid, err, sizeof(err)) != 0) {
			return usage_error(err);
		}
		*ncmds += 1;
		start = i + 1;
	}
	return 0;
}

/*
 * The admin timeout a controller needs for the chain: a format waits its -t (nvme-cli's
 * default 600 s, where the driver's admin timeout is 10 s). Every command on @dev counts:
 * the chain shares one attached controller.
 */
static uint32_t
chain_admin_timeout(const struct run_state *st, const char *dev)
{
	uint32_t t = 0;

	for (uint32_t i = 0; i < st->ncmds; i++) {
		const struct cli_args *a = &st->cmds[i];

		if (a->cmd == CLI_CMD_FORMAT && a->device != NULL && strcmp(a->device, dev) == 0) {
			t = NVP_MAX(t, a->timeout_ms ? a->timeout_ms : FORMAT_DEFAULT_TIMEOUT_MS);
		}
	}
	return t;
}

/* The controller for @dev, attached on first use. \return 0 or an exit status. */
static int
get_ctrlr(struct run_state *st, const char *dev, struct nvp_nvme_ctrlr **ctrlr)
{
	int rc;

	for (uint32_t i = 0; i < st->ndevs; i++) {
		if (strcmp(st->devs[i].name, dev) == 0) {
			*ctrlr = st->devs[i].ctrlr;
			return 0;
		}
	}
	rc = cli_device_open(dev, chain_admin_timeout(st, dev), ctrlr);
	if (rc != 0) {
		return rc == -EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
	}
	st->devs[st->ndevs].name = dev;
	st->devs[st->ndevs].ctrlr = *ctrlr;
	st->ndevs++;
	return 0;
}

static int
run_one(struct run_state *st, const struct cli_args *a)
{
	struct nvp_nvme_ctrlr *ctrlr = NULL;
	int rc;

	if (a->help) {
		cli_usage(stdout, a->cmd);
		return CLI_EXIT_OK;
	}
	if (a->cmd == CLI_CMD_DISCOVER) {
		return cli_cmd_discover(a); /* a discovery controller, not one to attach */
	}
	if (a->device != NULL) {
		rc = get_ctrlr(st, a->device, &ctrlr);
		if (rc != 0) {
			return rc;
		}
	}
	fflush(stdout);
	rc = cli_cmd_run(a, ctrlr);
	fflush(stdout);
	return rc;
}

int
main(int argc, char **argv)
{
	static struct cli_args cmds[MAX_CHAIN];
	struct run_state st = { .ndevs = 0, .cmds = cmds };
	uint32_t ncmds = 0;
	int rc;

	if (argc < 2) {
		cli_usage(stderr, CLI_CMD_COUNT);
		return CLI_EXIT_USAGE;
	}
	if (strcmp(argv[1], "bdev-list") == 0) {
		return cli_bdev_list_main(argc - 1, argv + 1);
	}
	if (strcmp(argv[1], "serve") == 0) {
		return cli_serve_main(argc - 1, argv + 1);
	}
	if (argc == 3 && strcmp(argv[1], "help") == 0 &&
	    (strcmp(argv[2], "serve") == 0 || strcmp(argv[2], "bdev-list") == 0)) {
		/* their parsers are their own: "nvp help serve" is "nvp serve --help" */
		char *help_argv[] = { argv[2], (char *)"--help", NULL };

		return strcmp(argv[2], "serve") == 0 ? cli_serve_main(2, help_argv) :
						       cli_bdev_list_main(2, help_argv);
	}
	rc = parse_chain(argc, argv, cmds, &ncmds);
	if (rc != 0) {
		return rc;
	}
	st.ncmds = ncmds;
	for (uint32_t i = 0; i < ncmds && rc == 0; i++) {
		rc = run_one(&st, &cmds[i]);
	}
	for (uint32_t i = 0; i < st.ndevs; i++) {
		nvp_nvme_detach(st.devs[i].ctrlr);
	}
	if (nvp_env_is_initialized()) {
		nvp_env_fini();
	}
	return rc;
}

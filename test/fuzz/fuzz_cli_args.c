/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz nvp's argument parser (cli_args_parse): the input split at NUL bytes is argv,
 * starting with the subcommand. A rejected command line must come with a message (the
 * tool prints it and exits 2); an accepted one names a known subcommand.
 */
#include "nvp_config.h"

#include "../app/cli/cli_args.c"
#include "../app/cli/cli_opts.c"

#include "fuzz.h"

#define FZ_MAX_ARGS 64

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[FZ_MAX_ARGS + 1];
	struct cli_args args;
	char err[256];
	char *buf;
	size_t i;
	int argc = 0;

	buf = malloc(size + 1);
	FZ_CHECK(buf != NULL, "out of memory");
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[argc++] = buf;
	for (i = 0; i < size && argc < FZ_MAX_ARGS; i++) {
		if (buf[i] == '\0') {
			argv[argc++] = buf + i + 1;
		}
	}
	argv[argc] = NULL;
	err[0] = '\0';
	memset(&args, 0, sizeof(args));
	if (cli_args_parse(argc, argv, &args, err, sizeof(err)) != 0) {
		FZ_CHECK(err[0] != '\0', "'%s' rejected without a message", argv[0]);
	} else {
		FZ_CHECK(args.cmd < CLI_CMD_COUNT, "'%s' parsed to command %d", argv[0],
			 (int)args.cmd);
	}
	free(buf);
	return 0;
}

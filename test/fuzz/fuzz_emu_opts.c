/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz the software controller's option strings (nvp_emu_opts_parse): any bytes,
 * NUL-terminated, over the defaults. A failure must leave a message in the error buffer.
 */
#include "nvp_config.h"

#include "emu/emu_opts.c"

#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int done;
	struct nvp_emu_opts opts;
	char err[256];
	char *str;

	if (!done) {
		done = 1;
		FZ_CHECK(fz_env_init() == 0, "env init failed");
	}
	str = malloc(size + 1);
	FZ_CHECK(str != NULL, "out of memory");
	memcpy(str, data, size);
	str[size] = '\0';
	nvp_emu_opts_init(&opts, sizeof(opts));
	err[0] = '\0';
	if (nvp_emu_opts_parse(&opts, str, err, sizeof(err)) != 0) {
		FZ_CHECK(err[0] != '\0', "'%s' rejected without a message", str);
	}
	FZ_CHECK(memchr(err, '\0', sizeof(err)) != NULL, "error message not terminated");
	free(str);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the fuzz harnesses of test/fuzz: the libFuzzer entry point each defines, a
 * check that stops the run with a message (a finding), and the environment set-up.
 * Built two ways: with clang's libFuzzer (`make fuzz`), or with fuzz_main.c's main()
 * replaying the saved corpus (`make test`).
 */
#ifndef NVP_FUZZ_H
#define NVP_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "nvpoll/env.h"
#include "nvpoll/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant is a finding: say which, then stop so the fuzzer saves the input. */
#define FZ_CHECK(cond, ...)                                                   \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "fuzz: %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                         \
			fprintf(stderr, "\n");                                \
			abort();                                              \
		}                                                             \
	} while (0)

static void
fz_log_silent(enum nvp_log_level level, const char *component, const char *msg)
{
	(void)level;
	(void)component;
	(void)msg;
}

/* The environment without hugepages or PCI; the library's messages are dropped (bad
 * input makes it log on every run). */
static inline int
fz_env_init(void)
{
	struct nvp_env_opts opts;

	if (getenv("FUZZ_VERBOSE") == NULL) {
		nvp_log_set_callback(fz_log_silent);
	}
	nvp_env_opts_init(&opts, sizeof(opts));
	opts.no_huge = true;
	opts.no_pci = true;
	opts.quiet = true;
	return nvp_env_init(&opts);
}

#endif /* NVP_FUZZ_H */

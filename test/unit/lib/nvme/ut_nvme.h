/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers shared by the unit tests of lib/nvme: environment set-up, a log sink that
 * remembers messages (so a test can check that an error names what it should), and the
 * CUnit main. Included once per test program, after the .c under test.
 */
#ifndef UT_NVME_H
#define UT_NVME_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "nvpoll/env.h"
#include "nvpoll/log.h"

static char g_ut_log[8192];

static void
ut_log_cb(enum nvp_log_level level, const char *component, const char *msg)
{
	size_t used = strlen(g_ut_log);

	(void)component;
	if (level <= NVP_LOG_WARN && used + strlen(msg) + 2 < sizeof(g_ut_log)) {
		memcpy(g_ut_log + used, msg, strlen(msg));
		g_ut_log[used + strlen(msg)] = '\n';
		g_ut_log[used + strlen(msg) + 1] = '\0';
	}
	if (getenv("UT_VERBOSE") != NULL) {
		fprintf(stderr, "log: %s\n", msg);
	}
}

static inline void
ut_log_clear(void)
{
	g_ut_log[0] = '\0';
}

/* True if something logged since the last ut_log_clear() contains @s. */
static inline int
ut_log_has(const char *s)
{
	return strstr(g_ut_log, s) != NULL;
}

static inline int
ut_env_init(void)
{
	struct nvp_env_opts opts;

	nvp_log_set_callback(ut_log_cb);
	nvp_env_opts_init(&opts, sizeof(opts));
	opts.no_huge = true;
	opts.no_pci = true;
	opts.quiet = true;
	return nvp_env_init(&opts);
}

/* Run the registered suites; exit status 0 only if every assertion passed. */
static inline int
ut_run(void)
{
	unsigned int failures;

	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}

#endif /* UT_NVME_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests for lib/util/log.c: levels, $NVP_LOG_LEVEL, callback, stderr format, threads. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.c"

#include "ut_main.h"

#define MAX_SEEN 16

static struct {
	int n;
	enum nvp_log_level level[MAX_SEEN];
	char component[MAX_SEEN][32];
	char msg[MAX_SEEN][LOG_MSG_MAX + 8];
} g_seen;

static void
record(enum nvp_log_level level, const char *component, const char *msg)
{
	if (g_seen.n < MAX_SEEN) {
		g_seen.level[g_seen.n] = level;
		snprintf(g_seen.component[g_seen.n], sizeof(g_seen.component[0]), "%s", component);
		snprintf(g_seen.msg[g_seen.n], sizeof(g_seen.msg[0]), "%s", msg);
	}
	g_seen.n++;
}

static void
reset(void)
{
	memset(&g_seen, 0, sizeof(g_seen));
	nvp_log_set_callback(NULL);
	atomic_store(&g_level, LEVEL_UNSET);
	unsetenv("NVP_LOG_LEVEL");
}

static void
test_level_parse(void)
{
	CU_ASSERT_EQUAL(nvp_log_level_parse("error"), NVP_LOG_ERROR);
	CU_ASSERT_EQUAL(nvp_log_level_parse("warn"), NVP_LOG_WARN);
	CU_ASSERT_EQUAL(nvp_log_level_parse("warning"), NVP_LOG_WARN);
	CU_ASSERT_EQUAL(nvp_log_level_parse("notice"), NVP_LOG_NOTICE);
	CU_ASSERT_EQUAL(nvp_log_level_parse("info"), NVP_LOG_INFO);
	CU_ASSERT_EQUAL(nvp_log_level_parse("debug"), NVP_LOG_DEBUG);
	CU_ASSERT_EQUAL(nvp_log_level_parse("DEBUG"), NVP_LOG_DEBUG);
	CU_ASSERT_EQUAL(nvp_log_level_parse("0"), NVP_LOG_ERROR);
	CU_ASSERT_EQUAL(nvp_log_level_parse("4"), NVP_LOG_DEBUG);
	CU_ASSERT_EQUAL(nvp_log_level_parse("5"), -1);
	CU_ASSERT_EQUAL(nvp_log_level_parse("-1"), -1);
	CU_ASSERT_EQUAL(nvp_log_level_parse("10"), -1);
	CU_ASSERT_EQUAL(nvp_log_level_parse(""), -1);
	CU_ASSERT_EQUAL(nvp_log_level_parse("verbose"), -1);
	CU_ASSERT_EQUAL(nvp_log_level_parse(NULL), -1);
}

static void
test_level_from_environment(void)
{
	reset();
	CU_ASSERT_EQUAL(nvp_log_get_level(), NVP_LOG_NOTICE); /* default */
	reset();
	setenv("NVP_LOG_LEVEL", "debug", 1);
	CU_ASSERT_EQUAL(nvp_log_get_level(), NVP_LOG_DEBUG);
	reset();
	setenv("NVP_LOG_LEVEL", "1", 1);
	CU_ASSERT_EQUAL(nvp_log_get_level(), NVP_LOG_WARN);
	reset();
	setenv("NVP_LOG_LEVEL", "none", 1);
	CU_ASSERT_EQUAL(nvp_log_get_level(), NVP_LOG_DISABLED);
	reset();
	setenv("NVP_LOG_LEVEL", "bogus", 1); /* warns once on stderr, keeps the default */
	CU_ASSERT_EQUAL(nvp_log_get_level(), NVP_LOG_NOTICE);
	/* A set level wins over the environment. */
	reset();
	setenv("NVP_LOG_LEVEL", "debug", 1);
	nvp_log_set_level(NVP_LOG_ERROR);
	CU_ASSERT_EQUAL(nvp_log_get_level(), NVP_LOG_ERROR);
	reset();
}

static void
test_set_level_filters(void)
{
	reset();
	nvp_log_set_callback(record);
	nvp_log_set_level(NVP_LOG_WARN);
	nvp_log(NVP_LOG_ERROR, "c", "e");
	nvp_log(NVP_LOG_WARN, "c", "w");
	nvp_log(NVP_LOG_NOTICE, "c", "n");
	nvp_log(NVP_LOG_DEBUG, "c", "d");
	CU_ASSERT_EQUAL(g_seen.n, 2);
	CU_ASSERT_EQUAL(g_seen.level[0], NVP_LOG_ERROR);
	CU_ASSERT_EQUAL(g_seen.level[1], NVP_LOG_WARN);

	nvp_log_set_level(NVP_LOG_DISABLED);
	nvp_log(NVP_LOG_ERROR, "c", "e");
	CU_ASSERT_EQUAL(g_seen.n, 2);
	/* A level outside the enum is clamped, and never logs "disabled" messages. */
	nvp_log_set_level((enum nvp_log_level)17);
	CU_ASSERT_EQUAL(nvp_log_get_level(), NVP_LOG_DEBUG);
	nvp_log_set_level((enum nvp_log_level) - 5);
	CU_ASSERT_EQUAL(nvp_log_get_level(), NVP_LOG_DISABLED);
	nvp_log_set_level(NVP_LOG_DEBUG);
	nvp_log(NVP_LOG_DISABLED, "c", "never");
	CU_ASSERT_EQUAL(g_seen.n, 2);
	reset();
}

static void
test_callback_message(void)
{
	char big[LOG_MSG_MAX * 2];

	reset();
	nvp_log_set_callback(record);
	nvp_log_set_level(NVP_LOG_DEBUG);
	nvp_log(NVP_LOG_INFO, "emu", "value %d of %s\n", 42, "x");
	CU_ASSERT_EQUAL(g_seen.n, 1);
	CU_ASSERT_EQUAL(g_seen.level[0], NVP_LOG_INFO);
	CU_ASSERT_STRING_EQUAL(g_seen.component[0], "emu");
	CU_ASSERT_STRING_EQUAL(g_seen.msg[0], "value 42 of x"); /* trailing newline dropped */
	nvp_log(NVP_LOG_INFO, NULL, "no component");
	CU_ASSERT_STRING_EQUAL(g_seen.component[1], "nvpoll");

	/* The macros use NVP_LOG_COMPONENT ("nvpoll" here, not defined by this file). */
	NVP_ERRLOG("macro %s", "err");
	CU_ASSERT_EQUAL(g_seen.level[2], NVP_LOG_ERROR);
	CU_ASSERT_STRING_EQUAL(g_seen.component[2], "nvpoll");
	CU_ASSERT_STRING_EQUAL(g_seen.msg[2], "macro err");

	/* Too long: truncated to the buffer, ending in "...". */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	nvp_log(NVP_LOG_ERROR, "c", "%s", big);
	CU_ASSERT_EQUAL(strlen(g_seen.msg[3]), LOG_MSG_MAX - 1);
	CU_ASSERT_STRING_EQUAL(g_seen.msg[3] + LOG_MSG_MAX - 4, "...");
	reset();
}

/* Run @fn with stderr redirected to a temporary file; return what was written. */
static size_t
capture_stderr(void (*fn)(void), char *out, size_t outlen)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	CU_ASSERT_FATAL(tmp != NULL && saved >= 0);
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	fn();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, outlen - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
	return n;
}

static void
log_two_lines(void)
{
	nvp_log(NVP_LOG_WARN, "env", "no hugepages: %d free", 0);
	nvp_log(NVP_LOG_ERROR, "nvme", "timeout\n");
	nvp_log(NVP_LOG_DEBUG, "nvme", "dropped at notice");
}

static void
test_stderr_format(void)
{
	char out[512];

	reset();
	nvp_log_set_level(NVP_LOG_NOTICE);
	capture_stderr(log_two_lines, out, sizeof(out));
	CU_ASSERT_STRING_EQUAL(out, "nvpoll env: warning: no hugepages: 0 free\n"
				    "nvpoll nvme: error: timeout\n");
	/* A callback replaces the sink; NULL restores it. */
	nvp_log_set_callback(record);
	capture_stderr(log_two_lines, out, sizeof(out));
	CU_ASSERT_STRING_EQUAL(out, "");
	CU_ASSERT_EQUAL(g_seen.n, 2);
	nvp_log_set_callback(NULL);
	capture_stderr(log_two_lines, out, sizeof(out));
	CU_ASSERT_EQUAL(strncmp(out, "nvpoll env: warning: ", 21), 0);
	reset();
}

#define THREADS 4
#define PER_THREAD 500

static void *
log_thread(void *arg)
{
	long id = (long)arg;
	int i;

	for (i = 0; i < PER_THREAD; i++) {
		nvp_log(NVP_LOG_NOTICE, "thr", "thread %ld message %d %s", id, i,
			"padding-padding-padding-padding-padding-padding");
	}
	return NULL;
}

static void
log_from_threads(void)
{
	pthread_t t[THREADS];
	long i;

	for (i = 0; i < THREADS; i++) {
		pthread_create(&t[i], NULL, log_thread, (void *)i);
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
	}
}

static void
test_threads_do_not_interleave(void)
{
	static char out[THREADS * PER_THREAD * 128];
	char *line, *save = NULL;
	int lines = 0, good = 0;

	reset();
	nvp_log_set_level(NVP_LOG_NOTICE);
	capture_stderr(log_from_threads, out, sizeof(out));
	for (line = strtok_r(out, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		long id;
		int i, n = 0;

		lines++;
		if (sscanf(line, "nvpoll thr: notice: thread %ld message %d %*s%n", &id, &i, &n) ==
			    2 &&
		    line[n] == '\0') {
			good++;
		}
	}
	CU_ASSERT_EQUAL(lines, THREADS * PER_THREAD);
	CU_ASSERT_EQUAL(good, THREADS * PER_THREAD);
	reset();
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_level_parse),       UT_TEST(test_level_from_environment),
		UT_TEST(test_set_level_filters), UT_TEST(test_callback_message),
		UT_TEST(test_stderr_format),     UT_TEST(test_threads_do_not_interleave),
	};

	return ut_run("log", tests, NVP_COUNTOF(tests));
}

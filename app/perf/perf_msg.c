/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_perf's messages about what went wrong, kept for --json as well as printed. A usage
 * error (exit 2) is printed at once as "PROG: what\nTry 'PROG --help' ...", the hint once;
 * a failure (exit 1) is printed once, when the run ends, as "nvp_perf: the run failed:
 * why". The first of each is kept: it is the cause, what follows is its consequence.
 *
 * The library logs its own errors (the cause a return code cannot carry: "Connection
 * refused", the bad key of a configuration). perf_log_capture() passes them through to
 * standard error as the default sink does and keeps the first error since perf_log_mark(),
 * so the JSON of a failed run says why, not "message above".
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "nvpoll/log.h"

#include "perf.h"

static const char *g_prog = "nvp_perf";
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_usage[PERF_MSG_MAX];     /* the first usage error */
static char g_failure[PERF_MSG_MAX];   /* the first failure */
static char g_log_error[PERF_MSG_MAX]; /* the library's first error since the mark */

void
perf_msg_init(const char *prog)
{
	g_prog = prog;
	pthread_mutex_lock(&g_lock);
	g_usage[0] = g_failure[0] = g_log_error[0] = '\0';
	pthread_mutex_unlock(&g_lock);
}

const char *
perf_msg_prog(void)
{
	return g_prog;
}

static void
keep_first(char *dst, const char *msg)
{
	pthread_mutex_lock(&g_lock);
	if (dst[0] == '\0') {
		snprintf(dst, PERF_MSG_MAX, "%s", msg);
	}
	pthread_mutex_unlock(&g_lock);
}

int
perf_usage(const char *fmt, ...)
{
	char msg[PERF_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* the hint once: a library's message may name --help already */
	if (strstr(msg, "--help'") != NULL) {
		fprintf(stderr, "%s: %s\n", g_prog, msg);
	} else {
		fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n", g_prog, msg,
			g_prog);
	}
	keep_first(g_usage, msg);
	return -EINVAL;
}

void
perf_fail(const char *fmt, ...)
{
	char msg[PERF_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	keep_first(g_failure, msg);
}

/* Read under the lock: an I/O thread may be writing its failure. */
static const char *
copy_out(const char *src, char *buf, size_t len)
{
	pthread_mutex_lock(&g_lock);
	snprintf(buf, len, "%s", src);
	pthread_mutex_unlock(&g_lock);
	return buf[0] != '\0' ? buf : NULL;
}

const char *
perf_msg_usage(char *buf, size_t len)
{
	return copy_out(g_usage, buf, len);
}

const char *
perf_msg_failure(char *buf, size_t len)
{
	return copy_out(g_failure, buf, len);
}

/* ---- the library's log ---- */

static const char *
level_name(enum nvp_log_level level)
{
	static const char *const names[] = { "error", "warning", "notice", "info", "debug" };

	return (int)level >= 0 && (int)level < 5 ? names[level] : "?";
}

/* As the default sink prints (one call, so threads do not interleave), and the first
 * error kept. */
static void
log_sink(enum nvp_log_level level, const char *component, const char *msg)
{
	fprintf(stderr, "nvpoll %s: %s: %s\n", component, level_name(level), msg);
	if (level == NVP_LOG_ERROR) {
		keep_first(g_log_error, msg);
	}
}

void
perf_log_capture(void)
{
	nvp_log_set_callback(log_sink);
}

void
perf_log_mark(void)
{
	pthread_mutex_lock(&g_lock);
	g_log_error[0] = '\0';
	pthread_mutex_unlock(&g_lock);
}

const char *
perf_cause(int rc, char *buf, size_t len)
{
	if (copy_out(g_log_error, buf, len) == NULL) {
		snprintf(buf, len, "%s", strerror(rc < 0 ? -rc : rc));
	}
	return buf;
}

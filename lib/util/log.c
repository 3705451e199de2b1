/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Logging: a level filter, a stderr sink and a replaceable callback.
 *
 * Every message is formatted into a stack buffer (no allocation, so logging is safe on
 * the I/O path and from any thread) and written to stderr with one write(2), so lines
 * from different threads do not interleave. The level and the callback are atomics;
 * nothing here takes a lock.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "nvpoll/log.h"
#include "nvpoll/util.h"

/* A message longer than this is truncated (and ends in "..."). */
#define LOG_MSG_MAX 1024

/* g_level holds LEVEL_UNSET until first use reads $NVP_LOG_LEVEL or a setter runs. */
#define LEVEL_UNSET (-100)

static _Atomic int g_level = LEVEL_UNSET;
static _Atomic(nvp_log_fn) g_callback;

static const char *const g_level_names[] = {
	[NVP_LOG_ERROR] = "error", [NVP_LOG_WARN] = "warn",   [NVP_LOG_NOTICE] = "notice",
	[NVP_LOG_INFO] = "info",   [NVP_LOG_DEBUG] = "debug",
};

int
nvp_log_level_parse(const char *str)
{
	int i;

	if (str == NULL || str[0] == '\0') {
		return -1;
	}
	if (str[0] >= '0' && str[0] <= '4' && str[1] == '\0') {
		return str[0] - '0';
	}
	if (strcasecmp(str, "warning") == 0) {
		return NVP_LOG_WARN;
	}
	for (i = NVP_LOG_ERROR; i <= NVP_LOG_DEBUG; i++) {
		if (strcasecmp(str, g_level_names[i]) == 0) {
			return i;
		}
	}
	return -1;
}

/* Level from $NVP_LOG_LEVEL: a level name, 0-4, or "none"/"off"/"disabled". */
static int
level_from_environment(void)
{
	const char *str = getenv("NVP_LOG_LEVEL");
	int level;

	if (str == NULL || str[0] == '\0') {
		return NVP_LOG_NOTICE;
	}
	if (strcasecmp(str, "none") == 0 || strcasecmp(str, "off") == 0 ||
	    strcasecmp(str, "disabled") == 0 || strcmp(str, "-1") == 0) {
		return NVP_LOG_DISABLED;
	}
	level = nvp_log_level_parse(str);
	if (level < 0) {
		/* Cannot log through ourselves yet; say it once, directly. */
		fprintf(stderr,
			"nvpoll log: warn: NVP_LOG_LEVEL=\"%s\" is not one of error, warn, "
			"notice, info, debug, 0-4 or none; using notice\n",
			str);
		return NVP_LOG_NOTICE;
	}
	return level;
}

static int
current_level(void)
{
	int level = atomic_load_explicit(&g_level, memory_order_relaxed);
	int expected = LEVEL_UNSET;

	if (nvp_likely(level != LEVEL_UNSET)) {
		return level;
	}
	level = level_from_environment();
	/* A concurrent nvp_log_set_level() wins over the environment. */
	if (!atomic_compare_exchange_strong(&g_level, &expected, level)) {
		level = expected;
	}
	return level;
}

void
nvp_log_set_level(enum nvp_log_level level)
{
	int l = (int)level;

	if (l < NVP_LOG_DISABLED) {
		l = NVP_LOG_DISABLED;
	} else if (l > NVP_LOG_DEBUG) {
		l = NVP_LOG_DEBUG;
	}
	atomic_store(&g_level, l);
}

enum nvp_log_level
nvp_log_get_level(void)
{
	return (enum nvp_log_level)current_level();
}

void
nvp_log_set_callback(nvp_log_fn fn)
{
	atomic_store(&g_callback, fn);
}

/* write(2) all of @buf to stderr, retrying on EINTR and short writes. */
static void
write_stderr(const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t rc = write(STDERR_FILENO, buf, len);

		if (rc < 0) {
			if (errno == EINTR) {
				continue;
			}
			return;
		}
		buf += rc;
		len -= (size_t)rc;
	}
}

static const char *
level_name(enum nvp_log_level level)
{
	if ((int)level < NVP_LOG_ERROR || (int)level > NVP_LOG_DEBUG) {
		return "?";
	}
	return level == NVP_LOG_WARN ? "warning" : g_level_names[level];
}

/* Format "msg" into @buf without a trailing newline; mark truncation with "...". */
static size_t
format_msg(char *buf, size_t size, const char *fmt, va_list ap)
{
	int n = vsnprintf(buf, size, fmt, ap);
	size_t len;

	if (n < 0) {
		buf[0] = '\0';
		return 0;
	}
	len = (size_t)n;
	if (len >= size) {
		len = size - 1;
		memcpy(buf + len - 3, "...", 3);
	}
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) {
		buf[--len] = '\0';
	}
	return len;
}

void
nvp_vlog(enum nvp_log_level level, const char *component, const char *fmt, va_list ap)
{
	char msg[LOG_MSG_MAX];
	char line[LOG_MSG_MAX + 64];
	nvp_log_fn fn;
	int n;

	if ((int)level < NVP_LOG_ERROR || (int)level > current_level()) {
		return;
	}
	if (component == NULL) {
		component = "nvpoll";
	}
	format_msg(msg, sizeof(msg), fmt, ap);

	fn = atomic_load(&g_callback);
	if (fn != NULL) {
		fn(level, component, msg);
		return;
	}
	/* "nvpoll <component>: <level>: msg\n" as one write so threads do not interleave. */
	n = snprintf(line, sizeof(line), "nvpoll %s: %s: %s\n", component, level_name(level), msg);
	if (n < 0) {
		return;
	}
	if ((size_t)n >= sizeof(line)) {
		n = sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	write_stderr(line, (size_t)n);
}

void
nvp_log(enum nvp_log_level level, const char *component, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	nvp_vlog(level, component, fmt, ap);
	va_end(ap);
}

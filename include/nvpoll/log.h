/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * \file
 * Logging. Messages go to stderr (or a callback) prefixed with the level and the
 * component; the library never prints to stdout.
 */
#ifndef NVPOLL_LOG_H
#define NVPOLL_LOG_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

enum nvp_log_level {
	NVP_LOG_DISABLED = -1,
	NVP_LOG_ERROR = 0,
	NVP_LOG_WARN = 1,
	NVP_LOG_NOTICE = 2,
	NVP_LOG_INFO = 3,
	NVP_LOG_DEBUG = 4,
};

/** Messages above @level are dropped. Default NVP_LOG_NOTICE, or $NVP_LOG_LEVEL. */
void nvp_log_set_level(enum nvp_log_level level);
enum nvp_log_level nvp_log_get_level(void);

/** Parse "error", "warn", "notice", "info", "debug" (or 0-4).
 * \return the level, or -1 (not an errno) for anything else. */
int nvp_log_level_parse(const char *str);

/** Replace the stderr sink; NULL restores it. */
typedef void (*nvp_log_fn)(enum nvp_log_level level, const char *component, const char *msg);
void nvp_log_set_callback(nvp_log_fn fn);

void nvp_log(enum nvp_log_level level, const char *component, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void nvp_vlog(enum nvp_log_level level, const char *component, const char *fmt, va_list ap);

#ifndef NVP_LOG_COMPONENT
#define NVP_LOG_COMPONENT "nvpoll"
#endif

#define NVP_ERRLOG(...) nvp_log(NVP_LOG_ERROR, NVP_LOG_COMPONENT, __VA_ARGS__)
#define NVP_WARNLOG(...) nvp_log(NVP_LOG_WARN, NVP_LOG_COMPONENT, __VA_ARGS__)
#define NVP_NOTICELOG(...) nvp_log(NVP_LOG_NOTICE, NVP_LOG_COMPONENT, __VA_ARGS__)
#define NVP_INFOLOG(...) nvp_log(NVP_LOG_INFO, NVP_LOG_COMPONENT, __VA_ARGS__)
#define NVP_DEBUGLOG(...) nvp_log(NVP_LOG_DEBUG, NVP_LOG_COMPONENT, __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif /* NVPOLL_LOG_H */

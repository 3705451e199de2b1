/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Callgrind's client requests for the bench programs that count instructions: the real
 * ones where valgrind's header is installed (scripts/pkgdep.sh installs valgrind), and
 * no-ops otherwise (the timed modes do not need them).
 */
#ifndef NVP_BENCH_CALLGRIND_H
#define NVP_BENCH_CALLGRIND_H

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif
#ifndef HAVE_CALLGRIND
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#define CALLGRIND_TOGGLE_COLLECT
#endif

#endif /* NVP_BENCH_CALLGRIND_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Running nvpoll's programs from a functional test: find them in the build tree and run
 * them with their output captured. Shared by the tests of hello_world, nvp_perf and nvp.
 */
#ifndef NVP_TEST_SUBPROC_H
#define NVP_TEST_SUBPROC_H

#include <stddef.h>

/*
 * Store in @path the program at @rel, relative to the directory of the running test
 * binary (e.g. "../../bin/nvp_perf"). \return 0 if it is executable, else -errno.
 */
int fx_find_program(const char *rel, char *path, size_t len);

/*
 * Run @prog with @args (shell words, already quoted), stdin from /dev/null, stdout and
 * stderr together into @out (NUL terminated, truncated to @outlen - 1 bytes).
 * \return its exit status, or -1 if it could not run or did not exit normally.
 */
int fx_run_capture(const char *prog, const char *args, char *out, size_t outlen);

/*
 * Run @prog with @argv (argv[0] first, NULL last), stdin from /dev/null, stdout and stderr
 * together into @out; after @after_s seconds send it @sig (SIGKILL 30 s later if it still
 * runs). \return its exit status, or -1 if it could not run or ended by a signal.
 */
int fx_run_signal(const char *prog, char *const argv[], unsigned int after_s, int sig, char *out,
		  size_t outlen);

#endif /* NVP_TEST_SUBPROC_H */

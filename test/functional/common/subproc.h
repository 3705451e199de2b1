/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Running programs from a functional test: find nvpoll's in the build tree, run any with
 * its output captured. Every run goes into the test's journal (command line, output, exit
 * status or signal); a test that fails prints its journal after its assertions, a test
 * that passes prints nothing. Suites get that by being made with fx_add_suite() (fx_main()
 * does). Shared by every test that runs a program.
 */
#ifndef NVP_TEST_SUBPROC_H
#define NVP_TEST_SUBPROC_H

#include <stddef.h>

#include <CUnit/CUnit.h>

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
 * Run @prog with @args (shell words, already quoted), stdin from the file @in, stdout and
 * stderr apart into *@out and *@err (malloc'd, NUL terminated, never NULL; the caller
 * frees them), the length of stdout in *@out_len if it is not NULL.
 * \return its exit status, or -1 if it could not run or did not exit normally.
 */
int fx_run_split(const char *prog, const char *args, const char *in, char **out, size_t *out_len,
		 char **err);

/*
 * Run the shell command @cmd, stdin from /dev/null, stdout and stderr into the journal
 * only. \return its exit status, or -1 if it could not run or did not exit normally.
 */
int fx_run_shell(const char *cmd);

/*
 * Run @prog with @argv (argv[0] first, NULL last), stdin from /dev/null, stdout and stderr
 * together into @out; after @after_s seconds send it @sig (SIGKILL 30 s later if it still
 * runs). \return its exit status, or -1 if it could not run or ended by a signal.
 */
int fx_run_signal(const char *prog, char *const argv[], unsigned int after_s, int sig, char *out,
		  size_t outlen);
/*
 * The same, with the @after_s seconds counted from when @ready first appears in the output
 * (or from 60 s after the start if it never does), so that a program slow to start on a
 * loaded machine is not signalled before it is running.
 */
int fx_run_signal_ready(const char *prog, char *const argv[], const char *ready,
			unsigned int after_s, int sig, char *out, size_t outlen);

/* A CUnit suite whose tests print the programs they ran (fx_run_*) when they fail. */
CU_pSuite fx_add_suite(const char *name);

#endif /* NVP_TEST_SUBPROC_H */

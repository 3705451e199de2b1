/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "subproc.h"

int
fx_find_program(const char *rel, char *path, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0) {
		return -errno;
	}
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash == NULL) {
		return -EINVAL;
	}
	*slash = '\0';
	if (snprintf(path, len, "%s/%s", self, rel) >= (int)len) {
		return -ENAMETOOLONG;
	}
	return access(path, X_OK) == 0 ? 0 : -errno;
}

/* ---- the journal: what the running test ran, printed if the test fails ---- */

static FILE *g_journal;               /* NULL until the first run */
static unsigned int g_fails_at_start; /* CUnit's failed assertions as the test began */

/* How @status (from wait()) ended, in words. */
static void
describe_status(int status, char *buf, size_t len)
{
	if (status == -1) {
		snprintf(buf, len, "could not run it");
	} else if (WIFEXITED(status)) {
		snprintf(buf, len, "exit status %d%s", WEXITSTATUS(status),
			 WEXITSTATUS(status) == 127 ? " (not found?)" : "");
	} else if (WIFSIGNALED(status)) {
		snprintf(buf, len, "killed by signal %d (%s)%s", WTERMSIG(status),
			 strsignal(WTERMSIG(status)), WCOREDUMP(status) ? ", core dumped" : "");
	} else {
		snprintf(buf, len, "wait status %#x", (unsigned int)status);
	}
}

static void
journal_text(const char *label, const char *text)
{
	size_t n;

	if (text == NULL || text[0] == '\0') {
		fprintf(g_journal, "      (no %s)\n", label);
		return;
	}
	fprintf(g_journal, "      --- %s ---\n", label);
	n = strlen(text);
	fputs(text, g_journal);
	if (text[n - 1] != '\n') {
		fputc('\n', g_journal);
	}
}

/* One run: its command line, its output (@err NULL: both streams were in @out), how it
 * ended. */
static void
journal(const char *cmdline, const char *out, const char *err, int status)
{
	char how[128];

	if (g_journal == NULL) {
		g_journal = tmpfile();
		if (g_journal == NULL) {
			return;
		}
	}
	describe_status(status, how, sizeof(how));
	fprintf(g_journal, "    $ %s\n", cmdline);
	journal_text(err == NULL ? "stdout+stderr" : "stdout", out);
	if (err != NULL) {
		journal_text("stderr", err);
	}
	fprintf(g_journal, "      --- %s ---\n", how);
}

static void
journal_reset(void)
{
	if (g_journal != NULL) {
		rewind(g_journal);
		if (ftruncate(fileno(g_journal), 0) != 0) {
			fclose(g_journal);
			g_journal = NULL;
		}
	}
}

static void
test_begin(void)
{
	journal_reset();
	g_fails_at_start = CU_get_number_of_failures();
}

/* A failed test (an assertion failed since test_begin(), fatal ones too): its runs. */
static void
test_end(void)
{
	char buf[4096];
	size_t n;

	if (g_journal != NULL && ftell(g_journal) > 0 &&
	    CU_get_number_of_failures() > g_fails_at_start) {
		fflush(stdout);
		printf("\n    The programs this test ran (it failed):\n");
		rewind(g_journal);
		while ((n = fread(buf, 1, sizeof(buf), g_journal)) > 0) {
			fwrite(buf, 1, n, stdout);
		}
		fflush(stdout);
	}
	journal_reset();
}

CU_pSuite
fx_add_suite(const char *name)
{
	return CU_add_suite_with_setup_and_teardown(name, NULL, NULL, test_begin, test_end);
}

/* ---- running ---- */

/* Run @cmd with sh, stdout+stderr read into @out (may be NULL). \return the wait status or
 * -1. */
static int
run_sh(const char *cmd, char *out, size_t outlen)
{
	char sink[4096];
	size_t used = 0;
	FILE *p = popen(cmd, "r");

	if (p == NULL) {
		return -1;
	}
	for (;;) {
		size_t n;

		if (out != NULL && used + 1 < outlen) {
			n = fread(out + used, 1, outlen - 1 - used, p);
			used += n;
		} else {
			n = fread(sink, 1, sizeof(sink), p); /* keep the child from blocking */
		}
		if (n == 0) {
			break;
		}
	}
	if (out != NULL && outlen > 0) {
		out[used] = '\0';
	}
	return pclose(p);
}

static int
exit_status(int status)
{
	return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int
fx_run_capture(const char *prog, const char *args, char *out, size_t outlen)
{
	char cmd[PATH_MAX + 4096], shown[PATH_MAX + 4096];
	int status;

	snprintf(shown, sizeof(shown), "%s %s", prog, args);
	if (snprintf(cmd, sizeof(cmd), "'%s' %s 2>&1 </dev/null", prog, args) >= (int)sizeof(cmd)) {
		CU_FAIL("command line too long");
		journal(shown, "", NULL, -1);
		out[0] = '\0';
		return -1;
	}
	status = run_sh(cmd, out, outlen);
	journal(shown, out, NULL, status);
	return exit_status(status);
}

/* The whole of @path, NUL terminated (an empty string if it cannot be read). */
static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	size_t cap = 4096, used = 0, n;
	char *buf = malloc(cap);

	while (buf != NULL && f != NULL && (n = fread(buf + used, 1, cap - used - 1, f)) > 0) {
		used += n;
		if (cap - used - 1 == 0) {
			char *bigger = realloc(buf, cap * 2);

			if (bigger == NULL) {
				break;
			}
			buf = bigger;
			cap *= 2;
		}
	}
	if (f != NULL) {
		fclose(f);
	}
	if (buf == NULL) {
		buf = calloc(1, 1);
		used = 0;
	} else {
		buf[used] = '\0';
	}
	if (len != NULL) {
		*len = used;
	}
	return buf;
}

int
fx_run_split(const char *prog, const char *args, const char *in, char **out, size_t *out_len,
	     char **err)
{
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX - 64], opath[PATH_MAX], epath[PATH_MAX];
	char cmd[3 * PATH_MAX + 4096], shown[2 * PATH_MAX + 4096];
	int status = -1;

	snprintf(dir, sizeof(dir), "%s/fx_run.XXXXXX", tmp != NULL ? tmp : "/tmp");
	snprintf(shown, sizeof(shown), "%s %s%s%s", prog, args, strcmp(in, "/dev/null") ? " <" : "",
		 strcmp(in, "/dev/null") ? in : "");
	if (mkdtemp(dir) == NULL) {
		CU_FAIL("mkdtemp for a program's output");
	} else {
		snprintf(opath, sizeof(opath), "%s/stdout", dir);
		snprintf(epath, sizeof(epath), "%s/stderr", dir);
		if (snprintf(cmd, sizeof(cmd), "'%s' %s >'%s' 2>'%s' <'%s'", prog, args, opath,
			     epath, in) >= (int)sizeof(cmd)) {
			CU_FAIL("command line too long");
		} else {
			status = run_sh(cmd, NULL, 0);
		}
	}
	*out = slurp(opath, out_len);
	*err = slurp(epath, NULL);
	unlink(opath);
	unlink(epath);
	rmdir(dir);
	journal(shown, *out, *err, status);
	return exit_status(status);
}

int
fx_run_shell(const char *cmd)
{
	char full[PATH_MAX + 4096], out[16384];
	int status;

	if (snprintf(full, sizeof(full), "%s 2>&1 </dev/null", cmd) >= (int)sizeof(full)) {
		CU_FAIL("command line too long");
		journal(cmd, "", NULL, -1);
		return -1;
	}
	status = run_sh(full, out, sizeof(out));
	journal(cmd, out, NULL, status);
	return exit_status(status);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Read what @fd has until @deadline (or EOF); \return false at EOF. */
static bool
drain_until(int fd, double deadline, char *out, size_t outlen, size_t *used)
{
	char sink[4096];

	while (now_s() < deadline) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int ms = (int)((deadline - now_s()) * 1000) + 1;
		ssize_t n;

		if (poll(&pfd, 1, ms) <= 0) {
			continue;
		}
		if (*used + 1 < outlen) {
			n = read(fd, out + *used, outlen - 1 - *used);
		} else {
			n = read(fd, sink, sizeof(sink)); /* keep the child from blocking */
		}
		if (n <= 0) {
			return false;
		}
		if (*used + 1 < outlen) {
			*used += (size_t)n;
		}
	}
	return true;
}

static void
journal_argv(const char *prog, char *const argv[], unsigned int after_s, int sig, const char *out,
	     int status)
{
	char shown[PATH_MAX + 4096];
	size_t used;
	int i;

	used = (size_t)snprintf(shown, sizeof(shown), "%s", prog);
	for (i = 1; argv[i] != NULL && used < sizeof(shown); i++) {
		used += (size_t)snprintf(shown + used, sizeof(shown) - used, " '%s'", argv[i]);
	}
	if (used < sizeof(shown)) {
		snprintf(shown + used, sizeof(shown) - used, "   (signal %d after %u s)", sig,
			 after_s);
	}
	journal(shown, out, NULL, status);
}

int
fx_run_signal(const char *prog, char *const argv[], unsigned int after_s, int sig, char *out,
	      size_t outlen)
{
	return fx_run_signal_ready(prog, argv, NULL, after_s, sig, out, outlen);
}

/* Read what @fd has until @ready is in @out (false at EOF), for at most FX_READY_S. */
#define FX_READY_S 60
static bool
drain_until_ready(int fd, const char *ready, char *out, size_t outlen, size_t *used)
{
	double deadline = now_s() + FX_READY_S;

	while (now_s() < deadline) {
		out[*used] = '\0';
		if (strstr(out, ready) != NULL) {
			return true;
		}
		if (!drain_until(fd, now_s() + 0.05, out, outlen, used)) {
			return false;
		}
	}
	return true;
}

int
fx_run_signal_ready(const char *prog, char *const argv[], const char *ready, unsigned int after_s,
		    int sig, char *out, size_t outlen)
{
	int fds[2], status = 0;
	size_t used = 0;
	pid_t pid;

	if (pipe(fds) != 0) {
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		dup2(null, 0);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		execv(prog, argv);
		_exit(127);
	}
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		return -1;
	}
	if ((ready == NULL || drain_until_ready(fds[0], ready, out, outlen, &used)) &&
	    drain_until(fds[0], now_s() + after_s, out, outlen, &used)) {
		kill(pid, sig);
		/* the rest of the output; SIGKILL if it does not end within 30 s */
		if (drain_until(fds[0], now_s() + 30, out, outlen, &used)) {
			kill(pid, SIGKILL);
		}
	}
	close(fds[0]);
	out[used] = '\0';
	if (waitpid(pid, &status, 0) != pid) {
		status = -1;
	}
	journal_argv(prog, argv, after_s, sig, out, status);
	return exit_status(status);
}

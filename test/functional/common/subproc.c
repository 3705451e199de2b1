/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
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

int
fx_run_capture(const char *prog, const char *args, char *out, size_t outlen)
{
	char cmd[PATH_MAX + 4096];
	size_t used = 0;
	FILE *p;
	int status;

	if (snprintf(cmd, sizeof(cmd), "'%s' %s 2>&1 </dev/null", prog, args) >= (int)sizeof(cmd)) {
		fprintf(stderr, "  %s %s: command line too long\n", prog, args);
		return -1;
	}
	p = popen(cmd, "r");
	if (p == NULL) {
		return -1;
	}
	while (used + 1 < outlen) {
		size_t n = fread(out + used, 1, outlen - 1 - used, p);

		if (n == 0) {
			break;
		}
		used += n;
	}
	out[used] = '\0';
	status = pclose(p);
	if (status == -1 || !WIFEXITED(status)) {
		fprintf(stderr, "  %s %s: did not exit normally (%d)\n", prog, args, status);
		return -1;
	}
	return WEXITSTATUS(status);
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

int
fx_run_signal(const char *prog, char *const argv[], unsigned int after_s, int sig, char *out,
	      size_t outlen)
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
	if (drain_until(fds[0], now_s() + after_s, out, outlen, &used)) {
		kill(pid, sig);
		/* the rest of the output; SIGKILL if it does not end within 30 s */
		if (drain_until(fds[0], now_s() + 30, out, outlen, &used)) {
			kill(pid, SIGKILL);
		}
	}
	close(fds[0]);
	out[used] = '\0';
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
		return -1;
	}
	return WEXITSTATUS(status);
}

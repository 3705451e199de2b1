/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
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

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The target process of bench/tcp_failover (tf.h): `nvp serve -r DEV -p PORT`, started
 * with posix_spawn (its output appended to a log file), found ready by the "transport ID:"
 * line it prints once it listens, killed with a signal and reaped.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nvpoll/util.h"
#include "tf.h"

extern char **environ;

int
tf_target_spawn(struct tf_target *t)
{
	posix_spawn_file_actions_t fa;
	char port[8];
	char *argv[] = { t->nvp, "serve", "-r", t->dev, "-p", port, NULL };
	FILE *f;
	int rc;

	snprintf(port, sizeof(port), "%u", t->port);
	f = fopen(t->log, "a");
	if (f == NULL) {
		return -errno;
	}
	fseek(f, 0, SEEK_END);
	t->log_off = ftell(f);
	fclose(f);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, t->log, O_WRONLY | O_APPEND | O_CREAT, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	rc = posix_spawn(&t->pid, t->nvp, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		t->pid = 0;
		return -rc;
	}
	t->starts++;
	t->trid[0] = '\0';
	return 0;
}

/* "transport ID: trtype:TCP ... trsvcid:PORT ..." in this start's part of the log. */
static int
find_trid(struct tf_target *t)
{
	char line[1024];
	const char *key = "transport ID: ", *svc;
	FILE *f = fopen(t->log, "r");
	int found = 0;

	if (f == NULL) {
		return 0;
	}
	fseek(f, t->log_off, SEEK_SET);
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, key, strlen(key)) != 0 || strchr(line, '\n') == NULL) {
			continue;
		}
		line[strcspn(line, "\n")] = '\0';
		nvp_strlcpy(t->trid, line + strlen(key), sizeof(t->trid));
		svc = strstr(t->trid, "trsvcid:");
		if (svc != NULL) {
			t->port = (uint16_t)strtoul(svc + 8, NULL, 10);
		}
		found = 1;
	}
	fclose(f);
	return found;
}

int
tf_target_ready(struct tf_target *t)
{
	int status;

	if (t->pid == 0) {
		return -ECHILD;
	}
	if (find_trid(t)) {
		return 1;
	}
	if (waitpid(t->pid, &status, WNOHANG) == t->pid) {
		t->pid = 0;
		return -ECHILD;
	}
	return 0;
}

void
tf_target_kill(struct tf_target *t, int sig)
{
	if (t->pid == 0) {
		return;
	}
	kill(t->pid, sig);
	(void)waitpid(t->pid, NULL, 0);
	t->pid = 0;
}

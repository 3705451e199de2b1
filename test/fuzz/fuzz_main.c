/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The replay driver for builds without libFuzzer (`make test`, any compiler): feeds every
 * file named on the command line, or every file of a directory named there, to the
 * harness's LLVMFuzzerTestOneInput(). With no argument, replays the harness's saved
 * corpus, test/fuzz/corpus/<name>/ under the current directory, <name> being the
 * program's file name. Exits 0 when every
 * input ran (a finding aborts), 2 for a path it cannot read, 77 for an empty corpus.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

#define FZ_MAX_INPUT (1u << 20)

static int
replay_file(const char *path)
{
	static uint8_t buf[FZ_MAX_INPUT];
	uint8_t *copy;
	FILE *f = fopen(path, "rb");
	size_t n;

	if (f == NULL) {
		fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
		return -1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	/* An exact-size copy, so ASan sees a read past the input's end. */
	copy = malloc(n > 0 ? n : 1);
	if (copy == NULL) {
		return -1;
	}
	memcpy(copy, buf, n);
	(void)LLVMFuzzerTestOneInput(copy, n);
	free(copy);
	return 0;
}

static int
replay_dir(const char *dir, unsigned int *count)
{
	char path[4096];
	struct dirent **names;
	int i, n, rc = 0;

	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, "%s: cannot read: %s\n", dir, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.' && rc == 0) {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
			rc = replay_file(path);
			(*count)++;
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

static int
replay(const char *path, unsigned int *count)
{
	struct stat st;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		return replay_dir(path, count);
	}
	(*count)++;
	return replay_file(path);
}

int
main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/') != NULL ? strrchr(argv[0], '/') + 1 : argv[0];
	char dir[512];
	unsigned int count = 0;
	int i;

	if (argc < 2) {
		snprintf(dir, sizeof(dir), "test/fuzz/corpus/%s", name);
		if (replay(dir, &count) != 0) {
			return 2;
		}
	}
	for (i = 1; i < argc; i++) {
		if (replay(argv[i], &count) != 0) {
			return 2;
		}
	}
	printf("%s: %u inputs replayed, no finding\n", name, count);
	return count > 0 ? 0 : 77;
}

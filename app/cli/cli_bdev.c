/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp bdev-list: the bdevs a configuration makes, without running I/O on them.
 *
 *   nvp bdev-list --json-config bdev.json
 *   nvp bdev-list -c "nvme:name=emu0,trtype=emu,nn=2;malloc:name=m0,num_blocks=1024" -o json
 *
 * The configuration is loaded (controllers attached, files opened), listed, and torn
 * down again. A bad configuration is reported by the library (method, parameter and
 * place) and exits 1; a bad command line exits 2.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "nvpoll/bdev.h"
#include "nvpoll/env.h"
#include "nvpoll/nvme_mpath.h"

#include "nvp_cli.h"

static void
bdev_list_usage(FILE *f)
{
	fprintf(f, "usage: nvp bdev-list (--json-config FILE | -c CONFIG) [-o normal|json]\n"
		   "  -j, --json-config FILE  SPDK-style JSON configuration "
		   "({\"subsystems\":[{\"subsystem\":\"bdev\",...}]})\n"
		   "  -c, --config CONFIG     one-line form, e.g. "
		   "\"malloc:name=m0,num_blocks=1024;nvme:name=emu0,trtype=emu\"\n"
		   "  -o, --output-format F   normal (a table) or json\n"
		   "  -h, --help              this help\n");
}

static void
ops_string(const struct nvp_bdev *b, char *buf, size_t len)
{
	size_t n = 0;
	int t;

	buf[0] = '\0';
	for (t = 0; t < NVP_BDEV_NUM_IO_TYPES && n < len; t++) {
		if (nvp_bdev_io_type_supported(b, (enum nvp_bdev_io_type)t)) {
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n != 0 ? "," : "",
					      nvp_bdev_io_type_name((enum nvp_bdev_io_type)t));
		}
	}
}

static const char *
bdev_notes(const struct nvp_bdev *b)
{
	if (strcmp(nvp_bdev_get_module_name(b), "uring") != 0) {
		return "";
	}
	if (nvp_bdev_uring_is_iopoll(b)) {
		return "iopoll";
	}
	return nvp_bdev_uring_is_direct(b) ? "o_direct" : "page-cache";
}

static void
print_table(FILE *f)
{
	struct nvp_bdev *b;
	char ops[128];

	fprintf(f, "%-16s %-8s %10s %14s %12s %5s %-10s %s\n", "Name", "Module", "Block size",
		"Blocks", "Size (MiB)", "VWC", "Notes", "Operations");
	for (b = nvp_bdev_first(); b != NULL; b = nvp_bdev_next(b)) {
		ops_string(b, ops, sizeof(ops));
		fprintf(f, "%-16s %-8s %10" PRIu32 " %14" PRIu64 " %12.1f %5s %-10s %s\n",
			nvp_bdev_get_name(b), nvp_bdev_get_module_name(b),
			nvp_bdev_get_block_size(b), nvp_bdev_get_num_blocks(b),
			(double)nvp_bdev_get_num_blocks(b) * nvp_bdev_get_block_size(b) / 1048576.0,
			nvp_bdev_has_write_cache(b) ? "yes" : "no", bdev_notes(b), ops);
	}
}

/* An nvme_mpath bdev's policy and paths, their ANA states as last read. */
static void
mpath_json(struct json_object *o, struct nvp_nvme_mpath *mp)
{
	struct json_object *paths = json_object_new_array();
	char trid[NVP_NVME_TRARGS_MAX];

	json_object_object_add(
		o, "multipath",
		json_object_new_string(nvp_nvme_mpath_policy_name(nvp_nvme_mpath_get_policy(mp))));
	for (uint32_t i = 0; i < nvp_nvme_mpath_get_num_paths(mp); i++) {
		struct nvp_nvme_mpath_path_info info = { .info_size = sizeof(info) };
		struct json_object *p;

		if (nvp_nvme_mpath_get_path_info(mp, i, &info) != 0 ||
		    nvp_nvme_transport_id_fmt(trid, sizeof(trid), info.trid) != 0) {
			continue;
		}
		p = json_object_new_object();
		json_object_object_add(p, "trid", json_object_new_string(trid));
		json_object_object_add(
			p, "ana_state",
			json_object_new_string(nvp_nvme_ana_state_name(info.ana_state)));
		json_object_object_add(p, "anagrpid", json_object_new_int64(info.anagrpid));
		json_object_object_add(p, "connected", json_object_new_boolean(info.connected));
		json_object_array_add(paths, p);
	}
	json_object_object_add(o, "paths", paths);
}

static struct json_object *
bdev_json(const struct nvp_bdev *b)
{
	struct nvp_nvme_mpath *mp = nvp_bdev_nvme_get_mpath((struct nvp_bdev *)b);
	struct json_object *o = json_object_new_object(), *ops = json_object_new_array();
	int t;

	json_object_object_add(o, "name", json_object_new_string(nvp_bdev_get_name(b)));
	json_object_object_add(o, "module", json_object_new_string(nvp_bdev_get_module_name(b)));
	json_object_object_add(o, "block_size", json_object_new_int64(nvp_bdev_get_block_size(b)));
	json_object_object_add(o, "num_blocks",
			       json_object_new_int64((int64_t)nvp_bdev_get_num_blocks(b)));
	json_object_object_add(o, "md_size", json_object_new_int64(nvp_bdev_get_md_size(b)));
	json_object_object_add(o, "max_xfer_blocks",
			       json_object_new_int64(nvp_bdev_get_max_xfer_blocks(b)));
	json_object_object_add(o, "optimal_io_boundary",
			       json_object_new_int64(nvp_bdev_get_optimal_io_boundary(b)));
	json_object_object_add(o, "write_cache",
			       json_object_new_boolean(nvp_bdev_has_write_cache(b)));
	for (t = 0; t < NVP_BDEV_NUM_IO_TYPES; t++) {
		if (nvp_bdev_io_type_supported(b, (enum nvp_bdev_io_type)t)) {
			json_object_array_add(ops, json_object_new_string(nvp_bdev_io_type_name(
							   (enum nvp_bdev_io_type)t)));
		}
	}
	json_object_object_add(o, "io_types", ops);
	json_object_object_add(o, "scheduler", json_object_new_string(nvp_bdev_get_scheduler(b)));
	json_object_object_add(o, "admission", json_object_new_string(nvp_bdev_get_admission(b)));
	if (strcmp(nvp_bdev_get_module_name(b), "uring") == 0) {
		json_object_object_add(o, "iopoll",
				       json_object_new_boolean(nvp_bdev_uring_is_iopoll(b)));
		json_object_object_add(o, "o_direct",
				       json_object_new_boolean(nvp_bdev_uring_is_direct(b)));
	}
	if (mp != NULL) {
		mpath_json(o, mp);
	}
	return o;
}

static void
print_json(FILE *f)
{
	struct json_object *root = json_object_new_object(), *arr = json_object_new_array();
	struct nvp_bdev *b;

	for (b = nvp_bdev_first(); b != NULL; b = nvp_bdev_next(b)) {
		json_object_array_add(arr, bdev_json(b));
	}
	json_object_object_add(root, "bdevs", arr);
	cli_json_print(f, root);
	json_object_put(root);
}

/* Parse the command line. \return 0, or an exit status (help: CLI_EXIT_OK + *done). */
static int
bdev_list_args(int argc, char **argv, const char **cfg, bool *json, bool *done)
{
	static const struct option longopts[] = {
		{ "json-config", required_argument, NULL, 'j' },
		{ "config", required_argument, NULL, 'c' },
		{ "output-format", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":j:c:o:h", longopts, NULL)) != -1) {
		if (c == 'j' || c == 'c') {
			if (*cfg != NULL) {
				fprintf(stderr, "nvp bdev-list: give one configuration\n");
				return CLI_EXIT_USAGE;
			}
			*cfg = optarg;
		} else if (c == 'o' &&
			   (strcmp(optarg, "json") == 0 || strcmp(optarg, "normal") == 0)) {
			*json = strcmp(optarg, "json") == 0;
		} else if (c == 'h') {
			bdev_list_usage(stdout);
			*done = true;
			return CLI_EXIT_OK;
		} else {
			fprintf(stderr, "nvp bdev-list: bad option or value '%s'\n",
				argv[optind - 1 < argc ? optind - 1 : argc - 1]);
			bdev_list_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (optind < argc || *cfg == NULL) {
		fprintf(stderr, "nvp bdev-list: %s\n",
			*cfg == NULL ?
				"a configuration is required (--json-config FILE or -c CONFIG)" :
				"unexpected argument");
		bdev_list_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

int
cli_bdev_list_main(int argc, char **argv)
{
	const char *cfg = NULL;
	bool json = false, done = false;
	int rc;

	rc = bdev_list_args(argc, argv, &cfg, &json, &done);
	if (rc != 0 || done) {
		return rc;
	}
	if (cli_env_init(true) != 0) {
		return CLI_EXIT_FAIL;
	}
	rc = nvp_bdev_load_config(cfg);
	if (rc == 0) {
		if (json) {
			print_json(stdout);
		} else {
			print_table(stdout);
		}
		fflush(stdout);
	}
	nvp_bdev_fini();
	nvp_env_fini();
	if (rc == 0) {
		return CLI_EXIT_OK;
	}
	/* a configuration that is wrong or cannot be read is the user's to fix, like a bad
	 * command line (nvp_perf does the same); ENOMEM and the like are failures */
	return nvp_bdev_config_error_is_usage(rc) ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
}

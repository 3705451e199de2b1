/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp discover: read an NVMe/TCP discovery controller's log page (NVMe-oF 1.1 section
 * 5.3) and print each record as nvme-cli's `nvme discover` does, plus the transport ID
 * that attaches to it with nvpoll (nvp, nvp_perf -r, hello_world -r, the fio engine).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nvp_cli.h"

static const char *
trtype_str(uint8_t t)
{
	return t == 1   ? "rdma" :
	       t == 2   ? "fc" :
	       t == 3   ? "tcp" :
	       t == 254 ? "loop" :
			  "unrecognized";
}

static const char *
subtype_str(uint8_t t)
{
	return t == 1 ? "discovery subsystem referral" :
	       t == 2 ? "nvme subsystem" :
	       t == 3 ? "current discovery subsystem" :
			"unrecognized";
}

static void
print_entry(void *cb_arg, const struct nvp_nvme_discovery_entry *e)
{
	unsigned int *n = cb_arg;
	char trid[NVP_NVME_TRARGS_MAX + 512];

	printf("=====Discovery Log Entry %u======\n", (*n)++);
	printf("trtype:  %s\n", trtype_str(e->trtype));
	printf("adrfam:  %s\n", e->adrfam == 1 ? "ipv4" : e->adrfam == 2 ? "ipv6" : "unrecognized");
	printf("subtype: %s\n", subtype_str(e->subtype));
	printf("portid:  %u\n", e->portid);
	printf("trsvcid: %s\n", e->trsvcid);
	printf("subnqn:  %s\n", e->subnqn);
	printf("traddr:  %s\n", e->traddr);
	if (e->trtype == 3 && nvp_nvme_transport_id_fmt(trid, sizeof(trid), &e->trid) == 0) {
		printf("nvpoll:  %s\n", trid);
	}
}

int
cli_cmd_discover(const struct cli_args *a)
{
	struct nvp_nvme_transport_id trid;
	unsigned int n = 0;
	int rc;

	if (a->device == NULL || nvp_nvme_transport_id_parse(&trid, a->device) != 0 ||
	    trid.trtype != NVP_NVME_TRANSPORT_TCP) {
		fprintf(stderr, "nvp discover: expected a TCP transport ID, e.g. \"trtype:TCP "
				"traddr:127.0.0.1 trsvcid:4420\"\n");
		return CLI_EXIT_USAGE;
	}
	rc = cli_env_init(true);
	if (rc != 0) {
		return CLI_EXIT_FAIL;
	}
	rc = nvp_nvme_discover(&trid, print_entry, &n);
	if (rc < 0) {
		fprintf(stderr, "nvp discover: %s: %s\n", a->device, strerror(-rc));
		return CLI_EXIT_FAIL;
	}
	printf("Discovery Log Number of Records %d\n", rc);
	return CLI_EXIT_OK;
}

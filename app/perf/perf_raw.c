/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_perf's raw mode, before the I/O: attach every -r controller, then give each job its
 * targets (every active namespace of every controller, or those its r= and ns= name), one
 * struct perf_ns per (job, namespace), each checked against the job's I/O size. Two jobs
 * on one namespace are two targets: each I/O thread makes each its own qpairs.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nvpoll/util.h"

#include "perf.h"

/* The value of "key=value" in a transport ID's other pairs, or @dflt (absent or refused). */
static void
trid_arg(const struct nvp_nvme_transport_id *trid, const char *key, const char *dflt, char *out,
	 size_t len)
{
	if (nvp_nvme_transport_id_get_arg(trid, key, out, len) != 0) {
		snprintf(out, len, "%s", dflt);
	}
}

/*
 * "EMU (emu0) NSID 1", "PCIE (0000:01:00.0) NSID 1", "TCP (10.0.0.1:4420
 * nqn.2016-06.io.spdk:cnode1) NSID 1": the transport and what names the controller on it.
 */
static void
ns_name(struct perf_ns *pns, const struct nvp_nvme_transport_id *trid)
{
	char type[NVP_NVME_TRSTRING_MAX], port[16];
	size_t i;

	nvp_strlcpy(type, trid->trstring, sizeof(type));
	for (i = 0; type[i] != '\0'; i++) {
		type[i] = (char)toupper((unsigned char)type[i]);
	}
	if (trid->trtype == NVP_NVME_TRANSPORT_TCP) {
		trid_arg(trid, "trsvcid", "4420", port, sizeof(port));
		snprintf(pns->name, sizeof(pns->name), "%s (%.40s:%s %.80s) NSID %u", type,
			 trid->traddr, port, trid->subnqn, pns->nsid);
		return;
	}
	snprintf(pns->name, sizeof(pns->name), "%s (%s) NSID %u", type,
		 trid->trtype == NVP_NVME_TRANSPORT_PCIE ? trid->traddr : trid->name, pns->nsid);
}

/* Check one target against its job. \return 0, PERF_EXIT_USAGE or PERF_EXIT_FAIL. */
static int
ns_check(const struct perf_job *j, struct perf_ns *pns)
{
	char what[64];

	perf_job_size_flag(j, what, sizeof(what));
	if (j->io_size % pns->sector_size != 0) {
		perf_usage("%s: not a multiple of the %u-byte sector size of %s (try %s%u)", what,
			   pns->sector_size, pns->name, j->from_flag ? "o=" : "-o ",
			   (j->io_size / pns->sector_size + 1) * pns->sector_size);
		return PERF_EXIT_USAGE;
	}
	/* Larger than the maximum transfer: the driver splits it (as SPDK's does). */
	if (nvp_nvme_ns_has_separate_md(pns->ns)) {
		perf_fail("%s: formatted with %u bytes of separate metadata per block, which "
			  "nvp_perf does not supply; format it without metadata or with extended "
			  "LBAs (nvp format)",
			  pns->name, nvp_nvme_ns_get_md_size(pns->ns));
		return PERF_EXIT_FAIL;
	}
	pns->lbas_per_io = j->io_size / pns->sector_size;
	pns->num_ios = nvp_nvme_ns_get_num_sectors(pns->ns) / pns->lbas_per_io;
	if (pns->num_ios == 0) {
		perf_usage("%s: larger than %s itself", what, pns->name);
		return PERF_EXIT_USAGE;
	}
	return 0;
}

struct perf_ns *
perf_ns_add(struct perf_run *run)
{
	struct perf_ns *grown = realloc(run->ns, (run->num_ns + 1) * sizeof(*run->ns));

	if (grown == NULL) {
		perf_fail("out of memory");
		return NULL;
	}
	run->ns = grown;
	memset(&run->ns[run->num_ns], 0, sizeof(*run->ns));
	return &run->ns[run->num_ns];
}

/* Namespace @nsid of controller @c as a target of @j. \return 0 or PERF_EXIT_*. */
static int
add_target(struct perf_run *run, const struct perf_job *j, uint32_t c, uint32_t nsid)
{
	struct nvp_nvme_ctrlr *ctrlr = run->ctrlrs[c];
	const struct nvp_nvme_transport_id *trid = nvp_nvme_ctrlr_get_transport_id(ctrlr);
	struct perf_ns *pns = perf_ns_add(run);
	int rc;

	if (pns == NULL) {
		return PERF_EXIT_FAIL;
	}
	pns->ctrlr = ctrlr;
	pns->job = j;
	pns->ns = nvp_nvme_ctrlr_get_ns(ctrlr, nsid);
	pns->nsid = nsid;
	pns->sector_size = nvp_nvme_ns_get_sector_size(pns->ns);
	/* doorbells are PCIe's (a software controller is a PCIe function); TCP has none */
	pns->doorbells = trid->trtype != NVP_NVME_TRANSPORT_TCP;
	ns_name(pns, trid);
	rc = ns_check(j, pns);
	if (rc == 0) {
		run->num_ns++;
	}
	return rc;
}

/* Job @j's targets on controller @c: its ns= or every active namespace. */
static int
add_job_targets(struct perf_run *run, const struct perf_job *j, uint32_t c)
{
	struct nvp_nvme_ctrlr *ctrlr = run->ctrlrs[c];
	uint32_t nsid;
	int rc = 0;

	if (j->nsid != 0) {
		if (!nvp_nvme_ctrlr_is_active_ns(ctrlr, j->nsid)) {
			perf_usage("--job %s: ns=%u: not an active namespace of \"%s\" (its first: "
				   "%u)",
				   j->name, j->nsid, run->opts.trids[c],
				   nvp_nvme_ctrlr_get_first_active_ns(ctrlr));
			return PERF_EXIT_USAGE;
		}
		return add_target(run, j, c, j->nsid);
	}
	for (nsid = nvp_nvme_ctrlr_get_first_active_ns(ctrlr); rc == 0 && nsid != 0;
	     nsid = nvp_nvme_ctrlr_get_next_active_ns(ctrlr, nsid)) {
		rc = add_target(run, j, c, nsid);
	}
	return rc;
}

/* Every thread makes -P qpairs per target of each job on its core: does @c grant that? */
static int
check_queues(struct perf_run *run, uint32_t c)
{
	uint32_t need = 0, targets = 0, i;
	uint32_t granted = nvp_nvme_ctrlr_get_num_io_queues(run->ctrlrs[c]);

	for (i = 0; i < run->num_ns; i++) {
		if (run->ns[i].ctrlr == run->ctrlrs[c]) {
			need += (uint32_t)__builtin_popcountll(run->ns[i].job->core_mask) *
				run->opts.qpairs_per_ns;
			targets++;
		}
	}
	if (need > granted) {
		perf_fail("\"%s\" granted %u I/O queues; its %u targets (jobs x namespaces), each "
			  "on its job's cores with -P %u qpairs, need %u",
			  run->opts.trids[c], granted, targets, run->opts.qpairs_per_ns, need);
		return PERF_EXIT_FAIL;
	}
	return 0;
}

static int
attach_one(struct perf_run *run, const char *str)
{
	struct nvp_nvme_transport_id trid;
	struct nvp_nvme_ctrlr *ctrlr;
	char cause[PERF_MSG_MAX];
	int rc;

	if (nvp_nvme_transport_id_parse(&trid, str) != 0) {
		perf_usage("invalid -r transport ID \"%s\"", str);
		return PERF_EXIT_USAGE;
	}
	perf_log_mark();
	rc = nvp_nvme_connect(&trid, NULL, &ctrlr);
	if (rc != 0) {
		/* the driver's message has the cause ("Connection refused"); the code may not */
		perf_fail("cannot attach to \"%s\": %s", str, perf_cause(rc, cause, sizeof(cause)));
		return PERF_EXIT_FAIL;
	}
	run->ctrlrs[run->num_ctrlrs++] = ctrlr;
	return 0;
}

int
perf_raw_attach(struct perf_run *run)
{
	const struct perf_opts *o = &run->opts;
	uint32_t i, c;
	int rc = 0;

	for (c = 0; rc == 0 && c < o->num_trids; c++) {
		rc = attach_one(run, o->trids[c]);
	}
	for (i = 0; rc == 0 && i < o->num_jobs; i++) {
		const struct perf_job *j = &o->jobs[i];

		for (c = 0; rc == 0 && c < run->num_ctrlrs; c++) {
			if (j->ctrlr[0] == '\0' || perf_job_ctrlr_matches(o->trids[c], j->ctrlr)) {
				rc = add_job_targets(run, j, c);
			}
		}
	}
	for (c = 0; rc == 0 && c < run->num_ctrlrs; c++) {
		rc = check_queues(run, c);
	}
	return rc;
}

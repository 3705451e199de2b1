/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_perf --poll MODE: how the I/O threads wait (lib/poll). Each thread makes a waiter
 * over its qpairs, tells it about every request, and waits through it instead of
 * spinning on process_completions(); the report adds what the waiter did (sleeps,
 * oversleeps, wake-up cost) beside the CPU time the thread used.
 */
#include <errno.h>
#include <string.h>

#include "nvpoll/emu.h"
#include "nvpoll/poll.h"
#include "nvpoll/util.h"

#include "perf.h"

int
perf_poll_opts(const struct perf_opts *o, struct nvp_poll_opts *po)
{
	nvp_poll_opts_init(po, sizeof(*po));
	return o->poll_mode != NULL ? nvp_poll_mode_parse(o->poll_mode, po) : 0;
}

bool
perf_poll_wants_irq(const struct perf_opts *o)
{
	struct nvp_poll_opts po;

	return o->poll_mode != NULL && perf_poll_opts(o, &po) == 0 && po.mode == NVP_POLL_IRQ;
}

/* A waiter for this thread over @qpairs, or NULL without --poll. \return 0 or -errno. */
int
perf_poll_setup(struct perf_thread *th, const struct perf_opts *o,
		struct nvp_nvme_qpair *const *qpairs, uint32_t n, struct nvp_poll_waiter **out)
{
	struct nvp_poll_opts po;
	int rc;

	*out = NULL;
	if (o->poll_mode == NULL) {
		return 0;
	}
	rc = perf_poll_opts(o, &po);
	if (rc == 0) {
		rc = nvp_poll_waiter_create(&po, out);
	}
	for (uint32_t i = 0; rc == 0 && i < n; i++) {
		rc = nvp_poll_waiter_add_qpair(*out, qpairs[i]);
	}
	if (rc != 0) {
		perf_fail("core %u: --poll %s: cannot set up the waiter: %s", th->core,
			  o->poll_mode, strerror(-rc));
	}
	return rc;
}

void
perf_poll_teardown(struct nvp_poll_waiter *w)
{
	if (w != NULL) {
		nvp_poll_waiter_destroy(w);
	}
}

void
perf_poll_window_start(struct perf_thread *th, struct nvp_poll_waiter *w)
{
	if (w != NULL) {
		th->poll_base.info_size = sizeof(th->poll_base);
		nvp_poll_waiter_get_stats(w, &th->poll_base);
	}
}

void
perf_poll_window_end(struct perf_thread *th, struct nvp_poll_waiter *w)
{
	const struct nvp_poll_stats *b = &th->poll_base;
	struct nvp_poll_stats *s = &th->poll_stats;

	if (w == NULL) {
		return;
	}
	s->info_size = sizeof(*s);
	nvp_poll_waiter_get_stats(w, s);
	/* the counters, less what the warm-up counted; wake_cost_ns and sleep_cpu_ns are
	 * current estimates, kept as they are */
	s->polls -= b->polls;
	s->spins -= b->spins;
	s->sleeps -= b->sleeps;
	s->sleep_ns -= b->sleep_ns;
	s->sleep_late_ns -= b->sleep_late_ns;
	s->oversleeps -= b->oversleeps;
	s->irq_waits -= b->irq_waits;
	s->irq_timeouts -= b->irq_timeouts;
	s->samples -= b->samples;
	s->samples_skipped -= b->samples_skipped;
	s->relearns -= b->relearns;
	s->wake_probes -= b->wake_probes;
	s->wait_ns -= b->wait_ns;
	s->slept_ns -= b->slept_ns;
	th->has_poll_stats = true;
}

void
perf_poll_report(const struct perf_run *run, FILE *f)
{
	for (uint32_t i = 0; i < run->num_threads; i++) {
		const struct perf_thread *th = &run->threads[i];
		const struct nvp_poll_stats *s = &th->poll_stats;

		if (!th->has_poll_stats) {
			continue;
		}
		fprintf(f,
			"Poll core %u (--poll %s): %lu sleeps (%.1f us asked, %.1f us late on "
			"average), %lu oversleeps, %lu irq waits (%lu timed out), %lu empty polls, wake-up cost "
			"%.1f us, sleep CPU %.1f us, %lu samples (%lu after a sleep or irq), %lu relearns, %lu wake probes\n",
			th->core, run->opts.poll_mode, (unsigned long)s->sleeps,
			s->sleeps ? (double)s->sleep_ns / 1e3 / (double)s->sleeps : 0.0,
			s->sleeps ? (double)s->sleep_late_ns / 1e3 / (double)s->sleeps : 0.0,
			(unsigned long)s->oversleeps, (unsigned long)s->irq_waits,
			(unsigned long)s->irq_timeouts, (unsigned long)s->spins,
			(double)s->wake_cost_ns / 1e3, (double)s->sleep_cpu_ns / 1e3,
			(unsigned long)s->samples, (unsigned long)s->samples_skipped,
			(unsigned long)s->relearns, (unsigned long)s->wake_probes);
		fprintf(f,
			"Poll core %u: %.3f s (wall) waiting for completions: %.3f s asleep or "
			"blocked, %.3f s polling or preempted\n",
			th->core, (double)s->wait_ns / 1e9, (double)s->slept_ns / 1e9,
			(double)(s->wait_ns - NVP_MIN(s->wait_ns, s->slept_ns)) / 1e9);
	}
}

static void
emu_lateness_line(const char *name, FILE *f)
{
	struct nvp_emu_ctrlr *c = nvp_emu_ctrlr_find(name);
	struct nvp_emu_stats st = { .info_size = sizeof(st) };

	if (c == NULL) {
		return;
	}
	nvp_emu_ctrlr_get_stats(c, &st);
	if (st.timed_cpls == 0) {
		return;
	}
	fprintf(f,
		"Device model %s: completions posted %.2f us late on average, %.1f us at "
		"worst, %lu of %lu more than 10 us late; %lu interrupts\n",
		name, (double)st.late_ns_sum / 1e3 / (double)st.timed_cpls,
		(double)st.late_ns_max / 1e3, (unsigned long)st.late_over_10us,
		(unsigned long)st.timed_cpls, (unsigned long)st.interrupts);
	if (st.reads_delayed + st.writes_throttled == 0) {
		return;
	}
	/* Read/write interference inside the device (presets: doc/emu_presets.md). */
	fprintf(f,
		"Device model %s: %lu of %lu reads waited behind writes (%lu suspended a "
		"program); %lu of %lu writes waited for cache room\n",
		name, (unsigned long)st.reads_delayed, (unsigned long)st.read_cmds,
		(unsigned long)st.reads_suspended, (unsigned long)st.writes_throttled,
		(unsigned long)st.write_cmds);
}

/*
 * The controller name of an nvme bdev "<ctrlr>n<nsid>" into @buf; the first bdev of it
 * only (several namespaces share one controller). \return false when not such a name.
 */
static bool
bdev_ctrlr_name(const struct perf_run *run, uint32_t i, char *buf, size_t len)
{
	const char *b = run->ns[i].name, *open = strstr(b, "BDEV "), *end;

	if (open == NULL || strstr(b, "(nvme)") == NULL) {
		return false;
	}
	open += 5;
	end = strchr(open, ' ');
	if (end == NULL) {
		return false;
	}
	while (end > open && end[-1] >= '0' && end[-1] <= '9') {
		end--;
	}
	if (end == open || end[-1] != 'n' || (size_t)(end - open) >= len) {
		return false;
	}
	snprintf(buf, len, "%.*s", (int)(end - 1 - open), open);
	for (uint32_t k = 0; k < i; k++) {
		if (strncmp(run->ns[k].name, b, (size_t)(end - b)) == 0) {
			return false; /* reported with an earlier namespace */
		}
	}
	return true;
}

/*
 * The software controller's own timing: how late after their due time it posted
 * completions. A waiting strategy is only judged fairly when this stays small.
 */
void
perf_emu_lateness_report(const struct perf_run *run, FILE *f)
{
	char name[64];

	for (uint32_t i = 0; i < run->opts.num_trids; i++) {
		struct nvp_nvme_transport_id trid;

		if (nvp_nvme_transport_id_parse(&trid, run->opts.trids[i]) == 0 &&
		    trid.trtype == NVP_NVME_TRANSPORT_VDEV) {
			emu_lateness_line(trid.name, f);
		}
	}
	for (uint32_t i = 0; run->opts.bdev_config != NULL && i < run->num_ns; i++) {
		if (bdev_ctrlr_name(run, i, name, sizeof(name))) {
			emu_lateness_line(name, f);
		}
	}
}

bool
perf_uses_emu(const struct perf_run *run)
{
	char name[64];

	for (uint32_t i = 0; i < run->opts.num_trids; i++) {
		struct nvp_nvme_transport_id trid;

		if (nvp_nvme_transport_id_parse(&trid, run->opts.trids[i]) == 0 &&
		    trid.trtype == NVP_NVME_TRANSPORT_VDEV &&
		    nvp_emu_ctrlr_find(trid.name) != NULL) {
			return true;
		}
	}
	for (uint32_t i = 0; run->opts.bdev_config != NULL && i < run->num_ns; i++) {
		if (bdev_ctrlr_name(run, i, name, sizeof(name)) &&
		    nvp_emu_ctrlr_find(name) != NULL) {
			return true;
		}
	}
	return false;
}

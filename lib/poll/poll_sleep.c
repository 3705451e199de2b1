/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the waiter asks of the system: the clock, timer sleeps with an absolute deadline
 * (clock_nanosleep, 1 ns timer slack: the default 50 us slack would swallow a hybrid
 * sleep whole), TPAUSE where the CPU has WAITPKG, and blocking on interrupt eventfds.
 * The unit tests replace this file with a fake clock.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "nvpoll/env.h"
#include "poll_internal.h"

#define CALIBRATE_SLEEP_NS 20000

uint64_t
poll_now(void)
{
	return nvp_env_get_ticks();
}

uint64_t
poll_ticks_hz(void)
{
	return nvp_env_get_ticks_hz();
}

void
poll_timerslack_set(void)
{
	if (prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0) != 0) {
		NVP_WARNLOG("PR_SET_TIMERSLACK 1 ns failed (errno %d): sleeps may run 50 us late",
			    errno);
	}
}

bool
nvp_poll_waitpkg_supported(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned int a, b, c, d;

	if (__get_cpuid_max(0, NULL) < 7) {
		return false;
	}
	__cpuid_count(7, 0, a, b, c, d);
	return (c >> 5) & 1u; /* CPUID.(EAX=7,ECX=0):ECX[5] WAITPKG */
#else
	return false;
#endif
}

/*
 * TPAUSE until the TSC reaches @deadline (C0.2, the deeper light state: bit 0 of the
 * control operand clear). The OS caps one TPAUSE (IA32_UMWAIT_CONTROL), so loop.
 * Encoded as bytes (66 0F AE F1 = tpause ecx) so no -mwaitpkg is needed to build; only
 * reached after nvp_poll_waitpkg_supported() said yes.
 */
static uint64_t
tpause_until(uint64_t deadline)
{
#if defined(__x86_64__)
	uint64_t now = poll_now();

	while (now < deadline) {
		uint32_t lo = (uint32_t)deadline, hi = (uint32_t)(deadline >> 32);

		__asm__ volatile(".byte 0x66, 0x0f, 0xae, 0xf1" ::"c"(0), "a"(lo), "d"(hi)
				 : "cc", "memory");
		now = poll_now();
	}
	return now;
#else
	return deadline;
#endif
}

static void
timespec_add_ns(struct timespec *ts, uint64_t ns)
{
	ns += (uint64_t)ts->tv_nsec;
	ts->tv_sec += (time_t)(ns / 1000000000u);
	ts->tv_nsec = (long)(ns % 1000000000u);
}

static uint64_t
timer_sleep_until(uint64_t hz, uint64_t deadline)
{
	uint64_t now = poll_now();
	struct timespec ts;

	if (deadline <= now) {
		return now;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	timespec_add_ns(&ts, nvp_ticks_to_ns(deadline - now, hz));
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
	}
	return poll_now();
}

/*
 * One timer sleep in SLEEP_CPU_SAMPLE is timed in thread CPU (two system calls: too dear
 * for every sleep) for nvp_poll_stats.sleep_cpu_ns and the sleep decision: what sleeping
 * costs the thread while it runs, which the calibration at creation only estimates.
 */
#define SLEEP_CPU_SAMPLE 16u

uint64_t
poll_sleep_until(struct nvp_poll_waiter *w, uint64_t deadline)
{
	uint64_t cpu0, used, woke;

	if (w->mode == NVP_POLL_UMWAIT) {
		return tpause_until(deadline);
	}
	if (w->st.sleeps % SLEEP_CPU_SAMPLE != 0) {
		return timer_sleep_until(w->ticks_hz, deadline);
	}
	cpu0 = nvp_env_thread_cpu_ns();
	woke = timer_sleep_until(w->ticks_hz, deadline);
	used = nvp_env_thread_cpu_ns() - cpu0;
	w->sleep_cpu_sum_ns += used;
	w->sleep_cpu_n++;
	/* what the decision weighs: the calibration's figure, then tracked (1/4 weight) */
	w->sleep_cpu = (3 * w->sleep_cpu + nvp_ns_to_ticks(used, w->ticks_hz)) / 4;
	return woke;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * What a short sleep costs: @n sleeps of 20 us, their lateness in @late (ticks), the CPU
 * time one sleep uses in *@cpu_ticks (entering and leaving the kernel, programming the
 * timer; tens of microseconds in some VMs). \return the median lateness.
 */
uint64_t
poll_wake_cost_measure(uint64_t hz, uint64_t *cpu_ticks, uint64_t *late, uint32_t n)
{
	uint64_t v[POLL_LATE_RING], cpu0 = nvp_env_thread_cpu_ns();

	n = NVP_MIN(n, POLL_LATE_RING);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t dl = poll_now() + nvp_ns_to_ticks(CALIBRATE_SLEEP_NS, hz);
		uint64_t woke = timer_sleep_until(hz, dl);

		late[i] = woke > dl ? woke - dl : 0;
	}
	*cpu_ticks = nvp_ns_to_ticks((nvp_env_thread_cpu_ns() - cpu0) / NVP_MAX(n, 1u), hz);
	memcpy(v, late, n * sizeof(v[0]));
	qsort(v, n, sizeof(v[0]), cmp_u64);
	return n > 0 ? v[(n - 1) / 2] : 0;
}

/* ---- interrupts ---- */

int
poll_epoll_create(void)
{
	return epoll_create1(EPOLL_CLOEXEC);
}

void
poll_epoll_close(int fd)
{
	if (fd >= 0) {
		close(fd);
	}
}

int
poll_irq_add(struct nvp_poll_waiter *w, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (w->epfd < 0 || epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		return errno == EEXIST ? 0 : -errno; /* several queues may share a vector */
	}
	return 0;
}

/* Clear an eventfd (8 bytes) or a uio fd (4 bytes: the interrupt count). */
static void
irq_clear(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0 && errno == EINVAL) {
		uint32_t c;

		(void)!read(fd, &c, sizeof(c));
	}
}

/* Level interrupts masked when they last fired (uio INTx): re-arm before waiting. */
static void
irq_unmask(const struct nvp_poll_waiter *w)
{
	for (uint32_t i = 0; i < w->nsources; i++) {
		const struct poll_source *s = &w->sources[i];

		if (s->ops->irq_unmask != NULL) {
			(void)s->ops->irq_unmask(s->ctx);
		}
	}
}

/*
 * Block until an interrupt fires, at most POLL_IRQ_TIMEOUT_MS: a lost or never-wired
 * interrupt then costs a slow poll, never a hang (counted in irq_timeouts).
 */
int
poll_irq_block(struct nvp_poll_waiter *w)
{
	struct epoll_event ev[POLL_MAX_EVENTS];
	struct pollfd pfd;
	int n;

	irq_unmask(w);
	if (w->nsources == 1 && w->sources[0].nfds <= 1) { /* one fd: poll() it */
		pfd.fd = w->sources[0].irq_fd;
		pfd.events = POLLIN;
		n = poll(&pfd, 1, POLL_IRQ_TIMEOUT_MS);
		if (n > 0) {
			irq_clear(pfd.fd);
		}
	} else {
		n = epoll_wait(w->epfd, ev, POLL_MAX_EVENTS, POLL_IRQ_TIMEOUT_MS);
		for (int i = 0; i < n; i++) {
			irq_clear(ev[i].data.fd);
		}
	}
	if (n == 0) {
		w->st.irq_timeouts++;
	}
	return n < 0 && errno != EINTR ? -errno : 0;
}

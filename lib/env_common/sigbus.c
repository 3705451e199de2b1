/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Surviving a surprise removal: a load or store to a BAR mapping whose PCI function has
 * gone (unbound, hot-unplugged) may raise SIGBUS (vfio-pci revokes the mapping). As SPDK
 * does, a SIGBUS handler finds the registered BAR range holding the faulting address and
 * maps anonymous memory filled with ones over the whole range: the access is retried on
 * return and reads all ones, which the driver takes for a removed device (its health
 * check), so the process lives to complete every request with an error.
 *
 * The ranges live in a fixed table of atomic slots: the handler reads them without a
 * lock. A fault outside every range goes to the handler that was there before (or the
 * default action). Installed at the first registration unless env opts say
 * no_sigbus_handler.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#define NVP_LOG_COMPONENT "env"
#include "env_internal.h"
#include "nvpoll/env.h"
#include "nvpoll/log.h"

#define SIGBUS_MAX_RANGES 64

static struct {
	_Atomic uintptr_t start; /* 0 = free slot */
	_Atomic size_t len;
} g_ranges[SIGBUS_MAX_RANGES];

static pthread_mutex_t g_sigbus_lock = PTHREAD_MUTEX_INITIALIZER;
static bool g_installed;
static struct sigaction g_prev;
static _Atomic uint64_t g_remaps;

/* Not ours: what was there before, or the default action (the fault repeats on return). */
static void
chain(int sig, siginfo_t *info, void *uctx)
{
	if ((g_prev.sa_flags & SA_SIGINFO) != 0 && g_prev.sa_sigaction != NULL) {
		g_prev.sa_sigaction(sig, info, uctx);
		return;
	}
	if (g_prev.sa_handler != SIG_DFL && g_prev.sa_handler != SIG_IGN) {
		g_prev.sa_handler(sig);
		return;
	}
	signal(SIGBUS, SIG_DFL);
}

static void
sigbus_handler(int sig, siginfo_t *info, void *uctx)
{
	uintptr_t addr = (uintptr_t)info->si_addr;
	uint32_t i;

	for (i = 0; i < SIGBUS_MAX_RANGES; i++) {
		uintptr_t start = atomic_load_explicit(&g_ranges[i].start, memory_order_acquire);
		size_t len = atomic_load_explicit(&g_ranges[i].len, memory_order_relaxed);
		void *p;

		if (start == 0 || addr < start || addr - start >= len) {
			continue;
		}
		/* mmap and memset are plain system call / memory work: safe here. */
		p = mmap((void *)start, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (p != (void *)start) {
			break;
		}
		memset(p, 0xff, len);
		atomic_fetch_add_explicit(&g_remaps, 1, memory_order_relaxed);
		return;
	}
	chain(sig, info, uctx);
}

static int
install_locked(void)
{
	struct sigaction sa;

	if (g_installed) {
		return 0;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sigbus_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &g_prev) != 0) {
		return -errno;
	}
	g_installed = true;
	return 0;
}

int
nvp_env_sigbus_register(void *addr, size_t len)
{
	uint32_t i;
	int rc;

	if (addr == NULL || len == 0) {
		return -EINVAL;
	}
	if (env_opts_get()->no_sigbus_handler) {
		return -ENOTSUP;
	}
	pthread_mutex_lock(&g_sigbus_lock);
	rc = install_locked();
	for (i = 0; rc == 0 && i < SIGBUS_MAX_RANGES; i++) {
		if (atomic_load(&g_ranges[i].start) == 0) {
			atomic_store_explicit(&g_ranges[i].len, len, memory_order_relaxed);
			atomic_store_explicit(&g_ranges[i].start, (uintptr_t)addr,
					      memory_order_release);
			break;
		}
	}
	if (rc == 0 && i == SIGBUS_MAX_RANGES) {
		NVP_WARNLOG("sigbus: all %u BAR ranges in use; a removal of the function at %p "
			    "may kill the process",
			    SIGBUS_MAX_RANGES, addr);
		rc = -ENOSPC;
	}
	pthread_mutex_unlock(&g_sigbus_lock);
	return rc;
}

void
nvp_env_sigbus_unregister(void *addr)
{
	uint32_t i;

	pthread_mutex_lock(&g_sigbus_lock);
	for (i = 0; i < SIGBUS_MAX_RANGES; i++) {
		if (atomic_load(&g_ranges[i].start) == (uintptr_t)addr) {
			atomic_store(&g_ranges[i].start, 0);
		}
	}
	pthread_mutex_unlock(&g_sigbus_lock);
}

uint64_t
nvp_env_sigbus_get_remaps(void)
{
	return atomic_load(&g_remaps);
}

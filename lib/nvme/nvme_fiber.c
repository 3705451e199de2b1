/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fibers: a function run on a stack of its own, a piece at a time, by the polls of the
 * thread that started it. A reconnect's reset is one (nvme_ctrlr_reconnect.c). Its steps
 * are the driver's ordinary synchronous ones (property reads and writes, Identify, Set
 * Features): where one would wait for an answer, the wait loops (the synchronous admin
 * helper's, the TCP transport's, the init state machine's) call nvme_fiber_yield(), and
 * inside a fiber that goes back to the poll that resumed it; the thread's next poll
 * resumes it where it was. So a poll does at most one step and never waits on the admin
 * queue, and the reset is the same code an attach and nvp_nvme_ctrlr_reset() run.
 *
 * Only the thread that started a fiber resumes it: the fiber's frames hold that thread's
 * locks (the admin lock, recursive, stays held across the steps as in a synchronous
 * reset, so other threads' trylock fails and they go on). Outside a fiber,
 * nvme_fiber_yield() returns false and the caller waits its own way.
 *
 * ucontext (glibc). AddressSanitizer is told of every switch of stacks (its fiber API),
 * so that it does not take the fiber's frames for the thread's. The stack is a mapping of
 * its own with a PROT_NONE guard page below it (stacks grow down on every architecture we
 * build for): callbacks run on it, and one that needs more than it has faults at once
 * instead of writing over whatever the allocator put next to it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "nvme_fiber.h"

#if defined(__SANITIZE_ADDRESS__)
#define FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FIBER_ASAN 1
#endif
#endif
#ifdef FIBER_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

struct nvme_fiber {
	ucontext_t caller; /* the poll that resumed it */
	ucontext_t self;
	void *stack;       /* the usable stack, above the guard page */
	size_t stack_size; /* its bytes */
	void *map;         /* the mapping: the guard page, then the stack */
	size_t map_size;
	pthread_t owner;
	void (*fn)(void *arg);
	void *arg;
	bool done;
	/* AddressSanitizer's view of the switches */
	void *fake_stack;
	const void *caller_bottom;
	size_t caller_size;
};

/* The fiber this thread is running, or NULL. */
static __thread struct nvme_fiber *t_fiber;

static void
asan_start(void **fake, const void *bottom, size_t size)
{
#ifdef FIBER_ASAN
	__sanitizer_start_switch_fiber(fake, bottom, size);
#else
	(void)fake;
	(void)bottom;
	(void)size;
#endif
}

static void
asan_finish(void *fake, const void **bottom, size_t *size)
{
#ifdef FIBER_ASAN
	__sanitizer_finish_switch_fiber(fake, bottom, size);
#else
	(void)fake;
	(void)bottom;
	(void)size;
#endif
}

/* The fiber's first frame: makecontext() passes ints only, so the fiber is t_fiber. */
static void
fiber_entry(void)
{
	struct nvme_fiber *f = t_fiber;

	asan_finish(NULL, &f->caller_bottom, &f->caller_size);
	f->fn(f->arg);
	f->done = true;
	/* leaving for good: uc_link goes back to the last resume */
	asan_start(NULL, f->caller_bottom, f->caller_size);
}

/* A stack of at least @size bytes above a guard page. \return 0 or -ENOMEM. */
static int
stack_map(struct nvme_fiber *f, size_t size)
{
	long ps = sysconf(_SC_PAGESIZE);
	size_t page = ps > 0 ? (size_t)ps : 4096u;
	uint8_t *map;

	f->stack_size = (size + page - 1) / page * page;
	f->map_size = f->stack_size + page;
	map = mmap(NULL, f->map_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (map == MAP_FAILED) {
		return -ENOMEM;
	}
	/* the lowest page: where a frame past the stack's end lands (it grows down) */
	if (mprotect(map, page, PROT_NONE) != 0) {
		(void)munmap(map, f->map_size);
		return -ENOMEM;
	}
	f->map = map;
	f->stack = map + page;
	return 0;
}

int
nvme_fiber_create(void (*fn)(void *arg), void *arg, size_t stack_size, struct nvme_fiber **out)
{
	struct nvme_fiber *f = calloc(1, sizeof(*f));

	if (f == NULL) {
		return -ENOMEM;
	}
	if (stack_map(f, stack_size) != 0) {
		free(f);
		return -ENOMEM;
	}
	if (getcontext(&f->self) != 0) {
		nvme_fiber_destroy(f);
		return -ENOMEM;
	}
	f->self.uc_stack.ss_sp = f->stack;
	f->self.uc_stack.ss_size = f->stack_size;
	f->self.uc_link = &f->caller;
	f->owner = pthread_self();
	f->fn = fn;
	f->arg = arg;
	makecontext(&f->self, fiber_entry, 0);
	*out = f;
	return 0;
}

bool
nvme_fiber_resume(struct nvme_fiber *f)
{
	struct nvme_fiber *outer = t_fiber;
	void *fake = NULL;

	if (f->done || !pthread_equal(f->owner, pthread_self())) {
		return f->done;
	}
	t_fiber = f;
	asan_start(&fake, f->stack, f->stack_size);
	(void)swapcontext(&f->caller, &f->self);
	asan_finish(fake, NULL, NULL);
	t_fiber = outer;
	return f->done;
}

bool
nvme_fiber_yield(void)
{
	struct nvme_fiber *f = t_fiber;

	if (f == NULL) {
		return false;
	}
	asan_start(&f->fake_stack, f->caller_bottom, f->caller_size);
	(void)swapcontext(&f->self, &f->caller);
	asan_finish(f->fake_stack, &f->caller_bottom, &f->caller_size);
	return true;
}

bool
nvme_fiber_is_owner(const struct nvme_fiber *f)
{
	return f != NULL && pthread_equal(f->owner, pthread_self());
}

void
nvme_fiber_destroy(struct nvme_fiber *f)
{
	if (f == NULL) {
		return;
	}
	if (f->map != NULL) {
		(void)munmap(f->map, f->map_size);
	}
	free(f);
}

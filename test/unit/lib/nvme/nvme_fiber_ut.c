/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of fibers (nvme_fiber.c): a fiber runs a step per resume and only on the
 * thread that made it; yield outside one does nothing; its stack is as large as asked,
 * usable to both ends, and has a guard page below it that faults (checked in a child
 * process, which must not live through a write there).
 */
#include "nvme/nvme_fiber.c"

#include <signal.h>
#include <sys/wait.h>

#include "ut_nvme.h"

#define STACK (64u * 1024u)

struct steps {
	unsigned int ran;
	unsigned int yields;
	bool yielded_true;
};

static void
three_steps(void *arg)
{
	struct steps *s = arg;

	s->ran++;
	for (unsigned int i = 0; i < 3; i++) {
		s->yielded_true = nvme_fiber_yield();
		s->yields++;
	}
}

static void *
resume_elsewhere(void *arg)
{
	return (void *)(uintptr_t)nvme_fiber_resume(arg);
}

static void
test_a_step_per_resume(void)
{
	struct steps s = { 0 };
	struct nvme_fiber *f = NULL;
	pthread_t t;
	void *ended = (void *)1;

	CU_ASSERT_FALSE(nvme_fiber_yield()); /* not in a fiber: nothing done */
	CU_ASSERT_EQUAL_FATAL(nvme_fiber_create(three_steps, &s, STACK, &f), 0);
	CU_ASSERT_EQUAL(s.ran, 0); /* nothing before the first resume */
	CU_ASSERT(nvme_fiber_is_owner(f));
	CU_ASSERT_FALSE(nvme_fiber_resume(f));
	CU_ASSERT_EQUAL(s.ran, 1);
	CU_ASSERT_EQUAL(s.yields, 0);
	/* another thread neither runs it nor ends it */
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, resume_elsewhere, f), 0);
	CU_ASSERT_EQUAL(pthread_join(t, &ended), 0);
	CU_ASSERT_PTR_NULL(ended);
	CU_ASSERT_EQUAL(s.yields, 0);
	CU_ASSERT_FALSE(nvme_fiber_resume(f));
	CU_ASSERT_FALSE(nvme_fiber_resume(f));
	CU_ASSERT_EQUAL(s.yields, 2);
	CU_ASSERT_TRUE(nvme_fiber_resume(f)); /* the last step ends it */
	CU_ASSERT_EQUAL(s.yields, 3);
	CU_ASSERT_TRUE(s.yielded_true);
	CU_ASSERT_TRUE(nvme_fiber_resume(f)); /* ended stays ended */
	CU_ASSERT_EQUAL(s.ran, 1);
	CU_ASSERT_FALSE(nvme_fiber_yield()); /* back outside */
	nvme_fiber_destroy(f);
	nvme_fiber_destroy(NULL);
}

static void
nothing(void *arg)
{
	(void)arg;
}

/* The child's end when @f's stack is written at @off from its bottom (-1: the guard). */
static int
child_writes(struct nvme_fiber *f, long off)
{
	int status = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		((volatile uint8_t *)f->stack)[off] = 0x5a;
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		return -1;
	}
	return status;
}

static void
test_stack_guard_page(void)
{
	struct nvme_fiber *f = NULL;
	long page = sysconf(_SC_PAGESIZE);
	int status;

	CU_ASSERT_EQUAL_FATAL(nvme_fiber_create(nothing, NULL, STACK + 100u, &f), 0);
	CU_ASSERT(f->stack_size >= STACK + 100u);
	CU_ASSERT_EQUAL(f->stack_size % (size_t)page, 0);
	CU_ASSERT_PTR_EQUAL((uint8_t *)f->map + page, f->stack);
	CU_ASSERT_PTR_EQUAL(f->self.uc_stack.ss_sp, f->stack);
	/* both ends of the stack are usable */
	((volatile uint8_t *)f->stack)[0] = 1;
	((volatile uint8_t *)f->stack)[f->stack_size - 1] = 1;
	status = child_writes(f, 0);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0); /* the child itself works */
	/* the page below faults: the child dies (by SIGSEGV; under AddressSanitizer its
	 * handler reports the SEGV and exits non-zero) instead of going on */
	status = child_writes(f, -1);
	CU_ASSERT(status != -1);
	CU_ASSERT(!(WIFEXITED(status) && WEXITSTATUS(status) == 0));
	CU_ASSERT(nvme_fiber_resume(f));
	nvme_fiber_destroy(f);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	nvp_log_set_callback(ut_log_cb);
	s = CU_add_suite("nvme_fiber", NULL, NULL);
	CU_add_test(s, "a_step_per_resume", test_a_step_per_resume);
	CU_add_test(s, "stack_guard_page", test_stack_guard_page);
	return ut_run();
}

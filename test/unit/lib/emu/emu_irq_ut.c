/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/emu/emu_irq.c: eventfds per vector made on demand, a vector fired per
 * posted entry, interrupt coalescing (Set Features 0x08: threshold and time) and its
 * per-vector disable (0x09), vector 0 never coalesced, and the interrupt counter.
 */
#include "emu_ut_helpers.h" /* first: it defines _GNU_SOURCE */

#include <fcntl.h>
#include <unistd.h>

/* The eventfd's counter, read without blocking (0 when nothing fired). */
static uint64_t
fired(int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v)) {
		return 0;
	}
	return v;
}

static int
nb_fd(struct emu_ctrlr *c, uint32_t vector)
{
	uint32_t out = 99;
	int fd = emu_irq_fd(c, vector, &out);

	CU_ASSERT_EQUAL(out, vector);
	if (fd >= 0) {
		int dup_fd = emu_irq_fd(c, vector, &out);

		CU_ASSERT_EQUAL(dup_fd, fd); /* made once */
		/* the tests read without blocking; the controller only writes */
		CU_ASSERT_EQUAL(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	}
	return fd;
}

static void
test_fd_per_vector(void)
{
	struct emu_ctrlr *c = ut_ctrlr_new("queues=4");
	uint32_t out;
	int a, b;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	a = nb_fd(c, 1);
	b = nb_fd(c, 2);
	CU_ASSERT(a >= 0 && b >= 0 && a != b);
	CU_ASSERT_EQUAL(emu_irq_fd(c, 5, &out), -ERANGE); /* queues + 1 vectors */
	emu_irq_raise(c, 1, 0);
	emu_irq_raise(c, 1, 0);
	CU_ASSERT_EQUAL(fired(a), 2);
	CU_ASSERT_EQUAL(fired(b), 0);
	CU_ASSERT_EQUAL(c->stats.interrupts, 2);
	emu_ctrlr_free(c);
}

static void
test_coalescing(void)
{
	struct emu_ctrlr *c = ut_ctrlr_new("queues=4");
	uint64_t t100 = 0;
	int fd, fd0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	t100 = emu_us_to_ticks(c, 100);
	fd = nb_fd(c, 1);
	fd0 = nb_fd(c, 0);
	c->feat.int_coalescing = (2u << 8) | 3u; /* 4 entries or 200 us */
	emu_irq_raise(c, 1, 1000);
	emu_irq_raise(c, 1, 1000);
	emu_irq_raise(c, 1, 1000);
	CU_ASSERT_EQUAL(fired(fd), 0);
	emu_irq_raise(c, 1, 1000); /* the fourth: threshold reached */
	CU_ASSERT_EQUAL(fired(fd), 1);
	CU_ASSERT_EQUAL(c->irq_waiting, 0);
	emu_irq_raise(c, 1, 1000); /* one waits for the time */
	emu_irq_flush(c, 1000 + t100);
	CU_ASSERT_EQUAL(fired(fd), 0);
	emu_irq_flush(c, 1000 + 2 * t100);
	CU_ASSERT_EQUAL(fired(fd), 1);
	/* vector 0 (admin) is never coalesced */
	emu_irq_raise(c, 0, 5000);
	CU_ASSERT_EQUAL(fired(fd0), 1);
	/* 0x09 with CD for vector 1: every entry fires again */
	c->feat.int_vector_cfg = (1u << 16) | 1u;
	emu_irq_raise(c, 1, 6000);
	CU_ASSERT_EQUAL(fired(fd), 1);
	emu_ctrlr_free(c);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_fd_per_vector),
		UT_TEST(test_coalescing),
	};

	return ut_run("emu_irq", tests, NVP_COUNTOF(tests));
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the bdev unit tests: the bdev core sources (one unit: every test program
 * #includes all three so static functions are reachable), a stub module whose I/O the
 * test completes by hand, a log catcher, and main().
 *
 * The stub keeps every I/O it is given in submission order; ut_stub_complete() completes
 * them (with a chosen status for a chosen index) on the next poll. It can refuse with
 * -ENOMEM, complete inside submit, and it records what it saw for the assertions.
 */
#ifndef NVP_UT_BDEV_H
#define NVP_UT_BDEV_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "bdev/bdev.c"
#include "bdev/bdev_channel.c"
#include "bdev/bdev_io.c"

#define UT_STUB_MAX 256

struct ut_stub_rec {
	uint8_t type;
	uint32_t flags;
	uint64_t offset;
	uint64_t num;
	int iovcnt;
	struct iovec iov[NVP_BDEV_IO_NUM_IOVS];
};

struct ut_stub {
	struct nvp_bdev *bdev;
	uint32_t channels;
	uint32_t destructed;
	/* behaviour */
	int enomem_next;         /* refuse this many submissions with -ENOMEM */
	bool complete_in_submit; /* complete inside submit (the core must defer it) */
	int fail_index;          /* submission index to fail on completion, -1 none */
	struct nvme_status fail_status;
	/* what it saw */
	uint32_t submitted;
	struct ut_stub_rec rec[UT_STUB_MAX];
	struct nvp_bdev_io *held[UT_STUB_MAX];
	uint32_t num_held;
	bool auto_complete;   /* complete everything held on each poll */
	uint64_t complete_at; /* by lists: the time given, nvp_bdev_io_complete_list_at() */
	char *trace;          /* when set, appends "M" on submit, "m" on completion */
};

static struct ut_stub g_stub;

/*
 * The stub completes one I/O at a time (poll, nvp_bdev_io_complete()), or, in the second
 * suite ut_run() makes, by lists (nvp_bdev_io_complete_list(): runs of
 * successes as one list, a failure as a list of its own).
 */
static bool g_ut_stub_lists;

/* What registering a stage a test registers returns: 0 the first time, -EEXIST when the
 * second suite runs the test again (the registry is for the life of the process). */
#define UT_REGISTERED (g_ut_stub_lists ? -EEXIST : 0)

static inline void
ut_trace(char *trace, const char *s)
{
	if (trace != NULL) {
		strcat(trace, s);
	}
}

static bool
stub_supported(void *ctx, enum nvp_bdev_io_type type)
{
	(void)ctx;
	(void)type;
	return true;
}

static int
stub_channel_create(void *ctx, const struct nvp_bdev_channel_opts *opts, void **ch_ctx)
{
	struct ut_stub *s = ctx;

	(void)opts;
	s->channels++;
	*ch_ctx = s;
	return 0;
}

static void
stub_channel_destroy(void *ctx, void *ch_ctx)
{
	struct ut_stub *s = ctx;

	(void)ch_ctx;
	s->channels--;
}

static int
stub_submit(void *ch_ctx, struct nvp_bdev_io *io)
{
	struct ut_stub *s = ch_ctx;
	struct ut_stub_rec *r;
	int i;

	if (s->enomem_next > 0) {
		s->enomem_next--;
		nvp_bdev_io_submit_failed(io, -ENOMEM);
		return 0;
	}
	if (s->submitted < UT_STUB_MAX) {
		r = &s->rec[s->submitted];
		r->type = io->type;
		r->flags = io->flags;
		r->offset = io->offset_blocks;
		r->num = io->num_blocks;
		r->iovcnt = io->iovcnt;
		for (i = 0; i < io->iovcnt && i < NVP_BDEV_IO_NUM_IOVS; i++) {
			r->iov[i] = io->iovs[i];
		}
	}
	io->stage_data[1] = s->submitted++;
	ut_trace(s->trace, "M");
	if (s->complete_in_submit) {
		if (g_ut_stub_lists) {
			struct nvp_bdev_io_list l;
			struct nvme_cpl cpl;

			memset(&cpl, 0, sizeof(cpl));
			nvp_bdev_io_list_init(&l);
			nvp_bdev_io_list_append(&l, io);
			nvp_bdev_io_complete_list(&l, &cpl);
		} else {
			nvp_bdev_io_complete_status(io, 0, 0);
		}
		return 0;
	}
	s->held[s->num_held++] = io;
	return 0;
}

/* Complete every held I/O now (from inside a poll, as a device would). */
static __attribute__((unused)) int
stub_complete_held(struct ut_stub *s)
{
	static const struct nvme_cpl ok;
	struct nvp_bdev_io_list list;
	struct nvp_bdev_io *io;
	struct nvme_cpl cpl;
	uint32_t n = s->num_held, i;
	struct nvp_bdev_io *batch[UT_STUB_MAX];

	memcpy(batch, s->held, n * sizeof(batch[0]));
	s->num_held = 0;
	nvp_bdev_io_list_init(&list);
	for (i = 0; i < n; i++) {
		io = batch[i];
		memset(&cpl, 0, sizeof(cpl));
		if ((int)io->stage_data[1] == s->fail_index) {
			cpl.status = s->fail_status;
		}
		ut_trace(s->trace, "m");
		if (!g_ut_stub_lists) {
			nvp_bdev_io_complete(io, &cpl);
		} else if (nvme_cpl_is_error(&cpl)) {
			/* those before it first */
			nvp_bdev_io_complete_list_at(&list, &ok, s->complete_at);
			nvp_bdev_io_list_append(&list, io);
			nvp_bdev_io_complete_list_at(&list, &cpl, s->complete_at);
		} else {
			nvp_bdev_io_list_append(&list, io);
		}
	}
	if (!nvp_bdev_io_list_empty(&list)) {
		nvp_bdev_io_complete_list_at(&list, &ok, s->complete_at);
	}
	return (int)n;
}

static void
stub_poll(void *ch_ctx)
{
	struct ut_stub *s = ch_ctx;

	if (s->auto_complete) {
		(void)stub_complete_held(s);
	}
}

static void
stub_destruct(void *ctx)
{
	((struct ut_stub *)ctx)->destructed++;
}

static const struct nvp_bdev_fn_table g_stub_fn = {
	.destruct = stub_destruct,
	.io_type_supported = stub_supported,
	.channel_create = stub_channel_create,
	.channel_destroy = stub_channel_destroy,
	.submit = stub_submit,
	.poll = stub_poll,
};

/* Register "stub" with @num_blocks of 512 bytes, max transfer @max_xfer, @boundary. */
static inline struct nvp_bdev *
ut_stub_register(const char *name, uint64_t num_blocks, uint32_t max_xfer, uint32_t boundary)
{
	struct nvp_bdev_spec spec;

	memset(&g_stub, 0, sizeof(g_stub));
	g_stub.fail_index = -1;
	g_stub.auto_complete = true;
	memset(&spec, 0, sizeof(spec));
	spec.name = name;
	spec.module_name = "stub";
	spec.block_size = 512;
	spec.num_blocks = num_blocks;
	spec.max_xfer_blocks = max_xfer;
	spec.optimal_io_boundary = boundary;
	spec.io_ctx_size = 16;
	spec.fn_table = &g_stub_fn;
	spec.ctx = &g_stub;
	if (nvp_bdev_register(&spec, &g_stub.bdev) != 0) {
		return NULL;
	}
	return g_stub.bdev;
}

/* ---- completions and events seen by the tests ---- */

struct ut_done {
	uint32_t calls;
	struct nvme_cpl cpl;
	char *trace;
};

static __attribute__((unused)) void
ut_done_cb(void *arg, const struct nvme_cpl *cpl)
{
	struct ut_done *d = arg;

	d->calls++;
	d->cpl = *cpl;
	ut_trace(d->trace, "U");
}

/* bdev_ios in @ch's pool now, each checked to be back in its fast-path state. */
static __attribute__((unused)) uint32_t
ut_free_count(const struct nvp_bdev_channel *ch)
{
	const struct nvp_bdev_io *io;
	uint32_t n = 0;

	for (io = ch->free_ios; io != NULL && n <= ch->pool_size; io = io->internal.next) {
		CU_ASSERT_EQUAL(io->internal.state, 0);
		n++;
	}
	return n;
}

struct ut_events {
	uint32_t remove;
	uint32_t resize;
};

static __attribute__((unused)) void
ut_event_cb(enum nvp_bdev_event_type type, struct nvp_bdev *bdev, void *ctx)
{
	struct ut_events *e = ctx;

	(void)bdev;
	if (type == NVP_BDEV_EVENT_REMOVE) {
		e->remove++;
	} else {
		e->resize++;
	}
}

/* ---- log catcher: the last error message ---- */

static char g_ut_last_log[1024];

static void
ut_log_fn(enum nvp_log_level level, const char *component, const char *msg)
{
	(void)level;
	(void)component;
	nvp_strlcpy(g_ut_last_log, msg, sizeof(g_ut_last_log));
}

/* ---- main ---- */

struct ut_test {
	const char *name;
	CU_TestFunc fn;
};

#define UT_TEST(fn)     \
	{               \
#fn, fn \
	}

static int
ut_lists_on(void)
{
	g_ut_stub_lists = true;
	return 0;
}

static int
ut_lists_off(void)
{
	g_ut_stub_lists = false;
	return 0;
}

static inline int
ut_run(const char *suite_name, const struct ut_test *tests, size_t count)
{
	unsigned int failures;
	CU_pSuite suite, list_suite;
	char list_name[128];
	size_t i;

	snprintf(list_name, sizeof(list_name), "%s, stub completing by lists", suite_name);
	nvp_log_set_callback(ut_log_fn);
	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	suite = CU_add_suite(suite_name, NULL, NULL);
	for (i = 0; suite != NULL && i < count; i++) {
		if (CU_add_test(suite, tests[i].name, tests[i].fn) == NULL) {
			suite = NULL;
		}
	}
	/* every test again with the stub completing by lists (the core's other path) */
	list_suite = suite != NULL ? CU_add_suite(list_name, ut_lists_on, ut_lists_off) : NULL;
	for (i = 0; list_suite != NULL && i < count; i++) {
		if (CU_add_test(list_suite, tests[i].name, tests[i].fn) == NULL) {
			list_suite = NULL;
		}
	}
	if (suite == NULL || list_suite == NULL) {
		CU_cleanup_registry();
		return 1;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}

#endif /* NVP_UT_BDEV_H */

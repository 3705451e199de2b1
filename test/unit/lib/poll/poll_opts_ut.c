/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of lib/poll/poll_opts.c: defaults and every accepted and refused mode. */
#include "poll_ut_fake.h"

#include "poll/poll_opts.c"

static void
test_mode_parse(void)
{
	struct nvp_poll_opts o;

	nvp_poll_opts_init(&o, sizeof(o));
	CU_ASSERT_EQUAL(o.mode, NVP_POLL_CLASSIC);
	CU_ASSERT_EQUAL(nvp_poll_mode_parse("hybrid", &o), 0);
	CU_ASSERT(o.mode == NVP_POLL_HYBRID && o.pct == POLL_DEFAULT_PCT);
	CU_ASSERT_EQUAL(nvp_poll_mode_parse("hybrid:mean", &o), 0);
	CU_ASSERT_EQUAL(o.pct, 0);
	CU_ASSERT_EQUAL(nvp_poll_mode_parse("HYBRID:p25", &o), 0);
	CU_ASSERT_EQUAL(o.pct, 25);
	CU_ASSERT_EQUAL(nvp_poll_mode_parse("fixed:40", &o), 0);
	CU_ASSERT(o.mode == NVP_POLL_FIXED && o.fixed_us == 40);
	CU_ASSERT_EQUAL(nvp_poll_mode_parse("irq", &o), 0);
	CU_ASSERT_EQUAL(o.mode, NVP_POLL_IRQ);
	CU_ASSERT_EQUAL(nvp_poll_mode_parse("classic", &o), 0);
	CU_ASSERT_EQUAL(nvp_poll_mode_parse("umwait", &o), 0);
	CU_ASSERT_EQUAL(o.mode, NVP_POLL_UMWAIT);
	CU_ASSERT_EQUAL(nvp_poll_mode_parse("fixed", &o), -EINVAL);
	CU_ASSERT_EQUAL(nvp_poll_mode_parse("fixed:0", &o), -EINVAL);
	CU_ASSERT_EQUAL(nvp_poll_mode_parse("fixed:x", &o), -EINVAL);
	CU_ASSERT_EQUAL(nvp_poll_mode_parse("hybrid:p0", &o), -EINVAL);
	CU_ASSERT_EQUAL(nvp_poll_mode_parse("hybrid:p100", &o), -EINVAL);
	CU_ASSERT_EQUAL(nvp_poll_mode_parse("hybrid:median", &o), -EINVAL);
	CU_ASSERT_EQUAL(nvp_poll_mode_parse("irq:3", &o), -EINVAL);
	CU_ASSERT_EQUAL(nvp_poll_mode_parse("spin", &o), -EINVAL);
	CU_ASSERT_EQUAL(nvp_poll_mode_parse("", &o), -EINVAL);
	CU_ASSERT_EQUAL(nvp_poll_mode_parse(NULL, &o), -EINVAL);
	CU_ASSERT_STRING_EQUAL(nvp_poll_mode_name(NVP_POLL_FIXED), "fixed");
}

static void
test_defaults(void)
{
	struct nvp_poll_opts o;

	memset(&o, 0xff, sizeof(o));
	nvp_poll_opts_init(&o, sizeof(o));
	CU_ASSERT_EQUAL(o.opts_size, sizeof(o));
	CU_ASSERT_EQUAL(o.mode, NVP_POLL_CLASSIC);
	CU_ASSERT_EQUAL(o.window_ms, 100);
	CU_ASSERT_EQUAL(o.min_samples, 8);
	CU_ASSERT(o.calibrate);
	CU_ASSERT_STRING_EQUAL(nvp_poll_mode_name(42), "unknown");
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_mode_parse),
		UT_TEST(test_defaults),
	};

	return ut_run("poll_opts", tests, NVP_COUNTOF(tests));
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests for lib/env_common/opts.c: option defaults and the opts_size-aware copy. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "env_common/opts.c"

#include "../../util/ut_main.h"

static void
test_defaults(void)
{
	struct nvp_env_opts o;

	memset(&o, 0xa5, sizeof(o));
	nvp_env_opts_init(&o, sizeof(o));
	CU_ASSERT_EQUAL(o.opts_size, sizeof(o));
	CU_ASSERT_STRING_EQUAL(o.name, "nvpoll");
	CU_ASSERT_STRING_EQUAL(o.core_mask, "0x1");
	CU_ASSERT_EQUAL(o.mem_size_mb, 0);
	CU_ASSERT_FALSE(o.no_huge);
	CU_ASSERT_FALSE(o.no_pci);
	CU_ASSERT_FALSE(o.quiet);
	nvp_env_opts_init(NULL, sizeof(o)); /* no crash */
}

static void
test_older_caller(void)
{
	/* A caller built when the struct ended after core_mask: nothing beyond is touched. */
	size_t old = offsetof(struct nvp_env_opts, mem_size_mb);
	unsigned char raw[sizeof(struct nvp_env_opts)];
	struct nvp_env_opts *o = (struct nvp_env_opts *)raw;
	struct nvp_env_opts copy;
	size_t i;

	memset(raw, 0xa5, sizeof(raw));
	nvp_env_opts_init(o, old);
	CU_ASSERT_EQUAL(o->opts_size, old);
	CU_ASSERT_STRING_EQUAL(o->name, "nvpoll");
	for (i = old; i < sizeof(raw); i++) {
		CU_ASSERT_EQUAL(raw[i], 0xa5);
	}
	/* Copying takes only the fields it knows; the rest are defaults. */
	o->name = "app";
	CU_ASSERT_EQUAL(env_opts_copy(&copy, o), 0);
	CU_ASSERT_STRING_EQUAL(copy.name, "app");
	CU_ASSERT_EQUAL(copy.mem_size_mb, 0);
	CU_ASSERT_FALSE(copy.no_huge);
	CU_ASSERT_EQUAL(copy.opts_size, sizeof(copy));
}

static void
test_copy(void)
{
	struct nvp_env_opts o, copy;

	CU_ASSERT_EQUAL(env_opts_copy(&copy, NULL), 0);
	CU_ASSERT_STRING_EQUAL(copy.name, "nvpoll");
	nvp_env_opts_init(&o, sizeof(o));
	o.name = NULL;
	o.core_mask = NULL;
	o.mem_size_mb = 64;
	o.no_huge = true;
	o.quiet = true;
	CU_ASSERT_EQUAL(env_opts_copy(&copy, &o), 0);
	CU_ASSERT_STRING_EQUAL(copy.name, "nvpoll");   /* NULL = default */
	CU_ASSERT_STRING_EQUAL(copy.core_mask, "0x1"); /* NULL = "0x1" */
	CU_ASSERT_EQUAL(copy.mem_size_mb, 64);
	CU_ASSERT_TRUE(copy.no_huge);
	CU_ASSERT_TRUE(copy.quiet);
	/* opts_size 0 or too small to hold even the name: the caller forgot opts_init. */
	o.opts_size = 0;
	CU_ASSERT_EQUAL(env_opts_copy(&copy, &o), -EINVAL);
	o.opts_size = sizeof(size_t);
	CU_ASSERT_EQUAL(env_opts_copy(&copy, &o), -EINVAL);
	/* A newer caller's bigger struct: the known prefix is used. */
	o.opts_size = sizeof(o) + 64;
	CU_ASSERT_EQUAL(env_opts_copy(&copy, &o), 0);
	CU_ASSERT_EQUAL(copy.mem_size_mb, 64);
}

static void
test_recorded_opts(void)
{
	struct nvp_env_opts o;
	char name[16] = "myapp";
	const struct nvp_env_opts *got = env_opts_get();

	/* Defaults before any backend recorded anything. */
	CU_ASSERT_STRING_EQUAL(got->name, "nvpoll");
	CU_ASSERT_FALSE(got->no_pci);
	nvp_env_opts_init(&o, sizeof(o));
	o.name = name;
	o.no_pci = true;
	o.mem_size_mb = 32;
	env_opts_set(&o);
	name[0] = 'X'; /* the strings were copied */
	got = env_opts_get();
	CU_ASSERT_STRING_EQUAL(got->name, "myapp");
	CU_ASSERT_STRING_EQUAL(got->core_mask, "0x1");
	CU_ASSERT_TRUE(got->no_pci);
	CU_ASSERT_EQUAL(got->mem_size_mb, 32);
	env_opts_set(NULL);
	CU_ASSERT_FALSE(env_opts_get()->no_pci);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_defaults),
		UT_TEST(test_older_caller),
		UT_TEST(test_copy),
		UT_TEST(test_recorded_opts),
	};

	return ut_run("opts", tests, NVP_COUNTOF(tests));
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests for lib/env_common/vdev.c: the virtual device provider registry. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "env_common/vdev.c"

#include "../../util/ut_main.h"
#include "nvpoll/util.h"

static int
fake_create(const char *name, const char *args, struct nvp_pci_addr *addr, char *err, size_t errlen)
{
	(void)name;
	(void)args;
	memset(addr, 0, sizeof(*addr));
	nvp_strlcpy(err, "", errlen);
	return 0;
}

static int
fake_destroy(const struct nvp_pci_addr *addr)
{
	(void)addr;
	return 0;
}

/* Registered before main(), the way device models do it. */
static struct nvp_env_vdev_provider g_ctor_provider = {
	.name = "ctor",
	.create = fake_create,
	.destroy = fake_destroy,
};

__attribute__((constructor)) static void
register_from_constructor(void)
{
	nvp_env_vdev_provider_register(&g_ctor_provider);
}

static void
test_constructor_registration(void)
{
	CU_ASSERT_PTR_EQUAL(nvp_env_vdev_provider_find("ctor"), &g_ctor_provider);
}

static void
test_register_find(void)
{
	struct nvp_env_vdev_provider emu = { .name = "emu",
					     .create = fake_create,
					     .destroy = fake_destroy };
	struct nvp_env_vdev_provider emu2 = { .name = "EMU",
					      .create = fake_create,
					      .destroy = fake_destroy };
	struct nvp_env_vdev_provider other = { .name = "null",
					       .create = fake_create,
					       .destroy = fake_destroy };

	CU_ASSERT_PTR_NULL(nvp_env_vdev_provider_find("emu"));
	CU_ASSERT_EQUAL(nvp_env_vdev_provider_register(&emu), 0);
	CU_ASSERT_EQUAL(nvp_env_vdev_provider_register(&other), 0);
	CU_ASSERT_PTR_EQUAL(nvp_env_vdev_provider_find("emu"), &emu);
	CU_ASSERT_PTR_EQUAL(nvp_env_vdev_provider_find("Emu"), &emu); /* case-insensitive */
	CU_ASSERT_PTR_EQUAL(nvp_env_vdev_provider_find("NULL"), &other);
	CU_ASSERT_PTR_NULL(nvp_env_vdev_provider_find("em"));
	CU_ASSERT_PTR_NULL(nvp_env_vdev_provider_find("emu0"));
	CU_ASSERT_PTR_NULL(nvp_env_vdev_provider_find(""));
	CU_ASSERT_PTR_NULL(nvp_env_vdev_provider_find(NULL));
	/* Same name in another case, or the same provider twice: -EEXIST. */
	CU_ASSERT_EQUAL(nvp_env_vdev_provider_register(&emu2), -EEXIST);
	CU_ASSERT_EQUAL(nvp_env_vdev_provider_register(&emu), -EEXIST);
	CU_ASSERT_PTR_EQUAL(nvp_env_vdev_provider_find("EMU"), &emu);
	/* The registry keeps a pointer: the providers here must outlive the test. */
	TAILQ_REMOVE(&g_providers, &emu, link);
	TAILQ_REMOVE(&g_providers, &other, link);
}

static void
test_register_invalid(void)
{
	struct nvp_env_vdev_provider p = { .name = "x",
					   .create = fake_create,
					   .destroy = fake_destroy };

	CU_ASSERT_EQUAL(nvp_env_vdev_provider_register(NULL), -EINVAL);
	p.name = NULL;
	CU_ASSERT_EQUAL(nvp_env_vdev_provider_register(&p), -EINVAL);
	p.name = "";
	CU_ASSERT_EQUAL(nvp_env_vdev_provider_register(&p), -EINVAL);
	p.name = "x";
	p.create = NULL;
	CU_ASSERT_EQUAL(nvp_env_vdev_provider_register(&p), -EINVAL);
	p.create = fake_create;
	p.destroy = NULL;
	CU_ASSERT_EQUAL(nvp_env_vdev_provider_register(&p), -EINVAL);
	CU_ASSERT_PTR_NULL(nvp_env_vdev_provider_find("x"));
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_constructor_registration),
		UT_TEST(test_register_find),
		UT_TEST(test_register_invalid),
	};

	nvp_log_set_level(NVP_LOG_DISABLED);
	return ut_run("vdev", tests, NVP_COUNTOF(tests));
}

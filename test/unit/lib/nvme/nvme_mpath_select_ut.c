/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of multipath path selection (nvme_mpath_select.c) on made-up path states:
 * optimized before non-optimized, inaccessible / persistent loss / change / unusable paths
 * never, failover staying on its path until it goes (and not going back when the old one
 * returns), multipath taking turns among the optimized paths only, a request's failed
 * paths passed over.
 */
#include "nvme/nvme_mpath_select.c"

#include "ut_nvme.h"

#define OPT NVME_ANA_OPTIMIZED
#define NONOPT NVME_ANA_NON_OPTIMIZED
#define INACC NVME_ANA_INACCESSIBLE

static void
set(struct nvme_mpath_view *v, uint8_t st, bool usable)
{
	v->ana_state = st;
	v->usable = usable;
}

static void
test_failover_sticks_then_moves(void)
{
	struct nvme_mpath_view v[3];
	uint32_t cur = 0;

	set(&v[0], OPT, true);
	set(&v[1], OPT, true);
	set(&v[2], NONOPT, true);
	for (int k = 0; k < 5; k++) {
		CU_ASSERT_EQUAL(nvme_mpath_select(NVP_NVME_MPATH_FAILOVER, v, 3, 0, &cur), 0);
	}
	v[0].usable = false; /* the active path fails: the next optimized one */
	CU_ASSERT_EQUAL(nvme_mpath_select(NVP_NVME_MPATH_FAILOVER, v, 3, 0, &cur), 1);
	CU_ASSERT_EQUAL(cur, 1);
	v[0].usable = true; /* it is back: no moving back */
	CU_ASSERT_EQUAL(nvme_mpath_select(NVP_NVME_MPATH_FAILOVER, v, 3, 0, &cur), 1);
	v[0].ana_state = INACC;
	v[1].ana_state = INACC; /* only the non-optimized path is left */
	CU_ASSERT_EQUAL(nvme_mpath_select(NVP_NVME_MPATH_FAILOVER, v, 3, 0, &cur), 2);
	v[0].ana_state = OPT; /* an optimized path again: leave the non-optimized one */
	CU_ASSERT_EQUAL(nvme_mpath_select(NVP_NVME_MPATH_FAILOVER, v, 3, 0, &cur), 0);
}

static void
test_multipath_round_robin_optimized_only(void)
{
	struct nvme_mpath_view v[4];
	unsigned int count[4] = { 0 };
	uint32_t cur = 0;

	set(&v[0], OPT, true);
	set(&v[1], NONOPT, true);
	set(&v[2], OPT, true);
	set(&v[3], INACC, true);
	for (int k = 0; k < 100; k++) {
		int i = nvme_mpath_select(NVP_NVME_MPATH_MULTIPATH, v, 4, 0, &cur);

		CU_ASSERT(i == 0 || i == 2);
		if (i >= 0) {
			count[i]++;
		}
	}
	CU_ASSERT_EQUAL(count[0], 50);
	CU_ASSERT_EQUAL(count[2], 50);
	v[0].usable = false;
	v[2].ana_state = NVME_ANA_CHANGE; /* no optimized path: the non-optimized one */
	for (int k = 0; k < 10; k++) {
		CU_ASSERT_EQUAL(nvme_mpath_select(NVP_NVME_MPATH_MULTIPATH, v, 4, 0, &cur), 1);
	}
}

static void
test_none_usable(void)
{
	struct nvme_mpath_view v[3];
	uint32_t cur = 1;

	set(&v[0], INACC, true);
	set(&v[1], NVME_ANA_PERSISTENT_LOSS, true);
	set(&v[2], OPT, false);
	CU_ASSERT_EQUAL(nvme_mpath_select(NVP_NVME_MPATH_FAILOVER, v, 3, 0, &cur), -1);
	CU_ASSERT_EQUAL(nvme_mpath_select(NVP_NVME_MPATH_MULTIPATH, v, 3, 0, &cur), -1);
	CU_ASSERT_EQUAL(cur, 1); /* unchanged */
	set(&v[2], 0, true);     /* a state that is no ANA state: not used either */
	CU_ASSERT_EQUAL(nvme_mpath_select(NVP_NVME_MPATH_FAILOVER, v, 3, 0, &cur), -1);
	CU_ASSERT_EQUAL(nvme_mpath_select(NVP_NVME_MPATH_FAILOVER, v, 0, 0, &cur), -1);
}

static void
test_exclude_failed_paths(void)
{
	struct nvme_mpath_view v[3];
	uint32_t cur = 0;

	set(&v[0], OPT, true);
	set(&v[1], NONOPT, true);
	set(&v[2], OPT, true);
	/* the request failed on 0: the other optimized path, not the non-optimized one */
	CU_ASSERT_EQUAL(nvme_mpath_select(NVP_NVME_MPATH_FAILOVER, v, 3, 1u << 0, &cur), 2);
	CU_ASSERT_EQUAL(cur, 2);
	/* failed on both optimized ones: the non-optimized one */
	CU_ASSERT_EQUAL(nvme_mpath_select(NVP_NVME_MPATH_MULTIPATH, v, 3, 5u, &cur), 1);
	CU_ASSERT_EQUAL(nvme_mpath_select(NVP_NVME_MPATH_MULTIPATH, v, 3, 7u, &cur), -1);
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	nvp_log_set_callback(ut_log_cb);
	s = CU_add_suite("nvme_mpath_select", NULL, NULL);
	CU_add_test(s, "failover_sticks_then_moves", test_failover_sticks_then_moves);
	CU_add_test(s, "multipath_round_robin_optimized_only",
		    test_multipath_round_robin_optimized_only);
	CU_add_test(s, "none_usable", test_none_usable);
	CU_add_test(s, "exclude_failed_paths", test_exclude_failed_paths);
	return ut_run();
}

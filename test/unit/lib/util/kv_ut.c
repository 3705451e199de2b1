/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests for lib/util/kv.c: numeric key=value parameters, their ranges and messages. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "util/kv.c"
#include "util/log.c"
#include "util/string.c"

#include "ut_main.h"

static char g_msg[512];
static char g_component[32];
static int g_nmsg;

static void
capture(enum nvp_log_level level, const char *component, const char *msg)
{
	(void)level;
	nvp_strlcpy(g_component, component, sizeof(g_component));
	nvp_strlcpy(g_msg, msg, sizeof(g_msg));
	g_nmsg++;
}

static void
reset_log(void)
{
	g_msg[0] = '\0';
	g_component[0] = '\0';
	g_nmsg = 0;
	nvp_log_set_callback(capture);
}

struct other_seen {
	int n;
	char key[64];
	char value[64];
	int rc;
};

static int
other_cb(void *ctx, const char *key, const char *value)
{
	struct other_seen *o = ctx;

	o->n++;
	nvp_strlcpy(o->key, key, sizeof(o->key));
	nvp_strlcpy(o->value, value, sizeof(o->value));
	return o->rc;
}

static void
test_nums_in_range(void)
{
	uint64_t a = 7, b = 9;
	const struct nvp_kv_num t[] = { { "a", &a, 1, 100 },
					{ "b", &b, 0, 5 },
					{ NULL, NULL, 0, 0 } };

	reset_log();
	CU_ASSERT_EQUAL(nvp_kv_parse_nums("a=100,b=0", t, "test", "who", NULL, NULL), 0);
	CU_ASSERT_EQUAL(a, 100);
	CU_ASSERT_EQUAL(b, 0);
	/* The last value of a key given twice wins; hex as nvp_strtou64() reads it. */
	CU_ASSERT_EQUAL(nvp_kv_parse_nums("a=1 a=0x10", t, "test", "who", NULL, NULL), 0);
	CU_ASSERT_EQUAL(a, 16);
	/* Nothing to parse leaves the defaults. */
	CU_ASSERT_EQUAL(nvp_kv_parse_nums(NULL, t, "test", "who", NULL, NULL), 0);
	CU_ASSERT_EQUAL(nvp_kv_parse_nums("", t, "test", "who", NULL, NULL), 0);
	CU_ASSERT_EQUAL(a, 16);
	CU_ASSERT_EQUAL(g_nmsg, 0);
	CU_ASSERT_EQUAL(nvp_kv_parse_nums("a=1", NULL, "test", "who", NULL, NULL), -EINVAL);
}

static void
test_nums_out_of_range(void)
{
	uint64_t a = 7;
	const struct nvp_kv_num t[] = { { "a", &a, 1, 100 }, { NULL, NULL, 0, 0 } };

	reset_log();
	CU_ASSERT_EQUAL(nvp_kv_parse_nums("a=101", t, "sched", "kyber", NULL, NULL), -EINVAL);
	CU_ASSERT_EQUAL(a, 7);
	CU_ASSERT_EQUAL(g_nmsg, 1);
	CU_ASSERT_STRING_EQUAL(g_component, "sched");
	CU_ASSERT_STRING_EQUAL(g_msg, "kyber: a='101': expected a whole number from 1 to 100");

	reset_log();
	CU_ASSERT_EQUAL(nvp_kv_parse_nums("a=0", t, "wbt", NULL, NULL, NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(g_component, "wbt");
	CU_ASSERT_STRING_EQUAL(g_msg, "a='0': expected a whole number from 1 to 100");

	reset_log();
	CU_ASSERT_EQUAL(nvp_kv_parse_nums("a=-1", t, "wbt", NULL, NULL, NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(g_msg, "a='-1': expected a whole number from 1 to 100");
	CU_ASSERT_EQUAL(nvp_kv_parse_nums("a=", t, "wbt", NULL, NULL, NULL), -EINVAL);
	CU_ASSERT_EQUAL(nvp_kv_parse_nums("a=5x", t, "wbt", NULL, NULL, NULL), -EINVAL);
	CU_ASSERT_EQUAL(a, 7);
}

static void
test_nums_unknown(void)
{
	uint64_t a = 7, bb = 1;
	const struct nvp_kv_num t[] = { { "a", &a, 1, 100 },
					{ "bb", &bb, 0, 5 },
					{ NULL, NULL, 0, 0 } };
	struct other_seen o = { 0 };

	reset_log();
	CU_ASSERT_EQUAL(nvp_kv_parse_nums("a=5,c=1", t, "sched", "deadline", NULL, NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(g_msg, "deadline: unknown parameter 'c' (known: a, bb)");
	reset_log();
	CU_ASSERT_EQUAL(nvp_kv_parse_nums("zz=1", t, "wbt", NULL, NULL, NULL), -EINVAL);
	CU_ASSERT_STRING_EQUAL(g_msg, "unknown parameter 'zz' (known: a, bb)");

	/* Keys the table lacks go to the other callback, and its answer is returned. */
	reset_log();
	CU_ASSERT_EQUAL(nvp_kv_parse_nums("a=3 w=1/2 bb=4", t, "sched", "fair", other_cb, &o), 0);
	CU_ASSERT_EQUAL(o.n, 1);
	CU_ASSERT_STRING_EQUAL(o.key, "w");
	CU_ASSERT_STRING_EQUAL(o.value, "1/2");
	CU_ASSERT_EQUAL(a, 3);
	CU_ASSERT_EQUAL(bb, 4);
	CU_ASSERT_EQUAL(g_nmsg, 0);
	o.rc = -ENOENT;
	CU_ASSERT_EQUAL(nvp_kv_parse_nums("w=1 a=9", t, "sched", "fair", other_cb, &o), -ENOENT);
	CU_ASSERT_EQUAL(a, 3); /* stopped at the first error */
}

static void
test_nums_known_list_bounded(void)
{
	/* A table whose key list overflows the message buffer still logs, truncated. */
	static char keys[40][16];
	struct nvp_kv_num t[41];
	uint64_t v;
	int i;

	for (i = 0; i < 40; i++) {
		snprintf(keys[i], sizeof(keys[i]), "key_number_%02d", i);
		t[i] = (struct nvp_kv_num){ keys[i], &v, 0, 1 };
	}
	t[40] = (struct nvp_kv_num){ NULL, NULL, 0, 0 };
	reset_log();
	CU_ASSERT_EQUAL(nvp_kv_parse_nums("nope=1", t, "test", NULL, NULL, NULL), -EINVAL);
	CU_ASSERT_EQUAL(g_nmsg, 1);
	CU_ASSERT(strstr(g_msg, "unknown parameter 'nope' (known: key_number_00, key_number_01") ==
		  g_msg);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_nums_in_range),
		UT_TEST(test_nums_out_of_range),
		UT_TEST(test_nums_unknown),
		UT_TEST(test_nums_known_list_bounded),
	};

	return ut_run("kv", tests, NVP_COUNTOF(tests));
}

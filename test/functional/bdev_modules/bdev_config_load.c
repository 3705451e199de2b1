/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The JSON configuration with the real modules: a file making a software controller (its
 * options as params), a malloc and a null bdev is loaded, every bdev it made takes a
 * write and a read back; a file that fails at its last entry leaves no bdev and no
 * controller behind (the name can be attached again), and the one-line form does the
 * same as the file. An NVMe/TCP controller configured with SPDK's parameters (trtype
 * TCP, trsvcid, subnqn, hostnqn, hdgst, ddgst, the reconnect options) takes I/O through
 * the tests' TCP target, which verifies the digests the parameters asked for. Multipath
 * bdevs (SPDK's "multipath" parameter) take I/O down both paths, around an inaccessible or
 * dropped path, and a path reset begun by a channel's poll ends when the channel goes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "nvpoll/bdev.h"
#include "nvpoll/log.h"
#include "nvpoll/nvme_mpath.h"
#include "nvme_tcp_tgt.h"

static char g_dir[64];

static void
event_cb(enum nvp_bdev_event_type type, struct nvp_bdev *bdev, void *ctx)
{
	(void)type;
	(void)bdev;
	(void)ctx;
}

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

static int
wait_one(struct nvp_bdev_channel *ch, struct fx_cpl *done)
{
	uint64_t deadline = fx_now_us() + FX_WAIT_MS * 1000ull;

	while (done->calls == 0 && fx_now_us() < deadline) {
		nvp_bdev_channel_poll(ch);
	}
	return done->calls == 1 && !nvme_cpl_is_error(&done->cpl) ? 0 : -EIO;
}

/* Write 8 blocks with a pattern at block 16, read them back, compare. */
static void
check_bdev(const char *name)
{
	struct nvp_bdev_desc *desc = NULL;
	struct nvp_bdev_channel *ch = NULL;
	struct fx_cpl done;
	uint32_t bs;
	uint8_t *buf;

	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open(name, true, event_cb, NULL, &desc), 0);
	bs = nvp_bdev_get_block_size(nvp_bdev_desc_get_bdev(desc));
	buf = fx_dma_alloc(16 * (size_t)bs);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch), 0);
	fx_pattern_fill(buf, 16, 8, bs, 7);
	memset(&done, 0, sizeof(done));
	CU_ASSERT_EQUAL(nvp_bdev_write_blocks(desc, ch, buf, 16, 8, 0, fx_cpl_cb, &done), 0);
	CU_ASSERT_EQUAL(wait_one(ch, &done), 0);
	memset(&done, 0, sizeof(done));
	CU_ASSERT_EQUAL(nvp_bdev_read_blocks(desc, ch, buf + 8 * bs, 16, 8, fx_cpl_cb, &done), 0);
	CU_ASSERT_EQUAL(wait_one(ch, &done), 0);
	if (strcmp(nvp_bdev_get_module_name(nvp_bdev_desc_get_bdev(desc)), "null") == 0) {
		CU_ASSERT(fx_is_zero(buf + 8 * bs, 8 * (size_t)bs));
	} else {
		CU_ASSERT(fx_pattern_check(buf + 8 * bs, 16, 8, bs, 7) < 0);
	}
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	nvp_env_dma_free(buf);
}

#define GOOD_JSON                                                                                \
	"{\"subsystems\": [{\"subsystem\": \"bdev\", \"config\": [\n"                            \
	"  {\"method\": \"bdev_nvme_attach_controller\",\n"                                      \
	"   \"params\": {\"name\": \"cfg0\", \"trtype\": \"emu\", \"nn\": 2, \"size\": \"4M\", " \
	"\"lba\": \"512/4096\"}},\n"                                                             \
	"  {\"method\": \"bdev_malloc_create\", \"params\": {\"name\": \"m0\", "                 \
	"\"num_blocks\": 256, \"block_size\": 4096}},\n"                                         \
	"  {\"method\": \"bdev_null_create\", \"params\": {\"name\": \"z0\", "                   \
	"\"num_blocks\": 1024}}%s\n"                                                             \
	"]}]}\n"

static void
test_good_file(void)
{
	char path[128], text[2048];

	FX_NEEDS_EMU("makes software controllers");
	snprintf(path, sizeof(path), "%s/good.json", g_dir);
	snprintf(text, sizeof(text), GOOD_JSON, "");
	write_file(path, text);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_load_config_file(path), 0);
	CU_ASSERT_EQUAL(nvp_bdev_get_block_size(nvp_bdev_get_by_name("cfg0n1")), 512);
	CU_ASSERT_EQUAL(nvp_bdev_get_block_size(nvp_bdev_get_by_name("cfg0n2")), 4096);
	CU_ASSERT_EQUAL(nvp_bdev_get_num_blocks(nvp_bdev_get_by_name("cfg0n2")), 1024);
	check_bdev("cfg0n1");
	check_bdev("cfg0n2");
	check_bdev("m0");
	check_bdev("z0");
	CU_ASSERT_EQUAL(nvp_bdev_fini(), 0);
	CU_ASSERT_PTR_NULL(nvp_bdev_first());
	unlink(path);
}

static void
test_bad_file_leaves_nothing(void)
{
	char path[128], text[2048];

	FX_NEEDS_EMU("makes software controllers");
	snprintf(path, sizeof(path), "%s/bad.json", g_dir);
	snprintf(text, sizeof(text), GOOD_JSON,
		 ",\n  {\"method\": \"bdev_null_create\", \"params\": {\"name\": \"m0\", "
		 "\"num_blocks\": 8}}");
	write_file(path, text);
	CU_ASSERT_EQUAL(nvp_bdev_load_config_file(path), -EEXIST);
	CU_ASSERT_PTR_NULL(nvp_bdev_first());
	/* the controller was detached: the same file without the bad entry loads */
	snprintf(text, sizeof(text), GOOD_JSON, "");
	write_file(path, text);
	CU_ASSERT_EQUAL(nvp_bdev_load_config_file(path), 0);
	CU_ASSERT_PTR_NOT_NULL(nvp_bdev_get_by_name("cfg0n2"));
	CU_ASSERT_EQUAL(nvp_bdev_fini(), 0);
	unlink(path);
}

static void
test_line(void)
{
	FX_NEEDS_EMU("makes software controllers");
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_load_config("nvme:name=ln0,trtype=emu,nn=1,size=2M;"
						   "malloc:name=lm0,num_blocks=64"),
			      0);
	check_bdev("ln0n1");
	check_bdev("lm0");
	CU_ASSERT_EQUAL(nvp_bdev_load_config("nvme:name=ln1,trtype=emu;malloc:name=lm0,"
					     "num_blocks=64"),
			-EEXIST);
	CU_ASSERT_PTR_NULL(nvp_bdev_get_by_name("ln1n1"));
	CU_ASSERT_EQUAL(nvp_bdev_fini(), 0);
}

#define TCP_JSON                                                                                  \
	"{\"subsystems\": [{\"subsystem\": \"bdev\", \"config\": [\n"                             \
	"  {\"method\": \"bdev_nvme_attach_controller\", \"params\": {\"name\": \"tcp0\", "       \
	"\"trtype\": \"%s\", \"adrfam\": \"IPv4\", \"traddr\": \"127.0.0.1\", "                   \
	"\"trsvcid\": \"%u\", \"subnqn\": \"%s\", "                                               \
	"\"hostnqn\": \"nqn.2014-08.org.nvmexpress:uuid:6c6f6164-0000-4000-8000-636f6e666967\", " \
	"\"hdgst\": true, \"ddgst\": true, \"ctrlr_loss_timeout_sec\": -1, "                      \
	"\"reconnect_delay_sec\": 2, \"fast_io_fail_timeout_sec\": %u}}\n"                        \
	"]}]}\n"

static void
test_tcp(void)
{
	struct tcp_tgt_stats st;
	struct tcp_tgt_opts o;
	struct fx_ctrlr backend;
	struct tcp_tgt *tgt;
	char path[128], text[1024];

	FX_NEEDS_EMU("serves a software controller over NVMe/TCP");
	CU_ASSERT_EQUAL_FATAL(fx_open(&backend, "size=4M,lba=512"), 0);
	tcp_tgt_opts_init(&o);
	CU_ASSERT_EQUAL_FATAL(tcp_tgt_start(backend.ctrlr, &o, &tgt), 0);
	snprintf(path, sizeof(path), "%s/tcp.json", g_dir);

	/* digests and a host NQN are TCP's: refused for another transport */
	snprintf(text, sizeof(text), TCP_JSON, "PCIe", tcp_tgt_port(tgt), o.subnqn, 4u);
	write_file(path, text);
	CU_ASSERT_EQUAL(nvp_bdev_load_config_file(path), -EINVAL);
	CU_ASSERT_PTR_NULL(nvp_bdev_first());

	/* fast_io_fail_timeout_sec is used, so it is checked: below the delay, refused */
	snprintf(text, sizeof(text), TCP_JSON, "TCP", tcp_tgt_port(tgt), o.subnqn, 1u);
	write_file(path, text);
	CU_ASSERT_EQUAL(nvp_bdev_load_config_file(path), -EINVAL);
	CU_ASSERT_PTR_NULL(nvp_bdev_first());

	snprintf(text, sizeof(text), TCP_JSON, "TCP", tcp_tgt_port(tgt), o.subnqn, 4u);
	write_file(path, text);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_load_config_file(path), 0);
	CU_ASSERT_EQUAL(nvp_bdev_get_block_size(nvp_bdev_get_by_name("tcp0n1")), 512);
	check_bdev("tcp0n1");
	CU_ASSERT_EQUAL(nvp_bdev_fini(), 0);

	tcp_tgt_get_stats(tgt, &st);
	CU_ASSERT(st.connections >= 2); /* admin and at least one I/O queue */
	CU_ASSERT(st.hdgsts_checked > 0);
	CU_ASSERT(st.ddgsts_checked > 0);
	CU_ASSERT_EQUAL(st.bad_host_pdus, 0);
	tcp_tgt_stop(tgt);
	fx_close(&backend);
	unlink(path);
}

#define MP_ATTACH(port, nqn, policy)                                                          \
	"  {\"method\": \"bdev_nvme_attach_controller\", \"params\": {\"name\": \"mp0\", "    \
	"\"trtype\": \"TCP\", \"adrfam\": \"IPv4\", \"traddr\": \"127.0.0.1\", \"trsvcid\": " \
	"\"" port "\", \"subnqn\": \"" nqn "\", \"multipath\": \"" policy "\"}}"

/*
 * One software controller served on two loopback listeners (ANA group 1), and the bdev
 * mp0n1 over both, from a configuration (@file in the test directory, removed once
 * loaded) whose two attaches have multipath @policy.
 */
static void
mp_two_paths(const char *file, const char *policy, struct fx_ctrlr *backend, struct tcp_tgt *tgt[2])
{
	struct tcp_tgt_opts o;
	char path[128], text[2048], port[2][8];

	CU_ASSERT_EQUAL_FATAL(fx_open(backend, "size=4M,lba=512"), 0);
	for (int i = 0; i < 2; i++) {
		tcp_tgt_opts_init(&o);
		o.ana_grpid = 1;
		CU_ASSERT_EQUAL_FATAL(tcp_tgt_start(backend->ctrlr, &o, &tgt[i]), 0);
		snprintf(port[i], sizeof(port[i]), "%u", tcp_tgt_port(tgt[i]));
	}
	snprintf(path, sizeof(path), "%s/%s", g_dir, file);
	snprintf(text, sizeof(text),
		 "{\"subsystems\": [{\"subsystem\": \"bdev\", \"config\": [\n" MP_ATTACH(
			 "%s", "%s", "%s") ",\n" MP_ATTACH("%s", "%s", "%s") "\n]}]}\n",
		 port[0], o.subnqn, policy, port[1], o.subnqn, policy);
	write_file(path, text);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_load_config_file(path), 0);
	unlink(path);
}

/*
 * SPDK's multipath parameter: two attaches of one name over two listeners of one
 * subsystem are one bdev with two paths (round-robin: the write and its read-back go down
 * different paths). A path whose ANA group turns inaccessible without notice is found out
 * by the ANA status of the I/O sent to it, which goes down the other path instead.
 */
static void
test_tcp_multipath(void)
{
	struct nvp_nvme_mpath_path_info info = { .info_size = sizeof(info) };
	struct tcp_tgt_stats st;
	struct fx_ctrlr backend;
	struct tcp_tgt *tgt[2];
	struct nvp_nvme_mpath *mp;

	FX_NEEDS_EMU("serves a software controller over NVMe/TCP");
	mp_two_paths("mp.json", "multipath", &backend, tgt);
	mp = nvp_bdev_nvme_get_mpath(nvp_bdev_get_by_name("mp0n1"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(mp);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_get_num_paths(mp), 2);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_get_policy(mp), NVP_NVME_MPATH_MULTIPATH);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_get_path_info(mp, 1, &info), 0);
	CU_ASSERT(info.ana_reporting);
	CU_ASSERT_EQUAL(info.ana_state, NVME_ANA_OPTIMIZED);
	check_bdev("mp0n1");
	CU_ASSERT_EQUAL(tcp_tgt_set_ana_state(tgt[1], NVME_ANA_INACCESSIBLE, false), 0);
	check_bdev("mp0n1");
	tcp_tgt_get_stats(tgt[1], &st);
	CU_ASSERT(st.ana_refused >= 1);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_get_path_info(mp, 1, &info), 0);
	CU_ASSERT_EQUAL(info.ana_state, NVME_ANA_INACCESSIBLE);
	CU_ASSERT_PTR_NULL(nvp_bdev_nvme_get_ctrlr(nvp_bdev_get_by_name("mp0n1")));
	CU_ASSERT_EQUAL(nvp_bdev_fini(), 0);
	for (int i = 0; i < 2; i++) {
		tcp_tgt_get_stats(tgt[i], &st);
		CU_ASSERT_EQUAL(st.bad_host_pdus, 0);
		tcp_tgt_stop(tgt[i]);
	}
	fx_close(&backend);
}

/* Run one bdev call's I/O to its end. \return 0, or -EIO for an error completion. */
#define RUN_IO(ch, done, call)                    \
	({                                        \
		memset(&(done), 0, sizeof(done)); \
		CU_ASSERT_EQUAL(call, 0);         \
		wait_one(ch, &(done));            \
	})

/*
 * The commands beyond read and write on a multipath bdev, as the single-path bdev has
 * them: write zeroes (the blocks read back as zeroes), unmap, compare (a match succeeds,
 * a mismatch fails with Compare Failure), each through both paths (round-robin), and a
 * write zeroes that meets an ANA Inaccessible path (no notice) is sent again down the
 * other and succeeds.
 */
static void
test_tcp_multipath_ops(void)
{
	struct nvp_bdev_desc *desc = NULL;
	struct nvp_bdev_channel *ch = NULL;
	struct tcp_tgt_stats st;
	struct fx_ctrlr backend;
	struct tcp_tgt *tgt[2];
	struct fx_cpl done;
	struct nvp_bdev *bdev;
	uint8_t *buf;

	FX_NEEDS_EMU("serves a software controller over NVMe/TCP");
	mp_two_paths("ops.json", "multipath", &backend, tgt);
	bdev = nvp_bdev_get_by_name("mp0n1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(bdev);
	CU_ASSERT(nvp_bdev_io_type_supported(bdev, NVP_BDEV_IO_WRITE_ZEROES));
	CU_ASSERT(nvp_bdev_io_type_supported(bdev, NVP_BDEV_IO_UNMAP));
	CU_ASSERT(nvp_bdev_io_type_supported(bdev, NVP_BDEV_IO_COMPARE));
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("mp0n1", true, event_cb, NULL, &desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch), 0);
	buf = fx_dma_alloc(16 * 512);
	for (uint32_t round = 0; round < 2; round++) { /* round-robin: both paths */
		uint64_t lba = 64 + round * 16;

		fx_pattern_fill(buf, lba, 8, 512, 3 + round);
		CU_ASSERT_EQUAL(
			RUN_IO(ch, done,
			       nvp_bdev_write_blocks(desc, ch, buf, lba, 8, 0, fx_cpl_cb, &done)),
			0);
		CU_ASSERT_EQUAL(
			RUN_IO(ch, done,
			       nvp_bdev_compare_blocks(desc, ch, buf, lba, 8, fx_cpl_cb, &done)),
			0);
		buf[100] ^= 0xff;
		CU_ASSERT_EQUAL(
			RUN_IO(ch, done,
			       nvp_bdev_compare_blocks(desc, ch, buf, lba, 8, fx_cpl_cb, &done)),
			-EIO);
		CU_ASSERT_EQUAL(done.cpl.status.sct, NVME_SCT_MEDIA_ERROR);
		CU_ASSERT_EQUAL(done.cpl.status.sc, NVME_SC_COMPARE_FAILURE);
		CU_ASSERT_EQUAL(
			RUN_IO(ch, done,
			       nvp_bdev_write_zeroes_blocks(desc, ch, lba, 4, 0, fx_cpl_cb, &done)),
			0);
		memset(buf + 8 * 512, 0xa5, 8 * 512);
		CU_ASSERT_EQUAL(RUN_IO(ch, done,
				       nvp_bdev_read_blocks(desc, ch, buf + 8 * 512, lba, 8,
							    fx_cpl_cb, &done)),
				0);
		CU_ASSERT(fx_is_zero(buf + 8 * 512, 4 * 512));
		CU_ASSERT(fx_pattern_check(buf + 12 * 512, lba + 4, 4, 512, 3 + round) < 0);
		CU_ASSERT_EQUAL(
			RUN_IO(ch, done, nvp_bdev_unmap_blocks(desc, ch, lba, 8, fx_cpl_cb, &done)),
			0);
	}
	/* path 1 inaccessible, no notice: what goes to it comes back and goes to path 0 */
	CU_ASSERT_EQUAL(tcp_tgt_set_ana_state(tgt[1], NVME_ANA_INACCESSIBLE, false), 0);
	for (uint32_t i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL(RUN_IO(ch, done,
				       nvp_bdev_write_zeroes_blocks(desc, ch, 200 + i, 1, 0,
								    fx_cpl_cb, &done)),
				0);
	}
	tcp_tgt_get_stats(tgt[1], &st);
	CU_ASSERT(st.ana_refused >= 1);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	nvp_env_dma_free(buf);
	CU_ASSERT_EQUAL(nvp_bdev_fini(), 0);
	for (int i = 0; i < 2; i++) {
		tcp_tgt_get_stats(tgt[i], &st);
		CU_ASSERT_EQUAL(st.bad_host_pdus, 0);
		tcp_tgt_stop(tgt[i]);
	}
	fx_close(&backend);
}

/*
 * Failover through the bdev layer: verified writes and reads on a multipath bdev
 * ("failover") while the active path's connections are dropped: no error, no wrong data;
 * the dropped path is reconnected by the channel's polls and failover stays where it went.
 */
static void
test_tcp_failover(void)
{
	struct nvp_nvme_mpath_path_info info = { .info_size = sizeof(info) };
	struct nvp_bdev_desc *desc = NULL;
	struct nvp_bdev_channel *ch = NULL;
	struct tcp_tgt_stats st[2];
	struct fx_ctrlr backend;
	struct tcp_tgt *tgt[2];
	struct nvp_nvme_mpath *mp;
	uint32_t errors = 0, corrupt = 0;
	uint64_t deadline, caps_before = 0;
	uint8_t *buf;

	FX_NEEDS_EMU("serves a software controller over NVMe/TCP");
	mp_two_paths("fo.json", "failover", &backend, tgt);
	mp = nvp_bdev_nvme_get_mpath(nvp_bdev_get_by_name("mp0n1"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(mp);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("mp0n1", true, event_cb, NULL, &desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch), 0);
	buf = fx_dma_alloc(16 * 512);
	for (uint32_t i = 0; i < 120; i++) {
		uint64_t lba = (i % 32) * 8;
		struct fx_cpl done;

		if (i == 40) {
			tcp_tgt_get_stats(tgt[1], &st[1]);
			caps_before = st[1].capsules;
			tcp_tgt_drop_conns(tgt[0]);
		}
		fx_pattern_fill(buf, lba, 8, 512, i);
		memset(&done, 0, sizeof(done));
		CU_ASSERT_EQUAL(nvp_bdev_write_blocks(desc, ch, buf, lba, 8, 0, fx_cpl_cb, &done),
				0);
		errors += wait_one(ch, &done) != 0 ? 1u : 0u;
		memset(&done, 0, sizeof(done));
		memset(buf + 8 * 512, 0, 8 * 512);
		CU_ASSERT_EQUAL(
			nvp_bdev_read_blocks(desc, ch, buf + 8 * 512, lba, 8, fx_cpl_cb, &done), 0);
		errors += wait_one(ch, &done) != 0 ? 1u : 0u;
		corrupt += fx_pattern_check(buf + 8 * 512, lba, 8, 512, i) < 0 ? 0u : 1u;
	}
	CU_ASSERT_EQUAL(errors, 0);
	CU_ASSERT_EQUAL(corrupt, 0);
	deadline = fx_now_us() + FX_WAIT_MS * 1000ull;
	do {
		nvp_bdev_channel_poll(ch);
		CU_ASSERT_EQUAL(nvp_nvme_mpath_get_path_info(mp, 0, &info), 0);
	} while ((!info.connected || info.reconnects == 0) && fx_now_us() < deadline);
	CU_ASSERT(info.connected);
	CU_ASSERT_EQUAL(info.reconnects, 1);
	tcp_tgt_get_stats(tgt[0], &st[0]);
	tcp_tgt_get_stats(tgt[1], &st[1]);
	CU_ASSERT_EQUAL(st[0].drops, 1);
	CU_ASSERT(st[1].capsules - caps_before >= 2 * 80); /* all after the drop: path 1 */
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	nvp_env_dma_free(buf);
	CU_ASSERT_EQUAL(nvp_bdev_fini(), 0);
	for (int i = 0; i < 2; i++) {
		tcp_tgt_get_stats(tgt[i], &st[i]);
		CU_ASSERT_EQUAL(st[i].bad_host_pdus, 0);
		tcp_tgt_stop(tgt[i]);
	}
	fx_close(&backend);
}

static bool g_reset_seen; /* a ": resetting" line since it was cleared */

static void
reset_log(enum nvp_log_level level, const char *component, const char *msg)
{
	g_reset_seen = g_reset_seen || strstr(msg, ": resetting") != NULL;
	fprintf(stderr, "nvpoll %s: %s: %s\n", component,
		level <= NVP_LOG_ERROR ? "error" :
		level <= NVP_LOG_WARN  ? "warning" :
					 "notice",
		msg);
}

/*
 * A multipath bdev whose path 0 is lost while its target answers admin commands 20 ms
 * late: the channel's poll (nobody else polls) begins the path's reset and returns in the
 * middle of it, the path still down; the channel is destroyed then, and its destruction
 * runs the reset to its end on this thread, so the path is back and nothing is left for
 * a thread that will not poll again; the bdev then detaches cleanly.
 */
static void
test_tcp_reset_ends_with_channel(void)
{
	struct nvp_nvme_mpath_path_info info = { .info_size = sizeof(info) };
	struct nvp_bdev_desc *desc = NULL;
	struct nvp_bdev_channel *ch = NULL;
	struct tcp_tgt_stats st;
	struct fx_ctrlr backend;
	struct tcp_tgt *tgt[2];
	struct nvp_nvme_mpath *mp;
	struct fx_cpl done;
	uint64_t deadline;
	uint8_t *buf;

	FX_NEEDS_EMU("serves a software controller over NVMe/TCP");
	mp_two_paths("rs.json", "multipath", &backend, tgt);
	mp = nvp_bdev_nvme_get_mpath(nvp_bdev_get_by_name("mp0n1"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(mp);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_open("mp0n1", true, event_cb, NULL, &desc), 0);
	CU_ASSERT_EQUAL_FATAL(nvp_bdev_channel_create(desc, NULL, &ch), 0);
	buf = fx_dma_alloc(8 * 512);
	fx_pattern_fill(buf, 0, 8, 512, 1);
	CU_ASSERT_EQUAL(
		RUN_IO(ch, done, nvp_bdev_write_blocks(desc, ch, buf, 0, 8, 0, fx_cpl_cb, &done)),
		0);
	g_reset_seen = false;
	nvp_log_set_callback(reset_log);
	tcp_tgt_set_admin_delay(tgt[0], 20);
	tcp_tgt_drop_conns(tgt[0]); /* still listening: the reset connects */
	deadline = fx_now_us() + FX_WAIT_MS * 1000ull;
	while (!g_reset_seen && fx_now_us() < deadline) {
		nvp_bdev_channel_poll(ch);
	}
	CU_ASSERT_FATAL(g_reset_seen);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_get_path_info(mp, 0, &info), 0);
	CU_ASSERT_FALSE(info.connected); /* the poll returned in the middle of the reset */
	CU_ASSERT_EQUAL(info.reconnects, 0);
	CU_ASSERT_EQUAL(nvp_bdev_channel_destroy(ch), 0);
	nvp_log_set_callback(NULL);
	CU_ASSERT_EQUAL(nvp_nvme_mpath_get_path_info(mp, 0, &info), 0);
	CU_ASSERT(info.connected); /* ended by the destruction, on this thread */
	CU_ASSERT_EQUAL(info.reconnects, 1);
	tcp_tgt_set_admin_delay(tgt[0], 0);
	CU_ASSERT_EQUAL(nvp_bdev_close(desc), 0);
	nvp_env_dma_free(buf);
	CU_ASSERT_EQUAL(nvp_bdev_fini(), 0);
	for (int i = 0; i < 2; i++) {
		tcp_tgt_get_stats(tgt[i], &st);
		CU_ASSERT_EQUAL(st.bad_host_pdus, 0);
		tcp_tgt_stop(tgt[i]);
	}
	fx_close(&backend);
}

int
main(int argc, char **argv)
{
	static const struct fx_test tests[] = {
		{ "good_file", test_good_file },
		{ "bad_file_leaves_nothing", test_bad_file_leaves_nothing },
		{ "line", test_line },
		{ "tcp", test_tcp },
		{ "tcp_multipath", test_tcp_multipath },
		{ "tcp_failover", test_tcp_failover },
		{ "tcp_multipath_ops", test_tcp_multipath_ops },
		{ "tcp_reset_ends_with_channel", test_tcp_reset_ends_with_channel },
	};
	const char *tmp = getenv("TMPDIR");
	int rc;

	snprintf(g_dir, sizeof(g_dir), "%s/nvp_config.XXXXXX", tmp != NULL ? tmp : "/tmp");
	if (mkdtemp(g_dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	rc = fx_main(argc, argv, "bdev_config_load", tests, sizeof(tests) / sizeof(tests[0]));
	rmdir(g_dir);
	return rc;
}

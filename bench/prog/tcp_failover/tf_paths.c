/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The path-flip target of bench/tcp_failover (tf.h): a RAM-backed software controller
 * served in this process by app/common's NVMe/TCP target on two loopback listeners (two
 * ports, one subsystem, a controller each: two paths), and the host's multipath controller
 * over them (failover policy). A flip makes one path inaccessible (its ANA state, with the
 * ANA change notice nvmet would send) or kills it (connections reset, connects refused).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nvpoll/emu.h"
#include "nvpoll/env.h"
#include "nvpoll/nvme.h"
#include "nvpoll/nvme_mpath.h"
#include "nvpoll/util.h"
#include "nvme_tcp_tgt.h"
#include "tf.h"

static int
backend_open(struct tf_paths *p, uint32_t blocks)
{
	struct nvp_nvme_transport_id trid;
	struct nvp_emu_opts eo;
	char opts[128], s[256];
	int rc;

	snprintf(opts, sizeof(opts), "size=%uM,lba=4096", NVP_MAX(blocks / 256u, 16u));
	nvp_emu_opts_init(&eo, sizeof(eo));
	nvp_strlcpy(eo.name, "tf0", sizeof(eo.name));
	if (nvp_emu_opts_parse(&eo, opts, s, sizeof(s)) != 0) {
		fprintf(stderr, "nvp_tcp_failover: %s\n", s);
		return -EINVAL;
	}
	rc = nvp_emu_ctrlr_create(&eo, &p->emu);
	if (rc != 0) {
		return rc;
	}
	snprintf(s, sizeof(s), "trtype:PCIe traddr:%s", nvp_emu_ctrlr_get_traddr(p->emu));
	rc = nvp_nvme_transport_id_parse(&trid, s);
	return rc != 0 ? rc : nvp_nvme_connect(&trid, NULL, &p->backend);
}

int
tf_paths_open(struct tf_paths *p, uint32_t blocks, uint32_t reconnect_ms)
{
	struct nvp_nvme_transport_id trids[TF_PATHS];
	struct nvp_nvme_mpath_opts mo;
	struct tcp_tgt_opts to;
	char s[512];
	int rc;

	memset(p, 0, sizeof(*p));
	rc = backend_open(p, blocks);
	for (uint32_t i = 0; rc == 0 && i < TF_PATHS; i++) {
		tcp_tgt_opts_init(&to);
		to.ana_grpid = 1; /* one group; its state is per listener */
		to.ana_state = NVME_ANA_OPTIMIZED;
		rc = tcp_tgt_start(p->backend, &to, &p->tgt[i]);
		if (rc == 0) {
			tcp_tgt_trid(p->tgt[i], NULL, s, sizeof(s));
			rc = nvp_nvme_transport_id_parse(&trids[i], s);
		}
	}
	if (rc != 0) {
		return rc;
	}
	nvp_nvme_mpath_opts_init(&mo, sizeof(mo));
	mo.policy = NVP_NVME_MPATH_FAILOVER;
	mo.reconnect_delay_ms = reconnect_ms;
	return nvp_nvme_mpath_connect(trids, TF_PATHS, NULL, &mo, &p->mp);
}

void
tf_paths_set_ana(struct tf_paths *p, uint32_t i, uint8_t state)
{
	(void)tcp_tgt_set_ana_state(p->tgt[i], state, true);
}

int
tf_paths_set_alive(struct tf_paths *p, uint32_t i, bool alive, uint64_t *at)
{
	if (!alive) {
		int rc = tcp_tgt_set_listening(p->tgt[i], false);

		*at = nvp_env_get_ticks();
		tcp_tgt_drop_conns(p->tgt[i]);
		return rc;
	}
	return tcp_tgt_set_listening(p->tgt[i], true);
}

void
tf_paths_close(struct tf_paths *p)
{
	if (p->mp != NULL) {
		(void)nvp_nvme_mpath_detach(p->mp);
	}
	for (uint32_t i = 0; i < TF_PATHS; i++) {
		if (p->tgt[i] != NULL) {
			tcp_tgt_stop(p->tgt[i]);
		}
	}
	if (p->backend != NULL) {
		(void)nvp_nvme_detach(p->backend);
	}
	if (p->emu != NULL) {
		(void)nvp_emu_ctrlr_destroy(p->emu);
	}
	memset(p, 0, sizeof(*p));
}

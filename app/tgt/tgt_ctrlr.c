/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_tgt's controllers: Fabrics commands (Connect, Property Get/Set; NVMe-oF 1.1 section
 * 3.3 and 3.5) and the admin command set a host needs from a fabrics controller (NVMe 1.4
 * section 5): Identify (controller, namespace, active namespace list, namespace
 * identification descriptors), Get/Set Features (number of queues, KATO, async event
 * configuration, and the mandatory ones answered with their defaults), Get Log Page (error,
 * SMART / health, firmware slot, changed namespace list; discovery 70h on the discovery
 * controller), Keep Alive, Abort (never aborts), Asynchronous Event Requests (held until
 * the association ends).
 *
 * An association is a struct tgt_ctrlr made by the admin queue's Connect. The admin
 * connection's thread owns its registers, features and held AERs; I/O connections on any
 * thread hold a reference and look at `dead`, set when the admin connection closes or its
 * Keep Alive Timer expires (section 7.12: only Keep Alive restarts it, TBKAS not offered).
 * Connect's parameter checks, the registers as properties, Identify's fabrics fields and
 * a discovery record are app/common/tgt_fabric.c's, shared with the tools' small target.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvpoll/util.h"
#include "tgt_conn.h"
#include "tgt_fabric.h"

struct tgt_ctrlr {
	struct tgt_ctrlr *next; /* t->ctrlrs, under t->ctrlr_lock */
	struct tgt *t;
	struct tgt_subsys *ss;
	uint16_t cntlid;
	uint32_t tenant;
	char hostnqn[NVME_NQN_FIELD_SIZE];
	atomic_int refs;
	atomic_bool dead;
	_Atomic uint64_t ka_end_ms; /* 0: no keep-alive timer */
	/* the admin connection's thread only */
	struct tgt_conn *admin;
	uint32_t kato_ms;
	struct tgt_fabric_regs regs;
	uint32_t num_ioq; /* I/O queues granted by Set Features Number of Queues */
	uint32_t aec;     /* Asynchronous Event Configuration */
	struct tgt_req *aers[TGT_MAX_AERS];
	uint32_t num_aers;
};

uint64_t
tgt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void
ctrlr_put(struct tgt_ctrlr *ct)
{
	struct tgt *t = ct->t;
	struct tgt_ctrlr **pp;

	/* under the lock: ctrlr_find() must never take a reference on one going away */
	pthread_mutex_lock(&t->ctrlr_lock);
	if (atomic_fetch_sub(&ct->refs, 1) != 1) {
		pthread_mutex_unlock(&t->ctrlr_lock);
		return;
	}
	for (pp = &t->ctrlrs; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == ct) {
			*pp = ct->next;
			break;
		}
	}
	pthread_mutex_unlock(&t->ctrlr_lock);
	free(ct);
}

bool
tgt_ctrlr_is_dead(const struct tgt_conn *c)
{
	return atomic_load(&c->ctrlr->dead);
}

void
tgt_ctrlr_detach(struct tgt_conn *c)
{
	struct tgt_ctrlr *ct = c->ctrlr;

	if (ct == NULL) {
		return;
	}
	if (ct->admin == c) {
		/* the association ends with its admin queue: its I/O queues close too */
		atomic_store(&ct->dead, true);
		ct->admin = NULL;
		ct->num_aers = 0;
	}
	c->ctrlr = NULL;
	ctrlr_put(ct);
}

void
tgt_ctrlr_check_kato(struct tgt_conn *c, uint64_t now_ms)
{
	struct tgt_ctrlr *ct = c->ctrlr;
	uint64_t end;

	if (ct == NULL || ct->admin != c) {
		return;
	}
	end = atomic_load(&ct->ka_end_ms);
	if (end != 0 && now_ms > end) {
		fprintf(stderr,
			"nvp_tgt: controller %u (%s): no Keep Alive within KATO (%u ms): "
			"association closed\n",
			ct->cntlid, ct->hostnqn, ct->kato_ms);
		atomic_fetch_add(&c->th->t->stats.kato_expired, 1);
		atomic_store(&ct->dead, true);
		tgt_conn_close(c, NULL);
	}
}

static void
kato_restart(struct tgt_ctrlr *ct)
{
	/* the host's KATO plus a KAS granule of slack, as the kernel's nvmet allows */
	atomic_store(&ct->ka_end_ms, ct->kato_ms ? tgt_now_ms() + ct->kato_ms + TGT_KAS_MS : 0);
}

/* ---- Fabrics ---- */

static void
connect_invalid(struct tgt_req *r, bool in_data, uint32_t off)
{
	tgt_fabric_connect_invalid(&r->cpl, in_data, off);
}

/* The registers this target's controllers show: 128-entry queues, NVMe 1.4. */
static void
regs_init(struct tgt_fabric_regs *regs)
{
	union nvme_cap_register cap = { .raw = 0 };

	cap.bits.mqes = TGT_MQES;
	cap.bits.cqr = 1;
	cap.bits.to = 15;
	cap.bits.css = NVME_CAP_CSS_NVM;
	memset(regs, 0, sizeof(*regs));
	regs->cap = cap.raw;
	regs->vs = 0x10400; /* NVMe 1.4 */
}

static struct tgt_ctrlr *
ctrlr_new(struct tgt_conn *c, struct tgt_subsys *ss, const struct nvme_fabric_connect_cmd *fc,
	  const struct nvme_fabric_connect_data *d)
{
	struct tgt *t = c->th->t;
	struct tgt_ctrlr *ct = calloc(1, sizeof(*ct));
	const struct tgt_host *h = tgt_subsys_host(ss, d->hostnqn);

	if (ct == NULL) {
		return NULL;
	}
	ct->t = t;
	ct->ss = ss;
	ct->admin = c;
	ct->tenant = h != NULL ? h->tenant : 0;
	memcpy(ct->hostnqn, d->hostnqn, sizeof(ct->hostnqn));
	ct->hostnqn[sizeof(ct->hostnqn) - 1] = '\0';
	ct->kato_ms = fc->kato;
	ct->num_ioq = TGT_MAX_IOQ;
	regs_init(&ct->regs);
	atomic_init(&ct->refs, 1);
	atomic_init(&ct->dead, false);
	kato_restart(ct);
	pthread_mutex_lock(&t->ctrlr_lock);
	ct->cntlid = ++t->next_cntlid;
	if (ct->cntlid == 0 || ct->cntlid >= 0xfff0) { /* FFF0h.. are reserved */
		ct->cntlid = t->next_cntlid = 1;
	}
	ct->next = t->ctrlrs;
	t->ctrlrs = ct;
	pthread_mutex_unlock(&t->ctrlr_lock);
	return ct;
}

/* The live controller @cntlid of @ss for @hostnqn, referenced; NULL if none. */
static struct tgt_ctrlr *
ctrlr_find(struct tgt *t, struct tgt_subsys *ss, uint16_t cntlid, const char *hostnqn)
{
	struct tgt_ctrlr *ct;

	pthread_mutex_lock(&t->ctrlr_lock);
	for (ct = t->ctrlrs; ct != NULL; ct = ct->next) {
		if (ct->cntlid == cntlid && ct->ss == ss && !atomic_load(&ct->dead) &&
		    strncmp(ct->hostnqn, hostnqn, NVME_NQN_FIELD_SIZE) == 0) {
			atomic_fetch_add(&ct->refs, 1);
			break;
		}
	}
	pthread_mutex_unlock(&t->ctrlr_lock);
	return ct;
}

static void
fabric_connect(struct tgt_conn *c, struct tgt_req *r)
{
	const struct nvme_fabric_connect_cmd *fc = (const void *)&r->cmd;
	struct nvme_fabric_connect_data *d = (void *)r->buf;
	struct tgt *t = c->th->t;
	struct tgt_subsys *ss;
	struct tgt_ctrlr *ct;

	if (c->ctrlr != NULL) {
		tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_COMMAND_SEQUENCE_ERROR);
		return;
	}
	if (tgt_fabric_connect_check(fc, d, r->len, fc->qid == 0 ? TGT_ADMIN_DEPTH - 1 : TGT_MQES,
				     &r->cpl) != 0) {
		return;
	}
	ss = tgt_subsys_find(t, d->subnqn);
	if (ss == NULL || (!ss->discovery && !ss->listener[c->lidx])) {
		fprintf(stderr, "nvp_tgt: %s: Connect to %s: no such subsystem here\n", c->peer,
			d->subnqn);
		connect_invalid(r, true, offsetof(struct nvme_fabric_connect_data, subnqn));
		return;
	}
	if (!tgt_subsys_allows(ss, d->hostnqn, c->lidx)) {
		fprintf(stderr, "nvp_tgt: %s: host %s may not connect to %s (not in its hosts)\n",
			c->peer, d->hostnqn, ss->nqn);
		atomic_fetch_add(&t->stats.refused_hosts, 1);
		tgt_req_status(r, NVME_SCT_COMMAND_SPECIFIC, NVME_SC_CONNECT_INVALID_HOST);
		return;
	}
	if (fc->qid == 0) {
		ct = ctrlr_new(c, ss, fc, d);
		if (ct == NULL) {
			tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_INTERNAL_DEVICE_ERROR);
			return;
		}
	} else {
		ct = ctrlr_find(t, ss, d->cntlid, d->hostnqn);
		if (ct == NULL) {
			connect_invalid(r, true, offsetof(struct nvme_fabric_connect_data, cntlid));
			return;
		}
		if (ss->discovery || fc->qid > ct->num_ioq) {
			ctrlr_put(ct);
			connect_invalid(r, false, offsetof(struct nvme_fabric_connect_cmd, qid));
			return;
		}
	}
	c->ctrlr = ct;
	c->ss = ss;
	c->qid = fc->qid;
	if (fc->qid != 0 && tgt_io_open(c, ct->tenant) != 0) {
		tgt_ctrlr_detach(c);
		tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_INTERNAL_DEVICE_ERROR);
		return;
	}
	r->cpl.cdw0 = ct->cntlid;
}

static void
fabric_property(struct tgt_conn *c, struct tgt_req *r)
{
	const struct nvme_fabric_prop_cmd *p = (const void *)&r->cmd;
	struct tgt_ctrlr *ct = c->ctrlr;

	if (ct == NULL || c->qid != 0) {
		tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_COMMAND_SEQUENCE_ERROR);
		return;
	}
	tgt_fabric_property(p, &ct->regs, &r->cpl);
}

/* ---- Identify ---- */

static void
identify_ctrlr(struct tgt_conn *c, uint8_t *buf)
{
	struct nvme_ctrlr_data *cd = (void *)buf;
	struct tgt_ctrlr *ct = c->ctrlr;
	struct tgt_subsys *ss = ct->ss;
	bool vwc = false;

	tgt_fabric_pad_copy(cd->sn, sizeof(cd->sn), ss->sn);
	tgt_fabric_pad_copy(cd->mn, sizeof(cd->mn), ss->mn);
	tgt_fabric_pad_copy(cd->fr, sizeof(cd->fr), "nvpoll");
	cd->cmic = NVME_CTRLR_CMIC_MULTI_CTRLR; /* hosts each have their own controller */
	cd->mdts = TGT_MDTS;
	cd->ver = 0x10400;
	cd->cntrltype = ss->discovery ? 2 : 1; /* discovery, I/O controller */
	cd->aerl = TGT_MAX_AERS - 1;
	cd->lpa = 1u << 2; /* extended data for Get Log Page */
	cd->elpe = 0;
	cd->frmw = 1u << 1 | 1u << 0; /* one slot, read only */
	cd->kas = TGT_KAS_MS / 100u;
	cd->sqes = 6u << 4 | 6u;
	cd->cqes = 4u << 4 | 4u;
	cd->maxcmd = TGT_MQES + 1;
	tgt_fabric_identify(cd, ct->cntlid, ss->nqn, c->th->t->opts.in_capsule);
	if (!ss->discovery) {
		uint32_t nn = 0;

		for (uint32_t i = 0; i < ss->num_ns; i++) {
			nn = NVP_MAX(nn, ss->ns[i].nsid);
			vwc |= nvp_bdev_has_write_cache(ss->ns[i].bdev);
		}
		cd->nn = nn;
		cd->mnan = nn;
		cd->oncs = NVME_ONCS_DSM | NVME_ONCS_WRITE_ZEROES | NVME_ONCS_COMPARE;
		cd->vwc = vwc ? 1u : 0u;
		cd->oaes = 1u << 8; /* namespace attribute notices */
	}
}

static const struct tgt_ns *
ns_find(const struct tgt_subsys *ss, uint32_t nsid)
{
	for (uint32_t i = 0; i < ss->num_ns; i++) {
		if (ss->ns[i].nsid == nsid) {
			return &ss->ns[i];
		}
	}
	return NULL;
}

static uint8_t
log2u(uint32_t v)
{
	uint8_t l = 0;

	while ((1u << l) < v) {
		l++;
	}
	return l;
}

static void
identify(struct tgt_conn *c, struct tgt_req *r)
{
	uint8_t cns = r->cmd.cdw10 & 0xffu;
	struct tgt_subsys *ss = c->ctrlr->ss;
	const struct tgt_ns *ns = ns_find(ss, r->cmd.nsid);
	uint8_t page[4096];

	memset(page, 0, sizeof(page));
	if (cns == 1) {
		identify_ctrlr(c, page);
	} else if (cns == 0 && ns != NULL) {
		struct nvme_ns_data *nd = (void *)page;
		uint64_t nb = nvp_bdev_get_num_blocks(ns->bdev);

		nd->nsze = nd->ncap = nd->nuse = nb;
		nd->nlbaf = 0;
		nd->flbas = 0;
		nd->nmic = 1; /* may be attached to several controllers */
		nd->dlfeat = 0;
		nd->lbaf[0].lbads = log2u(nvp_bdev_get_block_size(ns->bdev));
		memcpy(nd->nguid, ns->nguid, sizeof(nd->nguid));
	} else if (cns == 0 && !ss->discovery && r->cmd.nsid != 0 && r->cmd.nsid != 0xffffffffu) {
		/* an inactive namespace id: a zero-filled structure (NVMe 1.4 5.15.2.1) */
	} else if (cns == 2 && !ss->discovery) {
		struct nvme_ns_list *l = (void *)page;
		uint32_t n = 0, prev = 0;

		/* in increasing order, above the given nsid */
		while (n < 1024) {
			uint32_t best = 0;

			for (uint32_t i = 0; i < ss->num_ns; i++) {
				uint32_t id = ss->ns[i].nsid;

				if (id > r->cmd.nsid && id > prev && (best == 0 || id < best)) {
					best = id;
				}
			}
			if (best == 0) {
				break;
			}
			l->ns_list[n++] = prev = best;
		}
	} else if (cns == 3 && ns != NULL) {
		page[0] = 2; /* NIDT NGUID */
		page[1] = 16;
		memcpy(page + 4, ns->nguid, 16);
	} else {
		tgt_req_status(r, NVME_SCT_GENERIC,
			       cns <= 3 ? NVME_SC_INVALID_NAMESPACE_OR_FORMAT :
					  NVME_SC_INVALID_FIELD);
		return;
	}
	memset(r->buf, 0, r->len); /* (a transfer past the 4 KiB structure reads zeroes) */
	memcpy(r->buf, page, NVP_MIN(r->len, sizeof(page)));
	r->send_data = true;
}

/* ---- Get Log Page ---- */

/* A listener's address for a discovery record: a wildcard one (0.0.0.0, ::) is no address
 * a host can connect to, so the address this connection reached is given instead. */
static const char *
record_addr(struct tgt_conn *c, uint32_t l)
{
	static _Thread_local char buf[INET6_ADDRSTRLEN];
	const struct tgt_listener *li = &c->th->t->listeners[l];
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);

	if (strcmp(li->traddr, "0.0.0.0") != 0 && strcmp(li->traddr, "::") != 0) {
		return li->traddr;
	}
	if (getsockname(c->fd, (struct sockaddr *)&sa, &len) != 0 || sa.ss_family != li->family ||
	    inet_ntop(sa.ss_family,
		      sa.ss_family == AF_INET6 ? (void *)&((struct sockaddr_in6 *)&sa)->sin6_addr :
						 (void *)&((struct sockaddr_in *)&sa)->sin_addr,
		      buf, sizeof(buf)) == NULL) {
		return li->traddr;
	}
	return buf;
}

static uint32_t
discovery_log(struct tgt_conn *c, uint8_t *page, uint32_t size)
{
	struct tgt *t = c->th->t;
	struct nvme_discovery_log_header *h = (void *)page;
	uint32_t n = 0;

	h->genctr = 1;
	for (uint32_t s = 0; s < t->num_subsys; s++) {
		const struct tgt_subsys *ss = t->subsys[s];

		if (ss->discovery || !tgt_subsys_allows(ss, c->ctrlr->hostnqn, TGT_MAX_LISTENERS)) {
			continue;
		}
		for (uint32_t l = 0; l < t->num_listeners; l++) {
			struct nvme_discovery_log_entry *e;

			if (!ss->listener[l]) {
				continue;
			}
			if (sizeof(*h) + (n + 1) * sizeof(*e) > size) {
				break;
			}
			e = (void *)(page + sizeof(*h) + n * sizeof(*e));
			tgt_fabric_disc_entry(e, t->listeners[l].family == AF_INET6,
					      record_addr(c, l), t->listeners[l].trsvcid, ss->nqn,
					      (uint16_t)(l + 1), TGT_ADMIN_DEPTH);
			n++;
		}
	}
	h->numrec = n;
	return (uint32_t)sizeof(*h) + n * 1024u;
}

static void
get_log_page(struct tgt_conn *c, struct tgt_req *r)
{
	uint8_t lid = r->cmd.cdw10 & 0xffu;
	uint64_t off = (uint64_t)r->cmd.cdw12 | (uint64_t)r->cmd.cdw13 << 32;
	uint32_t size = 0, cap = 1024u + TGT_MAX_SUBSYS * TGT_MAX_LISTENERS * 1024u;
	bool disc = c->ctrlr->ss->discovery;
	uint8_t *page = calloc(1, cap);

	if (page == NULL) {
		tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_INTERNAL_DEVICE_ERROR);
		return;
	}
	if (lid == NVME_LOG_DISCOVERY && disc) {
		size = discovery_log(c, page, cap);
	} else if (lid == NVME_LOG_ERROR && !disc) {
		size = 64; /* ELPE 0: one entry, empty: no error was logged */
	} else if (lid == NVME_LOG_HEALTH_INFORMATION && !disc) {
		struct nvme_health_information_page *hp = (void *)page;

		const struct tgt_stats *st = &c->th->t->stats;

		/* the target's whole traffic: data units are thousands of 512 bytes, rounded up */
		hp->data_units_read[0] = (atomic_load(&st->read_bytes) / 512u + 999u) / 1000u;
		hp->data_units_written[0] = (atomic_load(&st->write_bytes) / 512u + 999u) / 1000u;
		hp->host_read_commands[0] = atomic_load(&st->read_cmds);
		hp->host_write_commands[0] = atomic_load(&st->write_cmds);
		hp->power_cycles[0] = 1;
		hp->temperature = 273 + 30;
		hp->available_spare = 100;
		hp->available_spare_threshold = 10;
		size = 512;
	} else if (lid == NVME_LOG_FIRMWARE_SLOT && !disc) {
		page[0] = 1; /* slot 1 active */
		memcpy(page + 8, "nvpoll  ", 8);
		size = 512;
	} else if (lid == NVME_LOG_CHANGED_NS_LIST && !disc) {
		size = 4096; /* namespaces do not change while served */
	} else {
		free(page);
		tgt_req_status(r, NVME_SCT_COMMAND_SPECIFIC, NVME_SC_INVALID_LOG_PAGE);
		return;
	}
	if (off > size || (off & 3u) != 0) {
		free(page);
		tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
		return;
	}
	memset(r->buf, 0, r->len);
	memcpy(r->buf, page + off, NVP_MIN((uint64_t)r->len, size - off));
	free(page);
	r->send_data = true;
}

/* ---- Features ---- */

static void
features(struct tgt_conn *c, struct tgt_req *r, bool set)
{
	struct tgt_ctrlr *ct = c->ctrlr;
	uint8_t fid = r->cmd.cdw10 & 0xffu;
	uint32_t v = r->cmd.cdw11;

	switch (fid) {
	case NVME_FEAT_NUMBER_OF_QUEUES:
		if (set) {
			uint32_t nsq = (v & 0xffffu) + 1, ncq = (v >> 16) + 1;

			if ((v & 0xffffu) == 0xffffu || (v >> 16) == 0xffffu) {
				tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
				return;
			}
			ct->num_ioq = NVP_MIN(NVP_MIN(nsq, ncq), TGT_MAX_IOQ);
		}
		r->cpl.cdw0 = (ct->num_ioq - 1) << 16 | (ct->num_ioq - 1);
		break;
	case NVME_FEAT_KEEP_ALIVE_TIMER:
		if (set) {
			ct->kato_ms = v;
			kato_restart(ct);
		}
		r->cpl.cdw0 = ct->kato_ms;
		break;
	case NVME_FEAT_ASYNC_EVENT_CONFIGURATION:
		if (set) {
			ct->aec = v;
		}
		r->cpl.cdw0 = ct->aec;
		break;
	case NVME_FEAT_VOLATILE_WRITE_CACHE:
		if (set) {
			tgt_req_status(r, NVME_SCT_COMMAND_SPECIFIC,
				       NVME_SC_FEATURE_NOT_CHANGEABLE);
			return;
		}
		for (uint32_t i = 0; i < ct->ss->num_ns; i++) {
			r->cpl.cdw0 |= nvp_bdev_has_write_cache(ct->ss->ns[i].bdev) ? 1u : 0u;
		}
		break;
	case NVME_FEAT_ARBITRATION:
	case NVME_FEAT_POWER_MANAGEMENT:
	case NVME_FEAT_TEMPERATURE_THRESHOLD:
	case NVME_FEAT_ERROR_RECOVERY:
	case NVME_FEAT_INTERRUPT_COALESCING:
	case NVME_FEAT_INTERRUPT_VECTOR_CONFIGURATION:
	case NVME_FEAT_WRITE_ATOMICITY:
		/* mandatory, nothing to do over a fabric: defaults, and a set is taken */
		if (!set && fid == NVME_FEAT_TEMPERATURE_THRESHOLD) {
			r->cpl.cdw0 = 273 + 70;
		}
		break;
	default:
		tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
		return;
	}
}

/* ---- dispatch ---- */

/* \return false when the command is held (an AER) and gets no response now. */
static bool
admin_cmd(struct tgt_conn *c, struct tgt_req *r)
{
	struct tgt_ctrlr *ct = c->ctrlr;
	bool disc = ct->ss->discovery;
	uint8_t opc = (uint8_t)r->cmd.opc;

	if ((opc == NVME_OPC_IDENTIFY || opc == NVME_OPC_GET_LOG_PAGE) &&
	    (r->len == 0 || tgt_req_buf(r) == NULL)) {
		tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_INVALID_FIELD);
		return true;
	}
	switch (opc) {
	case NVME_OPC_IDENTIFY:
		identify(c, r);
		break;
	case NVME_OPC_GET_LOG_PAGE:
		get_log_page(c, r);
		break;
	case NVME_OPC_GET_FEATURES:
	case NVME_OPC_SET_FEATURES:
		features(c, r, opc == NVME_OPC_SET_FEATURES);
		break;
	case NVME_OPC_KEEP_ALIVE:
		kato_restart(ct);
		break;
	case NVME_OPC_ABORT:
		r->cpl.cdw0 = 1; /* not aborted */
		break;
	case NVME_OPC_ASYNC_EVENT_REQUEST:
		if (ct->num_aers == TGT_MAX_AERS) {
			tgt_req_status(r, NVME_SCT_COMMAND_SPECIFIC,
				       NVME_SC_ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED);
			break;
		}
		ct->aers[ct->num_aers++] = r;
		r->state = REQ_HELD;
		return false;
	default:
		(void)disc;
		tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE);
		break;
	}
	return true;
}

void
tgt_cmd_exec(struct tgt_conn *c, struct tgt_req *r)
{
	if (r->cmd.opc == NVME_OPC_FABRIC) {
		const struct nvme_fabric_prop_cmd *p = (const void *)&r->cmd;

		if (p->fctype == NVME_FCTYPE_CONNECT) {
			fabric_connect(c, r);
		} else if (p->fctype == NVME_FCTYPE_PROPERTY_GET ||
			   p->fctype == NVME_FCTYPE_PROPERTY_SET) {
			fabric_property(c, r);
		} else {
			tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE);
		}
	} else if (c->ctrlr == NULL) {
		tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_COMMAND_SEQUENCE_ERROR);
	} else if (c->qid == 0) {
		if (!admin_cmd(c, r)) {
			return;
		}
	} else {
		tgt_io_exec(c, r);
		return;
	}
	tgt_req_complete(r);
}

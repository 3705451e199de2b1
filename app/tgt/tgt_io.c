/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp_tgt's I/O commands (NVMe 1.4 section 6) onto bdev calls, through the channels an
 * I/O queue takes on its thread at Connect (one per namespace and host, shared by the
 * host's queues on that thread, in the thread's poll group, its descriptor tagged with
 * the host's tenant): Read, Write, Compare, Write Zeroes and
 * Flush one call each, Dataset Management's deallocate ranges an unmap each. A bdev whose
 * pool is empty (-ENOMEM) gets the command again from the connection's retry list on the
 * next pass; other refusals become the status the spec names for them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvpoll/util.h"
#include "tgt_conn.h"

static void
ignore_event(enum nvp_bdev_event_type type, struct nvp_bdev *bdev, void *ctx)
{
	(void)type;
	(void)bdev;
	(void)ctx;
}

/* The thread's channel on @ns's bdev for @tenant, made if it has none. \return NULL and
 * *@rc on failure. */
static struct tgt_chan *
chan_get(struct tgt_thread *th, const struct tgt_ns *ns, uint32_t tenant, int *rc)
{
	struct nvp_bdev_channel_opts o;
	struct tgt_chan *s;

	for (s = th->chans; s != NULL; s = s->next) {
		if (s->bdev == ns->bdev && s->tenant == tenant) {
			s->refs++;
			return s;
		}
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		*rc = -ENOMEM;
		return NULL;
	}
	nvp_bdev_channel_opts_init(&o, sizeof(o));
	o.group = th->group;
	o.io_pool_size = 4u * (TGT_MQES + 1u); /* (more than that waits on the retry list) */
	*rc = nvp_bdev_open(ns->bdev_name, true, ignore_event, NULL, &s->desc);
	if (*rc == 0) {
		*rc = nvp_bdev_desc_set_tenant(s->desc, tenant);
	}
	if (*rc == 0) {
		*rc = nvp_bdev_channel_create(s->desc, &o, &s->ch);
	}
	if (*rc != 0) {
		if (s->desc != NULL) {
			(void)nvp_bdev_close(s->desc);
		}
		free(s);
		return NULL;
	}
	s->bdev = ns->bdev;
	s->tenant = tenant;
	s->refs = 1;
	s->next = th->chans;
	th->chans = s;
	return s;
}

/* Its last user gone (no I/O of theirs outstanding), the channel is destroyed. */
static void
chan_put(struct tgt_thread *th, struct tgt_chan *s)
{
	struct tgt_chan **pp;

	if (--s->refs != 0) {
		return;
	}
	for (pp = &th->chans; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	(void)nvp_bdev_channel_destroy(s->ch);
	(void)nvp_bdev_close(s->desc);
	free(s);
}

int
tgt_io_open(struct tgt_conn *c, uint32_t tenant)
{
	int rc = 0;

	for (uint32_t i = 0; i < c->ss->num_ns; i++) {
		struct tgt_ns_ch *n = &c->ns[i];
		const struct tgt_ns *ns = &c->ss->ns[i];

		n->shared = chan_get(c->th, ns, tenant, &rc);
		if (n->shared == NULL) {
			fprintf(stderr, "nvp_tgt: namespace %u (bdev %s): no channel: %s\n",
				ns->nsid, ns->bdev_name, strerror(-rc));
			tgt_io_close(c);
			return rc;
		}
		n->desc = n->shared->desc;
		n->ch = n->shared->ch;
		n->block_size = nvp_bdev_get_block_size(ns->bdev);
		n->num_blocks = nvp_bdev_get_num_blocks(ns->bdev);
	}
	return 0;
}

void
tgt_io_close(struct tgt_conn *c)
{
	for (uint32_t i = 0; i < TGT_MAX_NS; i++) {
		struct tgt_ns_ch *n = &c->ns[i];

		if (n->shared != NULL) {
			chan_put(c->th, n->shared);
		}
		memset(n, 0, sizeof(*n));
	}
}

static void
io_done(void *arg, const struct nvme_cpl *cpl)
{
	struct tgt_req *r = arg;
	struct tgt_conn *c = r->c;

	c->outstanding--;
	if (nvme_cpl_is_error(cpl) && !nvme_cpl_is_error(&r->cpl)) {
		r->cpl.status = cpl->status;
	}
	if (r->pending > 1) {
		r->pending--;
		c->outstanding++; /* (counted once per request: still out) */
		return;
	}
	r->pending = 0;
	if (!nvme_cpl_is_error(&r->cpl)) {
		struct tgt_stats *st = &c->th->t->stats;

		if (r->cmd.opc == NVME_OPC_READ) {
			atomic_fetch_add_explicit(&st->read_bytes, r->len, memory_order_relaxed);
			atomic_fetch_add_explicit(&st->read_cmds, 1, memory_order_relaxed);
		} else if (r->cmd.opc == NVME_OPC_WRITE) {
			atomic_fetch_add_explicit(&st->write_bytes, r->len, memory_order_relaxed);
			atomic_fetch_add_explicit(&st->write_cmds, 1, memory_order_relaxed);
		}
	}
	tgt_req_complete(r);
}

/* DSM deallocate: an unmap per range. \return 0 or a bdev error (nothing submitted). */
static int
dsm(struct tgt_conn *c, struct tgt_ns_ch *n, struct tgt_req *r)
{
	uint32_t nr = (r->cmd.cdw10 & 0xffu) + 1;
	const struct nvme_dsm_range *rg = (const void *)r->buf;

	if (r->len < nr * sizeof(*rg)) {
		tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_DATA_SGL_LENGTH_INVALID);
		tgt_req_complete(r);
		return 0;
	}
	for (uint32_t i = 0; i < nr; i++) {
		if (rg[i].length == 0 || rg[i].starting_lba + rg[i].length > n->num_blocks) {
			tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE);
			tgt_req_complete(r);
			return 0;
		}
	}
	if ((r->cmd.cdw11 & (1u << 2)) == 0 ||
	    !nvp_bdev_io_type_supported(nvp_bdev_desc_get_bdev(n->desc), NVP_BDEV_IO_UNMAP)) {
		tgt_req_complete(r); /* only hints, or deallocate is advisory here */
		return 0;
	}
	r->pending = nr;
	c->outstanding++;
	for (uint32_t i = 0; i < nr; i++) {
		int rc = nvp_bdev_unmap_blocks(n->desc, n->ch, rg[i].starting_lba, rg[i].length,
					       io_done, r);

		if (rc == 0) {
			continue;
		}
		r->pending -= nr - i; /* the ranges not sent */
		if (r->pending == 0) {
			c->outstanding--;
			if (rc == -ENOMEM) {
				return rc; /* nothing sent: all of it again later */
			}
			tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_INTERNAL_DEVICE_ERROR);
			tgt_req_complete(r);
			return 0;
		}
		/* the ranges sent complete the request, with this error */
		tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_INTERNAL_DEVICE_ERROR);
		return 0;
	}
	return 0;
}

/* Submit @r to the bdev. \return 0 (submitted or answered) or -ENOMEM (retry later). */
static int
io_submit(struct tgt_conn *c, struct tgt_req *r)
{
	const struct nvme_cmd *cmd = &r->cmd;
	struct tgt_ns_ch *n = NULL;
	uint64_t slba = (uint64_t)cmd->cdw10 | (uint64_t)cmd->cdw11 << 32;
	uint32_t nlb = (cmd->cdw12 & 0xffffu) + 1;
	uint8_t opc = (uint8_t)cmd->opc;
	int rc;

	for (uint32_t i = 0; i < c->ss->num_ns; i++) {
		if (c->ss->ns[i].nsid == cmd->nsid) {
			n = &c->ns[i];
		}
	}
	if (n == NULL || n->ch == NULL) {
		tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_INVALID_NAMESPACE_OR_FORMAT);
		tgt_req_complete(r);
		return 0;
	}
	if ((opc == NVME_OPC_READ || opc == NVME_OPC_WRITE || opc == NVME_OPC_COMPARE ||
	     opc == NVME_OPC_WRITE_ZEROES) &&
	    (slba >= n->num_blocks || nlb > n->num_blocks - slba)) {
		tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_LBA_OUT_OF_RANGE);
		tgt_req_complete(r);
		return 0;
	}
	if ((opc == NVME_OPC_READ || opc == NVME_OPC_WRITE || opc == NVME_OPC_COMPARE) &&
	    ((uint64_t)nlb * n->block_size != r->len || tgt_req_buf(r) == NULL)) {
		tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_DATA_SGL_LENGTH_INVALID);
		tgt_req_complete(r);
		return 0;
	}
	switch (opc) {
	case NVME_OPC_READ:
		r->send_data = true;
		rc = nvp_bdev_read_blocks(n->desc, n->ch, r->buf, slba, nlb, io_done, r);
		break;
	case NVME_OPC_WRITE:
		rc = nvp_bdev_write_blocks(n->desc, n->ch, r->buf, slba, nlb,
					   (cmd->cdw12 & (1u << 30)) != 0 ? NVP_BDEV_WRITE_FUA : 0,
					   io_done, r);
		break;
	case NVME_OPC_COMPARE:
		rc = nvp_bdev_compare_blocks(n->desc, n->ch, r->buf, slba, nlb, io_done, r);
		break;
	case NVME_OPC_WRITE_ZEROES:
		rc = nvp_bdev_write_zeroes_blocks(n->desc, n->ch, slba, nlb, 0, io_done, r);
		break;
	case NVME_OPC_FLUSH:
		if (!nvp_bdev_io_type_supported(nvp_bdev_desc_get_bdev(n->desc),
						NVP_BDEV_IO_FLUSH)) {
			tgt_req_complete(r); /* no volatile cache: nothing to flush */
			return 0;
		}
		rc = nvp_bdev_flush_blocks(n->desc, n->ch, 0, n->num_blocks, io_done, r);
		break;
	case NVME_OPC_DATASET_MANAGEMENT:
		return dsm(c, n, r);
	default:
		tgt_req_status(r, NVME_SCT_GENERIC, NVME_SC_INVALID_OPCODE);
		tgt_req_complete(r);
		return 0;
	}
	if (rc == -ENOMEM) {
		return rc;
	}
	if (rc != 0) {
		tgt_req_status(r, NVME_SCT_GENERIC,
			       rc == -ENOTSUP ? NVME_SC_INVALID_OPCODE :
			       rc == -EINVAL  ? NVME_SC_INVALID_FIELD :
						NVME_SC_INTERNAL_DEVICE_ERROR);
		tgt_req_complete(r);
		return 0;
	}
	c->outstanding++;
	return 0;
}

void
tgt_io_exec(struct tgt_conn *c, struct tgt_req *r)
{
	if (c->retry != NULL || io_submit(c, r) == -ENOMEM) {
		struct tgt_req **pp = &c->retry;

		while (*pp != NULL) {
			pp = &(*pp)->next;
		}
		r->next = NULL;
		*pp = r;
	}
}

void
tgt_io_retry(struct tgt_conn *c)
{
	while (c->retry != NULL) {
		struct tgt_req *r = c->retry;

		c->retry = r->next;
		if (io_submit(c, r) == -ENOMEM) {
			r->next = c->retry;
			c->retry = r;
			return;
		}
	}
}

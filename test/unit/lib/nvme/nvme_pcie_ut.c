/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the PCIe transport (nvme_pcie_ctrlr.c) against a fake PCI function whose BAR0
 * is plain memory: attach checks (BAR size, all-ones registers, bus mastering),
 * doorbell offsets with CAP.DSTRD, admin queue registers, SQ tail arithmetic and
 * wrap, CQ phase tags and their flip at the wrap, the CQ head doorbell once per batch,
 * a CQ stuck behind an entry with a stale phase tag.
 */
#include <stdint.h>

static uint64_t g_now; /* the fake clock: 1 tick = 1 us (ticks_hz set by attach) */
static uint64_t
ut_ticks(void)
{
	return g_now;
}
#define NVME_UT_TICKS ut_ticks
#include "nvme/nvme_pcie_ctrlr.c"
#include "nvme/nvme_pcie.c"
#include "nvme/nvme_pcie_probe.c"

#include "ut_nvme.h"

/* ---- a fake PCI function ---- */

static uint8_t *g_bar;
static uint64_t g_bar_size;
static uint8_t g_cfg[256];
static int g_map_rc;
static uint32_t g_unmaps;

static int
fake_map_bar(struct nvp_pci_device *dev, uint32_t bar, void **addr, uint64_t *phys, uint64_t *size)
{
	(void)dev;
	CU_ASSERT_EQUAL(bar, 0);
	if (g_map_rc != 0) {
		return g_map_rc;
	}
	*addr = g_bar;
	*phys = 0xfe000000;
	*size = g_bar_size;
	return 0;
}

static int
fake_unmap_bar(struct nvp_pci_device *dev, uint32_t bar, void *addr)
{
	(void)dev;
	(void)bar;
	CU_ASSERT_PTR_EQUAL(addr, g_bar);
	g_unmaps++;
	return 0;
}

static int
fake_cfg_read(struct nvp_pci_device *dev, void *value, uint32_t len, uint32_t offset)
{
	(void)dev;
	memcpy(value, g_cfg + offset, len);
	return 0;
}

static int
fake_cfg_write(struct nvp_pci_device *dev, const void *value, uint32_t len, uint32_t offset)
{
	(void)dev;
	memcpy(g_cfg + offset, value, len);
	return 0;
}

static const struct nvp_pci_device_ops g_fake_pci_ops = {
	.map_bar = fake_map_bar,
	.unmap_bar = fake_unmap_bar,
	.cfg_read = fake_cfg_read,
	.cfg_write = fake_cfg_write,
};

static struct nvp_pci_device g_dev = {
	.id = { .class_id = NVP_PCI_CLASS_NVME },
	.ops = &g_fake_pci_ops,
	.is_virtual = true,
};

static volatile struct nvme_registers *
regs(void)
{
	return (volatile struct nvme_registers *)g_bar;
}

/* A fresh BAR of @size bytes with CAP: MQES 63, TO 1, DSTRD @dstrd, CSS NVM. */
static void
bar_reset(uint64_t size, uint32_t dstrd)
{
	union nvme_cap_register cap = { .raw = 0 };

	free(g_bar);
	g_bar = calloc(1, size);
	g_bar_size = size;
	cap.bits.mqes = 63;
	cap.bits.to = 1;
	cap.bits.dstrd = dstrd;
	cap.bits.css = NVME_CAP_CSS_NVM;
	regs()->cap.raw = cap.raw;
	regs()->vs.raw = NVME_VERSION(1, 4, 0);
	memset(g_cfg, 0, sizeof(g_cfg));
	g_map_rc = 0;
	g_unmaps = 0;
}

/* ---- stubs of the neighbours ---- */

static struct nvme_cpl g_cpls[64];
static uint32_t g_num_cpls;

/*
 * The generic completion path: this test's trackers never have a completion pending,
 * so the inline nvme_qpair_complete_cpl() hands every entry to its slow path, which
 * records it here.
 */
void
nvme_qpair_complete_slow(struct nvp_nvme_qpair *qpair, const struct nvme_cpl *cpl)
{
	(void)qpair;
	g_cpls[g_num_cpls++ % 64] = *cpl;
}

static const struct nvme_transport_ops *g_registered;

int
nvme_transport_register(const struct nvme_transport_ops *ops)
{
	g_registered = ops;
	return 0;
}

int
nvme_qpair_init(struct nvp_nvme_qpair *qpair, struct nvp_nvme_ctrlr *ctrlr, uint16_t id,
		uint32_t num_entries, uint32_t num_requests, bool with_dma_pages)
{
	uint32_t i;

	(void)num_requests;
	(void)with_dma_pages;
	qpair->ctrlr = ctrlr;
	qpair->id = id;
	qpair->is_admin = id == 0;
	qpair->num_entries = num_entries;
	qpair->num_trackers = num_entries - 1;
	nvme_qpair_set_cid_bits(qpair, qpair->num_trackers);
	/* Trackers are cache-line aligned objects, as nvme_qpair_init() allocates them, one
	 * per CID index. */
	if (posix_memalign((void **)&qpair->trackers, 64,
			   ((size_t)qpair->cid_idx_mask + 1) * sizeof(*qpair->trackers)) != 0) {
		return -ENOMEM;
	}
	memset(qpair->trackers, 0, ((size_t)qpair->cid_idx_mask + 1) * sizeof(*qpair->trackers));
	for (i = 0; i < qpair->num_trackers; i++) {
		qpair->trackers[i].cid = (uint16_t)i;
	}
	return 0;
}

void
nvme_qpair_fini(struct nvp_nvme_qpair *qpair)
{
	free(qpair->trackers);
	qpair->trackers = NULL;
}

int
nvme_ctrlr_construct(struct nvp_nvme_ctrlr *ctrlr, const struct nvp_nvme_transport_id *trid,
		     const struct nvp_nvme_ctrlr_opts *opts,
		     const struct nvme_transport_ops *transport)
{
	ctrlr->transport = transport;
	ctrlr->trid = *trid;
	ctrlr->opts = *opts;
	return 0;
}

void
nvme_ctrlr_destruct(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
}

int
nvme_ctrlr_set_cap_vs(struct nvp_nvme_ctrlr *ctrlr, union nvme_cap_register cap,
		      union nvme_vs_register vs)
{
	ctrlr->cap = cap;
	ctrlr->vs = vs;
	ctrlr->page_size = 4096;
	ctrlr->max_xfer_size = 128 * 1024;
	return 0;
}

static char g_admin_log[256];
static int g_create_sq_rc;

static void
admin_log(const char *s)
{
	nvp_strlcpy(g_admin_log + strlen(g_admin_log), s,
		    sizeof(g_admin_log) - strlen(g_admin_log));
}

int
nvme_ctrlr_cmd_create_io_cq(struct nvp_nvme_ctrlr *ctrlr, uint16_t qid, int32_t iv,
			    uint32_t entries, uint64_t iova)
{
	(void)ctrlr;
	(void)qid;
	CU_ASSERT_EQUAL(iv, -1); /* these qpairs are polled */
	(void)entries;
	CU_ASSERT_NOT_EQUAL(iova, 0);
	admin_log("ccq ");
	return 0;
}

int
nvme_ctrlr_cmd_create_io_sq(struct nvp_nvme_ctrlr *ctrlr, uint16_t qid, uint32_t entries,
			    uint64_t iova, uint8_t qprio)
{
	(void)ctrlr;
	(void)qid;
	(void)entries;
	(void)qprio;
	CU_ASSERT_NOT_EQUAL(iova, 0);
	admin_log("csq ");
	return g_create_sq_rc;
}

void
nvme_ctrlr_lock(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
}

void
nvme_ctrlr_unlock(struct nvp_nvme_ctrlr *ctrlr)
{
	(void)ctrlr;
}

void
nvme_ctrlr_cmd_build_create_io_cq(struct nvme_cmd *cmd, uint16_t qid, int32_t iv, uint32_t entries,
				  uint64_t iova)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = NVME_OPC_CREATE_IO_CQ;
	cmd->cdw10 = NVME_CREATE_IO_Q_CDW10(qid, entries);
	cmd->cdw11 = (uint32_t)iv;
	cmd->dptr.prp.prp1 = iova;
}

void
nvme_ctrlr_cmd_build_create_io_sq(struct nvme_cmd *cmd, uint16_t qid, uint32_t entries,
				  uint64_t iova, uint8_t qprio)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = NVME_OPC_CREATE_IO_SQ;
	cmd->cdw10 = NVME_CREATE_IO_Q_CDW10(qid, entries);
	cmd->cdw11 = qprio;
	cmd->dptr.prp.prp1 = iova;
}

int
nvme_ctrlr_cmd_delete_io_queue(struct nvp_nvme_ctrlr *ctrlr, uint8_t opc, uint16_t qid)
{
	(void)ctrlr;
	(void)qid;
	admin_log(opc == NVME_OPC_DELETE_IO_SQ ? "dsq " : "dcq ");
	return 0;
}

static uint64_t g_dbbuf_db_iova, g_dbbuf_ei_iova;
static int g_dbbuf_rc;

int
nvme_ctrlr_cmd_doorbell_buffer_config(struct nvp_nvme_ctrlr *ctrlr, uint64_t db_iova,
				      uint64_t ei_iova)
{
	(void)ctrlr;
	admin_log("dbbuf ");
	g_dbbuf_db_iova = db_iova;
	g_dbbuf_ei_iova = ei_iova;
	return g_dbbuf_rc;
}

/* PRPs are tested in nvme_pcie_prp_ut: here a payload is just PRP1 = its address. */
int
nvme_pcie_prp_build(struct nvme_pcie_qpair *pq, struct nvme_pcie_tracker *ptr,
		    struct nvme_request *req)
{
	(void)pq;
	(void)ptr;
	req->cmd.dptr.prp.prp1 = (uint64_t)(uintptr_t)req->payload.buf;
	return 0;
}

int
nvme_pcie_prp_check(struct nvme_pcie_qpair *pq, const struct nvme_request *req)
{
	(void)pq;
	(void)req;
	return 0;
}

uint32_t
nvme_pcie_prp_extra_pages(uint32_t page_size, uint32_t payload_size)
{
	return payload_size > 512 * page_size ? 1 : 0;
}

int
nvme_pcie_prp_reserve(struct nvme_pcie_qpair *pq, struct nvme_pcie_tracker *ptr, uint32_t n)
{
	(void)ptr;
	return pq->prp_pool_free >= n ? 0 : -EAGAIN;
}

void
nvme_pcie_prp_release(struct nvme_pcie_qpair *pq, struct nvme_pcie_tracker *ptr)
{
	(void)pq;
	ptr->extra = NULL;
}

/* ---- fixture ---- */

static struct nvp_nvme_ctrlr *g_ctrlr;

static int
attach(void)
{
	struct nvp_nvme_transport_id trid;
	struct nvp_nvme_ctrlr_opts opts;

	memset(&trid, 0, sizeof(trid));
	nvp_strlcpy(trid.name, "fake0", sizeof(trid.name));
	memset(&opts, 0, sizeof(opts));
	opts.admin_queue_size = 8;
	g_ctrlr = NULL;
	return pcie_ctrlr_construct_dev(&trid, &opts, &g_dev, &g_ctrlr);
}

static void
detach(void)
{
	g_nvme_pcie_transport.ctrlr_destruct(g_ctrlr);
	g_ctrlr = NULL;
}

static struct nvp_nvme_qpair *
io_qpair(uint16_t qid, uint32_t entries)
{
	struct nvp_nvme_io_qpair_opts opts;
	struct nvp_nvme_qpair *qpair = NULL;

	memset(&opts, 0, sizeof(opts));
	opts.io_queue_size = entries;
	opts.io_queue_requests = entries;
	CU_ASSERT_EQUAL(g_nvme_pcie_transport.qpair_create(g_ctrlr, qid, &opts, &qpair), 0);
	return qpair;
}

static int
suite_init(void)
{
	return ut_env_init();
}

static int
suite_fini(void)
{
	free(g_bar);
	nvp_env_fini();
	return 0;
}

/* ---- tests ---- */

static void
test_attach(void)
{
	uint16_t cmd;

	/* The transport registered itself by name when the program started. */
	CU_ASSERT_PTR_EQUAL(g_registered, &g_nvme_pcie_transport);
	bar_reset(0x2000, 0);
	CU_ASSERT_EQUAL_FATAL(attach(), 0);
	CU_ASSERT_TRUE(g_dev.claimed);
	memcpy(&cmd, g_cfg + NVP_PCI_CFG_COMMAND, sizeof(cmd));
	CU_ASSERT_TRUE(cmd & NVP_PCI_COMMAND_MEMORY);
	CU_ASSERT_TRUE(cmd & NVP_PCI_COMMAND_MASTER);
	CU_ASSERT_TRUE(cmd & NVP_PCI_COMMAND_INTX_DISABLE);
	CU_ASSERT_PTR_NOT_NULL(g_ctrlr->adminq);
	CU_ASSERT_EQUAL(g_ctrlr->adminq->num_entries, 8);
	CU_ASSERT_STRING_EQUAL(g_ctrlr->name, "fake0 at 0000:00:00.0");
	/* One controller per function. */
	{
		struct nvp_nvme_ctrlr *saved = g_ctrlr;

		CU_ASSERT_EQUAL(attach(), -EBUSY);
		g_ctrlr = saved;
	}
	detach();
	CU_ASSERT_FALSE(g_dev.claimed);
	CU_ASSERT_EQUAL(g_unmaps, 1);
	/* No DMA after detach. */
	memcpy(&cmd, g_cfg + NVP_PCI_CFG_COMMAND, sizeof(cmd));
	CU_ASSERT_FALSE(cmd & NVP_PCI_COMMAND_MASTER);
}

static void
test_attach_bad_bar(void)
{
	ut_log_clear();
	bar_reset(0x800, 0); /* no room for doorbells */
	CU_ASSERT_EQUAL(attach(), -EIO);
	CU_ASSERT_TRUE(ut_log_has("too small"));
	CU_ASSERT_FALSE(g_dev.claimed);
	/* Doorbells of the admin queue beyond the BAR with a large stride. */
	bar_reset(0x1010, 4);
	CU_ASSERT_EQUAL(attach(), -EIO);
	CU_ASSERT_FALSE(g_dev.claimed);
	/* A device that went away reads all ones. */
	bar_reset(0x2000, 0);
	memset(g_bar, 0xff, 0x2000);
	ut_log_clear();
	CU_ASSERT_EQUAL(attach(), -EIO);
	CU_ASSERT_TRUE(ut_log_has("all ones"));
	/* map_bar fails. */
	bar_reset(0x2000, 0);
	g_map_rc = -ENOENT;
	CU_ASSERT_EQUAL(attach(), -ENOENT);
	CU_ASSERT_FALSE(g_dev.claimed);
}

static void
test_registers(void)
{
	uint32_t v4;
	uint64_t v8;

	bar_reset(0x2000, 0);
	CU_ASSERT_EQUAL_FATAL(attach(), 0);
	CU_ASSERT_EQUAL(pcie_set_reg_4(g_ctrlr, NVME_REG_CC, 0x460001), 0);
	CU_ASSERT_EQUAL(regs()->cc.raw, 0x460001);
	CU_ASSERT_EQUAL(pcie_get_reg_4(g_ctrlr, NVME_REG_VS, &v4), 0);
	CU_ASSERT_EQUAL(v4, NVME_VERSION(1, 4, 0));
	CU_ASSERT_EQUAL(pcie_set_reg_8(g_ctrlr, NVME_REG_ASQ, 0x123456789000ull), 0);
	CU_ASSERT_EQUAL(regs()->asq, 0x123456789000ull);
	CU_ASSERT_EQUAL(pcie_get_reg_8(g_ctrlr, NVME_REG_ASQ, &v8), 0);
	CU_ASSERT_EQUAL(v8, 0x123456789000ull);
	/* Outside the BAR, or misaligned. */
	CU_ASSERT_EQUAL(pcie_get_reg_4(g_ctrlr, 0x2000, &v4), -EINVAL);
	CU_ASSERT_EQUAL(pcie_get_reg_8(g_ctrlr, 0x1ffc, &v8), -EINVAL);
	CU_ASSERT_EQUAL(pcie_set_reg_4(g_ctrlr, 0x15, 0), -EINVAL);
	detach();
}

static void
test_doorbell_offsets(void)
{
	struct nvme_pcie_ctrlr *pctrlr;
	struct nvme_pcie_qpair *pq;
	struct nvp_nvme_qpair *q;

	/* DSTRD 0: 4-byte stride. SQ3 tail at 0x1018, CQ3 head at 0x101c. */
	bar_reset(0x2000, 0);
	CU_ASSERT_EQUAL_FATAL(attach(), 0);
	pctrlr = to_pcie_ctrlr(g_ctrlr);
	CU_ASSERT_EQUAL(pctrlr->doorbell_stride, 4);
	q = io_qpair(3, 4);
	pq = to_pcie_qpair(q);
	CU_ASSERT_PTR_EQUAL(pq->sq_tdbl, (volatile uint32_t *)(g_bar + 0x1018));
	CU_ASSERT_PTR_EQUAL(pq->cq_hdbl, (volatile uint32_t *)(g_bar + 0x101c));
	/* 0x1000 bytes of doorbells: 512 pairs, one of them admin. */
	CU_ASSERT_EQUAL(pcie_get_max_io_queues(g_ctrlr), 511);
	pcie_qpair_destroy(q);
	detach();
	/* DSTRD 2: 16-byte stride. SQ3 at 0x1000 + 6 * 16, CQ3 one stride later. */
	bar_reset(0x4000, 2);
	CU_ASSERT_EQUAL_FATAL(attach(), 0);
	q = io_qpair(3, 4);
	pq = to_pcie_qpair(q);
	CU_ASSERT_PTR_EQUAL(pq->sq_tdbl, (volatile uint32_t *)(g_bar + 0x1060));
	CU_ASSERT_PTR_EQUAL(pq->cq_hdbl, (volatile uint32_t *)(g_bar + 0x1070));
	CU_ASSERT_EQUAL(pcie_get_max_io_queues(g_ctrlr), 0x3000 / 32 - 1);
	pcie_qpair_destroy(q);
	detach();
}

static void
test_admin_queue_registers(void)
{
	struct nvme_pcie_qpair *pq;
	union nvme_aqa_register aqa;

	bar_reset(0x2000, 0);
	CU_ASSERT_EQUAL_FATAL(attach(), 0);
	pq = to_pcie_qpair(g_ctrlr->adminq);
	pq->sq_tail = 5;
	pq->phase = 0;
	CU_ASSERT_EQUAL(pcie_ctrlr_enable_admin_queue(g_ctrlr), 0);
	aqa.raw = regs()->aqa.raw;
	CU_ASSERT_EQUAL(aqa.bits.asqs, 7); /* 0's based */
	CU_ASSERT_EQUAL(aqa.bits.acqs, 7);
	CU_ASSERT_EQUAL(regs()->asq, pq->sq_iova);
	CU_ASSERT_EQUAL(regs()->acq, pq->cq_iova);
	CU_ASSERT_EQUAL(pq->sq_tail, 0); /* rings rewound */
	CU_ASSERT_EQUAL(pq->phase, 1);
	CU_ASSERT_EQUAL(pq->sq_iova & 0xfff, 0);
	CU_ASSERT_EQUAL(pq->cq_iova & 0xfff, 0);
	detach();
}

static int
submit_one(struct nvp_nvme_qpair *q, struct nvme_request *req, uint32_t tag)
{
	struct nvme_tracker *tr = &q->trackers[tag % q->num_trackers];

	memset(req, 0, sizeof(*req));
	req->cmd.opc = NVME_OPC_WRITE;
	req->cmd.cdw10 = tag;
	return pcie_qpair_submit(q, tr, req);
}

static void
test_sq_ring_wrap(void)
{
	struct nvme_request req;
	struct nvme_pcie_qpair *pq;
	struct nvp_nvme_qpair *q;
	uint32_t i;

	bar_reset(0x2000, 0);
	CU_ASSERT_EQUAL_FATAL(attach(), 0);
	q = io_qpair(1, 4);
	pq = to_pcie_qpair(q);
	for (i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(submit_one(q, &req, i), 0);
		CU_ASSERT_EQUAL(pq->sq[i].cdw10, i);
		CU_ASSERT_EQUAL(pq->sq[i].cid, i);
	}
	CU_ASSERT_EQUAL(pq->sq_tail, 3);
	CU_ASSERT_EQUAL(*pq->sq_tdbl, 0); /* no doorbell until asked */
	pcie_qpair_ring_doorbell(q);
	CU_ASSERT_EQUAL(*pq->sq_tdbl, 3);
	/* The tail wraps at the queue size. */
	CU_ASSERT_EQUAL(submit_one(q, &req, 3), 0);
	CU_ASSERT_EQUAL(pq->sq_tail, 0);
	CU_ASSERT_EQUAL(pq->sq[3].cdw10, 3);
	CU_ASSERT_EQUAL(submit_one(q, &req, 4), 0);
	CU_ASSERT_EQUAL(pq->sq_tail, 1);
	CU_ASSERT_EQUAL(pq->sq[0].cdw10, 4);
	pcie_qpair_ring_doorbell(q);
	CU_ASSERT_EQUAL(*pq->sq_tdbl, 1);
	/* Chained PRP pages short: -EAGAIN, nothing written. */
	pq->prp_pool_total = 1;
	pq->prp_pool_free = 0;
	memset(&req, 0, sizeof(req));
	nvme_request_set_contig(&req, (void *)0x100000, 1024 * 4096);
	CU_ASSERT_EQUAL(pcie_qpair_submit(q, &q->trackers[0], &req), -EAGAIN);
	CU_ASSERT_EQUAL(pq->sq_tail, 1);
	pcie_qpair_destroy(q);
	detach();
}

/*
 * One contiguous buffer within two pages: PRP1/PRP2 straight from the IOVA map, no list;
 * a request checked while queued keeps its PRPs (dptr_built) for its submission.
 */
static void
test_prp_fast_path(void)
{
	struct nvme_request req;
	struct nvp_nvme_qpair *q;
	struct nvme_pcie_qpair *pq;
	uint32_t on_stack[64];
	uint8_t *buf;

	bar_reset(0x2000, 0);
	CU_ASSERT_EQUAL_FATAL(attach(), 0);
	q = io_qpair(1, 4);
	pq = to_pcie_qpair(q);
	buf = nvp_env_dma_malloc(4 * 4096, 4096, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	/* 200 bytes across a page boundary: two entries, PRP2 is the second page. */
	memset(&req, 0, sizeof(req));
	nvme_request_set_contig(&req, buf + 4000, 200);
	CU_ASSERT_EQUAL(pcie_qpair_submit(q, &q->trackers[0], &req), 0);
	CU_ASSERT_EQUAL(pq->sq[0].dptr.prp.prp1, nvp_env_vtophys(buf + 4000, NULL));
	CU_ASSERT_EQUAL(pq->sq[0].dptr.prp.prp2, nvp_env_vtophys(buf + 4096, NULL));
	/* One page: PRP2 is zero. */
	memset(&req, 0, sizeof(req));
	nvme_request_set_contig(&req, buf + 8192, 4096);
	CU_ASSERT_EQUAL(pcie_qpair_submit(q, &q->trackers[1], &req), 0);
	CU_ASSERT_EQUAL(pq->sq[1].dptr.prp.prp1, nvp_env_vtophys(buf + 8192, NULL));
	CU_ASSERT_EQUAL(pq->sq[1].dptr.prp.prp2, 0);
	/* Checked while queued: PRPs built once and kept. */
	memset(&req, 0, sizeof(req));
	nvme_request_set_contig(&req, buf + 512, 4096);
	CU_ASSERT_EQUAL(nvme_pcie_qpair_check_request(q, &req), 0);
	CU_ASSERT_TRUE(req.dptr_built);
	CU_ASSERT_EQUAL(req.cmd.dptr.prp.prp1, nvp_env_vtophys(buf + 512, NULL));
	req.payload.buf = NULL; /* a second walk would now fail */
	CU_ASSERT_EQUAL(pcie_qpair_submit(q, &q->trackers[2], &req), 0);
	CU_ASSERT_EQUAL(pq->sq[2].dptr.prp.prp2, nvp_env_vtophys(buf + 4096, NULL));
	/* Not DMA memory, or not dword aligned: refused, nothing kept. */
	memset(&req, 0, sizeof(req));
	nvme_request_set_contig(&req, on_stack, sizeof(on_stack));
	CU_ASSERT_EQUAL(nvme_pcie_qpair_check_request(q, &req), -EFAULT);
	CU_ASSERT_FALSE(req.dptr_built);
	nvme_request_set_contig(&req, buf + 4094, 8);
	CU_ASSERT_EQUAL(nvme_pcie_qpair_check_request(q, &req), -EINVAL);
	/* A second page that is not DMA memory (the buffer's end) is caught too. */
	nvme_request_set_contig(&req, buf + 3 * 4096 + 4000, 200);
	CU_ASSERT_EQUAL(nvme_pcie_qpair_check_request(q, &req), -EFAULT);
	/* Three pages take the list path. */
	nvme_request_set_contig(&req, buf, 3 * 4096);
	CU_ASSERT_EQUAL(nvme_pcie_qpair_check_request(q, &req), 0);
	CU_ASSERT_FALSE(req.dptr_built);
	CU_ASSERT_EQUAL(pq->sq_tail, 3);
	nvp_env_dma_free(buf);
	pcie_qpair_destroy(q);
	detach();
}

/* The device posts a completion for @cid in CQ slot @slot with phase @p. */
static void
post_cpl(struct nvme_pcie_qpair *pq, uint32_t slot, uint16_t cid, uint8_t p)
{
	struct nvme_cpl cpl;

	memset(&cpl, 0, sizeof(cpl));
	cpl.cid = cid;
	cpl.sqid = pq->qpair.id;
	cpl.cdw0 = 0xc0de0000u | cid;
	cpl.status.p = p;
	memcpy((void *)&pq->cq[slot], &cpl, sizeof(cpl));
}

static void
test_cq_phase_wrap(void)
{
	struct nvme_pcie_qpair *pq;
	struct nvp_nvme_qpair *q;
	uint32_t i;

	bar_reset(0x2000, 0);
	CU_ASSERT_EQUAL_FATAL(attach(), 0);
	q = io_qpair(1, 4);
	pq = to_pcie_qpair(q);
	g_num_cpls = 0;
	/* Empty queue: nothing, no doorbell. */
	CU_ASSERT_EQUAL(nvme_pcie_qpair_process_completions(q, 0), 0);
	*pq->cq_hdbl = 0xdead;
	CU_ASSERT_EQUAL(nvme_pcie_qpair_process_completions(q, 0), 0);
	CU_ASSERT_EQUAL(*pq->cq_hdbl, 0xdead);
	/* First pass: phase 1. */
	post_cpl(pq, 0, 0, 1);
	post_cpl(pq, 1, 1, 1);
	post_cpl(pq, 2, 2, 1);
	CU_ASSERT_EQUAL(nvme_pcie_qpair_process_completions(q, 0), 3);
	CU_ASSERT_EQUAL(g_num_cpls, 3);
	CU_ASSERT_EQUAL(g_cpls[2].cdw0, 0xc0de0002u);
	CU_ASSERT_EQUAL(pq->cq_head, 3);
	CU_ASSERT_EQUAL(*pq->cq_hdbl, 3); /* once, after the batch */
	/* The last slot of the first pass, then the wrap: phase flips to 0. */
	post_cpl(pq, 3, 0, 1);
	CU_ASSERT_EQUAL(nvme_pcie_qpair_process_completions(q, 0), 1);
	CU_ASSERT_EQUAL(pq->cq_head, 0);
	CU_ASSERT_EQUAL(pq->phase, 0);
	CU_ASSERT_EQUAL(*pq->cq_hdbl, 0);
	/* Slot 0 still holds its old phase-1 entry: not new. */
	CU_ASSERT_EQUAL(nvme_pcie_qpair_process_completions(q, 0), 0);
	CU_ASSERT_EQUAL(g_num_cpls, 4);
	/* Second pass: phase 0 entries, processed one per call with max 1. */
	post_cpl(pq, 0, 1, 0);
	post_cpl(pq, 1, 2, 0);
	CU_ASSERT_EQUAL(nvme_pcie_qpair_process_completions(q, 1), 1);
	CU_ASSERT_EQUAL(*pq->cq_hdbl, 1);
	CU_ASSERT_EQUAL(nvme_pcie_qpair_process_completions(q, 1), 1);
	CU_ASSERT_EQUAL(*pq->cq_hdbl, 2);
	CU_ASSERT_EQUAL(g_cpls[5].cid, 2);
	/* Around again: phase goes back to 1. */
	for (i = 2; i < 4; i++) {
		post_cpl(pq, i, 0, 0);
	}
	CU_ASSERT_EQUAL(nvme_pcie_qpair_process_completions(q, 0), 2);
	CU_ASSERT_EQUAL(pq->phase, 1);
	CU_ASSERT_EQUAL(pq->cq_head, 0);
	/* A reset rewinds and clears the CQ. */
	post_cpl(pq, 0, 0, 1);
	pcie_qpair_reset(q);
	CU_ASSERT_EQUAL(nvme_pcie_qpair_process_completions(q, 0), 0);
	pcie_qpair_destroy(q);
	detach();
}

/*
 * The missed-completion check: the CQ is stuck when the entry at the head carries the
 * previous pass's phase tag while the next one carries this pass's (the device posted
 * past an entry written with a stale tag), also across the wrap; never when the device
 * simply has not posted, nor when the head entry is there to be consumed.
 */
static void
test_cq_stalled(void)
{
	struct nvme_pcie_qpair *pq;
	struct nvp_nvme_qpair *q;

	bar_reset(0x2000, 0);
	CU_ASSERT_EQUAL_FATAL(attach(), 0);
	q = io_qpair(1, 4);
	pq = to_pcie_qpair(q);
	g_num_cpls = 0;
	q->slots_used = 3; /* commands the device may hold: how far the look may go */
	/* Nothing posted: waiting, not stuck. */
	CU_ASSERT_FALSE(pcie_qpair_cq_stalled(q));
	/* Head posted with its stale tag (0 in the first pass), nothing after: the host
	 * cannot tell it from an entry not written yet. */
	post_cpl(pq, 0, 0, 0);
	CU_ASSERT_FALSE(pcie_qpair_cq_stalled(q));
	/* The device posted the next one properly: stuck behind the head. */
	post_cpl(pq, 1, 1, 1);
	CU_ASSERT_TRUE(pcie_qpair_cq_stalled(q));
	CU_ASSERT_EQUAL(nvme_pcie_qpair_process_completions(q, 0), 0);
	/* Head properly posted too (a healthy queue seen mid-post): not stuck. */
	post_cpl(pq, 0, 0, 1);
	CU_ASSERT_FALSE(pcie_qpair_cq_stalled(q));
	CU_ASSERT_EQUAL(nvme_pcie_qpair_process_completions(q, 0), 2);
	/* Across the wrap: head at the last slot (phase 1), the next is slot 0 of the
	 * second pass (phase 0). */
	post_cpl(pq, 2, 2, 1);
	CU_ASSERT_EQUAL(nvme_pcie_qpair_process_completions(q, 0), 1);
	CU_ASSERT_EQUAL(pq->cq_head, 3);
	CU_ASSERT_FALSE(pcie_qpair_cq_stalled(q)); /* slot 0 still holds phase 1 */
	post_cpl(pq, 0, 3, 0);
	CU_ASSERT_TRUE(pcie_qpair_cq_stalled(q)); /* slot 3 holds its stale phase 0 */
	post_cpl(pq, 3, 3, 1);
	CU_ASSERT_FALSE(pcie_qpair_cq_stalled(q));
	CU_ASSERT_EQUAL(nvme_pcie_qpair_process_completions(q, 0), 2);
	CU_ASSERT_EQUAL(g_num_cpls, 5);
	CU_ASSERT_PTR_EQUAL(g_nvme_pcie_transport.qpair_cq_stalled, pcie_qpair_cq_stalled);
	q->slots_used = 0;
	pcie_qpair_destroy(q);
	detach();
}

/*
 * Stale entries back to back: the device's next proper entry is two or three past the
 * head, also across the wrap. The look goes no further than the device can have posted
 * (one entry per command holding a slot or in recovery).
 */
static void
test_cq_stalled_behind_two(void)
{
	struct nvme_pcie_qpair *pq;
	struct nvp_nvme_qpair *q;

	bar_reset(0x2000, 0);
	CU_ASSERT_EQUAL_FATAL(attach(), 0);
	q = io_qpair(1, 8);
	pq = to_pcie_qpair(q);
	g_num_cpls = 0;
	q->slots_used = 7;
	/* Two stale entries, nothing after: not stuck, as far as the host can tell. */
	post_cpl(pq, 0, 0, 0);
	post_cpl(pq, 1, 1, 0);
	CU_ASSERT_FALSE(pcie_qpair_cq_stalled(q));
	/* The third one proper: stuck behind the two. */
	post_cpl(pq, 2, 2, 1);
	CU_ASSERT_TRUE(pcie_qpair_cq_stalled(q));
	/* Only two commands on the device: it cannot have posted three entries. */
	q->slots_used = 2;
	CU_ASSERT_FALSE(pcie_qpair_cq_stalled(q));
	q->slots_used = 7;
	/* Both proper after all (a healthy queue seen mid-post): consumed, not stuck. */
	post_cpl(pq, 0, 0, 1);
	post_cpl(pq, 1, 1, 1);
	CU_ASSERT_FALSE(pcie_qpair_cq_stalled(q));
	CU_ASSERT_EQUAL(nvme_pcie_qpair_process_completions(q, 0), 3);
	/* Across the wrap: head at slot 6 (phase 1); slots 6, 7 stale, slot 0 of the second
	 * pass proper (phase 0). */
	post_cpl(pq, 3, 3, 1);
	post_cpl(pq, 4, 4, 1);
	post_cpl(pq, 5, 5, 1);
	CU_ASSERT_EQUAL(nvme_pcie_qpair_process_completions(q, 0), 3);
	CU_ASSERT_EQUAL(pq->cq_head, 6);
	post_cpl(pq, 6, 6, 0);
	post_cpl(pq, 7, 7, 0);
	CU_ASSERT_FALSE(pcie_qpair_cq_stalled(q)); /* slot 0 still holds phase 1 */
	post_cpl(pq, 0, 0, 0);
	CU_ASSERT_TRUE(pcie_qpair_cq_stalled(q));
	post_cpl(pq, 6, 6, 1);
	post_cpl(pq, 7, 7, 1);
	CU_ASSERT_FALSE(pcie_qpair_cq_stalled(q));
	CU_ASSERT_EQUAL(nvme_pcie_qpair_process_completions(q, 0), 3);
	CU_ASSERT_EQUAL(g_num_cpls, 9);
	q->slots_used = 0;
	pcie_qpair_destroy(q);
	detach();
}

static void
test_connect_disconnect(void)
{
	struct nvp_nvme_qpair *q;

	bar_reset(0x2000, 0);
	CU_ASSERT_EQUAL_FATAL(attach(), 0);
	q = io_qpair(1, 16);
	g_admin_log[0] = '\0';
	CU_ASSERT_EQUAL(pcie_qpair_connect(q), 0);
	CU_ASSERT_STRING_EQUAL(g_admin_log, "ccq csq ");
	g_admin_log[0] = '\0';
	CU_ASSERT_EQUAL(pcie_qpair_disconnect(q), 0);
	CU_ASSERT_STRING_EQUAL(g_admin_log, "dsq dcq ");
	/* The SQ is refused: the CQ made for it is deleted again. */
	g_admin_log[0] = '\0';
	g_create_sq_rc = -EIO;
	CU_ASSERT_EQUAL(pcie_qpair_connect(q), -EIO);
	CU_ASSERT_STRING_EQUAL(g_admin_log, "ccq csq dcq ");
	g_create_sq_rc = 0;
	pcie_qpair_destroy(q);
	detach();
}

/* The EventIdx rule, wrap included: ring when the move from old to new passes EventIdx. */
static void
test_dbbuf_need_event(void)
{
	CU_ASSERT_TRUE(nvme_pcie_dbbuf_need_event(0, 3, 0)); /* caught up: ring */
	CU_ASSERT_TRUE(nvme_pcie_dbbuf_need_event(3, 5, 3));
	CU_ASSERT_FALSE(nvme_pcie_dbbuf_need_event(1, 6, 5));        /* still behind */
	CU_ASSERT_FALSE(nvme_pcie_dbbuf_need_event(10, 5, 3));       /* asked for later */
	CU_ASSERT_TRUE(nvme_pcie_dbbuf_need_event(65535, 1, 65534)); /* across the wrap */
	CU_ASSERT_FALSE(nvme_pcie_dbbuf_need_event(2, 1, 65534));
	CU_ASSERT_FALSE(nvme_pcie_dbbuf_need_event(7, 7, 7)); /* no move, no ring */
}

/*
 * With OACS bit 8 the first I/O qpair configures the doorbell buffers; its doorbells go
 * to the shadow page at their BAR0 offsets, and MMIO only when EventIdx asks for it.
 */
static void
test_shadow_doorbells(void)
{
	struct nvme_request req;
	struct nvme_pcie_ctrlr *pctrlr;
	struct nvme_pcie_qpair *pq;
	struct nvp_nvme_qpair *q;
	uint32_t i;

	bar_reset(0x2000, 0);
	CU_ASSERT_EQUAL_FATAL(attach(), 0);
	pctrlr = to_pcie_ctrlr(g_ctrlr);
	g_ctrlr->cdata.oacs |= NVME_OACS_DOORBELL_BUFFER_CONFIG;
	q = io_qpair(2, 16);
	pq = to_pcie_qpair(q);
	g_admin_log[0] = '\0';
	CU_ASSERT_EQUAL(pcie_qpair_connect(q), 0);
	CU_ASSERT_STRING_EQUAL(g_admin_log, "dbbuf ccq csq ");
	CU_ASSERT_TRUE(pctrlr->dbbuf_on);
	CU_ASSERT_EQUAL(g_dbbuf_db_iova, nvp_env_vtophys(pctrlr->dbbuf_db, NULL));
	CU_ASSERT_EQUAL(g_dbbuf_ei_iova, nvp_env_vtophys(pctrlr->dbbuf_ei, NULL));
	CU_ASSERT_PTR_EQUAL(pq->sq_shadow, &pctrlr->dbbuf_db[4]); /* (2 * qid) * 4 bytes */
	CU_ASSERT_PTR_EQUAL(pq->cq_shadow, &pctrlr->dbbuf_db[5]);
	CU_ASSERT_PTR_EQUAL(pq->sq_ei, &pctrlr->dbbuf_ei[4]);
	for (i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(submit_one(q, &req, i), 0);
	}
	/* EventIdx 0, old 0: the controller has seen everything: MMIO too. */
	nvme_pcie_qpair_ring_doorbell(q);
	CU_ASSERT_EQUAL(*pq->sq_shadow, 3);
	CU_ASSERT_EQUAL(*pq->sq_tdbl, 3);
	CU_ASSERT_EQUAL(q->stats.sq_doorbell_writes, 1);
	/* The controller has not caught up (EventIdx 1): the shadow value only. */
	*pq->sq_ei = 1;
	CU_ASSERT_EQUAL(submit_one(q, &req, 3), 0);
	nvme_pcie_qpair_ring_doorbell(q);
	CU_ASSERT_EQUAL(*pq->sq_shadow, 4);
	CU_ASSERT_EQUAL(*pq->sq_tdbl, 3);
	CU_ASSERT_EQUAL(q->stats.sq_doorbell_writes, 1);
	CU_ASSERT_EQUAL(q->stats.sq_shadow_updates, 1);
	/* It caught up with 4: the next move is announced by MMIO again. */
	*pq->sq_ei = 4;
	CU_ASSERT_EQUAL(submit_one(q, &req, 4), 0);
	nvme_pcie_qpair_ring_doorbell(q);
	CU_ASSERT_EQUAL(*pq->sq_tdbl, 5);
	CU_ASSERT_EQUAL(q->stats.sq_doorbell_writes, 2);
	/* Shadow only, controller busy (EventIdx 4 behind the old tail 5): told, no MMIO. */
	CU_ASSERT_EQUAL(submit_one(q, &req, 5), 0);
	CU_ASSERT_TRUE(nvme_pcie_qpair_ring_shadow(q));
	CU_ASSERT_EQUAL(*pq->sq_shadow, 6);
	CU_ASSERT_EQUAL(*pq->sq_tdbl, 5);
	CU_ASSERT_EQUAL(q->stats.sq_shadow_updates, 2);
	CU_ASSERT_FALSE(pq->sq_mmio_owed);
	/* It caught up with 6: no MMIO now, but one is owed... */
	*pq->sq_ei = 6;
	CU_ASSERT_EQUAL(submit_one(q, &req, 6), 0);
	CU_ASSERT_FALSE(nvme_pcie_qpair_ring_shadow(q));
	CU_ASSERT_EQUAL(*pq->sq_shadow, 7);
	CU_ASSERT_EQUAL(*pq->sq_tdbl, 5);
	CU_ASSERT_EQUAL(q->stats.sq_doorbell_writes, 2);
	CU_ASSERT_TRUE(pq->sq_mmio_owed);
	/* ...and stays owed, though the next move alone would not cross EventIdx... */
	*pq->sq_ei = 5;
	CU_ASSERT_EQUAL(submit_one(q, &req, 7), 0);
	CU_ASSERT_FALSE(nvme_pcie_qpair_ring_shadow(q));
	CU_ASSERT_EQUAL(*pq->sq_tdbl, 5);
	CU_ASSERT_EQUAL(q->stats.sq_shadow_updates, 2);
	/* ...until the full ring writes it, whatever EventIdx says (no move: 8 to 8). */
	nvme_pcie_qpair_ring_doorbell(q);
	CU_ASSERT_EQUAL(*pq->sq_shadow, 8);
	CU_ASSERT_EQUAL(*pq->sq_tdbl, 8);
	CU_ASSERT_EQUAL(q->stats.sq_doorbell_writes, 3);
	CU_ASSERT_FALSE(pq->sq_mmio_owed);
	/* A controller that refuses the buffers leaves MMIO doorbells. */
	pctrlr->dbbuf_on = false;
	g_dbbuf_rc = -EIO;
	CU_ASSERT_EQUAL(pcie_qpair_disconnect(q), 0);
	CU_ASSERT_EQUAL(pcie_qpair_connect(q), 0);
	CU_ASSERT_TRUE(pctrlr->dbbuf_failed);
	CU_ASSERT_PTR_NULL(pq->sq_shadow);
	g_dbbuf_rc = 0;
	pcie_qpair_destroy(q);
	detach();
}

/* Poll @n times; \return the completions found. */
static uint32_t
poll_n(struct nvp_nvme_qpair *q, uint32_t n)
{
	uint32_t found = 0;

	while (n-- > 0) {
		found += (uint32_t)nvme_pcie_qpair_process_completions(q, 0);
	}
	return found;
}

/*
 * A controller that missed a shadow doorbell update: EventIdx told the host no MMIO was
 * needed, and no completion ever comes. Once a command has been in the device for
 * NVME_PCIE_IDLE_REKICK_MS with nothing submitted or completed (seen at the looks every
 * NVME_PCIE_IDLE_LOOK_POLLS empty polls), both MMIO doorbells are written again (the SQ
 * tail by the poll's own ring), once per such period; not before that time, not with
 * nothing in the device, not when a completion came in between.
 */
static void
test_shadow_doorbell_missed(void)
{
	struct nvme_request req;
	struct nvme_pcie_qpair *pq;
	struct nvp_nvme_qpair *q;
	uint64_t ms;

	bar_reset(0x2000, 0);
	CU_ASSERT_EQUAL_FATAL(attach(), 0);
	g_ctrlr->cdata.oacs |= NVME_OACS_DOORBELL_BUFFER_CONFIG;
	g_ctrlr->ticks_hz = 1000000;
	ms = nvme_ms_to_ticks(g_ctrlr, NVME_PCIE_IDLE_REKICK_MS);
	q = io_qpair(2, 16);
	pq = to_pcie_qpair(q);
	CU_ASSERT_EQUAL_FATAL(pcie_qpair_connect(q), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(pq->cq_shadow);
	*(volatile uint32_t *)(g_bar + NVME_REG_CSTS) = 1; /* RDY: the controller is there */
	/* Idle, nothing in the device: no doorbell, however long. */
	g_now = 1000;
	CU_ASSERT_EQUAL(poll_n(q, NVME_PCIE_IDLE_LOOK_POLLS), 0);
	g_now += 10 * ms;
	CU_ASSERT_EQUAL(poll_n(q, 2 * NVME_PCIE_IDLE_LOOK_POLLS), 0);
	CU_ASSERT_EQUAL(q->stats.doorbell_rekicks, 0);
	/* One command, announced in the shadow doorbell only (EventIdx far ahead). */
	*pq->sq_ei = 100;
	CU_ASSERT_EQUAL(submit_one(q, &req, 0), 0);
	q->slots_used = 1;
	nvme_pcie_qpair_ring_doorbell(q);
	CU_ASSERT_EQUAL(*pq->sq_shadow, 1);
	CU_ASSERT_EQUAL(*pq->sq_tdbl, 0);
	*pq->cq_hdbl = 0xdead;
	/* Many looks, but less than the period since the submission: nothing. */
	CU_ASSERT_EQUAL(poll_n(q, NVME_PCIE_IDLE_LOOK_POLLS), 0);
	g_now += ms - 1;
	CU_ASSERT_EQUAL(poll_n(q, 4 * NVME_PCIE_IDLE_LOOK_POLLS), 0);
	CU_ASSERT_EQUAL(q->stats.doorbell_rekicks, 0);
	CU_ASSERT_EQUAL(*pq->cq_hdbl, 0xdead);
	/* The period is over: both doorbells, once. */
	g_now += 1;
	CU_ASSERT_EQUAL(poll_n(q, 4 * NVME_PCIE_IDLE_LOOK_POLLS), 0);
	CU_ASSERT_EQUAL(q->stats.doorbell_rekicks, 1);
	CU_ASSERT_EQUAL(*pq->cq_hdbl, 0);
	CU_ASSERT_TRUE(q->sq_dirty);
	nvme_pcie_qpair_ring_doorbell(q); /* what the generic poll does next */
	q->sq_dirty = false;
	CU_ASSERT_EQUAL(*pq->sq_tdbl, 1);
	/* Still nothing after another period: again. */
	g_now += ms;
	CU_ASSERT_EQUAL(poll_n(q, NVME_PCIE_IDLE_LOOK_POLLS), 0);
	CU_ASSERT_EQUAL(q->stats.doorbell_rekicks, 2);
	nvme_pcie_qpair_ring_doorbell(q);
	q->sq_dirty = false;
	/* A device being pulled out (registers all ones) gets no doorbell: QEMU 7.2 crashed on
	 * them while it removed the device. */
	*(volatile uint32_t *)(g_bar + NVME_REG_CSTS) = UINT32_MAX;
	*pq->cq_hdbl = 0xdead;
	g_now += ms;
	CU_ASSERT_EQUAL(poll_n(q, 2 * NVME_PCIE_IDLE_LOOK_POLLS), 0);
	CU_ASSERT_EQUAL(q->stats.doorbell_rekicks, 2);
	CU_ASSERT_EQUAL(*pq->cq_hdbl, 0xdead);
	CU_ASSERT_FALSE(q->sq_dirty);
	*(volatile uint32_t *)(g_bar + NVME_REG_CSTS) = 1;
	/* A completion: the device works; a period later with no more progress than that
	 * completion, the look starts counting from it. */
	post_cpl(pq, 0, 0, 1);
	CU_ASSERT_EQUAL(poll_n(q, NVME_PCIE_IDLE_LOOK_POLLS), 1);
	g_now += ms - 1;
	CU_ASSERT_EQUAL(poll_n(q, 2 * NVME_PCIE_IDLE_LOOK_POLLS), 0);
	CU_ASSERT_EQUAL(q->stats.doorbell_rekicks, 2);
	q->slots_used = 0;
	pcie_qpair_destroy(q);
	detach();
}

/* The non-blocking re-creation's steps: the same commands, in the same order. */
static void
test_conn_cmd_steps(void)
{
	struct nvme_pcie_qpair *pq;
	struct nvp_nvme_qpair *q;
	struct nvme_cmd cmd;

	bar_reset(0x2000, 0);
	CU_ASSERT_EQUAL_FATAL(attach(), 0);
	q = io_qpair(3, 16);
	pq = to_pcie_qpair(q);
	CU_ASSERT_EQUAL(pcie_qpair_conn_cmd(q, true, 0, &cmd), 0);
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_CREATE_IO_CQ);
	CU_ASSERT_EQUAL(cmd.cdw10, NVME_CREATE_IO_Q_CDW10(3, 16));
	CU_ASSERT_EQUAL(cmd.cdw11, (uint32_t)-1); /* polled: no vector */
	CU_ASSERT_EQUAL(cmd.dptr.prp.prp1, pq->cq_iova);
	CU_ASSERT_EQUAL(pcie_qpair_conn_cmd(q, true, 1, &cmd), 0);
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_CREATE_IO_SQ);
	CU_ASSERT_EQUAL(cmd.dptr.prp.prp1, pq->sq_iova);
	CU_ASSERT_EQUAL(pcie_qpair_conn_cmd(q, true, 2, &cmd), -ENOENT);
	CU_ASSERT_EQUAL(pcie_qpair_conn_cmd(q, false, 0, &cmd), 0);
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_DELETE_IO_SQ); /* the SQ first */
	CU_ASSERT_EQUAL(cmd.cdw10, 3);
	CU_ASSERT_EQUAL(pcie_qpair_conn_cmd(q, false, 1, &cmd), 0);
	CU_ASSERT_EQUAL(cmd.opc, NVME_OPC_DELETE_IO_CQ);
	CU_ASSERT_EQUAL(pcie_qpair_conn_cmd(q, false, 2, &cmd), -ENOENT);
	pcie_qpair_destroy(q);
	detach();
}

int
main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		return 1;
	}
	s = CU_add_suite("nvme_pcie", suite_init, suite_fini);
	CU_ADD_TEST(s, test_attach);
	CU_ADD_TEST(s, test_attach_bad_bar);
	CU_ADD_TEST(s, test_registers);
	CU_ADD_TEST(s, test_doorbell_offsets);
	CU_ADD_TEST(s, test_admin_queue_registers);
	CU_ADD_TEST(s, test_sq_ring_wrap);
	CU_ADD_TEST(s, test_prp_fast_path);
	CU_ADD_TEST(s, test_cq_phase_wrap);
	CU_ADD_TEST(s, test_cq_stalled);
	CU_ADD_TEST(s, test_cq_stalled_behind_two);
	CU_ADD_TEST(s, test_connect_disconnect);
	CU_ADD_TEST(s, test_dbbuf_need_event);
	CU_ADD_TEST(s, test_shadow_doorbells);
	CU_ADD_TEST(s, test_shadow_doorbell_missed);
	CU_ADD_TEST(s, test_conn_cmd_steps);
	return ut_run();
}

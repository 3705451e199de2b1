/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp read, write, compare, write-zeroes, dsm, flush: nvme-cli 2.3's NVM commands.
 *
 * Each command is encoded as nvme-cli encodes it through libnvme's nvme_io() (NVMe 2.0,
 * section 3.3.3 and the NVM Command Set specification, section 3.2):
 *   CDW10/11  starting LBA            CDW12  NLB (zero based) | control << 16
 *   CDW13     DSM (7:0) | DSPEC << 16 CDW14  reference tag    CDW15  app tag | mask << 16
 * control: LR (15), FUA (14), PRINFO (13:10), DEAC (9, write zeroes), STC (8), DTYPE (7:4).
 * The driver sends it as given (nvp_nvme_ctrlr_cmd_io_raw: no LBA checks, no splitting),
 * so what the controller answers is what nvme-cli would get from it through the kernel,
 * and a command larger than the controller's transfer limit is refused here, as the
 * kernel refuses it. Each command runs on an I/O queue pair of its own, made and freed
 * around it.
 *
 * Output as nvme-cli's: read writes --data-size bytes to the data file (standard output
 * without -d), then the metadata; "read: Success" on standard error. A file that is
 * written is created if needed and, as nvme-cli does, not truncated.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nvpoll/barrier.h"
#include "nvpoll/env.h"
#include "nvpoll/util.h"

#include "nvp_cli.h"

/* CDW12 bits 31:16 of an NVM command (NVM Command Set specification, figure 29). */
#define CTL_LR (1u << 15)
#define CTL_FUA (1u << 14)
#define CTL_DEAC (1u << 9)
#define CTL_STC (1u << 8)
#define CTL_PRINFO_SHIFT 10
#define CTL_DTYPE_SHIFT 4

/* Queue pair of one command: one slot is all it needs; two leave the ring a free entry. */
#define IO_QUEUE_SIZE 4u

/* ---- files ---- */

int
cli_file_open(const char *what, const char *path, bool input)
{
	int fd;

	if (path == NULL) {
		return input ? STDIN_FILENO : STDOUT_FILENO;
	}
	fd = open(path, input ? O_RDONLY : O_WRONLY | O_CREAT, 0664);
	if (fd < 0) {
		fprintf(stderr, "%s: cannot open '%s': %s\n", what, path, strerror(errno));
	}
	return fd;
}

void
cli_file_close(int fd)
{
	if (fd > STDERR_FILENO) {
		close(fd);
	}
}

ssize_t
cli_file_read(const char *what, const char *path, int fd, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(fd, (char *)buf + done, len - done);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			fprintf(stderr, "%s: cannot read '%s': %s\n", what,
				path ? path : "standard input", strerror(errno));
			return -1;
		}
		if (n == 0) {
			break; /* a short file: the rest of the buffer stays as it was */
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

int
cli_file_write(const char *what, const char *path, int fd, const void *buf, size_t len)
{
	size_t done = 0;

	fflush(stdout); /* anything printed before goes first */
	while (done < len) {
		ssize_t n = write(fd, (const char *)buf + done, len - done);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			fprintf(stderr, "%s: cannot write '%s': %s\n", what,
				path ? path : "standard output", strerror(n < 0 ? errno : EIO));
			return -1;
		}
		done += (size_t)n;
	}
	return 0;
}

size_t
cli_dma_size(uint64_t len)
{
	return (size_t)NVP_ALIGN_UP(len, (uint64_t)CLI_DMA_PAGE);
}

/* ---- one command on a qpair of its own ---- */

struct io_wait {
	bool done;
	struct nvme_cpl cpl;
};

static void
io_done(void *arg, const struct nvme_cpl *cpl)
{
	struct io_wait *w = arg;

	w->cpl = *cpl;
	w->done = true;
}

uint64_t
cli_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/*
 * Poll until the request completes. The driver completes every request it accepted, also
 * past its deadline (abort, then reset) or when the controller fails; freeing the qpair
 * completes what is left. A slow command (a big write to a slow device) is polled less
 * hard after a while.
 */
static void
io_poll(struct nvp_nvme_qpair *qp, struct io_wait *w)
{
	uint32_t idle = 0;

	while (!w->done) {
		int32_t n = nvp_nvme_qpair_process_completions(qp, 0);

		if (n < 0) {
			return; /* failed qpair: nvp_nvme_ctrlr_free_io_qpair() completes it */
		}
		if (n == 0 && ++idle > 10000) {
			nvp_env_delay_us(20);
		} else {
			nvp_pause();
		}
	}
}

int
cli_io_run(struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, void *buf, uint32_t len,
	   uint32_t timeout_ms, struct nvme_cpl *cpl, uint64_t *lat_us)
{
	struct nvp_nvme_io_qpair_opts o;
	struct nvp_nvme_qpair *qp;
	struct io_wait w = { .done = false };
	uint64_t t0;
	int rc;

	nvp_nvme_ctrlr_get_default_io_qpair_opts(ctrlr, &o, sizeof(o));
	o.io_queue_size = IO_QUEUE_SIZE;
	o.io_queue_requests = IO_QUEUE_SIZE;
	if (timeout_ms != 0) {
		o.timeout_us = (uint64_t)timeout_ms * 1000u;
	}
	rc = nvp_nvme_ctrlr_alloc_io_qpair(ctrlr, &o, &qp);
	if (rc != 0) {
		return rc;
	}
	t0 = cli_now_us();
	rc = nvp_nvme_ctrlr_cmd_io_raw(ctrlr, qp, cmd, buf, len, io_done, &w);
	if (rc == 0) {
		io_poll(qp, &w);
	}
	if (lat_us != NULL) {
		*lat_us = cli_now_us() - t0;
	}
	nvp_nvme_ctrlr_free_io_qpair(qp);
	if (rc != 0) {
		return rc;
	}
	if (!w.done) {
		return -ENXIO; /* not completed even by freeing the qpair: no status to show */
	}
	*cpl = w.cpl;
	return nvme_cpl_is_error(&w.cpl) ? -EIO : 0;
}

/* ---- encoding, as libnvme's nvme_io() ---- */

static uint32_t
io_control(const struct cli_io_args *io, bool write_zeroes)
{
	uint32_t c = (uint32_t)io->prinfo << CTL_PRINFO_SHIFT;

	c |= io->limited_retry ? CTL_LR : 0;
	c |= io->fua ? CTL_FUA : 0;
	c |= io->stc ? CTL_STC : 0;
	if (write_zeroes) {
		c |= io->deac ? CTL_DEAC : 0;
	} else {
		c |= (uint32_t)io->dtype << CTL_DTYPE_SHIFT;
	}
	return c;
}

void
cli_io_encode(const struct cli_io_args *io, uint8_t opc, uint32_t nsid, struct nvme_cmd *cmd)
{
	bool wz = opc == NVME_OPC_WRITE_ZEROES;

	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = opc;
	cmd->nsid = nsid;
	cmd->cdw10 = (uint32_t)io->slba;
	cmd->cdw11 = (uint32_t)(io->slba >> 32);
	cmd->cdw12 = io->nlb | io_control(io, wz) << 16;
	cmd->cdw13 = wz ? 0 : (io->dsm | (uint32_t)io->dspec << 16);
	cmd->cdw14 = io->ref_tag;
	cmd->cdw15 = io->apptag | (uint32_t)io->apptag_mask << 16;
}

int
cli_dsm_ranges(const struct cli_io_args *io, struct nvme_dsm_range *r)
{
	static uint64_t v[3][CLI_DSM_MAX_RANGES];
	const char *strs[3] = { io->slbs, io->blocks, io->ctx_attrs };
	int n[3] = { 0, 0, 0 }, nr = 0;

	memset(v, 0, sizeof(v));
	for (int i = 0; i < 3; i++) {
		if (strs[i] != NULL) {
			n[i] = cli_parse_list(strs[i], UINT64_MAX, v[i], CLI_DSM_MAX_RANGES);
			if (n[i] < 0) {
				return -EINVAL; /* cli_args.c checked them */
			}
		}
		nr = NVP_MAX(nr, n[i]);
	}
	/* As nvme-cli: a range a list is too short for gets 0 there. */
	for (int i = 0; i < nr; i++) {
		r[i].starting_lba = v[0][i];
		r[i].length = (uint32_t)v[1][i];
		r[i].attributes = (uint32_t)v[2][i];
	}
	return nr;
}

/* ---- read, write, compare ---- */

static uint32_t
io_nsid(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	return a->nsid_set ? a->nsid : nvp_nvme_ctrlr_get_first_active_ns(ctrlr);
}

/* The buffers of one read, write or compare and where their bytes go. */
struct rw_job {
	const char *name;
	bool input; /* write, compare: the files are read */
	struct nvme_cmd cmd;
	void *buf;
	uint64_t buf_size;
	uint32_t xfer; /* bytes the command moves */
	void *md;
	uint64_t md_size;
	int dfd;
	int mfd;
};

static void
print_rw_command(const struct cli_args *a, const struct rw_job *j)
{
	const struct cli_io_args *io = &a->io;
	uint32_t dsmgmt = io->dsm | (io->dtype ? (uint32_t)io->dspec << 16 : 0);

	printf("opcode       : %02x\n", (unsigned int)j->cmd.opc);
	printf("nsid         : %02x\n", j->cmd.nsid);
	printf("flags        : %02x\n", 0u);
	printf("control      : %04x\n", j->cmd.cdw12 >> 16);
	printf("nblocks      : %04x\n", io->nlb);
	printf("metadata     : %" PRIx64 "\n", (uint64_t)(uintptr_t)j->md);
	printf("addr         : %" PRIx64 "\n", (uint64_t)(uintptr_t)j->buf);
	printf("slba         : %" PRIx64 "\n", io->slba);
	printf("dsmgmt       : %08x\n", dsmgmt);
	printf("reftag       : %" PRIx64 "\n", (uint64_t)io->ref_tag);
	printf("apptag       : %04x\n", io->apptag);
	printf("appmask      : %04x\n", io->apptag_mask);
	printf("storagetagcheck : %04x\n", io->stc ? 1u : 0u);
	printf("storagetag      : %" PRIx64 "\n", (uint64_t)0);
	printf("pif             : %02x\n", 0u);
	printf("sts             : %02x\n", 0u);
}

/*
 * Buffer sizes as nvme-cli's submit_io(): the data buffer holds --data-size bytes or the
 * blocks, whichever is more ("Rounding data size to fit block count" when the blocks
 * win); on an extended-LBA format the blocks carry their metadata too.
 */
static int
rw_sizes(const struct cli_args *a, struct nvp_nvme_ns *ns, struct rw_job *j)
{
	uint64_t blocks = (uint64_t)a->io.nlb + 1, ms = nvp_nvme_ns_get_md_size(ns);
	uint64_t need = blocks * nvp_nvme_ns_get_data_sector_size(ns);
	uint64_t xfer = blocks * nvp_nvme_ns_get_sector_size(ns);
	uint32_t max = nvp_nvme_ctrlr_get_max_xfer_size(nvp_nvme_ns_get_ctrlr(ns));

	if (a->io.data_size < need) {
		fprintf(stderr, "Rounding data size to fit block count (%" PRIu64 " bytes)\n",
			need);
	}
	if (xfer > max) {
		fprintf(stderr,
			"%s: %" PRIu64 " blocks are %" PRIu64 " bytes, more than the controller "
			"moves in one command (%u bytes): give a smaller --block-count\n",
			j->name, blocks, xfer, max);
		return -EINVAL;
	}
	j->xfer = (uint32_t)xfer;
	j->buf_size = NVP_MAX(NVP_MAX(a->io.data_size, need), xfer);
	if (a->io.md_size != 0) {
		if (ms != 0 && a->io.md_size < blocks * ms) {
			fprintf(stderr,
				"Rounding metadata size to fit block count (%" PRIu64 " bytes)\n",
				blocks * ms);
		}
		j->md_size = NVP_MAX(a->io.md_size, blocks * ms);
	}
	return 0;
}

static void
rw_release(struct rw_job *j)
{
	nvp_env_dma_free(j->buf);
	nvp_env_dma_free(j->md);
	cli_file_close(j->dfd);
	cli_file_close(j->mfd);
}

/* Files opened (output files created) and input read, before anything is sent. */
static int
rw_prepare(const struct cli_args *a, struct rw_job *j)
{
	uint64_t iova = 0;

	j->buf = nvp_env_dma_zmalloc(cli_dma_size(j->buf_size), 4096, NULL);
	j->md = j->md_size ? nvp_env_dma_zmalloc(cli_dma_size(j->md_size), 4096, &iova) : NULL;
	if (j->buf == NULL || (j->md_size != 0 && j->md == NULL)) {
		fprintf(stderr, "%s: cannot allocate %" PRIu64 " bytes of DMA memory\n", j->name,
			j->buf_size + j->md_size);
		return -ENOMEM;
	}
	j->cmd.mptr = iova;
	j->dfd = cli_file_open(j->name, a->io.data, j->input);
	if (j->dfd < 0) {
		return -EIO;
	}
	if (a->io.md_size != 0) {
		/* As nvme-cli: without -M, standard input or output, whatever -d is. */
		j->mfd = cli_file_open(j->name, a->io.md, j->input);
		if (j->mfd < 0) {
			return -EIO;
		}
	}
	if (!j->input) {
		return 0;
	}
	if (cli_file_read(j->name, a->io.data, j->dfd, j->buf, a->io.data_size) < 0) {
		return -EIO;
	}
	if (a->io.md_size != 0 && cli_file_read(j->name, a->io.md, j->mfd, j->md, j->md_size) < 0) {
		return -EIO;
	}
	return 0;
}

/* Read: --data-size bytes to the data file, then the metadata. */
static int
rw_output(const struct cli_args *a, const struct rw_job *j)
{
	if (cli_file_write(j->name, a->io.data, j->dfd, j->buf, a->io.data_size) != 0) {
		return -EIO;
	}
	if (a->io.md_size != 0 &&
	    cli_file_write(j->name, a->io.md, j->mfd, j->md, j->md_size) != 0) {
		return -EIO;
	}
	return 0;
}

static int
rw_send(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr, struct rw_job *j)
{
	struct nvme_cpl cpl;
	uint64_t lat = 0;
	int rc;

	rc = cli_io_run(ctrlr, &j->cmd, j->buf, j->xfer, 0, &cpl, &lat);
	if (a->io.latency) {
		printf(" latency: %s: %" PRIu64 " us\n", j->name, lat);
	}
	if (rc != 0) {
		cli_report_error(j->name, rc, &cpl);
		return CLI_EXIT_FAIL;
	}
	if (!j->input && rw_output(a, j) != 0) {
		return CLI_EXIT_FAIL;
	}
	fprintf(stderr, "%s: Success\n", j->name);
	return CLI_EXIT_OK;
}

static int
cmd_rw(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr, uint8_t opc)
{
	struct rw_job j = {
		.name = cli_cmd_name(a->cmd), .input = opc != NVME_OPC_READ, .dfd = -1, .mfd = -1
	};
	uint32_t nsid = io_nsid(a, ctrlr);
	struct nvp_nvme_ns *ns = nvp_nvme_ctrlr_get_ns(ctrlr, nsid);
	int rc;

	if (ns == NULL) {
		fprintf(stderr, "%s: namespace %u is not active on this controller (see list-ns)\n",
			j.name, nsid);
		return CLI_EXIT_FAIL;
	}
	cli_io_encode(&a->io, opc, nsid, &j.cmd);
	rc = rw_sizes(a, ns, &j);
	if (rc == 0) {
		rc = rw_prepare(a, &j);
	}
	if (rc == 0 && (a->io.show || a->io.dry_run)) {
		print_rw_command(a, &j);
	}
	if (rc == 0 && !a->io.dry_run) {
		rc = rw_send(a, ctrlr, &j);
	}
	rw_release(&j);
	return rc < 0 ? CLI_EXIT_FAIL : rc;
}

/* ---- write-zeroes, dsm, flush ---- */

static int
send_simple(const char *name, struct nvp_nvme_ctrlr *ctrlr, const struct nvme_cmd *cmd, void *buf,
	    uint32_t len, const char *success)
{
	struct nvme_cpl cpl;
	int rc = cli_io_run(ctrlr, cmd, buf, len, 0, &cpl, NULL);

	if (rc != 0) {
		cli_report_error(name, rc, &cpl);
		return CLI_EXIT_FAIL;
	}
	printf("%s\n", success);
	return CLI_EXIT_OK;
}

static int
cmd_write_zeroes(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	struct nvme_cmd cmd;

	cli_io_encode(&a->io, NVME_OPC_WRITE_ZEROES, io_nsid(a, ctrlr), &cmd);
	return send_simple("write-zeroes", ctrlr, &cmd, NULL, 0, "NVME Write Zeroes Success");
}

static int
cmd_dsm(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	struct nvme_dsm_range *r = nvp_env_dma_zmalloc(CLI_DSM_MAX_RANGES * sizeof(*r), 4096, NULL);
	struct nvme_cmd cmd = { .opc = NVME_OPC_DATASET_MANAGEMENT };
	int nr, rc;

	if (r == NULL) {
		fprintf(stderr, "dsm: cannot allocate DMA memory for the ranges\n");
		return CLI_EXIT_FAIL;
	}
	nr = cli_dsm_ranges(&a->io, r);
	if (nr <= 0) {
		nvp_env_dma_free(r);
		return CLI_EXIT_USAGE;
	}
	cmd.nsid = io_nsid(a, ctrlr);
	cmd.cdw10 = (uint32_t)nr - 1; /* NR, zero based */
	/* As nvme-cli: a non-zero --cdw11 wins over -d -w -r. */
	cmd.cdw11 = a->cdw11 != 0 ? a->cdw11 :
				    ((a->io.ad ? NVME_DSM_ATTR_DEALLOCATE : 0) |
				     (a->io.idw ? NVME_DSM_ATTR_INTEGRAL_WRITE : 0) |
				     (a->io.idr ? NVME_DSM_ATTR_INTEGRAL_READ : 0));
	rc = send_simple("dsm", ctrlr, &cmd, r, (uint32_t)nr * sizeof(*r), "NVMe DSM: success");
	nvp_env_dma_free(r);
	return rc;
}

static int
cmd_flush(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	struct nvme_cmd cmd = { .opc = NVME_OPC_FLUSH, .nsid = io_nsid(a, ctrlr) };

	return send_simple("flush", ctrlr, &cmd, NULL, 0, "NVMe Flush: success");
}

int
cli_cmd_io(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	switch (a->cmd) {
	case CLI_CMD_READ:
		return cmd_rw(a, ctrlr, NVME_OPC_READ);
	case CLI_CMD_WRITE:
		return cmd_rw(a, ctrlr, NVME_OPC_WRITE);
	case CLI_CMD_COMPARE:
		return cmd_rw(a, ctrlr, NVME_OPC_COMPARE);
	case CLI_CMD_WRITE_ZEROES:
		return cmd_write_zeroes(a, ctrlr);
	case CLI_CMD_DSM:
		return cmd_dsm(a, ctrlr);
	case CLI_CMD_FLUSH:
		return cmd_flush(a, ctrlr);
	default:
		return CLI_EXIT_USAGE;
	}
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvp get-log, io-passthru, admin-passthru: any log page, any command, as nvme-cli 2.3
 * sends and shows them.
 *
 * get-log builds Get Log Page (NVMe 2.0 section 5.16) as libnvme's nvme_get_log() does:
 *   CDW10  LID | LSP << 8 | RAE << 15 | NUMDL << 16      CDW11  NUMDU | LSI << 16
 *   CDW12/13  log page offset                           CDW14  UUID index | OT << 23 | CSI << 24
 * in one command, and prints "Device:... log-id:... namespace-id:..." and nvme-cli's hex
 * dump, or the raw bytes with -b.
 *
 * The passthru commands send dwords 1..3 and 10..15 as given; the driver owns the command
 * identifier and the data pointer (it builds the PRPs), the metadata pointer is the bus
 * address of a buffer of --metadata-len bytes. An I/O command runs on a qpair of its own
 * with --timeout as its deadline (past it the driver aborts it, then resets the
 * controller); an admin command waits at most --timeout, then the controller is reset,
 * which completes it with an abort status - the kernel's nvme driver does the same with
 * a command that times out. Output as nvme-cli's: "Admin Command Identify is Success and
 * result: 0x00000000" on standard error, the data read as a hex dump (or raw with -b, or
 * into --input-file) on standard output.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvpoll/barrier.h"
#include "nvpoll/env.h"
#include "nvpoll/util.h"

#include "nvp_cli.h"

#define ADMIN_DEFAULT_TIMEOUT_MS 60000u /* the kernel's admin_timeout */

/* ---- nvme-cli's hex dump, d(buf, len, 16, 1) ---- */

void
cli_hexdump(FILE *f, const uint8_t *buf, size_t len)
{
	char ascii[16];
	bool line_done = false;
	size_t i;

	fprintf(f, "     ");
	for (int c = 0; c < 16; c++) {
		fprintf(f, "%3x", c);
	}
	for (i = 0; i < len; i++) {
		line_done = false;
		if (i % 16 == 0) {
			fprintf(f, "\n%04zx:", i);
		}
		fprintf(f, " %02x", buf[i]);
		ascii[i % 16] = (char)(buf[i] >= '!' && buf[i] <= '~' ? buf[i] : '.');
		if ((i + 1) % 16 == 0) {
			fprintf(f, " \"%.16s\"", ascii);
			line_done = true;
		}
	}
	if (!line_done && len != 0) {
		size_t b = 16 - i % 16;
		/*
		 * nvme-cli 2.3 ends its buffer one character late: after a partial last line's
		 * characters it prints the one the line above left in that column (on a first
		 * line, whatever its stack held; nothing here).
		 */
		size_t n = i % 16 + (i > 16 ? 1 : 0);

		fprintf(f, " %*s \"%.*s\"", (int)(3 * b), "", (int)n, ascii);
	}
	fprintf(f, "\n");
}

/* ---- get-log ---- */

void
cli_log_encode(const struct cli_log_args *l, uint32_t nsid, struct nvme_cmd *cmd)
{
	uint8_t lid = l->aen != 0 ? (uint8_t)(l->aen >> 16) : l->lid;
	uint32_t len = l->aen != 0 ? 4096u : l->len;
	uint32_t numd = len / 4 - 1;

	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = NVME_OPC_GET_LOG_PAGE;
	cmd->nsid = nsid;
	cmd->cdw10 = lid | (uint32_t)l->lsp << 8 | (l->rae ? 1u << 15 : 0) | (numd & 0xffffu) << 16;
	cmd->cdw11 = numd >> 16 | (uint32_t)l->lsi << 16;
	cmd->cdw12 = (uint32_t)l->lpo;
	cmd->cdw13 = (uint32_t)(l->lpo >> 32);
	cmd->cdw14 = l->uuidx | (l->ot ? 1u << 23 : 0) | (uint32_t)l->csi << 24;
}

static int
cmd_get_log(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	uint32_t nsid = a->nsid_set ? a->nsid : NVME_GLOBAL_NS_TAG;
	uint32_t len = a->log.aen != 0 ? 4096u : a->log.len;
	uint32_t max = nvp_nvme_ctrlr_get_max_xfer_size(ctrlr);
	struct nvme_cmd cmd;
	struct nvme_cpl cpl;
	uint8_t *log;
	int rc;

	if (len > max) {
		fprintf(stderr,
			"get-log: %u bytes are more than the controller moves in one command (%u "
			"bytes): read the page in parts with --lpo\n",
			len, max);
		return CLI_EXIT_FAIL;
	}
	log = calloc(1, len);
	if (log == NULL) {
		fprintf(stderr, "get-log: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	cli_log_encode(&a->log, nsid, &cmd);
	rc = nvp_nvme_ctrlr_cmd_admin_sync(ctrlr, &cmd, log, len, &cpl);
	if (rc != 0) {
		cli_report_error("get-log", rc, &cpl);
	} else if (a->output == CLI_OUT_BINARY) {
		rc = cli_file_write("get-log", NULL, STDOUT_FILENO, log, len);
	} else {
		printf("Device:%s log-id:%u namespace-id:%#x\n", a->device, (cmd.cdw10 & 0xffu),
		       nsid);
		cli_hexdump(stdout, log, len);
	}
	free(log);
	return rc == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

/* ---- passthru ---- */

/* nvme-cli's nvme_cmd_to_string(): the spec's names of the commands. */
const char *
cli_opcode_name(bool admin, uint8_t opc)
{
	static const char *const admin_names[256] = {
		[0x00] = "Delete I/O Submission Queue",
		[0x01] = "Create I/O Submission Queue",
		[0x02] = "Get Log Page",
		[0x04] = "Delete I/O Completion Queue",
		[0x05] = "Create I/O Completion Queue",
		[0x06] = "Identify",
		[0x08] = "Abort",
		[0x09] = "Set Features",
		[0x0a] = "Get Features",
		[0x0c] = "Asynchronous Event Request",
		[0x0d] = "Namespace Management",
		[0x10] = "Firmware Commit",
		[0x11] = "Firmware Image Download",
		[0x14] = "Device Self-test",
		[0x15] = "Namespace Attachment",
		[0x18] = "Keep Alive",
		[0x19] = "Directive Send",
		[0x1a] = "Directive Receive",
		[0x1c] = "Virtualization Management",
		[0x1d] = "NVMe-MI Send",
		[0x1e] = "NVMe-MI Receive",
		[0x7c] = "Doorbell Buffer Config",
		[0x80] = "Format NVM",
		[0x81] = "Security Send",
		[0x82] = "Security Receive",
		[0x84] = "Sanitize",
		[0x86] = "Get LBA Status",
	};
	static const char *const io_names[256] = {
		[0x00] = "Flush",
		[0x01] = "Write",
		[0x02] = "Read",
		[0x04] = "Write Uncorrectable",
		[0x05] = "Compare",
		[0x08] = "Write Zeroes",
		[0x09] = "Dataset Management",
		[0x0c] = "Verify",
		[0x0d] = "Reservation Register",
		[0x0e] = "Reservation Report",
		[0x11] = "Reservation Acquire",
		[0x15] = "Reservation Release",
		[0x19] = "Copy",
		[0x79] = "Zone Management Send",
		[0x7a] = "Zone Management Receive",
		[0x7d] = "Zone Append",
	};
	const char *n = admin ? admin_names[opc] : io_names[opc];

	return n != NULL ? n : "Vendor Specific";
}

void
cli_pt_encode(const struct cli_args *a, struct nvme_cmd *cmd)
{
	const struct cli_pt_args *pt = &a->pt;

	memset(cmd, 0, sizeof(*cmd));
	cmd->opc = pt->opcode;
	cmd->fuse = pt->flags & 0x3u;
	cmd->rsvd1 = (pt->flags >> 2) & 0xfu;
	cmd->psdt = (pt->flags >> 6) & 0x3u;
	cmd->nsid = a->nsid;
	cmd->cdw2 = pt->cdw[2];
	cmd->cdw3 = pt->cdw[3];
	cmd->cdw10 = pt->cdw[10];
	cmd->cdw11 = pt->cdw[11];
	cmd->cdw12 = pt->cdw[12];
	cmd->cdw13 = pt->cdw[13];
	cmd->cdw14 = pt->cdw[14];
	cmd->cdw15 = pt->cdw[15];
}

struct pt_job {
	bool admin;
	const char *name;
	bool rd;
	struct nvme_cmd cmd;
	uint8_t *data;
	uint8_t *md;
	int dfd;
	int mfd;
	bool abandoned; /* sent, never completed: its buffers must stay */
};

static void
print_pt_command(const struct cli_args *a, const struct pt_job *j)
{
	const struct cli_pt_args *pt = &a->pt;

	printf("opcode       : %02x\n", pt->opcode);
	printf("flags        : %02x\n", pt->flags);
	printf("rsvd1        : %04x\n", pt->rsvd);
	printf("nsid         : %08x\n", a->nsid);
	printf("cdw2         : %08x\n", pt->cdw[2]);
	printf("cdw3         : %08x\n", pt->cdw[3]);
	printf("data_len     : %08x\n", pt->data_len);
	printf("metadata_len : %08x\n", pt->md_len);
	printf("addr         : %" PRIx64 "\n", (uint64_t)(uintptr_t)j->data);
	printf("metadata     : %" PRIx64 "\n", (uint64_t)(uintptr_t)j->md);
	for (int i = 10; i <= 15; i++) {
		printf("cdw%-2d        : %08x\n", i, pt->cdw[i]);
	}
	printf("timeout_ms   : %08x\n", a->timeout_ms);
}

/* Buffers filled with --prefill, or with the input when the command sends data. */
static int
pt_prepare(const struct cli_args *a, struct pt_job *j)
{
	const struct cli_pt_args *pt = &a->pt;
	uint64_t iova = 0;

	j->data = pt->data_len ? nvp_env_dma_malloc(cli_dma_size(pt->data_len), 4096, NULL) : NULL;
	j->md = pt->md_len ? nvp_env_dma_malloc(cli_dma_size(pt->md_len), 4096, &iova) : NULL;
	if ((pt->data_len != 0 && j->data == NULL) || (pt->md_len != 0 && j->md == NULL)) {
		fprintf(stderr, "%s: cannot allocate DMA memory for %u + %u bytes\n", j->name,
			pt->data_len, pt->md_len);
		return -ENOMEM;
	}
	if (j->data != NULL) {
		memset(j->data, pt->prefill, pt->data_len);
	}
	if (j->md != NULL) {
		memset(j->md, pt->prefill, pt->md_len);
	}
	j->cmd.mptr = iova;
	if (pt->input_file != NULL || !j->rd) {
		j->dfd = cli_file_open(j->name, pt->input_file, !j->rd);
		if (j->dfd < 0) {
			return -EIO;
		}
	}
	if (pt->md_file != NULL) {
		j->mfd = cli_file_open(j->name, pt->md_file, !j->rd);
		if (j->mfd < 0) {
			return -EIO;
		}
	}
	if (j->rd) {
		return 0;
	}
	if (cli_file_read(j->name, pt->input_file, j->dfd, j->data, pt->data_len) < 0 ||
	    (j->mfd >= 0 && cli_file_read(j->name, pt->md_file, j->mfd, j->md, pt->md_len) < 0)) {
		return -EIO;
	}
	return 0;
}

static struct {
	bool done;
	struct nvme_cpl cpl;
} g_admin_wait; /* static: a command that outlives its wait must not write a dead frame */

static void
admin_done(void *arg, const struct nvme_cpl *cpl)
{
	(void)arg;
	g_admin_wait.cpl = *cpl;
	g_admin_wait.done = true;
}

/*
 * An admin command, waited for up to @timeout_ms; then the controller is reset, which
 * completes it (aborted). \return 0, -EIO (status in *@cpl), -ETIMEDOUT, -errno.
 */
static int
admin_run(struct nvp_nvme_ctrlr *ctrlr, struct pt_job *j, uint32_t len, uint32_t timeout_ms,
	  struct nvme_cpl *cpl)
{
	uint64_t deadline = cli_now_us() + (uint64_t)timeout_ms * 1000u;
	uint32_t idle = 0;
	int rc;

	g_admin_wait.done = false;
	rc = nvp_nvme_ctrlr_cmd_admin_raw(ctrlr, &j->cmd, len ? j->data : NULL, len, admin_done,
					  NULL);
	while (rc == 0 && !g_admin_wait.done) {
		if (nvp_nvme_ctrlr_process_admin_completions(ctrlr) < 0 && !g_admin_wait.done) {
			j->abandoned = true;
			return -ENXIO;
		}
		if (cli_now_us() > deadline && !g_admin_wait.done) {
			fprintf(stderr,
				"%s: no completion within %u ms: resetting the controller to get "
				"the command back\n",
				j->name, timeout_ms);
			(void)nvp_nvme_ctrlr_reset(ctrlr);
			j->abandoned = !g_admin_wait.done;
			return -ETIMEDOUT;
		}
		if (++idle > 10000) {
			nvp_env_delay_us(20);
		} else {
			nvp_pause();
		}
	}
	if (rc != 0) {
		return rc;
	}
	*cpl = g_admin_wait.cpl;
	return nvme_cpl_is_error(cpl) ? -EIO : 0;
}

/* The data read: into --input-file, else a hex dump, or raw with -b. */
static int
pt_output(const struct cli_args *a, const struct pt_job *j)
{
	const struct cli_pt_args *pt = &a->pt;

	if (!j->rd || pt->data_len == 0) {
		return 0;
	}
	if (pt->input_file != NULL) {
		if (cli_file_write(j->name, pt->input_file, j->dfd, j->data, pt->data_len) != 0) {
			return -EIO;
		}
		return j->mfd >= 0 ?
			       cli_file_write(j->name, pt->md_file, j->mfd, j->md, pt->md_len) :
			       0;
	}
	if (a->output == CLI_OUT_BINARY) {
		return cli_file_write(j->name, NULL, STDOUT_FILENO, j->data, pt->data_len);
	}
	cli_hexdump(stdout, j->data, pt->data_len);
	return 0;
}

static int
pt_send(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr, struct pt_job *j)
{
	const char *kind = j->admin ? "Admin" : "IO";
	const char *opname = cli_opcode_name(j->admin, a->pt.opcode);
	uint64_t t0 = cli_now_us(), lat = 0;
	struct nvme_cpl cpl;
	int rc;

	memset(&cpl, 0, sizeof(cpl));
	if (j->admin) {
		rc = admin_run(ctrlr, j, a->pt.data_len,
			       a->timeout_ms ? a->timeout_ms : ADMIN_DEFAULT_TIMEOUT_MS, &cpl);
		lat = cli_now_us() - t0;
	} else {
		rc = cli_io_run(ctrlr, &j->cmd, j->data, a->pt.data_len, a->timeout_ms, &cpl, &lat);
	}
	if (a->pt.latency) {
		printf("%s Command %s latency: %" PRIu64 " us\n", kind, opname, lat);
	}
	if (rc != 0) {
		cli_report_error(j->name, rc, &cpl);
		return CLI_EXIT_FAIL;
	}
	fprintf(stderr, "%s Command %s is Success and result: 0x%08x\n", kind, opname, cpl.cdw0);
	return pt_output(a, j) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

static int
cmd_passthru(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	struct pt_job j = { .admin = a->cmd == CLI_CMD_ADMIN_PASSTHRU,
			    .name = cli_cmd_name(a->cmd),
			    .rd = a->pt.read || (a->pt.opcode & 2u),
			    .dfd = -1,
			    .mfd = -1 };
	uint32_t max = nvp_nvme_ctrlr_get_max_xfer_size(ctrlr);
	int rc;

	if (a->pt.data_len > max) {
		fprintf(stderr,
			"%s: %u bytes are more than the controller moves in one command (%u "
			"bytes)\n",
			j.name, a->pt.data_len, max);
		return CLI_EXIT_FAIL;
	}
	cli_pt_encode(a, &j.cmd);
	rc = pt_prepare(a, &j);
	if (rc == 0 && (a->pt.show || a->pt.dry_run)) {
		print_pt_command(a, &j);
	}
	if (rc == 0 && !a->pt.dry_run) {
		rc = pt_send(a, ctrlr, &j);
	}
	/* An admin command the reset did not give back may still write its buffers. */
	if (!j.abandoned) {
		nvp_env_dma_free(j.data);
		nvp_env_dma_free(j.md);
	}
	cli_file_close(j.dfd);
	cli_file_close(j.mfd);
	return rc < 0 ? CLI_EXIT_FAIL : rc;
}

int
cli_cmd_passthru(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	return a->cmd == CLI_CMD_GET_LOG ? cmd_get_log(a, ctrlr) : cmd_passthru(a, ctrlr);
}

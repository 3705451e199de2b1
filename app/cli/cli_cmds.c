/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The subcommands of nvp. Each one issues the admin command(s) nvme-cli would, then
 * prints the result in the chosen format. Data is always read fresh from the device
 * (not from the driver's cached identify data) so that what is printed is what the
 * controller says now, e.g. after a format or a firmware activation.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvpoll/emu.h"
#include "nvpoll/util.h"

#include "nvp_cli.h"

#define MAX_FW_IMAGE (64u << 20)

static const char *
devname(struct nvp_nvme_ctrlr *ctrlr, char *buf, size_t len)
{
	if (nvp_nvme_transport_id_fmt(buf, len, nvp_nvme_ctrlr_get_transport_id(ctrlr)) != 0) {
		nvp_strlcpy(buf, "?", len);
	}
	return buf;
}

/* Print @obj (consumed) or the raw bytes, per the output format. */
static int
emit(const struct cli_args *a, struct json_object *obj, const void *raw, size_t len)
{
	if (a->output == CLI_OUT_BINARY) {
		json_object_put(obj);
		return fwrite(raw, 1, len, stdout) == len ? CLI_EXIT_OK : CLI_EXIT_FAIL;
	}
	if (obj == NULL) {
		fprintf(stderr, "nvp: out of memory building the JSON output\n");
		return CLI_EXIT_FAIL;
	}
	cli_json_print(stdout, obj);
	json_object_put(obj);
	return CLI_EXIT_OK;
}

static int
cmd_id_ctrl(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	struct nvme_ctrlr_data cd;
	struct nvme_cpl cpl;
	int rc;

	rc = nvp_nvme_ctrlr_identify(ctrlr, NVME_IDENTIFY_CTRLR, 0, &cd, sizeof(cd), &cpl);
	if (rc != 0) {
		cli_report_error("id-ctrl", rc, &cpl);
		return CLI_EXIT_FAIL;
	}
	if (a->output == CLI_OUT_NORMAL) {
		cli_print_id_ctrl(stdout, &cd, a->human);
		if (a->vendor_specific) { /* nvme-cli: only normal output shows them */
			printf("vs[]:\n");
			cli_hexdump(stdout, cd.vs, sizeof(cd.vs));
		}
		return CLI_EXIT_OK;
	}
	return emit(a, a->output == CLI_OUT_JSON ? cli_json_id_ctrl(&cd) : NULL, &cd, sizeof(cd));
}

/* -n, else the first active namespace (nvme-cli takes it from the block device name). */
static uint32_t
default_nsid(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	return a->nsid_set ? a->nsid : nvp_nvme_ctrlr_get_first_active_ns(ctrlr);
}

static int
cmd_id_ns(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	uint32_t nsid = default_nsid(a, ctrlr);
	struct nvme_ns_data nd;
	struct nvme_cpl cpl;
	int rc;

	if (nsid == 0) {
		fprintf(stderr, "id-ns: the controller has no active namespace; give -n\n");
		return CLI_EXIT_FAIL;
	}
	rc = nvp_nvme_ctrlr_identify(ctrlr, NVME_IDENTIFY_NS, nsid, &nd, sizeof(nd), &cpl);
	if (rc != 0) {
		cli_report_error("id-ns", rc, &cpl);
		return CLI_EXIT_FAIL;
	}
	if (a->output == CLI_OUT_NORMAL) {
		cli_print_id_ns(stdout, &nd, nsid, a->human);
		return CLI_EXIT_OK;
	}
	return emit(a, a->output == CLI_OUT_JSON ? cli_json_id_ns(&nd) : NULL, &nd, sizeof(nd));
}

static int
cmd_list_ns(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	struct nvme_ns_list list;
	struct nvme_cpl cpl;
	uint32_t n = 0;
	int rc;

	rc = nvp_nvme_ctrlr_identify(ctrlr, NVME_IDENTIFY_ACTIVE_NS_LIST, 0, &list, sizeof(list),
				     &cpl);
	if (rc != 0) {
		cli_report_error("list-ns", rc, &cpl);
		return CLI_EXIT_FAIL;
	}
	while (n < NVP_COUNTOF(list.ns_list) && list.ns_list[n] != 0) {
		n++;
	}
	if (a->output == CLI_OUT_NORMAL) {
		for (uint32_t i = 0; i < n; i++) {
			printf("[%4u]:%#x\n", i, list.ns_list[i]);
		}
		return CLI_EXIT_OK;
	}
	return emit(a, a->output == CLI_OUT_JSON ? cli_json_list_ns(list.ns_list, n) : NULL, &list,
		    sizeof(list));
}

static int
cmd_smart_log(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	uint32_t nsid = a->nsid_set ? a->nsid : NVME_GLOBAL_NS_TAG;
	struct nvme_health_information_page sl;
	struct nvme_cpl cpl;
	char name[NVP_NVME_TRARGS_MAX + 128];
	int rc;

	rc = nvp_nvme_ctrlr_get_log_page(ctrlr, NVME_LOG_HEALTH_INFORMATION, nsid, &sl, sizeof(sl),
					 0, &cpl);
	if (rc != 0) {
		cli_report_error("smart-log", rc, &cpl);
		return CLI_EXIT_FAIL;
	}
	if (a->output == CLI_OUT_NORMAL) {
		cli_print_smart_log(stdout, &sl, nsid, devname(ctrlr, name, sizeof(name)),
				    a->human);
		return CLI_EXIT_OK;
	}
	return emit(a, a->output == CLI_OUT_JSON ? cli_json_smart_log(&sl) : NULL, &sl, sizeof(sl));
}

static int
cmd_error_log(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	const struct nvme_ctrlr_data *cd = nvp_nvme_ctrlr_get_data(ctrlr);
	uint32_t n = a->log_entries ? a->log_entries : (uint32_t)cd->elpe + 1;
	struct nvme_error_information_entry *e = calloc(n, sizeof(*e));
	char name[NVP_NVME_TRARGS_MAX + 128];
	struct nvme_cpl cpl;
	int rc;

	if (e == NULL) {
		fprintf(stderr, "error-log: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	rc = nvp_nvme_ctrlr_get_log_page(ctrlr, NVME_LOG_ERROR, NVME_GLOBAL_NS_TAG, e,
					 n * (uint32_t)sizeof(*e), 0, &cpl);
	if (rc != 0) {
		cli_report_error("error-log", rc, &cpl);
		free(e);
		return CLI_EXIT_FAIL;
	}
	if (a->output == CLI_OUT_NORMAL) {
		cli_print_error_log(stdout, e, n, devname(ctrlr, name, sizeof(name)));
		rc = CLI_EXIT_OK;
	} else {
		rc = emit(a, a->output == CLI_OUT_JSON ? cli_json_error_log(e, n) : NULL, e,
			  n * sizeof(*e));
	}
	free(e);
	return rc;
}

static int
cmd_fw_log(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	struct nvme_firmware_page fw;
	char name[NVP_NVME_TRARGS_MAX + 128];
	struct nvme_cpl cpl;
	int rc;

	rc = nvp_nvme_ctrlr_get_log_page(ctrlr, NVME_LOG_FIRMWARE_SLOT, NVME_GLOBAL_NS_TAG, &fw,
					 sizeof(fw), 0, &cpl);
	if (rc != 0) {
		cli_report_error("fw-log", rc, &cpl);
		return CLI_EXIT_FAIL;
	}
	devname(ctrlr, name, sizeof(name));
	if (a->output == CLI_OUT_NORMAL) {
		cli_print_fw_log(stdout, &fw, name);
		return CLI_EXIT_OK;
	}
	return emit(a, a->output == CLI_OUT_JSON ? cli_json_fw_log(&fw, name) : NULL, &fw,
		    sizeof(fw));
}

/*
 * One feature: 0, or -EIO with the status in *@cpl, or another -errno. Without -n the
 * namespace id is 0xffffffff, as nvme-cli uses on a controller device.
 */
static int
get_one_feature(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr, uint8_t fid,
		uint32_t *result, struct nvme_cpl *cpl)
{
	uint32_t nsid = a->nsid_set ? a->nsid : NVME_GLOBAL_NS_TAG;
	/* Features with a data structure (LBA range, APST, timestamp...) fill at most 4 KiB. */
	static uint8_t data[4096];

	*result = 0;
	memset(cpl, 0, sizeof(*cpl));
	return nvp_nvme_ctrlr_get_feature(ctrlr, fid, a->sel, a->cdw11, nsid, result, data,
					  sizeof(data), cpl);
}

/*
 * get-feature without -f: every feature id 1..255 in turn. The ones the controller does
 * not support (Invalid Field in Command) are skipped silently; another NVMe status (a
 * per-namespace feature asked without -n, say) is reported on stderr and the walk goes
 * on; a failure of the host or the controller (not an NVMe status) ends it.
 */
static int
get_all_features(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	struct json_object *arr = json_object_new_array();
	struct nvme_cpl cpl;
	uint32_t result;
	char what[48];

	for (unsigned int fid = 1; fid <= 0xff; fid++) {
		int rc = get_one_feature(a, ctrlr, (uint8_t)fid, &result, &cpl);

		if (rc == -EIO && cpl.status.sct == NVME_SCT_GENERIC &&
		    cpl.status.sc == NVME_SC_INVALID_FIELD) {
			continue;
		}
		if (rc != 0) {
			snprintf(what, sizeof(what), "get-feature:%#04x", fid);
			cli_report_error(what, rc, &cpl);
			if (rc == -EIO) {
				continue;
			}
			json_object_put(arr);
			return CLI_EXIT_FAIL;
		}
		if (a->output == CLI_OUT_NORMAL) {
			cli_print_feature(stdout, (uint8_t)fid, a->sel, result, a->human);
		} else {
			json_object_array_add(arr, cli_json_feature((uint8_t)fid, result));
		}
	}
	if (a->output == CLI_OUT_NORMAL) {
		json_object_put(arr);
		return CLI_EXIT_OK;
	}
	return emit(a, arr, NULL, 0);
}

static int
cmd_get_feature(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	struct nvme_cpl cpl;
	uint32_t result = 0;
	int rc;

	if (!a->fid_set) {
		return get_all_features(a, ctrlr);
	}
	rc = get_one_feature(a, ctrlr, a->fid, &result, &cpl);
	if (rc != 0) {
		cli_report_error("get-feature", rc, &cpl);
		return CLI_EXIT_FAIL;
	}
	if (a->output == CLI_OUT_NORMAL) {
		cli_print_feature(stdout, a->fid, a->sel, result, a->human);
		return CLI_EXIT_OK;
	}
	return emit(a, a->output == CLI_OUT_JSON ? cli_json_feature(a->fid, result) : NULL, &result,
		    sizeof(result));
}

static int
cmd_set_feature(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	uint32_t nsid = a->nsid_set ? a->nsid : 0;
	struct nvme_cpl cpl;
	uint32_t result = 0;
	int rc;

	rc = nvp_nvme_ctrlr_set_feature(ctrlr, a->fid, a->value, a->cdw12, nsid, a->save, &result,
					NULL, 0, &cpl);
	if (rc != 0) {
		cli_report_error("set-feature", rc, &cpl);
		return CLI_EXIT_FAIL;
	}
	printf("set-feature:0x%02x (%s), value:0x%08x, cdw12:0x%08x, save:%d\n", a->fid,
	       cli_feature_name(a->fid), a->value, a->cdw12, a->save ? 1 : 0);
	return CLI_EXIT_OK;
}

/* Ask on the terminal. No terminal (a script, a pipe) or EOF: refuse. */
static bool
confirm_format(uint32_t nsid, const char *dev)
{
	char line[16];

	if (!isatty(STDIN_FILENO)) {
		fprintf(stderr,
			"format: refusing to format namespace %#x of %s without confirmation: "
			"stdin is not a terminal; add --force to format anyway\n",
			nsid, dev);
		return false;
	}
	fprintf(stderr,
		"You are about to format namespace %#x of %s: all its data will be lost.\n"
		"Type 'y' and Enter to continue: ",
		nsid, dev);
	if (fgets(line, sizeof(line), stdin) == NULL || (line[0] != 'y' && line[0] != 'Y')) {
		fprintf(stderr, "format: not confirmed; nothing was done (--force skips the "
				"question)\n");
		return false;
	}
	return true;
}

/*
 * The LBA format to apply, as nvme-cli: -l; or -b, the format with that data size and no
 * metadata (nvme-cli 2.3 looks at formats 0..NLBAF-1 only, missing the last one: every
 * format is looked at here); else the namespace's current one (0 for every namespace).
 * \return the index, or -1 with a message.
 */
static int
format_lbaf(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr, uint32_t nsid)
{
	uint32_t id_nsid = nsid == NVME_GLOBAL_NS_TAG ? nvp_nvme_ctrlr_get_first_active_ns(ctrlr) :
							nsid;
	struct nvme_ns_data nd;
	struct nvme_cpl cpl;
	int rc;

	if (a->lbaf_set || (a->block_size == 0 && nsid == NVME_GLOBAL_NS_TAG)) {
		return a->lbaf;
	}
	rc = nvp_nvme_ctrlr_identify(ctrlr, NVME_IDENTIFY_NS, id_nsid, &nd, sizeof(nd), &cpl);
	if (rc != 0) {
		cli_report_error("format: identify namespace", rc, &cpl);
		return -1;
	}
	if (a->block_size == 0) {
		return nd.flbas & NVME_FLBAS_FORMAT_MASK;
	}
	for (uint32_t i = 0; i <= nd.nlbaf && i < NVP_COUNTOF(nd.lbaf); i++) {
		if (nd.lbaf[i].lbads < 32 && (UINT64_C(1) << nd.lbaf[i].lbads) == a->block_size &&
		    nd.lbaf[i].ms == 0) {
			return (int)i;
		}
	}
	fprintf(stderr,
		"format: namespace %#x has no LBA format of %llu-byte blocks without metadata "
		"(id-ns lists its formats; --lbaf picks one by index)\n",
		id_nsid, (unsigned long long)a->block_size);
	return -1;
}

static int
cmd_format(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	union nvme_format_cdw10 f = { .raw = 0 };
	char name[NVP_NVME_TRARGS_MAX + 128];
	uint32_t nsid = default_nsid(a, ctrlr);
	struct nvme_cpl cpl;
	int rc, lbaf;

	/* FNA bit 0: a format of one namespace formats them all (nvme-cli says so). */
	if (nvp_nvme_ctrlr_get_data(ctrlr)->fna & 1u) {
		nsid = NVME_GLOBAL_NS_TAG;
	}
	if (nsid == 0) {
		fprintf(stderr, "format: no active namespace; give -n (0xffffffff = all)\n");
		return CLI_EXIT_FAIL;
	}
	lbaf = format_lbaf(a, ctrlr, nsid);
	if (lbaf < 0) {
		return CLI_EXIT_FAIL;
	}
	devname(ctrlr, name, sizeof(name));
	if (!a->force && !confirm_format(nsid, name)) {
		return CLI_EXIT_FAIL;
	}
	f.bits.lbaf = (uint32_t)lbaf & 0xfu;
	f.bits.mset = a->mset & 0x1u;
	f.bits.pi = a->pi & 0x7u;
	f.bits.pil = a->pil & 0x1u;
	f.bits.ses = a->ses & 0x7u;
	rc = nvp_nvme_ctrlr_format(ctrlr, nsid, f, &cpl);
	if (rc != 0) {
		cli_report_error("format", rc, &cpl);
		return CLI_EXIT_FAIL;
	}
	printf("Success formatting namespace:%x\n", nsid);
	if (a->reset_after && (rc = nvp_nvme_ctrlr_reset(ctrlr)) != 0) {
		cli_report_error("format: reset", rc, NULL);
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

/* Read a whole firmware image file. \return 0 and a malloc'd buffer, or an exit status. */
static int
read_image(const char *path, void **image, size_t *size)
{
	FILE *fp = fopen(path, "rb");
	struct stat st;
	size_t n;

	if (fp == NULL || fstat(fileno(fp), &st) != 0) {
		fprintf(stderr, "fw-download: cannot open '%s': %s\n", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "fw-download: '%s' is %s, not a firmware image file\n", path,
			S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
		goto fail;
	}
	if (st.st_size <= 0 || st.st_size > MAX_FW_IMAGE || st.st_size % 4 != 0) {
		fprintf(stderr,
			"fw-download: '%s' is %lld bytes: an image must be a non-zero multiple of "
			"4 bytes, at most %u MiB\n",
			path, (long long)st.st_size, MAX_FW_IMAGE >> 20);
		goto fail;
	}
	*size = (size_t)st.st_size;
	*image = malloc(*size);
	n = *image ? fread(*image, 1, *size, fp) : 0;
	if (n != *size) {
		fprintf(stderr, "fw-download: cannot read '%s': %s\n", path,
			*image == NULL ? strerror(ENOMEM) :
			ferror(fp)     ? strerror(errno) :
					 "the file shrank while being read");
		free(*image);
		goto fail;
	}
	fclose(fp);
	return 0;
fail:
	if (fp != NULL) {
		fclose(fp);
	}
	return CLI_EXIT_FAIL;
}

/*
 * fw-download -x/-o, as nvme-cli: Firmware Image Download commands (NVMe 2.0 section
 * 5.13) of --xfer bytes each, from dword --offset of the file on, at that offset.
 */
static int
fw_download_chunks(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr, const uint8_t *image,
		   size_t size)
{
	uint32_t xfer = a->xfer_set ? a->xfer : 4096u,
		 max = nvp_nvme_ctrlr_get_max_xfer_size(ctrlr);
	size_t off = (size_t)a->fw_offset * 4u;
	struct nvme_cpl cpl;

	if (off >= size) {
		fprintf(stderr,
			"fw-download: --offset %u dwords is past the end of '%s' (%zu bytes)\n",
			a->fw_offset, a->fw_file, size);
		return CLI_EXIT_FAIL;
	}
	if (xfer > max) {
		fprintf(stderr,
			"fw-download: --xfer %u is more than the controller moves in one command "
			"(%u bytes)\n",
			xfer, max);
		return CLI_EXIT_FAIL;
	}
	for (; off < size; off += xfer) {
		uint32_t n = (uint32_t)NVP_MIN((size_t)xfer, size - off);
		struct nvme_cmd cmd = { .opc = NVME_OPC_FIRMWARE_IMAGE_DOWNLOAD,
					.cdw10 = n / 4 - 1,
					.cdw11 = (uint32_t)(off / 4) };
		int rc = nvp_nvme_ctrlr_cmd_admin_sync(ctrlr, &cmd, (void *)(image + off), n, &cpl);

		if (rc != 0) {
			fprintf(stderr, "fw-download: error on offset 0x%08zx/0x%08zx\n", off,
				size);
			cli_report_error("fw-download", rc, &cpl);
			return CLI_EXIT_FAIL;
		}
	}
	printf("Firmware download success\n");
	return CLI_EXIT_OK;
}

static int
cmd_fw_download(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	struct nvme_cpl cpl;
	void *image = NULL;
	size_t size = 0;
	int rc;

	if (read_image(a->fw_file, &image, &size) != 0) {
		return CLI_EXIT_FAIL;
	}
	if (a->xfer_set || a->fw_offset != 0) {
		rc = fw_download_chunks(a, ctrlr, image, size);
		free(image);
		return rc;
	}
	rc = nvp_nvme_ctrlr_fw_download(ctrlr, image, size, &cpl);
	free(image);
	if (rc != 0) {
		cli_report_error("fw-download", rc, &cpl);
		return CLI_EXIT_FAIL;
	}
	printf("Firmware download success\n");
	return CLI_EXIT_OK;
}

static int
cmd_fw_commit(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	struct nvme_cpl cpl;
	int rc;

	rc = nvp_nvme_ctrlr_fw_commit(ctrlr, a->slot, (enum nvme_fw_commit_action)a->action, &cpl);
	if (rc == -EIO && cpl.status.sct == NVME_SCT_COMMAND_SPECIFIC &&
	    (cpl.status.sc == NVME_SC_FIRMWARE_REQ_CONVENTIONAL_RESET ||
	     cpl.status.sc == NVME_SC_FIRMWARE_REQ_NVM_RESET ||
	     cpl.status.sc == NVME_SC_FIRMWARE_REQ_RESET)) {
		/* The image is committed; it runs after a reset (nvme-cli says the same). */
		printf("Success committing firmware action:%u slot:%u, but firmware requires "
		       "a reset (%s): run 'nvp reset'\n",
		       a->action, a->slot, nvp_nvme_status_string(cpl.status.sct, cpl.status.sc));
		return CLI_EXIT_OK;
	}
	if (rc != 0) {
		cli_report_error("fw-commit", rc, &cpl);
		return CLI_EXIT_FAIL;
	}
	printf("Success committing firmware action:%u slot:%u\n", a->action, a->slot);
	return CLI_EXIT_OK;
}

static int
cmd_reset(struct nvp_nvme_ctrlr *ctrlr)
{
	int rc = nvp_nvme_ctrlr_reset(ctrlr);

	if (rc != 0) {
		cli_report_error("reset", rc, NULL);
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

static int
cmd_show_regs(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	union nvme_cap_register cap = nvp_nvme_ctrlr_get_regs_cap(ctrlr);
	union nvme_vs_register vs = nvp_nvme_ctrlr_get_regs_vs(ctrlr);
	union nvme_csts_register csts = nvp_nvme_ctrlr_get_regs_csts(ctrlr);

	if (a->output == CLI_OUT_JSON) {
		return emit(a, cli_json_regs(cap, vs, csts), NULL, 0);
	}
	cli_print_regs(stdout, cap, vs, csts, a->human);
	return CLI_EXIT_OK;
}

int
cli_cmd_run(const struct cli_args *a, struct nvp_nvme_ctrlr *ctrlr)
{
	switch (a->cmd) {
	case CLI_CMD_LIST:
		return cli_cmd_list(a, ctrlr);
	case CLI_CMD_ID_CTRL:
		return cmd_id_ctrl(a, ctrlr);
	case CLI_CMD_ID_NS:
		return cmd_id_ns(a, ctrlr);
	case CLI_CMD_LIST_NS:
		return cmd_list_ns(a, ctrlr);
	case CLI_CMD_SMART_LOG:
		return cmd_smart_log(a, ctrlr);
	case CLI_CMD_ERROR_LOG:
		return cmd_error_log(a, ctrlr);
	case CLI_CMD_FW_LOG:
		return cmd_fw_log(a, ctrlr);
	case CLI_CMD_GET_FEATURE:
		return cmd_get_feature(a, ctrlr);
	case CLI_CMD_SET_FEATURE:
		return cmd_set_feature(a, ctrlr);
	case CLI_CMD_FORMAT:
		return cmd_format(a, ctrlr);
	case CLI_CMD_FW_DOWNLOAD:
		return cmd_fw_download(a, ctrlr);
	case CLI_CMD_FW_COMMIT:
		return cmd_fw_commit(a, ctrlr);
	case CLI_CMD_RESET:
		return cmd_reset(ctrlr);
	case CLI_CMD_SHOW_REGS:
		return cmd_show_regs(a, ctrlr);
	case CLI_CMD_DIR_RECEIVE:
		return cli_cmd_dir_receive(a, ctrlr);
	case CLI_CMD_WAF:
		return cli_cmd_waf(a, ctrlr);
	case CLI_CMD_FDP_CONFIGS:
	case CLI_CMD_FDP_USAGE:
	case CLI_CMD_FDP_STATS:
	case CLI_CMD_FDP_EVENTS:
	case CLI_CMD_FDP_STATUS:
	case CLI_CMD_FDP_UPDATE:
	case CLI_CMD_FDP_FEATURE:
		return cli_cmd_fdp(a, ctrlr);
	case CLI_CMD_READ:
	case CLI_CMD_WRITE:
	case CLI_CMD_COMPARE:
	case CLI_CMD_WRITE_ZEROES:
	case CLI_CMD_DSM:
	case CLI_CMD_FLUSH:
		return cli_cmd_io(a, ctrlr);
	case CLI_CMD_GET_LOG:
	case CLI_CMD_IO_PASSTHRU:
	case CLI_CMD_ADMIN_PASSTHRU:
		return cli_cmd_passthru(a, ctrlr);
	case CLI_CMD_HELP:
		if (a->help_emu) {
			nvp_emu_opts_usage(stdout);
		} else {
			cli_usage(stdout, a->help_topic);
		}
		return CLI_EXIT_OK;
	case CLI_CMD_VERSION:
		printf("nvp version %s (nvpoll)\n", NVP_VERSION_STRING);
		return CLI_EXIT_OK;
	default:
		return CLI_EXIT_USAGE;
	}
}

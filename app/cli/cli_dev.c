/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Devices for nvp: the device argument becomes a transport ID, env is started once, and
 * errors are reported the way nvme-cli users expect ("NVMe status: ... (0x2)").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nvpoll/emu.h"
#include "nvpoll/env.h"
#include "nvpoll/log.h"
#include "nvpoll/util.h"

#include "nvp_cli.h"

#define EMU_PREFIX "emu:"

/* Software controllers made by this process are named nvp0, nvp1, ... in attach order. */
static unsigned int g_next_emu_id;

/* "emu:nn=2,lba=4096" -> "trtype:emu name:nvpN nn=2 lba=4096" after checking the options. */
static int
emu_device_parse(const char *opts_str, struct nvp_nvme_transport_id *trid, char *err, size_t errlen)
{
	struct nvp_emu_opts opts;
	char str[NVP_NVME_TRARGS_MAX + 64], opts_copy[NVP_NVME_TRARGS_MAX];
	char emu_err[256] = "";

	if (strlen(opts_str) >= sizeof(opts_copy)) {
		snprintf(err, errlen, "emu options too long (at most %zu characters)",
			 sizeof(opts_copy) - 1);
		return -EINVAL;
	}
	nvp_emu_opts_init(&opts, sizeof(opts));
	opts.name[0] = '\0';
	if (nvp_emu_opts_parse(&opts, opts_str, emu_err, sizeof(emu_err)) != 0) {
		snprintf(err, errlen,
			 "bad software controller options '%s': %s ('nvp help emu' "
			 "lists them)",
			 opts_str, emu_err);
		return -EINVAL;
	}
	nvp_strlcpy(opts_copy, opts_str, sizeof(opts_copy));
	for (char *p = opts_copy; *p != '\0'; p++) {
		if (*p == ',') {
			*p = ' ';
		}
	}
	if (opts.name[0] != '\0') {
		snprintf(str, sizeof(str), "trtype:emu %s", opts_copy);
	} else {
		snprintf(str, sizeof(str), "trtype:emu name:nvp%u %s", g_next_emu_id, opts_copy);
	}
	if (nvp_nvme_transport_id_parse(trid, str) != 0) {
		snprintf(err, errlen, "invalid emu options '%s'", opts_str);
		return -EINVAL;
	}
	return 0;
}

int
cli_device_parse(const char *dev, struct nvp_nvme_transport_id *trid, char *err, size_t errlen)
{
	struct nvp_pci_addr addr;
	char str[NVP_NVME_TRADDR_MAX + 32];

	if (dev == NULL || dev[0] == '\0') {
		snprintf(err, errlen, "empty device argument");
		return -EINVAL;
	}
	if (strncmp(dev, EMU_PREFIX, strlen(EMU_PREFIX)) == 0) {
		return emu_device_parse(dev + strlen(EMU_PREFIX), trid, err, errlen);
	}
	if (strncasecmp(dev, "trtype", 6) == 0) {
		if (nvp_nvme_transport_id_parse(trid, dev) != 0) {
			snprintf(err, errlen, "invalid transport ID '%s'", dev);
			return -EINVAL;
		}
		return 0;
	}
	if (strlen(dev) < NVP_NVME_TRADDR_MAX && nvp_pci_addr_parse(&addr, dev) == 0) {
		snprintf(str, sizeof(str), "trtype:PCIe traddr:%s", dev);
		if (nvp_nvme_transport_id_parse(trid, str) == 0) {
			return 0;
		}
	}
	snprintf(err, errlen,
		 "invalid device '%s': expected a PCI address (0000:01:00.0), a transport ID "
		 "(\"trtype:PCIe traddr:...\") or emu:[options]",
		 dev);
	return -EINVAL;
}

int
cli_env_init(bool no_huge)
{
	struct nvp_env_opts opts;
	int rc;

	if (nvp_env_is_initialized()) {
		return 0;
	}
	/* Library notices (firmware activated, hugepage hints) would clutter a tool's
	 * output: warnings and errors only, unless NVP_LOG_LEVEL says otherwise. */
	if (getenv("NVP_LOG_LEVEL") == NULL) {
		nvp_log_set_level(NVP_LOG_WARN);
	}
	nvp_env_opts_init(&opts, sizeof(opts));
	opts.name = "nvp";
	opts.quiet = true;
	opts.no_huge = no_huge;
	rc = nvp_env_init(&opts);
	if (rc != 0) {
		fprintf(stderr, "nvp: cannot initialise the environment: %s\n", strerror(-rc));
	}
	return rc;
}

int
cli_device_open(const char *dev, uint32_t admin_timeout_ms, struct nvp_nvme_ctrlr **ctrlr)
{
	struct nvp_nvme_transport_id trid;
	struct nvp_nvme_ctrlr_opts opts;
	char err[512];
	int rc;

	rc = cli_device_parse(dev, &trid, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "nvp: %s\ntry 'nvp help'\n", err);
		return -EINVAL;
	}
	rc = cli_env_init(trid.trtype == NVP_NVME_TRANSPORT_VDEV);
	if (rc != 0) {
		return rc == -EINVAL ? -EIO : rc;
	}
	nvp_nvme_ctrlr_opts_init(&opts, sizeof(opts));
	opts.admin_timeout_ms = NVP_MAX(opts.admin_timeout_ms, admin_timeout_ms);
	rc = nvp_nvme_connect(&trid, &opts, ctrlr);
	if (rc != 0) {
		/* only a PCI address can name a function 'nvp list' would show */
		fprintf(stderr, "nvp: cannot attach to '%s': %s%s\n", dev, strerror(-rc),
			rc == -ENODEV && trid.trtype == NVP_NVME_TRANSPORT_PCIE ?
				" (no such NVMe function: see 'nvp list')" :
				"");
		return rc == -EINVAL ? -EIO : rc;
	}
	if (trid.trtype == NVP_NVME_TRANSPORT_VDEV) {
		g_next_emu_id++;
	}
	return 0;
}

void
cli_report_error(const char *what, int rc, const struct nvme_cpl *cpl)
{
	if (rc == -EIO && cpl != NULL && nvme_cpl_is_error(cpl)) {
		fprintf(stderr, "%s: NVMe status: %s (%#x)\n", what,
			nvp_nvme_status_string(cpl->status.sct, cpl->status.sc),
			(unsigned int)(cpl->status.sct << 8 | cpl->status.sc));
		return;
	}
	fprintf(stderr, "%s: %s\n", what, strerror(-rc));
}

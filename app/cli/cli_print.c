/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The "normal" output of nvp, laid out as nvme-cli's (one "name : value" per line), and
 * the -H decoding of the bitfields people otherwise look up in the specification.
 */
#include <inttypes.h>
#include <string.h>

#include "nvpoll/util.h"

#include "nvp_cli.h"

struct bit_name {
	uint32_t bit;
	const char *name;
};

/* -H: one line per defined bit, "[n] name: Supported / Not Supported". */
static void
print_bits(FILE *f, uint32_t value, const struct bit_name *bits, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "  [%u:%u] : %u\t%s %s\n", bits[i].bit, bits[i].bit,
			(value >> bits[i].bit) & 1u, bits[i].name,
			(value >> bits[i].bit) & 1u ? "Supported" : "Not Supported");
	}
}

static const struct bit_name g_oacs_bits[] = {
	{ 0, "Security Send and Receive" },
	{ 1, "Format NVM" },
	{ 2, "Firmware Download and Commit" },
	{ 3, "Namespace Management and Attachment" },
	{ 4, "Device Self-test" },
	{ 5, "Directives" },
	{ 6, "NVMe-MI Send and Receive" },
	{ 7, "Virtualization Management" },
	{ 8, "Doorbell Buffer Config" },
};

static const struct bit_name g_oncs_bits[] = {
	{ 0, "Compare" },
	{ 1, "Write Uncorrectable" },
	{ 2, "Data Set Management" },
	{ 3, "Write Zeroes" },
	{ 4, "Save and Select" },
	{ 5, "Reservations" },
	{ 6, "Timestamp" },
	{ 7, "Verify" },
};

static const struct bit_name g_lpa_bits[] = {
	{ 0, "SMART/Health Log per Namespace" },
	{ 1, "Command Effects Log Page" },
	{ 2, "Extended Data for Get Log Page" },
};

static void
print_str(FILE *f, const char *name, const char *field, size_t len)
{
	char buf[260];

	fprintf(f, "%-9s : %s\n", name, cli_strfield(buf, sizeof(buf), field, len));
}

static void
print_hex(FILE *f, const char *name, uint64_t v)
{
	fprintf(f, "%-9s : %#" PRIx64 "\n", name, v);
}

static void
print_dec(FILE *f, const char *name, uint64_t v)
{
	fprintf(f, "%-9s : %" PRIu64 "\n", name, v);
}

static void
print_frmw_human(FILE *f, uint8_t frmw)
{
	fprintf(f, "  [4:4] : %u\tFirmware Activate Without Reset %sSupported\n", (frmw >> 4) & 1u,
		(frmw >> 4) & 1u ? "" : "Not ");
	fprintf(f, "  [3:1] : %u\tNumber of Firmware Slots\n",
		(frmw >> NVME_FRMW_NUM_SLOTS_SHIFT) & NVME_FRMW_NUM_SLOTS_MASK);
	fprintf(f, "  [0:0] : %u\tFirmware Slot 1 Read-%s\n", frmw & 1u,
		frmw & 1u ? "Only" : "Write");
}

static void
print_ctrl_admin(FILE *f, const struct nvme_ctrlr_data *cd, bool human)
{
	char tn[48];

	print_hex(f, "oacs", cd->oacs);
	if (human) {
		print_bits(f, cd->oacs, g_oacs_bits, NVP_COUNTOF(g_oacs_bits));
	}
	print_dec(f, "acl", cd->acl);
	print_dec(f, "aerl", cd->aerl);
	print_hex(f, "frmw", cd->frmw);
	if (human) {
		print_frmw_human(f, cd->frmw);
	}
	print_hex(f, "lpa", cd->lpa);
	if (human) {
		print_bits(f, cd->lpa, g_lpa_bits, NVP_COUNTOF(g_lpa_bits));
	}
	print_dec(f, "elpe", cd->elpe);
	print_dec(f, "npss", cd->npss);
	print_hex(f, "avscc", cd->avscc);
	print_hex(f, "apsta", cd->apsta);
	if (human) {
		fprintf(f, "%-9s : %u K (%d C)\n", "wctemp", cd->wctemp, (int)cd->wctemp - 273);
		fprintf(f, "%-9s : %u K (%d C)\n", "cctemp", cd->cctemp, (int)cd->cctemp - 273);
	} else {
		print_dec(f, "wctemp", cd->wctemp);
		print_dec(f, "cctemp", cd->cctemp);
	}
	print_dec(f, "mtfa", cd->mtfa);
	fprintf(f, "%-9s : %s\n", "tnvmcap", cli_u128_str(tn, sizeof(tn), cd->tnvmcap));
	fprintf(f, "%-9s : %s\n", "unvmcap", cli_u128_str(tn, sizeof(tn), cd->unvmcap));
	print_dec(f, "fwug", cd->fwug);
	print_dec(f, "kas", cd->kas);
}

static void
print_ctrl_nvm(FILE *f, const struct nvme_ctrlr_data *cd, bool human)
{
	print_hex(f, "sqes", cd->sqes);
	if (human) {
		fprintf(f,
			"  [7:4] : %u\tMax SQ Entry Size (%u)\n  [3:0] : %u\tMin SQ Entry Size "
			"(%u)\n",
			cd->sqes >> 4, 1u << (cd->sqes >> 4), cd->sqes & 0xfu,
			1u << (cd->sqes & 0xfu));
	}
	print_hex(f, "cqes", cd->cqes);
	print_dec(f, "maxcmd", cd->maxcmd);
	print_dec(f, "nn", cd->nn);
	print_hex(f, "oncs", cd->oncs);
	if (human) {
		print_bits(f, cd->oncs, g_oncs_bits, NVP_COUNTOF(g_oncs_bits));
	}
	print_hex(f, "fuses", cd->fuses);
	print_hex(f, "fna", cd->fna);
	print_hex(f, "vwc", cd->vwc);
	if (human) {
		fprintf(f, "  [0:0] : %u\tVolatile Write Cache %sPresent\n", cd->vwc & 1u,
			cd->vwc & 1u ? "" : "Not ");
	}
	print_dec(f, "awun", cd->awun);
	print_dec(f, "awupf", cd->awupf);
	print_hex(f, "nvscc", cd->nvscc);
	print_dec(f, "acwu", cd->acwu);
	print_hex(f, "sgls", cd->sgls);
	print_dec(f, "mnan", cd->mnan);
	print_str(f, "subnqn", cd->subnqn, sizeof(cd->subnqn));
}

void
cli_print_id_ctrl(FILE *f, const struct nvme_ctrlr_data *cd, bool human)
{
	fprintf(f, "NVME Identify Controller:\n");
	print_hex(f, "vid", cd->vid);
	print_hex(f, "ssvid", cd->ssvid);
	print_str(f, "sn", cd->sn, sizeof(cd->sn));
	print_str(f, "mn", cd->mn, sizeof(cd->mn));
	print_str(f, "fr", cd->fr, sizeof(cd->fr));
	print_dec(f, "rab", cd->rab);
	fprintf(f, "%-9s : %02x%02x%02x\n", "ieee", cd->ieee[2], cd->ieee[1], cd->ieee[0]);
	print_hex(f, "cmic", cd->cmic);
	print_dec(f, "mdts", cd->mdts);
	print_dec(f, "cntlid", cd->cntlid);
	print_hex(f, "ver", cd->ver);
	if (human) {
		fprintf(f, "  NVMe version %u.%u.%u\n", cd->ver >> 16, (cd->ver >> 8) & 0xffu,
			cd->ver & 0xffu);
	}
	print_dec(f, "rtd3r", cd->rtd3r);
	print_dec(f, "rtd3e", cd->rtd3e);
	print_hex(f, "oaes", cd->oaes);
	print_hex(f, "ctratt", cd->ctratt);
	print_ctrl_admin(f, cd, human);
	print_ctrl_nvm(f, cd, human);
	for (uint32_t i = 0; i <= cd->npss && i < NVP_COUNTOF(cd->psd); i++) {
		const struct nvme_power_state *ps = &cd->psd[i];

		fprintf(f, "ps %4u : mp:%.2fW %soperational enlat:%u exlat:%u rrt:%u rrl:%u\n", i,
			ps->mp / (ps->mps ? 10000.0 : 100.0), ps->nops ? "non-" : "", ps->enlat,
			ps->exlat, ps->rrt, ps->rrl);
	}
}

void
cli_print_id_ns(FILE *f, const struct nvme_ns_data *nd, uint32_t nsid, bool human)
{
	uint32_t cur = nd->flbas & NVME_FLBAS_FORMAT_MASK;

	fprintf(f, "NVME Identify Namespace %u:\n", nsid);
	print_hex(f, "nsze", nd->nsze);
	print_hex(f, "ncap", nd->ncap);
	print_hex(f, "nuse", nd->nuse);
	print_hex(f, "nsfeat", nd->nsfeat);
	if (human) {
		fprintf(f, "  [0:0] : %u\tThin Provisioning %sSupported\n", nd->nsfeat & 1u,
			nd->nsfeat & 1u ? "" : "Not ");
	}
	print_dec(f, "nlbaf", nd->nlbaf);
	print_hex(f, "flbas", nd->flbas);
	if (human) {
		fprintf(f, "  [3:0] : %u\tCurrent LBA Format Selected\n", cur);
	}
	print_hex(f, "mc", nd->mc);
	print_hex(f, "dpc", nd->dpc);
	print_hex(f, "dps", nd->dps);
	print_hex(f, "nmic", nd->nmic);
	print_hex(f, "rescap", nd->rescap);
	print_hex(f, "fpi", nd->fpi);
	print_hex(f, "dlfeat", nd->dlfeat);
	fprintf(f, "%-9s : ", "nguid");
	for (size_t i = 0; i < sizeof(nd->nguid); i++) {
		fprintf(f, "%02x", nd->nguid[i]);
	}
	fprintf(f, "\n%-9s : ", "eui64");
	for (size_t i = 0; i < sizeof(nd->eui64); i++) {
		fprintf(f, "%02x", nd->eui64[i]);
	}
	fprintf(f, "\n");
	for (uint32_t i = 0; i <= nd->nlbaf && i < NVME_MAX_LBAF; i++) {
		fprintf(f, "lbaf %2u : ms:%-3u lbads:%-2u rp:%#x %s", i, nd->lbaf[i].ms,
			nd->lbaf[i].lbads, nd->lbaf[i].rp, i == cur ? "(in use)" : "");
		if (human && nd->lbaf[i].lbads < 32) {
			static const char *const rp[] = { "Best", "Better", "Good", "Degraded" };

			fprintf(f, " Data Size: %u bytes, Relative Performance: %s",
				1u << nd->lbaf[i].lbads, rp[nd->lbaf[i].rp]);
		}
		fprintf(f, "\n");
	}
}

static void
print_u128(FILE *f, const char *name, const uint64_t v[2])
{
	char buf[48];

	fprintf(f, "%-36s : %s\n", name, cli_u128_str(buf, sizeof(buf), v));
}

static void
print_critical_warning(FILE *f, uint8_t cw)
{
	static const char *const names[] = { "Available Spare", "Temperature Threshold",
					     "NVM Subsystem Reliability", "Read-only",
					     "Volatile Memory Backup" };

	for (unsigned int i = 0; i < NVP_COUNTOF(names); i++) {
		fprintf(f, "      %-30s : %u\n", names[i], (cw >> i) & 1u);
	}
}

void
cli_print_smart_log(FILE *f, const struct nvme_health_information_page *sl, uint32_t nsid,
		    const char *devname, bool human)
{
	fprintf(f, "Smart Log for NVME device:%s namespace-id:%x\n", devname, nsid);
	fprintf(f, "%-36s : %#x\n", "critical_warning", sl->critical_warning);
	if (human) {
		print_critical_warning(f, sl->critical_warning);
	}
	fprintf(f, "%-36s : %d C (%u Kelvin)\n", "temperature", (int)sl->temperature - 273,
		sl->temperature);
	fprintf(f, "%-36s : %u%%\n", "available_spare", sl->available_spare);
	fprintf(f, "%-36s : %u%%\n", "available_spare_threshold", sl->available_spare_threshold);
	fprintf(f, "%-36s : %u%%\n", "percentage_used", sl->percentage_used);
	for (size_t i = 0; i < NVP_COUNTOF(cli_smart_u128); i++) {
		uint64_t v[2];

		memcpy(v, (const char *)sl + cli_smart_u128[i].offset, sizeof(v));
		print_u128(f, cli_smart_u128[i].text_key, v);
	}
	fprintf(f, "%-36s : %u\n", "Warning Temperature Time", sl->warning_temp_time);
	fprintf(f, "%-36s : %u\n", "Critical Composite Temperature Time", sl->critical_temp_time);
}

void
cli_print_error_log(FILE *f, const struct nvme_error_information_entry *e, uint32_t count,
		    const char *devname)
{
	fprintf(f, "Error Log Entries for device:%s entries:%u\n", devname, count);
	fprintf(f, ".................\n");
	for (uint32_t i = 0; i < count; i++) {
		struct nvme_status st = e[i].status;

		fprintf(f, " Entry[%2u]\n.................\n", i);
		fprintf(f, "error_count\t: %" PRIu64 "\n", e[i].error_count);
		fprintf(f, "sqid\t\t: %u\n", e[i].sqid);
		fprintf(f, "cmdid\t\t: %#x\n", e[i].cid);
		fprintf(f, "status_field\t: %#x (%s)\n", (unsigned int)(st.sct << 8 | st.sc),
			nvp_nvme_status_string(st.sct, st.sc));
		fprintf(f, "parm_err_loc\t: %#x\n", e[i].error_location);
		fprintf(f, "lba\t\t: %#" PRIx64 "\n", e[i].lba);
		fprintf(f, "nsid\t\t: %#x\n", e[i].nsid);
		fprintf(f, "vs\t\t: %u\n", e[i].vendor_specific);
		fprintf(f, "cs\t\t: %#" PRIx64 "\n", e[i].command_specific);
		fprintf(f, ".................\n");
	}
}

void
cli_print_fw_log(FILE *f, const struct nvme_firmware_page *fw, const char *devname)
{
	char rev[9];

	fprintf(f, "Firmware Log for device:%s\n", devname);
	fprintf(f, "afi  : %#x (active slot %u, next reset slot %u)\n", fw->afi,
		NVME_FW_AFI_ACTIVE_SLOT(fw->afi), NVME_FW_AFI_NEXT_SLOT(fw->afi));
	for (int i = 0; i < 7; i++) {
		if (fw->revision[i][0] != '\0') {
			fprintf(f, "frs%d : %s\n", i + 1,
				cli_strfield(rev, sizeof(rev), fw->revision[i], 8));
		}
	}
}

/* Feature names as nvme-cli 2.3 prints them (nvme_feature_to_string). */
static const char *const g_feature_names[256] = {
	[0x01] = "Arbitration",
	[0x02] = "Power Management",
	[0x03] = "LBA Range Type",
	[0x04] = "Temperature Threshold",
	[0x05] = "Error Recovery",
	[0x06] = "Volatile Write Cache",
	[0x07] = "Number of Queues",
	[0x08] = "Interrupt Coalescing",
	[0x09] = "Interrupt Vector Configuration",
	[0x0a] = "Write Atomicity Normal",
	[0x0b] = "Async Event Configuration",
	[0x0c] = "Autonomous Power State Transition",
	[0x0d] = "Host Memory Buffer",
	[0x0e] = "Timestamp",
	[0x0f] = "Keep Alive Timer",
	[0x10] = "Host Controlled Thermal Management",
	[0x11] = "Non-Operational Power State Config",
	[0x12] = "Read Recovery Level",
	[0x13] = "Predictable Latency Mode Config",
	[0x14] = "Predictable Latency Mode Window",
	[0x15] = "LBA Status Interval",
	[0x16] = "Host Behavior",
	[0x17] = "Sanitize",
	[0x18] = "Endurance Event Group Configuration",
	[0x19] = "I/O Command Set Profile",
	[0x1a] = "Spinup Control",
	[0x1d] = "Flexible Direct Placement",
	[0x7d] = "Enhanced Controller Metadata",
	[0x7e] = "Controller Metadata",
	[0x7f] = "Namespace Metadata",
	[0x80] = "Software Progress",
	[0x81] = "Host Identifier",
	[0x82] = "Reservation Notification Mask",
	[0x83] = "Reservation Persistence",
	[0x84] = "Namespace Write Protect",
};

const char *
cli_feature_name(uint8_t fid)
{
	return g_feature_names[fid] != NULL ? g_feature_names[fid] : "Unknown";
}

static void
print_feature_human(FILE *f, uint8_t fid, uint32_t v)
{
	switch (fid) {
	case NVME_FEAT_VOLATILE_WRITE_CACHE:
		fprintf(f, "\tVolatile Write Cache Enable (WCE): %s\n",
			v & 1u ? "Enabled" : "Disabled");
		break;
	case NVME_FEAT_NUMBER_OF_QUEUES:
		fprintf(f, "\tNumber of IO Completion Queues Allocated (NCQA): %u\n",
			(v >> 16) + 1);
		fprintf(f, "\tNumber of IO Submission Queues Allocated (NSQA): %u\n",
			(v & 0xffffu) + 1);
		break;
	case NVME_FEAT_TEMPERATURE_THRESHOLD:
		fprintf(f, "\tTemperature Threshold (TMPTH): %d C (%u Kelvin)\n",
			(int)(v & 0xffffu) - 273, v & 0xffffu);
		break;
	case NVME_FEAT_ARBITRATION:
		fprintf(f, "\tHigh/Medium/Low Priority Weight: %u/%u/%u, Arbitration Burst: %u\n",
			(v >> 24) + 1, ((v >> 16) & 0xffu) + 1, ((v >> 8) & 0xffu) + 1, v & 7u);
		break;
	default:
		break;
	}
}

void
cli_print_feature(FILE *f, uint8_t fid, uint8_t sel, uint32_t result, bool human)
{
	static const char *const sel_name[] = { "Current", "Default", "Saved", "Supported" };

	/* nvme-cli 2.3: "%#0*x" (so a zero value prints without 0x, as 00000000) */
	fprintf(f, "get-feature:%#0*x (%s), %s value:%#0*x\n", fid ? 4 : 2, fid,
		cli_feature_name(fid), sel_name[sel & 3u], result ? 10 : 8, result);
	if (human && sel != NVME_FEAT_SEL_SUPPORTED) {
		print_feature_human(f, fid, result);
	}
}

/* CAP decoded (NVMe 1.4, section 3.1.1). */
static void
print_cap_human(FILE *f, union nvme_cap_register cap)
{
	fprintf(f, "\tMemory Page Size Maximum      (MPSMAX): %u bytes\n",
		1u << (12 + cap.bits.mpsmax));
	fprintf(f, "\tMemory Page Size Minimum      (MPSMIN): %u bytes\n",
		1u << (12 + cap.bits.mpsmin));
	fprintf(f, "\tCommand Sets Supported           (CSS): NVM command set is %ssupported\n",
		cap.bits.css & NVME_CAP_CSS_NVM ? "" : "not ");
	fprintf(f, "\tNVM Subsystem Reset Supported  (NSSRS): %s\n", cap.bits.nssrs ? "Yes" : "No");
	fprintf(f, "\tDoorbell Stride                (DSTRD): %u bytes\n", 4u << cap.bits.dstrd);
	fprintf(f, "\tTimeout                           (TO): %u ms\n", cap.bits.to * 500u);
	fprintf(f, "\tArbitration Mechanism Supported  (AMS): Weighted Round Robin: %s\n",
		cap.bits.ams & 1u ? "Supported" : "Not Supported");
	fprintf(f, "\tContiguous Queues Required       (CQR): %s\n", cap.bits.cqr ? "Yes" : "No");
	fprintf(f, "\tMaximum Queue Entries Supported (MQES): %u\n\n", cap.bits.mqes + 1u);
}

static void
print_csts_human(FILE *f, union nvme_csts_register csts)
{
	static const char *const shst[] = { "Normal operation", "Shutdown processing occurring",
					    "Shutdown processing complete", "Reserved" };

	fprintf(f, "\tProcessing Paused               (PP): %s\n", csts.bits.pp ? "Yes" : "No");
	fprintf(f, "\tNVM Subsystem Reset Occurred (NSSRO): %s\n", csts.bits.nssro ? "Yes" : "No");
	fprintf(f, "\tShutdown Status               (SHST): %s\n", shst[csts.bits.shst]);
	fprintf(f, "\tController Fatal Status        (CFS): %s\n",
		csts.bits.cfs ? "True" : "False");
	fprintf(f, "\tReady                          (RDY): %s\n\n", csts.bits.rdy ? "Yes" : "No");
}

void
cli_print_regs(FILE *f, union nvme_cap_register cap, union nvme_vs_register vs,
	       union nvme_csts_register csts, bool human)
{
	fprintf(f, "cap     : %" PRIx64 "\n", cap.raw);
	if (human) {
		print_cap_human(f, cap);
	}
	fprintf(f, "version : %x\n", vs.raw);
	if (human) {
		fprintf(f, "\tNVMe specification version %u.%u.%u\n\n", vs.bits.mjr, vs.bits.mnr,
			vs.bits.ter);
	}
	fprintf(f, "csts    : %x\n", csts.raw);
	if (human) {
		print_csts_human(f, csts);
	}
}

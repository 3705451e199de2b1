/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * JSON output with nvme-cli's key names and layout (nvme-print.c: json_nvme_id_ctrl,
 * json_nvme_id_ns, json_smart_log, json_error_log, json_fw_log, json_print_list_items)
 * so scripts written against `nvme ... -o json` keep working. Integers are JSON numbers;
 * 128-bit counters are numbers too, exact when they fit in 64 bits and otherwise written
 * with their exact decimal digits.
 */
#include <inttypes.h>
#include <string.h>

#include "nvpoll/util.h"

#include "nvp_cli.h"

static void
add_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

static void
add_str(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

const char *
cli_strfield(char *buf, size_t len, const char *field, size_t field_len)
{
	size_t n = nvp_strpadlen(field, field_len);

	/* A field may hold NULs instead of spaces; stop at the first one. */
	n = strnlen(field, n);
	if (n >= len) {
		n = len - 1;
	}
	memcpy(buf, field, n);
	buf[n] = '\0';
	return buf;
}

/* Exact decimal of a 128-bit little-endian pair: long division by 10 on 32-bit limbs. */
const char *
cli_u128_str(char *buf, size_t len, const uint64_t v[2])
{
	uint32_t limb[4] = { (uint32_t)v[0], (uint32_t)(v[0] >> 32), (uint32_t)v[1],
			     (uint32_t)(v[1] >> 32) };
	char tmp[48];
	size_t n = 0;

	do {
		uint64_t rem = 0;
		bool nonzero = false;

		for (int i = 3; i >= 0; i--) {
			uint64_t cur = (rem << 32) | limb[i];

			limb[i] = (uint32_t)(cur / 10);
			rem = cur % 10;
			nonzero = nonzero || limb[i] != 0;
		}
		tmp[n++] = (char)('0' + rem);
		if (!nonzero) {
			break;
		}
	} while (n < sizeof(tmp));
	if (len == 0) {
		return buf;
	}
	for (size_t i = 0; i < n && i + 1 < len; i++) {
		buf[i] = tmp[n - 1 - i];
		buf[i + 1] = '\0';
	}
	return buf;
}

static void
add_u128(struct json_object *o, const char *key, const uint64_t v[2])
{
	char s[48];

	if (v[1] == 0) {
		add_u64(o, key, v[0]);
		return;
	}
	cli_u128_str(s, sizeof(s), v);
	json_object_object_add(
		o, key,
		json_object_new_double_s((double)v[1] * 18446744073709551616.0 + (double)v[0], s));
}

static void
add_field(struct json_object *o, const char *key, const char *field, size_t len)
{
	char buf[260];

	add_str(o, key, cli_strfield(buf, sizeof(buf), field, len));
}

static void
add_hex(struct json_object *o, const char *key, const uint8_t *b, size_t n)
{
	char buf[64] = "";

	for (size_t i = 0; i < n && 2 * i + 2 < sizeof(buf); i++) {
		snprintf(buf + 2 * i, sizeof(buf) - 2 * i, "%02x", b[i]);
	}
	add_str(o, key, buf);
}

static struct json_object *
json_psd(const struct nvme_power_state *ps)
{
	struct json_object *o = json_object_new_object();

	add_u64(o, "max_power", ps->mp);
	add_u64(o, "max_power_scale", ps->mps);
	add_u64(o, "non-operational_state", ps->nops);
	add_u64(o, "flags", (uint64_t)ps->mps | (uint64_t)ps->nops << 1);
	add_u64(o, "entry_lat", ps->enlat);
	add_u64(o, "exit_lat", ps->exlat);
	add_u64(o, "read_tput", ps->rrt);
	add_u64(o, "read_lat", ps->rrl);
	add_u64(o, "write_tput", ps->rwt);
	add_u64(o, "write_lat", ps->rwl);
	add_u64(o, "idle_power", ps->idlp);
	add_u64(o, "idle_scale", ps->ips);
	add_u64(o, "active_power", ps->actp);
	add_u64(o, "active_power_work", ps->apw);
	add_u64(o, "active_scale", ps->aps);
	return o;
}

/* Bytes 0-255 of identify controller. */
static void
id_ctrl_general(struct json_object *o, const struct nvme_ctrlr_data *cd)
{
	add_u64(o, "vid", cd->vid);
	add_u64(o, "ssvid", cd->ssvid);
	add_field(o, "sn", cd->sn, sizeof(cd->sn));
	add_field(o, "mn", cd->mn, sizeof(cd->mn));
	add_field(o, "fr", cd->fr, sizeof(cd->fr));
	add_u64(o, "rab", cd->rab);
	add_u64(o, "ieee", (uint64_t)cd->ieee[2] << 16 | (uint64_t)cd->ieee[1] << 8 | cd->ieee[0]);
	add_u64(o, "cmic", cd->cmic);
	add_u64(o, "mdts", cd->mdts);
	add_u64(o, "cntlid", cd->cntlid);
	add_u64(o, "ver", cd->ver);
	add_u64(o, "rtd3r", cd->rtd3r);
	add_u64(o, "rtd3e", cd->rtd3e);
	add_u64(o, "oaes", cd->oaes);
	add_u64(o, "ctratt", cd->ctratt);
	add_u64(o, "rrls", cd->rrls);
	add_u64(o, "cntrltype", cd->cntrltype);
	add_hex(o, "fguid", cd->fguid, sizeof(cd->fguid));
	add_u64(o, "crdt1", cd->crdt1);
	add_u64(o, "crdt2", cd->crdt2);
	add_u64(o, "crdt3", cd->crdt3);
}

/* Bytes 256-511: admin command set attributes. */
static void
id_ctrl_admin(struct json_object *o, const struct nvme_ctrlr_data *cd)
{
	add_u64(o, "oacs", cd->oacs);
	add_u64(o, "acl", cd->acl);
	add_u64(o, "aerl", cd->aerl);
	add_u64(o, "frmw", cd->frmw);
	add_u64(o, "lpa", cd->lpa);
	add_u64(o, "elpe", cd->elpe);
	add_u64(o, "npss", cd->npss);
	add_u64(o, "avscc", cd->avscc);
	add_u64(o, "apsta", cd->apsta);
	add_u64(o, "wctemp", cd->wctemp);
	add_u64(o, "cctemp", cd->cctemp);
	add_u64(o, "mtfa", cd->mtfa);
	add_u64(o, "hmpre", cd->hmpre);
	add_u64(o, "hmmin", cd->hmmin);
	add_u128(o, "tnvmcap", cd->tnvmcap);
	add_u128(o, "unvmcap", cd->unvmcap);
	add_u64(o, "rpmbs", cd->rpmbs);
	add_u64(o, "edstt", cd->edstt);
	add_u64(o, "dsto", cd->dsto);
	add_u64(o, "fwug", cd->fwug);
	add_u64(o, "kas", cd->kas);
	add_u64(o, "hctma", cd->hctma);
	add_u64(o, "mntmt", cd->mntmt);
	add_u64(o, "mxtmt", cd->mxtmt);
	add_u64(o, "sanicap", cd->sanicap);
	add_u64(o, "hmminds", cd->hmminds);
	add_u64(o, "hmmaxd", cd->hmmaxd);
	add_u64(o, "nsetidmax", cd->nsetidmax);
	add_u64(o, "endgidmax", cd->endgidmax);
	add_u64(o, "anatt", cd->anatt);
	add_u64(o, "anacap", cd->anacap);
	add_u64(o, "anagrpmax", cd->anagrpmax);
	add_u64(o, "nanagrpid", cd->nanagrpid);
	add_u64(o, "pels", cd->pels);
}

/* Bytes 512-2047: NVM command set attributes, subnqn. */
static void
id_ctrl_nvm(struct json_object *o, const struct nvme_ctrlr_data *cd)
{
	add_u64(o, "sqes", cd->sqes);
	add_u64(o, "cqes", cd->cqes);
	add_u64(o, "maxcmd", cd->maxcmd);
	add_u64(o, "nn", cd->nn);
	add_u64(o, "oncs", cd->oncs);
	add_u64(o, "fuses", cd->fuses);
	add_u64(o, "fna", cd->fna);
	add_u64(o, "vwc", cd->vwc);
	add_u64(o, "awun", cd->awun);
	add_u64(o, "awupf", cd->awupf);
	add_u64(o, "nvscc", cd->nvscc);
	add_u64(o, "nwpc", cd->nwpc);
	add_u64(o, "acwu", cd->acwu);
	add_u64(o, "sgls", cd->sgls);
	add_u64(o, "mnan", cd->mnan);
	add_field(o, "subnqn", cd->subnqn, sizeof(cd->subnqn));
}

struct json_object *
cli_json_id_ctrl(const struct nvme_ctrlr_data *cd)
{
	struct json_object *o = json_object_new_object();
	struct json_object *psds;

	if (o == NULL) {
		return NULL;
	}
	id_ctrl_general(o, cd);
	id_ctrl_admin(o, cd);
	id_ctrl_nvm(o, cd);
	psds = json_object_new_array();
	for (uint32_t i = 0; i <= cd->npss && i < NVP_COUNTOF(cd->psd); i++) {
		json_object_array_add(psds, json_psd(&cd->psd[i]));
	}
	json_object_object_add(o, "psds", psds);
	return o;
}

static void
id_ns_fields(struct json_object *o, const struct nvme_ns_data *nd)
{
	add_u64(o, "nsze", nd->nsze);
	add_u64(o, "ncap", nd->ncap);
	add_u64(o, "nuse", nd->nuse);
	add_u64(o, "nsfeat", nd->nsfeat);
	add_u64(o, "nlbaf", nd->nlbaf);
	add_u64(o, "flbas", nd->flbas);
	add_u64(o, "mc", nd->mc);
	add_u64(o, "dpc", nd->dpc);
	add_u64(o, "dps", nd->dps);
	add_u64(o, "nmic", nd->nmic);
	add_u64(o, "rescap", nd->rescap);
	add_u64(o, "fpi", nd->fpi);
	add_u64(o, "dlfeat", nd->dlfeat);
	add_u64(o, "nawun", nd->nawun);
	add_u64(o, "nawupf", nd->nawupf);
	add_u64(o, "nacwu", nd->nacwu);
	add_u64(o, "nabsn", nd->nabsn);
	add_u64(o, "nabo", nd->nabo);
	add_u64(o, "nabspf", nd->nabspf);
	add_u64(o, "noiob", nd->noiob);
	add_u128(o, "nvmcap", nd->nvmcap);
	add_u64(o, "npwg", nd->npwg);
	add_u64(o, "npwa", nd->npwa);
	add_u64(o, "npdg", nd->npdg);
	add_u64(o, "npda", nd->npda);
	add_u64(o, "nows", nd->nows);
	add_u64(o, "anagrpid", nd->anagrpid);
	add_u64(o, "nsattr", nd->nsattr);
	add_u64(o, "nvmsetid", nd->nvmsetid);
	add_u64(o, "endgid", nd->endgid);
	add_hex(o, "nguid", nd->nguid, sizeof(nd->nguid));
	add_hex(o, "eui64", nd->eui64, sizeof(nd->eui64));
}

struct json_object *
cli_json_id_ns(const struct nvme_ns_data *nd)
{
	struct json_object *o = json_object_new_object();
	struct json_object *lbafs;

	if (o == NULL) {
		return NULL;
	}
	id_ns_fields(o, nd);
	lbafs = json_object_new_array();
	for (uint32_t i = 0; i <= nd->nlbaf && i < NVME_MAX_LBAF; i++) {
		struct json_object *l = json_object_new_object();

		add_u64(l, "ms", nd->lbaf[i].ms);
		add_u64(l, "ds", nd->lbaf[i].lbads);
		add_u64(l, "rp", nd->lbaf[i].rp);
		json_object_array_add(lbafs, l);
	}
	json_object_object_add(o, "lbafs", lbafs);
	return o;
}

#define SMART_U128(json, text, field)                                            \
	{                                                                        \
		json, text, offsetof(struct nvme_health_information_page, field) \
	}

const struct cli_u128_field cli_smart_u128[10] = {
	SMART_U128("data_units_read", "data_units_read", data_units_read),
	SMART_U128("data_units_written", "data_units_written", data_units_written),
	SMART_U128("host_read_commands", "host_read_commands", host_read_commands),
	SMART_U128("host_write_commands", "host_write_commands", host_write_commands),
	SMART_U128("controller_busy_time", "controller_busy_time", controller_busy_time),
	SMART_U128("power_cycles", "power_cycles", power_cycles),
	SMART_U128("power_on_hours", "power_on_hours", power_on_hours),
	SMART_U128("unsafe_shutdowns", "unsafe_shutdowns", unsafe_shutdowns),
	SMART_U128("media_errors", "media_errors", media_errors),
	SMART_U128("num_err_log_entries", "num_err_log_entries", num_error_info_log_entries),
};

struct json_object *
cli_json_smart_log(const struct nvme_health_information_page *sl)
{
	struct json_object *o = json_object_new_object();
	char key[32];

	if (o == NULL) {
		return NULL;
	}
	add_u64(o, "critical_warning", sl->critical_warning);
	add_u64(o, "temperature", sl->temperature);
	add_u64(o, "avail_spare", sl->available_spare);
	add_u64(o, "spare_thresh", sl->available_spare_threshold);
	add_u64(o, "percent_used", sl->percentage_used);
	add_u64(o, "endurance_grp_critical_warning_summary", sl->endurance_group_critical_warning);
	for (size_t i = 0; i < NVP_COUNTOF(cli_smart_u128); i++) {
		uint64_t v[2];

		memcpy(v, (const char *)sl + cli_smart_u128[i].offset, sizeof(v));
		add_u128(o, cli_smart_u128[i].json_key, v);
	}
	add_u64(o, "warning_temp_time", sl->warning_temp_time);
	add_u64(o, "critical_comp_time", sl->critical_temp_time);
	for (int i = 0; i < 8; i++) {
		if (sl->temp_sensor[i] != 0) {
			snprintf(key, sizeof(key), "temperature_sensor_%d", i + 1);
			add_u64(o, key, sl->temp_sensor[i]);
		}
	}
	add_u64(o, "thm_temp1_trans_count", sl->thm_temp1_trans_count);
	add_u64(o, "thm_temp2_trans_count", sl->thm_temp2_trans_count);
	add_u64(o, "thm_temp1_total_time", sl->thm_temp1_total_time);
	add_u64(o, "thm_temp2_total_time", sl->thm_temp2_total_time);
	return o;
}

static struct json_object *
json_error_entry(const struct nvme_error_information_entry *e)
{
	struct json_object *o = json_object_new_object();
	uint16_t status;

	memcpy(&status, &e->status, sizeof(status));
	add_u64(o, "error_count", e->error_count);
	add_u64(o, "sqid", e->sqid);
	add_u64(o, "cmdid", e->cid);
	/* nvme-cli: the status field without the phase tag, and the phase tag apart */
	add_u64(o, "status_field", status >> 1);
	add_u64(o, "phase_tag", status & 1);
	add_u64(o, "parm_error_location", e->error_location);
	add_u64(o, "lba", e->lba);
	add_u64(o, "nsid", e->nsid);
	add_u64(o, "vs", e->vendor_specific);
	add_u64(o, "trtype", e->trtype);
	add_u64(o, "cs", e->command_specific);
	add_u64(o, "trtype_spec_info", e->trtype_specific);
	return o;
}

struct json_object *
cli_json_error_log(const struct nvme_error_information_entry *entries, uint32_t count)
{
	struct json_object *o = json_object_new_object();
	struct json_object *errors = json_object_new_array();

	for (uint32_t i = 0; i < count; i++) {
		json_object_array_add(errors, json_error_entry(&entries[i]));
	}
	json_object_object_add(o, "errors", errors);
	return o;
}

/*
 * nvme-cli: { "<device>": { "Active Firmware Slot (afi)": N, "Firmware Rev Slot K":
 * "<revision as a little-endian u64> (<revision>)" } } for the slots that hold one. We
 * add "afi" and "frsK" (the revision text) to the same object for simpler scripts.
 */
struct json_object *
cli_json_fw_log(const struct nvme_firmware_page *fw, const char *devname)
{
	struct json_object *o = json_object_new_object();
	struct json_object *fwsi = json_object_new_object();
	char key[32], rev[9], val[48];

	add_u64(fwsi, "Active Firmware Slot (afi)", fw->afi);
	add_u64(fwsi, "afi", fw->afi);
	for (int i = 0; i < 7; i++) {
		uint64_t raw;

		if (fw->revision[i][0] == '\0') {
			continue;
		}
		memcpy(&raw, fw->revision[i], sizeof(raw));
		cli_strfield(rev, sizeof(rev), fw->revision[i], sizeof(fw->revision[i]));
		snprintf(key, sizeof(key), "Firmware Rev Slot %d", i + 1);
		snprintf(val, sizeof(val), "%" PRIu64 " (%s)", raw, rev);
		add_str(fwsi, key, val);
		snprintf(key, sizeof(key), "frs%d", i + 1);
		add_str(fwsi, key, rev);
	}
	json_object_object_add(o, devname, fwsi);
	return o;
}

static struct json_object *
json_list_entry(const struct cli_list_entry *e, uint32_t index)
{
	struct json_object *o = json_object_new_object();
	const struct nvme_ns_data *nd = e->nsdata;
	uint32_t lbads = nd->lbaf[nd->flbas & NVME_FLBAS_FORMAT_MASK].lbads;
	uint64_t sector = lbads < 32 ? (uint64_t)1 << lbads : 0;

	add_u64(o, "NameSpace", e->nsid);
	add_str(o, "DevicePath", e->device_path);
	add_field(o, "Firmware", e->cdata->fr, sizeof(e->cdata->fr));
	add_u64(o, "Index", index);
	add_field(o, "ModelNumber", e->cdata->mn, sizeof(e->cdata->mn));
	add_field(o, "SerialNumber", e->cdata->sn, sizeof(e->cdata->sn));
	add_u64(o, "UsedBytes", nd->nuse * sector);
	add_u64(o, "MaximumLBA", nd->nsze);
	add_u64(o, "PhysicalSize", nd->nsze * sector);
	add_u64(o, "SectorSize", sector);
	return o;
}

struct json_object *
cli_json_list(const struct cli_list_entry *entries, uint32_t count)
{
	struct json_object *o = json_object_new_object();
	struct json_object *devs = json_object_new_array();

	for (uint32_t i = 0; i < count; i++) {
		json_object_array_add(devs, json_list_entry(&entries[i], i));
	}
	json_object_object_add(o, "Devices", devs);
	return o;
}

struct json_object *
cli_json_list_ns(const uint32_t *nsids, uint32_t count)
{
	struct json_object *o = json_object_new_object();
	struct json_object *list = json_object_new_array();

	for (uint32_t i = 0; i < count; i++) {
		struct json_object *e = json_object_new_object();

		add_u64(e, "nsid", nsids[i]);
		json_object_array_add(list, e);
	}
	json_object_object_add(o, "nsid_list", list);
	return o;
}

struct json_object *
cli_json_feature(uint8_t fid, uint32_t result)
{
	struct json_object *o = json_object_new_object();

	add_u64(o, "feature_id", fid);
	add_str(o, "name", cli_feature_name(fid));
	add_u64(o, "value", result);
	return o;
}

/* nvme-cli show-regs key names; only the registers the driver exposes. */
struct json_object *
cli_json_regs(union nvme_cap_register cap, union nvme_vs_register vs, union nvme_csts_register csts)
{
	struct json_object *o = json_object_new_object();

	add_u64(o, "cap", cap.raw);
	add_u64(o, "vs", vs.raw);
	add_u64(o, "csts", csts.raw);
	return o;
}

void
cli_json_print(FILE *f, struct json_object *obj)
{
	fprintf(f, "%s\n",
		json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY |
							    JSON_C_TO_STRING_NOSLASHESCAPE));
}

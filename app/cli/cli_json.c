/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * JSON output with nvme-cli's key names and layout (nvme-print.c: json_nvme_id_ctrl,
 * json_nvme_id_ns, json_smart_log, json_error_log, json_fw_log, json_print_list_items)
 * of nvme-cli 2.3 (Debian 12), so scripts written against `nvme ... -o json` keep working:
 * the same keys in the same order, integers as JSON numbers, 128-bit values (capacities,
 * SMART counters) as strings of their exact decimal value. test/qemu/nvme_cli_compare.sh
 * checks it field by field against nvme-cli itself on QEMU's controller.
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

/* nvme-cli 2.3 prints 128-bit values as strings holding the exact decimal value. */
static void
add_u128(struct json_object *o, const char *key, const uint64_t v[2])
{
	char s[48];

	add_str(o, key, cli_u128_str(s, sizeof(s), v));
}

/*
 * A string field as nvme-cli 2.3 prints identify strings ("%-.*s"): up to the first NUL,
 * the spec's space padding kept.
 */
static void
add_padded(struct json_object *o, const char *key, const char *field, size_t len)
{
	char buf[260];
	size_t n = strnlen(field, len < sizeof(buf) ? len : sizeof(buf) - 1);

	memcpy(buf, field, n);
	buf[n] = '\0';
	add_str(o, key, buf);
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

/* A 16-byte identifier as a dashed UUID (8-4-4-4-12 lower-case hex), as nvme-cli's fguid. */
const char *
cli_uuid_str(char *buf, size_t len, const uint8_t b[16])
{
	size_t n = 0;

	for (int i = 0; i < 16 && n + 3 < len; i++) {
		n += (size_t)snprintf(buf + n, len - n, "%02x", b[i]);
		if ((i == 3 || i == 5 || i == 7 || i == 9) && n + 2 < len) {
			buf[n++] = '-';
			buf[n] = '\0';
		}
	}
	return buf;
}

/* Little-endian unsigned integer of 1 to 8 bytes. */
static uint64_t
get_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i > 0; i--) {
		v = v << 8 | p[i - 1];
	}
	return v;
}

/* A 128-bit value read from identify data (tnvmcap, unvmcap, megcap, maxdna, nvmcap). */
static void
add_u128_str(struct json_object *o, const char *key, const uint8_t *p)
{
	uint64_t v[2] = { get_le(p, 8), get_le(p + 8, 8) };

	add_u128(o, key, v);
}

/*
 * Identify data printed field by field from a table of byte offsets (NVMe 2.0 figures 275
 * and 280), in nvme-cli 2.3's key order. Offsets rather than struct members: several of
 * these fields are reserved bytes in older revisions of our spec header.
 */
enum id_kind {
	ID_UINT,
	ID_STR,
	ID_U128,
	ID_UUID,
	ID_HEX,
	ID_STR_IF_SET,
	ID_UINT_IF_NPWG
};

struct id_field {
	const char *key;
	uint16_t offset;
	uint16_t size;
	enum id_kind kind;
};

#define F(k, off, sz)               \
	{                           \
		k, off, sz, ID_UINT \
	}
static const struct id_field id_ctrl_fields[] = {
	F("vid", 0, 2),
	F("ssvid", 2, 2),
	{ "sn", 4, 20, ID_STR },
	{ "mn", 24, 40, ID_STR },
	{ "fr", 64, 8, ID_STR },
	F("rab", 72, 1),
	F("ieee", 73, 3),
	F("cmic", 76, 1),
	F("mdts", 77, 1),
	F("cntlid", 78, 2),
	F("ver", 80, 4),
	F("rtd3r", 84, 4),
	F("rtd3e", 88, 4),
	F("oaes", 92, 4),
	F("ctratt", 96, 4),
	F("rrls", 100, 2),
	F("cntrltype", 111, 1),
	{ "fguid", 112, 16, ID_UUID },
	F("crdt1", 128, 2),
	F("crdt2", 130, 2),
	F("crdt3", 132, 2),
	F("nvmsr", 253, 1),
	F("vwci", 254, 1),
	F("mec", 255, 1),
	F("oacs", 256, 2),
	F("acl", 258, 1),
	F("aerl", 259, 1),
	F("frmw", 260, 1),
	F("lpa", 261, 1),
	F("elpe", 262, 1),
	F("npss", 263, 1),
	F("avscc", 264, 1),
	F("apsta", 265, 1),
	F("wctemp", 266, 2),
	F("cctemp", 268, 2),
	F("mtfa", 270, 2),
	F("hmpre", 272, 4),
	F("hmmin", 276, 4),
	{ "tnvmcap", 280, 16, ID_U128 },
	{ "unvmcap", 296, 16, ID_U128 },
	F("rpmbs", 312, 4),
	F("edstt", 316, 2),
	F("dsto", 318, 1),
	F("fwug", 319, 1),
	F("kas", 320, 2),
	F("hctma", 322, 2),
	F("mntmt", 324, 2),
	F("mxtmt", 326, 2),
	F("sanicap", 328, 4),
	F("hmminds", 332, 4),
	F("hmmaxd", 336, 2),
	F("nsetidmax", 338, 2),
	F("endgidmax", 340, 2),
	F("anatt", 342, 1),
	F("anacap", 343, 1),
	F("anagrpmax", 344, 4),
	F("nanagrpid", 348, 4),
	F("pels", 352, 4),
	F("domainid", 356, 2),
	{ "megcap", 368, 16, ID_U128 },
	F("sqes", 512, 1),
	F("cqes", 513, 1),
	F("maxcmd", 514, 2),
	F("nn", 516, 4),
	F("oncs", 520, 2),
	F("fuses", 522, 2),
	F("fna", 524, 1),
	F("vwc", 525, 1),
	F("awun", 526, 2),
	F("awupf", 528, 2),
	F("icsvscc", 530, 1),
	F("nwpc", 531, 1),
	F("acwu", 532, 2),
	F("ocfs", 534, 2),
	F("sgls", 536, 4),
	F("mnan", 540, 4),
	{ "maxdna", 544, 16, ID_U128 },
	F("maxcna", 560, 4),
	{ "subnqn", 768, 256, ID_STR_IF_SET },
	F("ioccsz", 1792, 4),
	F("iorcsz", 1796, 4),
	F("icdoff", 1800, 2),
	F("fcatt", 1802, 1),
	F("msdbd", 1803, 1),
	F("ofcs", 1804, 2),
};

/* npwg..nows only when NSFEAT bit 4 says they are valid, as nvme-cli. */
#define G(k, off)                          \
	{                                  \
		k, off, 2, ID_UINT_IF_NPWG \
	}
static const struct id_field id_ns_fields[] = {
	F("nsze", 0, 8),
	F("ncap", 8, 8),
	F("nuse", 16, 8),
	F("nsfeat", 24, 1),
	F("nlbaf", 25, 1),
	F("flbas", 26, 1),
	F("mc", 27, 1),
	F("dpc", 28, 1),
	F("dps", 29, 1),
	F("nmic", 30, 1),
	F("rescap", 31, 1),
	F("fpi", 32, 1),
	F("dlfeat", 33, 1),
	F("nawun", 34, 2),
	F("nawupf", 36, 2),
	F("nacwu", 38, 2),
	F("nabsn", 40, 2),
	F("nabo", 42, 2),
	F("nabspf", 44, 2),
	F("noiob", 46, 2),
	{ "nvmcap", 48, 16, ID_U128 },
	F("nsattr", 99, 1),
	F("nvmsetid", 100, 2),
	G("npwg", 64),
	G("npwa", 66),
	G("npdg", 68),
	G("npda", 70),
	G("nows", 72),
	F("mssrl", 74, 2),
	F("mcl", 76, 4),
	F("msrc", 80, 1),
	F("nulbaf", 82, 1),
	F("anagrpid", 92, 4),
	F("endgid", 102, 2),
	{ "eui64", 120, 8, ID_HEX },
	{ "nguid", 104, 16, ID_HEX },
};
#undef F
#undef G

static void
add_id_fields(struct json_object *o, const uint8_t *data, const struct id_field *f, size_t n)
{
	char buf[48];

	for (size_t i = 0; i < n; i++, f++) {
		const uint8_t *p = data + f->offset;

		switch (f->kind) {
		case ID_UINT_IF_NPWG:
			if ((data[24] & NVME_NSFEAT_OPTIMAL_PERF) == 0) {
				break;
			}
			/* fall through */
		case ID_UINT:
			add_u64(o, f->key, get_le(p, f->size));
			break;
		case ID_STR_IF_SET:
			if (p[0] == '\0') {
				break;
			}
			/* fall through */
		case ID_STR:
			add_padded(o, f->key, (const char *)p, f->size);
			break;
		case ID_U128:
			add_u128_str(o, f->key, p);
			break;
		case ID_UUID:
			add_str(o, f->key, cli_uuid_str(buf, sizeof(buf), p));
			break;
		case ID_HEX:
			add_hex(o, f->key, p, f->size);
			break;
		}
	}
}

/* One power state descriptor (NVMe 2.0 figure 276), nvme-cli 2.3's keys. */
static struct json_object *
json_psd(const uint8_t *ps)
{
	struct json_object *o = json_object_new_object();

	add_u64(o, "max_power", get_le(ps, 2));
	add_u64(o, "flags", ps[3]);
	add_u64(o, "entry_lat", get_le(ps + 4, 4));
	add_u64(o, "exit_lat", get_le(ps + 8, 4));
	add_u64(o, "read_tput", ps[12]);
	add_u64(o, "read_lat", ps[13]);
	add_u64(o, "write_tput", ps[14]);
	add_u64(o, "write_lat", ps[15]);
	add_u64(o, "idle_power", get_le(ps + 16, 2));
	add_u64(o, "idle_scale", (ps[18] >> 6) & 0x3);
	add_u64(o, "active_power", get_le(ps + 20, 2));
	add_u64(o, "active_power_work", ps[22] & 0x7);
	add_u64(o, "active_scale", (ps[22] >> 6) & 0x3);
	return o;
}

struct json_object *
cli_json_id_ctrl(const struct nvme_ctrlr_data *cd)
{
	struct json_object *o = json_object_new_object();
	struct json_object *psds;
	const uint8_t *raw = (const uint8_t *)cd;

	if (o == NULL) {
		return NULL;
	}
	add_id_fields(o, raw, id_ctrl_fields, NVP_COUNTOF(id_ctrl_fields));
	psds = json_object_new_array();
	for (uint32_t i = 0; i <= cd->npss && i < NVP_COUNTOF(cd->psd); i++) {
		json_object_array_add(psds, json_psd(raw + offsetof(struct nvme_ctrlr_data, psd) +
						     i * sizeof(cd->psd[0])));
	}
	json_object_object_add(o, "psds", psds);
	return o;
}

struct json_object *
cli_json_id_ns(const struct nvme_ns_data *nd)
{
	struct json_object *o = json_object_new_object();
	struct json_object *lbafs;

	if (o == NULL) {
		return NULL;
	}
	add_id_fields(o, (const uint8_t *)nd, id_ns_fields, NVP_COUNTOF(id_ns_fields));
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
 * "<revision as a little-endian u64> (<revision>)" } } for the slots that hold one, the
 * revision text with every byte outside '!'..'~' (padding included) shown as '.'.
 */
struct json_object *
cli_json_fw_log(const struct nvme_firmware_page *fw, const char *devname)
{
	struct json_object *o = json_object_new_object();
	struct json_object *fwsi = json_object_new_object();
	char key[32], rev[9], val[48];

	add_u64(fwsi, "Active Firmware Slot (afi)", fw->afi);
	for (int i = 0; i < 7; i++) {
		uint64_t raw;

		if (fw->revision[i][0] == '\0') {
			continue;
		}
		memcpy(&raw, fw->revision[i], sizeof(raw));
		for (int j = 0; j < 8; j++) {
			char c = fw->revision[i][j];

			rev[j] = c >= '!' && c <= '~' ? c : '.';
		}
		rev[8] = '\0';
		snprintf(key, sizeof(key), "Firmware Rev Slot %d", i + 1);
		snprintf(val, sizeof(val), "%" PRIu64 " (%s)", raw, rev);
		add_str(fwsi, key, val);
	}
	json_object_object_add(o, devname, fwsi);
	return o;
}

/*
 * The list strings come from the kernel's sysfs in nvme-cli (model, serial, firmware_rev):
 * without the trailing padding.
 */
static void
add_trimmed(struct json_object *o, const char *key, const char *field, size_t len)
{
	char buf[260];

	add_str(o, key, cli_strfield(buf, sizeof(buf), field, len));
}

static uint64_t
entry_sector(const struct cli_list_entry *e)
{
	const struct nvme_ns_data *nd = e->nsdata;
	uint32_t lbads = nd->lbaf[nd->flbas & NVME_FLBAS_FORMAT_MASK].lbads;

	return lbads < 32 ? (uint64_t)1 << lbads : 0;
}

/* nvme-cli 2.3 json_simple_ns. */
static struct json_object *
json_list_entry(const struct cli_list_entry *e)
{
	struct json_object *o = json_object_new_object();
	const struct nvme_ns_data *nd = e->nsdata;
	uint64_t sector = entry_sector(e);

	add_u64(o, "NameSpace", e->nsid);
	add_str(o, "DevicePath", e->device_path);
	add_trimmed(o, "Firmware", e->cdata->fr, sizeof(e->cdata->fr));
	add_trimmed(o, "ModelNumber", e->cdata->mn, sizeof(e->cdata->mn));
	add_trimmed(o, "SerialNumber", e->cdata->sn, sizeof(e->cdata->sn));
	add_u64(o, "UsedBytes", nd->nuse * sector);
	add_u64(o, "MaximumLBA", nd->nsze);
	add_u64(o, "PhysicalSize", nd->nsze * sector);
	add_u64(o, "SectorSize", sector);
	if (e->ana_state != NULL) { /* nvpoll's: multipath (ANA) namespaces only */
		add_str(o, "ANAState", e->ana_state);
	}
	return o;
}

/* A namespace of list -v: its name, id and sizes (nvme-cli 2.3). */
static struct json_object *
json_detail_ns(const struct cli_list_entry *e)
{
	struct json_object *o = json_object_new_object();
	uint64_t sector = entry_sector(e);

	add_str(o, "NameSpace", e->device_path);
	add_u64(o, "NSID", e->nsid);
	add_u64(o, "UsedBytes", e->nsdata->nuse * sector);
	add_u64(o, "MaximumLBA", e->nsdata->nsze);
	add_u64(o, "PhysicalSize", e->nsdata->nsze * sector);
	add_u64(o, "SectorSize", sector);
	return o;
}

/* A controller's multipath paths, as nvme-cli 2.3's "Paths": one per namespace it reports
 * an ANA state for ("<address>/ns<nsid>" standing for nvme-cli's "nvme0c0n1"). */
static struct json_object *
json_detail_paths(const struct cli_list_entry *entries, uint32_t count, uint32_t first)
{
	struct json_object *paths = json_object_new_array();

	for (uint32_t i = first; i < count && entries[i].cdata == entries[first].cdata; i++) {
		struct json_object *p;

		if (entries[i].ana_state == NULL) {
			continue;
		}
		p = json_object_new_object();
		add_str(p, "Path", entries[i].device_path);
		add_str(p, "ANAState", entries[i].ana_state);
		json_object_array_add(paths, p);
	}
	return paths;
}

/* One controller of list -v: identity, transport, its namespaces, its ANA paths. */
static struct json_object *
json_detail_ctrl(const struct cli_list_entry *entries, uint32_t count, uint32_t first)
{
	struct json_object *c = json_object_new_object();
	struct json_object *nss = json_object_new_array();
	const struct cli_list_entry *e = &entries[first];

	add_str(c, "Controller", e->ctrl_name);
	add_trimmed(c, "SerialNumber", e->cdata->sn, sizeof(e->cdata->sn));
	add_trimmed(c, "ModelNumber", e->cdata->mn, sizeof(e->cdata->mn));
	add_trimmed(c, "Firmware", e->cdata->fr, sizeof(e->cdata->fr));
	add_str(c, "Transport", e->transport);
	add_str(c, "Address", e->address);
	/* Namespaces of a controller that is not multi-controller capable (CMIC bit 1). */
	for (uint32_t i = first; i < count && entries[i].cdata == e->cdata; i++) {
		if ((e->cdata->cmic & 0x2) == 0) {
			json_object_array_add(nss, json_detail_ns(&entries[i]));
		}
	}
	json_object_object_add(c, "Namespaces", nss);
	json_object_object_add(c, "Paths", json_detail_paths(entries, count, first));
	return c;
}

/*
 * list -v: nvme-cli 2.3's host / subsystem / controller tree. nvpoll has no host NQN
 * and one controller per subsystem: one host entry, one subsystem per controller.
 */
static struct json_object *
json_detail_list(const struct cli_list_entry *entries, uint32_t count)
{
	struct json_object *host = json_object_new_object();
	struct json_object *subsystems = json_object_new_array();
	uint32_t n = 0;

	add_str(host, "HostNQN", "");
	for (uint32_t i = 0; i < count; n++) {
		struct json_object *ss = json_object_new_object();
		struct json_object *ctrls = json_object_new_array();
		struct json_object *nss = json_object_new_array();
		const struct nvme_ctrlr_data *cd = entries[i].cdata;
		char name[32];

		snprintf(name, sizeof(name), "nvp-subsys%u", n);
		add_str(ss, "Subsystem", name);
		add_trimmed(ss, "SubsystemNQN", cd->subnqn, sizeof(cd->subnqn));
		json_object_array_add(ctrls, json_detail_ctrl(entries, count, i));
		json_object_object_add(ss, "Controllers", ctrls);
		for (; i < count && entries[i].cdata == cd; i++) {
			if ((cd->cmic & 0x2) != 0) {
				json_object_array_add(nss, json_detail_ns(&entries[i]));
			}
		}
		json_object_object_add(ss, "Namespaces", nss);
		json_object_array_add(subsystems, ss);
	}
	json_object_object_add(host, "Subsystems", subsystems);
	return host;
}

struct json_object *
cli_json_list(const struct cli_list_entry *entries, uint32_t count, bool verbose)
{
	struct json_object *o = json_object_new_object();
	struct json_object *devs = json_object_new_array();

	if (verbose) {
		json_object_array_add(devs, json_detail_list(entries, count));
	} else {
		for (uint32_t i = 0; i < count; i++) {
			json_object_array_add(devs, json_list_entry(&entries[i]));
		}
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

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for app/cli/cli_json.c: the JSON builders, fed with filled NVMe structures,
 * must produce nvme-cli's key names with the right values (strings without their space
 * padding, composed fields like ieee, 128-bit counters exact, one array entry per power
 * state / LBA format / error entry), and survive a round trip through json-c's parser.
 */
#include <errno.h>
#include <string.h>

#include "cli_json.c"
#include "cli_print.c"

#include "ut_main.h"

/* cli_print.c names statuses; the driver is not linked here. */
const char *
nvp_nvme_status_string(uint8_t sct, uint8_t sc)
{
	return sct == 0 && sc == 2 ? "Invalid Field in Command" : "Unknown";
}

/* Serialise and parse again: what a script reading our stdout sees. */
static struct json_object *
round_trip(struct json_object *obj)
{
	const char *s = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY);
	struct json_object *back = json_tokener_parse(s);

	json_object_put(obj);
	return back;
}

static uint64_t
get_u64(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v)) {
		fprintf(stderr, "  key '%s' missing\n", key);
		CU_FAIL("key missing");
		return UINT64_MAX;
	}
	return json_object_get_uint64(v);
}

static const char *
get_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v)) {
		fprintf(stderr, "  key '%s' missing\n", key);
		CU_FAIL("key missing");
		return "";
	}
	return json_object_get_string(v);
}

static void
fill_ctrlr(struct nvme_ctrlr_data *cd)
{
	memset(cd, 0, sizeof(*cd));
	cd->vid = 0x1b36;
	cd->ssvid = 0x1af4;
	nvp_strpad(cd->sn, "SN1234", sizeof(cd->sn), ' ');
	nvp_strpad(cd->mn, "nvpoll software NVMe controller", sizeof(cd->mn), ' ');
	nvp_strpad(cd->fr, "1.0", sizeof(cd->fr), ' ');
	cd->ieee[0] = 0x00;
	cd->ieee[1] = 0x54;
	cd->ieee[2] = 0x52;
	cd->mdts = 5;
	cd->cntlid = 7;
	cd->ver = NVME_VERSION(1, 4, 0);
	cd->oacs = NVME_OACS_FORMAT | NVME_OACS_FIRMWARE;
	cd->frmw = 7;
	cd->elpe = 63;
	cd->npss = 1;
	cd->wctemp = 343;
	cd->cctemp = 358;
	cd->tnvmcap[0] = 64ull << 20;
	cd->sqes = 0x66;
	cd->cqes = 0x44;
	cd->nn = 4;
	cd->oncs = 0xd;
	cd->vwc = 1;
	cd->sgls = 0;
	nvp_strlcpy(cd->subnqn, "nqn.2026-01.io.nvpoll:emu0", sizeof(cd->subnqn));
	cd->psd[0].mp = 2500;
	cd->psd[1].mp = 800;
	cd->psd[1].nops = 1;
}

/* The keys of @o, in order, must be exactly @keys (nvme-cli 2.3's key set and order). */
static void
check_keys(struct json_object *o, const char *const *keys, size_t n)
{
	size_t i = 0;

	json_object_object_foreach(o, key, val)
	{
		(void)val;
		if (i >= n || strcmp(key, keys[i]) != 0) {
			fprintf(stderr, "  key %zu: got '%s', want '%s'\n", i, key,
				i < n ? keys[i] : "(end)");
			CU_FAIL("key order");
			return;
		}
		i++;
	}
	CU_ASSERT_EQUAL(i, n);
}

/* nvme-cli 2.3 (Debian 12) json_nvme_id_ctrl, in order. */
static const char *const g_id_ctrl_keys[] = {
	"vid",       "ssvid",  "sn",        "mn",        "fr",      "rab",    "ieee",
	"cmic",      "mdts",   "cntlid",    "ver",       "rtd3r",   "rtd3e",  "oaes",
	"ctratt",    "rrls",   "cntrltype", "fguid",     "crdt1",   "crdt2",  "crdt3",
	"nvmsr",     "vwci",   "mec",       "oacs",      "acl",     "aerl",   "frmw",
	"lpa",       "elpe",   "npss",      "avscc",     "apsta",   "wctemp", "cctemp",
	"mtfa",      "hmpre",  "hmmin",     "tnvmcap",   "unvmcap", "rpmbs",  "edstt",
	"dsto",      "fwug",   "kas",       "hctma",     "mntmt",   "mxtmt",  "sanicap",
	"hmminds",   "hmmaxd", "nsetidmax", "endgidmax", "anatt",   "anacap", "anagrpmax",
	"nanagrpid", "pels",   "domainid",  "megcap",    "sqes",    "cqes",   "maxcmd",
	"nn",        "oncs",   "fuses",     "fna",       "vwc",     "awun",   "awupf",
	"icsvscc",   "nwpc",   "acwu",      "ocfs",      "sgls",    "mnan",   "maxdna",
	"maxcna",    "subnqn", "ioccsz",    "iorcsz",    "icdoff",  "fcatt",  "msdbd",
	"ofcs",      "psds",
};

static void
test_id_ctrl(void)
{
	static const char *const psd_keys[] = {
		"max_power",    "flags",      "entry_lat",    "exit_lat",
		"read_tput",    "read_lat",   "write_tput",   "write_lat",
		"idle_power",   "idle_scale", "active_power", "active_power_work",
		"active_scale",
	};
	struct nvme_ctrlr_data cd;
	uint8_t *raw = (uint8_t *)&cd;
	struct json_object *o, *psds, *ps;
	const char *text;

	fill_ctrlr(&cd);
	for (int i = 0; i < 16; i++) {
		cd.fguid[i] = (uint8_t)(0xa0 + i);
	}
	raw[254] = 0x81;   /* vwci */
	raw[1792] = 4;     /* ioccsz */
	cd.tnvmcap[1] = 1; /* 2^64 + 64 MiB: exact, as a string */
	cd.psd[1].ips = 2;
	cd.psd[1].apw = 5;
	o = cli_json_id_ctrl(&cd);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"tnvmcap\":\"18446744073776660480\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"unvmcap\":\"0\""));
	o = round_trip(o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	check_keys(o, g_id_ctrl_keys, NVP_COUNTOF(g_id_ctrl_keys));
	CU_ASSERT_EQUAL(get_u64(o, "vid"), 0x1b36);
	CU_ASSERT_EQUAL(get_u64(o, "ssvid"), 0x1af4);
	/* the spec's space padding kept, as nvme-cli prints it */
	CU_ASSERT_STRING_EQUAL(get_str(o, "sn"), "SN1234              ");
	CU_ASSERT_STRING_EQUAL(get_str(o, "mn"), "nvpoll software NVMe controller         ");
	CU_ASSERT_STRING_EQUAL(get_str(o, "fr"), "1.0     ");
	CU_ASSERT_STRING_EQUAL(get_str(o, "fguid"), "a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
	CU_ASSERT_EQUAL(get_u64(o, "ieee"), 0x525400);
	CU_ASSERT_EQUAL(get_u64(o, "mdts"), 5);
	CU_ASSERT_EQUAL(get_u64(o, "cntlid"), 7);
	CU_ASSERT_EQUAL(get_u64(o, "ver"), 0x10400);
	CU_ASSERT_EQUAL(get_u64(o, "vwci"), 0x81);
	CU_ASSERT_EQUAL(get_u64(o, "ioccsz"), 4);
	CU_ASSERT_EQUAL(get_u64(o, "oacs"), 6);
	CU_ASSERT_EQUAL(get_u64(o, "elpe"), 63);
	CU_ASSERT_EQUAL(get_u64(o, "wctemp"), 343);
	CU_ASSERT_EQUAL(get_u64(o, "sqes"), 0x66);
	CU_ASSERT_EQUAL(get_u64(o, "nn"), 4);
	CU_ASSERT_EQUAL(get_u64(o, "oncs"), 0xd);
	CU_ASSERT_STRING_EQUAL(get_str(o, "subnqn"), "nqn.2026-01.io.nvpoll:emu0");
	CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(o, "psds", &psds));
	CU_ASSERT_EQUAL_FATAL(json_object_array_length(psds), 2); /* npss is 0's based */
	ps = json_object_array_get_idx(psds, 1);
	check_keys(ps, psd_keys, NVP_COUNTOF(psd_keys));
	CU_ASSERT_EQUAL(get_u64(ps, "max_power"), 800);
	CU_ASSERT_EQUAL(get_u64(ps, "flags"), 2);
	CU_ASSERT_EQUAL(get_u64(ps, "idle_scale"), 2);
	CU_ASSERT_EQUAL(get_u64(ps, "active_power_work"), 5);
	json_object_put(o);

	/* An empty subnqn is left out, as nvme-cli does. */
	memset(cd.subnqn, 0, sizeof(cd.subnqn));
	o = cli_json_id_ctrl(&cd);
	CU_ASSERT_FALSE(json_object_object_get_ex(o, "subnqn", NULL));
	json_object_put(o);
}

/* nvme-cli 2.3 json_nvme_id_ns, in order; npwg..nows only with NSFEAT bit 4. */
static const char *const ns_keys_perf[] = {
	"nsze",     "ncap",   "nuse",   "nsfeat", "nlbaf",  "flbas",  "mc",       "dpc",
	"dps",      "nmic",   "rescap", "fpi",    "dlfeat", "nawun",  "nawupf",   "nacwu",
	"nabsn",    "nabo",   "nabspf", "noiob",  "nvmcap", "nsattr", "nvmsetid", "npwg",
	"npwa",     "npdg",   "npda",   "nows",   "mssrl",  "mcl",    "msrc",     "nulbaf",
	"anagrpid", "endgid", "eui64",  "nguid",  "lbafs",
};
static const char *const ns_keys[] = {
	"nsze",  "ncap", "nuse",   "nsfeat",   "nlbaf",  "flbas",  "mc",       "dpc",
	"dps",   "nmic", "rescap", "fpi",      "dlfeat", "nawun",  "nawupf",   "nacwu",
	"nabsn", "nabo", "nabspf", "noiob",    "nvmcap", "nsattr", "nvmsetid", "mssrl",
	"mcl",   "msrc", "nulbaf", "anagrpid", "endgid", "eui64",  "nguid",    "lbafs",
	"",      "",     "",       "",         "",
};

static void
test_id_ns(void)
{
	struct nvme_ns_data nd;
	struct json_object *o, *lbafs, *l;

	memset(&nd, 0, sizeof(nd));
	nd.nsze = 131072;
	nd.ncap = 131072;
	nd.nuse = 100;
	nd.nlbaf = 1;
	nd.flbas = 1;
	nd.dlfeat = 9;
	nd.lbaf[0].lbads = 9;
	nd.lbaf[0].rp = 1;
	nd.lbaf[1].lbads = 12;
	nd.lbaf[1].ms = 8;
	nd.nguid[0] = 0xab;
	nd.nguid[15] = 0x01;
	nd.eui64[7] = 0xff;
	o = round_trip(cli_json_id_ns(&nd));
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	check_keys(o, ns_keys, NVP_COUNTOF(ns_keys) - 5);
	CU_ASSERT_STRING_EQUAL(get_str(o, "nvmcap"), "0");
	CU_ASSERT_EQUAL(get_u64(o, "nsze"), 131072);
	CU_ASSERT_EQUAL(get_u64(o, "ncap"), 131072);
	CU_ASSERT_EQUAL(get_u64(o, "nuse"), 100);
	CU_ASSERT_EQUAL(get_u64(o, "nlbaf"), 1);
	CU_ASSERT_EQUAL(get_u64(o, "flbas"), 1);
	CU_ASSERT_EQUAL(get_u64(o, "dlfeat"), 9);
	CU_ASSERT_STRING_EQUAL(get_str(o, "nguid"), "ab000000000000000000000000000001");
	CU_ASSERT_STRING_EQUAL(get_str(o, "eui64"), "00000000000000ff");
	CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(o, "lbafs", &lbafs));
	CU_ASSERT_EQUAL_FATAL(json_object_array_length(lbafs), 2);
	l = json_object_array_get_idx(lbafs, 1);
	CU_ASSERT_EQUAL(get_u64(l, "ds"), 12);
	CU_ASSERT_EQUAL(get_u64(l, "ms"), 8);
	CU_ASSERT_EQUAL(get_u64(l, "rp"), 0);
	json_object_put(o);

	/* NSFEAT bit 4: npwg..nows are valid and printed */
	nd.nsfeat = NVME_NSFEAT_OPTIMAL_PERF;
	nd.npwg = 7;
	o = round_trip(cli_json_id_ns(&nd));
	check_keys(o, ns_keys_perf, NVP_COUNTOF(ns_keys_perf));
	CU_ASSERT_EQUAL(get_u64(o, "npwg"), 7);
	json_object_put(o);
}

static void
test_smart_log(void)
{
	struct nvme_health_information_page sl;
	uint64_t big[2] = { 5, 1 }; /* 2^64 + 5 */
	uint64_t small[2] = { 42, 0 };
	struct json_object *o;
	const char *text;

	memset(&sl, 0, sizeof(sl));
	sl.critical_warning = NVME_CRIT_WARN_TEMPERATURE;
	sl.temperature = 313;
	sl.available_spare = 100;
	sl.available_spare_threshold = 10;
	sl.percentage_used = 3;
	memcpy((char *)&sl + offsetof(struct nvme_health_information_page, data_units_read), big,
	       sizeof(big));
	memcpy((char *)&sl + offsetof(struct nvme_health_information_page, host_write_commands),
	       small, sizeof(small));
	sl.warning_temp_time = 7;
	sl.temp_sensor[1] = 300;
	o = cli_json_smart_log(&sl);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	/* nvme-cli 2.3: 128-bit counters are strings with every digit, even small ones */
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"data_units_read\":\"18446744073709551621\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"host_write_commands\":\"42\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"temperature\":313,"));
	o = round_trip(o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(get_u64(o, "critical_warning"), 2);
	CU_ASSERT_EQUAL(get_u64(o, "temperature"), 313);
	CU_ASSERT_EQUAL(get_u64(o, "avail_spare"), 100);
	CU_ASSERT_EQUAL(get_u64(o, "spare_thresh"), 10);
	CU_ASSERT_EQUAL(get_u64(o, "percent_used"), 3);
	CU_ASSERT_EQUAL(get_u64(o, "host_write_commands"), 42);
	CU_ASSERT_EQUAL(get_u64(o, "host_read_commands"), 0);
	CU_ASSERT_EQUAL(get_u64(o, "warning_temp_time"), 7);
	CU_ASSERT_EQUAL(get_u64(o, "critical_comp_time"), 0);
	CU_ASSERT_EQUAL(get_u64(o, "temperature_sensor_2"), 300);
	CU_ASSERT_FALSE(json_object_object_get_ex(o, "temperature_sensor_1", NULL));
	for (size_t i = 0; i < NVP_COUNTOF(cli_smart_u128); i++) {
		CU_ASSERT_TRUE(json_object_object_get_ex(o, cli_smart_u128[i].json_key, NULL));
	}
	json_object_put(o);
}

static void
test_error_log(void)
{
	struct nvme_error_information_entry e[2];
	struct json_object *o, *errors, *x;

	memset(e, 0, sizeof(e));
	e[0].error_count = 9;
	e[0].sqid = 1;
	e[0].cid = 0x33;
	e[0].status.sc = NVME_SC_INVALID_FIELD;
	e[0].status.p = 1;
	e[0].error_location = 0x28;
	e[0].lba = 1234;
	e[0].nsid = 1;
	e[0].command_specific = 0x55;
	o = round_trip(cli_json_error_log(e, 2));
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(o, "errors", &errors));
	CU_ASSERT_EQUAL_FATAL(json_object_array_length(errors), 2);
	x = json_object_array_get_idx(errors, 0);
	CU_ASSERT_EQUAL(get_u64(x, "error_count"), 9);
	CU_ASSERT_EQUAL(get_u64(x, "sqid"), 1);
	CU_ASSERT_EQUAL(get_u64(x, "cmdid"), 0x33);
	CU_ASSERT_EQUAL(get_u64(x, "status_field"), NVME_SC_INVALID_FIELD); /* phase bit off */
	CU_ASSERT_EQUAL(get_u64(x, "phase_tag"), 1);
	CU_ASSERT_EQUAL(get_u64(x, "parm_error_location"), 0x28);
	CU_ASSERT_EQUAL(get_u64(x, "lba"), 1234);
	CU_ASSERT_EQUAL(get_u64(x, "nsid"), 1);
	CU_ASSERT_EQUAL(get_u64(x, "cs"), 0x55);
	CU_ASSERT_EQUAL(get_u64(x, "vs"), 0);
	CU_ASSERT_EQUAL(get_u64(x, "trtype"), 0);
	CU_ASSERT_EQUAL(get_u64(x, "trtype_spec_info"), 0);
	json_object_put(o);
}

static void
test_fw_log(void)
{
	struct nvme_firmware_page fw;
	struct json_object *o, *slots;

	memset(&fw, 0, sizeof(fw));
	fw.afi = 0x21;
	nvp_strpad(fw.revision[0], "1.0", 8, ' ');
	memcpy(fw.revision[1], "NEWFW2.5", 8);
	o = round_trip(cli_json_fw_log(&fw, "emu0"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(o, "emu0", &slots));
	CU_ASSERT_EQUAL(get_u64(slots, "Active Firmware Slot (afi)"), 0x21);
	/* nvme-cli: the revision's 8 bytes as a little-endian u64, then the text */
	CU_ASSERT_STRING_EQUAL(get_str(slots, "Firmware Rev Slot 2"),
			       "3832055683362538830 (NEWFW2.5)");
	/* padding and other bytes outside '!'..'~' shown as '.' */
	CU_ASSERT_STRING_EQUAL(get_str(slots, "Firmware Rev Slot 1"),
			       "2314885530819505713 (1.0.....)");
	CU_ASSERT_EQUAL(json_object_object_length(slots), 3); /* afi and the two slots */
	json_object_put(o);
}

static void
test_list(void)
{
	struct nvme_ctrlr_data cd;
	struct nvme_ns_data nd;
	struct cli_list_entry e = { .nsid = 1,
				    .device_path = "0000:01:00.0/ns1",
				    .ctrl_name = "nvp0",
				    .address = "0000:01:00.0",
				    .transport = "pcie" };
	static const char *const list_keys[] = {
		"NameSpace", "DevicePath", "Firmware",     "ModelNumber", "SerialNumber",
		"UsedBytes", "MaximumLBA", "PhysicalSize", "SectorSize",
	};
	static const char *const ctrl_keys[] = {
		"Controller", "SerialNumber", "ModelNumber", "Firmware",
		"Transport",  "Address",      "Namespaces",  "Paths",
	};
	struct json_object *ss, *c, *ns;
	struct json_object *o, *devs, *d;

	fill_ctrlr(&cd);
	memset(&nd, 0, sizeof(nd));
	nd.nsze = 1000;
	nd.nuse = 10;
	nd.flbas = 1;
	nd.nlbaf = 1;
	nd.lbaf[0].lbads = 9;
	nd.lbaf[1].lbads = 12;
	e.cdata = &cd;
	e.nsdata = &nd;
	o = round_trip(cli_json_list(&e, 1, false));
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(o, "Devices", &devs));
	CU_ASSERT_EQUAL_FATAL(json_object_array_length(devs), 1);
	d = json_object_array_get_idx(devs, 0);
	check_keys(d, list_keys, NVP_COUNTOF(list_keys));
	CU_ASSERT_EQUAL(get_u64(d, "NameSpace"), 1);
	CU_ASSERT_STRING_EQUAL(get_str(d, "DevicePath"), "0000:01:00.0/ns1");
	CU_ASSERT_STRING_EQUAL(get_str(d, "Firmware"), "1.0");
	CU_ASSERT_STRING_EQUAL(get_str(d, "ModelNumber"), "nvpoll software NVMe controller");
	CU_ASSERT_STRING_EQUAL(get_str(d, "SerialNumber"), "SN1234");
	CU_ASSERT_EQUAL(get_u64(d, "UsedBytes"), 10 * 4096);
	CU_ASSERT_EQUAL(get_u64(d, "MaximumLBA"), 1000);
	CU_ASSERT_EQUAL(get_u64(d, "PhysicalSize"), 1000 * 4096);
	CU_ASSERT_EQUAL(get_u64(d, "SectorSize"), 4096);
	json_object_put(o);

	/* list -v: Devices[0].Subsystems[0].Controllers[0].Namespaces[0] */
	o = round_trip(cli_json_list(&e, 1, true));
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(o, "Devices", &devs));
	d = json_object_array_get_idx(devs, 0);
	CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(d, "Subsystems", &ss));
	CU_ASSERT_EQUAL_FATAL(json_object_array_length(ss), 1);
	ss = json_object_array_get_idx(ss, 0);
	CU_ASSERT_STRING_EQUAL(get_str(ss, "SubsystemNQN"), "nqn.2026-01.io.nvpoll:emu0");
	CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(ss, "Controllers", &c));
	c = json_object_array_get_idx(c, 0);
	check_keys(c, ctrl_keys, NVP_COUNTOF(ctrl_keys));
	CU_ASSERT_STRING_EQUAL(get_str(c, "Address"), "0000:01:00.0");
	CU_ASSERT_STRING_EQUAL(get_str(c, "Transport"), "pcie");
	CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(c, "Namespaces", &ns));
	CU_ASSERT_EQUAL_FATAL(json_object_array_length(ns), 1);
	CU_ASSERT_EQUAL(get_u64(json_object_array_get_idx(ns, 0), "NSID"), 1);
	json_object_put(o);

	o = round_trip(cli_json_list(NULL, 0, false));
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(o, "Devices", &devs));
	CU_ASSERT_EQUAL(json_object_array_length(devs), 0);
	json_object_put(o);
}

static void
test_list_ns_and_feature(void)
{
	uint32_t ids[] = { 1, 3 };
	struct json_object *o, *list;

	o = round_trip(cli_json_list_ns(ids, 2));
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(o, "nsid_list", &list));
	CU_ASSERT_EQUAL_FATAL(json_object_array_length(list), 2);
	CU_ASSERT_EQUAL(get_u64(json_object_array_get_idx(list, 1), "nsid"), 3);
	json_object_put(o);

	o = round_trip(cli_json_feature(NVME_FEAT_VOLATILE_WRITE_CACHE, 1));
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(get_u64(o, "feature_id"), 6);
	CU_ASSERT_EQUAL(get_u64(o, "value"), 1);
	CU_ASSERT_STRING_EQUAL(get_str(o, "name"), "Volatile Write Cache");
	json_object_put(o);
}

static void
test_regs(void)
{
	union nvme_cap_register cap = { .raw = 0 };
	union nvme_vs_register vs = { .raw = NVME_VERSION(1, 4, 0) };
	union nvme_csts_register csts = { .raw = 0 };
	char buf[4096] = "";
	struct json_object *o;
	FILE *f;

	cap.bits.mqes = 1023;
	cap.bits.to = 20;
	cap.bits.dstrd = 2;
	cap.bits.css = NVME_CAP_CSS_NVM;
	cap.bits.mpsmax = 4;
	csts.bits.rdy = 1;
	o = round_trip(cli_json_regs(cap, vs, csts));
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(get_u64(o, "cap"), cap.raw);
	CU_ASSERT_EQUAL(get_u64(o, "vs"), 0x10400);
	CU_ASSERT_EQUAL(get_u64(o, "csts"), 1);
	json_object_put(o);

	f = fmemopen(buf, sizeof(buf) - 1, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	cli_print_regs(f, cap, vs, csts, true);
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "(MQES): 1024"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "(TO): 10000 ms"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "(DSTRD): 16 bytes"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "(MPSMAX): 65536 bytes"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "NVMe specification version 1.4.0"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "(RDY): Yes"));
}

static void
test_helpers(void)
{
	uint64_t v[2];
	char buf[64];
	char field[8];

	v[0] = 0;
	v[1] = 0;
	CU_ASSERT_STRING_EQUAL(cli_u128_str(buf, sizeof(buf), v), "0");
	v[0] = 1234567890123ull;
	CU_ASSERT_STRING_EQUAL(cli_u128_str(buf, sizeof(buf), v), "1234567890123");
	v[0] = 0;
	v[1] = 1;
	CU_ASSERT_STRING_EQUAL(cli_u128_str(buf, sizeof(buf), v), "18446744073709551616");
	v[0] = UINT64_MAX;
	v[1] = UINT64_MAX;
	CU_ASSERT_STRING_EQUAL(cli_u128_str(buf, sizeof(buf), v),
			       "340282366920938463463374607431768211455");
	/* too small a buffer: truncated, still terminated */
	CU_ASSERT_STRING_EQUAL(cli_u128_str(buf, 4, v), "340");

	memcpy(field, "AB      ", 8);
	CU_ASSERT_STRING_EQUAL(cli_strfield(buf, sizeof(buf), field, sizeof(field)), "AB");
	memcpy(field, "ABCDEFGH", 8);
	CU_ASSERT_STRING_EQUAL(cli_strfield(buf, sizeof(buf), field, sizeof(field)), "ABCDEFGH");
	CU_ASSERT_STRING_EQUAL(cli_strfield(buf, 4, field, sizeof(field)), "ABC");
	memset(field, 0, sizeof(field));
	field[0] = 'x';
	CU_ASSERT_STRING_EQUAL(cli_strfield(buf, sizeof(buf), field, sizeof(field)), "x");
}

/* The normal output also runs over the same structures without trouble. */
static void
test_print_smoke(void)
{
	char *buf = calloc(1, 65536);
	struct nvme_ctrlr_data cd;
	struct nvme_ns_data nd;
	FILE *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	f = fmemopen(buf, 65535, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fill_ctrlr(&cd);
	memset(&nd, 0, sizeof(nd));
	nd.nlbaf = 1;
	nd.flbas = 1;
	nd.lbaf[0].lbads = 9;
	nd.lbaf[1].lbads = 12;
	cli_print_id_ctrl(f, &cd, true);
	cli_print_id_ns(f, &nd, 1, true);
	cli_print_feature(f, NVME_FEAT_VOLATILE_WRITE_CACHE, 0, 1, true);
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "Format NVM Supported"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "Firmware Download and Commit Supported"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "lbads:12 rp:0 (in use)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "Volatile Write Cache Enable (WCE): Enabled"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "wctemp    : 343 K (70 C)"));
	free(buf);
}

int
main(void)
{
	static const struct ut_test tests[] = {
		UT_TEST(test_id_ctrl),
		UT_TEST(test_id_ns),
		UT_TEST(test_smart_log),
		UT_TEST(test_error_log),
		UT_TEST(test_fw_log),
		UT_TEST(test_list),
		UT_TEST(test_list_ns_and_feature),
		UT_TEST(test_regs),
		UT_TEST(test_helpers),
		UT_TEST(test_print_smoke),
	};

	return ut_run("cli_json", tests, NVP_COUNTOF(tests));
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Options of the software controller: defaults, the "key=value" parser, validation and
 * the usage table. The table below is the single source of keys, ranges and help text.
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "emu_internal.h"

#define EMU_NS_SIZE_MAX (1ull << 44) /* 16 TiB */

enum opt_kind {
	OPT_U32, /* bounded integer stored in a uint32_t */
	OPT_BOOL,
	OPT_SIZE,
	OPT_NAME,
	OPT_LBA,
	OPT_BACKEND,
	OPT_FILE,
	OPT_FAULT,
	OPT_GC,
	OPT_PRESET, /* device model preset: a list of model keys (emu_preset.c) */
	OPT_DIST,   /* latency distribution string, char[NVP_EMU_DIST_MAX] */
	OPT_U64,
};

struct opt_desc {
	const char *key;
	enum opt_kind kind;
	size_t off;
	uint64_t min;
	uint64_t max;
	const char *def;
	const char *help;
};

#define U32(key, field, min, max, def, help)                                            \
	{                                                                               \
		key, OPT_U32, offsetof(struct nvp_emu_opts, field), min, max, def, help \
	}

static const struct opt_desc g_opts[] = {
	{ "name", OPT_NAME, 0, 1, NVP_EMU_NAME_MAX - 1, "emuN", "device name, unique" },
	U32("nn", nn, 1, NVP_EMU_MAX_NS, "1", "number of namespaces"),
	{ "size", OPT_SIZE, 0, 4096, EMU_NS_SIZE_MAX, "64M",
	  "capacity of each namespace in bytes (k/M/G/T), a multiple of 4k" },
	{ "lba", OPT_LBA, 0, 0, 0, "512",
	  "LBA data size 512 or 4096; '/'-separated list gives one per namespace" },
	{ "backend", OPT_BACKEND, 0, 0, 0, "ram",
	  "ram | null | file:PATH (one file per namespace, PATH.nsN)" },
	{ "file", OPT_FILE, 0, 0, 0, "", "PATH: the same as backend=file:PATH, without a ':'" },
	U32("mqes", mqes, 1, 65535, "1023", "CAP.MQES, 0's based max queue entries"),
	U32("dstrd", dstrd, 0, 15, "0", "CAP.DSTRD doorbell stride"),
	U32("to", to, 1, 255, "20", "CAP.TO, ready timeout in 500 ms units"),
	U32("mpsmax", mpsmax, 0, 15, "4", "CAP.MPSMAX (MPSMIN is 0: 4 KiB pages)"),
	U32("rdy_delay_ms", rdy_delay_ms, 0, 60000, "0",
	    "delay between CC.EN changing and CSTS.RDY following it"),
	U32("queues", max_queues, 1, 1024, "64", "I/O queue pairs the controller supports"),
	U32("mdts", mdts, 0, 16, "5", "MDTS (2^mdts 4 KiB pages per command, 0 = unlimited)"),
	U32("read_us", read_us, 0, 10000000, "0", "service time of a read, us"),
	U32("write_us", write_us, 0, 10000000, "0", "service time of a write, us"),
	U32("channels", channels, 1, 256, "4", "commands serviced at once"),
	U32("slots", slots, 0, 4096, "0", "commands held at once (0 = channels)"),
	{ "vwc", OPT_BOOL, offsetof(struct nvp_emu_opts, vwc), 0, 1, "1",
	  "volatile write cache present" },
	{ "prefault", OPT_BOOL, offsetof(struct nvp_emu_opts, prefault), 0, 1, "1",
	  "ram: fault the memory in at creation (0: sparse, first touches fault)" },
	{ "dbbuf", OPT_BOOL, offsetof(struct nvp_emu_opts, dbbuf), 0, 1, "1",
	  "shadow doorbells (Doorbell Buffer Config) offered" },
	U32("fw_slots", fw_slots, 1, 7, "3", "firmware slots; slot 1 is read-only"),
	{ "fault", OPT_FAULT, 0, 0, 0, "none",
	  "drop_cpl, error, slow, cfs, all_ones, rdy_never, power_cut, bad_cid, dup_cpl, "
	  "wrong_cq, bad_phase, bad_sqhd" },
	U32("fault_count", fault_count, 0, UINT32_MAX, "1",
	    "commands the fault applies to (command faults)"),
	U32("fault_skip", fault_skip, 0, UINT32_MAX, "0",
	    "I/O commands to let pass before the fault applies"),
	U32("fault_arg", fault_arg, 0, UINT32_MAX, "0",
	    "error: status (sct << 8 | sc); slow: extra us"),
	U32("streams", streams, 0, EMU_FTL_MAX_STREAMS, "0",
	    "NVMe streams offered (MSL); 0 = no directives"),
	{ "ftl", OPT_BOOL, offsetof(struct nvp_emu_opts, ftl), 0, 1, "0",
	  "FTL model behind each namespace (write amplification, log page C0h)" },
	U32("ftl_ppb", ftl_ppb, 2, EMU_FTL_MAX_PPB, "64", "FTL: 4 KiB pages per erase block"),
	U32("ftl_op", ftl_op, 1, 400, "7", "FTL: over-provisioning, percent"),
	{ "ftl_gc", OPT_GC, 0, 0, 0, "greedy",
	  "FTL: GC victim choice, greedy | cb (cost-benefit)" },
	U32("ftl_gc_us", ftl_gc_us, 0, 100000, "0",
	    "FTL: channel time per page GC relocates, us (added to the write's service time)"),
	{ "preset", OPT_PRESET, 0, 0, 0, "none",
	  "device model preset: scm, tlc, qlc (below; doc/emu_presets.md)" },
	{ "read_lat", OPT_DIST, offsetof(struct nvp_emu_opts, read_lat), 0, 0, "read_us",
	  "read latency: 80us | uniform:A:B | exp:MEAN | lognormal:P50:P99[:P99.9] | "
	  "bimodal:A:B:PCT%" },
	{ "write_lat", OPT_DIST, offsetof(struct nvp_emu_opts, write_lat), 0, 0, "write_us",
	  "write latency (into the write cache when there is one), same forms" },
	U32("xfer_mbps", xfer_mbps, 0, 1000000, "0",
	    "per-channel transfer rate MB/s for bytes past 4 KiB (0 = free)"),
	U32("wcache_mb", wcache_mb, 0, 1048576, "0", "write cache MiB (needs prog_mbps)"),
	U32("power_loss", power_loss, 0, 2, "0",
	    "file backend with vwc=1: a power cut loses unflushed writes (2: Flush lies)"),
	U32("prog_mbps", prog_mbps, 0, 1000000, "0",
	    "device program rate MB/s draining the cache (0 = none)"),
	U32("prog_us", prog_us, 0, 1000000, "0",
	    "one program operation: reads behind it on its channel wait"),
	U32("iu_kb", iu_kb, 0, 1024, "0",
	    "indirection unit KiB: a write programs every unit it touches (0 = exact)"),
	{ "read_prio", OPT_BOOL, offsetof(struct nvp_emu_opts, read_prio), 0, 1, "0",
	  "reads go ahead of the writes waiting on their channel for cache room" },
	{ "prog_suspend", OPT_BOOL, offsetof(struct nvp_emu_opts, prog_suspend), 0, 1, "0",
	  "a read suspends the program operation in progress (waits suspend_us)" },
	U32("suspend_us", suspend_us, 0, 100000, "0",
	    "prog_suspend: time for a program operation to pause, us"),
	U32("suspend_max", suspend_max, 0, 1000, "0",
	    "prog_suspend: suspends one program operation allows (0 = no limit)"),
	{ "read_busy", OPT_BOOL, offsetof(struct nvp_emu_opts, read_busy), 0, 1, "0",
	  "a read holds its channel: reads there take turns (channels bound read IOPS)" },
	{ "seed", OPT_U64, offsetof(struct nvp_emu_opts, seed), 0, UINT64_MAX, "1",
	  "seed of the service-time generator" },
	U32("ms", ms, 0, 256, "0",
	    "metadata bytes per block: formats 512+ms and 4096+ms offered and used"),
	{ "mset", OPT_BOOL, offsetof(struct nvp_emu_opts, mset), 0, 1, "0",
	  "with ms: 1 = metadata interleaved (extended LBA), 0 = separate (MPTR)" },
	U32("fdp", fdp, 0, EMU_FTL_MAX_STREAMS, "0",
	    "Flexible Data Placement: reclaim unit handles (0 = no FDP); excludes streams"),
};

static const char *const g_fault_names[] = {
	[NVP_EMU_FAULT_NONE] = "none",
	[NVP_EMU_FAULT_DROP_CPL] = "drop_cpl",
	[NVP_EMU_FAULT_ERROR] = "error",
	[NVP_EMU_FAULT_SLOW] = "slow",
	[NVP_EMU_FAULT_CFS] = "cfs",
	[NVP_EMU_FAULT_ALL_ONES] = "all_ones",
	[NVP_EMU_FAULT_RDY_NEVER] = "rdy_never",
	[NVP_EMU_FAULT_POWER_CUT] = "power_cut",
	[NVP_EMU_FAULT_BAD_CID] = "bad_cid",
	[NVP_EMU_FAULT_DUP_CPL] = "dup_cpl",
	[NVP_EMU_FAULT_WRONG_CQ] = "wrong_cq",
	[NVP_EMU_FAULT_BAD_PHASE] = "bad_phase",
	[NVP_EMU_FAULT_BAD_SQHD] = "bad_sqhd",
	[NVP_EMU_FAULT_ADMIN_ERROR] = "admin_error",
	[NVP_EMU_FAULT_ADMIN_BAD_PHASE] = "admin_bad_phase",
};

const char *
emu_fault_name(enum nvp_emu_fault_type type)
{
	if ((unsigned)type >= NVP_COUNTOF(g_fault_names)) {
		return "unknown";
	}
	return g_fault_names[type];
}

void
nvp_emu_opts_init(struct nvp_emu_opts *opts, size_t opts_size)
{
	struct nvp_emu_opts d;

	memset(&d, 0, sizeof(d));
	d.opts_size = opts_size < sizeof(d) ? opts_size : sizeof(d);
	d.nn = 1;
	d.ns_size = 64ull << 20;
	for (uint32_t i = 0; i < NVP_EMU_MAX_NS; i++) {
		d.lba_size[i] = 512;
	}
	d.backend = NVP_EMU_BACKEND_RAM;
	d.mqes = 1023;
	d.to = 20;
	d.mpsmax = 4;
	d.max_queues = 64;
	d.mdts = 5;
	d.channels = 4;
	d.vwc = true;
	d.dbbuf = true;
	d.fw_slots = 3;
	d.fault_count = 1;
	d.prefault = true;
	d.ftl_ppb = 64;
	d.ftl_op = 7;
	d.seed = 1;
	if (opts != NULL) {
		memcpy(opts, &d, d.opts_size);
	}
}

static int
opt_error(char *err, size_t errlen, const char *key, const char *val, const char *why)
{
	if (err != NULL && errlen > 0) {
		snprintf(err, errlen, "emu option '%s': bad value '%s': %s", key, val, why);
	}
	return -EINVAL;
}

static bool
name_is_valid(const char *s)
{
	if (*s == '\0') {
		return false;
	}
	for (; *s != '\0'; s++) {
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.') {
			return false;
		}
	}
	return true;
}

static int
parse_lba_list(struct nvp_emu_opts *o, const char *val, char *err, size_t errlen)
{
	uint32_t sizes[NVP_EMU_MAX_NS];
	uint32_t n = 0;
	const char *p = val;

	while (true) {
		char tok[16];
		size_t len = strcspn(p, "/");
		uint64_t v;

		if (len == 0 || len >= sizeof(tok) || n == NVP_EMU_MAX_NS) {
			return opt_error(err, errlen, "lba", val,
					 "expected 512 or 4096, or a '/' list of up to 16");
		}
		memcpy(tok, p, len);
		tok[len] = '\0';
		if (nvp_strtou64(tok, 512, 4096, &v) != 0 || (v != 512 && v != 4096)) {
			return opt_error(err, errlen, "lba", val, "LBA sizes are 512 or 4096");
		}
		sizes[n++] = (uint32_t)v;
		if (p[len] == '\0') {
			break;
		}
		p += len + 1;
	}
	for (uint32_t i = 0; i < NVP_EMU_MAX_NS; i++) {
		o->lba_size[i] = sizes[i < n ? i : n - 1];
	}
	return 0;
}

static int
set_file_backend(struct nvp_emu_opts *o, const char *key, const char *val, const char *path,
		 char *err, size_t errlen)
{
	if (path[0] == '\0') {
		return opt_error(err, errlen, key, val, "expected a file path");
	}
	if (strlen(path) >= sizeof(o->backend_path) - 8) {
		return opt_error(err, errlen, key, val, "file path too long");
	}
	o->backend = NVP_EMU_BACKEND_FILE;
	nvp_strlcpy(o->backend_path, path, sizeof(o->backend_path));
	return 0;
}

static int
parse_backend(struct nvp_emu_opts *o, const char *val, char *err, size_t errlen)
{
	if (strcasecmp(val, "ram") == 0) {
		o->backend = NVP_EMU_BACKEND_RAM;
	} else if (strcasecmp(val, "null") == 0) {
		o->backend = NVP_EMU_BACKEND_NULL;
	} else if (strncasecmp(val, "file:", 5) == 0 && val[5] != '\0') {
		return set_file_backend(o, "backend", val, val + 5, err, errlen);
	} else {
		return opt_error(err, errlen, "backend", val, "expected ram, null or file:PATH");
	}
	return 0;
}

static int
parse_fault(struct nvp_emu_opts *o, const char *val, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < NVP_COUNTOF(g_fault_names); i++) {
		if (strcasecmp(val, g_fault_names[i]) == 0) {
			o->fault = (enum nvp_emu_fault_type)i;
			return 0;
		}
	}
	return opt_error(err, errlen, "fault", val,
			 "expected none, drop_cpl, error, slow, cfs, all_ones, rdy_never, "
			 "power_cut, bad_cid, dup_cpl, wrong_cq, bad_phase, bad_sqhd, "
			 "admin_error or admin_bad_phase");
}

static int
parse_model(struct nvp_emu_opts *o, const struct opt_desc *d, const char *val, char *err,
	    size_t errlen)
{
	struct emu_dist dist;
	uint64_t v;

	switch (d->kind) {
	case OPT_DIST:
		if (emu_dist_parse(val, &dist) != 0) {
			return opt_error(err, errlen, d->key, val,
					 "expected 80us, fixed:80us, uniform:50us:150us, exp:80us, "
					 "lognormal:P50:P99[:P99.9] (each >= the one before) or "
					 "bimodal:80us:2ms:1%");
		}
		nvp_strlcpy((char *)o + d->off, val, NVP_EMU_DIST_MAX);
		return 0;
	default:
		if (nvp_strtou64(val, d->min, d->max, &v) != 0) {
			return opt_error(err, errlen, d->key, val, "expected an unsigned integer");
		}
		*(uint64_t *)(void *)((uint8_t *)o + d->off) = v;
		return 0;
	}
}

static int
parse_u32(struct nvp_emu_opts *o, const struct opt_desc *d, const char *val, char *err,
	  size_t errlen)
{
	char why[64];
	uint64_t v;

	if (nvp_strtou64(val, d->min, d->max, &v) != 0) {
		snprintf(why, sizeof(why), "expected an integer in %llu..%llu",
			 (unsigned long long)d->min, (unsigned long long)d->max);
		return opt_error(err, errlen, d->key, val, why);
	}
	*(uint32_t *)(void *)((uint8_t *)o + d->off) = (uint32_t)v;
	return 0;
}

static int
parse_one(struct nvp_emu_opts *o, const struct opt_desc *d, const char *val, char *err,
	  size_t errlen)
{
	uint64_t v;
	bool b;

	switch (d->kind) {
	case OPT_U32:
		return parse_u32(o, d, val, err, errlen);
	case OPT_BOOL:
		if (nvp_parse_bool(val, &b) != 0) {
			return opt_error(err, errlen, d->key, val, "expected 0/1, yes/no, on/off");
		}
		*(bool *)(void *)((uint8_t *)o + d->off) = b;
		return 0;
	case OPT_SIZE:
		if (nvp_parse_size(val, &v) != 0 || v < d->min || v > d->max || (v & 4095u)) {
			return opt_error(err, errlen, d->key, val,
					 "expected a multiple of 4k between 4k and 16T");
		}
		o->ns_size = v;
		return 0;
	case OPT_NAME:
		if (strlen(val) >= NVP_EMU_NAME_MAX || !name_is_valid(val)) {
			return opt_error(err, errlen, d->key, val,
					 "1..31 characters of [A-Za-z0-9_.-]");
		}
		nvp_strlcpy(o->name, val, sizeof(o->name));
		return 0;
	case OPT_LBA:
		return parse_lba_list(o, val, err, errlen);
	case OPT_BACKEND:
		return parse_backend(o, val, err, errlen);
	case OPT_FILE:
		return set_file_backend(o, d->key, val, val, err, errlen);
	case OPT_FAULT:
		return parse_fault(o, val, err, errlen);
	case OPT_GC:
		if (strcasecmp(val, "greedy") == 0 || strcasecmp(val, "cb") == 0 ||
		    strcasecmp(val, "cost-benefit") == 0) {
			o->ftl_gc = strcasecmp(val, "greedy") == 0 ? 0 : 1;
			return 0;
		}
		return opt_error(err, errlen, d->key, val, "expected greedy or cb");
	case OPT_PRESET: /* parse_kv() applies presets */
		return -EINVAL;
	case OPT_DIST:
	case OPT_U64:
		return parse_model(o, d, val, err, errlen);
	}
	return -EINVAL;
}

struct parse_ctx {
	struct nvp_emu_opts *opts;
	char *err;
	size_t errlen;
	bool in_preset;
};

static int parse_kv(void *arg, const char *key, const char *val);

/* preset=NAME: the preset's own list of model keys, parsed as if given here. */
static int
apply_preset(struct parse_ctx *ctx, const char *val)
{
	const struct emu_preset *p = emu_preset_find(val);
	char why[96];
	int rc;

	if (p == NULL || ctx->in_preset) {
		snprintf(why, sizeof(why), "expected %s", emu_preset_names());
		return opt_error(ctx->err, ctx->errlen, "preset", val, why);
	}
	ctx->in_preset = true;
	rc = nvp_kv_parse(p->opts, parse_kv, ctx);
	ctx->in_preset = false;
	if (rc != 0) {
		return -EINVAL;
	}
	nvp_strlcpy(ctx->opts->preset, p->name, sizeof(ctx->opts->preset));
	return 0;
}

static int
parse_kv(void *arg, const char *key, const char *val)
{
	struct parse_ctx *ctx = arg;

	for (uint32_t i = 0; i < NVP_COUNTOF(g_opts); i++) {
		if (strcasecmp(key, g_opts[i].key) != 0) {
			continue;
		}
		if (g_opts[i].kind == OPT_PRESET) {
			return apply_preset(ctx, val);
		}
		return parse_one(ctx->opts, &g_opts[i], val, ctx->err, ctx->errlen);
	}
	if (ctx->err != NULL && ctx->errlen > 0) {
		snprintf(ctx->err, ctx->errlen,
			 "emu: unknown option '%s' (the software controller's options are listed "
			 "by 'nvp help emu' and 'nvp_perf --help')",
			 key);
	}
	return -EINVAL;
}

int
nvp_emu_opts_parse(struct nvp_emu_opts *opts, const char *str, char *err, size_t errlen)
{
	struct parse_ctx ctx = { opts, err, errlen, false };
	struct nvp_emu_opts tmp;
	int rc;

	if (err != NULL && errlen > 0) {
		err[0] = '\0';
	}
	if (opts == NULL) {
		return -EINVAL;
	}
	if (str == NULL) {
		return 0;
	}
	/* Parse into a copy so a failure leaves @opts untouched. */
	memcpy(&tmp, opts, sizeof(tmp));
	ctx.opts = &tmp;
	rc = nvp_kv_parse(str, parse_kv, &ctx);
	if (rc != 0) {
		if (err != NULL && errlen > 0 && err[0] == '\0') {
			snprintf(err, errlen, "emu: malformed option string '%s'", str);
		}
		return -EINVAL;
	}
	memcpy(opts, &tmp, sizeof(tmp));
	return 0;
}

static int
check_range(const char *key, uint64_t v, uint64_t min, uint64_t max, char *err, size_t errlen)
{
	char val[24];

	if (v >= min && v <= max) {
		return 0;
	}
	snprintf(val, sizeof(val), "%llu", (unsigned long long)v);
	if (err != NULL && errlen > 0) {
		snprintf(err, errlen, "emu option '%s': bad value '%s': expected %llu..%llu", key,
			 val, (unsigned long long)min, (unsigned long long)max);
	}
	return -EINVAL;
}

static int
validate_u32s(const struct nvp_emu_opts *o, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < NVP_COUNTOF(g_opts); i++) {
		const struct opt_desc *d = &g_opts[i];
		uint32_t v;

		if (d->kind != OPT_U32) {
			continue;
		}
		v = *(const uint32_t *)(const void *)((const uint8_t *)o + d->off);
		if (check_range(d->key, v, d->min, d->max, err, errlen) != 0) {
			return -EINVAL;
		}
	}
	return 0;
}

static int
validate_model(const struct nvp_emu_opts *o, char *err, size_t errlen)
{
	struct emu_dist d;

	if (o->read_lat[0] != '\0' && emu_dist_parse(o->read_lat, &d) != 0) {
		return opt_error(err, errlen, "read_lat", o->read_lat, "not a distribution");
	}
	if (o->write_lat[0] != '\0' && emu_dist_parse(o->write_lat, &d) != 0) {
		return opt_error(err, errlen, "write_lat", o->write_lat, "not a distribution");
	}
	if (o->power_loss != 0 && (o->backend != NVP_EMU_BACKEND_FILE || !o->vwc)) {
		return opt_error(err, errlen, "power_loss", o->power_loss == 1 ? "1" : "2",
				 "the power-loss model needs backend=file:PATH and vwc=1");
	}
	if (o->wcache_mb != 0 && o->prog_mbps == 0) {
		return opt_error(err, errlen, "wcache_mb", "(without prog_mbps)",
				 "a write cache needs a program rate (prog_mbps) to drain it");
	}
	return 0;
}

/* Check options built in code (the parser already checked what it parsed). */
int
emu_opts_validate(const struct nvp_emu_opts *o, char *err, size_t errlen)
{
	if (validate_u32s(o, err, errlen) != 0 ||
	    check_range("size", o->ns_size, 4096, EMU_NS_SIZE_MAX, err, errlen) != 0) {
		return -EINVAL;
	}
	if (o->ns_size & 4095u) {
		return opt_error(err, errlen, "size", "(not a multiple of 4k)",
				 "expected a multiple of 4k");
	}
	for (uint32_t i = 0; i < o->nn; i++) {
		if (o->lba_size[i] != 512 && o->lba_size[i] != 4096) {
			return opt_error(err, errlen, "lba", "(not 512/4096)",
					 "LBA sizes are 512 or 4096");
		}
	}
	if (o->name[0] != '\0' && !name_is_valid(o->name)) {
		return opt_error(err, errlen, "name", o->name,
				 "1..31 characters of [A-Za-z0-9_.-]");
	}
	if ((unsigned)o->backend > NVP_EMU_BACKEND_FILE ||
	    (o->backend == NVP_EMU_BACKEND_FILE && o->backend_path[0] == '\0')) {
		return opt_error(err, errlen, "backend", "?", "expected ram, null or file:PATH");
	}
	if (o->ftl_gc > 1) {
		return opt_error(err, errlen, "ftl_gc", "?", "expected greedy or cb");
	}
	if (o->fdp != 0 && o->streams != 0) {
		return opt_error(
			err, errlen, "fdp", "(with streams)",
			"FDP and Streams exclude each other: set one of fdp= and streams=");
	}
	if (validate_model(o, err, errlen) != 0) {
		return -EINVAL;
	}
	if ((unsigned)o->fault >= NVP_COUNTOF(g_fault_names)) {
		return opt_error(err, errlen, "fault", "?", "unknown fault type");
	}
	if (o->fault == NVP_EMU_FAULT_ERROR && (o->fault_arg == 0 || o->fault_arg > 0x7ff)) {
		if (err != NULL && errlen > 0) {
			snprintf(
				err, errlen,
				"emu option 'fault=error' needs fault_arg=STATUS, the status to "
				"complete with (sct << 8 | sc, 0x001..0x7ff, e.g. fault_arg=0x281)%s",
				o->fault_arg == 0 ? "" : ": the one given is above 0x7ff");
		}
		return -EINVAL;
	}
	return 0;
}

void
nvp_emu_opts_usage(FILE *f)
{
	fprintf(f, "Software NVMe controller options (key=value, separated by commas or "
		   "spaces):\n");
	for (uint32_t i = 0; i < NVP_COUNTOF(g_opts); i++) {
		const struct opt_desc *d = &g_opts[i];
		char kv[40];

		snprintf(kv, sizeof(kv), "%s=%s", d->key, d->def);
		fprintf(f, "  %-20s %s", kv, d->help);
		if (d->kind == OPT_U32) {
			fprintf(f, " (%llu..%llu)", (unsigned long long)d->min,
				(unsigned long long)d->max);
		}
		fputc('\n', f);
	}
	emu_presets_usage(f);
}

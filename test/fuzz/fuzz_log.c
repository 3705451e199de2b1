/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz nvp's decoders of what a device returns (cli_print.c, cli_json.c): byte 0 picks
 * the page (Identify Controller, Identify Namespace, SMART / Health, Error Information with
 * 1-64 entries, Firmware Slot, a feature value, the registers), the rest is its content,
 * zero padded to the structure's size. Both the text (plain and human-readable) and the
 * JSON forms are built and written to /dev/null. A decoder must not read outside the
 * structure (ASan) or trip UBSan, whatever the bytes.
 */
#include "nvp_config.h"

#include "../app/cli/cli_print.c"
#include "../app/cli/cli_json.c"

#include "fuzz.h"

#define FZ_MAX_ERR 64

static FILE *g_null;

static void
fz_json(struct json_object *obj)
{
	FZ_CHECK(obj != NULL, "JSON decoder returned NULL");
	cli_json_print(g_null, obj);
	json_object_put(obj);
}

static void
fz_decode(uint8_t kind, const uint8_t *page, uint32_t n)
{
	union nvme_cap_register cap;
	union nvme_vs_register vs;
	union nvme_csts_register csts;
	uint32_t v;

	switch (kind % 7) {
	case 0:
		cli_print_id_ctrl(g_null, (const void *)page, n & 1);
		fz_json(cli_json_id_ctrl((const void *)page));
		break;
	case 1:
		cli_print_id_ns(g_null, (const void *)page, n, n & 1);
		fz_json(cli_json_id_ns((const void *)page));
		break;
	case 2:
		cli_print_smart_log(g_null, (const void *)page, n, "fz0", n & 1);
		fz_json(cli_json_smart_log((const void *)page));
		break;
	case 3:
		n = n % FZ_MAX_ERR + 1;
		cli_print_error_log(g_null, (const void *)page, n, "fz0");
		fz_json(cli_json_error_log((const void *)page, n));
		break;
	case 4:
		cli_print_fw_log(g_null, (const void *)page, "fz0");
		fz_json(cli_json_fw_log((const void *)page, "fz0"));
		break;
	case 5:
		memcpy(&v, page, sizeof(v));
		cli_print_feature(g_null, page[4], page[5], v, n & 1);
		fz_json(cli_json_feature(page[4], v));
		break;
	default:
		memcpy(&cap.raw, page, sizeof(cap.raw));
		memcpy(&vs.raw, page + 8, sizeof(vs.raw));
		memcpy(&csts.raw, page + 12, sizeof(csts.raw));
		cli_print_regs(g_null, cap, vs, csts, n & 1);
		fz_json(cli_json_regs(cap, vs, csts));
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The largest page: 64 error entries of 64 bytes, or a 4 KiB identify. */
	size_t len = NVP_MAX(sizeof(struct nvme_error_information_entry) * FZ_MAX_ERR, 4096);
	uint8_t *page;
	uint32_t n;

	if (g_null == NULL) {
		g_null = fopen("/dev/null", "w");
		FZ_CHECK(g_null != NULL, "cannot open /dev/null");
	}
	if (size < 5) {
		return 0;
	}
	memcpy(&n, data + 1, sizeof(n));
	page = calloc(1, len);
	FZ_CHECK(page != NULL, "out of memory");
	memcpy(page, data + 5, NVP_MIN(size - 5, len));
	fz_decode(data[0], page, n);
	free(page);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The write lifetime hints' names: the one table every layer and tool reads them from
 * (bdev flags, nvp_perf's --write-hint and hint=, JSON output). A file of its own with
 * no other dependency, so a tool linking only this table does not pull in the driver.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <strings.h>

#include "nvpoll/nvme.h"

static const char *const g_hint_names[NVP_NVME_WRITE_HINT_COUNT] = {
	"none", "short", "medium", "long", "extreme",
};

const char *
nvp_nvme_write_hint_name(enum nvp_nvme_write_hint hint)
{
	return (unsigned)hint < NVP_NVME_WRITE_HINT_COUNT ? g_hint_names[hint] : NULL;
}

int
nvp_nvme_write_hint_parse(const char *str, enum nvp_nvme_write_hint *hint)
{
	if (str == NULL || hint == NULL) {
		return -EINVAL;
	}
	for (uint32_t i = 0; i < NVP_NVME_WRITE_HINT_COUNT; i++) {
		if (strcasecmp(str, g_hint_names[i]) == 0 ||
		    (str[0] == (char)('0' + i) && str[1] == '\0')) {
			*hint = (enum nvp_nvme_write_hint)i;
			return 0;
		}
	}
	return -EINVAL;
}

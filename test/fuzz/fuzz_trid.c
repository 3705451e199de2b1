/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz transport ID strings (nvp_nvme_transport_id_parse): any bytes, NUL-terminated.
 * A string that parses must format back (nvp_nvme_transport_id_fmt), and that form must
 * parse again and format the same: the round trip is stable.
 */
#include "nvp_config.h"

#include "nvme/nvme.c"

#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int done;
	struct nvp_nvme_transport_id a, b;
	char buf[sizeof(a) * 2], buf2[sizeof(a) * 2];
	char *str;

	if (!done) {
		done = 1;
		FZ_CHECK(fz_env_init() == 0, "env init failed");
	}
	str = malloc(size + 1);
	FZ_CHECK(str != NULL, "out of memory");
	memcpy(str, data, size);
	str[size] = '\0';
	memset(&a, 0, sizeof(a));
	if (nvp_nvme_transport_id_parse(&a, str) == 0 &&
	    nvp_nvme_transport_id_fmt(buf, sizeof(buf), &a) == 0) {
		memset(&b, 0, sizeof(b));
		FZ_CHECK(nvp_nvme_transport_id_parse(&b, buf) == 0,
			 "'%s' formats as '%s', which does not parse", str, buf);
		FZ_CHECK(nvp_nvme_transport_id_fmt(buf2, sizeof(buf2), &b) == 0 &&
				 strcmp(buf, buf2) == 0,
			 "'%s' formats as '%s', then as '%s'", str, buf, buf2);
	}
	free(str);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* PCI addresses: "domain:bus:device.function" parsing, formatting and ordering. */
#include <errno.h>
#include <stdio.h>

#include "nvpoll/env.h"

#define MAX_FIELDS 4

static int
hex_digit(char c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	if (c >= 'A' && c <= 'F') {
		return c - 'A' + 10;
	}
	return -1;
}

/* Parse 1 to 8 hex digits at *@s, advancing it. \return 0 or -EINVAL. */
static int
parse_hex_field(const char **s, uint32_t *out, unsigned int *ndigits)
{
	uint32_t v = 0;
	unsigned int n = 0;
	int d;

	while ((d = hex_digit(**s)) >= 0) {
		if (++n > 8) {
			return -EINVAL;
		}
		v = (v << 4) | (uint32_t)d;
		(*s)++;
	}
	if (n == 0) {
		return -EINVAL;
	}
	*out = v;
	*ndigits = n;
	return 0;
}

/* Check bus <= 0xff (2 digits), device <= 0x1f (2 digits), function <= 7 (1 digit). */
static int
fill_bdf(struct nvp_pci_addr *addr, uint32_t domain, const uint32_t *v, const unsigned int *n)
{
	if (n[0] > 2 || v[0] > 0xff || n[1] > 2 || v[1] > 0x1f || n[2] > 1 || v[2] > 7) {
		return -EINVAL;
	}
	addr->domain = domain;
	addr->bus = (uint8_t)v[0];
	addr->dev = (uint8_t)v[1];
	addr->func = (uint8_t)v[2];
	return 0;
}

int
nvp_pci_addr_parse(struct nvp_pci_addr *addr, const char *str)
{
	uint32_t val[MAX_FIELDS];
	unsigned int ndig[MAX_FIELDS];
	char sep[MAX_FIELDS] = { 0 };
	int nf = 0;

	if (addr == NULL || str == NULL) {
		return -EINVAL;
	}
	for (;;) {
		if (nf == MAX_FIELDS || parse_hex_field(&str, &val[nf], &ndig[nf]) != 0) {
			return -EINVAL;
		}
		sep[nf] = *str;
		nf++;
		if (*str == '\0') {
			break;
		}
		if (*str != ':' && *str != '.') {
			return -EINVAL;
		}
		str++;
	}
	/* "bb:dd.f" */
	if (nf == 3 && sep[0] == ':' && sep[1] == '.') {
		return fill_bdf(addr, 0, val, ndig);
	}
	/* "dddd:bb:dd.f" or fio's "dddd.bb.dd.f" (':' is special in fio file names) */
	if (nf == 4 && ((sep[0] == ':' && sep[1] == ':' && sep[2] == '.') ||
			(sep[0] == '.' && sep[1] == '.' && sep[2] == '.'))) {
		return fill_bdf(addr, val[0], val + 1, ndig + 1);
	}
	return -EINVAL;
}

int
nvp_pci_addr_fmt(char *buf, size_t len, const struct nvp_pci_addr *addr)
{
	int n;

	if (buf == NULL || len == 0 || addr == NULL) {
		return -ENOSPC;
	}
	n = snprintf(buf, len, "%04x:%02x:%02x.%x", addr->domain, addr->bus, addr->dev, addr->func);
	if (n < 0 || (size_t)n >= len) {
		return -ENOSPC;
	}
	return 0;
}

static int
cmp_u32(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b ? 1 : 0;
}

int
nvp_pci_addr_compare(const struct nvp_pci_addr *a, const struct nvp_pci_addr *b)
{
	int rc = cmp_u32(a->domain, b->domain);

	if (rc == 0) {
		rc = cmp_u32(a->bus, b->bus);
	}
	if (rc == 0) {
		rc = cmp_u32(a->dev, b->dev);
	}
	if (rc == 0) {
		rc = cmp_u32(a->func, b->func);
	}
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration loader's check that its text is JSON as RFC 8259 defines it, before
 * json-c reads it: json-c takes more (comments, single quotes, trailing commas, NaN,
 * leading zeros, control characters in strings - some even in its strict mode), and a
 * configuration it would take for JSON loads, or fails later for the wrong reason.
 *
 * One pass of recursive descent over the grammar (RFC 8259 sections 2 to 7, and 8.1: the
 * text is UTF-8, no byte order mark). The first error is logged as
 * "origin:line:column: malformed JSON: <what is there>: expected <what may be there>", its
 * column in bytes, and ends the check. Nesting is bounded (CFG_JSON_DEPTH, as json-c's
 * tokener is made in bdev_config.c), so the recursion is too.
 */
#undef NVP_LOG_COMPONENT
#define NVP_LOG_COMPONENT "bdev_config"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvpoll/log.h"

#include "bdev_config_internal.h"

struct jcheck {
	const char *text;
	const char *origin;
	unsigned int depth; /* objects and arrays open */
};

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool
is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_';
}

static const char *
json_ws(const char *p)
{
	return p + strspn(p, " \t\n\r");
}

/* Log the error at @at; \return -EINVAL. */
static int __attribute__((format(printf, 3, 4)))
bad(const struct jcheck *c, const char *at, const char *fmt, ...)
{
	char what[320];
	size_t line, col;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	bdev_config_text_pos(c->text, at, &line, &col);
	NVP_ERRLOG("%s:%zu:%zu: malformed JSON: %s", c->origin, line, col, what);
	return -EINVAL;
}

/* What is at @p, in words, for a message: what people write that JSON does not have is named. */
static const char *
found(const struct jcheck *c, const char *p, char *buf, size_t len)
{
	unsigned char ch = (unsigned char)*p;

	if (ch == '\0') {
		return "the end of the text";
	}
	if (p == c->text && strncmp(p, "\xef\xbb\xbf", 3) == 0) {
		return "a byte order mark (U+FEFF)";
	}
	if (ch == '/' && (p[1] == '/' || p[1] == '*')) {
		return "a comment (JSON has none)";
	}
	if (ch == '\'') {
		return "a single quote (JSON strings take double quotes)";
	}
	if (ch < 0x20 || ch >= 0x7f) {
		snprintf(buf, len, "byte 0x%02x", ch);
	} else {
		snprintf(buf, len, "'%c'", ch);
	}
	return buf;
}

static int check_value(struct jcheck *c, const char **pp, const char *expected, char close);

/* @p where a value should start and none does. */
static int
not_value(const struct jcheck *c, const char *p, const char *expected)
{
	char buf[16];
	size_t n;

	if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) {
		n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
		return bad(c, p,
			   "'%.*s%s' is not a JSON value: expected a number, a string, true, false "
			   "or null (in lower case)",
			   (int)(n < 24 ? n : 24), p, n < 24 ? "" : "...");
	}
	if (p == c->text && strncmp(p, "\xef\xbb\xbf", 3) == 0) {
		return bad(c, p, "%s: %s (save the file as UTF-8 without one)",
			   found(c, p, buf, sizeof(buf)), expected);
	}
	return bad(c, p, "%s: %s", found(c, p, buf, sizeof(buf)), expected);
}

/* true, false, null: the whole word, in lower case. */
static int
check_literal(const struct jcheck *c, const char **pp, const char *expected)
{
	static const char *const words[] = { "true", "false", "null" };
	const char *p = *pp;
	size_t i, n;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		n = strlen(words[i]);
		if (strncmp(p, words[i], n) == 0 && !is_word(p[n])) {
			*pp = p + n;
			return 0;
		}
	}
	return not_value(c, p, expected);
}

/* -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
static int
check_number(const struct jcheck *c, const char **pp)
{
	const char *start = *pp, *p = *pp;
	char buf[16];

	p += *p == '-';
	if (!is_digit(*p)) {
		return bad(c, p, "%s after '-': expected a digit", found(c, p, buf, sizeof(buf)));
	}
	if (*p == '0' && is_digit(p[1])) {
		return bad(c, start,
			   "a number with a leading zero: expected no zero before the digits "
			   "(JSON numbers are decimal)");
	}
	p += strspn(p, "0123456789");
	if (*p == '.') {
		p++;
		if (!is_digit(*p)) {
			return bad(c, p, "%s after '.': expected a digit",
				   found(c, p, buf, sizeof(buf)));
		}
		p += strspn(p, "0123456789");
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		p += *p == '+' || *p == '-';
		if (!is_digit(*p)) {
			return bad(c, p, "%s in an exponent: expected a digit",
				   found(c, p, buf, sizeof(buf)));
		}
		p += strspn(p, "0123456789");
	}
	*pp = p;
	return 0;
}

/* Four hex digits at @p into *@u. */
static bool
hex4(const char *p, unsigned int *u)
{
	unsigned int i, d;

	*u = 0;
	for (i = 0; i < 4; i++) {
		if (is_digit(p[i])) {
			d = (unsigned int)(p[i] - '0');
		} else if ((p[i] | 0x20) >= 'a' && (p[i] | 0x20) <= 'f') {
			d = (unsigned int)((p[i] | 0x20) - 'a' + 10);
		} else {
			return false;
		}
		*u = *u << 4 | d;
	}
	return true;
}

/* @*pp at a backslash: past its escape. A \u escape of a UTF-16 surrogate comes in pairs. */
static int
check_escape(const struct jcheck *c, const char **pp)
{
	const char *p = *pp;
	unsigned int u, lo;

	if (p[1] != '\0' && strchr("\"\\/bfnrt", p[1]) != NULL) {
		*pp = p + 2;
		return 0;
	}
	if (p[1] != 'u') {
		return bad(c, p,
			   "bad escape '\\%.1s': expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t "
			   "\\uXXXX",
			   p[1] != '\0' ? p + 1 : "");
	}
	if (!hex4(p + 2, &u)) {
		return bad(c, p, "bad escape '\\u%.*s': expected \\u and four hex digits",
			   (int)strnlen(p + 2, 4), p + 2);
	}
	if (u >= 0xdc00 && u <= 0xdfff) {
		return bad(c, p,
			   "\\u%04x is the second half of a UTF-16 surrogate pair: expected its "
			   "first half (\\ud800 to \\udbff) before it",
			   u);
	}
	if (u >= 0xd800 && u <= 0xdbff &&
	    (p[6] != '\\' || p[7] != 'u' || !hex4(p + 8, &lo) || lo < 0xdc00 || lo > 0xdfff)) {
		return bad(c, p,
			   "\\u%04x is the first half of a UTF-16 surrogate pair: expected its "
			   "second half (\\udc00 to \\udfff) after it",
			   u);
	}
	*pp = p + (u >= 0xd800 && u <= 0xdbff ? 12 : 6);
	return 0;
}

/* A UTF-8 continuation byte. */
static bool
is_cont(unsigned char b)
{
	return b >= 0x80 && b <= 0xbf;
}

/* Bytes of the UTF-8 character at @p: shortest form, no surrogate, at most U+10FFFF; or 0. */
static size_t
utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;

	if (p[0] < 0x80) {
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		return is_cont(p[1]) ? 2 : 0;
	}
	if (p[0] >= 0xe0 && p[0] <= 0xef) {
		lo = p[0] == 0xe0 ? 0xa0 : lo; /* shorter forms */
		hi = p[0] == 0xed ? 0x9f : hi; /* surrogates */
		return p[1] >= lo && p[1] <= hi && is_cont(p[2]) ? 3 : 0;
	}
	if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		lo = p[0] == 0xf0 ? 0x90 : lo; /* shorter forms */
		hi = p[0] == 0xf4 ? 0x8f : hi; /* above U+10FFFF */
		return p[1] >= lo && p[1] <= hi && is_cont(p[2]) && is_cont(p[3]) ? 4 : 0;
	}
	return 0;
}

/* @*pp at the opening '"': past the closing one. */
static int
check_string(const struct jcheck *c, const char **pp)
{
	const char *p = *pp + 1;
	unsigned char ch;
	size_t n;
	int rc;

	for (;;) {
		ch = (unsigned char)*p;
		if (ch == '"') {
			*pp = p + 1;
			return 0;
		}
		if (ch == '\0') {
			return bad(c, *pp,
				   "the text ends inside this string: expected its closing '\"'");
		}
		if (ch == '\\') {
			rc = check_escape(c, &p);
			if (rc != 0) {
				return rc;
			}
			continue;
		}
		if (ch < 0x20) {
			return bad(
				c, p,
				"a control character (0x%02x) in a string: write it as an escape "
				"(\\t, \\n, \\u%04x)%s",
				ch, ch, ch == '\n' ? ", or close the string" : "");
		}
		n = utf8_len((const unsigned char *)p);
		if (n == 0) {
			return bad(c, p, "byte 0x%02x is not UTF-8: expected UTF-8 text", ch);
		}
		p += n;
	}
}

/* @*pp where an object's key should be (@first: or its '}'): past the ':' after the key. */
static int
check_key(const struct jcheck *c, const char **pp, bool first)
{
	const char *p = *pp;
	char buf[16];
	int rc;

	if (*p != '"') {
		return bad(c, p, "%s: expected a \"key\"%s", found(c, p, buf, sizeof(buf)),
			   first ? " or '}'" : "");
	}
	rc = check_string(c, &p);
	if (rc != 0) {
		return rc;
	}
	p = json_ws(p);
	if (*p != ':') {
		return bad(c, p, "%s after a key: expected ':'", found(c, p, buf, sizeof(buf)));
	}
	*pp = json_ws(p + 1);
	return 0;
}

/* @*pp at '{' or '[': past its '}' or ']'. */
static int
check_container(struct jcheck *c, const char **pp)
{
	bool object = **pp == '{';
	const char *p = json_ws(*pp + 1), *comma = NULL;
	char close = object ? '}' : ']', buf[16];
	int rc;

	if (++c->depth > CFG_JSON_DEPTH) {
		return bad(c, *pp, "objects and arrays nested deeper than %d levels",
			   CFG_JSON_DEPTH);
	}
	while (*p != close || comma != NULL) {
		if (*p == close) {
			return bad(
				c, comma,
				"trailing ',' before '%c' (JSON has no trailing commas): expected "
				"another %s after it, or no ','",
				close, object ? "\"key\": value" : "value");
		}
		rc = object ? check_key(c, &p, comma == NULL) : 0;
		if (rc != 0) {
			return rc;
		}
		rc = check_value(c, &p,
				 object || comma != NULL ? "expected a value" :
							   "expected a value or ']'",
				 close);
		if (rc != 0) {
			return rc;
		}
		p = json_ws(p);
		if (*p != ',' && *p != close) {
			return bad(c, p, "%s: expected ',' or '%c'", found(c, p, buf, sizeof(buf)),
				   close);
		}
		comma = *p == ',' ? p : NULL;
		p = *p == ',' ? json_ws(p + 1) : p;
	}
	c->depth--;
	*pp = p + 1;
	return 0;
}

/*
 * @*pp at a value: past it. @expected: what the message says may be there instead; @close:
 * the '}' or ']' of the object or array the value is in ('\0' at the top).
 */
static int
check_value(struct jcheck *c, const char **pp, const char *expected, char close)
{
	const char *p = *pp;
	char buf[16], after[16];
	int rc;

	if (*p == '{' || *p == '[') {
		return check_container(c, pp);
	}
	if (*p == '"') {
		return check_string(c, pp);
	}
	if (*p == '-' || is_digit(*p)) {
		rc = check_number(c, pp);
		if (rc == 0 && (is_word(**pp) || **pp == '.')) {
			snprintf(after, sizeof(after), close != '\0' ? "',' or '%c'" : "nothing",
				 close);
			return bad(c, *pp, "%s after the number %.*s: expected %s",
				   found(c, *pp, buf, sizeof(buf)), (int)(*pp - p), p, after);
		}
		return rc;
	}
	return check_literal(c, pp, expected);
}

int
bdev_config_json_check(const char *text, const char *origin)
{
	struct jcheck c = { .text = text, .origin = origin };
	const char *p = json_ws(text);
	char buf[16];
	int rc;

	if (*p == '\0') {
		return bad(
			&c, p,
			"the document is empty: expected a JSON object ({\"subsystems\": [...]})");
	}
	rc = check_value(&c, &p, "expected a value", '\0');
	if (rc != 0) {
		return rc;
	}
	p = json_ws(p);
	if (*p != '\0') {
		return bad(&c, p,
			   "text after the end of the document: %s: expected only white space",
			   found(&c, p, buf, sizeof(buf)));
	}
	return 0;
}

/* @v times ten to the @e (>= 0), if at most @max. */
static int
scale10(uint64_t v, long long e, uint64_t max, uint64_t *out)
{
	for (; e > 0; e--) {
		if (v > max / 10) {
			return -EINVAL;
		}
		v *= 10;
	}
	if (v > max) {
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/*
 * A JSON number with a fraction or an exponent that is an integer all the same (6.5536e4,
 * 1024.0, 1e3): its value, read from the text exactly, as no double could above 2^53. The
 * significant digits go into @v, zeros after the last non-zero one are counted apart, so
 * that "1.50e1" is 15 x 10^0 and "1.5e0" is 15 x 10^-1 (a fraction).
 */
int
bdev_config_json_number_u64(const char *num, uint64_t max, uint64_t *out)
{
	const char *p = num + (*num == '-');
	uint64_t v = 0, d;
	long long zeros = 0, frac = 0, e = 0;
	bool big = false, in_frac = false;

	for (; is_digit(*p) || (*p == '.' && !in_frac); p++) {
		if (*p == '.') {
			in_frac = true;
			continue;
		}
		frac += in_frac;
		if (*p == '0') {
			zeros += v != 0 || big;
			continue;
		}
		d = (uint64_t)(*p - '0');
		if (!big && (scale10(v, zeros, UINT64_MAX, &v) != 0 || v > (UINT64_MAX - d) / 10)) {
			big = true;
		}
		v = big ? v : v * 10 + d;
		zeros = 0;
	}
	if (*p == 'e' || *p == 'E') {
		e = strtoll(p + 1, NULL, 10); /* LLONG_MIN/MAX when out of range */
		e = e > INT_MAX ? INT_MAX : e < INT_MIN ? INT_MIN : e;
	}
	if (v == 0 && !big) {
		*out = 0;
		return 0;
	}
	e += zeros - frac;
	/* the last significant digit is not 0: below 10^0 it is a fraction */
	if (big || *num == '-' || e < 0) {
		return -EINVAL;
	}
	return scale10(v, e, max, out);
}

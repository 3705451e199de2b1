/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the configuration loader (bdev_config.c), its check of the JSON text
 * (bdev_config_json.c) and its scanner of the text (bdev_config_text.c) share.
 */
#ifndef NVP_BDEV_CONFIG_INTERNAL_H
#define NVP_BDEV_CONFIG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#define WHERE_MAX 512     /* a JSON path or an entry's name, for messages */
#define CFG_JSON_DEPTH 32 /* objects and arrays nested in a configuration, at most */

/*
 * Whether @text is JSON as RFC 8259 has it (bdev_config_json.c), nested at most
 * CFG_JSON_DEPTH deep. \return 0 or -EINVAL, the first error logged as
 * "@origin:line:column: malformed JSON: ...".
 */
int bdev_config_json_check(const char *text, const char *origin);
/*
 * The JSON number @num (checked text) if it is an integer 0..@max however written (1e3,
 * 1024.0): \return 0, or -EINVAL (a fraction, negative, or above @max).
 */
int bdev_config_json_number_u64(const char *num, uint64_t max, uint64_t *out);
/* The line and column (from 1, in bytes) of @p in @text. */
void bdev_config_text_pos(const char *text, const char *p, size_t *line, size_t *col);
/* "origin:line:column: " of subsystems[@sub].config[@entry] in @text, or "". */
void bdev_config_entry_pos(const char *text, const char *origin, size_t sub, size_t entry,
			   char *buf, size_t len);
/* Keys given twice in one object of @text: \return 0, -EINVAL (message logged), -ENOMEM. */
int bdev_config_dup_check(const char *text, const char *origin);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the configuration loader (bdev_config.c) and its scanner of the JSON text
 * (bdev_config_text.c) share.
 */
#ifndef NVP_BDEV_CONFIG_INTERNAL_H
#define NVP_BDEV_CONFIG_INTERNAL_H

#include <stddef.h>

#define WHERE_MAX 512 /* a JSON path or an entry's name, for messages */

/* The line and column (from 1, in bytes) of @p in @text. */
void bdev_config_text_pos(const char *text, const char *p, size_t *line, size_t *col);
/* "origin:line:column: " of subsystems[@sub].config[@entry] in @text, or "". */
void bdev_config_entry_pos(const char *text, const char *origin, size_t sub, size_t entry,
			   char *buf, size_t len);
/* Keys given twice in one object of @text: \return 0, -EINVAL (message logged), -ENOMEM. */
int bdev_config_dup_check(const char *text, const char *origin);

#endif

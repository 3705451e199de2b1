# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# A directory that only walks its sub-directories (lib/, app/, test/unit/, ...):
#     NVP_ROOT_DIR := $(abspath $(CURDIR)/..)
#     include $(NVP_ROOT_DIR)/mk/nvp.common.mk
#     include $(NVP_ROOT_DIR)/mk/nvp.subdirs.mk
# Every sub-directory containing a Makefile is built (all) and cleaned (clean); nobody has
# to edit the parent to add a directory. SUBDIRS_FIRST lists directories to put first and
# SUBDIRS_SKIP directories to leave out. SUBDIRS may be set to override the search.
# Sub-directories are independent of each other and run in parallel under make -j.

SUBDIRS ?= $(sort $(patsubst %/Makefile,%,$(wildcard */Makefile)))
SUBDIRS := $(filter-out $(SUBDIRS_SKIP),$(filter $(SUBDIRS),$(SUBDIRS_FIRST)) \
	$(filter-out $(SUBDIRS_FIRST),$(SUBDIRS)))

.PHONY: all clean subdirs-all $(SUBDIRS) $(addprefix clean-,$(SUBDIRS))

all: subdirs-all

subdirs-all: $(SUBDIRS)
	@:

$(SUBDIRS):
	$(Q)$(MAKE) -C $@ all

clean: $(addprefix clean-,$(SUBDIRS))

$(addprefix clean-,$(SUBDIRS)):
	$(Q)$(MAKE) -C $(patsubst clean-%,%,$@) clean

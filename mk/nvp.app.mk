# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# A program using the public API (app/<tool>/ or examples/<name>/). Its Makefile sets
#     APP = hello_world
#     C_SRCS = hello_world.c
# after including nvp.common.mk, then includes this file. The program links the whole
# build/lib/libnvpoll.a (-Wl,--whole-archive) plus DPDK, libpciaccess, -lpthread -lm.
# Output: build/bin/$(APP) under app/, build/examples/$(APP) under examples/; set
# APP_OUTPUT_DIR to choose another directory.

ifeq ($(APP),)
$(error $(NVP_REL_DIR)/Makefile: set APP before including nvp.app.mk)
endif

ifeq ($(filter examples examples/%,$(NVP_REL_DIR)),)
APP_OUTPUT_DIR ?= $(NVP_BIN_DIR)
else
APP_OUTPUT_DIR ?= $(NVP_EXAMPLES_DIR)
endif

APP_OBJS := $(call nvp_objs,$(C_SRCS))
APP_BIN := $(APP_OUTPUT_DIR)/$(APP)

.PHONY: all clean
all: $(APP_BIN)
	@:

$(APP_BIN): $(APP_OBJS) $(NVP_LIBNVPOLL_A)
	$(call quiet,LINK,$(call nvp_rel,$@))
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(APP_OBJS) $(NVP_WHOLE_LIBNVPOLL_LDLIBS) $(LDLIBS)

clean:
	$(Q)rm -rf $(NVP_OBJ_DIR) $(APP_BIN)

-include $(APP_OBJS:.o=.d)

# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# A library: lib/<name>/Makefile sets
#     LIBNAME = nvme
#     C_SRCS = nvme.c nvme_ctrlr.c ...
# after including nvp.common.mk, then includes this file. Produces
# build/lib/libnvp_$(LIBNAME).a from objects in build/obj/lib/<name>/.
# lib/env_dpdk is compiled with DPDK_CFLAGS automatically (and only it: no rte_*.h
# outside lib/env_dpdk).

ifeq ($(LIBNAME),)
$(error $(NVP_REL_DIR)/Makefile: set LIBNAME before including nvp.lib.mk)
endif

ifeq ($(LIBNAME),env_dpdk)
CFLAGS += $(DPDK_CFLAGS)
endif
CFLAGS += $(PCIACCESS_CFLAGS)

LIB_OBJS := $(call nvp_objs,$(C_SRCS))
LIB_A := $(NVP_LIB_DIR)/libnvp_$(LIBNAME).a

.PHONY: all clean
all: $(LIB_A)
	@:

$(LIB_A): $(LIB_OBJS)
	$(call quiet,AR,$(call nvp_rel,$@))
	$(Q)mkdir -p $(@D)
	$(Q)rm -f $@
	$(Q)$(AR) crs $@ $(LIB_OBJS)

clean:
	$(Q)rm -rf $(NVP_OBJ_DIR) $(LIB_A)

-include $(LIB_OBJS:.o=.d)

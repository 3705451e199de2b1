# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# Unit tests: test/unit/lib/<subsys>/Makefile sets
#     UNIT_TESTS = nvme_pcie_ut nvme_ctrlr_ut   # one program per <name>.c
#     UT_LIBS = util env_common env_posix       # lower-layer libs to link, any order (never
#                                               # the library whose .c the test #includes)
#     COMMON_SRCS = ut_helpers.c                # optional: linked into every program here
# after including nvp.common.mk, then includes this file. Each program links
# build/lib/libnvp_<lib>.a for every UT_LIBS entry (in a --start-group, so order does not
# matter), CUnit, -lpthread -lm; libpciaccess when an env_* library is listed; DPDK's
# CFLAGS and LIBS when env_dpdk is listed, the directory is test/unit/lib/env_dpdk, or
# UT_DPDK = y (skipped when configured --without-dpdk). Output:
# build/test/unit/<subsys>/<name> (test/unit/lib/nvme -> nvme).
# Sources outside the directory (COMMON_SRCS = ../common/helpers.c) are fine.

ifeq ($(strip $(UNIT_TESTS)),)
$(error $(NVP_REL_DIR)/Makefile: set UNIT_TESTS before including nvp.unittest.mk)
endif

CFLAGS += $(CUNIT_CFLAGS) $(PCIACCESS_CFLAGS)
# DPDK headers and libraries: when env_dpdk is linked, when the directory is
# test/unit/lib/env_dpdk or test/unit/lib/env/dpdk (its tests #include lib/env_dpdk/*.c),
# or when UT_DPDK = y.
ifneq ($(filter env_dpdk,$(UT_LIBS))$(filter %/env_dpdk %/env/dpdk,$(NVP_REL_DIR)),)
UT_DPDK ?= y
endif
ifeq ($(UT_DPDK),y)
CFLAGS += $(DPDK_CFLAGS)
ifneq ($(CONFIG_DPDK),y)
# Configured --without-dpdk: these tests cannot build; leave them out.
UNIT_TESTS :=
endif
endif


# test/unit/lib/nvme -> build/test/unit/nvme
UT_SUBDIR := $(patsubst lib/%,%,$(patsubst test/unit/%,%,$(NVP_REL_DIR)))
UT_OUTPUT_DIR := $(NVP_TEST_DIR)/unit/$(UT_SUBDIR)
UT_BINS := $(addprefix $(UT_OUTPUT_DIR)/,$(UNIT_TESTS))
UT_COMMON_OBJS := $(call nvp_objs,$(COMMON_SRCS))
UT_OBJS := $(call nvp_objs,$(addsuffix .c,$(UNIT_TESTS)))
UT_LIB_FILES := $(foreach l,$(UT_LIBS),$(NVP_LIB_DIR)/libnvp_$(l).a)
UT_LDLIBS := -Wl,--start-group $(UT_LIB_FILES) -Wl,--end-group \
	$(CUNIT_LIBS) \
	$(if $(filter y,$(UT_DPDK)),$(DPDK_LIBS)) \
	$(if $(filter env_%,$(UT_LIBS)),$(PCIACCESS_LIBS)) \
	$(SYS_LIBS)

.PHONY: all clean
all: $(UT_BINS)
	@:

$(UT_BINS): $(UT_OUTPUT_DIR)/%: $(NVP_OBJ_DIR)/%.o $(UT_COMMON_OBJS) $(UT_LIB_FILES)
	$(call quiet,LINK,$(call nvp_rel,$@))
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(UT_COMMON_OBJS) $(UT_LDLIBS) $(LDLIBS)

clean:
	$(Q)rm -rf $(NVP_OBJ_DIR) $(UT_BINS)

-include $(UT_OBJS:.o=.d) $(UT_COMMON_OBJS:.o=.d)

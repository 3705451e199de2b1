# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# Functional tests: test/functional/<subsys>/Makefile sets
#     FUNC_TESTS = nvme_io nvme_admin        # one program per <name>.c
#     COMMON_SRCS = helpers.c                # optional: linked into every program here
# after including nvp.common.mk, then includes this file. Each program links CUnit and the
# whole build/lib/libnvpoll.a plus DPDK, libpciaccess, -lpthread -lm, and goes to
# build/test/functional/<name> (names must be unique across test/functional/).

ifeq ($(FUNC_TESTS),)
$(error $(NVP_REL_DIR)/Makefile: set FUNC_TESTS before including nvp.functest.mk)
endif

CFLAGS += $(CUNIT_CFLAGS)
FT_OUTPUT_DIR := $(NVP_TEST_DIR)/functional
FT_BINS := $(addprefix $(FT_OUTPUT_DIR)/,$(FUNC_TESTS))
FT_COMMON_OBJS := $(call nvp_objs,$(COMMON_SRCS))
FT_OBJS := $(call nvp_objs,$(addsuffix .c,$(FUNC_TESTS)))

.PHONY: all clean
all: $(FT_BINS)
	@:

$(FT_BINS): $(FT_OUTPUT_DIR)/%: $(NVP_OBJ_DIR)/%.o $(FT_COMMON_OBJS) $(NVP_LIBNVPOLL_A)
	$(call quiet,LINK,$(call nvp_rel,$@))
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(FT_COMMON_OBJS) $(CUNIT_LIBS) \
		$(NVP_WHOLE_LIBNVPOLL_LDLIBS) $(LDLIBS)

clean:
	$(Q)rm -rf $(NVP_OBJ_DIR) $(FT_BINS)

-include $(FT_OBJS:.o=.d) $(FT_COMMON_OBJS:.o=.d)

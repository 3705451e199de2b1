# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# Included first by every Makefile in the tree, after setting NVP_ROOT_DIR:
#     NVP_ROOT_DIR := $(abspath $(CURDIR)/../..)
#     include $(NVP_ROOT_DIR)/mk/nvp.common.mk
# Defines the configuration, the compiler flags, the build directories and the compile rule.
# A Makefile may add its own flags after including it: CFLAGS += ..., SYS_LIBS += ...

ifeq ($(NVP_ROOT_DIR),)
$(error NVP_ROOT_DIR is not set: set it before including nvp.common.mk)
endif

ifndef NVP_COMMON_MK_INCLUDED
NVP_COMMON_MK_INCLUDED := 1

.DEFAULT_GOAL := all

NVP_CONFIG_MK := $(NVP_ROOT_DIR)/mk/config.mk
NVP_CONFIG_H := $(NVP_ROOT_DIR)/build/include/nvp_config.h

# The top Makefile includes mk/config.mk itself (it knows how to make it); everybody else
# needs it to exist.
ifndef NVP_TOP_MAKEFILE
ifeq ($(wildcard $(NVP_CONFIG_MK)),)
ifeq ($(filter clean distclean help,$(MAKECMDGOALS)),)
$(error $(NVP_CONFIG_MK) is missing: run ./configure (or `make` in $(NVP_ROOT_DIR), which configures with defaults))
endif
else
include $(NVP_CONFIG_MK)
endif
endif

# Directories -----------------------------------------------------------------------------
NVP_BUILD_DIR := $(NVP_ROOT_DIR)/build
NVP_LIB_DIR := $(NVP_BUILD_DIR)/lib
NVP_BIN_DIR := $(NVP_BUILD_DIR)/bin
NVP_EXAMPLES_DIR := $(NVP_BUILD_DIR)/examples
NVP_TEST_DIR := $(NVP_BUILD_DIR)/test
# This directory relative to the top, e.g. lib/nvme; objects go to build/obj/<that>/.
NVP_REL_DIR := $(patsubst $(NVP_ROOT_DIR)/%,%,$(CURDIR))
ifeq ($(NVP_REL_DIR),$(CURDIR))
NVP_REL_DIR := .
endif
NVP_OBJ_DIR := $(NVP_BUILD_DIR)/obj/$(NVP_REL_DIR)

# The environment bundled into libnvpoll and linked by apps: dpdk when configured.
ifeq ($(CONFIG_DPDK),y)
NVP_ENV := env_dpdk
else
NVP_ENV := env_posix
endif

# Libraries bundled into libnvpoll, in dependency order (lowest first). A library whose
# directory lib/<name>/Makefile does not exist yet is left out.
NVP_BUNDLED_LIBS_ALL := util env_common $(NVP_ENV) nvme poll emu bdev wbt sched
NVP_BUNDLED_LIBS := $(foreach l,$(NVP_BUNDLED_LIBS_ALL),\
	$(if $(wildcard $(NVP_ROOT_DIR)/lib/$(l)/Makefile),$(l)))
NVP_LIBNVPOLL_A := $(NVP_LIB_DIR)/libnvpoll.a

# Version of libnvpoll.so: libnvpoll.so.$(NVP_SO_MAJOR).$(NVP_SO_MINOR), soname .so.MAJOR.
NVP_SO_MAJOR := 0
NVP_SO_MINOR := 1

# Flags -----------------------------------------------------------------------------------
# CC comes from mk/config.mk (the compiler ./configure checked); make CC=... overrides it.
AR ?= ar

CFLAGS_OPT := -g -O2
ifeq ($(CONFIG_DEBUG),y)
CFLAGS_OPT := -g -O0 -DDEBUG
endif

NVP_WARN_FLAGS := -Wall -Wextra -Wmissing-declarations -Wstrict-prototypes
ifeq ($(CONFIG_WERROR),y)
NVP_WARN_FLAGS += -Werror
endif

SAN_FLAGS :=
ifeq ($(CONFIG_ASAN),y)
SAN_FLAGS += -fsanitize=address -fno-omit-frame-pointer
endif
ifeq ($(CONFIG_UBSAN),y)
SAN_FLAGS += -fsanitize=undefined -fno-sanitize-recover=undefined
endif

# -fmacro-prefix-map keeps __FILE__ relative to the top ("lib/nvme/nvme.c") although the
# compiler is given absolute paths (so its messages name files from the top as well).
CFLAGS := -std=gnu11 $(NVP_WARN_FLAGS) $(CFLAGS_OPT) -fPIC -pthread $(SAN_FLAGS) \
	-fmacro-prefix-map=$(NVP_ROOT_DIR)/= \
	-I$(NVP_ROOT_DIR)/include -I$(NVP_ROOT_DIR)/lib -I$(NVP_BUILD_DIR)/include \
	$(URING_CFLAGS) $(JSONC_CFLAGS) \
	$(EXTRA_CFLAGS)
DEPFLAGS = -MMD -MP
LDFLAGS := -pthread $(SAN_FLAGS) $(EXTRA_LDFLAGS)
# liburing: the uring bdev module; json-c: the bdev JSON configuration (both in libnvpoll).
SYS_LIBS := $(URING_LIBS) $(JSONC_LIBS) -lpthread -lm

# Output ----------------------------------------------------------------------------------
# Quiet by default ("  CC lib/nvme/nvme.c"); V=1 shows the commands.
ifeq ($(V),1)
Q :=
quiet = @true
else
Q := @
quiet = @printf '  %-6s %s\n' "$(1)" "$(2)"
endif
MAKEFLAGS += --no-print-directory

# Path of a file relative to the top, for messages.
nvp_rel = $(patsubst $(NVP_ROOT_DIR)/%,%,$(abspath $(1)))

# Compile rule: $(NVP_OBJ_DIR)/<src>.o from <src>.c in this directory (sub-directories of
# it allowed). Objects depend on the generated config header so that a reconfigure with
# different options rebuilds them. A source outside this directory ("../common/x.c", up to
# two levels) gets its own object under $(NVP_OBJ_DIR)/__/ so that two directories sharing
# a source never write the same object at the same time under make -j.
define nvp_compile
	$(call quiet,CC,$(call nvp_rel,$(CURDIR)/$<))
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) -c $(abspath $(CURDIR)/$<) -o $@
endef

$(NVP_OBJ_DIR)/%.o: %.c $(NVP_CONFIG_H)
	$(nvp_compile)
$(NVP_OBJ_DIR)/__/%.o: ../%.c $(NVP_CONFIG_H)
	$(nvp_compile)
$(NVP_OBJ_DIR)/__/__/%.o: ../../%.c $(NVP_CONFIG_H)
	$(nvp_compile)
# Last resort, when no source was found (also through vpath): say so, instead of make's
# "No rule to make target ...o".
$(NVP_OBJ_DIR)/%.o:
	@echo "$(NVP_REL_DIR)/Makefile: no source $*.c for $(call nvp_rel,$@)" \
		"(check C_SRCS, UNIT_TESTS, FUNC_TESTS, COMMON_SRCS)" >&2
	@false

# Objects of a list of sources.
nvp_objs = $(addprefix $(NVP_OBJ_DIR)/,$(patsubst %.c,%.o,$(subst ../,__/,$(1))))

# Link line for programs that use the whole library (apps, examples, functional tests).
# Whole archive: libraries register providers and components from constructors, which a
# plain static link would drop.
NVP_WHOLE_LIBNVPOLL_LDLIBS = -Wl,--whole-archive $(NVP_LIBNVPOLL_A) -Wl,--no-whole-archive \
	$(if $(filter y,$(CONFIG_DPDK)),$(DPDK_LIBS)) $(PCIACCESS_LIBS) $(SYS_LIBS)

ifndef NVP_TOP_MAKEFILE
$(NVP_CONFIG_H):
	@echo "$(call nvp_rel,$@) is missing: run ./configure (or make from the top directory)" >&2
	@false
endif

.SUFFIXES:
.DELETE_ON_ERROR:
# Keep objects that only chained pattern rules mention.
.SECONDARY:

endif # NVP_COMMON_MK_INCLUDED

# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# libnvpoll: the bundled libraries ($(NVP_BUNDLED_LIBS), see nvp.common.mk) as one static
# archive, one shared library exporting only the nvp_* functions declared in
# include/nvpoll/*.h (version script from scripts/gen_map.sh), and nvpoll.pc.
# Included by lib/Makefile; `all` there builds the sub-directories first and then
# re-enters make for the `libnvpoll` target, so the component archives are complete.

LIBNVPOLL_COMPONENTS := $(foreach l,$(NVP_BUNDLED_LIBS),$(NVP_LIB_DIR)/libnvp_$(l).a)
LIBNVPOLL_SO_NAME := libnvpoll.so.$(NVP_SO_MAJOR)
LIBNVPOLL_SO := $(NVP_LIB_DIR)/libnvpoll.so.$(NVP_SO_MAJOR).$(NVP_SO_MINOR)
LIBNVPOLL_SO_LINKS := $(NVP_LIB_DIR)/$(LIBNVPOLL_SO_NAME) $(NVP_LIB_DIR)/libnvpoll.so
LIBNVPOLL_MAP := $(NVP_BUILD_DIR)/obj/lib/libnvpoll.map
LIBNVPOLL_PC := $(NVP_LIB_DIR)/pkgconfig/nvpoll.pc
NVP_PUBLIC_HEADERS := $(sort $(wildcard $(NVP_ROOT_DIR)/include/nvpoll/*.h))

# -z defs: the shared library must resolve every symbol it uses (catches a missing library
# in the bundle or on the link line at build time rather than in a user's program).
LIBNVPOLL_LDFLAGS := -shared -Wl,-soname,$(LIBNVPOLL_SO_NAME) -Wl,-z,defs \
	-Wl,--version-script=$(LIBNVPOLL_MAP)

.PHONY: all libnvpoll clean-libnvpoll
all:
	$(Q)$(MAKE) libnvpoll

clean: clean-libnvpoll
clean-libnvpoll:
	$(Q)rm -f $(NVP_LIBNVPOLL_A) $(LIBNVPOLL_SO) $(LIBNVPOLL_SO_LINKS) $(LIBNVPOLL_MAP) \
		$(LIBNVPOLL_PC)

ifeq ($(LIBNVPOLL_COMPONENTS),)
libnvpoll:
	@echo "  (no libraries yet: libnvpoll not built)"
else
libnvpoll: $(NVP_LIBNVPOLL_A) $(LIBNVPOLL_SO_LINKS) $(LIBNVPOLL_PC)
	@:
endif

# One archive holding every member of the component archives (GNU ar MRI script).
$(NVP_LIBNVPOLL_A): $(LIBNVPOLL_COMPONENTS)
	$(call quiet,AR,$(call nvp_rel,$@))
	$(Q)rm -f $@
	$(Q){ echo "create $@"; for l in $(LIBNVPOLL_COMPONENTS); do echo "addlib $$l"; done; \
		echo save; echo end; } | $(AR) -M
	$(Q)$(AR) s $@

$(LIBNVPOLL_MAP): $(NVP_PUBLIC_HEADERS) $(NVP_ROOT_DIR)/scripts/gen_map.sh
	$(call quiet,GEN,$(call nvp_rel,$@))
	$(Q)mkdir -p $(@D)
	$(Q)CC="$(CC)" $(NVP_ROOT_DIR)/scripts/gen_map.sh $(NVP_PUBLIC_HEADERS) >$@.tmp
	$(Q)mv -f $@.tmp $@

$(LIBNVPOLL_SO): $(LIBNVPOLL_COMPONENTS) $(LIBNVPOLL_MAP)
	$(call quiet,SO,$(call nvp_rel,$@))
	$(Q)$(CC) $(LIBNVPOLL_LDFLAGS) $(LDFLAGS) -o $@ \
		-Wl,--whole-archive $(LIBNVPOLL_COMPONENTS) -Wl,--no-whole-archive \
		$(if $(filter y,$(CONFIG_DPDK)),$(DPDK_LIBS)) $(PCIACCESS_LIBS) $(SYS_LIBS)

$(LIBNVPOLL_SO_LINKS): $(LIBNVPOLL_SO)
	$(Q)ln -sf $(notdir $(LIBNVPOLL_SO)) $@

$(LIBNVPOLL_PC): $(NVP_CONFIG_MK) $(NVP_ROOT_DIR)/mk/nvp.libnvpoll.mk
	$(call quiet,GEN,$(call nvp_rel,$@))
	$(Q)mkdir -p $(@D)
	$(Q){ \
		echo 'prefix=$(CONFIG_PREFIX)'; \
		echo 'exec_prefix=$${prefix}'; \
		echo 'libdir=$${exec_prefix}/lib'; \
		echo 'includedir=$${prefix}/include'; \
		echo; \
		echo 'Name: nvpoll'; \
		echo 'Description: userspace polled-mode NVMe driver library'; \
		echo 'Version: $(NVP_VERSION)'; \
		echo 'Requires.private: $(if $(filter y,$(CONFIG_DPDK)),libdpdk )pciaccess liburing json-c'; \
		echo 'Libs: -L$${libdir} -lnvpoll'; \
		echo 'Libs.private: -lpthread -lm'; \
		echo 'Cflags: -I$${includedir}'; \
	} >$@.tmp
	$(Q)mv -f $@.tmp $@

# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The nvpoll authors
#
# nvpoll top-level Makefile. `make help` lists the targets.

NVP_ROOT_DIR := $(CURDIR)
NVP_TOP_MAKEFILE := 1
.DEFAULT_GOAL := all

# Goals that work without a configuration.
NVP_NOCONFIG_GOALS := clean distclean help format check-format
ifeq ($(filter-out $(NVP_NOCONFIG_GOALS),$(or $(MAKECMDGOALS),all)),)
NVP_NOCONFIG := 1
-include $(NVP_ROOT_DIR)/mk/config.mk
else
# Configure with defaults if ./configure has not run; re-run it with the same options when
# configure or CONFIG changed since. (make rebuilds an included makefile, then restarts.)
include $(NVP_ROOT_DIR)/mk/config.mk
endif

include $(NVP_ROOT_DIR)/mk/nvp.common.mk

ifndef NVP_NOCONFIG
$(NVP_ROOT_DIR)/mk/config.mk: $(NVP_ROOT_DIR)/configure $(NVP_ROOT_DIR)/CONFIG
	@if [ -f $@ ]; then \
		echo "configure or CONFIG changed: running ./configure$(CONFIG_ARGS)"; \
	else \
		echo "mk/config.mk is missing: running ./configure with the defaults"; \
	fi
	$(Q)cd $(NVP_ROOT_DIR) && ./configure $(CONFIG_ARGS)

# nvp_config.h removed (rm -rf build) but mk/config.mk still there: regenerate both.
$(NVP_CONFIG_H): | $(NVP_ROOT_DIR)/mk/config.mk
	$(Q)cd $(NVP_ROOT_DIR) && ./configure $(CONFIG_ARGS) >/dev/null
endif

PREFIX ?= $(CONFIG_PREFIX)
DESTDIR ?=

.PHONY: all lib app examples tests bench test install uninstall clean distclean format \
	check-format help test-qemu bench-qemu fuzz mutate

all: lib app examples tests bench

lib: $(NVP_CONFIG_H)
	$(Q)$(MAKE) -C lib all

app: lib
	$(Q)$(MAKE) -C app all

examples: lib
	$(Q)$(MAKE) -C examples all

# Programs the bench/ scripts run (bench/prog).
bench: lib
	$(Q)$(MAKE) -C bench/prog all

# Build the test programs (test/unit, test/functional).
tests: lib
	$(Q)$(MAKE) -C test all

# Build everything, then run the tests: `make test T=nvme` runs the programs whose path
# contains "nvme"; NVP_TEST_TIMEOUT=<seconds> changes the per-program timeout.
test: all
	$(Q)$(NVP_ROOT_DIR)/test/run_tests.sh $(T)

# The mutation check: each one-line bug in test/mutation/mutants/ applied to a scratch copy
# of the tree (build/mutation), the unit tests covering its file rebuilt and run; a table,
# then RESULT mutants=N caught=M; fails under 90 % caught. M=substring runs a few.
mutate: lib
	$(Q)$(NVP_ROOT_DIR)/test/mutation/run.sh $(M)

# Build the fuzz harnesses with clang-14's libFuzzer (+ASan, UBSan) and run each for
# FUZZ_SECONDS (default 60): test/fuzz/README.md. `make test` only replays their corpus.
fuzz: lib
	$(Q)$(MAKE) -C test/fuzz fuzz $(if $(FUZZ_SECONDS),FUZZ_SECONDS=$(FUZZ_SECONDS))

# Boot QEMU guests (pc + uio, q35 + vIOMMU + vfio) and run test/qemu/tests.list against QEMU's
# NVMe controllers there: test/qemu/README.md.
test-qemu: all
	$(Q)$(NVP_ROOT_DIR)/test/qemu/run.sh

# One QEMU boot (q35 + vfio; M=pc for uio): 4 KiB random reads at QD1/QD32 through the
# kernel's nvme driver (fio, io_uring, polled) and through nvpoll (nvp_perf). Not a test.
bench-qemu: all
	$(Q)$(NVP_ROOT_DIR)/test/qemu/run.sh --bench $(if $(M),-m $(M))

INSTALL ?= install
INST_BIN := $(DESTDIR)$(PREFIX)/bin
INST_LIB := $(DESTDIR)$(PREFIX)/lib
INST_INC := $(DESTDIR)$(PREFIX)/include/nvpoll
INST_PC := $(INST_LIB)/pkgconfig
INST_FIO := $(INST_LIB)/nvpoll
INST_MAN := $(DESTDIR)$(PREFIX)/share/man
INST_BASHCOMP := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
NVP_SO_FILE := libnvpoll.so.$(NVP_SO_MAJOR).$(NVP_SO_MINOR)
NVP_FIO_ENGINE := $(NVP_BUILD_DIR)/fio/nvpoll_fio.so

# Man pages: doc/man/NAME.SECTION.md -> build/man/NAME.SECTION with pandoc.
NVP_MAN_SRC := $(wildcard $(NVP_ROOT_DIR)/doc/man/*.md)
NVP_MAN := $(patsubst $(NVP_ROOT_DIR)/doc/man/%.md,$(NVP_BUILD_DIR)/man/%,$(NVP_MAN_SRC))
PANDOC := $(shell command -v pandoc 2>/dev/null)

.PHONY: man
ifneq ($(PANDOC),)
man: $(NVP_MAN)
$(NVP_BUILD_DIR)/man/%: $(NVP_ROOT_DIR)/doc/man/%.md $(NVP_CONFIG_MK)
	$(call quiet,PANDOC,$(call nvp_rel,$@))
	$(Q)mkdir -p $(@D)
	$(Q)$(PANDOC) -s -f markdown-smart -t man -M footer="nvpoll $(NVP_VERSION)" \
		-M date="" $< -o $@
else
man:
	@echo "  SKIP   man pages: pandoc not found (apt-get install pandoc)"
endif

# Everything a user runs: the library, headers and nvpoll.pc; nvp, nvp_perf, nvp_doctor;
# scripts/setup.sh as nvp-setup (its version filled in); the fio engine, when built, in
# $(PREFIX)/lib/nvpoll (pkg-config --variable=fioenginedir nvpoll); man pages; nvp's bash
# completion.
install: all man
	$(call quiet,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)$(INSTALL) -d $(INST_INC) $(INST_LIB) $(INST_PC) $(INST_BIN) $(INST_BASHCOMP)
	$(Q)$(INSTALL) -m 644 include/nvpoll/*.h $(INST_INC)/
	$(Q)$(INSTALL) -m 644 $(NVP_LIBNVPOLL_A) $(INST_LIB)/
	$(Q)$(INSTALL) -m 755 $(NVP_LIB_DIR)/$(NVP_SO_FILE) $(INST_LIB)/
	$(Q)ln -sf $(NVP_SO_FILE) $(INST_LIB)/libnvpoll.so.$(NVP_SO_MAJOR)
	$(Q)ln -sf libnvpoll.so.$(NVP_SO_MAJOR) $(INST_LIB)/libnvpoll.so
	$(Q)sed 's|^prefix=.*|prefix=$(PREFIX)|' $(NVP_LIB_DIR)/pkgconfig/nvpoll.pc \
		>$(INST_PC)/nvpoll.pc
	$(Q)chmod 644 $(INST_PC)/nvpoll.pc
	$(Q)for f in $(wildcard $(NVP_BIN_DIR)/*); do \
		$(INSTALL) -m 755 $$f $(INST_BIN)/ || exit 1; done
	$(Q)sed 's|@NVP_VERSION@|$(NVP_VERSION)|' scripts/setup.sh >$(INST_BIN)/nvp-setup
	$(Q)chmod 755 $(INST_BIN)/nvp-setup
	$(Q)$(INSTALL) -m 644 app/cli/nvp.bash-completion $(INST_BASHCOMP)/nvp
	$(Q)if [ -f $(NVP_FIO_ENGINE) ]; then $(INSTALL) -d $(INST_FIO) && \
		$(INSTALL) -m 755 $(NVP_FIO_ENGINE) $(INST_FIO)/; fi
	$(Q)for m in $(wildcard $(NVP_MAN)); do s=$${m##*.}; \
		$(INSTALL) -d $(INST_MAN)/man$$s && \
		$(INSTALL) -m 644 $$m $(INST_MAN)/man$$s/ || exit 1; done

uninstall:
	$(call quiet,UNINST,$(DESTDIR)$(PREFIX))
	$(Q)rm -rf $(INST_INC) $(INST_FIO)
	$(Q)rm -f $(INST_LIB)/libnvpoll.a $(INST_LIB)/$(NVP_SO_FILE) \
		$(INST_LIB)/libnvpoll.so.$(NVP_SO_MAJOR) $(INST_LIB)/libnvpoll.so $(INST_PC)/nvpoll.pc
	$(Q)for f in $(notdir $(wildcard $(NVP_BIN_DIR)/*)) nvp-setup; do rm -f $(INST_BIN)/$$f; done
	$(Q)rm -f $(INST_BASHCOMP)/nvp
	$(Q)for m in $(notdir $(NVP_MAN)); do rm -f $(INST_MAN)/man$${m##*.}/$$m; done

clean:
	$(call quiet,CLEAN,build)
	$(Q)rm -rf $(NVP_BUILD_DIR)/obj $(NVP_BUILD_DIR)/lib $(NVP_BUILD_DIR)/bin \
		$(NVP_BUILD_DIR)/examples $(NVP_BUILD_DIR)/test

distclean:
	$(call quiet,CLEAN,build mk/config.mk)
	$(Q)rm -rf $(NVP_BUILD_DIR) $(NVP_ROOT_DIR)/mk/config.mk

format:
	$(Q)$(NVP_ROOT_DIR)/scripts/check_format.sh --fix

check-format:
	$(Q)$(NVP_ROOT_DIR)/scripts/check_format.sh

help:
	@echo "nvpoll make targets:"
	@echo "  all (default)  libraries, libnvpoll.a/.so, nvpoll.pc, apps, examples, test programs"
	@echo "  lib app examples tests   one part of all"
	@echo "  test           build, then run every test (test/run_tests.sh)"
	@echo "                 T=<substring> runs a subset, NVP_TEST_TIMEOUT=<s> per-program timeout"
	@echo "  test-qemu      boot QEMU VMs and run test/qemu/tests.list in them (root, qemu, ~3 min)"
	@echo "  fuzz           libFuzzer harnesses (clang-14), each for FUZZ_SECONDS (default 60)"
	@echo "  mutate         apply test/mutation's one-line bugs one by one, run the unit tests"
	@echo "                 that cover each; table + RESULT (~10 min on 2 cores; M=<substring>)"
	@echo "  bench-qemu     one QEMU boot: kernel io_uring polled vs nvpoll, QD1/QD32 (M=pc: uio)"
	@echo "  install        headers, libnvpoll, nvpoll.pc, apps, nvp-setup, fio engine, man"
	@echo "                 pages, bash completion (PREFIX=, DESTDIR=)"
	@echo "  man            man pages from doc/man/*.md (pandoc) into build/man"
	@echo "  uninstall      remove what install put there"
	@echo "  clean          remove build output (keeps the configuration)"
	@echo "  distclean      remove build/ and mk/config.mk"
	@echo "  format         clang-format -i over the sources"
	@echo "  check-format   report sources that clang-format would change"
	@echo "Variables: V=1 shows full commands; EXTRA_CFLAGS=, EXTRA_LDFLAGS= add flags."
	@echo "Configure first with ./configure (--help for options); make does it with defaults."

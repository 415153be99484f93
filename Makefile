# lp - the live profiler toolkit.  One non-recursive Makefile; every output
# goes under $(O), never into the source tree.
#
#   make            build the programs into $(O)/bin, and the demo service
#   make deps       install the Debian packages the build needs (as root)
#   make demo       the main job on the bundled demo service (installs
#                   what make deps does and builds, when missing)
#   make test       the whole suite: installs its packages too (make
#                   test-deps), builds its workloads (make test-build)
#   make test-kernels  its stage under Debian 12's own kernels alone
#                   (tests/kernels.bats: 6.1 and 6.12 under qemu)
#   make bench      side-by-side benchmarks (bench/); make bench-deps installs
#                   their servers (redis, PostgreSQL) with the rest
#   make sanitize   the filters' tests against an ASan+UBSan build, and lp-join's
#                   and lp-top's against a ThreadSanitizer one (clang)
#   make install    DESTDIR= prefix=/usr/local
#   make static     the programs linked statically, glibc too, into
#                   $(O)/static/bin: one file each to copy (make
#                   static-deps installs the static archives' packages)
#   make check-commits  every commit message since the rule began, by
#                   dev/commit-msg (also a git hook: README, Contributing)
#   WERROR=1 turns warnings into errors (CI); V=1 shows the commands.

O ?= build
prefix ?= /usr/local
bindir ?= $(prefix)/bin
mandir ?= $(prefix)/share/man

CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG ?= pkg-config

# libperf (lp-record's perf-event backend, lib/capture/record/perfrec.c) is built
# from Debian's newest packaged kernel source, pinned here: tools/lib/perf
# with tools/lib/api, taken out of the package's tarball into $(O)/libperf.
LINUX_SOURCE := linux-source-6.12
LINUX_TARBALL := /usr/src/$(LINUX_SOURCE).tar.xz
LIBPERF := $(O)/libperf
LIBPERF_LIBS := $(LIBPERF)/lib/libperf.a $(LIBPERF)/lib/libapi.a

# Debian packages, in lists by what needs them.  To build (make, make
# install, make demo and make dig need nothing more):
DEB_BUILD := gcc make pkg-config clang libbpf-dev libdw-dev libelf-dev \
	libtraceevent-dev zlib1g-dev libzstd-dev bpftool libiberty-dev libcapstone-dev \
	libmicrohttpd-dev libjansson-dev libcurl4-openssl-dev $(LINUX_SOURCE) xz-utils
# To test (make test-deps, with the build's): the suite's tools, the
# browser it renders SVGs in, the servers and toolchains it profiles, and
# what builds the test workloads: g++ (C++), golang-go (Go), systemtap-sdt-dev
# (sys/sdt.h, the USDT ones).
# libpython3.11: Debian's shared interpreter, which tests/workloads/pyembed
# loads late (tests/lp-record-python.bats).
# nodejs: the machine's own build ships npm (Debian's npm package conflicts with it).
# redis-server, redis-tools, memcached, sqlite3: Debian's own binaries (no
# frame pointers, stripped) that tests/real-binaries.bats profiles under load;
# postgresql-15: the forking server tests/lp-trace-forks.bats traces under pgbench -C.
# qemu-system-x86, busybox-static: tests/kernels.bats boots Debian's own
# kernels (tests/vm/boot: qemu's TCG, an initramfs of the static busybox).
# rustc: a Rust program built as distributions build Rust, which
# tests/names.bats builds itself.
# bpftrace: a producer whose stack counts tests/foreign.bats reads.
# protobuf-compiler: protoc, which decodes what lp-push sends with the
# published .proto files (tests/lp-push.bats, tests/fixtures/otlp/).
DEB_TEST := bats bats-support bats-assert perl nodejs chromium linux-perf \
	procps util-linux binutils gawk tmux python3 gdb elfutils man-db golang-go g++ libc6-dbg \
	redis-server redis-tools memcached sqlite3 postgresql-15 systemtap-sdt-dev libpython3.11 \
	nginx-light wrk strace qemu-system-x86 busybox-static rustc bpftrace protobuf-compiler zstd
# make sanitize's and make fuzz's clang runtimes, which clang only
# recommends (libclang-rt-14-dev: ASan, UBSan, TSan, libFuzzer), and
# llvm-symbolizer (llvm), which names the frames of their reports.
DEB_SAN := libclang-rt-14-dev llvm
# Only for make bench (bench/selfcost.sh's servers, /usr/bin/time for
# bench/record.sh and bench/unwind.sh), not for the suite or CI: make
# bench-deps installs them with the rest.
DEB_BENCH := postgresql-15 postgresql-client-15 time

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-8s %s\n' $(1) $(2)
endif

.DELETE_ON_ERROR:
.SUFFIXES:
.PHONY: all test-build deps test-deps bench-deps test test-kernels demo dig bench fuzz sanitize install clean FORCE

WARN := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wformat=2 -Wvla
ifeq ($(WERROR),1)
WARN += -Werror
endif
PKGS := libdw libelf libbpf libtraceevent
CFLAGS ?= -O2 -g
LP_CFLAGS := -std=gnu11 $(WARN) -D_GNU_SOURCE -Ilib -I. -I$(O)/bpf -MMD -MP \
	$(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
# libzstd (Debian's libzstd-dev): zstd-compressed inputs
# (lib/stream/document.c) and perf record -z's records
# (lib/stream/foreign/perfdata-zstd.c); as needed, so that a program without the reader (lp-record, lp-trace) does
# not load it.
ZSTD_LIBS := -Wl,--as-needed $(shell $(PKG_CONFIG) --libs libzstd 2>/dev/null || echo -lzstd) -Wl,--no-as-needed
# libiberty (no pkg-config file): its demangler, C++ and Rust names as
# binutils and perf show them; a static library, linked into the programs
# that symbolize.
LP_LDLIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null) $(LIBPERF_LIBS) -liberty -ljansson \
	$(ZSTD_LIBS) -lz -lm -lpthread

PROGS := $(patsubst bin/%.c,$(O)/bin/%,$(wildcard bin/lp-*.c))
LIB_OBJS := $(patsubst lib/%.c,$(O)/lib/%.o,$(wildcard lib/*/*.c lib/*/*/*.c))
# The filters read and write streams: they link the layers below capture
# and debuginfo only (lib/layers keeps those from including the others),
# and none of libdw, libelf, libbpf, libtraceevent, Capstone or libiberty
# (tests/layers.bats checks the binaries).  Producers and lp-symbolize
# link everything.
FILTERS := lp-cat lp-collapse lp-diff lp-join lp-report lp-split lp-top
FILTER_PROGS := $(patsubst %,$(O)/bin/%,$(FILTERS))
FILTER_OBJS := $(patsubst lib/%.c,$(O)/lib/%.o,$(wildcard $(patsubst %,lib/%/*.c,base model stream stream/foreign analysis output)))
# jansson: the JSON profiles lib/stream/foreign reads (Debian's libjansson);
# libzstd: zstd-compressed inputs, perf record -z's perf.data.
FILTER_LDLIBS := -ljansson $(ZSTD_LIBS) -lz -lm -lpthread
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(O)/bpf/%.skel.h,$(BPF_SRCS))
WORKLOADS := $(patsubst tests/workloads/%.c,$(O)/tests/workloads/%,$(wildcard tests/workloads/*.c)) \
	$(patsubst tests/workloads/%.cc,$(O)/tests/workloads/%,$(wildcard tests/workloads/*.cc)) \
	$(patsubst tests/workloads/%.go,$(O)/tests/workloads/%,$(wildcard tests/workloads/*.go))
EXAMPLES := $(patsubst examples/%.c,$(O)/examples/%,$(wildcard examples/*.c))
# Fuzz targets (tests/fuzz/, but the driver): in test-build, each linked
# with the plain driver for the suite's run over its corpus; `make fuzz`
# builds them with libFuzzer and sanitizers and fuzzes for FUZZ_SECONDS each.
FUZZ_TARGETS := $(filter-out driver,$(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/*.c)))
FUZZ_DRIVEN := $(patsubst %,$(O)/tests/fuzz/%,$(FUZZ_TARGETS))
FUZZ_O := $(O)-fuzz
FUZZ_SECONDS ?= 60
# The fuzzers take make sanitize's checks, all of them (SAN below).

# The programs and the demo service: what make install and make demo need.
all: check-pkgs $(O)/layers.ok $(PROGS) $(EXAMPLES)

# And what the suite runs besides (tests/*.bats, bench/): the workloads, the
# fuzz targets.  make test, make sanitize and make bench build it; CI with
# WERROR=1.
test-build: all check-test-pkgs $(WORKLOADS) $(FUZZ_DRIVEN)

# lib/'s folders are layers: lib/layers refuses an include across a
# forbidden boundary and any cycle among modules, naming the line.
$(O)/layers.ok: lib/layers $(wildcard lib/*/*.[ch] lib/*/*/*.[ch] bin/*.c)
	$(call msg,LAYERS,lib)
	@mkdir -p $(@D)
	$(Q)lib/layers && touch $@

# Fail early, naming the package, rather than with a missing header.
.PHONY: check-pkgs
check-pkgs:
	@for p in $(PKGS); do \
	  $(PKG_CONFIG) --exists $$p 2>/dev/null && continue; \
	  case $$p in libdw|libelf) d=lib$${p#lib}-dev;; libbpf) d=libbpf-dev;; \
	    libtraceevent) d=libtraceevent-dev;; esac; \
	  echo "lp: $$p not found by pkg-config: install $$d (make deps)" >&2; exit 1; \
	done
	@command -v $(CLANG) >/dev/null || { echo "lp: clang not found: install clang (make deps)" >&2; exit 1; }
	@command -v $(BPFTOOL) >/dev/null || { echo "lp: bpftool not found: install bpftool (make deps)" >&2; exit 1; }
	@test -r /usr/include/libiberty/demangle.h || { echo "lp: libiberty/demangle.h not found: install libiberty-dev (make deps)" >&2; exit 1; }
	@test -r /usr/include/capstone/capstone.h || { echo "lp: capstone/capstone.h not found: install libcapstone-dev (make deps)" >&2; exit 1; }
	@test -r /usr/include/microhttpd.h || { echo "lp: microhttpd.h not found: install libmicrohttpd-dev (make deps)" >&2; exit 1; }
	@$(PKG_CONFIG) --exists libcurl 2>/dev/null || { echo "lp: libcurl not found by pkg-config: install libcurl4-openssl-dev (make deps)" >&2; exit 1; }
	@test -r /usr/include/zstd.h || { echo "lp: zstd.h not found: install libzstd-dev (make deps)" >&2; exit 1; }

# The test workloads' compilers and headers, from make test-deps.
.PHONY: check-test-pkgs
check-test-pkgs:
	@command -v $(WORKLOAD_CXX) >/dev/null || { echo "lp: $(WORKLOAD_CXX) not found (the C++ test workloads): install g++ (make test-deps)" >&2; exit 1; }
	@command -v go >/dev/null || { echo "lp: go not found (the Go test workloads): install golang-go (make test-deps)" >&2; exit 1; }
	@echo '#include <sys/sdt.h>' | $(WORKLOAD_CC) -E -x c - >/dev/null 2>&1 || { echo "lp: sys/sdt.h not found (the USDT test workloads): install systemtap-sdt-dev (make test-deps)" >&2; exit 1; }

# A flags stamp: changing CFLAGS or WERROR rebuilds everything.
$(O)/flags: FORCE
	@mkdir -p $(O)
	@echo '$(CC) $(CFLAGS) $(LP_CFLAGS) $(LDFLAGS) $(LP_LDLIBS)' > $@.new
	@cmp -s $@.new $@ && rm $@.new || mv $@.new $@

# vmlinux.h is pinned, checked in (bpf/x86/vmlinux.h: which kernel, which
# command, and why at its top): a build does not depend on the kernel of the
# machine it runs on; the programs are CO-RE, relocated at load to the
# running kernel's BTF.
VMLINUX_H := bpf/x86/vmlinux.h

# -idirafter the multiarch headers: libbpf's usdt.bpf.h includes
# <linux/errno.h>, which wants <asm/errno.h> (defines only, no types that
# would clash with vmlinux.h's).  Debian's name for the directory
# (x86_64-linux-gnu), which gcc and clang both print for -print-multiarch;
# -dumpmachine is clang's triple (x86_64-pc-linux-gnu), no directory.
BPF_MULTIARCH := $(shell $(CLANG) -print-multiarch 2>/dev/null)
$(O)/bpf/%.bpf.o: bpf/%.bpf.c $(VMLINUX_H) $(O)/flags
	$(call msg,BPF,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 -I$(dir $(VMLINUX_H)) -Ibpf \
		-idirafter /usr/include/$(BPF_MULTIARCH) -MMD -MP -c $< -o $@

$(O)/bpf/%.skel.h: $(O)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# Only the BPF glue includes skeletons; the rest builds even when a BPF
# program does not.
SKEL_USERS := $(patsubst lib/%.c,$(O)/lib/%.o,$(shell grep -l '\.skel\.h' lib/*/*.c lib/*/*/*.c 2>/dev/null))
$(SKEL_USERS): | $(BPF_SKELS)
$(patsubst bin/%.c,$(O)/bin/%,$(shell grep -l '\.skel\.h' bin/*.c 2>/dev/null)): | $(BPF_SKELS)

# The calibration's spinning thread keeps frame pointers: a sample of it
# walks as many frames as one of a target (lib/capture/record/cost.c).
$(O)/lib/capture/record/cost.o: LP_CFLAGS += -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer

$(O)/lib/%.o: lib/%.c $(O)/flags
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LP_CFLAGS) -c $< -o $@

# libperf: checked first (dpkg --verify: the tarball is the package's, as
# shipped), then built by its own Makefile, alone (none of this make's
# variables: O= means something else to the kernel's tools), with the
# compiler Debian's gcc; its headers and static libraries under $(LIBPERF).
LIBPERF_PARTS := tools/lib/perf tools/lib/api tools/include tools/build tools/scripts \
	tools/arch/x86/include tools/lib/ctype.c tools/lib/str_error_r.c \
	tools/lib/string.c tools/lib/vsprintf.c tools/lib/zalloc.c tools/lib/list_sort.c \
	Makefile
$(LIBPERF)/stamp:
	$(call msg,LIBPERF,$(LINUX_SOURCE))
	@test -r $(LINUX_TARBALL) || { echo "lp: $(LINUX_TARBALL) not found: install $(LINUX_SOURCE) (make deps)" >&2; exit 1; }
	$(Q)out=$$(dpkg --verify $(LINUX_SOURCE) 2>&1); [ -z "$$out" ] || \
	  { echo "lp: $(LINUX_SOURCE) fails dpkg --verify: $$out" >&2; exit 1; }
	$(Q)rm -rf $(LIBPERF) && mkdir -p $(LIBPERF)/src
	$(Q)tar -xJf $(LINUX_TARBALL) -C $(LIBPERF)/src --strip-components=1 --wildcards \
		$(patsubst %,'$(LINUX_SOURCE)/%*',$(LIBPERF_PARTS))
	$(Q)env -i PATH="$$PATH" make -s -C $(LIBPERF)/src/tools/lib/perf CC=gcc \
		DESTDIR=$(abspath $(LIBPERF)) prefix= libdir_relative=lib \
		install_headers install_lib >$(LIBPERF)/build.log 2>&1 || \
	  { tail -20 $(LIBPERF)/build.log >&2; exit 1; }
	$(Q)cp $(LIBPERF)/src/tools/lib/api/libapi.a $(LIBPERF)/lib/
	$(Q)rm -f $(LIBPERF)/lib/libperf.so*
	$(Q)sed -n 's/^\(VERSION\|PATCHLEVEL\|SUBLEVEL\) = //p' $(LIBPERF)/src/Makefile | \
		paste -sd. > $(LIBPERF)/VERSION
	$(Q)grep -qx '6\.12\.[0-9]*' $(LIBPERF)/VERSION || \
	  { echo "lp: $(LINUX_SOURCE) holds kernel $$(cat $(LIBPERF)/VERSION), not 6.12" >&2; exit 1; }
	@touch $@

$(O)/lib/capture/record/perfrec.o: LP_CFLAGS += -I$(LIBPERF)/include
$(O)/lib/capture/record/perfrec.o: | $(LIBPERF)/stamp

# The pages as built: lp-report's (lib/output/report.html) and lp-serve's
# (lib/serve/page/serve.html), each a file whose /*LP-INCLUDE path*/ lines
# lib/page-include replaces by those files (their style, their scripts,
# and what both share: lib/output/page-common.css, page-common.js,
# flamegraph.js and histogram.js).  It writes $@.d too, naming the files included, which
# the -include at the end reads.
$(O)/lib/%.html: lib/%.html lib/page-include
	$(call msg,GEN,$@)
	@mkdir -p $(@D)
	$(Q)lib/page-include $< $@
# lp-report's page as one C string, checked to hold its data marker
# exactly once; '?' escaped, so no trigraph forms.
$(O)/lib/output/report-html.h: $(O)/lib/output/report.html
	$(call msg,GEN,$@)
	$(Q)test "$$(grep -o '/\*LP-REPORT-DATA\*/null' $< | wc -l)" -eq 1 || \
	  { echo "lp: $<: not exactly one /*LP-REPORT-DATA*/null marker" >&2; exit 1; }
	$(Q){ echo 'static const char lp_report_html[] ='; \
	  sed 's/\\/\\\\/g; s/"/\\"/g; s/?/\\?/g; s/^/"/; s/$$/\\n"/' $<; echo ';'; } > $@
# lp-serve's page, the same way.
$(O)/lib/serve/serve-html.h: $(O)/lib/serve/page/serve.html
	$(call msg,GEN,$@)
	$(Q){ echo 'static const char lp_serve_html[] ='; \
	  sed 's/\\/\\\\/g; s/"/\\"/g; s/?/\\?/g; s/^/"/; s/$$/\\n"/' $<; echo ';'; } > $@
$(O)/lib/serve/page.o: $(O)/lib/serve/serve-html.h
$(O)/lib/serve/page.o: LP_CFLAGS += -I$(O)/lib/serve

$(O)/lib/output/reportpage.o: $(O)/lib/output/report-html.h
$(O)/lib/output/reportpage.o: LP_CFLAGS += -I$(O)/lib/output

$(O)/liblp.a: $(LIB_OBJS) | $(LIBPERF)/stamp
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(O)/liblp-filter.a: $(FILTER_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# Capstone (lib/debuginfo/x86insn.c, under lib/debuginfo/disasm.c: the instructions that leave
# a traced function, and lib/debuginfo/insnflow.c: where a line probe goes) for
# lp-trace, and lp-record, whose --inside probes a function as lp-trace does.
CAPSTONE_LIBS := $(shell $(PKG_CONFIG) --libs capstone 2>/dev/null || echo -lcapstone)
$(O)/bin/lp-trace $(O)/bin/lp-record $(O)/tests/fuzz/cfg: LP_LDLIBS += $(CAPSTONE_LIBS)

# A program's dependency file goes to $(O)/dep/bin, not beside it: build/bin
# holds the programs alone.
$(O)/bin/%: bin/%.c $(O)/liblp.a $(O)/flags
	$(call msg,LINK,$@)
	@mkdir -p $(@D) $(O)/dep/bin
	$(Q)$(CC) $(CFLAGS) $(LP_CFLAGS) -MF $(O)/dep/bin/$*.d $(LDFLAGS) $< $(O)/liblp.a \
		$(LP_LDLIBS) -o $@

# lp-serve: a filter's layers, its own (lib/serve/: libmicrohttpd), no
# more.
SERVE_OBJS := $(patsubst lib/%.c,$(O)/lib/%.o,$(wildcard lib/serve/*.c))
$(O)/bin/lp-serve: bin/lp-serve.c $(SERVE_OBJS) $(O)/liblp-filter.a $(O)/flags
	$(call msg,LINK,$@)
	@mkdir -p $(@D) $(O)/dep/bin
	$(Q)$(CC) $(CFLAGS) $(LP_CFLAGS) -MF $(O)/dep/bin/lp-serve.d $(LDFLAGS) $< $(SERVE_OBJS) \
		$(O)/liblp-filter.a $(FILTER_LDLIBS) -lmicrohttpd -o $@

# lp-push: a filter's layers and libcurl (Debian's libcurl4-openssl-dev), no
# more; it alone links libcurl.
CURL_LIBS := $(shell $(PKG_CONFIG) --libs libcurl 2>/dev/null || echo -lcurl)
PUSH_OBJS := $(patsubst lib/%.c,$(O)/lib/%.o,$(wildcard lib/push/*.c))
$(O)/bin/lp-push: bin/lp-push.c $(PUSH_OBJS) $(O)/liblp-filter.a $(O)/flags
	$(call msg,LINK,$@)
	@mkdir -p $(@D) $(O)/dep/bin
	$(Q)$(CC) $(CFLAGS) $(LP_CFLAGS) -MF $(O)/dep/bin/lp-push.d $(LDFLAGS) $< $(PUSH_OBJS) \
		$(O)/liblp-filter.a $(FILTER_LDLIBS) $(CURL_LIBS) -o $@

$(FILTER_PROGS): $(O)/bin/%: bin/%.c $(O)/liblp-filter.a $(O)/flags
	$(call msg,LINK,$@)
	@mkdir -p $(@D) $(O)/dep/bin
	$(Q)$(CC) $(CFLAGS) $(LP_CFLAGS) -MF $(O)/dep/bin/$*.d $(LDFLAGS) $< $(O)/liblp-filter.a \
		$(FILTER_LDLIBS) -o $@

# Workloads with known truth.  Built with frame pointers (leaf ones too) and
# no inlining surprises; a file may ask for other flags in a first-line
# comment "/* cflags: ... */".  Always by the system's compiler, also in
# make sanitize's clang builds: their truth is in the code GCC makes (the
# instruction a probe lands on, which functions get frames), and some ask
# for GCC's own flags (-fno-shrink-wrap).
WORKLOAD_CC := cc
$(O)/tests/workloads/%: tests/workloads/%.c $(O)/flags
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(WORKLOAD_CC) -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-fno-inline $$(sed -n '1s|^/\* cflags: \(.*\) \*/$$|\1|p' $<) $< -o $@ -lpthread -lm
# The request workloads share what a request does; cpusplit-nofp is
# cpusplit built otherwise.
$(O)/tests/workloads/evloop $(O)/tests/workloads/pool: tests/workloads/reqwork.h
$(O)/tests/workloads/cpusplit-nofp: tests/workloads/cpusplit.c

# C++ workloads: as the C ones, by the system's g++ (its mangling is the
# truth the demangling tests compare with).
WORKLOAD_CXX := g++
$(O)/tests/workloads/%: tests/workloads/%.cc $(O)/flags
	$(call msg,CXX,$@)
	@mkdir -p $(@D)
	$(Q)$(WORKLOAD_CXX) -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-fno-inline $$(sed -n '1s|^/\* cflags: \(.*\) \*/$$|\1|p' $<) $< -o $@ -lpthread -lm

# Go workloads (golang-go): single-file programs, built with the Go cache
# under $(O) so that a build needs no home directory.
$(O)/tests/workloads/%: tests/workloads/%.go $(O)/flags
	$(call msg,GO,$@)
	@mkdir -p $(@D)
	$(Q)GOCACHE=$(abspath $(O))/gocache GO111MODULE=off go build -o $@ $<

# perfdata's target is reader.c's, its input a perf.data
$(O)/tests/fuzz/perfdata: tests/fuzz/reader.c
$(O)/tests/fuzz/%: tests/fuzz/%.c tests/fuzz/driver.c $(O)/liblp.a $(O)/flags
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LP_CFLAGS) $(LDFLAGS) $< tests/fuzz/driver.c $(O)/liblp.a \
		$(LP_LDLIBS) -o $@

$(O)/examples/%: examples/%.c $(O)/flags
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-fno-inline $< -o $@ -lpthread -lm

# $(call apt-install,PACKAGES,TARGET): installs those of the Debian PACKAGES
# that are missing (nothing is fetched when all are there), as root;
# TARGET is the make target to run again with sudo otherwise.
apt-install = missing=$$(for p in $(1); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	[ -z "$$missing" ] && exit 0; \
	if [ "$$(id -u)" != 0 ]; then \
	  echo "lp: missing packages:" $$missing; \
	  echo "lp: make $(2) must run as root (sudo make $(2))" >&2; exit 1; fi; \
	echo "lp: installing" $$missing; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null

deps:
	@$(call apt-install,$(DEB_BUILD),deps)

test-deps:
	@$(call apt-install,$(DEB_BUILD) $(DEB_TEST) $(DEB_SAN),test-deps)

bench-deps:
	@$(call apt-install,$(DEB_BUILD) $(DEB_TEST) $(DEB_SAN) $(DEB_BENCH),bench-deps)

test: test-deps
	$(Q)$(MAKE) --no-print-directory test-build static
	$(Q)O=$(O) tests/run

test-kernels: test-deps
	$(Q)$(MAKE) --no-print-directory test-build
	$(Q)O=$(O) tests/run tests/kernels.bats

bench: bench-deps
	$(Q)$(MAKE) --no-print-directory test-build
	$(Q)O=$(O) bench/run

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)O=$(O) examples/demo.sh

# Digging in live on the demo (examples/dig.sh): one lp-record and one
# lp-trace steered through their --control FIFOs, never restarted.
dig: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)O=$(O) examples/dig.sh

# New inputs a run finds go to $(FUZZ_O)/corpus/TARGET; one that fails is
# left as crash-* in the current directory, to be copied into
# tests/fuzz/corpus/TARGET/ with its fix.  A target may give libFuzzer flags
# in a first-line comment "/* fuzz-flags: ... */".
fuzz:
	@$(call apt-install,$(DEB_BUILD) $(DEB_SAN),fuzz)
	$(Q)$(MAKE) --no-print-directory O=$(FUZZ_O) CC=$(CLANG) \
		CFLAGS='-O1 -g -fsanitize=fuzzer-no-link $(SAN)' $(FUZZ_O)/liblp.a
	$(Q)for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_O)/corpus/$$t && \
	  $(CLANG) -O1 -g -fsanitize=fuzzer $(SAN) $(LP_CFLAGS) tests/fuzz/$$t.c \
	    $(FUZZ_O)/liblp.a $(LP_LDLIBS) $(CAPSTONE_LIBS) -o $(FUZZ_O)/fuzz-$$t && \
	  $(FUZZ_O)/fuzz-$$t -max_total_time=$(FUZZ_SECONDS) -max_len=65536 \
	    $$(sed -n '1s|^/\* fuzz-flags: \(.*\) \*/$$|\1|p' tests/fuzz/$$t.c) \
	    $(FUZZ_O)/corpus/$$t tests/fuzz/corpus/$$t || exit 1; \
	done

# The filters' test files (their few BPF tests run too, with a sanitized
# lp-record), and the producers' with real BPF (kernel-core: unwinding,
# symbolizing, probe parsing, --inside, snapshots, python:; the control
# FIFO; unwinding real binaries), under AddressSanitizer and
# UndefinedBehaviorSanitizer, every check on, none recoverable, leaks
# included, and the two threaded filters
# under ThreadSanitizer: each build in an $(O) of its own, run by tests/run,
# which counts any sanitizer report left in LP_SAN_LOGS as a failure (a report
# from a program whose status a test ignores still fails the pass).  One
# "N passed, N failed, N skipped" line per build.
SAN_O := $(O)-asan
TSAN_O := $(O)-tsan
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
TSAN := -fsanitize=thread
SAN_TESTS := lp-cat formats foreign-perfdata lp-collapse lp-diff lp-join lp-split split-auto split-selfcost lp-top heatmap pprof \
	flamegraph fuzz corpus-collapse corpus-diff corpus-validate signals empty lp-split-branch lp-report \
	kernel-core lp-trace-control unwind lp-symbolize lp-serve lp-serve-hostile lp-push
TSAN_TESTS := lp-join lp-top signals lp-serve lp-serve-hostile lp-push
SAN_ENV = ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:log_path=$(1)/asan \
	UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1:log_path=$(1)/ubsan \
	TSAN_OPTIONS=halt_on_error=1:abort_on_error=1:log_path=$(1)/tsan \
	LP_SAN_LOGS=$(1) LP_SANITIZER=$(2)
# clang: GCC 12's UBSan writes to stderr whatever log_path says.
sanitize: test-deps
	$(Q)$(MAKE) --no-print-directory O=$(SAN_O) CC=$(CLANG) CFLAGS='-O1 -g $(SAN)' \
		LDFLAGS='$(SAN)' test-build
	$(Q)$(MAKE) --no-print-directory O=$(TSAN_O) CC=$(CLANG) CFLAGS='-O1 -g $(TSAN)' \
		LDFLAGS='$(TSAN)' test-build
	$(Q)rm -rf $(SAN_O)/logs $(TSAN_O)/logs && mkdir -p $(SAN_O)/logs $(TSAN_O)/logs
	$(Q)$(call SAN_ENV,$(abspath $(SAN_O)/logs),asan) O=$(SAN_O) \
		tests/run $(patsubst %,tests/%.bats,$(SAN_TESTS)); s=$$?; \
	$(call SAN_ENV,$(abspath $(TSAN_O)/logs),tsan) O=$(TSAN_O) \
		tests/run $(patsubst %,tests/%.bats,$(TSAN_TESTS)) || s=1; exit $$s

# make static: every program linked statically, glibc too, into
# $(O)/static/bin: one file to copy to a machine without lp's libraries
# (README.md, "One binary to copy"; tests/static.bats runs them in an empty
# chroot).  The objects are $(O)/bin's; the libraries Debian's static
# archives.  glibc's dlopen in a static program needs the very libc it was
# linked with at run time, so there is none: libdw's one call (for
# libdebuginfod.so.1) goes to lib/debuginfo/nodlopen.c, which fails it.
STATIC_O := $(O)/static
# Not lp-serve: libmicrohttpd brings GnuTLS, which Debian ships no static
# library of; the page is served where a browser is, not on the host traced.
# Not lp-push: Debian's libcurl brings GSSAPI (krb5), which has none either;
# a static lp-record's output is pushed by an lp-push where libcurl is.
STATIC_PROGS := $(patsubst bin/%.c,$(STATIC_O)/bin/%,$(filter-out bin/lp-serve.c bin/lp-push.c,$(wildcard bin/lp-*.c)))
STATIC_FILTER_PROGS := $(patsubst %,$(STATIC_O)/bin/%,$(FILTERS))
# The archives' packages beyond DEB_BUILD's (make static-deps): make test
# builds the static programs for tests/static.bats, so they are the
# suite's too (make test-deps).
DEB_STATIC := libc6-dev liblzma-dev libbz2-dev
DEB_TEST += $(DEB_STATIC)
# archive:package, checked before linking; libdw wants liblzma and libbz2.
STATIC_ARCHIVES := libc.a:libc6-dev libz.a:zlib1g-dev liblzma.a:liblzma-dev \
	libbz2.a:libbz2-dev libelf.a:libelf-dev libdw.a:libdw-dev libbpf.a:libbpf-dev \
	libtraceevent.a:libtraceevent-dev libcapstone.a:libcapstone-dev libiberty.a:libiberty-dev \
	libjansson.a:libjansson-dev libzstd.a:libzstd-dev
STATIC_LDFLAGS := -static -Wl,--wrap=dlopen
STATIC_LDLIBS := $(shell $(PKG_CONFIG) --static --libs $(PKGS) capstone 2>/dev/null) \
	$(LIBPERF_LIBS) -liberty -ljansson -lzstd -lz -lm -lpthread
.PHONY: check-commits
# The rule for commit messages (dev/commit-msg) holds from the commit after
# this one on; earlier subjects were paragraphs.
COMMITS_SINCE := 5faa0d43f37e7d4427687c363c5491bca2b3e65a
check-commits:
	$(Q)dir=$$(mktemp -d) && bad=0 && \
	for c in $$(git rev-list $(COMMITS_SINCE)..HEAD); do \
		git log -1 --format=%B "$$c" >"$$dir/$$(git rev-parse --short "$$c")"; \
		(cd "$$dir" && $(CURDIR)/dev/commit-msg "$$(git -C $(CURDIR) rev-parse --short "$$c")") || bad=1; \
	done; rm -rf "$$dir"; exit $$bad

.PHONY: static static-deps check-static

static: check-pkgs $(STATIC_PROGS)

check-static:
	@for a in $(STATIC_ARCHIVES); do \
	  f=$$($(CC) -print-file-name=$${a%%:*}); [ "$$f" != "$${a%%:*}" ] && continue; \
	  echo "lp: $${a%%:*} not found: install $${a#*:} (make static-deps)" >&2; exit 1; \
	done

static-deps:
	@$(call apt-install,$(DEB_BUILD) $(DEB_STATIC),static-deps)

$(STATIC_PROGS): | check-static

$(STATIC_O)/bin/%: bin/%.c $(O)/liblp.a $(O)/lib/debuginfo/nodlopen.o $(O)/flags
	$(call msg,LINK,$@)
	@mkdir -p $(@D) $(STATIC_O)/dep/bin
	$(Q)$(CC) $(CFLAGS) $(LP_CFLAGS) -MF $(STATIC_O)/dep/bin/$*.d $(LDFLAGS) $(STATIC_LDFLAGS) $< \
		$(O)/lib/debuginfo/nodlopen.o $(O)/liblp.a $(STATIC_LDLIBS) -o $@

$(STATIC_FILTER_PROGS): $(STATIC_O)/bin/%: bin/%.c $(O)/liblp-filter.a $(O)/flags
	$(call msg,LINK,$@)
	@mkdir -p $(@D) $(STATIC_O)/dep/bin
	$(Q)$(CC) $(CFLAGS) $(LP_CFLAGS) -MF $(STATIC_O)/dep/bin/$*.d $(LDFLAGS) -static $< \
		$(O)/liblp-filter.a $(FILTER_LDLIBS) -o $@

-include $(wildcard $(STATIC_O)/dep/bin/*.d)

install: all
	install -d $(DESTDIR)$(bindir) $(DESTDIR)$(mandir)/man1 $(DESTDIR)$(mandir)/man5 $(DESTDIR)$(mandir)/man7
	install -m 755 $(PROGS) $(DESTDIR)$(bindir)
	install -m 644 $(wildcard man/*.1) $(DESTDIR)$(mandir)/man1
	install -m 644 $(wildcard man/*.5) $(DESTDIR)$(mandir)/man5
	$(if $(wildcard man/*.7),install -m 644 $(wildcard man/*.7) $(DESTDIR)$(mandir)/man7)

clean:
	rm -rf $(O)

-include $(wildcard $(O)/lib/*/*.d $(O)/lib/*/*/*.d $(O)/dep/bin/*.d $(O)/bpf/*.d)

# crawl: build, test and demo.
#
#   make            build every program into $(BUILD)/ (the crawler's library
#                   libcrawl.a from lib/, the fixture server's libfixture.a
#                   from fixture/, each program from cmd/)
#   make check      install missing Debian packages, build, run every test
#   make demo       install missing Debian packages, run every experiment of
#                   the seed articles (scripts/demo.sh); EXPERIMENT=NAME
#                   runs one (lightless sleep gather queue cinema status)
#   make sanitize   the test suite under AddressSanitizer + UndefinedBehaviorSanitizer
#   make tsan       the threaded end-to-end tests under ThreadSanitizer
#   make check-model  a sixth model (tests/model/) built in and tested
#   make layers     lib/'s module graph from its objects' symbols: no cycle
#                   between modules, no other module's *_internal.h included
#   make install    crawl, the fixture server (as crawl-fixture-server), their
#                   manual pages and the shell completions under $(PREFIX)
#                   (default /usr/local), staged under $(DESTDIR) if set
#   make uninstall  removes exactly what make install put there
#   make clean

BUILD   ?= build
CC      ?= cc
SAN     ?=
PKGS    := libcurl libxml-2.0 zlib libbrotlidec libzstd icu-uc libcrypto lmdb hiredis

CFLAGS  ?= -O2 -g
override CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wno-unused-parameter -pthread -fstack-clash-protection
ifneq ($(CI),)
override CFLAGS += -Werror
endif
ifneq ($(SAN),)
override CFLAGS += -fsanitize=$(SAN) -fno-omit-frame-pointer
override LDFLAGS += -fsanitize=$(SAN)
endif

# libev ships no pkg-config file on Debian 12; fall back to plain -lev.
EV_CFLAGS := $(shell pkg-config --cflags libev 2>/dev/null)
EV_LIBS   := $(shell pkg-config --libs libev 2>/dev/null || echo -lev)
override CFLAGS += $(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(EV_CFLAGS) -Ilib -Ifixture
override LDLIBS += $(shell pkg-config --libs $(PKGS) 2>/dev/null) $(EV_LIBS) -lm -pthread
# The fixture server needs neither libcurl nor libxml2; it encodes bodies
# (gzip, br, zstd) that crawl decodes.
FIX_LIBS  := $(shell pkg-config --libs zlib libbrotlienc libzstd 2>/dev/null || echo -lz -lbrotlienc -lzstd) $(EV_LIBS) -lm -pthread
# The unit tests read their JSON test data with jansson.
TEST_LIBS := $(shell pkg-config --libs cmocka jansson 2>/dev/null || echo -lcmocka -ljansson)

# EXTRA_MODEL=path/mode_NAME.c builds one more model into crawl: the file,
# and its line in the registry (lib/modes.c) from the name. make
# check-model proves a model is one file and one registry entry this way.
EXTRA_MODEL ?=
LIB_SRC  := $(sort $(wildcard lib/*.c)) $(EXTRA_MODEL)
LIB_ASM  := $(sort $(wildcard lib/*.S))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(LIB_ASM:%.S=$(BUILD)/%.o)
FIX_SRC  := $(sort $(wildcard fixture/*.c))
FIX_OBJ  := $(FIX_SRC:%.c=$(BUILD)/%.o)
CMD_SRC  := $(sort $(wildcard cmd/*.c))
PROGS    := $(CMD_SRC:cmd/%.c=$(BUILD)/%)
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNITS    := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_SRC := $(sort $(wildcard tests/bench/*.c))
BENCHES  := $(BENCH_SRC:tests/bench/%.c=$(BUILD)/bench/%)
HDRS     := $(wildcard lib/*.h fixture/*.h tests/unit/*.h cmd/*/*.h)
# A program whose main file needs company has a folder of its own next to it
# (cmd/crawl/ for cmd/crawl.c), whose files are linked into it.
CRAWL_CLI_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(sort $(wildcard cmd/crawl/*.c)))

Q := @
ifneq ($(V),)
Q :=
endif

.SECONDARY:

.PHONY: all deps deps-build check check-run check-model units tools benches demo sanitize tsan layers lengths clean fuzz bench install uninstall

all: $(PROGS) $(BUILD)/crawl.1

# The link scanner's hot loops start on a cache line of their own: where
# they fall otherwise depends on the code linked before the scanner, and two
# layouts of the same code parsed a docs tree 10% apart (tests/bench/scan_tree.c).
$(BUILD)/lib/scan.o: override CFLAGS += -falign-loops=64

ifneq ($(EXTRA_MODEL),)
$(BUILD)/lib/modes.o: override CFLAGS += -DCRAWL_EXTRA_MODEL=crawl_backend_$(patsubst mode_%.c,%,$(notdir $(EXTRA_MODEL)))
endif

# crawl(1) with its MODELS section made from the registry: one entry per
# model, from each model's own text.
$(BUILD)/crawl.1: doc/crawl.1 $(BUILD)/crawl
	@echo "  MAN     $@"
	$(Q)$(BUILD)/crawl --list-modes=man >$@.models
	$(Q)sed -e '/^\.\\" @MODELS@/{r $@.models' -e 'd;}' doc/crawl.1 >$@ && rm -f $@.models

# Two libraries: the crawler's (lib/) and the fixture server's (fixture/),
# neither holding the other's code. Each archive is written afresh, so that
# an object whose source has moved away does not linger in it.
$(BUILD)/libcrawl.a: $(LIB_OBJ)
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/libfixture.a: $(FIX_OBJ)
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/%.o: %.S
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/fixture-server: $(BUILD)/cmd/fixture-server.o $(BUILD)/libfixture.a
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(FIX_LIBS)

$(BUILD)/crawl: $(BUILD)/cmd/crawl.o $(CRAWL_CLI_OBJ) $(BUILD)/libcrawl.a
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%: $(BUILD)/cmd/%.o $(BUILD)/libcrawl.a
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/test_fixture_%: $(BUILD)/tests/unit/test_fixture_%.o $(BUILD)/libfixture.a
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(TEST_LIBS) $(FIX_LIBS)

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(BUILD)/libcrawl.a
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(TEST_LIBS) $(LDLIBS)

# Test tools (tests/tools/*.c): programs the end-to-end tests and the
# benchmarks run beside crawl, built with the unit tests.
TOOL_SRC := $(sort $(wildcard tests/tools/*.c))
TOOLS    := $(TOOL_SRC:tests/tools/%.c=$(BUILD)/tools/%)

$(BUILD)/tools/%: tests/tools/%.c
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(EV_LIBS)

units: $(UNITS) $(TOOLS)

tools: $(TOOLS)

# Measuring programs for scripts/ (tests/bench/*.c); built on demand.
$(BUILD)/bench/%: $(BUILD)/tests/bench/%.o $(BUILD)/libcrawl.a
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(TEST_LIBS) $(LDLIBS)

benches: $(BENCHES)

# test_errors makes the core's copies of error texts fail, through strdup.
$(BUILD)/tests/test_errors: override LDFLAGS += -Wl,--wrap=strdup

# test_frontier counts the frontier's URL splits and canonical forms, none
# of which may be made with the core's lock held.
$(BUILD)/tests/test_frontier: override LDFLAGS += -Wl,--wrap=url_split,--wrap=url_canonical

# test_procs_fork makes the procs model's forks fail, as ulimit -u does.
$(BUILD)/tests/test_procs_fork: override LDFLAGS += -Wl,--wrap=fork

# test_models_nomem makes every easy handle a model asks for fail, as
# libcurl's allocation does when memory runs out.
$(BUILD)/tests/test_models_nomem: override LDFLAGS += -Wl,--wrap=curl_easy_init

# The dependency step runs first and alone, so that nothing is compiled
# before the libraries it needs are present.
deps:
	$(Q)scripts/deps.sh

# What building and the demo's pictures need (gnuplot-nox, jq), and no test
# tool: the demo's set-up.
deps-build:
	$(Q)scripts/deps.sh --build

check: deps
	$(Q)$(MAKE) --no-print-directory check-run

check-run: all units layers lengths
	$(Q)BUILD=$(BUILD) tests/run.sh

EXPERIMENT ?=
demo: deps-build
	$(Q)$(MAKE) --no-print-directory all
	$(Q)BUILD=$(BUILD) scripts/demo.sh $(EXPERIMENT)

# The end-to-end tests under AddressSanitizer and UndefinedBehaviorSanitizer:
# every file but those that test the scripts, documents and install
# (whatever of crawl they run, the other files run too; valgrind's test
# skips itself under a sanitizer). The plain build's check runs them all.
SAN_SKIP := scripts demo readme install man completion layers valgrind
SAN_TESTS := $(filter-out $(SAN_SKIP),$(basename $(notdir $(wildcard tests/e2e/*.bats))))
sanitize: deps
	$(Q)UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1 $(UBSAN_OPTIONS)" TESTS="$(SAN_TESTS)" $(MAKE) --no-print-directory BUILD=build/asan SAN=address,undefined CFLAGS="-O1 -g" check-run

# ThreadSanitizer: the unit tests and the end-to-end tests of the models,
# procs too: its workers are forked before any thread starts
# (die_after_fork=0 still lets --mode=all fork them from its parent).
tsan: deps
	$(Q)$(MAKE) --no-print-directory BUILD=build/tsan SAN=thread CFLAGS="-O1 -g" all units
	$(Q)BUILD=build/tsan TESTS="crawl hardening compare stream state parse frontier lab" TSAN_OPTIONS="halt_on_error=1 die_after_fork=0 $(TSAN_OPTIONS)" tests/run.sh

# A sixth model is one file and one registry entry: crawl built once more
# with tests/model/mode_seqmulti.c, and the tests that run every model,
# --mode=all, --help, the manual and the completion run against it, with
# nothing else changed: the tests tagged models (each test that reads the
# registry or runs --mode=all, held to the tag by suite.bats), in every
# file but MODEL_SKIP's. Their loops over the models run the sixth alone
# (SKIP_MODES): make check ran the other five on the same code.
# The tagged tests took 5 minutes where the seven files it ran before took
# 2 (two cores at a load of 20; run one after the other). MODEL_SKIP:
# lab.bats tests the shared --frontier across machines with workers of
# the concurrent models (lab_up picks them); with the sequential sixth
# alone it runs three sequential workers across the lab, 160 s alone on
# that machine, as much again as every other file's added time, for what
# frontier.bats's tests of every model already run on one machine.
MODEL_SKIP := lab
MODEL_TESTS := $(filter-out $(MODEL_SKIP),$(basename $(notdir $(wildcard tests/e2e/*.bats))))
# The build starts from the plain build's objects, when there are any (the
# same flags; their times kept, so that make remakes a stale one): only the
# registry and the model's file are compiled again.
check-model: deps
	$(Q)if [ -d build/lib ]; then mkdir -p build/model && \
		(cd build && find lib cmd fixture tests -name '*.o' ! -name modes.o -exec cp -p --parents -t model {} +); fi
	$(Q)$(MAKE) --no-print-directory BUILD=build/model EXTRA_MODEL=tests/model/mode_seqmulti.c all units
	$(Q)BUILD=build/model SKIP_MODES="$$(build/model/crawl --list-modes | grep -vx seqmulti | tr '\n' ' ')" \
		TAGS=models TESTS="$(MODEL_TESTS)" tests/run.sh

# The modules of lib/ as its objects link them (scripts/layers.sh): no
# cycle between modules, no include of another module's *_internal.h.
# make check runs it before the tests.
layers: $(LIB_OBJ)
	$(Q)scripts/layers.sh $(BUILD)

# One concern a function: none over 90 lines in lib/, cmd/ or fixture/ but
# the scanner's tokenizer and the URL parser (scripts/lengths.sh).
lengths:
	$(Q)scripts/lengths.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)BUILD=$(BUILD) scripts/bench.sh

# libFuzzer targets (tests/fuzz/fuzz_*.c), built with clang, each run for
# FUZZ_SECONDS on a copy of its seeds: the test pages and bad input lists
# double as seeds, testdata/fuzz/ holds the rest.
FUZZ_SECONDS ?= 60
FUZZ_SRC     := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN     := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)

build/fuzz/fuzz_fixture_%: tests/fuzz/fuzz_fixture_%.c build/fuzz/libfixture.a
	@echo "  FUZZ    $@"
	$(Q)$(CC) $(CFLAGS) -fsanitize=fuzzer -o $@ $^ $(FIX_LIBS)

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c build/fuzz/libcrawl.a
	@echo "  FUZZ    $@"
	$(Q)$(CC) $(CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

fuzz: deps
	$(Q)scripts/deps.sh clang=clang libclang-rt-14-dev
	$(Q)$(MAKE) --no-print-directory CC=clang SAN=address,undefined \
		CFLAGS="-O1 -g -fsanitize=fuzzer-no-link" BUILD=build/fuzz $(FUZZ_BIN)
	$(Q)for f in $(FUZZ_BIN); do \
		name=$${f#build/fuzz/fuzz_}; corpus=build/fuzz/corpus-$$name; \
		case $$name in \
		html)    seeds="testdata/html/*" ;; \
		scan)    seeds="testdata/fuzz/scan/* testdata/html/*" ;; \
		urllist) seeds="testdata/fuzz/urllist/* testdata/bad-input/*" ;; \
		*)       seeds="testdata/fuzz/$$name/*" ;; \
		esac; \
		mkdir -p $$corpus && cp -n $$seeds $$corpus/ 2>/dev/null; \
		echo "== $$f: $(FUZZ_SECONDS) s"; \
		$$f -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -print_final_stats=1 \
			-artifact_prefix=build/fuzz/crash-$$name- $$corpus 2>&1 | tail -12 || exit 1; \
	done

# Where make install puts things: the usual names, so that a packager can
# move any of them (make install PREFIX=/usr DESTDIR=$PWD/stage).
PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
MAN1DIR     ?= $(PREFIX)/share/man/man1
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
INSTALL     ?= install

# Every file make install writes, and so every file make uninstall removes.
# The fixture server gets crawl's prefix: "fixture-server" alone says
# nothing in a shared bin directory.
INSTALLED := $(BINDIR)/crawl $(BINDIR)/crawl-fixture-server \
	$(MAN1DIR)/crawl.1 $(MAN1DIR)/crawl-fixture-server.1 \
	$(BASHCOMPDIR)/crawl $(ZSHCOMPDIR)/_crawl

install: all
	$(INSTALL) -m 755 -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(MAN1DIR)" \
		"$(DESTDIR)$(BASHCOMPDIR)" "$(DESTDIR)$(ZSHCOMPDIR)"
	$(INSTALL) -m 755 $(BUILD)/crawl "$(DESTDIR)$(BINDIR)/crawl"
	$(INSTALL) -m 755 $(BUILD)/fixture-server "$(DESTDIR)$(BINDIR)/crawl-fixture-server"
	$(INSTALL) -m 644 $(BUILD)/crawl.1 "$(DESTDIR)$(MAN1DIR)/crawl.1"
	$(INSTALL) -m 644 doc/crawl-fixture-server.1 "$(DESTDIR)$(MAN1DIR)/crawl-fixture-server.1"
	$(INSTALL) -m 644 completion/crawl.bash "$(DESTDIR)$(BASHCOMPDIR)/crawl"
	$(INSTALL) -m 644 completion/_crawl "$(DESTDIR)$(ZSHCOMPDIR)/_crawl"

# Only the files: the directories may hold other programs' files.
uninstall:
	rm -f $(foreach f,$(INSTALLED),"$(DESTDIR)$(f)")

clean:
	rm -rf build

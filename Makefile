# libremat — one build for everything.  `make help` lists the targets.
#
# Each directory contributes a fragment (*.mk) that appends to the lists
# below; this file only holds the shared flags and the top-level targets.

CUDA_HOME ?= /usr/local/cuda
BUILD     ?= build
CC        ?= cc
CXX       ?= c++
NVCC      ?= $(CUDA_HOME)/bin/nvcc

WARN      := -Wall -Wextra -Werror
CSTD      := -std=c11 -D_GNU_SOURCE
OPT       ?= -O2 -g
# -MMD -MP: each compile also writes the headers it read (x.o -> x.d; a
# program or library compiled and linked in one command: out[.so] -> out.d),
# read back below, so that no rule lists headers by hand.  Such a command
# compiles one source: with more, the last one's .d overwrites the others.
DEPFLAGS  := -MMD -MP
CFLAGS    += $(CSTD) $(WARN) $(OPT) -fPIC -I$(CUDA_HOME)/include $(DEPFLAGS)
CXXFLAGS  += -std=c++17 $(WARN) $(OPT) -fPIC -I$(CUDA_HOME)/include
SAN       := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# The sanitizer libremat.so, remat-plan and remat-report are built with, for
# check-asan and check-tsan (each in its own tree); empty in a normal build.
TOOL_SAN  ?=

# Filled by the fragments.
ALL_TARGETS   :=
UNIT_TESTS    :=   # built with $(SAN); run by check-unit
E2E_TESTS     :=   # shell scripts run by check-e2e, each from the repo root
BENCHES       :=   # scripts or binaries run by `make bench`
TEST_INPUTS_OK :=  # stamps: generated test inputs proven fresh (tests/tests.mk)

.PHONY: all test check-unit check-e2e check-asan check-tsan demo bench clean deps help format \
	format-check install uninstall
all:

include mk/deps.mk
include sim/sim.mk
include tests/trainers/trainers.mk
include libremat.mk
include planner/planner.mk
include tools/tools.mk
include mk/install.mk
include fuzz/fuzz.mk
include tests/tests.mk

all: $(ALL_TARGETS)

# The header dependencies every compile wrote (DEPFLAGS), the sanitized
# trees' included (harmless: rules for their own targets).
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

help:
	@echo "make          build everything into $(BUILD)/"
	@echo "make deps     install the Debian packages the build and tests need (apt-get); the"
	@echo "              only goal that installs, with make test and make demo, which run it"
	@echo "make test     install deps, build, run unit (ASan+UBSan) and end-to-end tests"
	@echo "make demo     install deps, train gpt on the simulated device, with and without libremat"
	@echo "make bench    benchmarks: preload overhead, planners, replay overhead"
	@echo "make check-asan, check-tsan   the end-to-end tests on a libremat.so, remat-plan"
	@echo "              and remat-report built with ASan+UBSan, or TSan"
	@echo "make check-asan-ci   four of those scripts under ASan+UBSan (what CI runs)"
	@echo "make fuzz     libFuzzer on the trace, graph, node-link and plan readers, FUZZ_SECONDS"
	@echo "              (60) each (clang; fuzz/README.md); make -j2 fuzz runs two at a time"
	@echo "make format   clang-format every C source"
	@echo "make install PREFIX=/usr/local DESTDIR=   remat, remat-plan, remat-report, libremat.so,"
	@echo "              the man page and the docs"

format:
	@git ls-files '*.c' '*.h' '*.cu' | xargs clang-format -i
format-check:
	@git ls-files '*.c' '*.h' '*.cu' | xargs clang-format --dry-run --Werror

clean:
	rm -rf $(BUILD)

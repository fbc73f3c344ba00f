# Test and benchmark drivers.  Fragments append unit-test binaries
# (UNIT_TESTS, built with $(SAN)) and end-to-end scripts (E2E_TESTS, and
# E2E_NVCC_TESTS for those that need nvcc: reported as not run without it).

# tools/gpu/'s validation scripts where there is no GPU: usage, SKIP lines.
E2E_TESTS += tests/e2e/gpu_scripts.sh
# tools/gpu/calibrate.sh --simulate: the simulator's profile measured back
# (built by simnvcc).
E2E_NVCC_TESTS += tests/e2e/gpu_calibrate.sh
# The build itself (mk/): only make deps installs packages.
E2E_TESTS += $(sort $(wildcard tests/build/*.sh))

.PHONY: test check-unit check-e2e bench demo
test: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory check-unit
	@$(MAKE) --no-print-directory check-e2e-only TEST_JOBS=$(JOBS)
	@sh tests/summary.sh $(BUILD)/test-results

# TEST_INPUTS_OK: stamps of the generated, committed files the tests read,
# proven fresh (each fragment says how).  tests/planner/fixtures/
# resnet-402.json is plan_bench's generated ResNet of 402 ops; the planner's
# other fixtures are recordings (a trainer's trace, DTR's log), and
# fuzz/'s corpus is data.
PLANNER_FIXTURE_OK := $(BUILD)/tests/planner/resnet-402.ok
$(PLANNER_FIXTURE_OK): $(BUILD)/bench/plan_bench tests/planner/fixtures/resnet-402.json
	@mkdir -p $(@D)
	$(BUILD)/bench/plan_bench export 2 402 $@.json
	@cmp -s $@.json tests/planner/fixtures/resnet-402.json || { echo \
		"tests/planner/fixtures/resnet-402.json: stale, not what plan_bench writes: run" \
		"$(BUILD)/bench/plan_bench export 2 402 tests/planner/fixtures/resnet-402.json and commit it"; \
		exit 1; }
	@rm -f $@.json && touch $@
TEST_INPUTS_OK += $(PLANNER_FIXTURE_OK)
check-unit: $(UNIT_TESTS) $(TEST_INPUTS_OK)
	@mkdir -p $(BUILD)/test-results
	@sh tests/run-tests.sh $(BUILD)/test-results unit $(UNIT_TESTS)

# End-to-end scripts run TEST_JOBS at a time: make -jN's N, else 1
# (tests/run-tests.sh; each has its own TMPDIR and default plan cache).
# The longest go first, so that the lanes end together.  -jN is in
# MAKEFLAGS only in a recipe's environment (not while make parses, nor in a
# sub-make), so JOBS is read there and handed down as TEST_JOBS.
TEST_JOBS ?=
JOBS = $(or $(TEST_JOBS),$$(echo " $$MAKEFLAGS" | sed -n 's/.* -j\([0-9][0-9]*\).*/\1/p' | grep . || echo 1))
E2E_LONG := tests/e2e/fault_mlp.sh tests/e2e/run_replay_errors.sh tests/e2e/fault_gpt.sh \
	tests/cli/remat_cli.sh tests/e2e/acquire_cache.sh tests/e2e/run_budget_gpt.sh \
	tests/e2e/run_ranks.sh tests/cli/remat_install.sh tests/e2e/trace_period.sh \
	tests/e2e/trainer_alloc_remat.sh tests/e2e/run_layers.sh
# What a pass runs: E2E_SKIP (with its reason, E2E_SKIP_WHY) reported as
# not run, never as passed.
E2E_SKIP ?=
E2E_SKIP_WHY ?=
E2E_ALL = $(E2E_TESTS) $(if $(HAVE_NVCC),$(E2E_NVCC_TESTS))
E2E_TORUN = $(filter-out $(E2E_SKIP),$(E2E_ALL))
E2E_RUN = $(foreach t,$(E2E_LONG),$(filter $(t),$(E2E_TORUN))) $(filter-out $(E2E_LONG),$(E2E_TORUN)) \
	$(if $(HAVE_NVCC),,--not-run "no nvcc at $(NVCC)" $(E2E_NVCC_TESTS)) \
	$(if $(filter $(E2E_SKIP),$(E2E_ALL)),--not-run "$(E2E_SKIP_WHY)" $(filter $(E2E_SKIP),$(E2E_ALL)))
check-e2e: all check-e2e-only
.PHONY: check-e2e-only
check-e2e-only: $(TEST_INPUTS_OK)
	@mkdir -p $(BUILD)/test-results
	@TEST_JOBS=$(JOBS) sh tests/run-tests.sh $(BUILD)/test-results e2e $(E2E_RUN)

# The end-to-end suite on sanitized libremat.so, remat-plan and remat-report
# (the simulator and the trainers, which stand for the driver and the
# user's program, are not instrumented).  The preloaded library needs its
# sanitizer's runtime first in LD_PRELOAD (TEST_SAN_RUNTIME).
#
# What a sanitizer pass leaves to make test: the scripts that run none of
# the instrumented programs (the simulator's ABI and nvcc checks, simcc,
# the trainers alone) are reported as not run, since running the same
# binaries again asserts nothing new.  The fault sweeps run in a process
# per N, sampling (make test tries every N, forked from one run, which a
# sanitizer's threads do not survive: tests/e2e/fault_lib.sh): every
# SAN_SWEEP_STRIDE-th allocation and launch fault of fault_*.sh, every 4th
# kernel fault of run_replay_errors.sh, whose out-of-memory faults, with the
# few N where a rebuild is done again, are all tried: libremat's error paths
# under the sanitizer.
SAN_SKIP := sim/tests/abi_exports.sh sim/tests/abi_real_link.sh \
	sim/tests/abi_cublas_link.sh sim/tests/abi_nccl.sh \
	sim/tests/runtime_nvcc_stub.sh sim/tests/runtime_nvcc_host.sh \
	sim/tests/simcc/simcc_errors.sh sim/tests/simcc/simcc_nvcc.sh tests/e2e/trainer_binaries.sh \
	tests/e2e/trainer_determinism.sh tests/e2e/trainer_learns.sh tests/e2e/trainer_bwd_thread.sh \
	tests/e2e/trainer_oom.sh tests/e2e/trainer_pinned.sh tests/e2e/trainer_alloc.sh \
	tests/e2e/trainer_nvcc.sh tests/e2e/trainer_arena.sh tests/e2e/gpu_calibrate.sh \
	$(wildcard tests/build/*.sh)
SAN_SWEEP_STRIDE ?= 19
# A test's time limit (a hang's, not a speed check) grows with the slowdown:
# TSan's is 5-15 times, and the profile of a program's own pool (one
# allocation copied and compared per kernel) under it takes ten minutes.
SAN_TEST_TIMEOUT ?= 1200
TSAN_TEST_TIMEOUT ?= 2400
# Lines that call it start with +: make sees no $(MAKE) in them, and
# would run the sub-make without -jN's job slots (it said so: "jobserver
# unavailable: using -j1").
SANITIZED = $(MAKE) --no-print-directory BUILD=$(BUILD)/$(1) TOOL_SAN="$(2)"
SANITIZED_E2E = SWEEP_FORK=0 SWEEP_STRIDE=$(SAN_SWEEP_STRIDE) REPLAY_FAULT_STRIDE=4 TEST_TIMEOUT=$(3) \
	$(call SANITIZED,$(1),$(2)) \
	E2E_SKIP="$(SAN_SKIP)" E2E_SKIP_WHY="runs nothing instrumented: make test runs it" \
	TEST_JOBS=$(JOBS) check-e2e-only
# The sanitized scripts run their programs on the simulated device of the
# normal build (sim/bin/simrun's default), so that build comes first: on a
# fresh clone nothing else makes it.
check-asan: all
	+@$(call SANITIZED,asan,$(SAN)) all
	+@TEST_SAN_RUNTIME=$$($(CC) -print-file-name=libasan.so) \
	 ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	 $(call SANITIZED_E2E,asan,$(SAN),$(SAN_TEST_TIMEOUT))
	@sh tests/summary.sh $(BUILD)/asan/test-results
# CI's share of check-asan (.ci/run), within CI's 20 minutes: four scripts
# that go through most of libremat under the sanitizer (the profile and its
# trace, planning, a plan's validation and its refusal, replay and
# verification, a backward thread) in about 100 CPU-seconds (2026-11-24;
# run_offload.sh, 52 more, is left to make check-asan, which runs them all).
SAN_CI := tests/e2e/run_budget_mlp.sh tests/e2e/run_threads.sh tests/e2e/run_plan_errors.sh \
	tests/e2e/trace_contents.sh
.PHONY: check-asan-ci
check-asan-ci: all
	+@$(call SANITIZED,asan,$(SAN)) all
	+@TEST_SAN_RUNTIME=$$($(CC) -print-file-name=libasan.so) \
	 ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	 $(call SANITIZED,asan,$(SAN)) TEST_TIMEOUT=$(SAN_TEST_TIMEOUT) TEST_JOBS=$(JOBS) \
	 E2E_TESTS="$(SAN_CI)" E2E_NVCC_TESTS= check-e2e-only
	@sh tests/summary.sh $(BUILD)/asan/test-results
check-tsan: all
	+@$(call SANITIZED,tsan,-fsanitize=thread) all
	+@TEST_SAN_RUNTIME=$$($(CC) -print-file-name=libtsan.so) \
	 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
	 $(call SANITIZED_E2E,tsan,-fsanitize=thread,$(TSAN_TEST_TIMEOUT))
	@sh tests/summary.sh $(BUILD)/tsan/test-results

# The fault sweeps with every N also in a process of its own, which must
# end as the forked child did (make test: two N a sweep), and every edit of
# a cached plan, one that rebuilds by replay and one that offloads (make
# test: every 4th).
.PHONY: check-faults
check-faults: all
	@rm -rf $(BUILD)/fault-results && mkdir -p $(BUILD)/fault-results
	@SWEEP_STRIDE=1 TEST_TIMEOUT=1800 sh tests/run-tests.sh $(BUILD)/fault-results faults $(FAULT_TESTS) \
		tests/e2e/run_plan_mutations.sh tests/e2e/run_plan_mutations_offload.sh
	@sh tests/summary.sh $(BUILD)/fault-results

# BENCH_DATA: the folder of DTR's and Checkmate's graphs (bench/planner/
# run.sh), outside the repository; empty, those benchmarks are not run.
BENCH_DATA ?=
bench: all
	@for b in $(BENCHES); do echo "== $$b"; BENCH_DATA="$(BENCH_DATA)" sh $$b || exit 1; done

demo: deps
	@$(MAKE) --no-print-directory all
	@sh tools/demo.sh

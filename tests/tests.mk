# Test and benchmark drivers.  Fragments append unit-test binaries
# (UNIT_TESTS, built with $(SAN)) and end-to-end scripts (E2E_TESTS, and
# E2E_NVCC_TESTS for those that need nvcc: reported as not run without it).

# tools/gpu/'s validation scripts where there is no GPU: usage, SKIP lines.
E2E_TESTS += tests/e2e/gpu_scripts.sh

.PHONY: test check-unit check-e2e bench demo
test: deps-ok
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory check-unit check-e2e-only
	@sh tests/summary.sh $(BUILD)/test-results

check-unit: $(UNIT_TESTS)
	@mkdir -p $(BUILD)/test-results
	@sh tests/run-tests.sh $(BUILD)/test-results unit $(UNIT_TESTS)

check-e2e: all check-e2e-only
.PHONY: check-e2e-only
check-e2e-only:
	@mkdir -p $(BUILD)/test-results
	@sh tests/run-tests.sh $(BUILD)/test-results e2e $(E2E_TESTS) \
		$(if $(HAVE_NVCC),$(E2E_NVCC_TESTS),--not-run "no nvcc at $(NVCC)" $(E2E_NVCC_TESTS))

# The end-to-end suite on sanitized libremat.so, remat-plan and remat-report
# (the simulator and the trainers, which stand for the driver and the
# user's program, are not instrumented).  The preloaded library needs its
# sanitizer's runtime first in LD_PRELOAD (TEST_SAN_RUNTIME).
SANITIZED = $(MAKE) --no-print-directory BUILD=$(BUILD)/$(1) TOOL_SAN="$(2)"
check-asan:
	@$(call SANITIZED,asan,$(SAN)) all
	@TEST_SAN_RUNTIME=$$($(CC) -print-file-name=libasan.so) \
	 ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	 $(call SANITIZED,asan,$(SAN)) check-e2e-only
	@sh tests/summary.sh $(BUILD)/asan/test-results
check-tsan:
	@$(call SANITIZED,tsan,-fsanitize=thread) all
	@TEST_SAN_RUNTIME=$$($(CC) -print-file-name=libtsan.so) \
	 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
	 $(call SANITIZED,tsan,-fsanitize=thread) check-e2e-only
	@sh tests/summary.sh $(BUILD)/tsan/test-results

# The fault sweeps at every N and every edit of a cached plan (make test
# tries every 7th and every 4th).
.PHONY: check-faults
check-faults: all
	@rm -rf $(BUILD)/fault-results && mkdir -p $(BUILD)/fault-results
	@SWEEP_STRIDE=1 TEST_TIMEOUT=1800 sh tests/run-tests.sh $(BUILD)/fault-results faults $(FAULT_TESTS) \
		tests/e2e/run_plan_mutations.sh
	@sh tests/summary.sh $(BUILD)/fault-results

bench: all
	@for b in $(BENCHES); do echo "== $$b"; sh $$b || exit 1; done

demo: all
	@sh tools/demo.sh

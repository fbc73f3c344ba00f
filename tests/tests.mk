# Test and benchmark drivers.  Fragments append unit-test binaries
# (UNIT_TESTS, built with $(SAN)) and end-to-end scripts (E2E_TESTS, and
# E2E_NVCC_TESTS for those that need nvcc: reported as not run without it).

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

bench: all
	@for b in $(BENCHES); do echo "== $$b"; sh $$b || exit 1; done

demo: all
	@sh tools/demo.sh

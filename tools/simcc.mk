# tools/simcc (kernel modules for the simulated device), tools/simrun, and
# their tests (tests/simcc/).  Included early by tests/trainers/trainers.mk
# (which needs SIMCC_DEPS), hence the guard.  Other fragments build modules with
#   $(SIMCC) $(SIMCC_FLAGS) src.cu -o out.so      depending on $(SIMCC_DEPS)
ifndef SIMCC_MK_INCLUDED
SIMCC_MK_INCLUDED := 1
SIMCC       := tools/simcc
SIMCC_FLAGS := --simcuda-dir $(SIMCUDA_DIR) -Werror
SIMCC_DEPS  := tools/simcc tools/simcc-scan.awk tests/simcuda/include/simcuda_kernel.h \
	       tests/simcuda/include/simcuda_abi.h tests/simcuda/include/simcuda_qualifiers.h \
	       $(wildcard tests/simcuda/include/device/*.h tests/simcuda/include/device/*/*.h) \
	       $(SIMCUDA_DIR)/libsimcuda_kernel.so
HAVE_NVCC   := $(shell test -x $(NVCC) && echo 1)

$(BUILD)/simcc/%.so: tests/simcc/%.cu $(SIMCC_DEPS)
	@mkdir -p $(@D)
	$(SIMCC) $(SIMCC_FLAGS) $< -o $@

$(BUILD)/simcc/sm_90/%.cubin: tests/simcc/%.cu
	@mkdir -p $(@D)
	$(NVCC) -cubin -arch=sm_90 $< -o $@

$(BUILD)/simcc/test_simcc: tests/simcc/test_simcc.c tests/simcc/simcc_test.h tests/simcuda/include/simcuda_abi.h \
		$(BUILD)/simcc/simcc_kernels.so $(BUILD)/simcc/simcc_plain.so \
		$(SIMCUDA_DIR)/libsimcuda_kernel.so
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SAN) -Itests/simcuda/include -DSIMCC_TEST_MODULE=\"$(BUILD)/simcc/simcc_kernels.so\" $< -o $@ \
		-L$(SIMCUDA_DIR) -lsimcuda_kernel -Wl,-rpath,$(abspath $(SIMCUDA_DIR)) \
		-lcmocka -ldl -lm

$(BUILD)/simcc/test_warp: tests/simcc/test_warp.c tests/simcc/simcc_test.h tests/simcuda/tests/child.h \
		$(BUILD)/simcc/simcc_warp.so $(SIMCUDA_DIR)/libsimcuda_kernel.so
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SAN) -Itests/simcuda/include -Itests/simcuda/tests \
		-DSIMCC_WARP_MODULE=\"$(abspath $(BUILD)/simcc/simcc_warp.so)\" $< -o $@ \
		-L$(SIMCUDA_DIR) -lsimcuda_kernel -Wl,-rpath,$(abspath $(SIMCUDA_DIR)) -lcmocka -ldl

SIMCC_SOURCES := simcc_kernels simcc_plain simcc_warp
ALL_TARGETS += $(SIMCC_SOURCES:%=$(BUILD)/simcc/%.so)
UNIT_TESTS  += $(BUILD)/simcc/test_simcc $(BUILD)/simcc/test_warp
E2E_TESTS   += tests/simcc/simcc_errors.sh
ifeq ($(HAVE_NVCC),1)
ALL_TARGETS += $(SIMCC_SOURCES:%=$(BUILD)/simcc/sm_90/%.cubin)
endif
E2E_NVCC_TESTS += tests/simcc/simcc_nvcc.sh
endif

# Unit tests of the simulated driver and the kernel support library
# (cmocka, ASan+UBSan), with the hand-written test modules they load.
DRVT_DIR := tests/simcuda/tests
DRVT_OUT := $(BUILD)/simcuda/tests
DRVT_MODULES := $(DRVT_OUT)/modules/testkernels.so $(DRVT_OUT)/modules/badabi.so \
	$(DRVT_OUT)/modules/second.so

# Modules are built like simcc output: plain -fPIC shared objects linked
# against libsimcuda_kernel.so, without sanitizers (their code runs on the
# stream workers' fiber stacks).
$(DRVT_OUT)/modules/%.so: $(DRVT_DIR)/modules/%.c tests/simcuda/include/simcuda_abi.h $(SIMCUDA_DIR)/libsimcuda_kernel.so
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SIMCUDA_INC) -shared -o $@ $< -L$(SIMCUDA_DIR) -lsimcuda_kernel \
		-Wl,-rpath,$(abspath $(SIMCUDA_DIR))

DRVT_TESTS := $(patsubst $(DRVT_DIR)/%.c,$(BUILD)/tests/%,$(wildcard $(DRVT_DIR)/driver_*.c $(DRVT_DIR)/kernel_*.c))

DRVT_DEPS := $(DRVT_DIR)/driver_common.h $(DRVT_DIR)/child.h $(SIMD_SAN_LIB) $(DRVT_MODULES) \
	tests/simcuda/include/simcuda_stats.h
define DRVT_LINK
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SAN) $(SIMCUDA_INC) -DTEST_MODULE_DIR='"$(abspath $(DRVT_OUT)/modules)"' \
		-o $@ $< -L$(dir $(SIMD_SAN_LIB)) -l:libcuda.so.1 -L$(SIMCUDA_DIR) -lsimcuda_kernel \
		-lcmocka -ldl -lpthread -Wl,-rpath,$(abspath $(dir $(SIMD_SAN_LIB))):$(abspath $(SIMCUDA_DIR))
endef

$(BUILD)/tests/driver_%: $(DRVT_DIR)/driver_%.c $(DRVT_DEPS)
	$(DRVT_LINK)

$(BUILD)/tests/kernel_%: $(DRVT_DIR)/kernel_%.c $(DRVT_DEPS)
	$(DRVT_LINK)

# A few of the tests again against the library everyone else uses (the
# sanitized build above checks the driver's own code; this one checks the
# shipped binary).
DRVT_PLAIN := $(BUILD)/tests/driver_basic_plain $(BUILD)/tests/driver_vmm_plain \
	$(BUILD)/tests/driver_capture_plain
$(BUILD)/tests/driver_%_plain: $(DRVT_DIR)/driver_%.c $(DRVT_DIR)/driver_common.h \
		$(SIMCUDA_DIR)/libcuda.so.1 $(DRVT_MODULES) tests/simcuda/include/simcuda_stats.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SAN) $(SIMCUDA_INC) -DTEST_MODULE_DIR='"$(abspath $(DRVT_OUT)/modules)"' \
		-o $@ $< -L$(SIMCUDA_DIR) -l:libcuda.so.1 -lsimcuda_kernel -lcmocka -ldl -lpthread \
		-Wl,-rpath,$(abspath $(SIMCUDA_DIR))

# Named as targets so make never deletes them as intermediate files.
.SECONDARY: $(DRVT_MODULES)
ALL_TARGETS += $(DRVT_MODULES)
UNIT_TESTS += $(DRVT_TESTS) $(DRVT_PLAIN)

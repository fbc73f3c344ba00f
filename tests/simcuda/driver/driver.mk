# The simulated CUDA driver, build/simcuda/libcuda.so.1: the implemented
# entry points (tests/simcuda/driver/*.c, built -fvisibility=hidden with the
# entry points marked visible), plus a "not supported" stub for every other
# name the real libcuda exports, all unversioned.
SIMD_DIR  := tests/simcuda/driver
SIMD_OUT  := $(BUILD)/simcuda/driver
SIMD_SYMS := tests/simcuda/symbols/libcuda.syms
SIMD_SRCS := $(wildcard $(SIMD_DIR)/*.c)
SIMD_OBJS := $(patsubst $(SIMD_DIR)/%.c,$(SIMD_OUT)/%.o,$(SIMD_SRCS)) $(SIMD_OUT)/procaddr_table.o
SIMD_HDRS := $(wildcard $(SIMD_DIR)/*.h) tests/simcuda/include/simcuda_abi.h \
	tests/simcuda/include/simcuda_stats.h tests/simcuda/simcuda_internal.h
SIMD_CFLAGS = $(CFLAGS) -fvisibility=hidden $(SIMCUDA_INC) -I$(SIMD_OUT) -I$(SIMD_DIR)

$(SIMD_OUT)/errors.inc: $(SIMD_DIR)/gen-errors.sh $(CUDA_HOME)/include/cuda.h
	@mkdir -p $(@D)
	sh $(SIMD_DIR)/gen-errors.sh $(CUDA_HOME)/include/cuda.h $@

SIMD_TYPEDEFS := $(CUDA_HOME)/include/cudaTypedefs.h $(CUDA_HOME)/include/cudaProfilerTypedefs.h
$(SIMD_OUT)/procaddr_table.c: $(SIMD_DIR)/gen-procaddr.sh $(SIMD_TYPEDEFS) $(SIMD_SYMS)
	@mkdir -p $(@D)
	sh $(SIMD_DIR)/gen-procaddr.sh $(word 1,$(SIMD_TYPEDEFS)) $(SIMD_SYMS) $@ $(word 2,$(SIMD_TYPEDEFS))

$(SIMD_OUT)/procaddr_table.o: $(SIMD_OUT)/procaddr_table.c $(SIMD_DIR)/procaddr.h
	$(CC) $(SIMD_CFLAGS) -c $< -o $@

$(SIMD_OUT)/init.o: $(SIMD_OUT)/errors.inc

$(SIMD_OUT)/%.o: $(SIMD_DIR)/%.c $(SIMD_HDRS)
	@mkdir -p $(@D)
	$(CC) $(SIMD_CFLAGS) -c $< -o $@

$(SIMD_OUT)/stubs.c: $(filter-out $(SIMD_OUT)/procaddr_table.o,$(SIMD_OBJS)) $(SIMD_SYMS) tests/simcuda/symbols/gen-stubs.sh
	sh tests/simcuda/symbols/gen-stubs.sh $(SIMD_SYMS) 801 $@ $(filter-out $(SIMD_OUT)/procaddr_table.o,$(SIMD_OBJS))

$(SIMD_OUT)/stubs.o: $(SIMD_OUT)/stubs.c
	$(CC) $(CFLAGS) -Wno-missing-prototypes -c $< -o $@

$(SIMD_OUT)/libcuda.map: $(SIMD_SYMS) $(SIMD_DIR)/extra.syms tests/simcuda/symbols/gen-version-script.sh
	@mkdir -p $(@D)
	sh tests/simcuda/symbols/gen-version-script.sh - $@ $(SIMD_SYMS) tests/simcuda/driver/extra.syms

# -Bsymbolic-functions: cuGetProcAddress hands out this library's own entry
# points even when a preloaded library (libremat) interposes the same names.
$(SIMCUDA_DIR)/libcuda.so.1: $(SIMD_OBJS) $(SIMD_OUT)/stubs.o $(SIMD_OUT)/libcuda.map $(SIMCUDA_DIR)/libsimcuda_kernel.so
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libcuda.so.1 -Wl,--version-script=$(SIMD_OUT)/libcuda.map \
		-Wl,-Bsymbolic-functions -Wl,-z,defs -o $@ $(SIMD_OBJS) $(SIMD_OUT)/stubs.o \
		-L$(SIMCUDA_DIR) -lsimcuda_kernel -Wl,-rpath,'$$ORIGIN' -ldl -lpthread -lm
	ln -sf libcuda.so.1 $(SIMCUDA_DIR)/libcuda.so

ALL_TARGETS += $(SIMCUDA_DIR)/libcuda.so.1

# The same library built with $(SAN), for the driver's own unit tests, so
# ASan and UBSan also check the driver's code.  It finds the (uninstrumented)
# kernel library in $(SIMCUDA_DIR).
SIMD_SAN_OUT  := $(BUILD)/san/simcuda/driver
SIMD_SAN_OBJS := $(patsubst $(SIMD_OUT)/%.o,$(SIMD_SAN_OUT)/%.o,$(SIMD_OBJS) $(SIMD_OUT)/stubs.o)
SIMD_SAN_LIB  := $(BUILD)/san/simcuda/libcuda.so.1

$(SIMD_SAN_OUT)/%.o: $(SIMD_DIR)/%.c $(SIMD_HDRS) $(SIMD_OUT)/errors.inc
	@mkdir -p $(@D)
	$(CC) $(SIMD_CFLAGS) $(SAN) -c $< -o $@

$(SIMD_SAN_OUT)/procaddr_table.o: $(SIMD_OUT)/procaddr_table.c $(SIMD_DIR)/procaddr.h
	@mkdir -p $(@D)
	$(CC) $(SIMD_CFLAGS) $(SAN) -c $< -o $@

$(SIMD_SAN_OUT)/stubs.o: $(SIMD_OUT)/stubs.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(SIMD_SAN_LIB): $(SIMD_SAN_OBJS) $(SIMD_OUT)/libcuda.map $(SIMCUDA_DIR)/libsimcuda_kernel.so
	$(CC) $(SAN) -shared -Wl,-soname,libcuda.so.1 -Wl,--version-script=$(SIMD_OUT)/libcuda.map \
		-Wl,-Bsymbolic-functions -o $@ $(SIMD_SAN_OBJS) \
		-L$(SIMCUDA_DIR) -lsimcuda_kernel -Wl,-rpath,$(abspath $(SIMCUDA_DIR)) -ldl -lpthread -lm
-include tests/simcuda/tests/driver_tests.mk

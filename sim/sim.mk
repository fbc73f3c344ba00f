# sim/ — the simulated device (sim/README.md): build/simcuda/{libcuda.so.1,
# libcudart.so.13,libcupti.so.13,libcublas.so.13,libnccl.so.2,
# libsimcuda_kernel.so}, simcc's modules, and the simulator's own tests.
# Other fragments build kernel modules with
#   $(SIMCC) $(SIMCC_FLAGS) src.cu -o out.so      depending on $(SIMCC_DEPS)
SIMCUDA_DIR := $(BUILD)/simcuda
SIMCUDA_INC := -Isim/include -Isim

# ---- symbols/ ----
# The names the real libraries export (sim/symbols/*.syms) are generated
# from the toolkit's libraries and committed; the build proves them fresh
# (listed again and compared, regen-lists.sh --check) before it makes a
# library from them, and else stops, naming the stale lists.
SIM_SYMS_OK   := $(SIMCUDA_DIR)/symbols.ok
SIM_REAL_LIBS := $(wildcard $(addprefix $(CUDA_HOME)/,lib*/libcudart.so.13 lib*/libcupti.so.13 \
	extras/CUPTI/lib64/libcupti.so.13 lib*/stubs/libcuda.so lib*/libcublas.so.13 lib*/libnccl.so.2))
$(SIM_SYMS_OK): $(wildcard sim/symbols/*.syms) sim/symbols/regen-lists.sh $(SIM_REAL_LIBS)
	@mkdir -p $(@D)
	sh sim/symbols/regen-lists.sh --check $(CUDA_HOME)
	@touch $@

# ---- kernel/kernel.mk ----
# libsimcuda_kernel.so: the CUDA built-ins and the grid runner that every
# kernel module built by sim/bin/simcc (and the simulated driver) links.
SIMK_SRCS := $(wildcard sim/kernel/*.c)
SIMK_OBJS := $(patsubst sim/kernel/%.c,$(BUILD)/simcuda/kernel/%.o,$(SIMK_SRCS))

$(BUILD)/simcuda/kernel/%.o: sim/kernel/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fvisibility=hidden $(SIMCUDA_INC) -c $< -o $@

$(SIMCUDA_DIR)/libsimcuda_kernel.so: $(SIMK_OBJS)
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libsimcuda_kernel.so -Wl,-z,defs -o $@ $^ -lpthread -lm

ALL_TARGETS += $(SIMCUDA_DIR)/libsimcuda_kernel.so

# ---- simcc.mk ----
# sim/bin/simcc (kernel modules for the simulated device) and its tests
# (sim/tests/simcc/).
SIMCC       := sim/bin/simcc
SIMCC_FLAGS := --simcuda-dir $(SIMCUDA_DIR) -Werror
SIMCC_DEPS  := sim/bin/simcc sim/bin/simcc-scan.awk sim/include/simcuda_kernel.h \
	       sim/include/simcuda_abi.h sim/include/simcuda_qualifiers.h \
	       $(wildcard sim/include/device/*.h sim/include/device/*/*.h) \
	       $(SIMCUDA_DIR)/libsimcuda_kernel.so
HAVE_NVCC   := $(shell test -x $(NVCC) && echo 1)

$(BUILD)/simcc/%.so: sim/tests/simcc/%.cu $(SIMCC_DEPS)
	@mkdir -p $(@D)
	$(SIMCC) $(SIMCC_FLAGS) $< -o $@

$(BUILD)/simcc/sm_90/%.cubin: sim/tests/simcc/%.cu
	@mkdir -p $(@D)
	$(NVCC) -cubin -arch=sm_90 $< -o $@

$(BUILD)/simcc/test_simcc: sim/tests/simcc/test_simcc.c \
		$(BUILD)/simcc/simcc_kernels.so $(BUILD)/simcc/simcc_plain.so \
		$(SIMCUDA_DIR)/libsimcuda_kernel.so
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SAN) -Isim/include -DSIMCC_TEST_MODULE=\"$(BUILD)/simcc/simcc_kernels.so\" $< -o $@ \
		-L$(SIMCUDA_DIR) -lsimcuda_kernel -Wl,-rpath,$(abspath $(SIMCUDA_DIR)) \
		-lcmocka -ldl -lm

$(BUILD)/simcc/test_warp: sim/tests/simcc/test_warp.c \
		$(BUILD)/simcc/simcc_warp.so $(SIMCUDA_DIR)/libsimcuda_kernel.so
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SAN) -Isim/include -Isim/tests \
		-DSIMCC_WARP_MODULE=\"$(abspath $(BUILD)/simcc/simcc_warp.so)\" $< -o $@ \
		-L$(SIMCUDA_DIR) -lsimcuda_kernel -Wl,-rpath,$(abspath $(SIMCUDA_DIR)) -lcmocka -ldl

SIMCC_SOURCES := simcc_kernels simcc_plain simcc_warp
ALL_TARGETS += $(SIMCC_SOURCES:%=$(BUILD)/simcc/%.so)
UNIT_TESTS  += $(BUILD)/simcc/test_simcc $(BUILD)/simcc/test_warp
E2E_TESTS   += sim/tests/simcc/simcc_errors.sh
ifeq ($(HAVE_NVCC),1)
ALL_TARGETS += $(SIMCC_SOURCES:%=$(BUILD)/simcc/sm_90/%.cubin)
endif
E2E_NVCC_TESTS += sim/tests/simcc/simcc_nvcc.sh

# ---- driver/driver.mk ----
# The simulated CUDA driver, build/simcuda/libcuda.so.1: the implemented
# entry points (sim/driver/*.c, built -fvisibility=hidden with the
# entry points marked visible), plus a "not supported" stub for every other
# name the real libcuda exports, all unversioned.
SIMD_DIR  := sim/driver
SIMD_OUT  := $(BUILD)/simcuda/driver
SIMD_SYMS := sim/symbols/libcuda.syms
SIMD_SRCS := $(wildcard $(SIMD_DIR)/*.c)
SIMD_OBJS := $(patsubst $(SIMD_DIR)/%.c,$(SIMD_OUT)/%.o,$(SIMD_SRCS)) $(SIMD_OUT)/procaddr_table.o
SIMD_CFLAGS = $(CFLAGS) -fvisibility=hidden $(SIMCUDA_INC) -I$(SIMD_OUT) -I$(SIMD_DIR)

$(SIMD_OUT)/errors.inc: $(SIMD_DIR)/gen-errors.sh $(CUDA_HOME)/include/cuda.h
	@mkdir -p $(@D)
	sh $(SIMD_DIR)/gen-errors.sh $(CUDA_HOME)/include/cuda.h $@

SIMD_TYPEDEFS := $(CUDA_HOME)/include/cudaTypedefs.h $(CUDA_HOME)/include/cudaProfilerTypedefs.h
$(SIMD_OUT)/procaddr_table.c: $(SIMD_DIR)/gen-procaddr.sh $(SIMD_TYPEDEFS) $(SIMD_SYMS)
	@mkdir -p $(@D)
	sh $(SIMD_DIR)/gen-procaddr.sh $(word 1,$(SIMD_TYPEDEFS)) $(SIMD_SYMS) $@ $(word 2,$(SIMD_TYPEDEFS))

$(SIMD_OUT)/procaddr_table.o: $(SIMD_OUT)/procaddr_table.c
	$(CC) $(SIMD_CFLAGS) -c $< -o $@

$(SIMD_OUT)/init.o: $(SIMD_OUT)/errors.inc

$(SIMD_OUT)/%.o: $(SIMD_DIR)/%.c
	@mkdir -p $(@D)
	$(CC) $(SIMD_CFLAGS) -c $< -o $@

$(SIMD_OUT)/stubs.c: $(filter-out $(SIMD_OUT)/procaddr_table.o,$(SIMD_OBJS)) $(SIMD_SYMS) sim/symbols/gen-stubs.sh
	sh sim/symbols/gen-stubs.sh $(SIMD_SYMS) 801 $@ $(filter-out $(SIMD_OUT)/procaddr_table.o,$(SIMD_OBJS))

$(SIMD_OUT)/stubs.o: $(SIMD_OUT)/stubs.c
	$(CC) $(CFLAGS) -Wno-missing-prototypes -c $< -o $@

$(SIMD_OUT)/libcuda.map: $(SIMD_SYMS) $(SIMD_DIR)/extra.syms sim/symbols/gen-version-script.sh
	@mkdir -p $(@D)
	sh sim/symbols/gen-version-script.sh - $@ $(SIMD_SYMS) sim/driver/extra.syms

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

$(SIMD_SAN_OUT)/%.o: $(SIMD_DIR)/%.c $(SIMD_OUT)/errors.inc
	@mkdir -p $(@D)
	$(CC) $(SIMD_CFLAGS) $(SAN) -c $< -o $@

$(SIMD_SAN_OUT)/procaddr_table.o: $(SIMD_OUT)/procaddr_table.c
	@mkdir -p $(@D)
	$(CC) $(SIMD_CFLAGS) $(SAN) -c $< -o $@

$(SIMD_SAN_OUT)/stubs.o: $(SIMD_OUT)/stubs.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(SIMD_SAN_LIB): $(SIMD_SAN_OBJS) $(SIMD_OUT)/libcuda.map $(SIMCUDA_DIR)/libsimcuda_kernel.so
	$(CC) $(SAN) -shared -Wl,-soname,libcuda.so.1 -Wl,--version-script=$(SIMD_OUT)/libcuda.map \
		-Wl,-Bsymbolic-functions -o $@ $(SIMD_SAN_OBJS) \
		-L$(SIMCUDA_DIR) -lsimcuda_kernel -Wl,-rpath,$(abspath $(SIMCUDA_DIR)) -ldl -lpthread -lm

# ---- tests/driver_tests.mk ----
# Unit tests of the simulated driver and the kernel support library
# (cmocka, ASan+UBSan), with the hand-written test modules they load.
DRVT_DIR := sim/tests
DRVT_OUT := $(BUILD)/simcuda/tests
DRVT_MODULES := $(DRVT_OUT)/modules/testkernels.so $(DRVT_OUT)/modules/badabi.so \
	$(DRVT_OUT)/modules/second.so

# Modules are built like simcc output: plain -fPIC shared objects linked
# against libsimcuda_kernel.so, without sanitizers (their code runs on the
# stream workers' fiber stacks).
$(DRVT_OUT)/modules/%.so: $(DRVT_DIR)/modules/%.c $(SIMCUDA_DIR)/libsimcuda_kernel.so
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SIMCUDA_INC) -shared -o $@ $< -L$(SIMCUDA_DIR) -lsimcuda_kernel \
		-Wl,-rpath,$(abspath $(SIMCUDA_DIR))

DRVT_TESTS := $(patsubst $(DRVT_DIR)/%.c,$(BUILD)/tests/%,$(wildcard $(DRVT_DIR)/driver_*.c $(DRVT_DIR)/kernel_*.c))

DRVT_DEPS := $(SIMD_SAN_LIB) $(DRVT_MODULES)
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
$(BUILD)/tests/driver_%_plain: $(DRVT_DIR)/driver_%.c $(SIMCUDA_DIR)/libcuda.so.1 $(DRVT_MODULES)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SAN) $(SIMCUDA_INC) -DTEST_MODULE_DIR='"$(abspath $(DRVT_OUT)/modules)"' \
		-o $@ $< -L$(SIMCUDA_DIR) -l:libcuda.so.1 -lsimcuda_kernel -lcmocka -ldl -lpthread \
		-Wl,-rpath,$(abspath $(SIMCUDA_DIR))

# Named as targets so make never deletes them as intermediate files.
.SECONDARY: $(DRVT_MODULES)
ALL_TARGETS += $(DRVT_MODULES)
UNIT_TESTS += $(DRVT_TESTS) $(DRVT_PLAIN)

# ---- runtime/runtime.mk ----
# The simulated CUDA runtime: $(SIMCUDA_DIR)/libcudart.so.13.  Every name
# the real libcudart.so.13 exports is present under the version node
# libcudart.so.13; the ones not implemented return cudaErrorNotSupported.
RT_SRC_DIR := sim/runtime
RT_OUT     := $(BUILD)/simcuda/runtime
RT_SYMS    := sim/symbols/libcudart.syms
RT_SRCS    := $(wildcard $(RT_SRC_DIR)/*.c)
RT_OBJS    := $(patsubst $(RT_SRC_DIR)/%.c,$(RT_OUT)/%.o,$(RT_SRCS)) $(RT_OUT)/errors.o
RT_CFLAGS  := $(CFLAGS) $(SIMCUDA_INC) -fvisibility=hidden

$(RT_OUT)/%.o: $(RT_SRC_DIR)/%.c
	@mkdir -p $(@D)
	$(CC) $(RT_CFLAGS) -c $< -o $@

# cudaGetErrorName/String follow the installed header's cudaError enum.
$(RT_OUT)/errors.c: $(RT_SRC_DIR)/gen-errors.sh $(CUDA_HOME)/include/driver_types.h
	@mkdir -p $(@D)
	sh $(RT_SRC_DIR)/gen-errors.sh $(CUDA_HOME)/include/driver_types.h $@
$(RT_OUT)/errors.o: $(RT_OUT)/errors.c
	$(CC) $(RT_CFLAGS) -I$(RT_SRC_DIR) -c $< -o $@

$(RT_OUT)/stubs.c: $(RT_OBJS) $(RT_SYMS) sim/symbols/gen-stubs.sh
	sh sim/symbols/gen-stubs.sh $(RT_SYMS) 801 $@ $(RT_OBJS)
$(RT_OUT)/stubs.o: $(RT_OUT)/stubs.c
	$(CC) $(RT_CFLAGS) -c $< -o $@

$(RT_OUT)/libcudart.map: $(RT_SYMS) sim/symbols/gen-version-script.sh
	@mkdir -p $(@D)
	sh sim/symbols/gen-version-script.sh libcudart.so.13 $@ $(RT_SYMS)

$(SIMCUDA_DIR)/libcudart.so.13: $(RT_OBJS) $(RT_OUT)/stubs.o $(RT_OUT)/libcudart.map
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libcudart.so.13 -Wl,--version-script=$(RT_OUT)/libcudart.map \
		-Wl,-z,defs -o $@ $(RT_OBJS) $(RT_OUT)/stubs.o -ldl -lpthread

ALL_TARGETS += $(SIMCUDA_DIR)/libcudart.so.13


# ---- tests/runtime_tests.mk ----
# Tests of the simulated runtime and CUPTI (included from runtime.mk):
# cmocka unit tests against build/simcuda, the rt_* test kernel module,
# and the ABI scripts.
SIMT_DIR    := $(BUILD)/simcuda/tests
SIMT_MODULE := $(SIMT_DIR)/modules/rt_kernels.so
SIMT_LIBDIR := $(abspath $(SIMCUDA_DIR))
# Linking the driver too makes the runtime's and CUPTI's
# dlopen("libcuda.so.1") find the simulated one without LD_LIBRARY_PATH.
SIMT_LIBS   := $(SIMCUDA_DIR)/libcudart.so.13 $(SIMCUDA_DIR)/libcuda.so.1
SIMT_CFLAGS := $(CFLAGS) $(SAN) -DRT_MODULE='"$(abspath $(SIMT_MODULE))"'

$(SIMT_MODULE): sim/tests/modules/rt_kernels.c $(SIMCUDA_DIR)/libsimcuda_kernel.so
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SIMCUDA_INC) -fvisibility=hidden -shared -o $@ $< \
		-L$(SIMCUDA_DIR) -lsimcuda_kernel -Wl,-z,defs -Wl,-rpath,$(SIMT_LIBDIR)

$(SIMT_DIR)/runtime_test: sim/tests/runtime_test.c $(SIMT_LIBS) $(SIMT_MODULE)
	@mkdir -p $(@D)
	$(CC) $(SIMT_CFLAGS) -o $@ $< -Wl,--no-as-needed $(SIMT_LIBS) -Wl,-rpath,$(SIMT_LIBDIR) -lcmocka -ldl -lpthread

$(SIMT_DIR)/runtime_sticky_test: sim/tests/runtime_sticky_test.c $(SIMT_LIBS) $(SIMT_MODULE)
	@mkdir -p $(@D)
	$(CC) $(SIMT_CFLAGS) -o $@ $< -Wl,--no-as-needed $(SIMT_LIBS) -Wl,-rpath,$(SIMT_LIBDIR) -lcmocka -ldl -lpthread

$(SIMT_DIR)/cupti_test: sim/tests/cupti_test.c $(SIMT_LIBS) \
		$(SIMCUDA_DIR)/libcupti.so.13 $(SIMT_MODULE)
	@mkdir -p $(@D)
	$(CC) $(SIMT_CFLAGS) -o $@ $< -Wl,--no-as-needed $(SIMT_LIBS) $(SIMCUDA_DIR)/libcupti.so.13 \
		-Wl,-rpath,$(SIMT_LIBDIR) -lcmocka -ldl -lpthread

# The simulated cuBLAS, through the simulated runtime.
$(SIMT_DIR)/cublas_test: sim/tests/cublas_test.c $(SIMT_LIBS) $(SIMCUDA_DIR)/libcublas.so.13
	@mkdir -p $(@D)
	$(CC) $(SIMT_CFLAGS) -o $@ $< -Wl,--no-as-needed $(SIMCUDA_DIR)/libcublas.so.13 $(SIMT_LIBS) \
		-Wl,-rpath,$(SIMT_LIBDIR) -lcmocka -ldl -lpthread

# Its split-K GEMMs; the fault test launches the kernel from the module
# the library embeds.
$(SIMT_DIR)/cublas_splitk_test: sim/tests/cublas_splitk_test.c $(SIMT_LIBS) $(SIMCUDA_DIR)/libcublas.so.13 $(BUILD)/simcuda/cublas/gemm.so
	@mkdir -p $(@D)
	$(CC) $(SIMT_CFLAGS) -DCUBLAS_GEMM_MODULE='"$(abspath $(BUILD)/simcuda/cublas/gemm.so)"' -o $@ $< \
		-Wl,--no-as-needed $(SIMCUDA_DIR)/libcublas.so.13 $(SIMT_LIBS) \
		-Wl,-rpath,$(SIMT_LIBDIR) -lcmocka -ldl -lpthread -lm

# The simulated NCCL, ranks as processes of this test.
$(SIMT_DIR)/nccl_test: sim/tests/nccl_test.c $(SIMT_LIBS) $(SIMCUDA_DIR)/libnccl.so.2
	@mkdir -p $(@D)
	$(CC) $(SIMT_CFLAGS) -o $@ $< -Wl,--no-as-needed $(SIMCUDA_DIR)/libnccl.so.2 $(SIMT_LIBS) \
		-Wl,-rpath,$(SIMT_LIBDIR) -lcmocka -ldl -lpthread

ALL_TARGETS += $(SIMT_MODULE)
UNIT_TESTS  += $(SIMT_DIR)/runtime_test $(SIMT_DIR)/runtime_sticky_test $(SIMT_DIR)/cupti_test \
	       $(SIMT_DIR)/cublas_test $(SIMT_DIR)/cublas_splitk_test $(SIMT_DIR)/nccl_test
E2E_TESTS   += sim/tests/abi_exports.sh sim/tests/abi_real_link.sh \
	       sim/tests/abi_cublas_link.sh sim/tests/abi_nccl.sh
E2E_NVCC_TESTS += sim/tests/runtime_nvcc_stub.sh sim/tests/runtime_nvcc_host.sh

# ---- cupti/cupti.mk ----
# The simulated CUPTI: $(SIMCUDA_DIR)/libcupti.so.13.  Every name the real
# libcupti.so.13 exports is present under the version node libcupti.so.13;
# the ones not implemented return CUPTI_ERROR_NOT_SUPPORTED (27).
CUPTI_SRC_DIR := sim/cupti
CUPTI_OUT     := $(BUILD)/simcuda/cupti
CUPTI_SYMS    := sim/symbols/libcupti.syms
CUPTI_SRCS    := $(wildcard $(CUPTI_SRC_DIR)/*.c)
CUPTI_OBJS    := $(patsubst $(CUPTI_SRC_DIR)/%.c,$(CUPTI_OUT)/%.o,$(CUPTI_SRCS)) $(CUPTI_OUT)/names.o
CUPTI_CFLAGS  := $(CFLAGS) $(SIMCUDA_INC) -I$(CUPTI_SRC_DIR) -fvisibility=hidden

$(CUPTI_OUT)/%.o: $(CUPTI_SRC_DIR)/%.c
	@mkdir -p $(@D)
	$(CC) $(CUPTI_CFLAGS) -c $< -o $@

# Callback and result names follow the installed headers.
$(CUPTI_OUT)/names.c: $(CUPTI_SRC_DIR)/gen-names.sh $(CUDA_HOME)/include/cupti_runtime_cbid.h \
		$(CUDA_HOME)/include/cupti_driver_cbid.h $(CUDA_HOME)/include/cupti_result.h
	@mkdir -p $(@D)
	sh $(CUPTI_SRC_DIR)/gen-names.sh $(CUDA_HOME)/include $@
$(CUPTI_OUT)/names.o: $(CUPTI_OUT)/names.c
	$(CC) $(CUPTI_CFLAGS) -c $< -o $@

$(CUPTI_OUT)/stubs.c: $(CUPTI_OBJS) $(CUPTI_SYMS) sim/symbols/gen-stubs.sh
	sh sim/symbols/gen-stubs.sh $(CUPTI_SYMS) 27 $@ $(CUPTI_OBJS)
$(CUPTI_OUT)/stubs.o: $(CUPTI_OUT)/stubs.c
	$(CC) $(CUPTI_CFLAGS) -c $< -o $@

$(CUPTI_OUT)/libcupti.map: $(CUPTI_SYMS) sim/symbols/gen-version-script.sh
	@mkdir -p $(@D)
	sh sim/symbols/gen-version-script.sh libcupti.so.13 $@ $(CUPTI_SYMS)

$(SIMCUDA_DIR)/libcupti.so.13: $(CUPTI_OBJS) $(CUPTI_OUT)/stubs.o $(CUPTI_OUT)/libcupti.map
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libcupti.so.13 -Wl,--version-script=$(CUPTI_OUT)/libcupti.map \
		-Wl,-z,defs -o $@ $(CUPTI_OBJS) $(CUPTI_OUT)/stubs.o -ldl -lpthread

ALL_TARGETS += $(SIMCUDA_DIR)/libcupti.so.13

# ---- cublas/cublas.mk ----
# The simulated cuBLAS: $(SIMCUDA_DIR)/libcublas.so.13.  Every name the real
# libcublas.so.13 exports is present under the version node libcublas.so.13;
# the ones not implemented return CUBLAS_STATUS_NOT_SUPPORTED (15).  The
# GEMM kernel (gemm.cu) is built by simcc and linked into the library as
# bytes (gemm_image.o), which it loads with cuModuleLoadData.

CUBLAS_SRC_DIR := sim/cublas
CUBLAS_OUT     := $(BUILD)/simcuda/cublas
CUBLAS_SYMS    := sim/symbols/libcublas.syms
CUBLAS_OBJS    := $(patsubst $(CUBLAS_SRC_DIR)/%.c,$(CUBLAS_OUT)/%.o,$(wildcard $(CUBLAS_SRC_DIR)/*.c))

$(CUBLAS_OUT)/%.o: $(CUBLAS_SRC_DIR)/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fvisibility=hidden -c $< -o $@

$(CUBLAS_OUT)/gemm.so: $(CUBLAS_SRC_DIR)/gemm.cu $(SIMCC_DEPS)
	@mkdir -p $(@D)
	$(SIMCC) $(SIMCC_FLAGS) $< -o $@
$(CUBLAS_OUT)/sm_90/gemm.cubin: $(CUBLAS_SRC_DIR)/gemm.cu
	@mkdir -p $(@D)
	$(NVCC) -cubin -arch=sm_90 $< -o $@

$(CUBLAS_OUT)/gemm_image.s: $(CUBLAS_OUT)/gemm.so
	printf '%s\n' '.section .note.GNU-stack,"",@progbits' '.section .rodata.cublas_gemm,"a"' \
		'.balign 64' '.globl cublas_gemm_image' '.hidden cublas_gemm_image' \
		'cublas_gemm_image:' '.incbin "$(abspath $<)"' >$@
$(CUBLAS_OUT)/gemm_image.o: $(CUBLAS_OUT)/gemm_image.s
	$(CC) -c $< -o $@

$(CUBLAS_OUT)/stubs.c: $(CUBLAS_OBJS) $(CUBLAS_SYMS) sim/symbols/gen-stubs.sh
	sh sim/symbols/gen-stubs.sh $(CUBLAS_SYMS) 15 $@ $(CUBLAS_OBJS)
$(CUBLAS_OUT)/stubs.o: $(CUBLAS_OUT)/stubs.c
	$(CC) $(CFLAGS) -fvisibility=hidden -c $< -o $@

$(CUBLAS_OUT)/libcublas.map: $(CUBLAS_SYMS) sim/symbols/gen-version-script.sh
	@mkdir -p $(@D)
	sh sim/symbols/gen-version-script.sh libcublas.so.13 $@ $(CUBLAS_SYMS)

$(SIMCUDA_DIR)/libcublas.so.13: $(CUBLAS_OBJS) $(CUBLAS_OUT)/gemm_image.o $(CUBLAS_OUT)/stubs.o \
		$(CUBLAS_OUT)/libcublas.map
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libcublas.so.13 -Wl,--version-script=$(CUBLAS_OUT)/libcublas.map \
		-Wl,-z,defs -o $@ $(CUBLAS_OBJS) $(CUBLAS_OUT)/gemm_image.o $(CUBLAS_OUT)/stubs.o \
		-ldl -lpthread

ALL_TARGETS += $(SIMCUDA_DIR)/libcublas.so.13
ifeq ($(HAVE_NVCC),1)
ALL_TARGETS += $(CUBLAS_OUT)/sm_90/gemm.cubin
endif

# ---- nccl/nccl.mk ----
# The simulated NCCL: $(SIMCUDA_DIR)/libnccl.so.2.  Every name the real
# libnccl.so.2 exports is present, unversioned, the nccl* names weak aliases
# of the pnccl* ones as there; those not implemented answer
# ncclInvalidUsage (5).  The kernels (kernels.cu) are built by simcc and
# linked into the library as bytes (kernels_image.o), loaded with
# cuModuleLoadData.
NCCL_SRC_DIR := sim/nccl
NCCL_OUT     := $(BUILD)/simcuda/nccl
NCCL_SYMS    := sim/symbols/libnccl.syms
NCCL_OBJS    := $(patsubst $(NCCL_SRC_DIR)/%.c,$(NCCL_OUT)/%.o,$(wildcard $(NCCL_SRC_DIR)/*.c))

$(NCCL_OUT)/%.o: $(NCCL_SRC_DIR)/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fvisibility=hidden -c $< -o $@

$(NCCL_OUT)/kernels.so: $(NCCL_SRC_DIR)/kernels.cu $(NCCL_SRC_DIR)/simnccl_args.h $(SIMCC_DEPS)
	@mkdir -p $(@D)
	$(SIMCC) $(SIMCC_FLAGS) -I$(NCCL_SRC_DIR) $< -o $@

$(NCCL_OUT)/kernels_image.s: $(NCCL_OUT)/kernels.so
	printf '%s\n' '.section .note.GNU-stack,"",@progbits' '.section .rodata.nccl_kernels,"a"' \
		'.balign 64' '.globl nccl_kernels_image' '.hidden nccl_kernels_image' \
		'nccl_kernels_image:' '.incbin "$(abspath $<)"' >$@
$(NCCL_OUT)/kernels_image.o: $(NCCL_OUT)/kernels_image.s
	$(CC) -c $< -o $@

$(NCCL_OUT)/stubs.c: $(NCCL_OBJS) $(NCCL_SYMS) sim/symbols/gen-stubs.sh \
		$(NCCL_SRC_DIR)/gen-aliases.sh
	sh sim/symbols/gen-stubs.sh $(NCCL_SYMS) 5 $@.p $(NCCL_OBJS)
	sh $(NCCL_SRC_DIR)/gen-aliases.sh $(NCCL_SYMS) $@.p $@ $(NCCL_OBJS)
	rm -f $@.p
$(NCCL_OUT)/stubs.o: $(NCCL_OUT)/stubs.c
	$(CC) $(CFLAGS) -Wno-missing-prototypes -c $< -o $@

$(NCCL_OUT)/libnccl.map: $(NCCL_SYMS) sim/symbols/gen-version-script.sh
	@mkdir -p $(@D)
	sh sim/symbols/gen-version-script.sh - $@ $(NCCL_SYMS)

$(SIMCUDA_DIR)/libnccl.so.2: $(NCCL_OBJS) $(NCCL_OUT)/kernels_image.o $(NCCL_OUT)/stubs.o \
		$(NCCL_OUT)/libnccl.map
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libnccl.so.2 -Wl,--version-script=$(NCCL_OUT)/libnccl.map \
		-Wl,-z,defs -o $@ $(NCCL_OBJS) $(NCCL_OUT)/kernels_image.o $(NCCL_OUT)/stubs.o \
		-ldl -lpthread -lrt
	ln -sf libnccl.so.2 $(SIMCUDA_DIR)/libnccl.so

ALL_TARGETS += $(SIMCUDA_DIR)/libnccl.so.2

# What reads the lists does so only once they are proven fresh (symbols/).
$(SIMD_OUT)/procaddr_table.c $(foreach d,$(SIMD_OUT) $(RT_OUT) $(CUPTI_OUT) $(CUBLAS_OUT) $(NCCL_OUT),\
	$(d)/stubs.c) $(SIMD_OUT)/libcuda.map $(RT_OUT)/libcudart.map $(CUPTI_OUT)/libcupti.map \
	$(CUBLAS_OUT)/libcublas.map $(NCCL_OUT)/libnccl.map: $(SIM_SYMS_OK)

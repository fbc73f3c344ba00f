# The simulated cuBLAS: $(SIMCUDA_DIR)/libcublas.so.13.  Every name the real
# libcublas.so.13 exports is present under the version node libcublas.so.13;
# the ones not implemented return CUBLAS_STATUS_NOT_SUPPORTED (15).  The
# GEMM kernel (gemm.cu) is built by simcc and linked into the library as
# bytes (gemm_image.o), which it loads with cuModuleLoadData.
include tools/simcc.mk

CUBLAS_SRC_DIR := tests/simcuda/cublas
CUBLAS_OUT     := $(BUILD)/simcuda/cublas
CUBLAS_SYMS    := tests/simcuda/symbols/libcublas.syms
CUBLAS_OBJS    := $(patsubst $(CUBLAS_SRC_DIR)/%.c,$(CUBLAS_OUT)/%.o,$(wildcard $(CUBLAS_SRC_DIR)/*.c))

$(CUBLAS_OUT)/%.o: $(CUBLAS_SRC_DIR)/%.c $(CUBLAS_SRC_DIR)/cublas_int.h
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

$(CUBLAS_OUT)/stubs.c: $(CUBLAS_OBJS) $(CUBLAS_SYMS) tests/simcuda/symbols/gen-stubs.sh
	sh tests/simcuda/symbols/gen-stubs.sh $(CUBLAS_SYMS) 15 $@ $(CUBLAS_OBJS)
$(CUBLAS_OUT)/stubs.o: $(CUBLAS_OUT)/stubs.c
	$(CC) $(CFLAGS) -fvisibility=hidden -c $< -o $@

$(CUBLAS_OUT)/libcublas.map: $(CUBLAS_SYMS) tests/simcuda/symbols/gen-version-script.sh
	@mkdir -p $(@D)
	sh tests/simcuda/symbols/gen-version-script.sh libcublas.so.13 $@ $(CUBLAS_SYMS)

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

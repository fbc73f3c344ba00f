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

$(SIMT_MODULE): tests/simcuda/tests/modules/rt_kernels.c tests/simcuda/include/simcuda_abi.h \
		$(SIMCUDA_DIR)/libsimcuda_kernel.so
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SIMCUDA_INC) -fvisibility=hidden -shared -o $@ $< \
		-L$(SIMCUDA_DIR) -lsimcuda_kernel -Wl,-z,defs -Wl,-rpath,$(SIMT_LIBDIR)

$(SIMT_DIR)/runtime_test: tests/simcuda/tests/runtime_test.c $(SIMT_LIBS) $(SIMT_MODULE)
	@mkdir -p $(@D)
	$(CC) $(SIMT_CFLAGS) -o $@ $< -Wl,--no-as-needed $(SIMT_LIBS) -Wl,-rpath,$(SIMT_LIBDIR) -lcmocka -ldl -lpthread

$(SIMT_DIR)/runtime_sticky_test: tests/simcuda/tests/runtime_sticky_test.c $(SIMT_LIBS) $(SIMT_MODULE)
	@mkdir -p $(@D)
	$(CC) $(SIMT_CFLAGS) -o $@ $< -Wl,--no-as-needed $(SIMT_LIBS) -Wl,-rpath,$(SIMT_LIBDIR) -lcmocka -ldl -lpthread

$(SIMT_DIR)/cupti_test: tests/simcuda/tests/cupti_test.c $(SIMT_LIBS) \
		$(SIMCUDA_DIR)/libcupti.so.13 $(SIMT_MODULE)
	@mkdir -p $(@D)
	$(CC) $(SIMT_CFLAGS) -o $@ $< -Wl,--no-as-needed $(SIMT_LIBS) $(SIMCUDA_DIR)/libcupti.so.13 \
		-Wl,-rpath,$(SIMT_LIBDIR) -lcmocka -ldl -lpthread

# The simulated cuBLAS, through the simulated runtime.
$(SIMT_DIR)/cublas_test: tests/simcuda/tests/cublas_test.c $(SIMT_LIBS) $(SIMCUDA_DIR)/libcublas.so.13
	@mkdir -p $(@D)
	$(CC) $(SIMT_CFLAGS) -o $@ $< -Wl,--no-as-needed $(SIMCUDA_DIR)/libcublas.so.13 $(SIMT_LIBS) \
		-Wl,-rpath,$(SIMT_LIBDIR) -lcmocka -ldl -lpthread

# Its split-K GEMMs; the fault test launches the kernel from the module
# the library embeds.
$(SIMT_DIR)/cublas_splitk_test: tests/simcuda/tests/cublas_splitk_test.c tests/simcuda/tests/child.h \
		$(SIMT_LIBS) $(SIMCUDA_DIR)/libcublas.so.13 $(BUILD)/simcuda/cublas/gemm.so
	@mkdir -p $(@D)
	$(CC) $(SIMT_CFLAGS) -DCUBLAS_GEMM_MODULE='"$(abspath $(BUILD)/simcuda/cublas/gemm.so)"' -o $@ $< \
		-Wl,--no-as-needed $(SIMCUDA_DIR)/libcublas.so.13 $(SIMT_LIBS) \
		-Wl,-rpath,$(SIMT_LIBDIR) -lcmocka -ldl -lpthread -lm

# The simulated NCCL, ranks as processes of this test.
$(SIMT_DIR)/nccl_test: tests/simcuda/tests/nccl_test.c $(SIMT_LIBS) $(SIMCUDA_DIR)/libnccl.so.2
	@mkdir -p $(@D)
	$(CC) $(SIMT_CFLAGS) -o $@ $< -Wl,--no-as-needed $(SIMCUDA_DIR)/libnccl.so.2 $(SIMT_LIBS) \
		-Wl,-rpath,$(SIMT_LIBDIR) -lcmocka -ldl -lpthread

ALL_TARGETS += $(SIMT_MODULE)
UNIT_TESTS  += $(SIMT_DIR)/runtime_test $(SIMT_DIR)/runtime_sticky_test $(SIMT_DIR)/cupti_test \
	       $(SIMT_DIR)/cublas_test $(SIMT_DIR)/cublas_splitk_test $(SIMT_DIR)/nccl_test
E2E_TESTS   += tests/simcuda/tests/abi_exports.sh tests/simcuda/tests/abi_real_link.sh \
	       tests/simcuda/tests/abi_cublas_link.sh tests/simcuda/tests/abi_nccl.sh
E2E_NVCC_TESTS += tests/simcuda/tests/runtime_nvcc_stub.sh tests/simcuda/tests/runtime_nvcc_host.sh

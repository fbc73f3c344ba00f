# The simulated device: build/simcuda/{libcuda.so.1,libcudart.so.13,libcupti.so.13,
# libcublas.so.13,libsimcuda_kernel.so}
SIMCUDA_DIR := $(BUILD)/simcuda
SIMCUDA_INC := -Itests/simcuda/include -Itests/simcuda
-include tests/simcuda/kernel/kernel.mk
-include tests/simcuda/driver/driver.mk
-include tests/simcuda/runtime/runtime.mk
-include tests/simcuda/cupti/cupti.mk
-include tests/simcuda/cublas/cublas.mk
-include tests/simcuda/nccl/nccl.mk

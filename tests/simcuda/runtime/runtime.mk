# The simulated CUDA runtime: $(SIMCUDA_DIR)/libcudart.so.13.  Every name
# the real libcudart.so.13 exports is present under the version node
# libcudart.so.13; the ones not implemented return cudaErrorNotSupported.
RT_SRC_DIR := tests/simcuda/runtime
RT_OUT     := $(BUILD)/simcuda/runtime
RT_SYMS    := tests/simcuda/symbols/libcudart.syms
RT_SRCS    := $(wildcard $(RT_SRC_DIR)/*.c)
RT_OBJS    := $(patsubst $(RT_SRC_DIR)/%.c,$(RT_OUT)/%.o,$(RT_SRCS)) $(RT_OUT)/errors.o
RT_CFLAGS  := $(CFLAGS) $(SIMCUDA_INC) -fvisibility=hidden

$(RT_OUT)/%.o: $(RT_SRC_DIR)/%.c $(RT_SRC_DIR)/rt.h tests/simcuda/simcuda_internal.h
	@mkdir -p $(@D)
	$(CC) $(RT_CFLAGS) -c $< -o $@

# cudaGetErrorName/String follow the installed header's cudaError enum.
$(RT_OUT)/errors.c: $(RT_SRC_DIR)/gen-errors.sh $(CUDA_HOME)/include/driver_types.h
	@mkdir -p $(@D)
	sh $(RT_SRC_DIR)/gen-errors.sh $(CUDA_HOME)/include/driver_types.h $@
$(RT_OUT)/errors.o: $(RT_OUT)/errors.c $(RT_SRC_DIR)/rt.h
	$(CC) $(RT_CFLAGS) -I$(RT_SRC_DIR) -c $< -o $@

$(RT_OUT)/stubs.c: $(RT_OBJS) $(RT_SYMS) tests/simcuda/symbols/gen-stubs.sh
	sh tests/simcuda/symbols/gen-stubs.sh $(RT_SYMS) 801 $@ $(RT_OBJS)
$(RT_OUT)/stubs.o: $(RT_OUT)/stubs.c
	$(CC) $(RT_CFLAGS) -c $< -o $@

$(RT_OUT)/libcudart.map: $(RT_SYMS) tests/simcuda/symbols/gen-version-script.sh
	@mkdir -p $(@D)
	sh tests/simcuda/symbols/gen-version-script.sh libcudart.so.13 $@ $(RT_SYMS)

$(SIMCUDA_DIR)/libcudart.so.13: $(RT_OBJS) $(RT_OUT)/stubs.o $(RT_OUT)/libcudart.map
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libcudart.so.13 -Wl,--version-script=$(RT_OUT)/libcudart.map \
		-Wl,-z,defs -o $@ $(RT_OBJS) $(RT_OUT)/stubs.o -ldl -lpthread

ALL_TARGETS += $(SIMCUDA_DIR)/libcudart.so.13

-include tests/simcuda/tests/runtime_tests.mk

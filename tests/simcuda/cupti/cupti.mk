# The simulated CUPTI: $(SIMCUDA_DIR)/libcupti.so.13.  Every name the real
# libcupti.so.13 exports is present under the version node libcupti.so.13;
# the ones not implemented return CUPTI_ERROR_NOT_SUPPORTED (27).
CUPTI_SRC_DIR := tests/simcuda/cupti
CUPTI_OUT     := $(BUILD)/simcuda/cupti
CUPTI_SYMS    := tests/simcuda/symbols/libcupti.syms
CUPTI_SRCS    := $(wildcard $(CUPTI_SRC_DIR)/*.c)
CUPTI_OBJS    := $(patsubst $(CUPTI_SRC_DIR)/%.c,$(CUPTI_OUT)/%.o,$(CUPTI_SRCS)) $(CUPTI_OUT)/names.o
CUPTI_CFLAGS  := $(CFLAGS) $(SIMCUDA_INC) -I$(CUPTI_SRC_DIR) -fvisibility=hidden

$(CUPTI_OUT)/%.o: $(CUPTI_SRC_DIR)/%.c $(CUPTI_SRC_DIR)/cupti_int.h $(CUPTI_SRC_DIR)/names.h \
		tests/simcuda/simcuda_internal.h
	@mkdir -p $(@D)
	$(CC) $(CUPTI_CFLAGS) -c $< -o $@

# Callback and result names follow the installed headers.
$(CUPTI_OUT)/names.c: $(CUPTI_SRC_DIR)/gen-names.sh $(CUDA_HOME)/include/cupti_runtime_cbid.h \
		$(CUDA_HOME)/include/cupti_driver_cbid.h $(CUDA_HOME)/include/cupti_result.h
	@mkdir -p $(@D)
	sh $(CUPTI_SRC_DIR)/gen-names.sh $(CUDA_HOME)/include $@
$(CUPTI_OUT)/names.o: $(CUPTI_OUT)/names.c $(CUPTI_SRC_DIR)/names.h
	$(CC) $(CUPTI_CFLAGS) -c $< -o $@

$(CUPTI_OUT)/stubs.c: $(CUPTI_OBJS) $(CUPTI_SYMS) tests/simcuda/symbols/gen-stubs.sh
	sh tests/simcuda/symbols/gen-stubs.sh $(CUPTI_SYMS) 27 $@ $(CUPTI_OBJS)
$(CUPTI_OUT)/stubs.o: $(CUPTI_OUT)/stubs.c
	$(CC) $(CUPTI_CFLAGS) -c $< -o $@

$(CUPTI_OUT)/libcupti.map: $(CUPTI_SYMS) tests/simcuda/symbols/gen-version-script.sh
	@mkdir -p $(@D)
	sh tests/simcuda/symbols/gen-version-script.sh libcupti.so.13 $@ $(CUPTI_SYMS)

$(SIMCUDA_DIR)/libcupti.so.13: $(CUPTI_OBJS) $(CUPTI_OUT)/stubs.o $(CUPTI_OUT)/libcupti.map
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libcupti.so.13 -Wl,--version-script=$(CUPTI_OUT)/libcupti.map \
		-Wl,-z,defs -o $@ $(CUPTI_OBJS) $(CUPTI_OUT)/stubs.o -ldl -lpthread

ALL_TARGETS += $(SIMCUDA_DIR)/libcupti.so.13

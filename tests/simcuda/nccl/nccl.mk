# The simulated NCCL: $(SIMCUDA_DIR)/libnccl.so.2.  Every name the real
# libnccl.so.2 exports is present, unversioned, the nccl* names weak aliases
# of the pnccl* ones as there; those not implemented answer
# ncclInvalidUsage (5).  The kernels (kernels.cu) are built by simcc and
# linked into the library as bytes (kernels_image.o), loaded with
# cuModuleLoadData.
NCCL_SRC_DIR := tests/simcuda/nccl
NCCL_OUT     := $(BUILD)/simcuda/nccl
NCCL_SYMS    := tests/simcuda/symbols/libnccl.syms
NCCL_OBJS    := $(patsubst $(NCCL_SRC_DIR)/%.c,$(NCCL_OUT)/%.o,$(wildcard $(NCCL_SRC_DIR)/*.c))
NCCL_HDRS    := $(NCCL_SRC_DIR)/nccl_int.h $(NCCL_SRC_DIR)/simnccl_args.h

$(NCCL_OUT)/%.o: $(NCCL_SRC_DIR)/%.c $(NCCL_HDRS)
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

$(NCCL_OUT)/stubs.c: $(NCCL_OBJS) $(NCCL_SYMS) tests/simcuda/symbols/gen-stubs.sh \
		$(NCCL_SRC_DIR)/gen-aliases.sh
	sh tests/simcuda/symbols/gen-stubs.sh $(NCCL_SYMS) 5 $@.p $(NCCL_OBJS)
	sh $(NCCL_SRC_DIR)/gen-aliases.sh $(NCCL_SYMS) $@.p $@ $(NCCL_OBJS)
	rm -f $@.p
$(NCCL_OUT)/stubs.o: $(NCCL_OUT)/stubs.c
	$(CC) $(CFLAGS) -Wno-missing-prototypes -c $< -o $@

$(NCCL_OUT)/libnccl.map: $(NCCL_SYMS) tests/simcuda/symbols/gen-version-script.sh
	@mkdir -p $(@D)
	sh tests/simcuda/symbols/gen-version-script.sh - $@ $(NCCL_SYMS)

$(SIMCUDA_DIR)/libnccl.so.2: $(NCCL_OBJS) $(NCCL_OUT)/kernels_image.o $(NCCL_OUT)/stubs.o \
		$(NCCL_OUT)/libnccl.map
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libnccl.so.2 -Wl,--version-script=$(NCCL_OUT)/libnccl.map \
		-Wl,-z,defs -o $@ $(NCCL_OBJS) $(NCCL_OUT)/kernels_image.o $(NCCL_OUT)/stubs.o \
		-ldl -lpthread -lrt
	ln -sf libnccl.so.2 $(SIMCUDA_DIR)/libnccl.so

ALL_TARGETS += $(SIMCUDA_DIR)/libnccl.so.2

# libsimcuda_kernel.so: the CUDA built-ins and the grid runner that every
# kernel module built by tools/simcc (and the simulated driver) links.
SIMK_SRCS := $(wildcard tests/simcuda/kernel/*.c)
SIMK_OBJS := $(patsubst tests/simcuda/kernel/%.c,$(BUILD)/simcuda/kernel/%.o,$(SIMK_SRCS))

$(BUILD)/simcuda/kernel/%.o: tests/simcuda/kernel/%.c tests/simcuda/kernel/fiber.h tests/simcuda/kernel/block.h tests/simcuda/include/simcuda_abi.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fvisibility=hidden $(SIMCUDA_INC) -c $< -o $@

$(SIMCUDA_DIR)/libsimcuda_kernel.so: $(SIMK_OBJS)
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libsimcuda_kernel.so -Wl,-z,defs -o $@ $^ -lpthread -lm

ALL_TARGETS += $(SIMCUDA_DIR)/libsimcuda_kernel.so

# libremat: build/libremat.so (interpose/, profiler/, replay/), its unit
# tests (tests/remat/), the run-mode test programs (tests/remat/progs/),
# end-to-end scripts (tests/e2e/trace_*.sh, tests/e2e/run_*.sh) and the
# launch-overhead benchmark (bench/preload/).

# replay/: the engine (ours) and plan acquisition (replay/replay_acquire.mk).
-include replay/replay_acquire.mk
REMAT_REPLAY_SRCS := replay/engine.c replay/steps.c replay/verify.c
REMAT_SRCS := $(wildcard interpose/*.c interpose/alloc/*.c profiler/*.c) $(REMAT_REPLAY_SRCS) \
	$(REMAT_ACQUIRE_SRCS)
REMAT_OBJS := $(REMAT_SRCS:%.c=$(BUILD)/libremat/%.o)
REMAT_CFLAGS := $(CFLAGS) -fvisibility=hidden -MMD -MP

ALL_TARGETS += $(BUILD)/libremat.so

$(BUILD)/libremat/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(REMAT_CFLAGS) -c $< -o $@

# The hashing kernel's PTX is embedded with .incbin; regenerate it when nvcc
# exists, else keep the committed one.
$(BUILD)/libremat/profiler/writeset.o: profiler/hash.ptx
profiler/hash.ptx: profiler/hash.cu
	@if [ -x "$(NVCC)" ]; then $(NVCC) -ptx -arch=compute_75 $< -o $@; else touch $@; fi

$(BUILD)/libremat.so: $(REMAT_OBJS)
	$(CC) -shared -fvisibility=hidden -Wl,--no-undefined -Wl,-z,defs -o $@ $^ \
		-lunwind -ldl -lpthread

-include $(REMAT_OBJS:.o=.d)

# ---- unit tests (cmocka, ASan+UBSan) ---------------------------------------
REMAT_TEST_CFLAGS := $(CSTD) $(WARN) -O1 -g -I$(CUDA_HOME)/include $(SAN)

$(BUILD)/tests/remat/test_config: tests/remat/test_config.c interpose/config.c interpose/remat.h
	@mkdir -p $(dir $@)
	$(CC) $(REMAT_TEST_CFLAGS) -o $@ tests/remat/test_config.c interpose/config.c -lcmocka

$(BUILD)/tests/remat/test_iteration: tests/remat/test_iteration.c profiler/iteration.c \
		profiler/iteration.h
	@mkdir -p $(dir $@)
	$(CC) $(REMAT_TEST_CFLAGS) -o $@ tests/remat/test_iteration.c profiler/iteration.c -lcmocka

REMAT_ALLOC_SRCS := $(wildcard interpose/alloc/*.c)
$(BUILD)/tests/remat/test_alloc: tests/remat/test_alloc.c $(REMAT_ALLOC_SRCS) \
		$(wildcard interpose/alloc/*.h) interpose/remat.h
	@mkdir -p $(dir $@)
	$(CC) $(REMAT_TEST_CFLAGS) -o $@ tests/remat/test_alloc.c $(REMAT_ALLOC_SRCS) \
		-lcmocka -lpthread

$(BUILD)/tests/remat/test_trace: tests/remat/test_trace.c profiler/trace_write.c \
		profiler/trace.h
	@mkdir -p $(dir $@)
	$(CC) $(REMAT_TEST_CFLAGS) -o $@ tests/remat/test_trace.c profiler/trace_write.c \
		-lcmocka -ljansson

UNIT_TESTS += $(BUILD)/tests/remat/test_config $(BUILD)/tests/remat/test_iteration \
	$(BUILD)/tests/remat/test_alloc $(BUILD)/tests/remat/test_trace

# ---- end-to-end and benchmark ----------------------------------------------
E2E_TESTS += $(filter-out tests/e2e/trace_lib.sh,$(sort $(wildcard tests/e2e/trace_*.sh)))
E2E_TESTS += $(filter-out tests/e2e/run_lib.sh,$(sort $(wildcard tests/e2e/run_*.sh)))
-include bench/preload/preload.mk

# ---- test programs for run mode (tests/remat/progs/) ------------------------
REMAT_PROGS := $(BUILD)/tests/remat/progs/chain $(BUILD)/tests/remat/progs/chain.so
$(BUILD)/tests/remat/progs/chain.so: tests/remat/progs/chain.cu $(SIMCC_DEPS)
	@mkdir -p $(@D)
	$(SIMCC) $(SIMCC_FLAGS) $< -o $@
$(BUILD)/tests/remat/progs/chain: tests/remat/progs/chain.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda
ALL_TARGETS += $(REMAT_PROGS)
.PHONY: remat-progs
remat-progs: $(REMAT_PROGS)

# libremat: build/libremat.so, the preloaded library, in the order of its
# layers (docs/architecture.md): core/ (configuration, logging, the real
# driver), alloc/ (the VMM allocator), interpose/ (the entry points),
# session/ (the mode), profiler/, replay/, acquire/ (getting a plan) and
# plan/ (the plan model, shared with remat-plan).  Their unit tests live in
# tests/<dir>/; the end-to-end scripts in tests/e2e/; the launch-overhead
# benchmark in bench/preload/.

REMAT_DIRS := core alloc interpose session profiler replay acquire
REMAT_SRCS := $(foreach d,$(REMAT_DIRS),$(wildcard $(d)/*.c)) plan/plan.c plan/checksum.c plan/file.c
REMAT_OBJS := $(REMAT_SRCS:%.c=$(BUILD)/libremat/%.o)
REMAT_CFLAGS := $(CFLAGS) -fvisibility=hidden -MMD -MP $(TOOL_SAN)

ALL_TARGETS += $(BUILD)/libremat.so

$(BUILD)/libremat/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(REMAT_CFLAGS) -c $< -o $@

$(BUILD)/libremat.so: $(REMAT_OBJS) interpose/exports.map
	$(CC) -shared -fvisibility=hidden -Wl,--no-undefined -Wl,-z,defs $(TOOL_SAN) \
		-Wl,--version-script=interpose/exports.map -o $@ $(REMAT_OBJS) -lunwind -ldl -lpthread

-include $(REMAT_OBJS:.o=.d)

# ---- unit tests (cmocka, ASan+UBSan) ---------------------------------------
# Each compiles the sources of the directory under test with the sanitizers;
# what it needs from other layers it fakes (the driver table above all).
REMAT_TEST_CFLAGS := $(CSTD) $(WARN) -O1 -g -I$(CUDA_HOME)/include $(SAN)
REMAT_HDRS := $(foreach d,$(REMAT_DIRS) plan,$(wildcard $(d)/*.h))

$(BUILD)/tests/core/test_config: tests/core/test_config.c core/config.c core/budget.c \
		core/frameworks.c core/log.c $(REMAT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(REMAT_TEST_CFLAGS) -o $@ $(filter %.c,$^) -lcmocka

$(BUILD)/tests/profiler/test_iteration: tests/profiler/test_iteration.c profiler/iteration.c \
		$(REMAT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(REMAT_TEST_CFLAGS) -o $@ $(filter %.c,$^) -lcmocka

$(BUILD)/tests/profiler/test_trace: tests/profiler/test_trace.c profiler/trace_write.c \
		profiler/release.c $(REMAT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(REMAT_TEST_CFLAGS) -o $@ $(filter %.c,$^) -lcmocka -ljansson

$(BUILD)/tests/alloc/test_alloc: tests/alloc/test_alloc.c tests/core/fake_driver.c tests/core/fake_driver.h \
		$(wildcard alloc/*.c) core/capture.c $(REMAT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(REMAT_TEST_CFLAGS) -o $@ $(filter %.c,$^) -lcmocka -lpthread

$(BUILD)/tests/alloc/test_program: tests/alloc/test_program.c tests/core/fake_driver.c \
		tests/core/fake_driver.h $(wildcard alloc/*.c) core/capture.c $(REMAT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(REMAT_TEST_CFLAGS) -o $@ $(filter %.c,$^) -lcmocka -lpthread

# The replay engine's state machine, through the driver table, on the real
# allocator: only the driver is fake.  test_park: what a free does to
# parked buffers.
REPLAY_TEST_SRCS := $(wildcard replay/*.c) $(wildcard alloc/*.c) profiler/release.c profiler/attrs.c \
	plan/plan.c \
	plan/builder.c core/capture.c
$(BUILD)/tests/replay/test_engine $(BUILD)/tests/replay/test_park: $(BUILD)/tests/replay/%: \
		tests/replay/%.c tests/core/fake_driver.c \
		tests/core/fake_driver.h $(REPLAY_TEST_SRCS) $(REMAT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(REMAT_TEST_CFLAGS) -o $@ $(filter %.c,$^) -lcmocka -lpthread

# The runtime's plan check against the planner's evaluator, on the same
# plans (the planner's library and its test helpers).
$(BUILD)/tests/replay/test_validate: tests/replay/test_validate.c replay/validate.c replay/offload_slots.c \
		tests/planner/testutil.c tests/planner/testutil.h $(BUILD)/san/libplanner.a $(REMAT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(REMAT_TEST_CFLAGS) -Iplanner -o $@ $(filter %.c,$^) $(BUILD)/san/libplanner.a \
		$(PLANNER_LIBS) -lcmocka

UNIT_TESTS += $(BUILD)/tests/core/test_config $(BUILD)/tests/profiler/test_iteration \
	$(BUILD)/tests/alloc/test_alloc $(BUILD)/tests/alloc/test_program \
	$(BUILD)/tests/profiler/test_trace \
	$(BUILD)/tests/replay/test_engine $(BUILD)/tests/replay/test_park \
	$(BUILD)/tests/replay/test_validate

# ---- end-to-end and benchmark ----------------------------------------------
E2E_TESTS += $(filter-out tests/e2e/trace_lib.sh,$(sort $(wildcard tests/e2e/trace_*.sh)))
E2E_TESTS += $(filter-out tests/e2e/run_lib.sh,$(sort $(wildcard tests/e2e/run_*.sh)))
FAULT_TESTS := $(filter-out tests/e2e/fault_lib.sh,$(sort $(wildcard tests/e2e/fault_*.sh)))
E2E_TESTS += $(FAULT_TESTS)
-include bench/preload/preload.mk
-include bench/run/run.mk
-include bench/profile/profile.mk
-include acquire/acquire.mk

# ---- test programs for run mode (tests/e2e/progs/) ---------------------------
REMAT_PROGS := $(BUILD)/tests/e2e/progs/chain $(BUILD)/tests/e2e/progs/chain.so \
	$(BUILD)/tests/e2e/progs/capture $(BUILD)/tests/e2e/progs/envprog \
	$(BUILD)/tests/e2e/progs/nccl_order
$(BUILD)/tests/e2e/progs/chain.so: tests/e2e/progs/chain.cu $(SIMCC_DEPS)
	@mkdir -p $(@D)
	$(SIMCC) $(SIMCC_FLAGS) $< -o $@
$(BUILD)/tests/e2e/progs/chain: tests/e2e/progs/chain.c tests/e2e/progs/progs.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda
$(BUILD)/tests/e2e/progs/nccl_order: tests/e2e/progs/nccl_order.c tests/e2e/progs/progs.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(NCCL_LINK) -L$(CUDA_HOME)/lib64/stubs -lcuda
$(BUILD)/tests/e2e/progs/envprog: tests/e2e/progs/envprog.c tests/e2e/progs/progs.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda
$(BUILD)/tests/e2e/progs/capture: tests/e2e/progs/capture.c tests/e2e/progs/progs.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda -lpthread
ALL_TARGETS += $(REMAT_PROGS)
.PHONY: remat-progs
remat-progs: $(REMAT_PROGS)

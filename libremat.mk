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
REMAT_CFLAGS := $(CFLAGS) -fvisibility=hidden $(TOOL_SAN)

ALL_TARGETS += $(BUILD)/libremat.so

$(BUILD)/libremat/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(REMAT_CFLAGS) -c $< -o $@

$(BUILD)/libremat.so: $(REMAT_OBJS) interpose/exports.map
	$(CC) -shared -fvisibility=hidden -Wl,--no-undefined -Wl,-z,defs $(TOOL_SAN) \
		-Wl,--version-script=interpose/exports.map -o $@ $(REMAT_OBJS) -lunwind -ldl -lpthread

# ---- unit tests (cmocka, ASan+UBSan) ---------------------------------------
# The shipped sources (REMAT_SRCS) built once more, with the shipped flags
# and $(SAN), into an archive that every unit test links after its own
# objects: a test calls hidden functions, and the linker takes only the
# members it needs.  A test's fakes (tests/core/fake_driver.c: the driver
# table and the log) come first, so the members they stand for are not
# taken; a member taken for another symbol would define one twice, which
# the link refuses.  The planner's own sources (plan/builder.c) come from
# its sanitized library, after.
REMAT_SAN_CFLAGS := $(CFLAGS) -fvisibility=hidden $(SAN)
REMAT_SAN_OBJS := $(REMAT_SRCS:%.c=$(BUILD)/san/libremat/%.o)
REMAT_SAN_LIB := $(BUILD)/san/libremat.a

$(BUILD)/san/libremat/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(REMAT_SAN_CFLAGS) -c $< -o $@
$(REMAT_SAN_LIB): $(REMAT_SAN_OBJS)
	@rm -f $@
	ar rcs $@ $^

# Every tests/<dir>/test_*.c of libremat's directories is one test; its
# other sources (fakes, helpers) are built beside it.  A test sees its
# directory's internal headers by path, acquire/'s and the planner's
# helpers by name.
REMAT_UNIT_TESTS := $(patsubst %.c,$(BUILD)/%,$(sort $(wildcard $(REMAT_DIRS:%=tests/%/test_*.c))))
REMAT_TEST_LIBS := -lcmocka -lunwind -ldl -lpthread
FAKE_DRIVER := $(BUILD)/san/tests/core/fake_driver.o

$(BUILD)/san/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) $(TEST_INC) -c $< -o $@
$(BUILD)/san/tests/acquire/%.o: TEST_INC := -Iacquire
$(BUILD)/san/tests/planner/testutil.o $(BUILD)/san/tests/replay/test_validate.o: TEST_INC := -Iplanner

# -lc before the archive: a name the C library defines is the C library's,
# not the member of libremat's that interposes it (interpose/dlsym.c: the
# plan reader's dlsym would take it, and with it the whole runtime and its
# constructor).
$(REMAT_UNIT_TESTS): $(BUILD)/tests/%: $(BUILD)/san/tests/%.o $(REMAT_SAN_LIB)
	@mkdir -p $(@D)
	$(CC) $(SAN) -o $@ $(filter %.o,$^) -lc $(REMAT_SAN_LIB) \
		$(filter-out $(REMAT_SAN_LIB),$(filter %.a,$^)) $(TEST_LIBS) $(REMAT_TEST_LIBS)

# The allocator and the replay engine's state machine on a fake driver;
# test_park: what a free does to parked buffers.
$(BUILD)/tests/alloc/test_alloc $(BUILD)/tests/alloc/test_program: $(FAKE_DRIVER)
$(BUILD)/tests/replay/test_engine $(BUILD)/tests/replay/test_park: $(FAKE_DRIVER) $(BUILD)/san/libplanner.a
# interpose/'s hooks in front of a fake libcuda.so.1 beside the test, which
# core/driver.c dlopens as it does the real one.  An RPATH, not a RUNPATH:
# ASan's dlopen interceptor makes libasan the caller, and only the
# executable's RPATH is searched for every caller.
$(BUILD)/tests/interpose/libcuda.so.1: tests/interpose/fake_libcuda.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -shared -Wl,-Bsymbolic -Wl,-soname,libcuda.so.1 $< -o $@
$(BUILD)/tests/interpose/test_hooks: $(BUILD)/tests/interpose/libcuda.so.1
$(BUILD)/tests/interpose/test_hooks: TEST_LIBS := -Wl,--disable-new-dtags,-rpath,'$$ORIGIN'
# core/'s containers: realloc and calloc wrapped to fail on demand.
$(BUILD)/tests/core/test_containers: TEST_LIBS := -Wl,--wrap=realloc,--wrap=calloc
# The trace test reads what it wrote with jansson (libremat dlopens it).
$(BUILD)/tests/profiler/test_trace: TEST_LIBS := -ljansson
# The runtime's plan check against the planner's evaluator, on the same
# plans (the planner's library and its test helpers).
$(BUILD)/tests/replay/test_validate: $(BUILD)/san/tests/planner/testutil.o $(BUILD)/san/libplanner.a
$(BUILD)/tests/replay/test_validate: TEST_LIBS = $(PLANNER_LIBS)

UNIT_TESTS += $(REMAT_UNIT_TESTS)

# ---- end-to-end and benchmark ----------------------------------------------
E2E_TESTS += $(filter-out tests/e2e/trace_lib.sh,$(sort $(wildcard tests/e2e/trace_*.sh)))
E2E_TESTS += $(filter-out tests/e2e/run_lib.sh,$(sort $(wildcard tests/e2e/run_*.sh)))
FAULT_TESTS := $(filter-out tests/e2e/fault_lib.sh,$(sort $(wildcard tests/e2e/fault_*.sh)))
E2E_TESTS += $(FAULT_TESTS)
include bench/preload/preload.mk
include bench/run/run.mk
include bench/profile/profile.mk
include bench/clock/clock.mk
include acquire/acquire.mk

# ---- test programs for run mode (tests/e2e/progs/) ---------------------------
REMAT_PROGS := $(BUILD)/tests/e2e/progs/chain $(BUILD)/tests/e2e/progs/chain.so \
	$(BUILD)/tests/e2e/progs/capture $(BUILD)/tests/e2e/progs/envprog \
	$(BUILD)/tests/e2e/progs/nccl_order
$(BUILD)/tests/e2e/progs/chain.so: tests/e2e/progs/chain.cu $(SIMCC_DEPS)
	@mkdir -p $(@D)
	$(SIMCC) $(SIMCC_FLAGS) $< -o $@
$(BUILD)/tests/e2e/progs/chain: tests/e2e/progs/chain.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda
$(BUILD)/tests/e2e/progs/nccl_order: tests/e2e/progs/nccl_order.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(NCCL_LINK) -L$(CUDA_HOME)/lib64/stubs -lcuda
$(BUILD)/tests/e2e/progs/envprog: tests/e2e/progs/envprog.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda
$(BUILD)/tests/e2e/progs/capture: tests/e2e/progs/capture.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda -lpthread
ALL_TARGETS += $(REMAT_PROGS)

# Programs written the way third-party CUDA C trainers are (issue 31: what
# imitations miss), built like them by sim/bin/simnvcc.
REAL_PROGS := $(BUILD)/tests/e2e/progs/real/mlp1 $(BUILD)/tests/e2e/progs/real/attn1 \
	$(BUILD)/tests/e2e/progs/real/refill $(BUILD)/tests/e2e/progs/real/indirect \
	$(BUILD)/tests/e2e/progs/real/guess
$(BUILD)/tests/e2e/progs/real/%: tests/e2e/progs/real/%.cu tests/e2e/progs/real/check.h sim/bin/simnvcc \
		$(SIMCC_DEPS) \
		| $(SIMCUDA_DIR)/libcudart.so.13
	@mkdir -p $(@D)
	$(ARENA_NVCC) $< -o $@
ifeq ($(HAVE_NVCC),1)
ALL_TARGETS += $(REAL_PROGS)
endif
E2E_NVCC_TESTS += tests/e2e/real_budget_sweep.sh tests/e2e/real_eval_divergence.sh \
	tests/e2e/real_refill.sh tests/e2e/real_verify_window.sh tests/e2e/real_guessed_boundary.sh
.PHONY: remat-progs
remat-progs: $(REMAT_PROGS)

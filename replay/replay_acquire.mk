# replay/ plan acquisition (acquire.c and friends): the sources libremat.so
# adds to its own (REMAT_ACQUIRE_SRCS), their unit tests (tests/acquire/),
# end-to-end scripts (tests/e2e/acquire_*.sh) and the run-mode benchmark.
# Included from libremat.mk.

REMAT_ACQUIRE_SRCS := replay/acquire.c replay/acquire_spawn.c replay/cache.c \
	replay/plan_load.c replay/rplan.c
REMAT_ACQUIRE_HDRS := replay/acquire.h replay/acquire_internal.h replay/rplan.h

# The tests compile the sources with the sanitizers, plus the logging they
# print through (interpose/log.c, and config.c which owns remat_cfg).  No
# -ljansson: the tests go through the same dlopen as libremat.so.
ACQ_TEST_CFLAGS := $(CSTD) $(WARN) -O1 -g -I$(CUDA_HOME)/include $(SAN)
ACQ_TEST_SRCS := $(REMAT_ACQUIRE_SRCS) interpose/log.c interpose/config.c

$(BUILD)/tests/acquire/%: tests/acquire/%.c tests/acquire/acq_testutil.h $(ACQ_TEST_SRCS) \
		$(REMAT_ACQUIRE_HDRS) interpose/remat.h
	@mkdir -p $(dir $@)
	$(CC) $(ACQ_TEST_CFLAGS) -Ireplay -o $@ $< $(ACQ_TEST_SRCS) -lcmocka -ldl -lpthread

ACQ_UNIT_TESTS := $(BUILD)/tests/acquire/test_plan_load $(BUILD)/tests/acquire/test_acquire
UNIT_TESTS += $(ACQ_UNIT_TESTS)
.PHONY: acquire-tests
acquire-tests: $(ACQ_UNIT_TESTS)

E2E_TESTS += $(filter-out tests/e2e/acquire_lib.sh,$(sort $(wildcard tests/e2e/acquire_*.sh)))
BENCHES += bench/run/run.sh

# bench/run: per-launch host cost while a plan is applied (uses the empty
# kernel module of bench/preload).
$(BUILD)/bench/run/iter_bench: bench/run/iter_bench.c bench/bench_cuda.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< -o $@ -L$(CUDA_HOME)/lib64/stubs -lcuda
ALL_TARGETS += $(BUILD)/bench/run/iter_bench

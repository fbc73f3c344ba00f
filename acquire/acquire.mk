# acquire/: getting a plan (acquire.c and friends, part of libremat.so), its
# unit tests (tests/acquire/) and the end-to-end scripts
# (tests/e2e/acquire_*.sh).  Included from libremat.mk.

ACQUIRE_SRCS := $(wildcard acquire/*.c)

# The tests compile the sources with the sanitizers, plus what they print
# through and read their settings from (core/).  No -ljansson: the tests go
# through the same dlopen as libremat.so.
ACQ_TEST_SRCS := $(ACQUIRE_SRCS) core/log.c core/config.c core/budget.c core/grow.c plan/plan.c plan/checksum.c \
	plan/file.c

$(BUILD)/tests/acquire/%: tests/acquire/%.c tests/acquire/acq_testutil.h $(ACQ_TEST_SRCS) \
		$(REMAT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(REMAT_TEST_CFLAGS) -Iacquire -o $@ $< $(ACQ_TEST_SRCS) -lcmocka -ldl -lpthread

ACQ_UNIT_TESTS := $(BUILD)/tests/acquire/test_plan_load $(BUILD)/tests/acquire/test_acquire
UNIT_TESTS += $(ACQ_UNIT_TESTS)
.PHONY: acquire-tests
acquire-tests: $(ACQ_UNIT_TESTS)

E2E_TESTS += $(filter-out tests/e2e/acquire_lib.sh,$(sort $(wildcard tests/e2e/acquire_*.sh)))

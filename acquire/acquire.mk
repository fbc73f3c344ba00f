# acquire/: getting a plan (acquire.c and friends, part of libremat.so), its
# unit tests (tests/acquire/, built by libremat.mk's rules: no -ljansson,
# the tests go through the same dlopen as libremat.so) and the end-to-end
# scripts (tests/e2e/acquire_*.sh).  Included from libremat.mk.

.PHONY: acquire-tests
acquire-tests: $(filter $(BUILD)/tests/acquire/%,$(REMAT_UNIT_TESTS))

E2E_TESTS += $(filter-out tests/e2e/acquire_lib.sh,$(sort $(wildcard tests/e2e/acquire_*.sh)))

# fragment: owned by its directory; appends to ALL_TARGETS, UNIT_TESTS, E2E_TESTS, BENCHES

# tools/report/: remat-report, the trace and plan viewer.  Links the
# planner library for loading traces, exporting graphs and evaluating plans.

REPORT_SRCS := $(wildcard tools/report/*.c)
REPORT_OBJS := $(REPORT_SRCS:%.c=$(BUILD)/%.o)

$(BUILD)/tools/report/%.o: tools/report/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(TOOL_SAN) -c $< -o $@

$(BUILD)/remat-report: $(REPORT_OBJS) $(BUILD)/libplanner.a
	$(CC) $(CFLAGS) $(TOOL_SAN) -o $@ $(REPORT_OBJS) $(BUILD)/libplanner.a -ljansson -lglpk -lm

ALL_TARGETS += $(BUILD)/remat-report

E2E_TESTS += $(sort $(wildcard tests/report/report_*.sh))

# The mlp3 fixture the tests read is generated (fixtures/gen_mlp.py, byte
# for byte) and committed: the tests prove it fresh first, and else stop.
REPORT_FIXTURE_OK := $(BUILD)/tests/report/mlp3.ok
$(REPORT_FIXTURE_OK): tests/report/fixtures/gen_mlp.py $(wildcard tests/report/fixtures/mlp3/*)
	@rm -rf $@.tmp && mkdir -p $@.tmp
	python3 tests/report/fixtures/gen_mlp.py $@.tmp
	@diff -rq $@.tmp tests/report/fixtures/mlp3 >/dev/null || { echo "tests/report/fixtures/mlp3/:" \
		"stale, not what gen_mlp.py writes: run python3 tests/report/fixtures/gen_mlp.py" \
		"tests/report/fixtures/mlp3 and commit it"; exit 1; }
	@rm -rf $@.tmp && touch $@
TEST_INPUTS_OK += $(REPORT_FIXTURE_OK)

# Unit tests: the report's sources without main.c, built with $(SAN)
# against the sanitized planner library.
REPORT_SAN_OBJS := $(filter-out %/main.o,$(REPORT_SRCS:%.c=$(BUILD)/san/%.o))

$(BUILD)/san/tools/report/%.o: tools/report/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) -c $< -o $@

$(BUILD)/tests/report/test_report: tests/report/test_report.c $(REPORT_SAN_OBJS) \
		$(BUILD)/san/libplanner.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) -o $@ $< $(REPORT_SAN_OBJS) $(BUILD)/san/libplanner.a \
		-lcmocka -ljansson -lglpk -lm

UNIT_TESTS += $(BUILD)/tests/report/test_report

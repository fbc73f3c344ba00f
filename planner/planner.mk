# planner/: the op-graph model, evaluator, planners and `remat-plan`.
# libplanner.a is linked by remat-report too (with $(PLANNER_LIBS)).
# Headers are tracked by the compiler (DEPFLAGS: one .d beside each
# object), so no list of them is kept here.

# plan/ (the plan model), core/budget.c (the budget grammar), core/grow.c
# and core/map.c (growable arrays, the hash table) are shared with the
# runtime; every .c of planner/'s folders is the library's, remat_plan.c
# (the command) is not.
PLANNER_SRCS := plan/plan.c plan/builder.c plan/checksum.c plan/file.c core/budget.c core/grow.c core/map.c \
	$(sort $(filter-out planner/remat_plan.c,$(wildcard planner/*.c planner/*/*.c)))
PLANNER_LIBS := -ljansson -lglpk -lm

PLANNER_OBJS     := $(PLANNER_SRCS:%.c=$(BUILD)/%.o)
PLANNER_SAN_OBJS := $(PLANNER_SRCS:%.c=$(BUILD)/san/%.o)

$(PLANNER_OBJS): $(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(TOOL_SAN) -c $< -o $@

$(PLANNER_SAN_OBJS): $(BUILD)/san/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) -c $< -o $@

$(BUILD)/libplanner.a: $(PLANNER_OBJS)
	@rm -f $@
	ar rcs $@ $^

# Sanitized copy for the unit tests.
$(BUILD)/san/libplanner.a: $(PLANNER_SAN_OBJS)
	@rm -f $@
	ar rcs $@ $^

ALL_TARGETS += $(BUILD)/libplanner.a

$(BUILD)/remat-plan: planner/remat_plan.c $(BUILD)/libplanner.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(TOOL_SAN) $< -o $@ $(BUILD)/libplanner.a $(PLANNER_LIBS)

ALL_TARGETS += $(BUILD)/remat-plan

# ---- unit tests (cmocka, ASan+UBSan) ----
PLANNER_TESTS := $(addprefix $(BUILD)/tests/planner/,test_opt test_eval test_io test_model test_offload)

$(BUILD)/san/tests/planner/testutil.o: tests/planner/testutil.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) -c $< -o $@

$(PLANNER_TESTS): $(BUILD)/tests/planner/%: tests/planner/%.c $(BUILD)/san/tests/planner/testutil.o \
		$(BUILD)/san/libplanner.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) $< $(BUILD)/san/tests/planner/testutil.o -o $@ \
		$(BUILD)/san/libplanner.a $(PLANNER_LIBS) -lcmocka

UNIT_TESTS += $(PLANNER_TESTS)

# ---- benchmark (make bench) ----
PLAN_BENCH_OBJS := $(addprefix $(BUILD)/bench/planner/,plan_bench.o gen.o cover_lp.o)

$(PLAN_BENCH_OBJS): $(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(TOOL_SAN) -c $< -o $@

$(BUILD)/bench/plan_bench: $(PLAN_BENCH_OBJS) $(BUILD)/libplanner.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(TOOL_SAN) $(PLAN_BENCH_OBJS) -o $@ $(BUILD)/libplanner.a $(PLANNER_LIBS)

ALL_TARGETS += $(BUILD)/bench/plan_bench
BENCHES += bench/planner/run.sh

E2E_TESTS += tests/planner/remat-plan.sh tests/planner/min_budget.sh


# planner/: the op-graph model, evaluator, planners and `remat-plan`.
# libplanner.a is linked by remat-report too (with $(PLANNER_LIBS)).

SHARED ?= ../shared

# plan/ (the plan model) and core/budget.c (the budget grammar) are
# shared with the runtime.
PLANNER_SRCS := plan/plan.c plan/builder.c plan/checksum.c plan/file.c core/budget.c $(addprefix planner/,graph.c budget.c json_util.c graph_read.c trace_load.c candidates.c recipe.c assemble.c heap.c sort.c sim.c sim_search.c segments.c segtree.c selection.c greedy.c dtr.c graph_json.c atomic_file.c checkmate_load.c evaluate.c plan_json.c ilp.c ilp_shared.c ilp_search.c ilp_worker.c bound.c shared.c structure.c plan_make.c sweep.c progress.c offload.c park.c)
PLANNER_SRCS += core/grow.c
PLANNER_HDRS := planner/planner.h planner/internal.h planner/json_util.h planner/cands_internal.h \
	planner/sim_internal.h planner/ilp_internal.h plan/plan.h core/budget.h core/hash.h
PLANNER_LIBS := -ljansson -lglpk -lm

PLANNER_OBJS     := $(PLANNER_SRCS:%.c=$(BUILD)/%.o)
PLANNER_SAN_OBJS := $(PLANNER_SRCS:%.c=$(BUILD)/san/%.o)

$(PLANNER_OBJS): $(BUILD)/%.o: %.c $(PLANNER_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(TOOL_SAN) -c $< -o $@

$(PLANNER_SAN_OBJS): $(BUILD)/san/%.o: %.c $(PLANNER_HDRS)
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

$(BUILD)/remat-plan: planner/remat_plan.c planner/planner.h $(BUILD)/libplanner.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(TOOL_SAN) $< -o $@ $(BUILD)/libplanner.a $(PLANNER_LIBS)

ALL_TARGETS += $(BUILD)/remat-plan

# ---- unit tests (cmocka, ASan+UBSan) ----
PLANNER_TESTS := $(addprefix $(BUILD)/tests/planner/,test_opt test_eval test_io test_model test_offload)

$(BUILD)/tests/planner/%: tests/planner/%.c tests/planner/testutil.c tests/planner/testutil.h \
		$(BUILD)/san/libplanner.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) -Iplanner $< tests/planner/testutil.c -o $@ \
		$(BUILD)/san/libplanner.a $(PLANNER_LIBS) -lcmocka

UNIT_TESTS += $(PLANNER_TESTS)

# ---- benchmark (make bench) ----
$(BUILD)/bench/plan_bench: bench/planner/plan_bench.c bench/planner/gen.c bench/planner/gen.h \
		bench/planner/cover_lp.c \
		$(BUILD)/libplanner.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(TOOL_SAN) -Iplanner bench/planner/plan_bench.c bench/planner/gen.c bench/planner/cover_lp.c -o $@ \
		$(BUILD)/libplanner.a $(PLANNER_LIBS)

ALL_TARGETS += $(BUILD)/bench/plan_bench
BENCHES += bench/planner/run.sh

E2E_TESTS += tests/planner/remat-plan.sh tests/planner/min_budget.sh

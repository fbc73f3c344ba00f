# tools/report/: remat-report, the trace and plan viewer.  Links the
# planner library for loading traces, exporting graphs and evaluating plans.

REPORT_SRCS := $(addprefix tools/report/,main.c load.c analyze.c fmt.c \
	summary.c plan_view.c chart_term.c html.c svg.c perfetto.c sweep_view.c)
REPORT_OBJS := $(REPORT_SRCS:%.c=$(BUILD)/%.o)
REPORT_HDRS := tools/report/report.h planner/planner.h

$(BUILD)/tools/report/%.o: tools/report/%.c $(REPORT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(TOOL_SAN) -c $< -o $@

$(BUILD)/remat-report: $(REPORT_OBJS) $(BUILD)/libplanner.a
	$(CC) $(CFLAGS) $(TOOL_SAN) -o $@ $(REPORT_OBJS) $(BUILD)/libplanner.a -ljansson -lglpk -lm

ALL_TARGETS += $(BUILD)/remat-report

E2E_TESTS += tests/report/report_text.sh tests/report/report_errors.sh \
	tests/report/report_html.sh tests/report/report_plan.sh \
	tests/report/report_export.sh tests/report/report_real_trace.sh \
	tests/report/report_perfetto.sh tests/report/report_sweep.sh

# Unit tests: the report's sources without main.c, built with $(SAN)
# against the sanitized planner library.
REPORT_SAN_OBJS := $(filter-out %/main.o,$(REPORT_SRCS:%.c=$(BUILD)/san/%.o))

$(BUILD)/san/tools/report/%.o: tools/report/%.c $(REPORT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) -c $< -o $@

$(BUILD)/tests/report/test_report: tests/report/test_report.c $(REPORT_SAN_OBJS) \
		$(BUILD)/san/libplanner.a $(REPORT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) -o $@ $< $(REPORT_SAN_OBJS) $(BUILD)/san/libplanner.a \
		-lcmocka -ljansson -lglpk -lm

UNIT_TESTS += $(BUILD)/tests/report/test_report

# fuzz/: libFuzzer harnesses for the readers of files that come from
# outside (fuzz/README.md).  `make fuzz` builds them with clang
# (-fsanitize=fuzzer,address,undefined) and runs each for FUZZ_SECONDS on
# a copy of its corpus; `make -j2 fuzz` runs two at a time.  Every input in
# fuzz/corpus/ and fuzz/regress/ is also run once by check-unit, through
# the same harnesses built with gcc and $(SAN) (no clang needed).

FUZZ_CC      ?= clang
# Only make fuzz needs them, so only make fuzz installs them when missing.
FUZZ_DEB_PACKAGES := clang libclang-rt-dev
FUZZ_SECONDS ?= 60
FUZZERS      := trace graph nodelink plan
# Inputs are written to files (the readers take paths): in memory where
# there is a tmpfs, about twice as many runs a second.
FUZZ_TMP     ?= $(if $(wildcard /dev/shm/.),/dev/shm,$(BUILD)/fuzz)
FUZZ_CFLAGS  := $(CSTD) $(WARN) -O1 -g -I$(CUDA_HOME)/include -fno-omit-frame-pointer \
	-fsanitize=address,undefined -fno-sanitize-recover=all
# What a harness links besides its own file: the readers and the rest of
# the planner they call, and the runtime's plan reader.
# Headers are tracked by the compiler (-MMD -MP).
FUZZ_SRCS    := $(PLANNER_SRCS) acquire/plan_read.c fuzz/input_file.c fuzz/check_graph.c
FUZZ_OBJS    := $(FUZZ_SRCS:%.c=$(BUILD)/fuzz/obj/%.o)

$(BUILD)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZERS:%=$(BUILD)/fuzz/%): $(BUILD)/fuzz/%: $(BUILD)/fuzz/obj/fuzz/%.o $(FUZZ_OBJS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $^ -o $@ $(PLANNER_LIBS) -ldl -lpthread

.PHONY: fuzz fuzz-build fuzz-deps $(FUZZERS:%=fuzz-%)
fuzz-deps:
	@sh mk/install-deps.sh --check-only $(FUZZ_DEB_PACKAGES) || sh mk/install-deps.sh $(FUZZ_DEB_PACKAGES)
fuzz-build: fuzz-deps
	@$(MAKE) --no-print-directory $(FUZZERS:%=$(BUILD)/fuzz/%)
fuzz: $(FUZZERS:%=fuzz-%)
# New inputs go to a scratch corpus in the build tree; the seeds and the
# regressions are only read.  A finding stops the run: its input is in
# $(BUILD)/fuzz/findings-NAME/, to be fixed and then kept in
# fuzz/regress/NAME/.
$(FUZZERS:%=fuzz-%): fuzz-%: fuzz-build
	@rm -rf $(BUILD)/fuzz/work-$* $(BUILD)/fuzz/findings-$*
	@mkdir -p $(BUILD)/fuzz/work-$* $(BUILD)/fuzz/findings-$* fuzz/regress/$*
	@t=$$(mktemp -d $(FUZZ_TMP)/remat-fuzz-$*.XXXXXX) && trap 'rm -rf "$$t"' EXIT && \
	if TMPDIR=$$t UBSAN_OPTIONS=print_stacktrace=1 $(BUILD)/fuzz/$* \
		-max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -dict=fuzz/json.dict \
		-artifact_prefix=$(BUILD)/fuzz/findings-$*/ -print_final_stats=1 \
		$(BUILD)/fuzz/work-$* fuzz/corpus/$* fuzz/regress/$* >$(BUILD)/fuzz/$*.log 2>&1; then \
		echo "fuzz-$*: no finding in $(FUZZ_SECONDS) s ($$(sed -n 's/^stat::number_of_executed_units: *//p' \
			$(BUILD)/fuzz/$*.log) inputs, $$(grep -o 'cov: [0-9]*' $(BUILD)/fuzz/$*.log | tail -n 1))"; \
	else \
		tail -n 40 $(BUILD)/fuzz/$*.log; \
		echo "fuzz-$*: FINDING, input in $(BUILD)/fuzz/findings-$*/ (log $(BUILD)/fuzz/$*.log)"; \
		exit 1; \
	fi

# The regression run: each harness over its seeds and past findings.
# replay_main.c is built once per harness (FUZZ_NAME names its corpus).
FUZZ_REPLAY := $(FUZZERS:%=$(BUILD)/tests/fuzz/replay_%)
FUZZ_OBJDIR := $(BUILD)/tests/fuzz/obj
FUZZ_REPLAY_OBJS := $(addprefix $(FUZZ_OBJDIR)/,input_file.o check_graph.o plan_read.o)
FUZZ_HARNESS_OBJS := $(FUZZERS:%=$(FUZZ_OBJDIR)/%.o)

$(FUZZ_HARNESS_OBJS) $(FUZZ_OBJDIR)/input_file.o $(FUZZ_OBJDIR)/check_graph.o: $(FUZZ_OBJDIR)/%.o: fuzz/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) -MMD -MP -c $< -o $@
$(FUZZ_OBJDIR)/plan_read.o: acquire/plan_read.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) -MMD -MP -c $< -o $@
$(FUZZ_OBJDIR)/main_%.o: fuzz/replay_main.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) -MMD -MP -DFUZZ_NAME='"$*"' -c $< -o $@

$(FUZZ_REPLAY): $(BUILD)/tests/fuzz/replay_%: $(FUZZ_OBJDIR)/%.o $(FUZZ_OBJDIR)/main_%.o \
		$(FUZZ_REPLAY_OBJS) $(BUILD)/san/libplanner.a
	$(CC) $(CFLAGS) $(SAN) $(filter %.o,$^) -o $@ $(BUILD)/san/libplanner.a \
		$(PLANNER_LIBS) -ldl -lpthread

-include $(wildcard $(FUZZ_OBJS:.o=.d) $(FUZZERS:%=$(BUILD)/fuzz/obj/fuzz/%.d) \
	$(FUZZ_REPLAY_OBJS:.o=.d) $(FUZZ_HARNESS_OBJS:.o=.d) $(FUZZERS:%=$(FUZZ_OBJDIR)/main_%.d))

UNIT_TESTS += $(FUZZ_REPLAY)

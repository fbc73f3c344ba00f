# fuzz/: libFuzzer harnesses for the readers of files that come from
# outside (fuzz/README.md).  `make fuzz` builds them with clang
# (-fsanitize=fuzzer,address,undefined) and runs each for FUZZ_SECONDS on
# a copy of its corpus; `make -j2 fuzz` runs two at a time.  Every input in
# fuzz/corpus/ and fuzz/regress/ is also run once by check-unit, through
# the same harnesses built with gcc and $(SAN) (no clang needed).

FUZZ_CC      ?= clang
# Only make fuzz needs them: make fuzz-deps installs them, make fuzz checks
# that $(FUZZ_CC) links a libFuzzer program and else says so, once.
FUZZ_DEB_PACKAGES := clang libclang-rt-dev
FUZZ_SECONDS ?= 60
FUZZERS      := trace graph nodelink plan
# Inputs are written to files (the readers take paths): in memory where
# there is a tmpfs, about twice as many runs a second.
FUZZ_TMP     ?= $(if $(wildcard /dev/shm/.),/dev/shm,$(BUILD)/fuzz)
FUZZ_CFLAGS  := $(CSTD) $(WARN) -O1 -g -I$(CUDA_HOME)/include -fno-omit-frame-pointer \
	-fsanitize=address,undefined -fno-sanitize-recover=all $(DEPFLAGS)
# What a harness links besides its own file: the readers and the rest of
# the planner they call, and the runtime's plan reader.
FUZZ_SRCS    := $(PLANNER_SRCS) acquire/plan_read.c fuzz/input_file.c fuzz/check_graph.c
FUZZ_OBJS    := $(FUZZ_SRCS:%.c=$(BUILD)/fuzz/obj/%.o)

$(BUILD)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZERS:%=$(BUILD)/fuzz/%): $(BUILD)/fuzz/%: $(BUILD)/fuzz/obj/fuzz/%.o $(FUZZ_OBJS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $^ -o $@ $(PLANNER_LIBS) -ldl -lpthread

.PHONY: fuzz fuzz-build fuzz-deps $(FUZZERS:%=fuzz-%)
fuzz-deps:
	@sh mk/install-deps.sh $(FUZZ_DEB_PACKAGES)
fuzz-build:
	@printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{\n\t(void)d;\n\t(void)n;\n\treturn 0;\n}\n' | \
		$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -x c - -o /dev/null >/dev/null 2>&1 || { \
		echo "make fuzz: $(FUZZ_CC) cannot link a libFuzzer program: missing Debian packages" \
			"$(FUZZ_DEB_PACKAGES)? run 'make fuzz-deps' to install them"; exit 1; }
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
FUZZ_REPLAY := $(FUZZERS:%=$(BUILD)/tests/fuzz/replay_%)
FUZZ_REPLAY_SRCS := fuzz/input_file.c fuzz/check_graph.c
$(FUZZ_REPLAY_SRCS:%.c=$(BUILD)/san/%.o): $(BUILD)/san/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) -c $< -o $@
# The runtime's plan reader as the unit tests link it (libremat.mk).
FUZZ_REPLAY_OBJS := $(FUZZ_REPLAY_SRCS:%.c=$(BUILD)/san/%.o) $(BUILD)/san/libremat/acquire/plan_read.o
# replay_main.c reads the harness's corpus and regressions: one per name.
$(BUILD)/san/fuzz/replay_main-%.o: fuzz/replay_main.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) -DFUZZ_NAME='"$*"' -c $< -o $@
$(FUZZ_REPLAY): $(BUILD)/tests/fuzz/replay_%: fuzz/%.c $(BUILD)/san/fuzz/replay_main-%.o \
		$(FUZZ_REPLAY_OBJS) $(BUILD)/san/libplanner.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) $< $(BUILD)/san/fuzz/replay_main-$*.o $(FUZZ_REPLAY_OBJS) -o $@ \
		$(BUILD)/san/libplanner.a $(PLANNER_LIBS) -ldl -lpthread

UNIT_TESTS += $(FUZZ_REPLAY)

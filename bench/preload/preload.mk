# bench/preload: per-launch cost of libremat against no preload (`make bench`).
BENCH_PRELOAD := $(BUILD)/bench/preload
$(BENCH_PRELOAD)/empty.so: bench/preload/empty.cu $(SIMCC_DEPS)
	@mkdir -p $(@D)
	$(SIMCC) $(SIMCC_FLAGS) $< -o $@
$(BENCH_PRELOAD)/launch_bench: bench/preload/launch_bench.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< -o $@ -L$(CUDA_HOME)/lib64/stubs -lcuda
ALL_TARGETS += $(BENCH_PRELOAD)/empty.so $(BENCH_PRELOAD)/launch_bench
BENCHES += bench/preload/run.sh

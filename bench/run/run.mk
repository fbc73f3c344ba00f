# bench/run: run mode's overhead in simulated time and its host cost per
# launch while a plan is applied (uses the empty kernel module of
# bench/preload).  Included from libremat.mk.
BENCHES += bench/run/run.sh
$(BUILD)/bench/run/iter_bench: bench/run/iter_bench.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< -o $@ -L$(CUDA_HOME)/lib64/stubs -lcuda -lpthread
ALL_TARGETS += $(BUILD)/bench/run/iter_bench

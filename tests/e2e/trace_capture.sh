#!/bin/sh
# Stream capture under libremat (tests/e2e/progs/capture.c): graph memory
# passes through to the driver, a free of managed memory on a capturing
# stream is refused as the driver refuses one of pool memory, another
# thread's allocations during a global capture make no unsafe call of
# libremat's own (its allocator's event queries), and the calls a global
# capture forbids (cuMemAlloc, cuMemFree) are refused and invalidate it,
# unless the thread switched to relaxed: the program sees what it sees
# without libremat, line for line.
. tests/e2e/trace_lib.sh
P=$BUILD/tests/e2e/progs
[ -x "$P/capture" ] && [ -e "$P/chain.so" ] || fail "$P/capture is not built (make remat-progs)"
run plain -- "$P/capture" "$P/chain.so"
grep -q "^sync-alloc: alloc 900, end 901$" "$tmp/plain.out" ||
	fail "the simulated driver let cuMemAlloc through a global capture: $(cat "$tmp/plain.out")"
for mode in trace run; do
	run "$mode" REMAT_MODE=$mode REMAT_BUDGET=1G "REMAT_TRACE_DIR=$tmp/$mode.d" \
		"REMAT_CACHE_DIR=$tmp/$mode.c" LD_PRELOAD="$PRELOAD" -- "$P/capture" "$P/chain.so"
	same plain "$mode"
done
echo "trace_capture: ok"

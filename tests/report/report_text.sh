#!/bin/sh
# remat-report on the mlp3 fixture prints the figures worked out by hand in
# tests/report/fixtures/mlp3.expected.md.
. tests/report/lib.sh
out=$TMP/out
"$REPORT" "$FIX" >"$out" || fail "remat-report exited $?"

expect_line "$out" '^  period +26 ops per iteration \(4 iterations seen'
expect_line "$out" '^  duration +1\.579 ms \(sum of op durations; 1 op without a duration\)'
# ops by kind, and by entry point in the right-hand column
expect_line "$out" '^  kernels +20 +cudaLaunchKernel +12$'
expect_line "$out" '^  copies +3  \(HtoD 2, DtoH 1\) +cuLaunchKernel +8$'
expect_line "$out" '^  memsets +2 +cudaMemcpyAsync +3$'
expect_line "$out" '^  host funcs +1 +cudaMemsetAsync +2$'
expect_line "$out" '^  total +26 +cudaLaunchHostFunc +1$'
# x (8 192 000 B) + labels (16 000 B) come in, the 4-byte loss goes out
expect_line "$out" '^  copied +HtoD 7\.8 MiB, DtoH 4 B$'
expect_line "$out" '^  streams +2$'
expect_line "$out" '^  never replayed +3: copy from host \(2\), host callback \(1\)$'
# top kernel: sgemm_nn, 3 launches, 386 us = 24.4 % of 1.579 ms, ranked first
sed -n '/^TOP KERNELS/{n;n;p}' "$out" | grep -Eq '^  sgemm_nn +3 +386\.0 us +24\.4%$' ||
	fail "sgemm_nn is not the first row of the kernel table"
expect_line "$out" '^  sgemm_tn +3 +361\.0 us +22\.9%$'
# memory split: 96 MiB of large persistent buffers + one 2 MiB small chunk
expect_line "$out" '^MEMORY \(baseline peak 154\.0 MiB, first reached at op 12\)$'
expect_line "$out" '^  persistent +98\.0 MiB '
expect_line "$out" '^    buffers +96\.0 MiB +8 buffers'
expect_line "$out" '^    small pool +2\.0 MiB +9 persistent \+ 5 per-iteration allocations under 2\.0 MiB$'
expect_line "$out" '\(384\.2 KiB \+ 250\.0 KiB requested\)'
expect_line "$out" '^  per-iteration +56\.0 MiB +at the peak'
expect_line "$out" '^  peak +154\.0 MiB$'
# what the memory holds, from reads and writes alone
expect_line "$out" '^WHAT THE MEMORY HOLDS \(from reads and writes; backward from op 10\)$'
expect_line "$out" '^  parameters, state +72\.3 MiB +11 buffers '
expect_line "$out" '^  gradients +24\.1 MiB +6 buffers '
expect_line "$out" '^  activations +31\.3 MiB +3 buffers '
expect_line "$out" '^  workspace +31\.4 MiB +5 buffers '
expect_line "$out" '^  inputs +7\.8 MiB +2 buffers '
# largest activation first: h1 (#19), idle over ops 5..14 = 10 ops, 67 us, with its site
# (each row: the gap and the op whose output it holds, then the allocation site)
sed -n '/^LARGEST ACTIVATIONS/,/^CUPTI/p' "$out" | sed -n '4,5p' >"$TMP/first"
expect_line "$TMP/first" '^  #19 +16\.0 MiB +10 +67\.0 us +ops 5\.\.14 +op 3 bias_relu_fwd$'
expect_line "$TMP/first" '^ {9}mlp\.c:88 \(linear_forward\) < mlp\.c:142 \(train_step\) < mlp\.c:305 \(main\)$'
expect_line "$out" '^  #20 +16\.0 MiB +3 +9\.0 us +ops 7\.\.9 +op 5 bias_relu_fwd$'
# x is a copy of the input batch: nothing can replay it
expect_line "$out" '^  #17 +8\.0 MiB +16 +840\.0 us +ops 3\.\.18 +op 0 memcpyHtoD \(never replayed\)$'
expect_line "$out" '^ {9}data\.c:77 \(load_batch\) < mlp\.c:140 \(train_step\)'
# da2, da1 (#25, #26) are used back to back: no gap, not listed
if grep -Eq '^  #(25|26) ' "$out"; then fail "a buffer without an idle gap is listed"; fi
expect_line "$out" '^  20 kernels seen by CUPTI, 20 launches intercepted: they match$'

# the chart: 12 rows + axis, 72 columns, labelled at the peak and the persistent level
sed -n '/^MEMORY OVER THE ITERATION/,$p' "$out" >"$TMP/chart"
expect_line "$TMP/chart" '^ +154\.0 MiB \+'
expect_line "$TMP/chart" '^ +98\.0 MiB \+={72}$'
rows=$(grep -Ec '^ +([0-9.]+ [KMG]?i?B)? [|+]' "$TMP/chart")
[ "$rows" -eq 13 ] || fail "chart has $rows rows, want 12 + the axis"
# ops 12-13 and 16 reach 154 MiB: the top row is filled there
top=$(grep -E '^ +154\.0 MiB' "$TMP/chart")
echo "$top" | grep -q '#' || fail "no column reaches the peak row"

# without a plan, the next step is spelled out
expect_line "$out" "^To plan for a budget: remat-plan $FIX --budget 80% -o plan\.json\$"

# no colour when stdout is not a terminal
if grep -q "$(printf '\033')" "$out"; then fail "escape codes in a pipe"; fi

# a CUPTI count that disagrees with the intercepted launches is flagged
cp -r "$FIX" "$TMP/mismatch"
sed 's/"cupti": {"kernels": 20, "launches": 20, "mismatch": 0}/"cupti": {"kernels": 23, "launches": 20, "mismatch": 3}/' \
	"$FIX/trace.json" >"$TMP/mismatch/trace.json"
"$REPORT" "$TMP/mismatch" >"$TMP/mm" || fail "mismatch trace: exit $?"
expect_line "$TMP/mm" '^  23 kernels seen by CUPTI, 20 launches intercepted: MISMATCH \(3\)'

# fewer CUPTI records than launches (seen on an H100): read, and said so
sed 's/"cupti": {"kernels": 20, "launches": 20, "mismatch": 0}/"cupti": {"kernels": 17, "launches": 20, "mismatch": -3}/' \
	"$FIX/trace.json" >"$TMP/mismatch/trace.json"
"$REPORT" "$TMP/mismatch" >"$TMP/mm" || fail "negative mismatch trace: exit $?"
expect_line "$TMP/mm" '^  17 kernels seen by CUPTI, 20 launches intercepted: MISMATCH \(-3\) - CUPTI delivered no record for some launches'

# without CUPTI the report says so, with the writer's note
sed 's/"cupti": {"kernels": 20, "launches": 20, "mismatch": 0}/"cupti": {"available": false, "kernels": 0, "launches": 20, "mismatch": 0, "note": "libcupti.so not found"}/' \
	"$FIX/trace.json" >"$TMP/mismatch/trace.json"
"$REPORT" "$TMP/mismatch" >"$TMP/nocupti" || fail "no-CUPTI trace: exit $?"
expect_line "$TMP/nocupti" '^  CUPTI was not available - libcupti\.so not found: no kernel durations, no cross-check$'

# colour only on a terminal, and never with NO_COLOR
python3 - "$REPORT" "$FIX" <<'PY' || fail "colour on a terminal"
import os, pty, sys

def run(env):
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(sys.argv[1], [sys.argv[1], sys.argv[2]], env)
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    return out

env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
assert b"\x1b[1mITERATION\x1b[0m" in run(env), "no colour on a terminal"
env["NO_COLOR"] = "1"
assert b"\x1b[" not in run(env), "colour despite NO_COLOR"
PY
echo "ok"

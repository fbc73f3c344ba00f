#!/bin/sh
# Run mode meets accesses the plan did not foresee.  First, in one iteration
# the program copies an evicted activation to the host (tests/e2e/progs/chain
# --host-read).  The activation is rebuilt first, so the host sees the right
# bytes (no simulator fault), the iteration passes through, and the plan
# resumes at the next iteration: outputs byte-identical.
. tests/e2e/run_lib.sh
P=$BUILD/tests/e2e/progs
[ -x "$P/chain" ] && [ -e "$P/chain.so" ] || fail "$P/chain is not built (make remat-progs)"
run base -- "$P/chain" "$P/chain.so" 30 --host-read 20
read -r c p m <<EOT
$(budgets chain "$P/chain" "$P/chain.so" 30 --host-read 20)
EOT
run_budget hostread base "$m" "$P/chain" "$P/chain.so" 30 --host-read 20
grep -q "touches evicted buffer\|diverges from the profile" "$tmp/hostread.err" ||
	fail "the host read was not seen: $(grep libremat "$tmp/hostread.err" | tail -n 3)"
# The plan was applied again after the odd iteration.
python3 - "$tmp/hostread.err" <<'PY' || fail "the plan did not resume after the host read"
import re, sys
log = open(sys.argv[1]).read()
first = int(re.search(r"applied from iteration (\d+)", log).group(1))
div = int(re.search(r"iteration (\d+) diverges", log).group(1))
ev = int(re.search(r"iterations, (\d+) evictions", log).group(1))
# One eviction per applied iteration: more than the iterations up to the
# divergence means the plan was applied again after it.
assert ev > div - first + 1, (first, div, ev)
PY
# A planned kernel whose parameters point into an evicted buffer (chain
# --swap-at: the backward kernels read a1 first in one iteration, while a1
# is evicted): its parameter words are checked against the evicted buffers,
# a1 is rebuilt before the launch (else the simulator faults).
run sbase -- "$P/chain" "$P/chain.so" 30 --swap-at 20
prefill swap "$tmp/chain-trace.d" "$m"
run_budget swap sbase "$m" "$P/chain" "$P/chain.so" 30 --swap-at 20
grep -q "touches evicted buffer [0-9]*: rebuilt first" "$tmp/swap.err" ||
	fail "the access through a parameter was not caught: $(grep libremat "$tmp/swap.err" | tail -n 3)"
grep -q "1 unplanned rebuilds" "$tmp/swap.err" || fail "no unplanned rebuild counted"
# A buffer the plan drops after its last use and never rebuilds (chain
# --late-free: a3 stays allocated long after), read on the host in one
# iteration: rebuilt by replaying the op that last wrote it.
run lbase -- "$P/chain" "$P/chain.so" 30 --late-free --host-read 20
read -r c p lm <<EOT
$(budgets late "$P/chain" "$P/chain.so" 30 --late-free --host-read 20)
EOT
prefill late "$tmp/late-trace.d" "$lm"
run_budget late lbase "$lm" "$P/chain" "$P/chain.so" 30 --late-free --host-read 20
! grep -q "content is lost" "$tmp/late.err" || fail "a3 was not rebuilt"
echo "run_unplanned: ok"

#!/bin/sh
# Never touch what a kernel may read (issue 31): under the preload, at
# budgets from 30% to 98% of the peak in 4-point steps, a program written
# like a third-party CUDA trainer (tests/e2e/progs/real/mlp1.cu: the
# pattern of mnist-cuda's 1layer.cu) ends every run with the output of the
# run without libremat, a plan applied or one message that the budget
# cannot be reached, and no simulator fault.  Its first gradient's rows
# past the used features are rewritten with the zeros they hold, so no
# kernel changes them, and the update kernel reads them every step:
# before issue 31 a pointer's reach went only as far as writes through it,
# and every plan from 74% up parked those rows and faulted.
. tests/e2e/run_lib.sh
P=$BUILD/tests/e2e/progs/real
[ -x "$P/mlp1" ] || fail "$P/mlp1 is not built"
set -- "$P/mlp1" 3 16
run base -- "$@"
applied=0
b=30
while [ $b -le 98 ]; do
	run "b$b" "REMAT_BUDGET=$b%" REMAT_LOG=1 "REMAT_TRACE_DIR=$tmp/b$b.d" \
		"REMAT_CACHE_DIR=$tmp/b$b.cache" LD_PRELOAD="$PRELOAD" -- "$@"
	same base "b$b"
	no_fault
	if grep -q "applied from iteration" "$tmp/b$b.err"; then
		applied=$((applied + 1))
	else
		[ "$(grep -c "cannot be reached for this job" "$tmp/b$b.err")" = 1 ] ||
			fail "$b%: neither a plan nor one message: $(grep libremat "$tmp/b$b.err" | tail -n 3)"
	fi
	b=$((b + 4))
done
[ $applied -gt 0 ] || fail "no budget got a plan: the sweep proves nothing"
echo "real_budget_sweep: ok ($applied of 18 budgets planned, the rest refused, never a fault)"

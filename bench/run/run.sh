#!/bin/sh
# bench/run: what run mode costs, on the simulated device (run from the
# repository root; `make bench` runs it).
#
# 1. For mlp and gpt (sized so activations dominate, as in real training:
#    with the trainers' small defaults weights and optimizer state leave
#    nothing below ~65 % to save) at budgets of 75 % and 50 % of the
#    per-iteration peak
#    and at the smallest budget remat-plan reports reachable: the simulated time per
#    iteration with libremat over without it, next to the planner's
#    prediction (recompute_ns / iteration_ns), and the physical peak of the
#    replay iterations against the budget.  Simulated time is
#    deterministic; the per-iteration time is the difference of two runs
#    with different --iters, both applying the cached plan from the same
#    iteration, divided by the difference in iterations.
# 2. Host cost per kernel launch with a plan applied (bench/run/iter_bench),
#    from one and from two launching threads, against no preload and the
#    preload's pass-through: wall clock, interleaved, and (with valgrind)
#    libremat's own instructions per launch, which are repeatable.
set -eu
BUILD=${BUILD:-build}
LIB=$(pwd)/$BUILD/libremat.so
SIMRUN=sim/bin/simrun
PLAN=$BUILD/remat-plan
A=${BENCH_RUN_ITERS_A:-5}
B=${BENCH_RUN_ITERS_B:-9}
MLP_ARGS=${BENCH_RUN_MLP:---layers 4 --batch 1024}
GPT_ARGS=${BENCH_RUN_GPT:---layers 4 --batch 16}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/at50"
: >"$tmp/at50def"
export SIMCUDA_GRANULARITY=64K
export REMAT_CACHE_DIR=$tmp/cache

die() {
	echo "bench/run: $*" >&2
	exit 1
}

# sim NAME ENV... -- CMD..., field NAME KEY
. bench/sim_lib.sh

echo "simulated time per iteration: runs of $A and $B iterations ($((A + 4)) and $((B + 4)) with --alloc caching and vmm), SIMCUDA_GRANULARITY=64K"
echo "  mlp $MLP_ARGS"
echo "  gpt $GPT_ARGS"
# Plans of version 2, as run mode asks remat-plan for (acquire/spawn.c): the
# prediction is then the plan the runs apply.
# smallest TRACE: the smallest budget remat-plan accepts, to a chunk (64 KiB):
# bisection between 0 and the smallest peak it reports for an unreachable
# budget (its quick estimate, which the ILP may beat at a given budget).
# smallest TRACE [ARG...]: with remat-plan's ARGs too (--offload-gbps G).
smallest() {
	_tr=$1
	shift
	_hi=$("$PLAN" "$_tr" --budget 1 --plan-version 2 "$@" 2>&1 |
		sed -n 's/.*smallest reachable peak: .*(\([0-9]*\) bytes).*/\1/p')
	[ -n "$_hi" ] || die "remat-plan gave no smallest reachable peak for $_tr"
	"$PLAN" "$_tr" --budget "$_hi" --time-limit 10 --plan-version 2 "$@" >/dev/null 2>&1 ||
		die "remat-plan refuses the smallest peak it reported ($_hi) for $_tr"
	_lo=0
	while [ $((_hi - _lo)) -gt 65536 ]; do
		_mid=$(((_lo + _hi) / 2 / 65536 * 65536))
		[ "$_mid" -gt "$_lo" ] || _mid=$((_lo + 65536))
		if "$PLAN" "$_tr" --budget "$_mid" --time-limit 10 --plan-version 2 "$@" >/dev/null 2>&1; then
			_hi=$_mid
		else
			_lo=$_mid
		fi
	done
	echo "$_hi"
}

# estimate TRACE: remat-plan's quick estimate of the smallest peak (bytes);
# peak_bytes TRACE: the trace's baseline peak.
estimate() {
	"$PLAN" "$1" --budget 1 --plan-version 2 2>&1 |
		sed -n 's/.*smallest reachable peak: .*(\([0-9]*\) bytes).*/\1/p'
}
peak_bytes() {
	sed -n 's/.*"peak_bytes": \([0-9]*\).*/\1/p' "$1/trace.json" | head -n 1
}

printf '%-13s %-8s %10s %6s | %9s %9s %7s | %10s %5s | %s\n' trainer budget bytes "%peak" \
	predicted measured diff "rep.peak" "<=bud" output
# Each trainer with each way its activations live (--alloc): one
# allocation per tensor (async, what libremat's cudaMallocAsync gives
# PyTorch), or tensors inside the program's own pool of segments reused
# across iterations (caching, like PyTorch's native allocator), or in
# ranges the program maps itself with cuMemCreate/cuMemMap (vmm, like
# PyTorch's expandable segments).  A pool warms up over the first
# iterations: caching and vmm run 4 iterations longer.
ALLOCS=${BENCH_RUN_ALLOCS:-async caching vmm}
A0=$A B0=$B
for t in mlp gpt; do for alloc in $ALLOCS; do
	if [ $t = mlp ]; then args=$MLP_ARGS; else args=$GPT_ARGS; fi
	args="$args --alloc $alloc"
	A=$A0 B=$B0
	[ "$alloc" = async ] || A=$((A0 + 4)) B=$((B0 + 4))
	# shellcheck disable=SC2086
	sim $t-trace LD_PRELOAD="$LIB" REMAT_MODE=trace REMAT_TRACE_DIR="$tmp/$t-$alloc-trace" -- \
		"$BUILD/trainers/$t" $args --iters "$A"
	# shellcheck disable=SC2086
	sim $t-$alloc-plainA -- "$BUILD/trainers/$t" $args --iters "$A"
	# shellcheck disable=SC2086
	sim $t-$alloc-plainB -- "$BUILD/trainers/$t" $args --iters "$B"
	base=$(($(field $t-$alloc-plainB sim_time_ns) - $(field $t-$alloc-plainA sim_time_ns)))
	min=$(smallest "$tmp/$t-$alloc-trace")
	# The table is the default's (the proofs perturb only data words).  A
	# pool's activations are dead across the boundary only as the proofs
	# show it: after its rows, remat-plan's estimate of the smallest peak
	# from the default's trace, from one without the proofs
	# (REMAT_WRITE_PROOF=0) and from one perturbing every tested byte (1).
	proofnote=
	if [ "$alloc" != async ]; then
		for w in 0 1; do
			# shellcheck disable=SC2086
			sim $t-proof$w LD_PRELOAD="$LIB" REMAT_MODE=trace REMAT_WRITE_PROOF=$w \
				REMAT_TRACE_DIR="$tmp/$t-$alloc-proof$w" -- "$BUILD/trainers/$t" $args --iters "$A"
		done
		proofnote=$(awk -v d="$(estimate "$tmp/$t-$alloc-trace")" \
			-v o="$(estimate "$tmp/$t-$alloc-proof0")" -v q="$(estimate "$tmp/$t-$alloc-proof1")" \
			-v p="$(peak_bytes "$tmp/$t-$alloc-trace")" 'BEGIN {
			printf "      smallest peak (remat-plan'"'"'s estimate): %d bytes, %.0f%% of the peak, by default;", d, 100 * d / p
			printf " %.0f%% with REMAT_WRITE_PROOF=0, %.0f%% with 1\n", 100 * o / p, 100 * q / p
		}')
	fi
	for label in 75% 50% smallest; do
		arg=$label
		[ "$label" = smallest ] && arg=$min
		rc=0
		"$PLAN" "$tmp/$t-$alloc-trace" --budget "$arg" --plan-version 2 >"$tmp/plan.txt" 2>&1 || rc=$?
		bytes=$(sed -n 's/^budget: .*(\([0-9]*\) bytes)$/\1/p' "$tmp/plan.txt")
		peak0=$(sed -n 's/^baseline peak: .*(\([0-9]*\) bytes)$/\1/p' "$tmp/plan.txt")
		pct=$(awk -v b="$bytes" -v p="$peak0" 'BEGIN { printf "%.0f", 100 * b / p }')
		if [ $rc = 3 ]; then
			printf '%-13s %-8s %10s %5s%% | %s\n' "$t/$alloc" $label "$bytes" "$pct" \
				"not reachable: $(sed -n 's/^remat-plan: smallest reachable peak: //p' "$tmp/plan.txt")"
			continue
		fi
		[ $rc = 0 ] || die "$t at $label: remat-plan exited $rc: $(tail -n 2 "$tmp/plan.txt")"
		pred=$(sed -n 's/^recompute time: .*(\([0-9.]*\)% of the iteration)$/\1/p' "$tmp/plan.txt")
		# Recompute only (REMAT_OFFLOAD=0): the prediction is remat-plan's
		# plan without offload; the offload table below has its own runs.
		R="LD_PRELOAD=$LIB REMAT_BUDGET=$bytes REMAT_LOG=1 REMAT_OFFLOAD=0 REMAT_TRACE_DIR=$tmp/$t-$alloc-run"
		# Fills the cache: the measured runs apply the plan from the same iteration.
		# shellcheck disable=SC2086
		sim $t-fill $R -- "$BUILD/trainers/$t" $args --iters "$A"
		wait_plan "$REMAT_CACHE_DIR" "*-$bytes-nooffload.plan.json"
		# One retry when the two runs did not apply the plan alike (a busy
		# machine can end a run before its plan arrives).
		for try in 1 2; do
			# shellcheck disable=SC2086
			sim $t-runA $R -- "$BUILD/trainers/$t" $args --iters "$A"
			# shellcheck disable=SC2086
			sim $t-runB $R -- "$BUILD/trainers/$t" $args --iters "$B"
			fromA=$(sed -n 's/.*applied from iteration \([0-9]*\).*/\1/p' "$tmp/$t-runA.err")
			fromB=$(sed -n 's/.*applied from iteration \([0-9]*\).*/\1/p' "$tmp/$t-runB.err")
			[ -z "$fromB" ] || [ "$fromA" != "$fromB" ] || break
		done
		note=""
		if [ -z "$fromB" ] || [ "$fromA" != "$fromB" ]; then
			note=" (plan applied from iteration '${fromA:-never}' and '${fromB:-never}': not comparable)"
		fi
		grep -q "cached plan" "$tmp/$t-runB.err" || note="$note (no cached plan)"
		# The last iteration diverges in every run (the checksum copies follow it,
		# not another forward pass): only a difference between the runs matters.
		divA=$(grep -c "diverges from the profile" "$tmp/$t-runA.err" || true)
		divB=$(grep -c "diverges from the profile" "$tmp/$t-runB.err" || true)
		[ "$divA" = "$divB" ] ||
			note="$note ($divA and $divB divergent iterations: the extra ones ran partly unmodified)"
		with=$(($(field $t-runB sim_time_ns) - $(field $t-runA sim_time_ns)))
		rpeak=$(sed -n 's/.*physical peak \([0-9]*\) bytes in replay iterations.*/\1/p' \
			"$tmp/$t-runB.err")
		same=identical
		cmp -s "$tmp/$t-$alloc-plainB.out" "$tmp/$t-runB.out" || same=DIFFERENT
		if [ $label = 50% ]; then
			ev=$(sed -n 's/.*iterations, \([0-9]*\) evictions.*/\1/p' "$tmp/$t-runB.err")
			echo "$t $alloc $with $base $bytes ${rpeak:-?} ${ev:-?} $same" >>"$tmp/at50"
		fi
		awk -v t="$t/$alloc" -v l=$label -v b="$bytes" -v pc="$pct" -v pr="$pred" -v w="$with" \
			-v base="$base" -v rp="${rpeak:-}" -v s=$same -v note="$note" 'BEGIN {
			m = 100 * (w / base - 1)
			ok = rp == "" ? "?" : (rp + 0 <= b + 0 ? "yes" : "NO")
			printf "%-13s %-8s %10d %5s%% | %8.2f%% %8.2f%% %+6.2f | %10s %5s | %s%s\n",
				t, l, b, pc, pr, m, m - pr, rp == "" ? "?" : rp, ok, s, note
		}'
		[ -z "$note" ] || sed 's/^/      longer run: /' "$tmp/$t-runB.err" | grep -v 'active:\|reserved' | tail -n 6
	done
	[ -z "$proofnote" ] || echo "$proofnote"
done; done
echo
echo "(overhead = simulated time per iteration with libremat / without - 1; predicted ="
echo " recompute_ns / iteration_ns from remat-plan; rep.peak: physical peak of the"
echo " replay iterations as libremat reports it; smallest: the smallest budget, in"
echo " 64 KiB steps, remat-plan accepts; aims: < 15% at 50%, measured within 5 points"
echo " of predicted)"

# ---- offload to pinned host memory ------------------------------------------
# The same trainers and budgets with three plans each: recompute only (as
# above), offload only (remat-plan --offload-only: nothing replayed) and
# both (the planner chooses per buffer version), offload planned for the
# simulated copy engines' rate (SIMCUDA_PCIE_GBPS, default 52.8 GB/s) and
# applied with REMAT_OFFLOAD=1.  Each plan goes into a plan cache of its
# own before the runs, so both runs apply it from the same iteration.
GBPS=${SIMCUDA_PCIE_GBPS:-52.8}
echo
echo "offload to pinned host memory ($GBPS GB/s each way) against recompute:"
printf '%-11s %-8s %-9s | %9s %9s %7s | %8s %8s | %10s %5s | %s\n' trainer bud plan \
	predicted measured diff offloads replays "rep.peak" "<=bud" output
# Each --alloc mode of the first table (its plain runs and traces): async
# with the three plans; the pool modes with the planner's choice only, as
# run mode plans by default (offload on), which also parks the pool space
# no op touches on the host (docs/plan-format.md, "Parked on the host"),
# and at the smallest budget that reaches.
for alloc in $ALLOCS; do for t in mlp gpt; do
	if [ $t = mlp ]; then args=$MLP_ARGS; else args=$GPT_ARGS; fi
	args="$args --alloc $alloc"
	A=$A0 B=$B0 modes="recompute offload both" labels="75% 50%"
	[ "$alloc" = async ] || A=$((A0 + 4)) B=$((B0 + 4)) modes=both \
		labels="50% $(smallest "$tmp/$t-$alloc-trace" --offload-gbps "$GBPS")"
	base=$(($(field $t-$alloc-plainB sim_time_ns) - $(field $t-$alloc-plainA sim_time_ns)))
	hash=$(sed -n 's/.*"graph_hash": "0x\([0-9a-f]*\)".*/\1/p' "$tmp/$t-$alloc-trace/trace.json" | head -n 1)
	for label in $labels; do
		for mode in $modes; do
			case $mode in
			recompute) popt="" off=0 ;;
			offload) popt="--offload-gbps $GBPS --offload-only" off=1 ;;
			both) popt="--offload-gbps $GBPS" off=1 ;;
			esac
			cache=$tmp/cache-$t-$label-$mode
			mkdir -p "$cache"
			rc=0
			# shellcheck disable=SC2086
			"$PLAN" "$tmp/$t-$alloc-trace" --budget "$label" --plan-version 2 $popt \
				-o "$tmp/offplan.json" >"$tmp/plan.txt" 2>&1 || rc=$?
			if [ $rc = 3 ]; then
				printf '%-11s %-8s %-9s | %s\n' "$t/$alloc" $label $mode \
					"not reachable: $(sed -n 's/^remat-plan: //p' "$tmp/plan.txt" | cut -c1-90)"
				continue
			fi
			[ $rc = 0 ] || die "$t $label $mode: remat-plan exited $rc: $(tail -n 2 "$tmp/plan.txt")"
			bytes=$(sed -n 's/^budget: .*(\([0-9]*\) bytes)$/\1/p' "$tmp/plan.txt")
			# Plans for REMAT_OFFLOAD=0 have a cache name of their own.
			suffix=; [ $off = 1 ] || suffix=-nooffload
			mv "$tmp/offplan.json" "$cache/$hash-$bytes$suffix.plan.json"
			prc=$(sed -n 's/^recompute time: .*(\([0-9.]*\)% of the iteration)$/\1/p' "$tmp/plan.txt")
			pst=$(sed -n 's/^offloaded: .*(\([0-9.]*\)% of the iteration)$/\1/p' "$tmp/plan.txt")
			R="LD_PRELOAD=$LIB REMAT_BUDGET=$bytes REMAT_LOG=1 REMAT_OFFLOAD=$off REMAT_CACHE_DIR=$cache REMAT_TRACE_DIR=$tmp/$t-off"
			# shellcheck disable=SC2086
			sim $t-offA $R -- "$BUILD/trainers/$t" $args --iters "$A"
			# shellcheck disable=SC2086
			sim $t-offB $R -- "$BUILD/trainers/$t" $args --iters "$B"
			fromA=$(sed -n 's/.*applied from iteration \([0-9]*\).*/\1/p' "$tmp/$t-offA.err")
			fromB=$(sed -n 's/.*applied from iteration \([0-9]*\).*/\1/p' "$tmp/$t-offB.err")
			note=""
			[ -n "$fromB" ] && [ "$fromA" = "$fromB" ] ||
				note=" (plan applied from iteration '${fromA:-never}' and '${fromB:-never}': not comparable)"
			with=$(($(field $t-offB sim_time_ns) - $(field $t-offA sim_time_ns)))
			rpeak=$(sed -n 's/.*physical peak \([0-9]*\) bytes in replay iterations.*/\1/p' "$tmp/$t-offB.err")
			counts=$(sed -n 's/.*iterations, [0-9]* evictions, \([0-9]*\) replays, [0-9]* unplanned rebuilds, \([0-9]*\) offloads.*/\2 \1/p' "$tmp/$t-offB.err")
			same=identical
			cmp -s "$tmp/$t-$alloc-plainB.out" "$tmp/$t-offB.out" || same=DIFFERENT
			parked=$(sed -n 's/.*offloads, \([0-9]*\) parked.*/\1/p' "$tmp/$t-offB.err")
			[ "${parked:-0}" = 0 ] || note="$note ($parked parked copies)"
			if [ $label = 50% ] && [ $mode = both ]; then
				ev=$(sed -n 's/.*iterations, \([0-9]*\) evictions.*/\1/p' "$tmp/$t-offB.err")
				echo "$t $alloc $with $base $bytes ${rpeak:-?} ${ev:-?} $same" >>"$tmp/at50def"
			fi
			awk -v t="$t/$alloc" -v l=$label -v md=$mode -v b="$bytes" -v pr="${prc:-0}" -v ps="${pst:-0}" \
				-v w="$with" -v base="$base" -v rp="${rpeak:-}" -v c="${counts:-? ?}" -v s=$same \
				-v note="$note" 'BEGIN {
				split(c, n, " ")
				m = 100 * (w / base - 1)
				p = pr + ps
				ok = rp == "" ? "?" : (rp + 0 <= b + 0 ? "yes" : "NO")
				printf "%-11s %-8s %-9s | %8.2f%% %8.2f%% %+6.2f | %8s %8s | %10s %5s | %s%s\n",
					t, l, md, p, m, m - p, n[1], n[2], rp == "" ? "?" : rp, ok, s, note
			}'
		done
	done
done; done
echo "(predicted = (recompute_ns + stall_ns) / iteration_ns from remat-plan: stall is"
echo " what copies stick out of compute in its model; offloads and replays: totals over"
echo " the longer run; aims at 50%: <= 10% with offload, within 2 points of predicted)"

# The arena trainer (llm.c's way: every activation in arenas allocated
# once) at 50%, recompute only and by default, in 4 KiB chunks (its
# tensors are small): no async mode to compare with, its own overhead.
ARENA_ARGS=${BENCH_RUN_ARENA:---batch 8 --seq 64}
AG=4K
# shellcheck disable=SC2086
sim arena-trace SIMCUDA_GRANULARITY=$AG LD_PRELOAD="$LIB" REMAT_MODE=trace \
	REMAT_TRACE_DIR="$tmp/arena-trace" -- "$BUILD/trainers/arena" $ARENA_ARGS --iters "$((A0 + 4))"
for n in A B; do
	[ $n = A ] && it=$((A0 + 4)) || it=$((B0 + 4))
	# shellcheck disable=SC2086
	sim arena-plain$n SIMCUDA_GRANULARITY=$AG -- "$BUILD/trainers/arena" $ARENA_ARGS --iters "$it"
done
base=$(($(field arena-plainB sim_time_ns) - $(field arena-plainA sim_time_ns)))
bytes=$("$PLAN" "$tmp/arena-trace" --budget 50% --plan-version 2 2>&1 |
	sed -n 's/^budget: .*(\([0-9]*\) bytes)$/\1/p')
[ -n "$bytes" ] || die "remat-plan gave no budget for the arena at 50%"
for off in 0 1; do
	cache=$tmp/cache-arena-$off
	R="SIMCUDA_GRANULARITY=$AG LD_PRELOAD=$LIB REMAT_BUDGET=$bytes REMAT_LOG=1 REMAT_OFFLOAD=$off REMAT_CACHE_DIR=$cache REMAT_TRACE_DIR=$tmp/arena-run"
	# shellcheck disable=SC2086
	sim arena-fill $R -- "$BUILD/trainers/arena" $ARENA_ARGS --iters "$((A0 + 4))"
	wait_plan "$cache" "*.plan.json"
	for n in A B; do
		[ $n = A ] && it=$((A0 + 4)) || it=$((B0 + 4))
		# shellcheck disable=SC2086
		sim arena-run$n $R -- "$BUILD/trainers/arena" $ARENA_ARGS --iters "$it"
	done
	with=$(($(field arena-runB sim_time_ns) - $(field arena-runA sim_time_ns)))
	rpeak=$(sed -n 's/.*physical peak \([0-9]*\) bytes in replay iterations.*/\1/p' "$tmp/arena-runB.err")
	ev=$(sed -n 's/.*iterations, \([0-9]*\) evictions.*/\1/p' "$tmp/arena-runB.err")
	same=identical
	cmp -s "$tmp/arena-plainB.out" "$tmp/arena-runB.out" || same=DIFFERENT
	f=$tmp/at50
	[ $off = 0 ] || f=$tmp/at50def
	echo "arena own $with $base $bytes ${rpeak:-?} ${ev:-?} $same" >>"$f"
done

# Issue 10's line: at 50%, each way activations live against async, with
# recompute only (the first table) and as run mode plans by default
# (offload on: the offload table's "both" rows, parking included).
echo
echo "at 50% of the peak, each --alloc mode against async (aim: within 3 points):"
printf '%-13s %-9s %9s %9s | %10s %5s %9s | %s\n' trainer plans measured "vs async" "rep.peak" "<=bud" \
	evictions output
for ta in $(for t in mlp gpt; do for a in $ALLOCS; do echo $t/$a; done; done) arena/own; do
	t=${ta%/*} alloc=${ta#*/}
	for kind in recompute default; do
		f=$tmp/at50
		[ $kind = recompute ] || f=$tmp/at50def
		awk -v t=$t -v a=$alloc -v k=$kind 'BEGIN { ref = "" }
			$1 == t && $2 == "async" { ref = 100 * ($3 / $4 - 1) }
			$1 == t && $2 == a { m = 100 * ($3 / $4 - 1); b = $5; rp = $6; ev = $7; s = $8; found = 1 }
			END {
				if (!found) { printf "%-13s %-9s %s\n", t "/" a, k, "50% not reachable"; exit }
				d = ref == "" ? "?" : sprintf("%+.2f", m - ref)
				ok = rp == "?" ? "?" : (rp + 0 <= b + 0 ? "yes" : "NO")
				printf "%-13s %-9s %8.2f%% %9s | %10s %5s %9s | %s\n", t "/" a, k, m, d, rp, ok, ev, s
			}' "$f" 2>/dev/null || true
	done
done
echo "(recompute: REMAT_OFFLOAD=0; default: offload allowed, as run mode plans unless"
echo " REMAT_OFFLOAD=0; evictions: over the longer run; arena/own: $ARENA_ARGS in"
echo " $AG chunks, which has no async mode: vs async ?)"

# ---- host cost per launch ----------------------------------------------------
bin=$BUILD/bench/run/iter_bench
mod=$BUILD/bench/preload/empty.so
N=${BENCH_RUN_LAUNCH_ITERS:-40}
launch() { # NAME THREADS ENV...: ns per launch
	_n=$1 _t=$2
	shift 2
	env "$@" "$SIMRUN" "$bin" "$mod" "$N" "$_t" >"$tmp/$_n.out" 2>"$tmp/$_n.err" ||
		die "$_n: iter_bench failed: $(tail -n 3 "$tmp/$_n.err")"
	grep -q "diverges" "$tmp/$_n.err" && die "$_n: iterations diverged: $(grep diverges "$tmp/$_n.err" | head -n 1)"
	awk '$1 == "ns_per_launch" { print $2 }' "$tmp/$_n.out"
}
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b < a) ? b : a }'; }
RUNENV="LD_PRELOAD=$LIB REMAT_BUDGET=1G REMAT_LOG=1 REMAT_TRACE_DIR=$tmp/ib-trace"
# shellcheck disable=SC2086
launch ib-fill 1 $RUNENV >/dev/null
wait_plan "$REMAT_CACHE_DIR" "*-1073741824.plan.json"
none="" pass="" runm="" run2=""
for i in 1 2 3 4 5; do
	none=$(min "$none" "$(launch ib-none 1)")
	pass=$(min "$pass" "$(launch ib-pass 1 LD_PRELOAD="$LIB")")
	# shellcheck disable=SC2086
	runm=$(min "$runm" "$(launch ib-run 1 $RUNENV)")
	# shellcheck disable=SC2086
	run2=$(min "$run2" "$(launch ib-run2 2 $RUNENV)")
done
for r in ib-run ib-run2; do
	grep -q "applied from iteration" "$tmp/$r.err" ||
		echo "bench/run: note: the plan was not applied in $r: $(tail -n 3 "$tmp/$r.err")"
done
echo
echo "host cost per kernel launch, best of 5 interleaved runs ($N iterations of 256 launches):"
awk -v n="$none" -v p="$pass" -v r="$runm" -v r2="$run2" 'BEGIN {
	printf "  %-46s %8.1f ns  %6.3fx\n", "no preload", n, 1
	printf "  %-46s %8.1f ns  %6.3fx\n", "preload, no REMAT_* (pass-through)", p, p / n
	printf "  %-46s %8.1f ns  %6.3fx\n", "run mode, plan applied", r, r / n
	printf "  %-46s %8.1f ns  %6.3fx\n", "run mode, plan applied, 2 launching threads", r2, r2 / n
}'

# Instructions are repeatable where wall clock is not: callgrind counts the
# timed rounds only (iter_bench switches instrumentation on for them), and
# libremat's own share of a launch is its cuLaunchKernel's inclusive cost
# minus the real driver's.
if command -v valgrind >/dev/null 2>&1 && command -v callgrind_annotate >/dev/null 2>&1; then
	own() { # NAME THREADS ENV...: libremat's instructions per launch
		_n=$1 _t=$2
		shift 2
		env SIMCUDA_MEMORY=256M "$@" LD_LIBRARY_PATH="$BUILD/simcuda" valgrind --tool=callgrind \
			--instr-atstart=no --callgrind-out-file="$tmp/$_n.cg" "$bin" "$mod" 4 "$_t" \
			>"$tmp/$_n.out" 2>"$tmp/$_n.err" || die "$_n: iter_bench under callgrind failed"
		callgrind_annotate --inclusive=yes "$tmp/$_n.cg" 2>/dev/null | awk \
		    -v n="$(awk '$1 == "launches" { print $2 }' "$tmp/$_n.out")" '
			/launch.c:cuLaunchKernel \[.*libremat.so\]/ { gsub(",", "", $1); w = $1 }
			/launch.c:cuLaunchKernel \[.*libcuda.so.1\]/ { gsub(",", "", $1); r = $1 }
			END { printf "%.1f", (w - r) / n }'
	}
	p=$(own cg-pass 1 LD_PRELOAD="$LIB")
	# shellcheck disable=SC2086
	r1=$(own cg-run 1 $RUNENV)
	# shellcheck disable=SC2086
	r2=$(own cg-run2 2 $RUNENV)
	for r in cg-run cg-run2; do
		grep -q "applied from iteration" "$tmp/$r.err" ||
			die "$r: the plan was not applied under callgrind: $(tail -n 3 "$tmp/$r.err")"
	done
	echo
	echo "libremat's own instructions per launch (callgrind, repeatable):"
	printf "  %-46s %8s\n" "preload, no REMAT_* (pass-through)" "$p"
	printf "  %-46s %8s\n" "run mode, plan applied" "$r1"
	printf "  %-46s %8s\n" "run mode, plan applied, 2 launching threads" "$r2"
fi

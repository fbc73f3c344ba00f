#!/bin/sh
# The iteration found is the training step at every depth (issue 31).
# With five layers or more, gpt's start-up zeroes each layer's tensors in a
# loop of memsets that repeats for more than four of its periods at one
# memory level, and mlp's in a loop of four ops: libremat profiled that
# loop ("iteration found: 12 ops"), and at 50% re-profiled until the job
# ended, running unmodified.  Such a loop is given other buffers each time
# round; a training step is given the same ones.  Here, for gpt and mlp
# with --layers 4, 5, 8 and 12 (gpt 12 with --seq 64; mlp with --batch
# 1024, where activations outweigh its parameters and Adam state as in a
# real job: at its default batch nothing goes below 53%): the period found
# grows by the same number of ops per layer (a step's length is a + b *
# layers; a loop inside it would not), and at REMAT_BUDGET=50% the plan
# applies, the output is identical and the replay iterations' physical
# peak is within the budget.
. tests/e2e/run_lib.sh
for t in gpt mlp; do
	for L in 4 5 8 12; do
		set -- "$TR/$t" --layers "$L" --iters 8
		[ "$t$L" != gpt12 ] || set -- "$@" --seq 64
		[ "$t" != mlp ] || set -- "$@" --batch 1024
		n=$t-$L
		run "$n-base" -- "$@"
		run "$n" REMAT_BUDGET=50% REMAT_LOG=1 "REMAT_TRACE_DIR=$tmp/$n.d" \
			"REMAT_CACHE_DIR=$tmp/$n.cache" LD_PRELOAD="$PRELOAD" -- "$@"
		same "$n-base" "$n"
		ops=$(sed -n 's/.*iteration found: \([0-9]*\) ops.*/\1/p' "$tmp/$n.err" | head -n 1)
		[ -n "$ops" ] || fail "$n: no iteration found: $(grep libremat "$tmp/$n.err" | tail -n 3)"
		echo "$ops" >"$tmp/$n.ops"
		if ! grep -q "applied from iteration" "$tmp/$n.err"; then
			# The job ended before its planner did: run again with the plan.
			await_plan "$n" "$tmp/$n.cache" "$tmp/$n.d"
			run "$n-again" REMAT_BUDGET=50% REMAT_LOG=1 "REMAT_TRACE_DIR=$tmp/$n.d2" \
				"REMAT_CACHE_DIR=$tmp/$n.cache" LD_PRELOAD="$PRELOAD" -- "$@"
			same "$n-base" "$n-again"
			n=$n-again
		fi
		grep -q "applied from iteration" "$tmp/$n.err" ||
			fail "$n: no plan applied at 50%: $(grep libremat "$tmp/$n.err" | tail -n 3)"
		! grep -q "profiling again" "$tmp/$n.err" ||
			fail "$n: profiled again: $(grep 'profiling again' "$tmp/$n.err" | head -n 1)"
		bud=$(sed -n 's/.*budget: \([0-9]*\) bytes.*/\1/p' "$tmp/$n.err" | head -n 1)
		peak=$(sed -n 's/.*physical peak \([0-9]*\) bytes in replay iterations.*/\1/p' "$tmp/$n.err")
		[ -n "$peak" ] && [ -n "$bud" ] && [ "$peak" -le "$bud" ] ||
			fail "$n: replay-iteration peak '$peak' over the budget '$bud'"
		no_fault
	done
	read -r o4 <"$tmp/$t-4.ops"
	read -r o5 <"$tmp/$t-5.ops"
	for L in 8 12; do
		read -r o <"$tmp/$t-$L.ops"
		[ "$o" = $((o4 + (L - 4) * (o5 - o4))) ] ||
			fail "$t: $o ops found at $L layers; a step has $o4 + $((o5 - o4)) per layer past 4"
	done
	echo "$t: a step of $o4 + $((o5 - o4)) ops per layer past 4, found at 4, 5, 8 and 12 layers"
done
echo "run_layers: ok"

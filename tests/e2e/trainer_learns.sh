#!/bin/sh
# Both trainers really learn: the loss of the last iteration is well below
# the first (the forward, backward and optimizer math is right), and the
# first loss is near ln(classes), as for an untrained classifier.
. tests/e2e/trainer_lib.sh
run mlp "$TR/mlp" --iters 8
run gpt "$TR/gpt" --iters 8
check_format "$tmp/mlp.out" 8
check_format "$tmp/gpt.out" 8
for t in mlp gpt; do
	first=$(loss "$tmp/$t.out" 0)
	last=$(loss "$tmp/$t.out" 7)
	echo "$t: loss $first -> $last"
	awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < 0.75 * a) }' ||
		fail "$t: loss did not fall enough ($first -> $last)"
	# Every step but at most one goes down (dropout and fresh batches add noise).
	ups=$(awk '$1 == "iter" { print $4 }' "$tmp/$t.out" | while read -r h; do printf '%.6f\n' "$h"; done |
		awk 'NR > 1 && $1 > prev { n++ } { prev = $1 } END { print n + 0 }')
	[ "$ups" -le 1 ] || fail "$t: loss rose in $ups of 7 steps: $(cat "$tmp/$t.out")"
done
# ln(16) = 2.77 for mlp's 16 classes; ln(64) = 4.16 for gpt's vocabulary.
awk -v a="$(loss "$tmp/mlp.out" 0)" 'BEGIN { exit !(a > 2.0 && a < 3.6) }' || fail "mlp: odd first loss"
awk -v a="$(loss "$tmp/gpt.out" 0)" 'BEGIN { exit !(a > 3.5 && a < 5.0) }' || fail "gpt: odd first loss"
echo "trainers learn: ok"

#!/bin/sh
# Every single-token edit of a cached plan (each number +1 and -1, each
# step kind swapped for every other kind, each step and each eviction
# removed) is applied to the cache entry of a job, one at a time: the job
# either runs it (it was still a valid plan) and ends with output identical
# to the plain run and no message, or refuses it in one message, plans
# again, and ends with output identical to the plain run.  The cache is an
# integrity boundary: any process of the user can write it.
#
# SWEEP_STRIDE=K tries every K-th edit (make test: 4; make check-faults:
# every one).
. tests/e2e/run_lib.sh
export SIMCUDA_GRANULARITY=16K SIMCUDA_MEMORY=256M
STRIDE=${SWEEP_STRIDE:-4}
T="$TR/mlp --layers 1 --hidden 128 --batch 128 --iters 8"

# shellcheck disable=SC2086
run plain -- $T
# shellcheck disable=SC2086
run warm REMAT_BUDGET=75% REMAT_LOG=1 "REMAT_TRACE_DIR=$tmp/warm.d" "REMAT_CACHE_DIR=$tmp/cache" \
	LD_PRELOAD="$PRELOAD" -- $T
for _i in $(seq 1 600); do
	ls "$tmp/cache"/*.plan.json >/dev/null 2>&1 && break
	sleep 0.1
done
entry=$(ls "$tmp/cache"/*.plan.json) || fail "no plan was cached"
grep -q '"stash"' "$entry" || fail "the plan has no stash: $(cat "$entry")"

mkdir "$tmp/edits"
python3 - "$entry" "$tmp/edits" "$STRIDE" <<'PY' || fail "cannot make the edits"
import json, re, sys
text = open(sys.argv[1]).read()
out, stride = sys.argv[2], int(sys.argv[3])
edits = []
# Each number +-1 (hex graph hash included), wherever it stands.
for m in re.finditer(r'0x[0-9a-f]+|-?\d+', text):
    tok = m.group(0)
    v = int(tok, 16) if tok.startswith("0x") else int(tok)
    for d in (1, -1):
        new = "0x%016x" % ((v + d) % 2**64) if tok.startswith("0x") else str(v + d)
        edits.append(("%s%+d at %d" % (tok, d, m.start()), text[:m.start()] + new + text[m.end():]))
kinds = ["map", "save", "replay", "restore", "release", "stash", "unstash"]
for m in re.finditer(r'\["(%s)", \d+\]' % "|".join(kinds), text):
    for k in kinds:
        if k != m.group(1):
            s = m.start() + 2
            edits.append(("%s->%s at %d" % (m.group(1), k, s),
                          text[:s] + k + text[s + len(m.group(1)):]))
    # the step removed, with the separator next to it
    a, b = m.start(), m.end()
    if text[b:b + 2] == ", ":
        b += 2
    elif text[a - 2:a] == ", ":
        a -= 2
    edits.append(("step removed at %d" % m.start(), text[:a] + text[b:]))
for m in re.finditer(r'"evict_after": \[([\d, ]+)\]', text):
    ids = m.group(1).split(", ")
    for i in range(len(ids)):
        rest = ids[:i] + ids[i + 1:]
        edits.append(("eviction of %s removed at %d" % (ids[i], m.start()),
                      text[:m.start(1)] + ", ".join(rest) + text[m.end(1):]))
for n, (what, t) in enumerate(edits):
    if n % stride == 0:
        with open("%s/%04d.json" % (out, n), "w") as f:
            f.write(t)
        with open("%s/%04d.what" % (out, n), "w") as f:
            f.write(what)
print(len(edits), "edits")
PY

ran=0 refused=0
for e in "$tmp"/edits/*.json; do
	rm -rf "$tmp/c" && mkdir "$tmp/c" && cp "$e" "$tmp/c/$(basename "$entry")"
	what=$(cat "${e%.json}.what")
	rc=0
	# shellcheck disable=SC2086
	env REMAT_BUDGET=75% "REMAT_TRACE_DIR=$tmp/m.d" "REMAT_CACHE_DIR=$tmp/c" LD_PRELOAD="$PRELOAD" \
		"$SIMRUN" $T >"$tmp/m.out" 2>"$tmp/m.err" || rc=$?
	[ $rc = 0 ] || fail "$what: exit $rc: $(tail -n 3 "$tmp/m.err")"
	cmp -s "$tmp/plain.out" "$tmp/m.out" ||
		fail "$what: other output: $(diff "$tmp/plain.out" "$tmp/m.out" | head -n 4)"
	! grep -q "simcuda: fault" "$tmp/m.err" || fail "$what: the simulator faulted"
	n=$(grep -c '^libremat:' "$tmp/m.err" || true)
	if [ "$n" = 0 ]; then
		ran=$((ran + 1))
	elif [ "$n" = 1 ] && grep -q "rejected\|unusable" "$tmp/m.err"; then
		refused=$((refused + 1))
	else
		fail "$what: $n messages: $(grep '^libremat:' "$tmp/m.err" | head -n 3)"
	fi
done
[ $refused -gt 0 ] || fail "no edit was refused"
echo "run_plan_mutations: ok ($ran edits still valid plans, $refused refused in one message)"

# Sourced by tests/e2e/run_plan_mutations*.sh: every single-token edit of a
# cached plan (each number +1 and -1, each step kind swapped for every other
# kind, each step and each eviction removed) is applied to the cache entry
# of a job, one at a time: the job either runs it (it was still a valid
# plan) and ends with output identical to the plain run and no message, or
# refuses it in one message, sets it aside, plans again, and ends with
# output identical to the plain run.  The cache is an integrity boundary:
# any process of the user can write it.
#
# An edit that keeps the old checksum is refused by the checksum before
# anything reads it (checked first on one edit of each kind).  So that the
# sweep tests what the runtime checks after the checksum (syntax, ranges,
# validation against the profile), every edit is given the checksum of its
# new content, as an edit on purpose is: by `remat-plan --rehash`, and by
# this script's own FNV-1a where remat-plan's reader refuses the edit (the
# two agree wherever both seal).
#
# The caller sets T (the trainer and its arguments), BUDGET, MUT_ENV (more
# variables for every run with libremat: REMAT_OFFLOAD), MUST (the step
# kinds the cached plan must have, so that their edits are tried) and
# STRIDE (tries every STRIDE-th edit; make check-faults: every one).
. tests/e2e/run_lib.sh
export SIMCUDA_GRANULARITY=16K SIMCUDA_MEMORY=256M

mutation_sweep() {
	# shellcheck disable=SC2086
	run plain -- $T
	# shellcheck disable=SC2086
	run warm $MUT_ENV REMAT_BUDGET=$BUDGET REMAT_LOG=1 "REMAT_TRACE_DIR=$tmp/warm.d" \
		"REMAT_CACHE_DIR=$tmp/cache" LD_PRELOAD="$PRELOAD" -- $T
	for _i in $(seq 1 600); do
		ls "$tmp/cache"/*.plan.json >/dev/null 2>&1 && break
		sleep 0.1
	done
	entry=$(ls "$tmp/cache"/*.plan.json) || fail "no plan was cached"
	for k in $MUST; do
		grep -q "\"$k\"" "$entry" || fail "the plan has no $k: $(cat "$entry")"
	done

	mkdir "$tmp/edits"
	python3 - "$entry" "$tmp/edits" "$STRIDE" <<'PY' || fail "cannot make the edits"
import re, sys
sealed = open(sys.argv[1]).read()
out, stride = sys.argv[2], int(sys.argv[3])
# The checksum member (docs/plan-format.md): FNV-1a 64 of every byte before
# its key; the edits are made to the text without it.
at = sealed.rindex('"checksum"')
tail = sealed[at:]
assert re.fullmatch(r'"checksum": "0x[0-9a-f]{16}",\n  "end": true\n}\n', tail), tail
text = sealed[:at] + '"end": true\n}\n'

def fnv1a(b):
    h = 0xcbf29ce484222325
    for c in b:
        h = ((h ^ c) * 0x100000001b3) % 2**64
    return h

def seal(t):
    cut = t.rindex('"end"')
    return t[:cut] + '"checksum": "0x%016x",\n  "end": true\n}\n' % fnv1a(t[:cut].encode())

assert seal(text) == sealed, "this script's checksum disagrees with remat-plan's"
edits = []
ops = text.index('"ops"')
# Each number +-1 (hex graph hash included), wherever it stands.
for m in re.finditer(r'0x[0-9a-f]+|-?\d+', text):
    tok = m.group(0)
    v = int(tok, 16) if tok.startswith("0x") else int(tok)
    for d in (1, -1):
        new = "0x%016x" % ((v + d) % 2**64) if tok.startswith("0x") else str(v + d)
        # (the format version is read before the checksum: a number of
        # the steps is the first with its old checksum)
        edits.append(("number" if m.start() > ops else "header",
                      "%s%+d at %d" % (tok, d, m.start()), text[:m.start()] + new + text[m.end():]))
# every kind of docs/plan-format.md, offload's included
kinds = ["map", "save", "replay", "restore", "release", "stash", "unstash",
         "offload", "prefetch", "await"]
for m in re.finditer(r'\["(%s)", \d+\]' % "|".join(kinds), text):
    for k in kinds:
        if k != m.group(1):
            s = m.start() + 2
            edits.append(("kind", "%s->%s at %d" % (m.group(1), k, s),
                          text[:s] + k + text[s + len(m.group(1)):]))
    # the step removed, with the separator next to it
    a, b = m.start(), m.end()
    if text[b:b + 2] == ", ":
        b += 2
    elif text[a - 2:a] == ", ":
        a -= 2
    edits.append(("step", "step removed at %d" % m.start(), text[:a] + text[b:]))
for m in re.finditer(r'"evict_after": \[([\d, ]+)\]', text):
    ids = m.group(1).split(", ")
    for i in range(len(ids)):
        rest = ids[:i] + ids[i + 1:]
        edits.append(("eviction", "eviction of %s removed at %d" % (ids[i], m.start()),
                      text[:m.start(1)] + ", ".join(rest) + text[m.end(1):]))
seen = set()
for n, (kind, what, t) in enumerate(edits):
    if n % stride == 0:
        for ext, body in (("json", t), ("sealed", seal(t)), ("what", what)):
            with open("%s/%04d.%s" % (out, n, ext), "w") as f:
                f.write(body)
    if kind not in seen and kind != "header":  # the first edit of each kind, with the old checksum
        seen.add(kind)
        with open("%s/stale-%s.json" % (out, kind), "w") as f:
            f.write(t[:t.rindex('"end"')] + tail)
print(len(edits), "edits")
PY

	for e in "$tmp"/edits/stale-*.json; do
		one_run "$(basename "$e") (old checksum)" "$e"
		refused "$(basename "$e") (old checksum)" "checksum does not match the content"
	done

	ran=0 refused=0 sealed_here=0
	for e in "$tmp"/edits/[0-9]*.json; do
		what=$(cat "${e%.json}.what")
		cp "$e" "$tmp/edit.json"
		if "$PLAN" --rehash "$tmp/edit.json" >/dev/null 2>"$tmp/rehash.err"; then
			cmp -s "$tmp/edit.json" "${e%.json}.sealed" ||
				fail "$what: remat-plan --rehash and this script seal it differently"
		else
			# remat-plan's reader refuses it: seal it here, for libremat's reader
			cp "${e%.json}.sealed" "$tmp/edit.json"
			sealed_here=$((sealed_here + 1))
		fi
		one_run "$what" "$tmp/edit.json"
		n=$(grep -c '^libremat:' "$tmp/m.err" || true)
		if [ "$n" = 0 ]; then
			ran=$((ran + 1))
		else
			! grep -q "checksum" "$tmp/m.err" || fail "$what: refused by the checksum: $(cat "$tmp/m.err")"
			refused "$what" ""
			refused=$((refused + 1))
		fi
	done
	[ $refused -gt 0 ] || fail "no edit was refused"
}

# one_run NAME FILE: FILE as the cache entry, the job run on it; the output
# must be the plain run's, without a simulator fault.  The job must have
# read the entry (its log says "cached plan PATH"): a job that profiled
# another graph or budget would miss it and say nothing.
one_run() {
	rm -rf "$tmp/c" "$tmp/m.d" "$tmp/m.log" && mkdir "$tmp/c" && cp "$2" "$tmp/c/$(basename "$entry")"
	rc=0
	# shellcheck disable=SC2086
	env $MUT_ENV REMAT_BUDGET=$BUDGET "REMAT_TRACE_DIR=$tmp/m.d" "REMAT_CACHE_DIR=$tmp/c" \
		LD_PRELOAD="$PRELOAD" REMAT_LOG=1 "REMAT_LOG_FILE=$tmp/m.log" "$SIMRUN" $T \
		>"$tmp/m.out" 2>"$tmp/m.err" || rc=$?
	[ $rc = 0 ] || fail "$1: exit $rc: $(tail -n 3 "$tmp/m.err")"
	grep -q "cached plan $tmp/c/$(basename "$entry")" "$tmp/m.log" ||
		fail "$1: the job did not read the cache entry: $(grep '^libremat:' "$tmp/m.log" | tail -n 4)"
	cmp -s "$tmp/plain.out" "$tmp/m.out" ||
		fail "$1: other output: $(diff "$tmp/plain.out" "$tmp/m.out" | head -n 4)"
	! grep -q "simcuda: fault" "$tmp/m.err" || fail "$1: the simulator faulted"
}

# refused NAME TEXT: the run said one thing, that the plan was rejected for
# TEXT, and kept the plan aside.
refused() {
	[ "$(grep -c '^libremat:' "$tmp/m.err")" = 1 ] &&
		grep -q "^libremat: cached plan .* rejected: .*$2.*; moved it to .*\.rejected and planning again" \
			"$tmp/m.err" || fail "$1: not one refusal: $(tail -n 5 "$tmp/m.err")"
	[ -e "$tmp/c/$(basename "$entry").rejected" ] || fail "$1: not kept aside"
}

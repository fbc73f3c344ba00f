#!/bin/sh
# make install PREFIX=... puts remat, remat-plan, remat-report, libremat.so,
# the man page and the docs where Debian keeps them; the installed remat
# finds its library and planner in its prefix and trains gpt at 50% of its
# peak on the simulated device with the same output as without it, then
# prints the summary; `man remat` finds the page through PATH; DESTDIR
# stages the same tree under another root; uninstall removes it.
. tests/cli/lib.sh
# The suite runs under make: this make is a new one, not a sub-make.
mk() { env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make --no-print-directory BUILD="$BUILD" "$@"; }
p=$tmp/prefix
mk install PREFIX="$p" >"$tmp/install.log" 2>&1 || fail "make install: $(tail -n 5 "$tmp/install.log")"
for f in bin/remat bin/remat-plan bin/remat-report bin/remat-torchrun-wrapper.sh; do
	[ -x "$p/$f" ] || fail "$f not installed executable"
done
for f in lib/libremat.so share/man/man1/remat.1.gz share/doc/libremat/README.md \
	share/doc/libremat/docs/run-mode.md share/doc/libremat/docs/remat-report.md; do
	[ -f "$p/$f" ] || fail "$f not installed"
done
[ ! -e "$p/bin/libremat.so" ] || fail "the library went to bin/"

# the installed command, outside the build tree; 24 iterations, so that the
# plan arrives before the job ends on a loaded machine (and under TSan)
GPT="$TR/gpt --iters 24 --layers 4 --seq 64"
cd "$tmp"
"$SIMRUN" $GPT >plain.out 2>plain.err || fail "plain run: $(tail -n 3 plain.err)"
# (a sanitizer's runtime preloaded into remat only: TSan's crashes sh)
# shellcheck disable=SC2086
"$SIMRUN" env $SANENV "$p/bin/remat" run --budget 50% --trace-dir "$tmp/rt" -- $GPT >remat.out 2>remat.err ||
	fail "remat run exited $?: $(tail -n 5 remat.err)"
cmp -s plain.out remat.out || fail "output differs: $(diff plain.out remat.out | head -n 5)"
expect remat.err '^remat: summary$'
expect remat.err '^  peak +14\.06 MiB without libremat, [0-9.]+ MiB with it \(measured\) \(budget 7\.03 MiB\)$'
# the plan brings back what it evicts by replays, offloads (the default), or both
expect remat.err '^  plan +ilp(:[a-z]+)?, planned peak [0-9.]+ MiB: [1-9][0-9]* evictions, ([1-9][0-9]* replays and [0-9]+|[0-9]+ replays and [1-9][0-9]*) offloads in [0-9]+ iterations \(0 unplanned rebuilds\)$'
# measured when an unmodified iteration finished before the plan was ready
expect remat.err '^  overhead +([-+][0-9.]+% time per iteration, measured: |not measured: no iteration ran without the plan)'
expect remat.err "^  trace +$tmp/rt\$"
expect remat.err "^  report +$tmp/rt/report\.html \(timeline for ui\.perfetto\.dev: $tmp/rt/timeline\.json\)\$"
# not a terminal: no progress lines, only the summary
[ "$(grep -c '^remat: ' remat.err)" = 1 ] || fail "progress lines without a terminal: $(cat remat.err)"
# the installed planner ran (the library found it through remat)
expect rt/remat.log "planning for a budget of 7372800 bytes: $p/bin/remat-plan started"
expect rt/remat.log 'physical peak [0-9]+ bytes in replay iterations, budget 7372800'
peak=$(sed -n 's/.*physical peak \([0-9]*\) bytes in replay iterations.*/\1/p' rt/remat.log)
[ "$peak" -le 7372800 ] || fail "replay peak $peak over the budget"
python3 -c "import json,sys; json.load(open(sys.argv[1]))['traceEvents']" rt/timeline.json ||
	fail "timeline.json does not parse"
grep -q 'href="timeline.json"' rt/report.html || fail "the report does not link the timeline"

# libremat preloaded by hand from the prefix finds its planner in ../bin
rm -rf cache
env LD_PRELOAD="${TEST_SAN_RUNTIME:+$TEST_SAN_RUNTIME:}$p/lib/libremat.so" REMAT_BUDGET=50% REMAT_LOG=1 REMAT_TRACE_DIR="$tmp/byhand" \
	PATH=/usr/bin:/bin "$SIMRUN" $GPT >hand.out 2>hand.err || fail "by hand: $(tail -n 3 hand.err)"
cmp -s plain.out hand.out || fail "by hand: output differs"
expect hand.err "$p/lib/\.\./bin/remat-plan started"
cd - >/dev/null

# man remat, found from PATH like any installed command
env -u MANPATH PATH="$p/bin:$PATH" MANPAGER=cat man remat >"$tmp/man.txt" 2>&1 ||
	fail "man remat: $(head -n 3 "$tmp/man.txt")"
expect "$tmp/man.txt" '^REMAT\(1\)'
expect "$tmp/man.txt" 'remat run \[--budget B\]'
expect "$tmp/man.txt" 'Exit status'
[ "$(env -u MANPATH PATH="$p/bin:$PATH" man -w remat)" = "$p/share/man/man1/remat.1.gz" ] ||
	fail "man -w remat: $(env -u MANPATH PATH="$p/bin:$PATH" man -w remat 2>&1)"

# DESTDIR: the same tree under a staging root, PREFIX as it will be
mk install DESTDIR="$tmp/stage" PREFIX=/usr >"$tmp/stage.log" 2>&1 || fail "DESTDIR install"
for f in usr/bin/remat usr/lib/libremat.so usr/share/man/man1/remat.1.gz \
	usr/share/doc/libremat/README.md; do
	[ -f "$tmp/stage/$f" ] || fail "DESTDIR: $f missing"
done
mk uninstall PREFIX="$p" >/dev/null 2>&1 || fail "make uninstall"
left=$(find "$p" -type f)
[ -z "$left" ] || fail "uninstall left: $left"
echo "remat_install: ok (replay peak $peak bytes, budget 7372800)"

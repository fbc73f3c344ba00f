#!/bin/sh
# The remat command line: --help and --version, each exit status its help
# documents, plan and report passed through to remat-plan and
# remat-report, trace mode, and the progress lines it shows on a terminal
# (a pseudo-terminal from script(1)) but not elsewhere.
. tests/cli/lib.sh
status 0 "$REMAT" --help
expect "$tmp/st.out" '^Usage: remat run '
expect "$tmp/st.out" '^Exit status:'
status 0 "$REMAT" run --help
expect "$tmp/st.out" '--budget=B'
status 0 "$REMAT" --version
expect "$tmp/st.out" '^remat [0-9]+\.[0-9]+'
# usage errors: 2, one message and the hint
status 2 "$REMAT"
status 2 "$REMAT" frobnicate
expect "$tmp/st.err" "unknown subcommand: frobnicate"
status 2 "$REMAT" run --budget 50%
expect "$tmp/st.err" "no command to run"
status 2 "$REMAT" run --bogus -- true
status 2 env -u REMAT_BUDGET "$REMAT" run -d "$tmp/nb" -- true
expect "$tmp/st.err" "run needs a budget"
status 2 "$REMAT" trace --budget 1G -- true
# the command: not found 127, not executable 126; the job's status and
# its signal (128+N) pass through
status 127 "$REMAT" trace -d "$tmp/t0" -- /nonexistent/cmd
expect "$tmp/st.err" "/nonexistent/cmd: command not found"
printf 'x' >"$tmp/noexec"
status 126 "$REMAT" trace -d "$tmp/t0" -- "$tmp/noexec"
status 7 "$REMAT" trace -d "$tmp/t0" -- sh -c 'exit 7'
expect "$tmp/st.err" '^remat: summary$'
status 143 "$REMAT" trace -d "$tmp/t0" -- sh -c 'kill -TERM $$'
# a trace directory that cannot be made: 125
: >"$tmp/file"
status 125 "$REMAT" trace -d "$tmp/file/sub" -- true
expect "$tmp/st.err" "cannot create the trace directory"
# plan and report are remat-plan and remat-report
status 0 "$REMAT" report --help
expect "$tmp/st.out" '^usage: remat-report'
status 2 "$REMAT" plan
expect "$tmp/st.err" '^remat-plan: no input given'

# trace mode: one iteration recorded, the output unchanged, the report written
"$SIMRUN" $GPT >"$tmp/plain.out" 2>/dev/null
status 0 "$SIMRUN" "$REMAT" trace -d "$tmp/tr" -- $GPT
cmp -s "$tmp/plain.out" "$tmp/st.out" || fail "trace mode changed the output"
expect "$tmp/st.err" "^  trace +$tmp/tr\$"
expect "$tmp/st.err" "^  report +$tmp/tr/report\.html "
[ -f "$tmp/tr/trace.json" ] && [ -f "$tmp/tr/timeline.json" ] || fail "trace mode: files missing"
! grep -q '^  plan' "$tmp/st.err" || fail "trace mode spoke of a plan"

# progress lines: on a terminal by default (stages of profiling and
# planning, the planner's own lines relayed), never in the job's stdout
# (stderr is the pseudo-terminal; script keeps what it showed in tty.log)
# (long enough for the plan to arrive on a loaded machine: it plans beside the job)
GPT_LONG=$(echo "$GPT" | sed 's/--iters 8/--iters 24/')
"$SIMRUN" $GPT_LONG >"$tmp/plain24.out" 2>/dev/null
script -qec "env SIMCUDA_GRANULARITY=64K REMAT_CACHE_DIR=$tmp/c2 $SIMRUN $REMAT run --budget 50% -d $tmp/tty -- $GPT_LONG >$tmp/tty.out" "$tmp/tty.log" >/dev/null
tr -d '\r' <"$tmp/tty.log" >"$tmp/tty.err"
cmp -s "$tmp/plain24.out" "$tmp/tty.out" || fail "run on a terminal: output differs"
expect "$tmp/tty.err" '^remat: iteration found: [0-9]+ ops'
expect "$tmp/tty.err" '^remat: trace written to '
expect "$tmp/tty.err" '^remat: planning for a budget of '
expect "$tmp/tty.err" '^remat: planner: '
expect "$tmp/tty.err" '^remat: plan for graph 0x[0-9a-f]+ applied from iteration '
expect "$tmp/tty.err" '^remat: summary$'
# --quiet on a terminal, and (above, in remat_install) no terminal: none
script -qec "env SIMCUDA_GRANULARITY=64K REMAT_CACHE_DIR=$tmp/c2 $SIMRUN $REMAT run -q --budget 50% -d $tmp/q -- $GPT >/dev/null" "$tmp/q.log" >/dev/null
tr -d '\r' <"$tmp/q.log" >"$tmp/q.err"
[ "$(grep -c '^remat: ' "$tmp/q.err")" = 1 ] || fail "--quiet: $(cat "$tmp/q.err")"
# a cached plan: applied as soon as the trace is on disk
expect "$tmp/q.err" '^  overhead +[-+][0-9.]+% time per iteration, measured: '
echo "remat_cli: ok"

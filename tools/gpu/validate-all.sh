#!/bin/sh
# validate-all.sh — every real-GPU validation in one command: builds
# libremat, remat-plan, remat-report and the trainers once, then runs
# validate-trainers.sh, validate-pytorch.sh and validate-jax.sh (each with
# --skip-build, its results under OUT/NAME, its console output in
# OUT/NAME.log) and prints one summary:
#
#   SCRIPTS   one row per script: PASS (no check failed), FAIL (a check
#             failed, or a usage or build error), SKIP (the script could
#             not run here: its one-line reason), with its closing line
#   NOT PASSED  every FAIL and SKIP row of the scripts' tables
#   validate-all: N passed, N failed, N skipped   (checks, all scripts)
#
# Usage: tools/gpu/validate-all.sh [--skip-build] [--out DIR] [--only LIST]
#            [--python PY]
#   LIST: comma-separated, of trainers, pytorch, jax (default: all three).
#   --python: the interpreter with torch and jax (default python3).
#   The scripts' own variables pass through: MLP_ARGS, GPT_ARGS,
#   ARENA_ARGS, RANKS_TIMEOUT, TRAIN_ARGS, JAX_ARGS, REMAT_BUDGET, BUILD.
#
# A GPU machine that cannot build libremat (no GLPK, jansson or libunwind
# there): run tools/gpu/bundle.sh here first, copy the repository with
# build/ there, and run this with --skip-build.
#
# Exit: 0 no script failed (some may have skipped), 1 a script failed, 2
# usage or build error, 77 no GPU (nothing run) or every script skipped.
set -eu
PROG=validate-all
# shellcheck source=tools/gpu/lib.sh
. "$(dirname "$0")/lib.sh"

SCRIPTS_ALL="trainers pytorch jax"
build_it=1 out='' only='' py=python3
while [ $# -gt 0 ]; do
	case $1 in
	--skip-build) build_it=0 ;;
	--out) out=${2:?--out needs a directory} && shift ;;
	--only) only=${2:?--only needs a list} && shift ;;
	--python) py=${2:?--python needs an interpreter} && shift ;;
	-h | --help)
		usage
		exit 0
		;;
	*) die "unknown argument '$1' (try --help)" ;;
	esac
	shift
done
only=$(echo "${only:-$SCRIPTS_ALL}" | tr ',' ' ')
for s in $only; do
	case " $SCRIPTS_ALL " in
	*" $s "*) ;;
	*) die "--only: unknown validation '$s' (of: $SCRIPTS_ALL)" ;;
	esac
done

cd "$ROOT"
need_gpu
bdir=${BUILD:-build} # relative, for make
BUILD=$ROOT/$bdir
OUT=${out:-$BUILD/gpu-validation}
HERE=$ROOT/tools/gpu
# Every tool once (the trainers need nvcc for their cubins and arena; a
# machine without it still runs the frameworks' validations).
[ "$build_it" = 0 ] ||
	build_tools "$bdir/libremat.so" "$bdir/remat-plan" "$bdir/remat-report" trainers

mkdir -p "$OUT"
: >"$OUT/summary.tsv"
for s in $only; do
	say "validate-$s (console output in $OUT/$s.log)"
	rc=0
	case $s in
	trainers) sh "$HERE/validate-trainers.sh" --skip-build --out "$OUT/$s" >"$OUT/$s.log" 2>&1 || rc=$? ;;
	*) sh "$HERE/validate-$s.sh" --skip-build --out "$OUT/$s" --python "$py" >"$OUT/$s.log" 2>&1 || rc=$? ;;
	esac
	closing=$(grep "^validate-$s: [0-9]* passed" "$OUT/$s.log" | tail -n 1 || true)
	case $rc in
	0) verdict=PASS detail=$closing ;;
	77) verdict=SKIP detail=$(grep "^validate-$s: SKIP: " "$OUT/$s.log" | tail -n 1 | sed 's/^[^:]*: SKIP: //') ;;
	1) verdict=FAIL detail=$closing ;;
	*) verdict=FAIL detail="exit $rc: $(tail -n 1 "$OUT/$s.log")" ;;
	esac
	printf 'validate-%s\t%s\t%s\n' "$s" "$verdict" "$detail" >>"$OUT/summary.tsv"
	printf '%-4s  validate-%s  %s\n' "$verdict" "$s" "$detail" >&2
done

echo
echo "SCRIPTS"
awk -F '\t' '{ printf "%-20s %-6s %s\n", $1, $2, $3 }' "$OUT/summary.tsv"
echo
echo "NOT PASSED"
np=0 nf=0 ns=0
for s in $only; do
	f=$OUT/$s/results.tsv
	[ -f "$f" ] || continue
	awk -F '\t' -v s="$s" '$2 != "PASS" { printf "%-8s %-46s %-6s %s\n", s, $1, $2, $3 }' "$f"
	np=$((np + $(grep -c '	PASS	' "$f" || true)))
	nf=$((nf + $(grep -c '	FAIL	' "$f" || true)))
	ns=$((ns + $(grep -c '	SKIP	' "$f" || true)))
done
echo
echo "$PROG: $np passed, $nf failed, $ns skipped (each script's table in $OUT/NAME.log)"
if grep -q '	FAIL	' "$OUT/summary.tsv"; then
	exit 1
fi
grep -q '	PASS	' "$OUT/summary.tsv" || exit 77
exit 0

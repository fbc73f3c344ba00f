#!/bin/sh
# calibrate.sh — measures this machine's GPU for the simulated device's
# profile: builds tools/gpu/calibrate.cu with nvcc (for the GPU's compute
# capability: sm_90 on an H100 or H200) and runs it on one host thread.  It
# prints one NAME=value line per SIMCUDA_* variable it measures (the cost of
# a launch, a copy's issue, event, synchronize, stream-wait and allocation
# calls; each VMM call per call and per chunk; whether cuMemUnmap and
# cuMemSetAccess wait for running work), each after a '#' line with its p50
# and p99, so that the output can be set as environment:
#
#   env $(tools/gpu/calibrate.sh | grep -v '^#') make bench
#
# Usage: tools/gpu/calibrate.sh [--reps N] [--simulate]
#   --reps N    repetitions of each measurement, the median printed
#               (default 100; 8 with --simulate)
#   --simulate  builds with sim/bin/simnvcc and runs on the simulated device
#               (sim/bin/simrun), timing with its simulated host clock: it
#               prints the simulator's own profile back (a test of this tool
#               and of the simulator); SIMCUDA_* variables pass through
#   BUILD: the build directory (default build): the program is built into
#   BUILD/calibrate/ (BUILD/calibrate-sim/ with --simulate), again only when
#   calibrate.cu is newer.  Progress goes to stderr, the profile to stdout.
#
# Exit: 0 measured, 1 the measurement failed, 2 usage or build error, 77 no
# GPU or no CUDA toolkit.
set -eu
PROG=calibrate
# shellcheck source=tools/gpu/lib.sh
. "$(dirname "$0")/lib.sh"

reps='' simulate=0
while [ $# -gt 0 ]; do
	case $1 in
	--reps) reps=${2:?--reps needs a number} && shift ;;
	--simulate) simulate=1 ;;
	-h | --help)
		usage
		exit 0
		;;
	*) die "unknown argument '$1' (try --help)" ;;
	esac
	shift
done
[ -n "$reps" ] || reps=$((simulate ? 8 : 100))
case $reps in
'' | *[!0-9]* | 0*) die "--reps '$reps': expected a whole number from 1 to 4000" ;;
esac
[ "$reps" -le 4000 ] || die "--reps '$reps': expected a whole number from 1 to 4000"

cd "$ROOT"
bdir=${BUILD:-build} # relative, for make
BUILD=$ROOT/$bdir
SRC=$ROOT/tools/gpu/calibrate.cu
NVCC_FLAGS="-std=c++17 -O2 -Xcompiler -Wall,-Wextra -Werror all-warnings -I$ROOT/sim/include"
LIBS="-L$CUDA_HOME/lib64/stubs -lcuda -ldl -lpthread"

if [ "$simulate" = 1 ]; then
	[ -x "$CUDA_HOME/bin/nvcc" ] ||
		skip "no CUDA toolkit: $CUDA_HOME/bin/nvcc is missing (set CUDA_HOME); sim/bin/simnvcc runs it"
	SIMCUDA_DIR=${SIMCUDA_DIR:-$BUILD/simcuda}
	export SIMCUDA_DIR
	for f in libcuda.so.1 libcudart.so.13 libsimcuda_kernel.so; do
		[ -e "$SIMCUDA_DIR/$f" ] || build_tools "$bdir/simcuda/$f"
	done
	OUTDIR=$BUILD/calibrate-sim
	EXE=$OUTDIR/calibrate
	MOD=$OUTDIR/calibrate_kernels.so
	build() {
		# shellcheck disable=SC2086 # flag lists
		"$ROOT/sim/bin/simnvcc" $NVCC_FLAGS -Xsimcc -Werror "$SRC" -o "$EXE.tmp" $LIBS &&
			"$ROOT/sim/bin/simcc" --simcuda-dir "$SIMCUDA_DIR" -Werror -I"$ROOT/sim/include" \
				"$SRC" -o "$MOD.tmp"
	}
	set -- "$ROOT/sim/bin/simrun" "$EXE" --module "$MOD" --simulate
else
	need_gpu
	[ -x "$CUDA_HOME/bin/nvcc" ] ||
		skip "no CUDA toolkit: $CUDA_HOME/bin/nvcc is missing (set CUDA_HOME)"
	cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1)
	case $cap in
	[1-9].[0-9] | [1-9][0-9].[0-9]) arch=sm_$(echo "$cap" | tr -d .) ;;
	*)
		say "nvidia-smi gives no compute capability for GPU 0 ('$cap'): building for sm_90"
		arch=sm_90
		;;
	esac
	OUTDIR=$BUILD/calibrate
	EXE=$OUTDIR/calibrate-$arch
	MOD=$OUTDIR/calibrate_kernels-$arch.cubin
	build() {
		# shellcheck disable=SC2086 # flag lists
		"$CUDA_HOME/bin/nvcc" -arch="$arch" $NVCC_FLAGS "$SRC" -o "$EXE.tmp" $LIBS &&
			"$CUDA_HOME/bin/nvcc" -cubin -arch="$arch" $NVCC_FLAGS "$SRC" -o "$MOD.tmp"
	}
	set -- "$EXE" --module "$MOD"
fi

mkdir -p "$OUTDIR"
# Built again when either is missing or older than the source.
if [ ! -e "$EXE" ] || [ ! -e "$MOD" ] || [ -n "$(find "$SRC" -newer "$EXE" -o -newer "$MOD")" ]; then
	say "building $EXE and $MOD"
	build >"$OUTDIR/build.log" 2>&1 || die "the build failed: see $OUTDIR/build.log"
	mv "$EXE.tmp" "$EXE"
	mv "$MOD.tmp" "$MOD"
fi
rc=0
"$@" --reps "$reps" || rc=$?
[ "$rc" = 0 ] || {
	say "the measurement failed (exit $rc)"
	exit 1
}

#!/bin/sh
# remat-torchrun-wrapper.sh — run one torchrun worker under libremat.
#
#   torchrun --nproc-per-node=8 --no-python \
#       tools/remat-torchrun-wrapper.sh python train.py ARGS...
#
# torchrun starts one process per GPU; each must profile and plan its own
# iteration, so each gets its own trace directory: $REMAT_TRACE_DIR (default
# ./remat-trace) with /rank<LOCAL_RANK> appended (the node's hostname is
# added when NODE_RANK is set and not 0, so shared file systems do not mix
# nodes).  Plans are cached by graph hash and budget in the shared
# REMAT_CACHE_DIR: ranks whose iterations are identical share one entry,
# ranks that differ (pipeline stages, uneven shards) get their own.
#
# libremat.so is found from LIBREMAT_SO, else next to this script, in
# ../build/ or ../lib/ relative to it.  Set REMAT_BUDGET (per GPU) and any
# other REMAT_* as for a single process; they are passed through.
set -eu
if [ $# -eq 0 ]; then
	echo "usage: remat-torchrun-wrapper.sh CMD [ARG...]  (as torchrun's --no-python program)" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
lib=${LIBREMAT_SO:-}
if [ -z "$lib" ]; then
	for c in "$here/libremat.so" "$here/../build/libremat.so" "$here/../lib/libremat.so"; do
		if [ -e "$c" ]; then
			lib=$c
			break
		fi
	done
fi
if [ -z "$lib" ] || [ ! -e "$lib" ]; then
	echo "remat-torchrun-wrapper: libremat.so not found (set LIBREMAT_SO=/path/to/libremat.so)" >&2
	exit 2
fi
rank=${LOCAL_RANK:-${RANK:-0}}
dir=${REMAT_TRACE_DIR:-./remat-trace}
if [ -n "${NODE_RANK:-}" ] && [ "$NODE_RANK" != 0 ]; then
	dir=$dir/$(hostname)
fi
REMAT_TRACE_DIR=$dir/rank$rank
export REMAT_TRACE_DIR
# After what is preloaded already (a sanitizer's runtime must stay first).
LD_PRELOAD=${LD_PRELOAD:+$LD_PRELOAD:}$lib
export LD_PRELOAD
exec "$@"

#!/bin/sh
# rank-env.sh CMD [ARG...] — run by torchrun (--no_python) once per rank:
# gives each rank its own trace directory, $REMAT_TRACE_DIR/rank$LOCAL_RANK,
# so the ranks of one node do not overwrite each other's trace; then execs
# CMD.  validate-pytorch.sh uses it when tools/remat-torchrun-wrapper.sh is
# not in the repository.
set -eu
: "${LOCAL_RANK:?rank-env.sh runs under torchrun (LOCAL_RANK is unset)}"
if [ -n "${REMAT_TRACE_DIR:-}" ]; then
	REMAT_TRACE_DIR=$REMAT_TRACE_DIR/rank$LOCAL_RANK
	export REMAT_TRACE_DIR
fi
exec "$@"

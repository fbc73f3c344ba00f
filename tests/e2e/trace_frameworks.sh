#!/bin/sh
# The frameworks' allocator variables (session/frameworks.c): libremat sets
# PyTorch's two names (backend:cudaMallocAsync merged into the program's
# value, the newer name's first), JAX's (no preallocation, the platform
# allocator) and TensorFlow's (cudaMallocAsync, growth) at load; says at
# REMAT_LOG=1 which it replaced and which the program changed after it;
# and touches nothing when no REMAT_* variable asks for it.
. tests/e2e/trace_lib.sh
P=$BUILD/tests/e2e/progs
[ -x "$P/envprog" ] || fail "$P/envprog is not built (make remat-progs)"
run plain -- "$P/envprog"
grep -q "^PYTORCH_ALLOC_CONF=(unset)$" "$tmp/plain.out" || fail "plain: $(cat "$tmp/plain.out")"
run inactive LD_PRELOAD="$PRELOAD" -- "$P/envprog"
same plain inactive

run active REMAT_MODE=trace "REMAT_TRACE_DIR=$tmp/t.d" LD_PRELOAD="$PRELOAD" -- "$P/envprog"
cat >"$tmp/want" <<'EOT'
PYTORCH_ALLOC_CONF=backend:cudaMallocAsync
PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
XLA_PYTHON_CLIENT_PREALLOCATE=false
XLA_PYTHON_CLIENT_ALLOCATOR=platform
TF_GPU_ALLOCATOR=cuda_malloc_async
TF_FORCE_GPU_ALLOW_GROWTH=true
EOT
cmp -s "$tmp/want" "$tmp/active.out" || fail "active: $(diff "$tmp/want" "$tmp/active.out")"
[ ! -s "$tmp/active.err" ] || fail "active: not silent: $(cat "$tmp/active.err")"

# The program's own values: merged (PyTorch) or replaced, and said so.
# (Not through simrun: the shell would load libremat first and hand the
# program libremat's values.)
env REMAT_MODE=trace "REMAT_TRACE_DIR=$tmp/t.d" REMAT_LOG=1 \
	PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:64 \
	XLA_PYTHON_CLIENT_ALLOCATOR=bfc "LD_LIBRARY_PATH=$(pwd)/$BUILD/simcuda" \
	LD_PRELOAD="$PRELOAD" "$P/envprog" >"$tmp/preset.out" 2>"$tmp/preset.err" ||
	fail "preset: envprog failed: $(cat "$tmp/preset.err")"
grep -q "^PYTORCH_ALLOC_CONF=backend:cudaMallocAsync,max_split_size_mb:64$" "$tmp/preset.out" ||
	fail "preset: $(cat "$tmp/preset.out")"
grep -q "XLA_PYTHON_CLIENT_ALLOCATOR was \"bfc\" at start; libremat set it to \"platform\"" \
	"$tmp/preset.err" || fail "preset: no message: $(cat "$tmp/preset.err")"

# Changed by the program after start (before its first CUDA call).
run changed REMAT_MODE=trace "REMAT_TRACE_DIR=$tmp/t.d" REMAT_LOG=1 LD_PRELOAD="$PRELOAD" \
	-- "$P/envprog" change
for v in PYTORCH_ALLOC_CONF PYTORCH_CUDA_ALLOC_CONF; do
	grep -q "$v was changed by the program after libremat set it: \"expandable_segments:True\"" \
		"$tmp/changed.err" || fail "changed: no message for $v: $(cat "$tmp/changed.err")"
done
run changed-quiet REMAT_MODE=trace "REMAT_TRACE_DIR=$tmp/t.d" LD_PRELOAD="$PRELOAD" \
	-- "$P/envprog" change
[ ! -s "$tmp/changed-quiet.err" ] || fail "not silent without REMAT_LOG: $(cat "$tmp/changed-quiet.err")"
echo "trace_frameworks: ok"

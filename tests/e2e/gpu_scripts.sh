#!/bin/sh
# The real-GPU validation scripts (tools/gpu/) on a machine without a GPU:
# each answers --help, refuses a bad argument in one line (exit 2), and
# without a usable GPU or framework exits 77 with exactly one SKIP line and
# nothing else — without nvidia-smi (when this machine has none), with an
# nvidia-smi that fails or lists no GPU, and past the GPU check with a
# Python lacking torch or jax, or a GPU other than sm_90 for the trainers.
# validate-all skips whole without a GPU, and with a (fake) GPU on which
# every script skips it sums up three SKIP rows.  The training scripts
# compile, answer --help and skip (77) without their framework.  Last,
# validate-trainers.sh --simulate runs the mlp checks on the simulated
# device, through the helpers all the scripts share.
set -eu
BUILD=${BUILD:-build}
# G, tmp, fail, expect
. tests/e2e/gpu_lib.sh

# A fake nvidia-smi, as FAKE_SMI says: a driver that does not answer, no
# GPU listed, or one A100 (compute capability 8.0).
mkdir -p "$tmp/bin"
cat >"$tmp/bin/nvidia-smi" <<'EOF'
#!/bin/sh
case ${FAKE_SMI:-} in
broken)
	echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
	exit 9
	;;
none) echo "No devices were found" ;;
a100)
	case "$*" in
	*compute_cap*) echo 8.0 ;;
	*-L*) echo "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-00000000-0000-0000-0000-000000000000)" ;;
	esac
	;;
esac
EOF
# Pythons that lack torch and jax, or have them without a GPU backend.
cat >"$tmp/bin/py-bare" <<'EOF'
#!/bin/sh
echo "ModuleNotFoundError: No module named '$(echo "$2" | sed 's/.*import \([a-z]*\).*/\1/')'" >&2
exit 1
EOF
cat >"$tmp/bin/py-cpu" <<'EOF'
#!/bin/sh
case $2 in
*is_available*) exit 1 ;;
*default_backend*) echo cpu ;;
esac
EOF
chmod +x "$tmp/bin/nvidia-smi" "$tmp/bin/py-bare" "$tmp/bin/py-cpu"

# A PATH whose nvidia-smi is the fake one.
FAKE=$tmp/bin:$PATH
for s in trainers pytorch jax all; do
	v=validate-$s
	sh "$G/$v.sh" --help >"$tmp/$v.help" 2>&1 || fail "$v --help: exit $?"
	grep -q "^Usage: tools/gpu/$v.sh" "$tmp/$v.help" || fail "$v --help: no usage line"
	grep -q '^Exit: 0' "$tmp/$v.help" || fail "$v --help: the exit codes are not documented"
	expect "$v-bad" 2 "^$v: unknown argument '--bogus' \\(try --help\\)$" sh "$G/$v.sh" --bogus
	if ! command -v nvidia-smi >/dev/null 2>&1; then
		expect "$v-nosmi" 77 "^$v: SKIP: no GPU: nvidia-smi is not installed" sh "$G/$v.sh"
	fi
	expect "$v-broken" 77 "^$v: SKIP: no GPU: 'nvidia-smi -L' failed \\(exit 9\\): NVIDIA-SMI has failed" \
		env PATH="$FAKE" FAKE_SMI=broken sh "$G/$v.sh"
	expect "$v-none" 77 "^$v: SKIP: no GPU: 'nvidia-smi -L' lists no GPU$" \
		env PATH="$FAKE" FAKE_SMI=none sh "$G/$v.sh"
done
expect bad-fraction 2 "^validate-trainers: --fraction '2': expected a number in \\(0, 1\\]" \
	sh "$G/validate-trainers.sh" --fraction 2
expect bad-group 2 "^validate-trainers: --only: unknown group 'gtp'" sh "$G/validate-trainers.sh" --only gpt,gtp
expect bad-graphs 2 "^validate-pytorch: --graphs: unknown mode 'cuda'" sh "$G/validate-pytorch.sh" --graphs blocks,cuda
expect bad-ddp 2 "^validate-pytorch: --ddp 1: a torchrun series needs at least 2 ranks" sh "$G/validate-pytorch.sh" --ddp 1
expect bad-iters 2 "^validate-jax: --iters 3: at least 10" sh "$G/validate-jax.sh" --iters 3

# Past the GPU check: what else each script needs.
a100() { env PATH="$FAKE" FAKE_SMI=a100 "$@"; }
expect torch-nopy 77 "^validate-pytorch: SKIP: no PyTorch: no '$tmp/bin/none' interpreter" \
	a100 sh "$G/validate-pytorch.sh" --python "$tmp/bin/none"
expect torch-bare 77 "^validate-pytorch: SKIP: no PyTorch: .*No module named 'torch'$" \
	a100 sh "$G/validate-pytorch.sh" --python "$tmp/bin/py-bare"
expect torch-cpu 77 "^validate-pytorch: SKIP: PyTorch cannot use the GPU" \
	a100 sh "$G/validate-pytorch.sh" --python "$tmp/bin/py-cpu"
expect jax-bare 77 "^validate-jax: SKIP: no JAX: .*No module named 'jax'$" \
	a100 sh "$G/validate-jax.sh" --python "$tmp/bin/py-bare"
expect jax-cpu 77 "^validate-jax: SKIP: JAX cannot use the GPU \\(jax.default_backend\\(\\) is 'cpu'" \
	a100 sh "$G/validate-jax.sh" --python "$tmp/bin/py-cpu"
expect trainers-a100 77 "^validate-trainers: SKIP: (the GPU's compute capability is '8.0'|no CUDA toolkit)" \
	a100 sh "$G/validate-trainers.sh" --skip-build

# validate-all on that machine: every script skips; one summary, exit 77.
rc=0
a100 sh "$G/validate-all.sh" --skip-build --out "$tmp/all" --python "$tmp/bin/py-bare" \
	>"$tmp/all.out" 2>"$tmp/all.err" || rc=$?
[ "$rc" = 77 ] || fail "validate-all, every script skipping: exit $rc, want 77: $(tail -n 3 "$tmp/all.err")"
for s in trainers pytorch jax; do
	grep -Eq "^validate-$s +SKIP +[^ ]" "$tmp/all.out" ||
		fail "validate-all: no SKIP row with a reason for validate-$s: $(cat "$tmp/all.out")"
done
grep -q '^validate-all: 0 passed, 0 failed, 0 skipped' "$tmp/all.out" ||
	fail "validate-all: no closing line: $(tail -n 2 "$tmp/all.out")"

# The training scripts: they compile, answer --help, and skip without
# their framework (python3 here has neither torch nor jax, or the check
# is left out).
for py in train_torch train_jax; do
	python3 -c 'import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)' \
		"$G/$py.py" "$tmp/$py.pyc" || fail "$py.py does not compile"
	python3 "$G/$py.py" --help >"$tmp/$py.help" 2>&1 || fail "$py.py --help: exit $?"
	grep -q -- '--iters' "$tmp/$py.help" || fail "$py.py --help lists no --iters"
done
rc=0
python3 "$G/train_torch.py" --graphs step --device cpu >/dev/null 2>"$tmp/graphs-cpu.err" || rc=$?
{ [ "$rc" = 2 ] && grep -q -- "--graphs step needs --device cuda" "$tmp/graphs-cpu.err"; } ||
	fail "train_torch.py --graphs step --device cpu: exit $rc: $(tail -n 1 "$tmp/graphs-cpu.err")"
if ! python3 -c 'import torch' 2>/dev/null; then
	expect train-torch-skip 77 "^train_torch: SKIP: no PyTorch" python3 "$G/train_torch.py" --iters 2
fi
if ! python3 -c 'import jax' 2>/dev/null; then
	expect train-jax-skip 77 "^train_jax: SKIP: no JAX" python3 "$G/train_jax.py" --iters 2
fi

# The scripts' shared helpers at work: the mlp checks on the simulated
# device (not under a sanitizer: the script preloads libremat alone).
if [ -z "${TEST_SAN_RUNTIME:-}" ]; then
	rc=0
	sh "$G/validate-trainers.sh" --simulate --skip-build --only mlp --iters 8 --out "$tmp/sim" \
		>"$tmp/sim.out" 2>"$tmp/sim.err" || rc=$?
	[ "$rc" = 0 ] || fail "validate-trainers --simulate: exit $rc: $(grep -E 'FAIL|make|missing' "$tmp/sim.err" "$tmp/sim.out" | head -n 5)"
	grep -q '^validate-trainers: 10 passed, 0 failed, 0 skipped' "$tmp/sim.out" ||
		fail "validate-trainers --simulate: $(tail -n 1 "$tmp/sim.out"), want 10 passed"
fi
sh "$G/bundle.sh" --help >"$tmp/bundle.help" 2>&1 || fail "bundle --help: exit $?"
grep -q "^Usage: tools/gpu/bundle.sh" "$tmp/bundle.help" || fail "bundle --help: no usage line"
expect bundle-bad 2 "^bundle: unknown argument '--bogus' \\(try --help\\)$" sh "$G/bundle.sh" --bogus

# bundle.sh: what a GPU machine without the build's libraries needs, and
# bundle_libs putting on the path only what that machine lacks.
if [ -z "${TEST_SAN_RUNTIME:-}" ]; then
	rm -rf "$tmp/bundle"
	mkdir -p "$tmp/bundle"
	cp "$BUILD/libremat.so" "$BUILD/remat-plan" "$BUILD/remat-report" "$tmp/bundle/"
	BUILD=$tmp/bundle sh "$G/bundle.sh" --skip-build >"$tmp/bundle.out" 2>&1 ||
		fail "bundle.sh: exit $?: $(tail -n 2 "$tmp/bundle.out")"
	for l in libglpk.so.40 libjansson.so.4 libunwind.so.8; do
		[ -f "$tmp/bundle/bundle-lib/$l" ] || fail "bundle.sh did not copy $l: $(ls "$tmp/bundle/bundle-lib")"
	done
	[ ! -e "$tmp/bundle/bundle-lib/libc.so.6" ] || fail "bundle.sh copied the C library"
	cp "$tmp/bundle/bundle-lib/libglpk.so.40" "$tmp/bundle/bundle-lib/libremat-test-absent.so.1"
	cp -L "$(ldd "$BUILD/remat-plan" | awk '$1 == "libc.so.6" { print $3 }')" "$tmp/bundle/bundle-lib/libc.so.6"
	got=$(BUILD="$tmp/bundle" LD_LIBRARY_PATH=/x sh -c '. "$1"; bundle_libs; echo "$LD_LIBRARY_PATH"' sh "$G/lib.sh")
	[ "$got" = "$tmp/bundle/bundle-lib.used:/x" ] || fail "bundle_libs: LD_LIBRARY_PATH $got"
	[ -e "$tmp/bundle/bundle-lib.used/libremat-test-absent.so.1" ] ||
		fail "bundle_libs left out a library this machine lacks"
	[ ! -e "$tmp/bundle/bundle-lib.used/libc.so.6" ] || fail "bundle_libs shadows this machine's C library"
fi
echo "gpu_scripts: --help, bad arguments, one SKIP line and exit 77 without a GPU or framework; validate-trainers --simulate passes; bundle.sh"

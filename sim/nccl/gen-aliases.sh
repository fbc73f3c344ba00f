#!/bin/sh
# gen-aliases.sh LIST STUBS.c OUT.c [OBJECT...] — completes the simulated
# NCCL's exports: OUT.c is STUBS.c (gen-stubs.sh's "invalid usage" stubs of
# the pnccl* names the OBJECTs do not define) plus, beside each stub, the
# weak nccl* alias of it that the real library has (LIST type W).  Aliases
# of implemented functions are made where they are defined (NCCL_API).
set -eu
[ $# -ge 3 ] || {
	echo "usage: gen-aliases.sh LIST STUBS.c OUT.c [OBJECT...]" >&2
	exit 2
}
list=$1 stubs=$2 out=$3
shift 3
defined=$(mktemp)
trap 'rm -f "$defined" "$out.tmp"' EXIT
: >"$defined"
if [ $# -gt 0 ]; then
	nm --defined-only --format=posix "$@" | awk '$2 ~ /^[A-Z]$/ { print $1 }' | LC_ALL=C sort -u >"$defined"
fi
{
	cat "$stubs"
	echo "/* Weak aliases (sim/nccl/gen-aliases.sh). */"
	awk '
		FILENAME == ARGV[1] { have[$1] = 1; next }
		/^#/ || NF < 2 || $2 != "W" { next }
		$1 in have { next }
		{
			p = "p" $1
			printf "int %s(void) __attribute__((visibility(\"default\"), weak, alias(\"%s\")));\n", $1, p
		}
	' "$defined" "$list"
} >"$out.tmp"
mv "$out.tmp" "$out"

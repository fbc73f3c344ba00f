#!/bin/sh
# bundle.sh — prepares BUILD (default build) for a GPU machine that cannot
# build libremat: one without GLPK, jansson or libunwind installed (the
# first GPU this project ran on, an H100 image with CUDA and PyTorch, had
# none of them).  Builds libremat.so, remat-plan, remat-report and the
# trainers here, then copies into BUILD/bundle-lib every shared library
# they need beyond the C library itself.  Copy the repository with BUILD
# to the GPU machine (same architecture, a glibc at least as new as
# here's) and run tools/gpu/validate-all.sh --skip-build there: the
# scripts put on the library path only the bundled libraries that machine
# lacks (lib.sh, bundle_libs), so a program's own newer copies win.
#
# Usage: tools/gpu/bundle.sh [--skip-build]
#
# Exit: 0 bundled, 2 build error or a library ldd cannot find.
set -eu
PROG=bundle
# shellcheck source=tools/gpu/lib.sh
. "$(dirname "$0")/lib.sh"

build_it=1
while [ $# -gt 0 ]; do
	case $1 in
	--skip-build) build_it=0 ;;
	-h | --help)
		usage
		exit 0
		;;
	*) die "unknown argument '$1' (try --help)" ;;
	esac
	shift
done
cd "$ROOT"
bdir=${BUILD:-build}
case $bdir in
/*) BUILD=$bdir ;;
*) BUILD=$ROOT/$bdir ;;
esac
# shellcheck disable=SC2119
remat_tools
[ "$build_it" = 0 ] || build_tools trainers
lib=$BUILD/bundle-lib
rm -rf "$lib"
mkdir -p "$lib"
for b in "$BUILD/libremat.so" "$BUILD/remat-plan" "$BUILD/remat-report"; do
	missing=$(ldd "$b" | awk '/not found/ { print $1 }')
	[ -z "$missing" ] || die "$b: ldd finds no $missing here"
	# The C library and the loader come with every machine; the rest of
	# what ldd resolves to a file is copied.
	ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' |
		while read -r name path; do
			case $name in
			libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux*) ;;
			*) cp -L "$path" "$lib/$name" ;;
			esac
		done
done
names=''
for f in "$lib"/*; do
	[ -e "$f" ] && names="$names ${f##*/}"
done
say "libraries in $lib:${names:- none}"
say "copy the repository with $bdir/ to the GPU machine and run tools/gpu/validate-all.sh --skip-build there"

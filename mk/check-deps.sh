#!/bin/sh
# check-deps.sh CC SPEC... — prints one line naming the Debian packages
# whose files are missing, and `make deps`, or nothing when all are there.
# Run by mk/deps.mk before make builds anything, so that a missing package
# stops the build with one message instead of a compiler error midway; it
# installs nothing and runs no package manager (only `make deps` does).
# SPEC: PACKAGE:HEADER:LIB (a program including HEADER links with -lLIB;
# either may be empty) or PACKAGE:COMMAND (COMMAND is on PATH).
cc=$1
shift
tmp=$(mktemp -d "${TMPDIR:-/tmp}/remat-deps.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# cmocka.h needs these first; they cost nothing to the other headers.
pre='#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>'
# probe "HEADER..." "LIB...": 0 if a program including the headers links
# with the libraries.
probe() {
	{
		echo "$pre"
		for h in $1; do echo "#include <$h>"; done
		echo 'int main(void) { return 0; }'
	} >"$tmp/p.c"
	# shellcheck disable=SC2046 # one -l per word
	$cc "$tmp/p.c" -o "$tmp/p" $(for l in $2; do printf -- '-l%s ' "$l"; done) >/dev/null 2>&1
}
# One program with every header and library first: the usual case, one
# compiler run; each alone only when that fails.
hdrs="" libs=""
for spec in "$@"; do
	case ${spec#*:} in
	*:*)
		rest=${spec#*:}
		hdrs="$hdrs ${rest%%:*}"
		libs="$libs ${rest#*:}"
		;;
	esac
done
all_ok=0
probe "$hdrs" "$libs" && all_ok=1
missing=""
for spec in "$@"; do
	pkg=${spec%%:*}
	rest=${spec#*:}
	case $rest in
	*:*)
		[ $all_ok = 1 ] && continue
		hdr=${rest%%:*} lib=${rest#*:}
		probe "$hdr" "$lib" && continue
		what=$hdr
		[ -z "$lib" ] || what="$what${what:+, }-l$lib"
		;;
	*)
		command -v "$rest" >/dev/null 2>&1 && continue
		what=$rest
		;;
	esac
	missing="$missing $pkg ($what)"
done
[ -z "$missing" ] ||
	echo "missing Debian packages:$missing; run 'make deps' to install them (make test and make demo do)"
exit 0

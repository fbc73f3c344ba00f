#!/bin/sh
# check-exports.sh LIB NODE|- LIST — checks that the shared object LIB
# exports every name of LIST (a *.syms file) as a definition under the
# version node NODE ("-": unversioned, as libcuda.so.1), the way the real
# library does, so a program linked against the real library binds to ours.
# Prints each offending name and exits 1 if any is missing or misversioned.
set -eu
if [ $# -ne 3 ]; then
	echo "usage: check-exports.sh LIB NODE|- LIST" >&2
	exit 2
fi
lib=$1 node=$2 list=$3
for f in "$lib" "$list"; do
	[ -r "$f" ] || {
		echo "check-exports.sh: cannot read $f" >&2
		exit 2
	}
done
# nm -D shows a default-versioned definition as NAME@@NODE.
nm -D --defined-only --format=posix "$lib" | awk -v node="$node" '
	FILENAME == ARGV[1] {
		name = $1; ver = "-"
		if (index(name, "@@")) { ver = substr(name, index(name, "@@") + 2); name = substr(name, 1, index(name, "@@") - 1) }
		else if (index(name, "@")) { ver = "(hidden)" substr(name, index(name, "@") + 1); name = substr(name, 1, index(name, "@") - 1) }
		have[name] = ver
		next
	}
	/^#/ || NF < 1 { next }
	{ total++ }
	!($1 in have) { print "missing: " $1; bad++; next }
	have[$1] != node { print "wrong version: " $1 " is under " have[$1] ", want " node; bad++ }
	END {
		if (bad) { printf "%d of %d names wrong\n", bad, total; exit 1 }
		printf "all %d names exported under %s\n", total, node
	}
' - "$list"

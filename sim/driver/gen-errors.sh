#!/bin/sh
# gen-errors.sh CUDA_H OUT.c — the table behind cuGetErrorName and
# cuGetErrorString, from the CUresult enum of the real cuda.h: each code's
# name and the first sentence of its documentation comment.
set -eu
[ $# -eq 2 ] || { echo "usage: gen-errors.sh CUDA_H OUT.c" >&2; exit 2; }
[ -r "$1" ] || { echo "gen-errors.sh: cannot read $1" >&2; exit 1; }
awk '
	/typedef enum cudaError_enum/ { inside = 1; next }
	inside && /} CUresult;/ { inside = 0 }
	!inside { next }
	/\/\*\*/ { doc = ""; incomment = 1; next }
	incomment && /\*\// { incomment = 0; next }
	incomment {
		line = $0
		sub(/^[ \t]*\*[ \t]?/, "", line)
		if (line ~ /^\\deprecated/) next
		doc = doc (doc == "" ? "" : " ") line
		next
	}
	/^[ \t]*CUDA_[A-Z0-9_]+[ \t]*=[ \t]*[0-9]+/ {
		name = $1
		sentence = doc
		if (match(sentence, /\.( |$)/)) sentence = substr(sentence, 1, RSTART)
		gsub(/::/, "", sentence)
		gsub(/\\/, "\\\\", sentence)
		gsub(/"/, "\\\"", sentence)
		gsub(/[ \t]+/, " ", sentence)
		printf "\t{%s, \"%s\", \"%s\"},\n", name, name, sentence
		doc = ""
	}
' "$1" >"$2.tmp"
n=$(wc -l <"$2.tmp")
[ "$n" -gt 50 ] || { echo "gen-errors.sh: found only $n codes in $1" >&2; rm -f "$2.tmp"; exit 1; }
mv "$2.tmp" "$2"

#!/bin/sh
# deps.sh — only `make deps` installs packages.  A make whose packages are
# missing (simulated: mk/deps.mk's checks pointed at names no machine has)
# stops before building anything with one line naming them and `make deps`,
# and runs no package manager; with nothing missing, `make -n all` runs
# none either; `make deps` is what calls apt-get.  Package managers are
# stand-ins on PATH that only log their calls.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
mkdir "$tmp/bin"
# dpkg-query finds nothing installed; apt-get "installs"; sudo runs it.
for p in apt-get apt dpkg dpkg-query sudo; do
	last="exit 1"
	[ $p = apt-get ] && last="exit 0"
	[ $p = sudo ] && last='exec "$@"'
	printf '#!/bin/sh\necho "%s $*" >>%s/pm.log\n%s\n' "$p" "$tmp" "$last" >"$tmp/bin/$p"
	chmod +x "$tmp/bin/$p"
done
# Run as if typed at a shell: not inside make test's make.
mk() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES PATH="$tmp/bin:$PATH" \
		make --no-print-directory BUILD="$tmp/build" "$@"
}
LIB=libremat-nosuch-dev:remat_nosuch.h:remat_nosuch
CMD=remat-nosuch-tools:remat-nosuch-cmd

# make (and make -j2 all): one line, both packages and make deps named.
for goal in "" "-j2 all"; do
	# shellcheck disable=SC2086 # goal is words
	mk $goal DEPS_BUILD="$LIB $CMD" >"$tmp/out" 2>&1 && fail "make $goal: exit 0 with packages missing"
	[ "$(wc -l <"$tmp/out")" = 1 ] || fail "make $goal: not one line:
$(cat "$tmp/out")"
	grep -q "libremat-nosuch-dev (remat_nosuch.h, -lremat_nosuch) remat-nosuch-tools (remat-nosuch-cmd).*make deps" \
		"$tmp/out" || fail "make $goal: $(cat "$tmp/out")"
	[ ! -e "$tmp/build" ] || fail "make $goal built into $tmp/build: $(ls "$tmp/build")"
done
echo "make: $(cat "$tmp/out")"

# The tests' packages: checked by the goals that run tests, not by make.
mk check-unit DEPS_TEST="$CMD" >"$tmp/out" 2>&1 && fail "make check-unit: exit 0 with a package missing"
grep -q "missing Debian packages: remat-nosuch-tools .*make deps" "$tmp/out" || fail "check-unit: $(cat "$tmp/out")"
mk -n all DEPS_TEST="$CMD" >"$tmp/out" 2>&1 || fail "make -n all needs a test package: $(tail -n 3 "$tmp/out")"

# Nothing missing: make -n all neither runs nor would run a package manager.
mk -n all >"$tmp/out" 2>&1 || fail "make -n all: $(tail -n 3 "$tmp/out")"
grep -E '(^|[ /;])(apt-get|apt|dpkg|dpkg-query|sudo|install-deps\.sh)( |$)' "$tmp/out" &&
	fail "make -n all would run a package manager"
[ ! -s "$tmp/pm.log" ] || fail "a package manager ran: $(cat "$tmp/pm.log")"

# make deps installs what is missing, through apt-get.
mk deps DEPS_BUILD="$LIB" DEPS_TEST="$CMD" >"$tmp/out" 2>&1
grep -q "apt-get .*install .*libremat-nosuch-dev remat-nosuch-tools" "$tmp/pm.log" ||
	fail "make deps did not call apt-get install: $(cat "$tmp/pm.log" "$tmp/out")"
echo "deps: ok"

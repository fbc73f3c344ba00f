#!/bin/sh
# install-deps.sh PACKAGE... — installs the Debian packages named that are
# not installed yet (apt-get, through sudo unless root).  Run by `make deps`
# and `make fuzz-deps` only: every other goal just checks (mk/check-deps.sh).
set -eu
missing=""
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null

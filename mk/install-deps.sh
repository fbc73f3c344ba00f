#!/bin/sh
# Install the Debian packages named on the command line when missing.
# --check-only: exit 1 if any is missing, install nothing.
set -eu
check=0
if [ "${1:-}" = "--check-only" ]; then check=1; shift; fi
missing=""
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
[ "$check" = 1 ] && exit 1
echo "installing:$missing"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null

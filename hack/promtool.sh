#!/usr/bin/env bash
# Puts promtool (and prometheus, for the node tier) from Debian's prometheus
# package into the folder given as $1 (default: bin/ of the repository),
# unless promtool is there already. The package is downloaded and unpacked,
# not installed, so no prometheus service is set up on the machine.
# test/docs runs `promtool check rules` and `promtool test rules` on
# config/prometheus/alerts.yaml with it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../bin}
mkdir -p "$bin"
bin=$(cd "$bin" && pwd)

if [ -x "$bin/promtool" ]; then
  echo "promtool: up to date in $bin ($("$bin/promtool" --version 2>&1 | awk 'NR==1{print $3}'))"
  exit 0
fi
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || {
  echo "promtool: needs apt-get and dpkg-deb (a Debian or Ubuntu machine); or put a promtool into $bin by hand" >&2
  exit 1
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# apt-get downloads as the _apt user when it can; give it the folder, so that
# running as root does not print a sandbox warning.
chmod 0755 "$tmp"
chown _apt "$tmp" 2>/dev/null || true

download() { (cd "$tmp" && apt-get download -q prometheus >"$tmp/apt.log" 2>&1); }
if ! download; then
  # A fresh container has no package lists; fetch them once, as
  # hack/node-setup.sh does (that needs root).
  if [ "$(id -u)" != 0 ]; then
    echo "promtool: apt-get download prometheus failed, and updating the package lists needs root:" >&2
    cat "$tmp/apt.log" >&2
    exit 1
  fi
  echo "promtool: apt-get download prometheus failed; running apt-get update once"
  apt-get update -qq
  if ! download; then
    echo "promtool: apt-get download prometheus failed after apt-get update:" >&2
    cat "$tmp/apt.log" >&2
    exit 1
  fi
fi

deb=$(ls "$tmp"/prometheus_*.deb)
dpkg-deb -x "$deb" "$tmp/root"
# promtool last: its presence is what says the folder is done.
for tool in prometheus promtool; do
  [ -x "$tmp/root/usr/bin/$tool" ] || { echo "promtool: $deb has no usr/bin/$tool" >&2; exit 1; }
  install -m 0755 "$tmp/root/usr/bin/$tool" "$bin/$tool"
done
echo "promtool: $(basename "$deb") unpacked into $bin ($("$bin/promtool" --version 2>&1 | awk 'NR==1{print $3}'))"

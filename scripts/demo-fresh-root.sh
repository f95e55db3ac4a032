#!/usr/bin/env bash
# Times the README's first command as on a fresh machine (issue 34: at most 8 minutes): a copy of
# the clean Debian 12 root that scripts/test-deb.sh made (debootstrap minbase bookworm, kept in
# BUILD/deb-test/base; run test-deb.sh once first), a fresh `git clone` of this repository's HEAD
# in it, then `bash scripts/demo.sh` inside it with a clean environment: Debian's packages of the
# demo profile installed into the empty root, npm ci, the demo build, the tuning job. Each line is
# prefixed with the seconds since the start; the total is the last line. As root.
# Usage: scripts/demo-fresh-root.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:-build}/deb-test/base"
if [ ! -f "$base/.amt-complete" ]; then
  echo "demo-fresh-root: no clean root at $base: run scripts/test-deb.sh first" >&2
  exit 1
fi
root="$(mktemp -d "${TMPDIR:-/tmp}/amt-demo-root.XXXXXX")"
cleanup() {
  umount "$root/proc" "$root/dev" 2>/dev/null || true
  rm -rf "$root"
}
trap cleanup EXIT
cp -a "$base/." "$root/"
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
cp /etc/resolv.conf "$root/etc/resolv.conf"
git clone -q "$PWD" "$root/root/amt-local"
# A machine that reaches registries through a proxy names its CA in its environment (npm reads
# NODE_EXTRA_CA_CERTS): the root gets the same.
extra=()
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  cp "$NODE_EXTRA_CA_CERTS" "$root/etc/host-ca.crt"
  extra=(NODE_EXTRA_CA_CERTS=/etc/host-ca.crt)
fi
if [ -f "$HOME/.npmrc" ]; then cp "$HOME/.npmrc" "$root/root/.npmrc"; fi
start=$(date +%s)
env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb "${extra[@]}" \
  chroot "$root" bash -c 'cd /root/amt-local && bash scripts/demo.sh' </dev/null 2>&1 |
  while IFS= read -r line; do printf '%4d %s\n' "$(($(date +%s) - start))" "$line"; done
status=${PIPESTATUS[0]}
echo "demo-fresh-root: $(($(date +%s) - start)) s from the clone to the demo's end (exit $status)"
exit "$status"

#!/usr/bin/env bash
# The .deb, installed and run where nothing else is: builds BUILD_DIR (build-release/ by default:
# Release, no tests) and the package (cpack -G DEB), makes a clean Debian 12 root with debootstrap
# (minbase, from Debian's mirror; made once and kept in BUILD_DIR/deb-test/base, each run works in
# a fresh copy of it), installs the .deb there with apt-get (which installs its Depends and nothing
# of the build), and runs the installed programs from the installed tree inside it:
#   1. `amt run /usr/share/amt-local/examples/random-tuning.json` (the toy trainer, from bin/):
#      the tuning job ends Completed with a best training job;
#   2. amtd with the installed image map, then `amt create-hyper-parameter-tuning-job` of the
#      installed multi-algorithm.json (the C++ and the Python trainer, from share/) and
#      `amt watch`, which exits 0 only if it Completed; and the page amtd serves.
# Prints how long each step took. As root (debootstrap, chroot, mount). On any exit the processes
# left in the root are killed and everything mounted under BUILD_DIR/deb-test is unmounted.
# Usage: scripts/test-deb.sh [BUILD_DIR]
# (AMT_DEBIAN_MIRROR overrides http://deb.debian.org/debian.)
# CI passes build/, which scripts/test.sh has just built (RelWithDebInfo; cpack strips the
# binaries): a third full build does not fit CI's time.
set -euo pipefail
cd "$(dirname "$0")/.."
mirror="${AMT_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
build="${1:-build-release}"
# Resolved as /proc/mounts and /proc/PID/root show it (no symbolic link).
work="$(realpath -m "$build")/deb-test"
base="$work/base"  # debootstrap's root, kept across runs (made again when incomplete)
root="$work/root"  # this run's copy of base, removed at the end
archives="$work/apt-archives"  # the .debs apt downloaded, kept across runs
timings=()

step_start() { step_t0=$(date +%s.%N); echo "test-deb: $1" >&2; }
step_end() {
  local t
  t=$(awk -v a="$step_t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  timings+=("$1: ${t} s")
}

# Kills what still runs inside the root, then unmounts whatever is mounted below $work (the
# deepest first), whether this script, debootstrap or an earlier run that died mounted it.
cleanup() {
  local pid mounts m
  for pid in /proc/[0-9]*; do
    if [ "$(readlink "$pid/root" 2>/dev/null)" = "$root" ]; then
      kill -9 "${pid#/proc/}" 2>/dev/null || true
    fi
  done
  mounts=$(awk -v w="$work/" 'index($2, w) == 1 { print $2 }' /proc/mounts | sort -r)
  for m in $mounts; do umount "$m" 2>/dev/null || umount -l "$m" || true; done
  if awk -v w="$work/" 'index($2, w) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
    echo "test-deb: something is still mounted under $work" >&2
    return 1
  fi
  rm -rf "$root"
}
trap 'cleanup || exit 1' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
case "$work" in *" "*) echo "test-deb: the clone's path has a space" >&2; exit 2 ;; esac
mkdir -p "$work"
cleanup

# Runs a command in the root with a clean environment, killed after $limit seconds (a hung job
# fails the script instead of CI).
limit=900
in_root() {
  timeout -s KILL "$limit" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    chroot "$root" "$@"
}

bash scripts/install-deps.sh package

step_start "building $build/ and the package"
if [ "$build" = build-release ]; then
  bash scripts/build-release.sh
else
  cmake --build "$build" -j"$(nproc 2>/dev/null || echo 2)"
fi
rm -rf "$build/packages"
cpack --config "$build/CPackConfig.cmake" -B "$build/packages" >/dev/null
debs=("$build"/packages/amt-local_*.deb)
deb="${debs[0]}"
step_end "build and cpack"
echo "test-deb: $deb ($(du -h "$deb" | cut -f1)), Depends: $(dpkg-deb -f "$deb" Depends)" >&2

if [ ! -f "$base/.amt-complete" ]; then
  step_start "debootstrap --variant=minbase bookworm from $mirror"
  rm -rf "$base"
  debootstrap --variant=minbase bookworm "$base" "$mirror" >"$work/debootstrap.log" 2>&1 || {
    tail -20 "$work/debootstrap.log" >&2
    exit 1
  }
  printf '%s\n' "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
    >"$base/etc/apt/sources.list"
  case "$mirror" in  # Debian's own mirror serves the security updates beside it
    */debian) echo "deb ${mirror%/debian}/debian-security bookworm-security main" \
      >>"$base/etc/apt/sources.list" ;;
  esac
  touch "$base/.amt-complete"
  step_end "debootstrap (made once, kept in $base)"
fi

step_start "installing the .deb into a fresh copy of the root"
cp -a "$base" "$root"
mkdir -p "$archives"
mount -t proc proc "$root/proc"  # /proc/self/exe: how the programs find each other
if [ ! -c "$root/dev/null" ]; then mount --bind /dev "$root/dev"; fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp "$archives"/*.deb "$root/var/cache/apt/archives/" 2>/dev/null || true
cp "$deb" "$root/tmp/amt-local.deb"
in_root apt-get update -qq
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  /tmp/amt-local.deb >"$work/install.log" 2>&1 || {
  tail -30 "$work/install.log" >&2
  exit 1
}
cp -n "$root"/var/cache/apt/archives/*.deb "$archives/" 2>/dev/null || true
step_end "apt-get install ./amt-local.deb in the root"

fail() {
  echo "test-deb: FAILED: $1" >&2
  exit 1
}

step_start "amt run /usr/share/amt-local/examples/random-tuning.json in the root"
limit=300
in_root sh -c 'cd /tmp && amt run /usr/share/amt-local/examples/random-tuning.json \
  --data-dir /tmp/amt-run --http-port 0' >"$work/run.log" 2>&1 ||
  { rc=$?; cat "$work/run.log" >&2; fail "amt run exited $rc"; }
grep -q '^Tuning job toy-random ended: Completed$' "$work/run.log" ||
  { cat "$work/run.log" >&2; fail "the tuning job did not end Completed"; }
grep -q '^Best training job: toy-random-' "$work/run.log" ||
  { cat "$work/run.log" >&2; fail "no best training job"; }
grep -E '^(Tuning job|Training jobs|Best training job)' "$work/run.log" >&2
step_end "amt run (8 training jobs)"

step_start "amtd, amt create-hyper-parameter-tuning-job and amt watch in the root"
mkfifo "$root/tmp/amtd.out"
# exec: $! is amtd itself (env and chroot exec it), for the SIGTERM below.
(exec env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 chroot "$root" \
  amtd --port 0 --http-port 0 --data-dir /tmp/amtd \
  --image-map /usr/share/amt-local/examples/image-map.json >"$root/tmp/amtd.out" \
  2>"$work/amtd.log") &
amtd_pid=$!
read -r -t 60 banner <"$root/tmp/amtd.out" || fail "amtd did not start: $(cat "$work/amtd.log")"
echo "test-deb: $banner" >&2
grpc=$(sed -n 's/^amtd listening on \([^ ]*\) (gRPC).*/\1/p' <<<"$banner")
http=$(sed -n 's/.*, \(http:[^ ]*\) (AWS JSON.*/\1/p' <<<"$banner")
if [ -z "$grpc" ] || [ -z "$http" ]; then fail "no endpoints in amtd's banner"; fi
in_root amt --endpoint "$grpc" create-hyper-parameter-tuning-job \
  --cli-input-json file:///usr/share/amt-local/examples/multi-algorithm.json >"$work/create.log" ||
  fail "create-hyper-parameter-tuning-job: $(cat "$work/create.log")"
name=$(sed -n 's/^ *"HyperParameterTuningJobName": *"\([^"]*\)".*/\1/p' examples/multi-algorithm.json)
in_root amt --endpoint "$grpc" watch "$name" >"$work/watch.log" 2>&1 ||
  { cat "$work/watch.log" "$work/amtd.log" >&2; fail "amt watch $name: not Completed"; }
grep -q 'Best training job: ' "$work/watch.log" ||
  { cat "$work/watch.log" >&2; fail "amt watch printed no best training job"; }
# The page and its npm package (uPlot), built into amtd.
in_root python3 -c 'import sys, urllib.request
page = urllib.request.urlopen(sys.argv[1] + "/ui/").read().decode()
uplot = urllib.request.urlopen(sys.argv[1] + "/ui/uplot.js").read()
if "<html" not in page.lower(): sys.exit("not the page: " + page[:200])
if len(uplot) < 10000: sys.exit("uplot.js is %d bytes" % len(uplot))' "$http" ||
  fail "amtd served no page at $http/ui/"
kill -TERM "$amtd_pid"
wait "$amtd_pid" || { rc=$?; fail "amtd exited $rc on SIGTERM: $(cat "$work/amtd.log")"; }
step_end "amtd + amt watch (8 training jobs, the C++ and the Python trainer)"

echo "test-deb: passed; the .deb installs and runs in a clean Debian 12 root" >&2
printf 'test-deb:   %s\n' "${timings[@]}" >&2

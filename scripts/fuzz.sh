#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/, the `fuzz` preset: clang-14, ASan, UBSan: request
# bodies, raw HTTP requests, trainer output, the gateway's wire decoders) and runs each for RUNS
# inputs, starting from its seed corpus (tests/fuzz/corpus/<target>/, read only: new inputs go
# to a scratch folder). A crash, a leak, an undefined behaviour or a timeout fails the run and
# leaves the input in build-fuzz/artifacts/. CI runs a short pass.
# Usage: scripts/fuzz.sh [RUNS]   (default 20000; the closing note of the issue used 1000000)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-20000}"
if ! command -v clang++-14 >/dev/null; then
  echo "fuzz: clang++-14 not found (scripts/install-deps.sh installs clang-14)" >&2
  exit 1
fi
# AMT_DEBUG_INFO=lines (CI): -g1, line tables only, which is what the crash reports print.
if [ ! -f build-fuzz/CMakeCache.txt ] || [ -n "${AMT_DEBUG_INFO:-}" ]; then
  cmake --preset fuzz -DAMT_DEBUG_INFO="${AMT_DEBUG_INFO:-full}" >/dev/null
else
  cmake --preset fuzz >/dev/null
fi
cmake --build --preset fuzz -j "$(nproc)"
mkdir -p build-fuzz/artifacts
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for target in request http_request log_line wire; do
  mkdir -p "$scratch/$target"
  echo "fuzz: ${target}_fuzzer, $runs inputs"
  log="$scratch/$target.log"
  rc=0
  build-fuzz/bin/"${target}_fuzzer" -runs="$runs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix=build-fuzz/artifacts/"${target}"- \
    "$scratch/$target" "tests/fuzz/corpus/$target" >"$log" 2>&1 || rc=$?
  grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|Done)" "$log" || true
  if [ "$rc" -ne 0 ]; then
    tail -n 40 "$log" >&2
    echo "fuzz: ${target}_fuzzer FAILED (the input is in build-fuzz/artifacts/)" >&2
    exit 1
  fi
done
echo "fuzz: every target ran $runs inputs without a finding"

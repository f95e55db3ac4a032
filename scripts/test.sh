#!/usr/bin/env bash
# The test suite: installs, builds, then runs every unit and integration test with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
jobs=$(nproc 2>/dev/null || echo 2)
ctest --test-dir build --output-on-failure -j"$jobs" --timeout 300 "$@"

#!/usr/bin/env bash
# Configures and builds build-release/: Release, without the tests and benchmarks (not even
# configured: GoogleTest need not be installed), the build of the demo and of the .deb.
# Usage: scripts/build-release.sh [TARGET...]   (no target: all, which is what `cmake --install`
# and cpack install; scripts/demo.sh builds only what it runs)
# Installs nothing: its callers run scripts/install-deps.sh with their profile first.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
if [ ! -f build-release/CMakeCache.txt ]; then
  # CMakePresets.json: Release, Ninja, AMT_BUILD_TESTS=OFF, AMT_BUILD_BENCH=OFF.
  cmake --preset release >/dev/null
fi
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build-release -j"$jobs" "${targets[@]}"

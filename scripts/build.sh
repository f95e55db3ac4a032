#!/usr/bin/env bash
# Installs what is missing (Debian packages), configures and builds amt-local into build/.
# Usage: scripts/build.sh [extra cmake --build args]
# Our warnings are errors (AMT_WERROR=ON, as the dev preset): this is the build CI makes
# (.ci/run -> scripts/test.sh), so a warning fails CI. AMT_WERROR=OFF in the environment turns
# that off for a compiler newer than Debian 12's g++ 12, whose new warnings are not yet fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
werror="${AMT_WERROR:-ON}"
# AMT_DEBUG_INFO=lines (CI, .ci/run) compiles -g1 instead of -g: line numbers in backtraces, no
# variables for a debugger, about 25% less compile time (CMakeLists.txt).
debug_info="${AMT_DEBUG_INFO:-full}"
# Given on both paths: a build/ configured before (or by hand without it) gets it too.
if [ -f build/CMakeCache.txt ]; then
  cmake -S . -B build -DAMT_WERROR="$werror" -DAMT_DEBUG_INFO="$debug_info" >/dev/null
else
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAMT_WERROR="$werror" \
    -DAMT_DEBUG_INFO="$debug_info" >/dev/null
fi
cmake --build build -j"$jobs" "$@"

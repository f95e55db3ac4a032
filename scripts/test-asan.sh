#!/usr/bin/env bash
# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer: builds the asan-ubsan preset
# (CMakePresets.json) into build-asan/ and runs CTest there. CI runs it after scripts/test.sh.
# Usage: scripts/test-asan.sh [extra ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)

# Any report fails the test: ASan halts on the first error, UBSan does not recover
# (-fno-sanitize-recover=undefined in the preset), LeakSanitizer runs at exit. Leaks inside
# libraries we do not build are listed, each with its reason, in tests/sanitizers/lsan.supp.
# (The asan-ubsan test preset sets the same options for `ctest --preset asan-ubsan`.)
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0"

# Tests not run under the sanitizers, each with its reason (printed, so none is left out
# silently).
# - HttpServerTest.KeepsAcceptingAfterRunningOutOfFileDescriptors exhausts the process's file
#   descriptors on purpose; UBSan's vptr check probes memory with pipe(2), which then fails, so
#   every virtual call in that window is reported as "invalid vptr" (a false report; the normal
#   build runs the test).
# - python.venv makes a virtual environment and pip-installs python/ into it: Python packaging,
#   none of our C++ (the normal build runs it). The two tests that need that environment go with
#   it (CTest does not add back a fixture's setup test that -E leaves out): python.pytest_plugin
#   and python.pytest_user_example test the amt_local package's fixture; the amtd they start
#   runs under the sanitizers in python.amt_local, which needs no environment of its own.
# - slurm.accounting checks the Slurm cluster's accounting set-up (MariaDB, slurmdbd, sacct) with
#   a shell script; amtd's Slurm executor runs under the sanitizers in SlurmIntegrationTest.
# - WebPageBrowserTest's drawings (Draws*, Lists*, Shows*) test the page's JavaScript in Chromium,
#   about 18 s each; what amtd does for them (static files, the JSON operations) runs under the
#   sanitizers in the gateway's tests, and the live feed (/ui/events) in the one browser test kept
#   here, FollowsARunningTuningJobLiveUntilItEnds. (Issue 34: CI under 60 minutes.)
excluded=(HttpServerTest.KeepsAcceptingAfterRunningOutOfFileDescriptors
  "python.(venv|pytest_plugin|pytest_user_example)" slurm.accounting "WebPageBrowserTest.(Draws|Lists|Shows)")
if [ ${#excluded[@]} -gt 0 ]; then
  echo "asan-ubsan: not run: ${excluded[*]}"
fi

# AMT_DEBUG_INFO=lines (CI): -g1, line tables only, which is what ASan's reports print.
if [ ! -f build-asan/CMakeCache.txt ] || [ -n "${AMT_DEBUG_INFO:-}" ]; then
  cmake --preset asan-ubsan -DAMT_DEBUG_INFO="${AMT_DEBUG_INFO:-full}" >/dev/null
fi
cmake --build --preset asan-ubsan -j"$jobs"
exclude_args=()
if [ ${#excluded[@]} -gt 0 ]; then
  exclude_args=(-E "$(IFS='|'; echo "${excluded[*]}")")
fi
ctest --test-dir build-asan --output-on-failure -j"$jobs" --timeout 600 "${exclude_args[@]}" "$@"

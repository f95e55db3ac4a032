#!/usr/bin/env bash
# The test suite: installs, builds, then runs every unit and integration test with CTest.
# The tests run with TMPDIR (and GoogleTest's TEST_TMPDIR) set to a fresh folder that must be
# empty when they end: a test leaves nothing behind (tests/support/temp_dir.h in C++, the
# harness's temp folders in Python). Whatever is left is listed and fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
jobs=$(nproc 2>/dev/null || echo 2)
# Short (unix socket paths have at most 107 bytes), outside the clone.
tmp="$(mktemp -d "${TMPDIR:-/tmp}/amt-tests.XXXXXX")"
status=0
TMPDIR="$tmp" TEST_TMPDIR="$tmp" \
  ctest --test-dir build --output-on-failure -j"$jobs" --timeout 300 "$@" || status=$?
left="$(find "$tmp" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort)"
if [ -n "$left" ]; then
  echo "tests left these in the temp folder ($tmp), which should be empty:" >&2
  echo "$left" | head -50 >&2
  [ "$status" -ne 0 ] || status=1
else
  rmdir "$tmp"
fi
exit "$status"

#!/usr/bin/env bash
# Regenerates the page's screenshots that examples/README.md shows (examples/screenshots/*.png):
# builds, runs the browser tests (tests/browser/: headless Chromium against a real amtd running the
# examples' own job files), and copies the PNGs they wrote under build/browser-screenshots/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
build/tests/web_page_browser_test --gtest_filter='*Walkthrough*:*WarmStart*:*Spot*'
mkdir -p examples/screenshots
for name in example-toy-auto example-toy-hyperband example-toy-warm-start spot-timeline; do
  cp "build/browser-screenshots/$name.png" "examples/screenshots/$name.png"
  echo "examples/screenshots/$name.png"
done

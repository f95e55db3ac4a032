#!/usr/bin/env bash
# The demo: installs what it needs (scripts/install-deps.sh demo), builds only what it runs
# (amtd, amt-worker, amt and the toy trainer, Release at -O0: the demo preset, in build-demo/),
# then runs a Random
# tuning job of 8 training jobs (2 in parallel) on the toy trainer, with a live table, ending with
# the best training job and its hyperparameters. It prints the web page's address (learning
# curves, live); in a terminal the page stays up after the job until Ctrl-C (amt run
# --keep-serving).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh demo
if [ ! -f build-demo/CMakeCache.txt ]; then
  cmake --preset demo >/dev/null  # CMakePresets.json: release's, at -O0 (least compile time)
fi
cmake --build build-demo -j"$(nproc 2>/dev/null || echo 2)" --target amtd amt-worker amt \
  amt-toy-trainer
serve=()
if [ -t 1 ]; then serve=(--keep-serving); fi
exec build-demo/bin/amt run examples/random-tuning.json --data-dir .amt "${serve[@]}" "$@"

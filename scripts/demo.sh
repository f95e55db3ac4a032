#!/usr/bin/env bash
# The demo: installs what it needs (scripts/install-deps.sh demo), builds only what it runs
# (amtd, amt-worker, amt and the toy trainer, Release, in build-release/), then runs a Random
# tuning job of 8 training jobs (2 in parallel) on the toy trainer, with a live table, ending with
# the best training job and its hyperparameters. It prints the web page's address (learning
# curves, live); in a terminal the page stays up after the job until Ctrl-C (amt run
# --keep-serving).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh demo
bash scripts/build-release.sh amtd amt-worker amt amt-toy-trainer
serve=()
if [ -t 1 ]; then serve=(--keep-serving); fi
exec build-release/bin/amt run examples/random-tuning.json --data-dir .amt "${serve[@]}" "$@"

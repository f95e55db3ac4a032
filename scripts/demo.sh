#!/usr/bin/env bash
# The demo: installs, builds, then runs a Random tuning job of 8 training jobs (2 in parallel) on
# the toy trainer, with a live table, ending with the best training job and its hyperparameters.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
exec build/bin/amt run examples/random-tuning.json --data-dir .amt "$@"

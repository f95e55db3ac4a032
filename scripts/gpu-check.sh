#!/usr/bin/env bash
# Issue 37's check on a real NVIDIA GPU (scripts/gpu_check.py says what it checks).
#   here:            bash scripts/gpu-check.sh pack   (after scripts/build.sh: build-gpu/, ~30 MB)
#   on the GPU host: bash scripts/gpu-check.sh run    (python3 with torch; build-gpu/ carried)
#   dry run here:    bash scripts/gpu-check.sh dry-run (a stand-in nvidia-smi, torch on CPU)
# `pack` copies amtd, amt-worker, amt, amt-job-shim and amt-script-runner, stripped, into
# build-gpu/bin and the shared libraries they need that are not the C and C++ runtimes into
# build-gpu/lib (the GPU host runs another distribution and cannot install packages; amt-job-shim
# is static, so ldd has nothing to list for it).
set -euo pipefail
cd "$(dirname "$0")/.."
programs=(amtd amt-worker amt amt-job-shim amt-script-runner)
case "${1:-}" in
  pack)
    rm -rf build-gpu
    mkdir -p build-gpu/bin build-gpu/lib
    for p in "${programs[@]}"; do
      strip -o "build-gpu/bin/$p" "build/bin/$p"
      ldd "build/bin/$p" >/dev/null 2>&1 || continue  # static: nothing to carry
      ldd "build/bin/$p" | awk '$3 ~ /^\// {print $3}' |
        { grep -Ev '/(libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\+\+|ld-linux[^/]*)\.so' || true; } |
        while read -r lib; do cp -nL "$lib" build-gpu/lib/; done
    done
    du -sh build-gpu;;
  run)
    export LD_LIBRARY_PATH="$PWD/build-gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    exec python3 scripts/gpu_check.py --bin-dir build-gpu/bin;;
  dry-run)
    PATH="$PWD/tests/integration/gpu:$PATH" exec /usr/bin/python3 scripts/gpu_check.py \
      --bin-dir build/bin --python /usr/bin/python3 \
      --dry-run;;
  *) echo "usage: scripts/gpu-check.sh pack|run|dry-run" >&2; exit 2;;
esac

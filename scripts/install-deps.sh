#!/usr/bin/env bash
# Installs the Debian 12 packages amt-local needs. Idempotent: packages already present are
# skipped, and apt-get update runs only when something is missing.
# Usage: scripts/install-deps.sh [PROFILE]
#   demo     what scripts/demo.sh needs to build amtd, amt-worker, amt and the toy trainer and run
#            them: the compiler and build tools, the -dev libraries they link, python3 (the
#            examples' Python trainers), and the web page's npm package (built into amtd)
#   package  demo's, and what scripts/test-deb.sh needs: dpkg-dev (dpkg-shlibdeps names the
#            .deb's Depends) and debootstrap (the clean Debian 12 root it installs the .deb into)
#   full     (the default) everything: package's, and what the whole test suite, the checks, the
#            sanitizers and the fuzzers need (scripts/test.sh, .ci/run)
set -euo pipefail

profile="${1:-full}"

# demo: amtd, amt-worker, amt and amt-toy-trainer, built and run (BUILDING.md: what each is for).
PACKAGES=(
  g++ cmake ninja-build pkg-config
  libboost-dev libboost-filesystem-dev
  libprotobuf-dev protobuf-compiler libgrpc++-dev protobuf-compiler-grpc libabsl-dev
  libsqlite3-dev libre2-dev libeigen3-dev nlohmann-json3-dev libcli11-dev zlib1g-dev
  libexpat1-dev  # XML request bodies of S3 (orchestrator/gateway/xml.h)
  libssl-dev  # libcrypto's SHA-256 and HMAC: SigV4 request signatures (orchestrator/auth/)
  python3  # the examples' Python trainers
  musl-tools  # musl-gcc: amt-job-shim, started once per job, starts 0.85 ms sooner than on glibc
)
PACKAGE_PACKAGES=(
  dpkg-dev  # dpkg-shlibdeps: the .deb's Depends, from the libraries the binaries link (cpack)
  debootstrap  # scripts/test-deb.sh: a clean Debian 12 root to install the .deb into
)
FULL_PACKAGES=(
  libboost-system-dev libboost-program-options-dev
  libgtest-dev libgmock-dev clang-format
  clang-14    # scripts/check-thread-safety.sh: -Wthread-safety (g++ has no such analysis)
  libclang-rt-14-dev  # libFuzzer and the sanitizer runtimes for clang (scripts/fuzz.sh)
  python3-boto3 awscli
  # amt_local (python/): its CTest tests make a venv (python3-venv, with pip) and run pytest
  # (python/tests/, examples/pytest-user/).
  python3-venv python3-pip python3-pytest
  # What the vendored SageMaker Python SDK imports (tests/compat/sdk_compat_test.py, with the
  # pyenv python's boto3 1.43; ../shared/vendor/sagemaker-python-sdk/README.md).
  python3-numpy python3-pandas python3-protobuf python3-importlib-metadata python3-packaging
  python3-platformdirs python3-tblib python3-tqdm python3-psutil python3-schema python3-yaml
  python3-jsonschema python3-attr python3-cloudpickle
  # The built-in XGBoost algorithm (worker/script_runner/xgboost_algorithm.py) and real-model
  # script-mode examples: Debian's xgboost 1.7 and scikit-learn 1.2, for /usr/bin/python3.
  python3-xgboost python3-sklearn
  # PyTorch 1.13 (CPU) for the managed-spot example's training script (examples/sdk/pytorch_src);
  # torchvision 0.14 for AWS's PyTorch MNIST notebook's mnist.py (tests/compat/aws_notebooks_test.py).
  python3-torch python3-torchvision
  # Slurm 22.05 and munge: the Slurm executor's tests start a one-machine cluster
  # (scripts/slurm-up.sh; no daemon starts on install, as there is no systemd). slurmdbd and
  # MariaDB: its accounting (WITH_ACCOUNTING=1, tests/integration/slurm_accounting_test.sh).
  slurm-wlm munge slurmdbd mariadb-server
  # Headless Chromium: the web page's browser tests (tests/browser/).
  chromium
  # Docker (dockerd, its client, containerd, runc) and a static busybox: the container tests
  # start their own dockerd with private paths and build a FROM-scratch busybox training image
  # (tests/integration/containers_test.py). No daemon starts on install (no systemd). Podman
  # (with runc and netavark): the same tests with --engine podman. netavark and aardvark-dns by
  # name: without recommends, podman's network stack is CNI (containernetworking-plugins), whose
  # networks have no DNS, and the two hosts of a job could not reach each other as algo-1 and
  # algo-2 (tests/integration/containers_test.py, found on a fresh machine in session 29).
  # containernetworking-plugins: the CNI stack itself, which the case of a network without DNS
  # switches Podman to; without it Podman cannot find the network it has just created (found on
  # a fresh machine in session 36).
  docker.io busybox-static podman netavark aardvark-dns containernetworking-plugins
)
case "$profile" in
  demo) ;;
  package) PACKAGES+=("${PACKAGE_PACKAGES[@]}") ;;
  full) PACKAGES+=("${PACKAGE_PACKAGES[@]}" "${FULL_PACKAGES[@]}") ;;
  *)
    echo "usage: scripts/install-deps.sh [demo|package|full]" >&2
    exit 2
    ;;
esac
# Node.js and npm fetch the web page's npm packages (below). A machine that has them (such as
# NodeSource's nodejs, which carries its own npm) keeps them; else Debian's are installed.
if ! command -v npm >/dev/null 2>&1; then PACKAGES+=(nodejs npm); fi

# The web page's npm packages (web/package.json, pinned by web/package-lock.json), which
# web/embed.cmake builds into amtd: installed again whenever the lock file is newer.
install_web_packages() {
  local web
  web="$(cd "$(dirname "$0")/../web" && pwd)"
  if [ ! -f "$web/node_modules/.package-lock.json" ] ||
     [ "$web/package-lock.json" -nt "$web/node_modules/.package-lock.json" ]; then
    echo "amt-local: npm ci in web/" >&2
    (cd "$web" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  fi
}

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  install_web_packages
  exit 0
fi

echo "amt-local: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
install_web_packages

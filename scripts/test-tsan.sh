#!/usr/bin/env bash
# ThreadSanitizer over the integration tests (the real amtd, amt-worker and trainers, all built
# with -fsanitize=thread) and the threaded unit tests (worker/, the HTTP server, the API over the
# loop): builds the tsan preset into build-tsan/, runs those tests, and sorts what TSan reports
# into reports whose stack has a frame of ours (a failure) and reports entirely inside Debian's
# uninstrumented gRPC, protobuf and Abseil (listed, with counts, not failed: TSan cannot see
# their synchronisation). Every process writes its reports to build-tsan/tsan-reports/.
# Not part of CI: a third full build does not fit its time; the closing notes give its results.
# Usage: scripts/test-tsan.sh [extra ctest args]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
if [ ! -f build-tsan/CMakeCache.txt ]; then
  cmake --preset tsan >/dev/null
fi
cmake --build --preset tsan -j"$jobs"
reports="$PWD/build-tsan/tsan-reports"
rm -rf "$reports"
mkdir -p "$reports"
export TSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/tsan.supp:log_path=$reports/report:halt_on_error=0:second_deadlock_stack=1"
# Integration tests, and the unit tests whose code runs on several threads.
tests='Integration|WorkerDeath|Agent|JobRunner|LogShipper|ProcessLauncher|GrpcConnector|CondVar|Mutex|HttpServer|SageMakerApi|TuningService|WorkerService|Loop'
rc=0
ctest --test-dir build-tsan -R "$tests" -j"$jobs" --timeout 900 "$@" || rc=$?
python3 - "$reports" "$PWD" <<'PY'
import collections, glob, os, re, sys
reports_dir, source = sys.argv[1], sys.argv[2]
ours, theirs = [], collections.Counter()
for path in sorted(glob.glob(os.path.join(reports_dir, "report.*"))):
    text = open(path, errors="replace").read()
    for block in text.split("==================")[1:]:
        if "WARNING: ThreadSanitizer" not in block:
            continue
        kind = re.search(r"WARNING: ThreadSanitizer: ([^(\n]+)", block).group(1).strip()
        frames = re.findall(r"#\d+ (\S+) (\S+)", block)
        project = [f for f in frames if f[1].startswith(source) and "/build-tsan/proto/" not in f[1]]
        if project:
            ours.append((path, kind, project[0]))
        else:
            libs = sorted({os.path.basename(re.sub(r"\+0x[0-9a-f]+\)?$", "", f[1]).strip("(")) for f in frames})
            theirs[(kind, ", ".join(libs[:3]))] += 1
print(f"tsan: {len(ours)} report(s) with a frame of ours, {sum(theirs.values())} inside libraries only")
for (kind, libs), n in theirs.most_common():
    print(f"  {n:4d} x {kind} in {libs}")
for path, kind, frame in ours:
    print(f"  OURS: {kind}: {frame[0]} {frame[1]} ({os.path.basename(path)})")
sys.exit(1 if ours else 0)
PY
exit "$rc"

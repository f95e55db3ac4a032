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
# exitcode=0: a test fails on its own assertions; the reports are sorted below.
export TSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/tsan.supp:log_path=$reports/report:halt_on_error=0:exitcode=0:second_deadlock_stack=1"
# Integration tests, and the unit tests whose code runs on several threads.
tests='Integration|WorkerDeath|Agent|JobRunner|LogShipper|ProcessLauncher|GrpcConnector|CondVar|Mutex|HttpServer|SageMakerApi|TuningService|WorkerService|Loop'
rc=0
ctest --test-dir build-tsan -R "$tests" -j"$jobs" --timeout 900 --output-on-failure "$@" || rc=$?
python3 - "$reports" "$PWD" "$PWD/build-tsan" <<'PY'
import collections, glob, os, re, sys
reports_dir, source, build = sys.argv[1], sys.argv[2], sys.argv[3]
frame_re = re.compile(r"^\s*#\d+ (.*?)(?: (\S+?):(\d+)(?::\d+)?)? \((\S+?)\+0x[0-9a-f]+\)\s*$")
access_re = re.compile(r"^\s*(Read|Write|Previous read|Previous write|Atomic read|Atomic write|Previous atomic read|Previous atomic write|Mutex|Thread|Location|Heap block)")

def resolve(path):
    if not path:
        return ""
    return os.path.normpath(path if os.path.isabs(path) else os.path.join(build, path))

def ours(path):
    return path.startswith(source + "/") and not path.startswith(build + "/")

mine, theirs = [], collections.Counter()
for report in sorted(glob.glob(os.path.join(reports_dir, "report.*"))):
    text = open(report, errors="replace").read()
    for block in text.split("==================")[1:]:
        m = re.search(r"WARNING: ThreadSanitizer: ([^(\n]+)", block)
        if not m:
            continue
        kind = m.group(1).strip()
        # The top frame (interceptors aside) of each racing access: where the race happens.
        tops, section, taken = [], None, False
        for line in block.split("\n"):
            a = access_re.match(line)
            if a:
                section, taken = a.group(1), False
                continue
            f = frame_re.match(line)
            if f and section and not section.startswith(("Mutex", "Thread", "Location", "Heap")) and not taken:
                module = os.path.basename(f.group(4))
                if module.startswith("libtsan"):
                    continue
                tops.append((f.group(1), resolve(f.group(2)), module))
                taken = True
        project = [t for t in tops if ours(t[1])]
        if project:
            mine.append((kind, project[0]))
        else:
            where = sorted({t[2] for t in tops})
            theirs[(kind, " / ".join(where))] += 1
print(f"tsan: {len(mine)} report(s) with a racing access in our code, "
      f"{sum(theirs.values())} with both accesses inside libraries")
for (kind, where), n in theirs.most_common(12):
    print(f"  {n:5d} x {kind}: {where}")
c = collections.Counter((k, f[0][:80], os.path.relpath(f[1], source)) for k, f in mine)
for (k, fn, loc), n in c.most_common(30):
    print(f"  OURS {n:4d} x {k}: {fn} at {loc}")
sys.exit(1 if mine else 0)
PY
exit "$rc"

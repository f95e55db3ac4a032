#!/usr/bin/env python3
"""Fails on an #include that crosses amt-local's layering (docs/style.md items 1-5).

Usage: scripts/check-layering.py [--root DIR]    (DIR: a source tree; default: this repository)
Prints FILE:LINE: [rule] what was included and why it may not be, for every violation, and exits 1
if there is any; exits 0 and prints a one-line summary otherwise. Python 3 standard library only.

The layers are described in docs/architecture.md ("Layers and folders"). Each library folder
has an allow list (there are no deny lists: what a folder does not list, it may not include):
every #include of a file in it must match one of the folder's entries, else it is reported with
the folder's rule. A new folder under orchestrator/ (or a new top-level library) with no rule
here fails too, so nothing escapes by being new.
The rules, and what each one means:

  search/     [pure]       Strategies are pure functions of (history, seeded RNG): no I/O, no
  stopping/                clock, no threads, no job. They may include only the standard headers
  spot/                    of PURE_STD (containers, algorithms, math, <charconv>, <random> for
                           seeded engines; not <fstream>, <iostream>, <sstream>, <cstdio>,
                           <filesystem>, <chrono>, <ctime>, <thread>, <mutex>, <atomic>,
                           <future>), absl/status/, common/status_macros.h, their own folder,
                           and for search only Eigen and the API's message types
                           (amt/v1/tuning.pb.h: parameter ranges).
  metrics/    [pure]       MetricDefinitions regexes applied to lines: standard library, Abseil,
  validation/              common/status_macros.h, RE2 and protobuf messages (not services);
                           validation may use common/errors.h for the AWS error shapes.
  auth/       [pure]       Request authentication (credentials file, SigV4, AWS's error texts):
                           standard library, Abseil, OpenSSL (openssl/*: SHA-256, HMAC),
                           common/status_macros.h. No wire (Boost, gRPC), no job, no other
                           orchestrator/ folder: the gateway calls it, not the reverse.
  s3/         [no-wire]    The local S3 folder as buckets and objects (files, no database):
                           standard library, POSIX, Abseil, common/, nlohmann-json.
  store/      [no-wire]    SQLite persistence: messages (amt/v1/*.pb.h), SQLite, common/.
                           Never gRPC (grpcpp/, grpc/, *.grpc.pb.h), Boost.Asio/Beast, core/,
                           api/, gateway/, daemon/: the store knows neither wire nor job logic.
  core/       [no-wire]    State machines and the coordinator: messages, common/, nlohmann-json,
                           and the pure libraries plus store/. Never gRPC, Asio/Beast, api/,
                           gateway/, daemon/: handlers decode the wire and post onto the loop.
  executor/   [executor]   Where attempts run besides connected workers (Slurm): runs sbatch,
                           squeue and scancel (POSIX), hands single-use workers to core/
                           (core/provisioner.h): standard library, POSIX, Abseil, messages,
                           common/, core/. Never gRPC, Asio/Beast, api/, gateway/, daemon/.
  api/        [api]        The transport-neutral service and its gRPC handlers, on the loop
                           (Boost.Asio): standard library, Abseil, gRPC, messages and services
                           (amt/v1/, proto/amt/v1/operations.h), common/, and of orchestrator/
                           only core/, validation/ and
                           metrics/ (a worker stream parses its log lines). Not gateway/,
                           daemon/, worker/, cli/, nor store/, search/ & co. (through core/).
  gateway/    [gateway]    The HTTP edge wraps api/: standard library, POSIX, Abseil, Boost
                           (Asio, Beast, System), OpenSSL, zlib, expat, nlohmann-json, protobuf
                           messages, the operation table, common/, web/web_assets.h, and of
                           orchestrator/ only api/,
                           auth/ and s3/: it reaches orchestrator state only through api/, never
                           core/, store/, search/, stopping/, daemon/, nor worker/, cli/, gRPC.
                           Its service folders (gateway/s3/, logs/, cloudwatch/) are under the
                           same rule: a folder of orchestrator/ is checked with everything below.
  daemon/     [assembly]   Wiring of amtd: standard library, POSIX, Abseil, gRPC, Boost.Asio,
                           messages, common/, and the libraries it assembles: api/, gateway/,
                           executor/, core/, store/, s3/. Never worker/ or cli/ (amtd starts
                           amt-worker as a process, not as a library).
  main.cc     [assembly]   amtd's flags: standard library, POSIX, Abseil, common/, daemon/,
                           CLI11.
  worker/     [protocol]   amt-worker speaks only the worker protocol: amt/v1/worker.pb.h and
                           worker.grpc.pb.h, gRPC, common/. Never orchestrator/, cli/, or the
                           API and state messages (tuning.pb.h, state.pb.h).
  cli/        [client]     The amt client: the public API (amt/v1/tuning*.pb.h and the table of
                           its operations, proto/amt/v1/operations.h), gRPC, common/.
                           Only cli/run.cc (`amt run`: an embedded orchestrator) may include
                           orchestrator/daemon/daemon.h; nothing else from orchestrator/, nor
                           worker/.
  common/     [common]     Shared by both sides, so it knows neither: no orchestrator/, worker/,
                           cli/, amt/v1/ (messages reach it as google::protobuf::Message), but
                           amt/v1/aws.pb.h, the field options of the AWS wire (ProtoToAwsJson).
  everywhere  [cli11]      CLI/CLI.hpp only in a main.cc (about 7 s per translation unit).

Generated code (proto/), tests/, bench/ and examples/ are not checked.
"""

import argparse
import os
import re
import sys

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')

# Entries of an allow list: regexes matched against the whole include path.
STD = r"[a-z_0-9]+"  # <vector>, <cstdint>: the C++ standard library (no dot, no slash)
POSIX = r"((sys|arpa|netinet|net)/)?[a-z_0-9]+\.h"  # <unistd.h>, <sys/wait.h>, <arpa/inet.h>, <zlib.h>-shaped
ABSL = r"absl/.*"
PROTO_MESSAGES = r"amt/v1/[a-z_]+\.pb\.h"  # messages only; services are *.grpc.pb.h
PROTOBUF = r"google/protobuf/.*"
COMMON = r"common/.*"
GRPC = r"grpcpp/.*"
SERVICES = r"amt/v1/[a-z_]+\.grpc\.pb\.h"
OPERATIONS = r"proto/amt/v1/operations\.h"  # the public API's operation table (names only)
ASIO = r"boost/asio/.*|boost/asio\.hpp"

# The C++ standard headers a pure library may include: computation only. Not the I/O headers
# (<fstream>, <iostream>, <sstream>, <istream>, <ostream>, <cstdio>, <filesystem>), the clock
# (<chrono>, <ctime>) or threads (<thread>, <mutex>, <shared_mutex>, <condition_variable>,
# <atomic>, <future>, <stop_token>, <semaphore>, <latch>, <barrier>). <random> stays: the
# strategies draw from a seeded engine they are given (docs/style.md item 3).
PURE_STD = "|".join([
    "algorithm", "array", "bit", "bitset", "cassert", "cctype", "cfloat", "charconv", "climits",
    "cmath", "compare", "concepts", "cstddef", "cstdint", "cstdlib", "cstring", "deque",
    "functional", "initializer_list", "iterator", "limits", "list", "map", "memory", "numbers",
    "numeric", "optional", "queue", "random", "ranges", "set", "span", "stack", "stdexcept",
    "string", "string_view", "system_error", "tuple", "type_traits", "unordered_map",
    "unordered_set", "utility", "variant", "vector",
])
PURE_STATUS = r"absl/status/(status|statusor)\.h"


def own(folder):
    return re.escape(folder) + "/.*"


def lib(name):
    return re.escape("orchestrator/" + name) + "/.*"


PURE = [STD, ABSL, r"common/status_macros\.h"]
# search/, stopping/, spot/: no I/O, clock or threads even from the standard library.
PURE_LIB = [PURE_STD, PURE_STATUS, r"common/status_macros\.h"]

# folder -> (rule name, allow list, what the rule means: printed with each violation)
RULES = {
    "orchestrator/search": (
        "pure", PURE_LIB + [own("orchestrator/search"), r"Eigen/.*", r"amt/v1/tuning\.pb\.h"],
        "search/ is pure and knows no job: the computing standard headers (no I/O, clock or "
        "threads), absl/status, Eigen, common/status_macros.h, amt/v1/tuning.pb.h only"),
    "orchestrator/stopping": (
        "pure", PURE_LIB + [own("orchestrator/stopping")],
        "stopping/ is pure and knows no job: the computing standard headers (no I/O, clock or "
        "threads), absl/status, common/status_macros.h only"),
    "orchestrator/spot": (
        "pure", PURE_LIB + [own("orchestrator/spot")],
        "spot/ is a pure, seeded model: the computing standard headers (no I/O, clock or "
        "threads), absl/status, common/status_macros.h only"),
    "orchestrator/metrics": (
        "pure", PURE + [own("orchestrator/metrics"), r"re2/.*", PROTOBUF, r"amt/v1/tuning\.pb\.h"],
        "metrics/ is pure: standard library, Abseil, RE2, protobuf messages only"),
    "orchestrator/validation": (
        "pure", PURE + [own("orchestrator/validation"), r"re2/.*", PROTOBUF, PROTO_MESSAGES,
                        r"common/errors\.h"],
        "validation/ is pure: standard library, Abseil, RE2, protobuf messages, common/errors.h"),
    "orchestrator/auth": (
        "pure", PURE + [own("orchestrator/auth"), r"openssl/.*", r"common/(credentials|crypto|text)\.h"],
        "auth/ is pure: standard library, Abseil, OpenSSL, common/status_macros.h and the "
        "credentials, crypto and text helpers of common/ only"),
    "orchestrator/store": (
        "no-wire", [STD, POSIX, ABSL, own("orchestrator/store"), PROTO_MESSAGES, COMMON],
        "store/ knows no wire and no job logic: no gRPC, Asio/Beast, core/, api/, gateway/, "
        "daemon/"),
    "orchestrator/s3": (
        "no-wire", [STD, POSIX, ABSL, own("orchestrator/s3"), COMMON, r"nlohmann/.*"],
        "s3/ is the local S3 folder as buckets and objects: no wire, no job, no other "
        "orchestrator/ folder"),
    "orchestrator/core": (
        "no-wire", [STD, ABSL, own("orchestrator/core"), PROTO_MESSAGES, COMMON, r"nlohmann/.*",
                    lib("search"), lib("stopping"), lib("spot"), lib("metrics"),
                    lib("validation"), lib("store")],
        "core/ knows no wire: no gRPC, Asio/Beast, api/, gateway/, daemon/ (handlers decode "
        "and post onto the loop)"),
    "orchestrator/executor": (
        "executor", [STD, POSIX, ABSL, own("orchestrator/executor"), PROTO_MESSAGES, COMMON,
                     lib("core")],
        "executor/ runs Slurm's commands and hands workers to core/: no gRPC, Asio/Beast, api/, "
        "gateway/, daemon/"),
}

RULES.update({
    "orchestrator/api": (
        "api", [STD, ABSL, own("orchestrator/api"), PROTO_MESSAGES, SERVICES, OPERATIONS, GRPC,
                ASIO, COMMON, lib("core"), lib("validation"), lib("metrics")],
        "api/ is the transport-neutral service and its gRPC handlers: standard library, Abseil, "
        "gRPC, Boost.Asio, amt/v1/ (and the operation table), common/, and of orchestrator/ only "
        "core/, validation/, metrics/"),
    "orchestrator/gateway": (
        "gateway", [STD, POSIX, ABSL, own("orchestrator/gateway"), COMMON, PROTO_MESSAGES,
                    PROTOBUF, r"boost/(asio|beast|system)/.*", r"openssl/.*", r"nlohmann/.*",
                    r"web/web_assets\.h", OPERATIONS, lib("api"), lib("auth"), lib("s3")],
        "gateway/ wraps api/: it reaches orchestrator state only through api/ (of orchestrator/ "
        "only api/, auth/, s3/); standard library, POSIX, Abseil, Boost, OpenSSL, "
        "nlohmann-json, protobuf messages and the operation table, common/, web/web_assets.h; "
        "no gRPC"),
    "orchestrator/daemon": (
        "assembly", [STD, POSIX, ABSL, own("orchestrator/daemon"), PROTO_MESSAGES, SERVICES, GRPC,
                     ASIO, COMMON, lib("api"), lib("gateway"), lib("executor"), lib("core"),
                     lib("store"), lib("s3")],
        "amtd's wiring: the libraries it assembles (api/, gateway/, executor/, core/, store/, "
        "s3/), gRPC, Boost.Asio, common/; amt-worker is started as a process: no worker/ or "
        "cli/ headers"),
    "orchestrator": (  # orchestrator/main.cc and other files at the top of orchestrator/
        "assembly", [STD, POSIX, ABSL, COMMON, lib("daemon"), r"CLI/CLI\.hpp"],
        "amtd's main.cc puts its flags on DaemonOptions: orchestrator/daemon/, common/, CLI11; "
        "no worker/ or cli/ headers"),
})

RULES.update({
    "worker": (
        "protocol", [STD, POSIX, ABSL, own("worker"), r"amt/v1/worker(\.grpc)?\.pb\.h", COMMON,
                     r"grpcpp/.*", r"nlohmann/.*", r"CLI/CLI\.hpp"],
        "the worker speaks only the protocol: amt/v1/worker*.pb.h, gRPC, common/; no "
        "orchestrator/, cli/, tuning.pb.h or state.pb.h"),
    "cli": (
        "client", [STD, POSIX, ABSL, own("cli"), r"amt/v1/tuning(\.grpc)?\.pb\.h",
                   OPERATIONS, COMMON, r"grpcpp/.*", PROTOBUF, r"nlohmann/.*",
                   r"CLI/CLI\.hpp"],
        "the client uses the public API (amt/v1/tuning*.pb.h, proto/amt/v1/operations.h) and "
        "gRPC; no orchestrator/ "
        "(except orchestrator/daemon/daemon.h in cli/run.cc) and no worker/"),
    "common": (
        "common", [STD, POSIX, ABSL, own("common"), PROTOBUF, r"nlohmann/.*", r"openssl/.*",
                   r"amt/v1/aws\.pb\.h"],
        "common/ is shared by amtd, amt-worker and amt, so it knows none of them: no "
        "orchestrator/, worker/, cli/, amt/v1/ (but aws.pb.h, the AWS wire's field options)"),
})

# (file, include) pairs allowed on top of their folder's rule, each with its reason.
EXCEPTIONS = {
    ("cli/run.cc", "orchestrator/daemon/daemon.h"):
        "`amt run` embeds an orchestrator (docs/architecture.md: cli/ `amt run`)",
}

CHECKED_TOPS = ["orchestrator", "worker", "cli", "common"]
SOURCE_SUFFIXES = (".h", ".cc", ".hpp", ".cpp")


def folder_of(rel):
    """The rule key for a file path relative to the root."""
    parts = rel.split("/")
    if parts[0] == "orchestrator":
        return "orchestrator" if len(parts) == 2 else "orchestrator/" + parts[1]
    return parts[0]


def check_file(rel, text):
    problems = []
    folder = folder_of(rel)
    is_main = os.path.basename(rel) == "main.cc"
    for number, line in enumerate(text.splitlines(), start=1):
        m = INCLUDE_RE.match(line)
        if not m:
            continue
        path = m.group(2)
        where = "%s:%d" % (rel, number)
        if (rel, path) in EXCEPTIONS:
            continue
        if path == "CLI/CLI.hpp" and not is_main:
            problems.append("%s: [cli11] includes <%s>: CLI11 only in a main.cc (about 7 s per "
                            "translation unit; docs/style.md)" % (where, path))
            continue
        if folder in RULES:
            name, allow, meaning = RULES[folder]
            if not any(re.fullmatch(p, path) for p in allow):
                problems.append("%s: [%s] includes \"%s\": %s" % (where, name, path, meaning))
        else:
            problems.append("%s: [no-rule] %s has no layering rule: add one to "
                            "scripts/check-layering.py" % (where, folder))
            break
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    args = parser.parse_args()
    root = os.path.abspath(args.root)

    problems = []
    files = 0
    for top in CHECKED_TOPS:
        base = os.path.join(root, top)
        if not os.path.isdir(base):
            problems.append("%s: [missing] no such folder under %s" % (top, root))
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for filename in sorted(filenames):
                if not filename.endswith(SOURCE_SUFFIXES):
                    continue
                full = os.path.join(dirpath, filename)
                rel = os.path.relpath(full, root).replace(os.sep, "/")
                with open(full, encoding="utf-8", errors="replace") as f:
                    problems.extend(check_file(rel, f.read()))
                files += 1
    for p in problems:
        print(p)
    if problems:
        print("layering: %d violation(s) in %d files (rules: scripts/check-layering.py)"
              % (len(problems), files), file=sys.stderr)
        return 1
    print("layering: %d files, no include crosses the layering" % files)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Self-test of scripts/check-layering.py: it must fail, naming file, line and rule, on a small
tree that breaks each rule, and pass on one that keeps them. Without this the check could pass
silently (a broken regex, a folder it no longer walks). Python 3 standard library only."""

import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                      "check-layering.py")

# A tree that keeps every rule: one file per checked folder.
GOOD = {
    "orchestrator/search/random.cc": '#include "orchestrator/search/random.h"\n#include <vector>\n'
                                     '#include "absl/status/statusor.h"\n#include <Eigen/Core>\n',
    "orchestrator/search/gp_model.h": "#include <random>\n#include <Eigen/Cholesky>\n"
                                      '#include "amt/v1/tuning.pb.h"\n',
    "orchestrator/stopping/median_rule.cc": '#include "common/status_macros.h"\n',
    "orchestrator/stopping/decision.cc": "#include <charconv>\n#include <system_error>\n",
    "orchestrator/spot/spot.cc": '#include <cmath>\n#include "absl/status/status.h"\n',
    "orchestrator/metrics/metric_parser.cc": '#include "re2/re2.h"\n',
    "orchestrator/validation/validation.cc": '#include "common/errors.h"\n',
    "orchestrator/auth/crypto.cc": '#include "orchestrator/auth/crypto.h"\n'
                                   "#include <openssl/hmac.h>\n#include \"absl/status/status.h\"\n",
    "orchestrator/store/sqlite_store.cc": "#include <sqlite3.h>\n#include \"amt/v1/state.pb.h\"\n",
    "orchestrator/core/orchestrator.cc": '#include "orchestrator/store/store.h"\n'
                                         '#include "orchestrator/search/strategy.h"\n',
    "orchestrator/api/loop.cc": '#include "orchestrator/core/orchestrator.h"\n'
                                "#include <grpcpp/grpcpp.h>\n#include <boost/asio/post.hpp>\n",
    "orchestrator/api/worker_service.cc": '#include "amt/v1/worker.grpc.pb.h"\n'
                                          '#include "orchestrator/metrics/metric_parser.h"\n'
                                          '#include "common/mutex.h"\n',
    "orchestrator/gateway/aws_json.cc": '#include "orchestrator/api/tuning_service.h"\n',
    "orchestrator/gateway/http_session.h": "#include <boost/beast/http.hpp>\n"
                                           '#include "orchestrator/auth/sigv4.h"\n',
    "orchestrator/gateway/s3/s3_rest.cc": '#include "orchestrator/s3/object_store.h"\n'
                                          "#include <fcntl.h>\n#include <zlib.h>\n",
    "orchestrator/gateway/web_page.cc": '#include "web/web_assets.h"\n#include <openssl/sha.h>\n',
    "orchestrator/daemon/daemon.cc": '#include "orchestrator/gateway/http_server.h"\n'
                                     '#include "orchestrator/executor/slurm_executor.h"\n'
                                     '#include "orchestrator/store/store.h"\n#include <spawn.h>\n',
    "orchestrator/main.cc": '#include "orchestrator/daemon/daemon.h"\n#include "CLI/CLI.hpp"\n'
                            "#include <csignal>\n",
    "worker/agent.cc": '#include "amt/v1/worker.grpc.pb.h"\n#include <sys/wait.h>\n',
    "cli/run.cc": '#include "orchestrator/daemon/daemon.h"\n',
    "cli/commands.cc": '#include "amt/v1/tuning.grpc.pb.h"\n',
    "common/json.cc": '#include "google/protobuf/message.h"\n',
}

# (file, text, the rule the report must name)
BAD = [
    ("orchestrator/search/bad.cc", '#include "orchestrator/core/orchestrator.h"\n', "[pure]"),
    ("orchestrator/search/clock.cc", '#include "common/clock.h"\n', "[pure]"),
    ("orchestrator/stopping/bad.cc", "#include <unistd.h>\n", "[pure]"),
    ("orchestrator/stopping/grpc.cc", "#include <grpcpp/grpcpp.h>\n", "[pure]"),
    ("orchestrator/search/boost.h", "#include <boost/asio.hpp>\n", "[pure]"),
    # search/, stopping/, spot/ take only the computing standard headers: no I/O, clock,
    # threads, nor Abseil past absl/status.
    ("orchestrator/search/io.cc", "#include <fstream>\n", "[pure]"),
    ("orchestrator/search/files.cc", "#include <filesystem>\n", "[pure]"),
    ("orchestrator/search/thread.h", "#include <thread>\n", "[pure]"),
    ("orchestrator/search/print.cc", "#include <iostream>\n", "[pure]"),
    ("orchestrator/stopping/chrono.cc", "#include <chrono>\n", "[pure]"),
    ("orchestrator/stopping/mutex.cc", "#include <mutex>\n", "[pure]"),
    ("orchestrator/spot/stdio.cc", "#include <cstdio>\n", "[pure]"),
    ("orchestrator/spot/ctime.cc", "#include <ctime>\n", "[pure]"),
    ("orchestrator/spot/absl_mutex.cc", '#include "absl/synchronization/mutex.h"\n', "[pure]"),
    ("orchestrator/auth/bad.cc", '#include "orchestrator/gateway/http_server.h"\n', "[pure]"),
    ("orchestrator/auth/beast.cc", "#include <boost/beast/http.hpp>\n", "[pure]"),
    ("orchestrator/auth/clock.cc", '#include "common/clock.h"\n', "[pure]"),
    ("orchestrator/store/bad.cc", '#include "amt/v1/tuning.grpc.pb.h"\n', "[no-wire]"),
    ("orchestrator/store/core.cc", '#include "orchestrator/core/orchestrator.h"\n', "[no-wire]"),
    ("orchestrator/core/bad.cc", '#include "orchestrator/api/loop.h"\n', "[no-wire]"),
    ("orchestrator/core/beast.cc", "#include <boost/beast/http.hpp>\n", "[no-wire]"),
    ("orchestrator/core/grpc.h", '#  include "grpcpp/server.h"\n', "[no-wire]"),
    ("orchestrator/api/bad.cc", '#include "orchestrator/gateway/http_server.h"\n', "[api]"),
    # api/, gateway/, daemon/ and main.cc are allow lists: a folder they do not list fails,
    # whether or not it was ever thought of (executor/ was in no deny list).
    ("orchestrator/api/store.cc", '#include "orchestrator/store/store.h"\n', "[api]"),
    ("orchestrator/api/beast.cc", "#include <boost/beast/http.hpp>\n", "[api]"),
    ("orchestrator/api/cli.cc", '#include "cli/commands.h"\n', "[api]"),
    ("orchestrator/gateway/bad.cc", '#include "orchestrator/store/store.h"\n', "[gateway]"),
    ("orchestrator/gateway/executor.cc", '#include "orchestrator/executor/slurm_executor.h"\n',
     "[gateway]"),
    ("orchestrator/gateway/s3/core.h", '#include "orchestrator/core/orchestrator.h"\n',
     "[gateway]"),
    ("orchestrator/gateway/grpc.cc", "#include <grpcpp/grpcpp.h>\n", "[gateway]"),
    ("orchestrator/daemon/bad.cc", '#include "worker/agent.h"\n', "[assembly]"),
    ("orchestrator/daemon/search.cc", '#include "orchestrator/search/strategy.h"\n',
     "[assembly]"),
    ("orchestrator/daemon/web.cc", '#include "web/web_assets.h"\n', "[assembly]"),
    ("orchestrator/worker_main.cc", '#include "worker/agent.h"\n', "[assembly]"),
    ("orchestrator/core_main.cc", '#include "orchestrator/core/orchestrator.h"\n', "[assembly]"),
    ("worker/bad.cc", '#include "orchestrator/core/orchestrator.h"\n', "[protocol]"),
    ("worker/tuning.cc", '#include "amt/v1/tuning.pb.h"\n', "[protocol]"),
    ("cli/commands2.cc", '#include "orchestrator/daemon/daemon.h"\n', "[client]"),
    ("cli/worker.cc", '#include "worker/agent.h"\n', "[client]"),
    ("common/bad.cc", '#include "amt/v1/tuning.pb.h"\n', "[common]"),
    ("cli/commands3.cc", '#include "CLI/CLI.hpp"\n', "[cli11]"),
    ("orchestrator/newlib/x.cc", "#include <vector>\n", "[no-rule]"),
]


def write_tree(root, files):
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


def run(root):
    return subprocess.run([sys.executable, SCRIPT, "--root", root], capture_output=True,
                          text=True)


class CheckLayeringTest(unittest.TestCase):
    def test_passes_on_a_tree_that_keeps_the_rules(self):
        with tempfile.TemporaryDirectory() as root:
            write_tree(root, GOOD)
            result = run(root)
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
            self.assertIn("%d files" % len(GOOD), result.stdout)

    def test_fails_with_file_line_and_rule_for_each_violation(self):
        for rel, text, rule in BAD:
            with self.subTest(file=rel), tempfile.TemporaryDirectory() as root:
                files = dict(GOOD)
                files[rel] = "// a comment first\n" + text
                write_tree(root, files)
                result = run(root)
                self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
                lines = result.stdout.splitlines()
                self.assertEqual(len(lines), 1, result.stdout)
                self.assertTrue(lines[0].startswith("%s:2: %s" % (rel, rule)), lines[0])

    def test_commented_out_include_is_not_an_include(self):
        with tempfile.TemporaryDirectory() as root:
            files = dict(GOOD)
            files["orchestrator/search/c.cc"] = '// #include "orchestrator/core/orchestrator.h"\n'
            write_tree(root, files)
            self.assertEqual(run(root).returncode, 0)

    def test_fails_when_a_checked_folder_is_missing(self):
        with tempfile.TemporaryDirectory() as root:
            files = {k: v for k, v in GOOD.items() if not k.startswith("worker/")}
            write_tree(root, files)
            result = run(root)
            self.assertEqual(result.returncode, 1)
            self.assertIn("worker: [missing]", result.stdout)


if __name__ == "__main__":
    unittest.main()

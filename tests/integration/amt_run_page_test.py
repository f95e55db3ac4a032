#!/usr/bin/env python3
"""`amt run` serves the web page while it runs: the real amt, its embedded amtd and the toy trainer.

`amt run examples/auto-early-stopping.json --http-port 0 --keep-serving` prints the page's address
for the job, serves it while the job runs and, with --keep-serving, after it has ended; the page's
HTML and the charts' read (AmtLocal.ExplainHyperParameterTuningJob) answer there; Ctrl-C (SIGINT)
ends it with the job's exit code.
"""
import argparse
import json
import os
import re
import signal
import sys
import tempfile
import unittest
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python",
                                "src"))
import amt_local  # noqa: E402

ARGS = None


def post(url, target, body):
    request = urllib.request.Request(url + "/", data=json.dumps(body).encode(), method="POST",
                                     headers={"X-Amz-Target": target,
                                              "Content-Type": "application/x-amz-json-1.1"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


class AmtRunPageTest(unittest.TestCase):
    def test_prints_the_page_serves_it_and_keeps_it_until_ctrl_c(self):
        with tempfile.TemporaryDirectory() as work:
            job_file = os.path.join(ARGS.source_dir, "examples", "auto-early-stopping.json")
            # Its stdout read line by line as it comes (no sleeps), its stderr kept.
            with amt_local.Process(
                    [os.path.join(ARGS.bin_dir, "amt"), "run", job_file, "--data-dir",
                     os.path.join(work, "amt"), "--http-port", "0", "--keep-serving", "--quiet"],
                    quiet=True) as amt:
                lines = []
                page = None
                while True:
                    line = amt.next_line(timeout=240)
                    if line is None:
                        break
                    lines.append(line)
                    found = re.match(r"The page: (http://127\.0\.0\.1:\d+)/#/tuning-jobs/(\S+)$",
                                     line.strip())
                    if found:
                        page, name = found.group(1), found.group(2)
                    if line.startswith("The page stays at "):
                        break
                self.assertIsNotNone(page, "".join(lines) + amt.stderr_text())
                self.assertEqual(line.strip(), "The page stays at %s/ until Ctrl-C." % page)

                request = urllib.request.Request(page + "/", headers={"Accept": "text/html"})
                with urllib.request.urlopen(request, timeout=30) as response:
                    html = response.read().decode()
                self.assertIn('<script src="/ui/charts.js" defer></script>', html)

                explain = post(page, "AmtLocal.ExplainHyperParameterTuningJob",
                               {"HyperParameterTuningJobName": name})
                self.assertEqual(explain["HyperParameterTuningJobName"], name)
                self.assertEqual(explain["EarlyStopping"], "Auto")
                described = post(page, "SageMaker.DescribeHyperParameterTuningJob",
                                 {"HyperParameterTuningJobName": name})
                limit = described["HyperParameterTuningJobConfig"]["ResourceLimits"][
                    "MaxNumberOfTrainingJobs"]
                self.assertEqual(len(explain["TrainingJobs"]), limit)
                for job in explain["TrainingJobs"]:
                    self.assertGreater(len(job.get("ObjectiveValues", [])), 0, job)
                stopped = [j for j in explain["TrainingJobs"] if j["TrainingJobStatus"] == "Stopped"]
                for job in stopped:  # each stop is drawn with amt explain's sentence
                    self.assertTrue(job["Decisions"][-1]["Stop"], job)
                    self.assertIn(": stop", job["Decisions"][-1]["Explanation"])

                code = amt.stop(signal.SIGINT, timeout=60)  # Ctrl-C; SIGKILL after 60 s
                self.assertEqual(code, 0, "".join(lines) + amt.rest_of_stdout() +
                                 amt.stderr_text())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--source-dir", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest)

#!/usr/bin/env python3
"""The web page's render benchmark: learning curves of N training jobs x E emissions in Chromium.

Opens bench/web/render.html (the page's own web/dom.js, web/charts.js and uPlot, with a synthetic
ExplainHyperParameterTuningJob answer) in Debian's headless Chromium, several times per size, and
prints the median time from the data to the drawn canvas. The baseline, in the same run, is a
10-job chart: the ratio says what the job count costs. Target (issue 12): 1,000 jobs x 100
emissions in under 1 s on a 2-core machine. --strict exits 1 when it is missed.

    /usr/bin/python3 bench/web/render_bench.py [--runs 5] [--strict]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
UPLOT = os.path.join(HERE, "..", "..", "web", "node_modules", "uplot", "dist", "uPlot.iife.min.js")


def render(jobs, epochs, profile):
    url = "file://%s/render.html?jobs=%d&epochs=%d" % (HERE, jobs, epochs)
    out = subprocess.run(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--allow-file-access-from-files", "--user-data-dir=" + profile, "--window-size=1200,900",
         "--dump-dom", url],
        capture_output=True, text=True, timeout=120, check=True).stdout
    found = re.search(r'<pre id="result">(.*?)</pre>', out, re.S)
    if not found or not found.group(1):
        raise RuntimeError("the page wrote no result for %d x %d" % (jobs, epochs))
    return json.loads(found.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--strict", action="store_true")
    args = parser.parse_args()
    if not os.path.exists(UPLOT):
        sys.exit("web/node_modules is missing: run scripts/install-deps.sh")
    sizes = [(10, 100), (100, 100), (1000, 100)]
    rows = []
    with tempfile.TemporaryDirectory() as profile:
        for jobs, epochs in sizes:
            runs = [render(jobs, epochs, profile) for _ in range(args.runs)]
            if any(r["series"] != jobs for r in runs):
                sys.exit("the chart drew %s series for %d jobs" % ([r["series"] for r in runs], jobs))
            rows.append((jobs, epochs, statistics.median(r["build_ms"] for r in runs),
                         statistics.median(r["total_ms"] for r in runs),
                         max(r["total_ms"] for r in runs), runs[0]["markers"]))
    base = rows[0][3]
    print("| jobs x emissions | markers | build (median) | to drawn (median) | worst | vs 10 jobs |")
    print("|---|---|---|---|---|---|")
    for jobs, epochs, build, total, worst, markers in rows:
        print("| %d x %d | %d | %.0f ms | %.0f ms | %.0f ms | %.1fx |" %
              (jobs, epochs, markers, build, total, worst, total / base))
    target = rows[-1][3]
    met = target < 1000
    print("target: 1,000 x 100 drawn in under 1,000 ms: %.0f ms, %s" % (target, "met" if met else "MISSED"))
    if args.strict and not met:
        sys.exit(1)


if __name__ == "__main__":
    main()

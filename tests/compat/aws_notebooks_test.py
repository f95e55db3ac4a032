#!/usr/bin/env python3
"""AWS's own hyperparameter-tuning notebooks, their code cells unchanged, against amtd.

The notebooks come from github.com/aws/amazon-sagemaker-examples and are not part of this
repository: give a checkout (scripts/fetch-aws-examples.sh makes one) with --examples DIR or
$AMT_AWS_EXAMPLES; without one this prints a `SKIP: ...` line and exits 0. Run by CTest as
compat.aws_notebooks (tests/compat/CMakeLists.txt) with the pyenv python (boto3 1.43):

    scripts/fetch-aws-examples.sh ~/amazon-sagemaker-examples
    python3 tests/compat/aws_notebooks_test.py --bin-dir build/bin \
        --sdk ../shared/vendor/sagemaker-python-sdk --examples ~/amazon-sagemaker-examples

Each notebook gets its own amtd (a fresh data dir) and runs in a process of its own whose
environment is the test's, less every AWS_*, AMT_*, proxy and PYTHONPATH variable, plus what
`eval "$(amt env)"` exports (AWS_ENDPOINT_URL, HTTPS_PROXY + AWS_CA_BUNDLE, keys, region): what a
user's notebook kernel has after that one line. That process (this file with --run-cells) puts
the SDK first and Debian's dist-packages last on sys.path, as tests/compat/https_proxy_test.py
does, then executes the notebook's code cells in order in one namespace, with the notebook's
folder (a copy, in a temporary dir) as its working directory. Nothing of the SDK, boto3 or
botocore is patched. The code cells run as written except:

- IPython's `!` and `%` lines. `!pip install` (and `%pip`, `conda`) is skipped and listed;
  downloads of sample data (`!wget`, `!curl`, `!aws s3 cp`) are replaced by a generated stand-in
  of the same format (STAND_INS); harmless commands (`unzip`, `pygmentize`, `ls`, ...) run
  through the shell as IPython runs them (output printed, exit status ignored); any other is
  listed as not run. Other magics are listed as not run.
- Cells that deploy an endpoint, predict with it or delete it, and the cells between the deploy
  and the delete (they only prepare the endpoint's input), are skipped and listed: amt-local has
  no endpoints.
- A cell's last expression is printed, as a notebook displays it.

Stand-in data (generated, small, so that each training job takes seconds):
- XGBoost direct marketing: `!wget .../bank-additional.zip` writes a bank-additional.zip whose
  bank-additional/bank-additional-full.csv has the 21 columns of the UCI Bank Marketing set
  (semicolon-separated, strings quoted), 4,000 rows, and a y that depends on poutcome, month,
  contact, job, age, campaign and previous; `!unzip -o bank-additional.zip` then runs as written.
- PyTorch MNIST: the notebook downloads with torchvision (`MNIST(..., download=True)` from AWS's
  sample bucket), which checks the files' MD5 sums, so no stand-in can be served in their place:
  data/MNIST/raw/ holds the four MNIST files (IDX format, raw and .gz, as torchvision leaves
  them; 2,000 training and 500 test images of 7-segment digits) before the notebook starts,
  and the cell runs as written, finding the data already there.

Every AWS operation the notebook calls is recorded through botocore's event hooks: the process
appends one `before-call.*.*` handler to botocore.handlers.BUILTIN_HANDLERS, the list of
handlers botocore registers on every session it creates (instrumentation only: no function of
botocore or the SDK is replaced). They are printed at the end with each notebook's wall time and
the training jobs amtd ran. The test fails when a cell that runs raises, or when a tuning or
training job did not end Completed with all of its jobs Completed.
"""

import argparse
import ast
import builtins
import collections
import glob
import gzip
import json
import math
import os
import random
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.parse
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python",
                                "src"))
import amt_local  # noqa: E402

SCRIPT = os.path.abspath(__file__)
# The commit of amazon-sagemaker-examples scripts/fetch-aws-examples.sh checks out: the last one
# with both notebooks in hyperparameter_tuning/ (the direct-marketing one was removed after it).
EXAMPLES_COMMIT = "c4da8588e467aaeb33330c00d60d098c1055b07c"


# ---------------------------------------------------------------------------------------------
# Stand-in data.

BANK_COLUMNS = ["age", "job", "marital", "education", "default", "housing", "loan", "contact",
                "month", "day_of_week", "duration", "campaign", "pdays", "previous", "poutcome",
                "emp.var.rate", "cons.price.idx", "cons.conf.idx", "euribor3m", "nr.employed",
                "y"]
JOBS = ["admin.", "blue-collar", "entrepreneur", "housemaid", "management", "retired",
        "self-employed", "services", "student", "technician", "unemployed", "unknown"]
EDUCATION = ["basic.4y", "basic.6y", "basic.9y", "high.school", "illiterate",
             "professional.course", "university.degree", "unknown"]
MONTHS = ["mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
# (emp.var.rate, cons.price.idx, cons.conf.idx, euribor3m, nr.employed): the economy of a month
ECONOMY = [(1.1, 93.994, -36.4, 4.857, 5191.0), (1.4, 93.918, -42.7, 4.962, 5228.1),
           (-0.1, 93.2, -42.0, 4.021, 5195.8), (-1.8, 92.893, -46.2, 1.313, 5099.1),
           (-2.9, 92.201, -31.4, 0.869, 5076.2), (-3.4, 92.649, -30.1, 0.715, 5017.5),
           (-1.1, 94.199, -37.5, 0.884, 4963.6)]


def bank_rows(count, seed=1729):
    """Rows of bank-additional-full.csv's 21 columns, with a y that the other columns predict."""
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        age = max(17, min(95, int(rng.gauss(40, 10.5))))
        job = rng.choices(JOBS, weights=[25, 22, 4, 3, 7, 4 + (age > 60) * 30, 3, 10,
                                         2 + (age < 25) * 20, 16, 3, 1])[0]
        marital = rng.choices(["married", "single", "divorced", "unknown"], [60, 28, 11, 1])[0]
        education = rng.choice(EDUCATION)
        default = rng.choices(["no", "unknown", "yes"], [79, 20, 1])[0]
        housing = rng.choices(["yes", "no", "unknown"], [52, 45, 3])[0]
        loan = rng.choices(["no", "yes", "unknown"], [82, 15, 3])[0]
        contact = rng.choices(["cellular", "telephone"], [63, 37])[0]
        month = rng.choices(MONTHS, [2, 6, 33, 13, 17, 15, 2, 2, 9, 1])[0]
        day = rng.choice(["mon", "tue", "wed", "thu", "fri"])
        campaign = min(40, 1 + int(rng.expovariate(0.6)))
        poutcome = rng.choices(["nonexistent", "failure", "success"], [86, 10, 4])[0]
        if poutcome == "nonexistent":
            pdays, previous = 999, 0
        else:
            pdays = 999 if poutcome == "failure" and rng.random() < 0.8 else rng.randint(0, 27)
            previous = rng.randint(1, 6)
        economy = ECONOMY[rng.randrange(len(ECONOMY))]
        score = -2.7 + {"success": 2.4, "failure": 0.4}.get(poutcome, 0.0)
        score += 1.1 if month in ("mar", "sep", "oct", "dec") else 0.0
        score += 0.6 if contact == "cellular" else 0.0
        score += 0.9 if job in ("student", "retired") else 0.0
        score += 0.5 if age > 60 or age < 25 else 0.0
        score += 0.5 if previous > 0 else 0.0
        score -= 0.18 * (campaign - 1)
        score -= 0.6 * economy[0] / 3.4  # as in the real data, more yes when rates are low
        y = "yes" if rng.random() < 1 / (1 + math.exp(-score)) else "no"
        duration = int(rng.expovariate(1 / 250.0)) + (300 if y == "yes" else 0)
        rows.append([age, job, marital, education, default, housing, loan, contact, month, day,
                     duration, campaign, pdays, previous, poutcome] + list(economy) + [y])
    return rows


def bank_csv(rows):
    def cell(value):
        if isinstance(value, str):
            return '"%s"' % value
        return "%g" % value if isinstance(value, float) else str(value)
    lines = [";".join('"%s"' % c for c in BANK_COLUMNS)]
    lines += [";".join(cell(v) for v in row) for row in rows]
    return ("\n".join(lines) + "\n").encode()


def make_bank_additional_zip(folder):
    """bank-additional.zip as the UCI archive lays it out: bank-additional/ with the full set,
    its 10% sample and a names file; generated rows."""
    rows = bank_rows(4000)
    path = os.path.join(folder, "bank-additional.zip")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("bank-additional/bank-additional-full.csv", bank_csv(rows))
        archive.writestr("bank-additional/bank-additional.csv", bank_csv(rows[::10]))
        archive.writestr("bank-additional/bank-additional-names.txt",
                         "A stand-in for the UCI Bank Marketing data set, generated by amt-local's "
                         "tests/compat/aws_notebooks_test.py: the 21 columns of "
                         "bank-additional-full.csv, %d generated rows.\n" % len(rows))
    return "bank-additional.zip: a stand-in with bank-additional/bank-additional-full.csv " \
           "(the 21 columns of the UCI Bank Marketing set, %d generated rows, %d with y=yes)" % (
               len(rows), sum(1 for r in rows if r[-1] == "yes"))


# What a `!wget`/`!curl`/`!aws s3 cp` line fetches, by file name: the function writes a stand-in
# into the given folder and returns a line saying what it wrote.
STAND_INS = {"bank-additional.zip": make_bank_additional_zip}

# 7-segment digits: segments a (top), b (top right), c (bottom right), d (bottom), e (bottom
# left), f (top left), g (middle).
SEGMENTS = {0: "abcdef", 1: "bc", 2: "abdeg", 3: "abcdg", 4: "bcfg", 5: "acdfg", 6: "acdefg",
            7: "abc", 8: "abcdefg", 9: "abcdfg"}


def digit_image(rng, label):
    pixels = bytearray(28 * 28)
    left, top = 8 + rng.randint(-3, 3), 4 + rng.randint(-2, 2)
    width, height, thick = rng.randint(9, 12), rng.randint(17, 20), rng.randint(2, 3)
    half = height // 2
    boxes = {"a": (left, top, left + width, top + thick),
             "d": (left, top + height - thick, left + width, top + height),
             "g": (left, top + half - thick // 2, left + width, top + half - thick // 2 + thick),
             "f": (left, top, left + thick, top + half),
             "e": (left, top + half, left + thick, top + height),
             "b": (left + width - thick, top, left + width, top + half),
             "c": (left + width - thick, top + half, left + width, top + height)}
    value = rng.randint(170, 255)
    for segment in SEGMENTS[label]:
        x0, y0, x1, y1 = boxes[segment]
        for y in range(max(0, y0), min(28, y1)):
            for x in range(max(0, x0), min(28, x1)):
                pixels[y * 28 + x] = value
    for _ in range(rng.randint(10, 30)):  # noise
        pixels[rng.randrange(784)] = rng.randint(0, 255)
    return bytes(pixels)


def write_mnist_raw(folder, train=2000, test=500, seed=7):
    """The four MNIST files in torchvision's data/MNIST/raw/ layout (IDX, raw and .gz)."""
    os.makedirs(folder, exist_ok=True)
    rng = random.Random(seed)
    for prefix, count in (("train", train), ("t10k", test)):
        labels = [rng.randrange(10) for _ in range(count)]
        images = b"".join(digit_image(rng, label) for label in labels)
        files = {"%s-images-idx3-ubyte" % prefix: struct.pack(">IIII", 2051, count, 28, 28) +
                 images,
                 "%s-labels-idx1-ubyte" % prefix: struct.pack(">II", 2049, count) +
                 bytes(labels)}
        for name, content in files.items():
            with open(os.path.join(folder, name), "wb") as f:
                f.write(content)
            with gzip.open(os.path.join(folder, name + ".gz"), "wb") as f:
                f.write(content)
    return "data/MNIST/raw: a stand-in of the four MNIST files (IDX format, raw and .gz), " \
           "%d training and %d test images of 7-segment digits" % (train, test)


# ---------------------------------------------------------------------------------------------
# The notebooks.

class Notebook:
    def __init__(self, name, candidates, needs, prepare=None):
        self.name = name
        self.candidates = candidates  # glob patterns under the examples dir, first match wins
        self.needs = needs            # modules /usr/bin/python3 (the jobs' python) must import
        self.prepare = prepare        # prepare(folder): stand-in data put there before it runs


NOTEBOOKS = [
    Notebook("xgboost_direct_marketing",
             ["hyperparameter_tuning/xgboost_direct_marketing/"
              "hpo_xgboost_direct_marketing_sagemaker_python_sdk.ipynb"],
             needs=["xgboost", "pandas"]),
    Notebook("pytorch_mnist",
             ["hyperparameter_tuning/pytorch_mnist/hpo_pytorch_mnist.ipynb",
              # Where the same notebook (and mnist.py) moved in 2024, under a folder whose name
              # starts with spaces.
              "*build_and_train_models/sm-hyperparameter_tuning_pytorch/"
              "sm-hyperparameter_tuning_pytorch.ipynb"],
             needs=["torch", "torchvision"],
             prepare=lambda folder: write_mnist_raw(os.path.join(folder, "data", "MNIST", "raw"))),
]

# Cells about endpoints, which amt-local does not have.
DEPLOY = re.compile(r"\.deploy\(|\bdeploy_model\(|\.create_endpoint\(")
ENDPOINT_USE = re.compile(r"\.predict\(|invoke_endpoint|\.delete_endpoint\(|\.delete_model\(|"
                          r"\bdelete_predictor\(|\bpredictor\.")
ENDPOINT_END = re.compile(r"\.delete_endpoint\(|\bdelete_predictor\(")
HARMLESS = {"unzip", "gunzip", "tar", "pygmentize", "ls", "cat", "head", "tail", "wc", "echo",
            "pwd", "mkdir", "cp", "mv", "rm", "du", "file", "tree"}


# ---------------------------------------------------------------------------------------------
# --run-cells: the notebook's process.

class CellRunner:
    def __init__(self, notebook_path, report_path):
        self.path = notebook_path
        self.report_path = report_path
        self.namespace = {"__name__": "__main__", "__builtins__": builtins,
                          "display": self.display}
        self.namespace["__amt_shell__"] = self.shell
        self.namespace["__amt_magic__"] = self.magic
        self.cells = []
        self.shell_lines = []
        self.stand_ins = []
        self.calls = collections.Counter()
        self.endpoints = collections.defaultdict(set)
        self.seconds = collections.defaultdict(list)
        self.lock = threading.Lock()

    # botocore's before-call and after-call events, from every session botocore creates.
    def record(self, event_name, params=None, context=None, **_):
        _, service, operation = event_name.split(".", 2)
        key = "%s.%s" % (service, operation)
        url = urllib.parse.urlsplit((params or {}).get("url", ""))
        if context is not None:
            context["amt_notebook_call_started"] = time.monotonic()
        with self.lock:
            self.calls[key] += 1
            if url.netloc:
                self.endpoints[key].add("%s://%s" % (url.scheme, url.netloc))

    def record_end(self, event_name, context=None, **_):
        _, service, operation = event_name.split(".", 2)
        started = (context or {}).get("amt_notebook_call_started")
        if started is not None:
            seconds = time.monotonic() - started
            with self.lock:
                self.seconds[service + "." + operation].append(seconds)

    @staticmethod
    def display(*values):
        for value in values:
            text = value if isinstance(value, str) else repr(value)
            print(text[:5000] + (" ..." if len(text) > 5000 else ""))

    def expand(self, command):
        """IPython's expansion of {expr} and $name in a ! line."""
        command = re.sub(r"\{([^{}]+)\}", lambda m: str(eval(m.group(1), self.namespace)),
                         command)
        return re.sub(r"\$(\w+)", lambda m: str(self.namespace[m.group(1)])
                      if m.group(1) in self.namespace else m.group(0), command)

    def shell(self, command):
        command = self.expand(command)
        words = shlex.split(command)
        program = os.path.basename(words[0]) if words else ""
        if program in ("pip", "pip3", "conda") or words[1:3] == ["-m", "pip"]:
            self.shell_lines.append({"line": "!" + command, "action": "skipped (installs)"})
            print("[aws-notebooks] skipped: !%s" % command)
            return
        sources = []
        if program in ("wget", "curl"):
            sources = [w for w in words[1:] if re.match(r"^(https?|ftp)://", w)]
        elif program == "aws" and words[1:3] == ["s3", "cp"]:
            sources = [w for w in words[3:] if w.startswith("s3://")][:1]
        if sources:
            for source in sources:
                name = os.path.basename(urllib.parse.urlsplit(source).path)
                if name not in STAND_INS:
                    raise RuntimeError("a download with no stand-in: %s (aws_notebooks_test.py "
                                       "STAND_INS)" % source)
                what = STAND_INS[name](os.getcwd())
                self.stand_ins.append(what)
                self.shell_lines.append({"line": "!" + command,
                                         "action": "replaced by a stand-in: " + what})
                print("[aws-notebooks] instead of !%s\n[aws-notebooks]   wrote %s" % (command,
                                                                                      what))
            return
        if program not in HARMLESS:
            self.shell_lines.append({"line": "!" + command,
                                     "action": "not run (not known to be harmless)"})
            print("[aws-notebooks] not run: !%s" % command)
            return
        self.shell_lines.append({"line": "!" + command, "action": "ran"})
        sys.stdout.flush()
        result = subprocess.run(command, shell=True, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace")
        out = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", result.stdout)  # pygmentize's colours
        print(out[:5000] + ("...\n" if len(out) > 5000 else ""), end="")

    def magic(self, line):
        words = line.split()
        action = "skipped (installs)" if words[:2] in (["pip", "install"], ["conda", "install"]) \
            else "not run (a magic)"
        self.shell_lines.append({"line": "%" + line, "action": action})
        print("[aws-notebooks] %s: %%%s" % (action, line))

    @staticmethod
    def transform(source):
        """The cell with each ! line a call of __amt_shell__ and each % line one of
        __amt_magic__ (at the line's indentation), as IPython turns them into calls."""
        out, lines = [], source.splitlines()
        i = 0
        while i < len(lines):
            line = lines[i]
            stripped = line.lstrip()
            indent = line[:len(line) - len(stripped)]
            if stripped.startswith("!") or (stripped.startswith("%") and
                                            not stripped.startswith("%%")):
                command = stripped[1:]
                while command.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    command = command[:-1] + " " + lines[i].strip()
                function = "__amt_shell__" if stripped[0] == "!" else "__amt_magic__"
                out.append("%s%s(%r)" % (indent, function, command))
            else:
                out.append(line)
            i += 1
        return "\n".join(out)

    def execute(self, source, filename):
        tree = ast.parse(self.transform(source), filename)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, filename, "exec"), self.namespace)
        if last is not None:
            value = eval(compile(last, filename, "eval"), self.namespace)
            if value is not None:
                self.display(value)

    def run(self):
        import botocore.handlers
        botocore.handlers.BUILTIN_HANDLERS.append(("before-call.*.*", self.record))
        botocore.handlers.BUILTIN_HANDLERS.append(("after-call.*.*", self.record_end))
        with open(self.path) as f:
            notebook = json.load(f)
        started = time.monotonic()
        error = None
        endpoint_section = None  # the cell that deployed, until the one that deletes
        count = 0
        for index, cell in enumerate(notebook["cells"]):
            if cell.get("cell_type") != "code":
                continue
            source = "".join(cell.get("source", []))
            if not source.strip():
                continue
            count += 1
            entry = {"cell": index, "code_cell": count,
                     "first_line": source.strip().splitlines()[0][:100]}
            reason = None
            if DEPLOY.search(source):
                reason = "deploys an endpoint"
                endpoint_section = index
            elif ENDPOINT_USE.search(source):
                reason = "uses or deletes the endpoint"
            elif endpoint_section is not None:
                reason = "prepares the input of the endpoint deployed in cell %d" % \
                    endpoint_section
            elif source.lstrip().startswith("%%"):
                reason = "a cell magic"
            if ENDPOINT_END.search(source):
                endpoint_section = None
            if error is not None:
                entry.update(status="not reached")
                self.cells.append(entry)
                continue
            if reason:
                entry.update(status="skipped", reason=reason)
                self.cells.append(entry)
                print("[aws-notebooks] cell %d skipped (%s): %s" % (index, reason,
                                                                    entry["first_line"]))
                continue
            print("[aws-notebooks] cell %d:\n%s" % (index, "\n".join(
                "    " + line for line in source.splitlines())), flush=True)
            cell_started = time.monotonic()
            try:
                self.execute(source, "<cell %d>" % index)
                entry["status"] = "ran"
            except BaseException as exception:  # pylint: disable=broad-except
                text = traceback.format_exc()
                print(text)
                entry["status"] = "failed"
                error = {"cell": index, "error": "%s: %s" % (type(exception).__name__,
                                                             exception),
                         "traceback": text[-4000:]}
            entry["seconds"] = round(time.monotonic() - cell_started, 1)
            print("[aws-notebooks] cell %d %s in %.1f s" % (index, entry["status"],
                                                            entry["seconds"]), flush=True)
            self.cells.append(entry)
        with self.lock:
            report = {"cells": self.cells, "shell_lines": self.shell_lines,
                      "stand_ins": self.stand_ins, "calls": dict(self.calls),
                      "endpoints": {k: sorted(v) for k, v in self.endpoints.items()},
                      "latency": {k: [round(sum(v) / len(v), 3), round(max(v), 3)]
                                  for k, v in self.seconds.items()},
                      "wall_s": round(time.monotonic() - started, 1), "error": error}
        with open(self.report_path, "w") as f:
            json.dump(report, f, indent=1)
        return 1 if error else 0


def run_cells(args):
    # The notebook's sys.path: the SDK first, Debian's packages (numpy, pandas, torch, ...)
    # last, this interpreter's own boto3 and botocore between; not this file's folder.
    if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(SCRIPT):
        del sys.path[0]
    sys.path.insert(0, args.sdk)
    sys.path.append("/usr/lib/python3/dist-packages")
    return CellRunner(args.run_cells, args.report).run()


# ---------------------------------------------------------------------------------------------
# The test: an amtd per notebook, `amt env`, the notebook's process, the jobs amtd ran.

def start_amtd(args, data_dir):
    # As examples/README.md starts it: Debian's python3 for the framework images, and one slot
    # per CPU (amtd's default) unless --slots says otherwise.
    return amt_local.Amtd(args.bin_dir, "--python", "/usr/bin/python3",
                          slots=args.slots or None, data_dir=data_dir)


def jobs_of(url):
    """The tuning and training jobs amtd has, described."""
    import boto3
    sm = boto3.client("sagemaker", endpoint_url=url, region_name="us-east-1",
                      aws_access_key_id="amt-local", aws_secret_access_key="amt-local")
    tuning = []
    for page in sm.get_paginator("list_hyper_parameter_tuning_jobs").paginate():
        for summary in page["HyperParameterTuningJobSummaries"]:
            tuning.append(sm.describe_hyper_parameter_tuning_job(
                HyperParameterTuningJobName=summary["HyperParameterTuningJobName"]))
    training = []
    for page in sm.get_paginator("list_training_jobs").paginate():
        training += page["TrainingJobSummaries"]
    return tuning, training


def stream(process, log, deadline):
    def kill_at_deadline():
        while process.poll() is None:
            if time.monotonic() > deadline:
                print("[aws-notebooks] over its time limit: killed", flush=True)
                process.kill()
                return
            time.sleep(1)
    threading.Thread(target=kill_at_deadline, daemon=True).start()
    for line in process.stdout:
        log.write(line)
        sys.stdout.write("  | " + line)
        sys.stdout.flush()
    return process.wait()


def run_notebook(args, notebook, path):
    """Runs one notebook against a fresh amtd; returns its result dict."""
    result = {"name": notebook.name, "path": os.path.relpath(path, args.examples),
              "problems": []}
    work = tempfile.mkdtemp(prefix="amt-aws-notebook-")
    folder = os.path.join(work, "notebook")
    shutil.copytree(os.path.dirname(path), folder)
    data_dir = os.path.join(work, "data")
    result["stand_ins"] = [notebook.prepare(folder)] if notebook.prepare else []
    amtd = None
    try:
        amtd = start_amtd(args, data_dir)
        url = amtd.url
        # The environment of a shell after `eval "$(amt env)"`, from this one less everything
        # that would reach AWS, amtd or the SDK otherwise.
        env = amtd.amt_env(endpoint_url=not args.proxy_only)
        report_path = os.path.join(work, "report.json")
        print("\n=== %s (%s) against amtd at %s, cwd %s" % (notebook.name, result["path"], url,
                                                           folder), flush=True)
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-u", SCRIPT, "--run-cells",
             os.path.join(folder, os.path.basename(path)), "--sdk", args.sdk,
             "--report", report_path],
            cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            errors="replace")
        with open(os.path.join(work, "notebook.log"), "w") as log:
            rc = stream(process, log, started + args.notebook_timeout)
        result["process_s"] = round(time.monotonic() - started, 1)
        report = {}
        if os.path.exists(report_path):
            with open(report_path) as f:
                report = json.load(f)
        prepared = result["stand_ins"]
        result.update(report)
        result["stand_ins"] = prepared + report.get("stand_ins", [])
        if rc != 0:
            error = report.get("error") or {"error": "the notebook's process exited %d" % rc}
            result["problems"].append("cell %s failed: %s" % (error.get("cell", "?"),
                                                              error["error"]))
        result["tuning"], result["training"] = jobs_of(url)
    finally:
        if amtd is not None:
            amtd.close()
        if args.keep_work:
            print("[aws-notebooks] kept %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    for job in result["tuning"]:
        counters = job["TrainingJobStatusCounters"]
        wanted = job["HyperParameterTuningJobConfig"]["ResourceLimits"].get(
            "MaxNumberOfTrainingJobs")
        if job["HyperParameterTuningJobStatus"] != "Completed":
            result["problems"].append("tuning job %s: %s %s" % (
                job["HyperParameterTuningJobName"], job["HyperParameterTuningJobStatus"],
                job.get("FailureReason", "")))
        if wanted is not None and counters["Completed"] != wanted:
            result["problems"].append("tuning job %s: %d of %d training jobs Completed (%s)" % (
                job["HyperParameterTuningJobName"], counters["Completed"], wanted,
                json.dumps(counters)))
    for job in result["training"]:
        if job["TrainingJobStatus"] != "Completed":
            result["problems"].append("training job %s: %s" % (job["TrainingJobName"],
                                                               job["TrainingJobStatus"]))
    if not result["tuning"] and not result["problems"]:
        result["problems"].append("the notebook started no tuning job")
    return result


def summary(result):
    lines = ["%s (%s): %s, notebook %.1f s" % (
        result["name"], result["path"], "FAILED" if result["problems"] else "passed",
        result.get("wall_s", result.get("process_s", 0)))]
    cells = result.get("cells", [])
    ran = [c for c in cells if c["status"] == "ran"]
    lines.append("  code cells: %d ran, %d skipped, %d failed, %d not reached" % (
        len(ran), sum(c["status"] == "skipped" for c in cells),
        sum(c["status"] == "failed" for c in cells),
        sum(c["status"] == "not reached" for c in cells)))
    for cell in cells:
        if cell["status"] == "skipped":
            lines.append("    skipped cell %d (%s): %s" % (cell["cell"], cell["reason"],
                                                          cell["first_line"]))
    slow = sorted(ran, key=lambda c: -c.get("seconds", 0))[:3]
    if slow:
        lines.append("  longest cells: " + ", ".join(
            "cell %d %.1f s (%s)" % (c["cell"], c["seconds"], c["first_line"][:40])
            for c in slow))
    for line in result.get("shell_lines", []):
        lines.append("  %s: %s" % (line["line"], line["action"]))
    for what in result.get("stand_ins", []):
        lines.append("  stand-in data: " + what)
    for job in result.get("tuning", []):
        counters = job["TrainingJobStatusCounters"]
        best = job.get("BestTrainingJob", {})
        objective = best.get("FinalHyperParameterTuningJobObjectiveMetric", {})
        started, ended = job.get("CreationTime"), job.get("HyperParameterTuningEndTime")
        lines.append("  tuning job %s (%s): %s; %d training jobs, %d completed, %d failed, "
                     "%d stopped; best %s %s = %s; %s" % (
                         job["HyperParameterTuningJobName"],
                         job["HyperParameterTuningJobConfig"]["Strategy"],
                         job["HyperParameterTuningJobStatus"],
                         sum(v for k, v in counters.items() if k != "RetryableError"),
                         counters["Completed"],
                         counters["NonRetryableError"] + counters["RetryableError"],
                         counters["Stopped"], best.get("TrainingJobName", "-"),
                         objective.get("MetricName", ""), objective.get("Value", "-"),
                         "%.0f s" % (ended - started).total_seconds()
                         if started and ended else "not ended"))
    outside = [j for j in result.get("training", [])
               if not j["TrainingJobName"].startswith(
                   tuple(t["HyperParameterTuningJobName"] for t in result.get("tuning", [])))]
    for job in outside:
        lines.append("  training job %s: %s" % (job["TrainingJobName"],
                                                job["TrainingJobStatus"]))
    lines.append("  training jobs in all: %d, %s" % (
        len(result.get("training", [])), dict(collections.Counter(
            j["TrainingJobStatus"] for j in result.get("training", [])))))
    calls = result.get("calls", {})
    lines.append("  AWS operations called (%d calls; seconds per call: mean/max; where):" %
                 sum(calls.values()))
    for key in sorted(calls):
        mean, most = result.get("latency", {}).get(key, (0, 0))
        lines.append("    %-42s x%-4d %6.3f/%6.3f  %s" % (
            key, calls[key], mean, most, ", ".join(result.get("endpoints", {}).get(key, []))))
    for problem in result["problems"]:
        lines.append("  PROBLEM: " + problem)
    return "\n".join(lines)


def sdk_problem(args):
    probe = subprocess.run(
        [sys.executable, "-c", "import sys; sys.path.insert(0, %r); "
         "sys.path.append('/usr/lib/python3/dist-packages'); import sagemaker" % args.sdk],
        capture_output=True, text=True)
    return None if probe.returncode == 0 else (probe.stderr.strip().splitlines() or ["?"])[-1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin-dir", default=os.path.join(os.path.dirname(SCRIPT), "..", "..",
                                                          "build", "bin"))
    parser.add_argument("--sdk", default=os.path.join(os.path.dirname(SCRIPT), "..", "..", "..",
                                                      "shared", "vendor", "sagemaker-python-sdk"))
    parser.add_argument("--examples", default=os.environ.get("AMT_AWS_EXAMPLES", ""),
                        help="a checkout of aws/amazon-sagemaker-examples (default: "
                             "$AMT_AWS_EXAMPLES); scripts/fetch-aws-examples.sh makes one")
    parser.add_argument("--only", action="append", default=[],
                        help="run only this notebook: " +
                             ", ".join(n.name for n in NOTEBOOKS))
    parser.add_argument("--slots", type=int, default=0,
                        help="amtd --slots (default: amtd's, one per CPU)")
    parser.add_argument("--notebook-timeout", type=float, default=700,
                        help="seconds one notebook may run")
    parser.add_argument("--proxy-only", action="store_true",
                        help="leave AWS_ENDPOINT_URL out of the notebooks' environment: every "
                             "AWS call goes to its amazonaws.com host through amtd's HTTPS proxy")
    parser.add_argument("--keep-work", action="store_true",
                        help="keep each notebook's temporary folder (copy, amtd data, log)")
    parser.add_argument("--run-cells", help=argparse.SUPPRESS)
    parser.add_argument("--report", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.sdk = os.path.abspath(args.sdk)
    if args.run_cells:
        return run_cells(args)

    how = ("give a checkout of github.com/aws/amazon-sagemaker-examples with --examples DIR or "
           "AMT_AWS_EXAMPLES=DIR (scripts/fetch-aws-examples.sh DIR makes one)")
    if not args.examples:
        print("SKIP: no AWS example notebooks: " + how)
        return 0
    args.examples = os.path.abspath(os.path.expanduser(args.examples))
    if not os.path.isdir(args.examples):
        print("SKIP: %s is not a folder: %s" % (args.examples, how))
        return 0
    found, missing = [], []
    for notebook in NOTEBOOKS:
        if args.only and notebook.name not in args.only:
            continue
        paths = [p for pattern in notebook.candidates
                 for p in sorted(glob.glob(os.path.join(args.examples, pattern)))]
        if paths:
            found.append((notebook, paths[0]))
        else:
            missing.append("NOT RUN: %s: none of %s under %s" % (
                notebook.name, notebook.candidates, args.examples))
    # A SKIP line is the output's first (CTest's SKIP_REGULAR_EXPRESSION).
    if not found:
        print("SKIP: no notebook of this test under %s: %s" % (args.examples, how))
        print("\n".join(missing))
        return 0
    problem = sdk_problem(args)
    if problem:
        print("SKIP: the SageMaker Python SDK does not import (%s); see "
              "tests/compat/sdk_compat_test.py" % problem)
        return 0
    if missing:
        print("\n".join(missing))
    args.bin_dir = os.path.abspath(args.bin_dir)
    results = []
    for notebook, path in found:
        check = subprocess.run(["/usr/bin/python3", "-c", "import " + ", ".join(notebook.needs)],
                               capture_output=True, text=True)
        if check.returncode != 0:
            print("NOT RUN: %s: /usr/bin/python3 (the training jobs' and the notebook's "
                  "libraries) lacks %s: apt-get install %s" % (
                      notebook.name, check.stderr.strip().splitlines()[-1],
                      " ".join("python3-" + m for m in notebook.needs)))
            continue
        results.append(run_notebook(args, notebook, path))
    print("\n=== AWS example notebooks against amtd (amazon-sagemaker-examples %s)" %
          args.examples)
    for result in results:
        print(summary(result))
    failed = [r["name"] for r in results if r["problems"]]
    print("%d passed, %d failed" % (len(results) - len(failed), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Stages what the script-mode job files need into amt-local's S3 folder, as `aws s3 cp` would
into a real bucket: the training code as sourcedir.tar.gz (what the SageMaker Python SDK uploads
for an estimator's entry_point and source_dir) and the data as CSV, label first.

    /usr/bin/python3 examples/script-mode/stage.py .amt     # DATA_DIR of `amt run --data-dir`

Writes under DATA_DIR/s3/amt-local-examples/script-mode/ (s3://amt-local-examples/script-mode/):
  code/sklearn/sourcedir.tar.gz     examples/sdk/sklearn_src (a scikit-learn SGD classifier)
  code/pytorch/sourcedir.tar.gz     examples/sdk/pytorch_src (a PyTorch MLP with checkpoints)
  breast-cancer/train-200/, train-400/, validation/   scikit-learn's bundled breast-cancer set
  digits/train/, digits/validation/                   scikit-learn's bundled digits set
The splits are those of the SDK examples in examples/sdk/. Needs numpy and scikit-learn
(Debian's python3-sklearn, for /usr/bin/python3).
"""
import os
import sys
import tarfile

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits

HERE = os.path.dirname(os.path.abspath(__file__))
SDK_EXAMPLES = os.path.join(HERE, "..", "sdk")


def write_csv(folder, rows):
    os.makedirs(folder, exist_ok=True)
    np.savetxt(os.path.join(folder, "data.csv"), rows, delimiter=",", fmt="%g")


def write_sourcedir(source, archive):
    # The SDK's layout: the folder's files at the archive's top level.
    os.makedirs(os.path.dirname(archive), exist_ok=True)
    with tarfile.open(archive, "w:gz") as tar:
        for name in sorted(os.listdir(source)):
            if name != "__pycache__":
                tar.add(os.path.join(source, name), arcname=name)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: stage.py DATA_DIR   (the --data-dir of amt run, or of amtd)")
    root = os.path.join(sys.argv[1], "s3", "amt-local-examples", "script-mode")
    for name in ("sklearn", "pytorch"):
        write_sourcedir(os.path.join(SDK_EXAMPLES, name + "_src"),
                        os.path.join(root, "code", name, "sourcedir.tar.gz"))
    cancer = load_breast_cancer()
    rows = np.column_stack([cancer.target, cancer.data])
    np.random.default_rng(0).shuffle(rows)
    write_csv(os.path.join(root, "breast-cancer", "train-200"), rows[:200])
    write_csv(os.path.join(root, "breast-cancer", "train-400"), rows[:400])
    write_csv(os.path.join(root, "breast-cancer", "validation"), rows[400:])
    digits = load_digits()
    rows = np.column_stack([digits.target, digits.data])
    np.random.default_rng(0).shuffle(rows)
    write_csv(os.path.join(root, "digits", "train"), rows[:1400])
    write_csv(os.path.join(root, "digits", "validation"), rows[1400:])
    print("staged s3://amt-local-examples/script-mode/ in %s" % root)


if __name__ == "__main__":
    main()

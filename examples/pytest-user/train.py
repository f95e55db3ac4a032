#!/usr/bin/env python3
"""A user's training script, as SageMaker runs a training image: `train.py train`.

Fits y = w*x + b to a fixed, noisy sample of y = 2x + 1 by gradient descent on the squared error,
for `epochs` epochs at `learning_rate` (SageMaker passes hyperparameters as strings, in
$SM_INPUT_CONFIG_DIR/hyperparameters.json), and prints one line per epoch:

    epoch=3 train_loss=0.412 val_loss=0.398

which the tuning job's MetricDefinitions (tuning.json) read. Too large a learning rate diverges
(the losses grow): that is what the tuning has to find out. The model (w, b) goes to
$SM_MODEL_DIR/model.json; a learning rate that is not a positive number fails the job with its
reason in $SM_OUTPUT_DIR/failure, as SageMaker's containers do. Standard library only.
"""

import json
import os
import random
import sys

CONFIG_DIR = os.environ.get("SM_INPUT_CONFIG_DIR", "/opt/ml/input/config")
MODEL_DIR = os.environ.get("SM_MODEL_DIR", "/opt/ml/model")
OUTPUT_DIR = os.environ.get("SM_OUTPUT_DIR", "/opt/ml/output")


def sample(count, seed):
    rng = random.Random(seed)
    xs = [rng.random() for _ in range(count)]
    return [(x, 2 * x + 1 + rng.gauss(0, 0.05)) for x in xs]


def loss(data, w, b):
    return sum((w * x + b - y) ** 2 for x, y in data) / len(data)


def fail(reason):
    os.makedirs(OUTPUT_DIR, exist_ok=True)
    with open(os.path.join(OUTPUT_DIR, "failure"), "w") as f:
        f.write(reason)
    print(reason, file=sys.stderr)
    sys.exit(1)


def main():
    with open(os.path.join(CONFIG_DIR, "hyperparameters.json")) as f:
        hyperparameters = json.load(f)
    try:
        learning_rate = float(hyperparameters.get("learning_rate", "0.1"))
        epochs = int(hyperparameters.get("epochs", "30"))
    except ValueError as e:
        fail("ClientError: bad hyperparameter: %s" % e)
    if not learning_rate > 0:
        fail("ClientError: learning_rate must be positive, not %s" % learning_rate)

    train, validation = sample(40, seed=1), sample(20, seed=2)
    w = b = 0.0
    for epoch in range(1, epochs + 1):
        grad_w = sum(2 * (w * x + b - y) * x for x, y in train) / len(train)
        grad_b = sum(2 * (w * x + b - y) for x, y in train) / len(train)
        w, b = w - learning_rate * grad_w, b - learning_rate * grad_b
        print("epoch=%d train_loss=%.6g val_loss=%.6g" % (epoch, loss(train, w, b),
                                                         loss(validation, w, b)), flush=True)

    os.makedirs(MODEL_DIR, exist_ok=True)
    with open(os.path.join(MODEL_DIR, "model.json"), "w") as f:
        json.dump({"w": w, "b": b}, f)


if __name__ == "__main__":
    main()

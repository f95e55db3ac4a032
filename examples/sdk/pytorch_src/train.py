"""A PyTorch training script as SageMaker runs it (script mode) with managed spot training:
hyperparameters as arguments, data from SM_CHANNEL_TRAIN / SM_CHANNEL_VALIDATION, checkpoints in
the checkpoint folder, the model into SM_MODEL_DIR.

Spot instances can be taken back at any moment. SageMaker copies the checkpoint folder
(CheckpointConfig.LocalPath, /opt/ml/checkpoints by default) to CheckpointConfig.S3Uri and, when
the job restarts on new instances, copies it back before the script starts again. So this script
writes a checkpoint after every epoch (the model, the optimizer's momentum, the data shuffler's
random state and the epoch) and, when one is there at start, resumes from it. Everything that
decides the numbers is in the checkpoint and the arithmetic runs on one thread, so a run that was
interrupted and resumed ends with exactly the loss of a run that never was.

amt-local names the checkpoint folder in SM_CHECKPOINT_DIR (its stand-in for /opt/ml/checkpoints,
which is not the job's own on your machine); on SageMaker the script reads the folder from
checkpointconfig.json, which SageMaker writes for a job with a CheckpointConfig. A job without
one trains without checkpoints.
"""
import argparse
import json
import os

import numpy as np
import torch
from torch import nn

CHECKPOINT = "checkpoint.pt"


def load(folder):
    data = np.vstack([np.loadtxt(os.path.join(folder, f), delimiter=",", ndmin=2)
                      for f in sorted(os.listdir(folder)) if f.endswith(".csv")])
    features = torch.tensor(data[:, 1:], dtype=torch.float32)
    labels = torch.tensor(data[:, 0], dtype=torch.int64)  # label first
    return features, labels


def checkpoint_folder():
    """Where the job's checkpoints are synced, or None for a job without a CheckpointConfig."""
    if os.environ.get("SM_CHECKPOINT_DIR"):  # amt-local
        return os.environ["SM_CHECKPOINT_DIR"]
    config = os.path.join(os.environ.get("SM_INPUT_CONFIG_DIR", "/opt/ml/input/config"),
                          "checkpointconfig.json")
    if os.path.exists(config):  # SageMaker
        with open(config) as f:
            return json.load(f).get("LocalPath", "/opt/ml/checkpoints")
    return None


def save_checkpoint(folder, state):
    # Written beside and renamed: an interruption in the middle of a write leaves the previous
    # checkpoint whole.
    os.makedirs(folder, exist_ok=True)
    partial = os.path.join(folder, CHECKPOINT + ".partial")
    torch.save(state, partial)
    os.replace(partial, os.path.join(folder, CHECKPOINT))


parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=150)
parser.add_argument("--lr", type=float, default=0.05)
parser.add_argument("--momentum", type=float, default=0.9)
parser.add_argument("--hidden", type=int, default=64)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--model-dir", default=os.environ.get("SM_MODEL_DIR"))
parser.add_argument("--train", default=os.environ.get("SM_CHANNEL_TRAIN"))
parser.add_argument("--validation", default=os.environ.get("SM_CHANNEL_VALIDATION"))
parser.add_argument("--checkpoint-dir", default=checkpoint_folder())
args = parser.parse_args()

torch.set_num_threads(1)  # one thread: the same sums in the same order on every run
torch.manual_seed(args.seed)
x_train, y_train = load(args.train)
x_val, y_val = load(args.validation)
mean, std = x_train.mean(0), x_train.std(0) + 1e-6
x_train, x_val = (x_train - mean) / std, (x_val - mean) / std
classes = int(y_train.max()) + 1
model = nn.Sequential(nn.Linear(x_train.shape[1], args.hidden), nn.ReLU(),
                      nn.Linear(args.hidden, args.hidden), nn.ReLU(),
                      nn.Linear(args.hidden, classes))
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
shuffler = torch.Generator().manual_seed(args.seed)
loss_of = nn.CrossEntropyLoss()

first_epoch = 1
checkpoint_path = os.path.join(args.checkpoint_dir or "", CHECKPOINT)
if not args.checkpoint_dir:
    print("training without checkpoints (the job has no CheckpointConfig)", flush=True)
elif os.path.exists(checkpoint_path):
    state = torch.load(checkpoint_path)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    shuffler.set_state(state["shuffler"])
    first_epoch = state["epoch"] + 1
    print(f"resuming from checkpoint at epoch {state['epoch']}", flush=True)
else:
    print("no checkpoint: training from the start", flush=True)

for epoch in range(first_epoch, args.epochs + 1):
    model.train()
    order = torch.randperm(len(x_train), generator=shuffler)
    total = 0.0
    for start in range(0, len(order), args.batch_size):
        batch = order[start:start + args.batch_size]
        optimizer.zero_grad()
        loss = loss_of(model(x_train[batch]), y_train[batch])
        loss.backward()
        optimizer.step()
        total += float(loss) * len(batch)
    model.eval()
    with torch.no_grad():
        logits = model(x_val)
        val_loss = float(loss_of(logits, y_val))
        val_accuracy = float((logits.argmax(1) == y_val).float().mean())
    if args.checkpoint_dir:
        save_checkpoint(args.checkpoint_dir, {"epoch": epoch, "model": model.state_dict(),
                                              "optimizer": optimizer.state_dict(),
                                              "shuffler": shuffler.get_state()})
    # Printed once its checkpoint is saved: an epoch in the log is an epoch a restart keeps.
    print(f"epoch={epoch} train_loss={total / len(order):.6f} val_loss={val_loss:.6f} "
          f"val_accuracy={val_accuracy:.4f}", flush=True)

torch.save(model.state_dict(), os.path.join(args.model_dir, "model.pt"))
print("saved model.pt", flush=True)

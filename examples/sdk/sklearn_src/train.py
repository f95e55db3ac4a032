"""A scikit-learn training script as SageMaker runs it (script mode): hyperparameters as
arguments, data from SM_CHANNEL_TRAIN / SM_CHANNEL_VALIDATION, the model into SM_MODEL_DIR.

An SGD classifier trained for --epochs passes (partial_fit), printing the validation accuracy
and loss after each one, so that AUTO early stopping has a learning curve to judge.
"""
import argparse
import os

import joblib
import numpy as np
from sklearn.linear_model import SGDClassifier
from sklearn.metrics import accuracy_score, log_loss
from sklearn.preprocessing import StandardScaler


def load(folder):
    data = np.vstack([np.loadtxt(os.path.join(folder, f), delimiter=",", ndmin=2)
                      for f in sorted(os.listdir(folder)) if f.endswith(".csv")])
    return data[:, 1:], data[:, 0].astype(int)  # label first


parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=10)
parser.add_argument("--alpha", type=float, default=1e-4)
parser.add_argument("--eta0", type=float, default=0.01)
parser.add_argument("--model-dir", default=os.environ.get("SM_MODEL_DIR"))
parser.add_argument("--train", default=os.environ.get("SM_CHANNEL_TRAIN"))
parser.add_argument("--validation", default=os.environ.get("SM_CHANNEL_VALIDATION"))
args = parser.parse_args()

x_train, y_train = load(args.train)
x_val, y_val = load(args.validation)
scaler = StandardScaler().fit(x_train)
x_train, x_val = scaler.transform(x_train), scaler.transform(x_val)
model = SGDClassifier(loss="log_loss", alpha=args.alpha, learning_rate="constant",
                      eta0=args.eta0, random_state=0)
classes = np.unique(y_train)
for epoch in range(1, args.epochs + 1):
    model.partial_fit(x_train, y_train, classes=classes)
    accuracy = accuracy_score(y_val, model.predict(x_val))
    loss = log_loss(y_val, model.predict_proba(x_val), labels=classes)
    print(f"epoch={epoch} val_accuracy={accuracy:.4f} val_loss={loss:.4f}", flush=True)
joblib.dump({"scaler": scaler, "model": model}, os.path.join(args.model_dir, "model.joblib"))

#!/usr/bin/env python3
"""amt-local's built-in XGBoost algorithm: what the sagemaker-xgboost 1.7-1 image does in
algorithm mode (no entry point), with the xgboost package of the interpreter that runs it
(Debian's python3-xgboost 1.7). amt-script-runner runs it for a job of the XGBoost image without
sagemaker_program; see TOOLKIT.md section 7 for the container's rules it follows.

- Hyperparameters: hyperparameters.json, raw strings; aliases learning_rate -> eta,
  min_split_loss -> gamma, reg_lambda -> lambda, reg_alpha -> alpha; num_round required; an
  unknown one fails with the container's "Extraneous hyperparameter found: <name>".
- Data: channel `train` (required) and `validation` (optional), every file of the channel's
  folder; ContentType text/csv or csv (label in column 0, no header) or libsvm (the default,
  as the container's).
- Training: xgboost.train with the watchlist train, validation; each round prints
  "[N]<TAB>train-<metric>:<value><TAB>validation-<metric>:<value>" (SageMaker's logs show the tab
  as #011, which the built-in metric definitions match); eval_metric is the hyperparameter's
  list plus the metric of _tuning_objective_metric (validation:auc -> auc);
  early_stopping_rounds stops on the last metric of the validation set.
- Model: SM_MODEL_DIR/xgboost-model. A stop (SIGTERM: StopTrainingJob, early stopping,
  Hyperband) ends training after the round under way and the model is saved, so a Stopped job
  has its model.tar.gz, as SageMaker uploads a stopped job's model.
- Checkpoints (a job with a CheckpointConfig: checkpointconfig.json's LocalPath, as the
  container's checkpointing.py): every round is saved as xgboost-checkpoint.<round> (written
  beside and renamed, the newest 5 kept); a restarted attempt (managed spot) loads the newest
  one that loads, says "Resuming from iteration N", trains the rounds left and numbers its log
  lines from N, so it ends with the model an uninterrupted run makes.
- A failure writes SM_OUTPUT_DIR/failure and exits 1.
"""

import glob
import json
import os
import re
import signal
import sys
import tempfile

STOP_REQUESTED = False


def on_sigterm(signum, frame):
    global STOP_REQUESTED
    STOP_REQUESTED = True

INT = "int"
FLOAT = "float"
STR = "str"

# The container's declared hyperparameters (TOOLKIT.md section 7) and how each is parsed.
HYPERPARAMETERS = {
    "num_round": INT, "csv_weights": INT, "early_stopping_rounds": INT, "booster": STR,
    "verbosity": INT, "nthread": INT, "eta": FLOAT, "gamma": FLOAT, "max_depth": INT,
    "min_child_weight": FLOAT, "max_delta_step": FLOAT, "subsample": FLOAT,
    "colsample_bytree": FLOAT, "colsample_bylevel": FLOAT, "colsample_bynode": FLOAT,
    "lambda": FLOAT, "alpha": FLOAT, "tree_method": STR, "sketch_eps": FLOAT,
    "scale_pos_weight": FLOAT, "updater": STR, "dsplit": STR, "refresh_leaf": INT,
    "process_type": STR, "grow_policy": STR, "max_leaves": INT, "max_bin": INT,
    "predictor": STR, "monotone_constraints": STR, "interaction_constraints": STR,
    "sample_type": STR, "normalize_type": STR, "rate_drop": FLOAT, "one_drop": INT,
    "skip_drop": FLOAT, "lambda_bias": FLOAT, "tweedie_variance_power": FLOAT, "objective": STR,
    "num_class": INT, "base_score": FLOAT, "_kfold": INT, "_num_cv_round": INT,
    "_tuning_objective_metric": STR, "eval_metric": STR, "seed": INT, "num_parallel_tree": INT,
    "save_model_on_termination": STR, "aft_loss_distribution": STR,
    "aft_loss_distribution_scale": FLOAT, "deterministic_histogram": STR,
    "sampling_method": STR, "prob_buffer_row": FLOAT, "use_dask_gpu_training": STR,
}
ALIASES = {"learning_rate": "eta", "min_split_loss": "gamma", "reg_lambda": "lambda",
           "reg_alpha": "alpha"}
# Read by the algorithm itself, not passed to xgboost as parameters.
NOT_PARAMS = {"num_round", "csv_weights", "early_stopping_rounds", "_kfold", "_num_cv_round",
              "_tuning_objective_metric", "eval_metric", "save_model_on_termination",
              "use_dask_gpu_training"}


class UserError(Exception):
    pass


def fail(message):
    print(message, file=sys.stderr, flush=True)
    output = os.environ.get("SM_OUTPUT_DIR", "/opt/ml/output")
    os.makedirs(output, exist_ok=True)
    path = os.path.join(output, "failure")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(message)
    sys.exit(1)


def read_json(path):
    with open(path) as f:
        return json.load(f)


def hyperparameters(raw):
    values = {}
    for name, text in raw.items():
        name = ALIASES.get(name, name)
        kind = HYPERPARAMETERS.get(name)
        if kind is None:
            raise UserError("Extraneous hyperparameter found: %s" % name)
        text = str(text).strip('"')
        try:
            values[name] = int(float(text)) if kind == INT else float(text) if kind == FLOAT \
                else text
        except ValueError:
            raise UserError("Hyperparameter %s: could not parse value (caused by ValueError)"
                            % name)
    if "num_round" not in values:
        raise UserError("Missing required hyperparameter: num_round")
    if values["num_round"] < 1:
        raise UserError("Hyperparameter num_round: %s is not in [1, +inf)" % values["num_round"])
    return values


def content_type(config, channel):
    value = (config.get(channel, {}).get("ContentType") or "libsvm").lower()
    value = value.split(";")[0].strip()
    if value in ("text/csv", "csv"):
        return "csv"
    if value in ("libsvm", "text/libsvm", "text/x-libsvm"):
        return "libsvm"
    raise UserError("%s is not an accepted ContentType: csv, libsvm, text/csv, text/libsvm, "
                    "text/x-libsvm." % value)


def load(xgb, folder, kind):
    files = sorted(f for f in glob.glob(os.path.join(folder, "**", "*"), recursive=True)
                   if os.path.isfile(f) and not os.path.basename(f).startswith("."))
    if not files:
        raise UserError("No data files found in the channel folder %s" % folder)
    if kind == "libsvm":
        import numpy as np  # noqa: F401  (xgboost needs it anyway)
        import scipy.sparse
        from sklearn.datasets import load_svmlight_files
        parts = load_svmlight_files(files, zero_based=True)
        matrices, labels = parts[0::2], parts[1::2]
        import numpy
        return xgb.DMatrix(scipy.sparse.vstack(matrices), label=numpy.concatenate(labels))
    import numpy
    rows = [numpy.loadtxt(f, delimiter=",", ndmin=2) for f in files]
    data = numpy.vstack(rows)
    return xgb.DMatrix(data[:, 1:], label=data[:, 0])


CHECKPOINT = "xgboost-checkpoint"
CHECKPOINTS_KEPT = 5


def checkpoint_dir(config_dir):
    """The job's checkpoint folder (checkpointconfig.json's LocalPath), or None."""
    path = os.environ.get("SM_CHECKPOINT_CONFIG_FILE",
                          os.path.join(config_dir, "checkpointconfig.json"))
    if not os.path.exists(path):
        return None
    return read_json(path).get("LocalPath", "/opt/ml/checkpoints")


def load_checkpoint(xgb, folder):
    """(path of the newest checkpoint that loads, the round after it), or (None, 0)."""
    if not folder or not os.path.isdir(folder):
        return None, 0
    pattern = re.compile(r"^%s\.([0-9]+)$" % re.escape(CHECKPOINT))
    found = sorted((int(m.group(1)), name) for name in os.listdir(folder)
                   for m in [pattern.match(name)] if m)
    for number, name in reversed(found[-CHECKPOINTS_KEPT:]):
        path = os.path.join(folder, name)
        try:
            xgb.Booster(model_file=path)
        except xgb.core.XGBoostError:
            print("Checkpoint %s does not load; trying an older one" % path, flush=True)
            continue
        return path, number + 1
    return None, 0


def make_callbacks(xgb, start, folder, early_stopping_rounds=None):
    # One callback, not three: xgboost 1.7 keeps a train()'s callbacks in a set
    # (CallbackContainer.callbacks = set(callbacks)) and stops calling them at the first that
    # returns True, so with a stop check of its own the order was arbitrary, and a SIGTERM (a spot
    # interruption, StopTrainingJob) could end training on a round that was in the model but
    # neither printed nor checkpointed: the next attempt resumed a round early, trained it again
    # and printed it twice. Here a round is printed, then checkpointed, then the stop is checked.
    # xgboost's EarlyStopping (early_stopping_rounds: the last metric of the last evaluation set,
    # as train() would make it) is called from here too, last, for the same reason.
    class EveryRound(xgb.callback.TrainingCallback):
        def __init__(self):
            super().__init__()
            self.early = (xgb.callback.EarlyStopping(rounds=early_stopping_rounds)
                          if early_stopping_rounds else None)

        def before_training(self, model):
            return self.early.before_training(model) if self.early else model

        def after_training(self, model):
            return self.early.after_training(model) if self.early else model

        def after_iteration(self, model, epoch, evals_log):
            number = start + epoch
            # xgboost's own evaluation line, numbered from the round training resumed at.
            line = "[%d]" % number
            for data, metrics in evals_log.items():
                for metric, log in metrics.items():
                    score = log[-1][0] if isinstance(log[-1], tuple) else log[-1]
                    line += "\t%s-%s:%.5f" % (data, metric, score)
            print(line, flush=True)
            if folder:
                handle, temporary = tempfile.mkstemp(dir=folder, suffix=".sagemaker-ignore")
                os.close(handle)
                model.save_model(temporary)
                os.replace(temporary, os.path.join(folder, "%s.%d" % (CHECKPOINT, number)))
                old = os.path.join(folder, "%s.%d" % (CHECKPOINT, number - CHECKPOINTS_KEPT))
                if os.path.exists(old):
                    os.remove(old)
            early_stop = bool(self.early) and self.early.after_iteration(model, epoch, evals_log)
            # True ends training after this round; the model is saved.
            return STOP_REQUESTED or early_stop

    if folder:
        os.makedirs(folder, exist_ok=True)
    return [EveryRound()]


def main():
    signal.signal(signal.SIGTERM, on_sigterm)
    config_dir = os.environ.get("SM_INPUT_CONFIG_DIR", "/opt/ml/input/config")
    try:
        import xgboost as xgb
    except ImportError as error:
        fail("ClientError: the built-in XGBoost algorithm needs the xgboost package in %s (%s); "
             "on Debian: apt install python3-xgboost, then amtd --python xgboost=/usr/bin/python3"
             % (sys.executable, error))
    try:
        values = hyperparameters(read_json(os.path.join(config_dir, "hyperparameters.json")))
        data_config = read_json(os.path.join(config_dir, "inputdataconfig.json"))
        if "train" not in data_config:
            raise UserError("Missing required channel: train")
        train = load(xgb, os.environ.get("SM_CHANNEL_TRAIN", "/opt/ml/input/data/train"),
                     content_type(data_config, "train"))
        watchlist = [(train, "train")]
        if "validation" in data_config:
            validation = load(xgb, os.environ.get("SM_CHANNEL_VALIDATION",
                                                  "/opt/ml/input/data/validation"),
                              content_type(data_config, "validation"))
            watchlist.append((validation, "validation"))
        metrics = [m for m in values.get("eval_metric", "").split(",") if m]
        objective = values.get("_tuning_objective_metric", "")
        if ":" in objective and objective.split(":", 1)[1] not in metrics:
            metrics.append(objective.split(":", 1)[1])
        params = {k: v for k, v in values.items() if k not in NOT_PARAMS}
        if metrics:
            params["eval_metric"] = sorted(set(metrics))
        folder = checkpoint_dir(config_dir)
        resume_from, start = load_checkpoint(xgb, folder)
        if resume_from:
            print("Checkpoint loaded from %s" % resume_from, flush=True)
            print("Resuming from iteration %d" % start, flush=True)
        booster = xgb.train(params, train, num_boost_round=max(0, values["num_round"] - start),
                            evals=watchlist, xgb_model=resume_from, verbose_eval=False,
                            callbacks=make_callbacks(xgb, start, folder,
                                                     values.get("early_stopping_rounds")))
    except UserError as error:
        fail("ClientError: %s" % error)
    except xgb.core.XGBoostError as error:
        fail("ClientError: XGBoost refused the job: %s" % str(error).splitlines()[0])
    model_dir = os.environ.get("SM_MODEL_DIR", "/opt/ml/model")
    os.makedirs(model_dir, exist_ok=True)
    booster.save_model(os.path.join(model_dir, "xgboost-model"))
    print("Saved the model to %s" % os.path.join(model_dir, "xgboost-model"), flush=True)


if __name__ == "__main__":
    main()

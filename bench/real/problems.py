"""The real training problems of bench/real: models from XGBoost and scikit-learn on data sets
that ship with scikit-learn (no download), each with the ranges users write for it.

A problem is deterministic: the same hyperparameters give the same validation loss (one thread,
fixed seeds, a fixed split), so amtd's strategies and Optuna's samplers search one landscape.
`train` (the trainer amtd runs) and real_bench.py (which runs Optuna in-process) both call
evaluate().
"""

# The ranges of AWS's XGBoost tuning notebooks (eta 0-1 and alpha 0-2 linear, as users write).
XGBOOST_RANGES = {
    "ContinuousParameterRanges": [
        {"Name": "eta", "MinValue": "0", "MaxValue": "1", "ScalingType": "Linear"},
        {"Name": "alpha", "MinValue": "0", "MaxValue": "2", "ScalingType": "Linear"},
        {"Name": "min_child_weight", "MinValue": "1", "MaxValue": "10", "ScalingType": "Linear"},
        {"Name": "subsample", "MinValue": "0.5", "MaxValue": "1", "ScalingType": "Linear"},
    ],
    "IntegerParameterRanges": [
        {"Name": "max_depth", "MinValue": "1", "MaxValue": "10", "ScalingType": "Linear"},
        {"Name": "num_round", "MinValue": "50", "MaxValue": "300", "ScalingType": "Linear"},
    ],
}

# scikit-learn's own tuning example: an RBF SVM's C and gamma, both logarithmic.
SVC_RANGES = {
    "ContinuousParameterRanges": [
        {"Name": "C", "MinValue": "0.001", "MaxValue": "1000", "ScalingType": "Logarithmic"},
        {"Name": "gamma", "MinValue": "0.00001", "MaxValue": "1", "ScalingType": "Logarithmic"},
    ],
}

# Hyperband's problems: the XGBoost ones with the boosting rounds as the resource. An epoch is
# ROUNDS_PER_EPOCH rounds, after which the trainer prints the validation loss (one objective line
# per epoch, which is what SageMaker's Hyperband counts); num_round leaves the ranges and the
# static hyperparameter `epochs` (MaxResource) sets the most rounds a trial may train.
ROUNDS_PER_EPOCH = 10
HYPERBAND_MAX_EPOCHS = 27
HYPERBAND_RANGES = {
    "ContinuousParameterRanges": XGBOOST_RANGES["ContinuousParameterRanges"],
    "IntegerParameterRanges": [r for r in XGBOOST_RANGES["IntegerParameterRanges"]
                               if r["Name"] != "num_round"],
}

# name: (model, data set, XGBoost objective or None, metric, ranges)
PROBLEMS = {
    "xgb-breast-cancer": ("xgboost", "breast_cancer", "binary:logistic", "logloss",
                          XGBOOST_RANGES),
    "xgb-wine": ("xgboost", "wine", "multi:softprob", "mlogloss", XGBOOST_RANGES),
    "xgb-diabetes": ("xgboost", "diabetes", "reg:squarederror", "rmse", XGBOOST_RANGES),
    "svc-digits": ("svc", "digits", None, "error", SVC_RANGES),
}


def _data(name):
    from sklearn import datasets
    from sklearn.model_selection import train_test_split
    x, y = getattr(datasets, "load_" + name)(return_X_y=True)
    classify = name != "diabetes"
    return train_test_split(x, y, test_size=0.3, random_state=0,
                            stratify=y if classify else None)


def evaluate(problem, params):
    """The validation loss of `problem` trained with `params` (names to strings or numbers)."""
    model, data, _, _, _ = PROBLEMS[problem]
    if model == "svc":
        x_train, x_valid, y_train, y_valid = _data(data)
        from sklearn.preprocessing import StandardScaler
        from sklearn.svm import SVC
        scaler = StandardScaler().fit(x_train)
        svc = SVC(C=float(params["C"]), gamma=float(params["gamma"]))
        svc.fit(scaler.transform(x_train), y_train)
        return float(1.0 - svc.score(scaler.transform(x_valid), y_valid))
    return _train_xgboost(problem, params, int(params["num_round"]), None)


def evaluate_epochs(problem, params, epochs, report):
    """Trains XGBoost `problem` for up to `epochs` epochs of ROUNDS_PER_EPOCH rounds, calling
    report(epoch, validation loss) after each; stops early when report returns True. The first k
    epochs are the same rounds whether or not training goes on (boosting is sequential), so a
    trial stopped at epoch k has the loss a k-epoch training would have. Returns the last loss."""
    return _train_xgboost(problem, params, epochs * ROUNDS_PER_EPOCH, report)


def _train_xgboost(problem, params, rounds, report):
    import xgboost
    _, data, objective, metric, _ = PROBLEMS[problem]
    x_train, x_valid, y_train, y_valid = _data(data)
    booster_params = {
        "objective": objective, "eval_metric": metric, "nthread": 1, "seed": 0,
        "eta": float(params["eta"]), "alpha": float(params["alpha"]),
        "min_child_weight": float(params["min_child_weight"]),
        "subsample": float(params["subsample"]), "max_depth": int(params["max_depth"]),
    }
    if objective == "multi:softprob":
        booster_params["num_class"] = int(max(y_train)) + 1
    train = xgboost.DMatrix(x_train, label=y_train)
    valid = xgboost.DMatrix(x_valid, label=y_valid)
    history = {}
    callbacks = []
    if report is not None:
        class Epochs(xgboost.callback.TrainingCallback):
            def after_iteration(self, model, iteration, evals_log):
                if (iteration + 1) % ROUNDS_PER_EPOCH:
                    return False
                loss = float(evals_log["validation"][metric][-1])
                return bool(report((iteration + 1) // ROUNDS_PER_EPOCH, loss))
        callbacks.append(Epochs())
    xgboost.train(booster_params, train, rounds, evals=[(valid, "validation")],
                  evals_result=history, verbose_eval=False, callbacks=callbacks)
    return float(history["validation"][metric][-1])

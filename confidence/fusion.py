"""Fuse the per-field signals into one score of being correct (LightGBM, scikit-learn API).

:class:`FusionClassifier` is a binary classifier over the feature rows built by
``confidence.features`` (one row per (document, field); field type one-hot, never the field name).
LightGBM handles missing features (NaN) natively, so a signal a provider cannot give (no logprobs,
no OCR for a digital PDF) is simply left NaN.

The number of boosting rounds is chosen by early stopping in cross-validation grouped by document
(fields of one document share a scan and an LLM call, so splitting them across folds would leak).
The model is then refit on all rows with that many rounds, or (``average_folds=True``: bagging
over documents) is the mean of the cross-validation fold models, their trees merged into one
LightGBM model (:func:`average_boosters`).

Saved models contain no pickle: the classifier is the ``fusion`` part kind of
:mod:`confidence.persistence`, stored as LightGBM's text model ``fusion.lgb.txt`` and
``fusion.json`` (features, parameters, classes, library versions), both checksummed.
"""

from __future__ import annotations

import json
import re
from numbers import Integral, Real
from pathlib import Path
from typing import Any, ClassVar

import lightgbm as lgb
import numpy as np
import sklearn
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from confidence import __version__, persistence
from confidence.contributions import MIN_ROWS, contributions, tree_splits
from confidence.errors import ModelError

__all__ = ["FusionClassifier", "average_boosters"]

# LightGBM rejects feature names with JSON special characters; say so before it does.
_BAD_NAME = re.compile(r'[\[\]{}:,"]')


@persistence.register_part("fusion", format_version=2, text_fields={"booster": ".lgb.txt"})
class FusionClassifier(ClassifierMixin, BaseEstimator):
    """Gradient-boosted trees turning a feature row into P(field is correct).

    Parameters
    ----------
    n_estimators : int, default=1000
        Maximum boosting rounds (early stopping usually picks fewer).
    learning_rate : float, default=0.05
    num_leaves : int, default=15
    min_child_samples : int, default=20
        Minimum rows per leaf; keeps small calibration sets from being memorised.
    reg_lambda : float, default=1.0
        L2 penalty on leaf values.
    early_stopping_rounds : int or None, default=50
        Stop when the grouped-CV log-loss has not improved for this many rounds; None trains
        exactly ``n_estimators`` rounds without CV.
    average_folds : bool, default=False
        Predict with the mean log-odds of the cross-validation fold models, each trained on the
        other folds' documents for ``best_iteration_`` rounds, instead of one model refit on
        every row. This is bagging over documents: which documents a model happens to learn
        from moves its scores on documents unlike them. On the default model's data (three
        seeds, ``benchmarks/results/fusion_variance_experiment.json``) it raised the mean AUROC
        a little on every set and narrowed the spread between seeds. It also costs scoring
        time: the model has ``n_splits`` times the trees. Without CV (see
        ``early_stopping_rounds`` and ``n_splits``) the model is refit. The fold models are
        merged into one LightGBM model (:func:`average_boosters`), so contributions, SHAP and
        the saved file are those of a single booster.
    n_splits : int, default=5
        CV folds (reduced to the number of documents or of minority-class rows when smaller;
        CV is skipped when fewer than 2 folds are possible).
    random_state : int, default=0
    n_jobs : int or None, default=1
        LightGBM threads; None lets LightGBM decide.
    monotone : dict of str -> {-1, 0, 1} or None, default=None
        Known directions of features by name: ``1`` means a larger value can only raise
        P(correct), ``-1`` only lower it (LightGBM ``monotone_constraints`` with the "intermediate"
        method). Constraining signals whose direction is known a priori (a higher similarity or
        token probability never makes a value less trustworthy) keeps the trees from learning
        reversals that hold only in the training domain. Every name must be a feature name.
    lgbm_params : dict or None
        Extra LightGBM parameters (JSON-serialisable), e.g. ``{"feature_fraction": 0.8}``.

    Attributes
    ----------
    booster_ : lightgbm.Booster
    classes_ : ndarray of shape (2,)
        ``classes_[1]`` is the positive class ("correct").
    feature_names_ : list of str
    n_features_in_ : int
    best_iteration_ : int
        Boosting rounds of the final model (of each fold model when they are averaged).
    n_members_ : int
        Models averaged into ``booster_`` (the CV folds), or 1 for a refit.
    cv_logloss_ : float or None
        Mean validation log-loss at ``best_iteration_`` (None without CV).
    oof_proba_ : ndarray of shape (n_samples,)
        Out-of-fold P(correct) of each training row from the CV fold model that did not see its
        document (NaN without CV); fit a calibrator on it instead of on in-sample scores (with
        ``average_folds=False``: single fold models' scores are a proxy for a refit, not for their
        average, which is smoother; calibrate that on held-out documents, as the engine's
        calibration split does). Not saved.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3))
    >>> X[rng.uniform(size=X.shape) < 0.1] = np.nan  # missing signals are fine
    >>> y = (np.nan_to_num(X[:, 0]) + 0.3 * rng.normal(size=400) > 0).astype(int)
    >>> docs = np.repeat(np.arange(100), 4)
    >>> clf = FusionClassifier(n_estimators=200).fit(X, y, groups=docs,
    ...                                               feature_names=["agree", "lp_min", "ocr"])
    >>> clf.predict_proba(X[:2]).shape, clf.contributions(X[:2]).shape
    ((2, 2), (2, 4))
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "num_leaves": [Interval(Integral, 2, None, closed="left")],
        "min_child_samples": [Interval(Integral, 0, None, closed="left")],
        "reg_lambda": [Interval(Real, 0, None, closed="left")],
        "early_stopping_rounds": [Interval(Integral, 1, None, closed="left"), None],
        "average_folds": ["boolean"],
        "n_splits": [Interval(Integral, 0, None, closed="left")],
        "random_state": [Interval(Integral, None, None, closed="neither")],
        "n_jobs": [Integral, None],
        "monotone": [dict, None],
        "lgbm_params": [dict, None],
    }

    def __init__(
        self,
        *,
        n_estimators: int = 1000,
        learning_rate: float = 0.05,
        num_leaves: int = 15,
        min_child_samples: int = 20,
        reg_lambda: float = 1.0,
        early_stopping_rounds: int | None = 50,
        average_folds: bool = False,
        n_splits: int = 5,
        random_state: int = 0,
        n_jobs: int | None = 1,
        monotone: dict[str, int] | None = None,
        lgbm_params: dict[str, Any] | None = None,
    ) -> None:
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.min_child_samples = min_child_samples
        self.reg_lambda = reg_lambda
        self.early_stopping_rounds = early_stopping_rounds
        self.average_folds = average_folds
        self.n_splits = n_splits
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.monotone = monotone
        self.lgbm_params = lgbm_params

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.classifier_tags.multi_class = False
        return tags

    # -- fitting ----------------------------------------------------------------------------
    def _lgb_params(self) -> dict[str, Any]:
        params = {
            "objective": "binary",
            "learning_rate": float(self.learning_rate),
            "num_leaves": int(self.num_leaves),
            "min_data_in_leaf": int(self.min_child_samples),
            "lambda_l2": float(self.reg_lambda),
            "seed": int(self.random_state),
            "deterministic": True,
            "force_col_wise": True,
            "verbosity": -1,
            "num_threads": 0 if self.n_jobs is None else int(self.n_jobs),
        }
        params.update(self.lgbm_params or {})
        return params

    def _monotone_params(self) -> dict[str, Any]:
        if not self.monotone:
            return {}
        unknown = sorted(set(self.monotone) - set(self.feature_names_))
        if unknown:
            raise ValueError(f"monotone names {unknown} are not feature names")
        bad = {k: v for k, v in self.monotone.items() if v not in (-1, 0, 1)}
        if bad:
            raise ValueError(f"monotone directions must be -1, 0 or 1; got {bad}")
        return {
            "monotone_constraints": [int(self.monotone.get(n, 0)) for n in self.feature_names_],
            "monotone_constraints_method": "intermediate",
        }

    def _folds(self, y: np.ndarray, groups) -> list | None:
        if self.early_stopping_rounds is None or self.n_splits < 2:
            return None
        k = min(self.n_splits, int(np.bincount(y).min()))
        if groups is not None:
            k = min(k, len(np.unique(groups)))
        if k < 2:
            return None
        if groups is None:
            cv = StratifiedKFold(n_splits=k, shuffle=True, random_state=self.random_state)
            return list(cv.split(np.zeros(len(y)), y))
        cv = StratifiedGroupKFold(n_splits=k, shuffle=True, random_state=self.random_state)
        return list(cv.split(np.zeros(len(y)), y, groups))

    def fit(self, X, y, *, groups=None, feature_names=None, sample_weight=None) -> FusionClassifier:
        """Fit on feature rows ``X`` (NaN allowed) and binary labels ``y`` (1 = correct).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes; the larger (``classes_[1]``) is "correct".
        groups : array-like of shape (n_samples,) or None
            Document id of each row, for document-grouped cross-validation.
        feature_names : sequence of str or None
            Column names; a DataFrame's columns are used when None.
        sample_weight : array-like of shape (n_samples,) or None
            Non-negative row weights (early stopping's folds use them too).
        """
        self._validate_params()
        X, y = validate_data(self, X, y, ensure_all_finite="allow-nan", dtype=np.float64)
        check_classification_targets(y)
        classes = np.unique(y)
        if len(classes) > 2:
            raise ValueError(
                f"Only binary classification is supported. y has {len(classes)} classes; "
                "pass 1 = correct / 0 = wrong"
            )
        if len(classes) < 2:
            raise ValueError(
                "FusionClassifier needs two classes but only one class is present in y; label "
                "both correct and wrong extractions (at least one of each) before training"
            )
        self.classes_ = classes
        y_enc = (y == classes[1]).astype(int)
        self.feature_names_ = self._resolve_names(feature_names, X.shape[1])
        if groups is not None:
            groups = np.asarray(groups)
            if groups.shape != (len(y),):
                raise ValueError(f"groups must have one document id per row ({len(y)})")
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight, dtype=float)
            if sample_weight.shape != (len(y),):
                raise ValueError(f"sample_weight must have one weight per row ({len(y)})")
            if not np.isfinite(sample_weight).all() or (sample_weight < 0).any():
                raise ValueError("sample_weight must be finite and non-negative")
            if sample_weight.sum() <= 0:
                raise ValueError("sample weights are all zero; give some rows a positive weight")
        params = {**self._lgb_params(), **self._monotone_params()}
        folds = self._folds(y_enc, groups)
        if folds is None:
            self.best_iteration_, self.cv_logloss_ = int(self.n_estimators), None
            self.oof_proba_ = np.full(len(y), np.nan)
        else:
            data = lgb.Dataset(
                X,
                y_enc,
                weight=sample_weight,
                feature_name=self.feature_names_,
                free_raw_data=False,
            )
            hist = lgb.cv(
                params,
                data,
                num_boost_round=int(self.n_estimators),
                folds=folds,
                callbacks=[lgb.early_stopping(int(self.early_stopping_rounds), verbose=False)],
                return_cvbooster=True,
            )
            curve = hist["valid binary_logloss-mean"]
            self.best_iteration_ = len(curve)  # lgb.cv truncates the history at the best round
            self.cv_logloss_ = float(curve[-1])
            # Each row scored by the fold model that did not see its document: an honest input
            # for fitting a calibrator on the training set itself.
            oof = np.full(len(y), np.nan)
            for (_, val), booster in zip(folds, hist["cvbooster"].boosters, strict=True):
                oof[val] = booster.predict(X[val], num_iteration=self.best_iteration_)
            self.oof_proba_ = oof
            if self.average_folds:
                members = hist["cvbooster"].boosters
                self.booster_ = average_boosters(members, self.best_iteration_)
                self.n_members_ = len(members)
                return self
        data = lgb.Dataset(X, y_enc, weight=sample_weight, feature_name=self.feature_names_)
        self.booster_ = lgb.train(params, data, num_boost_round=self.best_iteration_)
        self.n_members_ = 1
        return self

    def _resolve_names(self, feature_names, n: int) -> list[str]:
        if feature_names is None:
            names = getattr(self, "feature_names_in_", None)
            names = [f"f{i}" for i in range(n)] if names is None else [str(c) for c in names]
        else:
            names = [str(c) for c in feature_names]
        if len(names) != n:
            raise ValueError(f"feature_names has {len(names)} names for {n} columns of X")
        if len(set(names)) != n:
            raise ValueError("feature_names has duplicates; give every column a unique name")
        bad = [c for c in names if _BAD_NAME.search(c)]
        if bad:
            raise ValueError(f'feature names {bad[:5]} contain one of []{{}}:,"; rename them')
        return names

    # -- prediction -------------------------------------------------------------------------
    def _check_X(self, X) -> np.ndarray:
        check_is_fitted(self, "booster_")
        return validate_data(self, X, reset=False, ensure_all_finite="allow-nan", dtype=np.float64)

    def decision_function(self, X) -> np.ndarray:
        """Log-odds of the positive class, shape (n_samples,)."""
        X = self._check_X(X)
        return self.booster_.predict(X, raw_score=True)

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities, shape (n_samples, 2); column 1 is P(correct)."""
        X = self._check_X(X)
        p = self.booster_.predict(X)
        return np.column_stack([1.0 - p, p])

    def predict(self, X) -> np.ndarray:
        scores = self.decision_function(X)  # checks fitted before classes_ is touched
        return self.classes_[(scores > 0).astype(int)]

    def contributions(self, X) -> np.ndarray:
        """Per-feature contributions to the log-odds (TreeSHAP), shape (n, n_features + 1).

        The last column is the expected value; each row sums to :meth:`decision_function`.
        LightGBM's ``pred_contrib``, computed for a large batch once per split pattern of each
        tree (:mod:`confidence.contributions`; equal up to the order of floating-point sums).
        """
        X = self._check_X(X)
        if len(X) < MIN_ROWS:  # not worth grouping (nor working out the splits)
            return self.booster_.predict(X, pred_contrib=True)
        return contributions(self.booster_, X, self._tree_splits())

    def _tree_splits(self):
        """The booster's :func:`~confidence.contributions.tree_splits`, worked out once per
        booster (a refit or a loaded model has another one)."""
        booster, n_trees, splits = self.__dict__.get("_splits", (None, -1, None))
        if booster is not self.booster_ or n_trees != self.booster_.num_trees():
            booster, n_trees = self.booster_, self.booster_.num_trees()
            splits = tree_splits(booster)
            self.__dict__["_splits"] = (booster, n_trees, splits)
        return splits

    def shap_values(self, X) -> np.ndarray:
        """SHAP values in log-odds, shape (n, n_features).

        Computed by LightGBM's built-in TreeSHAP (``pred_contrib``), which gives the same values
        as ``shap.TreeExplainer(booster_)`` without importing shap.
        """
        return self.contributions(X)[:, :-1]

    @property
    def feature_importances_(self) -> np.ndarray:
        """Total split gain per feature."""
        check_is_fitted(self, "booster_")
        return self.booster_.feature_importance(importance_type="gain")

    # -- persistence ------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Fitted state for :mod:`confidence.persistence`; ``booster`` is LightGBM's text model
        (written to ``fusion.lgb.txt`` beside ``fusion.json``)."""
        check_is_fitted(self, "booster_")
        d = {
            "params": self.get_params(),
            "feature_names": self.feature_names_,
            "fitted_with_names": hasattr(self, "feature_names_in_"),
            "classes": self.classes_.tolist(),
            "best_iteration": self.best_iteration_,
            "n_members": self.n_members_,
            "cv_logloss": self.cv_logloss_,
            "versions": {
                "extractconf": __version__,
                "lightgbm": lgb.__version__,
                "scikit-learn": sklearn.__version__,
                "numpy": np.__version__,
            },
            "booster": self.booster_.model_to_string(),
        }
        try:
            json.dumps(d["params"], allow_nan=False)
        except (TypeError, ValueError) as e:
            raise ValueError(
                f"lgbm_params must be JSON-serialisable to save the model ({e})"
            ) from e
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FusionClassifier:
        """Rebuild a fitted classifier from :meth:`to_dict` output."""
        saved_lgb = str(d["versions"]["lightgbm"])
        if int(saved_lgb.split(".")[0]) > int(lgb.__version__.split(".")[0]):
            raise ModelError(
                f"saved with lightgbm {saved_lgb}, installed {lgb.__version__}; "
                f"pip install 'lightgbm>={saved_lgb}'"
            )
        try:
            booster = lgb.Booster(model_str=d["booster"])
        except lgb.basic.LightGBMError as e:
            raise ModelError(f"LightGBM cannot parse the model ({e})") from e
        names = list(d["feature_names"])
        if booster.feature_name() != names:
            raise ModelError("the LightGBM model's features differ from fusion.json; retrain")
        # models saved before fold averaging existed were refit on every row
        clf = cls(**{"average_folds": False, **d["params"]})
        clf.booster_ = booster
        clf.classes_ = np.asarray(d["classes"])
        clf.feature_names_ = names
        clf.n_features_in_ = len(names)
        if d.get("fitted_with_names"):
            clf.feature_names_in_ = np.asarray(names, dtype=object)
        clf.best_iteration_ = int(d["best_iteration"])
        clf.n_members_ = int(d.get("n_members", 1))
        clf.cv_logloss_ = d["cv_logloss"]
        return clf

    def save(self, directory: str | Path) -> Path:
        """Write a model folder (``fusion.json``, ``fusion.lgb.txt``, ``manifest.json``)."""
        return persistence.save(self, directory)

    @classmethod
    def load(cls, directory: str | Path) -> FusionClassifier:
        """Load a folder written by :meth:`save`.

        Raises
        ------
        confidence.errors.ModelError
            Missing, corrupt or incompatible model.
        """
        return persistence.load(directory, expect=cls)


_TREE_HEADER = re.compile(r"(?m)^Tree=\d+\n")
_SCALED = re.compile(r"(?m)^(leaf_value=|internal_value=)(.*)$")


def average_boosters(boosters, num_iteration: int | None = None) -> lgb.Booster:
    """One LightGBM model whose raw score is the mean of ``boosters``' raw scores.

    Every tree of every booster (its first ``num_iteration`` rounds) is kept with its leaf and
    node values divided by the number of boosters, so predictions, ``pred_contrib`` (TreeSHAP)
    contributions and the expected value are the boosters' means, and the result saves and loads
    as an ordinary LightGBM text model. The boosters must share features and objective (the
    folds of one ``lgb.cv`` run). LightGBM offers no merge, so this edits the text model.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2)); y = (X[:, 0] > 0).astype(int)
    >>> p = {"objective": "binary", "verbosity": -1, "num_leaves": 4}
    >>> bs = [lgb.train({**p, "seed": s, "bagging_fraction": 0.5, "bagging_freq": 1},
    ...                 lgb.Dataset(X, y), 5) for s in (1, 2)]
    >>> m = average_boosters(bs)
    >>> mean = (bs[0].predict(X, raw_score=True) + bs[1].predict(X, raw_score=True)) / 2
    >>> bool(np.allclose(m.predict(X, raw_score=True), mean)), m.num_trees()
    (True, 10)
    """
    if not boosters:
        raise ValueError("average_boosters needs at least one booster")
    k = len(boosters)
    texts = [b.model_to_string(num_iteration=num_iteration) for b in boosters]

    def scale(m: re.Match) -> str:
        return m.group(1) + " ".join(repr(float(v) / k) for v in m.group(2).split())

    trees: list[str] = []
    for text in texts:
        body = text[text.index("Tree=0") : text.index("end of trees")]
        trees += [_SCALED.sub(scale, t) for t in _TREE_HEADER.split(body) if t.strip()]
    first = texts[0]
    # tree_sizes (byte offsets for parallel parsing) no longer hold; LightGBM parses without it
    head = re.sub(r"(?m)^tree_sizes=.*\n", "", first[: first.index("Tree=0")])
    tail = first[first.index("end of trees") :]
    tail = "end of trees\n\n" + tail[tail.index("parameters:") :]  # importances are recomputed
    merged = head + "".join(f"Tree={i}\n{t}" for i, t in enumerate(trees)) + tail
    return lgb.Booster(model_str=merged)

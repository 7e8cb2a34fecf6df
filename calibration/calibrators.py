"""Map a fused score to P(correct): isotonic, Platt and Lasso recalibration.

All three follow the scikit-learn estimator contract (keyword-only ``__init__`` that only stores,
``fit`` returns ``self``, learned attributes end in ``_``, parameters checked against
``_parameter_constraints`` when fitting) and take 1-D scores rather than a feature matrix, like
:class:`sklearn.isotonic.IsotonicRegression`. ``predict_proba(scores)`` returns the two columns of a
binary classifier, shape (n, 2), column 1 = P(correct); ``predict(scores)`` returns that column
alone (like ``IsotonicRegression.predict``). Every calibrator is a registered part kind of
:mod:`confidence.persistence` (``to_dict`` / ``from_dict``), so a saved model needs no pickle.

Pick one with :func:`make_calibrator` from a name or pass a fitted-compatible object.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import sklearn
from scipy.optimize import minimize
from scipy.special import expit, logit
from sklearn.base import BaseEstimator
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold, StratifiedKFold, cross_val_score
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from confidence.persistence import register_part

__all__ = [
    "CALIBRATORS",
    "IsotonicCalibrator",
    "LassoRecalibrator",
    "PlattCalibrator",
    "make_calibrator",
]

_SKLEARN_VERSION = tuple(int(p) for p in sklearn.__version__.split(".")[:2] if p.isdigit())

# Scores are clipped away from 0 and 1 before the logit so a saturated fused score stays finite.
_EPS = 1e-6


def _check_scores(scores, name: str = "scores") -> np.ndarray:
    s = np.asarray(scores, dtype=float)
    if s.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one fused score per field); got shape {s.shape}")
    if not np.isfinite(s).all():
        raise ValueError(f"{name} contains NaN or inf; score every field before calibrating")
    return s


def _check_fit_input(scores, y) -> tuple[np.ndarray, np.ndarray]:
    s = _check_scores(scores)
    y = np.asarray(y)
    if y.shape != s.shape:
        raise ValueError(f"scores has {len(s)} values but y has {y.size}; pass one label per score")
    if len(s) == 0:
        raise ValueError("cannot calibrate on 0 samples; pass a labelled calibration set")
    if y.dtype == bool:
        y = y.astype(int)
    if not np.isin(y, (0, 1)).all():
        raise ValueError("y must hold 0/1 (or bool) correctness labels")
    return s, y.astype(int)


def _check_weight(sample_weight, n: int) -> np.ndarray | None:
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=float)
    if w.shape != (n,):
        raise ValueError(f"sample_weight has {w.size} values for {n} scores; pass one per score")
    if not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise ValueError("sample_weight must be finite, >= 0 and not all 0")
    return w


def _require_two_classes(y: np.ndarray, who: str) -> None:
    if len(np.unique(y)) < 2:
        raise ValueError(
            f"{who} needs both correct and wrong examples (one class is present); "
            "add labelled fields of the missing class or use IsotonicCalibrator"
        )


def _logit(s: np.ndarray) -> np.ndarray:
    return logit(np.clip(s, _EPS, 1 - _EPS))


def _two_columns(p: np.ndarray) -> np.ndarray:
    return np.column_stack([1.0 - p, p])


def _block_centres(s: np.ndarray, fitted: np.ndarray, w: np.ndarray | None):
    """Knots ``(x, y)`` through the centre of each block of an isotonic fit.

    A block is a run of samples (in score order) with the same fitted value; its centre is the
    weighted mean of their scores. A single block gives one flat knot pair over its range.

    Examples
    --------
    >>> x, y = _block_centres(np.array([0., 1., 2., 3.]), np.array([0., 0., 1., 1.]), None)
    >>> x.tolist(), y.tolist()
    ([0.5, 2.5], [0.0, 1.0])
    """
    order = np.argsort(s, kind="mergesort")
    s, v = s[order], fitted[order]
    w = np.ones_like(s) if w is None else np.asarray(w, dtype=float)[order]
    cut = np.flatnonzero(np.diff(v) != 0) + 1
    xs, ys = [], []
    for a, b in zip(np.r_[0, cut], np.r_[cut, len(s)], strict=True):
        ww = w[a:b]
        xs.append(float(np.average(s[a:b], weights=ww) if ww.sum() > 0 else s[a:b].mean()))
        ys.append(float(v[a]))
    if len(xs) == 1:
        return np.array([s[0], s[-1]]), np.array([ys[0], ys[0]])
    return np.asarray(xs), np.asarray(ys)


@register_part("isotonic", format_version=2)
class IsotonicCalibrator(BaseEstimator):
    """Monotone, piecewise-linear map from score to P(correct), ranking kept.

    Parameters
    ----------
    increasing : bool, default=True
        Higher scores mean more likely correct.
    tie_break : float, default=1e-6
        Weight ``eps`` of a strictly monotone term mixed into the step function:
        ``p = (1 - eps) * iso(s) + eps * u(s)`` with ``u(s) = 1/2 + arctan(s) / pi`` (``1 - u``
        when decreasing). Isotonic regression is flat on each step, so it would give many fields
        the same probability and throw away the fused model's ranking inside a step (measured:
        23 distinct values over 488 receipt fields, AUROC 0.826 -> 0.820). With the term the
        order of ``p`` is exactly the order of the scores while no probability moves by more
        than ``eps``. ``0`` gives the plain step function.
    interpolation : {"centres", "steps"}, default="centres"
        ``"steps"``: the isotonic step function itself (flat on each block of the fit).
        ``"centres"``: the piecewise-linear curve through each block's centre (mean score of its
        calibration samples, at the block's value), flat beyond the first and last centre: a
        strictly increasing map between centres, so probabilities keep the score's resolution
        (a threshold can fall inside what was one step; measured: the top two steps of the
        default model's step calibrator held 69 % of its held-out invoice fields). Both are
        monotone fits of the same isotonic regression; the knots are stored either way, so a
        saved calibrator predicts the same whatever this parameter says.

    Attributes
    ----------
    X_thresholds_, y_thresholds_ : ndarray
        Knots of the fitted step function; predictions interpolate linearly between them and clip
        outside.

    Examples
    --------
    >>> cal = IsotonicCalibrator().fit([0.1, 0.4, 0.6, 0.9], [0, 0, 1, 1])
    >>> cal.predict_proba([0.2, 0.95]).round(4).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    >>> p = cal.predict([0.2, 0.3])  # same step, order kept
    >>> bool(p[0] < p[1])
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "increasing": ["boolean"],
        "tie_break": [Interval(Real, 0.0, 0.01, closed="left")],
        "interpolation": [StrOptions({"centres", "steps"})],
    }

    def __init__(
        self, *, increasing: bool = True, tie_break: float = 1e-6, interpolation: str = "centres"
    ) -> None:
        self.increasing = increasing
        self.tie_break = tie_break
        self.interpolation = interpolation

    def fit(
        self, scores, y, *, signals=None, groups=None, sample_weight=None
    ) -> IsotonicCalibrator:
        """Fit on calibration scores and 0/1 correctness (``signals``/``groups`` are ignored).

        ``sample_weight`` (e.g. inverse sampling probabilities of reviewed fields) weights the
        rows of the isotonic fit.
        """
        self._validate_params()
        s, y = _check_fit_input(scores, y)
        w = _check_weight(sample_weight, len(s))
        iso = IsotonicRegression(
            y_min=0.0, y_max=1.0, increasing=self.increasing, out_of_bounds="clip"
        ).fit(s, y, sample_weight=w)
        if self.interpolation == "steps":
            self.X_thresholds_ = np.asarray(iso.X_thresholds_, dtype=float)
            self.y_thresholds_ = np.asarray(iso.y_thresholds_, dtype=float)
        else:
            self.X_thresholds_, self.y_thresholds_ = _block_centres(s, iso.predict(s), w)
        return self

    def predict(self, scores, *, signals=None) -> np.ndarray:
        """P(correct) for each score, shape (n,)."""
        check_is_fitted(self, "X_thresholds_")
        s = _check_scores(scores)
        # np.interp clips at the ends, matching IsotonicRegression(out_of_bounds="clip").
        p = np.interp(s, self.X_thresholds_, self.y_thresholds_)
        eps = float(self.tie_break)
        if eps:
            u = 0.5 + np.arctan(s) / np.pi
            p = (1.0 - eps) * p + eps * (u if self.increasing else 1.0 - u)
        return p

    def predict_proba(self, scores, *, signals=None) -> np.ndarray:
        """Class probabilities, shape (n, 2); column 1 is P(correct)."""
        return _two_columns(self.predict(scores))

    def to_dict(self) -> dict[str, Any]:
        check_is_fitted(self, "X_thresholds_")
        return {
            "params": self.get_params(),
            "X_thresholds": self.X_thresholds_.tolist(),
            "y_thresholds": self.y_thresholds_.tolist(),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> IsotonicCalibrator:
        cal = cls(**d.get("params", {}))
        cal.X_thresholds_ = np.asarray(d["X_thresholds"], dtype=float)
        cal.y_thresholds_ = np.asarray(d["y_thresholds"], dtype=float)
        return cal


@register_part("platt", format_version=2)
class PlattCalibrator(BaseEstimator):
    """Sigmoid ``P(correct) = expit(a * t(score) + b)`` fitted by maximum likelihood.

    Uses Platt's smoothed targets ``(N+ + 1) / (N+ + 2)`` and ``1 / (N- + 2)`` so that a separable
    calibration set does not drive ``a`` to infinity.

    Parameters
    ----------
    input : {"logit", "raw"}, default="logit"
        ``"logit"``: scores are probabilities and ``t = logit(score)`` (clipped at 1e-6);
        ``"raw"``: scores are margins used as they are.

    Attributes
    ----------
    coef_, intercept_ : float
        ``a`` and ``b``.

    Examples
    --------
    >>> cal = PlattCalibrator().fit([0.2, 0.3, 0.6, 0.7, 0.8, 0.9], [0, 1, 0, 1, 1, 1])
    >>> p = cal.predict_proba([0.2, 0.9])
    >>> p.shape, bool(p[1, 1] > p[0, 1])
    ((2, 2), True)
    """

    _parameter_constraints: ClassVar[dict] = {"input": [StrOptions({"logit", "raw"})]}

    def __init__(self, *, input: str = "logit") -> None:
        self.input = input

    def _transform(self, s: np.ndarray) -> np.ndarray:
        if self.input == "logit":
            if len(s) and (s.min() < 0 or s.max() > 1):
                raise ValueError(
                    'input="logit" needs scores in [0, 1]; use input="raw" for margins'
                )
            return _logit(s)
        return s

    def fit(self, scores, y, *, signals=None, groups=None, sample_weight=None) -> PlattCalibrator:
        """Fit on calibration scores and 0/1 correctness (``signals``/``groups`` are ignored).

        ``sample_weight`` weights each row's log-loss (and Platt's class counts).
        """
        self._validate_params()
        s, y = _check_fit_input(scores, y)
        _require_two_classes(y, "PlattCalibrator")
        w = _check_weight(sample_weight, len(s))
        w = np.ones(len(s)) if w is None else w
        t = self._transform(s)
        n_pos, n_neg = w[y == 1].sum(), w[y == 0].sum()
        target = np.where(y == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

        def loss(ab: np.ndarray) -> tuple[float, np.ndarray]:
            z = ab[0] * t + ab[1]
            p = expit(z)
            # log(1 + e^z) - target * z is the cross-entropy, stable for large |z|.
            val = np.sum(w * (np.logaddexp(0, z) - target * z))
            g = w * (p - target)
            return float(val), np.array([np.dot(g, t), g.sum()])

        res = minimize(loss, np.array([1.0, 0.0]), jac=True, method="L-BFGS-B")
        self.coef_, self.intercept_ = float(res.x[0]), float(res.x[1])
        return self

    def predict(self, scores, *, signals=None) -> np.ndarray:
        """P(correct) for each score, shape (n,)."""
        check_is_fitted(self, "coef_")
        return expit(self.coef_ * self._transform(_check_scores(scores)) + self.intercept_)

    def predict_proba(self, scores, *, signals=None) -> np.ndarray:
        """Class probabilities, shape (n, 2); column 1 is P(correct)."""
        return _two_columns(self.predict(scores))

    def to_dict(self) -> dict[str, Any]:
        check_is_fitted(self, "coef_")
        return {
            "params": self.get_params(),
            "coef": self.coef_,
            "intercept": self.intercept_,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PlattCalibrator:
        cal = cls(**d.get("params", {}))
        cal.coef_, cal.intercept_ = float(d["coef"]), float(d["intercept"])
        return cal


@register_part("lasso", format_version=2)
class LassoRecalibrator(BaseEstimator):
    """L1 logistic regression on ``logit(fused score)`` plus a few named signals.

    Meant for a new domain with a small labelled sample: the fused model stays frozen and this
    re-weights its score together with cheap signals (e.g. ``agree``, ``ocr_conf_mean``); the L1
    penalty drops signals that do not help. Inputs are standardised with the calibration mean and
    standard deviation, which are stored so that predictions need no refit.

    Parameters
    ----------
    C : float or "cv", default="cv"
        Inverse L1 strength. ``"cv"`` picks from ``Cs`` by log-loss in grouped cross-validation
        (``GroupKFold`` on ``groups`` = document ids when given, else stratified folds); when the
        sample is too small for ``n_splits`` folds with both classes it falls back to ``C=1.0``.
    Cs : tuple of float, default=(0.01, 0.03, 0.1, 0.3, 1)
    n_splits : int, default=5
    score_penalty : float, default=1.0
        Relative L1 penalty on the fused score's coefficient (glmnet's ``penalty.factor``);
        below 1 the frozen model's score is shrunk less than the signals (its column is divided
        by ``score_penalty`` after standardising, which ``scale_[0]`` records).
    selection : {"min", "1se"}, default="min"
        How ``C="cv"`` picks: ``"min"`` the best mean log-loss, ``"1se"`` the strongest penalty
        within one standard error of it (the usual lasso rule).

    Notes
    -----
    Measured on SROIE receipts (engine trained on synthetic invoices; 10 draws of 30 labelled
    receipts, AUROC on the rest): mean 0.844 with ``Cs`` up to 10 (one draw fell to 0.713: with
    weak penalty, collinear agreement signals outweighed the fused score), 0.853 with the default
    ``Cs`` capped at 1; ``"1se"`` (0.83) and ``score_penalty=0.1`` (0.839) did not help.
    signal_names : sequence of str or None
        Names of the ``signals`` columns; taken from the keys when ``signals`` is a dict.

    Attributes
    ----------
    C_ : float
        The C used for the final fit.
    feature_names_ : list of str
        ``["logit_score", *signal_names]``.
    coef_ : ndarray of shape (n_features,)
        Coefficients on the standardised inputs; ``intercept_`` the intercept.
    mean_, scale_ : ndarray
        Standardisation parameters.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s = rng.uniform(0.05, 0.95, 200)
    >>> y = (rng.uniform(size=200) < s).astype(int)
    >>> cal = LassoRecalibrator(C=1.0).fit(s, y, signals={"noise": rng.normal(size=200)})
    >>> cal.feature_names_
    ['logit_score', 'noise']
    >>> p = cal.predict([0.1, 0.9], signals={"noise": [0.0, 0.0]})
    >>> bool(p[1] > p[0])
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "C": [Interval(Real, 0, None, closed="neither"), StrOptions({"cv"})],
        "Cs": ["array-like"],
        "n_splits": [Interval(Integral, 2, None, closed="left")],
        "score_penalty": [Interval(Real, 0, 1, closed="right")],
        "selection": [StrOptions({"min", "1se"})],
        "signal_names": ["array-like", None],
    }

    def __init__(
        self,
        *,
        C: float | str = "cv",
        Cs: tuple[float, ...] = (0.01, 0.03, 0.1, 0.3, 1.0),
        n_splits: int = 5,
        score_penalty: float = 1.0,
        selection: str = "min",
        signal_names=None,
    ) -> None:
        self.C = C
        self.Cs = Cs
        self.n_splits = n_splits
        self.score_penalty = score_penalty
        self.selection = selection
        self.signal_names = signal_names

    def _design(self, s: np.ndarray, signals, names: list[str] | None) -> tuple[np.ndarray, list]:
        cols, out_names = [_logit(s)], ["logit_score"]
        if signals is None:
            if names:
                raise ValueError(f"this recalibrator needs signals {names}; pass signals=")
            return np.column_stack(cols), out_names
        if isinstance(signals, dict):
            if names is not None:
                missing = [n for n in names if n not in signals]
                if missing:
                    raise ValueError(f"signals is missing {missing}; pass every fitted signal")
            keys = list(names) if names is not None else list(signals)
            mat = np.column_stack([np.asarray(signals[k], dtype=float) for k in keys])
        else:
            mat = np.asarray(signals, dtype=float)
            mat = mat[:, None] if mat.ndim == 1 else mat
            keys = list(names) if names is not None else list(self.signal_names or [])
            if not keys:
                keys = [f"signal_{i}" for i in range(mat.shape[1])]
            if len(keys) != mat.shape[1]:
                raise ValueError(
                    f"signals has {mat.shape[1]} columns but {len(keys)} names; "
                    "pass signal_names matching the columns"
                )
        if mat.shape[0] != len(s):
            raise ValueError(f"signals has {mat.shape[0]} rows but scores has {len(s)}")
        if not np.isfinite(mat).all():
            raise ValueError("signals contain NaN or inf; impute them before recalibrating")
        return np.column_stack([*cols, mat]), out_names + keys

    def _choose_C(self, Z: np.ndarray, y: np.ndarray, groups) -> float:
        if self.C != "cv":
            return float(self.C)
        if groups is not None and len(np.unique(groups)) >= self.n_splits:
            splits = list(GroupKFold(n_splits=self.n_splits).split(Z, y, groups))
        elif np.bincount(y).min() >= self.n_splits:
            cv = StratifiedKFold(n_splits=self.n_splits, shuffle=True, random_state=0)
            splits = list(cv.split(Z, y))
        else:
            return 1.0  # documented fallback: too few samples per class for CV
        if any(len(np.unique(y[tr])) < 2 for tr, _ in splits):
            return 1.0
        means, ses = [], []
        for c in sorted(self.Cs):
            fold = cross_val_score(
                self._model(c), Z, y, cv=splits, scoring="neg_log_loss", error_score=np.nan
            )
            means.append(np.nanmean(fold) if np.isfinite(fold).any() else -np.inf)
            ses.append(np.nanstd(fold) / np.sqrt(max(1, np.isfinite(fold).sum())))
        means, ses = np.array(means), np.array(ses)
        if not np.isfinite(means).any():
            return 1.0
        best = int(np.argmax(means))
        if self.selection == "min":
            return float(sorted(self.Cs)[best])
        # one-standard-error rule: the strongest penalty within one SE of the best log-loss
        ok = np.flatnonzero(means >= means[best] - ses[best])
        return float(sorted(self.Cs)[int(ok.min())])

    @staticmethod
    def _model(c: float) -> LogisticRegression:
        # scikit-learn 1.8 deprecated penalty= in favour of l1_ratio; older versions ignore
        # l1_ratio unless penalty="elasticnet", so spell the L1 penalty the way each understands.
        if _SKLEARN_VERSION >= (1, 8):
            return LogisticRegression(l1_ratio=1.0, C=c, solver="liblinear")
        return LogisticRegression(penalty="l1", C=c, solver="liblinear")

    def fit(self, scores, y, *, signals=None, groups=None, sample_weight=None) -> LassoRecalibrator:
        """Fit on scores, optional signals (2-D array or dict name -> column) and correctness.

        ``sample_weight`` weights the rows of the final fit and of the standardisation; the
        choice of ``C`` by cross-validation stays unweighted.
        """
        self._validate_params()
        s, y = _check_fit_input(scores, y)
        _require_two_classes(y, "LassoRecalibrator")
        w = _check_weight(sample_weight, len(s))
        X, names = self._design(s, signals, None)
        self.mean_ = np.average(X, axis=0, weights=w)
        scale = np.sqrt(np.average((X - self.mean_) ** 2, axis=0, weights=w))
        self.scale_ = np.where(scale > 0, scale, 1.0)  # constant signal: leave unscaled
        # penalty factor on the fused score: the L1 penalty on its coefficient is
        # ``score_penalty`` times the signals' (dividing a column by f multiplies its penalty by f)
        self.scale_[0] *= self.score_penalty
        Z = (X - self.mean_) / self.scale_
        self.C_ = self._choose_C(Z, y, groups)
        model = self._model(self.C_).fit(Z, y, sample_weight=w)
        self.coef_ = model.coef_.ravel().astype(float)
        self.intercept_ = float(model.intercept_[0])
        self.feature_names_ = names
        return self

    def predict(self, scores, *, signals=None) -> np.ndarray:
        """P(correct) for each score given the same signals as at fit time, shape (n,)."""
        check_is_fitted(self, "coef_")
        s = _check_scores(scores)
        X, _ = self._design(s, signals, self.feature_names_[1:])
        return expit(((X - self.mean_) / self.scale_) @ self.coef_ + self.intercept_)

    def predict_proba(self, scores, *, signals=None) -> np.ndarray:
        """Class probabilities, shape (n, 2); column 1 is P(correct)."""
        return _two_columns(self.predict(scores, signals=signals))

    def to_dict(self) -> dict[str, Any]:
        check_is_fitted(self, "coef_")
        params = self.get_params()
        params["Cs"] = list(params["Cs"])
        params["signal_names"] = None if self.signal_names is None else list(self.signal_names)
        return {
            "params": params,
            "C": self.C_,
            "feature_names": list(self.feature_names_),
            "coef": self.coef_.tolist(),
            "intercept": self.intercept_,
            "mean": self.mean_.tolist(),
            "scale": self.scale_.tolist(),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LassoRecalibrator:
        params = dict(d.get("params", {}))
        if "Cs" in params:
            params["Cs"] = tuple(params["Cs"])
        cal = cls(**params)
        cal.C_ = float(d["C"])
        cal.feature_names_ = list(d["feature_names"])
        cal.coef_ = np.asarray(d["coef"], dtype=float)
        cal.intercept_ = float(d["intercept"])
        cal.mean_ = np.asarray(d["mean"], dtype=float)
        cal.scale_ = np.asarray(d["scale"], dtype=float)
        return cal


CALIBRATORS: dict[str, type] = {
    "isotonic": IsotonicCalibrator,
    "platt": PlattCalibrator,
    "lasso": LassoRecalibrator,
}


def make_calibrator(spec="isotonic", **params):
    """Resolve a calibrator from a name or pass an object through.

    Parameters
    ----------
    spec : {"isotonic", "platt", "lasso"} or object
        A name from :data:`CALIBRATORS`, or an object with ``fit`` and ``predict_proba``.
    **params
        Constructor parameters for a named calibrator.

    Examples
    --------
    >>> make_calibrator("platt", input="raw")
    PlattCalibrator(input='raw')
    >>> make_calibrator("beta")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown calibrator 'beta'; valid: isotonic, lasso, platt, or an object ...
    """
    if isinstance(spec, str):
        try:
            return CALIBRATORS[spec](**params)
        except KeyError:
            raise ValueError(
                f"unknown calibrator {spec!r}; valid: {', '.join(sorted(CALIBRATORS))}, "
                "or an object with fit and predict_proba"
            ) from None
    if hasattr(spec, "fit") and hasattr(spec, "predict_proba"):
        if params:
            raise ValueError("constructor params only apply to a calibrator given by name")
        return spec
    raise TypeError(
        f"calibrator must be one of {', '.join(sorted(CALIBRATORS))} or an object with fit and "
        f"predict_proba; got {type(spec).__name__}"
    )

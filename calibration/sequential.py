"""Anytime-valid per-field thresholds from reviews that keep arriving (progressive unlocking).

A new domain starts with every field reviewed. Each batch of reviews is evidence about how often
the engine's value is right, and a field should be *unlocked* (auto-accepted above a threshold)
as soon as that evidence supports it. Re-running :class:`~confidence.calibration.thresholds.
ThresholdSelector` after every batch would look at the data again and again and inflate the error
(a fixed-sample test peeked at k times errs up to k times as often). :class:`SequentialCertifier`
keeps, per field and candidate threshold ``lam``, a test supermartingale (an *e-process*) that
stays valid under any number of looks:

* **Hypothesis.** ``H0(lam)``: accuracy of the values with fused score ``s >= lam`` is below
  ``target_accuracy`` (tau). Thresholds live on the *fused* score, which recalibration never
  changes, so the evidence of earlier batches stays about the same events; the engine maps them
  to calibrated confidences through its (monotone) calibrator.
* **Betting.** Each reviewed row with ``s >= lam`` multiplies the wealth of a bettor with fraction
  ``c`` by ``1 + c * (p_floor / p) * (y - tau) / tau`` (y = 1 when the value was right). Rows
  outside review multiply by 1. ``p`` is the probability the row was sent to review (1 for rows
  below the threshold in force, the audit rate above it); weighting by ``1 / p`` makes the
  increment unbiased for the whole population above ``lam`` (inverse-probability weighting), and
  the bet ``c * p_floor / tau`` (``p_floor`` = the smallest sampling probability of the design in
  force, known before the row is drawn) keeps every factor positive. Under ``H0`` the expected
  factor is at most 1, so the wealth is a nonnegative supermartingale.
* **Mixture.** The wealth is the average over a few fixed fractions ``bets`` (the "diversified
  Kelly" betting confidence sequence of Waudby-Smith & Ramdas, JRSS-B 2023): no tuning, robust
  to the unknown accuracy, and still a supermartingale.
* **Ville's inequality.** ``P(sup_t W_t >= 1 / alpha) <= alpha`` under ``H0``
  (``alpha = 1 - confidence_level``): a ``lam`` whose wealth ever reaches ``1 / alpha`` is
  rejected for good (``crossed_``), whatever the number of looks.
* **Several thresholds.** Fixed-sequence testing from high to low ``lam`` (as in Learn then Test):
  the field's threshold is the lowest ``lam`` of the run of crossed thresholds that starts at the
  first one with enough reviews to cross at all; that start is frozen when the field first
  unlocks, so later reviews (which make higher thresholds testable) never re-lock it. No
  multiplicity correction is needed when the accuracy above ``lam`` falls as ``lam`` falls
  (false nulls above true ones), the usual case of a score that ranks; a simulation in the tests
  checks the realised rate.

Why not alpha-spending: a spending schedule needs the number (or information fraction) of looks
in advance, and a field that stays locked for months would exhaust it; a confidence sequence
needs neither and lets every new batch be one more look.

Rows enter in the order given (the reviews' arrival); within a batch the caller orders them
independently of the labels and scores (see :func:`confidence.feedback.recalibration.recalibrate`).
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from confidence import persistence

__all__ = ["SequentialCertifier", "default_score_grid", "eprocess_log_wealth"]

LOCKED, UNLOCKED = "locked", "unlocked"


def _log_mean_exp(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """``log(mean(exp(x)))`` along ``axis``, stable (scipy's logsumexp is slow on tiny arrays)."""
    m = x.max(axis=axis, keepdims=True)
    return np.squeeze(m, axis) + np.log(np.exp(x - m).mean(axis=axis))


def default_score_grid() -> np.ndarray:
    """Candidate thresholds on the fused score, dense near 1, in ascending order.

    Examples
    --------
    >>> g = default_score_grid()
    >>> len(g), float(g[0]), bool(np.all(np.diff(g) > 0))
    (40, 0.05, True)
    """
    return np.unique(np.r_[np.linspace(0.05, 0.9, 18), 1.0 - np.geomspace(1e-4, 0.09, 22)])


def eprocess_log_wealth(scores, correct, ratio, *, grid, bets, target_accuracy, log_wealth0=None):
    """Log-wealth paths of the constant bettors, vectorised over any leading axes.

    Parameters
    ----------
    scores, correct, ratio : array of shape (..., n)
        Fused score, 0/1 correctness and ``p_floor / p`` of each reviewed row, in arrival order.
    grid : array of shape (G,)
    bets : array of shape (K,)
        Bet fractions in (0, 1).
    target_accuracy : float
    log_wealth0 : array of shape (..., G, K) or None
        Log-wealth before these rows (0 = a fresh start).

    Returns
    -------
    ndarray of shape (..., n, G, K)
        Log-wealth after each row.

    Examples
    --------
    >>> w = eprocess_log_wealth([0.9, 0.9], [1, 0], [1.0, 1.0], grid=[0.5, 0.95], bets=[0.5],
    ...                         target_accuracy=0.9)
    >>> np.exp(w[:, :, 0]).round(4).tolist()  # lam=0.95 sees nothing: wealth stays 1
    [[1.0556, 1.0], [0.5278, 1.0]]
    """
    s = np.asarray(scores, dtype=float)[..., None, None]
    y = np.asarray(correct, dtype=float)[..., None, None]
    r = np.asarray(ratio, dtype=float)[..., None, None]
    lam = np.asarray(grid, dtype=float)[:, None]
    c = np.asarray(bets, dtype=float)
    tau = float(target_accuracy)
    inc = np.where(s >= lam, np.log1p(c * r * (y - tau) / tau), 0.0)
    out = np.cumsum(inc, axis=-3)
    if log_wealth0 is not None:
        out = out + np.asarray(log_wealth0, dtype=float)[..., None, :, :]
    return out


@persistence.register_part("unlocking", format_version=1)
class SequentialCertifier(BaseEstimator):
    """Per-field thresholds certified by anytime-valid e-processes, updated batch by batch.

    Parameters
    ----------
    target_accuracy : float, default=0.99
    confidence_level : float, default=0.9
        With probability at least this, *at every look* every unlocked field's accuracy above its
        threshold is at least ``target_accuracy``.
    grid : array-like or None
        Candidate thresholds on the fused score (fixed in advance); :func:`default_score_grid`.
    bets : tuple of float, default=(0.3, 0.6, 0.8, 0.9, 0.95)
        Fractions of the mixture of bettors.

    Attributes
    ----------
    grid_ : ndarray (G,)
        The candidate thresholds used.
    min_reviews_ : int
        :meth:`min_reviews`: a threshold with fewer reviews above it is not tested yet.
    log_wealth_ : dict field -> ndarray (G, K)
    crossed_ : dict field -> bool ndarray (G,)
        ``lam`` whose mixture wealth has ever reached ``1 / (1 - confidence_level)``.
    n_above_ : dict field -> ndarray (G,)
        Reviewed rows with ``s >= lam`` (counts, for testability).
    w_above_, w_correct_ : dict field -> ndarray (G,)
        Inverse-probability-weighted rows and correct rows above each ``lam`` (the accuracy
        estimate behind :meth:`reviews_to_unlock`).
    n_reviews_ : dict field -> int
    start_ : dict field -> float or None
        Where the field's fixed sequence starts, frozen when it first unlocks (None before).
    seen_ : set of str
        Keys of the rows already used (a row given again is ignored).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> cert = SequentialCertifier(target_accuracy=0.9)
    >>> for batch in range(5):  # five looks at 40 reviews each, all rows reviewed (p = 1)
    ...     s = rng.uniform(size=40)
    ...     y = (rng.uniform(size=40) < 0.8 + 0.2 * s).astype(int)
    ...     _ = cert.partial_fit(s, y, ["total"] * 40, keys=[f"{batch}-{i}" for i in range(40)])
    >>> status = cert.status()["total"]
    >>> status["status"], status["n_reviews"]
    ('unlocked', 200)
    """

    _parameter_constraints: ClassVar[dict] = {
        "target_accuracy": [Interval(Real, 0, 1, closed="neither")],
        "confidence_level": [Interval(Real, 0, 1, closed="neither")],
        "grid": ["array-like", None],
        "bets": ["array-like"],
    }

    def __init__(
        self,
        *,
        target_accuracy: float = 0.99,
        confidence_level: float = 0.9,
        grid=None,
        bets: tuple[float, ...] = (0.3, 0.6, 0.8, 0.9, 0.95),
    ) -> None:
        self.target_accuracy = target_accuracy
        self.confidence_level = confidence_level
        self.grid = grid
        self.bets = bets

    # -- helpers --------------------------------------------------------------------------------
    @property
    def log_bar_(self) -> float:
        """Log of the wealth that rejects: ``log(1 / alpha)``."""
        return -math.log(1.0 - self.confidence_level)

    def min_reviews(self) -> int:
        """Fewest all-correct full-weight reviews with which the mixture can reach the bar."""
        c = np.asarray(self.bets, dtype=float)
        up = np.log1p(c * (1 - self.target_accuracy) / self.target_accuracy)
        # the mixture's log-wealth after n wins is at least max_k(n * up_k) - log K
        n = np.arange(1, math.ceil((self.log_bar_ + math.log(len(c))) / up.max()) + 2)
        reach = _log_mean_exp(n[:, None] * up[None, :]) >= self.log_bar_
        return int(n[np.argmax(reach)])

    def _init(self) -> None:
        if not hasattr(self, "log_wealth_"):
            self._validate_params()
            c = np.asarray(self.bets, dtype=float)
            if c.ndim != 1 or not len(c) or (c <= 0).any() or (c >= 1).any():
                raise ValueError("bets must be fractions strictly between 0 and 1")
            self.grid_ = np.asarray(
                default_score_grid() if self.grid is None else self.grid, dtype=float
            )
            self.min_reviews_ = self.min_reviews()
            self.log_wealth_, self.crossed_, self.n_above_ = {}, {}, {}
            self.w_above_, self.w_correct_ = {}, {}
            self.n_reviews_, self.field_types_, self.start_ = {}, {}, {}
            self.seen_ = set()

    def _field(self, name: str) -> None:
        if name not in self.log_wealth_:
            g, k = len(self.grid_), len(self.bets)
            self.log_wealth_[name] = np.zeros((g, k))
            self.crossed_[name] = np.zeros(g, dtype=bool)
            for d in (self.n_above_, self.w_above_, self.w_correct_):
                d[name] = np.zeros(g)
            self.n_reviews_[name] = 0

    # -- fitting --------------------------------------------------------------------------------
    def fit(self, scores, correct, fields, **kw) -> SequentialCertifier:
        """Start afresh and add one batch (see :meth:`partial_fit`)."""
        for attr in [a for a in vars(self) if a.endswith("_")]:
            delattr(self, attr)
        return self.partial_fit(scores, correct, fields, **kw)

    def partial_fit(
        self,
        scores,
        correct,
        fields,
        *,
        p_sample=None,
        p_floor=None,
        keys=None,
        field_types=None,
    ) -> SequentialCertifier:
        """Add one batch of reviewed rows (in arrival order) to every field's e-processes.

        Parameters
        ----------
        scores : array-like of float
            Fused score of each reviewed row.
        correct : array-like of 0/1
            Whether the engine's value was right (from the reviewer's final value).
        fields : array-like of str
        p_sample : array-like of float in (0, 1] or None
            Probability each row was sent to review (1 when None).
        p_floor : array-like of float in [0, 1] or None
            Smallest sampling probability of the design the row was drawn under (1 for a field
            reviewed always, the audit rate for a field with a threshold, 0 when accepted rows
            were not audited: such rows carry no evidence). ``p_sample`` when None.
        keys : array-like of str or None
            Row ids (e.g. ``doc_id/field``); a key seen in an earlier batch is skipped.
        field_types : array-like or None
        """
        self._init()
        s = np.asarray(scores, dtype=float)
        y = np.asarray(correct)
        f = np.asarray(fields, dtype=object)
        n = len(s)
        p = np.ones(n) if p_sample is None else np.asarray(p_sample, dtype=float)
        floor = p.copy() if p_floor is None else np.asarray(p_floor, dtype=float)
        k = np.array([None] * n, dtype=object) if keys is None else np.asarray(keys, dtype=object)
        if not (y.shape == f.shape == p.shape == floor.shape == k.shape == (n,)) or s.ndim != 1:
            raise ValueError(
                "scores, correct, fields, p_sample, p_floor and keys need one entry per row"
            )
        if not np.isfinite(s).all() or not np.isin(y, (0, 1)).all():
            raise ValueError("scores must be finite and correct 0/1")
        if (p <= 0).any() or (p > 1).any() or (floor < 0).any() or (floor > p + 1e-12).any():
            raise ValueError("need 0 < p_sample <= 1 and 0 <= p_floor <= p_sample for every row")
        fresh = np.array([key is None or key not in self.seen_ for key in k], dtype=bool)
        self.seen_.update(key for key in k[fresh] if key is not None)
        types = [None] * n if field_types is None else list(field_types)
        for name in dict.fromkeys(f[fresh]):
            m = fresh & (f == name)
            key = str(name)
            self._field(key)
            t = next((types[i] for i in np.flatnonzero(m) if types[i] is not None), None)
            self.field_types_[key] = self.field_types_.get(key) or t
            self._update(key, s[m], y[m].astype(float), floor[m] / p[m], 1.0 / p[m])
        return self

    def _update(self, name: str, s, y, ratio, weight) -> None:
        path = eprocess_log_wealth(
            s,
            y,
            ratio,
            grid=self.grid_,
            bets=self.bets,
            target_accuracy=self.target_accuracy,
            log_wealth0=self.log_wealth_[name],
        )
        mix = _log_mean_exp(path)  # (n, G)
        self.crossed_[name] |= (mix >= self.log_bar_).any(axis=0)
        self.log_wealth_[name] = path[-1]
        above = s[:, None] >= self.grid_[None, :]
        self.n_above_[name] += above.sum(axis=0)
        self.w_above_[name] += (weight[:, None] * above).sum(axis=0)
        self.w_correct_[name] += ((weight * y)[:, None] * above).sum(axis=0)
        self.n_reviews_[name] += len(s)
        if self.start_.get(name) is None and self._threshold_index(name) is not None:
            # freeze where the sequence starts: later reviews make higher thresholds testable,
            # which must not re-lock a field the evidence has unlocked
            self.start_[name] = float(self.grid_[np.argsort(-self.grid_)][self._start(name)])

    # -- results --------------------------------------------------------------------------------
    def _start(self, name: str) -> int | None:
        """Position (in the high-to-low order) where the field's fixed sequence starts."""
        order = np.argsort(-self.grid_)
        if self.start_.get(name) is not None:
            return int(np.flatnonzero(self.grid_[order] == self.start_[name])[0])
        testable = self.n_above_[name][order] >= self.min_reviews_
        return int(np.argmax(testable)) if testable.any() else None

    def _threshold_index(self, name: str) -> int | None:
        """Index into the grid of the field's certified threshold (None = locked)."""
        order = np.argsort(-self.grid_)  # high to low
        start = self._start(name)
        if start is None:
            return None
        crossed = self.crossed_[name][order][start:]
        if not crossed[0]:
            return None
        last = start + (len(crossed) if crossed.all() else int(np.argmin(crossed))) - 1
        return int(order[last])

    def score_thresholds(self) -> dict[str, float]:
        """Field -> certified threshold on the fused score (``inf`` = locked, review all)."""
        check_is_fitted(self, "log_wealth_")
        out = {}
        for name in self.log_wealth_:
            j = self._threshold_index(name)
            out[name] = math.inf if j is None else float(self.grid_[j])
        return out

    def reviews_to_unlock(self, name: str) -> float | None:
        """Expected further reviews of the field (all reviewed) until it unlocks, if the current
        accuracy estimate above each threshold holds: 0 when unlocked, ``inf`` when no threshold
        reaches the target at that accuracy, None before any review."""
        if self._threshold_index(name) is not None:
            return 0.0
        n = self.n_above_[name]
        if self.n_reviews_[name] == 0:
            return None
        with np.errstate(invalid="ignore", divide="ignore"):
            acc = np.where(self.w_above_[name] > 0, self.w_correct_[name] / self.w_above_[name], 0)
            share = n / self.n_reviews_[name]  # share of reviewed rows above each lam
        c = np.asarray(self.bets, dtype=float)
        tau = self.target_accuracy
        up = np.log1p(c * (1 - tau) / tau)
        down = np.log1p(-c)
        growth = acc[:, None] * up + (1 - acc[:, None]) * down  # (G, K) per row above lam
        gap = self.log_bar_ + math.log(len(c)) - self.log_wealth_[name]
        with np.errstate(divide="ignore", invalid="ignore"):
            rows = np.where(growth > 0, np.maximum(gap, 0) / growth, np.inf).min(axis=1)
            rows = np.maximum(rows, self.min_reviews_ - n)
            need = np.where(share > 0, rows / share, np.inf)
        order = np.argsort(-self.grid_)
        need_o = np.where(self.crossed_[name][order], 0.0, need[order])
        testable = n[order] >= self.min_reviews_
        if testable.any():
            # unlocking at lam needs every lam from the start of the sequence crossed (higher
            # thresholds that become testable later are ignored: an optimistic estimate)
            need_o = np.maximum.accumulate(need_o[int(np.argmax(testable)) :])
        best = float(np.min(need_o))
        return best if math.isfinite(best) else math.inf

    def status(self) -> dict[str, dict[str, Any]]:
        """Per field: ``n_reviews``, ``status`` (locked / unlocked),
        ``score_threshold``, ``accuracy`` (IPW estimate above it, else over all reviews) and
        ``reviews_to_unlock``."""
        check_is_fitted(self, "log_wealth_")
        out = {}
        for name, lam in self.score_thresholds().items():
            j = self._threshold_index(name)
            i = int(np.argmin(self.grid_)) if j is None else j
            w = self.w_above_[name][i]
            out[name] = {
                "n_reviews": int(self.n_reviews_[name]),
                "status": LOCKED if j is None else UNLOCKED,
                "score_threshold": lam,
                "accuracy": float(self.w_correct_[name][i] / w) if w > 0 else math.nan,
                "reviews_to_unlock": self.reviews_to_unlock(name),
            }
        return out

    # -- persistence ----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        check_is_fitted(self, "log_wealth_")
        params = self.get_params()
        params["bets"] = [float(b) for b in params["bets"]]
        if params["grid"] is not None:
            params["grid"] = np.asarray(params["grid"], dtype=float).tolist()
        return {
            "params": params,
            "fields": {
                name: {
                    "field_type": self.field_types_.get(name),
                    "log_wealth": self.log_wealth_[name].tolist(),
                    "crossed": self.crossed_[name].astype(int).tolist(),
                    "n_above": self.n_above_[name].tolist(),
                    "w_above": self.w_above_[name].tolist(),
                    "w_correct": self.w_correct_[name].tolist(),
                    "n_reviews": self.n_reviews_[name],
                    "start": self.start_.get(name),
                }
                for name in self.log_wealth_
            },
            "seen": sorted(self.seen_),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SequentialCertifier:
        params = dict(d["params"])
        params["bets"] = tuple(params["bets"])
        cert = cls(**params)
        cert._init()
        for name, st in d["fields"].items():
            cert.field_types_[name] = st["field_type"]
            cert.log_wealth_[name] = np.asarray(st["log_wealth"], dtype=float)
            cert.crossed_[name] = np.asarray(st["crossed"], dtype=bool)
            cert.n_above_[name] = np.asarray(st["n_above"], dtype=float)
            cert.w_above_[name] = np.asarray(st["w_above"], dtype=float)
            cert.w_correct_[name] = np.asarray(st["w_correct"], dtype=float)
            cert.n_reviews_[name] = int(st["n_reviews"])
            cert.start_[name] = None if st["start"] is None else float(st["start"])
        cert.seen_ = set(d["seen"])
        return cert

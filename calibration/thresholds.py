"""Per-field acceptance thresholds with a finite-sample accuracy guarantee (Learn then Test).

For each field, :class:`ThresholdSelector` picks the lowest threshold ``lam`` on the calibrated
confidence such that, with probability at least ``confidence_level`` over the draw of the
calibration set, the accuracy of the fields it accepts (``score >= lam``) on new documents from the
same distribution is at least ``target_accuracy``.

How (Angelopoulos et al., "Learn then Test", 2021; API modelled on MAPIE's
``BinaryClassificationController(risk="precision", target_level, confidence_level)``):

1. A fixed grid of candidate thresholds, scanned from high (accept little) to low (accept much).
2. At each ``lam`` with ``n`` accepted calibration fields of which ``k`` are correct, the exact
   binomial p-value of H0 "accuracy above ``lam`` < target" is ``P(Binomial(n, target) >= k)``
   (conditionally on ``n`` the accepted labels are i.i.d. with that accuracy).
3. Fixed-sequence testing: reject in order while ``p <= 1 - confidence_level`` and stop at the
   first failure; the last rejected ``lam`` is chosen (raised to the highest grid point that
   accepts the same calibration fields, so it never reaches below the scores seen). Thresholds at
   which ``n`` is too small for any rejection (``target ** n > 1 - confidence_level``) are
   skipped: the sequence starts at the first one that could pass. No multiplicity correction is
   needed along the sequence.

Fallback hierarchy: a level ((field, group) when groups are given, then field, then field type,
then all fields) decides only if it has at least ``min_samples`` calibration samples; otherwise
the next level decides (a (field, group) cell falls back to its field, the field walks
``fallback``). Too few is decided by the binomial test itself: ``min_samples="auto"`` is
``AUTO_POWER`` times the fewest samples with which any threshold could pass at all (88 at target
0.9, 920 at target 0.99, both at confidence 0.9). A level
that has enough samples but no threshold passing the test yields ``inf`` = review everything
(source ``"none"``): the data show that the level cannot meet the target, so borrowing a pooled
threshold would break its guarantee. If no level has enough samples the field is reviewed too.

Guarantees are per field (each field's own calibration sample); a ``"type"`` or ``"global"``
threshold is guaranteed for the pooled population of that type / of all fields, not for each member
field separately. Group-conditional (Mondrian) thresholds: with ``groups`` (one label per row, e.g.
scan/digital from :class:`~confidence.calibration.groups.Grouping`), each (field, group) cell with
enough samples is certified on its own rows, so the guarantee holds within that group, not only
on average over the mix; cells that fall back carry the field's (mix) guarantee only. The guarantee
does not hold across a distribution shift.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Integral, Real
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from scipy.stats import binom
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from confidence import persistence
from confidence.calibration.groups import Grouping
from confidence.errors import ModelError

__all__ = [
    "FALLBACKS",
    "GROUP_FALLBACKS",
    "REVIEW_ALL",
    "ThresholdSelector",
    "default_grid",
    "ltt_threshold",
]

REVIEW_ALL = math.inf  # threshold that accepts nothing
GROUP_FALLBACKS = ("field", "pooled")
"""Where a (field, group) cell with too few samples looks next (see ThresholdSelector)."""
FALLBACKS: dict[str, tuple[str, ...]] = {
    "field_type>global": ("type", "global"),
    "field_type": ("type",),
    "global": ("global",),
    "none": (),
}


def default_grid() -> np.ndarray:
    """Fixed candidate thresholds in [0, 1], dense near 1 where high-accuracy targets land.

    Examples
    --------
    >>> g = default_grid()
    >>> float(g.min()), float(g.max()), bool(np.all(np.diff(g) > 0))
    (0.0, 1.0, True)
    """
    return np.unique(np.r_[np.linspace(0.0, 1.0, 1001), 1.0 - np.geomspace(1e-5, 1e-3, 41)])


def _min_n(target: float, alpha: float) -> int:
    """Smallest n for which n correct out of n rejects H0 (``target ** n <= alpha``)."""
    return math.ceil(math.log(alpha) / math.log(target) - 1e-12)


def ltt_threshold(
    scores, correct, *, target_accuracy: float, confidence_level: float, grid=None
) -> float:
    """Lowest grid threshold certified by fixed-sequence binomial testing, or ``inf``.

    Parameters
    ----------
    scores : array-like of float
    correct : array-like of 0/1
    target_accuracy, confidence_level : float in (0, 1)
    grid : array-like or None
        Candidate thresholds; :func:`default_grid` when None. Must not depend on ``correct``.

    Examples
    --------
    >>> s = np.linspace(0, 1, 1000)
    >>> y = (s > 0.3).astype(int)  # every field above 0.3 is right
    >>> ltt_threshold(s, y, target_accuracy=0.99, confidence_level=0.9)  # 3 errors in 703: fine
    0.297
    >>> ltt_threshold(s[:50], y[:50], target_accuracy=0.99, confidence_level=0.9)
    inf
    """
    s = np.asarray(scores, dtype=float)
    y = np.asarray(correct, dtype=int)
    lams = np.sort(np.asarray(default_grid() if grid is None else grid, dtype=float))[::-1]
    alpha = 1.0 - confidence_level
    order = np.sort(s)
    # n accepted and k correct at each lam (accept = score >= lam), vectorised over the grid.
    first = np.searchsorted(order, lams, side="left")
    n = len(s) - first
    k_cum = np.r_[0, np.cumsum(y[np.argsort(s, kind="mergesort")][::-1])]
    k = k_cum[n]
    pval = binom.sf(k - 1, n, target_accuracy)  # P(Binomial(n, target) >= k)
    testable = n >= _min_n(target_accuracy, alpha)
    if not testable.any():
        return REVIEW_ALL
    start = int(np.argmax(testable))
    passed = pval[start:] <= alpha
    if not passed[0]:
        return REVIEW_ALL
    last = start + (len(passed) if passed.all() else int(np.argmin(passed))) - 1
    # Lower grid points that accept no further calibration field are certified too; take the
    # highest one so the threshold does not reach below the scores actually seen.
    return float(lams[int(np.argmax(n == n[last]))])


AUTO_POWER = 4
"""``min_samples="auto"`` = this many times the feasibility floor (see ThresholdSelector)."""


@persistence.register_part("thresholds", format_version=3)
class ThresholdSelector(BaseEstimator):
    """Choose per-field thresholds guaranteeing accuracy among accepted fields.

    Parameters
    ----------
    target_accuracy : float, default=0.99
        Required accuracy of accepted fields.
    confidence_level : float, default=0.9
        Probability (over the calibration draw) that the target holds.
    min_samples : int or "auto", default="auto"
        Calibration samples a level needs to decide. ``"auto"`` = ``AUTO_POWER`` (4) times the
        fewest with which any threshold can pass at all (230 for the defaults: 230 correct out of
        230, so ``"auto"`` = 920): a field that can only be certified by accepting all of its
        samples without one error has too few samples to decide and falls back to its type, then
        to the global pool.
    fallback : {"field_type>global", "field_type", "global", "none"}, default="field_type>global"
        Levels consulted, in order, when a field has fewer than ``min_samples`` samples.
    grid : array-like or None
        Candidate thresholds (fixed before seeing labels); :func:`default_grid` when None.
    group_fallback : {"field", "pooled"}, default="field"
        With ``groups``: where a (field, group) cell with fewer than ``min_samples`` samples
        looks next. ``"field"``: the field's threshold (field -> type -> global, certified on the
        mix of groups). ``"pooled"``: first the group's pooled thresholds, certified on the
        group's rows of the field's type (source ``"type_group"``), then on all its rows
        (``"global_group"``), each when it has ``min_samples`` rows; then the field's.

    Attributes
    ----------
    thresholds_ : dict of str -> float
        Threshold per calibration field; ``inf`` = review every value of this field.
    sources_ : dict of str -> str
        ``"field"``, ``"type"``, ``"global"`` or ``"none"``.
    grouping_ : Grouping or None
        How a document's group is computed (given to :meth:`fit`; saved with the thresholds).
    group_thresholds_ : dict of str -> dict of str -> float
        Threshold per field and group, for the (field, group) cells with ``min_samples``
        samples (``inf`` = that group of the field is reviewed always).
    group_stats_ : dict of str -> dict of str -> dict
        Per field and group (every group seen): ``threshold`` and ``source`` used for it,
        ``level`` (``"group"``: decided on the cell's own samples, else ``"fallback"``),
        ``n_samples``, calibration ``coverage`` and ``accuracy``.
    group_pools_ : dict of str -> dict of str -> float
        With ``group_fallback="pooled"``: per group, the threshold per field type and ``"*"``
        (all fields) of the pools with ``min_samples`` rows.
    coverage_ : dict of str -> float
        Fraction of the field's calibration samples accepted.
    accuracy_ : dict of str -> float
        Calibration accuracy of the accepted samples (NaN when none accepted).
    n_samples_ : dict of str -> int
    field_types_ : dict of str -> str or None
    type_thresholds_ : dict of str -> float
        Threshold per field type that had ``min_samples`` samples.
    global_threshold_ : float or None
        Threshold over all fields, None when there were fewer than ``min_samples``.
    min_samples_ : int

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s = rng.uniform(size=3000)
    >>> y = (rng.uniform(size=3000) < 0.9 + 0.1 * s).astype(int)
    >>> fields = np.array(["total", "date", "vendor"])[rng.integers(0, 3, 3000)]
    >>> fields[:5] = "iban"  # too few samples of its own
    >>> types = {"total": "amount", "date": "date", "vendor": "text", "iban": "id"}
    >>> sel = ThresholdSelector(target_accuracy=0.95).fit(s, y, fields, [types[f] for f in fields])
    >>> sel.sources_["total"], sel.sources_["iban"]
    ('field', 'global')
    >>> sel.lookup("unseen_field", "amount") == (sel.type_thresholds_["amount"], "type")
    True

    Group-conditional thresholds: scans are worse, so they get a higher threshold of their own.

    >>> g = np.where(np.arange(3000) % 2, "scan", "digital")
    >>> y2 = np.where(g == "scan", rng.uniform(size=3000) < s, y).astype(int)
    >>> sel = ThresholdSelector(target_accuracy=0.9).fit(s, y2, fields, groups=g)
    >>> bool(sel.lookup("total", group="scan")[0] > sel.lookup("total", group="digital")[0])
    True
    >>> sel.lookup("total", group="scan")[1], sel.lookup("iban", group="scan")[1]
    ('group', 'global')
    """

    _parameter_constraints: ClassVar[dict] = {
        "target_accuracy": [Interval(Real, 0, 1, closed="neither")],
        "confidence_level": [Interval(Real, 0, 1, closed="neither")],
        "min_samples": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "fallback": [StrOptions(set(FALLBACKS))],
        "grid": ["array-like", None],
        "group_fallback": [StrOptions(set(GROUP_FALLBACKS))],
    }

    def __init__(
        self,
        *,
        target_accuracy: float = 0.99,
        confidence_level: float = 0.9,
        min_samples: int | str = "auto",
        fallback: str = "field_type>global",
        grid=None,
        group_fallback: str = "field",
    ) -> None:
        self.target_accuracy = target_accuracy
        self.confidence_level = confidence_level
        self.min_samples = min_samples
        self.fallback = fallback
        self.grid = grid
        self.group_fallback = group_fallback

    # -- validation -------------------------------------------------------------------------
    def _check_params(self) -> int:
        self._validate_params()
        if self.min_samples == "auto":
            return AUTO_POWER * _min_n(self.target_accuracy, 1 - self.confidence_level)
        return int(self.min_samples)

    @staticmethod
    def _check_data(scores, correct, fields, field_types):
        s = np.asarray(scores, dtype=float)
        y = np.asarray(correct)
        f = np.asarray(fields, dtype=object)
        n = len(s)
        if s.ndim != 1 or y.shape != (n,) or f.shape != (n,):
            raise ValueError("scores, correct and fields must be 1-D and of the same length")
        if n == 0:
            raise ValueError("no calibration samples; pass scored and labelled fields")
        if not np.isfinite(s).all():
            raise ValueError("scores contain NaN or inf; calibrate every field before fitting")
        if y.dtype == bool:
            y = y.astype(int)
        if not np.isin(y, (0, 1)).all():
            raise ValueError("correct must hold 0/1 (or bool) labels")
        if field_types is None:
            t = np.full(n, None, dtype=object)
        else:
            t = np.asarray(field_types, dtype=object)
            if t.shape != (n,):
                raise ValueError("field_types must have one entry per score (or be None)")
        return s, y.astype(int), f, t

    # -- fitting ----------------------------------------------------------------------------
    def _ltt(self, s: np.ndarray, y: np.ndarray) -> float:
        return ltt_threshold(
            s,
            y,
            target_accuracy=self.target_accuracy,
            confidence_level=self.confidence_level,
            grid=self.grid,
        )

    def fit(
        self, scores, correct, fields, field_types=None, *, groups=None, grouping=None
    ) -> ThresholdSelector:
        """Fit thresholds from calibrated scores, 0/1 correctness and the field of each row.

        Parameters
        ----------
        scores : array-like of float
            Calibrated P(correct), one per (document, field).
        correct : array-like of 0/1
        fields : array-like of str
            Field name of each row.
        field_types : array-like of str or None
            Field type of each row (schema ``type``); None disables the type level.
        groups : array-like of str or None
            Group of each row's document (None entries: no group); None disables the group
            level.
        grouping : Grouping, str or None
            How the groups were computed (a :class:`~confidence.calibration.groups.Grouping` or
            its key), saved with the thresholds so scoring computes a new document's group
            the same way.
        """
        self.min_samples_ = self._check_params()
        if self.grid is None:
            s_check = np.asarray(scores, dtype=float)
            if s_check.size and (np.nanmin(s_check) < 0 or np.nanmax(s_check) > 1):
                raise ValueError(
                    "scores outside [0, 1] with the default grid; calibrate first or pass grid="
                )
        s, y, f, t = self._check_data(scores, correct, fields, field_types)
        m = self.min_samples_
        self.global_threshold_ = self._ltt(s, y) if len(s) >= m else None
        self.type_thresholds_ = {}
        for typ in {x for x in t if x is not None}:
            mask = t == typ
            if mask.sum() >= m:
                self.type_thresholds_[str(typ)] = self._ltt(s[mask], y[mask])
        self.thresholds_, self.sources_, self.field_types_ = {}, {}, {}
        self.coverage_, self.accuracy_, self.n_samples_ = {}, {}, {}
        for name in dict.fromkeys(f):  # keeps first-seen order
            mask = f == name
            types = {x for x in t[mask] if x is not None}
            if len(types) > 1:
                raise ValueError(
                    f"field {name!r} has several types {sorted(types)}; fix the schema"
                )
            ftype = next(iter(types), None)
            key = str(name)
            self.field_types_[key] = ftype
            self.n_samples_[key] = int(mask.sum())
            if mask.sum() >= m:
                lam, src = self._ltt(s[mask], y[mask]), "field"
            else:
                lam, src = self._from_fallback(ftype)
            if not np.isfinite(lam):
                src = "none"
            self.thresholds_[key], self.sources_[key] = lam, src
            accepted = s[mask] >= lam
            self.coverage_[key] = float(accepted.mean())
            self.accuracy_[key] = float(y[mask][accepted].mean()) if accepted.any() else math.nan
        self._fit_groups(s, y, f, groups, grouping)
        return self

    def _fit_groups(self, s, y, f, groups, grouping) -> None:
        self.grouping_ = Grouping(grouping) if isinstance(grouping, str) else grouping
        self.group_thresholds_, self.group_stats_, self.group_pools_ = {}, {}, {}
        if groups is None:
            return
        g = np.asarray(groups, dtype=object)
        if g.shape != s.shape:
            raise ValueError("groups must have one entry per score (None = no group)")
        if self.group_fallback == "pooled":
            t = np.array([self.field_types_[str(x)] for x in f], dtype=object)
            for grp in dict.fromkeys(x for x in g if x is not None):
                in_group = g == grp
                pools = {"*": in_group} | {
                    str(typ): in_group & (t == typ) for typ in {x for x in t if x is not None}
                }
                for k, mask in pools.items():
                    if mask.sum() >= self.min_samples_:
                        self.group_pools_.setdefault(str(grp), {})[k] = self._ltt(s[mask], y[mask])
        for name in self.thresholds_:
            mask = f == name
            for grp in dict.fromkeys(x for x in g[mask] if x is not None):
                cell = mask & (g == grp)
                if cell.sum() >= self.min_samples_:
                    lam = self._ltt(s[cell], y[cell])
                    self.group_thresholds_.setdefault(name, {})[str(grp)] = lam
                    src, level = ("group" if math.isfinite(lam) else "none"), "group"
                else:
                    lam, src = self._group_pool(self.field_types_[name], str(grp)) or (
                        self.thresholds_[name],
                        self.sources_[name],
                    )
                    level = "fallback"
                accepted = s[cell] >= lam
                self.group_stats_.setdefault(name, {})[str(grp)] = {
                    "threshold": lam,
                    "source": src,
                    "level": level,
                    "n_samples": int(cell.sum()),
                    "coverage": float(accepted.mean()),
                    "accuracy": float(y[cell][accepted].mean()) if accepted.any() else math.nan,
                }

    def _group_pool(self, field_type, group) -> tuple[float, str] | None:
        pool = self.group_pools_.get(group, {})
        if field_type is not None and field_type in pool:
            lam, src = pool[field_type], "type_group"
        elif "*" in pool:
            lam, src = pool["*"], "global_group"
        else:
            return None
        return lam, src if math.isfinite(lam) else "none"

    def _from_fallback(self, field_type) -> tuple[float, str]:
        for level in FALLBACKS[self.fallback]:
            if level == "type" and field_type is not None and field_type in self.type_thresholds_:
                return self.type_thresholds_[field_type], "type"
            if level == "global" and self.global_threshold_ is not None:
                return self.global_threshold_, "global"
        return REVIEW_ALL, "none"

    # -- use --------------------------------------------------------------------------------
    def lookup(
        self, field: str, field_type: str | None = None, group: str | None = None
    ) -> tuple[float, str]:
        """Threshold of a field and where it comes from: ``"group"``, ``"type_group"``,
        ``"global_group"``, ``"field"``, ``"type"``, ``"global"`` or ``"none"`` (``inf``:
        review always).

        A (field, group) cell certified on its own samples comes first; with
        ``group_fallback="pooled"`` then the group's pools (type, then all fields); then a
        calibration field has its own entry; a field never seen walks ``fallback`` from its
        ``field_type`` ((field, group) -> field -> type -> global).
        """
        check_is_fitted(self, "thresholds_")
        cell = self.group_thresholds_.get(field, {})
        if group is not None and group in cell:
            lam = cell[group]
            return lam, "group" if math.isfinite(lam) else "none"
        if group is not None and self.group_pools_:
            hit = self._group_pool(self.field_types_.get(field, field_type), group)
            if hit is not None:
                return hit
        if field in self.thresholds_:
            return self.thresholds_[field], self.sources_[field]
        lam, source = self._from_fallback(field_type)
        return lam, source if math.isfinite(lam) else "none"

    def lookup_many(
        self,
        fields: Sequence[str],
        field_types: Sequence[str | None] | None = None,
        groups: Sequence[str | None] | None = None,
    ) -> tuple[np.ndarray, list[str]]:
        """:meth:`lookup` for every row: thresholds (array) and sources (list), cached per field.

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> s = rng.uniform(size=2000)
        >>> y = (rng.uniform(size=2000) < 0.9 + 0.1 * s).astype(int)
        >>> sel = ThresholdSelector(target_accuracy=0.9, min_samples=100).fit(
        ...     s, y, ["a"] * 2000, ["amount"] * 2000)
        >>> lam, src = sel.lookup_many(["a", "b", "c"], ["amount", "amount", "date"])
        >>> src
        ['field', 'type', 'global']
        """
        types = [None] * len(fields) if field_types is None else list(field_types)
        grps = [None] * len(fields) if groups is None else list(groups)
        if not len(types) == len(grps) == len(fields):
            raise ValueError("fields, field_types and groups must have the same length")
        memo: dict[tuple[str, str | None, str | None], tuple[float, str]] = {}
        hits = [
            memo[key] if key in memo else memo.setdefault(key, self.lookup(*key))
            for key in zip(fields, types, grps, strict=True)
        ]
        lam = np.array([h[0] for h in hits], dtype=float).reshape(len(hits))
        return lam, [h[1] for h in hits]

    def threshold_for(self, field: str, field_type: str | None = None) -> float:
        """The threshold alone of :meth:`lookup`."""
        return self.lookup(field, field_type)[0]

    def predict(self, scores, fields, field_types=None, groups=None) -> np.ndarray:
        """Boolean accept mask: ``score >= lookup(field, field_type, group)[0]`` per row."""
        check_is_fitted(self, "thresholds_")
        s = np.asarray(scores, dtype=float)
        lam, _ = self.lookup_many(list(fields), field_types, groups)
        if len(s) != len(lam):
            raise ValueError("scores, fields and field_types must have the same length")
        # NaN scores compare False: an unscored field is never accepted.
        return s >= lam

    # -- persistence ------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; ``inf`` thresholds are written as ``null``."""
        check_is_fitted(self, "thresholds_")

        def enc(v):
            return None if v is None or not np.isfinite(v) else float(v)

        def nan_none(v):
            return None if math.isnan(v) else v

        params = self.get_params()
        if params["grid"] is not None:
            params["grid"] = np.asarray(params["grid"], dtype=float).tolist()
        return {
            "params": params,
            "min_samples": self.min_samples_,
            "global_threshold": enc(self.global_threshold_),
            "global_available": self.global_threshold_ is not None,
            "type_thresholds": {k: enc(v) for k, v in self.type_thresholds_.items()},
            "fields": {
                k: {
                    "threshold": enc(self.thresholds_[k]),
                    "source": self.sources_[k],
                    "field_type": self.field_types_[k],
                    "coverage": self.coverage_[k],
                    "accuracy": None if math.isnan(self.accuracy_[k]) else self.accuracy_[k],
                    "n_samples": self.n_samples_[k],
                }
                for k in self.thresholds_
            },
            "grouping": None if self.grouping_ is None else self.grouping_.to_dict(),
            "group_pools": {
                g: {k: enc(v) for k, v in pool.items()} for g, pool in self.group_pools_.items()
            },
            "groups": {
                k: {
                    g: {
                        **st,
                        "threshold": enc(st["threshold"]),
                        "accuracy": nan_none(st["accuracy"]),
                    }
                    for g, st in cells.items()
                }
                for k, cells in self.group_stats_.items()
            },
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ThresholdSelector:
        """Rebuild a fitted selector from :meth:`to_dict` output."""

        def dec(v):
            return REVIEW_ALL if v is None else float(v)

        sel = cls(**d["params"])
        sel.min_samples_ = int(d["min_samples"])
        sel.global_threshold_ = dec(d["global_threshold"]) if d["global_available"] else None
        sel.type_thresholds_ = {k: dec(v) for k, v in d["type_thresholds"].items()}
        fields = d["fields"]
        sel.thresholds_ = {k: dec(v["threshold"]) for k, v in fields.items()}
        sel.sources_ = {k: v["source"] for k, v in fields.items()}
        sel.field_types_ = {k: v["field_type"] for k, v in fields.items()}
        sel.coverage_ = {k: float(v["coverage"]) for k, v in fields.items()}
        sel.accuracy_ = {
            k: math.nan if v["accuracy"] is None else float(v["accuracy"])
            for k, v in fields.items()
        }
        sel.n_samples_ = {k: int(v["n_samples"]) for k, v in fields.items()}
        sel.grouping_ = None if d["grouping"] is None else Grouping.from_dict(d["grouping"])
        sel.group_pools_ = {
            g: {k: dec(v) for k, v in pool.items()} for g, pool in d["group_pools"].items()
        }
        sel.group_stats_ = {
            k: {
                g: {
                    **st,
                    "threshold": dec(st["threshold"]),
                    "accuracy": math.nan if st["accuracy"] is None else float(st["accuracy"]),
                }
                for g, st in cells.items()
            }
            for k, cells in d["groups"].items()
        }
        sel.group_thresholds_ = {
            k: {g: st["threshold"] for g, st in cells.items() if st["level"] == "group"}
            for k, cells in sel.group_stats_.items()
        }
        return sel

    def save(self, path: str | Path) -> Path:
        """Write the thresholds file (``path`` may be a directory or a ``.json`` file); the file
        carries its own checksum and format version (:mod:`confidence.persistence`)."""
        p = Path(path)
        if p.suffix != ".json":
            p = p / "thresholds.json"
        return persistence.save(self, p)

    @classmethod
    def load(cls, path: str | Path) -> ThresholdSelector:
        """Read what :meth:`save` wrote; :class:`~confidence.errors.ModelError` if unusable."""
        p = Path(path)
        if p.is_dir():
            p = p / "thresholds.json"
        if not p.exists():
            raise ModelError(f"{p}: no thresholds file; run `extractconf tune` first")
        return persistence.load(p, expect=cls)

"""Out-of-domain check without labels: is a document (a batch) like the calibration documents?

The thresholds' guarantee holds for documents that resemble the ones they were certified on.
:class:`DomainReference` keeps a compact sketch of reference feature rows in the model folder
(``domain.json``) and scores new documents against it:

1. **Per-feature ranks.** Each feature value becomes a normal score ``z = Phi^-1(F(x))``, where
   ``F`` is the mid-rank empirical CDF of the feature's stored reference values (ties, e.g. the
   0/1 agreement flags, get their mid-rank; a missing value gets ``z = 0``, so a caller without
   logprobs or pages is not "novel" for lacking them - the fusion was trained for that).
2. **Mahalanobis on ranks.** A row's distance is ``z' S^-1 z`` with ``S`` the Ledoit-Wolf
   shrunk covariance of the reference ``z`` (correlated signals are not counted twice); a
   document's distance is the mean over its fields.
3. **Conformal p-value per document** (``novelty_p``): the share of held-out reference documents
   at least as far, ``(1 + #{d_ref >= d}) / (n_ref + 1)``. The reference documents are split in
   two: one half sketches ``F`` and ``S``, the other gives ``d_ref``, so an in-domain document's
   p-value is (super-)uniform.
   **Per schema (Mondrian).** Given each row's schema key (``schemas``, see
   :mod:`confidence.domain_schemas`), the split is drawn within each schema and the held-out
   distances are kept per schema too: a document is compared with the reference documents of
   its own schema (the rank sketch and covariance stay pooled: they only define the distance),
   so its p-value is (super-)uniform whatever the mix of schemas of the reference. A document of
   a schema the reference has not seen is compared with the pooled distances, and
   :attr:`DomainCheck.reference` says so (``"pooled"``).
   Columns that a caller may lack as a whole (``optional_columns``: the page features, absent
   when scoring without documents) get a second calibration without them: a document whose rows
   have none of them is compared on the other columns only, against reference distances
   computed the same way, so its p-value stays calibrated instead of being diluted.
4. **Batch shift** (``batch_shift_p``): in domain the documents' p-values are about uniform;
   Fisher's combination of them (``scipy.stats.combine_pvalues``) is the batch p-value. It sees
   a batch whose documents are all somewhat unusual, which counting documents below ``alpha``
   misses. A batch is shifted when that p-value is below ``batch_level`` *and* the median
   novelty p-value is at most ``max_median`` (an effect size: about 0.5 in domain, so a huge
   batch is not flagged for a negligible tilt).

Why this and not a classifier two-sample test: it needs no training at score time, works for a
single document, stores a few hundred numbers per feature, and its per-document p-value has a
finite-sample meaning. Stored values are rounded to 6 significant digits (the file stays small;
what is stored is what was measured).

Examples
--------
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(2000, 3))
>>> docs = np.repeat(np.arange(400), 5)
>>> ref = DomainReference(columns=[0, 1, 2]).fit(X, groups=docs)
>>> same = ref.check(rng.normal(size=(200, 3)), np.repeat(np.arange(40), 5))
>>> bool(same.shifted)
False
>>> moved = ref.check(rng.normal(2.0, 1.0, size=(200, 3)), np.repeat(np.arange(40), 5))
>>> bool(moved.shifted), float(moved.share_novel) > 0.5
(True, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from scipy import special, stats
from sklearn.base import BaseEstimator
from sklearn.covariance import LedoitWolf
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from confidence import persistence
from confidence.domain_schemas import POOLED, SchemaCalibration, conformal_p
from confidence.features.build import FEATURE_NAMES

__all__ = ["DomainCheck", "DomainReference", "domain_columns"]


def domain_columns(X, names: Sequence[str] = FEATURE_NAMES, *, min_present: float = 0.05):
    """Indices of the columns worth comparing: not the field-type one-hot (``type_*``: fixed by
    the schema, so within a schema it carries nothing about the documents, and for a schema the
    reference has not seen it would make the mix of field types look novel), present in at
    least ``min_present`` of the rows and not constant. The arithmetic consistency flags
    (``cons_*``) are compared: within a schema whether amounts add up depends on the documents
    and the readings, and the per-schema distances absorb that some schemas have no such flags.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0, np.nan], [2.0, 0.0, np.nan]])
    >>> domain_columns(X, ["a", "type_id", "c"])
    [0]
    """
    X = np.asarray(X, dtype=float)
    out = []
    for j, name in enumerate(names):
        v = X[:, j][np.isfinite(X[:, j])]
        if not name.startswith("type_") and len(v) >= min_present * len(X) and np.ptp(v) > 0:
            out.append(j)
    return out


def _quadratic(Z: np.ndarray, precision: np.ndarray) -> np.ndarray:
    """``z' P z`` of every row ``z`` of ``Z`` (one matrix product)."""
    return ((Z @ precision) * Z).sum(axis=1)


def _round(a: np.ndarray, digits: int) -> np.ndarray:
    """Round to ``digits`` significant digits (what the JSON file stores)."""
    return np.array([float(f"{x:.{digits}g}") for x in np.ravel(a)]).reshape(np.shape(a))


def shift_warning(share_novel: float, n_documents: int, batch_p: float) -> str:
    """The one warning line of a shifted batch.

    Examples
    --------
    >>> shift_warning(0.5, 10, 0.001).split(":")[0]
    '50% of the 10 documents are unlike the calibration documents (shift p=0.001)'
    """
    return (
        f"{share_novel:.0%} of the {n_documents} documents are unlike the calibration documents "
        f"(shift p={batch_p:.2g}): the thresholds' guarantee may not hold for this batch; "
        "re-tune on labelled documents of this domain"
    )


@dataclass(frozen=True)
class DomainCheck:
    """Result of :meth:`DomainReference.check` for one batch.

    ``doc_ids`` in first-seen order with their ``novelty_p`` (small = unlike the reference) and
    ``out_of_domain`` (``novelty_p < alpha``); ``share_novel`` the batch's share of such
    documents, ``batch_p`` Fisher's combination of the p-values and ``shifted`` the verdict.
    ``reference`` per document: the schema key whose reference documents it was compared with,
    or ``"pooled"`` (a schema the reference has not seen, or a reference without schemas).
    """

    doc_ids: tuple[str, ...]
    novelty_p: np.ndarray
    out_of_domain: np.ndarray
    share_novel: float
    batch_p: float
    shifted: bool
    reference: tuple[str, ...] = ()

    @property
    def pooled_documents(self) -> tuple[str, ...]:
        """The documents compared with the pooled reference (``reference == "pooled"``)."""
        return tuple(d for d, r in zip(self.doc_ids, self.reference, strict=True) if r == POOLED)

    def per_document(self) -> dict[str, tuple[float, bool]]:
        """doc_id -> (novelty_p, out_of_domain)."""
        return {
            d: (float(p), bool(o))
            for d, p, o in zip(self.doc_ids, self.novelty_p, self.out_of_domain, strict=True)
        }


@persistence.register_part("domain_reference", format_version=2)
class DomainReference(BaseEstimator):
    """A sketch of reference feature rows and the novelty test against it (module docstring).

    Parameters
    ----------
    columns : sequence of int
        Feature columns compared (indices into the rows passed to ``fit`` and ``check``).
    optional_columns : sequence of int, default ()
        Those of ``columns`` a caller may lack all at once (page features); see step 3.
    max_values : int, default 400
        Reference values stored per feature (an evenly spaced subsample of the sorted values).
    alpha : float, default 0.01
        A document is out of domain when its ``novelty_p < alpha``.
    batch_level : float, default 0.01
        A batch is shifted when Fisher's combined p-value is below this ...
    max_median : float, default 0.25
        ... and the median novelty p-value of its documents is at most this.
    random_state : int, default 0
        Seed of the document split (sketch half / calibration half).
    """

    _parameter_constraints: ClassVar[dict] = {
        "columns": ["array-like"],
        "optional_columns": ["array-like"],
        "max_values": [Interval(Integral, 10, None, closed="left")],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "batch_level": [Interval(Real, 0, 1, closed="neither")],
        "max_median": [Interval(Real, 0, 1, closed="both")],
        "random_state": [Interval(Integral, None, None, closed="neither")],
    }

    def __init__(
        self,
        *,
        columns: Sequence[int] = (),
        optional_columns: Sequence[int] = (),
        max_values: int = 400,
        alpha: float = 0.01,
        batch_level: float = 0.01,
        max_median: float = 0.25,
        random_state: int = 0,
    ) -> None:
        self.columns = columns
        self.optional_columns = optional_columns
        self.max_values = max_values
        self.alpha = alpha
        self.batch_level = batch_level
        self.max_median = max_median
        self.random_state = random_state

    def fit(self, X, *, groups, schemas=None) -> DomainReference:
        """Sketch reference rows ``X`` (one per field; ``groups`` = their documents).

        ``schemas`` (one key per row, constant within a document, e.g.
        :func:`~confidence.domain_schemas.row_schema_keys`) keeps the held-out distances per
        schema (module docstring); without it the reference is pooled.
        """
        self._validate_params()
        X = np.asarray(X, dtype=float)[:, list(self.columns)]
        groups = np.asarray(groups)
        if len(X) != len(groups):
            raise ValueError("groups needs one document id per row of X")
        doc_key = self._doc_keys(groups, schemas)
        if len(doc_key) < 20:
            raise ValueError(f"{len(doc_key)} reference documents; need at least 20")
        rng = np.random.default_rng(self.random_state)
        held_docs: list = []
        for key in sorted(set(doc_key.values())):  # split within each schema
            docs = sorted(d for d, k in doc_key.items() if k == key)
            held_docs += list(rng.choice(docs, size=(len(docs) + 1) // 2, replace=False))
        held = np.isin(np.asarray([str(g) for g in groups]), held_docs)
        self.values_ = [self._sketch(X[~held, j]) for j in range(X.shape[1])]
        Z = self._z(X[~held])
        self.precision_ = _round(LedoitWolf().fit(Z).precision_, 8)
        self.core_precision_ = None
        core = self._core()
        if len(core) < X.shape[1]:
            self.core_precision_ = _round(LedoitWolf().fit(Z[:, core]).precision_, 8)
        ids, dist = self._doc_distances(X[held], groups[held])
        core_dist = None
        if self.core_precision_ is not None:
            Xc = X[held].copy()
            Xc[:, ~np.isin(np.arange(X.shape[1]), core)] = np.nan
            core_dist = self._doc_distances(Xc, groups[held])[1]
        self.reference_distances_ = np.sort(dist)
        self.core_distances_ = None if core_dist is None else np.sort(core_dist)
        self.schemas_ = {}
        if schemas is not None:
            keys = np.array([doc_key[i] for i in ids], dtype=object)
            for key in sorted(set(keys)):
                m = keys == key
                self.schemas_[key] = SchemaCalibration(
                    key, dist[m], None if core_dist is None else core_dist[m]
                )
        return self

    @staticmethod
    def _doc_keys(groups, schemas) -> dict:
        """document -> its schema key (one pooled key without ``schemas``)."""
        if schemas is None:
            return dict.fromkeys((str(g) for g in groups), POOLED)
        if len(schemas) != len(groups):
            raise ValueError("schemas needs one schema key per row")
        out = dict(zip(map(str, groups), map(str, schemas), strict=True))
        if len(set(zip(map(str, groups), map(str, schemas), strict=True))) > len(out):
            seen: dict[str, str] = {}  # a document of two schemas: name the first one
            for g, k in zip(groups, schemas, strict=True):
                if seen.setdefault(str(g), str(k)) != str(k):
                    raise ValueError(f"document {g}: rows of two schemas ({seen[str(g)]}, {k})")
        return out

    def _core(self) -> np.ndarray:
        """Positions (within ``columns``) of the columns that are not optional."""
        optional = set(int(c) for c in self.optional_columns)
        return np.array([i for i, c in enumerate(self.columns) if int(c) not in optional], int)

    def _sketch(self, v: np.ndarray) -> np.ndarray:
        v = np.sort(v[np.isfinite(v)])
        if len(v) > self.max_values:
            v = v[np.linspace(0, len(v) - 1, self.max_values).round().astype(int)]
        return _round(v, 6)

    def _z(self, X: np.ndarray) -> np.ndarray:
        Z = np.zeros_like(X)
        for j, ref in enumerate(self.values_):
            x = X[:, j]
            ok = np.isfinite(x)
            if len(ref) == 0 or not ok.any():
                continue
            lo = np.searchsorted(ref, x[ok], side="left")
            hi = np.searchsorted(ref, x[ok], side="right")
            n = len(ref)
            # F takes one of 2n + 1 values (lo + hi is an integer): the normal score of each,
            # stats.norm.ppf(F) (ndtri(F) * scale + loc, scale 1, loc 0), is looked up
            F = np.clip(np.arange(2 * n + 1) / (2 * n), 0.5 / n, 1 - 0.5 / n)
            Z[ok, j] = (special.ndtri(F) * 1.0 + 0.0)[lo + hi]
        return Z

    def _doc_distances(self, X: np.ndarray, groups) -> tuple[list[str], np.ndarray]:
        """Mean row distance per document; rows without any optional column use the core view."""
        Z = self._z(X)
        lacking = np.zeros(len(X), dtype=bool)
        if getattr(self, "core_precision_", None) is not None:
            core = self._core()
            lacking = ~np.isfinite(np.delete(X, core, axis=1)).any(axis=1)
        d = np.empty(len(X))
        if not lacking.all():  # each view only on its own rows (rows scored without documents
            Zf = Z[~lacking] if lacking.any() else Z  # all lack the page columns)
            d[~lacking] = _quadratic(Zf, self.precision_)
        if lacking.any():
            d[lacking] = _quadratic(Z[np.ix_(lacking, core)], self.core_precision_)
        names = list(map(str, groups))
        ids = list(dict.fromkeys(names))  # first-seen order
        pos = {g: i for i, g in enumerate(ids)}
        inv = np.fromiter(map(pos.__getitem__, names), dtype=np.intp, count=len(names))
        mean = np.bincount(inv, weights=d, minlength=len(ids)) / np.bincount(inv)
        return ids, mean

    def novelty_p(self, X, groups, schemas=None) -> tuple[list[str], np.ndarray]:
        """(doc_ids, conformal p-value per document); small = unlike the reference."""
        ids, p, _ = self._novelty(X, groups, schemas)
        return ids, p

    def _novelty(self, X, groups, schemas) -> tuple[list[str], np.ndarray, list[str]]:
        check_is_fitted(self, "values_")
        X = np.asarray(X, dtype=float)[:, list(self.columns)]
        ids, d = self._doc_distances(X, groups)
        doc_key = self._doc_keys(groups, schemas)
        lack = np.zeros(len(ids), dtype=bool)
        if self.core_distances_ is not None:  # documents scored without their optional columns
            opt = ~np.isin(np.arange(X.shape[1]), self._core())
            rows_with = np.isfinite(X[:, opt]).any(axis=1)
            has = {str(g) for g, w in zip(groups, rows_with, strict=True) if w}
            lack = np.array([i not in has for i in ids], dtype=bool)
        p = np.empty(len(ids))
        ref = [doc_key[i] if doc_key[i] in self.schemas_ else POOLED for i in ids]
        for key in set(ref):
            m = np.array([r == key for r in ref], dtype=bool)
            for core in (False, True):
                mm = m & (lack if core else ~lack)
                if not mm.any():
                    continue
                if key == POOLED:
                    pooled = self.core_distances_ if core else self.reference_distances_
                    p[mm] = conformal_p(d[mm], pooled)
                else:
                    p[mm] = self.schemas_[key].p_values(d[mm], core=core)
        return ids, p, ref

    def check(self, X, groups, schemas=None) -> DomainCheck:
        """Novelty per document and the batch verdict for rows ``X`` of documents ``groups``
        (``schemas``: each row's schema key, as given to :meth:`fit`)."""
        ids, p, ref = self._novelty(X, groups, schemas)
        share, batch_p, shifted = self.batch_verdict(p)
        return DomainCheck(tuple(ids), p, p < self.alpha, share, batch_p, shifted, tuple(ref))

    def batch_verdict(self, novelty_p) -> tuple[float, float, bool]:
        """(share out of domain, Fisher's combined p-value, shifted) of a batch's per-document
        novelty p-values (a distributed job combines them once it has all of them).

        Examples
        --------
        >>> ref = DomainReference(alpha=0.01, batch_level=0.01, max_median=0.25)
        >>> ref.batch_verdict([0.5, 0.4])
        (0.0, 0.5..., False)
        >>> ref.batch_verdict([0.001] * 3)[2]
        True
        """
        p = np.asarray(novelty_p, dtype=float)
        n = len(p)
        batch_p = float(stats.combine_pvalues(p, method="fisher").pvalue) if n else 1.0
        share = float((p < self.alpha).mean()) if n else 0.0
        shifted = bool(n and batch_p < self.batch_level and np.median(p) <= self.max_median)
        return share, batch_p, shifted

    # -- persistence ---------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        check_is_fitted(self, "values_")
        return {
            "params": {
                **self.get_params(),
                "columns": [int(c) for c in self.columns],
                "optional_columns": [int(c) for c in self.optional_columns],
            },
            "values": [v.tolist() for v in self.values_],
            "precision": self.precision_.tolist(),
            "reference_distances": self.reference_distances_.tolist(),
            "core_precision": None
            if self.core_precision_ is None
            else self.core_precision_.tolist(),
            "core_distances": None
            if self.core_distances_ is None
            else self.core_distances_.tolist(),
            "schemas": [c.to_dict() for c in self.schemas_.values()],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DomainReference:
        ref = cls(**d["params"])
        ref.values_ = [np.asarray(v, dtype=float) for v in d["values"]]
        ref.precision_ = np.asarray(d["precision"], dtype=float)
        ref.reference_distances_ = np.asarray(d["reference_distances"], dtype=float)
        core = d.get("core_precision")
        ref.core_precision_ = None if core is None else np.asarray(core, dtype=float)
        dist = d.get("core_distances")
        ref.core_distances_ = None if dist is None else np.asarray(dist, dtype=float)
        cals = [SchemaCalibration.from_dict(c) for c in d.get("schemas", ())]
        ref.schemas_ = {c.key: c for c in cals}
        if any((c.core_distances is None) != (ref.core_precision_ is None) for c in cals):
            raise ValueError("domain reference: per-schema distances do not match its columns")
        if ref.precision_.shape != (len(ref.columns),) * 2 or len(ref.values_) != len(ref.columns):
            raise ValueError("domain reference sketch does not match its columns")
        return ref

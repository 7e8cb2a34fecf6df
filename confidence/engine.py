"""The confidence engine: feature rows -> calibrated P(correct) -> accept / review with reasons.

:class:`ConfidenceEngine` bundles the three fitted parts of extractconf:

1. :class:`~confidence.fusion.FusionClassifier` (LightGBM) fuses the ~80 features of a field;
2. a calibrator (isotonic, Platt or Lasso) maps its score to P(correct);
3. a :class:`~confidence.calibration.ThresholdSelector` gives each field the lowest threshold
   that keeps the accuracy of accepted fields >= ``target_accuracy`` with probability
   ``confidence_level``.

``fit`` splits the *documents* three ways (fusion / calibration / thresholds, ``split``) so the
calibrator and the threshold guarantee are fitted on documents the earlier stages never saw.

A saved engine is a folder without pickle: ``fusion.lgb.txt`` + ``fusion.json`` (LightGBM text
model), ``calibrator.json``, ``thresholds.json`` and ``engine.json`` (format version, extractconf
version, feature names, the schema seen at training, metrics on the held-out threshold split).
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from confidence import __version__
from confidence.calibration import (
    ThresholdSelector,
    calibrator_from_dict,
    evaluate_scores,
    make_calibrator,
)
from confidence.errors import DatasetError, ModelError
from confidence.features.build import (
    FEATURE_NAMES,
    LOGPROB_FEATURES,
    MONOTONE,
    RecordRows,
    document_mask,
    record_rows,
)
from confidence.fusion import FusionClassifier
from confidence.jsonsafe import jsonable
from confidence.readings import CallResult, FieldReading, RunRecord
from confidence.records import as_run_record
from confidence.routing import decide, reasons, straight_through, thresholds_for
from confidence.schema import Schema
from confidence.types import Document

__all__ = ["ENGINE_FORMAT", "ConfidenceEngine", "FieldScore", "default_model_dir"]

ENGINE_FORMAT = 1
ENGINE_FILE = "engine.json"
CALIBRATOR_FILE = "calibrator.json"
THRESHOLDS_FILE = "thresholds.json"
UNCERTIFIED = "no threshold certified for this field: always reviewed"
RECALIBRATION_SIGNALS = ("agree_equal", "agree_similarity", "agree_hunter_only", "ocr_h_found")
"""Features the Lasso recalibrator may re-weight beside the fused score (NaN read as 0)."""


def default_model_dir() -> Path:
    """Folder of the model shipped inside the package."""
    return Path(__file__).resolve().parent / "models" / "default"


@dataclass(frozen=True)
class FieldScore:
    """The verdict on one field of one document (one row of the scored output).

    ``value`` is the reported value (the Hunter's, else the Mapper's); ``confidence`` the
    calibrated P(correct) (None when the field could not be scored, ``status="error"``);
    ``decision`` ``"accept"`` or ``"review"``; ``threshold`` the field's threshold (None = review
    always) and ``threshold_source`` where it came from (field / type / global / none);
    ``reasons`` short phrases from the feature contributions.

    Examples
    --------
    >>> s = FieldScore("d1", "total", "amount", "9.00", "9.00", "9.00", 0.98, "accept", 0.9,
    ...                "field", ("Hunter and Mapper agree",))
    >>> FieldScore.from_dict(s.to_dict()) == s
    True
    """

    doc_id: str
    field: str
    field_type: str
    value: str | None
    hunter_value: str | None
    mapper_value: str | None
    confidence: float | None
    decision: str
    threshold: float | None
    threshold_source: str
    reasons: tuple[str, ...] = ()
    status: str = "ok"
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["reasons"] = list(self.reasons)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FieldScore:
        kw = {f.name: d.get(f.name) for f in fields(cls) if f.name in d}
        kw["reasons"] = tuple(d.get("reasons") or ())
        return cls(**kw)


BALANCE_MODES = (None, "type")


def balance_weights(y, types, mode: str | None) -> np.ndarray | None:
    """Row weights giving correct and wrong rows equal weight within each field type.

    A type keeps its share of the total weight; a type with only one class keeps weight 1.

    Examples
    --------
    >>> balance_weights([1, 1, 1, 0, 1, 0], ["a", "a", "a", "a", "b", "b"], "type").tolist()
    [0.6666666666666666, 0.6666666666666666, 0.6666666666666666, 2.0, 1.0, 1.0]
    >>> balance_weights([1, 0], ["a", "a"], None) is None
    True
    """
    if mode not in BALANCE_MODES:
        raise ValueError(f"balance={mode!r}; use None or 'type'")
    if mode is None:
        return None
    from sklearn.utils.class_weight import compute_sample_weight

    y = np.asarray(y)
    types = np.asarray(types, dtype=object)
    w = np.ones(len(y))
    for t in np.unique(types):
        m = types == t
        w[m] = compute_sample_weight("balanced", y[m])  # n / (2 n_class); 1 for one class
    return w


def _split_groups(groups: np.ndarray, split: Sequence[float], seed: int) -> list[np.ndarray]:
    uniq = np.unique(groups)
    order = np.random.default_rng(seed).permutation(len(uniq))
    cuts = np.round(np.cumsum(split)[:-1] / sum(split) * len(uniq)).astype(int)
    parts = np.split(uniq[order], cuts)
    return [np.isin(groups, p) for p in parts]


class ConfidenceEngine(BaseEstimator):
    """Fusion + calibration + thresholds, with routing and reasons.

    Parameters
    ----------
    calibrator : {"isotonic", "platt"} or object, default "isotonic"
    target_accuracy : float, default 0.99
    confidence_level : float, default 0.9
    split : (float, float, float), default (0.6, 0.2, 0.2)
        Shares of documents for fusion training, calibration and threshold selection.
    augment : float, default 0.25
        Share of fusion-training rows repeated without page features and again without logprobs,
        so the model knows what to do when a caller has no document or no logprobs.
    fusion_params : dict or None
        Parameters of :class:`~confidence.fusion.FusionClassifier`. Its ``monotone``
        defaults to :data:`confidence.features.build.MONOTONE` (pass ``{"monotone": None}``
        for unconstrained trees).
    balance : {None, "type"}, default None
        ``"type"`` weights the fusion-training rows so that, within every field type, correct and
        wrong rows carry equal weight (each type keeps its share of the total). The fused score
        then cannot lean on how often a field type happens to be right in the training data, a
        prior that does not carry over to other documents; the calibrator (fitted on unweighted
        rows) restores probabilities.
    random_state : int, default 0

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> n = 3000
    >>> X = np.full((n, len(FEATURE_NAMES)), np.nan)
    >>> y = (rng.uniform(size=n) < 0.8).astype(int)
    >>> X[:, 4] = np.where(rng.uniform(size=n) < 0.9, y, 1 - y)  # agree_equal
    >>> groups = np.repeat(np.arange(n // 5), 5)
    >>> fields = np.tile(["a", "b", "c", "d", "e"], n // 5)
    >>> eng = ConfidenceEngine(target_accuracy=0.9).fit(X, y, groups=groups, fields=fields,
    ...                                                  field_types=["text"] * n)
    >>> p = eng.predict_confidence(X[:2]); bool(0 <= p.min() and p.max() <= 1)
    True
    """

    def __init__(
        self,
        *,
        calibrator="isotonic",
        target_accuracy: float = 0.99,
        confidence_level: float = 0.9,
        split: tuple[float, float, float] = (0.6, 0.2, 0.2),
        augment: float = 0.25,
        fusion_params: dict[str, Any] | None = None,
        balance: str | None = None,
        random_state: int = 0,
    ) -> None:
        self.calibrator = calibrator
        self.target_accuracy = target_accuracy
        self.confidence_level = confidence_level
        self.split = split
        self.augment = augment
        self.fusion_params = fusion_params
        self.balance = balance
        self.random_state = random_state

    # -- fitting ------------------------------------------------------------------------------
    @staticmethod
    def _check_table(X, y, groups, fields, field_types):
        X = np.asarray(X, dtype=float)
        y = np.asarray(y)
        n = len(y)
        if n == 0:
            raise DatasetError("no labelled fields to train on; check the dataset and the runs")
        if X.shape != (n, len(FEATURE_NAMES)):
            raise DatasetError(
                f"X must have shape ({n}, {len(FEATURE_NAMES)}) (one row per field, columns "
                f"FEATURE_NAMES), got {X.shape}"
            )
        if np.isnan(X).all():
            raise DatasetError("every feature is missing (NaN); the runs carry no usable signal")
        if not np.isin(y, (0, 1)).all():
            raise DatasetError("labels must be 0/1 (1 = the extracted value is correct)")
        if len(np.unique(y)) < 2:
            what = "correct" if y[0] == 1 else "wrong"
            raise DatasetError(
                f"all {n} labelled fields are {what}; training needs both correct and wrong "
                "extractions (add documents, or harder ones)"
            )
        groups, fields = np.asarray(groups), np.asarray(fields, dtype=object)
        types = np.asarray(field_types, dtype=object)
        if not groups.shape == fields.shape == types.shape == (n,):
            raise DatasetError("groups, fields and field_types need one entry per row of X")
        return X, y.astype(int), groups, fields, types

    def _augment(self, X, y, g, rng):
        """Rows for fusion training and, per row, the index of the original row it copies."""
        if not self.augment:
            return X, y, g, np.arange(len(y))
        k = round(self.augment * len(y))
        extra_X, idx_all = [X], [np.arange(len(y))]
        for cols in (document_mask(), np.isin(FEATURE_NAMES, LOGPROB_FEATURES)):
            idx = rng.choice(len(y), size=k, replace=False)
            Z = X[idx].copy()
            Z[:, cols] = np.nan
            extra_X.append(Z)
            idx_all.append(idx)
        idx = np.concatenate(idx_all)
        return np.vstack(extra_X), y[idx], g[idx], idx

    def fit(self, X, y, *, groups, fields, field_types, schema: Schema | None = None):
        """Fit fusion, calibrator and thresholds on a labelled feature table.

        Parameters
        ----------
        X : array of shape (n, len(FEATURE_NAMES))
        y : array of 0/1, 1 = the reported value is correct
        groups : array of document ids (splits never cut a document)
        fields, field_types : arrays of field names and schema types
        schema : Schema, optional
            Recorded in ``engine.json``.
        """
        X, y, groups, fields, types = self._check_table(X, y, groups, fields, field_types)
        if len(self.split) != 3 or min(self.split) <= 0:
            raise ValueError(f"split={self.split!r}; pass three positive shares")
        if len(np.unique(groups)) < 3:
            raise DatasetError("need at least 3 documents to split fusion/calibration/thresholds")
        fit_m, cal_m, thr_m = _split_groups(groups, self.split, self.random_state)
        for name, m in (("calibration", cal_m), ("threshold", thr_m)):
            if len(np.unique(y[m])) < 2:
                raise DatasetError(
                    f"the {name} split has only {'correct' if y[m][0] else 'wrong'} fields; "
                    "add labelled documents (a few dozen at least)"
                )
        rng = np.random.default_rng(self.random_state)
        Xf, yf, gf, src = self._augment(X[fit_m], y[fit_m], groups[fit_m], rng)
        self.fusion_ = FusionClassifier(**{"monotone": MONOTONE, **(self.fusion_params or {})})
        self.fusion_.fit(
            Xf,
            yf,
            groups=gf,
            feature_names=list(FEATURE_NAMES),
            sample_weight=balance_weights(yf, types[fit_m][src], self.balance),
        )
        self._fit_calibrator(X[cal_m], y[cal_m], groups[cal_m], self.calibrator)
        p_thr = self.predict_confidence(X[thr_m])
        self.thresholds_ = ThresholdSelector(
            target_accuracy=self.target_accuracy, confidence_level=self.confidence_level
        ).fit(p_thr, y[thr_m], fields[thr_m], types[thr_m])
        self.schema_ = schema
        self.field_types_seen_ = sorted({str(t) for t in types})
        self.metrics_ = {
            "held_out": evaluate_scores(y[thr_m], p_thr),
            "n_documents": {
                "fusion": len(np.unique(groups[fit_m])),
                "calibration": len(np.unique(groups[cal_m])),
                "thresholds": len(np.unique(groups[thr_m])),
            },
            "n_fields": len(y),
            "failure_rate": float(1 - y.mean()),
        }
        return self

    def _signals(self, X: np.ndarray, names: Sequence[str]) -> dict[str, np.ndarray] | None:
        if not names:
            return None
        idx = {n: i for i, n in enumerate(FEATURE_NAMES)}
        return {n: np.nan_to_num(X[:, idx[n]], nan=0.0) for n in names}

    def _fit_calibrator(self, X, y, groups, spec) -> None:
        cal = make_calibrator(spec)
        self.calibrator_signals_ = (
            list(RECALIBRATION_SIGNALS) if type(cal).__name__ == "LassoRecalibrator" else []
        )
        s = self.fusion_.predict_proba(X)[:, 1]
        try:
            cal.fit(s, y, signals=self._signals(X, self.calibrator_signals_), groups=groups)
        except ValueError as e:
            raise DatasetError(f"cannot fit the {spec} calibrator: {e}") from e
        self.calibrator_ = cal

    def recalibrate(self, X, y, *, groups=None, calibrator="lasso") -> ConfidenceEngine:
        """A copy whose calibrator is refitted on labelled rows of a new domain (fusion frozen).

        ``"lasso"`` re-weights the fused score together with :data:`RECALIBRATION_SIGNALS`.
        Thresholds are kept; re-run :meth:`tune` on fresh labelled documents to restore the
        guarantee in the new domain.
        """
        check_is_fitted(self, "fusion_")
        X = np.asarray(X, dtype=float)
        y = np.asarray(y).astype(int)
        if len(np.unique(y)) < 2:
            raise DatasetError("recalibration needs both correct and wrong labelled fields")
        new = self._copy()
        new._fit_calibrator(X, y, groups, calibrator)
        return new

    def tune(
        self, X, y, *, fields, field_types, target_accuracy=None, confidence_level=None
    ) -> ConfidenceEngine:
        """A copy with thresholds re-selected on labelled rows (fusion and calibrator frozen)."""
        check_is_fitted(self, "fusion_")
        new = self._copy()
        sel = ThresholdSelector(
            target_accuracy=target_accuracy or self.target_accuracy,
            confidence_level=confidence_level or self.confidence_level,
        )
        try:
            new.thresholds_ = sel.fit(self.predict_confidence(X), y, fields, field_types)
        except ValueError as e:
            raise DatasetError(f"cannot select thresholds: {e}") from e
        return new

    def with_thresholds(self, selector: ThresholdSelector) -> ConfidenceEngine:
        """A copy that routes with another (e.g. ``extractconf tune``) threshold selector."""
        new = self._copy()
        new.thresholds_ = selector
        return new

    def _copy(self) -> ConfidenceEngine:
        new = ConfidenceEngine(**self.get_params())
        new.__dict__.update({k: v for k, v in self.__dict__.items() if k.endswith("_")})
        return new

    # -- prediction ---------------------------------------------------------------------------
    def predict_confidence(self, X) -> np.ndarray:
        """Calibrated P(correct) for feature rows (NaN features allowed)."""
        check_is_fitted(self, "fusion_")
        X = np.asarray(X, dtype=float)
        if len(X) == 0:
            return np.empty(0)
        s = self.fusion_.predict_proba(X)[:, 1]
        p = self.calibrator_.predict_proba(s, signals=self._signals(X, self.calibrator_signals_))
        return np.clip(np.asarray(p, dtype=float), 0.0, 1.0)

    def route_rows(self, rows: RecordRows, *, explain: bool = True) -> list[FieldScore]:
        """Score, route and explain prepared :class:`~confidence.features.build.RecordRows`."""
        check_is_fitted(self, "fusion_")
        n = len(rows)
        ok = np.array([s == "ok" for s in rows.status], dtype=bool)
        conf = np.full(n, np.nan)
        Xok = rows.X[ok]
        conf[ok] = self.predict_confidence(Xok)
        lam, src = thresholds_for(self.thresholds_, rows.fields, rows.field_types)
        dec = decide(conf, lam)
        why: list[list[str]] = [[] for _ in range(n)]
        if explain and ok.any():
            C = self.fusion_.contributions(Xok)
            words = reasons(C, Xok, FEATURE_NAMES, dec[ok])
            for i, w in zip(np.flatnonzero(ok), words, strict=True):
                # reviewed only because no threshold can be certified: say that first
                why[i] = [UNCERTIFIED, *w[:2]] if not math.isfinite(lam[i]) else w
        unseen = {t for t in rows.field_types if t not in self.field_types_seen_}
        if unseen:
            warnings.warn(
                f"field type(s) {sorted(unseen)} were not seen in training; their confidence "
                "relies on the other signals and their thresholds on the global fallback",
                stacklevel=3,
            )
        out = []
        for i in range(n):
            good = bool(ok[i])
            out.append(
                FieldScore(
                    doc_id=rows.doc_ids[i],
                    field=rows.fields[i],
                    field_type=rows.field_types[i],
                    value=rows.values[i],
                    hunter_value=rows.hunter_values[i],
                    mapper_value=rows.mapper_values[i],
                    confidence=float(conf[i]) if good else None,
                    decision=str(dec[i]),
                    threshold=float(lam[i]) if math.isfinite(lam[i]) else None,
                    threshold_source=src[i],
                    reasons=tuple(why[i]),
                    status=rows.status[i],
                    error=rows.error[i],
                )
            )
        return out

    def score_records(
        self,
        records: Iterable[RunRecord | Mapping[str, Any]],
        schema: Schema,
        documents: Mapping[str, Document] | Sequence[Document | None] | None = None,
        *,
        explain: bool = True,
    ) -> list[FieldScore]:
        """Score recorded runs: RunRecords, ``runs.jsonl`` dicts or third-party dicts.

        Third-party dicts are ``{"doc_id", "fields": {name: value}}`` (optionally with
        ``"mapper"`` and per-value logprobs, see :mod:`confidence.records`). Without
        ``documents`` the page features are NaN (unknown) and the score rests on the other
        signals. All rows are scored with one model call (vectorised).

        Examples
        --------
        >>> from confidence.schema import Field
        >>> schema = Schema("s", (Field("total", "amount"),))
        >>> eng = ConfidenceEngine.load()  # the shipped default model  # doctest: +SKIP
        >>> rows = eng.score_records([{"doc_id": "a", "fields": {"total": "9.00"}}],
        ...                          schema)  # doctest: +SKIP
        """
        recs = [as_run_record(r) for r in records]
        if documents is not None and not isinstance(documents, Mapping):
            docs = list(documents)
            if len(docs) != len(recs):
                raise DatasetError(f"{len(docs)} documents for {len(recs)} records; align them")
            documents = {r.doc_id: d for r, d in zip(recs, docs, strict=True) if d is not None}
        return self.route_rows(record_rows(recs, schema, documents), explain=explain)

    def score(
        self,
        document: Document | None,
        hunter: CallResult | Mapping[str, FieldReading | str | None],
        mapper: CallResult | Mapping[str, FieldReading | str | None] | None,
        *,
        schema: Schema,
        doc_id: str | None = None,
    ) -> list[FieldScore]:
        """Score one document's Hunter and Mapper readings (CallResults or name -> value)."""
        did = doc_id or (document.doc_id if document is not None else "document")
        rec = RunRecord(did, _call("hunter", hunter), _call("mapper", mapper))
        docs = {did: replace(document, doc_id=did)} if document is not None else None
        return self.score_records([rec], schema, docs)

    @staticmethod
    def straight_through(scores: Iterable[FieldScore]) -> dict[str, bool]:
        """doc_id -> True when all its fields were accepted."""
        scores = list(scores)
        return straight_through([s.doc_id for s in scores], [s.decision for s in scores])

    # -- persistence --------------------------------------------------------------------------
    def save(self, directory: str | Path) -> Path:
        """Write the engine folder (no pickle); returns its path."""
        check_is_fitted(self, "fusion_")
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        self.fusion_.save(d)
        (d / CALIBRATOR_FILE).write_text(json.dumps(self.calibrator_.to_dict(), indent=1) + "\n")
        self.thresholds_.save(d / THRESHOLDS_FILE)
        params = self.get_params()
        if not isinstance(params["calibrator"], str):
            params["calibrator"] = type(params["calibrator"]).__name__
        meta = {
            "format_version": ENGINE_FORMAT,
            "extractconf_version": __version__,
            "params": {**params, "split": list(params["split"])},
            "feature_names": list(FEATURE_NAMES),
            "calibrator_signals": self.calibrator_signals_,
            "schema": None if self.schema_ is None else self.schema_.to_dict(),
            "field_types_seen": self.field_types_seen_,
            "metrics": self.metrics_,
            "files": {"calibrator": CALIBRATOR_FILE, "thresholds": THRESHOLDS_FILE},
        }
        (d / ENGINE_FILE).write_text(json.dumps(jsonable(meta), indent=2) + "\n")
        return d

    @classmethod
    def load(cls, model_dir: str | Path | None = None) -> ConfidenceEngine:
        """Load a saved engine; ``None`` loads the default model shipped with extractconf.

        Raises :class:`~confidence.errors.ModelError` for a missing, corrupt or other-version
        model, naming the fix.
        """
        d = Path(model_dir) if model_dir is not None else default_model_dir()
        path = d / ENGINE_FILE
        try:
            meta = json.loads(path.read_text())
        except FileNotFoundError:
            hint = (
                "reinstall extractconf (the default model is missing)"
                if model_dir is None
                else "train one with `extractconf train`"
            )
            raise ModelError(f"{path}: no engine here; {hint}") from None
        except (OSError, json.JSONDecodeError) as e:
            raise ModelError(f"{path}: unreadable ({e}); retrain the model") from e
        if meta.get("format_version") != ENGINE_FORMAT:
            raise ModelError(
                f"{path}: engine format {meta.get('format_version')!r} written by extractconf "
                f"{meta.get('extractconf_version')}, this extractconf ({__version__}) reads format "
                f"{ENGINE_FORMAT}; retrain with `extractconf train` or install extractconf "
                f"{meta.get('extractconf_version')}"
            )
        try:
            params = dict(meta["params"])
            params["split"] = tuple(params["split"])
            if params["calibrator"] not in ("isotonic", "platt", "lasso"):
                params["calibrator"] = "isotonic"
            eng = cls(**params)
            eng.fusion_ = FusionClassifier.load(d, feature_names=FEATURE_NAMES)
            cal = json.loads((d / meta["files"]["calibrator"]).read_text())
            eng.calibrator_ = calibrator_from_dict(cal)
            eng.thresholds_ = ThresholdSelector.load(d / meta["files"]["thresholds"])
            eng.calibrator_signals_ = list(meta.get("calibrator_signals") or [])
            eng.schema_ = None if meta.get("schema") is None else Schema.from_dict(meta["schema"])
            eng.field_types_seen_ = list(meta.get("field_types_seen") or [])
            eng.metrics_ = meta.get("metrics") or {}
        except ModelError:
            raise
        except (OSError, KeyError, TypeError, ValueError, json.JSONDecodeError) as e:
            raise ModelError(f"{d}: incomplete or corrupt engine ({e!r}); retrain") from e
        return eng


def _call(kind: str, c) -> CallResult | None:
    if c is None or isinstance(c, CallResult):
        return c
    if isinstance(c, Mapping):
        rec = as_run_record({"doc_id": "x", "fields": dict(c)})
        return replace(rec.hunter, kind=kind)
    raise DatasetError(f"{kind} must be a CallResult, a dict name -> value, or None")

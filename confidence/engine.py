"""The confidence engine: feature rows -> calibrated P(correct) -> accept / review with reasons.

:class:`ConfidenceEngine` bundles the three fitted parts of extractconf:

1. :class:`~confidence.fusion.FusionClassifier` (LightGBM) fuses the ~90 features of a field;
2. a calibrator (isotonic, Platt or Lasso) maps its score to P(correct);
3. a :class:`~confidence.calibration.ThresholdSelector` gives each field the lowest threshold
   that keeps the accuracy of accepted fields >= ``target_accuracy`` with probability
   ``confidence_level``;

and, optionally, a :class:`~confidence.domain.DomainReference` (``domain.json``) sketching the
feature rows of the training documents, calibrated per schema (a document is compared with the
documents of its own field set; an unseen schema with all of them, with a warning), so that
:meth:`score` can tell a document or a batch that does not resemble them (``novelty_p``,
``out_of_domain``, ``batch_shift_p`` columns; a warning; ``on_shift="review"`` routes them to
review).

``fit`` splits the *documents* three ways (fusion / calibration / thresholds, ``split``) so the
calibrator and the threshold guarantee are fitted on documents the earlier stages never saw.

Two entry points, as in uqlm: :meth:`~ConfidenceEngine.score` for recorded or third-party
extractions and :meth:`~ConfidenceEngine.extract_and_score` for a live LLM call;
:meth:`~ConfidenceEngine.explain` returns a ``shap.Explanation``. A saved engine is a model folder
of :mod:`confidence.persistence` (no pickle): ``engine.json``, ``fusion.json`` +
``fusion.lgb.txt``, ``calibrator.json``, ``thresholds.json``, ``domain.json`` (optional) and
``manifest.json``.
"""

from __future__ import annotations

import fnmatch
import hashlib
import math
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from numbers import Integral, Real
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from confidence import persistence
from confidence.audit import (
    AUDIT_REASON,
    audit_mask,
    audit_uniforms,
    check_audit_rate,
    sampling_probs,
)
from confidence.calibration import (
    CALIBRATORS,
    LassoRecalibrator,
    ThresholdSelector,
    evaluate_scores,
    make_calibrator,
)
from confidence.calls.second_reading import (
    LIBRARY_MAPPER_MODE,
    LIBRARY_MAPPER_NAME,
    add_library_mapper,
)
from confidence.domain import DomainCheck, DomainReference, domain_columns, shift_warning
from confidence.domain_schemas import row_schema_keys, unseen_schema_warning
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
from confidence.gcpause import paused_gc
from confidence.readings import CallResult, FieldReading, RunRecord
from confidence.records import align_documents, as_call_result, as_run_record
from confidence.routing import decide, guard_instructions, overrides, reasons, straight_through
from confidence.sampling import BALANCE_MODES, balance_weights, split_documents
from confidence.schema import Schema
from confidence.scores import FieldScore, field_scores
from confidence.types import Document

__all__ = ["ConfidenceEngine", "default_model_dir"]


def unknown_fields_warning(records: Sequence[RunRecord], schema: Schema) -> str | None:
    """A warning naming the field names that records carry and ``schema`` lacks, or None.

    Such values are never scored, and where a document is given, the library's own reading
    stands in for a schema field the record lacks: a pipeline that writes ``TOTAL`` for the
    schema's ``total`` would see the library's values scored instead of its own.

    Examples
    --------
    >>> from confidence.schema import Field
    >>> s = Schema("s", (Field("total", "amount"), Field("iban", "iban")))
    >>> r = RunRecord("a", CallResult("hunter", {"TOTAL": FieldReading("9.00")}), None)
    >>> unknown_fields_warning([r], s)[:87]
    "1 of 1 record(s) name fields the schema does not have: 'TOTAL' (the schema has 'total')"
    >>> unknown_fields_warning([RunRecord("b", CallResult("hunter", {}), None)], s) is None
    True
    """
    names = {f.name for f in schema}
    folded = {n.casefold(): n for n in names}
    seen: dict[str, int] = {}
    n_recs = 0
    for rec in records:
        extra = {k for c in (rec.hunter, rec.mapper) if c is not None for k in c.fields} - names
        n_recs += bool(extra)
        for k in extra:
            seen[k] = seen.get(k, 0) + 1
    if not seen:
        return None
    shown = [
        repr(k) + (f" (the schema has {folded[k.casefold()]!r})" if k.casefold() in folded else "")
        for k in sorted(seen, key=lambda k: (-seen[k], k))[:8]
    ]
    more = f" and {len(seen) - 8} more" if len(seen) > 8 else ""
    return (
        f"{n_recs} of {len(records)} record(s) name fields the schema does not have: "
        f"{', '.join(shown)}{more}; their values are not scored, and with the documents given "
        "the library's own reading stands in for the schema fields they lack"
    )


def _llm_of(record: RunRecord) -> str:
    """The model ids behind a record's readings, "+"-joined ("" for third-party values); the
    library's own layout Mapper, when it made the second reading, is named too."""
    models = {
        c.model
        for call in (record.hunter, record.mapper)
        if call is not None
        for c in call.completions
        if c.model
    }
    if record.mapper is not None and record.mapper.mode == LIBRARY_MAPPER_MODE:
        models.add(LIBRARY_MAPPER_NAME)
    return "+".join(sorted(models))


_VALID = FEATURE_NAMES.index("val_valid")
_COLUMN = {n: i for i, n in enumerate(FEATURE_NAMES)}


def kept_features(exclude: Sequence[str] = ()) -> list[str]:
    """:data:`FEATURE_NAMES` without those ``exclude`` names or matches (shell patterns).

    Examples
    --------
    >>> kept = kept_features(["q_*", "lay_page_index"])
    >>> any(n.startswith("q_") for n in kept), "lay_page_index" in kept, "lay_width" in kept
    (False, False, True)
    >>> kept_features(["no_such_*"])
    Traceback (most recent call last):
    ...
    ValueError: exclude_features: 'no_such_*' names no feature (see FEATURE_NAMES)
    """
    if isinstance(exclude, str):
        raise ValueError(f"exclude_features must be a list of names, not the string {exclude!r}")
    drop: set[str] = set()
    for pat in exclude:
        hit = {n for n in FEATURE_NAMES if fnmatch.fnmatchcase(n, str(pat))}
        if not hit:
            raise ValueError(f"exclude_features: {pat!r} names no feature (see FEATURE_NAMES)")
        drop |= hit
    kept = [n for n in FEATURE_NAMES if n not in drop]
    if not kept:
        raise ValueError("exclude_features leaves no feature to train on")
    return kept


UNCERTIFIED = "no threshold certified for this field: always reviewed"
ONE_READING = (
    "one reading: the thresholds are not certified for records without a second reading "
    "(pass the documents and keep library_mapper=True)"
)
RECALIBRATION_SIGNALS = ("agree_equal", "agree_similarity", "agree_hunter_only", "ocr_h_found")
"""Features the Lasso recalibrator may re-weight beside the fused score (NaN read as 0)."""


def default_model_dir() -> Path:
    """Folder of the model shipped inside the package."""
    return Path(__file__).resolve().parent / "models" / "default"


@persistence.register_part("engine", format_version=2)
class ConfidenceEngine(BaseEstimator):
    """Fusion + calibration + thresholds, with routing and reasons.

    Parameters
    ----------
    calibrator : {"isotonic", "platt"} or object, default "isotonic"
    target_accuracy : float, default 0.99
    confidence_level : float, default 0.9
    split : (float, float, float), default (0.6, 0.2, 0.2)
        Shares of documents for fusion training, calibration and threshold selection.
    calibrate_out_of_fold : bool, default True
        Pool the fusion and calibration shares: the fusion model learns on both, and the
        calibrator is fitted on every pooled row's *out-of-fold* score, from the fusion's
        document-grouped cross-validation fold models (the early-stopping folds: each row scored
        by the fold model that never saw its document), not on scores a model gave its own
        training rows. The fusion then learns from 80 % of the documents instead of 60 % and the
        calibrator from four times the rows; the threshold share stays unseen by both, so the
        thresholds' guarantee is unchanged. ``False``: the fusion model learns on the fusion
        share and the calibrator on the calibration share's scores, as before. Without
        cross-validation (the fusion's ``early_stopping_rounds=None``, or fewer than two
        documents of each label) the calibration share is used as with ``False``.
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
    exclude_features : tuple of str, default ()
        Features the fusion model is trained without: names of :data:`FEATURE_NAMES` or
        shell-style patterns (``"q_*"``, every image-quality feature). They are still computed
        (the domain check reads them); the model just never splits on them. The default model
        leaves out the image-quality features, which describe the synthetic scanner more than
        the value (``docs/features.md``).

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

    _parameter_constraints: ClassVar[dict] = {
        "calibrator": [StrOptions(set(CALIBRATORS)), HasMethods(["fit", "predict_proba"])],
        "target_accuracy": [Interval(Real, 0, 1, closed="neither")],
        "confidence_level": [Interval(Real, 0, 1, closed="neither")],
        "split": ["array-like"],
        "calibrate_out_of_fold": ["boolean"],
        "augment": [Interval(Real, 0, 1, closed="both")],
        "fusion_params": [dict, None],
        "balance": [StrOptions({m for m in BALANCE_MODES if m}), None],
        "random_state": [Interval(Integral, None, None, closed="neither")],
        "exclude_features": ["array-like"],
    }
    _subparts: ClassVar[dict[str, str]] = {
        "fusion": "fusion_",
        "calibrator": "calibrator_",
        "thresholds": "thresholds_",
        "domain": "domain_",
    }
    _optional_subparts: ClassVar[frozenset[str]] = frozenset({"domain"})

    def __init__(
        self,
        *,
        calibrator="isotonic",
        target_accuracy: float = 0.99,
        confidence_level: float = 0.9,
        split: tuple[float, float, float] = (0.6, 0.2, 0.2),
        calibrate_out_of_fold: bool = True,
        augment: float = 0.25,
        fusion_params: dict[str, Any] | None = None,
        balance: str | None = None,
        random_state: int = 0,
        exclude_features: Sequence[str] = (),
    ) -> None:
        self.calibrator = calibrator
        self.target_accuracy = target_accuracy
        self.confidence_level = confidence_level
        self.split = split
        self.calibrate_out_of_fold = calibrate_out_of_fold
        self.augment = augment
        self.fusion_params = fusion_params
        self.balance = balance
        self.random_state = random_state
        self.exclude_features = exclude_features

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

    def fit(
        self,
        X,
        y,
        *,
        groups,
        fields,
        field_types,
        schema: Schema | None = None,
        fusion_extra: tuple | None = None,
    ):
        """Fit fusion, calibrator and thresholds on a labelled feature table.

        Parameters
        ----------
        X : array of shape (n, len(FEATURE_NAMES))
        y : array of 0/1, 1 = the reported value is correct
        groups : array of document ids (splits never cut a document)
        fields, field_types : arrays of field names and schema types
        schema : Schema, optional
            Recorded in ``engine.json``.
        fusion_extra : (X, y, groups, field_types), optional
            More rows of the same documents read another way (e.g. one-reading copies of the
            runs, :data:`confidence.evaluation.table.READINGS`). Those of documents in the
            fusion split join the fusion training; calibration and thresholds see only ``X``.
        """
        self._validate_params()
        X, y, groups, fields, types = self._check_table(X, y, groups, fields, field_types)
        self.feature_names_ = kept_features(self.exclude_features)
        if len(self.split) != 3 or min(self.split) <= 0:
            raise ValueError(f"split={self.split!r}; pass three positive shares")
        if len(np.unique(groups)) < 3:
            raise DatasetError("need at least 3 documents to split fusion/calibration/thresholds")
        fit_m, cal_m, thr_m = split_documents(groups, self.split, self.random_state)
        for name, m in (("calibration", cal_m), ("threshold", thr_m)):
            if not m.any():
                raise DatasetError(
                    f"the {name} split has no document ({len(np.unique(groups))} documents "
                    f"split {tuple(self.split)}); add labelled documents (a few dozen at least)"
                )
            if len(np.unique(y[m])) < 2:
                raise DatasetError(
                    f"the {name} split has only {'correct' if y[m][0] else 'wrong'} fields; "
                    "add labelled documents (a few dozen at least)"
                )
        pooled = self._pooled(fit_m | cal_m, y, groups)
        train_m = fit_m | cal_m if pooled else fit_m
        self._fit_fusion(X, y, groups, types, train_m, fusion_extra)
        oof = self.fusion_.oof_proba_[: int(train_m.sum())]  # the pooled rows come first
        if pooled and not np.isfinite(oof).all():  # no fold scored some row: never calibrate
            pooled, train_m = False, fit_m  # on in-sample scores; learn on the fusion share
            self._fit_fusion(X, y, groups, types, train_m, fusion_extra)
        if pooled:
            self._fit_calibrator(
                X[train_m], y[train_m], groups[train_m], self.calibrator, scores=oof
            )
        else:
            self._fit_calibrator(X[cal_m], y[cal_m], groups[cal_m], self.calibrator)
        p_thr = self.predict_confidence(X[thr_m])
        self.thresholds_ = ThresholdSelector(
            target_accuracy=self.target_accuracy, confidence_level=self.confidence_level
        ).fit(p_thr, y[thr_m], fields[thr_m], types[thr_m])
        self.schema_ = schema
        # every labelled document (its raw feature rows, not the fusion's scores: the fusion
        # split is as much "in domain" as the others), calibrated per schema
        self.domain_ = self._domain_reference(
            self._model_rows(X), groups, row_schema_keys(groups, fields, types)
        )
        self.field_types_seen_ = sorted({str(t) for t in types})
        self.metrics_ = {
            "held_out": evaluate_scores(y[thr_m], p_thr),
            "n_documents": {
                "fusion": len(np.unique(groups[train_m])),
                "calibration": len(np.unique(groups[train_m if pooled else cal_m])),
                "thresholds": len(np.unique(groups[thr_m])),
            },
            "calibrated_out_of_fold": pooled,
            "n_fields": len(y),
            "failure_rate": float(1 - y.mean()),
        }
        return self

    def _domain_reference(self, X, groups, schemas) -> DomainReference | None:
        """Sketch of the training rows (the model's columns, as :meth:`check_domain` reads
        them), per-schema distances (None when too few documents)."""
        names = list(getattr(self, "feature_names_", None) or FEATURE_NAMES)
        cols = domain_columns(X, names)
        page = document_mask(names)
        ref = DomainReference(
            columns=cols,
            optional_columns=[c for c in cols if page[c]],
            random_state=self.random_state,
        )
        try:
            return ref.fit(X, groups=groups, schemas=schemas)
        except ValueError:
            return None

    def _signals(self, X: np.ndarray, names: Sequence[str]) -> dict[str, np.ndarray] | None:
        if not names:
            return None
        idx = {n: i for i, n in enumerate(FEATURE_NAMES)}
        return {n: np.nan_to_num(X[:, idx[n]], nan=0.0) for n in names}

    def _fit_fusion(self, X, y, groups, types, train_m, fusion_extra) -> None:
        """Fit ``fusion_`` on the rows of ``train_m`` (augmented, with the ``fusion_extra`` rows
        of the same documents); the rows of ``train_m`` come first in its training order."""
        rng = np.random.default_rng(self.random_state)
        Xf, yf, gf, src = self._augment(X[train_m], y[train_m], groups[train_m], rng)
        tf = types[train_m][src]
        if fusion_extra is not None:
            Xe, ye, ge, _, te = self._check_table(*fusion_extra[:3], *fusion_extra[2:4])
            take = np.isin(ge, groups[train_m])  # never a copy of a document held out of it
            Xf, yf, gf = (
                np.vstack((Xf, Xe[take])),
                np.concatenate((yf, ye[take])),
                np.concatenate((gf, ge[take])),
            )
            tf = np.concatenate((tf, te[take]))
        kept = self.feature_names_
        monotone = {k: v for k, v in MONOTONE.items() if k in set(kept)}
        self.fusion_ = FusionClassifier(**{"monotone": monotone, **(self.fusion_params or {})})
        self.fusion_.fit(
            self._model_rows(Xf),
            yf,
            groups=gf,
            feature_names=list(kept),
            sample_weight=balance_weights(yf, tf, self.balance),
        )

    def _pooled(self, pool_m, y, groups) -> bool:
        """Whether the fusion and calibration shares are pooled (``calibrate_out_of_fold``):
        only when the fusion model cross-validates, which needs two documents of each label."""
        params = {**FusionClassifier().get_params(), **(self.fusion_params or {})}
        if not self.calibrate_out_of_fold or params["early_stopping_rounds"] is None:
            return False
        if params["n_splits"] < 2:
            return False
        docs = [len(np.unique(groups[pool_m & (y == k)])) for k in (0, 1)]
        return min(docs) >= 2

    def _fit_calibrator(self, X, y, groups, spec, sample_weight=None, scores=None) -> None:
        """Fit the calibrator on ``X``'s fused scores, or on ``scores`` given for its rows
        (out-of-fold ones)."""
        cal = make_calibrator(spec)
        self.calibrator_signals_ = (
            list(RECALIBRATION_SIGNALS) if isinstance(cal, LassoRecalibrator) else []
        )
        s = self.fused_scores(X) if scores is None else np.asarray(scores, dtype=float)
        signals = self._signals(X, self.calibrator_signals_)
        fit_kw = {} if sample_weight is None else {"sample_weight": sample_weight}
        try:
            cal.fit(s, y, signals=signals, groups=groups, **fit_kw)
        except ValueError as e:
            raise DatasetError(f"cannot fit the {spec} calibrator: {e}") from e
        self.calibrator_ = cal

    def recalibrate(
        self, X, y, *, groups=None, calibrator="lasso", sample_weight=None
    ) -> ConfidenceEngine:
        """A copy whose calibrator is refitted on labelled rows of a new domain (fusion frozen).

        ``"lasso"`` re-weights the fused score together with :data:`RECALIBRATION_SIGNALS`.
        ``sample_weight`` weights the rows (e.g. ``1 / p_sample`` of reviewed fields, see
        :mod:`confidence.feedback`). Thresholds are kept; re-run :meth:`tune` on fresh labelled
        documents (or ``extractconf recalibrate``) to restore the guarantee in the new domain.
        """
        check_is_fitted(self, "fusion_")
        X = np.asarray(X, dtype=float)
        y = np.asarray(y).astype(int)
        if len(np.unique(y)) < 2:
            raise DatasetError("recalibration needs both correct and wrong labelled fields")
        new = self._copy()
        new._fit_calibrator(X, y, groups, calibrator, sample_weight)
        return new

    def tune(
        self,
        X,
        y,
        *,
        fields,
        field_types,
        target_accuracy=None,
        confidence_level=None,
        groups=None,
        grouping=None,
        group_fallback="field",
    ) -> ConfidenceEngine:
        """A copy with thresholds re-selected on labelled rows (fusion and calibrator frozen).

        ``groups`` (one document group per row) and ``grouping`` (how they were computed, a
        :class:`~confidence.calibration.groups.Grouping`) add group-conditional thresholds;
        ``group_fallback`` is the selector's (``"field"`` or ``"pooled"``).
        """
        check_is_fitted(self, "fusion_")
        new = self._copy()
        sel = ThresholdSelector(
            target_accuracy=target_accuracy or self.target_accuracy,
            confidence_level=confidence_level or self.confidence_level,
            group_fallback=group_fallback,
        )
        try:
            new.thresholds_ = sel.fit(
                self.predict_confidence(X),
                y,
                fields,
                field_types,
                groups=groups,
                grouping=grouping,
            )
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
    def _columns(self) -> list[int] | None:
        """Positions in :data:`FEATURE_NAMES` of the model's features (None: all, in order)."""
        names = getattr(self, "feature_names_", None)
        if names is None or list(names) == list(FEATURE_NAMES):
            return None
        return [_COLUMN[n] for n in names]

    def _model_rows(self, X: np.ndarray) -> np.ndarray:
        """Feature rows (columns :data:`FEATURE_NAMES`) as the model reads them: the columns it
        was trained on, in its order (a model saved before features were added uses fewer)."""
        cols = self._columns()
        return X if cols is None else X[:, cols]

    def fused_scores(self, X) -> np.ndarray:
        """The fusion model's P(correct) before calibration, for rows of :data:`FEATURE_NAMES`.

        Examples
        --------
        >>> eng = ConfidenceEngine.load()
        >>> X = np.full((2, len(FEATURE_NAMES)), np.nan)
        >>> s = eng.fused_scores(X); s.shape, bool(((0 < s) & (s < 1)).all())
        ((2,), True)
        """
        check_is_fitted(self, "fusion_")
        X = np.asarray(X, dtype=float)
        if len(X) == 0:
            return np.empty(0)
        return self.fusion_.predict_proba(self._model_rows(X))[:, 1]

    def contributions(self, X) -> np.ndarray:
        """Per-feature contributions (LightGBM TreeSHAP, log-odds) to the fused score, shape
        ``(n, len(FEATURE_NAMES) + 1)``, the last column the base value. A feature the model was
        not trained on (a model saved before it existed) contributes 0."""
        check_is_fitted(self, "fusion_")
        X = np.asarray(X, dtype=float)
        C = self.fusion_.contributions(self._model_rows(X))
        cols = self._columns()
        if cols is None:
            return C
        full = np.zeros((len(X), len(FEATURE_NAMES) + 1))
        full[:, cols] = C[:, :-1]
        full[:, -1] = C[:, -1]
        return full

    def predict_confidence(self, X) -> np.ndarray:
        """Calibrated P(correct) for feature rows (NaN features allowed)."""
        check_is_fitted(self, "fusion_")
        X = np.asarray(X, dtype=float)
        if len(X) == 0:
            return np.empty(0)
        s = self.fused_scores(X)
        signals = self._signals(X, self.calibrator_signals_)
        p = self.calibrator_.predict_proba(s, signals=signals)[:, 1]
        return np.clip(np.asarray(p, dtype=float), 0.0, 1.0)

    def fingerprints(self) -> dict[str, str]:
        """``model_sha`` (fusion + calibrator) and ``thresholds_sha``, 16 hex digits each.

        Worked out once for the parts the engine holds, and again when one of them is another
        object: fitted parts are not changed in place (:meth:`tune`, :meth:`recalibrate` and
        :meth:`with_thresholds` return copies with new parts). Serialising the fusion model for
        its print took half the time of scoring one document from its recorded runs.
        """
        check_is_fitted(self, "fusion_")
        parts = (
            self.fusion_,
            getattr(self.fusion_, "booster_", None),
            self.calibrator_,
            self.thresholds_,
        )
        cached = self.__dict__.get("_fingerprints")
        if cached is not None and all(a is b for a, b in zip(cached[0], parts, strict=True)):
            return dict(cached[1])
        model = persistence.fingerprint(self.fusion_) + persistence.fingerprint(self.calibrator_)
        prints = {
            "model_sha": hashlib.sha256(model.encode()).hexdigest()[:16],
            "thresholds_sha": persistence.fingerprint(self.thresholds_)[:16],
        }
        self.__dict__["_fingerprints"] = (parts, prints)  # the parts held: no id is reused
        return dict(prints)

    def check_domain(self, rows: RecordRows) -> DomainCheck | None:
        """The domain check of the scorable rows (None when the model keeps no reference)."""
        check_is_fitted(self, "fusion_")
        ok = np.array([s != "error" for s in rows.status], dtype=bool)
        if getattr(self, "domain_", None) is None or not ok.any():
            return None
        keys = row_schema_keys(rows.doc_ids, rows.fields, rows.field_types)
        if ok.all():  # no copy of the rows
            return self.domain_.check(self._model_rows(rows.X), rows.doc_ids, schemas=keys)
        ids = np.asarray(rows.doc_ids, dtype=object)[ok]
        return self.domain_.check(self._model_rows(rows.X[ok]), ids, schemas=keys[ok])

    def top_features(self, k: int) -> list[str]:
        """The ``k`` fused features with the largest total gain (most used by the model)."""
        check_is_fitted(self, "fusion_")
        gain = np.asarray(self.fusion_.feature_importances_, dtype=float)
        names = list(getattr(self, "feature_names_", None) or FEATURE_NAMES)
        return [names[j] for j in np.argsort(-gain, kind="stable")[:k]]

    def score_rows(
        self,
        rows: RecordRows,
        *,
        explain: bool = True,
        groups: Mapping[str, str | None] | None = None,
        on_shift: str = "warn",
        features: int = 0,
        audit_rate: float = 0.0,
        audit_seed: int = 0,
        batch: tuple[float | None, bool] | None = None,
        lone: Iterable[str] = (),
        llm: Mapping[str, str] | None = None,
    ) -> list[FieldScore]:
        """Score, route and explain prepared :class:`~confidence.features.build.RecordRows`.

        ``groups`` maps doc_id -> the document's group (see :meth:`groups_of`).
        ``on_shift="review"`` sends out-of-domain documents (every document of a shifted batch)
        to review (:func:`confidence.routing.overrides`); ``"warn"`` only warns. ``features=K``
        keeps each row's values of the :meth:`top_features` (NaN = missing left out).
        ``audit_rate`` sends that share of the accepted fields to review as well, marked
        ``audit`` (a seeded hash of doc_id and field decides, :mod:`confidence.audit`); every
        row records its ``p_sample``.
        ``batch=(batch_shift_p, shifted)`` is the batch verdict to use instead of the one of
        these rows (a distributed job scores a slice of the batch: :mod:`confidence.ray`);
        nothing is warned then. ``lone`` names documents scored with one reading (no Mapper):
        their fields go to review (:data:`ONE_READING`) whatever their confidence. ``llm`` maps
        doc_id -> the ``llm`` fingerprint of its rows ("" when absent).
        """
        check_is_fitted(self, "fusion_")
        audit_rate = check_audit_rate(audit_rate)
        n = len(rows)
        ok = np.array([s != "error" for s in rows.status], dtype=bool)
        conf = np.full(n, np.nan)
        Xok = rows.X if ok.all() else rows.X[ok]
        conf[ok] = self.predict_confidence(Xok)
        group = [(groups or {}).get(d) for d in rows.doc_ids]
        lam, src = self.thresholds_.lookup_many(rows.fields, rows.field_types, group)
        dec = decide(conf, lam)
        dom = self.check_domain(rows)
        per_doc = dom.per_document() if dom is not None else {}
        novelty = [per_doc.get(d, (None, None)) for d in rows.doc_ids]
        if batch is None:
            batch = (dom.batch_p, dom.shifted) if dom is not None else (None, False)
            if dom is not None and dom.shifted:
                warnings.warn(
                    shift_warning(dom.share_novel, len(dom.doc_ids), dom.batch_p), stacklevel=3
                )
        batch_p, shifted = batch
        forced = overrides(
            rows.values,
            rows.fields,
            novelty_p=[p for p, _ in novelty],
            out_of_domain=[o for _, o in novelty],
            batch_shift_p=batch_p,
            batch_shifted=shifted,
            on_shift=on_shift,
            malformed=(rows.X[:, _VALID] == 0.0).tolist(),  # val_valid: breaks its type's syntax
        )
        lone = set(lone)
        why: list[list[str]] = [[] for _ in range(n)]
        if explain and ok.any():
            C = self.contributions(Xok)
            words = reasons(C, Xok, FEATURE_NAMES, dec[ok])
            for i, w in zip(np.flatnonzero(ok), words, strict=True):
                # reviewed only because no threshold can be certified: say that first
                why[i] = [UNCERTIFIED, *w[:2]] if not math.isfinite(lam[i]) else w
        for i, reason in enumerate(forced):
            if reason is not None and dec[i] == "accept":
                dec[i] = "review"
                why[i] = [reason]
        for i, d in enumerate(rows.doc_ids):  # evidence the thresholds never saw: not accepted,
            if d in lone:  # and that is the first reason, whatever the confidence said
                dec[i] = "review"
                why[i] = [ONE_READING, *(w for w in why[i] if w != ONE_READING)][:3]
        dec, why = guard_instructions(dec, why, rows.instructions)
        p_sample = sampling_probs(dec, rate=audit_rate)
        if audit_rate > 0:
            uniforms = audit_uniforms(rows.doc_ids, rows.fields, seed=audit_seed)
            audited = audit_mask(dec, uniforms, rate=audit_rate)
        else:  # no draw falls below a rate of 0: no need to draw
            audited = np.zeros(n, dtype=bool)
        for i in np.flatnonzero(audited):
            dec[i] = "review"
            why[i] = [AUDIT_REASON, *why[i]]
        prints = self.fingerprints()
        llm = llm or {}
        top = [(n, FEATURE_NAMES.index(n)) for n in self.top_features(features)] if features else []
        if dom is not None and dom.pooled_documents and self.domain_.schemas_:
            warnings.warn(
                unseen_schema_warning(len(dom.pooled_documents), sorted(set(rows.fields))),
                stacklevel=3,
            )
        unseen = {t for t in rows.field_types if t not in self.field_types_seen_}
        if unseen:
            warnings.warn(
                f"field type(s) {sorted(unseen)} were not seen in training; their confidence "
                "relies on the other signals and their thresholds on the global fallback",
                stacklevel=3,
            )
        feats = None
        if top:
            feats = [
                {n: float(x[j]) for n, j in top if math.isfinite(x[j])} for x in rows.X.tolist()
            ]
        return field_scores(
            {
                "doc_id": rows.doc_ids,
                "field": rows.fields,
                "field_type": rows.field_types,
                "value": rows.values,
                "hunter_value": rows.hunter_values,
                "mapper_value": rows.mapper_values,
                "confidence": [
                    c if o else None for c, o in zip(conf.tolist(), ok.tolist(), strict=True)
                ],
                "decision": [str(d) for d in dec.tolist()],
                "threshold": [t if math.isfinite(t) else None for t in lam.tolist()],
                "threshold_source": src,
                "reasons": [tuple(w) for w in why],
                "status": rows.status,
                "error": rows.error,
                "group": group,
                "novelty_p": [p for p, _ in novelty],
                "out_of_domain": [o for _, o in novelty],
                "audit": audited.tolist(),
                "p_sample": p_sample.astype(float).tolist(),
                "features": feats or [None] * n,
                "llm": [llm.get(d, "") for d in rows.doc_ids],
            },
            {"batch_shift_p": batch_p, "audit_rate": audit_rate, **prints},
        )

    def score(
        self,
        records: Iterable[RunRecord | Mapping[str, Any]],
        schema: Schema,
        documents: Mapping[str, Document] | Sequence[Document | None] | None = None,
        *,
        explain: bool = True,
        meta: Mapping[str, Mapping[str, Any]] | None = None,
        on_shift: str = "warn",
        features: int = 0,
        audit_rate: float = 0.0,
        audit_seed: int = 0,
        library_mapper: bool = True,
        batch: tuple[float | None, bool] | None = None,
    ) -> list[FieldScore]:
        """Score recorded or third-party extractions: RunRecords, ``runs.jsonl`` dicts or dicts
        ``{"doc_id", "fields": {name: value}}``.

        Third-party dicts may carry a ``"mapper"`` reading and per-value logprobs (see
        :mod:`confidence.records`). ``documents`` (doc_id -> Document, or a list aligned with
        ``records``) gives the page features; without them those features are NaN (unknown) and
        the score rests on the other signals. All rows are scored with one model call.
        ``meta`` (doc_id -> ``labels.jsonl`` metadata) gives the groups of thresholds tuned with
        ``--groups meta.KEY`` or ``language``; ``source`` and ``quality`` groups come from the
        documents.
        ``on_shift``, ``features``, ``batch``, ``audit_rate`` and ``audit_seed`` as for
        :meth:`score_rows`; each row's ``llm`` names the models of its document's readings.

        A record with one reading (no Mapper) whose document is given gets the library's own
        layout Mapper as second reading (``library_mapper=True``,
        :func:`confidence.calls.second_reading.add_library_mapper`; no LLM call), so its
        disagreement and page features exist; its rows' ``llm`` then names
        ``extractconf-layout-mapper``.

        Examples
        --------
        >>> from confidence.schema import Field
        >>> schema = Schema("s", (Field("total", "amount"),))
        >>> eng = ConfidenceEngine.load()  # the shipped default model
        >>> [row] = eng.score([{"doc_id": "a", "fields": {"total": "9.00"}}], schema)
        >>> row.field, row.decision, row.reasons[0][:30]
        ('total', 'review', 'one reading: the thresholds ar')
        """
        with paused_gc():  # many small acyclic objects: see confidence.gcpause
            recs = [as_run_record(r) for r in records]
            ids = Counter(r.doc_id for r in recs)
            if len(ids) < len(recs):  # two records of one document: which one to score?
                twice = sorted(d for d, n in ids.items() if n > 1)[:5]
                raise DatasetError(
                    f"doc_id {', '.join(map(repr, twice))} in more than one record; pass one "
                    "record per document"
                )
            if unknown := unknown_fields_warning(recs, schema):
                warnings.warn(unknown, stacklevel=2)
            docs = align_documents(recs, documents)
            if library_mapper and docs:
                recs = add_library_mapper(recs, schema, docs)
            groups = self.groups_of([r.doc_id for r in recs], docs, meta)
            rows = record_rows(recs, schema, docs)
            # one reading (no page, or library_mapper=False): the thresholds, certified on two
            # readings, were measured to hold below their target on such rows (with the page,
            # the invoice fields above them were 91.5 % right at a 95 % target;
            # benchmarks/results/byo.json)
            lone = {r.doc_id for r in recs if r.mapper is None}
            return self.score_rows(
                rows,
                lone=lone,
                explain=explain,
                groups=groups,
                on_shift=on_shift,
                features=features,
                audit_rate=audit_rate,
                audit_seed=audit_seed,
                batch=batch,
                llm={r.doc_id: _llm_of(r) for r in recs},
            )

    def groups_of(
        self,
        doc_ids: Iterable[str],
        documents: Mapping[str, Document] | None = None,
        meta: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> dict[str, str | None]:
        """doc_id -> group under the thresholds' grouping (all None without a grouping)."""
        grouping = self.thresholds_.grouping_
        documents, meta = documents or {}, meta or {}
        return {
            d: None if grouping is None else grouping.group_of(documents.get(d), meta.get(d))
            for d in doc_ids
        }

    def score_readings(
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
        rec = RunRecord(did, as_call_result("hunter", hunter), as_call_result("mapper", mapper))
        docs = {did: replace(document, doc_id=did)} if document is not None else None
        return self.score([rec], schema, docs)

    def extract_and_score(
        self, document: Document, schema: Schema, client, *, explain: bool = True, **extract
    ) -> list[FieldScore]:
        """Run the Hunter and Mapper on ``document`` with an LLM ``client``, then score it.

        ``extract`` is passed to :func:`confidence.calls.extract.extract_document` (e.g.
        ``hunter_mode="free"`` for a strong remote model).

        Examples
        --------
        >>> from confidence.llm import make_client  # doctest: +SKIP
        >>> client = make_client("local")  # doctest: +SKIP
        >>> rows = engine.extract_and_score(document, schema, client)  # doctest: +SKIP
        """
        from confidence.calls.extract import extract_document

        record = extract_document(document, schema, client, **extract)
        return self.score([record], schema, {record.doc_id: document}, explain=explain)

    def explain(
        self,
        data,
        schema: Schema | None = None,
        documents: Mapping[str, Document] | Sequence[Document | None] | None = None,
    ):
        """Feature contributions to the fused score as a ``shap.Explanation``.

        Parameters
        ----------
        data : RecordRows, array of shape (n, len(FEATURE_NAMES)), or records
            Records (as for :meth:`score`) need ``schema``; rows whose record failed are left
            out.
        schema, documents
            As for :meth:`score`.

        Returns
        -------
        shap.Explanation
            ``values`` (n, n_features) and ``base_values`` (n,) in log-odds of the fused score
            (LightGBM's TreeSHAP, ``pred_contrib=True``: no shap explainer runs), ``data`` the
            feature rows, ``feature_names`` :data:`FEATURE_NAMES` (0 for a feature the model
            was not trained on). ``values.sum(1) + base_values`` is the fusion margin; plot
            with ``shap.plots.beeswarm`` or ``shap.plots.waterfall(expl[i])``.
        """
        check_is_fitted(self, "fusion_")
        try:
            import shap
        except ImportError:  # pragma: no cover - shap is a dependency
            raise ImportError("explain needs shap: pip install shap") from None
        if isinstance(data, RecordRows):
            X = data.X[[s != "error" for s in data.status]]
        elif isinstance(data, np.ndarray):
            X = np.asarray(data, dtype=float)
        else:
            if schema is None:
                raise ValueError("explain(records) needs the schema")
            recs = [as_run_record(r) for r in data]
            rows = record_rows(recs, schema, align_documents(recs, documents))
            X = rows.X[[s != "error" for s in rows.status]]
        C = self.contributions(X)
        return shap.Explanation(
            values=C[:, :-1],
            base_values=C[:, -1],
            data=X,
            feature_names=list(FEATURE_NAMES),
        )

    @staticmethod
    def straight_through(scores: Iterable[FieldScore]) -> dict[str, bool]:
        """doc_id -> True when all its fields were accepted."""
        scores = list(scores)
        return straight_through([s.doc_id for s in scores], [s.decision for s in scores])

    # -- persistence --------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The engine's own state for :mod:`confidence.persistence` (its parts are saved
        beside it: fusion, calibrator, thresholds)."""
        check_is_fitted(self, "fusion_")
        params = self.get_params()
        if not isinstance(params["calibrator"], str):
            params["calibrator"] = persistence.kind_of(params["calibrator"]).kind
        return {
            "params": {
                **params,
                "split": list(params["split"]),
                "exclude_features": [str(n) for n in params["exclude_features"]],
            },
            "feature_names": list(getattr(self, "feature_names_", None) or FEATURE_NAMES),
            "calibrator_signals": self.calibrator_signals_,
            "schema": None if self.schema_ is None else self.schema_.to_dict(),
            "field_types_seen": self.field_types_seen_,
            "metrics": self.metrics_,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ConfidenceEngine:
        """Rebuild the engine's own state (parts are set by :mod:`confidence.persistence`)."""
        params = dict(d["params"])
        params["split"] = tuple(params["split"])
        params["exclude_features"] = tuple(params.get("exclude_features") or ())
        if params["calibrator"] not in CALIBRATORS:
            raise ModelError(
                f"unknown calibrator {params['calibrator']!r} (known: "
                f"{', '.join(sorted(CALIBRATORS))})"
            )
        names = list(d["feature_names"])
        missing = [c for c in names if c not in _COLUMN]
        if missing or len(set(names)) != len(names):
            # a model saved before features were *added* is read (it uses its own columns); one
            # that needs a feature this version no longer computes cannot be
            raise ModelError(
                f"the model uses {len(names)} features, {len(missing)} of which this extractconf "
                f"does not compute ({', '.join(missing[:5]) or 'duplicate names'}); retrain it "
                "with this version (`extractconf train`) or install the version that made it"
            )
        eng = cls(**params)
        eng.feature_names_ = names
        eng.calibrator_signals_ = list(d.get("calibrator_signals") or [])
        eng.schema_ = None if d.get("schema") is None else Schema.from_dict(d["schema"])
        eng.field_types_seen_ = list(d.get("field_types_seen") or [])
        eng.metrics_ = d.get("metrics") or {}
        return eng

    def save(self, directory: str | Path) -> Path:
        """Write the model folder (no pickle, every file in ``manifest.json``); returns it."""
        check_is_fitted(self, "fusion_")
        return persistence.save(self, directory)

    @classmethod
    def load(cls, model_dir: str | Path | None = None) -> ConfidenceEngine:
        """Load a saved engine; ``None`` loads the default model shipped with extractconf.

        Raises :class:`~confidence.errors.ModelError` naming the file for a missing, corrupt,
        unknown or newer-version model part. A model saved before features were added loads
        and scores as it did (it reads its own columns), with a ``UserWarning`` naming the
        features it does not use.
        """
        d = Path(model_dir) if model_dir is not None else default_model_dir()
        if not d.is_dir():
            hint = (
                "reinstall extractconf (the default model is missing)"
                if model_dir is None
                else "train one with `extractconf train`"
            )
            raise ModelError(f"{d}: no model folder here; {hint}")
        eng = persistence.load(d, expect=cls)
        left_out = {
            n for n in FEATURE_NAMES if any(fnmatch.fnmatchcase(n, p) for p in eng.exclude_features)
        }
        unused = [n for n in FEATURE_NAMES if n not in set(eng.feature_names_) | left_out]
        if unused:
            warnings.warn(
                f"{d}: the model was trained before {len(unused)} of this extractconf's features "
                f"existed ({', '.join(unused[:4])}{', ...' if len(unused) > 4 else ''}); it "
                "scores as it did without them: retrain it to use them",
                UserWarning,
                stacklevel=2,
            )
        return eng

"""A learned, schema-agnostic candidate ranker: which printed string is each field's value.

For every schema field, the candidates of :func:`~confidence.calls.ranker_features.field_pool`
(typed prior candidates, values printed with a label, the Mapper's layout reading, and one
*null* candidate meaning "absent") are scored by a LightGBM ``lambdarank`` model over the pair
features of :mod:`confidence.calls.ranker_features`. One query group is one document x field;
the top candidate is the field's value, or ``None`` when the null candidate wins (the field is
not on the page). Scores within a group are turned into probabilities with a softmax, so a
reading carries how sure the ranker is.

The model is trained on synthetic invoices and receipts whose truth is known
(``scripts/train_ranker.py``) and shipped like the fusion model: the booster as LightGBM text
plus JSON metadata in ``confidence/models/ranker/`` with a sha256 manifest
(:mod:`confidence.persistence`); no pickle.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from confidence import __version__, persistence
from confidence.calls.candidates import Candidate, possible_date, repair_date
from confidence.calls.consistency import cash_rounded, choose_jointly, field_roles
from confidence.calls.parties import choose_parties
from confidence.calls.ranker_features import FEATURES, PageContext, field_pool, pool_features
from confidence.datasets.matching import is_correct
from confidence.documents.lines import Line
from confidence.errors import ModelError
from confidence.schema import Schema

__all__ = [
    "CASH_ROUNDING",
    "PARTY_BONUS",
    "PARTY_OVERLAP",
    "PARTY_REACH",
    "POSSIBLE_DATE_TOP",
    "CandidateRanker",
    "RankedCandidate",
    "default_ranker",
    "training_groups",
]

#: Log-probability bonus of a (name, address) pair whose address starts under the name in its
#: text block, and the penalty of an address span holding the name's line (:meth:`read`).
PARTY_BONUS = 1.0
PARTY_OVERLAP = 1.0
#: How many lines under the name, in its block, an address may start for the pair bonus
#: (``None``: anywhere below the name in its block).
PARTY_REACH: int | None = None
#: Log-probability cost of reading a party's name as absent while the chosen address starts
#: under one of its name candidates in that candidate's block (the block prints the name).
PARTY_ABSENT = 1.0
#: Read the amount paid as the cash-rounded total printed under the total (:meth:`read`).
CASH_ROUNDING = True
#: A date no calendar has (``24/16/2017``) gives way to the field's best possible date among
#: its first :data:`POSSIBLE_DATE_TOP` candidates (:meth:`read`); 0 turns it off.
POSSIBLE_DATE_TOP = 4


@dataclass(frozen=True)
class RankedCandidate:
    """One candidate of a field as ranked.

    Parameters
    ----------
    value : str or None
        The string as printed; ``None`` is the "absent" candidate.
    line : int or None
        Line index the value was read from (None for absent).
    score : float
        Ranker score (higher = better; comparable within one field of one document).
    prob : float
        Softmax of the scores over the field's candidates.
    label : str or None
        The printed label the value was found with, if any.

    Examples
    --------
    >>> c = RankedCandidate("9.00", 3, 1.5, 0.8, "TOTAL")
    >>> RankedCandidate.from_dict(c.to_dict()) == c
    True
    """

    value: str | None
    line: int | None
    score: float
    prob: float
    label: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "line": self.line,
            "score": self.score,
            "prob": self.prob,
            "label": self.label,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RankedCandidate:
        return cls(d["value"], d["line"], float(d["score"]), float(d["prob"]), d.get("label"))


def training_groups(
    lines: list[Line], schema: Schema, gold: Mapping[str, Any], *, date_order: str | None = "dmy"
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """One ``(field name, X, relevance)`` group per labelled field of a document.

    Relevance is 1 for candidates that match gold (type-aware,
    :func:`confidence.datasets.matching.is_correct` rules) and for the null candidate of an
    absent field, else 0. Fields whose gold value is not among the candidates are left out:
    no choice could be right there, so they teach the ranker nothing.
    """
    ctx = PageContext.build(lines, schema)
    out = []
    for f in schema:
        if f.name not in gold:
            continue
        pool = field_pool(ctx, f)
        g = gold[f.name]
        y = np.array([is_correct(f.type, p.value, g, date_order=date_order) for p in pool], float)
        if y.sum() == 0:
            continue
        out.append((f.name, pool_features(ctx, f, pool), y))
    return out


@persistence.register_part("ranker", format_version=1, text_fields={"booster": ".lgb.txt"})
class CandidateRanker(BaseEstimator):
    """LightGBM ``LGBMRanker`` (lambdarank) over (field, candidate) pair features.

    Parameters
    ----------
    n_estimators : int, default=300
    learning_rate : float, default=0.05
    num_leaves : int, default=31
    min_child_samples : int, default=20
    subsample : float, default=1.0
        Share of the training rows each tree is grown on (LightGBM bagging, redrawn for every
        tree); below 1 the trees see different samples, which steadies a ranker that would
        otherwise lean on the few features that separate the synthetic training pages best.
    colsample_bytree : float, default=1.0
        Share of the features each tree may split on.
    random_state : int, default=0
    n_jobs : int, default=1
        LightGBM threads.

    Attributes
    ----------
    booster_ : lightgbm.Booster
    feature_names_ : list of str
    n_features_in_ : int

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2)); y = (X[:, 0] > 0.8).astype(int)
    >>> r = CandidateRanker(n_estimators=20, min_child_samples=2).fit(X, y, group=[6] * 10)
    >>> s = r.predict(X[:6]); bool(s[np.argmax(X[:6, 0])] == s.max())
    True
    """

    def __init__(
        self,
        *,
        n_estimators: int = 300,
        learning_rate: float = 0.05,
        num_leaves: int = 31,
        min_child_samples: int = 20,
        subsample: float = 1.0,
        colsample_bytree: float = 1.0,
        random_state: int = 0,
        n_jobs: int = 1,
    ) -> None:
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.min_child_samples = min_child_samples
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y, *, group, feature_names=None) -> CandidateRanker:
        """Fit on candidate rows ``X``, relevance ``y`` (0/1) and query ``group`` sizes.

        ``feature_names`` names ``X``'s columns when they are a subset of :data:`FEATURES`
        (a ranker trained without some features); by default ``X`` has all of them.
        """
        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float)
        group = np.asarray(group, dtype=int)
        if X.ndim != 2 or len(X) != len(y):
            raise ValueError(f"X must be 2-d with one row per label; got {X.shape} and {y.shape}")
        if group.sum() != len(X) or (group <= 0).any():
            raise ValueError(f"group sizes sum to {group.sum()}, X has {len(X)} rows")
        for name in ("subsample", "colsample_bytree"):
            share = getattr(self, name)
            if not 0.0 < share <= 1.0:
                raise ValueError(f"{name} must be in (0, 1], got {share!r}")
        if feature_names is not None:
            feature_names = [str(n) for n in feature_names]
            unknown = [n for n in feature_names if n not in FEATURES]
            if len(feature_names) != X.shape[1] or unknown or len(set(feature_names)) < X.shape[1]:
                raise ValueError(
                    f"feature_names must name X's {X.shape[1]} columns, once each, from FEATURES"
                    + (f"; unknown: {unknown}" if unknown else "")
                )
        model = lgb.LGBMRanker(
            objective="lambdarank",
            n_estimators=self.n_estimators,
            learning_rate=self.learning_rate,
            num_leaves=self.num_leaves,
            min_child_samples=self.min_child_samples,
            subsample=self.subsample,
            subsample_freq=1 if self.subsample < 1.0 else 0,
            colsample_bytree=self.colsample_bytree,
            random_state=self.random_state,
            n_jobs=self.n_jobs,
            verbose=-1,
        )
        model.fit(X, y, group=group)
        self.booster_ = model.booster_
        self.n_features_in_ = X.shape[1]
        if feature_names is not None:
            self.feature_names_ = feature_names
        else:
            self.feature_names_ = (
                list(FEATURES)
                if X.shape[1] == len(FEATURES)
                else [f"f{i}" for i in range(X.shape[1])]
            )
        return self

    def predict(self, X) -> np.ndarray:
        """Ranking scores of candidate rows (higher = better within a group).

        ``X`` has the ranker's own columns, or all of today's :data:`FEATURES` when the ranker was
        trained on an earlier subset of them (its columns are picked by name).
        """
        check_is_fitted(self, "booster_")
        X = np.asarray(X, dtype=float)
        if X.ndim == 2 and X.shape[1] == len(FEATURES) != self.n_features_in_:
            X = X[:, self._columns()]
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has shape {X.shape}; the ranker expects {self.n_features_in_}")
        return self.booster_.predict(X)

    # ------------------------------------------------------------------ documents
    def rank(self, lines: list[Line], schema: Schema) -> dict[str, list[RankedCandidate]]:
        """Every field's candidates (null included), best first.

        A field the schema marks ``required`` has no null candidate unless the page offers no
        candidate of its type at all; its probabilities are then over the printed candidates.

        Examples
        --------
        >>> from confidence.schema import Field
        >>> ls = [Line(0, "Invoice No: INV-7", (0, .1, .5, .12), 1, ()),
        ...       Line(1, "TOTAL 9.00", (0, .5, .5, .52), 1, ())]
        >>> s = Schema("s", (Field("total", "amount"), Field("invoice_number", "id")))
        >>> ranked = default_ranker().rank(ls, s)
        >>> ranked["total"][0].value, ranked["invoice_number"][0].value
        ('9.00', 'INV-7')
        """
        check_is_fitted(self, "booster_")
        key = (schema, tuple(lines))
        memo = self.__dict__.setdefault("_memo", {})
        if key in memo:  # the Mapper and the Hunter of one document rank the same page
            return memo[key]
        ctx = PageContext.build(lines, schema)
        out: dict[str, list[RankedCandidate]] = {}
        for f in schema:
            pool = field_pool(ctx, f)
            s = self.predict(pool_features(ctx, f, pool))
            if f.required and len(pool) > 1:  # never absent while the page offers a candidate
                pool, s = pool[:-1], s[:-1]  # the null candidate is the pool's last
            p = np.exp(s - s.max())
            p /= p.sum()
            order = np.argsort(-s, kind="stable")
            # "2618-03-23", "O4-O4-2O18": the features read the printed date, the value is
            # its one possible reading (candidates.repair_date)
            shown = [
                (repair_date(c.value) or c.value) if f.type == "date" and c.value else c.value
                for c in pool
            ]
            out[f.name] = [
                RankedCandidate(
                    shown[i],
                    None if pool[i].value is None else pool[i].line,
                    float(s[i]),
                    float(p[i]),
                    pool[i].label or None,
                )
                for i in order
            ]
        memo.clear()
        memo[key] = out
        self.__dict__["_page"] = (key, ctx)  # read() pairs party names with their addresses
        return out

    def read(
        self,
        lines: list[Line],
        schema: Schema,
        *,
        joint: bool = True,
        party_bonus: float | None = None,
        party_overlap: float | None = None,
        cash_rounding: bool | None = None,
    ) -> dict[str, RankedCandidate]:
        """The chosen candidate of every field (``value=None``: absent).

        ``joint=True`` chooses the amount and date fields together
        (:func:`confidence.calls.consistency.choose_jointly` over the ranker's log-probabilities):
        an assignment where net + tax = gross and due >= issue beats independent top-1 picks
        that are only slightly more probable; and a party's name and address together
        (:func:`confidence.calls.parties.choose_parties`, ``party_bonus`` / ``party_overlap``,
        default :data:`PARTY_BONUS` / :data:`PARTY_OVERLAP`): an address that starts under the
        chosen name in its block beats one elsewhere, an address span holding the name's line
        loses. The amount paid (the ``due`` role, else ``gross``) is the cash-rounded total when the
        page prints one under the chosen total and no sum ties the total
        (:func:`confidence.calls.consistency.cash_rounded`; ``cash_rounding``, default
        :data:`CASH_ROUNDING`). ``joint=False`` takes each field's top candidate.
        """
        ranked = self.rank(lines, schema)
        if not joint:
            return {k: v[0] for k, v in ranked.items()}
        options = {
            k: [(c.value, math.log(max(c.prob, 1e-12))) for c in v] for k, v in ranked.items()
        }
        chosen = choose_jointly(schema, options)
        out = {
            k: next((c for c in v if c.value == chosen[k].value), v[0]) for k, v in ranked.items()
        }
        if CASH_ROUNDING if cash_rounding is None else cash_rounding:
            roles = {r: n for n, r in field_roles(schema).items()}
            total = roles.get("due", roles.get("gross"))
            if total is not None and chosen[total].consistent is not True:
                top = out[total]
                # the total may be printed again lower down (a tax summary): its first line counts
                first = min(
                    (ln.index for ln in lines if top.value and top.value in ln.text),
                    default=top.line,
                )
                got = cash_rounded(
                    (top.value, first if top.line is None else min(first, top.line)),
                    [(c.value, c.line) for c in ranked[total]],
                )
                if got is not None:
                    out[total] = next(c for c in ranked[total] if (c.value, c.line) == got)
        for f in schema:
            chosen_date = out[f.name].value if f.type == "date" else None
            if chosen_date is not None and not possible_date(chosen_date):
                out[f.name] = next(
                    (
                        c
                        for c in ranked[f.name][:POSSIBLE_DATE_TOP]
                        if c.value is not None and possible_date(c.value)
                    ),
                    out[f.name],
                )
        page = self.__dict__.get("_page")
        ctx = (
            page[1]
            if page and page[0] == (schema, tuple(lines))
            else PageContext.build(lines, schema)
        )
        out.update(
            choose_parties(
                schema,
                ranked,
                ctx.by_index,
                ctx.blocks,
                bonus=PARTY_BONUS if party_bonus is None else party_bonus,
                overlap_penalty=PARTY_OVERLAP if party_overlap is None else party_overlap,
                reach=PARTY_REACH,
                absent_penalty=PARTY_ABSENT,
            )
        )
        return out

    def top_candidates(
        self, lines: list[Line], schema: Schema, k: int = 4
    ) -> dict[str, list[Candidate]]:
        """The first ``k`` real candidates of every field in ranker order (the Hunter's choice).

        ``Candidate.score`` is the ranker score; the null candidate is left out because the
        Hunter must fill its slots.
        """
        return {
            name: [
                Candidate(c.value, c.line if c.line is not None else -1, c.score)
                for c in cands
                if c.value is not None
            ][:k]
            for name, cands in self.rank(lines, schema).items()
        }

    def _columns(self) -> list[int]:
        """Indices in :data:`FEATURES` of the features this ranker was trained on."""
        cols = self.__dict__.get("_cols")
        if cols is None:
            missing = [n for n in self.feature_names_ if n not in FEATURES]
            if missing:
                raise ValueError(f"the ranker uses features this extractconf lacks: {missing}")
            cols = self.__dict__["_cols"] = [FEATURES.index(n) for n in self.feature_names_]
        return cols

    # ---------------------------------------------------------------- persistence
    def to_dict(self) -> dict[str, Any]:
        """Fitted state for :mod:`confidence.persistence` (booster as LightGBM text)."""
        check_is_fitted(self, "booster_")
        return {
            "params": self.get_params(),
            "feature_names": self.feature_names_,
            "versions": {"extractconf": __version__, "lightgbm": lgb.__version__},
            "booster": self.booster_.model_to_string(),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CandidateRanker:
        """Rebuild a fitted ranker from :meth:`to_dict` output."""
        try:
            booster = lgb.Booster(model_str=d["booster"])
        except lgb.basic.LightGBMError as e:
            raise ModelError(f"LightGBM cannot parse the ranker model ({e})") from e
        names = list(d["feature_names"])
        if booster.num_feature() != len(names):
            raise ModelError(
                f"ranker booster has {booster.num_feature()} features, metadata {len(names)}"
            )
        r = cls(**d["params"])
        r.booster_ = booster
        r.feature_names_ = names
        r.n_features_in_ = len(names)
        return r

    def save(self, directory: str | Path) -> Path:
        """Write ``ranker.json``, ``ranker.lgb.txt`` and ``manifest.json`` into ``directory``."""
        return persistence.save(self, directory)

    @classmethod
    def load(cls, directory: str | Path) -> CandidateRanker:
        """Read a saved ranker folder; :class:`ModelError` for a corrupt or changed file."""
        r = persistence.load(directory, expect=cls)
        missing = [n for n in r.feature_names_ if n not in FEATURES]
        if missing:  # an earlier subset of today's features is fine: predict picks its columns
            raise ModelError(
                f"{directory}: the ranker was trained on features this extractconf does not "
                f"compute ({', '.join(missing[:5])}); retrain it with scripts/train_ranker.py"
            )
        return r


DEFAULT_DIR = Path(str(files("confidence").joinpath("models", "ranker")))
"""Where the shipped ranker lives (``scripts/train_ranker.py`` writes it)."""


@lru_cache(maxsize=1)
def default_ranker() -> CandidateRanker:
    """The shipped ranker (loaded once per process)."""
    return CandidateRanker.load(DEFAULT_DIR)

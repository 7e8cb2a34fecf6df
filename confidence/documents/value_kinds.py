"""What kind of text a short string is: a name, payment terms, an address, an id, another line.

A value can be found on the page, read with confidence and sit next to a label, and still be the
wrong *kind* of text for its field: a street line reported as the customer's name, the vendor's
name reported as the payment terms, a heading (``Sales Invoice``) or a label (``Beleg-Nr.``)
reported as a name. The text itself says so. :class:`ValueKinds` is a character n-gram
classifier (hashed 1-4-grams of the lower-cased value with digits folded to ``0``, multinomial
logistic regression) that tells the *kind* of a short text:

* ``name`` -- a person's or a company's name (``text`` fields whose concept is a vendor or
  customer name: :func:`~confidence.documents.vocab.field_concept`);
* ``terms`` -- payment terms (``text`` fields whose concept is ``payment_terms``);
* ``text`` -- another ``text`` field;
* ``address`` -- an ``address`` field's value;
* ``id`` -- an ``id`` field's value (a document number, a tax id, an order number);
* ``other`` -- a line of a document that is no field's value (headings, labels, item rows,
  footers).

It is trained on synthetic documents only (``scripts/train_value_kinds.py``; what a name or an
address looks like in each locale comes from the generator's documented locale tables), on a
corpus *disjoint* from the fusion model's training documents, so the fusion learns how far its
probabilities hold on documents it has not seen. The shipped model lives in
``confidence/models/value_kinds`` (JSON and a text weight table, sha256 manifest; no pickle).

The kind of a field comes from its type and, for ``text`` fields, its concept (name, type and
description: :func:`field_kind`). The fusion features ``kind_*``
(:mod:`confidence.features.value_kinds`) ask it about the reported value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib.resources import files
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.feature_extraction import FeatureHasher
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import normalize
from sklearn.utils.validation import check_is_fitted

from confidence import __version__, persistence
from confidence.documents.vocab import field_concept
from confidence.errors import ModelError
from confidence.schema import Field

__all__ = ["DEFAULT_DIR", "KINDS", "ValueKinds", "default_value_kinds", "field_kind"]

KINDS: tuple[str, ...] = ("name", "terms", "text", "address", "id", "other")
"""Every kind a field or a line can have (a model knows those it was trained on)."""

_TEXT_KIND = {"vendor_name": "name", "customer_name": "name", "payment_terms": "terms"}
_N_FEATURES = 2**20
_DIGIT = re.compile(r"\d")


def field_kind(field: Field) -> str | None:
    """The kind of a field's values, None for types that have a syntax instead.

    Examples
    --------
    >>> field_kind(Field("customer", "text")), field_kind(Field("terms", "text"))
    ('name', 'terms')
    >>> field_kind(Field("ship_to", "address")), field_kind(Field("total", "amount"))
    ('address', None)
    """
    if field.type == "text":
        return _TEXT_KIND.get(field_concept(field) or "", "text")
    if field.type in ("address", "id"):
        return field.type
    return None


def _prepare(text: str) -> str:
    """Lower case, digits folded to ``0``, whitespace runs to one space."""
    return " ".join(_DIGIT.sub("0", str(text).lower()).split())


def _vectorizer() -> HashingVectorizer:
    return HashingVectorizer(
        analyzer="char_wb",
        ngram_range=(1, 4),
        n_features=_N_FEATURES,
        alternate_sign=False,
        norm="l2",
        preprocessor=_prepare,
    )


def _word_ngrams(word: str) -> list[str]:
    """The ``char_wb`` 1-4-grams of one word, as the vectorizer makes them: the word padded
    with a space each side, all its n-grams of each size up to its padded length.

    >>> _word_ngrams("ab")
    [' ', 'a', 'b', ' ', ' a', 'ab', 'b ', ' ab', 'ab ', ' ab ']
    """
    w = f" {word} "
    return [w[i : i + n] for n in range(1, min(4, len(w)) + 1) for i in range(len(w) - n + 1)]


def _hashed(texts: Sequence[str]):
    """``_vectorizer().transform(texts)``, each distinct word split and each distinct n-gram
    hashed once.

    ``char_wb`` n-grams never cross a word boundary, so a text's n-grams are those of its
    words; their hashed counts (small integers: exact) are normalised as the vectorizer does
    it, on the same sorted entries, so the matrix is the vectorizer's bit for bit.
    """
    words = [_prepare(t).split() for t in texts]
    grams_of = {w: _word_ngrams(w) for w in dict.fromkeys(chain.from_iterable(words))}
    distinct = list(dict.fromkeys(chain.from_iterable(grams_of.values())))
    if not distinct:
        return _vectorizer().transform(texts)
    hasher = FeatureHasher(n_features=_N_FEATURES, input_type="string", alternate_sign=False)
    index = hasher.transform([g] for g in distinct).indices.tolist()  # one bucket per n-gram
    bucket = dict(zip(distinct, index, strict=True))
    buckets_of = {w: list(map(bucket.__getitem__, grams)) for w, grams in grams_of.items()}
    rows = [list(chain.from_iterable(map(buckets_of.__getitem__, ws))) for ws in words]
    cols = list(chain.from_iterable(rows))
    indptr = np.cumsum([0, *map(len, rows)])
    H = sparse.csr_matrix(
        (np.ones(len(cols)), cols, indptr), shape=(len(texts), _N_FEATURES), dtype=np.float64
    )
    H.sum_duplicates()  # counts, on sorted column indices, as the vectorizer leaves them
    return normalize(H, norm="l2", copy=False)


class ValueKinds(ClassifierMixin, BaseEstimator):
    """Character n-gram classifier of the kind of a short text (see the module docstring).

    Parameters
    ----------
    C : float, default=4.0
        Inverse L2 regularisation of the logistic regression.
    min_weight : float, default=1e-3
        Weights smaller than this (in absolute value, for every class) are dropped when saved.

    Examples
    --------
    >>> texts = ["Mara Lind", "Jon Berg", "12 High Street", "4 Mill Lane", "INV-0012", "INV-0099"]
    >>> kinds = ["name", "name", "address", "address", "id", "id"]
    >>> vk = ValueKinds().fit(texts, kinds)
    >>> vk.classes_.tolist()
    ['address', 'id', 'name']
    >>> p = vk.predict_proba(["Ada Berg", "9 Mill Street"])
    >>> bool(p[0, 2] > p[0, 0]), bool(p[1, 0] > p[1, 2])
    (True, True)
    """

    def __init__(self, C: float = 4.0, min_weight: float = 1e-3):
        self.C = C
        self.min_weight = min_weight

    def fit(self, X: Sequence[str], y: Sequence[str]) -> ValueKinds:
        """Learn from texts ``X`` and their kinds ``y`` (each one of :data:`KINDS`)."""
        X, y = [str(x) for x in X], [str(k) for k in y]
        if len(X) != len(y) or not X:
            raise ValueError(f"need as many kinds as texts (got {len(X)} and {len(y)}), not 0")
        unknown = sorted(set(y) - set(KINDS))
        if unknown:
            raise ValueError(f"unknown kinds {unknown}; use {', '.join(KINDS)}")
        if len(set(y)) < 2:
            raise ValueError("need texts of at least two kinds")
        lr = LogisticRegression(C=self.C, max_iter=2000)
        lr.fit(_vectorizer().transform(X), y)
        self.classes_ = np.asarray(lr.classes_)
        coef = lr.coef_ if lr.coef_.shape[0] > 1 else np.vstack((-lr.coef_, lr.coef_)) / 2
        icpt = lr.intercept_ if lr.coef_.shape[0] > 1 else np.array([-1, 1]) * lr.intercept_ / 2
        keep = np.flatnonzero(np.abs(coef).max(axis=0) >= self.min_weight)
        self.buckets_ = keep.astype(np.int64)
        self.weights_ = coef[:, keep].T.astype(np.float64)  # (n_buckets, n_classes)
        self.intercept_ = np.asarray(icpt, dtype=np.float64)
        self._index()
        return self

    def _index(self) -> None:
        """The weights as a sparse ``(hashed features, classes)`` matrix (kept buckets only)."""
        n, c = self.weights_.shape
        self.__dict__["_W"] = sparse.csr_matrix(
            (self.weights_.ravel(), (np.repeat(self.buckets_, c), np.tile(np.arange(c), n))),
            shape=(_N_FEATURES, c),
        )

    def decision_function(self, X: Sequence[str]) -> np.ndarray:
        """Class scores (log-odds up to a constant), shape ``(n, n_classes)``."""
        check_is_fitted(self, "weights_")
        if "_W" not in self.__dict__:
            self._index()
        # one row per distinct prepared text (ids differing in digits only, a vendor's name on
        # every invoice): a row's scores depend on its prepared text alone
        first: dict[str, int] = {}
        seen: dict[str, int] = {}  # the same text again: no need to prepare it
        texts: list[str] = []
        rows = []
        for x in X:
            t = str(x)
            j = seen.get(t)
            if j is None:
                j = seen[t] = first.setdefault(_prepare(t), len(texts))
                if j == len(texts):
                    texts.append(t)
            rows.append(j)
        H = _hashed(texts)
        scores = np.asarray((H @ self.__dict__["_W"]).todense()) + self.intercept_
        return scores[rows] if len(texts) < len(rows) else scores

    def predict_proba(self, X: Sequence[str]) -> np.ndarray:
        """Probability of each kind in :attr:`classes_` order, shape ``(n, n_classes)``."""
        z = self.decision_function(X)
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def predict(self, X: Sequence[str]) -> np.ndarray:
        """The most probable kind of each text."""
        return self.classes_[self.predict_proba(X).argmax(axis=1)]

    # ---------------------------------------------------------------- persistence
    def to_dict(self) -> dict[str, Any]:
        """Fitted state for :mod:`confidence.persistence` (weights as a text table)."""
        check_is_fitted(self, "weights_")
        lines = (
            f"{b} " + " ".join(f"{w:.4g}" for w in row)
            for b, row in zip(self.buckets_.tolist(), self.weights_, strict=True)
        )
        return {
            "params": self.get_params(),
            "classes": self.classes_.tolist(),
            "intercept": self.intercept_.tolist(),
            "vectorizer": {"analyzer": "char_wb", "ngram_range": [1, 4],
                           "n_features": _N_FEATURES, "preprocess": "lower, digits to 0"},
            "versions": {"extractconf": __version__},
            "weights": "\n".join(lines) + "\n",
        }  # fmt: skip

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ValueKinds:
        """Rebuild a fitted model from :meth:`to_dict` output."""
        try:
            classes = [str(c) for c in d["classes"]]
            table = np.loadtxt(str(d["weights"]).splitlines(), ndmin=2)
            intercept = np.asarray(d["intercept"], dtype=np.float64)
            n_features = int(d["vectorizer"]["n_features"])
        except (KeyError, TypeError, ValueError) as e:
            raise ModelError(f"value-kinds model is malformed ({e})") from e
        if n_features != _N_FEATURES or table.shape[1] != len(classes) + 1:
            raise ModelError(
                f"value-kinds model has {table.shape[1] - 1} weight columns for "
                f"{len(classes)} classes and {n_features} hashed features"
            )
        unknown = sorted(set(classes) - set(KINDS))
        if unknown or intercept.shape != (len(classes),):
            raise ModelError(f"value-kinds model classes {classes} are not kinds of {KINDS}")
        vk = cls(**d["params"])
        vk.classes_ = np.asarray(classes)
        vk.buckets_ = table[:, 0].astype(np.int64)
        vk.weights_ = table[:, 1:]
        vk.intercept_ = intercept
        vk._index()
        return vk

    def save(self, directory: str | Path) -> Path:
        """Write ``value_kinds.json``, its weight table and ``manifest.json`` into
        ``directory``."""
        return persistence.save(self, directory)

    @classmethod
    def load(cls, directory: str | Path) -> ValueKinds:
        """Read a saved folder; :class:`~confidence.errors.ModelError` for a corrupt file."""
        return persistence.load(directory, expect=cls)


persistence.register_part("value_kinds", format_version=1, text_fields={"weights": ".weights.txt"})(
    ValueKinds
)

DEFAULT_DIR = Path(str(files("confidence").joinpath("models", "value_kinds")))
"""Where the shipped model lives (``scripts/train_value_kinds.py`` writes it)."""


@lru_cache(maxsize=1)
def default_value_kinds() -> ValueKinds:
    """The shipped model (loaded once per process)."""
    return ValueKinds.load(DEFAULT_DIR)

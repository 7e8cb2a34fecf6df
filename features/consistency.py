"""Arithmetic consistency features (``cons_*``): does a reading's value add up with the others?

Per field and per reading (Hunter, Mapper), whether the reading's value of the field takes part
in a satisfied relation with the *same reading's* values of the document's other fields
(``net + tax = gross``, ``gross - prepaid = due``, ``tax ≈ rate × net``, ``due date >= issue
date``; :func:`confidence.calls.consistency.relation_flags`): 1 when it does, 0 when every
relation it takes part in is violated, NaN when none applies (the schema lacks the other fields,
a value is absent or unreadable, or the field has no role). Fields are tied to roles by their
concept, never by name, and the features need no page: they are computed on pageless rows too.

``cons_shared`` asks the converse question of the reported value (the Mapper's for records that
report it, else the Hunter's, else the Mapper's): is the same value (folded: case, spaces and
punctuation ignored) also reported for another field of the document? A value read twice -- the
gross total again as the amount due, the issue date again as the due date -- is right for at most
one of them unless the document prints it twice.

``cons_part_of`` asks whether the reported value is a *part* of another field's reported value, or
that value a part of it: the words of one (folded) are a run of consecutive words of the other,
of at least 4 letters and digits, and the two are not equal. A name taken from the first line
of an address block, a street line reported as a name. A field's value that is a piece of
another field's is seldom right for both.

The rows of one document are found by their document's ``doc_id`` (doc_ids are unique within a
batch); a row alone in its document has nothing to add up with.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from confidence.calls.consistency import relation_flags
from confidence.documents.normalize import is_empty
from confidence.documents.text import fold
from confidence.schema import Schema

__all__ = ["NAMES", "values_batch"]

NAMES: tuple[str, ...] = ("cons_h", "cons_m", "cons_shared", "cons_part_of")
_MIN_PART = 4  # shorter keys (a "1", a "ab") sit inside too many values to mean anything
_CODE = {True: 1.0, False: 0.0, None: math.nan}


def _value(reading) -> str | None:
    v = getattr(reading, "value", None)
    return None if is_empty(v) else v


def _reported(row: tuple) -> str | None:
    h, m = _value(row[2]), _value(row[3])
    if len(row) > 4 and row[4] == "mapper":
        return m
    return h if h is not None else m


def _words(value: str | None) -> tuple[str, ...]:
    return tuple(w for w in map(fold, value.split()) if w) if value is not None else ()


def _part(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """The words of one value a run of consecutive words of the other (not equal), the shorter
    of at least :data:`_MIN_PART` letters and digits.

    >>> _part(("52", "alexander", "st"), ("52", "alexander", "st", "leeds"))
    True
    >>> _part(("1900",), ("11900",))  # digits inside a longer number: not a part
    False
    """
    if a == b or not a or not b:
        return False
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    if sum(map(len, short)) < _MIN_PART:
        return False
    n = len(short)
    return any(long_[i : i + n] == short for i in range(len(long_) - n + 1))


def values_batch(rows: Sequence[tuple]) -> np.ndarray:
    """Feature values of ``(field, document, hunter, mapper[, reported])`` rows, shape
    ``(n, len(NAMES))``.

    Examples
    --------
    >>> from confidence.readings import FieldReading as R
    >>> from confidence.schema import Field
    >>> from confidence.types import Document
    >>> doc = Document("d1", "", ())
    >>> net, tax, gross = Field("net", "amount"), Field("tax", "amount"), Field("gross", "amount")
    >>> values_batch([(net, doc, R("100.00"), R("100.00")), (tax, doc, R("19.00"), None),
    ...               (gross, doc, R("119.00"), R("100.00"))]).tolist()
    [[1.0, nan, 0.0, 0.0], [1.0, nan, 0.0, 0.0], [1.0, nan, 0.0, 0.0]]
    >>> name, addr = Field("customer", "text"), Field("customer_address", "address")
    >>> values_batch([(name, doc, R("52 Alexander Street"), None),
    ...               (addr, doc, R("52 Alexander Street, Leeds LS1 4AP"), None)])[:, 3].tolist()
    [1.0, 1.0]
    """
    out = np.full((len(rows), len(NAMES)), np.nan)
    docs: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        docs.setdefault(getattr(row[1], "doc_id", ""), []).append(i)
    for idx in docs.values():
        keys = [(rows[i][0].name, fold(v) if (v := _reported(rows[i])) is not None else "")
                for i in idx]  # fmt: skip
        words = [_words(_reported(rows[i])) for i in idx]
        for i, (name, k), w in zip(idx, keys, words, strict=True):
            if k:
                out[i, 2] = float(any(k == o and name != n for n, o in keys))
                out[i, 3] = float(
                    any(_part(w, o) for (n, _), o in zip(keys, words, strict=True) if n != name)
                )
        if len(idx) < 2:
            continue
        first: dict[str, int] = {}
        for i in idx:  # a field repeated within a document: its first row speaks for it
            first.setdefault(rows[i][0].name, i)
        schema = Schema("document", tuple(rows[i][0] for i in first.values()))
        for col, pos in ((0, 2), (1, 3)):
            flags = relation_flags(schema, {n: _value(rows[i][pos]) for n, i in first.items()})
            for i in idx:
                out[i, col] = _CODE[flags[rows[i][0].name]]
    return out

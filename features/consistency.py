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
from collections.abc import Callable, Sequence

import numpy as np

from confidence.calls.consistency import field_roles, relation_checker
from confidence.documents.normalize import is_empty
from confidence.documents.text import fold
from confidence.schema import Field, Schema

__all__ = ["NAMES", "values_batch", "values_of"]

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
    return values_of(
        [row[0] for row in rows],
        [getattr(row[1], "doc_id", "") for row in rows],
        [_value(row[2]) for row in rows],
        [_value(row[3]) for row in rows],
        [_reported(row) for row in rows],
    )


def values_of(
    fields: Sequence[Field],
    doc_ids: Sequence[str],
    hunter: Sequence[str | None],
    mapper: Sequence[str | None],
    reported: Sequence[str | None],
) -> np.ndarray:
    """:func:`values_batch` from the rows' columns: their fields, documents, Hunter and Mapper
    values and reported values (None where empty: :func:`~confidence.documents.normalize.is_empty`
    already applied).

    Examples
    --------
    >>> from confidence.schema import Field
    >>> f = [Field("net", "amount"), Field("tax", "amount"), Field("gross", "amount")]
    >>> values_of(f, ["d"] * 3, ["100", "19", "119"], [None] * 3, ["100", "19", "119"])[:, 0]
    array([1., 1., 1.])
    """
    n = len(fields)
    cons_h, cons_m, shared, part_of = ([math.nan] * n for _ in NAMES)
    names_all = [f.name for f in fields]
    keys_all = [fold(v) if v is not None else "" for v in reported]
    memo: dict[str | None, tuple[str, ...]] = {}
    words_all = [memo[v] if v in memo else memo.setdefault(v, _words(v)) for v in reported]
    docs: dict[str, list[int]] = {}
    for i, d in enumerate(doc_ids):
        docs.setdefault(d, []).append(i)
    checkers: dict[tuple[int, ...], Callable | None] = {}
    seen: dict[tuple, dict[str, float]] = {}  # (field set, values) already checked
    for idx in docs.values():
        names = [names_all[i] for i in idx]
        keys = [keys_all[i] for i in idx]
        by_key: dict[str, set[str]] = {}
        for name, k in zip(names, keys, strict=True):
            if k:
                by_key.setdefault(k, set()).add(name)
        parts = _parts(names, [words_all[i] for i in idx])
        for i, k, part in zip(idx, keys, parts, strict=True):
            if k:  # the same key under another field name; a part of another field's words
                shared[i] = float(len(by_key[k]) > 1)
                part_of[i] = float(part)
        if len(idx) < 2:
            continue
        first: dict[str, int] = {}
        for name, i in zip(names, idx, strict=True):  # a repeated field: its first row speaks
            first.setdefault(name, i)
        key = tuple(id(fields[i]) for i in first.values())  # the same Field objects, mostly
        if key not in checkers:  # documents of one schema share its roles and relations
            schema = Schema("document", tuple(fields[i] for i in first.values()))
            checkers[key] = relation_checker(schema) if field_roles(schema) else None
        check = checkers[key]
        if check is None:  # no field takes a role: nothing adds up (NaN)
            continue
        for col, values in ((cons_h, hunter), (cons_m, mapper)):
            got = tuple(values[i] for i in first.values())
            if (key, got) not in seen:  # the Mapper read what the Hunter did, mostly
                flags = check(dict(zip(first, got, strict=True)))
                seen[key, got] = {name: _CODE[flag] for name, flag in flags.items()}
            codes = seen[key, got]
            for name, i in zip(names, idx, strict=True):
                col[i] = codes[name]
    return np.array([cons_h, cons_m, shared, part_of], dtype=np.float64).reshape(4, n).T.copy()


def _parts(names: Sequence[str], words: Sequence[tuple[str, ...]]) -> list[bool]:
    """Per row, whether :func:`_part` holds between its words and those of a row of another
    field name. Words of folded text hold letters and digits only, so ``" a b "`` is a run of
    consecutive words of ``" x a b y "`` exactly when it is a substring of it: a value is
    compared with the others only when its span occurs in a longer one."""
    spans = [f" {' '.join(w)} " if w else "" for w in words]
    blob = "\x00".join(dict.fromkeys(spans))  # each distinct span once
    out = [False] * len(words)
    for j, (w, s) in enumerate(zip(words, spans, strict=True)):
        # only the shorter value of a pair needs the letter count; it occurs once in its own span
        if not w or sum(map(len, w)) < _MIN_PART or blob.count(s) < 2:
            continue
        for o, (v, t) in enumerate(zip(words, spans, strict=True)):
            if len(v) > len(w) and names[o] != names[j] and s in t:
                out[j] = out[o] = True
    return out

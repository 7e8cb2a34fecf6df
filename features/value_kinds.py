"""Does the reported value read like a value of its field's kind (``kind_*``)?

A value can be found on the page, read with confidence and sit next to a label, and still be the
wrong *kind* of text for its field: a street line reported as the customer's name, the vendor's
name reported as the payment terms, a heading (``Sales Invoice``) or a label (``Beleg-Nr.``)
reported as a name. :class:`~confidence.documents.value_kinds.ValueKinds`, a character n-gram
classifier trained on synthetic documents of another seed than the fusion model's (so the fusion
learns how far its probabilities hold on documents it has not seen), tells names, payment terms,
other text, addresses, ids and the other lines of a document apart.

Two features describe the reported value of a field whose kind the model knows (NaN otherwise,
and for an empty value): ``kind_own``, the probability that the value is of the field's kind,
and ``kind_other``, the probability that it is a line that is no field's value. Types with a
syntax (dates, amounts, e-mails, ...) are checked by ``val_valid`` instead and have no kind.
The kind of a field comes from its type and, for ``text`` fields, its concept (name, type and
description), like the roles of the ``cons_*`` features: renaming a field without changing what
it stands for leaves its row unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from confidence.documents.normalize import is_empty
from confidence.documents.value_kinds import ValueKinds, default_value_kinds, field_kind
from confidence.schema import Field

__all__ = ["NAMES", "values_batch"]

NAMES: tuple[str, ...] = ("kind_own", "kind_other")


def values_batch(
    fields: Sequence[Field], values: Sequence[str | None], model: ValueKinds | None = None
) -> np.ndarray:
    """:data:`NAMES` of each ``(field, reported value)``, shape ``(n, 2)`` (NaN: no kind, or
    an empty value).

    Examples
    --------
    >>> vk = ValueKinds().fit(["Mara Lind", "Jon Berg", "12 High Street", "4 Mill Lane",
    ...                        "Total", "Page 1"], ["name", "name", "address", "address",
    ...                                             "other", "other"])
    >>> X = values_batch([Field("customer", "text"), Field("due", "date")],
    ...                  ["8 High Street", "2024-01-02"], vk)
    >>> bool(X[0, 0] < 0.5), math.isnan(X[1, 0])
    (True, True)
    """
    out = np.full((len(values), len(NAMES)), math.nan)
    # a batch has a few fields (the same objects on every document) and many rows
    kind_of = {i: field_kind(f) for i, f in {id(f): f for f in fields}.items()}
    todo = [
        (i, k, str(v))
        for i, (f, v) in enumerate(zip(fields, values, strict=True))
        if (k := kind_of[id(f)]) is not None and not is_empty(v)
    ]
    if not todo:
        return out
    model = model if model is not None else default_value_kinds()
    col = {c: j for j, c in enumerate(model.classes_.tolist())}
    P = model.predict_proba([v for _, _, v in todo])
    rows = np.array([i for i, _, _ in todo])
    own = np.array([col.get(k, -1) for _, k, _ in todo])
    known = own >= 0
    out[rows[known], 0] = P[np.flatnonzero(known), own[known]]
    if "other" in col:
        out[rows, 1] = P[:, col["other"]]
    return out

"""Page arithmetic (``page_sum``): does the reported amount add up with the document's printed
amounts the way its role says?

A total (role ``gross`` or ``due``) is, on most invoices and receipts, the sum of two other
amounts printed in the document (net + tax, items + rounding, subtotal + service charge); a net
amount or a tax is a *part* of such a sum (it and another printed amount add up to a third). A
reading that took the tax, the net or the cash tendered as the total breaks this, and nothing
else sees it when the schema has no net and tax fields to add up (``cons_*`` need them): a
receipt's schema often has the total alone.

``page_sum`` is 1 when the reported value sits among the document's printed amounts as its role
says, 0 when it does not, and NaN when the field takes no such role (its vocabulary concept,
:func:`confidence.calls.consistency.field_roles`), the value is absent, zero or not an amount,
or there is no page (pageless rows). A field's role is the one it takes among the document's
fields (a role two fields could take, such as two amounts that both read as totals, is
nobody's). The printed amounts are the two-decimal amounts of the
document's reading-order lines (:data:`~confidence.documents.patterns.AMOUNT_RE`), compared in
cents by :func:`confidence.calls.ranker_features.page_arithmetic`, the arithmetic the ranker
reads candidates with.
"""

from __future__ import annotations

import math
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation

import numpy as np

from confidence.calls.consistency import field_roles
from confidence.calls.ranker_features import page_arithmetic
from confidence.documents.lines import document_lines
from confidence.documents.normalize import parse_amount
from confidence.documents.patterns import AMOUNT_RE
from confidence.schema import Schema
from confidence.types import Document

__all__ = ["NAMES", "document_amounts", "values_batch"]

NAMES: tuple[str, ...] = ("page_sum",)
_SUMS = frozenset({"gross", "due"})
_PARTS = frozenset({"net", "tax"})
_AMOUNTS: OrderedDict[int, tuple[weakref.ref, frozenset[int]]] = OrderedDict()
_CACHE_SIZE = 256


def _cents(text: str) -> int | None:
    try:
        v = parse_amount(text)
    except (ValueError, ArithmeticError, InvalidOperation):
        return None
    if v is None or not isinstance(v, Decimal) or not v.is_finite():
        return None
    return abs(int((v * 100).to_integral_value()))


def document_amounts(document: Document) -> frozenset[int]:
    """The two-decimal amounts printed in ``document``, in cents (sign dropped, zero left out).

    Examples
    --------
    >>> from confidence.types import Page, Word
    >>> ws = (Word("Net", (.1, .1, .2, .12), line_id=1),
    ...       Word("1.234,50", (.3, .1, .4, .12), line_id=1),
    ...       Word("Tax", (.1, .2, .2, .22), line_id=2), Word("0.00", (.3, .2, .4, .22), line_id=2))
    >>> sorted(document_amounts(Document("d", "d.pdf", (Page(1, 100, 100, ws, "pdf", 72.0),))))
    [123450]
    """
    key = id(document)  # every field of a document asks: read its lines once (identity LRU)
    hit = _AMOUNTS.get(key)
    if hit is not None and hit[0]() is document:
        _AMOUNTS.move_to_end(key)
        return hit[1]
    out = set()
    for ln in document_lines(document):
        for m in AMOUNT_RE.finditer(ln.text):
            c = _cents(m.group(0))
            if c:
                out.add(c)
    amounts = frozenset(out)
    _AMOUNTS[key] = (weakref.ref(document), amounts)
    if len(_AMOUNTS) > _CACHE_SIZE:
        _AMOUNTS.popitem(last=False)
    return amounts


def values_batch(rows: Sequence[tuple], reported: Sequence[str | None]) -> np.ndarray:
    """Feature values of ``(field, document, ...)`` rows and their reported values, shape
    ``(n, len(NAMES))``.

    A field's role is the one it takes among the fields of its document's rows
    (:func:`~confidence.calls.consistency.field_roles`: a role two fields could take is
    nobody's), so a unit price beside a total is no total. Documents are told apart by
    ``doc_id``; a document without pages has no printed amounts (NaN).

    Examples
    --------
    >>> from confidence.schema import Field
    >>> from confidence.types import Page, Word
    >>> ws = tuple(Word(t, (x, y, x + .1, y + .02), line_id=int(y * 100))
    ...            for t, x, y in (("100.00", .5, .1), ("19.00", .5, .2), ("119.00", .5, .3)))
    >>> doc = Document("d", "d.pdf", (Page(1, 100, 100, ws, "pdf", 72.0),))
    >>> total, tax = Field("total", "amount"), Field("tax", "amount")
    >>> values_batch([(total, doc), (tax, doc)], ["119.00", "100.00"]).ravel().tolist()
    [1.0, 1.0]
    >>> values_batch([(total, doc), (tax, doc)], ["19.00", "7.00"]).ravel().tolist()
    [0.0, 0.0]
    >>> price = Field("unit_price", "amount", "Price of one unit")
    >>> values_batch([(total, doc), (price, doc)], ["119.00", "119.00"]).ravel().tolist()
    [nan, nan]
    """
    out = np.full((len(rows), len(NAMES)), math.nan)
    docs: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        docs.setdefault(getattr(row[1], "doc_id", ""), []).append(i)
    roles_of: dict[tuple[int, ...], dict[str, str]] = {}
    for idx in docs.values():
        fields = {rows[i][0].name: rows[i][0] for i in idx}  # a repeated field: once
        key = tuple(id(f) for f in fields.values())
        if key not in roles_of:  # documents of one schema share its roles
            roles_of[key] = field_roles(Schema("document", tuple(fields.values())))
        roles = roles_of[key]
        document = rows[idx[0]][1]
        if not any(roles.get(rows[i][0].name) in _SUMS | _PARTS for i in idx):
            continue
        amounts = document_amounts(document) if document.pages else None
        for i in idx:
            field = rows[i][0]
            if field.type == "amount":
                out[i, 0] = _value(roles.get(field.name), amounts, reported[i])
    return out


def _value(role: str | None, amounts: frozenset[int] | None, reported: str | None) -> float:
    if (role not in _SUMS and role not in _PARTS) or amounts is None or reported is None:
        return math.nan
    cents = _cents(reported)
    if not cents:
        return math.nan
    sum_of_two, part_of_sum, _, _ = page_arithmetic(cents, set(amounts))
    return sum_of_two if role in _SUMS else part_of_sum

"""Two names or two addresses of one document are two printed values, not one read twice.

A schema often asks for the same kind of thing for two parties: the vendor's and the customer's
name, the vendor's and the billing address. Chosen field by field, both may fall on the same
printed value (the sender line "Thomas-Sutton · 51 Bentley Garden, Sanderstown" read as the
customer's address too), and one of them is then certainly wrong. :func:`keep_apart` keeps the
more probable of two such choices and moves the other to its best candidate that is not the same
value (the absent candidate included).

Two choices are the same value when they were read from the same line or when every word of the
shorter one is a word of the other. Amounts, dates and ids are left alone: a total and the amount
due may well be one printed number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, TypeVar

from confidence.schema import Schema

__all__ = ["KEPT_APART_TYPES", "keep_apart", "same_value"]

KEPT_APART_TYPES = ("text", "address")
"""Field types whose fields of one schema never share a printed value."""


class _Choice(Protocol):
    value: str | None
    line: int | None
    prob: float


C = TypeVar("C", bound=_Choice)


def _words(value: str) -> set[str]:
    return {w.strip(",.;:·").casefold() for w in value.split() if len(w.strip(",.;:·")) > 1}


def same_value(a: _Choice, b: _Choice) -> bool:
    """Whether two choices are one printed value: the same line, or the shorter one's words all
    in the other (an absent choice is never the same as anything).

    Examples
    --------
    >>> from confidence.calls.ranker import RankedCandidate as R
    >>> same_value(R("51 Bentley Garden, Sanderstown", 4, 0, .6),
    ...            R("Thomas-Sutton · 51 Bentley Garden, Sanderstown", 3, 0, .7))
    True
    >>> same_value(R("Acme Ltd", 1, 0, .9), R("Acme Street 5, Leeds", 7, 0, .8))
    False
    >>> same_value(R(None, None, 0, .5), R(None, None, 0, .5))
    False
    """
    if a.value is None or b.value is None:
        return False
    if a.line is not None and a.line == b.line:
        return True
    wa, wb = _words(a.value), _words(b.value)
    return bool(wa and wb) and (wa <= wb or wb <= wa)


def keep_apart(
    chosen: Mapping[str, C], ranked: Mapping[str, Sequence[C]], schema: Schema
) -> dict[str, C]:
    """``chosen`` with no two fields of one :data:`KEPT_APART_TYPES` type on the same value.

    Parameters
    ----------
    chosen : mapping of field name to candidate
        One choice per field (``value``, ``line``, ``prob``).
    ranked : mapping of field name to candidates
        Every field's candidates, best first (the absent one included).
    schema : Schema

    Returns
    -------
    dict
        Of two fields on the same value, the one whose choice is less probable takes its best
        candidate that is not that value; pairs are settled in schema order.

    Examples
    --------
    >>> from confidence.calls.ranker import RankedCandidate as R
    >>> from confidence.schema import Field, Schema
    >>> s = Schema("inv", (Field("vendor_address", "address"),
    ...                    Field("customer_address", "address")))
    >>> sender = R("Thomas-Sutton · 51 Bentley Garden, Sanderstown", 3, 2.0, 0.8)
    >>> billed = R("66 Randall Walks, Aimeeberg", 9, 1.5, 0.3)
    >>> ranked = {"vendor_address": [sender, R(None, None, 0, .2)],
    ...           "customer_address": [sender, billed, R(None, None, 0, .1)]}
    >>> out = keep_apart({k: v[0] for k, v in ranked.items()}, ranked, s)
    >>> out["customer_address"].value
    '66 Randall Walks, Aimeeberg'
    """
    out = dict(chosen)
    fields = [f for f in schema if f.type in KEPT_APART_TYPES and f.name in out]
    for i, f in enumerate(fields):
        for g in fields[i + 1 :]:
            if f.type != g.type or not same_value(out[f.name], out[g.name]):
                continue
            loser, kept = (
                (f.name, out[g.name])
                if out[f.name].prob < out[g.name].prob
                else (
                    g.name,
                    out[f.name],
                )
            )
            alt = next((c for c in ranked.get(loser, ()) if not same_value(c, kept)), None)
            if alt is not None:
                out[loser] = alt
    return out

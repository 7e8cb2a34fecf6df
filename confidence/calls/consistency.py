"""Joint choice of a document's amount and date fields: the values that add up win.

An invoice states its totals several times over: ``net + tax = gross``, ``gross - prepaid = due``,
``tax ≈ rate × net`` and ``due date ≥ issue date``. A reading that picks each field on its own
may swap net and gross or take a subtotal for the total; checking the picks against each other
catches most of that. Schema fields are tied to the *roles* of these relations by their concept
(:func:`confidence.documents.vocab.field_concept`: name, type and description), so any schema
with such fields gets the check; a role taken by two fields is ambiguous and left out.

* :func:`relation_flags` — for one assignment of values (one reading of a document), whether each
  field is part of a satisfied relation (``True``), only of violated ones (``False``), or of none
  that applies (``None``: a role missing from the schema, a value absent or unreadable).
* :func:`choose_jointly` — from scored options per field, the assignment with the best summed
  score plus a bonus per satisfied relation; searched over the top few options per field.
* :func:`cash_rounded` — the total a receipt was rounded to for cash payment ("Total 127.37",
  "Rounding -0.02", "Total after rounding 127.35"): printed under the total it rounds.

Amounts are read with :func:`~confidence.documents.normalize.parse_amount`, rates with
:func:`~confidence.documents.normalize.parse_percent`, dates with
:func:`~confidence.documents.normalize.parse_date` (day/month order inferred from all the dates
seen together).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from confidence.documents.normalize import (
    infer_date_order,
    parse_amount,
    parse_date,
    parse_percent,
)
from confidence.documents.vocab import field_concept
from confidence.schema import Schema

__all__ = [
    "RELATIONS",
    "JointChoice",
    "Relation",
    "cash_rounded",
    "choose_jointly",
    "field_roles",
    "relation_checker",
    "relation_flags",
]

_ROLE_OF_CONCEPT = {
    "amount_net": "net",
    "amount_tax": "tax",
    "amount_gross": "gross",
    "amount_prepaid": "prepaid",
    "amount_due": "due",
    "tax_rate": "rate",
    "date_issue": "issue_date",
    "date_due": "due_date",
}
_DATE_ROLES = frozenset({"issue_date", "due_date"})
_CENT = Decimal("0.011")  # printed amounts are rounded to the cent


@dataclass(frozen=True)
class JointChoice:
    """The value chosen for one field, its own score, and whether it fits the other fields.

    ``consistent`` is ``True`` when the value takes part in a satisfied relation, ``False`` when
    every relation it takes part in is violated, ``None`` when no relation applies to it.

    Examples
    --------
    >>> c = JointChoice("119.00", -0.2, True)
    >>> JointChoice.from_dict(c.to_dict()) == c
    True
    """

    value: str | None
    score: float
    consistent: bool | None

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "score": self.score, "consistent": self.consistent}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> JointChoice:
        c = d.get("consistent")
        return cls(d.get("value"), float(d["score"]), None if c is None else bool(c))


@dataclass(frozen=True)
class Relation:
    """A check between roles; ``weight`` scales the bonus (an inequality proves less than a sum).

    ``needs_absent`` names a role that must *not* be in the schema for the relation to hold
    (``gross = due`` only when the schema has no prepaid field).
    """

    name: str
    roles: tuple[str, ...]
    check: Callable[..., bool]
    weight: float = 1.0
    needs_absent: str | None = None


def _sum_ok(net: Decimal, tax: Decimal, gross: Decimal) -> bool:
    return abs(net + tax - gross) <= _CENT


def _due_ok(gross: Decimal, prepaid: Decimal, due: Decimal) -> bool:
    # A prepayment may be printed as a deduction ("-200.00") or as a plain amount.
    return abs(gross - abs(prepaid) - due) <= _CENT


def _rate_ok(tax: Decimal, rate: Decimal, net: Decimal) -> bool:
    # Tax summed over lines drifts by cents; a rate printed as "19" may stand for 19.0 %.
    tolerance = Decimal("0.02") + abs(net) * Decimal("0.0005")
    return abs(net * rate / 100 - tax) <= tolerance


RELATIONS: tuple[Relation, ...] = (
    Relation("net + tax = gross", ("net", "tax", "gross"), _sum_ok),
    Relation("gross - prepaid = due", ("gross", "prepaid", "due"), _due_ok),
    Relation("tax = rate x net", ("tax", "rate", "net"), _rate_ok),
    Relation("due = gross", ("gross", "due"), lambda g, d: abs(g - d) <= _CENT, 0.5, "prepaid"),
    Relation("due date >= issue date", ("issue_date", "due_date"), lambda i, d: d >= i, 0.5),
)
"""The relations checked, in order; a relation whose terms are zero earns half its weight."""


def field_roles(schema: Schema) -> dict[str, str]:
    """Field name -> relation role (``net``, ``tax``, ``gross``, ``prepaid``, ``due``, ``rate``,
    ``issue_date``, ``due_date``) for the fields that take one unambiguously.

    Examples
    --------
    >>> from confidence.schema import Field
    >>> s = Schema("i", (Field("subtotal", "amount"), Field("vat", "amount"),
    ...                  Field("total", "amount"), Field("seller", "text")))
    >>> field_roles(s)
    {'subtotal': 'net', 'vat': 'tax', 'total': 'gross'}
    """
    found: dict[str, list[str]] = {}
    for f in schema:
        role = _ROLE_OF_CONCEPT.get(field_concept(f) or "")
        if role in _DATE_ROLES and f.type != "date":
            continue
        if role is not None:
            found.setdefault(role, []).append(f.name)
    return {names[0]: role for role, names in found.items() if len(names) == 1}


def _parser(date_texts: Iterable[Any]) -> Callable[[str, Any], Any]:
    """A role-aware value parser; the day/month order is inferred from ``date_texts``."""
    order = infer_date_order(list(date_texts))

    def parse(role: str, text: Any) -> Any:
        if text is None:
            return None
        if role in _DATE_ROLES:
            return parse_date(text, prefer=order)
        return parse_percent(text) if role == "rate" else parse_amount(text)

    return parse


def _active(schema_roles: set[str]) -> list[Relation]:
    return [
        r
        for r in RELATIONS
        if set(r.roles) <= schema_roles and (r.needs_absent not in schema_roles)
    ]


def _evaluate(
    relations: Sequence[Relation], parsed: Mapping[str, Any]
) -> list[tuple[Relation, bool | None]]:
    """Each relation's outcome on parsed role values: satisfied, violated or None (n/a)."""
    out: list[tuple[Relation, bool | None]] = []
    for r in relations:
        vals = [parsed.get(role) for role in r.roles]
        out.append((r, None if any(v is None for v in vals) else bool(r.check(*vals))))
    return out


def _flags(
    roles: Mapping[str, str], outcomes: Sequence[tuple[Relation, bool | None]]
) -> dict[str, bool | None]:
    flags: dict[str, bool | None] = {}
    for name, role in roles.items():
        seen = [ok for r, ok in outcomes if ok is not None and role in r.roles]
        flags[name] = any(seen) if seen else None
    return flags


def relation_flags(schema: Schema, values: Mapping[str, Any]) -> dict[str, bool | None]:
    """Whether each field's value takes part in a satisfied relation with the other values.

    Fields without a role, or whose relations lack a term, get ``None``.

    Examples
    --------
    >>> from confidence.schema import Field
    >>> s = Schema("i", (Field("subtotal", "amount"), Field("tax", "amount"),
    ...                  Field("total", "amount"), Field("date", "date")))
    >>> relation_flags(s, {"subtotal": "100.00", "tax": "19.00", "total": "119.00"})
    {'subtotal': True, 'tax': True, 'total': True, 'date': None}
    >>> relation_flags(s, {"subtotal": "119.00", "tax": "19.00", "total": "100.00"})["total"]
    False
    """
    return relation_checker(schema)(values)


def relation_checker(schema: Schema) -> Callable[[Mapping[str, Any]], dict[str, bool | None]]:
    """:func:`relation_flags` of ``schema`` as a function of the values alone: the roles and
    relations are worked out once, for checking many documents of the same schema.

    Examples
    --------
    >>> from confidence.schema import Field
    >>> check = relation_checker(Schema("i", (Field("date", "date"), Field("due", "date"))))
    >>> check({"date": "2024-01-02", "due": "2024-02-01"}), check({"date": "2024-01-02"})
    ({'date': True, 'due': True}, {'date': None, 'due': None})
    """
    roles = field_roles(schema)
    relations = _active(set(roles.values()))
    date_fields = [n for n, r in roles.items() if r in _DATE_ROLES]
    names = [f.name for f in schema]

    def check(values: Mapping[str, Any]) -> dict[str, bool | None]:
        parse = _parser(values.get(n) for n in date_fields)
        parsed = {role: parse(role, values.get(name)) for name, role in roles.items()}
        flags = _flags(roles, _evaluate(relations, parsed))
        return {n: flags.get(n) for n in names}

    return check


def _clean(score: float) -> float:
    s = float(score)
    return -1e300 if math.isnan(s) else max(-1e300, min(1e300, s))


def _ranked(options: Sequence[tuple[str | None, float]]) -> list[tuple[str | None, float]]:
    """Options best first, one per value (its best score); ties ordered by value."""
    best: dict[str | None, float] = {}
    for value, score in options:
        s = _clean(score)
        if value not in best or s > best[value]:
            best[value] = s
    return sorted(best.items(), key=lambda vs: (-vs[1], vs[0] is None, vs[0] or ""))


def _bonus(outcomes: Sequence[tuple[Relation, bool | None]], parsed: Mapping[str, Any]) -> float:
    total = 0.0
    for r, ok in outcomes:
        if ok:
            zero = any(parsed[role] == 0 for role in r.roles if role not in _DATE_ROLES)
            total += r.weight * (0.5 if zero else 1.0)
    return total


def _components(roles: Mapping[str, str], relations: Sequence[Relation]) -> list[list[str]]:
    """Fields linked by relations, in groups that can be searched apart (amounts, dates)."""
    field_of = {r: n for n, r in roles.items()}
    groups: list[set[str]] = []
    for rel in relations:
        linked = {field_of[r] for r in rel.roles}
        for g in [g for g in groups if g & linked]:
            linked |= g
            groups.remove(g)
        groups.append(linked)
    return [[n for n in roles if n in g] for g in groups]


def _search(
    group: Sequence[str],
    roles: Mapping[str, str],
    ranked: Mapping[str, list[tuple[str | None, float]]],
    relations: Sequence[Relation],
    parse: Callable[[str, Any], Any],
    k: int,
    bonus: float,
) -> dict[str, int]:
    """Exhaustive search over the top ``k`` options of each field of one group."""
    parsed_opts = [[parse(roles[n], v) for v, _ in ranked[n][:k]] for n in group]
    scores = [[s for _, s in ranked[n][:k]] for n in group]
    best: tuple[float, tuple[int, ...]] | None = None
    for picks in itertools.product(*(range(len(p)) for p in parsed_opts)):
        parsed = {
            roles[n]: parsed_opts[i][j] for i, (n, j) in enumerate(zip(group, picks, strict=True))
        }
        total = sum(scores[i][j] for i, j in enumerate(picks))
        total += bonus * _bonus(_evaluate(relations, parsed), parsed)
        if best is None or total > best[0]:
            best = (total, picks)
    return dict(zip(group, best[1], strict=True)) if best else {}


def choose_jointly(
    schema: Schema,
    options: Mapping[str, Sequence[tuple[str | None, float]]],
    *,
    bonus: float = 3.0,
    top_k: int = 4,
    max_assignments: int = 20_000,
) -> dict[str, JointChoice]:
    """Choose one option per field so that amounts add up and dates are in order.

    Each field's options are ``(value as printed or None for absent, score)`` with higher
    scores better (log-probability like). Fields with a relation role (:func:`field_roles`) are
    chosen together: among the top ``top_k`` options of each (fewer when the product exceeds
    ``max_assignments``), the assignment maximising the summed score plus ``bonus`` × weight
    for each satisfied relation wins, so a consistent assignment beats the independent picks
    when its summed score is less than the bonus worse. Other fields take their best option.

    Parameters
    ----------
    schema : Schema
        The fields; roles come from their concepts.
    options : mapping of str to sequence of (str or None, float)
        Candidate values per field; a field with no options gets ``JointChoice(None, -inf, None)``.
    bonus : float
        Score added per satisfied relation (half for ``due date >= issue date``, ``due = gross``
        and relations with a zero term).
    top_k, max_assignments : int
        Bounds of the search.

    Returns
    -------
    dict of str to JointChoice
        One choice for every field in ``options``; the order of options does not matter.

    Examples
    --------
    >>> from confidence.schema import Field
    >>> s = Schema("i", (Field("net", "amount"), Field("vat", "amount"),
    ...                  Field("total", "amount")))
    >>> opts = {"net": [("119.00", -0.1), ("100.00", -0.9)], "vat": [("19.00", -0.2)],
    ...         "total": [("100.00", -0.3), ("119.00", -0.7)]}
    >>> {k: c.value for k, c in choose_jointly(s, opts).items()}
    {'net': '100.00', 'vat': '19.00', 'total': '119.00'}
    >>> choose_jointly(s, opts)["vat"].consistent
    True
    """
    if top_k < 1 or max_assignments < 1:
        raise ValueError(f"top_k and max_assignments must be >= 1, got {top_k}, {max_assignments}")
    ranked = {name: _ranked(opts) for name, opts in options.items()}
    roles = {n: r for n, r in field_roles(schema).items() if ranked.get(n)}
    relations = _active(set(roles.values()))
    date_texts = (t for n, r in roles.items() if r in _DATE_ROLES for t, _ in ranked[n][:top_k])
    parse = _parser(date_texts)
    picked: dict[str, int] = {}
    for group in _components(roles, relations):
        k = top_k
        while k > 1 and k ** len(group) > max_assignments:
            k -= 1
        picked.update(_search(group, roles, ranked, relations, parse, k, bonus))
    parsed = {roles[n]: parse(roles[n], ranked[n][i][0]) for n, i in picked.items()}
    flags = _flags({n: roles[n] for n in picked}, _evaluate(relations, parsed))
    out: dict[str, JointChoice] = {}
    for name, opts in ranked.items():
        if not opts:
            out[name] = JointChoice(None, float("-inf"), None)
            continue
        value, _ = opts[picked.get(name, 0)]
        score = max((float(s) for v, s in options[name] if v == value), key=_clean)
        out[name] = JointChoice(value, score, flags.get(name))
    return out


def cash_rounded(
    chosen: tuple[str | None, int | None],
    candidates: Sequence[tuple[str | None, int | None]],
    *,
    step: str = "0.05",
    top_k: int = 6,
) -> tuple[str, int] | None:
    """The amount a chosen total was rounded to for cash payment, when the page prints it.

    Where coins below ``step`` are not in use (0.05 in many currencies), a receipt prints the
    total, a rounding line and the amount paid: ``Total 127.37`` / ``Rounding -0.02`` /
    ``Total after rounding 127.35``. The amount paid is a multiple of ``step`` less than one
    ``step`` away from the total, printed on a later line. Returns that candidate (the first in
    rank order among the top ``top_k`` of ``candidates``, each ``(value, line)``), or ``None``
    when the chosen total is already a multiple of ``step`` or no such candidate follows it.

    Examples
    --------
    >>> cands = [("127.37", 10), ("150.00", 14), ("127.35", 12), ("127.37", 16)]
    >>> cash_rounded(("127.37", 10), cands)
    ('127.35', 12)
    >>> cash_rounded(("127.35", 12), cands) is None  # already rounded
    True
    >>> cash_rounded(("127.37", 13), cands) is None  # nothing rounded printed under it
    True
    """
    value, line = chosen
    unit = Decimal(step)
    x = _amount(value)
    if x is None or line is None or x % unit == 0:
        return None
    for v, li in list(candidates)[:top_k]:
        y = _amount(v)
        if (
            y is not None
            and li is not None
            and li > line
            and y % unit == 0
            and 0 < abs(x - y) < unit
        ):
            return v, li
    return None


def _amount(text: str | None) -> Decimal | None:
    if not text:
        return None
    try:
        return parse_amount(text)
    except (ValueError, ArithmeticError):
        return None

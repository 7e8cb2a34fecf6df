"""Joint choice of a party's name and address: the name heads the address block it names.

An invoice prints each party (issuer, customer) as a block: the name, then the address lines
under it. A reading that picks the name and the address on their own may take the customer's
name with the issuer's address, or an address span that starts on the name line (the name read
twice, once as the address's first line). For every party whose name *and* address are schema
fields (by concept, :func:`confidence.documents.vocab.field_concept`: ``customer_name`` with
``customer_address``, ``vendor_name`` with ``vendor_address``), :func:`choose_parties` picks the
pair with the best summed ranker log-probability plus ``bonus`` when the address starts under
the name in the name's own text block, minus ``overlap_penalty`` when the
address span contains the name's line. Either field may stay absent (no bonus); the name is
absent at a cost (``absent_penalty``) when a name candidate heads the chosen address's block.
A sender line (``ACME Ltd · 1 Main St, Springfield``) is the named party's: its address is
reported without the name, and another party's address is not taken from it. One printed
address is one party's (``one_owner``): two parties read with the same address leave it to the
one whose name heads it, and the other reads its own, or none.

The module only reads layout (line indices and text blocks); it knows no vocabulary.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Protocol

from confidence.documents.lines import Line
from confidence.documents.text import fold_text
from confidence.documents.vocab import field_concept
from confidence.schema import Schema

__all__ = ["PARTIES", "address_lines", "choose_parties", "pair_relation", "party_fields"]

PARTIES = ("customer", "vendor")
OWNER_REACH = 3
"""Lines above an address within which a party's chosen name claims it (besides its block)."""


class _Ranked(Protocol):
    value: str | None
    line: int | None
    prob: float


def party_fields(schema: Schema) -> dict[str, tuple[str, str]]:
    """Party -> (name field, address field) for the parties the schema has both of, once each.

    Examples
    --------
    >>> from confidence.schema import Field
    >>> s = Schema("s", (Field("company", "text", "shop name"), Field("address", "address"),
    ...                  Field("total", "amount")))
    >>> party_fields(s)
    {'vendor': ('company', 'address')}
    """
    by_concept: dict[str, list[str]] = {}
    for f in schema:
        c = field_concept(f)
        if c is not None:
            by_concept.setdefault(c, []).append(f.name)
    out: dict[str, tuple[str, str]] = {}
    for p in PARTIES:
        names, addrs = by_concept.get(f"{p}_name", []), by_concept.get(f"{p}_address", [])
        if len(names) == 1 and len(addrs) == 1:
            out[p] = (names[0], addrs[0])
    return out


def address_lines(
    value: str, line: int, by_index: Mapping[int, Line], block: Sequence[int] = ()
) -> set[int]:
    """Indices of the lines an address value was joined from: its first line, then the lines
    after it (in its text block, else in reading order) whose text the value contains.

    Examples
    --------
    >>> ls = {i: Line(i, t, (0, i / 10, .5, i / 10 + .05), 1, ())
    ...       for i, t in enumerate(["ACME Ltd", "1 Main St", "Springfield 12345", "TOTAL 9.00"])}
    >>> sorted(address_lines("1 Main St, Springfield 12345", 1, ls))
    [1, 2]
    """
    folded = fold_text(value)
    out = {line}
    order = [i for i in block if i > line] if block else []
    order += [i for i in range(line + 1, line + 8) if i not in order]
    for i in order:
        ln = by_index.get(i)
        text = fold_text(ln.text).strip() if ln is not None else ""
        if not text or text not in folded:
            if block and i in block:
                continue  # a block line the value skipped; reading order may still continue
            break
        out.add(i)
    return out


def pair_relation(
    name_line: int,
    address_value: str,
    address_line: int,
    by_index: Mapping[int, Line],
    blocks: Mapping[int, tuple[int, list[int]]],
    reach: int | None = None,
) -> int:
    """+1 when the address starts under the name in the name's text block (at most ``reach``
    lines under it; ``None``: anywhere below it in the block), -1 when the address span holds
    the name's line, else 0.

    Lines between the name and the address (a registration or tax number printed under a
    shop's name) do not part them: the block does.

    Examples
    --------
    >>> ls = {i: Line(i, t, (0, i / 10, .5, i / 10 + .05), 1, ())
    ...       for i, t in enumerate(["ACME Ltd", "1 Main St", "Springfield 12345"])}
    >>> blocks = {i: (i, [0, 1, 2]) for i in range(3)}
    >>> pair_relation(0, "1 Main St, Springfield 12345", 1, ls, blocks)
    1
    >>> pair_relation(0, "ACME Ltd, 1 Main St", 0, ls, blocks)
    -1
    """
    pos_n, chain = blocks.get(name_line, (0, [name_line]))
    span = address_lines(address_value, address_line, by_index, chain)
    if name_line in span:
        return -1
    below = chain.index(address_line) - pos_n if address_line in chain else 0
    if below >= 1 and (reach is None or below <= reach):
        return 1
    return 0


def choose_parties(
    schema: Schema,
    ranked: Mapping[str, Sequence[_Ranked]],
    by_index: Mapping[int, Line],
    blocks: Mapping[int, tuple[int, list[int]]],
    *,
    bonus: float = 1.0,
    overlap_penalty: float = 1.0,
    top: int = 4,
    strip_name: bool = True,
    reach: int | None = None,
    absent_penalty: float = 0.0,
    one_owner: bool = True,
) -> dict[str, _Ranked]:
    """The jointly best (name, address) candidates of every party the schema names both of.

    Parameters
    ----------
    schema : Schema
    ranked : mapping
        Field name -> its candidates best first (``value``, ``line``, ``prob``; ``value=None``
        is the absent candidate), as :meth:`CandidateRanker.rank` returns them.
    by_index, blocks : mapping
        The page's lines by index and its text blocks (line -> (position, block's lines)).
    bonus, overlap_penalty : float, default 1.0
        Added to / taken from the summed log-probabilities of a pair whose address starts under
        the name in its block / whose address contains the name's line.
    absent_penalty : float, default 0.0
        The cost of an absent name when the chosen address starts under one of the name
        candidates in that candidate's block: an address block headed by a name prints the
        party's name, whatever label the page gives it (or none). Once both parties' addresses
        are chosen, the best heading name that is not another party's chosen name is taken when
        its pair scores within ``absent_penalty`` of the absent one; the addresses stay.
    one_owner : bool, default True
        One printed address is one party's: when two parties were read with addresses joined
        from a line they share, the party whose chosen name heads it (in the name's block, or at
        most :data:`OWNER_REACH` lines above it) keeps it, the nearer one when both do; the
        other takes its best candidate of the top ``top`` that shares no line with it (absent
        included), without its name on a sender line. An invoice that prints no customer
        address is then not read with the issuer's. Neither name above it: both keep it.
    top : int, default 4
        Candidates of each field considered.
    strip_name : bool, default True
        Sender lines (``ACME Ltd · 1 Main St, ...`` over an address window, a letterhead or
        footer line): when the chosen address's first line begins with the chosen name and goes
        on, report the candidate without the name if the page offers it; and when it begins
        with *another* party's chosen name, take the party's best other candidate of the top
        ``top`` (absent included).

    Returns
    -------
    dict
        Field name -> chosen candidate, for the fields of the parties found (others absent).

    Examples
    --------
    >>> from types import SimpleNamespace as C
    >>> from confidence.schema import Field
    >>> s = Schema("s", (Field("customer_name", "text"), Field("customer_address", "address")))
    >>> ls = {i: Line(i, t, (0, i / 10, .5, i / 10 + .05), 1, ()) for i, t in
    ...       enumerate(["Seller GmbH", "9 High Rd, Town 999", "Buyer Ltd", "1 Main St, Town 123"])}
    >>> blocks = {0: (0, [0, 1]), 1: (1, [0, 1]), 2: (0, [2, 3]), 3: (1, [2, 3])}
    >>> ranked = {"customer_name": [C(value="Buyer Ltd", line=2, prob=0.6),
    ...                             C(value=None, line=None, prob=0.4)],
    ...           "customer_address": [C(value="9 High Rd, Town 999", line=1, prob=0.5),
    ...                                C(value="1 Main St, Town 123", line=3, prob=0.4)]}
    >>> {k: c.value for k, c in choose_parties(s, ranked, ls, blocks).items()}
    {'customer_name': 'Buyer Ltd', 'customer_address': '1 Main St, Town 123'}
    """
    out: dict[str, _Ranked] = {}
    for name_f, addr_f in party_fields(schema).values():
        names, addrs = list(ranked[name_f])[:top], list(ranked[addr_f])[:top]
        if not names or not addrs:
            continue
        best, best_score = (names[0], addrs[0]), -math.inf
        for n, a in itertools.product(names, addrs):
            score = math.log(max(n.prob, 1e-12)) + math.log(max(a.prob, 1e-12))
            if None not in (n.value, a.value, n.line, a.line):
                rel = pair_relation(n.line, a.value, a.line, by_index, blocks, reach)
                score += bonus if rel > 0 else -overlap_penalty if rel < 0 else 0.0
            if score > best_score + 1e-12:
                best, best_score = (n, a), score
        n, a = best
        if strip_name:
            a = _without_name(n, a, ranked[addr_f], by_index)
        out[name_f], out[addr_f] = n, a
    pairs = party_fields(schema)
    if strip_name and len(pairs) > 1:
        # an address line that begins with another party's name is that party's sender line
        for name_f, addr_f in pairs.values():
            own = out[name_f]
            # a name both parties were read with (one of them wrongly) tells neither apart
            others = [
                out[o_name]
                for o_name, _ in pairs.values()
                if o_name != name_f and not _same_name(out[o_name], own)
            ]
            a = _not_anothers(out[addr_f], ranked[addr_f][:top], others, by_index, blocks)
            if a is not out[addr_f]:
                a = _without_name(out[name_f], a, ranked[addr_f], by_index)
            out[addr_f] = a
    if one_owner and len(pairs) > 1:
        for (n1, a1), (n2, a2) in itertools.combinations(pairs.values(), 2):
            x, y = out.get(a1), out.get(a2)
            if x is None or y is None or None in (x.value, y.value, x.line, y.line):
                continue
            span1 = address_lines(x.value, x.line, by_index, blocks.get(x.line, (0, []))[1])
            if not _shares_line(y, span1, by_index, blocks):
                continue
            d1 = _lines_above(out.get(n1), x, by_index, blocks, reach)
            d2 = _lines_above(out.get(n2), y, by_index, blocks, reach)
            if d1 == d2:
                continue
            name_f, addr_f, kept = (n2, a2, x) if d1 < d2 else (n1, a1, y)
            # the other party's address is printed elsewhere, or not at all
            span = address_lines(kept.value, kept.line, by_index, blocks.get(kept.line, (0, []))[1])
            alt = next(
                (
                    c
                    for c in list(ranked[addr_f])[:top]
                    if not _shares_line(c, span, by_index, blocks)
                ),
                out[addr_f],
            )
            if alt is not out[addr_f] and strip_name:
                alt = _without_name(out[name_f], alt, ranked[addr_f], by_index)
            out[addr_f] = alt
    if absent_penalty > 0:
        for name_f, addr_f in pairs.values():
            if name_f in out:
                out[name_f] = _heading_name(
                    out[name_f], out[addr_f], list(ranked[name_f])[:top],
                    [out[o] for o, _ in pairs.values() if o != name_f and o in out],
                    by_index, blocks, bonus, absent_penalty, reach,
                )  # fmt: skip
    return out


def _lines_above(
    name: _Ranked | None,
    address: _Ranked,
    by_index: Mapping[int, Line],
    blocks: Mapping[int, tuple[int, list[int]]],
    reach: int | None,
) -> float:
    """How far above ``address`` the chosen ``name`` is printed: 0 when the address starts
    under it in its block, else the lines between them up to :data:`OWNER_REACH`; inf when the
    name is absent, below the address or further up."""
    if name is None or name.value is None or name.line is None or address.line is None:
        return math.inf
    if pair_relation(name.line, address.value, address.line, by_index, blocks, reach) > 0:
        return 0.0
    d = address.line - name.line
    return float(d) if 0 < d <= OWNER_REACH else math.inf


def _shares_line(
    c: _Ranked,
    span: set[int],
    by_index: Mapping[int, Line],
    blocks: Mapping[int, tuple[int, list[int]]],
) -> bool:
    """Whether address candidate ``c`` was joined from any line of ``span``."""
    if c.value is None or c.line is None:
        return False
    return bool(span & address_lines(c.value, c.line, by_index, blocks.get(c.line, (0, []))[1]))


def _heading_name(
    name: _Ranked,
    address: _Ranked,
    names: Sequence[_Ranked],
    other_names: Sequence[_Ranked],
    by_index: Mapping[int, Line],
    blocks: Mapping[int, tuple[int, list[int]]],
    bonus: float,
    penalty: float,
    reach: int | None,
) -> _Ranked:
    """``name``, or, when it is absent and the chosen ``address`` starts under a name candidate
    in that candidate's block (the block prints the party's name), the best such candidate whose
    log-probability plus ``bonus`` beats the absent one's minus ``penalty``. A candidate that is
    another party's chosen name is not this party's."""
    if name.value is not None or address.value is None or address.line is None:
        return name
    heads = [
        c
        for c in names
        if c.value is not None
        and c.line is not None
        and not any(_same_name(c, o) for o in other_names)
        and pair_relation(c.line, address.value, address.line, by_index, blocks, reach) > 0
    ]
    if not heads:
        return name
    best = max(heads, key=lambda c: c.prob)
    absent = math.log(max(name.prob, 1e-12)) - penalty
    return best if math.log(max(best.prob, 1e-12)) + bonus > absent + 1e-12 else name


def _same_name(a: _Ranked, b: _Ranked) -> bool:
    """Whether two chosen names are one: the same line, or one's text inside the other's."""
    if not a.value or not b.value:
        return False
    if a.line is not None and a.line == b.line:
        return True
    fa, fb = _fold(a.value), _fold(b.value)
    return bool(fa and fb) and (fa in fb or fb in fa)


def _starts_with_name(address: _Ranked, name: _Ranked, by_index: Mapping[int, Line]) -> bool:
    """Whether the address's first line begins with ``name`` and goes on after it."""
    if not name.value or not address.value or address.line is None:
        return False
    line = by_index.get(address.line)
    head = _fold(name.value)
    if line is None or not head:
        return False
    text = _fold(line.text)
    return (
        text.startswith(head)
        and len(text) > len(head) + 1
        and _fold(address.value).startswith(head)
    )


def _not_anothers(
    address: _Ranked,
    candidates: Sequence[_Ranked],
    other_names: Sequence[_Ranked],
    by_index: Mapping[int, Line],
    blocks: Mapping[int, tuple[int, list[int]]],
) -> _Ranked:
    """``address``, or the best candidate that is not another party's: one that begins with
    another party's name on its line, or starts under it in its block."""

    def anothers(c: _Ranked) -> bool:
        if c.value is None or c.line is None:
            return False
        for o in other_names:
            if _starts_with_name(c, o, by_index):
                return True
            if o.value and o.line is not None:
                if pair_relation(o.line, c.value, c.line, by_index, blocks) > 0:
                    return True
        return False

    if not anothers(address):
        return address
    return next((c for c in candidates if not anothers(c)), address)


def _fold(text: str) -> str:
    return " ".join(fold_text(text).split())


def _without_name(
    name: _Ranked, address: _Ranked, candidates: Sequence[_Ranked], by_index: Mapping[int, Line]
) -> _Ranked:
    """The address candidate that is ``address`` without the chosen name printed before it on
    the address's first line (``ACME Ltd · 1 Main St, Springfield``: a sender line over an
    address window, a letterhead or footer), if the page offers it; else ``address``.

    The name must share that line with the address's own text: a line that is all name may be
    the address's first line read as a name, and is left alone."""
    if not name.value or not address.value or address.line is None:
        return address
    line = by_index.get(address.line)
    head, full = _fold(name.value), _fold(address.value)
    if line is None or not head or not _fold(line.text).startswith(head):
        return address
    if len(_fold(line.text)) <= len(head) + 1 or not full.startswith(head):
        return address
    rest = full[len(head) :].strip(" .,;:-|/\u00b7\u2022")
    for c in candidates:
        if c.value is not None and c is not address and _fold(c.value).strip(" .,;:-") == rest:
            return c
    return address

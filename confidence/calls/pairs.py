"""Layout-based label/value pair detection: what the document itself says is a labelled value.

A *label* is a short, mostly-letters phrase; its *value* sits after a colon on the same line, to
its right on the same visual row, or on the line below. Pairs are found without looking at the
schema, so the Mapper reports the document's own vocabulary; :mod:`confidence.calls.mapper` then
maps each label to a schema field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

from confidence.documents.lines import Line, rows
from confidence.documents.patterns import AMOUNT_RE, DATE_RE

_LABEL_RE = re.compile(r"^[^\W\d_][\w .#'/()&%-]{0,38}?$")
_VALUEISH = re.compile(rf"{AMOUNT_RE.pattern}|{DATE_RE.pattern}|\b[A-Z]*\d[\w/\-.]{{2,}}", re.I)


@dataclass(frozen=True)
class Pair:
    """A label printed in the document and the texts that may hold its value, best first.

    Parameters
    ----------
    label : str
        The label as printed, without its trailing colon.
    options : tuple of str
        Value texts: after the colon / rest of the line, right neighbour on the row, line below.
    line : int
        Line index of the label.
    value_lines : tuple of int
        Line index of each option.
    """

    label: str
    options: tuple[str, ...]
    line: int
    value_lines: tuple[int, ...]


def _is_label(text: str) -> bool:
    t = text.strip(" :.-")
    if not t or len(t.split()) > 5 or not _LABEL_RE.match(t):
        return False
    return sum(c.isalpha() for c in t) >= 0.6 * len(t.replace(" ", ""))


def find_pairs(lines: list[Line]) -> list[Pair]:
    """Detect label/value pairs in reading-order lines.

    Examples
    --------
    >>> ls = [Line(0, "Invoice No: INV-7", (0, .1, .5, .12), 1, ()),
    ...       Line(1, "TOTAL", (0, .5, .2, .52), 1, ()), Line(2, "9.00", (.7, .5, .8, .52), 1, ()),
    ...       Line(3, "Date 25/12/2018 8:13 PM", (0, .6, .6, .62), 1, ())]
    >>> [(p.label, p.options[0]) for p in find_pairs(ls)]
    [('Invoice No', 'INV-7'), ('TOTAL', '9.00'), ('Date', '25/12/2018 8:13 PM')]
    """
    right_of: dict[int, Line] = {}
    for row in rows(lines):
        for a, b in pairwise(row):
            right_of[a.index] = b
    out: list[Pair] = []
    for i, ln in enumerate(lines):
        below = lines[i + 1] if i + 1 < len(lines) and lines[i + 1].page == ln.page else None
        label = rest = None
        m = re.match(r"^(.{1,40}?)\s*[:;]\s*(.*)$", ln.text)
        if m and _is_label(m.group(1)):
            label, rest = m.group(1).strip(), m.group(2).strip()
        elif _is_label(ln.text):
            label, rest = ln.text.strip(" :"), ""
        else:
            v = _VALUEISH.search(ln.text)
            if v and v.start() > 0 and _is_label(ln.text[: v.start()]):
                label, rest = ln.text[: v.start()].strip(" :"), ln.text[v.start() :].strip()
        if not label:
            continue
        opts: list[tuple[str, int]] = []
        if rest:
            opts.append((rest, ln.index))
        if ln.index in right_of:
            r = right_of[ln.index]
            opts.append((r.text.strip(" :"), r.index))
        if below is not None and not rest:
            opts.append((below.text, below.index))
        seen: dict[str, int] = {}
        for t, li in opts:
            if t and t not in seen:
                seen[t] = li
        if seen:
            out.append(Pair(label, tuple(seen), ln.index, tuple(seen.values())))
    return out

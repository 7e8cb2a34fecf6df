"""Vocabulary-driven label finding: known invoice labels anywhere on a line, values by layout.

Complements :func:`confidence.calls.pairs.find_pairs` (which needs a label at the start of a
line): a line may carry several ``Label: value`` runs (``Tel.: ... Mail: a@b.fr VAT: FR12``),
a label may sit in a boxed header cell with its value on the line below (label-above layouts),
and one OCR line may merge two columns (``Knight-Davies  Bill No. 2022165028``). A label is a
phrase of :mod:`confidence.documents.vocab` that starts its line, ends in ``:``/``#``, or stands
after a column gap; its value is the text up to the next label, else the right neighbour on its
row, else the words below it in its own column.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from confidence.documents.lines import Line, rows
from confidence.documents.text import fold_text
from confidence.documents.vocab import find_labels
from confidence.types import Word

_GAP = 0.03  # page widths: a wider gap before a label starts a new column
# ... as does a gap of at least _MIN_GAP that is _GAP_RATIO times the line's median word gap
# ("Payment reference RF50 3572 0130   Payment terms Due on receipt": 0.027 after 0.004-0.008)
_MIN_GAP, _GAP_RATIO = 0.015, 3.0
_AMOUNT_BELOW = 3.0
"""Label heights under an amount's header cell within which its value may start: a summary
table's cells are padded (``Net à payer €`` over ``81 482,00``), a block's lines are not."""


@dataclass(frozen=True)
class LabelHit:
    """A known label printed on the page and the texts that may hold its value, best first.

    Parameters
    ----------
    label : str
        The label as printed.
    concepts : tuple of str
        What the label may name (:data:`confidence.documents.vocab.LABELS` keys).
    line : int
        Line index of the label.
    options : tuple of (str, int)
        ``(value text, line index)``: inline text, right neighbour, then lines below in the
        label's column (a block: name, then address lines).
    """

    label: str
    concepts: tuple[str, ...]
    line: int
    options: tuple[tuple[str, int], ...]


def _words(ln: Line) -> list[Word]:
    if ln.words:
        return [w for w in ln.words if w.text.strip()]
    return [Word(t, ln.bbox) for t in ln.text.split()]  # hand-made lines: one box per line


def _spans(ws: list[Word]) -> list[tuple[int, int, tuple[str, ...]]]:
    """Label phrases as word index ranges ``[i, j)``."""
    starts, text = [], ""
    for w in ws:
        n = fold_text(w.text)
        starts.append(len(text) + (1 if text else 0) if n else None)
        text = f"{text} {n}".strip() if n else text
    out = []
    for s, e, cs in find_labels(text):
        i = next((k for k, st in enumerate(starts) if st is not None and st >= s), None)
        if i is None or starts[i] != s:
            continue
        j = i
        while j < len(ws) and (starts[j] is None or starts[j] < e):
            j += 1
        out.append((i, j, cs))
    return out


def _accepted(ws: list[Word], i: int, j: int, has_boxes: bool) -> bool:
    """Whether the label phrase ``ws[i:j]`` is a label: it starts its line, ends in ``:`` or
    ``#``, or stands after a column gap (wide on the page, or wide for its line).

    Examples
    --------
    >>> ws = [Word(t, (x, 0, x + 0.03, 0.01)) for t, x in
    ...       (("RF50", 0.10), ("3572", 0.135), ("Payment", 0.19), ("terms", 0.225))]
    >>> _accepted(ws, 2, 4, True)  # 0.025 after gaps of 0.005: a column gap on this line
    True
    >>> _accepted(ws[:2] + [Word("Payment", (0.17, 0, 0.2, 0.01))], 2, 3, True)
    False
    """
    if i == 0 or ws[j - 1].text.rstrip().endswith((":", "#")):
        return True
    if j < len(ws) and ws[j].text.strip() in (":", "#"):
        return True
    if not has_boxes:
        return False
    gap = ws[i].bbox[0] - ws[i - 1].bbox[2]
    if gap > _GAP:
        return True
    gaps = sorted(b.bbox[0] - a.bbox[2] for a, b in pairwise(ws))
    return gap >= _MIN_GAP and gap >= _GAP_RATIO * max(gaps[len(gaps) // 2], 0.0)


def _column_below(
    ln: Line, x0: float, x1: float, lines: list[Line], n: int, first: float = 1.8
) -> list[tuple[str, int]]:
    """Up to ``n`` lines under ``ln`` whose words fall in ``[x0, x1)``, stopping at a gap.

    The first line found may start up to ``first`` label heights under the label, the next
    ones up to 1.8 under the one before.
    """
    h = max(ln.bbox[3] - ln.bbox[1], 0.008)
    below = sorted(
        (o for o in lines if o.page == ln.page and o.bbox[1] >= ln.bbox[3] - 0.3 * h),
        key=lambda o: o.bbox[1],
    )
    out: list[tuple[str, int]] = []
    bottom = ln.bbox[3]
    for o in below:
        ws = [w for w in _words(o) if x0 - 0.02 <= (w.bbox[0] + w.bbox[2]) / 2 < x1]
        if not ws or (not o.words and o.bbox[0] > x1):
            continue
        # a header cell's value sits lower (cell padding) than a block's next line
        if min(w.bbox[1] for w in ws) - bottom > (first if not out else 1.8) * h:
            break
        sp = _spans(ws)
        if sp and sp[0][0] == 0 and out:
            break  # the next labelled cell starts: the block ended
        if o.index != ln.index:
            out.append((" ".join(w.text for w in ws), o.index))
            bottom = max(w.bbox[3] for w in ws)
        if len(out) >= n:
            break
    return out


def find_label_hits(lines: list[Line], *, block_lines: int = 5) -> list[LabelHit]:
    """Known labels on the page with their value options.

    Examples
    --------
    >>> ls = [Line(0, "Rechnungsnummer Datum", (0, .1, .5, .12), 1, ()),
    ...       Line(1, "Tel.: 0123 Mail: a@b.de", (0, .3, .5, .32), 1, ())]
    >>> [(h.label, h.concepts[0], h.options[:1]) for h in find_label_hits(ls)][-1:]
    [('Mail', 'email', (('a@b.de', 1),))]
    """
    right_of: dict[int, Line] = {}
    for row in rows(lines):
        for a, b in pairwise(row):
            right_of[a.index] = b
    out: list[LabelHit] = []
    for ln in lines:
        ws = _words(ln)
        has_boxes = bool(ln.words)
        spans = [s for s in _spans(ws) if _accepted(ws, s[0], s[1], has_boxes)]
        for k, (i, j, cs) in enumerate(spans):
            end = spans[k + 1][0] if k + 1 < len(spans) else len(ws)
            inline = " ".join(w.text for w in ws[j:end]).strip(" :#-")
            x0 = ws[i].bbox[0] if has_boxes else ln.bbox[0]
            x1 = ws[end].bbox[0] if has_boxes and end < len(ws) else 1.0
            opts: list[tuple[str, int]] = []
            if inline:
                opts.append((inline, ln.index))
            elif k + 1 < len(spans) and spans[k + 1][0] == j:
                # "Terms | Net 30", "Terms | Due on receipt": a value whose first word is a
                # label word follows the label directly; offer it whole (up to the next label).
                stop = spans[k + 2][0] if k + 2 < len(spans) else len(ws)
                run = " ".join(w.text for w in ws[j:stop]).strip(" :#-")
                if run and run != " ".join(w.text for w in ws[j : spans[k + 1][1]]).strip(" :#"):
                    opts.append((run, ln.index))
            r = right_of.get(ln.index)
            if r is not None and (not inline or k + 1 == len(spans)):
                if not inline:
                    x1 = min(x1, r.bbox[0])
                # A neighbouring header cell is no value; "MwSt 19%  ...  19,00" keeps both.
                if not _spans(_words(r)):
                    opts.append((r.text.strip(" :#"), r.index))
            if not inline or cs[0] in ("customer_block", "vendor_block"):
                first = _AMOUNT_BELOW if any(c.startswith("amount_") for c in cs) else 1.8
                opts.extend(_column_below(ln, x0, x1, lines, block_lines, first))
            label = " ".join(w.text for w in ws[i:j]).rstrip(" :#")
            out.append(LabelHit(label, cs, ln.index, tuple(o for o in opts if o[0])))
    return out

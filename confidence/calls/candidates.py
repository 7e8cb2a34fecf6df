"""Grounded candidate values for each schema field, copied verbatim from the document.

A small local model cannot be trusted to spell a value, but it can choose among strings the
document really contains. Each field type has its own generator (dates, amounts, ids, whole
lines for names, runs of adjacent lines for addresses, ...) and every candidate gets a prior
score from the label cues around it (same visual row to the left, or the line above), from
cues of competing fields (``SUB TOTAL`` is not ``total``) and from type-specific position
priors (issuer names sit at the top, totals are large). Candidates are returned best first;
the Hunter puts them in that order in its prompt and its JSON-schema ``enum``.

Two helpers go beyond the prior windows: :func:`street_blocks` (address values found by shape,
which the candidate ranker adds after the prior candidates) and :func:`repair_date` (the one
possible reading of a date OCR made impossible: letters for digits, a separator lost to a
space, a year no business document has; the ranker reports it in place of the printed value,
whose features it still reads).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise
from statistics import median

from confidence.documents.lines import Line, document_lines, rows
from confidence.documents.patterns import (
    AMOUNT_RE,
    BIC_RE,
    COUNTRY_ID_RE,
    CURRENCY_RE,
    DATE_RE,
    EMAIL_RE,
    ID_RE,
    MONTH_NAMES,
    MONTH_WORDS,
    PERCENT_RE,
    find_read_as,
    iban_values,
    repair_digit_run,
)
from confidence.documents.text import fold_text
from confidence.documents.vocab import (
    NEGATIVE_CUES,
    TITLE_QUALIFIERS,
    TITLES,
    cue_score,
    field_cues,
    field_keys,
)
from confidence.schema import Field, Schema
from confidence.types import Document

_PHONE_RE = re.compile(r"\+?\(?\d{2,4}\)?[ -]?\d{3,4}[ -]\d{3,4}")
# No word lists: street words, place names and legal forms are locale knowledge, which reaches
# extraction only through the ranker's training on the synthetic generator's locale tables.
# A street line that ends with its house number ("Hauptstraße 12", "Via Roma 5/7", "Kade 12a"):
# a word of letters, then a number, an optional letter and an optional second number.
_TRAILING_HOUSE_NUMBER = re.compile(
    r"[^\W\d_]{3,}\.?\s+\d{1,4}[a-zA-Z]?(?:\s*[-/]\s*\d{1,4}[a-zA-Z]?)?$"
)
# Parts of one printed line that a sender line separates with a middle dot or a bar.
_PART_SEPARATOR = re.compile(r"\s+[·•|]\s+")
_POSTCODE_RE = re.compile(r"\b\d{5}\b|\b[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}\b")


@dataclass(frozen=True)
class Candidate:
    """A value copied from the document for one field.

    Parameters
    ----------
    value : str
        Exactly as printed (words re-joined by single spaces).
    line : int
        Index of the (first) line it was taken from.
    score : float
        Prior score; higher = more likely the field's value.
    """

    value: str
    line: int
    score: float


def _context(
    line: Line, start: int, row_of: dict[int, list[Line]], prev: Line | None
) -> tuple[str, str]:
    """Text left of the value on its visual row, and the line above."""
    left = [ln.text for ln in row_of.get(line.index, []) if ln.bbox[2] <= line.bbox[0] + 1e-6]
    left.append(line.text[:start])
    return " ".join(left), prev.text if prev is not None else ""


def _label_score(field: Field, left: str, above: str, others: list[Field]) -> float:
    """Own cues left (1.0) or above (0.5), minus negative and competing cues."""
    own = field_cues(field)
    s = max(cue_score(left, own), 0.5 * cue_score(above, own))
    for k in field_keys(field):
        neg = NEGATIVE_CUES.get(k, ())
        own_keys_cues = field_cues(field)
        neg = tuple(n for n in neg if n not in own_keys_cues)
        if neg and cue_score(left[-40:], neg) > 0:
            s -= 0.7
    for o in others:
        oc = tuple(c for c in field_cues(o) if c not in own)
        if oc and cue_score(left[-40:], oc) > 0:
            s -= 0.4
    return s


def _amount_value(text: str) -> float:
    t = text.replace(" ", "").replace("'", "")
    if re.search(r",\d{2}$", t):
        t = t.replace(".", "").replace(",", ".")
    else:
        t = t.replace(",", "")
    try:
        return abs(float(t))
    except ValueError:
        return 0.0


def _regex_candidates(field, pattern, lines, row_of, others, prior):
    out = []
    for i, ln in enumerate(lines):
        prev = lines[i - 1] if i else None
        for m in pattern.finditer(ln.text):
            left, above = _context(ln, m.start(), row_of, prev)
            s = _label_score(field, left, above, others) + prior(ln, m.group(0))
            out.append(Candidate(m.group(0).strip(), ln.index, s))
    return out


def _found_candidates(field, finder, lines, row_of, others):
    """Like :func:`_regex_candidates` (no prior) for a finder of values in a line's text."""
    out = []
    for i, ln in enumerate(lines):
        prev = lines[i - 1] if i else None
        for v in finder(ln.text):
            left, above = _context(ln, max(0, find_read_as(ln.text, v)), row_of, prev)
            out.append(Candidate(v, ln.index, _label_score(field, left, above, others)))
    return out


def _letters_ratio(text: str) -> float:
    return sum(c.isalpha() for c in text) / max(1, len(text.replace(" ", "")))


def address_likeness(text: str) -> float:
    """How much a line looks like a line of a postal address, by shape only, at most 2.

    Comma-separated parts (0.3 each, up to three), a postcode-like token (1) and a leading
    house number (0.4) count for it; a phone number, a date or a registration or document
    word (-1.5) and an amount (-1) against it.

    Examples
    --------
    >>> address_likeness("Leeds LS1 4AB"), address_likeness("12 Elm Street")
    (1.0, 0.4)
    >>> address_likeness("Tel 0113 496 0000"), address_likeness("Corner Shop")
    (-1.5, 0.0)
    """
    s = 0.3 * min(text.count(","), 3) + (1.0 if _POSTCODE_RE.search(text) else 0.0)
    if re.match(r"^\s*(?:no\.?\s*)?\d", text, re.I):
        s += 0.4
    if (
        _PHONE_RE.search(text)
        or DATE_RE.search(text)
        or re.search(r"gst|reg|invoice|receipt|tax", text, re.I)
    ):
        s -= 1.5
    if AMOUNT_RE.search(text):
        s -= 1.0
    return min(s, 2.0)


def _text_candidates(field, lines, row_of, others):
    keys = field_keys(field)
    out = []
    if "customer" in keys:
        cues = field_cues(field)
        for i, ln in enumerate(lines):
            for j in range(1, 3):  # a customer name follows its label on the same line or below
                if i - j >= 0 and cue_score(lines[i - j].text, cues) > 0:
                    out.append(Candidate(ln.text, ln.index, 1.2 - 0.3 * j))
            m = re.match(r"^(.{2,25}?)\s*[:\-]\s*(\S.*)$", ln.text)
            if m and cue_score(m.group(1), cues) > 0:
                out.append(Candidate(m.group(2), ln.index, 1.5))
        return out + _block_heads(lines)
    # Issuer-like names: top of the page, letters, legal suffix.
    scores = []
    for i, ln in enumerate(lines[:15]):
        s = 1.0 - 0.12 * i
        s += 0.6 * (_letters_ratio(ln.text) - 0.7)
        if address_likeness(ln.text) > 0.9 or _PHONE_RE.search(ln.text):
            s -= 1.0
        if len(ln.text) < 3:
            s -= 1.0
        scores.append(s)
        out.append(Candidate(ln.text, ln.index, s))
        head = _before_number_tail(ln.text)
        if head:  # a name followed by a registration number in brackets
            out.append(Candidate(head, ln.index, s + 0.1))
        head = _before_title(ln.text)
        if head:  # a letterhead name read with the title beside it ("Jones-Ali Sales Invoice")
            out.append(Candidate(head, ln.index, s + 0.1))
    for i in range(min(len(lines), 8) - 1):  # a long name wrapped over two lines
        a, b = lines[i], lines[i + 1]
        if a.page == b.page and min(_letters_ratio(a.text), _letters_ratio(b.text)) >= 0.6:
            out.append(Candidate(f"{a.text} {b.text}", a.index, min(scores[i : i + 2]) - 0.2))
    return out


def _before_number_tail(text: str) -> str | None:
    """``"NAME (123456-X)"`` -> ``"NAME"``: the text before a bracket that holds digits."""
    m = re.match(r"^(.*?[A-Za-z].*?)\s*[(\[{][^()]*\d[^()]*[)\]}]?\s*\S{0,3}$", text)
    return m.group(1).strip() if m and len(m.group(1).strip()) >= 3 else None


def _before_title(text: str) -> str | None:
    """A letterhead name and the document's title read as one line: the name without it.

    OCR joins the name at the left of a letterhead with the title printed at the right of the
    same row (``Jackson PLC Invoice``, ``Kaul GmbH RECHNUNG``). When the line ends with a title
    word of the label vocabulary (:data:`~confidence.documents.vocab.TITLES`), the text before
    it and before the words printed as part of the title
    (:data:`~confidence.documents.vocab.TITLE_QUALIFIERS`: ``TAX INVOICE``, ``Sales Invoice``)
    is offered; ``None`` when nothing with letters is left (``SIMPLIFIED TAX INVOICE``).

    Examples
    --------
    >>> _before_title("Jones-Ali Sales Invoice"), _before_title("Kaul GmbH RECHNUNG")
    ('Jones-Ali', 'Kaul GmbH')
    >>> _before_title("SIMPLIFIED TAX INVOICE"), _before_title("Invoice"), _before_title("Net 30")
    (None, None, None)
    """
    words = text.split()

    def folded(w: str) -> str:
        return fold_text(w).strip(" .:;,-|")

    if len(words) < 2 or folded(words[-1]) not in TITLES:
        return None
    words = words[:-1]
    while words and folded(words[-1]) in TITLE_QUALIFIERS:
        words = words[:-1]
    head = " ".join(words).strip(" ,:;-|")
    return head if sum(c.isalpha() for c in head) >= 3 else None


def column_below(
    lines: list[Line], i: int, n: int = 3, *, by_top: dict[int, list[Line]] | None = None
) -> list[Line]:
    """Up to ``n`` lines stacked right under line ``i`` in its column, top down: each starts at
    the same left x (within 1 % of the page) and less than 1.5 line heights under the one above.

    OCR's reading order may put other lines between them (a title printed right of a name).
    ``by_top`` (:func:`lines_by_top` of ``lines``) saves sorting them again for each line.

    Examples
    --------
    >>> from confidence.documents.lines import Line
    >>> ls = [Line(0, "Acme Ltd", (.1, .05, .2, .06), 1, ()),
    ...       Line(1, "Invoice", (.8, .02, .9, .03), 1, ()),
    ...       Line(2, "2 Kings Road", (.1, .065, .2, .075), 1, ())]
    >>> [x.text for x in column_below(ls, 0)]
    ['2 Kings Road']
    """
    by_top = lines_by_top(lines) if by_top is None else by_top
    out, cur = [], lines[i]
    while len(out) < n:
        page = by_top.get(cur.page, [])
        tops = [o.bbox[1] for o in page]
        h = cur.bbox[3] - cur.bbox[1]
        nxt = None
        for o in page[bisect_right(tops, cur.bbox[1]) :]:  # top down, below the current top
            if o.bbox[1] - cur.bbox[3] >= 1.5 * h:
                break
            if abs(o.bbox[0] - cur.bbox[0]) <= 0.01:
                nxt = o
                break
        if nxt is None:
            break
        out.append(nxt)
        cur = nxt
    return out


def lines_by_top(lines: list[Line]) -> dict[int, list[Line]]:
    """Each page's lines sorted by their top edge (for :func:`column_below`)."""
    out: dict[int, list[Line]] = {}
    for ln in lines:
        out.setdefault(ln.page, []).append(ln)
    for page in out.values():
        page.sort(key=lambda o: o.bbox[1])
    return out


def _heads_block(below: list[Line]) -> bool:
    """Whether ``below`` starts a postal block: address-like, a postcode-like line in it."""
    return (
        bool(below)
        and address_likeness(below[0].text) >= 0.4
        and max(address_likeness(x.text) for x in below) > 0.9
    )


def _block_heads(lines: list[Line]) -> list[Candidate]:
    """Lines right above an address-like line: the name heading a postal block (the lines
    after it in reading order, else those under it in its column)."""
    out = []
    by_top: dict[int, list[Line]] | None = None
    for i in range(len(lines) - 1):
        ln = lines[i]
        if not (
            _letters_ratio(ln.text) >= 0.6
            and len(ln.text.split()) <= 6
            and address_likeness(ln.text) <= 0.3
        ):
            continue
        after = lines[i + 1 : i + 4] if lines[i + 1].page == ln.page else []
        if _heads_block(after):
            out.append(Candidate(ln.text, ln.index, 0.5))
        else:  # OCR read other lines in between
            by_top = lines_by_top(lines) if by_top is None else by_top
            if not _heads_block(column_below(lines, i, by_top=by_top)):
                continue
            out.append(Candidate(ln.text, ln.index, 0.2))
    return out + _column_heads(lines)


def _column_heads(lines: list[Line]) -> list[Candidate]:
    """Names heading a postal block that OCR joined, line by line, with other columns.

    Like :func:`_block_heads` but on the parts of :func:`column_parts`: a part with letters
    over parts starting at the same x, the first address-like, one of the next three
    postcode-like (a party's block beside the document's title, a table of dates or a totals
    table). Only stacks where some line has several parts are offered: the others are whole
    lines, which :func:`_block_heads` reads.

    Examples
    --------
    >>> from confidence.documents.lines import Line
    >>> from confidence.types import Word
    >>> def line(i, *parts):
    ...     ws = tuple(Word(t, (x + 0.03 * k, 0.1 + 0.02 * i, x + 0.03 * k + 0.025,
    ...                         0.11 + 0.02 * i))
    ...                for t, x in parts for k, t in enumerate(t.split()))
    ...     return Line(i, " ".join(w.text for w in ws), (0, 0, 1, 1), 1, ws)
    >>> ls = [line(0, ("Invoice 0042", 0.05), ("Acme Ltd", 0.4)),
    ...       line(1, ("2 Kings Road", 0.4), ("2015-06-10", 0.7)),
    ...       line(2, ("Leeds LS1 4AB", 0.4))]
    >>> [c.value for c in _column_heads(ls)]
    ['Acme Ltd']
    """
    out = []
    parts = [column_parts(ln) for ln in lines]
    for i in range(len(lines) - 1):
        for head, x in parts[i]:
            below = []
            for j in range(i + 1, min(i + 4, len(lines))):
                if lines[j].page != lines[i].page:
                    break
                part = next((t for t, nx in parts[j] if abs(nx - x) <= 0.01), None)
                if part is None:
                    break
                below.append(part)
            several = any(len(p) > 1 for p in parts[i : i + 1 + len(below)])
            if (
                several
                and below
                and _letters_ratio(head) >= 0.6
                and len(head.split()) <= 6
                and address_likeness(head) <= 0.3
                and address_likeness(below[0]) >= 0.4
                and max(address_likeness(t) for t in below) > 0.9
            ):
                out.append(Candidate(head.strip(" ,"), lines[i].index, 0.5))
    return out


_REG_NUMBER_LINE = re.compile(
    r"^\W*(?:\d[\d ]{3,}\d\s*-\s*[A-Za-z]|\(\s*\d[\d ]{3,}\d\s*(?:-\s*[A-Za-z])?\s*\)|\d{7,})\W*$"
)
"""A line that is only a registration number (``(81109-A)``, ``002043319-W``, ``(1234567)``)."""


def _address_candidates(field, lines, row_of, others):
    keys = field_keys(field)
    cues = field_cues(field)
    out = []
    like = [address_likeness(ln.text) for ln in lines]
    for i in range(len(lines)):
        if _REG_NUMBER_LINE.match(lines[i].text):
            continue  # "(81109-A)" under a shop's name: its registration number starts no address
        for n in range(1, 5):
            win = lines[i : i + n]
            if len(win) < n or win[-1].page != win[0].page:
                break
            vals = like[i : i + n]
            # Longer runs of address-like lines win: the gold address joins all its lines.
            s = sum(max(v, -1.5) for v in vals) - 0.4 * sum(1 for v in vals if v <= 0)
            if vals[0] <= 0 or vals[-1] <= 0:
                s -= 0.5
            if "customer" in keys:
                near = any(cue_score(lines[k].text, cues) > 0 for k in range(max(0, i - 3), i))
                s += 0.8 if near else -0.3
            else:
                s -= 0.03 * i
            out.append(Candidate(" ".join(ln.text for ln in win), win[0].index, s))
    return out


def column_parts(line: Line) -> list[tuple[str, float]]:
    """The parts of an OCR line that lie in different columns, as ``(text, left x)``.

    OCR joins what one row prints in several columns (an address beside a table of dates) into
    one line. Words further apart than 2.5 times the line's median word height are taken as in
    different columns. A line without word boxes is one part.

    Examples
    --------
    >>> from confidence.documents.lines import Line
    >>> from confidence.types import Word
    >>> ws = (Word("12", (.40, .1, .42, .11)), Word("Main", (.425, .1, .45, .11)),
    ...       Word("St", (.455, .1, .47, .11)), Word("2015-04-12", (.6, .1, .66, .11)))
    >>> column_parts(Line(0, "12 Main St 2015-04-12", (.4, .1, .66, .11), 1, ws))
    [('12 Main St', 0.4), ('2015-04-12', 0.6)]
    """
    words = line.words
    if not words:
        return [(line.text, line.bbox[0])]
    gap = 2.5 * median(w.bbox[3] - w.bbox[1] for w in words)
    parts = [[words[0]]]
    for a, b in pairwise(words):
        if b.bbox[0] - a.bbox[2] > gap:
            parts.append([])
        parts[-1].append(b)
    return [(" ".join(w.text for w in p), p[0].bbox[0]) for p in parts]


# a house number, then a word (a one-letter word before it: "48 W Harbor St", "8 B. Road")
_STREET_HEAD = re.compile(r"\d{1,5}[a-zA-Z]?,?\s+(?:[^\W\d_]\.?\s+)?[^\W\d_]{2,}")


def _column_block(lines: list[Line], i: int) -> list[Candidate]:
    """Addresses in one column of rows that OCR joined with other columns (an address beside a
    table of dates, two parties' blocks side by side): from each part of line ``i`` that looks
    like a street line, the parts under it that start at the same x, up to a postcode part
    within two lines, then also with the part after it when that holds only words (a country).
    Stacks in which no line has several parts are offered only with the country line: their
    other blocks are windows of whole lines already, but a window that ends with a line of
    words alone ranks below the prior candidates' cut."""
    ln = lines[i]
    out: list[Candidate] = []
    for head, x in column_parts(ln):
        head = head.strip(" ,")
        if not (_TRAILING_HOUSE_NUMBER.search(head) or _STREET_HEAD.match(head)):
            continue
        split = len(column_parts(ln)) > 1
        block, found = [head], False
        for j in range(i + 1, min(i + 4, len(lines))):
            nxt = lines[j]
            if nxt.page != ln.page:
                break
            parts = column_parts(nxt)
            part = next((t for t, nx in parts if abs(nx - x) <= 0.01), None)
            if part is None:
                break
            split = split or len(parts) > 1
            block.append(part.strip(" ,"))
            if found:  # the part after the postcode part: a country's name
                if re.fullmatch(r"[^\W\d_][^\d]{1,30}", part.strip()):
                    out.append(Candidate(", ".join(block), ln.index, -1.2))
                break
            if _POSTCODE_RE.search(part) and address_likeness(part) > 0.5:
                found = True
                if split:
                    out.append(Candidate(", ".join(block), ln.index, -1.1))
    return out


def street_blocks(lines: list[Line]) -> list[Candidate]:
    """Address values the windows of :func:`field_candidates` miss, by shape alone.

    * a street line that ends with its house number (``Röhrichtstraße 50-65``), followed within
      two lines by a postcode line (``72377 Eisenberg``): the lines joined by ``", "``;
    * the part of a line after a middle dot or a bar that holds a postcode
      (``Fisher-Rogers · 2 Martyn Views, West Declan, HU6E 2AS``).

    They come after the prior candidates (score below all of them): extra values for the
    candidate pool, which leave the prior order of the other candidates as it was.

    Examples
    --------
    >>> from confidence.documents.lines import Line
    >>> ls = [Line(0, "Röhrichtstraße 50-65", (0, .1, .3, .12), 1, ()),
    ...       Line(1, "72377 Eisenberg", (0, .13, .3, .15), 1, ()),
    ...       Line(2, "Acme Ltd · 2 Kings Road, Leeds, LS1 4AB", (0, .5, .6, .52), 1, ())]
    >>> [c.value for c in street_blocks(ls)]
    ['Röhrichtstraße 50-65, 72377 Eisenberg', '2 Kings Road, Leeds, LS1 4AB']
    """
    out: list[Candidate] = []
    for i, ln in enumerate(lines):
        if _TRAILING_HOUSE_NUMBER.search(ln.text.strip(" ,")) and not _REG_NUMBER_LINE.match(
            ln.text
        ):
            for j in range(i + 1, min(i + 3, len(lines))):
                nxt = lines[j]
                if nxt.page != ln.page:
                    break
                if _POSTCODE_RE.search(nxt.text) and address_likeness(nxt.text) > 0.5:
                    parts = [x.text.strip(" ,") for x in lines[i : j + 1]]
                    out.append(Candidate(", ".join(parts), ln.index, -1.0 - 0.1 * (j - i)))
                    break
        out.extend(_column_block(lines, i))
        for part in _PART_SEPARATOR.split(ln.text)[1:]:
            if _POSTCODE_RE.search(part) and address_likeness(part) > 0.9:
                out.append(Candidate(part.strip(" ,"), ln.index, -1.0))
    return out


# Digits OCR takes for one another in a blurred or thin print (a 0 read as 6, 8 or 9, ...).
_DIGIT_CONFUSIONS = {
    "0": "689",
    "1": "7",
    "3": "8",
    "5": "6",
    "6": "05",
    "7": "1",
    "8": "036",
    "9": "0",
}
PLAUSIBLE_YEARS = (1970, 2100)
"""Years a business document is dated in; a date outside them is an OCR misreading."""


def repair_year(value: str) -> str | None:
    """``value`` with its four-digit year read again when OCR made it implausible.

    A year outside :data:`PLAUSIBLE_YEARS` (``2618``) is re-read digit by digit through the
    usual OCR digit confusions; when exactly one reading falls inside, the value is returned
    with that year (``2018``). ``None`` when the year is plausible, two-digit, or no single
    repair exists.

    Examples
    --------
    >>> repair_year("2618-03-23"), repair_year("12-02-2618"), repair_year("25/12/2018")
    ('2018-03-23', '12-02-2018', None)
    >>> repair_year("05/02/18") is None, repair_year("01/01/5555") is None
    (True, True)
    """
    lo, hi = PLAUSIBLE_YEARS
    found = [m for m in re.finditer(r"(?<!\d)\d{4}(?!\d)", value) if not lo <= int(m[0]) <= hi]
    if len(found) != 1:
        return None
    m = found[0]
    year = m[0]
    readings = {
        year[:i] + alt + year[i + 1 :]
        for i, digit in enumerate(year)
        for alt in _DIGIT_CONFUSIONS.get(digit, "")
    }
    fits = [y for y in readings if lo <= int(y) <= hi]
    if len(fits) != 1:
        return None
    return value[: m.start()] + fits[0] + value[m.end() :]


# Letters OCR prints in place of digits inside a date ("O4-O4-2O18", "l2/05/2018").
_LETTER_DIGITS = str.maketrans("OoQDIl|iSBZ", "00001111582")
_D = r"[\dOoQDIl|iSBZ]"
OCR_DATE_RE = re.compile(
    rf"(?<![\w/.\-])({_D}{{1,2}}) ?([/.\-]) ?({_D}{{1,2}})(?: ?[/.\-~]{{1,2}} ?| )"
    rf"({_D}{{4}}|{_D}{{2}})(?![\w/.\-])"
)
"""A numeric day-month-year date as OCR may print it: letters for digits, spaces around the
separators, a second separator doubled (``-~-``) or lost to a space (``09- 06 2018``)."""
_NUMERIC_DATE = re.compile(
    r"(\d{1,2})([/.\-])(\d{1,2})\2(\d{4}|\d{2})|(\d{4})([/.\-])(\d{1,2})\6(\d{1,2})"
)


def _day_month_ok(a: str, b: str) -> bool:
    """A day and a month in one order or the other (templates print ``2015-19-07`` too)."""
    x, y = int(a), int(b)
    return (1 <= x <= 31 and 1 <= y <= 12) or (1 <= x <= 12 and 1 <= y <= 31)


def possible_date(value: str) -> bool:
    """Whether a numeric date can be on a calendar: a day and a month in one order or the other,
    and a four-digit year in :data:`PLAUSIBLE_YEARS`. Dates in other forms (month names) are
    taken as possible.

    Examples
    --------
    >>> possible_date("24/10/2017"), possible_date("2015-19-07"), possible_date("12 May 2018")
    (True, True, True)
    >>> possible_date("24/16/2017"), possible_date("64-05-2013"), possible_date("01/02/2617")
    (False, False, False)
    """
    m = _NUMERIC_DATE.fullmatch(value.strip())
    if m is None:
        return True
    iso = m.group(1) is None
    a, b = (m.group(7), m.group(8)) if iso else (m.group(1), m.group(3))
    year = m.group(5) if iso else m.group(4)
    lo, hi = PLAUSIBLE_YEARS
    return _day_month_ok(a, b) and (len(year) != 4 or lo <= int(year) <= hi)


OCR_NAMED_DATE_RE = re.compile(
    r"(?<![^\W\d_])[^\W\d_]{3,9}\.? ?\d{1,2}(?:st|nd|rd|th)?(?:[,.]{1,2} ?| )\d{4}(?!\d)|"
    r"(?<![\w.,/\-])\d{1,2}\.? ?[^\W\d_]{3,9}\.?[ ,\-]*\d{4}(?!\d)"
)
"""A date with a word where its month name is (``aod 03, 2015``, ``12 Dcc 2019``), for
:func:`repair_month`."""
_MONTH_OF = {
    n[:k]: m
    for m, names in MONTH_NAMES.items()
    for n in names
    for k in range(3, len(n) + 1)
    if n[:k] in MONTH_WORDS
}


def repair_month(value: str) -> str | None:
    """``value`` with the word where its month name is printed read as that month, when OCR
    misread one letter of it (``aod 03, 2015`` -> ``aou 03, 2015``, August).

    The word must differ by one letter from words of :data:`MONTH_WORDS` of its length that all
    name one month (``jui`` is June or July: no reading). ``None`` when the word is a month
    already, or no single month fits.

    Examples
    --------
    >>> repair_month("aod 03, 2015"), repair_month("12 Dcc 2019"), repair_month("jux 3, 2015")
    ('aou 03, 2015', '12 dec 2019', None)
    >>> repair_month("Aug 03, 2015") is None, repair_month("Tab 12, 2018") is None
    (True, True)
    """
    m = re.search(r"[^\W\d_]{3,9}", value)
    if m is None:
        return None
    word = fold_text(m[0])
    if word in MONTH_WORDS:
        return None
    fits = [
        w
        for w in MONTH_WORDS
        if len(w) == len(word) and sum(a != b for a, b in zip(w, word, strict=True)) == 1
    ]
    if not fits or len({_MONTH_OF[w] for w in fits}) != 1:
        return None
    names = MONTH_NAMES[_MONTH_OF[fits[0]]]  # the word of the first-listed name
    best = min(fits, key=lambda w: (next(i for i, n in enumerate(names) if n.startswith(w)), w))
    return value[: m.start()] + best + value[m.end() :]


def repair_date(value: str) -> str | None:
    """The one possible reading of a printed date that OCR made impossible, else ``None``.

    In turn: letters read for digits and separators spaced, doubled or lost
    (:data:`OCR_DATE_RE`: ``O4-O4~-2O18`` -> ``04-04-2018``, ``09- 06 2018`` -> ``09-06-2018``),
    then a year outside :data:`PLAUSIBLE_YEARS` (:func:`repair_year`). The result must be a
    calendar date in one day-month order or the other. A day above 31 or a month above 12
    (``24/16/2017``) is left as printed: guessing its digit would hide from the confidence
    engine the misreading that makes the date invalid, and the guess is often wrong
    (``64-05-2013`` was printed ``04-05-2018``). ``None`` when the date is possible as printed
    or no single repair exists.

    Examples
    --------
    >>> repair_date("O4-O4~-2O18"), repair_date("09- 06 2018"), repair_date("24/16/2017")
    ('04-04-2018', '09-06-2018', None)
    >>> repair_date("2618-03-23"), repair_date("25/12/2018"), repair_date("12.50 1234")
    ('2018-03-23', None, None)
    """
    fixed = value
    m = OCR_DATE_RE.fullmatch(value)
    if m is not None and not DATE_RE.fullmatch(value):
        if sum(c.isdigit() for c in value) < 4:
            return None
        day, sep, month, year = (g.translate(_LETTER_DIGITS) for g in m.groups())
        if " " in value and (len(year) != 4 or len(day) != 2 or len(month) != 2):
            return None  # "05 02-18", "1.2 2018": too weak for a date
        fixed = f"{day}{sep}{month}{sep}{year}"
    if OCR_NAMED_DATE_RE.fullmatch(value) and not DATE_RE.fullmatch(value):
        fixed = repair_month(value) or fixed
    fixed = repair_year(fixed) or fixed
    if fixed == value:
        return None
    m2 = _NUMERIC_DATE.fullmatch(fixed)
    if m2 is None:  # a date with a month name: only its year was read again
        return fixed if DATE_RE.fullmatch(fixed) else None
    iso = m2.group(1) is None
    a, b = (m2.group(7), m2.group(8)) if iso else (m2.group(1), m2.group(3))
    year = m2.group(5) if iso else m2.group(4)
    lo, hi = PLAUSIBLE_YEARS
    if not _day_month_ok(a, b) or (len(year) == 4 and not lo <= int(year) <= hi):
        return None
    return fixed


_YEAR_FIRST = re.compile(r"(?<![\d/.\-])(\d{4})([/.\-])(\d{1,2})\2(\d{1,2})(?![\d/.\-])")


def year_day_month(dates: Iterable[str]) -> bool:
    """Whether a page prints its year-first dates year-day-month.

    Only a year-first date with one number above 12 says which order it uses (``2015-19-07``
    is year-day-month, ``2015-07-19`` year-month-day); the page's dates are taken to share one
    order, and year-day-month wins when more of them show it.

    Examples
    --------
    >>> year_day_month(["2015-19-07", "2015-08-02"]), year_day_month(["2015-08-02"])
    (True, False)
    >>> year_day_month(["2015-19-07", "2015-07-20", "2015-07-21"])
    False
    """
    ydm = ymd = 0
    for d in dates:
        m = _YEAR_FIRST.fullmatch(d.strip())
        if m is not None:
            a, b = int(m[3]), int(m[4])
            ydm += a > 12 >= b
            ymd += b > 12 >= a
    return ydm > ymd


def year_month_day(value: str) -> str | None:
    """A year-day-month date whose day could be a month (``2015-08-02``), written year-month-day
    (``2015-02-08``): its reading on a page that prints year-day-month (:func:`year_day_month`).
    ``None`` for other values, and when both readings are the same date.

    Examples
    --------
    >>> year_month_day("2015-08-02"), year_month_day("2015-19-07"), year_month_day("2015-3-3")
    ('2015-02-08', None, None)
    """
    m = _YEAR_FIRST.fullmatch(value.strip())
    if m is None or m[3] == m[4] or max(int(m[3]), int(m[4])) > 12 or min(int(m[3]), int(m[4])) < 1:
        return None
    return f"{m[1]}{m[2]}{m[4]}{m[2]}{m[3]}"


def field_candidates(
    field: Field, lines: list[Line], schema: Schema | None = None, *, max_candidates: int = 8
) -> list[Candidate]:
    """Candidates for one field, best first, without duplicates.

    Parameters
    ----------
    field : Field
    lines : list of Line
        From :func:`confidence.documents.lines.document_lines`.
    schema : Schema or None
        The other fields' cues are used to push their values down this field's list.
    max_candidates : int

    Examples
    --------
    >>> from confidence.documents.lines import Line
    >>> ls = [Line(0, "SUB TOTAL 8.00", (0, .5, 1, .52), 1, ()),
    ...       Line(1, "TOTAL 9.00", (0, .6, 1, .62), 1, ())]
    >>> [c.value for c in field_candidates(Field("total", "amount"), ls)]
    ['9.00', '8.00']
    """
    others = [f for f in (schema or ()) if f.name != field.name and f.type == field.type]
    row_of: dict[int, list[Line]] = {}
    for row in rows(lines):
        for ln in row:
            row_of[ln.index] = row
    n_lines = max(1, len(lines))
    t = field.type
    if t == "date":
        first = {}

        def prior(ln, v):
            first.setdefault("i", ln.index)
            return 0.2 if ln.index == first["i"] else 0.0

        cands = _regex_candidates(field, DATE_RE, lines, row_of, others, prior)
        # dates OCR spelled with letters or spaces ("O4-O4~-2O18", "09- 06 2018"), after the rest
        cands += [
            c
            for c in _regex_candidates(
                field, OCR_DATE_RE, lines, row_of, others, lambda ln, v: -0.3
            )
            if not DATE_RE.fullmatch(c.value) and repair_date(c.value) is not None
        ]
        # and month names OCR misread a letter of ("aod 03, 2015"), after those
        cands += [
            c
            for c in _regex_candidates(
                field, OCR_NAMED_DATE_RE, lines, row_of, others, lambda ln, v: -0.4
            )
            if not DATE_RE.fullmatch(c.value) and repair_date(c.value) is not None
        ]
    elif t == "amount":
        values = [_amount_value(m.group(0)) for ln in lines for m in AMOUNT_RE.finditer(ln.text)]
        top = max(values, default=1.0) or 1.0
        big = "total" in field_keys(field)

        def prior(ln, v):
            p = 0.3 * _amount_value(v) / top if big else 0.0
            return p + 0.1 * ln.index / n_lines

        cands = _regex_candidates(field, AMOUNT_RE, lines, row_of, others, prior)
    elif t == "id":

        def id_prior(ln, v):
            if _has_digit(v):
                return 0.2
            # Capitals in the ISO 9362 shape are codes (a BIC), not words: no penalty.
            return 0.0 if BIC_RE.fullmatch(v) else -1.0

        # Tokens, and ids printed in groups after a country code ("GB 382702240"); a letter
        # OCR printed between two digits is read as the digit (repair_digit_run).
        cands = [
            Candidate(repair_digit_run(c.value), c.line, c.score)
            for pattern in (ID_RE, COUNTRY_ID_RE)
            for c in _regex_candidates(field, pattern, lines, row_of, others, id_prior)
            if not DATE_RE.fullmatch(c.value)
            and not AMOUNT_RE.fullmatch(c.value)  # 12.50 is an amount, not an id
            and c.value.lower().strip(":#") not in ("no", "tel", "fax")
        ]
    elif t == "address":
        cands = _address_candidates(field, lines, row_of, others)
    elif t == "email":
        cands = _regex_candidates(field, EMAIL_RE, lines, row_of, others, lambda ln, v: 0.0)
    elif t == "iban":
        cands = _found_candidates(field, iban_values, lines, row_of, others)
    elif t == "percent":
        cands = _regex_candidates(field, PERCENT_RE, lines, row_of, others, lambda ln, v: 0.0)
    elif t == "currency":
        cands = _regex_candidates(field, CURRENCY_RE, lines, row_of, others, lambda ln, v: 0.0)
    else:
        cands = _text_candidates(field, lines, row_of, others)
    best: dict[str, Candidate] = {}
    for c in cands:
        v = " ".join(c.value.split()).strip(" :")
        # llama.cpp's JSON-schema-to-grammar converter mis-escapes quotes and backslashes in
        # enum strings (the grammar fails to parse), so such strings are never offered.
        if not v or '"' in v or "\\" in v:
            continue
        if v not in best or c.score > best[v].score:
            best[v] = Candidate(v, c.line, c.score)
    ranked = sorted(best.values(), key=lambda c: (-c.score, c.line))
    return ranked[:max_candidates]


_O_BEFORE_DIGITS = re.compile(r"^([A-Za-z]{2,})O(?=\d{4,}$)")


def o_as_zero(value: str) -> str | None:
    """The id ``value`` with the ``O`` between its letter prefix and its digits read as 0.

    At the border of a prefix and its number OCR reads a 0 as the letter (``BCO7382`` for
    ``BC07382``), but prefixes end with an O too (``ORDO86122``), so
    :func:`~confidence.documents.patterns.repair_digit_run` leaves it; the candidate ranker's
    pool (:func:`~confidence.calls.ranker_features.field_pool`) offers both readings. ``None``
    when the id has no such O, or when the O follows a single letter (``PO019817``: a purchase
    order's own prefix).

    Examples
    --------
    >>> o_as_zero("BCO7382"), o_as_zero("PO019817"), o_as_zero("O1234"), o_as_zero("BC07382")
    ('BC07382', None, None, None)
    """
    m = _O_BEFORE_DIGITS.match(value)
    return None if m is None else f"{m[1]}0{value[m.end() :]}"


def _has_digit(v: str) -> bool:
    return any(ch.isdigit() for ch in v)


def document_candidates(
    document_or_lines: Document | list[Line], schema: Schema, *, max_candidates: int = 8
) -> dict[str, list[Candidate]]:
    """Candidates for every schema field (see :func:`field_candidates`)."""
    lines = (
        document_lines(document_or_lines)
        if isinstance(document_or_lines, Document)
        else document_or_lines
    )
    return {
        f.name: field_candidates(f, lines, schema, max_candidates=max_candidates) for f in schema
    }

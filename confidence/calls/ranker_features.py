"""Features of each (schema field, candidate value) pair for :mod:`confidence.calls.ranker`.

Everything comes from the one page-reading stack (:mod:`confidence.documents`): lines and visual
rows, the label vocabulary, typed value patterns. Nothing names a schema field: a field enters
only through its *type* (a small code) and through how printed labels compare with its *name and
description* (vocabulary cues, the concept the vocabulary ties it to, token and character
n-gram similarity), so a schema the ranker never saw is read the same way.

Candidates of a field (:func:`field_pool`) are the union of

* the typed prior candidates of :func:`confidence.calls.candidates.field_candidates` (for an
  address, then :func:`~confidence.calls.candidates.street_blocks`),
* values printed with a known label of the vocabulary
  (:func:`~confidence.calls.labelled.find_label_hits`) or with a layout label
  (:func:`~confidence.calls.pairs.find_pairs`), narrowed to the field's type,
* the Mapper's layout reading (:func:`confidence.calls.mapper.run_mapper` without a client),
* for an id, each of these with the O between its letter prefix and its digits read as 0
  (:func:`~confidence.calls.candidates.o_as_zero`), with the features of the printed one,

plus one *null* candidate standing for "the field is absent": its row holds only the group-level
features, so the ranker learns when the best real candidate is too weak to report.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from itertools import pairwise
from statistics import median

import numpy as np
from rapidfuzz import fuzz

from confidence.calls.candidates import (
    address_likeness,
    field_candidates,
    o_as_zero,
    street_blocks,
    year_day_month,
    year_month_day,
)
from confidence.calls.labelled import find_label_hits
from confidence.calls.mapper import run_mapper, typed_values
from confidence.calls.pairs import find_pairs
from confidence.documents.lines import Line, rows
from confidence.documents.normalize import parse_amount
from confidence.documents.patterns import (
    AMOUNT_RE,
    CURRENCY_RE,
    DATE_RE,
    EMAIL_RE,
    IBAN_RE,
    PERCENT_RE,
    find_read_as,
    iban_checksum_ok,
)
from confidence.documents.text import fold_text
from confidence.documents.value_kinds import default_value_kinds, field_kind
from confidence.documents.vocab import (
    cue_score,
    field_concept,
    field_cues,
    label_concepts,
    label_cues,
)
from confidence.schema import Field, Schema

__all__ = [
    "FEATURES",
    "TYPES",
    "VOCABULARY_FEATURES",
    "PageContext",
    "Pooled",
    "field_pool",
    "pool_features",
    "without_labels",
    "without_vocabulary",
]

TYPES = ("text", "address", "id", "date", "amount", "email", "iban", "percent", "currency")
"""Field types in the order of the ``field_type`` code (others get ``len(TYPES)``)."""

_FULL = {
    "date": DATE_RE,
    "amount": AMOUNT_RE,
    "email": EMAIL_RE,
    "iban": IBAN_RE,
    "percent": PERCENT_RE,
    "currency": CURRENCY_RE,
}
_STOP = frozenset("a an the of to be by at in on for as or and is it its any e g printed".split())
_LABEL_SLOTS = ("src", "left", "above", "header")
_LABEL_FEATS = ("cue", "tok", "ngram", "concept", "rival", "rival_concept")
FEATURES: tuple[str, ...] = (
    "is_null",
    "field_type",
    "n_same_type",
    "field_has_concept",
    "n_cands",
    "group_max_prior",
    "group_max_label",
    "prior_score",
    "prior_rank",
    "prior_gap",
    "src_prior",
    "src_hit",
    "src_pair",
    "src_mapper",
    "src_dir",
    *(f"{s}_{f}" for s in _LABEL_SLOTS for f in _LABEL_FEATS),
    "left_gap",
    "above_dist",
    "header_dist",
    "type_fit",
    "length",
    "n_words",
    "digit_ratio",
    "alpha_ratio",
    "value_share_of_line",
    "repeats",
    "x0",
    "y0",
    "x1",
    "page",
    "line_pos",
    "height_rel",
    "font_rel",
    "row_size",
    "row_pos_from_right",
    "amount_rank",
    "amount_is_max",
    "date_rank",
    "n_dates",
    "label_best",
    "below_address",
    "above_address",
    "col_segments",
    "block_pos",
    "block_len",
    "block_address_below",
    "gap_above_rel",
    "span_lines",
    "after_span_address",
    "before_span_address",
    "kind_own",
    "kind_other",
    "kind_rival",
    "amount_sum_of_two",
    "amount_part_of_sum",
    "amount_gap_rel",
    "amount_round5",
)


def _words(text: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9%]+", fold_text(text)) if w]


def _ngrams(text: str, n: int = 3) -> set[str]:
    t = f" {' '.join(_words(text))} "
    return {t[i : i + n] for i in range(max(0, len(t) - n + 1))}


@dataclass
class _FieldText:
    """What a field says about itself: name words, description words, cues, concept."""

    name: str
    desc: str
    grams: set[str]
    cues: tuple[str, ...]
    all_cues: tuple[str, ...]
    concept: str | None

    @classmethod
    def of(cls, f: Field) -> _FieldText:
        name = " ".join(_words(f.name.replace("_", " ")))
        desc = " ".join(w for w in _words(f.description) if w not in _STOP and len(w) > 1)
        return cls(
            name,
            desc,
            _ngrams(f"{name} {desc}"),
            label_cues(f),
            field_cues(f),
            field_concept(f),
        )


@dataclass
class PageContext:
    """Per-document layout facts shared by every field's candidates.

    Built once per document by :meth:`build`; label scores are memoised per label text.
    """

    lines: list[Line]
    schema: Schema
    by_index: dict[int, Line]
    row_of: dict[int, list[Line]]
    above: dict[int, int]
    header: dict[int, int]
    below: dict[int, int]
    med_height: float
    med_font: float
    text: str
    amounts: list[float]
    dates: list[str]
    hits: list
    pairs: list
    mapper: dict[str, tuple[str, int]]
    fields: dict[str, _FieldText]
    blocks: dict[int, tuple[int, list[int]]] = field(default_factory=dict)
    _memo: dict[str, dict[str, tuple[float, ...]]] = field(default_factory=dict)

    @classmethod
    def build(cls, lines: list[Line], schema: Schema) -> PageContext:
        row_of: dict[int, list[Line]] = {}
        for row in rows(lines):
            for ln in row:
                row_of[ln.index] = row
        above, header = _columns(lines)
        below: dict[int, int] = {}
        for i, a in sorted(above.items()):
            below.setdefault(a, i)
        heights = [ln.bbox[3] - ln.bbox[1] for ln in lines] or [0.01]
        fonts = [w.font_size for ln in lines for w in ln.words if w.font_size]
        amounts = [
            float(a) for ln in lines for m in AMOUNT_RE.finditer(ln.text) if (a := _amt(m.group(0)))
        ]
        dates = list(dict.fromkeys(m.group(0) for ln in lines for m in DATE_RE.finditer(ln.text)))
        mapped = run_mapper(schema, lines, reader="layout")
        return cls(
            lines,
            schema,
            {ln.index: ln for ln in lines},
            row_of,
            above,
            header,
            below,
            max(median(heights), 1e-4),
            median(fonts) if fonts else 0.0,
            "\n".join(ln.text for ln in lines),
            amounts,
            dates,
            find_label_hits(lines),
            find_pairs(lines),
            {
                k: (r.value, r.line)
                for k, r in mapped.fields.items()
                if r.value and r.line is not None
            },
            {f.name: _FieldText.of(f) for f in schema},
            _blocks(lines, above, max(median(heights), 1e-4)),
        )

    def label_scores(self, label: str) -> dict[str, tuple[float, ...]]:
        """Per schema field: (cue, token sim, n-gram sim, concept match) of a label text."""
        if label in self._memo:
            return self._memo[label]
        folded = " ".join(_words(label))
        grams = _ngrams(label)
        concepts = label_concepts(label)
        out = {}
        for name, ft in self.fields.items():
            if not folded:
                out[name] = (0.0, 0.0, 0.0, 0.0)
                continue
            cue = max(cue_score(label, ft.cues), 0.5 * cue_score(label, ft.all_cues))
            tok = max(
                fuzz.token_set_ratio(folded, ft.name), 0.8 * fuzz.token_set_ratio(folded, ft.desc)
            )
            ng = len(grams & ft.grams) / max(1, len(grams))
            out[name] = (cue, tok / 100.0, ng, float(ft.concept in concepts))
        self._memo[label] = out
        return out


def _amt(text: str) -> float:
    try:
        v = parse_amount(text)
    except (ValueError, ArithmeticError):
        return 0.0
    return abs(float(v)) if v is not None else 0.0


def _overlap(a: Line, b: Line) -> bool:
    return min(a.bbox[2], b.bbox[2]) - max(a.bbox[0], b.bbox[0]) > 0


def _blocks(
    lines: list[Line], above: dict[int, int], med_height: float
) -> dict[int, tuple[int, list[int]]]:
    """Text blocks: lines stacked in one column with at most about a line of space between them
    (an address window, a letterhead, a label over its value).

    Maps each line index to ``(position in its block, the block's line indices top down)``.
    """
    by_index = {ln.index: ln for ln in lines}
    up: dict[int, int] = {}
    for i, a in above.items():
        if by_index[i].bbox[1] - by_index[a].bbox[3] <= 1.2 * med_height:
            up[i] = a
    down: dict[int, int] = {}
    for i, a in sorted(up.items(), key=lambda kv: by_index[kv[0]].bbox[1]):
        down.setdefault(a, i)  # the nearest line below continues the block
    out: dict[int, tuple[int, list[int]]] = {}
    for ln in lines:
        if ln.index in out or (ln.index in up and down.get(up[ln.index]) == ln.index):
            continue  # not a block head
        chain, cur = [ln.index], ln.index
        while cur in down and down[cur] not in chain and len(chain) < 40:
            cur = down[cur]
            chain.append(cur)
        for k, i in enumerate(chain):
            out.setdefault(i, (k, chain))
    return out


def _block_features(ctx: PageContext, ln: Line) -> list[float]:
    """Position in the line's block, block length, the most address-like of the (up to four)
    lines under it in the block, and the space above it in its column (in line heights)."""
    pos, chain = ctx.blocks.get(ln.index, (0, [ln.index]))
    after = chain[pos + 1 : pos + 5]
    addr = max((address_likeness(ctx.by_index[i].text) for i in after), default=math.nan)
    ab = ctx.above.get(ln.index)
    gap = (ln.bbox[1] - ctx.by_index[ab].bbox[3]) / ctx.med_height if ab is not None else math.nan
    return [float(pos), float(len(chain)), addr, min(gap, 50.0) if gap == gap else gap]


def _span_features(ctx: PageContext, ln: Line, value: str) -> list[float]:
    """How many lines (in reading order, from the candidate's line) the value spans, and how
    address-like the line after and the line before that span are: a postcode line right after
    an address candidate says it stops too early, a street line before it that it starts late."""
    folded = fold_text(value)
    k = ln.index
    while k + 1 in ctx.by_index and fold_text(ctx.by_index[k + 1].text).strip() in folded:
        if not ctx.by_index[k + 1].text.strip():
            break
        k += 1
    after = ctx.by_index.get(k + 1)
    before = ctx.by_index.get(ln.index - 1)
    return [
        float(k - ln.index + 1),
        address_likeness(after.text) if after is not None else math.nan,
        address_likeness(before.text) if before is not None else math.nan,
    ]


def _columns(lines: list[Line]) -> tuple[dict[int, int], dict[int, int]]:
    """Nearest line above in the same column, and the nearest letters-only one (a header)."""
    above: dict[int, int] = {}
    header: dict[int, int] = {}
    by_page: dict[int, list[Line]] = {}
    for ln in lines:
        by_page.setdefault(ln.page, []).append(ln)
    for page in by_page.values():
        order = sorted(page, key=lambda ln: ln.bbox[1])
        for i, ln in enumerate(order):
            for o in reversed(order[:i]):
                if o.bbox[3] > ln.bbox[1] + 0.002 or not _overlap(o, ln):
                    continue
                above.setdefault(ln.index, o.index)
                if not any(c.isdigit() for c in o.text):
                    header[ln.index] = o.index
                    break
    return above, header


@dataclass(frozen=True)
class Pooled:
    """One candidate of a field: value, line, and where it came from.

    ``line`` is where the value was first found; ``seen_on`` every line a source found it on
    (a total printed beside ``Total incl. VAT`` and again beside ``Cash``). ``printed`` is the
    text as printed when ``value`` is a reading of it written otherwise (a year-day-month date
    written year-month-day): the features are those of the printed text.
    """

    value: str | None
    line: int
    prior: float = math.nan
    prior_rank: float = math.nan
    label: str = ""
    direction: float = math.nan
    sources: frozenset[str] = frozenset()
    seen_on: tuple[int, ...] = ()
    printed: str | None = None


def _add(pool: dict[str, Pooled], value: str, line: int, source: str, **kw) -> None:
    v = " ".join(value.split()).strip(" :")
    if not v or '"' in v or "\\" in v or len(v) > 200:
        return
    old = pool.get(v)
    if old is None:
        pool[v] = Pooled(v, line, sources=frozenset({source}), seen_on=(line,), **kw)
        return
    keep = {k: getattr(old, k) for k in ("prior", "prior_rank", "label", "direction")}
    for k, x in kw.items():
        if (isinstance(keep[k], float) and math.isnan(keep[k])) or keep[k] == "":
            keep[k] = x
    seen = old.seen_on if line in old.seen_on else (*old.seen_on, line)
    pool[v] = Pooled(v, old.line, sources=old.sources | {source}, seen_on=seen, **keep)


def _best_line(ctx: PageContext, f: Field, p: Pooled) -> Line:
    """The line of ``p`` whose own label (the words left of the value) names ``f`` best.

    A value printed more than once is described by its best-labelled occurrence: concept
    match first, then the larger of cue and token similarity; the first-found line on ties.
    """
    best, key = ctx.by_index[p.line], None
    text = p.printed or p.value
    for i in p.seen_on:
        ln = ctx.by_index.get(i)
        if ln is None or find_read_as(ln.text, text) < 0:
            continue
        left = _left_text(ctx, ln, text)
        s = ctx.label_scores(left)[f.name] if left else (0.0, 0.0, 0.0, 0.0)
        k = (s[3], max(s[0], s[1]))
        if key is None or k > key:
            best, key = ln, k
    return best


def _direction(ctx: PageContext, label_line: int, value_line: int) -> float:
    if value_line == label_line:
        return 0.0
    return 1.0 if any(o.index == value_line for o in ctx.row_of.get(label_line, ())) else 2.0


def field_pool(ctx: PageContext, f: Field, *, max_prior: int = 25) -> list[Pooled]:
    """Candidates of one field (see module docstring); the null candidate last."""
    pool: dict[str, Pooled] = {}
    prior = field_candidates(f, ctx.lines, ctx.schema, max_candidates=max_prior)
    for r, c in enumerate(prior):
        _add(pool, c.value, c.line, "prior", prior=c.score, prior_rank=float(r))
    if f.type == "address":  # after the prior candidates, whose order they leave alone
        low = min((c.score for c in prior), default=0.0)
        for r, c in enumerate(street_blocks(ctx.lines), start=len(prior)):
            _add(pool, c.value, c.line, "prior", prior=low + c.score, prior_rank=float(r))
    for h in ctx.hits:
        opts = list(h.options)
        if f.type == "address" and len(opts) > 1:  # a block: name line, then address lines
            opts += [(", ".join(t for t, _ in opts[1:k]), opts[1][1]) for k in (3, 4, 5, 6)]
        for text, li in opts:
            for v in typed_values(f, text):
                _add(pool, v, li, "hit", label=h.label, direction=_direction(ctx, h.line, li))
    for p in ctx.pairs:
        for text, li in zip(p.options, p.value_lines, strict=True):
            for v in typed_values(f, text):
                _add(pool, v, li, "pair", label=p.label, direction=_direction(ctx, p.line, li))
    if f.name in ctx.mapper:
        v, li = ctx.mapper[f.name]
        _add(pool, v, li, "mapper")
    if f.type == "id":  # an id's O read as 0 beside it (o_as_zero), from the same sources
        for p in list(pool.values()):
            v = o_as_zero(p.value)
            if v is not None and v not in pool:
                pool[v] = replace(p, value=v)
    if f.type == "date" and year_day_month(ctx.dates):
        # the page's year-first dates are year-day-month: each ambiguous one is offered first
        # as the date it is there, written year-month-day, then as printed
        swapped: dict[str, Pooled] = {}
        for v, p in pool.items():
            w = year_month_day(v)
            if w is not None and w not in pool:
                swapped[w] = replace(p, value=w, printed=v)
            swapped.setdefault(v, p)
        pool = swapped
    return [*pool.values(), Pooled(None, -1)]


def _type_fit(f: Field, v: str) -> float:
    pat = _FULL.get(f.type)
    if f.type == "iban" and iban_checksum_ok(v):
        return 1.5  # as a full match of the pattern (1 + 0.5 for containing one)
    if pat is not None:
        return float(bool(pat.fullmatch(v))) + 0.5 * bool(pat.search(v))
    letters = sum(c.isalpha() for c in v)
    digits = sum(c.isdigit() for c in v)
    if f.type == "id":
        return float(digits > 0 and " " not in v) + 0.5 * (digits > 0)
    if f.type == "address":
        return float(digits > 0 and letters > 3)
    return float(letters >= 0.5 * max(1, len(v.replace(" ", ""))))


def _label_vector(ctx: PageContext, f: Field, label: str) -> list[float]:
    if not label:
        return [math.nan] * len(_LABEL_FEATS)
    scores = ctx.label_scores(label)
    own = scores[f.name]
    others = [s for n, s in scores.items() if n != f.name]
    rival = max((max(s[0], s[1] * (s[1] > 0.8)) for s in others), default=0.0)
    rival_concept = max((s[3] for s in others), default=0.0)
    return [*own, rival, rival_concept]


def _left_text(ctx: PageContext, ln: Line, value: str) -> str:
    start = max(0, find_read_as(ln.text, value))
    left = [o.text for o in ctx.row_of.get(ln.index, []) if o.bbox[2] <= ln.bbox[0] + 1e-6]
    left.append(ln.text[:start])
    words = [w for w in " ".join(left).split() if not any(c.isdigit() for c in w)]
    return " ".join(words[-5:])


def pool_features(ctx: PageContext, f: Field, pool: list[Pooled]) -> np.ndarray:
    """Feature matrix (``len(pool)`` x ``len(FEATURES)``) of one field's candidates."""
    n_same = sum(1 for o in ctx.schema if o.type == f.type)
    tcode = float(TYPES.index(f.type)) if f.type in TYPES else float(len(TYPES))
    priors = [p.prior for p in pool if not math.isnan(p.prior)]
    gmax = max(priors, default=math.nan)
    rows_: list[list[float]] = []
    n_lines = max(1, len(ctx.lines))
    top_amount = max(ctx.amounts, default=0.0)
    for p in pool:
        if p.value is None:
            rows_.append([1.0, tcode, n_same, float(ctx.fields[f.name].concept is not None)])
            continue
        v = p.printed or p.value
        ln = _best_line(ctx, f, p)
        left = _left_text(ctx, ln, v)
        ab = ctx.above.get(ln.index)
        hd = ctx.header.get(ln.index)
        span = _value_span(ln, v)
        col_above = _column_text(ctx.by_index[ab], span) if ab is not None else ("", 0)
        col_head = _column_text(ctx.by_index[hd], span)[0] if hd is not None else ""
        labs = [
            _label_vector(ctx, f, p.label),
            _label_vector(ctx, f, left),
            _label_vector(ctx, f, col_above[0]),
            _label_vector(ctx, f, col_head),
        ]
        below = ctx.below.get(ln.index)
        row = ctx.row_of.get(ln.index, [ln])
        pos = [o.index for o in row].index(ln.index) if ln in row else 0
        fonts = [w.font_size for w in ln.words if w.font_size]
        digits = sum(c.isdigit() for c in v)
        letters = sum(c.isalpha() for c in v)
        amount = _amt(v) if f.type == "amount" else math.nan
        date_rank = ctx.dates.index(v) if v in ctx.dates else math.nan
        rows_.append(
            [
                0.0,
                tcode,
                n_same,
                float(ctx.fields[f.name].concept is not None),
                math.nan,  # group-level values are filled below
                gmax,
                math.nan,
                p.prior,
                p.prior_rank,
                p.prior - gmax if priors and not math.isnan(p.prior) else math.nan,
                float("prior" in p.sources),
                float("hit" in p.sources),
                float("pair" in p.sources),
                float("mapper" in p.sources),
                p.direction,
                *(x for lab in labs for x in lab),
                ln.bbox[0] - _left_edge(ctx, ln),
                ln.bbox[1] - ctx.by_index[ab].bbox[3] if ab is not None else math.nan,
                ln.bbox[1] - ctx.by_index[hd].bbox[3] if hd is not None else math.nan,
                _type_fit(f, v),
                float(len(v)),
                float(len(v.split())),
                digits / max(1, len(v)),
                letters / max(1, len(v)),
                len(v) / max(1, len(ln.text)),
                float(ctx.text.count(v)),
                ln.bbox[0],
                ln.bbox[1],
                ln.bbox[2],
                float(ln.page),
                ln.index / n_lines,
                (ln.bbox[3] - ln.bbox[1]) / ctx.med_height,
                median(fonts) / ctx.med_font if fonts and ctx.med_font else math.nan,
                float(len(row)),
                float(len(row) - 1 - pos),
                sum(a <= amount for a in ctx.amounts) / max(1, len(ctx.amounts)),
                float(top_amount > 0 and amount == top_amount),
                date_rank,
                float(len(ctx.dates)),
                math.nan,
                address_likeness(ctx.by_index[below].text) if below is not None else math.nan,
                address_likeness(ctx.by_index[ab].text) if ab is not None else math.nan,
                float(col_above[1]),
                *_block_features(ctx, ln),
                *_span_features(ctx, ln, v),
            ]
        )
    width = len(FEATURES)
    X = np.full((len(pool), width), np.nan)
    for i, r in enumerate(rows_):
        X[i, : len(r)] = r
    label_cols = [FEATURES.index(f"{s}_cue") for s in _LABEL_SLOTS]
    label_best = np.nanmax(np.where(np.isnan(X[:, label_cols]), -1.0, X[:, label_cols]), axis=1)
    X[:, FEATURES.index("label_best")] = np.where(X[:, 0] == 1, np.nan, label_best)
    X[:, FEATURES.index("n_cands")] = len(pool) - 1
    X[:, FEATURES.index("group_max_prior")] = gmax
    X[:, FEATURES.index("group_max_label")] = np.nanmax(label_best) if len(pool) > 1 else -1.0
    X[:, _KIND_COLS] = _kinds(f, pool)
    if f.type == "amount":
        cents = {round(a * 100) for a in ctx.amounts if a > 0}
        for i, p in enumerate(pool):
            if p.value is not None:
                X[i, _ARITH_COLS] = page_arithmetic(round(_amt(p.value) * 100), cents)
    return X


_ARITH_COLS = [
    FEATURES.index(n)
    for n in ("amount_sum_of_two", "amount_part_of_sum", "amount_gap_rel", "amount_round5")
]


def page_arithmetic(value: int, amounts: set[int]) -> tuple[float, float, float, float]:
    """How an amount (in cents) sits among the page's other printed amounts (cents).

    Returns ``(sum_of_two, part_of_sum, gap_rel, round5)``: whether the value is the sum of two
    other printed amounts (a total: net + tax, items + rounding), whether it and another printed
    amount add up to a third (a part: a subtotal, a tax, a rounding), the gap to the nearest other
    printed amount relative to the value (a total before and after cash rounding are close), and
    whether the value is a multiple of 5 cents. NaN throughout for a value of 0.

    Examples
    --------
    >>> s, p, gap, r5 = page_arithmetic(742, {700, 42, 742, 1000, 258})
    >>> (s, p, round(gap, 3), r5)  # 700 + 42 = 742, 742 + 258 = 1000
    (1.0, 1.0, 0.057, 0.0)
    >>> page_arithmetic(700, {700, 42, 742})[:2]  # a subtotal: part of a sum, not one
    (0.0, 1.0)
    >>> s, p, gap, r5 = page_arithmetic(770, {772, 770, 2})  # 772 rounded to 770
    >>> (s, p, round(gap, 4), r5)
    (0.0, 1.0, 0.0026, 1.0)
    """
    if value <= 0:
        return (math.nan, math.nan, math.nan, math.nan)
    others = amounts - {value}
    sum_of_two = any(value - a in others and value - a != a for a in others if a < value)
    part_of_sum = any(b - value in others for b in others if b > value)
    gap = min((abs(a - value) for a in others), default=math.nan)
    return (float(sum_of_two), float(part_of_sum), gap / value, float(value % 5 == 0))


_KIND_COLS = [FEATURES.index(n) for n in ("kind_own", "kind_other", "kind_rival")]


def _kinds(f: Field, pool: list[Pooled]) -> np.ndarray:
    """``kind_own``, ``kind_other``, ``kind_rival`` of each candidate: how much its text reads
    like a value of the field's kind, like a line that is no field's value, and like the most
    likely other kind (:mod:`confidence.documents.value_kinds`); NaN for the null candidate and
    for fields whose type has no kind."""
    out = np.full((len(pool), 3), np.nan)
    kind = field_kind(f)
    rows = [i for i, p in enumerate(pool) if p.value is not None]
    model = default_value_kinds()
    classes = model.classes_.tolist()
    if kind not in classes or not rows:
        return out
    P = model.predict_proba([pool[i].printed or pool[i].value for i in rows])
    own = classes.index(kind)
    other = classes.index("other") if "other" in classes else None
    rival = [j for j in range(len(classes)) if j not in (own, other)]
    out[rows, 0] = P[:, own]
    if other is not None:
        out[rows, 1] = P[:, other]
    if rival:
        out[rows, 2] = P[:, rival].max(axis=1)
    return out


def _value_span(ln: Line, value: str) -> tuple[float, float]:
    """Horizontal extent of ``value``'s words within its line (proportional if not word-exact)."""
    texts = [w.text for w in ln.words]
    n = len(value.split())
    for i in range(len(texts) - n + 1):
        if " ".join(texts[i : i + n]) == value:
            return ln.words[i].bbox[0], ln.words[i + n - 1].bbox[2]
    start = find_read_as(ln.text, value)
    if start < 0 or not ln.text:
        return ln.bbox[0], ln.bbox[2]
    w = (ln.bbox[2] - ln.bbox[0]) / len(ln.text)
    return ln.bbox[0] + w * start, ln.bbox[0] + w * (start + len(value))


def _column_text(above: Line, span: tuple[float, float]) -> tuple[str, int]:
    """The part of the line above that heads the value's column, and how many parts it has.

    The line is cut into segments at wide gaps (a header row of several labels); the segments
    overlapping the value's extent (else the nearest one) are the value's column label.
    """
    ws = above.words
    if len(ws) < 2:
        return above.text, 1
    height = median(w.bbox[3] - w.bbox[1] for w in ws) or 0.01
    segs: list[list] = [[ws[0]]]
    for a, b in pairwise(ws):
        if b.bbox[0] - a.bbox[2] > 1.2 * height:
            segs.append([])
        segs[-1].append(b)
    if len(segs) == 1:
        return above.text, 1
    x0, x1 = span
    hit = [g for g in segs if min(g[-1].bbox[2], x1) - max(g[0].bbox[0], x0) > 0]
    if not hit:
        mid = (x0 + x1) / 2
        hit = [min(segs, key=lambda g: abs((g[0].bbox[0] + g[-1].bbox[2]) / 2 - mid))]
    return " ".join(w.text for g in hit for w in g), len(segs)


def _left_edge(ctx: PageContext, ln: Line) -> float:
    """Right edge of the nearest line left of ``ln`` on its row (or ``ln``'s own left)."""
    left = [o.bbox[2] for o in ctx.row_of.get(ln.index, []) if o.bbox[2] <= ln.bbox[0] + 1e-6]
    return max(left, default=ln.bbox[0])


VOCABULARY_FEATURES: tuple[str, ...] = (
    "field_has_concept",
    *(f"{s}_{f}" for s in _LABEL_SLOTS for f in ("cue", "concept")),
)
"""Features that need the label vocabulary to know the field (its concept and cue table)."""


def without_vocabulary(X: np.ndarray) -> np.ndarray:
    """``X`` as it would look for a field the vocabulary does not know (training augmentation).

    A field of an unseen schema has no concept and no cue-table phrases, so its rows carry
    zeros there and only name/description similarity speaks for a label; training on such
    copies teaches the ranker to read those fields too.

    Examples
    --------
    >>> X = np.ones((2, len(FEATURES)))
    >>> int(without_vocabulary(X)[:, FEATURES.index("left_concept")].sum())
    0
    """
    out = np.array(X, dtype=float, copy=True)
    cols = [FEATURES.index(n) for n in VOCABULARY_FEATURES]
    out[:, cols] = np.where(np.isnan(out[:, cols]), np.nan, 0.0)
    # a text field of no known concept has no kind (a name, payment terms): unknown
    text = out[:, FEATURES.index("field_type")] == TYPES.index("text")
    out[np.ix_(text, _KIND_COLS)] = np.nan
    return out


LABEL_FEATURES: tuple[str, ...] = (
    "src_hit",
    *(f"{s}_{f}" for s in _LABEL_SLOTS for f in ("cue", "tok", "ngram", "concept")),
)
"""Features saying how well a printed label names the field (rival cues left out)."""


def without_labels(X: np.ndarray) -> np.ndarray:
    """``X`` as if the field's printed label were a word the ranker cannot tie to it.

    Real documents print labels no vocabulary lists (abbreviations, house styles); a ranker
    trained only on synthetic pages, whose labels all come from the locale tables, learns that
    a field without a recognised label is absent. Training on such copies of present fields
    teaches it to fall back on layout and value shape. The group-level label columns
    (``label_best``, ``group_max_label``) are recomputed.

    Examples
    --------
    >>> X = np.ones((2, len(FEATURES))); X[:, 0] = [0.0, 1.0]
    >>> Z = without_labels(X)
    >>> int(Z[:, FEATURES.index("left_cue")].sum()), float(Z[0, FEATURES.index("label_best")])
    (0, 0.0)
    """
    out = np.array(X, dtype=float, copy=True)
    cols = [FEATURES.index(n) for n in LABEL_FEATURES]
    out[:, cols] = np.where(np.isnan(out[:, cols]), np.nan, 0.0)
    cue_cols = [FEATURES.index(f"{s}_cue") for s in _LABEL_SLOTS]
    best = np.nanmax(np.where(np.isnan(out[:, cue_cols]), -1.0, out[:, cue_cols]), axis=1)
    null = out[:, 0] == 1
    out[:, FEATURES.index("label_best")] = np.where(null, np.nan, best)
    out[:, FEATURES.index("group_max_label")] = best[~null].max() if (~null).any() else -1.0
    return out

"""OCR-evidence features (``ocr_*``): is each call's value on the page, and how well was it read.

Per call (``ocr_h_*`` Hunter, ``ocr_m_*`` Mapper): found at all, found exactly, match score,
number of exact occurrences in the document, mean/min OCR confidence of the matched words (see
:mod:`confidence.documents.search` for how values are found). Shared: OCR confidence of the label
next to the reported value, whether that page came from a PDF text layer, the page's mean OCR
confidence, the document's word count, the reported value's key length, and whether that page's
words come from a restored raster (faint print read again, ``docs/ingestion.md`` step 8: such a
page reads legibly but its misread values look as confident as the rest).

``ocr_alone_agree``: of the reported value's words that ingestion read a second time, each cut
out and read alone (the words with a digit, :mod:`confidence.documents.alone`), the share whose
second reading says the same letters and digits. A value whose second reading differs has a
character one of the two readings got wrong (``11/06/2018`` read again ``11/05/2018``) -- the
misread that OCR confidence, logprobs and the Hunter/Mapper agreement all miss, since every
reading downstream reads the same OCR text. NaN when none of its words was read again (no
digit, a digital text layer, the value not found on the page, or a page ingested before
ingestion version 11).

``ocr_alone_alt``: 1 when the value's words, read alone, make another well-formed value of the
field's type (:func:`confidence.features.validity.is_valid`; for types without a syntax, any
letter or digit): ``11/05/2018`` for the date ``11/06/2018``, ``53.20`` for the total ``55.20``.
0 when its words were read again and give no such value (they agree, or the second reading is
not a value of the type: ``1l/O5/2O18``, nothing). Such a second reading says one of the two
misread a character the type allows, the misread a well-formed check cannot see. NaN as for
``ocr_alone_agree``.
"""

from __future__ import annotations

import math

from confidence.documents import FAINT_PRINT_NOTE
from confidence.documents.alone import agrees, reading_alone
from confidence.documents.normalize import parse_amount, parse_date, parse_percent
from confidence.documents.page_index import Label, Match
from confidence.documents.search import DocumentIndex
from confidence.documents.text import fold
from confidence.features.validity import is_valid

__all__ = ["NAMES", "values"]

_PER_CALL = ("found", "exact", "score", "n_occurrences", "conf_mean", "conf_min")
NAMES: tuple[str, ...] = (
    *(f"ocr_{c}_{s}" for c in ("h", "m") for s in _PER_CALL),
    "ocr_label_conf",
    "ocr_source_pdf",
    "ocr_page_conf_mean",
    "ocr_doc_words_log",
    "ocr_value_chars",
    "ocr_page_restored",
    "ocr_alone_agree",
    "ocr_alone_alt",
)
_NAN = math.nan
_PARSERS = {"date": parse_date, "amount": parse_amount, "percent": parse_percent}


def _per_call(index: DocumentIndex, value: str | None, match: Match | None) -> list[float]:
    if value is None or not value.strip():
        return [_NAN] * 6
    n_occ = float(index.count(value))
    if match is None:
        return [0.0, 0.0, 0.0, n_occ, _NAN, _NAN]
    confs = match.confs
    return [
        1.0,
        float(match.exact),
        match.score,
        n_occ,
        sum(confs) / len(confs),
        min(confs),
    ]


def values(
    index: DocumentIndex,
    hunter: str | None,
    mapper: str | None,
    hunter_match: Match | None,
    mapper_match: Match | None,
    reported: str | None,
    reported_match: Match | None,
    label: Label | None,
    field_type: str | None = None,
) -> list[float]:
    """Feature values in :data:`NAMES` order.

    ``reported``/``reported_match`` is the value the engine reports and where it was found;
    its page (the first page when not found) gives the page-level values. ``field_type`` is
    the field's type (for ``ocr_alone_alt``; None: a type without a syntax).
    """
    out = _per_call(index, hunter, hunter_match) + _per_call(index, mapper, mapper_match)
    out.append(label.ocr_conf if label is not None else _NAN)
    restored = _NAN
    if index.pages:
        page = index.pages[reported_match.page if reported_match is not None else 0]
        out += [float(page.page.source == "pdf"), page.mean_conf]
        restored = float(any(n.startswith(FAINT_PRINT_NOTE) for n in page.page.notes))
    else:
        out += [_NAN, _NAN]
    out.append(math.log1p(index.n_words))
    out.append(float(len(fold(reported))) if reported is not None else _NAN)
    out.append(restored)
    out.append(_alone_agree(index, reported_match))
    out.append(_alone_alt(index, reported_match, field_type))
    return out


def _alone_agree(index: DocumentIndex, match: Match | None) -> float:
    """Share of the matched words read again alone whose second reading agrees (NaN: none)."""
    if match is None or not index.pages:
        return _NAN
    words = index.pages[match.page].page.words
    again = [words[i] for i in match.indices if words[i].alone is not None]
    if not again:
        return _NAN
    return sum(agrees(w.text, w.alone) for w in again) / len(again)


def _alone_alt(index: DocumentIndex, match: Match | None, field_type: str | None) -> float:
    """1 if the matched words read alone make another value of the type, 0 if not (NaN: no
    word was read again)."""
    if match is None or not index.pages:
        return _NAN
    words = index.pages[match.page].page.words
    chosen = [words[i] for i in match.indices]
    if not any(w.alone is not None for w in chosen):
        return _NAN
    other = reading_alone(chosen)
    if other is None:
        return 0.0
    valid = is_valid(field_type, other) if field_type is not None else None
    if valid is None:  # a type without a syntax: any letter or digit reads as a value
        return float(any(c.isalnum() for c in other))
    parse = _PARSERS.get(field_type)
    if valid and parse is not None:  # another value, not the same one spelt otherwise (RM 8.60)
        return float(parse(other) != parse(" ".join(w.text for w in chosen)))
    return float(valid)

"""Text folding for matching: the one place that decides when two printed strings are "the same".

Two folds, for two jobs:

:func:`fold`
    the *key* of a string: NFKC-normalised, case-folded and reduced to its runs of letters and
    runs of digits, so ``"1,234.50"`` and ``"1234.50"`` or ``"INV-001"`` and ``"inv 001"`` meet.
    Values are searched on a page by key, and identifiers are compared by key. Run ends are *key
    boundaries*: a value only matches exactly when it starts and ends on one (:func:`word_key`,
    :func:`page_string`).
:func:`fold_text`
    the *words* of a string: case-folded, accents dropped, punctuation turned into single spaces
    (``"N° de Facture:"`` -> ``"n de facture"``). Labels are looked up and names and addresses
    compared by their words, where the spaces between them still matter.

Every function is memoised on the string, because the same words recur across fields and
documents; ASCII text (most of it) takes a shortcut that gives the same result without Unicode
normalisation.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from itertools import accumulate

__all__ = [
    "SHAPE",
    "fold",
    "fold_text",
    "is_numeric",
    "numeric_flags",
    "page_keys",
    "page_string",
    "strip_accents",
    "word_key",
]

_RUN = re.compile(r"\d+|[^\W\d_]+")
# On ASCII text NFKC is the identity, casefold is lower() and the runs are these.
_RUN_ASCII = re.compile(r"[0-9]+|[a-z]+")
_CACHE = 1 << 17

SHAPE = str.maketrans({"o": "0", "i": "1", "l": "1", "s": "5", "b": "8", "z": "2"})
"""Look-alike letters mapped to digits (``str.translate`` table) for OCR-slip matching."""


def _runs(text: str) -> list[str]:
    if text.isascii():
        return _RUN_ASCII.findall(text.lower())
    return _RUN.findall(unicodedata.normalize("NFKC", text).casefold())


@lru_cache(maxsize=_CACHE)
def fold(text: str) -> str:
    """Matching key of a string: NFKC, case-folded, letters and digits only.

    Idempotent (``fold(fold(s)) == fold(s)``) and total over any ``str``.

    Examples
    --------
    >>> fold("Total: 1,234.50 EUR")
    'total123450eur'
    >>> fold("INV-0001") == fold("inv 0001"), fold("FA02/2015/020059")
    (True, 'fa022015020059')
    """
    out = "".join(_runs(text))
    if out.isascii():  # ASCII letters and digits are already a fixed point
        return out
    # NFKC/casefold can recompose or expand characters once separators are gone; iterate to a
    # fixed point so the key is idempotent.
    for _ in range(4):
        nxt = "".join(_RUN.findall(unicodedata.normalize("NFKC", out).casefold()))
        if nxt == out:
            break
        out = nxt
    return out


@lru_cache(maxsize=_CACHE)
def strip_accents(text: str) -> str:
    """NFKC, case-folded, with combining accents removed (``"Émise"`` -> ``"emise"``).

    Examples
    --------
    >>> strip_accents("Fälligkeit März")
    'falligkeit marz'
    """
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@lru_cache(maxsize=_CACHE)
def fold_text(text: str) -> str:
    """Words of a string: :func:`strip_accents`, punctuation to spaces, single spaces.

    Examples
    --------
    >>> fold_text("  ACME CO .K (NORTH PARK) LTD ")
    'acme co k north park ltd'
    >>> fold_text("N° de Facture:"), fold_text("USt-IdNr."), fold_text("États-Unis")
    ('n de facture', 'ust idnr', 'etats unis')
    """
    return " ".join(re.sub(r"[\W_]+", " ", strip_accents(text)).split())


@lru_cache(maxsize=_CACHE)
def word_key(text: str) -> tuple[str, tuple[int, ...]]:
    """A word's contribution to its page string and the offsets in it where its runs end.

    Unlike :func:`fold` the key is not iterated to a fixed point: the page string is the plain
    concatenation of its words' runs, and run ends are the key boundaries inside the word.

    Examples
    --------
    >>> word_key("Total:12.50")
    ('total1250', (5, 7, 9))
    >>> word_key("--")
    ('', ())
    """
    runs = _runs(text)
    ends: list[int] = []
    pos = 0
    for run in runs:
        pos += len(run)
        ends.append(pos)
    return "".join(runs), tuple(ends)


_SEP = "\x00"
_ASCII = [chr(c) for c in range(128)]
_KEEP_ALNUM = str.maketrans("", "", "".join(c for c in _ASCII if not c.isalnum() and c != _SEP))
_KEEP_DIGITS = str.maketrans("", "", "".join(c for c in _ASCII if not c.isdigit() and c != _SEP))
_ONLY_DIGITS = str.maketrans("", "", "".join(c for c in _ASCII if not c.isdigit()))


def _ascii_digits(text: str) -> str | None:
    return text.translate(_ONLY_DIGITS) if text.isascii() else None


def page_keys(texts: Sequence[str]) -> tuple[list[str], list[str | None]]:
    """Keys (:func:`word_key`) and ASCII digits of many words at once.

    The second list holds each word's digits in order, or None for a word that is not pure
    ASCII. An all-ASCII page (the usual case) is keyed in a few passes over its joined text
    instead of word by word.

    Examples
    --------
    >>> page_keys(["Total:", "1,234.50", "Ça"])
    (['total', '123450', 'ça'], ['', '123450', None])
    """
    joined = _SEP.join(texts)
    if joined.isascii() and joined.count(_SEP) == len(texts) - 1 and texts:
        keys = joined.lower().translate(_KEEP_ALNUM).split(_SEP)
        return keys, joined.translate(_KEEP_DIGITS).split(_SEP)  # type: ignore[return-value]
    return [word_key(t)[0] for t in texts], [_ascii_digits(t) for t in texts]


def page_string(texts: Sequence[str]) -> tuple[str, list[int], set[int]]:
    """The page string of words in reading order: their keys joined, each key's length, and
    the key boundaries (offsets where a run ends, and 0).

    Examples
    --------
    >>> page_string(["Total:12.50", "INV-", "42"])
    ('total1250inv42', [9, 3, 2], {0, 5, 7, 9, 12, 14})
    """
    joined = _SEP.join(texts)
    if joined.isascii() and joined.count(_SEP) == len(texts) - 1 and texts:
        # Runs never cross the separator, so one pass finds every word's runs.
        low = joined.lower()
        runs = _RUN_ASCII.findall(low)
        lens = [len(k) for k in low.translate(_KEEP_ALNUM).split(_SEP)]
        return "".join(runs), lens, {0, *accumulate(map(len, runs))}
    parts: list[str] = []
    lens = []
    bounds = {0}
    pos = 0
    for t in texts:
        key, ends = word_key(t)
        parts.append(key)
        lens.append(len(key))
        bounds.update([pos + e for e in ends])
        pos += len(key)
    return "".join(parts), lens, bounds


def numeric_flags(
    texts: Sequence[str], keys: Sequence[str], digits: Sequence[str | None]
) -> list[bool]:
    """:func:`is_numeric` of many words, given their :func:`page_keys`.

    Examples
    --------
    >>> texts = ["12.50", "Total", "INV-001"]
    >>> numeric_flags(texts, *page_keys(texts))
    [True, False, True]
    """
    return [
        is_numeric(t) if d is None else (len(d) > 0 and 2 * len(d) >= len(k))
        for t, k, d in zip(texts, keys, digits, strict=True)
    ]


@lru_cache(maxsize=_CACHE)
def is_numeric(text: str) -> bool:
    """Whether a word is mostly digits (at least half of its letters and digits, and one digit).

    Examples
    --------
    >>> is_numeric("12.50"), is_numeric("A1"), is_numeric("INV-001"), is_numeric("x")
    (True, True, True, False)
    """
    digits = sum(ch.isdigit() for ch in text)
    return digits > 0 and 2 * digits >= sum(ch.isalnum() for ch in text)

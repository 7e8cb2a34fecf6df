"""Typed search: the first span of one to four words whose type-aware normal form equals a value's.

Finds ``25/12/2018`` on the page for the value ``2018-12-25`` or ``1.234,50`` for ``1234.50``
(dates and amounts; :func:`confidence.documents.normalize.normalize` decides equality). Spans lie
within one reading-order line and contain a digit; shorter spans come first, so a value is not
credited with the label before it (``Date: 25/12/2018``), then reading order.

Normalising every span of a page is slow (a date parser fallback costs about a millisecond per
span with letters), so spans that cannot normalise to the target are skipped unparsed. The test
is a *necessary* condition, so the span found is the one an exhaustive scan would find: in ASCII
text an amount equal to the target spells the target's significant digits consecutively (digits
are read from one number, separators and signs dropped), and a date spells its day number and
the last two digits of its year (no parser reads days or years from words). Non-ASCII text
(other digit scripts, full-width digits, CJK dates) is always parsed.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from confidence.documents.normalize import normalize
from confidence.types import Word

__all__ = ["TypedSpans"]

_MAX_WORDS = 4


def _ascii_digits(text: str) -> str | None:
    """The word's ASCII digits in order, None when the word is not pure ASCII."""
    if not text.isascii():
        return None
    return "".join(filter(str.isdigit, text))


def _needles(field_type: str, target: Any) -> tuple[str, ...]:
    """Digit strings any ASCII span normalising to ``target`` contains."""
    if field_type == "amount" and isinstance(target, Decimal) and target.is_finite():
        return (format(abs(target), "f").replace(".", "").strip("0"),)
    if field_type == "date" and isinstance(target, str) and len(target) == 10:
        year, _, day = target[2:4], target[5:7], target[8:10]
        if (year + day).isdigit():
            return (year, str(int(day)))
    return ()


class TypedSpans:
    """Typed lookups on one page, memoised per (field type, normal form).

    Parameters
    ----------
    words : tuple of Word
        The page's words.
    lines : list of list of int
        Reading-order lines of word indices (:func:`confidence.documents.lines.group_lines`).
    ascii_digits : sequence of str or None, optional
        Per word, its ASCII digits in order or None when it is not ASCII (computed when omitted;
        :func:`confidence.documents.text.page_keys` gives them).

    Examples
    --------
    >>> from confidence.types import Word
    >>> words = (Word("Date:", (0.1, 0.1, 0.2, 0.12)), Word("25/12/2018", (0.3, 0.1, 0.4, 0.12)))
    >>> TypedSpans(words, [[0, 1]]).find("date", "2018-12-25")
    (1,)
    """

    def __init__(
        self,
        words: Sequence[Word],
        lines: list[list[int]],
        ascii_digits: Sequence[str | None] | None = None,
    ) -> None:
        self.words = words
        self.lines = lines
        texts = [w.text for w in words]
        self._texts = texts
        if ascii_digits is None:
            ascii_digits = [_ascii_digits(t) for t in texts]
        self._digits = ascii_digits
        self._has_digit = [
            bool(d) if d is not None else any(ch.isdigit() for ch in t)
            for t, d in zip(texts, ascii_digits, strict=True)
        ]
        # Per line: its ASCII digits joined, or None when a word is not ASCII (never skipped).
        self._line_digits: list[str | None] = []
        for line in lines:
            parts = [self._digits[i] for i in line]
            self._line_digits.append(None if None in parts else "".join(parts))  # type: ignore[arg-type]
        self._memo: dict[tuple[str, Any], tuple[int, ...] | None] = {}

    def find(self, field_type: str, value: str) -> tuple[int, ...] | None:
        """Word indices of the first span normalising like ``value``, or None."""
        target = normalize(field_type, value)
        if target is None:
            return None
        key = (field_type, target)
        if key not in self._memo:
            self._memo[key] = self._scan(
                field_type, target, _needles(field_type, target), normalize
            )
        return self._memo[key]

    def _could_be(self, span: tuple[int, ...], needles: tuple[str, ...]) -> bool:
        parts = [self._digits[i] for i in span]
        if None in parts:
            return True
        digits = "".join(parts)  # type: ignore[arg-type]
        return all(n in digits for n in needles)

    def _scan(
        self, field_type: str, target: Any, needles: tuple[str, ...], normalize
    ) -> tuple[int, ...] | None:
        lines = [
            line
            for line, digits in zip(self.lines, self._line_digits, strict=True)
            if digits is None or all(n in digits for n in needles)
        ]
        if not lines:
            return None
        has_digit, texts = self._has_digit, self._texts
        for size in range(1, _MAX_WORDS + 1):
            for line in lines:
                for a in range(len(line) - size + 1):
                    span = tuple(line[a : a + size])
                    if not any(has_digit[i] for i in span):
                        continue
                    if needles and not self._could_be(span, needles):
                        continue
                    text = " ".join(texts[i] for i in span)
                    try:
                        norm = normalize(field_type, text)
                    except Exception:  # a parser bug must not lose the document's features
                        norm = None
                    if norm is not None and norm == target:
                        return span
        return None

"""Parse a JSON-object completion and align each value to the tokens that spell it.

The Hunter's per-field logprob features need the tokens of *this field's value*, not of the
whole reply. We scan the reply ourselves (rather than ``json.loads``) so that each top-level
value keeps its character span, then select the tokens whose character range overlaps that span.
The scanner is lenient: it skips code fences and prose before the object, and recovers the
complete key/value pairs of a truncated reply.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from confidence.llm.base import TokenLogprob


@dataclass(frozen=True)
class Span:
    """One top-level ``"key": value`` pair of the reply.

    ``start``/``end`` delimit the value's characters in the reply (inside the quotes for strings).
    """

    key: str
    value: object
    start: int
    end: int


@dataclass(frozen=True)
class Parsed:
    """Result of :func:`parse_object`: the pairs found and what went wrong, if anything."""

    spans: tuple[Span, ...]
    complete: bool
    error: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {s.key: s.value for s in self.spans}


_DEC = json.JSONDecoder()


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def parse_object(text: str) -> Parsed:
    """Scan the first JSON object in ``text``, keeping the character span of every value.

    Examples
    --------
    >>> p = parse_object('{"total": "9.00", "n": 3}')
    >>> [(s.key, s.value, '{"total": "9.00", "n": 3}'[s.start:s.end]) for s in p.spans]
    [('total', '9.00', '9.00'), ('n', 3, '3')]
    >>> cut = '```json\\n{"a": "x", "b": "tru'
    >>> parse_object(cut).as_dict(), parse_object(cut).complete
    ({'a': 'x'}, False)
    """
    start = text.find("{")
    if start < 0:
        return Parsed((), False, "no JSON object in the reply" if text.strip() else "empty reply")
    i = _skip_ws(text, start + 1)
    spans: list[Span] = []
    while True:
        if i >= len(text):
            return Parsed(tuple(spans), False, "reply ends inside the JSON object (truncated)")
        if text[i] == "}":
            return Parsed(tuple(spans), True)
        try:
            key, i = _DEC.raw_decode(text, i)
        except json.JSONDecodeError as e:
            return Parsed(tuple(spans), False, _decode_error(text, e))
        if not isinstance(key, str):
            return Parsed(
                tuple(spans), False, f"malformed JSON at character {i}: key is not a string"
            )
        i = _skip_ws(text, i)
        if i >= len(text) or text[i] != ":":
            return Parsed(tuple(spans), False, f"malformed JSON at character {i}: expected ':'")
        i = _skip_ws(text, i + 1)
        try:
            value, end = _DEC.raw_decode(text, i)
        except json.JSONDecodeError as e:
            return Parsed(tuple(spans), False, _decode_error(text, e))
        s, e_ = (i + 1, end - 1) if isinstance(value, str) else (i, end)
        spans.append(Span(key, value, s, e_))
        i = _skip_ws(text, end)
        if i < len(text) and text[i] == ",":
            i = _skip_ws(text, i + 1)
        elif i < len(text) and text[i] != "}":
            return Parsed(
                tuple(spans), False, f"malformed JSON at character {i}: expected ',' or '}}'"
            )


def _decode_error(text: str, e: json.JSONDecodeError) -> str:
    if "}" not in text[e.pos :]:  # the reply stopped before the object closed
        return "reply ends inside the JSON object (truncated)"
    return f"malformed JSON at character {e.pos}: {e.msg}"


def token_offsets(tokens: tuple[TokenLogprob, ...]) -> list[tuple[int, int]]:
    """Character ``[start, end)`` of each token in the concatenated text."""
    out, pos = [], 0
    for t in tokens:
        out.append((pos, pos + len(t.token)))
        pos += len(t.token)
    return out


def tokens_for_span(
    tokens: tuple[TokenLogprob, ...] | None, text: str, start: int, end: int
) -> tuple[TokenLogprob, ...] | None:
    """The tokens overlapping characters ``[start, end)`` of ``text``.

    ``None`` when there are no tokens (provider without logprobs) or when the tokens do not spell
    ``text`` (so offsets would be meaningless); features then treat logprobs as missing.

    Examples
    --------
    >>> toks = tuple(TokenLogprob(t, -0.1) for t in ('{"t": "', "9", ".00", '"}'))
    >>> [t.token for t in tokens_for_span(toks, '{"t": "9.00"}', 7, 11)]
    ['9', '.00']
    """
    if tokens is None or "".join(t.token for t in tokens) != text:
        return None
    if end <= start:
        return ()
    return tuple(
        t for t, (a, b) in zip(tokens, token_offsets(tokens), strict=True) if a < end and b > start
    )

"""Forced-token decoding of a JSON object whose every value is an ``enum``.

A grammar-constrained call (:mod:`confidence.llm.grammar`) decodes such a reply one token at a
time, although almost all of it is fixed: the braces, the keys, the quotes, and every token of a
value once the options left share it. Only the branch points between a field's options are
choices. :func:`decode_enum_object` decodes the same reply with one batched forward pass per
branch point: fixed tokens are emitted without a sampling step and evaluated together, and the
model's logits are read only where they are needed, at a branch point (to choose) and before
each value token (to score it).

The choice at a branch point is the grammar's: greedy (or sampled at ``temperature``) among the
next tokens the remaining options allow, each option spelled by its canonical tokenization. Text
that all remaining options share (``2022-06-`` of ``2022-06-10`` and ``2022-06-24``, up to a word
boundary: :func:`shared_prefix`) is spelled in its own tokenization without a choice, where the
grammar would let the model choose among its spellings one token per step: the options reached
are the same, and each shared token costs no forward pass of its own.
Value tokens keep the model's own log-probability and top-k alternatives (temperature 1,
before any mask), exactly as :class:`~confidence.llm.token_capture.TopKCapture` records them
for grammar decoding. Fixed scaffold tokens carry log-probability 0.0 and no alternatives: they
were never the model's choice, and no feature reads them.

The model is reached through an *evaluator*: a callable ``evaluate(tokens, want)`` that appends
``tokens`` to the context and returns the logits row after each token whose ``want`` is true.
Tests drive the decoder with a fake evaluator; :class:`~confidence.llm.local.LocalLlamaClient`
passes one over llama.cpp's batch API.

Examples
--------
>>> enum_slots({"type": "object", "properties": {"t": {"enum": ["9.00", "8.00"]}},
...             "required": ["t"], "additionalProperties": False})
[Slot(key='t', options=('9.00', '8.00'))]
>>> enum_slots({"type": "object", "properties": {"t": {"type": "string"}}}) is None
True
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Evaluate = Callable[[Sequence[int], Sequence[bool]], list[np.ndarray]]
"""``evaluate(tokens, want) -> rows``: extend the context, return the rows that were asked for."""


@dataclass(frozen=True)
class Slot:
    """One key of the reply object and the values it may take (``None`` is JSON null)."""

    key: str
    options: tuple[Any, ...]

    @property
    def strings(self) -> bool:
        """All options are strings: the quotes are scaffold and the options spell the inside."""
        return all(isinstance(o, str) for o in self.options)


def enum_slots(schema: dict[str, Any] | None) -> list[Slot] | None:
    """The slots of an object schema whose properties are all required, non-empty enums.

    Returns None for any other schema (the caller then decodes with the grammar).
    """
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return None
    props = schema.get("properties")
    if not isinstance(props, dict) or not props:
        return None
    if set(schema.get("required") or ()) != set(props) or schema.get("additionalProperties", False):
        return None
    slots = []
    for key, node in props.items():
        if not isinstance(node, dict) or set(node) != {"enum"} or not node["enum"]:
            return None
        if not all(o is None or isinstance(o, str | int | float | bool) for o in node["enum"]):
            return None
        opts = tuple(dict.fromkeys(node["enum"]))  # a repeated option is one choice
        slots.append(Slot(str(key), opts))
    return slots


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def reply_chunks(slots: list[Slot]) -> list[str]:
    """The fixed text between values: ``len(slots) + 1`` chunks.

    String slots put their quotes in the chunks, so the options spell only the value itself.

    Examples
    --------
    >>> reply_chunks([Slot("a", ("x",)), Slot("b", (None,))])
    ['{ "a": "', '", "b": ', '}']
    """
    chunks, close = [], ""
    for i, s in enumerate(slots):
        opening = '"' if s.strings else ""
        chunks.append(close + ("{ " if i == 0 else ", ") + f"{_dump(s.key)}: " + opening)
        close = opening
    chunks.append(close + "}")
    return chunks


def option_text(slot: Slot, option: Any) -> str:
    """How ``option`` is spelled between the chunks of ``slot``."""
    return option if slot.strings else _dump(option)


@dataclass
class Emitted:
    """One reply token: id, log-probability and top-k alternatives (ids), once known."""

    token: int
    scored: bool
    logprob: float = 0.0
    top: tuple[tuple[int, float], ...] = ()


def log_softmax_top(row: np.ndarray, k: int) -> tuple[np.ndarray, tuple[tuple[int, float], ...]]:
    """Log-softmax of a logits row (float64) and its top-``k`` ``(id, logprob)``, best first.

    Examples
    --------
    >>> lp, top = log_softmax_top(np.array([0.0, 1.0, 2.0]), 2)
    >>> [(i, round(v, 3)) for i, v in top], round(float(lp[0]), 3)
    ([(2, -0.408), (1, -1.408)], -2.408)
    """
    r = np.asarray(row, dtype=np.float64)
    m = float(r.max())
    lp = r - (m + float(np.log(np.exp(r - m).sum())))
    if k <= 0:
        return lp, ()
    k = min(k, lp.size)
    idx = np.argpartition(lp, -k)[-k:]
    idx = idx[np.argsort(-lp[idx], kind="stable")]
    return lp, tuple((int(i), float(lp[i])) for i in idx)


class _Stream:
    """Tokens waiting for one batched evaluation, and which rows score which emitted token."""

    def __init__(self, evaluate: Evaluate, row: np.ndarray, k: int) -> None:
        self.evaluate = evaluate
        self.k = k
        self.row: np.ndarray | None = row  # logits after the last evaluated token
        self.out: list[Emitted] = []
        self.pending: list[int] = []
        self.want: list[int | None] = []  # per pending token: index in out its row scores
        self.n_evals = 0

    def push(self, token: int, scored: bool) -> None:
        self.out.append(Emitted(token, scored))
        if scored:
            if self.pending:
                self.want[-1] = len(self.out) - 1
            else:
                self._score(len(self.out) - 1, self._current())
        self.pending.append(token)
        self.want.append(None)

    def _score(self, i: int, row: np.ndarray) -> None:
        lp, top = log_softmax_top(row, self.k)
        e = self.out[i]
        e.logprob, e.top = float(lp[e.token]), top

    def _current(self) -> np.ndarray:
        assert self.row is not None
        return self.row

    def next_row(self) -> np.ndarray:
        """The logits predicting the next token (evaluates what is pending)."""
        if not self.pending:
            return self._current()
        self.want[-1] = -1 if self.want[-1] is None else self.want[-1]
        self.flush()
        return self._current()

    def flush(self, *, last_needed: bool = True) -> None:
        """Evaluate the pending tokens (``last_needed=False``: only up to the last scored one)."""
        if not last_needed:
            wanted = [i for i, w in enumerate(self.want) if w is not None]
            cut = wanted[-1] + 1 if wanted else 0
            self.pending, self.want = self.pending[:cut], self.want[:cut]
        if not self.pending:
            return
        flags = [w is not None for w in self.want]
        rows = self.evaluate(self.pending, flags)
        self.n_evals += 1
        targets = [w for w in self.want if w is not None]
        self.row = None
        for w, row in zip(targets, rows, strict=True):
            if w >= 0:
                self._score(w, row)
        if self.want[-1] is not None:
            self.row = rows[-1]
        self.pending, self.want = [], []


def decode_enum_object(
    slots: list[Slot],
    evaluate: Evaluate,
    tokenize: Callable[[bytes], list[int]],
    vocab: Mapping[bytes, int],
    first_row: np.ndarray,
    *,
    top_logprobs: int = 5,
    temperature: float = 0.0,
    rng: np.random.Generator | None = None,
    max_tokens: int | None = None,
) -> tuple[list[Emitted], int, bool]:
    """Decode the reply object of ``slots`` with forced scaffold tokens.

    Parameters
    ----------
    slots : list of Slot
        From :func:`enum_slots`.
    evaluate : callable
        ``evaluate(tokens, want) -> rows`` (see the module docstring).
    tokenize : callable
        UTF-8 bytes -> token ids (no special tokens, no BOS).
    vocab : mapping
        Each token's bytes -> its id (the tokens that may start a branch).
    first_row : ndarray
        The logits row after the prompt.
    top_logprobs : int
        Alternatives kept per value token.
    temperature : float
        0 is greedy; otherwise the choice at a branch point is sampled from the allowed tokens.
    rng : numpy Generator, optional
        Needed when ``temperature > 0``.
    max_tokens : int, optional
        Stop after this many reply tokens (the reply is then cut).

    Returns
    -------
    tokens : list of Emitted
        The reply tokens in order (their texts concatenate to the reply).
    n_evals : int
        Batched forward passes made.
    complete : bool
        False when ``max_tokens`` cut the reply.

    Examples
    --------
    A fake model that always prefers token 2 ("b"), with one character per token:

    >>> vocab = ['{', ' ', '"', 't', ':', 'a', 'b', '}']
    >>> def tokenize(text):
    ...     return [vocab.index(c) for c in text.decode()]
    >>> def evaluate(tokens, want):
    ...     return [np.eye(len(vocab))[vocab.index("b")] for w in want if w]
    >>> ids = {c.encode(): i for i, c in enumerate(vocab)}
    >>> out, n_evals, complete = decode_enum_object(
    ...     [Slot("t", ("a", "b"))], evaluate, tokenize, ids, np.zeros(len(vocab)))
    >>> "".join(vocab[e.token] for e in out), n_evals, complete
    ('{ "t": "b"}', 1, True)
    >>> [(vocab[e.token], round(e.logprob, 2)) for e in out if e.scored]
    [('b', -1.27)]
    """
    if temperature > 0 and rng is None:
        raise ValueError("temperature > 0 needs an rng")
    chunks = [tokenize(c.encode("utf-8")) for c in reply_chunks(slots)]
    stream = _Stream(evaluate, first_row, top_logprobs)
    for i, slot in enumerate(slots):
        for t in chunks[i]:
            stream.push(t, scored=False)
        opts = [option_text(slot, o).encode("utf-8") for o in slot.options]
        _choose(stream, opts, chunks[i + 1][0], vocab, tokenize, temperature, rng)
        if max_tokens is not None and len(stream.out) >= max_tokens:
            stream.flush(last_needed=False)
            return stream.out[:max_tokens], stream.n_evals, False
    for t in chunks[-1]:
        stream.push(t, scored=False)
    stream.flush(last_needed=False)  # only rows that score a value token are computed
    return stream.out, stream.n_evals, True


def shared_prefix(rests: Sequence[bytes]) -> bytes:
    """The text every remaining option continues with, up to a word boundary.

    It is emitted in its own tokenization without a choice. The prefix is cut back to where a
    word ends (not inside a run of letters and digits that an option continues) and before
    trailing spaces (the tokenizer joins a space to the word after it), so the forced tokens
    spell it as they spell it inside each option; and to a whole UTF-8 character.

    Examples
    --------
    >>> shared_prefix([b"2022-06-10", b"2022-06-24"])
    b'2022-06-'
    >>> shared_prefix([b"48, rue Blot 77846", b"48, rue Blot 77846 Paris"])
    b'48, rue Blot 77846'
    >>> shared_prefix([b"Gautier", b"Gauthier"]), shared_prefix([b"12.50", b"1.20"])
    (b'', b'')
    """
    if not rests:
        return b""
    first = rests[0]
    n = min(map(len, rests))
    i = 0
    while i < n and all(r[i] == first[i] for r in rests):
        i += 1

    def inside_word(j: int) -> bool:
        return _word(first[j - 1 : j]) and any(_word(r[j : j + 1]) for r in rests)

    while i > 0 and (inside_word(i) or first[i - 1 : i] == b" "):
        i -= 1
    while i > 0:
        try:
            first[:i].decode("utf-8")
            break
        except UnicodeDecodeError:
            i -= 1
    return first[:i]


def _word(b: bytes) -> bool:
    """A byte of a word: a letter, a digit, or part of a non-ASCII character."""
    return bool(b) and (b.isalnum() or b[0] >= 0x80)


def _choose(
    stream: _Stream,
    opts: list[bytes],
    end: int,
    vocab: Mapping[bytes, int],
    tokenize: Callable[[bytes], list[int]],
    temperature: float,
    rng: np.random.Generator | None,
) -> None:
    """Spell one value: choose among the options while several are left, then force the rest.

    At a branch point every vocabulary token that spells a prefix of a remaining option's rest
    competes, as under the grammar (so "Ham" can start "Hamel" even though "Hamel" tokenizes as
    "H" + "amel"). ``end`` stands for "the value stops here" (the next chunk's first token)
    where an option is complete and a longer one is not; should a continuation be the same
    token, the continuation wins. Once one option is left its rest is emitted in its own
    tokenization, without a sampling step.
    """
    alive = list(range(len(opts)))
    pos = 0
    longest = max(map(len, vocab), default=1)
    while len(alive) > 1:
        shared = shared_prefix([opts[k][pos:] for k in alive])
        if shared:  # no choice before the options part: no forward pass either
            for tok in tokenize(shared):
                stream.push(tok, scored=True)
            pos += len(shared)
        cand: dict[int, bytes | None] = {}
        for k in alive:
            rest = opts[k][pos:]
            for j in range(1, min(len(rest), longest) + 1):
                tok = vocab.get(rest[:j])
                if tok is not None:
                    cand.setdefault(tok, rest[:j])
            if not rest:
                cand.setdefault(end, None)
        ids = list(cand)
        tok = ids[_pick(stream.next_row(), ids, temperature, rng)]
        piece = cand[tok]
        if piece is None:
            return  # the one option that is complete here
        alive = [k for k in alive if opts[k][pos:].startswith(piece)]
        pos += len(piece)
        stream.push(tok, scored=True)
    for tok in tokenize(opts[alive[0]][pos:]):
        stream.push(tok, scored=True)


def _pick(row: np.ndarray, cand: list[int], temperature: float, rng) -> int:
    scores = np.asarray([row[t] for t in cand], dtype=np.float64)
    if temperature <= 0:
        return int(np.argmax(scores))  # first of equals: options keep their listed order
    z = scores / temperature
    p = np.exp(z - z.max())
    return int(rng.choice(len(cand), p=p / p.sum()))

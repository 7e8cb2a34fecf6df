"""Per-token log-probability capture for the embedded model (see :mod:`confidence.llm.local`).

:class:`TopKCapture` is a llama-cpp logits processor: it sees the raw logits row of each step
(before grammar and sampling), keeps the log-softmax top-k and lets the caller read the sampled
token's log-probability. :class:`PieceAssembler` turns token ids into text pieces that always
concatenate to the reply.

Examples
--------
>>> cap = TopKCapture(2)
>>> _ = cap(None, np.array([0.0, 1.0, 2.0], dtype=np.float32))
>>> [(t, round(lp, 3)) for t, lp in cap.top], round(cap.logprob(0), 3)
([(2, -0.408), (1, -1.408)], -2.408)
"""

from __future__ import annotations

import numpy as np

from confidence.llm.base import TokenLogprob


class TopKCapture:
    """Logits processor that records log-softmax top-k and the row needed for the chosen token."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.row: np.ndarray | None = None
        self.lse = 0.0
        self.top: tuple[tuple[int, float], ...] = ()

    def __call__(self, input_ids: np.ndarray, scores: np.ndarray) -> np.ndarray:
        # Copy: the grammar sampler later masks the same buffer in place.
        row = np.array(scores, dtype=np.float32)
        m = float(row.max())
        self.lse = m + float(np.log(np.exp(row - m).sum(dtype=np.float64)))
        if self.k > 0:
            k = min(self.k, row.size)
            idx = np.argpartition(row, -k)[-k:]
            idx = idx[np.argsort(-row[idx], kind="stable")]
            self.top = tuple((int(i), float(row[i]) - self.lse) for i in idx)
        self.row = row
        return scores

    def logprob(self, token: int) -> float:
        assert self.row is not None
        return float(self.row[token]) - self.lse


class PieceAssembler:
    """Turn token ids into text pieces that concatenate to the reply.

    A multi-byte character split across tokens is merged into one piece (log-probabilities add
    up, alternatives are those of the first token), so every piece is valid UTF-8.
    """

    def __init__(self, llm) -> None:
        self.llm = llm
        self.pieces: list[TokenLogprob] = []
        self.buf = b""
        self.lp = 0.0
        self.top: tuple[tuple[str, float], ...] = ()

    def add(self, token: int, logprob: float, top: tuple[tuple[str, float], ...]) -> None:
        if not self.buf:
            self.top = top
        self.buf += self.llm.detokenize([token])
        self.lp += logprob
        try:
            text = self.buf.decode("utf-8")
        except UnicodeDecodeError:
            if len(self.buf) < 8:  # an incomplete character: wait for the next token
                return
            text = self.buf.decode("utf-8", "replace")
        self.pieces.append(TokenLogprob(text, self.lp, self.top))
        self.buf, self.lp, self.top = b"", 0.0, ()

    def finish(self) -> tuple[str, tuple[TokenLogprob, ...]]:
        if self.buf:
            self.pieces.append(TokenLogprob(self.buf.decode("utf-8", "replace"), self.lp, self.top))
            self.buf = b""
        return "".join(p.token for p in self.pieces), tuple(self.pieces)


def token_text(llm, token: int) -> str:
    return llm.detokenize([token]).decode("utf-8", "replace")

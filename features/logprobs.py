"""Log-probability features of each call's value tokens (``lp_h_*`` Hunter, ``lp_m_*`` Mapper).

Computed over :attr:`FieldReading.tokens`, the completion tokens that spell the value itself (not
the JSON around it). Missing is NaN, never 0: when the provider gave no logprobs
(``tokens is None``), when the call reported no value (no tokens), or, for the top-k statistics,
when the provider gave no alternatives.

Entropy uses a *tail bucket*: the top-k probabilities ``p_1..p_k`` (the chosen token added when it
is not among them) plus one extra outcome ``max(0, 1 - sum p_i)`` for everything outside the top-k,
so the value is a lower bound on the true entropy that never exceeds ``log(k + 1)``. The margin is
``p(top1) - p(top2)`` in probability, NaN for tokens with fewer than two alternatives.
"""

from __future__ import annotations

import math
from operator import mul

from confidence.readings import FieldReading

__all__ = ["NAMES", "token_stats", "values"]

_STATS = ("mean", "min", "sum", "first", "entropy", "margin", "top1_rate", "n_tokens")
NAMES: tuple[str, ...] = tuple(f"lp_{c}_{s}" for c in ("h", "m") for s in _STATS)
_NAN = math.nan


def token_stats(reading: FieldReading | None) -> list[float]:
    """The eight statistics of one reading, in ``_STATS`` order.

    Examples
    --------
    >>> from confidence.llm.base import TokenLogprob
    >>> r = FieldReading("9.00", (TokenLogprob("9", -0.5), TokenLogprob(".00", -0.1)))
    >>> [round(v, 2) for v in token_stats(r)[:4]]
    [-0.3, -0.5, -0.6, -0.5]
    >>> token_stats(FieldReading("9.00", None))[0]
    nan
    """
    if reading is None or reading.tokens is None:
        return [_NAN] * 8
    toks = reading.tokens
    n = len(toks)
    if n == 0:
        return [_NAN] * 7 + [0.0]
    lps = [t.logprob for t in toks]
    total = sum(lps)
    ents: list[float] = []
    margins: list[float] = []
    top1 = 0
    n_top = 0
    exp, log = math.exp, math.log
    for t in toks:
        top = t.top
        if not top:
            continue
        n_top += 1
        names = [tok for tok, _ in top]
        alt = [lp for _, lp in top]
        if t.token not in names:
            alt.append(t.logprob)
        alt.sort(reverse=True)
        ps = list(map(exp, alt))
        tail = 1.0 - sum(ps)
        # log p is the logprob itself: no log() per alternative.
        ent = -sum(map(mul, ps, alt))
        ents.append(ent - tail * log(tail) if tail > 1e-12 else ent)
        if len(ps) >= 2:
            margins.append(ps[0] - ps[1])
        top1 += t.logprob >= alt[0] - 1e-9
    return [
        total / n,
        min(lps),
        total,
        lps[0],
        sum(ents) / len(ents) if ents else _NAN,
        sum(margins) / len(margins) if margins else _NAN,
        top1 / n_top if n_top else _NAN,
        float(n),
    ]


def values(hunter: FieldReading | None, mapper: FieldReading | None) -> list[float]:
    """Feature values in :data:`NAMES` order."""
    return token_stats(hunter) + token_stats(mapper)

"""Log-probability features of each call's value tokens (``lp_h_*`` Hunter, ``lp_m_*`` Mapper).

Computed over :attr:`FieldReading.tokens`, the completion tokens that spell the value itself (not
the JSON around it). Missing is NaN, never 0: when the provider gave no logprobs
(``tokens is None``), when the call reported no value (no tokens), or, for the top-k statistics,
when the provider gave no alternatives.

Entropy uses a *tail bucket*: the top-k probabilities ``p_1..p_k`` (the chosen token added when it
is not among them) plus one extra outcome ``max(0, 1 - sum p_i)`` for everything outside the top-k,
so the value is a lower bound on the true entropy that never exceeds ``log(k + 1)``. The margin is
``p(top1) - p(top2)`` in probability, NaN for tokens with fewer than two alternatives.

Statistics of many readings are computed at once (:func:`token_stats_batch`): the tokens are
flattened into arrays, the alternatives padded into one matrix, and every statistic is a numpy
reduction, so the cost per field is a few microseconds of flattening.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from confidence.readings import FieldReading

__all__ = ["NAMES", "token_stats", "token_stats_batch", "values"]

_STATS = ("mean", "min", "sum", "first", "entropy", "margin", "top1_rate", "n_tokens")
NAMES: tuple[str, ...] = tuple(f"lp_{c}_{s}" for c in ("h", "m") for s in _STATS)
_NAN = math.nan


def token_stats_batch(readings: Sequence[FieldReading | None]) -> np.ndarray:
    """The eight statistics (``_STATS`` order) of each reading, as an ``(n, 8)`` float64 array.

    Examples
    --------
    >>> from confidence.llm.base import TokenLogprob
    >>> r = FieldReading("9.00", (TokenLogprob("9", -0.5), TokenLogprob(".00", -0.1)))
    >>> token_stats_batch([r, None]).round(2)[:, :4].tolist()
    [[-0.3, -0.5, -0.6, -0.5], [nan, nan, nan, nan]]
    """
    n = len(readings)
    out = np.full((n, len(_STATS)), np.nan)
    lps: list[float] = []  # every token's logprob
    counts = [0] * n  # tokens per reading
    # Tokens with alternatives: owner reading, chosen logprob, alternatives (flat), their count,
    # and whether the chosen token is missing from them.
    t_owner: list[int] = []
    t_lp: list[float] = []
    alts: list[float] = []
    t_k: list[int] = []
    t_missing: list[bool] = []
    has_tokens = [False] * n
    for r, reading in enumerate(readings):
        if reading is None or reading.tokens is None:
            continue
        toks = reading.tokens
        has_tokens[r] = True
        counts[r] = len(toks)
        for t in toks:
            lp = t.logprob
            lps.append(lp)
            top = t.top
            if top:
                names, top_lps = zip(*top, strict=True)
                alts.extend(top_lps)
                t_k.append(len(top))
                t_owner.append(r)
                t_lp.append(lp)
                t_missing.append(t.token not in names)
    present = np.array(has_tokens, dtype=bool)
    out[present, 7] = np.array(counts, dtype=np.float64)[present]
    if not lps:
        return out
    cnt = np.array(counts, dtype=np.int64)
    with_tok = cnt > 0
    offsets = np.concatenate(([0], np.cumsum(cnt)[:-1]))[with_tok]
    lp_arr = np.array(lps, dtype=np.float64)
    owner = np.repeat(np.arange(n), cnt)
    total = np.bincount(owner, weights=lp_arr, minlength=n)[with_tok]
    out[with_tok, 0] = total / cnt[with_tok]
    out[with_tok, 1] = np.minimum.reduceat(lp_arr, offsets)
    out[with_tok, 2] = total
    out[with_tok, 3] = lp_arr[offsets]
    if t_owner:
        _topk_stats(out, n, t_owner, t_lp, alts, t_k, t_missing)
    return out


def _topk_stats(
    out: np.ndarray,
    n: int,
    t_owner: list[int],
    t_lp: list[float],
    alts: list[float],
    t_k: list[int],
    t_missing: list[bool],
) -> None:
    """Entropy, margin and top-1 rate columns from the flattened alternatives."""
    m = len(t_owner)
    k = np.array(t_k, dtype=np.int64)
    missing = np.array(t_missing, dtype=bool)
    chosen = np.array(t_lp, dtype=np.float64)
    width = int(k.max()) + 1  # room for the chosen token when it is not among the top-k
    a = np.full((m, width), -np.inf)
    rows = np.repeat(np.arange(m), k)
    cols = np.arange(len(alts)) - np.repeat(np.cumsum(k) - k, k)
    a[rows, cols] = alts
    a[missing, k[missing]] = chosen[missing]
    size = k + missing  # alternatives per token after adding the chosen one
    a = -np.sort(-a, axis=1)  # most likely first; padding (-inf) last
    valid = np.arange(width)[None, :] < size[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        ps = np.exp(a)
        tail = 1.0 - ps.sum(axis=1)
        # log p is the logprob itself: no log() per alternative.
        ent = -np.where(valid, ps * a, 0.0).sum(axis=1)
        ent = np.where(tail > 1e-12, ent - tail * np.log(np.where(tail > 1e-12, tail, 1.0)), ent)
    owner = np.array(t_owner, dtype=np.int64)
    n_top = np.bincount(owner, minlength=n)
    has = n_top > 0
    out[has, 4] = np.bincount(owner, weights=ent, minlength=n)[has] / n_top[has]
    two = size >= 2
    n_two = np.bincount(owner[two], minlength=n)
    margin = ps[two, 0] - ps[two, 1]
    has2 = n_two > 0
    out[has2, 5] = np.bincount(owner[two], weights=margin, minlength=n)[has2] / n_two[has2]
    top1 = (chosen >= a[:, 0] - 1e-9).astype(np.float64)
    out[has, 6] = np.bincount(owner, weights=top1, minlength=n)[has] / n_top[has]


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
    return token_stats_batch([reading])[0].tolist()


def values(hunter: FieldReading | None, mapper: FieldReading | None) -> list[float]:
    """Feature values in :data:`NAMES` order."""
    return token_stats_batch([hunter, mapper]).reshape(-1).tolist()

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
from collections.abc import Iterable, Sequence
from itertools import chain, compress, pairwise
from operator import attrgetter, eq, itemgetter

import numpy as np

from confidence.readings import FieldReading

__all__ = ["NAMES", "token_stats", "token_stats_batch", "values"]

_STATS = ("mean", "min", "sum", "first", "entropy", "margin", "top1_rate", "n_tokens")
NAMES: tuple[str, ...] = tuple(f"lp_{c}_{s}" for c in ("h", "m") for s in _STATS)
_NAN = math.nan
_LOGPROB = attrgetter("logprob")
_TOP = attrgetter("top")
_TOKEN = attrgetter("token")
_FIRST, _SECOND = itemgetter(0), itemgetter(1)
_CHUNK = 2048


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
    per = [None if r is None else r.tokens for r in readings]
    present = np.array([t is not None for t in per], dtype=bool)
    cnt = np.array([len(t) if t else 0 for t in per], dtype=np.int64)
    out[present, 7] = cnt[present].astype(np.float64)
    if not cnt.any():
        return out
    # the tokens are read a few hundred readings at a time: the passes over one chunk find its
    # objects in cache (reading all tokens pass after pass is bound by memory), and the
    # per-token matrices of a chunk are small
    ends = np.cumsum(cnt)
    cuts = [0, *(np.searchsorted(ends, np.arange(_CHUNK, ends[-1], _CHUNK)) + 1).tolist(), n]
    parts = [_read(chain.from_iterable(t for t in per[a:b] if t)) for a, b in pairwise(cuts)]
    lp_arr, has_top, ent, margin, two, top1 = (np.concatenate(c) for c in zip(*parts, strict=True))
    with_tok = cnt > 0
    offsets = np.concatenate(([0], ends[:-1]))[with_tok]
    owner = np.repeat(np.arange(n), cnt)
    total = np.bincount(owner, weights=lp_arr, minlength=n)[with_tok]
    out[with_tok, 0] = total / cnt[with_tok]
    out[with_tok, 1] = np.minimum.reduceat(lp_arr, offsets)
    out[with_tok, 2] = total
    out[with_tok, 3] = lp_arr[offsets]
    if has_top.any():  # means over the tokens with alternatives (margins: with two of them)
        owner = owner[has_top]
        n_top = np.bincount(owner, minlength=n)
        has = n_top > 0
        out[has, 4] = np.bincount(owner, weights=ent, minlength=n)[has] / n_top[has]
        n_two = np.bincount(owner[two], minlength=n)
        has2 = n_two > 0
        out[has2, 5] = np.bincount(owner[two], weights=margin[two], minlength=n)[has2] / n_two[has2]
        out[has, 6] = np.bincount(owner, weights=top1, minlength=n)[has] / n_top[has]
    return out


def _read(tokens: Iterable) -> tuple[np.ndarray, ...]:
    """Per token its logprob and whether it has alternatives; per token with alternatives its
    entropy, top-2 margin, whether it has two alternatives and whether it is the top one."""
    toks = list(tokens)
    lp = np.fromiter(map(_LOGPROB, toks), dtype=np.float64, count=len(toks))
    tops = list(map(_TOP, toks))
    k = np.fromiter(map(len, tops), dtype=np.int64, count=len(tops))
    try:
        alts = np.fromiter(
            map(_SECOND, chain.from_iterable(tops)), dtype=np.float64, count=int(k.sum())
        )
    except IndexError:
        raise ValueError("top alternatives must be (token, logprob) pairs") from None
    has_top = k > 0
    if not has_top.all():
        toks, tops = list(compress(toks, tops)), [t for t in tops if t]
    # the chosen token is missing from its alternatives unless one of them spells it; most
    # often the first one does, and only the others are looked at one by one
    first = map(_FIRST, map(_FIRST, tops))
    missing = ~np.fromiter(map(eq, map(_TOKEN, toks), first), dtype=bool, count=len(tops))
    for i in np.flatnonzero(missing).tolist():
        missing[i] = toks[i].token not in [t for t, _ in tops[i]]
    return lp, has_top, *_topk(lp[has_top], alts, k[has_top], missing)


def _topk(
    chosen: np.ndarray, alts: np.ndarray, k: np.ndarray, missing: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Entropy, top-2 margin, whether there are two alternatives and whether the chosen token
    is the top one, per token with alternatives (its logprob, the alternatives' logprobs flat,
    their number, whether the chosen token is missing from them)."""
    m = len(k)
    if m == 0:
        return np.empty(0), np.empty(0), np.empty(0, dtype=bool), np.empty(0)
    width = int(k.max()) + 1  # room for the chosen token when it is not among the top-k
    a = np.full((m, width), -np.inf)
    if (k == width - 1).all():  # as many alternatives for every token (a provider's top-k)
        a[:, :-1] = alts.reshape(m, width - 1)
    else:
        rows = np.repeat(np.arange(m), k)
        a[rows, np.arange(len(alts)) - np.repeat(np.cumsum(k) - k, k)] = alts
    a[missing, k[missing]] = chosen[missing]
    size = k + missing  # alternatives per token after adding the chosen one
    # most likely first, padding (-inf) last; providers list them so: sort the other rows only
    unsorted = ~(a[:, :-1] >= a[:, 1:]).all(axis=1)
    a[unsorted] = -np.sort(-a[unsorted], axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        ps = np.exp(a)
        tail = 1.0 - ps.sum(axis=1)
        # log p is the logprob itself: no log() per alternative; 0 in the padding
        plogp = np.where(np.arange(width)[None, :] < size[:, None], ps * a, 0.0)
        ent = -plogp.sum(axis=1)
        ent = np.where(tail > 1e-12, ent - tail * np.log(np.where(tail > 1e-12, tail, 1.0)), ent)
    top1 = (chosen >= a[:, 0] - 1e-9).astype(np.float64)
    return ent, ps[:, 0] - ps[:, 1], size >= 2, top1


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

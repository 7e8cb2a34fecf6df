"""How the engine's training rows are divided and weighted: document splits, balance weights.

Both work on whole documents or field types, never on single rows: the fields of one document
share a scan and an LLM call, so a split that cut a document would leak between the parts.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.utils.class_weight import compute_sample_weight

__all__ = ["BALANCE_MODES", "balance_weights", "split_documents"]

BALANCE_MODES = (None, "type")


def balance_weights(y, types, mode: str | None) -> np.ndarray | None:
    """Row weights giving correct and wrong rows equal weight within each field type.

    A type keeps its share of the total weight; a type with only one class keeps weight 1.

    Examples
    --------
    >>> balance_weights([1, 1, 1, 0, 1, 0], ["a", "a", "a", "a", "b", "b"], "type").tolist()
    [0.6666666666666666, 0.6666666666666666, 0.6666666666666666, 2.0, 1.0, 1.0]
    >>> balance_weights([1, 0], ["a", "a"], None) is None
    True
    """
    if mode not in BALANCE_MODES:
        raise ValueError(f"balance={mode!r}; use None or 'type'")
    if mode is None:
        return None
    y = np.asarray(y)
    types = np.asarray(types, dtype=object)
    w = np.ones(len(y))
    for t in np.unique(types):
        m = types == t
        w[m] = compute_sample_weight("balanced", y[m])  # n / (2 n_class); 1 for one class
    return w


def split_documents(groups, shares: Sequence[float], seed: int) -> list[np.ndarray]:
    """One boolean row mask per share, splitting the *documents* (``groups``) at random.

    Examples
    --------
    >>> masks = split_documents(["a", "a", "b", "c", "c", "d"], (0.5, 0.5), seed=0)
    >>> [m.tolist() for m in masks]
    [[True, True, False, True, True, False], [False, False, True, False, False, True]]
    """
    groups = np.asarray(groups)
    uniq = np.unique(groups)
    order = np.random.default_rng(seed).permutation(len(uniq))
    cuts = np.round(np.cumsum(shares)[:-1] / sum(shares) * len(uniq)).astype(int)
    parts = np.split(uniq[order], cuts)
    return [np.isin(groups, p) for p in parts]

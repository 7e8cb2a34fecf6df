"""The reader's own confidence in its choice (``rd_*``).

A reader that ranks candidates (the library's Mapper, :mod:`confidence.calls.ranker`) says how
sure it is of the value it chose -- or of "absent" when it chose none: its softmax over the
field's candidates, kept on the reading as :attr:`~confidence.readings.FieldReading.prob`.
Readings from an LLM alone carry none; the feature is NaN then.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from confidence.readings import FieldReading

__all__ = ["NAMES", "values", "values_batch"]

NAMES: tuple[str, ...] = ("rd_m_prob",)


def values(mapper: FieldReading | None) -> list[float]:
    """Feature values in :data:`NAMES` order.

    Examples
    --------
    >>> values(FieldReading("9.00", prob=0.8))
    [0.8]
    >>> values(FieldReading(None, prob=0.3))  # the reader's probability that the field is absent
    [0.3]
    >>> [math.isnan(v) for v in values(FieldReading("9.00")) + values(None)]
    [True, True]
    """
    prob = mapper.prob if mapper is not None else None
    if prob is None or not math.isfinite(prob):
        return [math.nan]
    return [float(prob)]


def values_batch(mappers: Sequence[FieldReading | None]) -> np.ndarray:
    """:func:`values` of many Mapper readings, shape ``(n, len(NAMES))``.

    Examples
    --------
    >>> values_batch([FieldReading("9.00", prob=0.8), FieldReading("x"), None]).ravel().tolist()
    [0.8, nan, nan]
    """
    probs = [None if m is None else m.prob for m in mappers]
    p = np.array([math.nan if v is None else v for v in probs], dtype=np.float64)
    return np.where(np.isfinite(p), p, math.nan).reshape(-1, len(NAMES))

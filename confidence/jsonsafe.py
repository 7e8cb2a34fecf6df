"""Turning metrics and metadata into what strict JSON can hold.

Examples
--------
>>> import numpy as np
>>> jsonable({"auroc": float("nan"), "n": np.int64(3), "xs": (np.float32(0.5), np.inf)})
{'auroc': None, 'n': 3, 'xs': [0.5, None]}
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def jsonable(obj: Any) -> Any:
    """``obj`` with NaN/inf as None, numpy scalars as Python ones and tuples as lists.

    JSON has no NaN (e.g. the AUROC of a single-class set), so ``json.dumps(...,
    allow_nan=False)`` of the result cannot fail on a number. Dicts and lists are copied
    recursively; anything else is returned as it is.
    """
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [jsonable(v) for v in obj]
    if isinstance(obj, float | np.floating) and not math.isfinite(obj):
        return None
    if isinstance(obj, np.generic):
        return jsonable(obj.item())
    return obj

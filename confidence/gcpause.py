"""Pausing Python's cyclic garbage collector while a batch of acyclic objects is built.

Parsing a runs file and scoring its rows allocate millions of small containers (token
logprobs, their alternatives, feature rows, score rows). None of them forms a reference cycle,
yet each allocation counts towards the collector's thresholds, and every full collection walks
every live container: on 100 000 fields of recorded runs the collector took 62 % of
:func:`~confidence.records.load_runs`' time (57.6 s with it, 21.6 s paused) and about a third of
:meth:`~confidence.engine.ConfidenceEngine.score`'s. Reference counting still frees everything
while it is paused; only cycles wait for the next collection after it.

Examples
--------
>>> import gc
>>> with paused_gc():
...     gc.isenabled()
False
>>> gc.isenabled()
True
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector inside the block; restore its previous state after it.

    Nested blocks and a caller that disabled the collector itself are left as they were: the
    collector is enabled again only by the block that disabled it, also when the block raises.
    Only library code that calls no user code inside the block uses it.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()

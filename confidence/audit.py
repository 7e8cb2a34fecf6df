"""Audit sampling: a random share of the auto-accepted fields also goes to review.

Reviewed fields are otherwise the low-confidence ones only, so their accuracy says nothing about
the accepted ones. With ``score --audit-rate r`` every accepted field is sent to review with
probability ``r`` (independently), marked ``audit=True``; every row records ``p_sample``, the
probability with which it was sampled into review (1 for a field routed to review, ``r`` for an
accepted one, audited or not, 0 when nothing is audited). The inverse of ``p_sample`` weights a
reviewed field in :mod:`confidence.feedback` so that estimates over all fields stay unbiased.

The draw is a hash of ``(seed, doc_id, field)``: the same document and field get the same draw
whatever the order of the batch or how it is split into batches, so a re-run is reproducible.

Examples
--------
>>> u = audit_uniforms(["a", "a", "b"], ["total", "date", "total"], seed=0)
>>> bool(((0 <= u) & (u < 1)).all()), bool(audit_uniforms(["b"], ["total"], seed=0)[0] == u[2])
(True, True)
>>> audit_mask(["accept", "review", "accept"], u, rate=1.0).tolist()
[True, False, True]
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

__all__ = ["AUDIT_REASON", "audit_mask", "audit_uniforms", "check_audit_rate", "sampling_probs"]

AUDIT_REASON = "audit sample: would have been accepted"
"""First reason of an audited row (its decision is ``review``)."""


def check_audit_rate(rate: float) -> float:
    """Validate an audit rate (a share in [0, 1]) at the public boundary."""
    try:
        r = float(rate)
    except (TypeError, ValueError):
        raise ValueError(f"audit rate {rate!r}: pass a share between 0 and 1, e.g. 0.02") from None
    if not 0.0 <= r <= 1.0:
        raise ValueError(f"audit rate {rate!r}: pass a share between 0 and 1, e.g. 0.02")
    return r


def audit_uniforms(doc_ids: Sequence[str], fields: Sequence[str], *, seed: int = 0) -> np.ndarray:
    """One uniform draw in [0, 1) per (doc_id, field), a function of the seed and the pair only."""
    out = np.empty(len(doc_ids))
    for i, (d, f) in enumerate(zip(doc_ids, fields, strict=True)):
        h = hashlib.blake2b(f"{seed}\x1f{d}\x1f{f}".encode(), digest_size=8).digest()
        out[i] = int.from_bytes(h, "big") / 2.0**64
    return out


def audit_mask(decisions: Sequence[str], uniforms: np.ndarray, *, rate: float) -> np.ndarray:
    """Accepted rows whose draw falls below ``rate``."""
    acc = np.asarray([d == "accept" for d in decisions], dtype=bool)
    return acc & (np.asarray(uniforms, dtype=float) < rate)


def sampling_probs(decisions: Sequence[str], *, rate: float) -> np.ndarray:
    """``p_sample`` of each row: 1 for a row routed to review, ``rate`` for an accepted one
    (decisions taken before auditing)."""
    return np.where(np.asarray([d == "accept" for d in decisions], dtype=bool), rate, 1.0)

"""The review loop after routing: the review log and the local review app.

``confidence.review.log`` is the append-only decision log (light, no web dependencies);
the app (``confidence.review.app``) needs the ``review`` extra:
``pip install 'extractconf[review]'``.
"""

from confidence.review.log import (
    ACTIONS,
    Decision,
    ReviewLogError,
    append_decision,
    latest_decisions,
    read_log,
)

__all__ = [
    "ACTIONS",
    "Decision",
    "ReviewLogError",
    "append_decision",
    "latest_decisions",
    "read_log",
]

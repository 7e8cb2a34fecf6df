"""When and how long to wait before retrying an LLM call.

Retry only what can succeed later: rate limits (429), server errors (5xx), request timeouts
(408), conflicts (409), timeouts and dropped connections. Any other 4xx is a bug in the request
and is raised at once. Waits grow exponentially with full jitter (so many clients hitting the
same limit spread out), and a server's ``Retry-After`` wins when it is given.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass

RETRYABLE_STATUS = frozenset({408, 409, 429})


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter.

    Parameters
    ----------
    max_retries : int, default 5
        Retries after the first attempt (0 = try once).
    base_delay : float, default 0.5
        Seconds before the first retry, before jitter.
    max_delay : float, default 30.0
        Cap on any single wait, ``Retry-After`` included.

    Examples
    --------
    >>> p = RetryPolicy(max_retries=3, base_delay=1.0, max_delay=8.0)
    >>> [p.backoff(a, jitter=1.0) for a in range(5)]
    [1.0, 2.0, 4.0, 8.0, 8.0]
    >>> p.backoff(0, retry_after=3.0)
    3.0
    """

    max_retries: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries={self.max_retries}; use 0 (no retry) or more")
        if self.base_delay < 0 or self.max_delay < self.base_delay:
            raise ValueError("need 0 <= base_delay <= max_delay")

    def backoff(
        self, attempt: int, retry_after: float | None = None, jitter: float | None = None
    ) -> float:
        """Seconds to wait before retry number ``attempt + 1``.

        ``jitter`` in [0, 1] scales the exponential wait (drawn uniformly when None);
        ``retry_after`` from the server replaces the computed wait.
        """
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay)
        j = random.random() if jitter is None else jitter
        return min(self.base_delay * 2.0**attempt, self.max_delay) * j


def is_retryable_status(status: int) -> bool:
    """True for 408, 409, 429 and every 5xx."""
    return status in RETRYABLE_STATUS or status >= 500


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds asked for by ``retry-after-ms`` or ``Retry-After`` (seconds or HTTP date).

    Examples
    --------
    >>> parse_retry_after({"retry-after": "2"})
    2.0
    >>> parse_retry_after({"retry-after-ms": "250"})
    0.25
    >>> parse_retry_after({"retry-after": "soon"}) is None
    True
    """
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    try:
        if "retry-after-ms" in lower:
            return float(lower["retry-after-ms"]) / 1000.0
        value = lower.get("retry-after")
        if value is None:
            return None
        try:
            return max(float(value), 0.0)
        except ValueError:
            when = email.utils.parsedate_to_datetime(value).timestamp()
            return max(when - (time.time() if now is None else now), 0.0)
    except (TypeError, ValueError, IndexError):
        return None

"""An asyncio requests-per-minute limiter that spaces request starts evenly."""

from __future__ import annotations

import asyncio
import time


class RateLimiter:
    """Let at most ``rpm`` requests start per minute, spaced ``60 / rpm`` seconds apart.

    Even spacing (rather than a burst then a pause) keeps a provider's sliding-window limit from
    ever seeing more than ``rpm`` starts in any minute.

    Parameters
    ----------
    rpm : float
        Requests per minute, > 0.

    Examples
    --------
    >>> async def three():
    ...     lim = RateLimiter(rpm=1200)  # one start every 50 ms
    ...     t0 = time.monotonic()
    ...     for _ in range(3):
    ...         await lim.acquire()
    ...     return time.monotonic() - t0 >= 0.09
    >>> asyncio.run(three())
    True
    """

    def __init__(self, rpm: float) -> None:
        if not rpm > 0:
            raise ValueError(f"rpm={rpm}; use a positive number of requests per minute or None")
        self.rpm = float(rpm)
        self._interval = 60.0 / self.rpm
        self._next = 0.0
        self._lock: asyncio.Lock | None = None

    async def acquire(self) -> None:
        """Wait until this request may start."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self._interval
        if start > now:
            await asyncio.sleep(start - now)

"""A per-document time budget over any LLM client.

A hanging endpoint must not hold a document (or a batch) for minutes: the per-attempt timeout
and retries of a client bound one call, :class:`DeadlineClient` bounds all the calls made for
one document together. A call started after the deadline fails at once; a call in flight at the
deadline is cancelled when the client is awaitable (``achat``, as every remote client is), else
(a local model) it finishes and the next call fails. Either way the failure is an
:class:`~confidence.errors.LLMError`, which the Hunter and Mapper record as a failed call.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from confidence.errors import LLMError
from confidence.llm.base import Completion, Message

__all__ = ["DeadlineClient"]


class DeadlineClient:
    """Wrap ``client`` so that its calls end by ``seconds`` after the wrapper was made.

    Parameters
    ----------
    client : LLMClient
    seconds : float
        The budget, counted from construction (make one wrapper per document).

    Examples
    --------
    >>> from confidence.llm.base import Completion
    >>> class Slow:
    ...     model = "slow"
    ...     def chat(self, messages, **kw):
    ...         return [Completion("{}", None, "slow", {}, 0.0, "stop")]
    ...     async def achat(self, messages, **kw):
    ...         await asyncio.sleep(10)
    >>> client = DeadlineClient(Slow(), 0.05)
    >>> client.chat([{"role": "user", "content": "hi"}])
    Traceback (most recent call last):
    ...
    confidence.errors.LLMError: slow: document deadline of 0.05s passed during the call
    """

    def __init__(self, client: Any, seconds: float) -> None:
        if not seconds > 0:
            raise ValueError(f"seconds={seconds}; use a positive number of seconds")
        self.client = client
        self.seconds = float(seconds)
        self.model = getattr(client, "model", "")
        self._end = time.monotonic() + self.seconds

    def __repr__(self) -> str:
        return f"DeadlineClient({self.client!r}, seconds={self.seconds:g})"

    def _remaining(self) -> float:
        left = self._end - time.monotonic()
        if left <= 0:
            raise LLMError(f"{self.model}: document deadline of {self.seconds:g}s passed")
        return left

    def chat(self, messages: list[Message], **kwargs: Any) -> list[Completion]:
        """The wrapped client's ``chat``, failing with :class:`LLMError` past the deadline."""
        left = self._remaining()
        achat = getattr(self.client, "achat", None)
        if achat is None:
            return self.client.chat(messages, **kwargs)
        try:
            return _run(asyncio.wait_for(achat(messages, **kwargs), left))
        except TimeoutError:
            raise LLMError(
                f"{self.model}: document deadline of {self.seconds:g}s passed during the call"
            ) from None

    async def achat(self, messages: list[Message], **kwargs: Any) -> list[Completion]:
        """Awaitable :meth:`chat`."""
        return await asyncio.to_thread(self.chat, messages, **kwargs)


def _run(coro):
    """Run ``coro`` to completion from synchronous code, even under a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["out"] = asyncio.run(coro)
        except BaseException as e:  # re-raised in the caller's thread
            box["err"] = e

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join()
    if "err" in box:
        raise box["err"]
    return box["out"]

"""Run many chat requests and keep going past failures (shared by every client)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from confidence.errors import LLMError
from confidence.llm.base import Completion


def split_request(request: dict[str, Any], index: int) -> tuple[list, dict[str, Any]]:
    """``{"messages": [...], **kwargs}`` -> ``(messages, kwargs)``, naming the bad request."""
    if not isinstance(request, dict) or "messages" not in request:
        raise ValueError(f"requests[{index}] must be a dict with a 'messages' key and chat kwargs")
    kwargs = dict(request)
    return kwargs.pop("messages"), kwargs


def collect(
    results: Sequence[list[Completion] | BaseException], *, return_exceptions: bool
) -> list[list[Completion] | LLMError]:
    """Wrap stray exceptions as :class:`LLMError` and raise the first one unless asked not to."""
    out: list[list[Completion] | LLMError] = []
    for i, r in enumerate(results):
        if isinstance(r, BaseException) and not isinstance(r, LLMError):
            if not isinstance(r, Exception):  # KeyboardInterrupt, CancelledError: never swallow
                raise r
            err = LLMError(f"request {i}: {type(r).__name__}: {r}")
            err.__cause__ = r
            r = err
        out.append(r)
    if not return_exceptions:
        failed = [(i, r) for i, r in enumerate(out) if isinstance(r, LLMError)]
        if failed:
            i, first = failed[0]
            raise LLMError(f"{len(failed)} of {len(out)} requests failed; first (#{i}): {first}")
    return out


def run_sequential(
    chat: Callable[..., list[Completion]],
    requests: Sequence[dict[str, Any]],
    *,
    return_exceptions: bool,
) -> list[list[Completion] | LLMError]:
    """Call ``chat`` on each request in turn; a failure does not stop the others."""
    parsed = [split_request(r, i) for i, r in enumerate(requests)]
    results: list[Any] = []
    for messages, kwargs in parsed:
        try:
            results.append(chat(messages, **kwargs))
        except Exception as exc:
            results.append(exc)
    return collect(results, return_exceptions=return_exceptions)

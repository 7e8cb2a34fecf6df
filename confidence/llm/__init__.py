"""LLM clients behind one protocol (``confidence.llm``).

Every client has ``chat(messages, *, schema, logprobs, top_logprobs, n, temperature, max_tokens,
seed) -> list[Completion]``, ``achat`` (awaitable) and ``chat_many(requests)``. Pick one with
:func:`make_client`:

======================  =====================================================================
spec                    client
======================  =====================================================================
``"local"``             :class:`LocalLlamaClient` with the embedded SmolLM2-135M GGUF
``"local:PATH.gguf"``   :class:`LocalLlamaClient` with another GGUF
``"openai:MODEL"``      :class:`OpenAIClient` against api.openai.com (key in ``OPENAI_API_KEY``)
``"http(s)://URL"``     :class:`OpenAIClient` against any compatible server (pass ``model=``)
``"replay:PATH"``       :class:`ReplayClient` serving completions recorded in ``PATH``
======================  =====================================================================
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from confidence.llm.base import Completion, LLMClient, Message, TokenLogprob
from confidence.llm.grammar import grammar_schema
from confidence.llm.local import LocalLlamaClient, find_gguf
from confidence.llm.openai_client import OpenAIClient
from confidence.llm.replay import CachedClient, ReplayClient, request_key, request_params
from confidence.llm.retry import RetryPolicy

__all__ = [
    "CachedClient",
    "Completion",
    "LLMClient",
    "LocalLlamaClient",
    "Message",
    "OpenAIClient",
    "ReplayClient",
    "RetryPolicy",
    "TokenLogprob",
    "find_gguf",
    "grammar_schema",
    "make_client",
    "request_key",
    "request_params",
]


def _local(rest: str, model: str | None, kw: dict[str, Any]) -> LLMClient:
    return LocalLlamaClient(model_path=rest or None, **kw)


def _openai(rest: str, model: str | None, kw: dict[str, Any]) -> LLMClient:
    if not (rest or model):
        raise ValueError("'openai:MODEL' needs a model id, e.g. 'openai:gpt-4o-mini'")
    return OpenAIClient(model or rest, **kw)


def _url(scheme: str) -> Callable[[str, str | None, dict[str, Any]], LLMClient]:
    def build(rest: str, model: str | None, kw: dict[str, Any]) -> LLMClient:
        if not model:
            raise ValueError(f"'{scheme}:{rest}' needs model=<model id served there>")
        return OpenAIClient(model, base_url=f"{scheme}:{rest}", **kw)

    return build


def _replay(rest: str, model: str | None, kw: dict[str, Any]) -> LLMClient:
    if not rest:
        raise ValueError("'replay:PATH' needs the recorded JSONL file")
    return ReplayClient(rest, model=model)


_CHOICES: dict[str, Callable[[str, str | None, dict[str, Any]], LLMClient]] = {
    "local": _local,
    "openai": _openai,
    "http": _url("http"),
    "https": _url("https"),
    "replay": _replay,
}


def make_client(
    spec: str | LLMClient,
    *,
    model: str | None = None,
    cache: str | Path | None = None,
    **kwargs: Any,
) -> LLMClient:
    """Resolve a client spec (see the module table) or pass a client object through.

    Parameters
    ----------
    spec : str or LLMClient
        ``"local"``, ``"local:PATH"``, ``"openai:MODEL"``, an ``http(s)://`` base URL,
        ``"replay:PATH"``, or an object with ``.chat``.
    model : str, optional
        Model id (required for URLs; optional for replay files holding several models).
    cache : str or Path, optional
        Wrap the client in :class:`CachedClient` recording to this JSONL file.
    **kwargs
        Passed to the client's constructor (``timeout``, ``concurrency``, ``n_ctx``, ...).

    Examples
    --------
    >>> make_client("ftp://x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown LLM client 'ftp://x'; valid: 'http(s)://URL', 'local', ...
    """
    if not isinstance(spec, str):
        if not callable(getattr(spec, "chat", None)):
            raise TypeError(f"client must be a spec string or have .chat(...), got {type(spec)}")
        client = spec
    else:
        scheme, _, rest = spec.partition(":")
        build = _CHOICES.get(scheme)
        if build is None:
            raise ValueError(
                f"unknown LLM client {spec!r}; valid: 'http(s)://URL', 'local', "
                "'local:PATH.gguf', 'openai:MODEL', 'replay:PATH', or an object with .chat(...)"
            )
        client = build(rest, model, kwargs)
    return CachedClient(client, cache) if cache is not None else client

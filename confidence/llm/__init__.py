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
from urllib.parse import urlsplit

from confidence.llm.base import Completion, LLMClient, Message, TokenLogprob
from confidence.llm.grammar import grammar_schema
from confidence.llm.local import LocalLlamaClient, find_gguf
from confidence.llm.openai_client import OpenAIClient
from confidence.llm.replay import CachedClient, ReplayClient, request_key, request_params
from confidence.llm.retry import RetryPolicy

__all__ = [
    "REMOTE_SCHEMES",
    "CachedClient",
    "Completion",
    "LLMClient",
    "LocalLlamaClient",
    "Message",
    "OpenAIClient",
    "ReplayClient",
    "RetryPolicy",
    "TokenLogprob",
    "check_spec",
    "find_gguf",
    "grammar_schema",
    "make_client",
    "request_key",
    "request_params",
]


def _check_local(rest: str, model: str | None) -> None:
    if rest and not Path(rest).is_file():
        raise ValueError(f"'local:{rest}': no such GGUF file")


def _check_openai(rest: str, model: str | None) -> None:
    if not (rest or model):
        raise ValueError("'openai:MODEL' needs a model id, e.g. 'openai:gpt-4o-mini'")


def _check_url(scheme: str) -> Callable[[str, str | None], None]:
    def check(rest: str, model: str | None) -> None:
        if not rest.startswith("//") or not urlsplit(f"{scheme}:{rest}").hostname:
            raise ValueError(f"'{scheme}:{rest}' is not a URL; use e.g. http://127.0.0.1:8000/v1")
        if not model:
            raise ValueError(
                f"'{scheme}:{rest}' needs the model id served there (model=..., --llm-model NAME)"
            )

    return check


def _check_replay(rest: str, model: str | None) -> None:
    if not rest:
        raise ValueError("'replay:PATH' needs the recorded JSONL file")


def _local(rest: str, model: str | None, kw: dict[str, Any]) -> LLMClient:
    return LocalLlamaClient(model_path=rest or None, **kw)


def _openai(rest: str, model: str | None, kw: dict[str, Any]) -> LLMClient:
    return OpenAIClient(model or rest, **kw)


def _url(scheme: str) -> Callable[[str, str | None, dict[str, Any]], LLMClient]:
    def build(rest: str, model: str | None, kw: dict[str, Any]) -> LLMClient:
        return OpenAIClient(model, base_url=f"{scheme}:{rest}", **kw)

    return build


def _replay(rest: str, model: str | None, kw: dict[str, Any]) -> LLMClient:
    return ReplayClient(rest, model=model)


_Check = Callable[[str, str | None], None]
_Build = Callable[[str, str | None, dict[str, Any]], LLMClient]
_CHOICES: dict[str, tuple[_Check, _Build]] = {
    "local": (_check_local, _local),
    "openai": (_check_openai, _openai),
    "http": (_check_url("http"), _url("http")),
    "https": (_check_url("https"), _url("https")),
    "replay": (_check_replay, _replay),
}
REMOTE_SCHEMES = frozenset({"openai", "http", "https"})
"""Spec schemes served by :class:`OpenAIClient` (they take ``timeout``, ``max_retries``,
``api_key_env``)."""


def check_spec(spec: str, *, model: str | None = None) -> str:
    """Validate a client spec without building the client; return its scheme.

    Raises ``ValueError`` with the reason (unknown scheme, a URL without a host or without
    ``model``, ``openai:`` without a model id, a missing GGUF or replay file), so a command can
    refuse a bad ``--llm`` before any work.

    Examples
    --------
    >>> check_spec("http://127.0.0.1:8000/v1", model="smollm2")
    'http'
    >>> check_spec("http://127.0.0.1:8000/v1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: 'http://127.0.0.1:8000/v1' needs the model id served there (model=..., ...)
    """
    scheme, _, rest = spec.partition(":")
    choice = _CHOICES.get(scheme)
    if choice is None:
        raise ValueError(
            f"unknown LLM client {spec!r}; valid: 'http(s)://URL', 'local', "
            "'local:PATH.gguf', 'openai:MODEL', 'replay:PATH', or an object with .chat(...)"
        )
    choice[0](rest, model)
    return scheme


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
        Passed to the client's constructor: for the remote specs (:data:`REMOTE_SCHEMES`)
        ``timeout`` (seconds per attempt), ``max_retries``, ``api_key_env`` (the variable
        holding the key; OpenAI's ``OPENAI_API_KEY`` is only ever sent to api.openai.com),
        ``concurrency``, ``rpm``; for ``local`` ``n_ctx``, ``n_threads``, ...

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
        scheme = check_spec(spec, model=model)
        client = _CHOICES[scheme][1](spec.partition(":")[2], model, kwargs)
    return CachedClient(client, cache) if cache is not None else client

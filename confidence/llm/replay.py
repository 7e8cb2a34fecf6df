"""Record LLM completions once, replay them forever.

A request is identified by :func:`request_key`: the sha256 of the canonical JSON of
``(model, messages, parameters)``. :class:`CachedClient` wraps any client and appends every new
completion to a JSONL file; :class:`ReplayClient` serves a recorded file without any LLM, so tests
and benchmarks are exact and offline, and a miss is a clear :class:`~confidence.errors.LLMError`
naming the key.

File format: one JSON object per line, ``{"key": str, "model": str, "request": {"messages":
[...], "params": {...}}, "completions": [Completion.to_dict(), ...]}``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from confidence.errors import LLMError
from confidence.llm.base import Completion, LLMClient, Message
from confidence.llm.batch import collect, run_sequential, split_request

_DEFAULTS: dict[str, Any] = {
    "schema": None,
    "logprobs": True,
    "top_logprobs": 5,
    "n": 1,
    "temperature": 0.0,
    "max_tokens": 512,
    "seed": None,
}


def request_params(**kwargs: Any) -> dict[str, Any]:
    """Chat keywords with defaults filled in, so omitted and explicit defaults key the same."""
    unknown = set(kwargs) - set(_DEFAULTS)
    if unknown:
        raise TypeError(f"unknown chat parameter(s) {sorted(unknown)}; valid: {sorted(_DEFAULTS)}")
    params = {**_DEFAULTS, **kwargs}
    params["temperature"] = float(params["temperature"])
    return params


def request_key(model: str, messages: list[Message], params: dict[str, Any]) -> str:
    """Stable sha256 hex of the canonical JSON of a request.

    Examples
    --------
    >>> k1 = request_key("m", [{"role": "user", "content": "hi"}], request_params())
    >>> k2 = request_key("m", [{"content": "hi", "role": "user"}], request_params(n=1))
    >>> k1 == k2, len(k1)
    (True, 64)
    """
    canon = json.dumps(
        {"model": model, "messages": messages, "params": params},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


class CompletionStore:
    """An append-only JSONL file of recorded completions, loaded into memory on open.

    A corrupt line (for example a write cut short by a crash) is skipped with a warning naming
    its line number; the rest of the file stays usable.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._records: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        if self.path.exists():
            self._load()

    def _load(self) -> None:
        with self.path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                    key = rec["key"]
                    [Completion.from_dict(c) for c in rec["completions"]]
                except (ValueError, KeyError, TypeError) as exc:
                    warnings.warn(
                        f"{self.path} line {lineno}: skipped, not a recorded completion ({exc})",
                        stacklevel=3,
                    )
                    continue
                self._records[key] = rec

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, key: str) -> bool:
        return key in self._records

    @property
    def models(self) -> set[str]:
        """Model ids present in the file."""
        return {r.get("model", "") for r in self._records.values()}

    def get(self, key: str) -> list[Completion] | None:
        rec = self._records.get(key)
        return None if rec is None else [Completion.from_dict(c) for c in rec["completions"]]

    def put(self, key: str, model: str, request: dict[str, Any], comps: list[Completion]) -> None:
        rec = {
            "key": key,
            "model": model,
            "request": request,
            "completions": [c.to_dict() for c in comps],
        }
        line = json.dumps(rec, ensure_ascii=False) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(line)
            self._records[key] = rec


class CachedClient:
    """Wrap a client; serve repeated requests from ``path``, record new ones to it.

    Parameters
    ----------
    inner : LLMClient
        The client doing real calls on a miss.
    path : str or Path
        JSONL file (created on first write).

    Examples
    --------
    >>> client = CachedClient(OpenAIClient("gpt-4o-mini"), "runs/llm_cache.jsonl")  # doctest: +SKIP
    """

    def __init__(self, inner: LLMClient, path: str | Path) -> None:
        if not hasattr(inner, "chat"):
            raise TypeError(f"inner must be an LLM client with .chat(...), got {type(inner)}")
        self.inner = inner
        self.model = inner.model
        self.store = CompletionStore(path)
        self.hits = 0
        self.misses = 0

    def __repr__(self) -> str:
        return f"CachedClient({self.inner!r}, {str(self.store.path)!r})"

    def _lookup(self, messages, kwargs) -> tuple[str, dict[str, Any], list[Completion] | None]:
        params = request_params(**kwargs)
        key = request_key(self.model, messages, params)
        return key, params, self.store.get(key)

    def chat(self, messages: list[Message], **kwargs: Any) -> list[Completion]:
        """Recorded completions for this request, or the inner client's (then recorded)."""
        key, params, hit = self._lookup(messages, kwargs)
        if hit is not None:
            self.hits += 1
            return hit
        self.misses += 1
        comps = self.inner.chat(messages, **kwargs)
        self.store.put(key, self.model, {"messages": messages, "params": params}, comps)
        return comps

    async def achat(self, messages: list[Message], **kwargs: Any) -> list[Completion]:
        key, params, hit = self._lookup(messages, kwargs)
        if hit is not None:
            self.hits += 1
            return hit
        self.misses += 1
        if hasattr(self.inner, "achat"):
            comps = await self.inner.achat(messages, **kwargs)
        else:
            comps = await asyncio.to_thread(self.inner.chat, messages, **kwargs)
        self.store.put(key, self.model, {"messages": messages, "params": params}, comps)
        return comps

    def chat_many(
        self, requests: Sequence[dict[str, Any]], *, return_exceptions: bool = False
    ) -> list[list[Completion] | LLMError]:
        """Serve hits from the file and send only the misses to the inner client (concurrently
        when it has ``chat_many``)."""
        parsed = [split_request(r, i) for i, r in enumerate(requests)]
        results: list[Any] = [None] * len(parsed)
        todo = []
        for i, (messages, kwargs) in enumerate(parsed):
            try:
                key, params, hit = self._lookup(messages, kwargs)
            except Exception as exc:
                results[i] = exc
                continue
            if hit is not None:
                self.hits += 1
                results[i] = hit
            else:
                todo.append((i, key, params, messages, kwargs))
        self.misses += len(todo)
        batch = [{"messages": m, **kw} for _, _, _, m, kw in todo]
        if hasattr(self.inner, "chat_many"):
            got = self.inner.chat_many(batch, return_exceptions=True)
        else:
            got = run_sequential(self.inner.chat, batch, return_exceptions=True)
        for (i, key, params, messages, _), comps in zip(todo, got, strict=True):
            if not isinstance(comps, BaseException):
                self.store.put(key, self.model, {"messages": messages, "params": params}, comps)
            results[i] = comps
        return collect(results, return_exceptions=return_exceptions)


class ReplayClient:
    """Serve completions recorded by :class:`CachedClient`; never calls an LLM.

    Parameters
    ----------
    path : str or Path
        A recorded JSONL file.
    model : str, optional
        Model id the requests are keyed with; default the single model in the file.

    Examples
    --------
    >>> client = ReplayClient("tests/data/llm_cache.jsonl")  # doctest: +SKIP
    """

    def __init__(self, path: str | Path, model: str | None = None) -> None:
        path = Path(path)
        if not path.is_file():
            raise LLMError(f"{path}: no recorded completions file; record one with CachedClient")
        self.store = CompletionStore(path)
        if model is None:
            models = self.store.models
            if len(models) != 1:
                raise LLMError(
                    f"{path}: holds models {sorted(models)}; pass model=<one of them>"
                    if models
                    else f"{path}: holds no recorded completions"
                )
            model = models.pop()
        self.model = model

    def __repr__(self) -> str:
        return f"ReplayClient({str(self.store.path)!r}, model={self.model!r})"

    def chat(self, messages: list[Message], **kwargs: Any) -> list[Completion]:
        """The recorded completions of this exact request; :class:`LLMError` on a miss."""
        key = request_key(self.model, messages, request_params(**kwargs))
        hit = self.store.get(key)
        if hit is None:
            first = next((m.get("content", "") for m in messages if m.get("role") == "user"), "")
            raise LLMError(
                f"{self.store.path}: no recorded completion for key {key} (model {self.model!r}, "
                f"user message {first[:60]!r}); record it with CachedClient"
            )
        return hit

    async def achat(self, messages: list[Message], **kwargs: Any) -> list[Completion]:
        return self.chat(messages, **kwargs)

    def chat_many(
        self, requests: Sequence[dict[str, Any]], *, return_exceptions: bool = False
    ) -> list[list[Completion] | LLMError]:
        return run_sequential(self.chat, requests, return_exceptions=return_exceptions)

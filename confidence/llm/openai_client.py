"""A client for any OpenAI-compatible chat-completions endpoint.

Works with OpenAI, vLLM, the llama.cpp / llama-cpp-python servers and Ollama. Requests ask for
token log-probabilities with top-k alternatives and, given a JSON schema, structured output
(``response_format={"type": "json_schema", ...}``, falling back to the llama.cpp dialect
``{"type": "json_object", "schema": ...}`` when a server rejects the first; the fallback is
remembered for the client's lifetime). In the fallback the schema goes through
:func:`~confidence.llm.grammar.grammar_schema` first, because those servers compile it to a
grammar whose plain strings could otherwise run on across newlines.

All HTTP runs on one private event loop in a daemon thread, so the same client serves plain
synchronous code (:meth:`OpenAIClient.chat`), asyncio code (:meth:`OpenAIClient.achat`) and
batches (:meth:`OpenAIClient.chat_many`) with one connection pool, one concurrency bound and one
rate limit.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Sequence
from typing import Any

from confidence.errors import LLMError
from confidence.llm.base import Completion, Message, TokenLogprob
from confidence.llm.batch import collect, split_request
from confidence.llm.grammar import grammar_schema
from confidence.llm.ratelimit import RateLimiter
from confidence.llm.retry import RetryPolicy, is_retryable_status, parse_retry_after
from confidence.llm.validation import check_messages, check_params

log = logging.getLogger(__name__)

_SCHEMA_MODES = ("json_schema", "json_object")
_FALLBACK_STATUS = frozenset({400, 422})  # "bad request" / FastAPI's validation error


OPENAI_KEY_ENV = "OPENAI_API_KEY"
CUSTOM_KEY_ENV = "EXTRACTCONF_LLM_API_KEY"


def is_openai_endpoint(base_url: str | None) -> bool:
    """True for OpenAI's own API (no ``base_url``, or a URL on ``api.openai.com``).

    Examples
    --------
    >>> is_openai_endpoint(None), is_openai_endpoint("https://api.openai.com/v1")
    (True, True)
    >>> is_openai_endpoint("http://api.openai.com.evil.example/v1")
    False
    """
    if base_url is None:
        return True
    from urllib.parse import urlsplit

    parts = urlsplit(base_url)
    return parts.scheme == "https" and (parts.hostname or "").lower() == "api.openai.com"


class OpenAIClient:
    """Chat completions over HTTP, implementing :class:`~confidence.llm.base.LLMClient`.

    Parameters
    ----------
    model : str
        Model id sent to the server.
    base_url : str, optional
        Endpoint root such as ``http://127.0.0.1:8080/v1``; default OpenAI's.
    api_key_env : str, optional
        Environment variable holding the key. Default: ``OPENAI_API_KEY`` for OpenAI's own
        endpoint (``base_url`` None or on ``api.openai.com``) and ``EXTRACTCONF_LLM_API_KEY``
        for any other endpoint, so an OpenAI key is never sent to a third-party server unless
        ``api_key_env="OPENAI_API_KEY"`` is asked for explicitly. The key is read once, never
        logged, never shown in ``repr``. Other servers work without a key.
    timeout : float, default 60
        Seconds per attempt (connect, wait and read together).
    max_retries : int, default 5
        Retries on 408/409/429/5xx, timeouts and connection errors; other 4xx fail at once.
    concurrency : int, default 8
        Requests in flight at once across ``achat`` / ``chat_many`` callers.
    rpm : float, optional
        Requests-per-minute cap (request starts are spaced evenly).
    backoff : RetryPolicy, optional
        Wait schedule; default ``RetryPolicy(max_retries)``.

    Examples
    --------
    >>> client = OpenAIClient("gpt-4o-mini")  # doctest: +SKIP
    >>> [c] = client.chat([{"role": "user", "content": "2+2?"}], max_tokens=5)  # doctest: +SKIP
    >>> c.tokens[0].top[:2]  # doctest: +SKIP
    (('4', -0.0001), ('Four', -9.2))
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key_env: str | None = None,
        timeout: float = 60,
        max_retries: int = 5,
        concurrency: int = 8,
        rpm: float | None = None,
        backoff: RetryPolicy | None = None,
    ) -> None:
        if not model or not isinstance(model, str):
            raise ValueError("model must be a non-empty model id, e.g. 'gpt-4o-mini'")
        if not timeout > 0:
            raise ValueError(f"timeout={timeout}; use a positive number of seconds")
        if concurrency < 1:
            raise ValueError(f"concurrency={concurrency}; use at least 1")
        official = is_openai_endpoint(base_url)
        if api_key_env is None:
            api_key_env = OPENAI_KEY_ENV if official else CUSTOM_KEY_ENV
        key = os.environ.get(api_key_env)
        if not key:
            if official:
                raise LLMError(
                    f"no API key: set the environment variable {api_key_env} "
                    "(or pass base_url=... for a local server)"
                )
            key = "not-needed"  # local servers ignore it; openai requires a value
        self.model = model
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        self.concurrency = concurrency
        self.rpm = rpm
        self.policy = backoff if backoff is not None else RetryPolicy(max_retries=max_retries)
        self.schema_mode = "json_schema"
        self._rate = RateLimiter(rpm) if rpm is not None else None
        self._sem: asyncio.Semaphore | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._client = self._run(self._make_client(key))

    async def _make_client(self, key: str):
        import openai

        # Our own retry loop honours Retry-After and bounds the total time; the SDK's is off.
        return openai.AsyncOpenAI(
            api_key=key, base_url=self.base_url, timeout=self.timeout, max_retries=0
        )

    def __repr__(self) -> str:
        return (
            f"OpenAIClient(model={self.model!r}, base_url={self.base_url!r}, "
            f"api_key_env={self.api_key_env!r}, concurrency={self.concurrency}, rpm={self.rpm})"
        )

    def close(self) -> None:
        """Close the connection pool and stop the private event loop."""
        if self._loop.is_running():
            self._run(self._client.close())
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)

    def __enter__(self) -> OpenAIClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    # ------------------------------------------------------------------ public calls
    def chat(self, messages: list[Message], **kwargs: Any) -> list[Completion]:
        """Blocking call; see :class:`~confidence.llm.base.LLMClient` for the keywords."""
        return self._run(self._achat(messages, **kwargs))

    async def achat(self, messages: list[Message], **kwargs: Any) -> list[Completion]:
        """Awaitable :meth:`chat`, usable from any event loop."""
        fut = asyncio.run_coroutine_threadsafe(self._achat(messages, **kwargs), self._loop)
        return await asyncio.wrap_future(fut)

    def chat_many(
        self, requests: Sequence[dict[str, Any]], *, return_exceptions: bool = False
    ) -> list[list[Completion] | LLMError]:
        """Run requests (each ``{"messages": ..., **chat_kwargs}``) concurrently, in order.

        At most ``concurrency`` are in flight. With ``return_exceptions=True`` a failed request
        yields its :class:`LLMError` in place and the others still complete; otherwise the first
        failure is raised after all have finished.
        """
        parsed = [split_request(r, i) for i, r in enumerate(requests)]

        async def _all():
            coros = [self._achat(m, **kw) for m, kw in parsed]
            return await asyncio.gather(*coros, return_exceptions=True)

        return collect(self._run(_all()), return_exceptions=return_exceptions)

    # ------------------------------------------------------------------ one request
    async def _achat(
        self,
        messages: list[Message],
        *,
        schema: dict[str, Any] | None = None,
        logprobs: bool = True,
        top_logprobs: int = 5,
        n: int = 1,
        temperature: float = 0.0,
        max_tokens: int = 512,
        seed: int | None = None,
    ) -> list[Completion]:
        check_messages(messages)
        check_params(n, temperature, max_tokens, top_logprobs)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "n": n,
        }
        if seed is not None:
            body["seed"] = seed
        if logprobs:
            body["logprobs"] = True
            if top_logprobs:
                body["top_logprobs"] = top_logprobs
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.concurrency)
        t0 = time.perf_counter()
        async with self._sem:
            resp = await self._with_retries(body, schema)
        return _to_completions(resp, self.model, time.perf_counter() - t0, logprobs)

    async def _with_retries(self, body: dict[str, Any], schema: dict[str, Any] | None):
        import openai

        attempt, mode = 0, self.schema_mode
        while True:
            if schema is not None:
                body["response_format"] = _response_format(schema, mode)
            if self._rate is not None:
                await self._rate.acquire()
            try:
                async with asyncio.timeout(self.timeout):
                    resp = await self._client.chat.completions.create(**body)
                self.schema_mode = mode  # remember a fallback only once it has worked
                return resp
            except openai.APIStatusError as exc:
                status = exc.status_code
                if schema is not None and mode == "json_schema" and _rejects_json_schema(exc):
                    # llama.cpp servers only know {"type": "json_object", "schema": ...}.
                    log.info("%s rejected json_schema (%s); trying json_object", self.model, status)
                    mode = "json_object"
                    continue
                if not is_retryable_status(status) or attempt >= self.policy.max_retries:
                    raise LLMError(
                        f"{self.model}: HTTP {status} after {attempt + 1} attempt(s): "
                        f"{_short(exc.message)}"
                    ) from exc
                wait = self.policy.backoff(attempt, parse_retry_after(exc.response.headers))
            except (TimeoutError, openai.APITimeoutError, openai.APIConnectionError) as exc:
                if attempt >= self.policy.max_retries:
                    connect = isinstance(exc, openai.APIConnectionError)
                    what = "could not connect" if connect else "timed out"
                    raise LLMError(
                        f"{self.model}: {what} after {attempt + 1} attempt(s) "
                        f"(timeout {self.timeout:g}s, base_url {self.base_url})"
                    ) from exc
                wait = self.policy.backoff(attempt)
            except Exception as exc:  # malformed body, unexpected schema: not worth a retry
                raise LLMError(
                    f"{self.model}: unusable reply ({type(exc).__name__}: {_short(str(exc))})"
                ) from exc
            attempt += 1
            await asyncio.sleep(wait)


def _rejects_json_schema(exc: Any) -> bool:
    """A 400/422, or any error naming the response format (llama-cpp-python answers 500)."""
    msg = str(getattr(exc, "message", exc))
    return exc.status_code in _FALLBACK_STATUS or "json_schema" in msg or "response_format" in msg


def _response_format(schema: dict[str, Any], mode: str) -> dict[str, Any]:
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": "extraction", "schema": schema, "strict": False},
        }
    # llama.cpp servers compile the schema to a grammar: bound its strings (see grammar.py).
    return {"type": "json_object", "schema": grammar_schema(schema)}


def _to_completions(resp: Any, model: str, latency: float, want_logprobs: bool) -> list[Completion]:
    choices = getattr(resp, "choices", None)
    if not choices:
        raise LLMError(f"{model}: reply has no choices (malformed response)")
    usage = getattr(resp, "usage", None)
    usage_d = {}
    if usage is not None:
        usage_d = {
            "prompt_tokens": int(usage.prompt_tokens or 0),
            "completion_tokens": int(usage.completion_tokens or 0),
        }
    out = []
    for ch in choices:
        text = ch.message.content or ""
        out.append(
            Completion(
                text=text,
                tokens=_tokens(ch) if want_logprobs else None,
                model=getattr(resp, "model", None) or model,
                usage=usage_d,
                latency_s=latency,
                finish_reason=ch.finish_reason or "stop",
            )
        )
    return out


def _tokens(choice: Any) -> tuple[TokenLogprob, ...] | None:
    lp = getattr(choice, "logprobs", None)
    content = getattr(lp, "content", None) if lp is not None else None
    if not content:
        return None  # provider gave none: features treat them as missing, never as zero
    return tuple(
        TokenLogprob(
            t.token,
            float(t.logprob),
            tuple((a.token, float(a.logprob)) for a in (t.top_logprobs or ())),
        )
        for t in content
    )


def _short(msg: str, n: int = 200) -> str:
    msg = " ".join(str(msg).split())
    return msg if len(msg) <= n else msg[: n - 3] + "..."

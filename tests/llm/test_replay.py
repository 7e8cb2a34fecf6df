"""Recording and replaying completions: keys, JSONL store, CachedClient, ReplayClient."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from confidence.errors import LLMError
from confidence.llm import (
    CachedClient,
    Completion,
    LLMClient,
    ReplayClient,
    TokenLogprob,
    make_client,
    request_key,
    request_params,
)

MSG = [{"role": "user", "content": "Total: 12.50"}]


class CountingClient:
    """A recorded-style client: replies with the user text reversed and counts real calls."""

    model = "counting-1"

    def __init__(self):
        self.calls = 0

    def chat(self, messages, **kwargs):
        request_params(**kwargs)  # same validation as a real client
        self.calls += 1
        if "fail" in messages[-1]["content"]:
            raise LLMError("injected failure")
        text = messages[-1]["content"][::-1]
        toks = tuple(TokenLogprob(ch, -0.5, ((ch, -0.5), ("x", -1.0))) for ch in text)
        return [Completion(text, toks, self.model, {"prompt_tokens": 3}, 0.01)] * kwargs.get("n", 1)


def test_counting_client_satisfies_protocol():
    assert isinstance(CountingClient(), LLMClient)


@given(
    st.lists(
        st.fixed_dictionaries(
            {"role": st.sampled_from(["system", "user"]), "content": st.text(max_size=30)}
        ),
        min_size=1,
        max_size=3,
    ),
    st.floats(0, 2),
    st.integers(1, 4),
)
def test_key_is_stable_and_sensitive(messages, temperature, n):
    p = request_params(temperature=temperature, n=n)
    k = request_key("m", messages, p)
    # Key order inside dicts and int/float spelling of the temperature do not matter ...
    reordered = [{"content": m["content"], "role": m["role"]} for m in messages]
    assert request_key("m", reordered, request_params(n=n, temperature=temperature)) == k
    # ... but the model, the content and every parameter do.
    assert request_key("m2", messages, p) != k
    assert request_key("m", messages, {**p, "n": n + 1}) != k
    changed = [*messages[:-1], {**messages[-1], "content": messages[-1]["content"] + "!"}]
    assert request_key("m", changed, p) != k


def test_unknown_parameter_is_rejected():
    with pytest.raises(TypeError, match="valid"):
        request_params(temprature=0.3)


def test_cache_records_then_replays(tmp_path):
    path = tmp_path / "cache.jsonl"
    inner = CountingClient()
    cached = CachedClient(inner, path)
    first = cached.chat(MSG, top_logprobs=2)
    again = cached.chat(MSG, top_logprobs=2)
    assert first == again and inner.calls == 1 and (cached.hits, cached.misses) == (1, 1)
    cached.chat(MSG, top_logprobs=3)  # different parameters: a new call
    assert inner.calls == 2
    rec = json.loads(path.read_text().splitlines()[0])
    assert set(rec) == {"key", "model", "request", "completions"}
    assert rec["request"]["params"]["top_logprobs"] == 2

    replay = ReplayClient(path)
    assert replay.model == "counting-1"
    assert replay.chat(MSG, top_logprobs=2) == first
    assert asyncio.run(replay.achat(MSG, top_logprobs=2)) == first
    with pytest.raises(LLMError, match=r"no recorded completion for key [0-9a-f]{64}"):
        replay.chat(MSG, top_logprobs=4)


def test_cache_chat_many_sends_only_misses_and_keeps_failures(tmp_path):
    inner = CountingClient()
    cached = CachedClient(inner, tmp_path / "c.jsonl")
    cached.chat(MSG)
    reqs = [
        {"messages": MSG},
        {"messages": [{"role": "user", "content": "fail"}]},
        {"messages": [{"role": "user", "content": "b"}]},
    ]
    out = cached.chat_many(reqs, return_exceptions=True)
    assert inner.calls == 3  # 1 earlier + 2 misses
    assert (
        out[0][0].text == "05.21 :latoT" and isinstance(out[1], LLMError) and out[2][0].text == "b"
    )
    # The failure was not recorded: replay misses it with a clear error.
    replay = ReplayClient(tmp_path / "c.jsonl")
    res = replay.chat_many(reqs, return_exceptions=True)
    assert isinstance(res[1], LLMError) and res[2][0].text == "b"


def test_corrupt_line_is_skipped_with_its_line_number(tmp_path):
    path = tmp_path / "c.jsonl"
    CachedClient(CountingClient(), path).chat(MSG)
    with path.open("a") as fh:
        fh.write('{"key": "truncated...\n')
    with pytest.warns(UserWarning, match="line 2"):
        replay = ReplayClient(path)
    assert replay.chat(MSG)[0].text


def test_replay_needs_a_model_when_ambiguous(tmp_path):
    path = tmp_path / "c.jsonl"
    a, b = CountingClient(), CountingClient()
    b.model = "other"
    CachedClient(a, path).chat(MSG)
    CachedClient(b, path).chat(MSG)
    with pytest.raises(LLMError, match="pass model="):
        ReplayClient(path)
    assert ReplayClient(path, model="other").chat(MSG)
    with pytest.raises(LLMError, match="no recorded completions file"):
        ReplayClient(tmp_path / "none.jsonl")


def test_make_client_replay_and_cache(tmp_path):
    path = tmp_path / "c.jsonl"
    wrapped = make_client(CountingClient(), cache=path)
    assert isinstance(wrapped, CachedClient)
    wrapped.chat(MSG)
    assert make_client(f"replay:{path}").chat(MSG)[0].text == "05.21 :latoT"
    with pytest.raises(ValueError, match=r"valid: .*replay:PATH"):
        make_client("replays:x")
    with pytest.raises(TypeError, match="chat"):
        make_client(42)

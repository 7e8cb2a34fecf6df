"""OpenAIClient against a fault-injecting local server and a real llama_cpp.server."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from confidence.documents.patterns import AMOUNT_PATTERN
from confidence.errors import LLMError
from confidence.llm import OpenAIClient, RetryPolicy, make_client
from tests.fixtures.llm_servers import (
    Act,
    FakeChatServer,
    fake_server_fixture,  # noqa: F401
    llama_server_fixture,  # noqa: F401
)

MSG = [{"role": "user", "content": "Invoice total 12.50"}]
SCHEMA = {"type": "object", "properties": {"total": {"type": "string"}}, "required": ["total"]}
FAST = RetryPolicy(max_retries=3, base_delay=0.05, max_delay=2.0)


def client(server, **kw) -> OpenAIClient:
    kw.setdefault("backoff", FAST)
    kw.setdefault("timeout", 5)
    return OpenAIClient("fake", base_url=server.base_url, **kw)


def test_success_parses_tokens_and_topk(fake_server):
    with client(fake_server) as c:
        [comp] = c.chat(MSG, top_logprobs=5)
    assert comp.text == '{"total": "12.50"}'
    assert "".join(t.token for t in comp.tokens) == comp.text
    assert all(len(t.top) == 5 and t.top[0][0] == t.token for t in comp.tokens)
    assert comp.usage == {"prompt_tokens": 7, "completion_tokens": len(comp.tokens)}
    assert comp.model == "fake" and comp.latency_s > 0
    body = fake_server.requests[0][1]
    assert body["logprobs"] is True and body["top_logprobs"] == 5


def test_key_never_in_repr(monkeypatch, fake_server):
    monkeypatch.setenv("MY_KEY", "sk-secret-123")
    with client(fake_server, api_key_env="MY_KEY") as c:
        assert "sk-secret" not in repr(c) and "MY_KEY" in repr(c)


def test_openai_key_is_never_sent_to_a_custom_endpoint(monkeypatch, fake_server):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    monkeypatch.delenv("EXTRACTCONF_LLM_API_KEY", raising=False)
    with client(fake_server) as c:
        c.chat(MSG)
        assert "OPENAI_API_KEY" not in repr(c)
    assert fake_server.auth and not any("sk-openai-secret" in (a or "") for a in fake_server.auth)


def test_custom_endpoint_takes_its_own_key(monkeypatch, fake_server):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    monkeypatch.setenv("EXTRACTCONF_LLM_API_KEY", "custom-key")
    with client(fake_server) as c:
        c.chat(MSG)
    monkeypatch.setenv("MY_KEY", "named-key")
    with client(fake_server, api_key_env="MY_KEY") as c:
        c.chat(MSG)
    assert fake_server.auth == ["Bearer custom-key", "Bearer named-key"]


def test_missing_key_for_openai_names_the_variable(monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(LLMError, match="NO_SUCH_KEY_VAR"):
        OpenAIClient("gpt-4o-mini", api_key_env="NO_SUCH_KEY_VAR")


def test_429_is_retried_and_retry_after_honoured(fake_server):
    fake_server.script = [Act(status=429, headers={"Retry-After": "1"})]
    with client(fake_server) as c:
        [comp] = c.chat(MSG)
    assert comp.text
    (t0, _), (t1, _) = fake_server.requests
    assert t1 - t0 >= 0.9  # waited for Retry-After, not the 0.05 s backoff


def test_500s_exhaust_retries_in_bounded_time(fake_server):
    fake_server.default = Act(status=500)
    t0 = time.monotonic()
    with client(fake_server) as c, pytest.raises(LLMError, match="HTTP 500 after 4 attempt"):
        c.chat(MSG)
    assert len(fake_server.requests) == 4  # 1 + max_retries
    assert time.monotonic() - t0 < 3


def test_other_4xx_is_not_retried(fake_server):
    fake_server.default = Act(status=401)
    with client(fake_server) as c, pytest.raises(LLMError, match="HTTP 401 after 1 attempt"):
        c.chat(MSG)
    assert len(fake_server.requests) == 1


def test_slow_reply_times_out_without_hanging(fake_server):
    fake_server.default = Act(delay=3.0)
    t0 = time.monotonic()
    with client(fake_server, timeout=0.4, backoff=RetryPolicy(1, 0.05, 1.0)) as c:
        with pytest.raises(LLMError, match="timed out after 2 attempt"):
            c.chat(MSG)
    assert time.monotonic() - t0 < 2.0


def test_malformed_body_is_an_llm_error(fake_server):
    fake_server.script = [Act(raw=b"{not json")]
    with client(fake_server) as c, pytest.raises(LLMError, match="fake"):
        c.chat(MSG)


def test_reply_without_logprobs_gives_none_tokens(fake_server):
    fake_server.default = Act(logprobs=False)
    with client(fake_server) as c:
        [comp] = c.chat(MSG)
    assert comp.tokens is None and comp.text


def test_json_schema_rejected_falls_back_and_is_remembered(fake_server):
    fake_server.default = Act(reject_json_schema=True)
    with client(fake_server) as c:
        [comp] = c.chat(MSG, schema=SCHEMA)
        assert c.schema_mode == "json_object"
        c.chat(MSG, schema=SCHEMA)
    kinds = [b["response_format"]["type"] for _, b in fake_server.requests]
    assert kinds == ["json_schema", "json_object", "json_object"]
    sent = fake_server.requests[1][1]["response_format"]["schema"]
    assert sent["properties"]["total"]["pattern"].startswith("^")  # bounded by grammar_schema
    assert json.loads(comp.text) == {"total": "12.50"}


def test_chat_many_keeps_order_and_survives_a_failure(fake_server):
    fake_server.script = [Act(), Act(status=400)]
    reqs = [{"messages": [{"role": "user", "content": str(i)}], "n": 1} for i in range(4)]
    with client(fake_server) as c:
        out = c.chat_many(reqs, return_exceptions=True)
        assert sum(isinstance(r, LLMError) for r in out) == 1
        assert sum(isinstance(r, list) for r in out) == 3
        fake_server.script = [Act(status=400)]
        with pytest.raises(LLMError, match="1 of 4 requests failed"):
            c.chat_many(reqs)


def test_achat_from_a_foreign_loop_and_n_samples(fake_server):
    with client(fake_server) as c:
        res = asyncio.run(c.achat(MSG, n=3, temperature=0.7))
    assert len(res) == 3


def test_rpm_spaces_request_starts(fake_server):
    with client(fake_server, rpm=600) as c:  # one start per 0.1 s: 6 starts span >= 0.5 s
        c.chat_many([{"messages": MSG}] * 6)
    starts = [t for t, _ in fake_server.requests]
    # arrival times, not start times: a slow first connection can eat up to one interval
    assert starts[-1] - starts[0] >= 0.39


def test_concurrency_is_used_and_bounded():
    """24 requests of 0.6 s at concurrency 8: 8 in flight at once, never more (throughput itself
    is measured in benchmarks/bench_llm_async.py, not timed here). Each reply takes long enough
    that a loaded machine still opens all 8 before the first returns (at 0.2 s it once saw 7)."""
    server = FakeChatServer(Act(delay=0.6))
    try:
        with client(server, concurrency=8) as c:
            out = c.chat_many([{"messages": MSG}] * 24)
    finally:
        server.close()
    assert len(out) == 24
    assert server.max_in_flight == 8


def test_make_client_url_needs_model(fake_server):
    with pytest.raises(ValueError, match="model="):
        make_client(fake_server.base_url)
    c = make_client(fake_server.base_url, model="fake", backoff=FAST)
    assert isinstance(c, OpenAIClient) and c.chat(MSG)[0].text
    c.close()


@pytest.mark.slow
@pytest.mark.llm
def test_real_llama_cpp_server(llama_server):
    amount = {
        "type": "object",
        "properties": {"total": {"type": "string", "pattern": AMOUNT_PATTERN}},
        "required": ["total"],
    }
    with OpenAIClient("smollm2", base_url=llama_server, timeout=120) as c:
        [comp] = c.chat(MSG, schema=amount, max_tokens=40, top_logprobs=5)
        assert c.schema_mode == "json_object"  # llama-cpp-python rejects json_schema
        assert comp.finish_reason == "stop", comp.text
        assert "total" in json.loads(comp.text)
        assert comp.tokens is not None and len(comp.tokens) > 0
        assert "".join(t.token for t in comp.tokens) == comp.text
        for t in comp.tokens:
            assert t.logprob <= 1e-6 and len(t.top) >= 5
            lps = [lp for _, lp in t.top]
            assert lps == sorted(lps, reverse=True)

"""LocalLlamaClient end to end with the embedded SmolLM2 GGUF (real llama.cpp)."""

from __future__ import annotations

import json
import math

import pytest

pytest.importorskip("llama_cpp")

from confidence.documents.patterns import AMOUNT_PATTERN
from confidence.errors import LLMError
from confidence.llm import LocalLlamaClient, find_gguf, make_client

pytestmark = pytest.mark.llm

MSGS = [
    {"role": "system", "content": "Extract the invoice fields as JSON."},
    {
        "role": "user",
        "content": "Invoice No. INV-2024-0042\nDate: 12 March 2024\nTotal: 1,234.50 EUR",
    },
]
SCHEMA = {
    "type": "object",
    "properties": {
        "invoice_number": {"type": ["string", "null"], "maxLength": 24},
        "total": {"type": ["string", "null"], "pattern": AMOUNT_PATTERN},
    },
    "required": ["invoice_number", "total"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def client():
    return LocalLlamaClient(n_ctx=1024)


def check_tokens(comp, k):
    assert comp.tokens is not None and len(comp.tokens) > 0
    assert "".join(t.token for t in comp.tokens) == comp.text
    for t in comp.tokens:
        assert t.logprob <= 1e-6
        assert len(t.top) == k
        lps = [lp for _, lp in t.top]
        assert lps == sorted(lps, reverse=True) and all(lp <= 1e-6 for lp in lps)
        assert math.isclose(sum(math.exp(lp) for lp in lps), 1.0) or sum(map(math.exp, lps)) < 1
        # The chosen token's logprob agrees with the top list: equal if listed, else below it.
        listed = dict(t.top)
        if t.token in listed:
            assert math.isclose(listed[t.token], t.logprob, abs_tol=1e-5)
        else:
            assert t.logprob <= lps[-1] + 1e-5


def test_schema_constrained_json(client):
    [comp] = client.chat(MSGS, schema=SCHEMA, max_tokens=60, top_logprobs=5)
    data = json.loads(comp.text)
    assert set(data) == {"invoice_number", "total"}
    assert comp.finish_reason == "stop"
    assert comp.usage["completion_tokens"] >= len(comp.tokens) > 0
    assert comp.usage["prompt_tokens"] > 20 and comp.latency_s > 0
    assert comp.model == find_gguf().stem
    check_tokens(comp, 5)


def test_greedy_free_text_picks_the_argmax(client):
    [comp] = client.chat(MSGS, max_tokens=12, top_logprobs=7)
    check_tokens(comp, 7)
    for t in comp.tokens:  # greedy without grammar: the chosen token is the most likely one
        assert math.isclose(t.top[0][1], t.logprob, abs_tol=1e-5)


def test_no_logprobs_gives_none_and_n_copies(client):
    comps = client.chat(MSGS, logprobs=False, max_tokens=6, n=2)
    assert [c.tokens for c in comps] == [None, None]
    assert comps[0].text == comps[1].text


def test_sampling_is_reproducible_by_seed(client):
    a = client.chat(MSGS, max_tokens=8, temperature=1.0, seed=3, logprobs=False)
    b = client.chat(MSGS, max_tokens=8, temperature=1.0, seed=3, logprobs=False)
    assert a[0].text == b[0].text


def test_score_continuations_matches_generation_and_cache(client):
    [comp] = client.chat(MSGS, max_tokens=6, top_logprobs=1)
    llm = client._load()
    ids = llm.tokenize(comp.text.encode(), add_bos=False, special=False)
    assert [llm.detokenize([i]).decode() for i in ids] == [t.token for t in comp.tokens]
    [prefix] = client.score_continuations(MSGS, [comp.text], end_of_turn=False)
    assert math.isclose(prefix, sum(t.logprob for t in comp.tokens), abs_tol=1e-4)
    opts = ["INV-2024-0042", "1,234.50", "banana"]
    s1 = client.score_continuations(MSGS, opts)
    client.chat([{"role": "user", "content": "unrelated"}], max_tokens=3)  # moves the KV cache
    s2 = client.score_continuations(MSGS, opts[::-1])[::-1]
    s3 = LocalLlamaClient(n_ctx=1024).score_continuations(MSGS, opts[1:2])
    # Results do not depend on option order, earlier calls or a fresh model.
    assert all(math.isclose(a, b, abs_tol=1e-4) for a, b in zip(s1, s2, strict=True))
    assert math.isclose(s3[0], s1[1], abs_tol=1e-4)
    assert all(s < 0 for s in s1) and s1[2] < min(s1[:2])
    assert client.score_continuations(MSGS, []) == []


def test_logprobs_do_not_depend_on_call_history(client):
    [a] = client.chat(MSGS, max_tokens=5)
    client.chat(MSGS[1:], max_tokens=5)
    [b] = client.chat(MSGS, max_tokens=5)
    assert a.tokens == b.tokens


def test_errors_name_the_fix(client, tmp_path):
    with pytest.raises(LLMError, match="raise n_ctx"):
        client.chat([{"role": "user", "content": "word " * 1500}], max_tokens=4)
    with pytest.raises(ValueError, match="messages"):
        client.chat([{"role": "robot", "content": "x"}])
    with pytest.raises(ValueError, match="top_logprobs"):
        client.chat(MSGS, top_logprobs=50)
    with pytest.raises(LLMError, match="not found"):
        LocalLlamaClient(model_path=tmp_path / "missing.gguf")


def test_make_client_local():
    c = make_client("local", n_ctx=512)
    assert isinstance(c, LocalLlamaClient) and c.n_ctx == 512

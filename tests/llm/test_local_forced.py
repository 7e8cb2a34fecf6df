"""The embedded model's forced-token path (``decoder="forced"``) end to end on a tiny page.

Same page, same messages: the forced decoder reports the values the grammar decoder reports,
its value tokens carry the model's log-probabilities, and the Hunter and Mapper built on it give
valid :class:`~confidence.readings.CallResult` objects with logprobs.
"""

from __future__ import annotations

import json
import math

import pytest

pytest.importorskip("llama_cpp")

from confidence.calls.hunter import build_hunter, run_hunter
from confidence.calls.mapper import run_mapper
from confidence.documents.lines import document_lines
from confidence.llm import LocalLlamaClient
from confidence.schema import Field, Schema
from confidence.types import Document, Page, Word

pytestmark = pytest.mark.llm

SCHEMA = Schema(
    "tiny",
    (
        Field("vendor_name", "text", "Name of the company that issued the invoice"),
        Field("invoice_number", "id", "Invoice number"),
        Field("invoice_date", "date", "Invoice issue date"),
        Field("total", "amount", "Total amount to pay including tax"),
    ),
)
PAGE = [
    "NORTHWIND TRADING LTD",
    "Invoice No: INV-20417",
    "Date: 25/12/2018   Due: 24/01/2019",
    "Sub Total 9.00",
    "Tax 0.54",
    "TOTAL 9.54",
]


def _lines():
    words = []
    for i, text in enumerate(PAGE):
        x, y = 0.08, 0.05 + 0.04 * i
        for tok in text.split():
            w = 0.012 * len(tok)
            words.append(Word(tok, (x, y, x + w, y + 0.02), 1.0, 10.0, line_id=i, block_id=0))
            x += w + 0.01
    doc = Document("tiny", "tiny.pdf", (Page(1, 850, 1100, tuple(words), "pdf", 100.0),))
    return document_lines(doc)


@pytest.fixture(scope="module")
def clients():
    return LocalLlamaClient(n_ctx=2048), LocalLlamaClient(n_ctx=2048, decoder="grammar")


def test_forced_and_grammar_decoding_report_the_same_values(clients):
    forced, grammar = clients
    req = build_hunter(SCHEMA, _lines())
    [a] = forced.chat(req.messages, schema=req.schema)
    [b] = grammar.chat(req.messages, schema=req.schema)
    assert json.loads(a.text) == json.loads(b.text)
    assert a.finish_reason == "stop" and a.usage["forward_passes"] >= 1
    # Fixed tokens are not decoded one by one: fewer forward passes than reply tokens.
    assert a.usage["forward_passes"] < a.usage["completion_tokens"]


def test_hunter_and_mapper_give_call_results_with_value_logprobs(clients):
    forced, _ = clients
    lines = _lines()
    for result in (run_hunter(SCHEMA, lines, forced), run_mapper(SCHEMA, lines, forced)):
        assert result.status == "ok", result.error
        [comp] = result.completions
        assert "".join(t.token for t in comp.tokens) == comp.text
        values = [r for r in result.fields.values() if r.value is not None and r.tokens]
        assert values
        for r in values:
            assert "".join(t.token for t in r.tokens) == r.value
            assert all(t.logprob <= 1e-6 and len(t.top) == 5 for t in r.tokens)
            assert all(math.isfinite(t.logprob) for t in r.tokens)
    hunter = run_hunter(SCHEMA, lines, forced)
    assert hunter.fields["total"].value in {"9.54", "9.00", "0.54"}


def test_forced_results_do_not_depend_on_call_history(clients):
    forced, _ = clients
    req = build_hunter(SCHEMA, _lines())
    [a] = forced.chat(req.messages, schema=req.schema)
    forced.chat([{"role": "user", "content": "unrelated"}], max_tokens=3)
    [b] = forced.chat(req.messages, schema=req.schema)
    assert a.text == b.text and a.tokens == b.tokens


def test_unknown_decoder_is_refused():
    with pytest.raises(ValueError, match="forced, grammar"):
        LocalLlamaClient(decoder="beam")


def test_the_mapper_scores_the_rankers_values_in_one_pass_over_the_hunters_prompt(clients):
    forced, _ = clients
    lines = _lines()
    req = build_hunter(SCHEMA, lines)
    forced.chat(req.messages, schema=req.schema)  # the Hunter leaves its prompt evaluated
    m = run_mapper(SCHEMA, lines, forced, messages=req.messages)
    [comp] = m.completions
    assert comp.usage["prompt_evaluated"] <= 2  # the Hunter's prompt is reused
    assert comp.usage["forward_passes"] == 1  # every reply token fixed: one batched pass
    assert {k: r.value for k, r in m.fields.items()} == {
        k: r.value for k, r in run_mapper(SCHEMA, lines).fields.items()
    }
    assert m.fields
    for r in m.fields.values():
        assert "".join(t.token for t in r.tokens) == r.value
        assert all(t.logprob <= 1e-6 and math.isfinite(t.logprob) for t in r.tokens)
    # the same request alone (nothing evaluated before it) gives the same numbers
    fresh = LocalLlamaClient(n_ctx=2048)
    again = run_mapper(SCHEMA, lines, fresh, messages=req.messages)
    assert again.completions[0].tokens == comp.tokens

"""The ranker Mapper's LLM call scores the ranker's values in the grounded Hunter's prompt.

A fake client stands in for the model: it records each request and answers with the first
option of every ``enum`` slot, one token per character, so the test sees exactly what the
Mapper asks for and how it maps the reply's tokens back onto its readings.
"""

from __future__ import annotations

import json

from confidence.calls.extract import extract_document
from confidence.calls.hunter import build_hunter
from confidence.calls.mapper import run_mapper
from confidence.calls.ranker import default_ranker
from confidence.documents.lines import document_lines
from confidence.llm.base import Completion, TokenLogprob
from confidence.readings import CallResult, FieldReading, RunRecord, document_status
from tests.fixtures.record_replies import CLEAN, SCHEMA, make_document


class FirstOption:
    """Answer every enum-object request with each slot's first option."""

    model = "fake"

    def __init__(self) -> None:
        self.requests: list[dict] = []

    def chat(self, messages, *, schema=None, **kw):
        self.requests.append({"messages": messages, "schema": schema, **kw})
        reply = {k: v.get("enum", [None])[0] for k, v in schema["properties"].items()}
        text = json.dumps(reply, ensure_ascii=False)
        toks = tuple(TokenLogprob(c, -0.25, ((c, -0.25),)) for c in text)
        return [Completion(text, toks, self.model, {"prompt_tokens": 1}, 0.0, "stop")]


def _lines():
    return document_lines(make_document("clean", CLEAN))


def _found(call):
    """The fields a call found on the page (the ranker also reports "absent" with its prob)."""
    return {k: r for k, r in call.fields.items() if r.value is not None}


def test_the_scoring_call_allows_exactly_the_rankers_values():
    lines = _lines()
    client = FirstOption()
    m = run_mapper(SCHEMA, lines, client)
    chosen = {k: c.value for k, c in default_ranker().read(lines, SCHEMA).items() if c.value}
    [req] = client.requests
    props = req["schema"]["properties"]
    assert {k: v["enum"] for k, v in props.items()} == {k: [v] for k, v in chosen.items()}
    assert list(props) == [f for f in SCHEMA.names if f in chosen]  # schema order
    assert req["messages"] == build_hunter(SCHEMA, lines).messages  # the Hunter's prompt
    assert m.mode == "ranker+llm" and m.status == "ok" and m.n_calls == 1
    assert {k: r.value for k, r in _found(m).items()} == chosen
    for r in _found(m).values():  # every value carries the tokens that spell it
        assert "".join(t.token for t in r.tokens) == r.value
        assert all(t.logprob == -0.25 for t in r.tokens)
        assert r.n_candidates is not None and r.n_candidates >= 1


def test_the_mapper_without_a_client_reads_the_same_values():
    lines = _lines()
    with_llm = run_mapper(SCHEMA, lines, FirstOption())
    layout_only = run_mapper(SCHEMA, lines)
    assert layout_only.mode == "ranker" and layout_only.n_calls == 0
    assert {k: r.value for k, r in with_llm.fields.items()} == {
        k: r.value for k, r in layout_only.fields.items()
    }
    # the ranker's probability of every choice, "absent" included, with or without the model
    assert set(layout_only.fields) == set(SCHEMA.names)
    assert all(0 < r.prob <= 1 for r in layout_only.fields.values())
    assert {k: r.prob for k, r in with_llm.fields.items()} == {
        k: r.prob for k, r in layout_only.fields.items()
    }
    assert all(r.tokens is None for r in _found(layout_only).values())


def test_fields_the_hunter_chose_too_take_its_tokens_and_leave_the_call():
    lines = _lines()
    ranker_only = run_mapper(SCHEMA, lines)
    names = list(_found(ranker_only))
    assert len(names) >= 3
    shared, own = names[:2], names[2:]
    # a Hunter that chose the ranker's value for two fields and something else for the rest
    toks = {n: (TokenLogprob(ranker_only.fields[n].value, -0.5, ()),) for n in shared}
    hunter = CallResult(
        "hunter",
        {
            **{n: FieldReading(ranker_only.fields[n].value, toks[n]) for n in shared},
            **{n: FieldReading("other", (TokenLogprob("other", -0.1, ()),)) for n in own},
        },
        completions=(Completion("{}", (), "fake", {}, 0.0, "stop"),),
    )
    client = FirstOption()
    m = run_mapper(SCHEMA, lines, client, hunter=hunter)
    [req] = client.requests
    assert list(req["schema"]["properties"]) == own  # only the fields the Hunter read otherwise
    for n in shared:
        assert m.fields[n].tokens == toks[n]
    for n in own:
        assert "".join(t.token for t in m.fields[n].tokens) == m.fields[n].value
    assert m.completions[0] is hunter.completions[0] and m.n_calls == 1 and m.status == "ok"
    # the Hunter chose every value: no call at all, the Hunter's completion is the source
    same = CallResult(
        "hunter",
        {n: FieldReading(r.value, (TokenLogprob(r.value, -0.5, ()),)) for n, r in
         _found(ranker_only).items()},
        completions=hunter.completions,
    )  # fmt: skip
    quiet = FirstOption()
    m = run_mapper(SCHEMA, lines, quiet, hunter=same)
    assert quiet.requests == [] and m.n_calls == 0 and m.mode == "ranker+llm"
    assert (
        m.completions == hunter.completions and document_status(RunRecord("d", same, m))[0] == "ok"
    )
    assert {k: r.value for k, r in m.fields.items()} == {
        k: r.value for k, r in ranker_only.fields.items()
    }


def test_extract_document_scores_in_the_hunters_prompt():
    client = FirstOption()
    rec = extract_document(make_document("clean", CLEAN), SCHEMA, client)
    hunter_req, *mapper_req = client.requests
    assert rec.status == "ok" and rec.mapper.mode == "ranker+llm"
    found = _found(rec.mapper)
    differ = [n for n, r in found.items() if rec.hunter.fields[n].value != r.value]
    if differ:  # only the values the Hunter did not choose are scored, in its prompt
        [req] = mapper_req
        assert (
            req["messages"] == hunter_req["messages"]
            and list(req["schema"]["properties"]) == differ
        )
        assert all(len(v["enum"]) == 1 for v in req["schema"]["properties"].values())
    else:
        assert mapper_req == []
    for r in found.values():
        assert "".join(t.token for t in r.tokens) == r.value


def test_the_remote_path_keeps_the_label_prompt():
    """Free Hunter (remote model): the Mapper is the layout reading with its own label prompt."""
    client = FirstOption()
    rec = extract_document(make_document("clean", CLEAN), SCHEMA, client, hunter_mode="free")
    assert rec.mapper.mode == "layout+llm"
    mapper_req = client.requests[-1]
    assert "Labels printed in the document:" in mapper_req["messages"][1]["content"]
    assert "<document>" in mapper_req["messages"][1]["content"]

"""Reply parsing and value -> token alignment of the calls (no LLM needed)."""

from __future__ import annotations

import json
from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from confidence.calls.align import parse_object, tokens_for_span
from confidence.calls.parsing import readings_from_completion
from confidence.documents.lines import Line
from confidence.llm.base import Completion, TokenLogprob
from confidence.schema import Field, Schema

SCHEMA = Schema("t", (Field("total", "amount"), Field("date", "date"), Field("name", "text")))
LINES = [Line(0, "ACME LTD", (0, 0, 1, 0.1), 1, ()), Line(1, "TOTAL 9.00", (0, 0.5, 1, 0.6), 1, ())]


def _tokens(text: str, cuts: list[int]) -> tuple[TokenLogprob, ...]:
    pos = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return tuple(
        TokenLogprob(text[a:b], -0.1 * i) for i, (a, b) in enumerate(pairwise(pos)) if b > a
    )


def _completion(text: str, tokens=True) -> Completion:
    return Completion(text, _tokens(text, [3, 7, 11, 15, 19, 23]) if tokens else None)


def test_parse_spans_point_at_values():
    text = '{"total": "9.00", "date": null, "n": 12}'
    p = parse_object(text)
    assert p.complete and p.error is None
    assert [(s.key, s.value, text[s.start : s.end]) for s in p.spans] == [
        ("total", "9.00", "9.00"),
        ("date", None, "null"),
        ("n", 12, "12"),
    ]


def test_parse_faults_are_reported_not_raised():
    assert parse_object("").error == "empty reply"
    assert "no JSON object" in parse_object("Sure! The total is 9.").error
    p = parse_object('{"total": "9.00", "date": "25/1')
    assert not p.complete and "truncated" in p.error and p.as_dict() == {"total": "9.00"}
    assert "malformed" in parse_object('{"total": 9.00.1}').error
    assert parse_object('```json\n{"a": "x"}\n```').as_dict() == {"a": "x"}


@given(
    st.dictionaries(st.text(min_size=1, max_size=8), st.text(max_size=20), max_size=5),
    st.lists(st.integers(0, 200), max_size=30),
)
def test_spans_and_tokens_cover_every_value(values, cuts):
    text = json.dumps(values, ensure_ascii=False)
    toks = _tokens(text, cuts)
    p = parse_object(text)
    assert p.complete and p.as_dict() == values
    for s in p.spans:
        sel = tokens_for_span(toks, text, s.start, s.end)
        if s.end > s.start:
            joined = "".join(t.token for t in sel)
            # the selected tokens spell the raw value, possibly with neighbouring characters
            assert text[s.start : s.end] in joined
            assert len(joined) - (s.end - s.start) < 2 * max(len(t.token) for t in toks)


def test_tokens_none_when_provider_gave_none_or_they_do_not_spell_the_text():
    assert tokens_for_span(None, "abc", 0, 2) is None
    assert tokens_for_span((TokenLogprob("xy", -1.0),), "abc", 0, 2) is None


def test_readings_values_tokens_and_lines():
    comp = _completion('{"total": "9.00", "date": null, "name": "ACME LTD"}')
    fields, notes = readings_from_completion(comp, SCHEMA, LINES)
    assert notes == []
    assert fields["total"].value == "9.00" and fields["total"].line == 1
    assert "9.00" in "".join(t.token for t in fields["total"].tokens)
    assert fields["date"].value is None and fields["date"].tokens == ()
    assert fields["name"].line == 0 and fields["name"].raw == "ACME LTD"


def test_readings_without_logprobs_have_missing_tokens_not_empty():
    fields, _ = readings_from_completion(
        _completion('{"total": "9.00"}', tokens=False), SCHEMA, LINES
    )
    assert fields["total"].tokens is None


def test_readings_fault_notes():
    text = '{"TOTAL": "9.00", "colour": "red", "name": "' + "A" * 300 + '", "date": true}'
    fields, notes = readings_from_completion(_completion(text), SCHEMA, LINES)
    assert fields["total"].value == "9.00"  # key matched case-insensitively
    assert "colour" not in fields and any("unknown field 'colour'" in n for n in notes)
    assert fields["name"].value is None and any("longer than a text" in n for n in notes)
    assert fields["date"].value is None and any("non-scalar" in n for n in notes)
    fields, notes = readings_from_completion(_completion(""), SCHEMA, LINES)
    assert fields == {} and notes[0] == "empty reply"

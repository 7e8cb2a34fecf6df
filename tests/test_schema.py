"""Schema containers: validation at the boundary and JSON round trips."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from confidence.errors import DatasetError
from confidence.schema import FIELD_TYPES, Field, Schema

fields = st.builds(
    Field,
    name=st.text(min_size=1, max_size=12),
    type=st.sampled_from(FIELD_TYPES),
    description=st.text(max_size=30),
    required=st.booleans(),
)


@given(st.lists(fields, min_size=1, max_size=6, unique_by=lambda f: f.name))
def test_schema_round_trips_through_its_dict_and_json(fs):
    s = Schema("s", tuple(fs))
    assert Schema.from_dict(s.to_dict()) == s
    assert Schema.from_dict(json.loads(json.dumps(s.to_dict()))) == s


def test_required_is_written_only_when_set(tmp_path):
    s = Schema("s", (Field("total", "amount", "Total paid", required=True), Field("po", "id")))
    s.save(tmp_path / "schema.json")
    saved = json.loads((tmp_path / "schema.json").read_text())["fields"]
    assert saved[0]["required"] is True
    assert "required" not in saved[1]  # schemas that never set it stay as they were
    back = Schema.load(tmp_path / "schema.json")
    assert back["total"].required and not back["po"].required


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_a_required_that_is_not_a_boolean_is_refused_naming_the_field_and_file(tmp_path, bad):
    p = tmp_path / "schema.json"
    p.write_text(json.dumps({"fields": [{"name": "total", "type": "amount", "required": bad}]}))
    with pytest.raises(DatasetError, match=r"schema\.json.*'total'.*'required' must be true or"):
        Schema.load(p)


def test_a_field_listed_twice_is_refused():
    with pytest.raises(DatasetError, match="lists field 'total' twice"):
        Schema("s", (Field("total", "amount"), Field("total", "amount", required=True)))


def test_an_unknown_type_is_refused_with_the_known_ones():
    with pytest.raises(DatasetError, match=r"unknown type 'money'.*amount"):
        Field.from_dict({"name": "total", "type": "money"})


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ([], "schema lists no fields"),
        ([{"type": "amount"}], "field 1 of 'fields' must be an object with a 'name' string"),
        (["total"], "field 1 of 'fields' must be an object with a 'name' string"),
        ([{"name": "total"}, {"name": ""}], "field 2 of 'fields'"),
    ],
)
def test_a_schema_file_without_fields_or_names_is_one_clear_error(tmp_path, capsys, fields, why):
    """Through ``extractconf score --schema``: exit 2, one line naming the file (a field without
    a name was a traceback, no fields at all scored nothing with exit 0)."""
    from confidence.cli import main

    p = tmp_path / "schema.json"
    p.write_text(json.dumps({"name": "s", "fields": fields}))
    runs = tmp_path / "r.jsonl"
    runs.write_text(json.dumps({"doc_id": "a", "fields": {"total": "9"}}) + "\n")
    doc = tmp_path / "a.png"
    doc.write_bytes(b"")
    code = main(["score", str(doc), "--runs", str(runs), "--schema", str(p), "--no-documents",
                 "--out", str(tmp_path / "s.jsonl"), "--quiet"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "schema.json" in err and why in err

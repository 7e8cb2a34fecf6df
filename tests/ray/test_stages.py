"""The parts files and the batch columns of confidence.ray, without starting Ray."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pyarrow")

from confidence.ray.pipeline import _scan
from confidence.ray.stages import _PLACEHOLDER, _finalize_batch, _write_part, scored_table
from confidence.routing import SHIFTED_BATCH

INSTRUCTION = "instruction-like text near the value"


def _row(doc, field, decision="accept", status="ok", p=0.5, shift=None):
    return {
        "doc_id": doc, "field": field, "decision": decision, "status": status,
        "error": None if status == "ok" else "boom", "novelty_p": p, "out_of_domain": False,
        "straight_through": decision == "accept", "reasons": ["Hunter and Mapper agree"],
        "_shift": shift,
    }  # fmt: skip


def test_a_retried_batch_rewrites_the_same_part(tmp_path):
    t = scored_table([_row("a", "total"), _row("a", "date")])
    _write_part(t, parts=str(tmp_path), run=1)
    _write_part(t, parts=str(tmp_path), run=1)  # the same batch again (a retried task)
    assert len(list(tmp_path.glob("part-00001-*.parquet"))) == 1
    assert not list(tmp_path.glob("*.tmp"))
    docs, last = _scan(tmp_path)
    assert last == 1 and docs["a"]["n"] == 2 and docs["a"]["acc"] == 2


def test_a_later_run_replaces_a_failed_document(tmp_path):
    _write_part(scored_table([_row("a", "total", "review", "error")]), parts=str(tmp_path), run=1)
    _write_part(scored_table([_row("a", "total"), _row("b", "total")]), parts=str(tmp_path), run=2)
    docs, last = _scan(tmp_path)
    assert last == 2
    assert docs["a"]["status"] == "ok" and docs["a"]["runs"] == {1, 2} and docs["a"]["n"] == 1
    rows = scored_table(
        [{**_row("a", "total", "review", "error"), "_run": 1}, {**_row("a", "total"), "_run": 2}]
    )
    out = _finalize_batch(rows, batch_p=0.3, shifted=False, on_shift="warn", winners={"a": 2})
    assert out.num_rows == 1 and out["status"].to_pylist() == ["ok"]
    assert out["batch_shift_p"].to_pylist() == [0.3] and "_run" not in out.column_names


def test_a_shifted_batch_sends_to_review_only_with_on_shift_review():
    rows = scored_table(
        [
            _row("a", "total", shift=[_PLACEHOLDER]),
            _row("a", "date", "review", shift=None),
            _row("b", "total", "review", shift=[INSTRUCTION, _PLACEHOLDER]),
        ]
    )  # fmt: skip
    warn = _finalize_batch(rows, batch_p=1e-5, shifted=True, on_shift="warn", winners={})
    assert warn["decision"].to_pylist() == ["accept", "review", "review"]
    out = _finalize_batch(rows, batch_p=1e-5, shifted=True, on_shift="review", winners={})
    real = SHIFTED_BATCH.format(p=1e-5)
    assert out["decision"].to_pylist() == ["review"] * 3
    assert out["reasons"].to_pylist() == [
        [real],
        ["Hunter and Mapper agree"],
        ["instruction-like text near the value", real],
    ]
    assert out["straight_through"].to_pylist() == [False] * 3
    assert "_shift" not in out.column_names


def test_runs_index_later_lines_and_files_win_and_a_cut_line_is_skipped(tmp_path):
    import gzip

    from confidence.ray.pipeline import _index_runs

    one, two = tmp_path / "one.jsonl.gz", tmp_path / "two.jsonl"
    with gzip.open(one, "wt") as fh:  # compressed: spooled, then read by offset like the rest
        fh.write('{"doc_id": "a", "v": 1}\n{"doc_id": "b", "v": 1}\n{"doc_id": "e", "v": 1}\n')
    two.write_text('{"doc_id": "b", "v": 2}\n{"doc_id": "c", "v": 1}\n{"v": 3, "doc_id": "c"}\n'
                   '{"doc_id": "d", "v": ')  # fmt: skip
    spool = tmp_path / "spool"
    spool.mkdir()
    with pytest.warns(UserWarning, match="line 4 is cut short"):
        where = _index_runs([str(one), str(two)], set("abcd"), skip={"a"}, spool=spool)

    def line(doc):
        with open(where[doc][0], "rb") as fh:
            fh.seek(where[doc][1])
            return json.loads(fh.readline())

    # a: already scored; d: cut short (then "not in --runs"); e: not asked for
    assert set(where) == {"b", "c"}
    assert line("b")["v"] == 2 and line("c")["v"] == 3  # a later file, a later line wins
    assert where["b"][0] == str(two) and str(spool) not in where["b"][0]


def test_the_actors_column_table_equals_the_row_table():
    from confidence.ray.stages import _columns_table
    from confidence.scores import FieldScore

    scores = [
        FieldScore("a", "total", "amount", "9.00", "9.00", None, 0.93, "accept", 0.9, "field",
                   reasons=("Hunter and Mapper agree",), features={"lp_mean": -0.1}),
        FieldScore("a", "date", "date", None, None, None, None, "review", None, "global",
                   status="error", error="a.pdf: boom", audit=True, p_sample=1.0),
    ]  # fmt: skip
    through, shift = {"a": False}, [None, [_PLACEHOLDER]]
    rows = [
        {**s.to_dict(), "straight_through": through[s.doc_id], "_shift": sh}
        for s, sh in zip(scores, shift, strict=True)
    ]
    want = scored_table(rows, ["lp_mean", "hv_len"])
    got = _columns_table(scores, ["lp_mean", "hv_len"], through, shift)
    assert got.equals(want)
    assert got["feature.lp_mean"].to_pylist() == [-0.1, None]

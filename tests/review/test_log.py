"""The review log: round trip, validation, concurrent appends, crash tails, idempotence."""

from __future__ import annotations

import json
import multiprocessing
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from confidence.review.log import (
    Decision,
    ReviewLogError,
    append_decision,
    latest_decisions,
    read_log,
)


def _d(action="accept", doc="inv-1", field="total", shown="12.50", final="12.50", **kw):
    return Decision(doc, field, shown, final, action, "ana", **kw)


texts = st.text(min_size=1, max_size=20)


@given(
    doc=texts,
    field=texts,
    shown=st.none() | st.text(max_size=30),
    audit=st.booleans(),
    p=st.none() | st.floats(min_value=1e-6, max_value=1.0),
)
def test_round_trip_through_json(doc, field, shown, audit, p):
    d = Decision(doc, field, shown, shown, "accept", "ana", audit=audit, p_sample=p)
    back = Decision.from_dict(json.loads(json.dumps(d.to_dict())))
    assert back == d


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"action": "approve"}, "unknown action 'approve'"),
        ({"action": "absent", "final": "3"}, "final_value None"),
        ({"action": "skip", "final": "3"}, "final_value None"),
        ({"action": "accept", "final": "99"}, "use action 'correct'"),
        ({"action": "correct", "final": None}, "needs a final_value"),
        ({"p_sample": 0.0}, "p_sample"),
    ],
)
def test_invalid_decisions_are_refused_with_a_reason(kw, match):
    with pytest.raises(ReviewLogError, match=match):
        _d(**kw)


def test_from_dict_names_unknown_keys():
    with pytest.raises(ReviewLogError, match="unknown decision keys"):
        Decision.from_dict({**_d().to_dict(), "colour": "red"})


def test_append_then_read_keeps_order_and_fields(tmp_path):
    log = tmp_path / "sub" / "review.jsonl"
    ds = [_d(), _d("correct", final="13.00"), _d("absent", final=None, field="date")]
    for d in ds:
        append_decision(log, d)
    assert read_log(log) == ds
    assert log.read_text().count("\n") == 3


def test_missing_log_is_empty(tmp_path):
    assert read_log(tmp_path / "none.jsonl") == []


def test_same_decision_id_counts_once(tmp_path):
    log = tmp_path / "r.jsonl"
    d = _d()
    append_decision(log, d)
    append_decision(log, d)
    assert len(log.read_text().splitlines()) == 2
    assert read_log(log) == [d]
    assert len(latest_decisions([d, d])) == 1


def test_last_decision_wins_and_skips_do_not_hide_decisions():
    a = _d()
    b = _d("correct", final="1.00")
    s = _d("skip", final=None)
    other = _d(field="date", shown="2024-01-01", final="2024-01-01")
    latest = latest_decisions([a, b, s, other])
    assert latest[("inv-1", "total")] == b
    assert latest[("inv-1", "date")] == other
    assert latest_decisions([a, s], skips=True)[("inv-1", "total")] == s


def test_cut_short_last_line_is_skipped_with_a_warning_and_dropped_on_append(tmp_path):
    log = tmp_path / "r.jsonl"
    first = _d()
    append_decision(log, first)
    with log.open("a") as fh:
        fh.write('{"doc_id": "inv-2", "fie')  # a crash mid-write
    with pytest.warns(UserWarning, match="cut short"):
        assert read_log(log) == [first]
    second = _d(doc="inv-3")
    with pytest.warns(UserWarning, match="dropping a last line"):
        append_decision(log, second)
    assert read_log(log) == [first, second]


def test_corrupt_line_in_the_middle_is_an_error_naming_the_line(tmp_path):
    log = tmp_path / "r.jsonl"
    append_decision(log, _d())
    with log.open("a") as fh:
        fh.write("not json\n")
    append_decision(log, _d(doc="inv-2"))
    with pytest.raises(ReviewLogError, match=r"r\.jsonl:2: not a review decision"):
        read_log(log)


def _append_many(path, worker, n):
    for i in range(n):
        append_decision(path, _d(doc=f"w{worker}-{i}", shown="x" * 2000, final="x" * 2000))


def test_threads_and_processes_never_interleave_lines(tmp_path):
    log = tmp_path / "r.jsonl"
    n = 40
    threads = [threading.Thread(target=_append_many, args=(log, w, n)) for w in range(3)]
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_append_many, args=(log, w, n)) for w in (10, 11)]
    for t in threads + procs:
        t.start()
    for t in threads + procs:
        t.join()
    assert all(p.exitcode == 0 for p in procs)
    got = read_log(log)
    assert len(got) == 5 * n
    assert {d.doc_id for d in got} == {f"w{w}-{i}" for w in (0, 1, 2, 10, 11) for i in range(n)}

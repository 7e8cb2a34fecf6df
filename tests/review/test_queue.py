"""The review queue: which rows, in which order, leases between clients, resume from the log."""

from __future__ import annotations

import pytest

from confidence.errors import ExtractConfError
from confidence.review.log import Decision, append_decision, read_log
from confidence.review.queue import (
    LeaseError,
    ReviewQueue,
    order_items,
    queue_items,
    with_lines,
)
from tests.fixtures.review import row

ROWS = [
    row("a", "total", "9.00", 0.98, decision="accept"),  # accepted: not shown
    row("a", "date", "2024-01-01", 0.40),
    row("b", "total", "1.00", 0.10),
    row("b", "vendor", "Kappa", 0.95, decision="accept", audit=True, p_sample=0.05),
    row("c", "total", None, None, status="error"),
    row("a", "vendor", "Acme", 0.70),
]


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_queue_has_review_rows_and_audit_rows_only():
    items = queue_items(ROWS)
    assert [i.key for i in items] == [
        ("a", "date"), ("b", "total"), ("b", "vendor"), ("c", "total"), ("a", "vendor"),
    ]  # fmt: skip
    audit = items[2]
    assert audit.audit and audit.p_sample == 0.05
    assert all(i.p_sample == 1.0 for i in items if not i.audit)


def test_csv_style_cells_are_understood():
    items = queue_items([row("a", "t", "1", "0.5", audit="true", p_sample="0.02",
                             decision="accept", reasons="x; y")])  # fmt: skip
    assert items[0].audit and items[0].p_sample == 0.02
    assert items[0].confidence == 0.5 and items[0].reasons == ("x", "y")


def test_orders():
    items = queue_items(ROWS)
    by_conf = [i.key for i in order_items(items, "confidence")]
    assert by_conf[0] == ("c", "total")  # no confidence (error) first
    assert by_conf[1:] == [("b", "total"), ("a", "date"), ("a", "vendor"), ("b", "vendor")]
    by_doc = [i.key for i in order_items(items, "document")]
    assert by_doc == [("a", "date"), ("a", "vendor"), ("b", "total"), ("b", "vendor"),
                      ("c", "total")]  # fmt: skip
    with pytest.raises(ExtractConfError, match="use one of: confidence, document"):
        order_items(items, "random")


def _queue(tmp_path, **kw):
    return ReviewQueue(order_items(queue_items(ROWS), "document"), tmp_path / "r.jsonl", **kw)


def test_two_clients_never_hold_the_same_field_within_the_lease(tmp_path):
    clock = Clock()
    q = _queue(tmp_path, lease=60, clock=clock)
    a, lease_a = q.next("alice")
    b, lease_b = q.next("bob")
    assert a.key != b.key and lease_a != lease_b
    assert q.next("alice") == (a, lease_a)  # a reload shows the same field
    clock.t = 59
    assert q.next("carol")[0].key not in {a.key, b.key}
    clock.t = 59 + 61  # alice and bob gone quiet: their leases expired (carol's refreshed at 59)
    got = {q.next(c)[0].key for c in ("dave", "erin")}
    assert got == {a.key, b.key}


def test_expired_lease_taken_by_another_refuses_the_late_submit(tmp_path):
    clock = Clock()
    q = _queue(tmp_path, lease=10, clock=clock)
    item, lease = q.next("alice")
    clock.t = 11
    assert q.next("bob")[0] == item
    with pytest.raises(LeaseError, match="expired"):
        q.submit(lease, "accept", None, "alice")
    assert read_log(tmp_path / "r.jsonl") == []


def test_submit_logs_once_and_moves_on(tmp_path):
    q = _queue(tmp_path)
    item, lease = q.next("alice")
    d = q.submit(lease, "correct", "2024-02-01", "alice")
    assert d.final_value == "2024-02-01" and d.shown_value == item.value and d.p_sample == 1.0
    assert q.submit(lease, "correct", "2024-02-01", "alice") is None  # double submit
    assert len(read_log(tmp_path / "r.jsonl")) == 1
    assert q.next("alice")[0].key != item.key
    p = q.progress(item.doc_id)
    assert (p.done, p.left, p.doc_done, p.doc_total) == (1, 4, 1, 2)


def test_accept_keeps_the_shown_value_whatever_was_sent(tmp_path):
    q = _queue(tmp_path)
    item, lease = q.next("alice")
    assert q.submit(lease, "accept", "something else", "alice").final_value == item.value


def test_skipped_fields_come_back_last(tmp_path):
    q = _queue(tmp_path)
    first, lease = q.next("alice")
    q.submit(lease, "skip", None, "alice")
    seen = []
    while (got := q.next("alice")) is not None and got[0].key not in seen:
        seen.append(got[0].key)
        q.submit(got[1], "accept", None, "alice")
    assert seen[-1] == first.key and len(seen) == 5


def test_restart_resumes_from_the_log(tmp_path):
    q = _queue(tmp_path)
    for _ in range(2):
        _, lease = q.next("alice")
        q.submit(lease, "absent", None, "alice")
    again = _queue(tmp_path)
    assert again.progress().done == 2
    done = {d.field for d in read_log(tmp_path / "r.jsonl")}
    left = []
    while (got := again.next("x")) is not None:
        left.append(got[0].key)
        again.submit(got[1], "accept", None, "x")
    assert len(left) == 3 and not any(k[0] == "a" and k[1] in done for k in left)


def test_decisions_for_rows_outside_the_queue_are_ignored(tmp_path):
    log = tmp_path / "r.jsonl"
    append_decision(log, Decision("zzz", "total", "1", "1", "accept", "ana"))
    assert _queue(tmp_path).progress().done == 0


def test_lease_must_be_positive(tmp_path):
    with pytest.raises(ExtractConfError, match="--lease"):
        _queue(tmp_path, lease=0)


def test_with_lines_takes_each_readings_line_from_the_runs():
    from confidence.readings import CallResult, FieldReading, RunRecord

    rec = RunRecord(
        "a",
        CallResult("hunter", {"date": FieldReading("2024-01-01", line=2)}),
        CallResult("mapper", {"date": FieldReading("2024-01-02", line=5)}),
    )
    items = with_lines(queue_items(ROWS), {"a": rec})
    by_key = {i.key: i for i in items}
    assert (by_key[("a", "date")].hunter_line, by_key[("a", "date")].mapper_line) == (2, 5)
    assert by_key[("a", "vendor")].hunter_line is None  # not in the run's readings
    assert by_key[("b", "total")] == queue_items(ROWS)[1]  # no run for b: unchanged

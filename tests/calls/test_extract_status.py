"""Document status from the readings (ok / partial / error), the resumable runs file's retry
rule, and the per-document deadline."""

from __future__ import annotations

import asyncio
import json

import pytest

from confidence.calls.extract import RunsFile
from confidence.errors import LLMError
from confidence.llm.base import Completion
from confidence.llm.deadline import DeadlineClient
from confidence.readings import CallResult, FieldReading, RunRecord, document_status
from confidence.records import load_runs

OK_H = CallResult("hunter", {"total": FieldReading("9.00")})
BAD_H = CallResult("hunter", {}, status="error", error="timed out")
OK_M = CallResult("mapper", {"total": FieldReading("9.00")}, mode="layout+llm",
                  completions=(Completion("{}", None, "m", {}, 0.0, "stop"),))  # fmt: skip
# the Mapper's LLM call failed: its layout values were kept, but that is not a reading
LOST_M = CallResult("mapper", {"total": FieldReading("9.00")}, mode="layout+llm",
                    status="partial", error="LLM call failed: HTTP 500")  # fmt: skip
LAYOUT_M = CallResult("mapper", {"total": FieldReading("9.00")}, mode="layout", n_calls=0)


@pytest.mark.parametrize(
    "hunter, mapper, status",
    [
        (OK_H, OK_M, "ok"),
        (OK_H, LAYOUT_M, "ok"),  # no labelled pair: no LLM call to fail
        (OK_H, None, "ok"),  # --no-mapper
        (BAD_H, OK_M, "partial"),
        (OK_H, LOST_M, "partial"),
        (BAD_H, LOST_M, "error"),
        (BAD_H, None, "error"),
        (None, None, "error"),
    ],
)
def test_document_status(hunter, mapper, status):
    got, why = document_status(RunRecord("d", hunter, mapper))
    assert got == status
    assert (why is None) == (status == "ok")


def test_recorded_error_stays_error():
    rec = RunRecord("d", OK_H, OK_M, status="error", error="file unreadable")
    assert document_status(rec) == ("error", "file unreadable")


def test_runs_file_retries_partial_and_failed_and_newest_line_wins(tmp_path):
    p = tmp_path / "runs.jsonl"
    with RunsFile(p) as runs:
        runs.append(RunRecord("a", OK_H, OK_M))
        runs.append(RunRecord("b", BAD_H, OK_M, status="partial", error="hunter failed"))
        runs.append(RunRecord("c", BAD_H, LOST_M, status="error", error="both failed"))
        # an old file that recorded a failed call as ok is retried too
        runs.append(RunRecord("d", BAD_H, LOST_M))
    again = RunsFile(p)
    assert again.done == {"a"} and again.retry == {"b", "c", "d"}
    with again:
        again.append(RunRecord("b", OK_H, OK_M))
    assert RunsFile(p).done == {"a", "b"}
    assert len(p.read_text().splitlines()) == 5
    assert load_runs(p)["b"].status == "ok"  # the retried line replaces the old one


def test_runs_file_skips_a_cut_short_line(tmp_path):
    p = tmp_path / "runs.jsonl"
    p.write_text(json.dumps(RunRecord("a", OK_H, OK_M).to_dict()) + '\n{"doc_id": "b", "hun')
    runs = RunsFile(p)
    assert runs.done == {"a"} and runs.bad_lines == 1


class _Slow:
    model = "slow"

    def __init__(self):
        self.started = 0

    def chat(self, messages, **kw):
        return [Completion("{}", None, self.model, {}, 0.0, "stop")]

    async def achat(self, messages, **kw):
        self.started += 1
        await asyncio.sleep(5)


def test_deadline_cancels_the_call_in_flight_and_refuses_later_ones():
    inner = _Slow()
    client = DeadlineClient(inner, 0.05)
    with pytest.raises(LLMError, match=r"deadline of 0\.05s passed during the call"):
        client.chat([{"role": "user", "content": "x"}])
    with pytest.raises(LLMError, match=r"deadline of 0\.05s passed$"):
        client.chat([{"role": "user", "content": "x"}])
    assert inner.started == 1


def test_deadline_passes_replies_through():
    class Fast(_Slow):
        async def achat(self, messages, **kw):
            return self.chat(messages)

    [c] = DeadlineClient(Fast(), 5).chat([{"role": "user", "content": "x"}])
    assert c.text == "{}"
    with pytest.raises(ValueError, match="positive"):
        DeadlineClient(Fast(), 0)

import gc

import pytest

from confidence.errors import DatasetError
from confidence.gcpause import paused_gc
from confidence.records import load_runs


@pytest.fixture(autouse=True)
def _gc_enabled_after():
    yield
    assert gc.isenabled()
    gc.enable()


def test_paused_inside_and_enabled_after():
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_nested_blocks_enable_only_at_the_outer_end():
    with paused_gc():
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block did not disable it, so it leaves it off
    assert gc.isenabled()


def test_a_caller_who_disabled_the_collector_keeps_it_disabled():
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_enabled_again_when_the_block_raises():
    with pytest.raises(ValueError), paused_gc():
        raise ValueError("boom")
    assert gc.isenabled()


def test_reading_a_malformed_runs_file_leaves_the_collector_enabled(tmp_path):
    p = tmp_path / "runs.jsonl"
    p.write_text('{"doc_id": "a", "fields": {"total": "9.00"}}\nnot json\n')
    with pytest.raises(DatasetError, match=r"runs.jsonl:2: not valid JSON"):
        load_runs([p])
    assert gc.isenabled()
    p.write_text('{"doc_id": "a", "fields": {"total": "9.00"}}\n')
    assert list(load_runs([p])) == ["a"]
    assert gc.isenabled()


def test_scoring_leaves_the_collector_enabled_also_on_bad_input():
    from confidence.engine import ConfidenceEngine
    from confidence.schema import Field, Schema

    engine = ConfidenceEngine.load()
    schema = Schema("s", (Field("total", "amount"),))
    [row] = engine.score([{"doc_id": "a", "fields": {"total": "9.00"}}], schema)
    assert row.field == "total" and gc.isenabled()
    with pytest.raises(DatasetError):
        engine.score([{"doc_id": "a", "fields": {"total": {"no": "value"}}}], schema)
    assert gc.isenabled()

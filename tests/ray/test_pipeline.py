"""``extractconf score --engine ray`` on a real local Ray (2 CPUs): the same rows as the
single-process path, bad files as error rows, a worker killed mid-run, a resumed job."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import pytest

pytest.importorskip("ray")
pq = pytest.importorskip("pyarrow.parquet")

from confidence.cli import main  # noqa: E402
from confidence.engine import ConfidenceEngine  # noqa: E402
from confidence.ray import init_ray, score_documents, score_runs  # noqa: E402
from confidence.schema import Schema  # noqa: E402
from tests.fixtures.engine import lenient  # noqa: E402
from tests.fixtures.ray_jobs import BAD, make_batch  # noqa: E402

pytestmark = pytest.mark.slow  # Ray's start and its worker processes: about two minutes in all
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def local_ray():
    import ray

    # workers import tests.fixtures (the dying LLM stand-in) from the repository
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), before) if p)
    try:
        assert init_ray(None, 2, quiet=True)
        assert ray.available_resources().get("CPU", 0) <= 2
        yield ray
    finally:
        ray.shutdown()
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    root = tmp_path_factory.mktemp("raybatch")
    files, runs, schema = make_batch(root)
    return root, files, runs, schema


def _rows(out: Path) -> dict[tuple[str, str], dict]:
    rows = pq.read_table(out).to_pylist()
    keyed = {(r["doc_id"], r["field"]): r for r in rows}
    assert len(keyed) == len(rows), "a (doc_id, field) row written twice"
    return keyed


def _same(a: dict, b: dict) -> list[str]:
    """The columns on which two rows differ (numbers compared to 1e-9)."""
    diff = []
    for c in a.keys() | b.keys():
        x, y = a.get(c), b.get(c)
        if isinstance(x, float) and isinstance(y, float):
            if not math.isclose(x, y, rel_tol=0, abs_tol=1e-9):
                diff.append(c)
        elif x != y:
            diff.append(c)
    return diff


@pytest.mark.parametrize(
    "extra",
    [
        ["--audit-rate", "0.5", "--audit-seed", "3"],
        ["--on-shift", "review", "--features", "3", "--no-documents", "--audit-rate", "0.5"],
    ],
    ids=["documents-audit", "runs-only-on-shift-review-features"],
)
def test_ray_rows_equal_single_process_rows(local_ray, batch, extra, capsys):
    root, files, runs, schema = batch
    # thresholds of 0.5: the audit and shift checks need accepted fields, whatever the shipped
    # thresholds' strictness; both paths route with the same file
    loose = root / "thresholds-0.5.json"
    if not loose.exists():
        lenient(ConfidenceEngine.load()).thresholds_.save(loose)
    common = ["--runs", str(runs), "--schema", str(schema), "--no-cache", "--quiet",
              "--thresholds", str(loose), *extra]  # fmt: skip
    name = "-".join(extra) or "default"
    bad = set() if "--no-documents" in extra else set(BAD)  # unread files: scored from runs
    single = root / f"single{name}.jsonl"
    assert main(["score", *map(str, files), "--out", str(single), *common]) == int(bool(bad))
    capsys.readouterr()
    out = root / f"ray-out{name}"
    rc = main(["score", *map(str, files), "--out", str(out), "--engine", "ray", *common])
    assert rc == int(bool(bad))  # the bad documents failed, the batch carried on
    io = capsys.readouterr()
    assert "scored 12 documents, 60 fields" in io.out
    n_audit = re.search(r"(\d+) accepted fields sampled for audit \(rate 0.5\)", io.out)
    assert (f"{len(bad)} failed" in io.out) == bool(bad)
    for d in bad:
        assert f"{d}: error: " in io.err
    want = {(r["doc_id"], r["field"]): r for r in map(json.loads, single.open())}
    got = _rows(out)
    assert set(got) == set(want) and len(got) == 12 * 5
    for key, row in want.items():
        assert list(row) == [c for c in got[key] if c in row]  # same columns, same order
        diff = _same(row, got[key])
        assert diff == [], (key, {c: (row[c], got[key].get(c)) for c in diff})
    errors = {d for (d, _), r in got.items() if r["status"] == "error"}
    assert errors == bad
    assert all(got[(d, "total")]["error"] for d in bad)
    scans = {d for d, _ in got if d.startswith("scan-")}
    assert len(scans) == 3 and all(got[(d, "total")]["status"] == "ok" for d in scans)
    assert any(r["confidence"] is not None for r in got.values())
    assert all(r["audit_rate"] == 0.5 for r in got.values())
    audited = [r for r in got.values() if r["audit"]]  # the same rows as in one process
    assert audited or "--on-shift" in extra  # seeded: this batch has audited rows
    assert int(n_audit.group(1)) == len(audited)
    assert all(r["reasons"][0].startswith("audit sample") for r in audited)
    assert all(r["p_sample"] == 0.5 and r["decision"] == "review" for r in audited)
    if "--on-shift" in extra:  # a shifted batch: with --on-shift review every field is reviewed
        assert got[("d000", "total")]["batch_shift_p"] < 0.01
        assert all(r["decision"] == "review" for r in got.values())
        # the reason is given where it changed the decision: every field that the same command
        # without --on-shift review accepts (or samples for audit among the accepted ones)
        warn = root / f"warn{name}.jsonl"
        args = [a for a in common if a not in ("--on-shift", "review")]
        main(["score", *map(str, files), "--out", str(warn), *args])
        capsys.readouterr()
        warned = [json.loads(x) for x in warn.open()]
        moved = [
            (r["doc_id"], r["field"]) for r in warned if r["decision"] == "accept" or r["audit"]
        ]
        # (the batch's or the document's own novelty, whichever decided)
        assert all("unlike the calibration documents" in got[k]["reasons"][0] for k in moved)
        assert any("batch unlike" in "".join(r["reasons"]) for r in got.values()) or moved
        assert any(c.startswith("feature.") for r in got.values() for c in r)


def test_worker_killed_mid_run_loses_and_duplicates_nothing(local_ray, batch, tmp_path):
    from tests.fixtures.ray_jobs import DyingFirstOption

    _, files, _, schema_path = batch
    marker = tmp_path / "died"
    victim = json.loads((files[0].parents[1] / "labels.jsonl").read_text().splitlines()[2])
    client = DyingFirstOption(victim["fields"]["invoice_number"], str(marker))
    good = [f for f in files if f.stem not in BAD]
    job = score_documents(
        good, Schema.load(schema_path), tmp_path / "out", llm=lambda: client, use_cache=False
    )
    assert marker.exists(), "the stand-in never killed its worker"
    assert int(marker.read_text()) != os.getpid()  # it was a Ray worker, not this process
    rows = _rows(tmp_path / "out")  # asserts no (doc_id, field) twice
    assert {d for d, _ in rows} == {f.stem for f in good}
    assert len(rows) == len(good) * 5 and len(job.status) == len(good)
    assert all(r["status"] == "ok" and r["llm"] == "first-option" for r in rows.values())
    assert job.dataset().count() == len(rows)  # Ray reads the rows, not the parts beside them


def test_resume_skips_documents_already_written(local_ray, batch, tmp_path):
    _, files, runs, schema_path = batch
    schema = Schema.load(schema_path)
    items = [{"doc_id": f.stem, "path": str(f)} for f in files]
    out = tmp_path / "out"
    kw = {"documents": True, "cache_dir": str(tmp_path / "cache")}
    first = score_runs(items[:5], [runs], schema, out, **kw)  # a job stopped early
    assert len(first.status) == 5 and first.n_skipped == 0
    job = score_runs(items, [runs], schema, out, **kw)
    assert job.n_skipped == 5  # already written ok: not scored again
    assert len(job.status) == 12
    resumed = _rows(out)  # no duplicates
    fresh = score_runs(items, [runs], schema, tmp_path / "fresh", **kw)
    assert fresh.n_skipped == 0
    want = _rows(tmp_path / "fresh")
    assert set(resumed) == set(want)
    assert all(_same(want[k], resumed[k]) == [] for k in want)
    # the bad files were retried on the re-run (a failed document is never skipped) ...
    again = score_runs(items, [runs], schema, out, **kw)
    assert again.n_skipped == 9
    assert _rows(out).keys() == want.keys()  # ... and their new rows replace the old


def test_embedded_workers_run_at_the_users_priority(local_ray):
    @local_ray.remote(num_cpus=0)
    def niceness():
        return os.nice(0)

    # Ray's default lowers workers to nice 15: a stand-in for --n-jobs must not yield to all
    assert local_ray.get(niceness.remote()) == os.nice(0)


def test_missing_ray_names_the_extra(monkeypatch):
    import sys

    from confidence.ray import require_ray

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r"extractconf\[ray\]"):
        require_ray()

"""``extractconf extract`` end to end on generated invoices, and the real embedded model."""

from __future__ import annotations

import importlib.util
import json

import pytest

from confidence.cli import main
from confidence.llm.base import Completion, TokenLogprob


class FirstOption:
    """Deterministic client: picks each property's first enum option (or null)."""

    model = "first-option"

    def __init__(self) -> None:
        self.calls = 0

    def chat(self, messages, *, schema=None, n=1, **kw):
        self.calls += 1
        props = (schema or {}).get("properties", {})
        reply = {
            k: 50 if v.get("type") == "integer" else (v.get("enum") or [None])[0]
            for k, v in props.items()
        }
        text = json.dumps(reply)
        toks = tuple(TokenLogprob(text[i : i + 3], -0.5) for i in range(0, len(text), 3))
        return [
            Completion(text, toks, self.model, {"prompt_tokens": 10, "completion_tokens": 5})
        ] * n


@pytest.fixture()
def dataset(tmp_path):
    from confidence.datasets.synthetic import generate

    out = tmp_path / "ds"
    generate(out, 3, seed=5)
    return out


def test_extract_cli_writes_resumes_and_reports(dataset, tmp_path, monkeypatch, capsys):
    import confidence.llm

    client = FirstOption()
    monkeypatch.setattr(confidence.llm, "make_client", lambda *a, **k: client)
    out = tmp_path / "runs.jsonl"
    cache = str(tmp_path / "cache")
    args = ["extract", str(dataset), "--out", str(out), "--quiet", "--cache-dir", cache]
    assert main([*args, "--limit", "2", "--samples", "2", "--verbalized"]) == 0
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(recs) == 2 and all(r["status"] == "ok" for r in recs)
    assert all(r["hunter"]["mode"] == "grounded" and len(r["samples"]) == 2 for r in recs)
    # Hunter, samples, verbalized; the Mapper calls only for values the Hunter did not choose
    assert all(r["llm_calls"] == 4 + r["mapper"]["n_calls"] for r in recs)
    summary = capsys.readouterr().out
    assert "2 document(s)" in summary and "LLM calls" in summary and "tokens" in summary
    calls_before = client.calls
    assert main(args) == 0  # resumes: only the third document is extracted
    assert len(out.read_text().splitlines()) == 3
    third = json.loads(out.read_text().splitlines()[-1])
    # the Hunter and, for values it did not choose, the Mapper of one document
    assert client.calls - calls_before == 1 + third["mapper"]["n_calls"]


def test_extract_cli_bad_document_keeps_its_line(dataset, tmp_path, monkeypatch):
    import confidence.llm

    monkeypatch.setattr(confidence.llm, "make_client", lambda *a, **k: FirstOption())
    labels = (dataset / "labels.jsonl").read_text().splitlines()
    first = json.loads(labels[0])
    (dataset / first["file"]).write_bytes(b"%PDF-1.4 this is not a pdf")
    out = tmp_path / "runs.jsonl"
    rc = main(
        [
            "extract",
            str(dataset),
            "--out",
            str(out),
            "--quiet",
            "--no-mapper",
            "--cache-dir",
            str(tmp_path / "c"),
        ]
    )
    recs = {json.loads(x)["doc_id"]: json.loads(x) for x in out.read_text().splitlines()}
    assert rc == 1 and len(recs) == 3
    assert recs[first["doc_id"]]["status"] == "error" and recs[first["doc_id"]]["error"]


def test_extract_cli_refuses_bad_options(dataset, tmp_path, capsys):
    assert main(["extract", str(dataset), "--out", str(tmp_path / "r.jsonl"), "--n-jobs", "0"]) == 2
    assert "argument --n-jobs: 0: pass at least 1" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.llm
@pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None, reason="needs extractconf[local]"
)
def test_real_embedded_model_end_to_end():
    """SmolLM2-135M through llama.cpp on a tiny invoice: every call made, values aligned."""

    from confidence.calls import extract_document
    from confidence.llm.local import LocalLlamaClient
    from tests.fixtures.record_replies import CLEAN, SCHEMA, make_document

    rec = extract_document(make_document("e2e", CLEAN), SCHEMA, LocalLlamaClient(n_ctx=2048))
    assert rec.status == "ok" and rec.hunter.status == "ok" and rec.llm_calls == 2
    assert rec.hunter.fields["invoice_date"].value == "25/12/2018"
    for fr in rec.hunter.fields.values():
        if fr.value:
            assert fr.value in "".join(t.token for t in fr.tokens)
    assert rec.mapper.fields["invoice_number"].value == "INV-20417"
    assert rec.meta["usage"]["completion_tokens"] > 0


def test_redo_mapper_keeps_hunter_and_rewrites_atomically(dataset, tmp_path, monkeypatch):
    import confidence.llm

    client = FirstOption()
    monkeypatch.setattr(confidence.llm, "make_client", lambda *a, **k: client)
    out = tmp_path / "runs.jsonl"
    cache = str(tmp_path / "cache")
    base = ["extract", str(dataset), "--out", str(out), "--quiet", "--cache-dir", cache]
    assert main([*base, "--limit", "2"]) == 0
    before = [json.loads(x) for x in out.read_text().splitlines()]
    # Spoil the recorded Mapper so a rewrite is visible; keep a cut-short line too.
    spoiled = [dict(r, mapper={"kind": "mapper", "fields": {}, "status": "error"}) for r in before]
    out.write_text("".join(json.dumps(r) + "\n" for r in spoiled) + '{"doc_id": "x"\n')
    calls = client.calls
    assert main([*base, "--redo-mapper"]) == 0
    lines = out.read_text().splitlines()
    assert lines[-1] == '{"doc_id": "x"' and len(lines) == 3
    after = [json.loads(x) for x in lines[:2]]
    assert [a["hunter"] for a in after] == [b["hunter"] for b in before]
    assert all(a["mapper"]["fields"] and a["mapper"]["status"] != "error" for a in after)
    assert client.calls - calls == 2  # one Mapper call per record, no Hunter call
    assert not list(tmp_path.glob("*.tmp"))
    assert main([*base, "--redo-mapper", "--llm", "none"]) == 0
    first = json.loads(out.read_text().splitlines()[0])
    assert first["mapper"]["mode"] == "ranker"  # a grounded run's Mapper is the ranker's reading
    assert first["meta"]["reported"] == "mapper"


def _receipt_folder(root, required):
    """A one-page PDF receipt whose shop name has no label, and a schema marking it or not."""
    from reportlab.lib.pagesizes import A6
    from reportlab.pdfgen import canvas

    (root / "files").mkdir(parents=True)
    c = canvas.Canvas(str(root / "files" / "r1.pdf"), pagesize=A6)
    h = A6[1]
    for x, y, text in [
        (70, 20, "77 GREEN GROCER"),
        (40, 40, "12 Elm Road, Leeds LS1 4AB"),
        (15, 90, "2 x Bread 3.00"),
        (15, 130, "TOTAL"),
        (180, 130, "6.00"),
    ]:
        c.drawString(x, h - y, text)
    c.save()
    shop = {"name": "shop", "type": "text", "description": "Name of the shop on the receipt"}
    if required:
        shop["required"] = True
    total = {"name": "total", "type": "amount", "description": "Total amount paid"}
    (root / "schema.json").write_text(json.dumps({"name": "r", "fields": [shop, total]}))
    gold = {"shop": "77 GREEN GROCER", "total": "6.00"}
    (root / "labels.jsonl").write_text(
        json.dumps({"doc_id": "r1", "file": "files/r1.pdf", "fields": gold}) + "\n"
    )
    return root


def test_extract_cli_never_reports_a_required_field_absent(tmp_path, monkeypatch):
    import confidence.llm

    monkeypatch.setattr(confidence.llm, "make_client", lambda *a, **k: FirstOption())
    got = {}
    for required in (False, True):
        folder = _receipt_folder(tmp_path / str(required), required)
        out = tmp_path / f"{required}.jsonl"
        assert main(["extract", str(folder), "--out", str(out), "--quiet"]) == 0
        rec = json.loads(out.read_text())
        assert rec["status"] == "ok"
        got[required] = {k: v["value"] for k, v in rec["mapper"]["fields"].items()}
    assert got[False] == {"shop": None, "total": "6.00"}  # an unlabelled line: read as absent
    assert got[True] == {"shop": "77 GREEN GROCER", "total": "6.00"}


def _one_page(tmp_path, monkeypatch, printed, fields, gold):
    """``extractconf extract`` of a one-page text-layer PDF; its one record."""
    from reportlab.lib.pagesizes import A6
    from reportlab.pdfgen import canvas

    import confidence.llm

    monkeypatch.setattr(confidence.llm, "make_client", lambda *a, **k: FirstOption())
    root = tmp_path / "ds"
    (root / "files").mkdir(parents=True)
    c = canvas.Canvas(str(root / "files" / "r1.pdf"), pagesize=A6)
    for x, y, text in printed:
        c.drawString(x, A6[1] - y, text)
    c.save()
    (root / "schema.json").write_text(json.dumps({"name": "r", "fields": fields}))
    (root / "labels.jsonl").write_text(
        json.dumps({"doc_id": "r1", "file": "files/r1.pdf", "fields": gold}) + "\n"
    )
    out = tmp_path / "runs.jsonl"
    assert main(["extract", str(root), "--out", str(out), "--quiet"]) == 0
    rec = json.loads(out.read_text())
    assert rec["status"] == "ok"
    return rec


def test_extract_cli_reads_a_date_ocr_spelled_with_letters(tmp_path, monkeypatch):
    """A text-layer PDF whose date has letters for digits: the reading is the calendar date."""
    printed = [
        (70, 20, "77 GREEN GROCER"),
        (15, 60, "Date : O4-O4~-2O18 14:08"),
        (15, 130, "TOTAL"),
        (180, 130, "6.00"),
    ]
    fields = [
        {"name": "date", "type": "date", "description": "Date of the purchase"},
        {"name": "total", "type": "amount", "description": "Total amount paid"},
    ]
    rec = _one_page(tmp_path, monkeypatch, printed, fields, {"date": "2018-04-04", "total": "6.00"})
    assert rec["mapper"]["fields"]["date"]["value"] == "04-04-2018"
    assert rec["hunter"]["fields"]["date"]["value"] == "04-04-2018"  # the first option shown


def test_extract_cli_reads_a_letterhead_name_printed_with_the_title(tmp_path, monkeypatch):
    """The issuer's name and the title on one line (as OCR joins a letterhead row)."""
    printed = [
        (15, 20, "Jones-Ali Sales Invoice"),
        (15, 34, "2 Blake Road"),
        (15, 46, "Rachelville RB1 2CD"),
        (15, 80, "Invoice No: 4417"),
        (15, 130, "TOTAL"),
        (180, 130, "96.00"),
    ]
    fields = [
        {"name": "vendor_name", "type": "text", "description": "Name of the issuing company"},
        {"name": "total", "type": "amount", "description": "Total amount"},
    ]
    gold = {"vendor_name": "Jones-Ali", "total": "96.00"}
    rec = _one_page(tmp_path, monkeypatch, printed, fields, gold)
    assert rec["mapper"]["fields"]["vendor_name"]["value"] == "Jones-Ali"

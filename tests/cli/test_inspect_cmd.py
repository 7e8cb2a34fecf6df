"""``extractconf inspect`` and ``extractconf demo --inspect-only``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from confidence.cli import main


def test_inspect_json_is_one_object(invoice_pdf, capsys):
    assert main(["inspect", str(invoice_pdf.path), "--json"]) == 0
    out = capsys.readouterr().out
    data = json.loads(out)  # exactly one JSON document
    assert data["file"] == str(invoice_pdf.path)
    (page,) = data["pages"]
    assert page["source"] == "pdf" and page["n_words"] == len(invoice_pdf.words)
    assert page["mean_ocr_conf"] == 1.0
    assert {"sharpness", "contrast", "noise", "skew_deg", "dpi"} <= set(page["quality"])
    assert {"rotation", "deskew_deg", "notes"} <= set(page)
    assert page["text"].startswith("ACME Supplies Ltd")


def test_inspect_scan_human_output(scans, capsys):
    assert main(["inspect", str(scans["rot2"]), "--text", "2"]) == 0
    out = capsys.readouterr().out
    assert "source=ocr" in out and "deskewed by" in out
    assert "| ACME Supplies Ltd" in out and "more lines" in out


def test_inspect_blank_page_json_has_null_conf(tmp_path, capsys):
    from PIL import Image

    Image.new("L", (300, 200), 255).save(tmp_path / "blank.png", dpi=(100, 100))
    assert main(["inspect", str(tmp_path / "blank.png"), "--json", "--text", "0"]) == 0
    page = json.loads(capsys.readouterr().out)["pages"][0]
    assert page["n_words"] == 0 and page["mean_ocr_conf"] is None
    assert page["quality"]["char_height_px"] is None and "text" not in page


@pytest.mark.parametrize(
    ("name", "content"),
    [("empty.pdf", b""), ("x.png", b"just some text\n" * 10), ("a.doc", b"x")],
)
def test_inspect_bad_input_exit_2_one_line(tmp_path, capsys, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    assert main(["inspect", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0] and "Traceback" not in err[0]


def test_inspect_bad_option(invoice_pdf, capsys):
    assert main(["inspect", str(invoice_pdf.path), "--dpi", "3"]) == 2
    assert "dpi must be between" in capsys.readouterr().err


@pytest.mark.slow
def test_demo_runs_offline_as_a_process(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "confidence.cli", "demo", "--inspect-only", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "source=pdf" in proc.stdout and "source=ocr" in proc.stdout
    assert "Invoice number: LOS-2024-1187" in proc.stdout
    assert (tmp_path / "invoice.pdf").exists() and (tmp_path / "invoice_scan.jpg").exists()


@pytest.mark.slow
@pytest.mark.llm
def test_full_demo_scores_a_synthetic_invoice_with_the_embedded_llm(tmp_path):
    pytest.importorskip("llama_cpp")
    out = tmp_path / "scored.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "confidence.cli", "demo", "--n", "1", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) >= 20  # every field of the synthetic invoice schema
    assert {r["decision"] for r in rows} <= {"accept", "review"}
    assert all(r["confidence"] is None or 0.0 <= r["confidence"] <= 1.0 for r in rows)
    assert any(r["hunter_value"] for r in rows)  # the LLM really read the document
    assert "accepted" in proc.stdout and "sent to review" in proc.stdout


def test_inspect_reads_a_scan_under_invisible_text_by_ocr(tmp_path, invoice_gray, capsys):
    from tests.documents.test_loading import _searchable_pdf

    pdf = _searchable_pdf(tmp_path / "searchable.pdf", invoice_gray, ["HIDDEN LAYER WORDS"])
    assert main(["inspect", str(pdf), "--json"]) == 0
    (page,) = json.loads(capsys.readouterr().out)["pages"]
    assert page["source"] == "ocr" and "INV-2024-0042" in page["text"]
    assert "HIDDEN" not in page["text"]
    assert any("invisible text layer" in n for n in page["notes"])
    assert main(["inspect", str(pdf), "--json", "--keep-hidden-text"]) == 0
    (page,) = json.loads(capsys.readouterr().out)["pages"]
    assert page["source"] == "pdf" and page["text"] == "HIDDEN LAYER WORDS"


def test_inspect_reads_a_pdf_whose_text_has_no_unicode_by_ocr(tmp_path, invoice_gray, capsys):
    from tests.fixtures.docs import make_unmapped_text_pdf

    pdf = make_unmapped_text_pdf(tmp_path / "unmapped.pdf", invoice_gray[::2, ::2])
    assert main(["inspect", str(pdf), "--json"]) == 0
    (page,) = json.loads(capsys.readouterr().out)["pages"]
    assert page["source"] == "ocr" and "INV-2024-0042" in page["text"]
    assert "cid:" not in page["text"]
    assert any("no Unicode" in n for n in page["notes"])


def test_inspect_reads_overprinted_bold_once(tmp_path, capsys):
    from reportlab.pdfgen import canvas

    pdf = tmp_path / "fakebold.pdf"
    c = canvas.Canvas(str(pdf))
    for dx in (0.0, 0.4):
        c.drawString(72 + dx, 720, "Total 1,234.50")
    c.save()
    assert main(["inspect", str(pdf), "--json"]) == 0
    (page,) = json.loads(capsys.readouterr().out)["pages"]
    assert page["text"] == "Total 1,234.50"


def test_inspect_notes_a_fax_resampled_to_square_pixels(tmp_path, invoice_gray, capsys):
    from PIL import Image

    squashed = Image.fromarray(invoice_gray).resize(
        (invoice_gray.shape[1], invoice_gray.shape[0] // 2), Image.BILINEAR
    )
    path = tmp_path / "fax.png"
    squashed.save(path, dpi=(200, 100))
    assert main(["inspect", str(path), "--json", "--text", "10000"]) == 0
    out = json.loads(capsys.readouterr().out)
    page = out["pages"][0]
    assert any("pixels not square" in n for n in page["notes"])
    assert "ACME" in page["text"] and "Total" in page["text"]


def test_inspect_reads_a_negative_scan_inverted(tmp_path, invoice_gray, capsys):
    from PIL import Image

    path = tmp_path / "negative.png"
    Image.fromarray(255 - invoice_gray).save(path, dpi=(200, 200))
    assert main(["inspect", str(path), "--json", "--text", "10000"]) == 0
    (page,) = json.loads(capsys.readouterr().out)["pages"]
    assert any(n.startswith("light print on a dark page") for n in page["notes"])
    assert page["text"].startswith("ACME Supplies Ltd")


def test_inspect_reads_a_pdf_page_shown_turned_by_rotate_as_written(tmp_path, capsys):
    from tests.documents.test_pdf_rotate import _note
    from tests.fixtures import docs as fx

    spec = fx.make_invoice_pdf(
        tmp_path / "r0.pdf", lines=fx.TOTAL_LINES, page_size=fx.TOTAL_PAGE_SIZE
    )
    read = {}
    for deg in (0, 90, 180, 270):
        pdf = fx.set_rotate(spec.path, deg, tmp_path / f"r{deg}.pdf") if deg else spec.path
        assert main(["inspect", str(pdf), "--json", "--text", "100"]) == 0
        (read[deg],) = json.loads(capsys.readouterr().out)["pages"]
    for deg, page in read.items():
        assert page["source"] == "pdf" and page["rotation"] == (360 - deg) % 360
        assert "Invoice Total 1,234.50" in page["text"].split("\n")  # not "latoT eciovnI"
        assert page["text"] == read[0]["text"]
        assert (page["width"], page["height"]) == (read[0]["width"], read[0]["height"])
        assert [n for n in page["notes"] if "/Rotate" in n] == ([_note(deg)] if deg else [])


def test_inspect_max_megapixels_sets_the_image_size_guard(tmp_path, capsys):
    from PIL import Image

    path = tmp_path / "big.png"
    Image.new("L", (3000, 2000), 255).save(path, dpi=(300, 300))  # 6 MP
    assert main(["inspect", str(path), "--max-megapixels", "5"]) == 2
    err = capsys.readouterr().err
    assert "above the 5 MP limit" in err and "--max-megapixels" in err and err.count("\n") == 1
    assert main(["inspect", str(path), "--max-megapixels", "7", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pages"][0]["width"] == 3000
    assert main(["inspect", str(path), "--max-megapixels", "0"]) == 2
    assert "--max-megapixels" in capsys.readouterr().err

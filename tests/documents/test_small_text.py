"""Small text is read again on the raster enlarged (issue 12, candidate recall).

Tesseract misreads glyphs a dozen pixels tall and drops whole lines of ids, IBANs and e-mail
addresses. A reading whose median word box is under 20 px is made again on the raster enlarged
to put it at 32 px (:func:`confidence.documents._ocr._upscale_factor`), and kept when it reads
more confidently.
"""

from __future__ import annotations

import json

import pytest

from confidence.cli import main
from confidence.datasets.synthetic.generate import synth_document
from confidence.documents import _ocr, load_document
from confidence.documents.cache import DocumentCache
from confidence.documents.lines import document_lines
from confidence.types import Word
from tests.fixtures import docs as fx


def _words(px: float, n: int = 6, height: int = 1000, text: str = "Total") -> list[Word]:
    """``n`` words ``px`` pixels tall on a raster ``height`` pixels tall."""
    h = px / height
    return [Word(text, (0.1, 0.1 * i, 0.3, 0.1 * i + h)) for i in range(n)]


@pytest.mark.parametrize(
    ("px", "shape", "expected"),
    [
        (16.0, (1000, 800), 2.0),  # 32 / 16
        (19.0, (1000, 800), 32 / 19),
        (20.0, (1000, 800), 1.0),  # large enough: read as it is
        (8.0, (1000, 800), 3.0),  # 32 / 8 = 4, at most 3 times
        (10.0, (5000, 4000), (24e6 / 20e6) ** 0.5),  # at most 24 MP
        (10.0, (6000, 4000), 1.0),  # already 24 MP: nothing to gain
    ],
)
def test_upscale_factor_hand_computed(px, shape, expected):
    words = _words(px, height=shape[0])
    assert _ocr._upscale_factor(words, shape) == pytest.approx(expected, rel=1e-6)


def test_upscale_factor_ignores_single_characters_and_needs_five_words():
    big = _words(30.0)
    tiny_marks = _words(8.0, n=20, text="x")  # bullets, single letters: not words to measure
    assert _ocr._upscale_factor(big + tiny_marks, (1000, 800)) == 1.0
    assert _ocr._upscale_factor(_words(10.0, n=4), (1000, 800)) == 1.0
    assert _ocr._upscale_factor([], (1000, 800)) == 1.0


@pytest.fixture(scope="module")
def low_res_invoice(tmp_path_factory):
    """A generated invoice (seed 7, number 4) as a 100-dpi scan, and its truth."""
    doc = synth_document(4, seed=7)
    folder = tmp_path_factory.mktemp("small")
    pdf = folder / "invoice.pdf"
    pdf.write_bytes(doc.data)
    png = fx.save_image(fx.render_pdf(pdf, 100.0), folder / "invoice.png", 100.0)
    return doc, png


def test_inspect_reads_the_ids_of_a_low_resolution_scan(low_res_invoice, capsys):
    """Through the command a user runs: the IBAN and BIC are read, and the page says how."""
    doc, png = low_res_invoice
    assert main(["inspect", str(png), "--json", "--text", "500"]) == 0
    (page,) = json.loads(capsys.readouterr().out)["pages"]
    assert any("small text read again enlarged" in n for n in page["notes"]), page["notes"]
    for field in ("iban", "bic", "document_id"):
        assert doc.fields[field] in page["text"], (field, doc.fields[field])


def test_read_once_reads_the_page_as_it_lies_and_misses_them(low_res_invoice, capsys):
    """``--read-once`` (``enlarge_small_text=False``): one reading per raster, no note, and the
    case the feature is for: as the page lies, tesseract misreads the same ids."""
    doc, png = low_res_invoice
    assert main(["inspect", str(png), "--json", "--text", "500", "--read-once"]) == 0
    (page,) = json.loads(capsys.readouterr().out)["pages"]
    assert not any("enlarged" in n for n in page["notes"]), page["notes"]
    assert not any(doc.fields[f] in page["text"] for f in ("iban", "bic", "document_id"))
    text = " | ".join(
        ln.text for ln in document_lines(load_document(png, enlarge_small_text=False))
    )
    assert not any(doc.fields[f] in text for f in ("iban", "bic", "document_id"))


def test_read_once_is_its_own_cache_entry(low_res_invoice, tmp_path):
    """A cache that reads once never serves (or is served) the enlarged reading; the default
    cache key is the one of a cache given no options (entries made before the option stay)."""
    _, png = low_res_invoice
    default, once = DocumentCache(tmp_path), DocumentCache(tmp_path, enlarge_small_text=False)
    assert default.key(png) != once.key(png)
    assert default.key(png) == DocumentCache(tmp_path / "other").key(png)
    notes = once.load(png).pages[0].notes
    assert not any("enlarged" in n for n in notes)
    assert default.get(png) is None  # the read-once entry is not the default one
    assert any("enlarged" in n for n in default.load(png).pages[0].notes)
    assert not any("enlarged" in n for n in once.get(png).pages[0].notes)


def test_a_page_of_ordinary_resolution_is_read_once(low_res_invoice, monkeypatch):
    """At 300 dpi the words are large enough: one tesseract reading, no note, same words."""
    doc, _ = low_res_invoice
    pdf = fx.render_pdf(_pdf_of(doc, low_res_invoice[1].parent), 300.0)
    png = fx.save_image(pdf, low_res_invoice[1].parent / "invoice300.png", 300.0)
    calls = []
    real = _ocr._tesseract
    monkeypatch.setattr(_ocr, "_tesseract", lambda *a, **k: calls.append(1) or real(*a, **k))
    page = load_document(png).pages[0]
    assert len(calls) == 1
    assert not any("enlarged" in n for n in page.notes)
    assert doc.fields["iban"] in " | ".join(ln.text for ln in document_lines(load_document(png)))


def _pdf_of(doc, folder):
    path = folder / "invoice.pdf"
    if not path.exists():
        path.write_bytes(doc.data)
    return path


def test_score_read_once_ingests_with_one_reading(low_res_invoice, tmp_path):
    """``extractconf score --read-once``: the document is ingested read once (its cache entry
    is the read-once one) and scored; without the flag the enlarged reading is made."""
    from confidence.datasets.synthetic import SCHEMA
    from confidence.readings import CallResult, FieldReading, RunRecord

    doc, png = low_res_invoice
    values = {f.name: FieldReading(doc.fields.get(f.name)) for f in SCHEMA}
    run = RunRecord(png.stem, CallResult("hunter", values), CallResult("mapper", values))
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps(run.to_dict()) + "\n")
    cache = tmp_path / "cache"
    for flag, out in (["--read-once"], tmp_path / "once.jsonl"), ([], tmp_path / "twice.jsonl"):
        args = ["score", str(png), "--runs", str(runs), "--cache-dir", str(cache), "--out",
                str(out), "--quiet", *flag]  # fmt: skip
        assert main(args) == 0
        rows = [json.loads(x) for x in out.read_text().splitlines()]
        assert len(rows) == len(SCHEMA) and {r["status"] for r in rows} == {"ok"}
    once = DocumentCache(cache, enlarge_small_text=False).get(png)
    twice = DocumentCache(cache).get(png)
    assert not any("enlarged" in n for n in once.pages[0].notes)
    assert any("enlarged" in n for n in twice.pages[0].notes)

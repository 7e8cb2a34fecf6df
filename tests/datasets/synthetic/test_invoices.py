"""Synthetic invoice generator: schema, determinism, absence, layouts, totals, scans, labels."""

from __future__ import annotations

import datetime as dt
import io
import json
import random
import re
from collections import Counter
from decimal import Decimal

import pdfplumber
import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from confidence.cli import main
from confidence.datasets.synthetic import (
    ABSENCE_RATES,
    FAMILIES,
    LAYOUT_VARIANTS,
    SCHEMA,
    generate,
    synth_document,
)
from confidence.datasets.synthetic.locales import NUMBER_STYLES, format_date, format_number
from confidence.datasets.synthetic.values import make_invoice
from confidence.schema import FIELD_TYPES, Schema

N_STATS = 80


@pytest.fixture(scope="module")
def docs():
    """A fixed sample of digital documents (pure function of seed and index)."""
    return [synth_document(i, seed=11) for i in range(N_STATS)]


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[$£€]", "", text).replace(",", " ")).strip()


def _pdf_text(data: bytes) -> tuple[str, int]:
    with pdfplumber.open(io.BytesIO(data)) as pdf:
        return "\n".join(p.extract_text() or "" for p in pdf.pages), len(pdf.pages)


def _amount(printed: str) -> Decimal:
    """Parse a printed amount of any of the generator's number styles."""
    s = printed.replace(" ", "")
    if re.search(r",\d{2}$", s):
        s = s.replace(".", "").replace(",", ".")
    return Decimal(s.replace(",", ""))


# ----------------------------------------------------------------------------- schema
def test_schema_has_at_least_20_typed_described_fields(tmp_path):
    assert len(SCHEMA) >= 20
    assert all(f.type in FIELD_TYPES and f.description for f in SCHEMA)
    assert {"amount", "date", "id", "address", "iban", "percent", "email"} <= {
        f.type for f in SCHEMA
    }
    generate(tmp_path / "ds", 2, seed=0)
    assert Schema.load(tmp_path / "ds" / "schema.json") == SCHEMA


# ----------------------------------------------------------------------------- determinism
def test_same_seed_gives_byte_identical_dataset_whatever_n_jobs(tmp_path):
    generate(tmp_path / "a", 6, seed=5, scan_ratio=0.3)
    generate(tmp_path / "b", 6, seed=5, scan_ratio=0.3, n_jobs=2)
    a, b = tmp_path / "a", tmp_path / "b"
    assert (a / "labels.jsonl").read_bytes() == (b / "labels.jsonl").read_bytes()
    names = sorted(p.name for p in (a / "files").iterdir())
    assert names == sorted(p.name for p in (b / "files").iterdir())
    for n in names:
        assert (a / "files" / n).read_bytes() == (b / "files" / n).read_bytes()


def test_different_seeds_differ():
    assert synth_document(0, seed=1).fields != synth_document(0, seed=2).fields


# ----------------------------------------------------------------------------- absence
def test_configured_absence_rates_are_in_the_10_to_40_percent_band():
    assert set(ABSENCE_RATES) == set(SCHEMA.names)
    assert all(0.1 <= p <= 0.4 for p in ABSENCE_RATES.values())


def test_observed_absence_rates_within_range(docs):
    rates = {n: sum(d.fields[n] is None for d in docs) / len(docs) for n in SCHEMA.names}
    # 80 draws: a 10-40% field lands well inside 0-65% (binomial), and every field goes missing.
    assert all(0.0 < r <= 0.65 for r in rates.values()), rates
    assert 0.15 <= sum(rates.values()) / len(rates) <= 0.35
    for d in docs:  # every invoice still shows something payable
        assert d.fields["amount_total_gross"] or d.fields["amount_due"]
        assert sorted(d.meta["absent"]) == sorted(k for k, v in d.fields.items() if v is None)


# ----------------------------------------------------------------------------- layouts
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_renders_and_shows_its_salient_gold_values(family):
    assert len(FAMILIES) >= 12
    for i in range(3):
        d = synth_document(i, seed=21, family=family)
        text, n_pages = _pdf_text(d.data)
        assert d.meta["layout_family"] == family and d.meta["n_pages"] == n_pages
        flat = _norm(text)
        for name, value in d.fields.items():
            if value is None or name in d.meta["non_salient"]:
                continue
            if "address" in name or name == "payment_terms":
                # Multi-line / wrapped values: each printed line must be there.
                parts = [p for p in value.split(", ") if p]
                assert all(_norm(p) in flat for p in parts), (family, name, value)
            else:
                assert _norm(value) in flat, (family, name, value, text)


def test_families_are_dealt_evenly(docs):
    counts = Counter(d.meta["layout_family"] for d in docs)
    assert set(counts) == set(FAMILIES)
    assert max(counts.values()) - min(counts.values()) <= 1


def test_two_page_invoices_put_totals_on_page_two(docs):
    two = [d for d in docs if d.meta["n_pages"] == 2]
    assert two, "expected some 2-page invoices among the sample"
    for d in two:
        pos = d.meta["positions"]
        totals = [f for f in ("amount_total_gross", "amount_due") if f in pos]
        assert totals and all(pos[f][0] == 2 for f in totals)


def test_failure_modes_present(docs):
    modes = Counter(m for d in docs for m in d.meta["non_salient"].values())
    distractors = Counter(x for d in docs for x in d.meta["distractors"])
    assert len(modes) >= 3
    assert {"order_date", "delivery_date", "subtotal", "prepayment"} <= set(distractors)


# ----------------------------------------------------------------------------- values
def test_totals_add_up(docs):
    for d in docs:
        n = d.meta["normalized"]
        net, tax, gross = (n.get(k) for k in ("amount_total_net", "amount_total_tax",
                                              "amount_total_gross"))  # fmt: skip
        if net and tax and gross:
            assert Decimal(net) + Decimal(tax) == Decimal(gross)
        for k in ("amount_total_net", "amount_total_tax", "amount_total_gross", "amount_due"):
            if d.fields[k] is not None:
                assert _amount(d.fields[k]) == Decimal(n[k]), (k, d.fields[k], n[k])
        if d.meta["credit_note"] and gross:
            assert Decimal(gross) < 0


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_line_items_and_totals_add_up_before_absence(lang):
    for seed in range(15):
        inv = make_invoice(random.Random(seed), lang)
        t = inv.totals
        assert sum(_amount(it.amount) for it in inv.items) == t["subtotal"]
        assert t["subtotal"] + t["discount"] == t["net"]
        assert t["net"] + t["tax"] == t["gross"]
        assert t["gross"] + t["prepaid"] == t["due"]
        assert _amount(inv.extras["subtotal"]) == t["subtotal"]


def test_normalised_gold_agrees_with_project_matcher(docs):
    from confidence.datasets.matching import is_correct

    for d in docs:
        for name, norm in d.meta["normalized"].items():
            ftype = SCHEMA[name].type
            order = d.meta["date_order"] if d.meta["date_order"] != "ymd" else None
            assert is_correct(ftype, d.fields[name], norm, date_order=order), (
                name,
                d.fields[name],
                norm,
            )


def test_label_synonyms_vary(docs):
    used = Counter(d.meta["labels"]["document_id"] for d in docs if d.fields["document_id"])
    assert len(used) >= 8
    per_lang = {
        lang: {
            d.meta["labels"].get("amount_total_gross") for d in docs if d.meta["language"] == lang
        }
        for lang in ("en", "de", "fr")
    }
    assert all(len(v - {None}) >= 2 for v in per_lang.values())
    langs = Counter(d.meta["language"] for d in docs)
    assert set(langs) == {"en", "de", "fr"}


@given(
    st.decimals(min_value=-(10**7), max_value=10**7, places=2, allow_nan=False),
    st.sampled_from([s for styles in NUMBER_STYLES.values() for s in styles]),
)
def test_format_number_round_trips(value, style):
    printed = format_number(value, style)
    plain = printed.replace(style[0], "") if style[0] else printed
    assert Decimal(plain.replace(style[1], ".")) == value


@given(st.dates(min_value=dt.date(1990, 1, 1), max_value=dt.date(2060, 12, 31)))
def test_format_date_numeric_patterns_parse_back(day):
    assert (
        dt.datetime.strptime(format_date(day, "{dd}.{mm}.{yyyy}", "de"), "%d.%m.%Y").date() == day
    )
    assert (
        dt.datetime.strptime(format_date(day, "{mm}/{dd}/{yyyy}", "en"), "%m/%d/%Y").date() == day
    )
    assert (
        dt.datetime.strptime(format_date(day, "{d} {month} {yyyy}", "en"), "%d %B %Y").date() == day
    )


# ----------------------------------------------------------------------------- scans / CLI
def test_scans_are_degraded_images_with_recorded_plan():
    for i in range(2):
        d = synth_document(i, seed=4, scan_ratio=1.0, family="compact")
        assert d.meta["source"] == "scan" and d.meta["scan"]["dpi"] >= 100
        if d.suffix == ".pdf":  # two-page scan: image-only PDF
            with pdfplumber.open(io.BytesIO(d.data)) as pdf:
                assert pdf.pages[0].images and not pdf.pages[0].chars
        else:
            img = Image.open(io.BytesIO(d.data))
            assert d.suffix in (".png", ".jpg") and img.format in ("PNG", "JPEG")
            assert img.width > 500 and img.height > 500


def test_cli_writes_a_readable_dataset_and_refuses_bad_input(tmp_path, capsys):
    from confidence.datasets.folder import Dataset

    out = tmp_path / "synth"
    assert main(["synth", str(out), "--n", "4", "--seed", "2", "--quiet"]) == 0
    ds = Dataset.open(out)
    assert len(ds) == 4
    line = json.loads((out / "labels.jsonl").read_text().splitlines()[0])
    assert set(line) >= {"doc_id", "file", "fields", "meta"}
    assert main(["synth", str(out), "--n", "2", "--quiet"]) == 2  # exists, no --overwrite
    assert main(["synth", str(tmp_path / "x"), "--n", "2", "--languages", "en,xx"]) == 2
    assert main(["synth", str(tmp_path / "y"), "--n", "2", "--families", "nope"]) == 2
    err = capsys.readouterr().err
    assert "use some of: en, de, fr" in err and "classic" in err


# ----------------------------------------------------------------------------- layout variety
def _lines(data: bytes) -> list[str]:
    with pdfplumber.open(io.BytesIO(data)) as pdf:
        return [ln for p in pdf.pages for ln in (p.extract_text() or "").splitlines()]


def test_layout_variety_zero_reproduces_earlier_corpora():
    for i in range(4):
        a, b = synth_document(i, seed=5), synth_document(i, seed=5, layout_variety=0.0)
        assert a.data == b.data and a.meta == b.meta and "layout_variants" not in a.meta


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_layout_variants_keep_every_value_on_the_page(family):
    for i in range(3):
        plain = synth_document(i, seed=23, family=family)
        d = synth_document(i, seed=23, family=family, layout_variety=1.0)
        assert set(d.meta["layout_variants"]) <= set(LAYOUT_VARIANTS) and d.meta["layout_variants"]
        assert d.fields == plain.fields  # only the drawing changes, not the invoice
        flat = _norm(_pdf_text(d.data)[0])
        for name, value in d.fields.items():
            if value is None or name in d.meta["non_salient"]:
                continue
            parts = value.split(", ") if ("address" in name or name == "payment_terms") else [value]
            assert all(_norm(p) in flat for p in parts if p), (family, name, value)


def test_meta_grid_puts_captions_in_a_row_above_their_values():
    checked = 0
    for i in range(40):
        d = synth_document(i, seed=31, layout_variety=1.0)
        value, label = d.fields["document_id"], d.meta["labels"].get("document_id")
        if "meta_grid" not in d.meta["layout_variants"] or value is None or not label:
            continue
        if "document_id" in d.meta["non_salient"] or d.meta["layout_family"] in (
            "sidebar",
            "footer_heavy",
        ):  # these print every caption over its value already
            continue
        with pdfplumber.open(io.BytesIO(d.data)) as pdf:
            words = pdf.pages[0].extract_words()
        v = next(w for w in words if w["text"] == value.split()[0])
        same_column = [
            w for w in words if w["text"] == label.split()[0] and abs(w["x0"] - v["x0"]) < 1
        ]
        # the caption starts where its value starts, one row up; nothing labels it on its left
        assert any(0 < v["top"] - w["top"] < 3 * (v["bottom"] - v["top"]) for w in same_column)
        assert not any(
            w["text"] == label.split()[0] and abs(w["top"] - v["top"]) < 1 and w["x0"] < v["x0"]
            for w in words
        ), d.doc_id
        checked += 1
    assert checked >= 5


def test_untitled_customer_has_no_caption_over_the_name():
    from confidence.datasets.synthetic.locales import LABELS

    captions = sorted({c for cs in LABELS["@bill_to"].values() for c in cs}, key=len)

    def caption_over(data: bytes, name: str) -> str | None:
        """The caption printed on the name's left edge, right over it (None: no caption)."""
        with pdfplumber.open(io.BytesIO(data)) as pdf:
            words = pdf.pages[0].extract_words()
        first = name.split()[0]
        for v in (w for w in words if w["text"] == first):
            above = [
                w["text"]
                for w in words
                if abs(w["x0"] - v["x0"]) < 1
                and 0 < v["top"] - w["top"] < 3 * (v["bottom"] - v["top"])
            ]
            hit = [c for c in captions if c.split()[0] in above]
            if hit:
                return hit[-1]
        return None

    checked = 0
    for i in range(40):
        d = synth_document(i, seed=37, layout_variety=1.0)
        name = d.fields["customer_name"]
        if "untitled_customer" not in d.meta["layout_variants"] or not name:
            continue
        if "customer_name" in d.meta["non_salient"]:
            continue
        caption = caption_over(synth_document(i, seed=37).data, name)
        if caption is None:  # the family draws no caption there anyway
            continue
        assert caption_over(d.data, name) != caption, d.doc_id
        checked += 1
    assert checked >= 5


def test_cli_layout_variety(tmp_path, capsys):
    out = tmp_path / "v"
    assert main(["synth", str(out), "--n", "6", "--seed", "3", "--layout-variety", "1"]) == 0
    metas = [json.loads(ln)["meta"] for ln in (out / "labels.jsonl").read_text().splitlines()]
    assert all(m["layout_variants"] for m in metas)
    assert main(["synth", str(tmp_path / "w"), "--n", "2", "--layout-variety", "1.5"]) == 2
    assert "layout_variety must be within 0-1" in capsys.readouterr().err

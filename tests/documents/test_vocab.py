"""The one label vocabulary (``labels.json``) and what the calls and features read from it."""

from __future__ import annotations

import json
from importlib.resources import files

import pytest
from hypothesis import given
from hypothesis import strategies as st

from confidence.documents.text import fold_text, page_keys
from confidence.documents.vocab import (
    CUES,
    LABEL_WORDS,
    LABELS,
    NEGATIVE_CUES,
    QUALIFIERS,
    VALUE_CUE_KEYS,
    concepts_of,
    cue_score,
    field_concept,
    field_cues,
    field_keys,
    find_labels,
    is_label_like,
    label_concepts,
    label_cues,
    label_flags,
)
from confidence.schema import Field


def test_table_is_package_data_with_every_section_described():
    table = json.loads(files("confidence.documents").joinpath("labels.json").read_text("utf-8"))
    sections = set(table) - {"about"}
    assert sections == set(table["about"])
    assert set(LABELS) == set(table["concepts"])


def test_table_is_consistent():
    for concept, phrases in LABELS.items():
        assert phrases, concept
        assert all(p == fold_text(p) and p for p in phrases), concept
    assert set(NEGATIVE_CUES) <= set(CUES)
    assert set(VALUE_CUE_KEYS) <= set(CUES)
    assert all(w == w.lower() and w.isalnum() for w in LABEL_WORDS)
    assert set(QUALIFIERS) <= {"amount_net", "amount_gross", "amount_due"}
    assert all(p == fold_text(p) and p for ps in QUALIFIERS.values() for p in ps)


@pytest.mark.parametrize(
    ("printed", "concepts"),
    [
        ("Total (excl. VAT):", {"amount_net"}),
        ("Total sales excluding tax", {"amount_net"}),
        ("Grand total (inclusive of GST)", {"amount_gross"}),
        ("Montant total HT", {"amount_net"}),
        ("Summe ohne MwSt.", {"amount_net"}),
        ("Sous-total TTC", {"amount_gross"}),
        ("Total", {"amount_gross"}),  # no qualifier: what find_labels says
        ("inkl. MwSt.", {"amount_tax"}),  # a qualifier without an amount word: a tax line
        ("Total TVA", {"amount_tax"}),
        ("Total 6% supplies (Inc. GST):", {"amount_gross"}),  # short and "of"-less forms
        ("Total Inclusive GST:", {"amount_gross"}),
        ("Total (exclusive GST)", {"amount_net"}),
        ("Total Exc. VAT", {"amount_net"}),
        ("Subtotal (without tax)", {"amount_net"}),
        ("Amount with GST", {"amount_tax"}),  # no amount word: as "inkl. MwSt"
    ],
)
def test_a_tax_qualifier_decides_an_amount_label(printed, concepts):
    assert label_concepts(printed) == concepts


@pytest.mark.parametrize(
    ("printed", "concepts"),
    [
        ("Total taxes", {"amount_tax"}),  # a total of the tax, not a total with it
        ("Total TAXES:", {"amount_tax"}),
        ("Total des taxes", {"amount_tax"}),
        ("Summe MwSt", {"amount_tax"}),
        ("GST Total", {"amount_tax"}),
        ("Totale IVA", {"amount_tax"}),
        ("Total Sales Tax", {"amount_tax"}),
        ("Total incl. VAT", {"amount_gross"}),  # a qualifier decides, as before
        ("Summe inkl. MwSt", {"amount_gross"}),
        ("Total with VAT", {"amount_gross"}),  # short qualifiers decide too
        ("Total inc GST", {"amount_gross"}),
        ("Total Amount with tax", {"amount_gross"}),
    ],
)
def test_a_total_word_with_a_tax_word_is_the_tax_total_unless_the_tax_is_included(
    printed, concepts
):
    assert label_concepts(printed) == concepts


@given(
    st.sampled_from(["Total", "TOTAL", "Summe", "Gesamt", "Totale", "Totaal"]),
    st.sampled_from(["incl.", "including", "with", "inkl.", "mit", "avec", "inc"]),
    st.sampled_from(["tax", "VAT", "GST", "MwSt", "USt", "TVA", "IVA", "BTW", "taxes"]),
)
def test_a_total_that_includes_its_tax_is_never_read_as_the_tax_alone(total, word, tax):
    assert label_concepts(f"{total} {word} {tax}") != {"amount_tax"}


@given(st.sampled_from(sorted({p for ps in QUALIFIERS.values() for p in ps})))
def test_a_qualifier_alone_never_changes_a_label(qualifier):
    named = {c for _, _, cs in find_labels(qualifier) for c in cs}
    assert label_concepts(qualifier) == named


@pytest.mark.parametrize(
    ("printed", "concept"),
    [
        ("Rechnungsnummer:", "doc_id"),
        ("N° de facture", "doc_id"),
        ("Fälligkeitsdatum", "date_due"),
        ("USt-IdNr.", "tax_id"),
        ("Net à payer", "amount_due"),
        ("Total TVA", "amount_tax"),
        ("Lieferdatum", "other_date"),
        ("Importe total", "amount_gross"),
        ("Factuurdatum", "date_issue"),
    ],
)
def test_multilingual_labels(printed, concept):
    t = fold_text(printed)
    hits = find_labels(t)
    assert hits and hits[0][2][0] == concept
    assert t[hits[0][0] : hits[0][1]] == t  # the whole label, longest phrase wins


def test_ambiguous_phrase_names_both_concepts():
    assert concepts_of("vat") == ("tax_id", "amount_tax")


@pytest.mark.parametrize(
    ("field", "concept"),
    [
        (Field("invoice_number", "id"), "doc_id"),
        (Field("invoice_date", "date"), "date_issue"),
        (Field("due_date", "date"), "date_due"),
        (Field("total", "amount"), "amount_gross"),
        (Field("total_untaxed", "amount"), "amount_net"),
        (Field("tax_amount", "amount"), "amount_tax"),
        (Field("vendor_vat_number", "id"), "tax_id"),
        (Field("company", "text"), "vendor_name"),
        (Field("address", "address"), "vendor_address"),
        (Field("customer_name", "text"), "customer_name"),
        (Field("notes", "text"), None),
    ],
)
def test_field_concept(field, concept):
    assert field_concept(field) == concept


def test_cues_of_a_field():
    assert field_keys(Field("invoice_date_due", "date")) == ["invoice", "date", "due"]
    assert field_keys(Field("vendor", "text")) == ["company"]  # an alias
    assert "gst" in field_cues(Field("tax_amount", "amount"))
    # description words are cues near a value but never labels
    f = Field("address", "address", "Postal address of the issuing company")
    assert "issuing" in field_cues(f) and "issuing" not in label_cues(f)
    # the table holds labels only: a company field's cues are labels printed beside its value
    assert "company name" in label_cues(Field("company", "text"))
    assert not {"sdn bhd", "ltd", "enterprise"} & set(field_cues(Field("company", "text")))


def test_cue_score():
    assert cue_score("GRAND TOTAL (RM)", ("total",)) == 1.0
    assert cue_score("DEPOSIT", ("po",)) == 0.0  # short cues match whole words only
    assert 0.8 <= cue_score("Invoice Numbet", ("invoice number",)) < 1.0  # OCR slip
    assert cue_score("abc", ("invoice number",)) == 0.0


def test_label_words():
    assert [is_label_like(w) for w in ("Total:", "Date", "12.50", "INV-001", "No.", "Ça:")] == [
        True,
        True,
        False,
        False,
        True,
        True,
    ]


@given(st.lists(st.text(alphabet=st.sampled_from("aZ09:.,-/ %€é"), max_size=8), max_size=8))
def test_label_flags_equal_per_word_test(ws):
    assert label_flags(ws, *page_keys(ws)) == [is_label_like(w) for w in ws]


# Captions of the synthetic generator (its documented locale tables) that the vocabulary leaves
# unrecognised on purpose, each with the reason.
_UNNAMED_CAPTIONS = {
    "Address": "names the vendor's or the customer's address alike",
    "Adresse": "names the vendor's or the customer's address alike",
    "Anschrift": "names the vendor's or the customer's address alike",
    "Inv #": "'inv' alone also starts 'Inv Date', 'Inventory'",
    "Zahlungsziel": "a payment term ('14 Tage') as often as a due date",
    "Net à payer TTC": "'net a payer' is the amount due; the generator prints it over the gross",
}


def test_vocabulary_names_the_generators_field_captions():
    """Every caption the synthetic generator prints for a schema field is a known label of that
    field's concept (read from the start of the caption, or after a qualifier such as 'Federal'
    or 'zzgl.'), apart from the documented ambiguous ones above."""
    from confidence.datasets.synthetic.fields import SCHEMA
    from confidence.datasets.synthetic.locales import LABELS as CAPTIONS

    missed = []
    for f in SCHEMA:
        concept = field_concept(f)
        if concept not in LABELS:
            continue  # names and addresses are found by blocks, not by a concept's labels
        for lang, captions in CAPTIONS.get(f.name, {}).items():
            for caption in captions:
                if caption in _UNNAMED_CAPTIONS:
                    continue
                found = find_labels(fold_text(caption))
                if not any(concept in cs for _, _, cs in found):
                    missed.append((f.name, lang, caption))
    assert missed == []


def test_receipt_summary_captions_name_the_net_and_the_gross():
    """The tax-qualified captions of the receipt generator's summary totals style read as the
    amount they print: the net under 'Total excl. tax', the total under 'Total incl. tax'."""
    from confidence.datasets.synthetic.receipts import _SUMMARY_WORDS

    wrong = [
        (lang, caption)
        for lang, words in _SUMMARY_WORDS.items()
        for key, concept in (("net", "amount_net"), ("gross", "amount_gross"))
        for caption in words[key]
        if concept not in label_concepts(caption) or len(label_concepts(caption) & _AMOUNTS) != 1
    ]
    assert wrong == []


_AMOUNTS = {"amount_net", "amount_gross", "amount_due"}


@pytest.mark.parametrize(
    "caption, concept",
    [
        ("Kd.-Nr.", "customer_id"),
        ("Debitor", "customer_id"),
        ("Identifiant client", "customer_id"),
        ("Beleg-Nr.", "doc_id"),
        ("N° facture", "doc_id"),
        ("Remittance ref.", "payment_reference"),
        ("Réf. virement", "payment_reference"),
        ("Zahlungsbedingung", "payment_terms"),
        ("Conditions", "payment_terms"),
        ("UID", "tax_id"),
        ("Whg.", "currency"),
    ],
)
def test_abbreviated_and_singular_captions(caption, concept):
    t = fold_text(caption)
    [(s, _, cs)] = find_labels(t)
    assert (s, concept in cs) == (0, True)

"""The text folds: keys for matching, words for labels and names."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from confidence.documents.text import (
    fold,
    fold_text,
    is_numeric,
    page_keys,
    page_string,
    strip_accents,
    word_key,
)

texts = st.text(
    alphabet=st.one_of(st.sampled_from("aZ09:.,-/ %€éßİﬁ°º\u00a0"), st.characters()), max_size=20
)


def test_fold_hand_computed():
    assert fold("Total: 1,234.50 EUR") == "total123450eur"
    assert fold("INV-0001") == fold("inv 0001") == "inv0001"
    assert fold("FA02/2015/020059") == "fa022015020059"
    assert fold("--") == ""
    assert fold("Straße") == "strasse"  # casefold expands ß


def test_fold_text_hand_computed():
    assert fold_text("N° de Facture:") == "n de facture"
    assert fold_text("USt-IdNr.") == "ust idnr"
    assert fold_text("Fälligkeitsdatum") == "falligkeitsdatum"
    assert fold_text("  BOOK TA .K (TAMAN DAYA) SDN BHD ") == "book ta k taman daya sdn bhd"
    assert fold_text("snake_case") == "snake case"
    assert strip_accents("Émise") == "emise"


@given(texts)
def test_folds_are_idempotent(s):
    assert fold(fold(s)) == fold(s)
    assert fold_text(fold_text(s)) == fold_text(s)


@given(texts)
def test_fold_keeps_only_letters_and_digits(s):
    k = fold(s)
    assert all(ch.isalnum() for ch in k)
    assert k == k.casefold() or not k.isascii()


@given(texts)
def test_fold_text_words_are_single_spaced(s):
    t = fold_text(s)
    assert t == t.strip() and "  " not in t
    # the words' letters and digits are the key's, up to accents
    assert fold(t) == fold(strip_accents(s))


@given(st.lists(texts, max_size=6))
def test_page_string_is_the_words_keys(ws):
    text, lens, bounds = page_string(ws)
    keys, _ = page_keys(ws)
    assert text == "".join(keys) == "".join(word_key(w)[0] for w in ws)
    assert lens == [len(k) for k in keys]
    assert 0 in bounds and all(0 <= b <= len(text) for b in bounds)


def test_is_numeric():
    assert [is_numeric(w) for w in ("12.50", "A1", "INV-001", "x", "")] == [
        True,
        True,
        True,
        False,
        False,
    ]

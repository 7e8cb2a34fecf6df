"""Fast paths of the feature code against plain reference implementations.

The batch and bulk paths (numpy logprob statistics, page-at-once keys, pruned typed search) must
give what the straightforward per-item code gives; these tests pin that down.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from confidence.documents.text import (
    fold,
    is_numeric,
    numeric_flags,
    page_keys,
    page_string,
    word_key,
)
from confidence.documents.typed_spans import TypedSpans
from confidence.documents.vocab import is_label_like, label_flags
from confidence.errors import DatasetError
from confidence.features import logprobs
from confidence.features.build import feature_matrix, field_features
from confidence.llm.base import TokenLogprob
from confidence.readings import FieldReading
from confidence.schema import Field
from confidence.types import Document, Page, Word

words_st = st.lists(
    st.text(
        alphabet=st.one_of(
            st.sampled_from("aZ09:.,-/ %€éß\x00"), st.characters(categories=["L", "N", "P"])
        ),
        max_size=8,
    ),
    max_size=12,
)


# -- keys -----------------------------------------------------------------------------------------
@given(words_st)
def test_page_keys_and_flags_match_per_word_functions(texts):
    keys, digits = page_keys(texts)
    assert keys == [word_key(t)[0] for t in texts]
    for t, d in zip(texts, digits, strict=True):
        assert d == ("".join(ch for ch in t if ch.isdigit()) if t.isascii() else None)
    assert label_flags(texts, keys, digits) == [is_label_like(t) for t in texts]
    assert numeric_flags(texts, keys, digits) == [is_numeric(t) for t in texts]


@given(words_st)
def test_page_string_is_the_words_keys_with_their_run_ends(texts):
    text, lens, bounds = page_string(texts)
    expected, pos = {0}, 0
    for t in texts:
        key, ends = word_key(t)
        expected |= {pos + e for e in ends}
        pos += len(key)
    assert text == "".join(word_key(t)[0] for t in texts)
    assert lens == [len(word_key(t)[0]) for t in texts]
    assert bounds == expected


@given(st.text(max_size=20))
def test_fold_ascii_shortcut_agrees_with_unicode_path(s):
    import re
    import unicodedata

    run = re.compile(r"\d+|[^\W\d_]+")
    slow = "".join(run.findall(unicodedata.normalize("NFKC", s).casefold()))
    assert fold(s) == fold(slow)


# -- typed search ---------------------------------------------------------------------------------
def _exhaustive(words, lines, field_type, value):
    from confidence.datasets.matching import normalize

    target = normalize(field_type, value)
    if target is None:
        return None
    for size in range(1, 5):
        for line in lines:
            for a in range(len(line) - size + 1):
                span = tuple(line[a : a + size])
                if not any(any(ch.isdigit() for ch in words[i].text) for i in span):
                    continue
                norm = normalize(field_type, " ".join(words[i].text for i in span))
                if norm is not None and norm == target:
                    return span
    return None


_TOKENS = ["12.50", "1,250.00", "125", "0.50", "Total", "25/12/2018", "2018-12-25", "12", "25",
           "Dec", "2018", "18", "€", "RM1.250", "-12.50", "٢٥", "x"]  # fmt: skip
_QUERIES = [("amount", "12.50"), ("amount", "1250"), ("amount", "0.5"), ("amount", "0"),
            ("date", "2018-12-25"), ("date", "25.12.18"), ("date", "2012-12-18")]  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=4), min_size=1, max_size=4),
    st.sampled_from(_QUERIES),
)
def test_pruned_typed_search_finds_what_an_exhaustive_scan_finds(rows, query):
    words, lines = [], []
    for r, row in enumerate(rows):
        line = []
        for c, text in enumerate(row):
            line.append(len(words))
            words.append(Word(text, (0.1 * c, 0.1 * r, 0.1 * c + 0.05, 0.1 * r + 0.02)))
        lines.append(line)
    field_type, value = query
    assert TypedSpans(tuple(words), lines).find(field_type, value) == _exhaustive(
        words, lines, field_type, value
    )


# -- logprobs -------------------------------------------------------------------------------------
def _reference_stats(reading):
    """The statistics computed token by token in plain Python (the documented definitions)."""
    if reading is None or reading.tokens is None:
        return [math.nan] * 8
    toks = reading.tokens
    if not toks:
        return [math.nan] * 7 + [0.0]
    lps = [t.logprob for t in toks]
    ents, margins, top1 = [], [], []
    for t in toks:
        if not t.top:
            continue
        alt = [lp for _, lp in t.top]
        if t.token not in [tok for tok, _ in t.top]:
            alt.append(t.logprob)
        alt.sort(reverse=True)
        ps = [math.exp(a) for a in alt]
        tail = 1.0 - sum(ps)
        ent = -sum(p * a for p, a in zip(ps, alt, strict=True))
        ents.append(ent - tail * math.log(tail) if tail > 1e-12 else ent)
        if len(ps) >= 2:
            margins.append(ps[0] - ps[1])
        top1.append(t.logprob >= alt[0] - 1e-9)
    mean = lambda xs: sum(xs) / len(xs) if xs else math.nan  # noqa: E731
    return [mean(lps), min(lps), sum(lps), lps[0], mean(ents), mean(margins), mean(top1), len(lps)]


_lp = st.floats(-20.0, 0.0)
_tok = st.builds(
    TokenLogprob,
    st.sampled_from(["a", "b", "c"]),
    _lp,
    st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d"]), _lp), max_size=6).map(tuple),
)
_reading = st.one_of(
    st.none(),
    st.builds(FieldReading, st.just("v"), st.none()),
    st.builds(FieldReading, st.just("v"), st.lists(_tok, max_size=6).map(tuple)),
)


@given(st.lists(_reading, max_size=8))
def test_batch_logprob_stats_equal_token_by_token_reference(readings):
    got = logprobs.token_stats_batch(readings)
    want = np.array([_reference_stats(r) for r in readings], dtype=float).reshape(-1, 8)
    assert got.shape == (len(readings), 8)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, equal_nan=True)


def test_batch_rows_do_not_depend_on_their_neighbours():
    r = FieldReading("9", (TokenLogprob("9", -0.2, (("9", -0.2), ("8", -2.0))),))
    alone = logprobs.token_stats_batch([r])[0]
    mixed = logprobs.token_stats_batch([None, FieldReading("x", ()), r, r])
    assert np.array_equal(mixed[2], alone) and np.array_equal(mixed[3], alone)


# -- assembler ------------------------------------------------------------------------------------
def _doc():
    words = (
        Word("Date:", (0.1, 0.1, 0.2, 0.12), 0.9, line_id=0),
        Word("25/12/2018", (0.3, 0.1, 0.4, 0.12), 0.8, line_id=0),
        Word("Total", (0.1, 0.5, 0.2, 0.52), 0.9, line_id=1),
        Word("1,234.50", (0.3, 0.5, 0.4, 0.52), 0.7, line_id=1),
    )
    return Document("d", "d.png", (Page(1, 100, 100, words, "ocr", 72.0),))


def test_matrix_rows_equal_single_row_features_bit_for_bit():
    doc = _doc()
    tok = (TokenLogprob("1", -0.3, (("1", -0.3), ("7", -1.9))), TokenLogprob(".5", -0.01))
    rows = [
        (Field("t", "amount"), doc, FieldReading("1,234.50", tok), FieldReading("1234.5", tok)),
        (Field("d", "date"), doc, FieldReading("2018-12-25", tok[:1]), None),
        (Field("x", "id"), doc, None, FieldReading("N/A", None)),
    ]
    X = feature_matrix(rows)
    for i, row in enumerate(rows):
        assert np.array_equal(X[i], list(field_features(*row).values()), equal_nan=True)


def test_malformed_tokens_name_their_row():
    doc = _doc()
    bad = FieldReading("9", ("not a token",))  # type: ignore[arg-type]
    with pytest.raises(DatasetError, match=r"row 1 \(document d, field t\).*tokens"):
        feature_matrix(
            [(Field("t", "amount"), doc, None, None), (Field("t", "amount"), doc, bad, None)]
        )


@settings(max_examples=30, deadline=None)
@given(st.lists(_reading, min_size=1, max_size=12), st.integers(1, 4))
def test_logprob_stats_do_not_depend_on_how_tokens_are_chunked(readings, chunk):
    want = np.array([_reference_stats(r) for r in readings], dtype=float).reshape(-1, 8)
    saved = logprobs._CHUNK
    logprobs._CHUNK = chunk  # a chunk boundary inside and between readings
    try:
        got = logprobs.token_stats_batch(readings)
    finally:
        logprobs._CHUNK = saved
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, equal_nan=True)

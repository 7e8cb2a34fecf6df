"""Arithmetic consistency features (cons_*) through the one assembler."""

from __future__ import annotations

import math

import numpy as np

from confidence.features.build import FEATURE_NAMES, feature_matrix, pageless_matrix, record_rows
from confidence.readings import CallResult, FieldReading, RunRecord
from confidence.schema import Field, Schema
from confidence.types import Document

SCHEMA = Schema(
    "invoice",
    (
        Field("seller", "text"),
        Field("subtotal", "amount", "Total before tax."),
        Field("vat", "amount", "Tax amount."),
        Field("total", "amount", "Total including tax."),
    ),
)
COL = {n: i for i, n in enumerate(FEATURE_NAMES)}


def record(doc_id, hunter, mapper=None):
    def call(kind, values):
        return CallResult(kind, {k: FieldReading(v) for k, v in values.items()})

    return RunRecord(doc_id, call("hunter", hunter), call("mapper", mapper) if mapper else None)


def cons(rows, i):
    return rows.X[i, COL["cons_h"]], rows.X[i, COL["cons_m"]]


def test_hand_computed_readings():
    good = {"seller": "ACME", "subtotal": "649.50", "vat": "129.90", "total": "779.40"}
    swapped = dict(good, subtotal="779.40", total="649.50")
    rows = record_rows([record("a", good, swapped), record("b", swapped)], SCHEMA)
    a = {f: cons(rows, i) for i, f in enumerate(rows.fields[:4])}
    assert a["subtotal"] == (1.0, 0.0) and a["total"] == (1.0, 0.0)
    assert math.isnan(a["seller"][0]) and math.isnan(a["seller"][1])
    b = [cons(rows, i) for i in range(4, 8)]
    assert [h for h, _ in b[1:]] == [0.0, 0.0, 0.0]
    assert all(math.isnan(m) for _, m in b)  # no Mapper


def test_absent_term_means_no_relation():
    rows = record_rows(
        [record("a", {"subtotal": "100.00", "vat": None, "total": "119.00"})], SCHEMA
    )
    assert np.isnan(rows.X[:, COL["cons_h"]]).all()


def test_field_names_do_not_matter_only_concepts():
    renamed = Schema(
        "other",
        (
            Field("a", "text"),
            Field("net_amount", "amount"),
            Field("tax_amount", "amount"),
            Field("grand_total", "amount"),
        ),
    )
    vals = ["ACME", "649.50", "129.90", "779.40"]
    r1 = record_rows([record("x", dict(zip(SCHEMA.names, vals, strict=True)))], SCHEMA)
    r2 = record_rows([record("x", dict(zip(renamed.names, vals, strict=True)))], renamed)
    np.testing.assert_array_equal(r1.X[:, COL["cons_h"]], r2.X[:, COL["cons_h"]])


def test_pageless_and_page_paths_agree_on_consistency():
    doc = Document("a", "", ())
    vals = {"seller": "ACME", "subtotal": "649.50", "vat": "129.90", "total": "779.40"}
    rows = [(f, doc, FieldReading(vals[f.name]), FieldReading("1.00")) for f in SCHEMA]
    cols = [COL["cons_h"], COL["cons_m"]]
    np.testing.assert_array_equal(feature_matrix(rows)[:, cols], pageless_matrix(rows)[:, cols])


PARTS = Schema(
    "parts",
    (
        Field("customer", "text"),
        Field("customer_address", "address"),
        Field("net", "amount"),
        Field("gross", "amount"),
    ),
)


def part_of(rows):
    return rows.X[:, COL["cons_part_of"]].tolist()


def test_a_street_line_read_as_the_name_is_part_of_the_address():
    vals = {"customer": "52 Alexander Street", "customer_address": "52 Alexander Street, Leeds",
            "net": "19.00", "gross": "119.00"}  # fmt: skip
    assert part_of(record_rows([record("a", vals)], PARTS)) == [1.0, 1.0, 0.0, 0.0]
    # the digits of one amount inside another are not a part; a real name is not either
    vals["customer"] = "Mara Lind"
    assert part_of(record_rows([record("a", vals)], PARTS)) == [0.0, 0.0, 0.0, 0.0]


def test_part_of_needs_whole_words_and_four_characters():
    vals = {"customer": "Alexander", "customer_address": "Alexanderplatz 5, Berlin"}
    assert part_of(record_rows([record("a", vals)], PARTS))[:2] == [0.0, 0.0]
    vals = {"customer": "A B", "customer_address": "A B Street 5"}
    assert part_of(record_rows([record("a", vals)], PARTS))[:2] == [0.0, 0.0]
    vals = {"customer": "ACME", "customer_address": "ACME"}  # equal: cons_shared's case
    rows = record_rows([record("a", vals)], PARTS)
    assert part_of(rows)[:2] == [0.0, 0.0] and rows.X[0, COL["cons_shared"]] == 1.0


def test_part_of_is_blind_to_field_names_and_order_and_needs_no_page():
    vals = {"customer": "Studio 65q", "customer_address": "Studio 65q\nRue Haute 3, Lyon"}
    renamed = Schema("r", tuple(Field(f"f{i}", f.type) for i, f in enumerate(PARTS.fields)))
    a = record_rows([record("a", vals)], PARTS)
    b = record_rows([record("a", {f"f{i}": vals.get(n) for i, n in enumerate(PARTS.names)
                                  if vals.get(n)})], renamed)  # fmt: skip
    assert part_of(a)[:2] == part_of(b)[:2] == [1.0, 1.0]
    assert math.isnan(part_of(a)[2])  # no value: unknown
    doc = Document("a", "", ())
    rows = [(f, doc, FieldReading(vals[f.name]), None) for f in PARTS.fields[:2]]
    col = COL["cons_part_of"]
    assert feature_matrix(rows)[:, col].tolist() == pageless_matrix(rows)[:, col].tolist()


def test_part_of_search_equals_pairwise_comparison():
    """The substring search of cons_part_of against the definition, pair by pair."""
    import random

    from confidence.features.consistency import _part, _parts

    rng = random.Random(0)
    vocab = ["52", "alexander", "st", "leeds", "ab", "1900", "11900", "north", "x"]
    for _ in range(300):
        n = rng.randint(1, 8)
        names = [rng.choice("abcd") for _ in range(n)]
        words = [tuple(rng.choice(vocab) for _ in range(rng.randint(0, 4))) for _ in range(n)]
        want = [
            any(_part(w, v) for v, m in zip(words, names, strict=True) if m != name)
            for w, name in zip(words, names, strict=True)
        ]
        assert _parts(names, words) == want

"""Value-kind features (kind_*): the assembled columns of the reported values."""

from __future__ import annotations

import numpy as np
import pytest

from confidence.documents.value_kinds import ValueKinds
from confidence.features.build import FEATURE_NAMES, feature_matrix, pageless_matrix, record_rows
from confidence.features.value_kinds import NAMES, values_batch
from confidence.readings import CallResult, FieldReading, RunRecord
from confidence.schema import Field, Schema
from confidence.types import Document

COL = {n: i for i, n in enumerate(FEATURE_NAMES)}

TEXTS = [
    ("Mara Lind", "name"), ("Jon Berg", "name"), ("Ada Holm GmbH", "name"),
    ("12 High Street", "address"), ("4 Mill Lane, Leeds", "address"), ("9 Park Road", "address"),
    ("INV-0012", "id"), ("PO-4471", "id"), ("DE811907980", "id"),
    ("Net 30", "terms"), ("Due on receipt", "terms"), ("Payable in 14 days", "terms"),
    ("Total", "other"), ("Page 1 of 2", "other"), ("Invoice", "other"),
]  # fmt: skip


@pytest.fixture(scope="module")
def tiny():
    return ValueKinds().fit(*zip(*TEXTS, strict=True))


def test_features_of_reported_values(tiny):
    fields = [Field("customer", "text"), Field("customer", "text"), Field("due", "date"),
              Field("customer", "text"), Field("notes", "text")]  # fmt: skip
    X = values_batch(fields, ["Lena Holm", "14 Mill Street", "2024-01-02", None, "Net 30"], tiny)
    assert X.shape == (5, len(NAMES))
    assert X[0, 0] > X[1, 0]  # a street line reads less like a name than a name does
    assert np.isnan(X[2:4]).all()  # no kind (a date) / no value
    assert np.isnan(X[4, 0]) and 0 <= X[4, 1] <= 1  # "text" is no kind the tiny model knows


SCHEMA = Schema("s", (Field("customer_name", "text"), Field("total", "amount")))


def test_the_assembler_fills_the_columns_on_both_paths_and_field_renames_keep_them():
    doc = Document("a", "", ())
    rows = [(f, doc, FieldReading(v), None) for f, v in zip(SCHEMA, ["Helga Sommer", "9.00"],
                                                             strict=True)]  # fmt: skip
    cols = [COL[n] for n in NAMES]
    a, b = feature_matrix(rows)[:, cols], pageless_matrix(rows)[:, cols]
    np.testing.assert_array_equal(a, b)
    assert 0 <= a[0, 0] <= 1 and np.isnan(a[1]).all()
    renamed = Schema("r", (Field("client", "text", "The customer's name."), SCHEMA.fields[1]))
    reading = FieldReading("Helga Sommer")
    rec = RunRecord("a", CallResult("hunter", {"customer_name": reading}), None)
    rec2 = RunRecord("a", CallResult("hunter", {"client": reading}), None)
    x1 = record_rows([rec], SCHEMA).X[:, cols]
    x2 = record_rows([rec2], renamed).X[:, cols]
    np.testing.assert_array_equal(x1, x2)

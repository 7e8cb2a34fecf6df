"""Per-schema (Mondrian) reference of the out-of-domain check: keys, calibrations, p-values."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from confidence import persistence
from confidence.domain import DomainReference
from confidence.domain_schemas import (
    POOLED,
    SchemaCalibration,
    conformal_p,
    row_schema_keys,
    schema_key,
)


def test_schema_key_is_the_sorted_field_set():
    expected = hashlib.sha256(b"date:date\ntotal:amount").hexdigest()[:16]
    assert schema_key(["total", "date"], ["amount", "date"]) == expected
    assert schema_key(["date", "total", "total"], ["date", "amount", "amount"]) == expected
    assert schema_key(["date", "sum"], ["date", "amount"]) != expected  # renamed: another schema
    assert schema_key(["date", "total"], ["date", "text"]) != expected  # retyped: another schema
    with pytest.raises(ValueError, match="one type per field"):
        schema_key(["a"], [])


def test_row_keys_are_per_document():
    keys = row_schema_keys(["a", "b", "a"], ["x", "x", "y"], ["id", "id", "id"])
    assert keys[0] == keys[2] == schema_key(["x", "y"], ["id", "id"])
    assert keys[1] == schema_key(["x"], ["id"])
    with pytest.raises(ValueError, match="one entry per row"):
        row_schema_keys(["a"], ["x", "y"], ["id", "id"])


def test_calibration_pvalues_by_hand_and_round_trip():
    cal = SchemaCalibration("k", np.array([4.0, 1.0, 2.0, 3.0]), np.array([1.0, 1.0, 0.5, 2.0]))
    # (1 + #{d_ref >= d}) / (n + 1), n = 4
    assert cal.p_values([0.0, 2.0, 2.5, 9.0]).tolist() == [1.0, 0.8, 0.6, 0.2]
    assert cal.p_values([1.0, 3.0], core=True).tolist() == [0.8, 0.2]
    assert cal.n_documents == 4 and cal.distances.tolist() == [1.0, 2.0, 3.0, 4.0]
    back = SchemaCalibration.from_dict(cal.to_dict())
    assert back == cal and isinstance(back.distances, np.ndarray)
    assert (
        SchemaCalibration.from_dict(SchemaCalibration("j", [2.0]).to_dict()).core_distances is None
    )
    assert back != SchemaCalibration("k", cal.distances)  # without its core distances
    with pytest.raises(ValueError, match="non-empty"):
        SchemaCalibration("k", np.array([]))
    with pytest.raises(ValueError, match="must match"):
        SchemaCalibration("k", np.array([1.0, 2.0]), np.array([1.0]))
    with pytest.raises(ValueError, match="no distances without"):
        SchemaCalibration("k", np.array([1.0])).p_values([1.0], core=True)
    assert conformal_p(np.array([1.0]), np.array([1.0, 1.0])).tolist() == [1.0]  # ties count


def _two_schemas(rng, n_a, n_b, shift_b=2.0):
    """Schema A documents ~ N(0, 1), schema B documents ~ N(shift_b, 1); 5 rows each."""
    X = rng.normal(size=((n_a + n_b) * 5, 3))
    X[n_a * 5 :] += shift_b
    g = np.repeat([f"a{i}" for i in range(n_a)] + [f"b{i}" for i in range(n_b)], 5)
    keys = np.repeat(["A"] * n_a + ["B"] * n_b, 5).astype(object)
    return X, g, keys


def test_minority_schema_gets_its_own_calibrated_pvalues():
    """A receipt-dominated reference: pooled, the invoices look novel; per schema they do not."""
    rng = np.random.default_rng(0)
    X, g, k = _two_schemas(rng, 500, 100)
    pooled = DomainReference(columns=[0, 1, 2]).fit(X, groups=g)
    mond = DomainReference(columns=[0, 1, 2]).fit(X, groups=g, schemas=k)
    assert set(mond.schemas_) == {"A", "B"} and mond.schemas_["B"].n_documents == 50
    Xb, gb, kb = _two_schemas(rng, 0, 400)
    _, p_pooled = pooled.novelty_p(Xb, gb)
    _, p = mond.novelty_p(Xb, gb, kb)
    assert np.median(p_pooled) < 0.25  # the minority schema "is novel" against the pooled mix
    assert abs(np.mean(p < 0.1) - 0.1) < 0.05 and abs(np.median(p) - 0.5) < 0.1
    batch = _two_schemas(rng, 0, 40)
    assert pooled.check(*batch[:2]).shifted  # the false alarm of a pooled reference
    chk = mond.check(*batch)
    assert not chk.shifted and set(chk.reference) == {"B"} and chk.pooled_documents == ()
    moved = mond.check(*_two_schemas(rng, 0, 40, shift_b=3.5))
    assert moved.shifted  # a shift within the schema is still seen


def test_small_schema_pvalues_are_valid_and_exact():
    """Three documents of schema B: two calibrate it, so its p-values are 1/3, 2/3 or 1, and
    over draws of the reference an in-domain B document gets p <= 1/3 at most 1/3 of the time
    (the conformal guarantee is marginal: over reference and document)."""
    rng = np.random.default_rng(1)
    hits, n = 0, 300
    for _ in range(n):
        X, g, k = _two_schemas(rng, 40, 3)
        ref = DomainReference(columns=[0, 1, 2]).fit(X, groups=g, schemas=k)
        cal = ref.schemas_["B"]
        assert cal.n_documents == 2  # ceil(3 / 2) documents of B are held out for calibration
        Xb, gb, kb = _two_schemas(rng, 0, 1)
        chk = ref.check(Xb, gb, kb)
        _, d = ref._doc_distances(Xb[:, ref.columns], gb)
        assert chk.novelty_p[0] == (1 + np.sum(cal.distances >= d[0])) / 3  # by hand
        assert chk.reference == ("B",)
        hits += chk.novelty_p[0] <= 1 / 3
    assert hits / n <= 1 / 3 + 0.07  # 0.07: about 2.5 binomial standard errors


def test_unseen_schema_falls_back_to_the_pooled_reference():
    rng = np.random.default_rng(2)
    X, g, k = _two_schemas(rng, 100, 100)
    ref = DomainReference(columns=[0, 1, 2]).fit(X, groups=g, schemas=k)
    Xc, gc, _ = _two_schemas(rng, 10, 0)
    kc = np.array(["C"] * len(gc), dtype=object)
    chk = ref.check(Xc, gc, kc)
    assert chk.reference == (POOLED,) * 10 and chk.pooled_documents == chk.doc_ids
    _, d = ref._doc_distances(Xc[:, ref.columns], gc)
    np.testing.assert_array_equal(chk.novelty_p, conformal_p(d, ref.reference_distances_))
    # without keys at check time every document is compared with the pooled reference too
    assert ref.check(Xc, gc).reference == (POOLED,) * 10


def test_mondrian_reference_round_trip_and_validation():
    rng = np.random.default_rng(3)
    X, g, k = _two_schemas(rng, 60, 30)
    X[rng.uniform(size=len(X)) < 0.3, 2] = np.nan
    ref = DomainReference(columns=[0, 1, 2], optional_columns=[2]).fit(X, groups=g, schemas=k)
    back = persistence.from_dict(persistence.to_dict(ref))
    assert back.schemas_ == ref.schemas_ and list(back.schemas_) == ["A", "B"]
    Xq = X.copy()
    Xq[g == "b3", 2] = np.nan  # a document without its optional column: core distances
    a, b = back.check(Xq, g, k), ref.check(Xq, g, k)
    np.testing.assert_array_equal(a.novelty_p, b.novelty_p)
    assert a.reference == b.reference
    with pytest.raises(ValueError, match="two schemas"):
        DomainReference(columns=[0]).fit(X, groups=g, schemas=np.roll(k, 1))
    with pytest.raises(ValueError, match="one schema key per row"):
        DomainReference(columns=[0]).fit(X, groups=g, schemas=k[:-1])
    bad = persistence.to_dict(ref)
    bad["data"]["schemas"][0]["core_distances"] = None
    with pytest.raises(ValueError, match="per-schema distances"):
        DomainReference.from_dict(bad["data"])

"""The value-kinds classifier: fit, predict, persistence, the kind of a field."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from confidence.documents.value_kinds import (
    DEFAULT_DIR,
    KINDS,
    ValueKinds,
    default_value_kinds,
    field_kind,
)
from confidence.errors import ModelError
from confidence.schema import Field

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


def test_fits_and_tells_the_kinds_of_unseen_texts(tiny):
    assert tiny.classes_.tolist() == sorted({k for _, k in TEXTS})
    assert tiny.predict(["Ola Berg", "7 Mill Road", "INV-0451", "Net 60"]).tolist() == [
        "name", "address", "id", "terms"
    ]  # fmt: skip
    p = tiny.predict_proba(["anything at all"])
    assert p.shape == (1, 5) and math.isclose(p.sum(), 1.0)


def test_digits_are_folded_so_numbers_do_not_matter(tiny):
    np.testing.assert_allclose(tiny.predict_proba(["INV-0012"]), tiny.predict_proba(["INV-9876"]))


def test_fit_checks_its_input():
    with pytest.raises(ValueError, match="unknown kinds"):
        ValueKinds().fit(["a", "b"], ["name", "colour"])
    with pytest.raises(ValueError, match="at least two kinds"):
        ValueKinds().fit(["a", "b"], ["name", "name"])
    with pytest.raises(ValueError, match="as many kinds as texts"):
        ValueKinds().fit(["a"], ["name", "id"])


def test_save_load_round_trip_without_pickle(tiny, tmp_path):
    d = tiny.save(tmp_path / "vk")
    assert sorted(p.name for p in d.iterdir()) == [
        "manifest.json", "value_kinds.json", "value_kinds.weights.txt"
    ]  # fmt: skip
    back = ValueKinds.load(d)
    texts = [t for t, _ in TEXTS] + ["unseen text 42"]
    np.testing.assert_allclose(back.predict_proba(texts), tiny.predict_proba(texts), atol=1e-3)
    assert back.get_params() == tiny.get_params()


def test_a_corrupt_or_changed_file_is_a_clear_error(tiny, tmp_path):
    d = tiny.save(tmp_path / "vk")
    w = d / "value_kinds.weights.txt"
    w.write_text(w.read_text().replace(" ", "  ", 1))
    with pytest.raises(ModelError, match=r"value_kinds\.weights\.txt: checksum mismatch"):
        ValueKinds.load(d)


def test_the_kind_of_a_field():
    assert field_kind(Field("vendor", "text", "The seller's company name.")) == "name"
    assert field_kind(Field("payment_terms", "text")) == "terms"
    assert field_kind(Field("notes", "text")) == "text"
    assert field_kind(Field("x", "address")) == "address" and field_kind(Field("x", "id")) == "id"
    assert {field_kind(Field("x", t)) for t in ("date", "amount", "email", "iban")} == {None}
    assert set(KINDS) >= {"name", "terms", "text", "address", "id", "other"}


def test_the_shipped_model_loads_and_tells_a_street_line_from_a_name():
    assert (DEFAULT_DIR / "manifest.json").exists()
    vk = default_value_kinds()
    assert set(vk.classes_) == {"name", "terms", "address", "id", "other"}
    p = vk.predict_proba(["Helga Sommer", "52 Alexander Street"])
    name = vk.classes_.tolist().index("name")
    assert p[0, name] > p[1, name]


def _training_script():
    import importlib.util

    path = DEFAULT_DIR.parents[2] / "scripts" / "train_value_kinds.py"
    spec = importlib.util.spec_from_file_location("train_value_kinds", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_training_names_and_addresses_of_every_name_locale():
    from confidence.datasets.synthetic.locales import NAME_LOCALES

    script = _training_script()
    got = script.locale_examples(4)
    assert got == script.locale_examples(4)  # seeded: the shipped model is reproducible
    kinds = [k for _, _, k in got]
    assert kinds.count("name") == len(NAME_LOCALES) * 4 * 2  # companies and persons
    assert kinds.count("address") == len(NAME_LOCALES) * 2
    assert {d for d, _, _ in got} == {f"faker-{loc}" for loc in NAME_LOCALES}
    assert all(t.strip() and "\n" not in t for _, t, _ in got)
    assert any(t.isupper() for _, t, k in got if k == "name")  # letterhead capitals too
    assert script.locale_examples(0) == []


def test_the_shipped_model_was_trained_on_the_name_locales_table():
    import json

    from confidence.datasets.synthetic.locales import NAME_LOCALES

    card = json.loads((DEFAULT_DIR / "training.json").read_text())
    assert card["name_locales"]["locales"] == list(NAME_LOCALES)
    assert card["name_locales"]["per_locale"] > 0


def test_the_shipped_model_knows_names_of_countries_it_never_trained_on():
    from faker import Faker

    vk = default_value_kinds()
    classes = vk.classes_.tolist()
    for loc in ("hu_HU", "cs_CZ", "ro_RO"):  # in no locale table of the generator
        fake = Faker(loc)
        fake.seed_instance(99)
        names = [fake.company().upper() for _ in range(10)] + [fake.name() for _ in range(10)]
        streets = [", ".join(fake.address().split("\n")) for _ in range(10)]
        read = vk.predict_proba(names + streets).argmax(1)
        assert (read[:20] == classes.index("name")).mean() >= 0.75, loc  # 0.5-0.65 before
        assert (read[20:] == classes.index("address")).mean() >= 0.8, loc


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("ab0 9.-éßΣİ\t\u00a0"), max_size=14), max_size=12))
def test_word_by_word_hashing_is_the_vectorizer_bit_for_bit(texts):
    """Each word's n-grams hashed once (_hashed) against sklearn's HashingVectorizer."""
    from confidence.documents.value_kinds import _hashed, _vectorizer

    texts = [*texts, *texts[:2], "Mara Lind"]  # repeated texts and words
    want, got = _vectorizer().transform(texts), _hashed(texts)
    assert want.shape == got.shape
    np.testing.assert_array_equal(want.indptr, got.indptr)
    np.testing.assert_array_equal(want.indices, got.indices)
    np.testing.assert_array_equal(want.data, got.data)


def test_scores_of_a_batch_are_those_of_each_text_alone(tiny):
    texts = ["Mara Lind", "12 High Street", "INV-0012", "INV-0099", "Mara Lind", "x"]
    batch = tiny.decision_function(texts)
    alone = np.vstack([tiny.decision_function([t]) for t in texts])
    np.testing.assert_array_equal(batch, alone)

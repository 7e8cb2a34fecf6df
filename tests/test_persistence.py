"""Persistence: one protocol for every fitted part, a manifest over every file, no pickle."""

from __future__ import annotations

import json

import numpy as np
import pytest

from confidence import persistence
from confidence.calibration import (
    IsotonicCalibrator,
    LassoRecalibrator,
    PlattCalibrator,
    ThresholdSelector,
)
from confidence.engine import ConfidenceEngine, default_model_dir, kept_features
from confidence.errors import ModelError
from confidence.features.build import FEATURE_NAMES


def _scores(n=400, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.uniform(0.02, 0.98, n)
    y = (rng.uniform(size=n) < s).astype(int)
    return s, y


def _engine():
    rng = np.random.default_rng(0)
    n = 1500
    X = np.full((n, len(FEATURE_NAMES)), np.nan)
    y = (rng.uniform(size=n) < 0.8).astype(int)
    X[:, 4] = np.where(rng.uniform(size=n) < 0.9, y, 1 - y)
    return ConfidenceEngine(target_accuracy=0.9, fusion_params={"n_estimators": 50}).fit(
        X,
        y,
        groups=np.repeat(np.arange(n // 5), 5),
        fields=np.tile(["a", "b", "c", "d", "e"], n // 5),
        field_types=["text"] * n,
    ), X


@pytest.fixture(scope="module")
def engine():
    return _engine()


def _parts(engine):
    eng, _ = engine
    s, y = _scores()
    rng = np.random.default_rng(1)
    lasso = LassoRecalibrator(C=1.0).fit(s, y, signals={"a": rng.normal(size=len(s))})
    sel = ThresholdSelector(target_accuracy=0.8, min_samples=50).fit(s, y, ["f"] * len(s))
    return {
        "isotonic": IsotonicCalibrator().fit(s, y),
        "platt": PlattCalibrator().fit(s, y),
        "lasso": lasso,
        "thresholds": sel,
        "fusion": eng.fusion_,
        "engine": eng,
    }


def _same(kind, a, b, X):
    s, _ = _scores(50, seed=2)
    if kind in ("isotonic", "platt"):
        np.testing.assert_array_equal(a.predict_proba(s), b.predict_proba(s))
    elif kind == "lasso":
        sig = {"a": np.linspace(-1, 1, len(s))}
        pa, pb = a.predict_proba(s, signals=sig), b.predict_proba(s, signals=sig)
        np.testing.assert_array_equal(pa, pb)
    elif kind == "thresholds":
        assert a.to_dict() == b.to_dict()
    elif kind == "fusion":
        np.testing.assert_array_equal(a.predict_proba(X[:100]), b.predict_proba(X[:100]))
    else:
        np.testing.assert_array_equal(a.predict_confidence(X[:100]), b.predict_confidence(X[:100]))
        assert a.thresholds_.to_dict() == b.thresholds_.to_dict()
    assert a.get_params() == b.get_params()


def test_every_kind_is_registered():
    # importing them registers "ranker" and "value_kinds"
    import confidence.calls.ranker
    import confidence.documents.value_kinds  # noqa: F401

    kinds = {
        "isotonic",
        "platt",
        "lasso",
        "thresholds",
        "fusion",
        "engine",
        "domain_reference",
        "unlocking",
        "ranker",
        "value_kinds",
    }
    assert set(persistence.PARTS) == kinds


@pytest.mark.parametrize("kind", ["isotonic", "platt", "lasso", "thresholds", "fusion", "engine"])
def test_round_trip_in_memory_and_on_disk(engine, kind, tmp_path):
    part = _parts(engine)[kind]
    assert persistence.kind_of(part).kind == kind
    d = json.loads(json.dumps(persistence.to_dict(part), allow_nan=False))
    _same(kind, part, persistence.from_dict(d), engine[1])
    path = tmp_path / ("m" if persistence._is_folder_part(part) else "p.json")
    back = persistence.load(persistence.save(part, path))
    assert type(back) is type(part)
    _same(kind, part, back, engine[1])


def test_every_file_of_a_model_folder_is_in_the_manifest(engine, tmp_path):
    eng, _ = engine
    d = eng.save(tmp_path / "m")
    (d / "MODEL_CARD.md").write_text("# card\n")
    with pytest.raises(ModelError, match=r"MODEL_CARD\.md: not listed in manifest\.json"):
        ConfidenceEngine.load(d)
    persistence.attach(d, "MODEL_CARD.md")
    man = json.loads((d / "manifest.json").read_text())
    files = {p.name for p in d.iterdir()} - {"manifest.json"}
    assert set(man["files"]) == files
    for entry in man["files"].values():
        assert len(entry["sha256"]) == 64 and entry["format_version"] >= 1
    ConfidenceEngine.load(d)


def _flip(path, at):
    blob = bytearray(path.read_bytes())
    blob[at] ^= 0x01
    path.write_bytes(bytes(blob))


@pytest.mark.parametrize("where", [0.1, 0.5, 0.9])
def test_one_flipped_byte_in_any_file_is_an_error_naming_it(engine, tmp_path, where):
    eng, _ = engine
    d = eng.save(tmp_path / "m")
    (d / "MODEL_CARD.md").write_text("# card\n\nTrained on nothing in particular.\n")
    persistence.attach(d, "MODEL_CARD.md")
    names = sorted(p.name for p in d.iterdir())
    assert len(names) == 8  # with domain.json
    for name in names:
        path = d / name
        original = path.read_bytes()
        _flip(path, int(where * (len(original) - 1)))
        with pytest.raises(ModelError, match=name.replace(".", r"\.")):
            ConfidenceEngine.load(d)
        path.write_bytes(original)
    ConfidenceEngine.load(d)  # restored: loads again


def test_missing_file_unknown_kind_and_newer_version(engine, tmp_path):
    eng, _ = engine
    d = eng.save(tmp_path / "m")
    blob = (d / "calibrator.json").read_bytes()
    (d / "calibrator.json").unlink()
    with pytest.raises(ModelError, match=r"calibrator\.json: missing"):
        ConfidenceEngine.load(d)
    env = json.loads(blob)
    for change, match in (
        ({"kind": "beta"}, r"calibrator\.json: unknown part kind 'beta'"),
        ({"format_version": 3}, r"calibrator\.json: isotonic format version 3"),
    ):
        (d / "calibrator.json").write_text(json.dumps({**env, **change}))
        persistence.attach(d, "calibrator.json")  # a consistent manifest: the part is refused
        with pytest.raises(ModelError, match=match):
            ConfidenceEngine.load(d)


def test_no_pickle_anywhere(engine, tmp_path):
    eng, _ = engine
    d = eng.save(tmp_path / "m")
    for p in d.iterdir():
        json.loads(p.read_text()) if p.suffix == ".json" else p.read_text()
        assert not p.read_bytes().startswith(b"\x80")  # pickle protocol header


def test_saving_an_unregistered_object_is_a_clear_error(tmp_path):
    with pytest.raises(TypeError, match="not a persistable part"):
        persistence.save(object(), tmp_path / "x.json")


def test_a_folder_part_is_not_saved_as_one_file(engine, tmp_path):
    with pytest.raises(ValueError, match="saved as a folder"):
        persistence.save(engine[0], tmp_path / "x.json")


@pytest.mark.parametrize("folder", [default_model_dir(), "sample"])
def test_shipped_models_load_in_the_current_format(folder):
    from pathlib import Path

    import confidence.sample

    d = Path(confidence.sample.__file__).parent / "model" if folder == "sample" else folder
    eng = ConfidenceEngine.load(d)
    assert json.loads((Path(d) / "manifest.json").read_text())["main"] == "engine.json"
    # every feature of this release but those the model leaves out on purpose
    # (ConfidenceEngine(exclude_features=...): the default model's absolute image quality)
    assert eng.feature_names_ == kept_features(eng.exclude_features)
    assert eng.fusion_.n_features_in_ == len(eng.feature_names_)

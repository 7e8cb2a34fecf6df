"""Helpers factored out of several modules: JSON-safe values, scan lookup, CLI guards."""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pytest

from confidence.cli._engine_common import (
    add_guarantee_args,
    check_guarantee_args,
    require_rows,
)
from confidence.datasets.images import find_image
from confidence.errors import DatasetError
from confidence.jsonsafe import jsonable


def test_jsonable_hand_cases():
    obj = {"a": float("nan"), "b": [np.float32(0.5), -np.inf], "c": (np.int64(3), np.bool_(True))}
    out = jsonable(obj)
    assert out == {"a": None, "b": [0.5, None], "c": [3, True]}
    assert type(out["c"][0]) is int and type(out["c"][1]) is bool
    json.dumps(out, allow_nan=False)  # must not raise
    assert jsonable("x") == "x" and jsonable(None) is None and jsonable(2.5) == 2.5
    assert obj["a"] != obj["a"]  # the input is not modified (NaN still there)
    assert math.isnan(obj["a"])


def test_find_image_order_and_absence(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    (b / "r1.png").write_bytes(b"")
    (b / "r1.jpg").write_bytes(b"")
    (a / "r1.jpg").write_bytes(b"")
    assert find_image("r1", [a, b], (".png", ".jpg")) == a / "r1.jpg"  # folders first
    assert find_image("r1", [b], (".png", ".jpg")) == b / "r1.png"  # then suffix order
    assert find_image("r1", [tmp_path / "none"], (".png",)) is None
    assert find_image("r2", [a, b], (".png", ".jpg")) is None


def test_guarantee_args_defaults_and_checks():
    p = argparse.ArgumentParser()
    add_guarantee_args(p)
    args = p.parse_args([])
    assert (args.target_accuracy, args.confidence_level) == (0.99, 0.9)
    check_guarantee_args(args)
    with pytest.raises(DatasetError, match=r"--confidence-level 1\.0: pass a number between 0"):
        check_guarantee_args(p.parse_args(["--confidence-level", "1"]))
    with pytest.raises(DatasetError, match=r"--target-accuracy 0\.0"):
        check_guarantee_args(p.parse_args(["--target-accuracy", "0"]))


class _Table:
    def __init__(self, n, skipped):
        self.n, self.skipped = n, skipped

    def __len__(self):
        return self.n


def test_require_rows():
    require_rows(_Table(3, {}))
    with pytest.raises(DatasetError, match=r"no judged fields \(2 no run\)"):
        require_rows(_Table(0, {"no run": 2}))
    with pytest.raises(DatasetError, match=r"\(empty dataset\)"):
        require_rows(_Table(0, {}))

"""Every docstring example in the package runs and prints what it shows."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest


def _modules() -> list[str]:
    # features/, calibration/ and datasets/ live beside confidence/ in the source tree (mapped by
    # package-dir), so each is walked from its own path.
    names = set()
    for root in ("confidence", "confidence.features", "confidence.calibration",
                 "confidence.datasets"):  # fmt: skip
        pkg = importlib.import_module(root)
        names.add(root)
        for info in pkgutil.walk_packages(pkg.__path__, root + "."):
            if not info.name.endswith("__main__"):
                names.add(info.name)
    return sorted(names)


MODULES = _modules()


def test_all_subpackages_are_walked():
    for pkg in ("confidence.features", "confidence.calibration", "confidence.datasets"):
        assert any(m.startswith(pkg + ".") for m in MODULES), pkg


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(module, optionflags=flags, verbose=False, report=True)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"

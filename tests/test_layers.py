"""Layers only call downward: no module imports one of a higher layer (lazy imports included).

The layer table is the architecture of ``DESIGN.md``; a new module must be placed in it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = {
    "confidence": "confidence",
    "features": "confidence.features",
    "calibration": "confidence.calibration",
    "datasets": "confidence.datasets",
}
LAYERS: list[tuple[str, ...]] = [
    # persistence is the registry + file protocol every fitted part registers with
    (
        "confidence.errors",
        "confidence.types",
        "confidence.schema",
        "confidence.jsonsafe",
        "confidence.gcpause",
        "confidence.persistence",
    ),
    ("confidence.documents",),
    ("confidence.datasets",),
    ("confidence.llm",),
    ("confidence.readings", "confidence.records"),
    ("confidence.calls",),
    ("confidence.features",),
    (
        "confidence.calibration",
        "confidence.contributions",
        "confidence.fusion",
        "confidence.sampling",
        "confidence.domain",
        "confidence.domain_schemas",
    ),
    ("confidence.routing", "confidence.scores", "confidence.output", "confidence.audit"),
    ("confidence.engine",),
    # confidence.ray runs the engine's stages on Ray Data (the CLI above it calls it)
    ("confidence.evaluation", "confidence.monitoring", "confidence.ray"),
    ("confidence.report",),
    # the review app reads scored rows and documents; feedback reads its log
    ("confidence.review",),
    # decisions + scored rows -> dataset -> recalibrated model (reads the review log)
    ("confidence.feedback",),
    ("confidence.demo", "confidence.sample"),
    ("confidence.cli",),
]
# the package facade re-exports lazily from every layer (PEP 562 __getattr__)
FACADE = "confidence"


def layer_of(module: str) -> int | None:
    """Index of the layer holding ``module`` (longest matching prefix), None if unplaced."""
    best: tuple[int, int] | None = None
    for i, names in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and (
                best is None or len(name) > best[1]
            ):
                best = (i, len(name))
    return None if best is None else best[0]


def _modules():
    for folder, package in SOURCES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = [p for p in path.relative_to(ROOT / folder).with_suffix("").parts]
            yield ".".join([package, *(p for p in parts if p != "__init__")]), path


def _imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
        elif isinstance(node, ast.Import):
            out.extend(a.name for a in node.names)
    return [m for m in out if m == "confidence" or m.startswith("confidence.")]


def test_layer_table_examples():
    assert layer_of("confidence.documents.lines") == 1
    assert layer_of("confidence.cli.score_cmd") == len(LAYERS) - 1
    assert layer_of("confidence.enginex") is None


def test_every_module_is_placed():
    unplaced = [m for m, _ in _modules() if m != FACADE and layer_of(m) is None]
    assert not unplaced, f"place these modules in LAYERS: {unplaced}"


@pytest.mark.parametrize(("module", "path"), list(_modules()), ids=lambda v: str(v))
def test_no_import_goes_up(module, path):
    if module == FACADE:
        return
    mine = layer_of(module)
    up = [t for t in _imports(path) if t != FACADE and (layer_of(t) or 0) > mine]
    assert not up, f"{module} (layer {mine}) imports higher layers: {up}"


def test_benchmarks_and_scripts_use_the_library_not_the_cli():
    offenders = [
        f"{p.relative_to(ROOT)} -> {t}"
        for folder in ("benchmarks", "scripts")
        for p in sorted((ROOT / folder).glob("*.py"))
        for t in _imports(p)
        if t.startswith("confidence.cli")
    ]
    assert not offenders, offenders

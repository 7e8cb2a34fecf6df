"""The ``extractconf`` dispatcher: every listed command module must exist."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from confidence import cli

ROOT = Path(__file__).resolve().parents[2]


def test_every_command_is_registered():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) == set(cli._COMMANDS)


def test_a_missing_command_module_is_an_error(monkeypatch):
    monkeypatch.setattr(cli, "_COMMANDS", (*cli._COMMANDS, "no_such"))
    with pytest.raises(ModuleNotFoundError, match=r"confidence\.cli\.no_such_cmd"):
        cli.build_parser()


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_the_library_never_imports_the_cli():
    offenders = [
        str(p.relative_to(ROOT))
        for folder in ("confidence", "features", "calibration", "datasets")
        for p in (ROOT / folder).rglob("*.py")
        if "cli" not in p.relative_to(ROOT).parts
        and any(m == "confidence.cli" or m.startswith("confidence.cli.") for m in _imports(p))
    ]
    assert offenders == []


def test_evaluate_help_says_what_happens_without_a_model(capsys):
    # evaluate cross-fits without --model; score, tune and recalibrate use the shipped model
    assert cli.main(["evaluate", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "without it the engine is cross" in text
    assert "default: the model shipped" not in text
    assert cli.main(["score", "--help"]) == 0
    assert "default: the model shipped" in " ".join(capsys.readouterr().out.split())

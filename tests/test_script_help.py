"""Every maintainer script and benchmark answers ``--help`` with its usage, and runs nothing.

``scripts/train_default.py --help`` once crashed on a ``%`` in a help text (argparse formats help
strings), and ``benchmarks/bench_llm_async.py`` ignored ``--help``, started its benchmark and
failed on a helper that had moved. Both are the first thing a user types.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(
    p.relative_to(ROOT).as_posix()
    for folder in ("scripts", "benchmarks")
    for p in (ROOT / folder).glob("*.py")
    if not p.name.startswith("_")
)


def test_there_are_scripts_to_check():
    assert "scripts/train_default.py" in SCRIPTS
    assert "benchmarks/run_all.py" in SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_prints_usage_and_exits_0(script):
    done = subprocess.run(
        [sys.executable, script, "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("usage:"), done.stdout[:500]
    assert Path(script).name in done.stdout.splitlines()[0]


def test_run_all_refuses_an_unknown_benchmark():
    done = subprocess.run(
        [sys.executable, "benchmarks/run_all.py", "no_such_benchmark"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "no such benchmark: no_such_benchmark" in done.stderr


def test_train_default_refuses_to_write_the_model_over_its_working_copy(tmp_path):
    # `train --model-out WORK/model` once trained into WORK/model, then regenerated --model-out
    # whole, deleting what it had just trained, and failed on a missing manifest.
    done = subprocess.run(
        [sys.executable, "scripts/train_default.py", "train", "--work", str(tmp_path),
         "--model-out", str(tmp_path / "model")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode != 0
    assert "--model-out must not be" in done.stderr
    assert not (tmp_path / "model").exists()

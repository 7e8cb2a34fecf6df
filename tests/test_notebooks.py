"""The notebooks execute top to bottom on the bundled sample (nbclient, the venv's kernel)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def _kernel_name() -> str:
    """``python3``, after checking it launches this interpreter (the venv), not another one."""
    from jupyter_client.kernelspec import KernelSpecManager

    argv = KernelSpecManager().get_kernel_spec("python3").argv
    # jupyter_client swaps a bare "python" for sys.executable when it starts the kernel
    ok = argv[0] in ("python", "python3") or Path(argv[0]).resolve() == Path(sys.executable)
    assert ok, f"kernel python3 runs {argv[0]}; run `{sys.executable} -m ipykernel install --user`"
    return "python3"


def _run(name: str, workdir: Path):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=600,
        kernel_name=_kernel_name(),
        resources={"metadata": {"path": str(workdir)}},
    )
    client.execute()
    return nb


def _outputs(nb) -> str:
    text = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            text.append(out.get("text", ""))
            text.append(json.dumps(out.get("data", {})))
    return "\n".join(text)


def test_notebooks_are_stored_without_outputs():
    for path in NOTEBOOKS.glob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, path.name


@pytest.mark.slow
def test_threshold_tuning_runs_and_exports_usable_thresholds(tmp_path):
    from confidence.calibration import ThresholdSelector

    nb = _run("threshold_tuning.ipynb", tmp_path)
    out = _outputs(nb)
    assert "guaranteed P(target met)" in out
    assert "image/png" in out  # the risk-coverage plots
    assert "per-group coverage and accuracy" in out and "per field and group" in out
    sel = ThresholdSelector.load(tmp_path / "thresholds.json")
    assert sel.thresholds_  # one threshold per field of the sample
    assert 0 < sel.confidence_level < 1


@pytest.mark.slow
def test_quickstart_runs(tmp_path):
    nb = _run("quickstart.ipynb", tmp_path)
    out = _outputs(nb)
    assert "using " in out
    assert "straight through" in out
    assert "Brier score before" in out or "nothing to recalibrate" in out
    # shap's own plots of engine.explain(), saved as images and shown
    assert "waterfall of the least confident field" in out and "image/png" in out
    for name in ("shap_beeswarm.png", "shap_waterfall.png"):
        assert (tmp_path / name).read_bytes().startswith(b"\x89PNG")

"""Checking that the installed llama.cpp build can run on this machine before it is used.

llama.cpp compiled with ``-march=native`` on a CPU with Intel AMX includes AMX matrix kernels.
On a Xeon that reports AMX and grants it to the process, those kernels crashed the process
(SIGSEGV) on the first batch of two or more tokens, where the same build without AMX runs. A
crash cannot be caught in the process that crashes, so a build with AMX kernels is first tried
in a child process (once per process and build): if the child dies, :class:`LocalLlamaClient
<confidence.llm.local.LocalLlamaClient>` raises an :class:`~confidence.errors.LLMError` that
says how to rebuild, instead of killing the caller's whole batch. ``make venv`` builds without
AMX.

Examples
--------
>>> has_amx_kernels(b"CPU : AVX2 = 1 | AMX_INT8 = 1 | OPENMP = 1")
True
>>> has_amx_kernels(b"CPU : AVX2 = 1 | OPENMP = 1")
False
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from confidence.errors import LLMError

REBUILD = (
    "CMAKE_ARGS=\"'-DCMAKE_C_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16' "
    "'-DCMAKE_CXX_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16'\" "
    "pip install --no-cache-dir --force-reinstall --no-deps llama-cpp-python"
)

# the child: load the model and evaluate one batch of several tokens, as every prompt does
_PROBE = """
import sys, llama_cpp
llm = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=64, n_threads=1, verbose=False)
llm.eval(llm.tokenize(b"Invoice number 12345, total 67.89"))
"""

_checked: dict[tuple[str, str], str | None] = {}


def has_amx_kernels(system_info: bytes) -> bool:
    """Whether ``llama_cpp.llama_print_system_info()`` reports AMX kernels compiled in."""
    return b"AMX_INT8 = 1" in system_info


def check_build(llama_cpp, model_path: str | Path, *, timeout: float = 300.0) -> None:
    """Raise :class:`~confidence.errors.LLMError` if this llama.cpp build crashes here.

    Only a build with AMX kernels is tried (in a child process, with ``model_path``); the
    verdict is kept for the life of the process.

    Parameters
    ----------
    llama_cpp : module
        The imported ``llama_cpp`` package.
    model_path : str or Path
        The GGUF the caller is about to load.
    timeout : float
        Seconds the child may take.

    Raises
    ------
    LLMError
        The child died from a signal (the message names it and how to rebuild).
    """
    if not has_amx_kernels(llama_cpp.llama_print_system_info()):
        return
    key = (str(Path(llama_cpp.__file__).resolve()), str(model_path))
    if key not in _checked:
        _checked[key] = _probe(model_path, timeout)
    if _checked[key] is not None:
        raise LLMError(_checked[key])


def _probe(model_path: str | Path, timeout: float) -> str | None:
    """None when the child evaluated a batch; else why it failed."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _PROBE, str(model_path)],
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None  # slow, not crashed: let the real call run (and its own deadline apply)
    except OSError:
        return None  # no child can be started here (no interpreter to run): not a verdict
    if proc.returncode >= 0:
        return None  # exited: ran, or failed with a Python error the real call reports itself
    try:
        sig = signal.Signals(-proc.returncode).name
    except ValueError:
        sig = f"signal {-proc.returncode}"
    return (
        f"{model_path}: the installed llama-cpp-python was compiled with Intel AMX kernels, "
        f"and evaluating a prompt with it killed a test process ({sig}) on this machine; "
        f"rebuild it without them: {REBUILD}"
    )

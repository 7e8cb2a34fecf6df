"""A llama.cpp build that would crash this process is refused with an LLMError first."""

from __future__ import annotations

import pytest

from confidence.errors import LLMError
from confidence.llm import build_check


class _FakeLlama:
    """Stands in for the ``llama_cpp`` module: only what the check reads."""

    __file__ = __file__

    def __init__(self, info: bytes) -> None:
        self.info = info

    def llama_print_system_info(self) -> bytes:
        return self.info


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(build_check, "_checked", {})


def test_build_without_amx_is_not_probed(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("probed")

    monkeypatch.setattr(build_check, "_probe", boom)
    build_check.check_build(_FakeLlama(b"CPU : AVX2 = 1 | OPENMP = 1 |"), "m.gguf")


def test_child_killed_by_a_signal_is_an_llm_error(monkeypatch, tmp_path):
    monkeypatch.setattr(build_check, "_PROBE", "import os, signal; os.kill(os.getpid(), 11)")
    fake = _FakeLlama(b"CPU : AVX512 = 1 | AMX_INT8 = 1 |")
    with pytest.raises(LLMError, match=r"m\.gguf: .*AMX.*SIGSEGV.*-mno-amx-int8"):
        build_check.check_build(fake, "m.gguf")
    # the verdict is kept: a second call raises without a second child
    monkeypatch.setattr(build_check, "_PROBE", "raise SystemExit(0)")
    with pytest.raises(LLMError):
        build_check.check_build(fake, "m.gguf")


def test_child_that_runs_or_fails_in_python_passes(monkeypatch):
    fake = _FakeLlama(b"AMX_INT8 = 1")
    monkeypatch.setattr(build_check, "_PROBE", "pass")
    build_check.check_build(fake, "a.gguf")
    monkeypatch.setattr(build_check, "_PROBE", "raise ValueError('no model')")
    build_check.check_build(fake, "b.gguf")  # a Python error: the real call reports it


def test_no_child_can_start_is_no_verdict(monkeypatch):
    monkeypatch.setattr(build_check.sys, "executable", "/nonexistent/python")
    build_check.check_build(_FakeLlama(b"AMX_INT8 = 1"), "m.gguf")


@pytest.mark.llm
def test_local_client_refuses_a_crashing_build(monkeypatch):
    """Through the user's call: ``LocalLlamaClient.chat`` raises instead of crashing."""
    pytest.importorskip("llama_cpp")
    from confidence.llm import LocalLlamaClient

    monkeypatch.setattr(build_check, "has_amx_kernels", lambda info: True)
    monkeypatch.setattr(build_check, "_PROBE", "import os; os.abort()")
    client = LocalLlamaClient(n_ctx=256)
    with pytest.raises(LLMError, match=r"SIGABRT.*rebuild it without them"):
        client.chat([{"role": "user", "content": "hi"}], max_tokens=2)


@pytest.mark.llm
def test_local_client_runs_where_the_probe_passes(monkeypatch):
    """The real probe on the installed build and model: passes where ``make venv`` built it."""
    pytest.importorskip("llama_cpp")
    from confidence.llm import LocalLlamaClient

    monkeypatch.setattr(build_check, "has_amx_kernels", lambda info: True)  # probe for real
    client = LocalLlamaClient(n_ctx=256)
    [c] = client.chat([{"role": "user", "content": "Say hi"}], max_tokens=3)
    assert c.tokens

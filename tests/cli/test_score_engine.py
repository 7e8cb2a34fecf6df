"""``extractconf score`` engine options refused before any work (the Ray runs: tests/ray)."""

from __future__ import annotations

import sys

from confidence.cli import main


def test_ray_options_need_engine_ray(tmp_path, capsys):
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(b"%PDF-1.4")
    rc = main(["score", str(pdf), "--out", str(tmp_path / "s.jsonl"), "--num-cpus", "2"])
    assert rc == 2
    assert "only with --engine ray" in capsys.readouterr().err


def test_engine_ray_without_ray_names_the_extra(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if extractconf[ray] were not installed
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(b"%PDF-1.4")
    rc = main(["score", str(pdf), "--out", str(tmp_path / "out"), "--engine", "ray"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "pip install 'extractconf[ray]'" in err and err.count("\n") == 1


def test_a_bad_audit_rate_is_refused_on_ray_before_ray_starts(tmp_path, capsys):
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(b"%PDF-1.4")
    argv = ["score", str(pdf), "--out", str(tmp_path / "out"), "--engine", "ray"]
    assert main([*argv, "--audit-rate", "1.5"]) == 2
    assert "--audit-rate 1.5: pass a share between 0 and 1" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()

"""PrefixStateCache: stored prompt states found by their longest shared prefix, checked, evicted."""

from __future__ import annotations

import json

import pytest

from confidence.llm.prefix_cache import PrefixStateCache, common_prefix, default_prefix_dir


def test_best_is_the_longest_shared_prefix(tmp_path):
    cache = PrefixStateCache(tmp_path, model_id="m", min_tokens=2)
    assert cache.put([1, 2, 3, 4], b"short")
    assert cache.put([1, 2, 3, 5, 6, 7], b"long")
    assert cache.best([1, 2, 3, 5, 6, 9]) == (5, [1, 2, 3, 5, 6, 7], b"long")
    assert cache.best([1, 2, 3, 4, 4]) == (4, [1, 2, 3, 4], b"short")
    assert cache.best([1, 9]) is None  # shares fewer than min_tokens
    # A new process (a new cache object) finds what an earlier one stored.
    again = PrefixStateCache(tmp_path, model_id="m", min_tokens=2)
    assert again.best([1, 2, 3, 5, 6, 7])[2] == b"long"


def test_other_models_and_short_prompts_are_kept_apart(tmp_path):
    PrefixStateCache(tmp_path, model_id="a", min_tokens=2).put([1, 2, 3], b"x")
    assert PrefixStateCache(tmp_path, model_id="b", min_tokens=2).best([1, 2, 3]) is None
    cache = PrefixStateCache(tmp_path, model_id="a", min_tokens=5)
    assert not cache.put([1, 2], b"y")  # too short to be worth a file
    assert not cache.put([1, 2, 3, 4, 5], b"")  # nothing to store
    assert cache.put([1, 2, 3, 4, 5], b"z") and not cache.put([1, 2, 3, 4, 5], b"z")


def test_a_changed_state_file_is_ignored(tmp_path):
    cache = PrefixStateCache(tmp_path, model_id="m", min_tokens=1)
    cache.put([1, 2, 3], b"good state")
    [kv] = tmp_path.glob("*.kv")
    kv.write_bytes(b"bad state!")  # same size, other bytes
    assert PrefixStateCache(tmp_path, model_id="m", min_tokens=1).best([1, 2, 3]) is None
    kv.write_bytes(b"cut")
    assert PrefixStateCache(tmp_path, model_id="m", min_tokens=1).best([1, 2, 3]) is None
    [meta] = tmp_path.glob("*.json")
    meta.write_text("{not json")
    assert PrefixStateCache(tmp_path, model_id="m", min_tokens=1).best([1, 2, 3]) is None


def test_least_recently_used_entries_are_evicted(tmp_path):
    import os

    cache = PrefixStateCache(tmp_path, model_id="m", max_entries=2, min_tokens=1)
    cache.put([1], b"a")
    cache.put([2], b"b")
    metas = {json.loads(p.read_text())["tokens"][0]: p for p in tmp_path.glob("*.json")}
    os.utime(metas[1], (1, 1))  # [1] is the oldest
    cache.put([3], b"c")
    kept = sorted(json.loads(p.read_text())["tokens"][0] for p in tmp_path.glob("*.json"))
    assert kept == [2, 3] and len(list(tmp_path.glob("*.kv"))) == 2
    assert cache.best([1]) is None and cache.best([3]) == (1, [3], b"c")


def test_parameters_and_location(monkeypatch, tmp_path):
    with pytest.raises(ValueError, match="max_entries"):
        PrefixStateCache(tmp_path, model_id="m", max_entries=0)
    monkeypatch.setenv("EXTRACTCONF_CACHE", str(tmp_path))
    assert default_prefix_dir() == tmp_path / "llm-prefix"
    assert common_prefix([], [1]) == 0 and common_prefix([1, 2], [1, 2]) == 2

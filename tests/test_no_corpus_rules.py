"""Extraction and feature code holds no list taken from an evaluation corpus.

Place names, shop words and label words of the SROIE receipts (Malaysia) describe one evaluation
corpus; knowledge of a locale may live only in the synthetic generator's documented locale tables
(``datasets/synthetic/``) and reach extraction through training. This test reads every code and
data file of the installed library except those tables and fails on any such word.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("confidence", "features", "calibration", "datasets")
ALLOWED = ("datasets/synthetic/",)  # the documented locale tables of the generator
SUFFIXES = {".py", ".json", ".txt", ".yaml", ".yml", ".toml", ".csv"}

# Words seen on the SROIE evaluation receipts: Malaysian places, street and shop words, legal
# suffixes and Malay labels. None of them may steer extraction.
SROIE_WORDS = (
    "jalan", "jln", "taman", "tmn", "lorong", "kampung", "bandar", "batu", "johor", "bahru",
    "selangor", "kuala lumpur", "lumpur", "pulau pinang", "pinang", "melaka", "perak", "kedah",
    "sabah", "sarawak", "pahang", "shah alam", "petaling", "puchong", "klang", "sdn bhd", "bhd",
    "jumlah", "tarikh", "alamat", "kedai",
)  # fmt: skip
_WORD_RE = re.compile(
    r"(?<![a-z])(?:" + "|".join(map(re.escape, SROIE_WORDS)) + r")(?![a-z])", re.I
)


def _files():
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            rel = path.relative_to(ROOT).as_posix()
            if path.suffix in SUFFIXES and path.is_file() and not rel.startswith(ALLOWED):
                if "/models/" in rel and path.suffix == ".txt":
                    continue  # LightGBM boosters: numbers and feature names only
                yield rel, path


def test_the_scan_covers_the_page_reading_stack():
    seen = {rel for rel, _ in _files()}
    for must in (
        "confidence/calls/candidates.py",
        "confidence/documents/labels.json",
        "confidence/documents/vocab.py",
    ):
        assert must in seen


def test_the_pattern_finds_a_planted_word():
    assert _WORD_RE.search('_ADDR_RE = re.compile(r"\\b(?:jalan|road)\\b")')
    assert _WORD_RE.search('"cues": {"company": ["sdn bhd"]}')
    assert not _WORD_RE.search("batch, tamandua, perakende")


@pytest.mark.parametrize("rel, path", list(_files()), ids=lambda x: x if isinstance(x, str) else "")
def test_no_evaluation_corpus_words(rel, path):
    text = path.read_text("utf-8", errors="replace")
    hits = sorted({m.group(0).lower() for m in _WORD_RE.finditer(text)})
    assert not hits, f"{rel} holds words of the SROIE evaluation receipts: {hits}"

"""A stored prompt prefix read back by a new client gives the replies of evaluating it there.

Two documents of one schema share their prompt's opening (system message, field list). A first
client extracts one and stores its evaluated prompt; a fresh client (a new process, as far as
llama.cpp is concerned) extracts the other, restores the shared opening from disk and evaluates
only the rest. Its record must equal, value for value and log-probability for log-probability,
that of a client without the cache; and the vocabulary the forced decoder branches on is the
one ``detokenize`` spells.
"""

from __future__ import annotations

import pytest

pytest.importorskip("llama_cpp")

from confidence.calls.extract import extract_document
from confidence.llm import LocalLlamaClient
from confidence.types import Document, Page, Word
from tests.llm.test_local_forced import PAGE, SCHEMA

pytestmark = pytest.mark.llm


def _document(doc_id: str, rows: list[str]) -> Document:
    words = []
    for i, text in enumerate(rows):
        x, y = 0.08, 0.05 + 0.04 * i
        for tok in text.split():
            w = 0.012 * len(tok)
            words.append(Word(tok, (x, y, x + w, y + 0.02), 1.0, 10.0, line_id=i, block_id=0))
            x += w + 0.01
    return Document(doc_id, f"{doc_id}.pdf", (Page(1, 850, 1100, tuple(words), "pdf", 100.0),))


OTHER = ["ACME SUPPLIES GMBH", "Invoice No: R-7731", "Date: 03/02/2021", "TOTAL 120.00"]


def _same(a, b) -> None:
    for kind in ("hunter", "mapper"):
        ca, cb = getattr(a, kind), getattr(b, kind)
        assert ca.status == cb.status
        assert {k: r.value for k, r in ca.fields.items()} == {
            k: r.value for k, r in cb.fields.items()
        }
        for k, r in ca.fields.items():
            assert r.tokens == cb.fields[k].tokens, (kind, k)  # logprobs and top-k, exactly
        assert [c.text for c in ca.completions] == [c.text for c in cb.completions]


def test_restored_prefix_gives_the_same_record(tmp_path):
    first = _document("first", OTHER)
    second = _document("second", PAGE)
    plain = LocalLlamaClient(n_ctx=2048, prefix_cache=False)
    want = extract_document(second, SCHEMA, plain)
    writer = LocalLlamaClient(n_ctx=2048, prefix_cache=tmp_path)
    extract_document(first, SCHEMA, writer)
    assert list(tmp_path.glob("*.kv")), "the cold prompt was not stored"
    reader = LocalLlamaClient(n_ctx=2048, prefix_cache=tmp_path)
    got = extract_document(second, SCHEMA, reader)
    _same(want, got)
    [hunter_comp] = got.hunter.completions
    [plain_comp] = want.hunter.completions
    # The shared opening was read back, not evaluated again.
    assert hunter_comp.usage["prompt_evaluated"] < plain_comp.usage["prompt_evaluated"]
    assert hunter_comp.usage["prompt_evaluated"] <= plain_comp.usage["prompt_tokens"] - 64


def test_vocab_is_what_detokenize_spells():
    client = LocalLlamaClient(n_ctx=256, prefix_cache=False)
    llm = client._load()
    want: dict[bytes, int] = {}
    for i in range(llm.n_vocab()):
        piece = llm.detokenize([i])
        if piece:
            want.setdefault(piece, i)
    assert client._vocab(llm) == want

"""Forced-token decoding of enum-object replies, against a fake model (no llama.cpp).

The fake model's logits are a deterministic function of the *text* so far, so the forced decoder
and a reference that decodes one token per step under the grammar's rule (every vocabulary token
that spells a prefix of a remaining option competes; greedy) see the same rows at every branch
point: they must choose the same values.
"""

from __future__ import annotations

import json
import math
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from confidence.llm.forced import (
    Slot,
    decode_enum_object,
    enum_slots,
    log_softmax_top,
    reply_chunks,
    shared_prefix,
)

# A tiny byte-level vocabulary: single characters plus a few merges, like a BPE.
VOCAB = [
    *'{} ":,.-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_',
    ' "',
    '",',
    '":',
    '"}',
    "12",
    "ab",
    "abc",
    "Ham",
    "el",
    "null",
    "total",
]
IDS = {t.encode(): i for i, t in enumerate(VOCAB)}
LONGEST = max(map(len, VOCAB))


def tokenize(data: bytes) -> list[int]:
    """Greedy longest-match tokenization (the fake 'canonical' spelling)."""
    out, i = [], 0
    while i < len(data):
        for j in range(min(len(data), i + LONGEST), i, -1):
            if data[i:j] in IDS:
                out.append(IDS[data[i:j]])
                i = j
                break
        else:
            raise ValueError(data[i:])
    return out


class FakeModel:
    """Logits depend only on the text of the context (seeded by its checksum)."""

    def __init__(self, seed: int = 0, prefer: dict[str, float] | None = None) -> None:
        self.seed = seed
        self.prefer = prefer or {}
        self.text = b""
        self.calls = 0
        self.evaluated = 0

    def row(self) -> np.ndarray:
        rng = np.random.default_rng(zlib.crc32(self.text) + self.seed)
        r = rng.normal(size=len(VOCAB)) * 3
        for tok, bonus in self.prefer.items():
            r[VOCAB.index(tok)] += bonus
        return r

    def evaluate(self, tokens, want):
        self.calls += 1
        self.evaluated += len(tokens)
        rows = []
        for t, w in zip(tokens, want, strict=True):
            self.text += VOCAB[t].encode()
            if w:
                rows.append(self.row())
        return rows


def decode(slots, model, **kw):
    out, n_evals, complete = decode_enum_object(
        slots, model.evaluate, tokenize, IDS, model.row(), **kw
    )
    return "".join(VOCAB[e.token] for e in out), out, n_evals, complete


def reference(slots, model) -> dict:
    """One token per step: greedy among the tokens the remaining options allow, after the text
    all remaining options share (up to a word boundary, :func:`shared_prefix`)."""
    text = b""
    chunks = [c.encode() for c in reply_chunks(slots)]
    values = {}
    for i, s in enumerate(slots):
        text += chunks[i]
        opts = [(o if s.strings else json.dumps(o)).encode() for o in s.options]
        alive, pos = list(range(len(opts))), 0
        while len(alive) > 1:
            shared = shared_prefix([opts[k][pos:] for k in alive])  # spelled without a choice
            text, pos = text + shared, pos + len(shared)
            model.text = text
            row = model.row()
            allowed = {}
            for k in alive:
                rest = opts[k][pos:]
                for j in range(1, len(rest) + 1):
                    if rest[:j] in IDS:
                        allowed.setdefault(IDS[rest[:j]], rest[:j])
                if not rest:
                    allowed.setdefault(tokenize(chunks[i + 1])[0], None)
            tok = max(allowed, key=lambda t: row[t])  # first of equals, like the decoder
            piece = allowed[tok]
            if piece is None:
                alive = [k for k in alive if not opts[k][pos:]]
                break
            alive = [k for k in alive if opts[k][pos:].startswith(piece)]
            pos += len(piece)
            text += piece
        text += opts[alive[0]][pos:]
        values[s.key] = s.options[alive[0]]
    return values


def schema_of(fields: dict) -> dict:
    return {
        "type": "object",
        "properties": {k: {"enum": v} for k, v in fields.items()},
        "required": list(fields),
        "additionalProperties": False,
    }


def test_enum_slots_accepts_only_flat_required_enums():
    assert enum_slots(schema_of({"a": ["x", "y"], "b": [None]})) == [
        Slot("a", ("x", "y")),
        Slot("b", (None,)),
    ]
    assert enum_slots(schema_of({"a": ["x", "x", "y"]}))[0].options == ("x", "y")
    free = schema_of({"a": ["x"]}) | {"properties": {"a": {"type": "string"}}}
    assert enum_slots(free) is None
    assert enum_slots(schema_of({"a": ["x"]}) | {"required": []}) is None
    assert enum_slots(schema_of({"a": ["x"]}) | {"additionalProperties": True}) is None
    assert enum_slots(schema_of({"a": []})) is None
    assert enum_slots(schema_of({"a": [["x"]]})) is None
    assert enum_slots(None) is None and enum_slots({"type": "array"}) is None


def test_reply_is_json_with_the_chosen_values_and_tokens_spell_it():
    slots = enum_slots(schema_of({"total": ["12.50", "1.20"], "id": ["ab-1"], "x": [None]}))
    text, _, _, complete = decode(slots, FakeModel())
    data = json.loads(text)
    assert complete and set(data) == {"total", "id", "x"}
    assert data["total"] in ("12.50", "1.20") and data["id"] == "ab-1" and data["x"] is None


def test_value_tokens_carry_the_models_logprobs_scaffold_tokens_do_not():
    model = FakeModel(seed=3)
    slots = enum_slots(schema_of({"a": ["Hamel", "Bat"]}))
    text, out, _, _ = decode(slots, model, top_logprobs=3)
    scored = [e for e in out if e.scored]
    assert "".join(VOCAB[e.token] for e in scored) == json.loads(text)["a"]
    for e in out:
        if not e.scored:
            assert e.logprob == 0.0 and e.top == ()
            continue
        assert e.logprob <= 0 and len(e.top) == 3
        lps = [lp for _, lp in e.top]
        assert lps == sorted(lps, reverse=True) and sum(map(math.exp, lps)) <= 1 + 1e-9
    # The first value token is scored on the row after the scaffold: recompute it.
    model.text = b'{ "a": "'
    lp, _ = log_softmax_top(model.row(), 0)
    assert math.isclose(scored[0].logprob, float(lp[scored[0].token]))


def test_a_branch_point_admits_non_canonical_tokens_like_the_grammar():
    # "Hamel" is spelled H+am+el by the tokenizer, but "Ham" may start it under the grammar.
    model = FakeModel(prefer={"Ham": 50.0})
    text, out, _, _ = decode(enum_slots(schema_of({"a": ["Hamel", "Bat"]})), model)
    assert json.loads(text)["a"] == "Hamel"
    assert [VOCAB[e.token] for e in out if e.scored] == ["Ham", "el"]


def test_single_options_need_no_branch_and_one_batch():
    model = FakeModel()
    slots = enum_slots(schema_of({"a": ["abc12"], "b": ["x.y"], "c": [None]}))
    text, out, n_evals, _ = decode(slots, model)
    assert json.loads(text) == {"a": "abc12", "b": "x.y", "c": None}
    assert n_evals == model.calls == 1
    # The closing tokens after the last scored value token are never evaluated.
    assert model.evaluated < len(out)


def test_a_shorter_option_competes_with_the_end_of_the_value():
    slots = enum_slots(schema_of({"a": ["ab", "ab1"]}))
    text, _, _, _ = decode(slots, FakeModel(prefer={'"}': 50.0}))
    assert json.loads(text)["a"] == "ab"
    text, _, _, _ = decode(slots, FakeModel(prefer={"1": 50.0}))
    assert json.loads(text)["a"] == "ab1"


def test_max_tokens_cuts_the_reply():
    slots = enum_slots(schema_of({"a": ["abc"], "b": ["abc"]}))
    text, out, _, complete = decode(slots, FakeModel(), max_tokens=6)
    assert not complete and len(out) == 6
    assert text == "".join(VOCAB[e.token] for e in out)


def test_sampling_is_reproducible_and_stays_within_the_options():
    slots = enum_slots(schema_of({"a": ["a1", "b2", "c3", "d4"]}))
    seen = set()
    for seed in range(12):
        rng = lambda s=seed: np.random.default_rng(s)  # noqa: E731
        t1, *_ = decode(slots, FakeModel(), temperature=5.0, rng=rng())
        t2, *_ = decode(slots, FakeModel(), temperature=5.0, rng=rng())
        assert t1 == t2
        seen.add(json.loads(t1)["a"])
    assert seen <= {"a1", "b2", "c3", "d4"} and len(seen) > 1
    with pytest.raises(ValueError, match="rng"):
        decode(slots, FakeModel(), temperature=1.0)


words = st.text(alphabet="abcHamel12.-", min_size=1, max_size=7)


@settings(max_examples=60, deadline=None)
@given(
    fields=st.lists(st.lists(words, min_size=1, max_size=4), min_size=1, max_size=4),
    seed=st.integers(0, 10_000),
)
def test_forced_decoding_chooses_what_token_by_token_grammar_decoding_chooses(fields, seed):
    schema = schema_of({f"f{i}": opts for i, opts in enumerate(fields)})
    slots = enum_slots(schema)
    text, *_ = decode(slots, FakeModel(seed))
    assert json.loads(text) == reference(slots, FakeModel(seed))


def test_a_shared_stretch_of_the_options_costs_no_forward_pass():
    # Two dates that share "2022-06-": one choice ("1" or "2"), not one per shared token.
    model = FakeModel()
    slots = enum_slots(schema_of({"a": ["2022-06-10", "2022-06-24"]}))
    text, out, n_evals, _ = decode(slots, model)
    assert json.loads(text)["a"] in ("2022-06-10", "2022-06-24")
    assert n_evals == 2  # the branch point, then the rest of the reply
    assert "".join(VOCAB[e.token] for e in out if e.scored) == json.loads(text)["a"]
    scored = [e for e in out if e.scored]  # the shared part is scored like the rest
    assert "".join(VOCAB[e.token] for e in scored[:8]) == "2022-06-"
    assert all(e.logprob <= 0 and e.top for e in scored)


def test_the_shared_prefix_stops_at_word_boundaries():
    assert shared_prefix([b"ab cd", b"ab ce"]) == b"ab"  # the space goes with the next word
    assert shared_prefix([b"abc", b"abd"]) == b""  # never inside a word an option continues
    assert shared_prefix([b"ab", b"ab-1"]) == b"ab"  # one option ends where a word ends
    assert shared_prefix(["é1".encode(), "è1".encode()]) == b""  # whole characters only
    assert shared_prefix([b"x.5", b"x.7"]) == b"x."
    assert shared_prefix([]) == b""

"""Scoring a batch at once gives what scoring its documents one at a time gives.

``ConfidenceEngine.score`` works column by column over the whole batch (token statistics,
consistency, value kinds, the fusion's contributions grouped by tree path, the domain check,
the rows built at once). A document scored alone takes none of those shortcuts across documents
(and its few rows get LightGBM's own ``pred_contrib``), so it is the row-by-row reference: every
score, decision, threshold and reason of the batch must equal it.
"""

from __future__ import annotations

import random
import warnings
from dataclasses import replace

import numpy as np
import pytest

from confidence.contributions import MIN_ROWS
from confidence.engine import ConfidenceEngine
from confidence.features.build import record_rows
from confidence.llm.base import TokenLogprob
from confidence.readings import CallResult, FieldReading
from tests.fixtures.engine import SCHEMA, _gold, simulate_run


@pytest.fixture(scope="module")
def engine():
    return ConfidenceEngine.load()


def _odd_tokens(reading: FieldReading, rng: random.Random) -> FieldReading:
    """The reading's tokens with the alternatives providers also send: the chosen token missing
    from them, out of order, more or none of them, a logprob of 0."""
    if not reading.tokens:
        return reading
    toks = []
    for t in reading.tokens:
        kind = rng.randrange(5)
        if kind == 0:
            top = (("zz", t.logprob - 0.3), ("yy", t.logprob - 2.0))  # chosen one missing
        elif kind == 1:
            top = tuple(reversed(t.top))  # least likely first
        elif kind == 2:
            top = (*t.top, ("q", -7.0), ("r", -9.5))
        elif kind == 3:
            top = ()
        else:
            top = ((t.token, 0.0), ("w", -30.0))
            t = replace(t, logprob=0.0)
        toks.append(TokenLogprob(t.token, t.logprob, top))
    return replace(reading, tokens=tuple(toks))


def _batch(n: int = 64, seed: int = 3) -> list:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        rec = simulate_run(f"d{i:03d}", _gold(rng, i), rng, logprobs=i % 5 != 0)
        fields = {k: _odd_tokens(r, rng) for k, r in rec.hunter.fields.items()}
        rec = replace(rec, hunter=replace(rec.hunter, fields=fields))
        if i % 9 == 1:  # one reading: reviewed whatever its confidence
            rec = replace(rec, mapper=None)
        elif i % 9 == 2:  # the Mapper's reading reported
            rec = replace(rec, meta={"reported": "mapper"})
        elif i % 9 == 3:  # the same value read for two fields, a value inside another
            fields = dict(rec.hunter.fields)
            fields["po_number"] = fields["invoice_number"]
            fields["vendor"] = FieldReading(f"{fields['vendor'].value} North", None)
            rec = replace(rec, hunter=replace(rec.hunter, fields=fields))
        elif i % 9 == 4:  # the Hunter failed
            rec = replace(rec, hunter=CallResult("hunter", {}, status="error", error="HTTP 500"))
        out.append(rec)
    out.append(replace(out[0], doc_id="failed", status="error", error="unreadable"))
    return out


def _scores(engine, recs, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # batch-level shift warnings differ by design
        return engine.score(recs, SCHEMA, **kw)


def test_batch_feature_rows_equal_those_of_each_document_alone():
    recs = _batch()
    batch = record_rows(recs, SCHEMA)
    alone = [record_rows([r], SCHEMA) for r in recs]
    np.testing.assert_array_equal(batch.X, np.vstack([a.X for a in alone]))
    for name in ("doc_ids", "fields", "values", "hunter_values", "mapper_values", "status",
                 "error", "instructions"):  # fmt: skip
        assert getattr(batch, name) == [v for a in alone for v in getattr(a, name)], name


@pytest.mark.parametrize("explain", [True, False])
def test_batch_scores_equal_document_by_document(engine, explain):
    recs = _batch()
    kw = {"explain": explain, "features": 4, "audit_rate": 0.2, "audit_seed": 1}
    batch = _scores(engine, recs, **kw)
    alone = [s for r in recs for s in _scores(engine, [r], **kw)]
    assert len(batch) == len(alone) == len(recs) * len(SCHEMA.fields)
    assert sum(s.status != "error" for s in batch) >= MIN_ROWS  # the grouped contributions
    assert any(s.reasons for s in batch) and any(s.decision == "accept" for s in batch)
    for b, a in zip(batch, alone, strict=True):
        # batch_shift_p is the batch's own verdict; every other column is the document's
        b, a = b.to_dict(), a.to_dict()
        assert b.pop("batch_shift_p") is not None
        a.pop("batch_shift_p")
        if a["confidence"] is not None:
            assert b.pop("confidence") == pytest.approx(a.pop("confidence"), abs=1e-9, rel=0)
        assert b == a

"""Two names or two addresses of one document are kept apart (confidence.calls.distinct)."""

from __future__ import annotations

import pytest

from confidence.calls.distinct import keep_apart, same_value
from confidence.calls.ranker import CandidateRanker, RankedCandidate, default_ranker
from confidence.schema import Field, Schema

SCHEMA = Schema(
    "inv",
    (
        Field("vendor_name", "text", "Name of the seller."),
        Field("vendor_address", "address", "Postal address of the seller."),
        Field("customer_name", "text", "Name of the buyer."),
        Field("customer_address", "address", "Billing address of the buyer."),
        Field("total", "amount", "Total amount."),
        Field("amount_due", "amount", "Amount due."),
    ),
)
ABSENT = RankedCandidate(None, None, 0.0, 0.05)


def R(value, line, prob):  # a short constructor for the cases below
    return RankedCandidate(value, line, 0.0, prob)


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (R("Acme Ltd", 3, 0.9), R("Acme Ltd, 5 High St", 3, 0.5), True),  # one line
        (R("5 High St, Leeds", 4, 0.9), R("Acme Ltd · 5 High St, Leeds", 2, 0.5), True),
        (R("5 High St, Leeds", 4, 0.9), R("5 High St, York", 9, 0.5), False),  # words differ
        (R("Acme Ltd", 3, 0.9), ABSENT, False),
        (ABSENT, ABSENT, False),
    ],
)
def test_same_value_hand_computed(a, b, same):
    assert same_value(a, b) is same
    assert same_value(b, a) is same


def _ranked():
    sender = R("Thomas-Sutton · 51 Bentley Garden, Sanderstown", 3, 0.8)
    return {
        "vendor_name": [R("Thomas-Sutton", 3, 0.7), ABSENT],
        "vendor_address": [sender, ABSENT],
        "customer_name": [R("Thomas-Sutton", 3, 0.4), R("Ferguson PLC", 8, 0.3), ABSENT],
        "customer_address": [
            R("51 Bentley Garden, Sanderstown", 4, 0.5),  # the sender's words again
            R("66 Randall Walks, Aimeeberg", 9, 0.3),
            ABSENT,
        ],
        "total": [R("120.00", 20, 0.9), ABSENT],
        "amount_due": [R("120.00", 20, 0.8), ABSENT],  # one printed number: both stay
    }


def test_the_less_probable_choice_moves_to_its_next_other_value():
    ranked = _ranked()
    out = keep_apart({k: v[0] for k, v in ranked.items()}, ranked, SCHEMA)
    assert {k: c.value for k, c in out.items()} == {
        "vendor_name": "Thomas-Sutton",
        "vendor_address": "Thomas-Sutton · 51 Bentley Garden, Sanderstown",
        "customer_name": "Ferguson PLC",
        "customer_address": "66 Randall Walks, Aimeeberg",
        "total": "120.00",
        "amount_due": "120.00",
    }


def test_absent_is_the_next_value_when_nothing_else_is_left():
    ranked = _ranked()
    ranked["customer_name"] = [R("Thomas-Sutton", 3, 0.4), ABSENT]
    out = keep_apart({k: v[0] for k, v in ranked.items()}, ranked, SCHEMA)
    assert out["customer_name"].value is None
    assert out["vendor_name"].value == "Thomas-Sutton"  # the more probable choice keeps it


def test_choices_already_apart_are_left_as_they_are():
    ranked = _ranked()
    chosen = {k: v[0] for k, v in ranked.items()}
    chosen["customer_name"] = ranked["customer_name"][1]
    chosen["customer_address"] = ranked["customer_address"][1]
    assert keep_apart(chosen, ranked, SCHEMA) == chosen


def test_the_rankers_reading_keeps_them_apart(monkeypatch):
    """Through ``CandidateRanker.read`` (the Mapper's value): independent top-1 picks put the
    sender on both parties; the reading does not."""
    ranker = default_ranker()
    monkeypatch.setattr(CandidateRanker, "rank", lambda self, lines, schema: _ranked())
    independent = ranker.read([], SCHEMA, joint=False)
    assert independent["customer_address"].value == "51 Bentley Garden, Sanderstown"
    got = ranker.read([], SCHEMA)
    assert got["customer_address"].value == "66 Randall Walks, Aimeeberg"
    assert got["customer_name"].value == "Ferguson PLC"

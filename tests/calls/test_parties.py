"""Joint choice of a party's name and address (confidence.calls.parties)."""

from __future__ import annotations

from types import SimpleNamespace as C

import pytest

from confidence.calls.parties import address_lines, choose_parties, pair_relation, party_fields
from confidence.calls.ranker import default_ranker
from confidence.documents.lines import Line
from confidence.schema import Field, Schema
from tests.fixtures.pages import page_lines

CUSTOMER = Schema(
    "c",
    (
        Field("customer_name", "text", "Name of the customer billed."),
        Field("customer_address", "address", "Postal address of the customer billed."),
    ),
)


def _lines(texts):
    return {i: Line(i, t, (0.05, 0.1 + i * 0.03, 0.5, 0.12 + i * 0.03), 1, ()) for i, t in texts}


def _cand(value, line, prob):
    return C(value=value, line=line, prob=prob)


def test_party_fields_need_a_name_and_an_address_once_each():
    both = Schema("s", (Field("company", "text", "shop name"), Field("address", "address")))
    assert party_fields(both) == {"vendor": ("company", "address")}
    assert party_fields(Schema("s", (Field("company", "text", "shop name"),))) == {}
    twice = Schema("s", (*both.fields, Field("store_address", "address", "shop address")))
    assert party_fields(twice) == {}  # two address fields of one party: ambiguous, left out


def test_address_lines_follow_the_block_and_stop_at_text_the_value_lacks():
    by_index = _lines(enumerate(["ACME Ltd", "1 Main St", "Springfield 12345", "TOTAL 9.00"]))
    assert address_lines("1 Main St, Springfield 12345", 1, by_index) == {1, 2}
    assert address_lines("ACME Ltd, 1 Main St", 0, by_index) == {0, 1}
    assert address_lines("Springfield 12345", 2, by_index) == {2}


def test_pair_relation_hand_computed():
    by_index = _lines(
        enumerate(["ACME Ltd", "(Reg 12345-X)", "GST No 0012", "1 Main St", "Springfield 12345"])
    )
    blocks = {i: (i, [0, 1, 2, 3, 4]) for i in range(5)}
    # the address starts under two registration lines, still in the name's block
    assert pair_relation(0, "1 Main St, Springfield 12345", 3, by_index, blocks) == 1
    assert pair_relation(0, "1 Main St, Springfield 12345", 3, by_index, blocks, reach=2) == 0
    assert pair_relation(0, "Springfield 12345", 4, by_index, blocks, reach=3) == 0
    assert pair_relation(0, "Springfield 12345", 4, by_index, blocks, reach=4) == 1
    assert pair_relation(2, "ACME Ltd (Reg 12345-X)", 0, by_index, blocks) == 0  # above the name
    assert pair_relation(0, "ACME Ltd (Reg 12345-X) 1 Main St", 0, by_index, blocks) == -1
    other = {**blocks, 0: (0, [0])}  # the name stands alone: no block to head
    assert pair_relation(0, "1 Main St, Springfield 12345", 3, by_index, other) == 0


def test_an_address_under_registration_lines_keeps_its_name_pair():
    # A receipt prints registration and tax numbers between the shop's name and its address;
    # the best address span skips them and must not lose to one that starts on them.
    texts = ["ACME Hardware", "(Reg 12345-X)", "Tax ID 0012", "1 Main St", "Springfield 12345"]
    by_index = _lines(enumerate(texts))
    blocks = {i: (i, list(range(5))) for i in range(5)}
    schema = Schema("s", (Field("company", "text", "shop name"), Field("address", "address")))
    ranked = {
        "company": [_cand("ACME Hardware", 0, 0.9), _cand(None, None, 0.1)],
        "address": [
            _cand("1 Main St, Springfield 12345", 3, 0.45),
            _cand("Tax ID 0012 1 Main St, Springfield 12345", 2, 0.40),
        ],
    }
    got = choose_parties(schema, ranked, by_index, blocks)
    assert got["address"].value == "1 Main St, Springfield 12345"
    near = choose_parties(schema, ranked, by_index, blocks, reach=2)  # the rule of stop 43
    assert near["address"].value == "Tax ID 0012 1 Main St, Springfield 12345"


def test_joint_choice_hand_computed():
    by_index = _lines(
        enumerate(["Seller GmbH", "9 High Rd, Town 999", "Buyer Ltd", "1 Main St, Town 123"])
    )
    blocks = {0: (0, [0, 1]), 1: (1, [0, 1]), 2: (0, [2, 3]), 3: (1, [2, 3])}
    ranked = {
        "customer_name": [_cand("Buyer Ltd", 2, 0.6), _cand(None, None, 0.4)],
        "customer_address": [
            _cand("9 High Rd, Town 999", 1, 0.5),
            _cand("1 Main St, Town 123", 3, 0.4),
        ],
    }
    got = choose_parties(CUSTOMER, ranked, by_index, blocks, bonus=1.0)
    assert (got["customer_name"].value, got["customer_address"].value) == (
        "Buyer Ltd",
        "1 Main St, Town 123",
    )
    # log .6 + log .4 + 1 = -0.40 beats log .6 + log .5 = -1.20; without the bonus it does not
    got = choose_parties(CUSTOMER, ranked, by_index, blocks, bonus=0.0)
    assert got["customer_address"].value == "9 High Rd, Town 999"
    # a bonus smaller than the gap (log .5 - log .4 = 0.22) leaves the independent picks
    got = choose_parties(CUSTOMER, ranked, by_index, blocks, bonus=0.2)
    assert got["customer_address"].value == "9 High Rd, Town 999"


def test_an_absent_name_gets_no_bonus_and_an_unpaired_schema_is_left_alone():
    by_index = _lines(enumerate(["Buyer Ltd", "1 Main St, Town 123"]))
    blocks = {0: (0, [0, 1]), 1: (1, [0, 1])}
    ranked = {
        "customer_name": [_cand(None, None, 0.9), _cand("Buyer Ltd", 0, 0.1)],
        "customer_address": [_cand("1 Main St, Town 123", 1, 0.9)],
    }
    got = choose_parties(CUSTOMER, ranked, by_index, blocks, bonus=1.0)
    assert got["customer_name"].value is None  # log .9 beats log .1 + 1
    got = choose_parties(CUSTOMER, ranked, by_index, blocks, bonus=3.0)
    assert got["customer_name"].value == "Buyer Ltd"
    alone = Schema("s", (CUSTOMER.fields[0],))
    assert choose_parties(alone, {"customer_name": ranked["customer_name"]}, by_index, blocks) == {}


def test_a_name_heading_the_chosen_address_block_is_absent_only_at_a_cost():
    by_index = _lines(enumerate(["Buyer Ltd", "1 Main St, Town 123", "Other Ltd", "Ref 77"]))
    blocks = {0: (0, [0, 1]), 1: (1, [0, 1]), 2: (0, [2, 3]), 3: (1, [2, 3])}
    ranked = {
        "customer_name": [_cand(None, None, 0.75), _cand("Buyer Ltd", 0, 0.25)],
        "customer_address": [_cand("1 Main St, Town 123", 1, 0.9)],
    }
    # absent: log .75 + log .9 = -0.393; named: log .25 + log .9 + 1 (pair) = -0.492
    got = choose_parties(CUSTOMER, ranked, by_index, blocks, bonus=1.0, absent_penalty=0.0)
    assert got["customer_name"].value is None
    # a cost of 0.2 for the absent name under a headed block: -0.593 < -0.492
    got = choose_parties(CUSTOMER, ranked, by_index, blocks, bonus=1.0, absent_penalty=0.2)
    assert got["customer_name"].value == "Buyer Ltd"
    # a name candidate that heads no chosen address (another block) costs nothing when absent
    ranked["customer_name"][1] = _cand("Other Ltd", 2, 0.25)
    got = choose_parties(CUSTOMER, ranked, by_index, blocks, bonus=1.0, absent_penalty=5.0)
    assert got["customer_name"].value is None
    # the cost never moves the address: a span starting on the name's line (no name heads it)
    # scores log .8 + log .45 = -1.022 for an absent name, above the headed address's -1.916,
    # yet the address chosen without the cost (-0.916) stays and takes its name (-1.302)
    ranked = {
        "customer_name": [_cand(None, None, 0.8), _cand("Buyer Ltd", 0, 0.2)],
        "customer_address": [
            _cand("1 Main St, Town 123", 1, 0.5),
            _cand("Buyer Ltd 1 Main St, Town 123", 0, 0.45),
        ],
    }
    got = choose_parties(CUSTOMER, ranked, by_index, blocks, bonus=1.0, absent_penalty=1.0)
    assert (got["customer_name"].value, got["customer_address"].value) == (
        "Buyer Ltd",
        "1 Main St, Town 123",
    )
    # nor does an absent address make a name's absence cost anything
    ranked = {
        "customer_name": [_cand(None, None, 0.75), _cand("Buyer Ltd", 0, 0.25)],
        "customer_address": [_cand(None, None, 0.9), _cand("1 Main St, Town 123", 1, 0.1)],
    }
    got = choose_parties(CUSTOMER, ranked, by_index, blocks, bonus=1.0, absent_penalty=0.2)
    assert (got["customer_name"].value, got["customer_address"].value) == (None, None)


def test_the_ranker_reads_the_name_heading_its_chosen_address(monkeypatch):
    # CandidateRanker.read: the ranker's own scores (stubbed) find the name absent more likely
    # (.75 against .25, more than the pair bonus makes up); the name heads the address's block
    import confidence.calls.ranker as ranker_module
    from confidence.calls.ranker import RankedCandidate

    lines = page_lines(
        [(0.05, 0.04, "Northwind"), (0.05, 0.20, "Blue Whale Trading"),
         (0.05, 0.225, "3 Dock Lane"), (0.05, 0.25, "Bristol BS1 4XY")]
    )  # fmt: skip
    at = {ln.text: ln.index for ln in lines}
    name, addr = at["Blue Whale Trading"], at["3 Dock Lane"]
    ranked = {
        "customer_name": [
            RankedCandidate(None, None, 0.0, 0.75, None),
            RankedCandidate("Blue Whale Trading", name, -1.1, 0.25, None),
        ],
        "customer_address": [
            RankedCandidate("3 Dock Lane Bristol BS1 4XY", addr, 0.0, 0.9, None),
            RankedCandidate(None, None, -2.2, 0.1, None),
        ],
    }
    rk = default_ranker()
    monkeypatch.setattr(rk, "rank", lambda lines, schema: ranked)
    monkeypatch.setattr(ranker_module, "PARTY_ABSENT", 0.0)
    assert rk.read(lines, CUSTOMER)["customer_name"].value is None
    monkeypatch.setattr(ranker_module, "PARTY_ABSENT", 1.0)
    got = rk.read(lines, CUSTOMER)
    assert (got["customer_name"].value, got["customer_address"].value) == (
        "Blue Whale Trading",
        "3 Dock Lane Bristol BS1 4XY",
    )


@pytest.mark.parametrize("bonus", [0.0, 1.0, 5.0])
def test_the_choice_is_among_the_candidates_and_invariant_to_other_fields(bonus):
    by_index = _lines(enumerate(["Buyer Ltd", "1 Main St, Town 123", "TOTAL 9.00"]))
    blocks = {0: (0, [0, 1]), 1: (1, [0, 1])}
    ranked = {
        "customer_name": [_cand("Buyer Ltd", 0, 0.7), _cand(None, None, 0.3)],
        "customer_address": [_cand("1 Main St, Town 123", 1, 0.8), _cand(None, None, 0.2)],
        "total": [_cand("9.00", 2, 1.0)],
    }
    got = choose_parties(CUSTOMER, ranked, by_index, blocks, bonus=bonus)
    assert set(got) == {"customer_name", "customer_address"}
    assert got["customer_name"] in ranked["customer_name"]
    assert got["customer_address"] in ranked["customer_address"]


def test_the_customer_address_starts_under_the_customer_name():
    # Without the joint choice the best address span starts on the customer's name line
    # ("Jane Roe 12 Elm Street ..."): the name would be read twice.
    lines = page_lines(
        [
            (0.05, 0.04, "Northwind Supplies"),
            (0.05, 0.065, "250 Harbour Road"),
            (0.05, 0.09, "Portsmouth PO1 2AB"),
            (0.60, 0.04, "INVOICE"),
            (0.05, 0.20, "Bill to:"),
            (0.05, 0.23, "Jane Roe"),
            (0.05, 0.255, "12 Elm Street"),
            (0.05, 0.28, "Springfield 12345"),
            (0.05, 0.50, "Total"),
            (0.60, 0.50, "120.00"),
        ]
    )
    rk = default_ranker()
    got = {k: c.value for k, c in rk.read(lines, CUSTOMER).items()}
    assert got["customer_name"] == "Jane Roe"
    assert got["customer_address"] is not None and "Elm Street" in got["customer_address"]
    assert "Harbour" not in got["customer_address"]
    assert "Jane Roe" not in got["customer_address"]
    # joint=False keeps each field's own top candidate, whatever it is
    independent = rk.read(lines, CUSTOMER, joint=False)
    ranked = rk.rank(lines, CUSTOMER)
    assert independent["customer_address"] == ranked["customer_address"][0]


def test_the_ranker_reads_the_cash_rounded_total_printed_under_the_total():
    schema = Schema("r", (Field("total", "amount", "Total amount paid."),))
    lines = page_lines(
        [
            (0.05, 0.05, "CORNER CAFE"),
            (0.05, 0.30, "Latte"),
            (0.70, 0.30, "12.50"),
            (0.05, 0.33, "Muffin"),
            (0.70, 0.33, "14.87"),
            (0.05, 0.40, "TOTAL"),
            (0.70, 0.40, "27.37"),
            (0.05, 0.43, "Rounding Adj"),
            (0.70, 0.43, "-0.02"),
            (0.05, 0.46, "Net Payable"),
            (0.70, 0.46, "27.35"),
            (0.05, 0.50, "CASH"),
            (0.70, 0.50, "50.00"),
            (0.05, 0.53, "CHANGE"),
            (0.70, 0.53, "22.65"),
        ]
    )
    rk = default_ranker()
    assert rk.rank(lines, schema)["total"][0].value == "27.37"  # the ranker alone: unrounded
    assert rk.read(lines, schema, cash_rounding=False)["total"].value == "27.37"
    assert rk.read(lines, schema)["total"].value == "27.35"  # the amount paid
    # an invoice whose total is not rounded for cash keeps it
    plain = [ln for ln in lines if ln.text not in ("Net Payable", "27.35")]
    assert rk.read(plain, schema)["total"].value == "27.37"


VENDOR = Schema(
    "v",
    (
        Field("vendor_name", "text", "Name of the issuer."),
        Field("vendor_address", "address", "Postal address of the issuer."),
        Field("total", "amount", "Total amount."),
    ),
)


def test_the_name_before_the_address_on_its_line_is_left_out():
    by_index = _lines(enumerate(["ACME Ltd", "ACME Ltd · 1 Main St, Springfield 12345"]))
    blocks = {0: (0, [0]), 1: (0, [1])}
    ranked = {
        "vendor_name": [_cand("ACME Ltd", 0, 0.9)],
        "vendor_address": [
            _cand("ACME Ltd · 1 Main St, Springfield 12345", 1, 0.6),
            _cand("1 Main St, Springfield 12345", 1, 0.3),
        ],
    }
    got = choose_parties(VENDOR, ranked, by_index, blocks)
    assert got["vendor_address"].value == "1 Main St, Springfield 12345"
    kept = choose_parties(VENDOR, ranked, by_index, blocks, strip_name=False)
    assert kept["vendor_address"].value.startswith("ACME Ltd")
    # not offered without the name: the address stays as read
    alone = {**ranked, "vendor_address": ranked["vendor_address"][:1]}
    assert choose_parties(VENDOR, alone, by_index, blocks)["vendor_address"].value.startswith(
        "ACME"
    )
    # a line that is all name is left alone (it may be the address's own first line)
    by_index2 = _lines(enumerate(["3RD FLR, MALL SC", "JLN JEJAKA 55100"]))
    ranked2 = {
        "vendor_name": [_cand("3RD FLR, MALL SC", 0, 0.5)],
        "vendor_address": [
            _cand("3RD FLR, MALL SC JLN JEJAKA 55100", 0, 0.6),
            _cand("JLN JEJAKA 55100", 1, 0.3),
        ],
    }
    blocks2 = {0: (0, [0, 1]), 1: (1, [0, 1])}
    got2 = choose_parties(VENDOR, ranked2, by_index2, blocks2, bonus=0.0, overlap_penalty=0.0)
    assert got2["vendor_address"].value == "3RD FLR, MALL SC JLN JEJAKA 55100"


# An issuer's letterhead, its sender line over the customer's address window, and a total.
SENDER_LINE_PAGE = [
    (0.05, 0.04, "Northwind Supplies Ltd"),
    (0.60, 0.04, "INVOICE"),
    (0.05, 0.15, "Northwind Supplies Ltd · 250 Harbour Road, Portsmouth PO1 2AB"),
    (0.05, 0.18, "Jane Roe"),
    (0.05, 0.205, "12 Elm Street"),
    (0.05, 0.23, "Springfield 12345"),
    (0.05, 0.50, "Total"),
    (0.60, 0.50, "120.00"),
]


def test_the_ranker_reads_a_sender_line_without_its_name():
    # A sender line over the address window ("Name · street, town") repeats the issuer's name
    # before its address; the best address span starts with that name.
    lines = page_lines(SENDER_LINE_PAGE)
    rk = default_ranker()
    assert rk.rank(lines, VENDOR)["vendor_address"][0].value.startswith("Northwind")
    got = {k: c.value for k, c in rk.read(lines, VENDOR).items()}
    assert got == {
        "vendor_name": "Northwind Supplies Ltd",
        "vendor_address": "250 Harbour Road, Portsmouth PO1 2AB",
        "total": "120.00",
    }


BOTH = Schema("b", (*VENDOR.fields[:2], *CUSTOMER.fields))


def test_another_partys_sender_line_is_not_this_partys_address():
    by_index = _lines(
        enumerate(["ACME Ltd", "ACME Ltd · 1 Main St, Springfield 12345", "Jane Roe", "9 Elm St"])
    )
    blocks = {0: (0, [0]), 1: (0, [1]), 2: (0, [2, 3]), 3: (1, [2, 3])}
    ranked = {
        "vendor_name": [_cand("ACME Ltd", 0, 0.9)],
        "vendor_address": [
            _cand("ACME Ltd · 1 Main St, Springfield 12345", 1, 0.6),
            _cand("1 Main St, Springfield 12345", 1, 0.3),
        ],
        "customer_name": [_cand(None, None, 0.6), _cand("Jane Roe", 2, 0.4)],
        "customer_address": [
            _cand("ACME Ltd · 1 Main St, Springfield 12345", 1, 0.5),
            _cand("9 Elm St", 3, 0.3),
        ],
    }
    got = choose_parties(BOTH, ranked, by_index, blocks, bonus=0.0, overlap_penalty=0.0)
    assert got["vendor_address"].value == "1 Main St, Springfield 12345"
    assert got["customer_address"].value == "9 Elm St"
    assert got["customer_name"].value is None  # the names are chosen as before
    off = choose_parties(BOTH, ranked, by_index, blocks, bonus=0.0, overlap_penalty=0.0,
                         strip_name=False, one_owner=False)  # fmt: skip
    assert off["customer_address"].value.startswith("ACME Ltd")
    # with no other candidate the address stays as read
    only = {**ranked, "customer_address": ranked["customer_address"][:1]}
    got = choose_parties(BOTH, only, by_index, blocks, bonus=0.0, overlap_penalty=0.0)
    assert got["customer_address"].value.startswith("ACME Ltd")


def test_the_ranker_gives_a_block_headed_by_the_customer_to_the_customer():
    # The issuer's sender line over the customer's address window. Alone, the ranker reads the
    # window as the issuer's address too.
    lines = page_lines(SENDER_LINE_PAGE)
    rk = default_ranker()
    ranked = rk.rank(lines, BOTH)
    assert ranked["vendor_address"][0].value == "12 Elm Street Springfield 12345"
    got = {k: c.value for k, c in rk.read(lines, BOTH).items()}
    assert got == {
        "vendor_name": "Northwind Supplies Ltd",
        "vendor_address": "250 Harbour Road, Portsmouth PO1 2AB",
        "customer_name": "Jane Roe",
        "customer_address": "12 Elm Street Springfield 12345",
    }


def test_an_address_under_another_partys_name_is_not_this_partys():
    by_index = _lines(enumerate(["ACME Ltd", "1 Main St, Springfield", "Jane Roe", "9 Elm St"]))
    blocks = {0: (0, [0, 1]), 1: (1, [0, 1]), 2: (0, [2, 3]), 3: (1, [2, 3])}
    ranked = {
        "vendor_name": [_cand("ACME Ltd", 0, 0.9)],
        "vendor_address": [_cand("9 Elm St", 3, 0.7), _cand("1 Main St, Springfield", 1, 0.2)],
        "customer_name": [_cand("Jane Roe", 2, 0.8)],
        "customer_address": [_cand("9 Elm St", 3, 0.9)],
    }
    # without the bonus the vendor keeps its own best candidate, the customer's block ...
    off = choose_parties(
        BOTH, ranked, by_index, blocks, bonus=0.0, strip_name=False, one_owner=False
    )
    assert off["vendor_address"].value == "9 Elm St"
    # ... which starts under the customer's name: it is the customer's
    got = choose_parties(BOTH, ranked, by_index, blocks, bonus=0.0)
    assert got["vendor_address"].value == "1 Main St, Springfield"
    assert got["customer_address"].value == "9 Elm St"
    # a customer read absent claims nothing
    absent = {**ranked, "customer_name": [_cand(None, None, 0.9)]}
    got = choose_parties(BOTH, absent, by_index, blocks, bonus=0.0)
    assert got["vendor_address"].value == "9 Elm St"


def test_a_name_both_parties_were_read_with_tells_neither_apart():
    by_index = _lines(enumerate(["ACME Ltd", "1 Main St, Springfield", "Jane Roe", "9 Elm St"]))
    blocks = {0: (0, [0, 1]), 1: (1, [0, 1]), 2: (0, [2, 3]), 3: (1, [2, 3])}
    ranked = {
        "vendor_name": [_cand("ACME Ltd", 0, 0.9)],
        "vendor_address": [_cand("1 Main St, Springfield", 1, 0.7), _cand("9 Elm St", 3, 0.2)],
        "customer_name": [_cand("ACME Ltd", 0, 0.6)],  # read wrongly: the vendor's name
        "customer_address": [_cand("9 Elm St", 3, 0.6), _cand("1 Main St, Springfield", 1, 0.3)],
    }
    got = choose_parties(BOTH, ranked, by_index, blocks, bonus=0.0)
    # without the check each party would refuse its own address, under the shared name
    assert got["vendor_address"].value == "1 Main St, Springfield"
    assert got["customer_address"].value == "9 Elm St"


def test_another_partys_name_heading_the_address_is_not_taken_for_an_absent_name():
    # The vendor's address was read from the customer's block: the customer's name heads it,
    # so it is no evidence that the vendor's own name is printed. Pairs: absent log .8 =
    # -0.223 beats log .2 + 1 = -0.609; the cost would take the name (-0.609 > -1.223).
    by_index = _lines(enumerate(["Jane Roe", "9 Elm St, Town 77"]))
    blocks = {0: (0, [0, 1]), 1: (1, [0, 1])}
    ranked = {
        "vendor_name": [_cand(None, None, 0.8), _cand("Jane Roe", 0, 0.2)],
        "vendor_address": [_cand("9 Elm St, Town 77", 1, 0.9)],
        "customer_name": [_cand("Jane Roe", 0, 0.9)],
        "customer_address": [_cand("9 Elm St, Town 77", 1, 0.9)],
    }
    got = choose_parties(BOTH, ranked, by_index, blocks, bonus=1.0, absent_penalty=1.0)
    assert got["vendor_name"].value is None
    assert got["customer_name"].value == "Jane Roe"
    # with no customer in the schema, the heading name is the vendor's
    only = {k: v for k, v in ranked.items() if k.startswith("vendor")}
    got = choose_parties(VENDOR, only, by_index, blocks, bonus=1.0, absent_penalty=1.0)
    assert got["vendor_name"].value == "Jane Roe"


def _one_address_two_parties(customer_alternative):
    """The vendor's block (name over address) printed at the top, the customer's name further
    down without an address of its own; both parties read with the vendor's address."""
    texts = ["ACME Ltd", "1 Main St, Springfield", "Invoice", "Jane Roe", "x"]
    by_index = _lines(enumerate(texts))
    blocks = {0: (0, [0, 1]), 1: (1, [0, 1]), 3: (0, [3, 4]), 4: (1, [3, 4])}
    ranked = {
        "vendor_name": [_cand("ACME Ltd", 0, 0.9)],
        "vendor_address": [_cand("1 Main St, Springfield", 1, 0.9)],
        "customer_name": [_cand("Jane Roe", 3, 0.9)],
        "customer_address": [
            _cand("1 Main St, Springfield", 1, 0.6),
            _cand("ACME Ltd, 1 Main St, Springfield", 0, 0.2),  # the same lines: not hers
            *customer_alternative,
        ],
    }
    return by_index, blocks, ranked


@pytest.mark.parametrize(
    ("alternative", "expected"),
    [
        ([_cand(None, None, 0.1)], None),  # she has no printed address: none is read
        ([_cand("9 Elm St", 4, 0.05), _cand(None, None, 0.05)], "9 Elm St"),
    ],
)
def test_one_printed_address_is_the_party_s_whose_name_heads_it(alternative, expected):
    by_index, blocks, ranked = _one_address_two_parties(alternative)
    got = choose_parties(BOTH, ranked, by_index, blocks)
    assert got["vendor_address"].value == "1 Main St, Springfield"
    assert got["customer_address"].value == expected
    # without the rule both parties are read with the vendor's address
    off = choose_parties(BOTH, ranked, by_index, blocks, one_owner=False)
    assert "1 Main St" in off["customer_address"].value


def test_an_address_no_chosen_name_heads_stays_with_both():
    by_index, blocks, ranked = _one_address_two_parties([_cand(None, None, 0.1)])
    far = {**ranked, "vendor_name": [_cand(None, None, 0.9)]}  # the vendor's name read absent
    got = choose_parties(BOTH, far, by_index, blocks)
    assert got["customer_address"].value == got["vendor_address"].value

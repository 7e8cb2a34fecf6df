"""How ``extractconf score --engine ray`` cuts documents into ingestion blocks."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from confidence.ray.pipeline import ingest_block


@given(st.integers(0, 2_000_000), st.integers(1, 512))
def test_blocks_are_small_enough_to_balance_and_few_enough_for_the_driver(n, cpus):
    k = ingest_block(n, cpus)
    assert k >= 1
    blocks = -(-n // k)
    assert blocks <= 200 or k <= 4  # past 200 blocks the blocks grow, never the block count
    assert k <= max(4, -(-n // 200))  # never more per task than the two rules ask
    if n >= 8 * cpus and cpus <= 50:  # (past 100 blocks the 200-block rule may halve them)
        assert blocks >= 2 * cpus  # every CPU gets at least two blocks


def test_hand_computed_block_sizes():
    assert [ingest_block(n, 2) for n in (0, 15, 16, 40, 64, 800, 801)] == [1, 1, 1, 2, 4, 4, 5]
    assert ingest_block(40, 1) == 4 and ingest_block(40, 8) == 1

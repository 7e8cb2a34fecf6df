"""Pure helpers of confidence.llm: retry policy, Retry-After, grammar schema, rate limiter."""

from __future__ import annotations

import asyncio
import email.utils
import re
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from confidence.documents.patterns import AMOUNT_PATTERN
from confidence.llm import RetryPolicy, grammar_schema
from confidence.llm.ratelimit import RateLimiter
from confidence.llm.retry import is_retryable_status, parse_retry_after


def test_backoff_doubles_caps_and_jitters():
    p = RetryPolicy(max_retries=5, base_delay=0.5, max_delay=3.0)
    assert [p.backoff(a, jitter=1.0) for a in range(5)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert all(0 <= p.backoff(3) <= 3.0 for _ in range(50))
    assert p.backoff(0, retry_after=10.0) == 3.0  # capped by max_delay
    with pytest.raises(ValueError, match="max_retries"):
        RetryPolicy(max_retries=-1)


@pytest.mark.parametrize(
    ("status", "retry"),
    [
        (400, False),
        (401, False),
        (404, False),
        (422, False),
        (408, True),
        (409, True),
        (429, True),
        (500, True),
        (503, True),
    ],
)
def test_retryable_status(status, retry):
    assert is_retryable_status(status) is retry


def test_retry_after_forms():
    now = time.time()
    date = email.utils.formatdate(now + 5, usegmt=True)
    assert 3.5 <= parse_retry_after({"Retry-After": date}, now=now) <= 5.5
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({}) is None and parse_retry_after(None) is None
    assert parse_retry_after({"Retry-After": "-3"}) == 0.0


def test_grammar_schema_bounds_strings_and_splits_unions():
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": ["string", "null"], "maxLength": 7},
            "b": {"type": "string", "pattern": "[0-9]+"},
            "c": {"type": "string", "enum": ["x", "y"]},
            "d": {"type": ["string", "null"], "enum": ["x", None]},
            "e": {"type": "number"},
        },
    }
    out = grammar_schema(schema, max_string_length=50)
    a = out["properties"]["a"]["anyOf"]
    assert a[1] == {"type": "null"} and a[0]["pattern"].endswith("{0,7}$")
    assert out["properties"]["b"]["pattern"] == "^[0-9]+$"
    assert out["properties"]["c"] == schema["properties"]["c"]
    assert out["properties"]["d"] == schema["properties"]["d"]  # enum covers the union
    assert out["properties"]["e"] == {"type": "number"}
    assert schema["properties"]["a"] == {"type": ["string", "null"], "maxLength": 7}  # untouched


@given(st.text(max_size=80))
def test_bounded_string_pattern_is_single_line(s):
    pat = grammar_schema({"type": "string"}, max_string_length=40)["pattern"]
    ok = re.fullmatch(pat.strip("^$"), s) is not None
    assert ok == (len(s) <= 40 and not any(c in s for c in '"\\\n\r\t'))


@pytest.mark.parametrize("good", ["12.50", "1,234.50", "1.234,50", "-7", "1 000 000", "0,5"])
def test_amount_pattern_accepts(good):
    assert re.fullmatch(AMOUNT_PATTERN, good)


@pytest.mark.parametrize("bad", ["", "12.50 EUR", "1" * 20, "1.2.3.4.5", "12.5050", "abc"])
def test_amount_pattern_rejects(bad):
    assert not re.fullmatch(AMOUNT_PATTERN, bad)


def test_rate_limiter_spaces_starts():
    async def go():
        lim = RateLimiter(rpm=600)  # 0.1 s apart
        starts = []

        async def one():
            await lim.acquire()
            starts.append(time.monotonic())

        await asyncio.gather(*(one() for _ in range(5)))
        return sorted(starts)

    s = asyncio.run(go())
    # the first start does not wait and the last sleeps until 4 intervals later (a busy machine
    # can only make it later; gaps between neighbours are not checked for that reason)
    assert s[-1] - s[0] >= 0.4 - 1e-3 and s[-1] - s[0] < 5.0
    with pytest.raises(ValueError, match="rpm"):
        RateLimiter(rpm=0)

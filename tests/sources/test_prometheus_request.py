"""Issue 25 #10: a Prometheus time range is bounded before any request — durations, instants,
and the number of steps (one snapshot each) — each refused in one line."""

from __future__ import annotations

import pytest

from lbctl.errors import UsageError
from lbctl.sources.prometheus import HistoryRequest, parse_duration, parse_time
from lbctl.sources.prometheus.request import MAX_STEPS

NOW = 1_700_000_000_000
DAY = 86_400_000


@pytest.mark.parametrize(("text", "message"), [
    ("99999999999999999999y", "at most 100 years"),
    ("9" * 400, "at most 100 years"),
    ("101y", "at most 100 years"),
    ("0s", "must be more than zero"),
    ("2 h", "expected e.g. 30s"),
])
def test_durations_are_bounded(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message) as e:
        parse_duration(text, "--since")
    assert "\n" not in str(e.value) and len(str(e.value)) < 200


def test_instants_are_bounded() -> None:
    assert parse_time("1700000000") == NOW
    for bad in ("9" * 400, "253402300800"):
        with pytest.raises(UsageError, match="after the year 9999"):
            parse_time(bad, "--start")


def test_the_steps_are_bounded_before_any_request() -> None:
    """``--since 3y --step 1ms`` was 95 billion steps (8.6 M requests), started at once."""
    with pytest.raises(UsageError) as e:
        HistoryRequest(NOW - parse_duration("3y"), NOW, parse_duration("1ms"))
    assert str(e.value) == (f"the range holds 94,608,000,001 steps of 1 ms (one snapshot each); "
                            f"at most {MAX_STEPS:,}: use a longer --step or a shorter range")
    year_at_a_minute = HistoryRequest(NOW - 365 * DAY, NOW, 60_000)
    assert (year_at_a_minute.end_ms - year_at_a_minute.start_ms) // 60_000 + 1 <= MAX_STEPS
    with pytest.raises(UsageError, match="starts before 1970"):
        HistoryRequest(NOW - parse_duration("60y"), NOW, DAY)

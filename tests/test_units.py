"""lbctl.units: every figure people or scripts read goes through these, so their edge cases are
pinned here (missing, NaN, infinite, huge)."""

from __future__ import annotations

import math

import pytest

from lbctl.units import MB, mb, mb_s, msg_s, number, pct, pct_whole, rate, rounded, short, whole


@pytest.mark.parametrize("x, text", [(0.425, "42.5%"), (0.0, "0.0%"), (1.5, "150.0%"),
                                     (None, "-"), (math.nan, "-"), (math.inf, "inf"),
                                     (-math.inf, "-inf")])
def test_pct(x, text):
    assert pct(x) == text


def test_pct_whole_drops_the_decimal_only_when_whole():
    assert pct_whole(0.1) == "10%" and pct_whole(0.075) == "7.5%"


def test_mb_and_rates():
    assert mb(55 * MB) == "55.00" and mb(1234 * MB, 1) == "1,234.0" and mb(None) == "-"
    assert rate(35955.68) == "35,955.7" and rate(None) == "-"
    assert number(21503.99) == "21,503.99" and number(21503.99, grouped=False) == "21503.99"
    assert number(math.nan) == "-"


def test_log_styles_as_pulsar_prints_them():
    assert mb_s(10 * MB) == "10.0 MB/s" and mb_s(3.2 * MB) == "3.2 MB/s"
    assert mb_s(1.7976931348623157e308) == "1.71e+302 MB/s"
    assert msg_s(6144) == "6144.0 msg/s" and msg_s(3e15) == "3e+15 msg/s"
    assert whole(49976.02) == "49976" and whole(12.5) == "12.5"
    assert short(40.0) == "40" and short(0.5) == "0.5"


def test_rounded_is_json_safe():
    assert rounded(0.1234567891) == 0.123457
    assert rounded(None) is None and rounded(math.nan) is None and rounded(math.inf) is None

"""Spread, settle and bounce-back bookkeeping."""

from __future__ import annotations

import pytest

from lbctl.simulate.metrics import BounceTracker, Spread, ratio, settle_cycle


def test_spread() -> None:
    s = Spread.of([0.9, 0.1])
    assert (s.mean, s.std, s.min, s.max) == pytest.approx((0.5, 0.4, 0.1, 0.9))
    assert s.cov == pytest.approx(0.8) and s.range == pytest.approx(0.8)
    assert Spread.of([0.0, 0.0]).cov is None
    assert ratio([4.0, 1.0]) == 4.0 and ratio([3.0, 0.0]) is None


def test_settle_is_the_first_cycle_the_range_stays_in_band() -> None:
    assert settle_cycle([0.8, 0.0, 0.4, 0.05, 0.05], 0.05, 0.1) == 4
    assert settle_cycle([0.8, 0.05, 0.05], 0.3, 0.1) is None  # the state after the run is out
    assert settle_cycle([0.05, 0.05], 0.05, 0.1) == 1
    assert settle_cycle([0.8, 0.8], 0.05, 0.1) is None  # only the final state is in the band


def test_bounce_back_within_the_window_only() -> None:
    t = BounceTracker(window_ms=30 * 60_000)
    assert not t.move("x", "a", "b", 0)
    assert t.move("x", "b", "a", 30 * 60_000)  # back to a after exactly 30 minutes
    assert not t.move("x", "a", "c", 31 * 60_000)
    assert not t.move("x", "c", "a", 62 * 60_000)  # left a 31 minutes before

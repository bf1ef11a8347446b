"""The report-update rule (``ModularLoadManagerImpl.needBrokerDataUpdate``)."""

from __future__ import annotations

import math

import pytest

from lbctl.config import Settings
from lbctl.records import replace
from lbctl.simulate.reports import max_change, need_update, percent_change
from tests.factories import broker, stats


def test_percent_change_as_pulsar() -> None:
    assert percent_change(0, 0) == 0
    assert percent_change(0, 5) == math.inf
    assert percent_change(200, 150) == 25.0
    assert percent_change(200, 250) == 25.0


def _report(cpu: float, n: int, rate: float = 100.0):
    bundles = {f"t/ns/0x{i:08x}_0x{i + 1:08x}": stats(rate, rate, 1000, 1000) for i in range(n)}
    return replace(broker(cpu=(cpu, 100), bundles=bundles), lastUpdate=0)


def test_strictly_more_than_the_threshold_writes() -> None:
    s = Settings.defaults()
    last = _report(50, 10)
    assert max_change(last, _report(60, 10), s) == pytest.approx(10.0, abs=1e-5)
    assert not need_update(last, _report(59, 10), 60_000, s)  # 9 points of usage
    assert need_update(last, _report(61, 10), 60_000, s)  # 11 points
    assert not need_update(last, _report(50, 11), 60_000, s)  # bundles 10 -> 11: exactly 10 %
    assert need_update(last, _report(50, 12), 60_000, s)  # 20 %
    assert need_update(last, _report(50, 10, rate=111), 60_000, s)  # message rate +11 %


def test_max_interval_forces_a_write() -> None:
    s = Settings.defaults()
    last = _report(50, 10)
    assert not need_update(last, last, 15 * 60_000, s)  # exactly 15 minutes: not more
    assert need_update(last, last, 15 * 60_000 + 1, s)
    quick = s.with_values(loadBalancerReportUpdateMaxIntervalMinutes=1)
    assert need_update(last, last, 60_001, quick)

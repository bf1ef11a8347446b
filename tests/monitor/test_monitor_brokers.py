"""monitor-brokers' figures: SHORT/LONG with the leader's time-averaging rule, stale brokers."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from lbctl.errors import UsageError
from lbctl.model.load import LocalBrokerData, NamespaceBundleStats, ResourceUsage
from lbctl.monitor.brokers import BrokerMonitor, sort_rows
from lbctl.records import replace

B1 = "t/n/0x00000000_0x80000000"
B2 = "t/n/0x80000000_0xffffffff"


def report(rate_in: float, rate2: float = 0.0, t: int = 1, cpu: float = 50.0) -> LocalBrokerData:
    stats = {B1: NamespaceBundleStats(msgRateIn=rate_in, msgThroughputIn=rate_in * 1024)}
    if rate2:
        stats[B2] = NamespaceBundleStats(msgRateIn=rate2)
    return replace(LocalBrokerData(cpu=ResourceUsage(cpu, 100)).with_stats(MappingProxyType(stats)),
                   lastUpdate=t)


def test_short_and_long_follow_pulsars_update_rule() -> None:
    mon = BrokerMonitor()
    samples = [100.0, 200.0, 600.0] + [0.0] * 10
    for i, x in enumerate(samples, start=1):
        r = mon.update(["b"], {"b": report(x, t=i)}, 85, i).rows[0]
    # short window: 10 samples; exact mean for the first 10, then x = (9x + new)/10
    short = 0.0
    long_ = 0.0
    for n, x in enumerate(samples, start=1):
        ns, nl = min(n, 10), min(n, 1000)
        short = ((ns - 1) * short + x) / ns if n > 1 else x
        long_ = ((nl - 1) * long_ + x) / nl if n > 1 else x
    assert r.short.msg_in == pytest.approx(short) and r.long.msg_in == pytest.approx(long_)
    assert r.short.msg_in != pytest.approx(r.long.msg_in)
    assert r.latest.msg_in == 0.0 and r.samples == len(samples)
    assert r.long.row()[3] == pytest.approx(long_)  # KB/s = bytes/s / 1024


def test_the_same_report_is_not_sampled_twice() -> None:
    mon = BrokerMonitor()
    mon.update(["b"], {"b": report(100, t=1)}, 85, 1)
    r = mon.update(["b"], {"b": report(100, t=1)}, 85, 2).rows[0]
    assert r.samples == 1
    r = mon.update(["b"], {"b": report(300, t=2)}, 85, 3).rows[0]
    assert r.samples == 2 and r.short.msg_in == pytest.approx(200)


def test_new_bundle_starts_from_its_first_sample() -> None:
    mon = BrokerMonitor()
    mon.update(["b"], {"b": report(100, t=1)}, 85, 1)
    r = mon.update(["b"], {"b": report(100, 40, t=2)}, 85, 2).rows[0]
    assert r.short.msg_in == pytest.approx(140)


def test_stale_unreachable_lost_and_overloaded() -> None:
    mon = BrokerMonitor()
    mon.update(["a", "b"], {"a": report(1, cpu=90), "b": report(1, cpu=20)}, 85, 1)
    ref = mon.update(["a", "b", "c"], {"a": "timeout", "b": report(1, cpu=20, t=2),
                                       "c": "refused"}, 85, 2)
    a, b, c = ref.rows
    assert a.state == "stale" and a.error == "timeout" and a.cpu == pytest.approx(90)
    assert a.overloaded and not b.overloaded
    assert c.state == "unreachable" and c.cpu is None
    assert [r.broker for r in mon.update(["b"], {"b": report(1, t=3)}, 85, 3).rows] == ["b"]
    assert ref.total().bundles == a.bundles + b.bundles


def test_overloaded_at_the_threshold_as_overload_shedder() -> None:
    r = BrokerMonitor().update(["a"], {"a": report(1, cpu=85)}, 85, 1).rows[0]
    assert r.max == pytest.approx(85) and r.overloaded


def test_sort() -> None:
    mon = BrokerMonitor()
    ref = mon.update(["a", "b", "c"], {"a": report(1, cpu=20), "b": report(1, cpu=70),
                                       "c": "down"}, 85, 1)
    assert [r.broker for r in sort_rows(ref.rows, "CPU")] == ["b", "a", "c"]
    assert [r.broker for r in sort_rows(ref.rows, "broker")] == ["a", "b", "c"]
    with pytest.raises(UsageError, match="did you mean max"):
        sort_rows(ref.rows, "maxx")

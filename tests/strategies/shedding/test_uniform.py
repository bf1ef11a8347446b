"""UniformLoadShedder.

Ported from Pulsar's ``UniformLoadShedderTest`` (the master version with
``testSmallTrafficShedding``; pulsar-broker/src/test/java/org/apache/pulsar/broker/loadbalance/impl/),
scenario by scenario with the same numbers. In Java the ``ServiceConfiguration`` is shared by the
test methods (TestNG runs them alphabetically); each port states the settings its Java test relies
on. ``testFilterOutNonTrafficBundlesForUnloading`` belongs to the unmerged PR #21214 (a ``> 0``
filter master does not have) and is ported as the opposite: master *does* shed zero-traffic bundles.

Then: Java ``int`` budgets (truncation, saturation, wrap-around), the first-broker tie rule, the
rate branch's priority without fallback, and the explanations.
"""

from __future__ import annotations

import pytest

from lbctl.config import MB, Settings
from lbctl.explain.words import text
from lbctl.model.decision import Label, Reason
from lbctl.model.javaint import INT_MAX
from lbctl.strategies.builtin import SHEDDING
from lbctl.strategies.shedding.uniform import UniformLoadShedder
from tests.factories import broker, bundle_data, load

CONF = Settings.defaults()


def shed(ld, conf: Settings = CONF):
    shedder = UniformLoadShedder()
    decision, memory = shedder.shed(ld, conf, shedder.initial_memory())
    assert memory is None
    return decision


def by_broker(decision) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for s in decision.selections:
        out.setdefault(s.broker, []).append(s.bundle)
    return out


def one_loaded_broker(n: int, tp_of, *, rate_of=None, report_rates: bool = True):
    """broker-1 owns bundle-1..n (throughput ``tp_of(i)`` and rate ``rate_of(i)`` in and out);
    broker2 is idle. ``report_rates=False`` leaves the rates out of broker-1's report."""
    bundles = {}
    total_tp = total_rate = 0.0
    for i in range(1, n + 1):
        tp = tp_of(i)
        rate = rate_of(i) if rate_of else 0.0
        bundles[f"bundle-{i}"] = bundle_data(tp, tp, rate, rate)
        total_tp += tp
        total_rate += rate
    brokers = {
        "broker-1": broker(
            bundle_names=tuple(bundles),
            tp_in=total_tp,
            tp_out=total_tp,
            msg_rate_in=total_rate if report_rates else 0.0,
            msg_rate_out=total_rate if report_rates else 0.0,
        ),
        "broker2": broker(),
    }
    return load(brokers, bundle_data=bundles)


def five_brokers():
    """``testOverloadBrokerSelect``: msg rates 50k/60k/70k/10k/20k, throughputs 50/60/70/80/10
    MB/s (``msgRateIn`` / ``msgThroughputIn`` only), 5 equal bundles each."""
    rates = [50000, 60000, 70000, 10000, 20000]
    tps = [50 * MB, 60 * MB, 70 * MB, 80 * MB, 10 * MB]
    brokers = {}
    bundles = {}
    for b in range(5):
        names = []
        for i in range(5):
            name = f"broker-{b}-bundle-{i}"
            names.append(name)
            bundles[name] = bundle_data(tp_in=tps[b] / 5, rate_in=rates[b] / 5)
        brokers[f"broker{b}"] = broker(
            bundle_names=tuple(names), msg_rate_in=rates[b], tp_in=tps[b]
        )
    return load(brokers, bundle_data=bundles)


# --- UniformLoadShedderTest ---------------------------------------------------------------------
def test_max_unload_bundle_num_per_shedding():
    conf = CONF.with_values(maxUnloadBundleNumPerShedding=2)
    ld = one_loaded_broker(20, lambda i: 1 * 1024 * 1024)
    decision = shed(ld, conf)
    assert len(decision.selections) == 2
    # without the limit a third 2 MB/s bundle fits the 8 MB/s budget
    assert len(shed(ld).selections) == 3
    limited = [c for c in decision.candidates if "maxUnloadBundleNumPerShedding 2" in text(c.why)]
    assert len(limited) == 18


def test_broker_with_multiple_bundles():
    decision = shed(one_loaded_broker(10, lambda i: i * 1024 * 1024))
    assert decision.selections != ()
    # budget (int)((110 MB/s - 1) x 0.2) = 23068671: bundle-10 (20 MB/s) fits, then nothing does
    assert by_broker(decision) == {"broker-1": ["bundle-10"]}
    assert decision.numbers["msgThroughputRequired"] == 23068671


def test_overload_broker_select():
    base = CONF.with_values(maxUnloadBundleNumPerShedding=1, maxUnloadPercentage=0.5)
    ld = five_brokers()

    rate_only = base.with_values(
        loadBalancerMsgRateDifferenceShedderThreshold=50,
        loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold=0,
    )
    decision = shed(ld, rate_only)
    assert len(decision.selections) == 1
    assert set(by_broker(decision)) == {"broker2"}

    tp_only = base.with_values(
        loadBalancerMsgRateDifferenceShedderThreshold=0,
        loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold=2,
    )
    decision = shed(ld, tp_only)
    assert len(decision.selections) == 1
    assert set(by_broker(decision)) == {"broker3"}

    both = base.with_values(
        loadBalancerMsgRateDifferenceShedderThreshold=50,
        loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold=2,
    )
    decision = shed(ld, both)
    assert len(decision.selections) == 1
    assert set(by_broker(decision)) == {"broker2"}  # the msg-rate criterion has priority
    assert any("throughput criterion is not looked at" in n for n in map(text, decision.notes))


def test_small_traffic_shedding():
    # thresholds as left by testOverloadBrokerSelect (50 %, 2); the result is the same with 4
    conf = CONF.with_values(
        minUnloadMessage=0,
        minUnloadMessageThroughput=0,
        maxUnloadPercentage=0.5,
        maxUnloadBundleNumPerShedding=-1,
        loadBalancerMsgRateDifferenceShedderThreshold=50,
        loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold=2,
    )
    # small msg rate: 5 bundles of 50 + 50 msg/s; budget (int)((500 - 1) x 0.5) = 249
    ld = one_loaded_broker(5, lambda i: 0.0, rate_of=lambda i: 50.0)
    decision = shed(ld, conf)
    assert len(decision.selections) == 2
    assert decision.numbers["msgRateRequired"] == 249
    # small throughput: 5 bundles of 1024 + 1024 B/s; budget (int)((10240 - 1) x 0.5) = 5119
    ld = one_loaded_broker(5, lambda i: 1024.0)
    decision = shed(ld, conf)
    assert len(decision.selections) == 2
    assert decision.numbers["msgThroughputRequired"] == 5119


def test_zero_traffic_bundles_are_not_filtered_out():
    """``testFilterOutNonTrafficBundlesForUnloading`` of the unmerged PR #21214 expects 2 bundles;
    master has no ``> 0`` filter, so the two idle bundles fit the remaining budget too."""
    conf = CONF.with_values(
        maxUnloadBundleNumPerShedding=5,
        maxUnloadPercentage=0.5,
        loadBalancerMsgRateDifferenceShedderThreshold=50,
        loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold=0,
    )
    rates = [60_000, 20_000, 20_000, 0, 0]
    tps = [60 * MB, 20 * MB, 20 * MB, 0, 0]
    bundles = {"broker-0-bundle-0": bundle_data(tp_in=10 * MB, rate_in=10_000)}
    for i in range(5):
        bundles[f"broker-1-bundle-{i}"] = bundle_data(tp_in=tps[i], rate_in=rates[i])
    brokers = {
        "broker0": broker(bundle_names=("broker-0-bundle-0",), msg_rate_in=10_000, tp_in=10 * MB),
        "broker1": broker(
            bundle_names=tuple(f"broker-1-bundle-{i}" for i in range(5)),
            msg_rate_in=100_000,
            tp_in=100 * MB,
        ),
    }
    ld = load(brokers, bundle_data=bundles)
    decision = shed(ld, conf)
    # budget 45000: 60000 is too large, 20000 + 20000 fit (5000 left), then 0 and 0 fit
    assert sorted(by_broker(decision)["broker1"]) == [
        "broker-1-bundle-1",
        "broker-1-bundle-2",
        "broker-1-bundle-3",
        "broker-1-bundle-4",
    ]
    why = {c.bundle: text(c.why) for c in decision.candidates}
    assert why["broker-1-bundle-0"].startswith("too large: 60000.0 msg/s > remaining budget")
    tp_conf = conf.with_values(
        loadBalancerMsgRateDifferenceShedderThreshold=0,
        loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold=2,
    )
    assert len(shed(ld, tp_conf).selections) == 4


# --- beyond the Java test -----------------------------------------------------------------------
def test_registered_by_name():
    assert isinstance(SHEDDING.create("UniformLoadShedder"), UniformLoadShedder)


def test_budget_truncates_each_subtraction():
    """``MutableInt.add(-v)`` adds ``(int) -v``: fractional bundle values leave the budget high."""
    conf = CONF.with_values(minUnloadMessage=0, maxUnloadPercentage=1.0)
    rates = {"x/y/a": 2.9, "x/y/b": 2.9, "x/y/c": 2.9, "x/y/d": 2.9}
    bundles = {b: bundle_data(rate_in=r) for b, r in rates.items()}
    brokers = {
        "hot": broker(bundle_names=tuple(rates), msg_rate_in=10.0),
        "cold": broker(bundle_names=("x/y/z",), msg_rate_in=1.0),
    }
    bundles["x/y/z"] = bundle_data(rate_in=1.0)
    decision = shed(load(brokers, bundle_data=bundles), conf)
    # budget (int)((10 - 1) x 1.0) = 9; 2.9 <= 9 → 7; 2.9 <= 7 → 5; 2.9 <= 5 → 3; 2.9 <= 3 → 1
    # exact arithmetic would stop after three bundles (9 - 3 x 2.9 = 0.3)
    assert len(decision.selections) == 4
    assert decision.brokers["hot"].numbers["remaining"] == 1


def test_budget_saturates_at_int_max():
    conf = CONF.with_values(maxUnloadBundleNumPerShedding=-1)
    huge = 1e300
    bundles = {"x/y/a": bundle_data(tp_in=3e9), "x/y/b": bundle_data(tp_in=1.0)}
    brokers = {
        "hot": broker(bundle_names=("x/y/a", "x/y/b"), tp_in=huge),
        "cold": broker(),
    }
    decision = shed(load(brokers, bundle_data=bundles), conf)
    assert decision.numbers["msgThroughputRequired"] == INT_MAX
    # 3e9 B/s > 2^31 - 1 does not fit; the 1 B/s bundle does
    assert by_broker(decision) == {"hot": ["x/y/b"]}


def test_first_broker_met_wins_a_tie():
    names = ["a", "b", "c"]
    bundles = {}
    brokers = {}
    for n in names[:2]:
        bundles[f"{n}/ns/1"] = bundle_data(rate_in=5000)
        bundles[f"{n}/ns/2"] = bundle_data(rate_in=5000)
        brokers[n] = broker(bundle_names=(f"{n}/ns/1", f"{n}/ns/2"), msg_rate_in=10_000)
    brokers["c"] = broker()
    ld = load(brokers, bundle_data=bundles)
    first = next(b for b in ld.brokers if b in ("a", "b"))
    # budget (int)((10000 - 1) x 1.0) = 9999: one 5000 msg/s bundle fits
    decision = shed(ld, CONF.with_values(maxUnloadPercentage=1.0))
    assert set(by_broker(decision)) == {first}
    other = "b" if first == "a" else "a"
    assert f"not the broker with the highest msg rate ({first})" in text(decision.brokers[other].why)


def test_rate_branch_has_no_fallback_to_throughput():
    """Rate uneven but its budget is below minUnloadMessage: the throughput branch is not tried."""
    bundles = {
        "x/y/a": bundle_data(tp_in=50 * MB, rate_in=30),
        "x/y/b": bundle_data(tp_in=50 * MB, rate_in=30),
    }
    brokers = {
        "hot": broker(bundle_names=("x/y/a", "x/y/b"), msg_rate_in=60, tp_in=100 * MB),
        "cold": broker(bundle_names=("x/y/z",), msg_rate_in=10, tp_in=MB),
    }
    bundles["x/y/z"] = bundle_data(tp_in=MB, rate_in=10)
    decision = shed(load(brokers, bundle_data=bundles))
    assert decision.selections == ()
    v = decision.brokers["hot"]
    assert (v.label, v.reason) == (Label.SKIP, Reason.OVERLOADED)
    assert "budget 10.0 msg/s < minUnloadMessage 1000" in text(v.why)
    assert decision.brokers["cold"].reason == Reason.UNDERLOADED


def test_single_bundle_source_is_not_shed():
    bundles = {"x/y/a": bundle_data(tp_in=100 * MB)}
    brokers = {"hot": broker(bundle_names=("x/y/a",), tp_in=100 * MB), "cold": broker()}
    decision = shed(load(brokers, bundle_data=bundles))
    assert decision.selections == ()
    v = decision.brokers["hot"]
    assert (v.label, v.reason) == (Label.SKIP, Reason.NO_BUNDLES)
    assert "single-bundle" in text(v.why)


def test_uniform_cluster_explains_why_nothing_happens():
    bundles = {"x/y/a": bundle_data(rate_in=1000), "x/y/b": bundle_data(rate_in=1200)}
    brokers = {
        "a": broker(bundle_names=("x/y/a",), msg_rate_in=1000, tp_in=MB),
        "b": broker(bundle_names=("x/y/b",), msg_rate_in=1200, tp_in=MB),
    }
    decision = shed(load(brokers, bundle_data=bundles))
    assert decision.selections == ()
    assert set(decision.brokers) == {"a", "b"}
    assert all(v.reason == Reason.BALANCED for v in decision.brokers.values())
    assert any(
        "20.0% ≤ loadBalancerMsgRateDifferenceShedderThreshold 50%" in n for n in map(text, decision.notes)
    )
    assert any("ratio max / min = 1.00 ≤" in n for n in map(text, decision.notes))
    assert decision.numbers["msgRateDifferencePercentage"] == pytest.approx(20.0)


def test_selection_carries_the_bundle_figures():
    ld = one_loaded_broker(10, lambda i: i * 1024 * 1024, rate_of=lambda i: 7.0, report_rates=False)
    decision = shed(ld)
    (sel,) = decision.selections
    assert sel.reason == Reason.OVERLOADED
    assert sel.throughput == 20 * MB
    assert sel.msg_rate == 14.0
    v = decision.brokers["broker-1"]
    assert (v.label, v.reason) == (Label.SUCCESS, Reason.OVERLOADED)
    assert v.numbers["throughput"] == 110 * MB


def test_verdicts_follow_broker_order():
    ld = five_brokers()
    decision = shed(ld, CONF.with_values(maxUnloadPercentage=0.5))
    assert list(decision.brokers) == list(ld.brokers)

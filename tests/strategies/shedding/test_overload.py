"""OverloadShedder.

Ported from Pulsar's ``OverloadShedderTest``
(pulsar-broker/src/test/java/org/apache/pulsar/broker/loadbalance/impl/), scenario by scenario
with the same numbers (``testPrintResourceUsage`` tests ``LocalBrokerData`` formatting, not the
shedder, and is left to the model tests). Then: the PIP-358 weighted usage, the ``>=`` edge, and
the explanation each broker gets.
"""

from __future__ import annotations

import pytest

from lbctl.config import MB, Settings
from lbctl.explain.words import text
from lbctl.model.decision import Label, Reason
from lbctl.strategies.builtin import SHEDDING
from lbctl.strategies.shedding.overload import OverloadShedder
from tests.factories import broker, bundle_data, load

# OverloadShedderTest's constructor sets loadBalancerBrokerOverloadedThresholdPercentage = 85.
CONF = Settings.defaults().with_values(loadBalancerBrokerOverloadedThresholdPercentage=85)


def shed(ld, conf: Settings = CONF):
    shedder = OverloadShedder()
    decision, memory = shedder.shed(ld, conf, shedder.initial_memory())
    assert memory is None
    return decision


def picked(decision, broker_name: str) -> list[str]:
    """``bundlesToUnload.get(broker)``: the broker's bundles in selection order."""
    return [s.bundle for s in decision.selections if s.broker == broker_name]


def ten_bundles(*, with_other_broker: bool):
    """The 10-bundle broker of ``testBrokerWithMultipleBundles`` / ``testFilterRecentlyUnloaded``:
    bundle-i carries i MB/s in and i MB/s out; ``another-broker`` owns copies of the same data."""
    bundles = {}
    names = []
    other = []
    total = 0.0
    for i in range(1, 11):
        tp = i * 1024 * 1024
        data = bundle_data(tp, tp)
        bundles[f"bundle-{i}"] = data
        names.append(f"bundle-{i}")
        if with_other_broker:
            bundles[f"another-broker-bundle-{10 + i}"] = data
            other.append(f"another-broker-bundle-{10 + i}")
        total += tp
    brokers = {
        "broker-1": broker(
            bandwidth_in=(999, 1000),
            bandwidth_out=(999, 1000),
            bundle_names=tuple(names),
            tp_in=total,
            tp_out=total,
        )
    }
    if with_other_broker:
        brokers["another-broker"] = broker(bundle_names=tuple(other))
    return brokers, bundles


# --- OverloadShedderTest ------------------------------------------------------------------------
def test_no_brokers():
    decision = shed(load({}, bundle_data={}))
    assert decision.selections == ()
    assert dict(decision.brokers) == {}
    assert any("no brokers" in n for n in map(text, decision.notes))


def test_brokers_with_no_bundles():
    ld = load(
        {"broker-1": broker(bandwidth_in=(999, 1000), bandwidth_out=(999, 1000))}, bundle_data={}
    )
    decision = shed(ld)
    assert decision.selections == ()
    v = decision.brokers["broker-1"]
    assert (v.label, v.reason) == (Label.SKIP, Reason.NO_BUNDLES)
    assert "no bundles" in text(v.why)


def test_broker_not_overloaded():
    ld = load(
        {
            "broker-1": broker(
                bandwidth_in=(500, 1000), bandwidth_out=(500, 1000), bundle_names=("bundle-1",)
            )
        },
        bundle_data={"bundle-1": bundle_data(1000, 1000)},
    )
    decision = shed(ld)
    assert decision.selections == ()
    v = decision.brokers["broker-1"]
    assert (v.label, v.reason) == (Label.SKIP, Reason.BALANCED)
    assert v.usage == pytest.approx(0.5)
    assert "usage 50.0% is below loadBalancerBrokerOverloadedThresholdPercentage 85%" in text(v.why)


def test_broker_with_single_bundle():
    ld = load(
        {
            "broker-1": broker(
                bandwidth_in=(999, 1000), bandwidth_out=(999, 1000), bundle_names=("bundle-1",)
            )
        },
        bundle_data={"bundle-1": bundle_data(1000, 1000)},
    )
    decision = shed(ld)
    assert decision.selections == ()
    v = decision.brokers["broker-1"]
    assert (v.label, v.reason) == (Label.SKIP, Reason.NO_BUNDLES)
    assert "only 1 bundle: Pulsar never sheds a single-bundle broker" in text(v.why)


def test_broker_with_multiple_bundles():
    brokers, bundles = ten_bundles(with_other_broker=True)
    decision = shed(load(brokers, bundle_data=bundles))
    # usage 99.9 % → offload (0.999 - 0.85 + 0.05) x 110 MB/s ≈ 21.9 MB/s: 20 + 18 MB/s
    assert picked(decision, "broker-1") == ["bundle-10", "bundle-9"]
    assert picked(decision, "another-broker") == []
    assert {s.reason for s in decision.selections} == {Reason.OVERLOADED}
    first = decision.selections[0]
    assert first.throughput == 20 * MB
    v = decision.brokers["broker-1"]
    assert (v.label, v.reason) == (Label.SUCCESS, Reason.OVERLOADED)
    assert v.numbers["need"] == pytest.approx(110 * MB * (0.999 - 0.85 + 0.05), rel=1e-6)
    assert decision.brokers["another-broker"].reason == Reason.BALANCED


def test_filter_recently_unloaded():
    brokers, bundles = ten_bundles(with_other_broker=False)
    ld = load(brokers, bundle_data=bundles, recently_unloaded={"bundle-10": 1, "bundle-9": 1})
    decision = shed(ld)
    assert picked(decision, "broker-1") == ["bundle-8", "bundle-7"]
    skipped = {c.bundle: text(c.why) for c in decision.candidates if not c.chosen}
    assert "recently unloaded" in skipped["bundle-10"]
    assert "recently unloaded" in skipped["bundle-9"]


# --- beyond the Java test -----------------------------------------------------------------------
def test_registered_by_name():
    assert isinstance(SHEDDING.create("OverloadShedder"), OverloadShedder)
    assert isinstance(
        SHEDDING.create("org.apache.pulsar.broker.loadbalance.impl.OverloadShedder"),
        OverloadShedder,
    )


def test_threshold_equality_triggers():
    """``currentUsage < overloadThreshold`` skips, so exactly the threshold is overloaded."""
    brokers = {
        "b": broker(cpu=(85, 100), bundle_names=("x/y/a", "x/y/b"), tp_in=100 * MB),
    }
    bundles = {"x/y/a": bundle_data(10 * MB), "x/y/b": bundle_data(5 * MB)}
    decision = shed(load(brokers, bundle_data=bundles))
    assert picked(decision, "b") == ["x/y/a"]
    # need = 100 MB/s x 5 % = 5 MB/s: the first bundle (10 MB/s) already covers it
    assert decision.brokers["b"].numbers["need"] == pytest.approx(5 * MB)


def test_usage_is_weighted_so_direct_memory_does_not_count_by_default():
    """PIP-358: OverloadShedder uses the weighted usage; directMemory weight defaults to 0."""
    brokers = {
        "b": broker(
            direct_memory=(99, 100), cpu=(10, 100), bundle_names=("x/y/a", "x/y/b"), tp_in=MB
        )
    }
    bundles = {"x/y/a": bundle_data(MB), "x/y/b": bundle_data(MB)}
    ld = load(brokers, bundle_data=bundles)
    assert shed(ld).selections == ()
    weighted = CONF.with_values(loadBalancerDirectMemoryResourceWeight=1.0)
    assert len(shed(ld, weighted).selections) == 1


def test_no_minimum_throughput_guard():
    """Unlike ThresholdShedder, a tiny need still sheds one bundle."""
    brokers = {"b": broker(cpu=(90, 100), bundle_names=("x/y/a", "x/y/b"), tp_in=10.0)}
    bundles = {"x/y/a": bundle_data(4.0), "x/y/b": bundle_data(6.0)}
    decision = shed(load(brokers, bundle_data=bundles))
    assert picked(decision, "b") == ["x/y/b"]


def test_system_namespace_bundles_are_never_shed():
    heartbeat = "pulsar/broker-a:8080/0x00000000_0xffffffff"
    brokers = {"b": broker(cpu=(99, 100), bundle_names=(heartbeat, "x/y/a"), tp_in=MB)}
    bundles = {heartbeat: bundle_data(100 * MB), "x/y/a": bundle_data(MB)}
    decision = shed(load(brokers, bundle_data=bundles))
    assert picked(decision, "b") == ["x/y/a"]
    why = {c.bundle: text(c.why) for c in decision.candidates}
    assert "system namespace" in why[heartbeat]


def test_all_bundles_recently_unloaded_explains_nothing_selected():
    brokers = {"b": broker(cpu=(99, 100), bundle_names=("x/y/a", "x/y/b"), tp_in=MB)}
    bundles = {"x/y/a": bundle_data(MB), "x/y/b": bundle_data(MB)}
    ld = load(brokers, bundle_data=bundles, recently_unloaded={"x/y/a": 1, "x/y/b": 1})
    decision = shed(ld)
    assert decision.selections == ()
    v = decision.brokers["b"]
    assert (v.label, v.reason) == (Label.SKIP, Reason.NO_BUNDLES)
    assert "none of its 2 bundles can be shed" in text(v.why)
    assert any("nothing selected" in n and "b" in n for n in map(text, decision.notes))


def test_every_broker_gets_a_verdict():
    brokers, bundles = ten_bundles(with_other_broker=True)
    brokers["idle"] = broker()
    decision = shed(load(brokers, bundle_data=bundles))
    assert set(decision.brokers) == {"broker-1", "another-broker", "idle"}
    for v in decision.brokers.values():
        assert text(v.why) and v.label is not None and v.reason is not None
        assert "usage" in v.numbers

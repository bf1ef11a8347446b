"""ThresholdShedder.

Ported from Pulsar's ``ThresholdShedderTest`` (newest version in the index, with the
lower-boundary tests; pulsar-broker/src/test/java/org/apache/pulsar/broker/loadbalance/impl/),
scenario by scenario with the same numbers. ``testPrintResourceUsage`` tests ``LocalBrokerData``
formatting, not the shedder, and is left to the model tests.

In Java each test gets a fresh ``ThresholdShedder`` (``@BeforeMethod``), and the lower-boundary
tests call a second fresh instance: here every call starts from ``initial_memory()`` unless the
test is about memory. Then: the EWMA carried across calls, the lower-boundary double update, the
``>=`` edge, the minimum-throughput guard and the explanations.
"""

from __future__ import annotations

from types import MappingProxyType

import pytest

from lbctl import versions
from lbctl.config import MB, Settings
from lbctl.explain.words import text
from lbctl.model.decision import Label, Reason
from lbctl.strategies.builtin import SHEDDING
from lbctl.strategies.shedding.threshold import ThresholdShedder
from tests.factories import broker, bundle_data, load

CONF = Settings.defaults().with_values(lowerBoundarySheddingEnabled=False)
LOWER = CONF.with_values(lowerBoundarySheddingEnabled=True)


def shed(ld, conf: Settings = CONF, memory=None):
    shedder = ThresholdShedder()
    return shedder.shed(ld, conf, shedder.initial_memory() if memory is None else memory)


def picked(decision, broker_name: str) -> list[str]:
    return [s.bundle for s in decision.selections if s.broker == broker_name]


def ten_bundles():
    """broker-1 (99.9 % bandwidth) owns bundle-1..10 at i MB/s in and out; broker2 (idle) owns
    broker2-bundle-11..20 with the same data (``testBrokerWithMultipleBundles``)."""
    bundles = {}
    total = 0.0
    for i in range(1, 11):
        tp = i * 1024 * 1024
        data = bundle_data(tp, tp)
        bundles[f"bundle-{i}"] = data
        bundles[f"broker2-bundle-{10 + i}"] = data
        total += tp
    brokers = {
        "broker-1": broker(
            bandwidth_in=(999, 1000),
            bandwidth_out=(999, 1000),
            bundle_names=tuple(f"bundle-{i}" for i in range(1, 11)),
            tp_in=total,
            tp_out=total,
        ),
        "broker2": broker(bundle_names=tuple(f"broker2-bundle-{10 + i}" for i in range(1, 11))),
    }
    return brokers, bundles


def eleven_brokers(*, low: int | None, many: int | None = None, shared_names: bool = True):
    """The lower-boundary clusters: ``broker-0..10``; broker ``low`` idle, the others at 80 %
    bandwidth and 100 MB/s in + out per bundle; with ``many`` set only that broker has 10 bundles
    (the others 1), otherwise every broker has 10 (plus, with ``shared_names``, the data-less
    ``bundle-0..9`` names the Java test also adds)."""
    tp = 100 * 1024 * 1024
    brokers = {}
    bundles = {}
    for i in range(11):
        idle = i == low
        n = 10 if many is None or i == many else 1
        names = []
        for j in range(n):
            if shared_names:
                names.append(f"bundle-{j}")
            name = f"broker-{i}-bundle-{j}"
            bundles[name] = bundle_data(0 if idle else tp, 0 if idle else tp)
            names.append(name)
        brokers[f"broker-{i}"] = broker(
            bandwidth_in=(0 if idle else 80, 100),
            bandwidth_out=(0 if idle else 80, 100),
            bundle_names=tuple(names),
            tp_in=0 if idle else tp,
            tp_out=0 if idle else tp,
        )
    return brokers, bundles


# --- ThresholdShedderTest -----------------------------------------------------------------------
def test_no_brokers():
    decision, memory = shed(load({}, bundle_data={}))
    assert decision.selections == ()
    assert dict(memory) == {}
    assert any("no brokers" in n for n in map(text, decision.notes))


def test_brokers_with_no_bundles():
    ld = load(
        {"broker-1": broker(bandwidth_in=(999, 1000), bandwidth_out=(999, 1000))}, bundle_data={}
    )
    decision, _ = shed(ld)
    assert decision.selections == ()
    # a lone broker is the average: it can never be 10 % above it
    assert decision.brokers["broker-1"].reason == Reason.BALANCED


def test_broker_not_reach_threshold():
    ld = load(
        {
            "broker-1": broker(
                bandwidth_in=(500, 1000), bandwidth_out=(500, 1000), bundle_names=("bundle-1",)
            )
        },
        bundle_data={"bundle-1": bundle_data(1000, 1000)},
    )
    decision, _ = shed(ld)
    assert decision.selections == ()
    v = decision.brokers["broker-1"]
    assert text(v.why) == ("usage 50.0% (smoothed 50.0%) is below average 50.0% + threshold 10% = 60.0%")


def test_broker_reach_threshold():
    broker1 = broker(
        cpu=(140, 100),
        memory=(10, 100),
        direct_memory=(10, 100),
        bandwidth_in=(500, 1000),
        bandwidth_out=(500, 1000),
        bundle_names=("bundle-1", "bundle-2"),
        tp_in=1.7976931348623157e308,  # Double.MAX_VALUE
    )
    broker2 = broker(
        cpu=(10, 100),
        memory=(10, 100),
        direct_memory=(10, 100),
        bandwidth_in=(500, 1000),
        bandwidth_out=(500, 1000),
        bundle_names=("bundle-3", "bundle-4"),
    )
    ld = load(
        {"broker-2": broker1, "broker-3": broker2},
        bundle_data={"bundle-2": bundle_data(1000, 1000)},
    )
    decision, _ = shed(ld)
    assert decision.selections != ()
    # usage 140 % vs 50 %: average 95 %, broker-2 ≥ 105 %; only bundle-2 has bundle data
    assert picked(decision, "broker-2") == ["bundle-2"]
    assert decision.brokers["broker-2"].usage == pytest.approx(1.4)
    why = {c.bundle: text(c.why) for c in decision.candidates}
    assert "no bundle data" in why["bundle-1"]


def test_broker_with_single_bundle():
    ld = load(
        {
            "broker-1": broker(
                bandwidth_in=(999, 1000), bandwidth_out=(999, 1000), bundle_names=("bundle-1",)
            )
        },
        bundle_data={"bundle-1": bundle_data(1000, 1000)},
    )
    decision, _ = shed(ld)
    assert decision.selections == ()


def test_broker_with_multiple_bundles():
    brokers, bundles = ten_bundles()
    decision, _ = shed(load(brokers, bundle_data=bundles))
    # average (99.9 + 0) / 2 %; offload (0.999 - 0.4995 - 0.1 + 0.05) x 110 MB/s ≈ 49.4 MB/s
    assert picked(decision, "broker-1") == ["bundle-10", "bundle-9", "bundle-8"]
    assert picked(decision, "broker2") == []


def test_filter_recently_unloaded():
    brokers, bundles = ten_bundles()
    ld = load(brokers, bundle_data=bundles, recently_unloaded={"bundle-10": 1, "bundle-9": 1})
    decision, _ = shed(ld)
    assert picked(decision, "broker-1") == ["bundle-8", "bundle-7", "bundle-6", "bundle-5"]


def test_lower_boundary_shedding():
    # 10 brokers at 80 %, one at 0 %: average 72.7 %, nobody reaches 82.7 %.
    brokers, bundles = eleven_brokers(low=10)
    ld = load(brokers, bundle_data=bundles)
    decision, _ = shed(ld, CONF)
    assert decision.selections == ()
    assert any("lowerBoundarySheddingEnabled is false" in n for n in map(text, decision.notes))
    decision, _ = shed(ld, LOWER)
    assert decision.selections != ()
    # need = 200 MB/s x 10 % x 0.5 = 10 MB/s, exactly the minimum: it proceeds (strict >)
    (sel,) = decision.selections
    assert sel.reason == Reason.UNDERLOADED
    first_busy = next(b for b in ld.brokers if b != "broker-10")
    assert sel.broker == first_busy  # equal usages: the first broker met wins
    v = decision.brokers[first_busy]
    assert (v.label, v.reason) == (Label.SUCCESS, Reason.UNDERLOADED)
    assert v.numbers["lowerBoundaryNeed"] == 10 * MB
    assert decision.brokers["broker-10"].reason == Reason.UNDERLOADED


def test_lower_boundary_shedding_no_broker_to_offload():
    brokers, bundles = eleven_brokers(low=None)
    # all at 80 % with 80 MB/s per bundle in the Java test; the throughput does not matter here
    ld = load(brokers, bundle_data=bundles)
    decision, _ = shed(ld, CONF)
    assert decision.selections == ()
    decision, _ = shed(ld, LOWER)
    assert decision.selections == ()
    assert any("no broker is below the lower bound" in n for n in map(text, decision.notes))


def test_lower_boundary_shedding_broker_with_one_bundle():
    brokers, bundles = eleven_brokers(low=5, many=3, shared_names=False)
    ld = load(brokers, bundle_data=bundles)
    decision, _ = shed(ld, CONF)
    assert decision.selections == ()
    decision, _ = shed(ld, LOWER)
    assert len(decision.selections) == 1
    assert decision.selections[0].broker == "broker-3"


# --- beyond the Java test -----------------------------------------------------------------------
def test_registered_by_name():
    assert isinstance(SHEDDING.create("ThresholdShedder"), ThresholdShedder)


def two_brokers(a_pct: float, b_pct: float, *, tp: float = 1000 * MB):
    brokers = {
        "a": broker(bandwidth_in=(a_pct, 100), bundle_names=("x/y/a1", "x/y/a2"), tp_in=tp),
        "b": broker(bandwidth_in=(b_pct, 100), bundle_names=("x/y/b1", "x/y/b2"), tp_in=tp),
    }
    bundles = {
        "x/y/a1": bundle_data(tp * 0.6),
        "x/y/a2": bundle_data(tp * 0.4),
        "x/y/b1": bundle_data(tp * 0.6),
        "x/y/b2": bundle_data(tp * 0.4),
    }
    return load(brokers, bundle_data=bundles)


def test_memory_carries_the_ewma_across_calls():
    """Pulsar's brokerAvgResourceUsage: first sample as is, then old x 0.9 + new x 0.1."""
    first, memory = shed(two_brokers(90, 10))
    assert dict(memory) == pytest.approx({"a": 0.9, "b": 0.1})
    assert picked(first, "a") == ["x/y/a1"]
    # The load flips, but history keeps a above the trigger: Pulsar sheds a again.
    second, memory2 = shed(two_brokers(10, 90), memory=memory)
    assert dict(memory2) == pytest.approx({"a": 0.82, "b": 0.18})
    v = second.brokers["a"]
    assert v.usage == pytest.approx(0.1)
    assert v.score == pytest.approx(0.82)
    assert "usage 10.0% (smoothed 82.0%)" in text(v.why)
    assert picked(second, "a") != []
    assert picked(second, "b") == []
    # A fresh instance (no memory) sees the flipped load as it is.
    fresh, _ = shed(two_brokers(10, 90))
    assert picked(fresh, "a") == [] and picked(fresh, "b") != []


def test_memory_is_immutable_and_keeps_departed_brokers():
    before = MappingProxyType({"a": 0.5, "gone": 0.7})
    _, after = shed(two_brokers(50, 50), memory=before)
    assert dict(before) == {"a": 0.5, "gone": 0.7}  # input untouched
    assert isinstance(after, MappingProxyType)
    assert after["gone"] == 0.7  # Pulsar never prunes the map
    assert after["b"] == pytest.approx(0.5)  # a new broker starts from its own usage


def _lower(version: str) -> Settings:
    return Settings.defaults(versions.resolve(version)).with_values(
        lowerBoundarySheddingEnabled=True)


def test_lower_boundary_updates_the_ewma_twice_before_4_1():
    """Up to Pulsar 4.0 tryLowerBoundaryShedding calls getBrokerAvgUsage() again, smoothing every
    usage twice; PR #24064 (4.1) passes it the cycle's average instead: smoothed once."""
    brokers, bundles = eleven_brokers(low=10)
    ld = load(brokers, bundle_data=bundles)
    prior = MappingProxyType({f"broker-{i}": 0.5 for i in range(11)})
    _, without = shed(ld, CONF, memory=prior)
    _, twice = shed(ld, _lower("4.0"), memory=prior)
    _, once_41 = shed(ld, _lower("4.1"), memory=prior)
    once = 0.5 * 0.9 + 0.1 * 0.8
    assert without["broker-0"] == pytest.approx(once)
    assert twice["broker-0"] == pytest.approx(once * 0.9 + 0.1 * 0.8)
    assert twice["broker-10"] == pytest.approx(0.5 * 0.9 * 0.9)
    assert once_41["broker-0"] == pytest.approx(once)
    assert once_41["broker-10"] == pytest.approx(0.5 * 0.9)


def test_lower_boundary_second_average_can_find_a_broker_below():
    """With history, only the second smoothing takes the idle broker below average - 10 %: Pulsar
    4.0 sheds, 4.1 (one smoothing, PR #24064) does not."""
    brokers, bundles = eleven_brokers(low=10)
    ld = load(brokers, bundle_data=bundles)
    prior = MappingProxyType({f"broker-{i}": 0.5 for i in range(11)})
    # first pass: busy 0.53, idle 0.45, average 0.5227: the idle one is not below 0.4227
    # second pass: busy 0.557, idle 0.405, average 0.5432: it is below 0.4432
    decision, _ = shed(ld, _lower("4.0"), memory=prior)
    assert len(decision.selections) == 1
    assert decision.numbers["lowerBound"] == pytest.approx(
        (10 * (0.53 * 0.9 + 0.08) + 0.405) / 11 - 0.1
    )
    assert any("second time" in n for n in map(text, decision.notes))
    decision, _ = shed(ld, _lower("4.1"), memory=prior)
    assert decision.selections == ()
    assert decision.numbers["lowerBound"] == pytest.approx((10 * 0.53 + 0.45) / 11 - 0.1)
    assert any("PR #24064" in n for n in map(text, decision.notes))


def test_threshold_equality_triggers():
    """``currentUsage < avgUsage + threshold`` skips, so reaching it exactly sheds."""
    conf = CONF.with_values(loadBalancerBrokerThresholdShedderPercentage=25)
    decision, _ = shed(two_brokers(75, 25), conf)
    # average 50 %, trigger 75 %: a is exactly at it and offloads 5 % of 1000 MB/s
    assert picked(decision, "a") == ["x/y/a1"]
    assert decision.brokers["a"].numbers["need"] == pytest.approx(50 * MB)


def test_minimum_throughput_guard():
    decision, _ = shed(two_brokers(90, 10, tp=20 * MB))
    # offload (0.9 - 0.5 - 0.1 + 0.05) x 20 MB/s = 7 MB/s < 10 MB/s
    assert decision.selections == ()
    v = decision.brokers["a"]
    assert (v.label, v.reason) == (Label.SKIP, Reason.OVERLOADED)
    assert "needs 7.0 MB/s < loadBalancerBundleUnloadMinThroughputThreshold 10 MB/s" in text(v.why)
    assert any("nothing selected" in n for n in map(text, decision.notes))
    lower_min = CONF.with_values(loadBalancerBundleUnloadMinThroughputThreshold=5)
    decision, _ = shed(two_brokers(90, 10, tp=20 * MB), lower_min)
    assert picked(decision, "a") == ["x/y/a1"]


def test_single_bundle_broker_explained():
    brokers = {
        "a": broker(bandwidth_in=(90, 100), bundle_names=("x/y/a1",), tp_in=1000 * MB),
        "b": broker(bandwidth_in=(10, 100), bundle_names=("x/y/b1",), tp_in=MB),
    }
    ld = load(brokers, bundle_data={"x/y/a1": bundle_data(1000 * MB), "x/y/b1": bundle_data(MB)})
    decision, _ = shed(ld)
    assert decision.selections == ()
    v = decision.brokers["a"]
    assert (v.label, v.reason) == (Label.SKIP, Reason.NO_BUNDLES)
    assert "only 1 bundle: Pulsar never sheds a single-bundle broker" in text(v.why)


def test_zero_average_does_nothing_even_with_lower_boundary():
    brokers, bundles = eleven_brokers(low=None)
    idle = {name: broker(bundle_names=b.bundles) for name, b in brokers.items()}
    decision, _ = shed(load(idle, bundle_data=bundles), LOWER)
    assert decision.selections == ()
    assert any("average usage is 0" in n for n in map(text, decision.notes))
    assert all(v.label == Label.SKIP for v in decision.brokers.values())


def test_verdicts_for_every_broker_with_numbers():
    brokers, bundles = ten_bundles()
    decision, _ = shed(load(brokers, bundle_data=bundles))
    assert set(decision.brokers) == {"broker-1", "broker2"}
    v1 = decision.brokers["broker-1"]
    assert (v1.label, v1.reason) == (Label.SUCCESS, Reason.OVERLOADED)
    assert v1.numbers["average"] == pytest.approx(0.4995, abs=1e-6)
    assert v1.numbers["selected"] == 54 * MB
    v2 = decision.brokers["broker2"]
    assert (v2.label, v2.reason) == (Label.SKIP, Reason.BALANCED)
    assert "is below average 50.0% + threshold 10% = 60.0%" in text(v2.why)
    assert decision.numbers["trigger"] == pytest.approx(0.5995, abs=1e-6)
    chosen = [c.bundle for c in decision.candidates if c.chosen]
    assert chosen == ["bundle-10", "bundle-9", "bundle-8"]
    not_needed = [c for c in decision.candidates if c.bundle == "bundle-7"]
    assert text(not_needed[0].why).startswith("not needed: 54.0 MB/s already selected ≥ 49.4 MB/s")


def test_the_selected_note_names_the_shed_brokers_in_the_brokers_order() -> None:
    """``note-selected`` lists the brokers bundles were selected from in ``LoadData``'s broker
    order (the ``ConcurrentHashMap`` the shedder walks), however many brokers there are."""
    brokers, bundles = {}, {}
    for b in range(40):
        names = tuple(f"t/ns/0x{b:04x}{k:04x}_0x{b:04x}{k + 1:04x}" for k in range(3))
        for k, name in enumerate(names):
            tp = (k + 1) * 4 * MB
            bundles[name] = bundle_data(tp, tp)
        hot = b % 3 == 1  # every third broker over the average + threshold
        brokers[f"broker-{b}:8080"] = broker(
            bandwidth_in=(950 if hot else 100, 1000), bandwidth_out=(950 if hot else 100, 1000),
            bundle_names=names, tp_in=24 * MB, tp_out=24 * MB)
    ld = load(brokers, bundle_data=bundles)
    decision, _ = shed(ld)
    sources = {s.broker for s in decision.selections}
    assert len(sources) == 13
    note = next(n for n in decision.notes if n.code == "note-selected")
    assert list(note.names) == [b for b in ld.brokers if b in sources]
    assert list(ld.brokers) != list(brokers)  # the map's order, not the insertion order

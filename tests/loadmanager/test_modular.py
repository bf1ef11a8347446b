"""The load-manager cycle around the strategies (ModularLoadManagerImpl's shedding cases)."""

from __future__ import annotations

from lbctl.config import Settings
from lbctl.explain.words import text
from lbctl.loadmanager.modular import ModularLoadManager as LoadManager
from lbctl.model.load import ResourceUsage
from lbctl.records import replace
from lbctl.strategies.builtin import PLACEMENT, SHEDDING
from tests.factories import broker, state, stats

B1 = "1/1/1/0x00000000_0xffffffff"
B2 = "2/2/2/0x00000000_0xffffffff"
MINUTE = 60_000


def manager(shedding: str = "OverloadShedder", placement: str = "LeastLongTermMessageRate"):
    return LoadManager(SHEDDING.create(shedding), PLACEMENT.create(placement),
                       PLACEMENT.create("RoundRobinBrokerSelector"), seed=1)


def two_brokers(cpu: float, now: int):
    primary = broker(cpu=(cpu, 100), bundles={B1: stats(100), B2: stats(200)})
    secondary = broker(cpu=(10, 100))
    return state({"primary:8080": primary, "secondary:8080": secondary}, now=now)


def unloaded(result) -> list[tuple[str, str, str | None]]:
    return [(o.selection.bundle, o.selection.broker, o.destination) for o in result.unloads]


def test_load_shedding_ladder() -> None:
    """ModularLoadManagerImplTest#testLoadShedding with OverloadShedder.

    80 % CPU is below the 85 % threshold: nothing. At 90 % the "most expensive" bundle goes first
    (both carry no throughput, so the tie falls to Java's hash order: bundle 2), then the other one
    on the next cycle, then nothing while both are in the grace period; once the grace records are
    cleared, a bundle is unloaded again.
    """
    lm = manager()
    conf = Settings.defaults()
    r = lm.run_cycle(two_brokers(80, 0), conf)
    assert unloaded(r) == []
    r = lm.run_cycle(two_brokers(90, MINUTE), conf, r.memory)
    assert unloaded(r) == [(B2, "primary:8080", "secondary:8080")]
    r = lm.run_cycle(two_brokers(90, 2 * MINUTE), conf, r.memory)
    assert unloaded(r) == [(B1, "primary:8080", "secondary:8080")]
    r = lm.run_cycle(two_brokers(90, 3 * MINUTE), conf, r.memory)
    assert unloaded(r) == []
    assert r.decision.selections == ()
    assert [text(c.why) for c in r.decision.candidates] == [
        "recently unloaded (within loadBalancerSheddingGracePeriodMinutes)"] * 2
    assert r.decision.brokers["primary:8080"].reason == "NoBundles"
    cleared = replace(r.memory, recently_unloaded={})
    r = lm.run_cycle(two_brokers(90, 4 * MINUTE), conf, cleared)
    assert len(r.unloads) == 1


def test_grace_period_expires() -> None:
    lm = manager()
    conf = Settings.defaults()
    r = lm.run_cycle(two_brokers(90, 0), conf)
    r = lm.run_cycle(two_brokers(90, MINUTE), conf, r.memory)
    assert {o.selection.bundle for o in r.unloads} == {B1}
    # 30 minutes later the first record is still inside the grace period (strict <) ...
    r2 = lm.run_cycle(two_brokers(90, 30 * MINUTE), conf, r.memory)
    assert r2.expired_grace == ()
    # ... and one millisecond after that it expires.
    r3 = lm.run_cycle(two_brokers(90, 30 * MINUTE + 1), conf, r.memory)
    assert r3.expired_grace == (B2,)
    assert unloaded(r3) == [(B2, "primary:8080", "secondary:8080")]


def test_single_broker_never_sheds() -> None:
    st = state({"only:8080": broker(cpu=(99, 100), bundles={B1: stats(1), B2: stats(2)})})
    r = manager().run_cycle(st, Settings.defaults())
    assert r.decision is None
    assert "only 1 broker" in (r.gate or "")


def test_shedding_disabled_gate() -> None:
    conf = Settings.defaults().with_values(loadBalancerSheddingEnabled="false")
    r = manager().run_cycle(two_brokers(95, 0), conf)
    assert r.outcomes == () and "loadBalancerSheddingEnabled" in (r.gate or "")


def test_excluded_namespace_is_skipped() -> None:
    conf = Settings.defaults().with_values(loadBalancerSheddingExcludedNamespaces="2/2/2")
    r = manager().run_cycle(two_brokers(95, 0), conf)
    skipped = {o.selection.bundle: text(o.skipped) for o in r.outcomes}
    assert "loadBalancerSheddingExcludedNamespaces" in (skipped[B2] or "")


def test_destination_equal_to_owner_is_skipped() -> None:
    """When placement can only pick the owner (the other broker holds more than
    loadBalancerBrokerMaxTopics topics), the unload is skipped, not issued."""
    primary = broker(cpu=(70, 100), bundles={B1: stats(100, tp_in=50e6), B2: stats(200, tp_in=50e6)})
    other = replace(broker(cpu=(30, 100), bundles={"x/y/0x00000000_0xffffffff": stats(1)}),
                    numTopics=60000)
    st = state({"primary:8080": primary, "secondary:8080": other})
    r = manager("ThresholdShedder").run_cycle(st, Settings.defaults())
    assert r.outcomes
    for o in r.outcomes:
        assert o.selection.broker == "primary:8080"
        assert text(o.skipped) == "the destination broker is the current owner"
        assert o.destination == "primary:8080"
    assert r.unloads == ()


def test_distribute_evenly_filter_prefers_brokers_without_the_namespace() -> None:
    ns_bundle = "t/ns/0x00000000_0x80000000"
    hot = broker(cpu=(95, 100), bundles={ns_bundle: stats(500, tp_in=5e6),
                                         "t/ns/0x80000000_0xffffffff": stats(10, tp_in=1e5)})
    owns_ns = broker(cpu=(10, 100), bundles={"t/ns/0xc0000000_0xffffffff": stats(1)})
    empty = broker(cpu=(50, 100))
    st = state({"hot:8080": hot, "has-ns:8080": owns_ns, "idle:8080": empty})
    r = manager().run_cycle(st, Settings.defaults())
    (o,) = r.unloads
    assert o.destination == "idle:8080"
    step = o.placement.steps[-1]
    assert step.name == "loadBalancerDistributeBundlesEvenlyEnabled"
    assert "has-ns:8080" not in step.after


def test_overload_recheck_uses_all_brokers() -> None:
    """If the pick is over loadBalancerBrokerOverloadedThresholdPercentage, placement runs again
    over all brokers and its answer wins."""
    hot = broker(cpu=(99, 100), bundles={B1: stats(100, tp_in=1e6), B2: stats(200, tp_in=2e6)})
    # 'busy' owns none of the namespace (so the even-distribution filter keeps only it) but is
    # itself overloaded; 'calm' owns a bundle of namespace 2/2/2 … and is the better broker.
    busy = broker(cpu=(90, 100))
    calm = broker(cpu=(20, 100), bundles={"2/2/2/0x00000000_0x00000001": stats(1)})
    st = state({"hot:8080": hot, "busy:8080": busy, "calm:8080": calm})
    conf = Settings.defaults()
    r = manager().run_cycle(st, conf)
    by_bundle = {o.selection.bundle: o for o in r.outcomes}
    o = by_bundle[B2]
    assert o.placement.decision.broker == "busy:8080"
    assert o.placement.recheck is not None
    assert o.destination == "calm:8080"


def test_sequence_carries_threshold_history() -> None:
    """A sequence replays cycles: ThresholdShedder's EWMA is carried from one to the next."""
    lm = manager("ThresholdShedder")
    conf = Settings.defaults()

    def st(u1: float, u2: float, now: int):
        b1 = broker(cpu=(u1, 100), bundles={B1: stats(100, tp_in=50e6), B2: stats(100, tp_in=50e6)})
        b2 = broker(cpu=(u2, 100), bundles={"3/3/3/0x00000000_0xffffffff": stats(1, tp_in=1e6)})
        return state({"b1:8080": b1, "b2:8080": b2}, now=now)

    results = lm.run_sequence([st(90, 10, 0), st(50, 50, MINUTE)], [conf, conf])
    first, second = results
    assert first.unloads
    v = second.decision.brokers["b1:8080"]
    # 0.9 * 0.9 + 0.1 * 0.5 = 0.86: the smoothed score lags the raw 50 %.
    assert abs(v.score - 0.86) < 1e-9
    assert second.unloads, "history weighting keeps shedding the formerly hot broker"


def test_cpu_resource_usage_float32() -> None:
    assert ResourceUsage(999, 1000).percent == 99.9000015258789

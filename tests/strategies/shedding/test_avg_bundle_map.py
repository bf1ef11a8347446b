"""AvgShedder's bundle → broker map before and after PR #26246 (4.0.14, 4.2.5): the
``avgShedderBundleMap`` variant.

Before it (AvgShedder at d76ae6831a1c) the map is keyed by the bundle's ``BundleData`` object and
never emptied, so a plan or a random pick of an earlier unload attempt answers a later
``selectBroker`` of the bundle — a lookup after the leader's cycle — for as long as the leader
keeps that ``BundleData`` (``ModularLoadManagerImpl.updateBundleData`` samples it in place and
drops it once no broker reports the bundle). From it the map is keyed by name and cleared when the
attempt completes, so the same lookup draws among the candidates.

The lookup after a cycle is what the sandbox's leader runs for an unowned bundle
(``lbctl.sandbox.leader.Leader.place``): ``select_broker`` over the last cycle's load data and
placement memory, with no plan of its own.
"""

from __future__ import annotations

from random import Random

from lbctl.config import Settings
from lbctl.loadmanager.modular import ModularCycleResult, ModularLoadManager
from lbctl.model.cluster import ClusterState
from lbctl.model.load import NamespaceBundleStats
from lbctl.strategies.base import PlacementRequest
from lbctl.strategies.builtin import PLACEMENT, SHEDDING
from lbctl.strategies.shedding.avg import AvgPicks
from lbctl.versions import Version, profile_for
from tests.factories import broker, state, stats

HI, MID, LO = "hi:8080", "mid:8080", "lo:8080"
NOW = 1_763_000_000_000
MOVED = "t/hot/0x00000007_0x00000008"  # the bundle AvgShedder sheds from HI to LO


def _settings(version: str, **values: object) -> Settings:
    """``version``'s settings, hit counts of one; distribute-evenly off, so that a broker that
    already serves the namespace stays a candidate of the lookup."""
    return Settings.defaults(profile_for(Version.parse(version))).with_values(
        loadBalancerAvgShedderHitCountHighThreshold=1,
        loadBalancerAvgShedderHitCountLowThreshold=1,
        loadBalancerDistributeBundlesEvenlyEnabled=False, **values)


def _hot(n: int = 8) -> dict[str, NamespaceBundleStats]:
    return {f"t/hot/0x{i:08x}_0x{i + 1:08x}": stats(750, 750) for i in range(n)}


def _before(now: int = NOW) -> ClusterState:
    """HI at 70 % CPU with eight bundles, MID at 40 %, LO at 10 %: LO pairs with HI, and
    AvgShedder sheds one of HI's bundles to LO."""
    return state({HI: broker(cpu=(70, 100), bundles=_hot()),
                  MID: broker(cpu=(40, 100), bundles={"t/mid/0x00000000_0xffffffff":
                                                      stats(300, 300)}),
                  LO: broker(cpu=(10, 100), bundles={"t/cold/0x00000000_0xffffffff":
                                                     stats(5, 5)})}, now=now)


def _after(now: int, *, moved_reported: bool = True) -> ClusterState:
    """A minute on: the moved bundle on LO (or reported by no broker, in transit), the three
    brokers close enough that no pair is kept (nothing shed)."""
    hot = _hot()
    moved = hot.pop(MOVED)
    cold = {"t/cold/0x00000000_0xffffffff": stats(5, 5)}
    if moved_reported:
        cold[MOVED] = moved
    return state({HI: broker(cpu=(40, 100), bundles=hot),
                  MID: broker(cpu=(40, 100), bundles={"t/mid/0x00000000_0xffffffff":
                                                      stats(300, 300)}),
                  LO: broker(cpu=(38, 100), bundles=cold)}, now=now)


def _manager(seed: int = 0) -> ModularLoadManager:
    return ModularLoadManager(SHEDDING.create("AvgShedder"), PLACEMENT.create("AvgShedder"),
                              PLACEMENT.create("RoundRobinBrokerSelector"), seed=seed)


def _lookup(lm: ModularLoadManager, r: ModularCycleResult, settings: Settings,
            bundle: str = MOVED) -> tuple[str | None, str]:
    trace, _, _ = lm.select_broker(bundle, r.load, settings, r.memory.placement,
                                   r.memory.round_robin)
    why = trace.decision.why
    assert why is not None
    return trace.broker, why.code


def _sequence(version: str, *, moved_reported: bool = True, seed: int = 0
              ) -> tuple[ModularLoadManager, list[ModularCycleResult], Settings]:
    conf = _settings(version)
    lm = _manager(seed)
    first = lm.run_cycle(_before(), conf)
    assert first.decision is not None
    assert [(s.bundle, s.destination) for s in first.decision.selections] == [(MOVED, LO)]
    assert [(o.destination, o.skipped) for o in first.outcomes] == [(LO, None)]
    second = lm.run_cycle(_after(NOW + 60_000, moved_reported=moved_reported), conf,
                          first.memory)
    assert second.decision is not None and not second.decision.selections
    results = [first, second]
    if not moved_reported:  # the bundle comes back: the leader makes it a new BundleData
        results.append(lm.run_cycle(_after(NOW + 120_000), conf, second.memory))
    return lm, results, conf


def test_before_pr_26246_a_later_lookup_reuses_the_stale_plan() -> None:
    """4.1.3: the plan of the first cycle (MOVED → LO) is still in the map a cycle later, and a
    lookup of the bundle answers LO whatever the draw would have been."""
    for seed in range(4):
        lm, (_, second), conf = _sequence("4.1.3", seed=seed)
        assert second.memory.placement == AvgPicks(kept={MOVED: LO})
        assert _lookup(lm, second, conf) == (LO, "kept")


def test_from_pr_26246_the_same_lookup_draws() -> None:
    """4.2.5 (the default), same sequence: the map was cleared when the attempt completed, so
    the lookup is a uniform pick among the candidates sorted by name; seed 5 draws MID."""
    lm, (_, second), conf = _sequence("4.2.5", seed=5)
    assert second.memory.placement == AvgPicks()
    assert _lookup(lm, second, conf) == (MID, "no-plan")


def test_a_bundle_the_leader_dropped_starts_afresh() -> None:
    """4.1.3: a cycle in which no broker reports the bundle drops its BundleData; when it is
    reported again it is a new object, the old entry out of reach: the lookup draws (MID with
    seed 5), as on 4.2.5."""
    lm, results, conf = _sequence("4.1.3", moved_reported=False, seed=5)
    assert results[1].memory.placement == AvgPicks()
    assert _lookup(lm, results[2], conf) == (MID, "no-plan")


def test_a_stale_random_pick_is_kept_too() -> None:
    """4.1.3: the random pick ``selectBroker`` stores when the plan is filtered out (LO has too
    many topics: ``loadBalancerBrokerMaxTopics``) outlives the attempt and answers the next
    lookup — the owner HI, though LO, the planned broker, is a candidate again by then; on
    4.2.5 nothing is kept."""
    def run(version: str) -> tuple[ModularLoadManager, ModularCycleResult, Settings]:
        conf = _settings(version, loadBalancerBrokerMaxTopics=10)
        cold = {"t/cold/0x00000000_0xffffffff": stats(5, 5, topics=50)}
        st = state({HI: broker(cpu=(95, 100), bundles=_hot()),
                    LO: broker(cpu=(10, 100), bundles=cold)}, now=NOW)
        lm = ModularLoadManager(SHEDDING.create("AvgShedder"), PLACEMENT.create("AvgShedder"),
                                PLACEMENT.create("RoundRobinBrokerSelector"), seed=1)
        r = lm.run_cycle(st, conf)
        [out] = r.outcomes
        assert out.destination == HI and out.skipped is not None  # the stored pick: the owner
        return lm, r, conf.with_values(loadBalancerBrokerMaxTopics=50_000)

    lm, old, conf = run("4.1.3")
    bundle = old.outcomes[0].selection.bundle
    assert old.memory.placement == AvgPicks(kept={bundle: HI})
    assert _lookup(lm, old, conf, bundle) == (HI, "kept")
    lm, new, conf = run("4.2.5")
    assert new.memory.placement == AvgPicks()
    assert _lookup(lm, new, conf, bundle)[1] == "no-plan"


def test_a_plan_of_this_attempt_replaces_a_kept_entry() -> None:
    """4.1.3: ``findBundlesForUnloading`` puts its plan before any ``selectBroker``: a kept
    entry for a bundle planned again does not answer."""
    _, (first, _), conf = _sequence("4.1.3")
    mem = AvgPicks(kept={MOVED: MID})
    placement = PLACEMENT.create("AvgShedder")
    req = PlacementRequest((HI, MID, LO), MOVED, first.load, conf, Random(0), None, {MOVED: LO})
    d, kept = placement.select(req, mem)
    assert (d.broker, d.why.code if d.why else None) == (LO, "planned") and kept is mem
    assert placement.on_unload_attempt_completed(kept, {MOVED: LO}, conf) == \
        AvgPicks(kept={MOVED: LO})
    fixed = _settings("4.2.5")
    assert placement.on_unload_attempt_completed(kept, {MOVED: LO}, fixed) == AvgPicks()

"""AvgShedder's placement remembers its fallback pick across ``ModularLoadManagerImpl.selectBroker``'s
two asks (apache/pulsar master, ``AvgShedder.selectBroker``, PR #26246 keying the map by bundle name).

The shedder plans each bundle for the low broker of its pair. When that broker is filtered out of
the candidates (here ``loadBalancerBrokerMaxTopics``: ``filterBrokersWithLargeTopicCount``),
``AvgShedder.selectBroker`` draws a broker among the candidates and **puts** it in its
bundle → broker map. The draw is over the overload threshold, so ``selectBroker`` asks again over
every broker the namespace policies allow (the low broker among them): AvgShedder answers with the
stored draw — the owner itself — and the unload is skipped. Without the stored pick it would have
answered with the planned low broker. The map is cleared when the attempt completes, so the next
cycle starts from the plan again.
"""

from __future__ import annotations

from lbctl.config import Settings
from lbctl.loadmanager.modular import ModularLoadManager
from lbctl.strategies.builtin import PLACEMENT, SHEDDING
from lbctl.strategies.shedding.avg import AvgPicks
from tests.factories import broker, state, stats

HI, LO = "hi:8080", "lo:8080"
CONF = Settings.defaults().with_values(
    loadBalancerAvgShedderHitCountHighThreshold=1, loadBalancerAvgShedderHitCountLowThreshold=1,
    loadBalancerBrokerMaxTopics=10)


def _state(now: int = 1_763_000_000_000):
    hot = {f"t/hot/0x{i:08x}_0x{i + 1:08x}": stats(750, 750, topics=1) for i in range(8)}
    return state({HI: broker(cpu=(95, 100), bundles=hot),
                  LO: broker(cpu=(10, 100), bundles={"t/cold/0x00000000_0xffffffff":
                                                     stats(5, 5, topics=50)})}, now=now)


def _manager() -> ModularLoadManager:
    return ModularLoadManager(SHEDDING.create("AvgShedder"), PLACEMENT.create("AvgShedder"),
                              PLACEMENT.create("RoundRobinBrokerSelector"), seed=1)


def test_the_stored_fallback_pick_answers_the_second_ask() -> None:
    r = _manager().run_cycle(_state(), CONF)
    assert r.decision is not None
    [sel] = r.decision.selections
    assert (sel.broker, sel.destination) == (HI, LO)  # the plan: hi's bundle to lo
    [out] = r.outcomes
    trace = out.placement
    assert trace is not None
    first, second = trace.decision, trace.recheck
    assert first.candidates == (HI,) and first.broker == HI  # lo has too many topics
    assert first.why is not None and first.why.code == "plan-gone"
    assert second is not None and set(second.candidates) == {HI, LO}
    assert second.broker == HI and second.why is not None and second.why.code == "remembered"
    assert out.destination == HI and out.skipped is not None  # the owner: not unloaded
    # onUnloadAttemptCompleted: the map does not outlive the attempt
    assert r.memory.placement == AvgPicks()


def test_without_the_filter_the_plan_is_followed() -> None:
    r = _manager().run_cycle(_state(), CONF.with_values(loadBalancerBrokerMaxTopics=50_000))
    [out] = r.unloads
    assert out.destination == LO and out.skipped is None

"""A shedding cycle whose strategy throws: AvgShedder's ``Collections.sort`` with ``(int)
(score1 - score2)`` (the releases before PR #24954, 4.1.1 here; AvgShedder at d76ae6831a1c) meets TimSort's
"Comparison method violates its general contract!".

``ModularLoadManagerImpl.doLoadShedding`` (apache/pulsar 009a9bf2cdff) prunes the recently
unloaded bundles, then calls the strategy outside its ``try``/``finally``: the exception skips the
unloads and ``onUnloadAttemptCompleted``, and ``LoadSheddingTask.run`` (085e7b8f428f) catches it,
logs "Error during the load shedding" and schedules the next run. The cycle is Failure/Unknown.
"""

from __future__ import annotations

from lbctl.config import Settings
from lbctl.explain.outcome import modular_decision
from lbctl.loadmanager.modular import ModularLoadManager
from lbctl.model.decision import Label, Reason
from lbctl.model.javaorder import java_hash_order
from lbctl.model.javasort import CONTRACT_MESSAGE
from lbctl.records import replace
from lbctl.strategies.builtin import PLACEMENT, SHEDDING
from lbctl.strategies.shedding.avg import AvgPicks, AvgShedderMemory
from lbctl.versions import Version, profile_for
from tests.factories import broker, load, state, stats
from tests.strategies.shedding.test_avg import THROWS

NOW = 1_763_000_000_000


def _state():  # type: ignore[no-untyped-def]
    names = [f"broker-{i}:8080" for i in range(len(THROWS))]
    order = java_hash_order(load({n: broker() for n in names}).brokers)  # the score map's
    cpu = dict(zip(order, THROWS, strict=True))
    return state({n: broker(cpu=(cpu[n], 100), bundles={
        f"t/ns{i}/0x00000000_0xffffffff": stats(100, 100)}) for i, n in enumerate(names)},
        now=NOW)


def test_the_strategy_throws_and_the_cycle_fails() -> None:
    manager = ModularLoadManager(SHEDDING.create("AvgShedder"), PLACEMENT.create("AvgShedder"),
                                 PLACEMENT.create("RoundRobinBrokerSelector"), seed=1)
    mem = manager.initial_memory()
    picks = AvgPicks({"t/ns0/0x00000000_0xffffffff": "broker-1:8080"})
    mem = replace(mem, placement=picks, shedding=AvgShedderMemory({"broker-0:8080": 1}, {}))
    r = manager.run_cycle(_state(), Settings.defaults(profile_for(Version(4, 1, 1))), mem)
    assert r.decision is not None and CONTRACT_MESSAGE in r.decision.failure
    assert r.outcomes == () and r.unloads == ()
    d = modular_decision(r)
    assert (d.label, d.reason) == (Label.FAILURE, Reason.UNKNOWN)
    assert "Error during the load shedding" in d.detail
    # the hit counts and the placement's map are as the exception left them
    # (the score map, refilled before the sort threw, keeps the table its 32 brokers grew)
    assert r.memory.shedding == AvgShedderMemory({"broker-0:8080": 1}, {}, score_capacity=64)
    assert r.memory.placement == picks

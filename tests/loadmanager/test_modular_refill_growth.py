"""A refill of ``brokerCandidateCache`` without ``clear()`` grows its table, and the set keeps it.

``ModularLoadManagerImpl.brokerCandidateCache`` is one field ``HashSet`` (at 009a9bf2cdff): each
fill ``clear()`` s it (the table stays) and ``applyNamespacePolicies`` refills it. When a filter
throws (``BrokerVersionFilter``: a candidate without a version), ``selectBroker`` calls
``applyNamespacePolicies`` again on the set the filters left, without ``clear()``: the brokers
the filters removed are put back. With 9 colliding names (``"Aa"``/``"BB"``) that put back
remakes a chain of 9, and below 64 buckets ``HashMap.treeifyBin`` doubles the table: a growth
the fill itself did not make. The set keeps that table for every later fill, in this cycle
and the next (:func:`lbctl.model.javaorder.refill_fill`; the JDK side is
tests/model/test_javaorder_tables_jdk.py). Before 2.11 (no ``shouldNamespacePoliciesUnload``
fill), ``selectBroker``'s own fill is the cycle's first, so the restore is where 32 becomes 64.
"""

from __future__ import annotations

import itertools

from lbctl.config import Settings
from lbctl.loadmanager.modular import ModularLoadManager
from lbctl.model.javaorder import hash_fill, hashset_copy_order
from lbctl.model.load import LocalBrokerData
from lbctl.records import replace
from lbctl.strategies.builtin import PLACEMENT, SHEDDING
from lbctl.versions import Version, profile_for
from tests.factories import broker, state, stats

MODULAR_CLASS = "org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl"
SAME = [f"h-{''.join(p)}.pulsar.svc:8080" for p in itertools.product(["Aa", "BB"], repeat=4)][:9]
HOT, SILENT = "hot-1.pulsar.svc:8080", "silent-1.pulsar.svc:8080"


def _brokers(other: set[str]) -> dict[str, LocalBrokerData]:
    bundles = {f"open/ns/0x{i:08x}_0x{i + 1:08x}": stats(100 * (i + 1), 1000 * (i + 1))
               for i in range(3)}
    out: dict[str, LocalBrokerData] = {}
    for b in [*SAME, HOT, SILENT]:
        report = broker(cpu=(95, 100), bundles=bundles) if b == HOT else broker(cpu=(10, 100))
        out[b] = replace(report, loadManagerClassName="other.Class" if b in other
                         else MODULAR_CLASS, brokerVersionString="" if b == SILENT else "2.10.6")
    return out


def test_the_restores_growth_is_carried_to_the_next_cycle() -> None:
    settings = Settings.defaults(profile_for(Version.parse("2.10.6"))).with_values(
        preferLaterVersions=True)
    manager = ModularLoadManager(SHEDDING.create("OverloadShedder"),
                                 PLACEMENT.create("RoundRobinBrokerSelector"),
                                 PLACEMENT.create("RoundRobinBrokerSelector"), seed=1)
    # cycle 1: two colliding brokers run another load manager (the class filter removes them),
    # the version filter throws, the restore puts them back: 9 again, in 32 buckets → 64
    r1 = manager.run_cycle(state(_brokers(set(SAME[:2])), now=1_763_000_000_000), settings,
                           manager.initial_memory())
    (o,) = r1.outcomes
    assert o.placement is not None
    last = o.placement.steps[-1]  # the version filter failed: the restore ran
    assert last.name == "BrokerVersionFilter" and last.why is not None
    assert last.why.code == "version-failed"
    fill = hashset_copy_order(r1.state.available())
    assert hash_fill(fill)[1] == 32  # the fill alone: 16 → 32 (treeifyBin below 64)
    assert r1.memory.candidate_capacity == 64
    # cycle 2: nothing removed, nothing restored; the fills start from the 64 buckets kept,
    # where the 9 colliding names make a tree bin at once (from 32 they would grow it first
    # and stay a chain): RoundRobinBrokerSelector's candidates come in that order
    r2 = manager.run_cycle(state(_brokers(set()), now=1_763_000_060_000), settings, r1.memory)
    (o2,) = r2.outcomes
    assert o2.placement is not None and o2.placement.decision is not None
    got = list(o2.placement.decision.candidates)
    fill2 = hashset_copy_order(r2.state.available())
    assert got == [b for b in hash_fill(fill2, 64)[0] if b in set(got)]
    assert got != [b for b in hash_fill(fill2, 32)[0] if b in set(got)]

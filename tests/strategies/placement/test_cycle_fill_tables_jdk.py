"""The modular candidate set's tables through a cycle of several placements, against the JDK.

``ModularLoadManagerImpl.brokerCandidateCache`` is one field ``HashSet`` (ModularLoadManagerImpl at
009a9bf2cdff): ``shouldNamespacePoliciesUnload``, ``shouldAntiAffinityNamespaceUnload`` and
``selectBroker`` ``clear()`` it (the table stays) and refill it through
``LoadManagerShared.applyNamespacePolicies``, which first collects the brokers in two
thread-local ``HashSet`` s, kept the same way (LoadManagerShared at 01f1d8fab668 and
b3659d4a5624). So a fill that grows a table grows it for every later fill: the next placement of
the same cycle, and the next cycles. ``java/PolicyFill.java`` (plain JDK, no Pulsar: the three
kept sets, cleared and refilled in that shape, one line per fill) gives the JDK's order; the
candidates lbctl's placements iterate (RoundRobinBrokerSelector's rotation) must be the same,
less the brokers the filters after the fill remove (the owner). Skipped, with the reason shown
by ``pytest -rs``, without ``javac``/``java``."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from lbctl.config import Settings
from lbctl.loadmanager.modular import ModularCycleResult, ModularLoadManager
from lbctl.model.cycle import CycleMemory
from lbctl.model.javaorder import hashset_copy_order, java_hash_order
from lbctl.model.load import LocalBrokerData, NamespaceBundleStats
from lbctl.model.policies import ClusterPolicies, IsolationPolicy
from lbctl.records import replace
from lbctl.strategies.builtin import PLACEMENT, SHEDDING
from tests.factories import broker, state, stats
from tests.jdk import needs_jdk, run_java

JAVA = Path(__file__).parent / "java"

pytestmark = needs_jdk("the candidate set's tables through a cycle are not checked against HashSet")


def _pool(kind: str) -> list[str]:
    return [f"{kind}-{i}.pulsar-broker.pulsar.svc.cluster.local:8080" for i in range(200)]


@pytest.fixture(scope="module")
def jdk(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    build = tmp_path_factory.mktemp("cyclefills")
    return lambda lines: run_java("PolicyFill", build, lines, where=JAVA)


def _manager() -> ModularLoadManager:
    return ModularLoadManager(SHEDDING.create("OverloadShedder"),
                              PLACEMENT.create("RoundRobinBrokerSelector"),
                              PLACEMENT.create("RoundRobinBrokerSelector"), seed=1)


def _hot(namespace: str) -> dict[str, NamespaceBundleStats]:
    return {f"{namespace}/0x{i:08x}_0x{i + 1:08x}": stats(100 * (i + 1), 1000 * (i + 1))
            for i in range(3)}


def _cycle(manager: ModularLoadManager, names: Sequence[str], hot: Mapping[str, str],
           policies: ClusterPolicies, mem: CycleMemory, k: int) -> ModularCycleResult:
    """One cycle: each broker of ``hot`` (broker → namespace) is overloaded with three bundles
    of its namespace (OverloadShedder sheds one of each); the others idle."""
    brokers: dict[str, LocalBrokerData] = {
        b: broker(cpu=(95, 100), bundles=_hot(hot[b])) if b in hot else broker(cpu=(10, 100))
        for b in names}
    st = replace(state(brokers, now=1_763_000_000_000 + k * 60_000), policies=policies)
    return manager.run_cycle(st, Settings.defaults(), mem)


def _line(cid: str, min_limit: int, names: Sequence[str], marks: Mapping[str, str]) -> str:
    return "\t".join([cid, str(min_limit), *(f"{marks.get(b, 'n')}:{b}" for b in names)])


def _placed(r: ModularCycleResult) -> list[tuple[str, list[str]]]:
    """Each unloaded bundle's namespace and the candidates its placement iterated."""
    out = []
    for o in r.outcomes:
        assert o.placement is not None and o.placement.decision is not None
        out.append((o.selection.bundle.rsplit("/", 1)[0], list(o.placement.decision.candidates)))
    return out


def test_a_policy_fill_grows_the_table_for_the_cycles_later_fills(jdk) -> None:  # type: ignore[no-untyped-def]
    """One cycle, two placements. First a bundle of the policy namespace: its policy fails over
    (10 primaries, min_limit 11), so 10 primaries and 10 secondaries fill the set and grow it to
    32 buckets. Then a bundle of a namespace without a policy: its 10 shared brokers come by the
    32 buckets that fill left, not by the 16 a fill of 10 makes. 100 brokers reserved to
    another policy make ``getAvailableBrokers()``'s copy a 256-bucket table, whose order within
    a bucket of 16 is not the order within a bucket of 32."""
    rng = random.Random(SEED_GROW)
    prim, sec = rng.sample(_pool("prim"), 10), rng.sample(_pool("sec"), 10)
    oth = rng.sample(_pool("oth"), 100)
    policies = ClusterPolicies((
        IsolationPolicy(("iso/.*",), ("prim-.*",), ("sec-.*",), min_limit=11, name="iso"),
        IsolationPolicy(("other/.*",), ("oth-.*",), name="other")))
    manager = _manager()
    r = _cycle(manager, prim + sec + oth, {prim[0]: "iso/ns", sec[0]: "open/ns"}, policies,
               manager.initial_memory(), 0)
    placed = _placed(r)
    assert [ns for ns, _ in placed] == ["iso/ns", "open/ns"]  # the policy's fill comes first
    names = list(r.state.available())
    script = ["NEW",
              _line("iso", 11, names, {**dict.fromkeys(prim, "p"), **dict.fromkeys(sec, "s")}),
              _line("open", 0, names, dict.fromkeys(sec, "h"))]
    java = jdk(script)
    for (ns, ours), cid in zip(placed, ("iso", "open"), strict=True):
        assert ours == [b for b in java[cid] if b in set(ours)], ns
    assert r.memory.candidate_capacity == 32
    # teeth: in the 16 buckets the cycle started with (lbctl before), the shared brokers
    # rotate in another order
    ours = placed[1][1]
    before = java_hash_order(hashset_copy_order(names), capacity=16)
    assert ours != [b for b in before if b in set(ours)]


def test_the_secondaries_set_grown_by_a_policy_without_failover_orders_later_fills(jdk) -> None:  # type: ignore[no-untyped-def]
    """Cycle 1 places a bundle of the "wide" policy's namespace: 2 primaries, enough (min_limit
    1), so its 40 secondaries are not added, but the thread-local secondaries set grows to 64
    buckets while the candidate set holds 2. Cycle 2 places a bundle of the "narrow" policy's
    namespace (2 primaries, min_limit 5: its 10 secondaries are added) and one of a namespace
    without a policy (the same 10 brokers, the only shared ones): in each bucket of the
    16-bucket candidate set, the secondaries come by the secondaries set's 64 buckets. Many
    other reserved brokers make ``getAvailableBrokers()``'s own copy a 256-bucket table, whose
    order within a bucket is not the 64-bucket one."""
    rng = random.Random(SEED_SCRATCH)
    wide, narrow = rng.sample(_pool("pa"), 2), rng.sample(_pool("pb"), 2)
    sec, res, oth = rng.sample(_pool("sb"), 10), rng.sample(_pool("res"), 30), \
        rng.sample(_pool("oth"), 100)
    policies = ClusterPolicies((
        IsolationPolicy(("wide/.*",), ("pa-.*",), ("res-.*", "sb-.*"), min_limit=1, name="wide"),
        IsolationPolicy(("narrow/.*",), ("pb-.*",), ("sb-.*",), min_limit=5, name="narrow"),
        IsolationPolicy(("other/.*",), ("res-.*", "oth-.*"), name="other")))
    names = wide + narrow + sec + res + oth
    manager = _manager()
    r1 = _cycle(manager, names, {wide[0]: "wide/ns"}, policies, manager.initial_memory(), 0)
    assert r1.memory.secondaries_capacity == 64 and r1.memory.candidate_capacity == 0
    r2 = _cycle(manager, names, {narrow[0]: "narrow/ns", sec[0]: "open/ns"}, policies,
                r1.memory, 1)
    placed = _placed(r1) + _placed(r2)
    avail = list(r2.state.available())
    marks = {"wide/ns": {**dict.fromkeys(wide, "p"), **dict.fromkeys(res + sec, "s")},
             "narrow/ns": {**dict.fromkeys(narrow, "p"), **dict.fromkeys(sec, "s")},
             "open/ns": dict.fromkeys(sec, "h")}
    limits = {"wide/ns": 1, "narrow/ns": 5, "open/ns": 0}
    script = ["NEW", *(_line(str(i), limits[ns], avail, marks[ns])
                       for i, (ns, _) in enumerate(placed))]
    java = jdk(script)
    for i, (ns, ours) in enumerate(placed):
        assert ours == [b for b in java[str(i)] if b in set(ours)], ns
    # teeth: without the secondaries set's table (lbctl before: each bucket's primaries, then
    # its secondaries in the copy's order), a later fill's order differs
    copy = hashset_copy_order(avail)
    flat = [[b for b in java_hash_order([*(b for b in copy if b in narrow), *copy], capacity=16)
             if b in set(ours)] for _, ours in placed]
    assert any(ours != f for (_, ours), f in zip(placed[1:], flat[1:], strict=True))


SEED_GROW = 3
SEED_SCRATCH = 4

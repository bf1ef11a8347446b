"""The modular candidate set's order against the JDK.

``ModularLoadManagerImpl.brokerCandidateCache`` is a field ``HashSet`` that ``selectBroker`` (and
``shouldNamespacePoliciesUnload``) ``clear()`` s and refills from ``getAvailableBrokers()``, a
``new HashSet<>(list)`` (ModularLoadManagerImpl at 009a9bf2cdff, ``LoadManagerShared.
applyNamespacePolicies``). The placement strategies iterate that set: RoundRobinBrokerSelector's
rotation is its order. ``java/CandidateOrder.java`` (plain JDK, no Pulsar: a kept ``HashSet``
cleared and refilled from a ``HashSet`` copy) gives the JDK's order, cycle after cycle; lbctl's
(:func:`tests.model.shared_fill.shared_fill` with the table length carried in its memory)
must be the same: after the cluster shrinks, and for 12, 24, 48 brokers even without history.
Skipped, with the reason shown by ``pytest -rs``, without ``javac``/``java``."""

from __future__ import annotations

import random

import pytest

from lbctl.config import Settings
from lbctl.loadmanager.modular import ModularLoadManager
from lbctl.model.javaorder import java_hash_order
from lbctl.model.policies import ClusterPolicies
from lbctl.strategies.builtin import PLACEMENT, SHEDDING
from lbctl.strategies.placement.filters import PlacementEnv
from tests.factories import broker, load, state, stats
from tests.jdk import needs_jdk, run_java
from tests.model.shared_fill import shared_fill

pytestmark = needs_jdk("the candidate set's order is not checked against HashSet")

POOL = [f"pulsar-broker-{i}.pulsar-broker.pulsar.svc.cluster.local:8080" for i in range(300)]


@pytest.fixture(scope="module")
def jdk(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    build = tmp_path_factory.mktemp("candidates")
    return lambda lines: run_java("CandidateOrder", build, lines)


def test_candidate_order_cycle_after_cycle(jdk) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(1414)
    seqs = [[12], [24], [48], [40, 5], [100, 12, 3], [24, 13, 24]]
    seqs += [[rng.choice([rng.randint(2, 100), 12, 24, 48]) for _ in range(rng.randint(1, 4))]
             for _ in range(40)]
    settings = Settings.defaults()
    script: list[str] = []
    ours: dict[str, list[str]] = {}
    fresh: dict[str, list[str]] = {}
    for c, seq in enumerate(seqs):
        script.append("NEW")
        capacity = 0
        for k, n in enumerate(seq):
            names = rng.sample(POOL, n)
            data = load({b: broker(cpu=(10, 100)) for b in names})
            order, capacity = shared_fill(names, data, ClusterPolicies(), settings, capacity)
            env = PlacementEnv.of(order, data, ClusterPolicies(), settings, capacity or 16)
            cid = f"{c}-{k}"
            script.append("\t".join([cid, *names]))
            ours[cid] = list(env.available)
            fresh[cid] = java_hash_order(names)  # what lbctl iterated before
    java = jdk(script)
    wrong = [cid for cid in ours if ours[cid] != java[cid]]
    assert not wrong, f"{len(wrong)} of {len(ours)} fills differ from the JDK: {wrong[:5]}"
    # teeth: a first fill of 12, 24 or 48 brokers, and a set kept from 40 brokers refilled with
    # 5, often differ from a fresh set filled in the list's order (lbctl's order before)
    firsts = [f"{c}-0" for c, seq in enumerate(seqs) if seq[0] in (12, 24, 48)]
    assert sum(java[cid] != fresh[cid] for cid in firsts) > len(firsts) // 3
    assert java["3-1"] != fresh["3-1"]
    assert sum(java[cid] != fresh[cid] for cid in java) > 20


def test_round_robin_rotates_in_the_kept_set_order(jdk) -> None:  # type: ignore[no-untyped-def]
    """Through the load manager: OverloadShedder sheds a hot broker's bundle each cycle and
    RoundRobinBrokerSelector places it; the candidates it rotates over come in the JDK's order,
    the second cycle (fewer brokers) from the table the first one grew."""
    manager = ModularLoadManager(SHEDDING.create("OverloadShedder"),
                                 PLACEMENT.create("RoundRobinBrokerSelector"),
                                 PLACEMENT.create("RoundRobinBrokerSelector"), seed=1)
    rng = random.Random(8)
    mem = manager.initial_memory()
    script, ours = ["NEW"], []
    for k, n in enumerate((40, 5)):
        names = rng.sample(POOL, n)
        hot = {f"t/ns/0x{i:08x}_0x{i + 1:08x}": stats(100 * (i + 1), 1000 * (i + 1))
               for i in range(3)}
        st = state({b: broker(cpu=(95, 100), bundles=hot) if i == 0 else broker(cpu=(10, 100))
                    for i, b in enumerate(names)}, now=1_763_000_000_000 + k * 60_000)
        r = manager.run_cycle(st, Settings.defaults(), mem)
        mem = r.memory
        [outcome] = r.outcomes
        assert outcome.placement is not None and outcome.placement.decision is not None
        ours.append(list(outcome.placement.decision.candidates))
        avail = st.available()
        script.append("\t".join([str(k), *avail]))
    assert mem.candidate_capacity == 64
    java = jdk(script)
    # the filters only remove brokers (here removeMostServicingBrokersForNamespace, the owner)
    kept = [[b for b in java[str(k)] if b in set(ours[k])] for k in range(2)]
    assert ours == kept and len(ours[1]) == 4
    # teeth: a fresh set of the second cycle's brokers (lbctl before) rotates in another order
    assert ours[1] != [b for b in java_hash_order(avail) if b in set(ours[1])]


def test_overload_recheck_puts_removed_brokers_back_at_their_chain_end(jdk) -> None:  # type: ignore[no-untyped-def]
    """``selectBroker``'s overload re-check calls ``applyNamespacePolicies`` on the candidate set
    without clearing it: the owner, which ``removeMostServicingBrokersForNamespace`` had removed,
    goes back at the end of its bucket's chain, after a broker the first fill had put behind it.
    The re-check (RoundRobinBrokerSelector here, every broker 90 % busy) iterates that order."""
    from lbctl.model.javaorder import java_string_hash, spread

    rng = random.Random(21)
    names = rng.sample(POOL, 40)
    first, _ = shared_fill(names, load({b: broker() for b in names}), ClusterPolicies(),
                               Settings.defaults(), 0)
    fill = java_hash_order(first, capacity=64)
    bucket = {b: spread(java_string_hash(b)) & 63 for b in fill}
    owner = next(b for i, b in enumerate(fill) if any(bucket[c] == bucket[b] for c in fill[i + 1:]))
    hot = {f"t/ns/0x{i:08x}_0x{i + 1:08x}": stats(100 * (i + 1), 1000 * (i + 1)) for i in range(3)}
    st = state({b: broker(cpu=(95, 100), bundles=hot) if b == owner else broker(cpu=(90, 100))
                for b in names}, now=1_763_000_000_000)
    manager = ModularLoadManager(SHEDDING.create("OverloadShedder"),
                                 PLACEMENT.create("RoundRobinBrokerSelector"),
                                 PLACEMENT.create("RoundRobinBrokerSelector"), seed=1)
    r = manager.run_cycle(st, Settings.defaults(), manager.initial_memory())
    trace = r.outcomes[0].placement
    assert trace is not None and trace.recheck is not None and trace.decision is not None
    assert owner not in trace.decision.candidates  # removed by the first pass's filter
    java = jdk(["NEW", "\t".join(["fill", *st.available()]), f"RECHECK\trecheck\t{owner}"])
    assert list(trace.recheck.candidates) == java["recheck"]
    # teeth: the first fill's order (lbctl before) has the owner ahead of its bucket's others
    assert java["recheck"] != java["fill"]

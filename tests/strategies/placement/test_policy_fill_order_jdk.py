"""The modular candidate set's order for a namespace with an isolation policy, against the JDK.

``LoadManagerShared.applyNamespacePolicies`` (LoadManagerShared at 01f1d8fab668 and b3659d4a5624)
walks the available brokers, collecting a policy's primaries and secondaries in two thread-local
``HashSet`` s, then ``addAll`` s the primaries to ``brokerCandidateCache`` and, on failover, the
secondaries. That set keeps its table across fills (ModularLoadManagerImpl at 009a9bf2cdff), so
the candidates iterate bucket by bucket with the primaries first inside each bucket, not in the
available brokers' order. ``java/PolicyFill.java`` (plain JDK, no Pulsar: three kept ``HashSet`` s
cleared and refilled in that shape) gives the JDK's order; lbctl's
(:func:`lbctl.strategies.placement.filters.policy_candidates` over the cycle's
:class:`~lbctl.strategies.placement.filters.PlacementEnv`) must be the same, including a first
fill that outgrows the table. Skipped, with the reason shown by ``pytest -rs``, without
``javac``/``java``."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from lbctl.config import Settings
from lbctl.model.policies import ClusterPolicies, IsolationPolicy
from lbctl.strategies.placement.filters import PlacementEnv, policy_candidates
from tests.factories import broker, load
from tests.jdk import needs_jdk, run_java
from tests.model.shared_fill import shared_fill as no_policy_fill

JAVA = Path(__file__).parent / "java"

pytestmark = needs_jdk("the isolation policy's candidate order is not checked against HashSet")

#: brokers by kind: primaries and secondaries of policy "iso", reserved (primaries of another
#: policy, so neither shared nor the iso policy's) and plain shared ones
KINDS = {"p": "prim", "s": "sec", "n": "res", "h": "shr"}
POOL = {k: [f"{v}-{i}.pulsar-broker.pulsar.svc.cluster.local:8080" for i in range(120)]
        for k, v in KINDS.items()}


def policies(min_limit: int) -> ClusterPolicies:
    return ClusterPolicies((
        IsolationPolicy(("iso/.*",), ("prim-.*",), ("sec-.*",), min_limit=min_limit, name="iso"),
        IsolationPolicy(("other/.*",), ("res-.*",), name="other")))


@pytest.fixture(scope="module")
def jdk(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    build = tmp_path_factory.mktemp("policyfill")
    return lambda lines: run_java("PolicyFill", build, lines, where=JAVA)


def _line(cid: str, min_limit: int, names: list[str], kind: dict[str, str],
          shared_fill: bool) -> str:
    """A PolicyFill line: the shared fill marks the shared brokers h (a fill without a policy:
    every broker no policy names primary), the policy fill marks p, s or n."""
    if shared_fill:
        marks = ["h" if kind[b] in "sh" else "n" for b in names]
    else:
        marks = [kind[b] if kind[b] in "ps" else "n" for b in names]
    return "\t".join([cid, str(min_limit), *(f"{m}:{b}" for m, b in zip(marks, names, strict=True))])


def test_isolation_fill_puts_primaries_first_in_each_bucket(jdk) -> None:  # type: ignore[no-untyped-def]
    """Sequences of cycles: each fills the set for a namespace without a policy (which lbctl
    counts in the table it carries), and the last also for the policy's namespace. lbctl's
    candidates for the policy namespace are the JDK's, in order."""
    rng = random.Random(1616)
    settings = Settings.defaults()
    script: list[str] = []
    ours: dict[str, list[str]] = {}
    before: dict[str, list[str]] = {}
    for c in range(160):
        script.append("NEW")
        capacity = 0
        cycles = rng.randint(1, 3)
        for k in range(cycles):
            counts = {k2: rng.choice([0, 1, 2, 3, rng.randint(0, 30)]) for k2 in KINDS}
            counts["p"] = rng.choice([0, 1, 2, 3, 5, 8, rng.randint(0, 40)])
            counts["s"] = rng.choice([1, 4, 9, 13, rng.randint(0, 40)])
            names = [b for k2, n in counts.items() for b in rng.sample(POOL[k2], n)]
            rng.shuffle(names)
            if not names:
                continue
            kind = {b: next(k2 for k2, v in KINDS.items() if b.startswith(v + "-"))
                    for b in names}
            min_limit = rng.randint(0, 6)
            pol = policies(min_limit)
            data = load({b: broker(cpu=(10, 100)) for b in names})
            order, capacity = no_policy_fill(names, data, pol, settings, capacity)
            cid = f"{c}-{k}"
            script.append(_line(cid + "s", min_limit, names, kind, True))
            if k == cycles - 1:
                env = PlacementEnv.of(order, data, pol, settings, capacity or 16)
                got = list(policy_candidates("iso/ns", env, data).brokers)
                script.append(_line(cid, min_limit, names, kind, False))
                ours[cid] = got
                before[cid] = [b for b in env.available if b in set(got)]  # lbctl's order before
    java = jdk(script)
    wrong = [cid for cid in ours if ours[cid] != java[cid]]
    assert not wrong, f"{len(wrong)} of {len(ours)} fills differ from the JDK: {wrong[:5]}"
    # teeth: the available order (lbctl's before) differs from the JDK's in some fills (those
    # where a secondary shares a bucket with a primary behind it, or the fill grew the table)
    differ = sum(java[cid] != before[cid] for cid in ours)
    assert differ >= 10, (differ, len(ours))


def test_policy_fill_growth_is_carried_to_the_next_cycle(jdk) -> None:  # type: ignore[no-untyped-def]
    """Through the load manager. Cycle 1: the hot primary's bundle of the policy namespace is
    shed; the policy fails over (fewer primaries than min_limit), so 10 primaries and 10
    secondaries fill the candidate set: 20 > 12, the table grows to 32 (a fill without a policy,
    10 shared brokers, keeps 16). Cycle 2: a bundle of a namespace without a policy goes round
    robin over the shared brokers, in the table cycle 1 grew."""
    from lbctl.loadmanager.modular import ModularLoadManager
    from lbctl.model.javaorder import java_hash_order
    from lbctl.records import replace
    from lbctl.strategies.builtin import PLACEMENT, SHEDDING
    from tests.factories import state, stats

    rng = random.Random(7)
    prim, sec = rng.sample(POOL["p"], 10), rng.sample(POOL["s"], 10)
    pol = policies(11)
    manager = ModularLoadManager(SHEDDING.create("OverloadShedder"),
                                 PLACEMENT.create("RoundRobinBrokerSelector"),
                                 PLACEMENT.create("RoundRobinBrokerSelector"), seed=1)
    mem = manager.initial_memory()
    script, ours = ["NEW"], []
    kind = {**dict.fromkeys(prim, "p"), **dict.fromkeys(sec, "s")}
    for k, (hot_broker, ns, names) in enumerate(((prim[0], "iso", prim + sec),
                                                 (sec[0], "open", sec))):
        bundles = {f"{ns}/ns/0x{i:08x}_0x{i + 1:08x}": stats(100 * (i + 1), 1000 * (i + 1))
                   for i in range(3)}
        st = replace(state({b: broker(cpu=(95, 100), bundles=bundles) if b == hot_broker
                            else broker(cpu=(10, 100)) for b in names},
                           now=1_763_000_000_000 + k * 60_000), policies=pol)
        r = manager.run_cycle(st, Settings.defaults(), mem)
        mem = r.memory
        [outcome] = r.outcomes
        assert outcome.placement is not None and outcome.placement.decision is not None
        ours.append(list(outcome.placement.decision.candidates))
        script.append(_line(str(k), 11, list(st.available()), kind, k == 1))
    assert mem.candidate_capacity == 32
    java = jdk(script)
    # the filters after the fill only remove brokers (the owner, here)
    assert ours == [[b for b in java[str(k)] if b in set(ours[k])] for k in range(2)]
    # teeth: cycle 2's shared brokers in a 16-bucket table (lbctl before) rotate otherwise
    assert ours[1] != [b for b in java_hash_order(java["1"], capacity=16) if b in set(ours[1])]

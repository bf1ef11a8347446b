"""Policy fills of colliding broker names, kept sets carried from fill to fill, against the JDK.

``LoadManagerShared.applyNamespacePolicies`` (LoadManagerShared at 01f1d8fab668 and b3659d4a5624)
walks ``getAvailableBrokers()``'s own ``HashSet`` copy, collects a policy's primaries and
secondaries (or, without a policy, the shared brokers) in two kept thread-local ``HashSet`` s and
``addAll`` s them to ``ModularLoadManagerImpl.brokerCandidateCache`` (at 009a9bf2cdff), a kept
field ``HashSet``. Names that collide (``"Aa"``/``"BB"`` blocks give one ``hashCode``) make chains
of 9: below 64 buckets that doubles a table early (``HashMap.treeifyBin`` resizes), from 64 on the
chain becomes a tree bin with its own order. Each set keeps its table for the next fill.
``java/PolicyFill.java`` (plain JDK, no Pulsar: the three kept sets, cleared and refilled in that
shape) gives the JDK's order; lbctl's (:func:`~lbctl.strategies.placement.filters.policy_candidates`
over environments whose fills start from the tables the previous fill left,
:attr:`~lbctl.strategies.placement.namespace_policies.PolicyCandidates.tables`, as
``ModularLoadManager._filled`` carries them) must be the same. Skipped, with the reason shown by
``pytest -rs``, without ``javac``/``java``."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from pathlib import Path

import pytest

from lbctl.config import Settings
from lbctl.loadmanager.modular import ModularCycleResult, ModularLoadManager
from lbctl.model.cycle import CycleMemory
from lbctl.model.javaorder import (
    bucket_order,
    cleared_capacity,
    hashset_copy_order,
    java_hash_order,
    java_string_hash,
    refill_order,
    spread,
)
from lbctl.model.load import LocalBrokerData
from lbctl.model.policies import ClusterPolicies, IsolationPolicy
from lbctl.records import replace
from lbctl.strategies.builtin import PLACEMENT, SHEDDING
from lbctl.strategies.placement.filters import PlacementEnv, policy_candidates
from tests.factories import broker, load, state, stats
from tests.jdk import needs_jdk, run_java

JAVA = Path(__file__).parent / "java"

pytestmark = needs_jdk("policy fills of colliding names are not checked against HashSet")

KINDS = {"p": "prim", "s": "sec", "r": "res", "h": "shr"}


def _pool(kind: str) -> list[str]:
    """20 names of one ``hashCode`` (one bucket in every table), then 40 plain ones."""
    same = [f"{kind}-{''.join(b)}.pulsar.svc:8080"
            for b in itertools.product(["Aa", "BB"], repeat=5)][:20]
    return same + [f"{kind}-{i}.pulsar-broker.pulsar.svc.cluster.local:8080" for i in range(40)]


POOL = {k: _pool(v) for k, v in KINDS.items()}


def policies(min_limit: int, wide: bool) -> ClusterPolicies:
    """"iso" (secondaries: sec, and res when ``wide``) and "other", whose primaries are res."""
    secondaries = ("sec-.*", "res-.*") if wide else ("sec-.*",)
    return ClusterPolicies((
        IsolationPolicy(("iso/.*",), ("prim-.*",), secondaries, min_limit=min_limit, name="iso"),
        IsolationPolicy(("other/.*",), ("res-.*",), name="other")))


@pytest.fixture(scope="module")
def jdk(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    build = tmp_path_factory.mktemp("collidingfills")
    return lambda lines: run_java("PolicyFill", build, lines, where=JAVA)


def _line(cid: str, min_limit: int, names: list[str], fill: str) -> str:
    marks = {"wide": {"prim": "p", "sec": "s", "res": "s"}, "narrow": {"prim": "p", "sec": "s"},
             "shared": {"sec": "h", "shr": "h"}}[fill]
    return "\t".join([cid, str(min_limit),
                      *(f"{marks.get(b.split('-', 1)[0], 'n')}:{b}" for b in names)])


def _pick(rng: random.Random, kind: str) -> list[str]:
    pool = POOL[kind]
    same = rng.choice([0, 0, 5, 9, 10, 12, 20])
    plain = rng.choice([0, 2, 6, 13, 25, 40])
    return rng.sample(pool[:20], same) + rng.sample(pool[20:], plain)


def test_colliding_policy_fills_carry_their_tables(jdk) -> None:  # type: ignore[no-untyped-def]
    """Random sequences of wide, narrow and shared fills over brokers whose names collide in
    runs of up to 20: every fill's candidates are the JDK's, in order."""
    rng = random.Random(2020)
    settings = Settings.defaults()
    script: list[str] = []
    ours: dict[str, list[str]] = {}
    plain: dict[str, list[str]] = {}
    for c in range(120):
        names = [b for k in KINDS for b in _pick(rng, k)]
        if not names:
            continue
        rng.shuffle(names)
        data = load({b: broker(cpu=(10, 100)) for b in names})
        walk = tuple(hashset_copy_order(names))
        script.append("NEW")
        tables = (0, 0, 0)
        old = 0  # the candidate table as lbctl counted it before (sizes alone)
        for k in range(rng.randint(1, 6)):
            fill = rng.choice(["wide", "narrow", "shared"])
            min_limit = rng.choice([0, 1, 8, 30, rng.randint(0, 40)])
            pol = policies(min_limit, fill == "wide")
            ns = "open/ns" if fill == "shared" else "iso/ns"
            start = (max(tables[0], 16), max(tables[1], 16), max(tables[2], 16))
            env = PlacementEnv.of(walk, data, pol, settings, start[0], start=start)
            got = policy_candidates(ns, env, data)
            assert got.tables is not None
            tables = got.tables
            cid = f"{c}-{k}"
            ours[cid] = list(got.brokers)
            # what lbctl gave before: by bucket of the table the counts give, each bucket in
            # the walk's order
            old = cleared_capacity(old, len(got.brokers))
            kept = set(got.brokers)
            plain[cid] = bucket_order([b for b in walk if b in kept], max(old, 16))
            script.append(_line(cid, min_limit, names, fill))
    java = jdk(script)
    wrong = [cid for cid in ours if ours[cid] != java[cid]]
    assert not wrong, f"{len(wrong)} of {len(ours)} fills differ from the JDK: {wrong[:5]}"
    # teeth: the bucket order (tree bins and early growth not followed) misses some of them
    differ = [cid for cid in ours if plain[cid] != java[cid]]
    assert len(differ) >= 10, (len(differ), len(ours))


def _manager() -> ModularLoadManager:
    return ModularLoadManager(SHEDDING.create("OverloadShedder"),
                              PLACEMENT.create("RoundRobinBrokerSelector"),
                              PLACEMENT.create("RoundRobinBrokerSelector"), seed=1)


def _cycle(manager: ModularLoadManager, names: Sequence[str], hot: str, namespace: str,
           pols: ClusterPolicies, mem: CycleMemory, k: int) -> ModularCycleResult:
    """One cycle: ``hot`` is overloaded with three bundles of ``namespace`` (OverloadShedder
    sheds one); the others idle."""
    bundles = {f"{namespace}/0x{i:08x}_0x{i + 1:08x}": stats(100 * (i + 1), 1000 * (i + 1))
               for i in range(3)}
    brokers: dict[str, LocalBrokerData] = {
        b: broker(cpu=(95, 100), bundles=bundles) if b == hot else broker(cpu=(10, 100))
        for b in names}
    st = replace(state(brokers, now=1_763_000_000_000 + k * 60_000), policies=pols)
    return manager.run_cycle(st, Settings.defaults(), mem)


def _placed(r: ModularCycleResult) -> list[str]:
    (o,) = r.outcomes
    assert o.placement is not None and o.placement.decision is not None
    return list(o.placement.decision.candidates)


def test_a_chain_of_colliding_names_grows_the_carried_candidate_table(jdk) -> None:  # type: ignore[no-untyped-def]
    """Cycle 1 sheds a bundle of a namespace without a policy whose 12 shared brokers hold 9
    colliding names (and the policy's 3 secondaries): in its first fill (``shouldNamespacePoliciesUnload``) the 9th makes a chain
    of 9 in 16 buckets, and the candidate set (and the secondaries set) grow to 32 although 12
    brokers fit in 16; the chain is still 9 long in 32 buckets, so the second fill
    (``selectBroker``) grows them to 64. Cycle 2 sheds a bundle of the policy namespace (6
    primaries, 3 secondaries on failover): its 9 brokers come by the 64 buckets cycle 1 left,
    as in the JDK, not by the 16 the counts alone give (lbctl before)."""
    same = POOL["h"][:9]
    # the secondaries (shared brokers too: no policy makes them primaries) outside the
    # colliding bucket of 32: no other put lengthens that chain, so only the second fill of
    # it grows the tables again
    bucket = spread(java_string_hash(same[0])) & 31
    sec = [b for b in POOL["s"][20:] if spread(java_string_hash(b)) & 31 != bucket][:3]
    prim, res = POOL["p"][20:26], POOL["r"][20:60]
    pols = ClusterPolicies((
        IsolationPolicy(("iso/.*",), ("prim-.*",), ("sec-.*",), min_limit=7, name="iso"),
        IsolationPolicy(("other/.*",), ("res-.*",), name="other")))
    names = same + prim + sec + res
    manager = _manager()
    r1 = _cycle(manager, names, same[-1], "open/ns", pols, manager.initial_memory(), 0)
    assert r1.memory.candidate_capacity == 64 and r1.memory.secondaries_capacity == 64
    r2 = _cycle(manager, names, prim[0], "iso/ns", pols, r1.memory, 1)
    avail = list(r1.state.available())
    script = ["NEW",
              *(_line(f"open{i}", 0, avail, "shared") for i in range(2)),
              *(_line(f"iso{i}", 7, avail, "narrow") for i in range(2))]
    java = jdk(script)
    for ours, cid in ((_placed(r1), "open1"), (_placed(r2), "iso1")):
        assert ours == [b for b in java[cid] if b in set(ours)], cid
    # teeth: in the 16 buckets the counts give, the policy's brokers rotate in another order
    ours = _placed(r2)
    copy = hashset_copy_order(avail)
    fill = [*(b for b in copy if b in prim), *(b for b in copy if b in sec)]
    for table in (16, 32):  # (32: one fill per shed bundle, not two)
        before = java_hash_order(fill, capacity=table)
        assert ours != [b for b in before if b in set(ours)], table


def test_brokers_added_back_without_a_clear(jdk) -> None:  # type: ignore[no-untyped-def]
    """``selectBroker``'s overload re-check and its restore after a filter threw call
    ``applyNamespacePolicies`` on the set the filters left, without ``clear()``: the brokers the
    filters removed go back at the end of their bucket, or into a tree bin where
    ``putTreeVal`` links them. Random fills of colliding and plain names, random removals (in
    the set's order), then the refill: lbctl's :func:`refill_order` is the JDK's."""
    rng = random.Random(2021)
    settings = Settings.defaults()
    script: list[str] = []
    ours: dict[str, list[str]] = {}
    plain: dict[str, list[str]] = {}
    for c in range(150):
        names = [b for k in KINDS for b in _pick(rng, k)]
        if not names:
            continue
        rng.shuffle(names)
        data = load({b: broker(cpu=(10, 100)) for b in names})
        walk = tuple(hashset_copy_order(names))
        fill = rng.choice(["wide", "narrow", "shared"])
        min_limit = rng.choice([0, 1, 8, 30])
        pol = policies(min_limit, fill == "wide")
        ns = "open/ns" if fill == "shared" else "iso/ns"
        start = (16, 16, 16)  # three new sets
        env = PlacementEnv.of(walk, data, pol, settings, start[0], start=start)
        got = policy_candidates(ns, env, data)
        if not got.brokers:
            continue
        out = set(rng.sample(list(got.brokers), rng.randint(1, len(got.brokers))))
        gone = [b for b in got.brokers if b in out]  # removed in the set's order
        kept = [b for b in got.brokers if b not in out]
        # the refill walks the scratch sets again, from the tables the fill left
        assert got.tables is not None
        post = (max(got.tables[0], 16), max(got.tables[1], 16), max(got.tables[2], 16))
        again = policy_candidates(ns, PlacementEnv.of(walk, data, pol, settings, post[0],
                                                      start=post), data).puts
        ours[f"+{c}"] = refill_order(got.puts, start[0], set(kept), again)
        # what lbctl gave before: the table the counts give, each bucket's kept brokers first
        table = max(16, cleared_capacity(16, len(got.brokers)))
        plain[f"+{c}"] = bucket_order([*kept, *(b for b in got.puts if b in gone)], table)
        script += ["NEW", _line(f"{c}", min_limit, names, fill), "\t".join(["DEL", *gone]),
                   _line(f"+{c}", min_limit, names, fill)]
    java = jdk(script)
    assert ours, "no case"
    wrong = [cid for cid in ours if ours[cid] != java[cid]]
    assert not wrong, f"{len(wrong)} of {len(ours)} refills differ from the JDK: {wrong[:5]}"
    assert sum(plain[cid] != java[cid] for cid in ours) >= 5


MODULAR_CLASS = "org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl"


def test_the_restore_after_a_throwing_filter_adds_the_removed_brokers_back(jdk) -> None:  # type: ignore[no-untyped-def]
    """No collision needed: ``BrokerLoadManagerClassFilter`` removes the brokers that run
    another load manager, ``loadBalancerDistributeBundlesEvenlyEnabled`` the owner, then
    ``BrokerVersionFilter`` throws (a candidate reports no version) and ``selectBroker``
    restores with ``applyNamespacePolicies`` on the set as the filters left it
    (ModularLoadManagerImpl.selectBroker at 009a9bf2cdff): the removed brokers come back at the
    end of their buckets. RoundRobinBrokerSelector rotates over that order, the JDK's; before,
    lbctl took the first fill's order (the policy candidates)."""
    settings = Settings.defaults().with_values(preferLaterVersions=True)
    script: list[str] = []
    ours: dict[str, list[str]] = {}
    for seed in range(12):
        rng = random.Random(seed)
        names = rng.sample([f"broker-{i}.pulsar.svc:8080" for i in range(200)], 30)
        other = set(rng.sample(names[1:], 10))  # another load manager class
        silent = next(b for b in names[1:] if b not in other)  # no version in its report
        hot = names[0]
        bundles = {f"open/ns/0x{i:08x}_0x{i + 1:08x}": stats(100 * (i + 1), 1000 * (i + 1))
                   for i in range(3)}
        brokers: dict[str, LocalBrokerData] = {}
        for b in names:
            report = broker(cpu=(95, 100), bundles=bundles) if b == hot else \
                broker(cpu=(10, 100))
            brokers[b] = replace(report, loadManagerClassName="other.Class" if b in other
                                 else MODULAR_CLASS,
                                 brokerVersionString="" if b == silent else "3.0.7")
        manager = _manager()
        r = manager.run_cycle(state(brokers, now=1_763_000_000_000), settings,
                              manager.initial_memory())
        (o,) = r.outcomes
        assert o.placement is not None and o.placement.decision is not None
        ours[f"+{seed}"] = list(o.placement.decision.candidates)
        # every broker is shared (no policy): mark them all h
        marked = "\t".join(f"h:{b}" for b in r.state.available())
        script += ["NEW", f"{seed}\t0\t{marked}", f"{seed}\t0\t{marked}",
                   "\t".join(["DEL", hot, *sorted(other)]), f"+{seed}\t0\t{marked}"]
    java = jdk(script)
    wrong = [cid for cid in ours if ours[cid] != java[cid]]
    assert not wrong, wrong
    # teeth: the first fill's order (lbctl before) differs in some of them
    assert sum(ours[cid] != java[cid[1:]] for cid in ours) >= 3

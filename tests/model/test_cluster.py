"""The snapshot reader's :class:`~lbctl.model.cluster.NameIndex` on a :class:`ClusterState`: what it
answers is what counting the names answers, on random states read from real snapshot text, and it
goes stale exactly when a copy of the state changes the brokers it describes."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from lbctl.loadmanager.clock import shifted
from lbctl.loadmanager.select import Options, plans
from lbctl.model.bundle import count_system_bundles
from lbctl.records import replace
from lbctl.sources.snapshot import parse_snapshot, read_snapshots
from tests.paths import DATA, EXAMPLES

T0 = 1_795_000_000_000
#: namespaces of every kind the counts tell apart: system ones (``pulsar/system``, a heartbeat,
#: an SLA monitor), a ``pulsar/`` one that is not a system namespace, and ordinary ones
NAMESPACES = ["pulsar/system", "pulsar/c1/broker-1:8080", "sla-monitor/c1/broker-2:8080",
              "pulsar/functions", "t/a", "t/b", "u/c1/x"]


def random_snapshot(seed: int) -> dict[str, Any]:
    """Brokers owning random bundles of :data:`NAMESPACES`, some also listed in ``bundles`` only
    (no stats), one hot broker so that the cycle unloads."""
    rng = random.Random(seed)
    n = 0
    reports: dict[str, Any] = {}
    for i in range(rng.randrange(2, 9)):
        last: dict[str, Any] = {}
        listed: list[str] = []
        for _ in range(rng.randrange(0, 25)):
            n += 1
            name = f"{rng.choice(NAMESPACES)}/0x{n * 4096:08x}_0x{(n + 1) * 4096:08x}"
            if rng.random() < 0.15:
                listed.append(name)  # owned, no stats
                continue
            tp = rng.uniform(0, 4e6)
            last[name] = {"msgRateIn": rng.uniform(0, 900), "msgRateOut": rng.uniform(0, 900),
                          "msgThroughputIn": tp, "msgThroughputOut": tp / 2, "topics": 1}
        cpu = 95.0 if i == 0 else rng.uniform(5, 60)
        reports[f"broker-{i}:8080"] = {
            "cpu": {"usage": cpu, "limit": 100.0}, "lastUpdate": T0 - 1000, "lastStats": last,
            "bundles": [*last, *listed]}
    return {"format": "lbctl/snapshot@1", "cluster": "c", "capturedAt": T0, "config": {},
            "brokers": reports}


@pytest.mark.parametrize("seed", range(30))
def test_the_index_answers_what_counting_the_names_answers(seed: int) -> None:
    state = parse_snapshot(random_snapshot(seed), "s")
    index = state.name_index()
    assert index is not None
    bare = replace(state, names=None)
    assert bare.name_index() is None
    assert state.bundle_count() == bare.bundle_count() == len(state.owners())
    reported = [b for local in state.brokers.values() for b in local.lastStats]
    for pulsar_system in (True, False):
        assert index.system_bundles(pulsar_system) == count_system_bundles(reported, pulsar_system)
    # the whole cycle, with the index and without: the same plan
    assert ([p.to_dict() for p in plans([state], Options())]
            == [p.to_dict() for p in plans([bare], Options())])


@pytest.mark.parametrize("path", sorted([*EXAMPLES.glob("*.json"), *(DATA / "valid").glob("*.json")]),
                         ids=lambda p: p.name)
def test_every_read_snapshot_has_an_index_that_agrees(path: Path) -> None:
    for state in read_snapshots([path]):
        index = state.name_index()
        assert index is not None
        assert index.bundles == len(state.owners())


def test_a_copy_with_other_brokers_leaves_the_index_behind() -> None:
    state = parse_snapshot(random_snapshot(3), "s")
    assert shifted(state, T0 + 60_000).name_index() is state.name_index()  # the same brokers
    first = next(iter(state.brokers))
    fewer = {b: d for b, d in state.brokers.items() if b != first}
    other = replace(state, brokers=fewer)
    assert other.names is state.names and other.name_index() is None
    assert other.bundle_count() == len(other.owners()) < state.bundle_count()
    # a report replaced in an equal-looking mapping is not the one the reader checked
    index = state.name_index()
    assert index is not None
    local = state.brokers[first]
    assert index.validated(first, local)
    assert not index.validated(first, replace(local, lastStats={}))
    assert state == replace(state, names=None)  # equality ignores the index


@pytest.mark.parametrize("seed", range(5))
def test_the_reader_counts_each_system_prefixed_namespace(seed: int) -> None:
    """Only namespaces with a system prefix are counted (``pulsar/functions`` among them: which of
    them a cycle leaves out depends on its release, asked at ``system_bundles``)."""
    state = parse_snapshot(random_snapshot(seed), "s")
    index = state.name_index()
    assert index is not None
    assert dict(index.system) == {
        ns: n for ns in ("pulsar/system", "pulsar/c1/broker-1:8080",
                         "sla-monitor/c1/broker-2:8080", "pulsar/functions")
        if (n := sum(1 for local in state.brokers.values() for b in local.lastStats
                     if b.rpartition("/")[0] == ns))}


@pytest.mark.parametrize("seed", range(10))
def test_a_sequence_plans_alike_with_the_readers_table_and_without(seed: int) -> None:
    """A sequence whose first cycle takes the reader's one-owner table as the leader's bundle
    map (put order kept apart) and whose later cycles carry that map on (the same reports, then
    other bundles) plans exactly as the same sequence read without the index."""
    docs = [random_snapshot(seed), random_snapshot(seed), random_snapshot(seed + 50)]
    for k, doc in enumerate(docs):
        doc["capturedAt"] = T0 + k * 120_000
        for report in doc["brokers"].values():
            report["lastUpdate"] = T0 + k * 120_000 - 1000
    states = [parse_snapshot(doc, f"s{k}") for k, doc in enumerate(docs)]
    assert all(s.name_index() is not None for s in states)
    bare = [replace(s, names=None) for s in states]
    assert ([p.to_dict() for p in plans(states, Options())]
            == [p.to_dict() for p in plans(bare, Options())])

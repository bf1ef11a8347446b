"""The namespace ownership index of ``removeMostServicingBrokersForNamespace`` (modular cycle).

A cycle's unloads ask for the namespaces of the bundles it unloads, so the index is built for
those alone (``namespace_bundle_counts(load, namespaces)``); each of them must hold exactly what
the whole index holds, in the same order, and a later request over the same load data for
another namespace (``drain``, an explanation) must get the whole index, never an empty answer.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

import lbctl.loadmanager.modular as modular
import lbctl.strategies.placement.filters as filters
from lbctl.config import resolve
from lbctl.explain.words import text
from lbctl.loadmanager.modular import ModularLoadManager
from lbctl.loadmanager.select import Options, plans
from lbctl.model.bundle import namespace_of
from lbctl.model.loaddata import BrokerData
from lbctl.records import replace
from lbctl.sources.snapshot import parse_snapshot
from lbctl.strategies.builtin import PLACEMENT, SHEDDING
from tests.factories import broker, load, stats

T0 = 1_795_000_000_000


def _load(seed: int, *, preallocate: bool = False) -> Any:
    rng = random.Random(seed)
    brokers = {}
    n = 0
    for b in range(rng.randrange(2, 12)):
        owned = {}
        for _ in range(rng.randrange(0, 30)):
            n += 1
            owned[f"t{rng.randrange(3)}/ns{rng.randrange(8)}/0x{n:08x}_0x{n + 1:08x}"] = stats(
                rate_in=rng.uniform(0, 99))
        brokers[f"b{b}:8080"] = broker(bundles=owned)
    ld = load(brokers)
    if preallocate:  # a broker with bundles preallocated to it (drain and fill do this)
        name = next(iter(ld.brokers))
        bd = ld.brokers[name]
        pre = {f"t0/ns{i}/0x{900 + i:08x}_0x{901 + i:08x}": None for i in range(3)}
        brokers_map = dict(ld.brokers)
        brokers_map[name] = BrokerData(bd.local, bd.time_average, pre)  # type: ignore[arg-type]
        ld = replace(ld, brokers=brokers_map)
    return ld


@pytest.mark.parametrize("seed", range(40))
def test_a_restricted_index_holds_what_the_whole_one_does(seed: int) -> None:
    ld = _load(seed, preallocate=seed % 4 == 0)
    filters._LAST_COUNTS.clear()
    whole = filters.namespace_bundle_counts(ld)
    rng = random.Random(seed)
    names = sorted({namespace_of(x) for bd in ld.brokers.values() for x in bd.local.lastStats})
    for _ in range(5):
        wanted = frozenset(rng.sample(names, rng.randrange(0, len(names) + 1))) | {"t9/none"}
        part = filters.namespace_bundle_counts(ld, wanted)
        expected = [(ns, list(owners.items())) for ns, owners in whole.items() if ns in wanted]
        assert [(ns, list(owners.items())) for ns, owners in part.items()] == expected
    assert filters.namespace_bundle_counts(ld) == whole  # the memo keys on what was wanted


def _snapshot(seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    ids = [f"broker-{i}:8080" for i in range(12)]
    reports: dict[str, Any] = {}
    n = 0
    for i, b in enumerate(ids):
        last = {}
        count = rng.randrange(5, 40) * (3 if i < 3 else 1)  # three hot brokers
        # the last three own one bundle in each of their namespaces (NameIndex.one_each)
        spaces = (rng.sample(range(60), count) if i >= 9
                  else [rng.randrange(9) for _ in range(count)])
        for k in spaces:
            n += 1
            tp = rng.uniform(0, 4e6)
            last[f"tenant/ns-{k}/0x{n * 4096:08x}_0x{(n + 1) * 4096:08x}"] = {
                "msgRateIn": rng.uniform(0, 900), "msgRateOut": rng.uniform(0, 900),
                "msgThroughputIn": tp, "msgThroughputOut": tp / 3, "topics": 1,
                "consumerCount": 1, "producerCount": 1}
        if i >= 5:  # a namespace only cold brokers own: nothing of it is unloaded
            n += 1
            last[f"tenant/cold/0x{n * 4096:08x}_0x{(n + 1) * 4096:08x}"] = {
                "msgRateIn": 1.0, "msgRateOut": 1.0, "msgThroughputIn": 10.0,
                "msgThroughputOut": 10.0, "topics": 1, "consumerCount": 1, "producerCount": 1}
        cpu = rng.uniform(85, 99) if i < 3 else rng.uniform(5, 60)
        reports[b] = {"cpu": {"usage": cpu * 16, "limit": 1600.0},
                      "memory": {"usage": 4096.0, "limit": 8192.0},
                      "lastUpdate": T0 - 1000, "lastStats": last, "bundles": list(last)}
    return {"format": "lbctl/snapshot@1", "cluster": "c", "capturedAt": T0, "config": {},
            "brokers": reports}


@pytest.mark.parametrize("seed", range(12))
def test_a_cycle_plans_alike_with_the_restricted_or_the_whole_index(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    state = parse_snapshot(_snapshot(seed), "s")

    def run() -> str:
        filters._LAST_COUNTS.clear()
        return json.dumps([p.to_dict() for p in plans([state], Options())], sort_keys=True)

    asked: list[Any] = []
    counts = filters.namespace_bundle_counts

    def spy(ld: Any, namespaces: Any = None, names: Any = None) -> Any:
        asked.append((namespaces, names))
        return counts(ld, namespaces, names)

    monkeypatch.setattr(modular, "namespace_bundle_counts", spy)
    restricted = run()
    # only the unloads' namespaces, with the reader's name index
    assert asked and all(a is not None and n is not None for a, n in asked)
    monkeypatch.setattr(modular, "namespace_bundle_counts",
                        lambda ld, namespaces=None, names=None: counts(ld))
    assert restricted == run()
    assert '"action": "unload"' in restricted


def _manager() -> ModularLoadManager:
    return ModularLoadManager(SHEDDING.create("ThresholdShedder"),
                              PLACEMENT.create("LeastLongTermMessageRate"),
                              PLACEMENT.create("RoundRobinBrokerSelector"), seed=1)


def test_a_later_request_for_another_namespace_gets_the_whole_index() -> None:
    state = parse_snapshot(_snapshot(3), "s")
    settings = resolve()
    lm = _manager()
    filters._LAST_COUNTS.clear()
    cycle = lm.run_cycle(state, settings)
    unloaded = {namespace_of(o.selection.bundle) for o in cycle.outcomes}
    assert unloaded
    assert "tenant/cold" not in unloaded
    bundle = next(b for b in cycle.load.bundle_data if namespace_of(b) == "tenant/cold")
    mem = lm.initial_memory()
    after, _, _ = lm.select_broker(bundle, cycle.load, settings, mem.placement, mem.round_robin)
    fresh = _manager()
    fresh._env = lm._env
    alone, _, _ = fresh.select_broker(bundle, cycle.load, settings, mem.placement,
                                      mem.round_robin)
    assert after.steps == alone.steps and after.broker == alone.broker
    even = [s for s in after.steps if s.name == "loadBalancerDistributeBundlesEvenlyEnabled"]
    assert even and text(even[0].why)  # the namespace's owners were found (and removed)


@pytest.mark.parametrize("seed", range(12))
def test_the_reader_checked_names_give_the_same_index(seed: int) -> None:
    """The names of a report the reader checked are cut at C speed (the name without its range),
    or not cut at all when the reader kept the broker's namespaces (one bundle in each:
    ``NameIndex.one_each``): the same index, each namespace's owners in the same order, as
    cutting each name at its last slash — and a report swapped in after the reading is cut the
    slow way. (The namespaces' own order is not kept: the index is only looked up by namespace.)"""
    state = parse_snapshot(_snapshot(seed), "s")
    names = state.name_index()
    assert names is not None
    assert set(names.one_each) >= {"broker-9:8080", "broker-10:8080", "broker-11:8080"}
    assert all(len(set(spaces)) == len(spaces) == len(state.brokers[b].lastStats)
               for b, spaces in names.one_each.items())
    cycle = _manager().run_cycle(state, resolve())
    ld = cycle.load
    swapped = replace(ld, brokers={b: (BrokerData(replace(bd.local), bd.time_average)
                                       if i % 2 else bd)
                                   for i, (b, bd) in enumerate(ld.brokers.items())})
    wanted_all = sorted({namespace_of(x) for bd in ld.brokers.values() for x in bd.local.lastStats})
    for wanted in (None, frozenset(wanted_all[::2]), frozenset(wanted_all[1:2])):
        slow = filters._namespace_bundle_counts(ld, wanted)
        for fast in (filters._namespace_bundle_counts(ld, wanted, names),
                     filters._namespace_bundle_counts(swapped, wanted, names)):
            assert {ns: list(o.items()) for ns, o in fast.items()} == {
                ns: list(o.items()) for ns, o in slow.items()}


@pytest.mark.parametrize("seed", range(40))
def test_each_namespace_counts_its_owners_bundles_in_the_brokers_order(seed: int) -> None:
    """Counted from the load directly: a namespace whose owners hold one bundle each (counted
    in one call) and one where an owner holds several (counted per entry) alike."""
    ld = _load(seed, preallocate=seed % 4 == 0)
    filters._LAST_COUNTS.clear()
    index = filters.namespace_bundle_counts(ld)
    expected: dict[str, dict[str, int]] = {}
    for b, bd in ld.brokers.items():
        for name in {*bd.local.lastStats, *bd.preallocated}:
            per = expected.setdefault(namespace_of(name), {})
            per[b] = per.get(b, 0) + 1
    assert {ns: list(index[ns].items()) for ns in index} == {
        ns: list(per.items()) for ns, per in expected.items()}
    ones = [ns for ns, per in expected.items() if set(per.values()) == {1}]
    assert all(index.get(ns) == expected[ns] for ns in ones)

"""The per-cycle shortcuts of the modular placement (perf25, issue 30) against the definitions
they replace: the brokers' policy classes kept across a cycle's fills
(``LoadManagerShared.applyNamespacePolicies`` for a namespace without an isolation policy), the
HashMap bucket sort (``HashMap.putVal`` order without a tree bin), and LeastLongTermMessageRate's
rule 1 read once per candidate set. Each reference below is the code before the change."""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Sequence
from random import Random
from types import MappingProxyType

import pytest

from lbctl.config import Settings
from lbctl.model.javaorder import (
    JavaHashMap,
    bucket_order,
    hash_fill,
    java_string_hash,
    spread,
)
from lbctl.model.load import LocalBrokerData, ResourceUsage, TimeAverageBrokerData
from lbctl.model.loaddata import BrokerData, LoadData
from lbctl.model.policies import ClusterPolicies, IsolationPolicy, broker_host
from lbctl.strategies.placement import least_long_term_message_rate as lltmr
from lbctl.strategies.placement.filters import PlacementEnv, policy_candidates
from lbctl.strategies.placement.namespace_policies import (
    PolicyWhy,
    apply_namespace_policies,
    classify,
)
from lbctl.versions import Version, profile_for

POLICIES = ClusterPolicies((IsolationPolicy(("iso/.*",), ("host-1[0-9]",), ("host-2.*",), 2,
                                            name="p"),))


def _old_shared(available: Sequence[str], policies: ClusterPolicies,
                loads: Callable[[str, bool], bool], non_persistent: bool,
                ) -> tuple[tuple[str, ...], PolicyWhy | None]:
    """apply_namespace_policies without a policy and without a table, before perf25."""
    hosts = {b: broker_host(b) for b in available}
    skipped = tuple(b for b in available if hosts[b] is None)
    kept: list[str] = []
    no_kind: list[str] = []
    reserved: list[str] = []
    for b in available:
        host = hosts[b]
        if host is None:
            continue
        if not loads(b, non_persistent):
            no_kind.append(b)
        elif not policies.is_shared(host):
            reserved.append(b)
        else:
            kept.append(b)
    why = (PolicyWhy("shared", names=tuple(no_kind), others=tuple(reserved),
                     non_persistent=non_persistent, skipped=skipped)
           if no_kind or reserved or skipped else None)
    return tuple(kept), why


def _brokers(rng: Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        k = rng.randrange(40)
        out.append(f"host-{k}" if rng.random() < 0.1 else f"host-{k}:{8080 + rng.randrange(3)}")
    return out


@pytest.mark.parametrize("seed", range(30))
def test_kept_classes_give_the_fill_of_the_per_broker_tests(seed: int) -> None:
    """Skipped ids (no ``:``), brokers that do not load the kind, primaries of a policy
    (reserved), duplicates; each list in ``available``'s order, with and without a table."""
    rng = Random(seed)
    available = _brokers(rng, rng.randint(0, 60))
    off = {b for b in available if rng.random() < 0.2}
    loads = lambda b, np: (b not in off) if not np else (hash(b) % 3 != 0)  # noqa: E731
    for non_persistent in (False, True):
        want, why = _old_shared(available, POLICIES, loads, non_persistent)
        classes = classify(available, POLICIES, loads, non_persistent=non_persistent)
        for given in (None, classes):
            got = apply_namespace_policies("t/ns", available, POLICIES, loads,
                                           non_persistent=non_persistent, classes=given)
            assert (got.brokers, got.why) == (want, why)
        walk = list(available)
        rng.shuffle(walk)
        table, scratch_table = rng.choice([0, 16, 64]), rng.choice([0, 16, 128])
        got = apply_namespace_policies("t/ns", available, POLICIES, loads, table=table,
                                       secondaries_table=scratch_table, walk=walk,
                                       non_persistent=non_persistent, classes=classes)
        scratch, s_table = hash_fill([b for b in walk if b in set(want)], scratch_table)
        order, c_table = hash_fill(scratch, table)
        assert (got.brokers, got.why, got.puts) == (tuple(order), why, tuple(scratch))
        assert got.tables == (c_table, s_table, 0)


def _load(locals_: dict[str, LocalBrokerData]) -> LoadData:
    return LoadData(MappingProxyType({b: BrokerData(local=x) for b, x in locals_.items()}),
                    MappingProxyType({}))


def test_the_cycle_classes_are_not_taken_for_other_load_data() -> None:
    """Environments sharing one memo (a modular cycle's) reuse the classes only for the same
    load data and the same brokers: a broker that stops loading persistent topics in the next
    load data, or a broker added, is classified again."""
    names = [f"host-{i}:8080" for i in range(6)]
    first = _load({b: LocalBrokerData() for b in names})
    second = _load({b: LocalBrokerData(persistentTopicsEnabled=b not in (names[2], "host-7:90"))
                    for b in [*names, "host-3:9090", "host-7:90"]})
    shared: dict = {}
    settings = Settings.defaults()
    one = PlacementEnv.of(names, first, POLICIES, settings, 16, classes=shared)
    two = PlacementEnv.of(list(reversed(names)), second, POLICIES, settings, 16, classes=shared)
    assert names[2] in policy_candidates("t/ns", one, first).brokers
    got = policy_candidates("t/ns", two, second)
    assert names[2] not in got.brokers and got.why is not None and got.why.names == (names[2],)
    assert "host-3:9090" not in got.brokers  # not available there
    more = [*names, "host-3:9090", "host-7:90"]
    three = PlacementEnv.of(more, second, POLICIES, settings, 16, classes=shared)
    got = policy_candidates("t/ns", three, second)
    assert "host-3:9090" in got.brokers and "host-7:90" not in got.brokers
    assert got.why is not None and set(got.why.names) == {names[2], "host-7:90"}
    # a namespace of the policy never reads the classes: no primary (host-1x), so it fails
    # over to its secondary (host-2), which the classes call no-kind
    assert policy_candidates("iso/a", three, second).brokers == ("host-2:8080",)


def _old_bucket_sort(keys: Sequence[str], capacity: int) -> list[str]:
    items = list(dict.fromkeys(keys))
    decorated = sorted(zip([spread(java_string_hash(k)) & (capacity - 1) for k in items],
                           range(len(items)), items, strict=True))
    return [k for _, _, k in decorated]


@pytest.mark.parametrize("seed", range(20))
def test_bucket_sort_is_the_put_order(seed: int) -> None:
    """Within a bucket the put order (not the names' order); the same as JavaHashMap put by
    put when no chain reaches 9."""
    rng = Random(seed)
    keys = [f"b{rng.randrange(500)}:{rng.randrange(9000)}" for _ in range(rng.randint(0, 300))]
    for cap in (16, 64, 512):
        assert bucket_order(keys, cap) == _old_bucket_sort(keys, cap)
    order, length = hash_fill(keys, rng.choice([0, 16, 256]))
    m = JavaHashMap(None)
    for k in keys:
        m.put(k)
    if length == m.capacity:
        assert order == m.keys()
    assert order == _old_bucket_sort(keys, length)


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def _old_fill(cands: Sequence[str], load: LoadData, settings: Settings,
              ) -> tuple[dict[str, float], dict[str, object]]:
    """LeastLongTermMessageRate._fill before perf25: rules 1-2 per broker."""
    scored: dict[str, float] = {}
    noted: dict[str, object] = {}
    for c in cands:
        if c in scored:
            continue
        bd = load.brokers.get(c)
        if bd is None:
            scored[c], noted[c] = math.inf, lltmr.LeastWhy("no-load-data", broker=c)
            continue
        threshold = float(settings["loadBalancerBrokerOverloadedThresholdPercentage"]) / 100.0
        usage = lltmr.overload_usage(bd.local, settings)
        if usage > threshold:
            scored[c] = math.inf
            noted[c] = lltmr.LeastWhy("overloaded", broker=c, usage=usage, threshold=threshold)
        else:
            scored[c] = lltmr.long_term_rate(bd)
    return scored, noted


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("version", ["4.0.0", "3.3.0"])  # weighted (PIP-358) / unweighted
def test_scores_read_once_are_the_per_broker_scores(seed: int, version: str) -> None:
    """Same scores (bit for bit), notes and settings read; a list of brokers without load data
    reads no setting."""
    rng = Random(seed)
    pool = [0.0, -0.0, 50.0, 85.0, 85.00001, 100.0, math.nan]

    def usage() -> ResourceUsage:
        return ResourceUsage(rng.choice(pool) if rng.random() < 0.5 else rng.uniform(0, 120),
                             rng.choice([100.0, 0.0, 100.0]))

    locals_ = {f"b{i}": LocalBrokerData(cpu=usage(), memory=usage(), directMemory=usage(),
                                        bandwidthIn=usage(), bandwidthOut=usage())
               for i in range(rng.randint(1, 40))}
    load = LoadData(MappingProxyType({
        b: BrokerData(local=x, time_average=TimeAverageBrokerData(
            longTermMsgRateIn=rng.choice([0.0, -0.0, rng.uniform(0, 1e4)])))
        for b, x in locals_.items()}), MappingProxyType({}))
    overrides = {"loadBalancerMemoryResourceWeight": rng.choice([0.0, 1.0, 0.5]),
                 "loadBalancerBandwithInResourceWeight": rng.choice([1.0, 2.0])}
    profile = profile_for(Version.parse(version))
    cands = [*rng.sample(sorted(locals_), len(locals_)), "missing-1", "missing-2"]
    rng.shuffle(cands)
    new_settings = Settings.defaults(profile).with_values(**overrides)
    old_settings = Settings.defaults(profile).with_values(**overrides)
    memo: tuple[dict[str, float], dict[str, lltmr.LeastWhy]] = ({}, {})
    lltmr._fill(cands, load, new_settings, memo)
    want = _old_fill(cands, load, old_settings)
    assert list(memo[0]) == list(want[0])
    assert [_bits(v) for v in memo[0].values()] == [_bits(v) for v in want[0].values()]
    assert memo[1] == want[1]
    assert new_settings.read_values() == old_settings.read_values()
    unread = Settings.defaults(profile)
    lltmr._fill(["missing-1"], load, unread, ({}, {}))
    assert unread.read_values() == Settings.defaults(profile).read_values()


def test_large_topic_count_with_and_without_preallocations() -> None:
    """``filterBrokersWithLargeTopicCount``: a broker's topics plus its preallocated bundles'
    (summed only when it has some); a broker without data counts 0; the removed are named."""
    from lbctl.model.load import BundleData
    from lbctl.records import replace
    from lbctl.strategies.placement.filters import filter_large_topic_count

    def pre(topics: int) -> BundleData:
        return replace(BundleData.new(), topics=topics)

    limit = 10
    brokers = {
        "a:1": BrokerData(local=LocalBrokerData(numTopics=10)),
        "b:1": BrokerData(local=LocalBrokerData(numTopics=11)),
        "c:1": BrokerData(local=LocalBrokerData(numTopics=6), preallocated=MappingProxyType(
            {"t/n/0x0_0x1": pre(3), "t/n/0x1_0x2": pre(2)})),
        "d:1": BrokerData(local=LocalBrokerData(numTopics=7), preallocated=MappingProxyType(
            {"t/n/0x0_0x1": pre(4)})),
        "e:1": BrokerData(local=LocalBrokerData(numTopics=6), preallocated=MappingProxyType(
            {"t/n/0x0_0x1": pre(4)})),
    }
    load = LoadData(MappingProxyType(brokers), MappingProxyType({}))
    settings = Settings.defaults().with_values(loadBalancerBrokerMaxTopics=limit)
    steps: list = []
    cands = ("a:1", "b:1", "c:1", "d:1", "e:1", "nodata:1")
    assert filter_large_topic_count(cands, load, settings, steps) == ("a:1", "e:1", "nodata:1")
    assert steps[-1].why is not None and steps[-1].why.names == ("b:1", "c:1", "d:1")
    kept = ("a:1", "e:1")
    assert filter_large_topic_count(kept, load, settings, steps) == kept
    assert steps[-1].why is None and steps[-1].after == kept

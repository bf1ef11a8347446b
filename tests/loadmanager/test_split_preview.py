"""The split preview: how LARGEST and HOT resolve (``NamespaceBundleFactory``), the admin-side
checks of ``NamespacesBase.internalSplitNamespaceBundleAsync``, and the children it reports."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from lbctl.config import Settings, resolve
from lbctl.errors import UsageError
from lbctl.explain.words import text
from lbctl.loadmanager.split_preview import SplitRequest, preview
from lbctl.model.bundle import topic_hash
from lbctl.model.cluster import TopicStats
from lbctl.records import replace
from lbctl.sources.snapshot import read_snapshots
from lbctl.strategies.split.base import SplitError
from tests.factories import broker, bundle_data, state, stats
from tests.paths import EXAMPLES

EXAMPLE = EXAMPLES / "flow-or-qps.json"
NS = "t/ns"
BOUNDS = (0x00000000, 0x40000000, 0x80000000, 0xC0000000, 0xFFFFFFFF)


def _cluster(topics: dict[str, TopicStats] | None = None, bundle_stats=None, data=None):
    bundle_stats = bundle_stats or {
        f"{NS}/0x00000000_0x40000000": stats(100, topics=3),
        f"{NS}/0x40000000_0x80000000": stats(100, topics=2),
        f"{NS}/0x80000000_0xc0000000": stats(100, topics=2),
        f"{NS}/0xc0000000_0xffffffff": stats(100, topics=2),
    }
    st = state({"b1": broker(bundles=bundle_stats)}, bundle_data=data)
    return replace(st, namespaces=MappingProxyType({NS: BOUNDS}),
                   topics=MappingProxyType(topics or {}))


def _topics_per_bundle(counts: dict[int, int]) -> dict[str, TopicStats]:
    """Topic names whose hashes put ``counts[i]`` topics in bundle ``i`` of ``BOUNDS``."""
    out: dict[str, TopicStats] = {}
    have = dict.fromkeys(counts, 0)
    i = 0
    while have != counts:
        name = f"persistent://{NS}/topic-{i}"
        i += 1
        idx = next(k for k in range(4) if BOUNDS[k] <= topic_hash(name) < BOUNDS[k + 1])
        if have.get(idx, 0) < counts.get(idx, 0):
            have[idx] += 1
            out[name] = TopicStats(msgRateIn=10.0 * i)
    return out


def test_largest_is_the_bundle_with_most_topics() -> None:
    topics = _topics_per_bundle({0: 2, 1: 5, 2: 3, 3: 1})
    p = preview(_cluster(topics), Settings.defaults(), SplitRequest(NS, bundle_type="LARGEST"))
    assert p.bundle == f"{NS}/0x40000000_0x80000000" and p.selected_by == "LARGEST"
    assert "5 of the namespace's 11" in text(p.selection_why)


def test_largest_tie_goes_to_the_first_bundle_to_reach_the_count() -> None:
    """Topics are counted in name order; a later bundle needs a strictly higher count."""
    topics = _topics_per_bundle({0: 3, 2: 3})
    counts = {0: 0, 2: 0}
    leader = None
    for t in sorted(topics):
        k = 0 if topic_hash(t) < BOUNDS[1] else 2
        counts[k] += 1
        if counts[k] == 3 and leader is None:
            leader = k
    p = preview(_cluster(topics), Settings.defaults(), SplitRequest(NS, bundle="LARGEST"))
    assert p.bundle == f"{NS}/0x{BOUNDS[leader]:08x}_0x{BOUNDS[leader + 1]:08x}"


def test_largest_without_topics_is_not_found() -> None:
    with pytest.raises(SplitError, match="Bundle range LARGEST not found"):
        preview(_cluster(), Settings.defaults(), SplitRequest(NS, bundle="LARGEST"))


def test_hot_is_the_highest_long_term_throughput_with_topics() -> None:
    b = [f"{NS}/0x00000000_0x40000000", f"{NS}/0x40000000_0x80000000",
         f"{NS}/0x80000000_0xc0000000", f"{NS}/0xc0000000_0xffffffff"]
    data = {
        b[0]: bundle_data(tp_in=5e6, topics=3),
        b[1]: bundle_data(tp_in=9e9, topics=0),  # the hottest, but its bundle data counts no topic
        b[2]: bundle_data(tp_in=1e6, topics=2, long_term=(8e6, 0, 0, 0)),  # long-term decides
        b[3]: bundle_data(tp_in=1e6, topics=2),
    }
    p = preview(_cluster(data=data), Settings.defaults(), SplitRequest(NS, bundle_type="hot"))
    assert p.bundle == b[2] and p.selected_by == "HOT"


def test_hot_not_found_when_no_bundle_counts_topics() -> None:
    """``NamespaceServiceTest``: "Bundle range HOT not found" on a namespace without load."""
    zero = {f"{NS}/0x00000000_0x40000000": stats(100, topics=0)}
    with pytest.raises(SplitError, match="Bundle range HOT not found"):
        preview(_cluster(bundle_stats=zero), Settings.defaults(), SplitRequest(NS, bundle="HOT"))


def test_range_split_children_and_owner() -> None:
    topics = _topics_per_bundle({0: 4})
    p = preview(_cluster(topics), Settings.defaults(),
                SplitRequest(NS, bundle="0x00000000_0x40000000", unload=True))
    assert p.boundaries == (0x20000000,) and p.owner == "b1" and p.unload
    assert [c.bundle for c in p.children] == [f"{NS}/0x00000000_0x20000000",
                                              f"{NS}/0x20000000_0x40000000"]
    assert sorted(t for c in p.children for t in c.topics) == sorted(topics)
    assert sum(c.msg_rate for c in p.children) == sum(s.msgRateIn for s in topics.values())
    assert all(c.broker == "b1" for c in p.children)
    assert (p.bundles_before, p.bundles_after) == (4, 5)


def test_namespace_without_boundaries_uses_reported_bundles() -> None:
    st = replace(_cluster(), namespaces=MappingProxyType({}))
    p = preview(st, Settings.defaults(), SplitRequest(NS, bundle="0xc0000000_0xffffffff"))
    assert p.boundaries == (0xC0000000 + (0xFFFFFFFF - 0xC0000000) // 2,)


def test_bundle_too_small_to_split() -> None:
    tiny = {f"{NS}/0x00000000_0x00000001": stats(topics=2),
            f"{NS}/0x00000001_0xffffffff": stats(topics=2)}
    st = replace(_cluster(bundle_stats=tiny),
                 namespaces=MappingProxyType({NS: (0, 1, 0xFFFFFFFF)}))
    with pytest.raises(SplitError, match="can't be split further"):
        preview(st, Settings.defaults(), SplitRequest(NS, bundle="0x00000000_0x00000001"))


@pytest.mark.parametrize(("request_", "error", "match"), [
    (SplitRequest(NS), UsageError, "Must pass one of the params"),
    (SplitRequest(NS, bundle="0x00000000_0x40000000", bundle_type="HOT"), UsageError,
     "mutually exclusive"),
    (SplitRequest("t/other", bundle="0x00000000_0x40000000"), UsageError, "not in the snapshot"),
    (SplitRequest("nonsense", bundle="0x00000000_0x40000000"), UsageError, "tenant/namespace"),
    (SplitRequest(NS, bundle="0x00000000_0x20000000"), UsageError, "is not a bundle of t/ns"),
    (SplitRequest(NS, bundle="0x0_0x4"), SplitError, "bad bundle range"),
    (SplitRequest(NS, bundle="0x00000000_0x40000000", algorithm="evenly"), SplitError,
     "Unsupported namespace bundle split algorithm"),
    (SplitRequest(NS, bundle="0x00000000_0x40000000", algorithm="specified_positions_divide"),
     SplitError, "splitBoundaries must not be empty"),
    (SplitRequest(NS, bundle="0x00000000_0x40000000", algorithm="topic_count_equally_divide"),
     SplitError, "the snapshot's 'topics' must list them"),
])
def test_errors(request_: SplitRequest, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        preview(_cluster(), Settings.defaults(), request_)


def test_positions_all_outside_the_bundle() -> None:
    req = SplitRequest(NS, bundle="0x00000000_0x40000000", algorithm="specified_positions_divide",
                       positions=(0x50000000, 0x60000000))
    with pytest.raises(SplitError, match="no split position is strictly inside.*dropped 0x50000000"):
        preview(_cluster(_topics_per_bundle({0: 3})), Settings.defaults(), req)
    ok = replace(req, positions=(0x10000000, 0x50000000))
    p = preview(_cluster(_topics_per_bundle({0: 3})), Settings.defaults(), ok)
    assert p.boundaries == (0x10000000,)


def test_algorithm_must_be_supported_by_the_broker() -> None:
    settings = Settings.defaults().with_values(
        supportedNamespaceBundleSplitAlgorithms="range_equally_divide,topic_count_equally_divide")
    with pytest.raises(SplitError, match=r"supported algorithms are \[range_equally_divide, "):
        preview(_cluster(), settings, SplitRequest(NS, bundle="0x00000000_0x40000000",
                                                  algorithm="flow_or_qps_equally_divide"))


def test_namespace_at_maximum_bundles() -> None:
    settings = Settings.defaults().with_values(loadBalancerNamespaceMaximumBundles=4)
    with pytest.raises(SplitError, match="already has 4 bundles"):
        preview(_cluster(), settings, SplitRequest(NS, bundle="0x00000000_0x40000000"))


@pytest.mark.parametrize(("rate", "mbytes", "children"), [
    (450, 200, 5), (1900, 90, 3), (1100, 110, 2)])
def test_documentation_example_snapshot(rate: int, mbytes: int, children: int) -> None:
    """The example's topics really hash to the documentation's positions."""
    st = read_snapshots([EXAMPLE])[-1]
    hashes = sorted(topic_hash(t) for t in st.topics_of_bundle("my-tenant/my-ns/0x00000000_0x80000000"))
    assert hashes == [0x10000000, 0x15000000, 0x24000000, 0x39000000, 0x58000000, 0x76000000]
    settings = resolve(st.config, {}, {"loadBalancerNamespaceBundleMaxMsgRate": str(rate),
                                       "loadBalancerNamespaceBundleMaxBandwidthMbytes": str(mbytes)})
    p = preview(st, settings, SplitRequest("my-tenant/my-ns", bundle="0x00000000_0x80000000",
                                           algorithm="flow_or_qps_equally_divide"))
    assert len(p.children) == children
    for c in p.children:  # within the limits unless one topic alone exceeds them
        assert (c.msg_rate <= rate and c.throughput <= mbytes * 1048576) or len(c.topics) == 1


# --- every topic in metadata (namespaceTopics): NamespaceService.getOwnedTopicListForNamespaceBundle
def _listed(st, persistent=(), non_persistent=(), partitioned=None):
    from lbctl.model.cluster import NamespaceTopics

    return replace(st, namespace_topics=MappingProxyType({NS: NamespaceTopics(
        tuple(persistent), tuple(non_persistent), MappingProxyType(partitioned or {}))}))


def test_largest_counts_topics_that_are_not_loaded() -> None:
    """``getBundleWithHighestTopicsAsync`` lists the namespace's persistent topics from metadata:
    a bundle whose topics are idle (no stats) can be the largest."""
    loaded = _topics_per_bundle({1: 3})
    idle = [t for t in _topics_per_bundle({1: 3, 2: 5}) if topic_hash(t) >= BOUNDS[2]]
    st = _listed(_cluster(loaded), persistent=[*loaded, *idle])
    p = preview(st, Settings.defaults(), SplitRequest(NS, bundle="LARGEST"))
    assert p.bundle == f"{NS}/0x80000000_0xc0000000"
    assert "5 of the namespace's 8" in text(p.selection_why)
    # without the list only the loaded topics count
    p = preview(_cluster(loaded), Settings.defaults(), SplitRequest(NS, bundle="LARGEST"))
    assert p.bundle == f"{NS}/0x40000000_0x80000000"


def test_topic_count_split_sees_partitions_and_idle_topics() -> None:
    """topic_count_equally_divide over the persistent list, the non-persistent list and every
    partition of the partitioned topics (those already listed are not repeated)."""
    part = f"persistent://{NS}/p"
    np_topic = f"non-persistent://{NS}/live"
    st = _listed(_cluster(), persistent=[f"{part}-partition-0"], non_persistent=[np_topic],
                 partitioned={part: 12})
    topics = st.namespace_topics[NS].all_topics()
    assert topics.count(f"{part}-partition-0") == 1 and len(topics) == 13
    bundle = f"{NS}/0x00000000_0x40000000"
    mine = [t for t in topics if topic_hash(t) < BOUNDS[1]]
    assert st.topics_of_bundle(bundle) == mine
    settings = Settings.defaults()
    assert len(mine) >= 2  # the 12 partitions spread over the four bundles
    p = preview(st, settings, SplitRequest(NS, bundle="0x00000000_0x40000000",
                                           algorithm="topic_count_equally_divide"))
    h = sorted(topic_hash(t) for t in mine)
    n = len(h)
    mid = h[max(n // 2 - 1, 0)] + (h[n // 2] - h[max(n // 2 - 1, 0)]) // 2
    assert p.boundaries == (mid,)
    assert sum(len(c.topics) for c in p.children) == len(mine)


def test_one_listed_topic_blocks_the_split_even_with_more_loaded() -> None:
    """The "at most one topic: no split" rule reads the metadata list, not the loaded topics."""
    loaded = _topics_per_bundle({0: 3})
    one = sorted(loaded)[:1]
    st = _listed(_cluster(loaded), persistent=one)
    with pytest.raises(SplitError, match=r"the bundle has 1 topic\(s\)") as e:
        preview(st, Settings.defaults(), SplitRequest(NS, bundle="0x00000000_0x40000000",
                                                      algorithm="topic_count_equally_divide"))
    assert "must list them" not in str(e.value)
    p = preview(_cluster(loaded), Settings.defaults(), SplitRequest(
        NS, bundle="0x00000000_0x40000000", algorithm="topic_count_equally_divide"))
    assert len(p.boundaries) == 1


# --- the preview adds up: children + what is not attributed = the parent's load report ---------
def test_children_add_up_to_the_parent_when_every_topic_is_listed_with_stats() -> None:
    p = preview(read_snapshots([EXAMPLE])[-1], Settings.defaults(),
                SplitRequest("my-tenant/my-ns", bundle_type="HOT",
                             algorithm="topic_count_equally_divide"))
    assert p.stats is not None
    assert sum(len(c.topics) for c in p.children) == p.stats.topics == 6
    assert sum(c.msg_rate or 0 for c in p.children) == pytest.approx(p.stats.msg_rate)
    rest = p.unattributed()
    assert rest is not None and rest.nothing


def test_without_a_topic_list_the_whole_parent_is_named_not_attributed() -> None:
    """Bundle stats count 2 topics, the snapshot lists none: no child shows 0 topics."""
    p = preview(_cluster(bundle_stats={
        f"{NS}/0x00000000_0x40000000": stats(100, 20, 1000, 3000, topics=2),
        f"{NS}/0x40000000_0x80000000": stats(1, topics=1)}), Settings.defaults(),
        SplitRequest(NS, bundle="0x00000000_0x40000000"))
    rest = p.unattributed()
    assert rest is not None
    assert (rest.topics, rest.msg_rate, rest.throughput) == (2, 120.0, 4000.0)


def test_listed_topics_without_stats_are_named() -> None:
    """namespaceTopics lists 3 topics of the bundle, the snapshot has stats for 1 (10 msg/s);
    the load report says 2 loaded topics and 50 msg/s."""
    three = list(_topics_per_bundle({0: 3}))
    with_stats = {three[0]: TopicStats(msgRateIn=10.0)}
    st = _listed(_cluster(with_stats, bundle_stats={
        f"{NS}/0x00000000_0x40000000": stats(50, topics=2),
        f"{NS}/0x40000000_0x80000000": stats(1, topics=1)}), persistent=three)
    p = preview(st, Settings.defaults(), SplitRequest(NS, bundle="0x00000000_0x40000000"))
    rest = p.unattributed()
    assert rest is not None
    assert sum(len(c.topics) for c in p.children) == 3
    assert sum(c.without_stats for c in p.children) == rest.without_stats == 2
    assert rest.unloaded == 1 and rest.topics == 0  # metadata lists one topic not loaded
    assert rest.msg_rate == pytest.approx(40.0)  # 50 reported - 10 attributed

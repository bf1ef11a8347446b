"""The extensible load manager with the data Pulsar reads beside load, and its SplitScheduler with
every split algorithm.

Follows pulsar-broker ``extensions.scheduler.TransferShedder.isTransferable`` (a failing broker
filter makes a bundle not transferable), the filter pipeline of ``ExtensibleLoadManagerImpl``
(``BrokerLoadManagerClassFilter`` at 1e4087be9641, ``BrokerVersionFilter`` at 442b4cd20c3e,
``AntiAffinityGroupPolicyFilter``, ``BrokerIsolationPoliciesFilter``) and
``DefaultNamespaceBundleSplitStrategyImpl`` at 95d73ce4ef5c (``getSplitBoundary`` with the
default algorithm; anything but exactly one boundary is Failure/Unknown).
"""

from __future__ import annotations

from pathlib import Path

from lbctl.config import Settings
from lbctl.explain.words import text
from lbctl.loadmanager.extensible import ExtensibleLoadManager
from lbctl.model.cluster import EXTENSIBLE_CLASS, ClusterState, NamespaceTopics, TopicStats
from lbctl.model.decision import Label
from lbctl.model.policies import ClusterPolicies, IsolationPolicy
from lbctl.records import replace
from lbctl.sources.snapshot import read_snapshots
from lbctl.strategies.placement.broker_filters import (
    AntiAffinityGroupFilter,
    BrokerLookup,
    FilterContext,
)

ROOT = Path(__file__).resolve().parents[2]
SKEWED = ROOT / "examples" / "extensible" / "skewed.json"
B1 = "broker-1.pulsar.svc:8080"  # the least loaded broker, every round's first destination
MODULAR_CLASS = "org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl"


def skewed() -> ClusterState:
    return read_snapshots([SKEWED])[0]


def cycle(st: ClusterState, **conf: object):
    from lbctl.config import resolve

    settings = resolve(st.config, {}, {k: str(v) for k, v in conf.items()})
    return ExtensibleLoadManager(seed=0).run_cycle(st, settings)


def transfers(st: ClusterState, **conf: object) -> list[tuple[str, str | None]]:
    return [(a.decision.unload.source, a.decision.unload.destination)
            for a in cycle(st, **conf).actions]


def blocked_by(st: ClusterState, said: str, **conf: object) -> None:
    """Nothing moves: every round pairs with broker-1 (a failed round keeps its min broker), and
    each top bundle was refused for ``said``."""
    r = cycle(st, **conf)
    assert r.actions == ()
    whys = [text(b.why) for rd in r.shed.rounds for b in rd.bundles if b.outcome == "skipped"]
    assert whys and all(said in w for w in whys), whys
    assert {rd.min_broker for rd in r.shed.rounds} == {B1}


def with_brokers(st: ClusterState, **changes: dict[str, object]) -> ClusterState:
    brokers = dict(st.brokers)
    for b, ch in changes.items():
        name = b.replace("_", "-") + ".pulsar.svc:8080"
        brokers[name] = replace(brokers[name], **ch)  # type: ignore[arg-type]
    return replace(st, brokers=brokers)


def test_baseline_moves_to_broker_1() -> None:
    assert (  # two rounds: broker-5 → broker-1, broker-4 → broker-2
        sorted(set(transfers(skewed())))
        == [("broker-4.pulsar.svc:8080", "broker-2.pulsar.svc:8080"),
            ("broker-5.pulsar.svc:8080", B1)])


def test_isolated_namespace_is_not_shed_unless_allowed() -> None:
    policy = IsolationPolicy(("acme/telemetry",), (r"broker-[2-5]\..*",), name="p")
    st = replace(skewed(), policies=ClusterPolicies((policy,)))
    blocked_by(st, "loadBalancerSheddingBundlesWithPoliciesEnabled is false")
    blocked_by(st, f"the broker filters exclude {B1}",
               loadBalancerSheddingBundlesWithPoliciesEnabled="true")
    everywhere = IsolationPolicy(("acme/telemetry",), (r"broker-.*",), name="p")
    assert transfers(replace(skewed(), policies=ClusterPolicies((everywhere,))),
                     loadBalancerSheddingBundlesWithPoliciesEnabled="true") == transfers(skewed())


def test_a_policys_primary_is_not_shared() -> None:
    """broker-1 is the primary of another namespace's policy: acme/telemetry may not use it."""
    policy = IsolationPolicy(("other/.*",), (r"broker-1\..*",), name="p")
    blocked_by(replace(skewed(), policies=ClusterPolicies((policy,))),
               f"the broker filters exclude {B1}")


def test_load_manager_class_filter() -> None:
    """A broker still on the modular load manager (a migration) receives nothing."""
    ext = {"loadManagerClassName": EXTENSIBLE_CLASS}
    st = with_brokers(skewed(), broker_1={"loadManagerClassName": MODULAR_CLASS},
                      broker_2=ext, broker_3=ext, broker_4=ext, broker_5=ext)
    blocked_by(st, f"the broker filters exclude {B1}")
    # no broker's class known (not captured): the filter is not applied
    assert B1 in {d for _, d in transfers(skewed())}
    # every broker on the extensible load manager: nothing excluded
    st = with_brokers(skewed(), broker_1=ext, broker_2=ext, broker_3=ext, broker_4=ext,
                      broker_5=ext)
    assert transfers(st) == transfers(skewed())


def test_versions_missing_from_the_snapshot_do_not_block_transfers() -> None:
    st = skewed()
    no_versions = replace(st, brokers={b: replace(v, brokerVersionString=None)
                                       for b, v in st.brokers.items()})
    baseline = transfers(st)
    assert transfers(no_versions, preferLaterVersions="true") == baseline
    # one broker without a version while others have one: Pulsar's filter fails, nothing moves
    one_missing = with_brokers(st, broker_3={"brokerVersionString": None})
    blocked_by(one_missing, "No version string", preferLaterVersions="true")
    # an older broker-1 receives nothing
    older = with_brokers(st, broker_1={"brokerVersionString": "3.3.1"})
    blocked_by(older, f"the broker filters exclude {B1}", preferLaterVersions="true")
    assert transfers(older) == baseline


def test_anti_affinity_filter_counts_owned_bundles() -> None:
    """``AntiAffinityGroupPolicyHelper.filter``: the brokers owning the fewest bundles of the
    group; with failure domains, first the domain owning the fewest."""
    policies = ClusterPolicies(anti_affinity={"g/a": "grp", "g/b": "grp"},
                               failure_domains={"z1": ("x:1", "y:1"), "z2": ("z:1",)})
    owners = {"g/a/0x00000000_0x80000000": "x:1", "g/a/0x80000000_0xffffffff": "x:1",
              "g/b/0x00000000_0xffffffff": "z:1", "h/c/0x00000000_0xffffffff": "y:1"}
    brokers = {b: BrokerLookup("3.0.0") for b in ("x:1", "y:1", "z:1")}
    ctx = FilterContext(Settings.defaults(), {}, policies, owners=owners)
    assert set(AntiAffinityGroupFilter()(dict(brokers), "g/b/0x00000000_0xffffffff", ctx)) == {
        "y:1"}
    on = FilterContext(Settings.defaults().with_values(failureDomainsEnabled=True), {}, policies,
                       owners=owners)
    # z1 owns 2 bundles of the group, z2 owns 1: only z2's broker stays
    assert set(AntiAffinityGroupFilter()(dict(brokers), "g/b/0x00000000_0xffffffff", on)) == {
        "z:1"}
    assert set(AntiAffinityGroupFilter()(dict(brokers), "h/c/0x00000000_0xffffffff", on)) == set(
        brokers)  # no group: untouched


# --- the SplitScheduler with every algorithm ----------------------------------------------------
HOT_BUNDLE = "acme/telemetry/0xc9249246_0xdb6db6d8"  # broker-5's 50 MiB/s bundle (6 topics)


def split_state(topics: list[str], stats: dict[str, TopicStats] | None = None) -> ClusterState:
    st = skewed()
    return replace(st, namespace_topics={"acme/telemetry": NamespaceTopics(tuple(topics))},
                   topics=stats or {})


def splits(st: ClusterState, algorithm: str, **conf: object):
    from lbctl.config import resolve

    settings = resolve(st.config, {}, {
        "defaultNamespaceBundleSplitAlgorithm": algorithm,
        "loadBalancerNamespaceBundleSplitConditionHitCountThreshold": "0",
        "loadBalancerNamespaceBundleMaxBandwidthMbytes": "45",
        "loadBalancerSheddingEnabled": "false", **{k: str(v) for k, v in conf.items()}})
    r = ExtensibleLoadManager().run_cycle(st, settings)
    res = next(x for x in r.splits if any(c.bundle == HOT_BUNDLE for c in x.checks))
    return res, next(c for c in res.checks if c.bundle == HOT_BUNDLE)


def _topics_in_hot_bundle(n: int) -> list[str]:
    from lbctl.model.bundle import BundleName, topic_hash

    rng = BundleName.parse(HOT_BUNDLE).range
    out, i = [], 0
    while len(out) < n:
        t = f"persistent://acme/telemetry/t{i}"
        if rng.contains(topic_hash(t)):
            out.append(t)
        i += 1
    return out


def test_split_with_range_equally_divide() -> None:
    res, check = splits(skewed(), "range_equally_divide")
    d = next(d for d in res.decisions if d.bundle == HOT_BUNDLE)
    assert d.label is Label.SUCCESS and d.boundary == 0xc9249246 + (0xdb6db6d8 - 0xc9249246) // 2


def test_split_with_topic_count_uses_every_topic_in_metadata() -> None:
    """The boundary falls between the two middle topic hashes of the namespace's topic list,
    loaded or not (``getOwnedTopicListForNamespaceBundle``)."""
    from lbctl.model.bundle import topic_hash

    topics = _topics_in_hot_bundle(4)
    res, _ = splits(split_state(topics), "topic_count_equally_divide")
    d = next(d for d in res.decisions if d.bundle == HOT_BUNDLE)
    h = sorted(topic_hash(t) for t in topics)
    assert d.boundary == h[1] + (h[2] - h[1]) // 2
    assert d.algorithm == "topic_count_equally_divide"
    # without a topic list the bundle has no topic to divide: no boundary, Failure/Unknown
    res, check = splits(skewed(), "topic_count_equally_divide")
    assert HOT_BUNDLE not in {d.bundle for d in res.decisions} and res.failures >= 1
    assert "no boundary" in text(check.why) and "Failure/Unknown" in text(check.why)


def test_split_fails_when_an_algorithm_gives_several_boundaries() -> None:
    """flow_or_qps_equally_divide cutting the bundle in three: "The size of split boundaries is
    not 1" — Failure/Unknown, the hit count kept."""
    topics = _topics_in_hot_bundle(6)
    mb = 1024 * 1024
    stats = {t: TopicStats(100.0, 0.0, 10 * mb, 0.0) for t in topics}  # 60 MiB/s over 6 topics
    res, check = splits(split_state(topics, stats), "flow_or_qps_equally_divide",
                        loadBalancerNamespaceBundleMaxBandwidthMbytes=25)
    assert HOT_BUNDLE not in {d.bundle for d in res.decisions}
    assert "boundaries" in text(check.why) and "needs exactly one" in text(check.why)
    assert res.hit_counts.get(HOT_BUNDLE) == 1  # kept for the next cycle
    # two pieces: one boundary, a split
    res, _ = splits(split_state(topics, stats), "flow_or_qps_equally_divide",
                    loadBalancerNamespaceBundleMaxBandwidthMbytes=45)
    assert HOT_BUNDLE in {d.bundle for d in res.decisions}


def test_split_with_specified_positions_fails() -> None:
    """No positions are passed by the automatic split: the algorithm throws (Failure/Unknown)."""
    res, check = splits(skewed(), "specified_positions_divide")
    assert HOT_BUNDLE not in {d.bundle for d in res.decisions}
    assert "failed" in text(check.why)


def test_explain_says_when_the_version_filter_cannot_apply() -> None:
    st = skewed()
    no_versions = replace(st, brokers={b: replace(v, brokerVersionString=None)
                                       for b, v in st.brokers.items()})
    text = cycle(no_versions, preferLaterVersions="true").explanation().to_text()
    assert "BrokerVersionFilter not applied" in text
    assert "BrokerVersionFilter not applied" not in cycle(no_versions).explanation().to_text()
    assert "BrokerVersionFilter not applied" not in cycle(
        st, preferLaterVersions="true").explanation().to_text()


def test_split_says_which_condition_fired() -> None:
    """The hot bundle (50 MiB/s) over ``loadBalancerNamespaceBundleMaxBandwidthMbytes`` 45: the
    decision keeps the figure and the limit (``DefaultNamespaceBundleSplitStrategyImpl`` at
    95d73ce4ef5c logs them), recommend's split action and explain's splits say them as the
    modular splits do (setting, value, limit, "Message Throughput: 50/45 MB/s")."""
    from lbctl.config import resolve

    st = skewed()
    settings = resolve(st.config, {}, {
        "loadBalancerNamespaceBundleSplitConditionHitCountThreshold": "0",
        "loadBalancerNamespaceBundleMaxBandwidthMbytes": "45"})
    r = ExtensibleLoadManager().run_cycle(st, settings)
    (action,) = [a for a in r.plan().actions if a.action == "split" and a.bundle == HOT_BUNDLE]
    assert action.reason == "Bandwidth" and action.detail == "Message Throughput: 50/45 MB/s"
    explanation = r.explanation()
    (entry,) = [s for s in explanation.to_dict()["splits"] if s["bundle"] == HOT_BUNDLE]
    assert (entry["threshold"], entry["limit"], round(entry["value"])) == (
        "loadBalancerNamespaceBundleMaxBandwidthMbytes", 45, 50)
    assert entry["detail"] == "Message Throughput: 50/45 MB/s"
    idle = [s for s in explanation.to_dict()["splits"] if "under every limit" in s["why"]]
    assert idle and all("threshold" not in s for s in idle)  # nothing fired: no figure
    line = next(x for x in explanation.to_text().splitlines() if HOT_BUNDLE in x and "split:" in x)
    assert line.endswith("; Message Throughput: 50/45 MB/s "
                         "(loadBalancerNamespaceBundleMaxBandwidthMbytes)"), line


def test_split_cycle_walks_the_bundle_stats_as_a_concurrent_hash_map() -> None:
    """``findBundlesToSplit`` iterates ``BrokerService.getBundleStats()``: ``PulsarStats``'
    ``Maps.newConcurrentMap()`` (PulsarStats at 1710bfdaa85f), which resizes at its 12th key
    where a ``HashMap`` waits for the 13th. With twelve hot bundles and one split per cycle the
    bundle taken first is the ``ConcurrentHashMap``'s first (a ``HashMap`` would take
    0x2aaaaaaa_0x3fffffff)."""
    from lbctl.config import resolve
    from lbctl.model.load import NamespaceBundleStats

    st = skewed()
    step = 0x100000000 // 12
    names = [f"acme/telemetry/0x{i * step:08x}_0x{(i + 1) * step if i < 11 else 0xffffffff:08x}"
             for i in range(12)]
    hot = NamespaceBundleStats(topics=5, msgRateIn=50000.0)
    st = replace(st, brokers={**st.brokers, B1: replace(st.brokers[B1],
                                                        lastStats=dict.fromkeys(names, hot))})
    settings = resolve(st.config, {}, {
        "loadBalancerNamespaceBundleSplitConditionHitCountThreshold": "0",
        "loadBalancerMaxNumberOfBundlesToSplitPerCycle": "1"})
    r = ExtensibleLoadManager().run_cycle(st, settings)
    got = [d.bundle for res in r.splits for d in res.decisions if d.broker == B1]
    assert got == ["acme/telemetry/0xbffffffd_0xd5555552"]

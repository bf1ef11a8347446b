"""``ModularLoadManagerImpl.selectBroker`` and ``doLoadShedding`` with the data Pulsar reads beside
load: namespace isolation policies (and the shared-broker exclusion), anti-affinity groups,
``persistentTopicsEnabled``, brokers without a readable load report, ``BrokerLoadManagerClassFilter``
and ``BrokerVersionFilter`` (pulsar-broker ``ModularLoadManagerImpl`` at 009a9bf2cdff,
``LoadManagerShared``, ``impl.BrokerVersionFilter``, ``impl.BrokerLoadManagerClassFilter`` at
83431ece6ddc).

Every case: OverloadShedder sheds one bundle of a hot broker; which broker it goes to (or why it
stays) is the behaviour under test.
"""

from __future__ import annotations

from lbctl.config import IMPL, Settings
from lbctl.explain.words import text
from lbctl.loadmanager.modular import OWNER_ONLY, ModularLoadManager
from lbctl.model.cluster import ClusterState
from lbctl.model.policies import ClusterPolicies, IsolationPolicy
from lbctl.records import replace
from lbctl.strategies.builtin import PLACEMENT, SHEDDING
from lbctl.versions import Version, profile_for
from tests.factories import broker, state, stats

ISO = "iso/ns/0x00000000_0xffffffff"
OPEN = "open/ns/0x00000000_0xffffffff"
TINY = "small/ns/0x00000000_0xffffffff"
HOT, COLD, MID = "hot:8080", "cold:8080", "mid:8080"
MODULAR = IMPL + "ModularLoadManagerImpl"
EXTENSIBLE = "org.apache.pulsar.broker.loadbalance.extensions.ExtensibleLoadManagerImpl"


def manager() -> ModularLoadManager:
    return ModularLoadManager(SHEDDING.create("OverloadShedder"),
                              PLACEMENT.create("LeastLongTermMessageRate"),
                              PLACEMENT.create("RoundRobinBrokerSelector"), seed=1)


def cluster(bundle: str = OPEN, **kw: object) -> ClusterState:
    """HOT at 95 % CPU with ``bundle`` (and a tiny one: Pulsar never sheds a broker's only
    bundle); COLD idle; MID at 50 %."""
    hot = broker(cpu=(95, 100), bundles={bundle: stats(1000, 1000, 1e6, 1e6), TINY: stats(1)})
    return replace(state({HOT: hot, COLD: broker(cpu=(1, 100)), MID: broker(cpu=(50, 100))},
                         now=1_700_000_000_000), **kw)


def outcome(st: ClusterState, settings: Settings | None = None):
    r = manager().run_cycle(st, settings or Settings.defaults())
    assert len(r.outcomes) == 1, r.outcomes
    return r.outcomes[0]


def test_baseline_goes_to_the_idle_broker() -> None:
    o = outcome(cluster())
    assert (o.destination, o.skipped) == (COLD, None)


def test_isolation_policy_confines_its_namespace() -> None:
    """A namespace with an isolation policy goes to its primary (MID), not to the idle broker."""
    policy = IsolationPolicy(("iso/.*",), ("mid",), name="iso-policy")
    o = outcome(cluster(ISO, policies=ClusterPolicies((policy,))))
    assert (o.destination, o.skipped) == (MID, None)
    assert any(s.name == "namespace policies" and s.after == (MID,) for s in o.placement.steps)


def test_other_namespaces_avoid_a_policys_primary() -> None:
    """The shared-broker exclusion: the idle broker is some policy's primary, so a namespace
    without a policy may not use it."""
    policy = IsolationPolicy(("iso/.*",), ("cold",), name="iso-policy")
    o = outcome(cluster(OPEN, policies=ClusterPolicies((policy,))))
    assert o.destination == MID
    step = next(s for s in o.placement.steps if s.name == "namespace policies")
    assert COLD not in step.after and "primary brokers of an isolation policy" in text(step.why)


def test_secondary_brokers_on_failover() -> None:
    """min_limit 2 with one primary available (the owner): the secondaries join."""
    policy = IsolationPolicy(("iso/.*",), ("hot",), ("cold",), min_limit=2, name="p")
    assert outcome(cluster(ISO, policies=ClusterPolicies((policy,)))).destination == COLD
    only = IsolationPolicy(("iso/.*",), ("hot",), ("cold",), min_limit=1, name="p")
    o = outcome(cluster(ISO, policies=ClusterPolicies((only,))))
    assert o.destination is None
    assert "shouldNamespacePoliciesUnload" in text(o.skipped)


def test_persistent_topics_disabled_broker_is_no_candidate() -> None:
    st = cluster()
    st = replace(st, brokers={**st.brokers,
                              COLD: replace(st.brokers[COLD], persistentTopicsEnabled=False)})
    assert outcome(st).destination == MID


def test_broker_without_load_report() -> None:
    """An active broker whose report cannot be read is no candidate, but counts as available."""
    st = cluster(available_brokers=(HOT, COLD, MID, "ghost:8080"))
    assert outcome(st).destination == COLD
    alone = replace(state({HOT: cluster().brokers[HOT]}, now=1), available_brokers=(HOT, "ghost:8080"))
    r = manager().run_cycle(alone, Settings.defaults())
    assert r.gate is None  # two brokers are available: the cycle runs
    assert r.outcomes[0].destination is None  # but nobody can take the bundle
    assert "shouldNamespacePoliciesUnload" in text(r.outcomes[0].skipped)
    one = manager().run_cycle(state({HOT: cluster().brokers[HOT]}, now=1), Settings.defaults())
    assert one.gate and "only 1 broker" in one.gate


def test_load_manager_class_filter() -> None:
    """A broker on the extensible load manager (modular → extensible migration) is removed; a
    report without a class counts as another class once any report names one."""
    st = cluster()
    brokers = {HOT: replace(st.brokers[HOT], loadManagerClassName=MODULAR),
               COLD: replace(st.brokers[COLD], loadManagerClassName=EXTENSIBLE),
               MID: replace(st.brokers[MID], loadManagerClassName=MODULAR)}
    o = outcome(replace(st, brokers=brokers))
    assert o.destination == MID
    assert any(s.name == "BrokerLoadManagerClassFilter" for s in o.placement.steps)
    brokers[COLD] = replace(st.brokers[COLD], loadManagerClassName=None)
    assert outcome(replace(st, brokers=brokers)).destination == MID
    # no report names its class (not captured): the filter is not applied
    assert outcome(st).destination == COLD


def test_version_filter() -> None:
    st = cluster()
    on = Settings.defaults().with_values(preferLaterVersions=True)
    versioned = {HOT: replace(st.brokers[HOT], brokerVersionString="3.3.1"),
                 COLD: replace(st.brokers[COLD], brokerVersionString="3.2.4"),
                 MID: replace(st.brokers[MID], brokerVersionString="3.3.1")}
    assert outcome(replace(st, brokers=versioned), on).destination == MID
    assert outcome(replace(st, brokers=versioned)).destination == COLD  # preferLaterVersions off
    # one broker without a version: BrokerFilterBadVersionException restores the candidates
    versioned[MID] = replace(st.brokers[MID], brokerVersionString=None)
    o = outcome(replace(st, brokers=versioned), on)
    assert o.destination == COLD
    assert any("candidates restored" in text(s.why) for s in o.placement.steps)
    # no version captured at all: not applied, said so
    o = outcome(st, on)
    assert o.destination == COLD
    assert any("not applied" in text(s.why) for s in o.placement.steps)


def _group_state() -> ClusterState:
    """Two anti-affinity namespaces: HOT owns g/a, COLD owns g/b, MID owns nothing of the group but
    carries more traffic than COLD (so without the groups COLD would be picked)."""
    ga, gb = "g/a/0x00000000_0xffffffff", "g/b/0x00000000_0xffffffff"
    hot = broker(cpu=(95, 100), bundles={ga: stats(1000, 1000, 1e6, 1e6), TINY: stats(1)})
    cold = broker(cpu=(1, 100), bundles={gb: stats(1, 1, 1, 1)})
    mid = broker(cpu=(50, 100), bundles={"x/y/0x00000000_0xffffffff": stats(5000, 5000)})
    return state({HOT: hot, COLD: cold, MID: mid}, now=1_700_000_000_000)


def test_anti_affinity_group_placement() -> None:
    """COLD already owns a namespace of the group: the bundle goes to MID, which owns none."""
    groups = ClusterPolicies(anti_affinity={"g/a": "grp", "g/b": "GRP"})
    o = outcome(replace(_group_state(), policies=groups))
    assert o.destination == MID
    step = next(s for s in o.placement.steps if s.name == "anti-affinity group")
    assert step.after == (MID,)
    assert outcome(_group_state()).destination == COLD  # without the groups


def test_anti_affinity_unload_skipped_when_it_would_come_back() -> None:
    """Every candidate owns one namespace of the group, the owner too: not unloaded."""
    st = _group_state()
    gc = "g/c/0x00000000_0xffffffff"
    mid = broker(cpu=(50, 100), bundles={gc: stats(1, 1, 1, 1), **st.brokers[MID].lastStats})
    st = replace(st, brokers={**st.brokers, MID: mid},
                 policies=ClusterPolicies(anti_affinity={"g/a": "grp", "g/b": "grp", "g/c": "grp"}))
    o = outcome(st)
    assert o.destination is None
    assert "shouldAntiAffinityNamespaceUnload" in text(o.skipped)


def test_overload_recheck_stays_within_the_policy() -> None:
    """The overload post-check asks again over the brokers the namespace policies allow, not all
    brokers: an isolated namespace whose only other primary is overloaded stays with it."""
    policy = IsolationPolicy(("iso/.*",), ("hot", "mid"), name="p")
    st = cluster(ISO, policies=ClusterPolicies((policy,)))
    st = replace(st, brokers={**st.brokers, MID: replace(st.brokers[MID],
                                                         cpu=replace(st.brokers[MID].cpu, usage=90))})
    o = outcome(st)
    assert o.placement.decision.broker == MID
    assert o.placement.recheck is not None
    assert set(o.placement.recheck.candidates) == {HOT, MID}  # never the idle COLD
    assert o.destination != COLD


def test_split_children_stay_when_policies_block_unload() -> None:
    """``checkNamespaceBundleSplit``: the children are unloaded only when the namespace policies
    let the bundle go (``shouldNamespacePoliciesUnload``)."""
    hot_stats = stats(40000, 0, 1e6, 0, topics=10)
    big = "iso/ns/0x00000000_0x80000000"
    hot = broker(cpu=(10, 100), bundles={big: hot_stats})
    st = state({HOT: hot, COLD: broker(cpu=(1, 100))}, now=1_700_000_000_000)
    r = manager().run_cycle(st, Settings.defaults())
    assert [s.unload for s in r.splits] == [True]
    policy = IsolationPolicy(("iso/.*",), ("hot",), name="p")
    r = manager().run_cycle(replace(st, policies=ClusterPolicies((policy,))), Settings.defaults())
    assert [s.unload for s in r.splits] == [False]


def test_explain_names_the_policies_and_brokers_without_reports() -> None:
    policy = IsolationPolicy(("iso/.*",), ("mid",), name="iso-policy")
    st = cluster(ISO, policies=ClusterPolicies((policy,), anti_affinity={"g/a": "grp"}),
                 available_brokers=(HOT, COLD, MID, "ghost:8080"))
    text = manager().run_cycle(st, Settings.defaults()).explanation().to_text()
    assert "Namespace policies: 1 isolation policy (iso-policy); anti-affinity groups grp" in text
    assert "Active without a load report: ghost:8080" in text
    assert "filter namespace policies: isolation policy iso-policy" in text
    plain = manager().run_cycle(cluster(), Settings.defaults()).explanation().to_text()
    assert "Namespace policies" not in plain and "without a load report" not in plain


def test_isolation_primary_without_a_report_is_not_scored() -> None:
    """An isolation policy may name a broker whose report cannot be read: the policy lets it
    through, but there is no report to place by — lbctl leaves it out and says so."""
    policy = IsolationPolicy(("iso/.*",), ("ghost", "mid"), name="p")
    st = cluster(ISO, policies=ClusterPolicies((policy,)),
                 available_brokers=(HOT, COLD, MID, "ghost:8080"))
    o = outcome(st)
    assert o.destination == MID
    assert any(s.name == "load report" and "ghost:8080" in text(s.why) for s in o.placement.steps)


def test_the_policies_example() -> None:
    """examples/policies.json (examples/README.md): the isolated namespace goes to its other
    primary, billing to the failure domain owning the fewest of its group, never to broker-6."""
    from lbctl.loadmanager.select import Options, plans
    from lbctl.sources.snapshot import read_snapshots
    from tests.paths import EXAMPLES

    [plan] = plans(read_snapshots([EXAMPLES / "policies.json"]), Options())
    dest = {a.bundle.rsplit("/", 1)[0]: a.destinationBroker for a in plan.actions
            if a.action == "unload"}
    assert dest == {"acme/clickstream": "broker-3.pulsar.svc:8080",
                    "acme/billing": "broker-1.pulsar.svc:8080"}
    [base] = plans(read_snapshots([EXAMPLES / "hot-broker.json"]), Options())
    assert [a.bundle for a in base.actions] == [a.bundle for a in plan.actions]


def _at(version: str) -> Settings:
    return Settings.defaults(profile_for(Version.parse(version)))


def test_owner_only_policy_keeps_the_bundle_from_2_11() -> None:
    """``shouldNamespacePoliciesUnload`` (PR #16476, 2.11.0): a namespace only its owner may
    take stays with it. 2.11.0 is the first release with the check."""
    policy = IsolationPolicy(("iso/.*",), ("hot",), name="p")
    st = cluster(ISO, policies=ClusterPolicies((policy,)))
    for version in ("2.11.0", "2.11.4", "4.2.5"):
        o = outcome(st, _at(version))
        assert o.skipped is OWNER_ONLY, version
        assert "shouldNamespacePoliciesUnload" in text(o.skipped)


def test_owner_only_policy_does_not_keep_the_bundle_before_2_11() -> None:
    """2.10.x's ``doLoadShedding`` asked only ``shouldAntiAffinityNamespaceUnload``: the bundle
    goes on to ``selectBroker``, whose only candidate is the owner itself."""
    policy = IsolationPolicy(("iso/.*",), ("hot",), name="p")
    st = cluster(ISO, policies=ClusterPolicies((policy,)))
    for version in ("2.10.0", "2.10.6"):
        o = outcome(st, _at(version))
        assert o.skipped is not OWNER_ONLY, version
        assert o.placement is not None and o.placement.decision.broker == HOT, version


def test_anti_affinity_still_keeps_the_bundle_before_2_11() -> None:
    """Without the policies check, the anti-affinity check still runs (its own fill)."""
    st = _group_state()
    gc = "g/c/0x00000000_0xffffffff"
    mid = broker(cpu=(50, 100), bundles={gc: stats(1, 1, 1, 1), **st.brokers[MID].lastStats})
    st = replace(st, brokers={**st.brokers, MID: mid},
                 policies=ClusterPolicies(anti_affinity={"g/a": "grp", "g/b": "grp", "g/c": "grp"}))
    o = outcome(st, _at("2.10.6"))
    assert o.destination is None
    assert "shouldAntiAffinityNamespaceUnload" in text(o.skipped)

"""``SimpleLoadManagerImpl`` as a load manager (:mod:`lbctl.loadmanager.simple`), on real
snapshot files: Pulsar's ``SimpleLoadManagerImplTest`` (master 01f1d8fa) scenarios with their
figures, the grace cache and dry run of ``doLoadShedding`` and ``LoadManager.create``'s fallback
(master 0058e734 / ebbf737c)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lbctl.loadmanager import assign
from lbctl.loadmanager.select import Options, choose, resolve_settings, run
from lbctl.loadmanager.simple import SimpleLoadManager, lookups
from lbctl.model.cluster import SIMPLE
from lbctl.records import replace
from lbctl.sources.snapshot import read_snapshots, snapshot_to_dict
from lbctl.sources.snapshot_schema import parse_snapshot
from tests.paths import EXAMPLES

DATA = Path(__file__).resolve().parents[1] / "data"
SIMPLE_DATA = DATA / "simple"
BROKER1, BROKER2 = "pulsar-broker1.com:8080", "pulsar-broker2.com:8080"


def _one(path: Path, **overrides: str):  # type: ignore[no-untyped-def]
    st = read_snapshots([path])[-1]
    return st, resolve_settings([st], Options(overrides=overrides or None))[0]


def test_do_load_shedding() -> None:
    """testDoLoadShedding: pulsar-broker1 at 90 % of its bandwidth in (limit 100), its two
    bundles at 10000 msg/s out each; pulsar-broker2 reports nothing (usage −1/−1: 0 %). broker1
    is above 85 % on BandwidthIn, its bundles are equal on that resource, so the TreeMap's first
    key is the first of the copied HashMap; broker2 is below 65 % everywhere: unload it."""
    (cycle,) = run(read_snapshots([SIMPLE_DATA / "do-load-shedding.json"]), Options())
    (o,) = cycle.outcomes
    assert (o.selection.broker, o.selection.bundle, o.destination, o.skipped) == (
        BROKER1, "property/cluster/namespace1/0x00000000_0xffffffff", BROKER2, None)
    v = cycle.decision.brokers
    assert (str(v[BROKER1].label), str(v[BROKER1].reason)) == ("Success", "Overloaded")
    assert v[BROKER1].why.resource == "BandwidthIn"
    assert v[BROKER2].why.code == "fine"
    plan = cycle.plan().to_dict()
    assert (plan["loadManager"], plan["shedding"], plan["placement"]) == (
        SIMPLE, "SimpleLoadManagerImpl", "leastLoadedServer")


def test_the_grace_cache_and_the_dry_run() -> None:
    """unloadedHotNamespaceCache: the same bundle a minute later is skipped; with
    loadBalancerSheddingEnabled off the unload is only logged, and still cached."""
    st, settings = _one(SIMPLE_DATA / "do-load-shedding.json")
    lm = SimpleLoadManager(settings)
    first = lm.run_cycle(st, settings)
    again = lm.run_cycle(replace(st, captured_at=st.captured_at + 60_000), settings,
                         first.memory)
    (o,) = again.outcomes
    assert o.skipped is not None and o.skipped.code == "grace" and not again.acted
    later = lm.run_cycle(replace(st, captured_at=st.captured_at + 30 * 60_000), settings,
                         again.memory)
    assert later.acted and later.expired_grace == (o.selection.bundle,)
    st2, dry = _one(SIMPLE_DATA / "do-load-shedding.json", loadBalancerSheddingEnabled="false")
    c = SimpleLoadManager(dry).run_cycle(st2, dry)
    assert c.outcomes[0].skipped.code == "dry-run" and not c.acted
    assert o.selection.bundle in c.memory.recently_unloaded


def test_sole_bundle_is_kept() -> None:
    st, settings = _one(SIMPLE_DATA / "do-load-shedding.json")
    local = st.brokers[BROKER1]
    one = dict(list(local.lastStats.items())[:1])
    st = replace(st, brokers={**st.brokers, BROKER1: replace(local, lastStats=one,
                                                              bundles=tuple(one))})
    c = SimpleLoadManager(settings).run_cycle(st, settings)
    assert not c.outcomes and c.decision.brokers[BROKER1].why.code == "sole-bundle"


def test_even_bundle_distribution() -> None:
    """testEvenBundleDistribution: 16 bundles of pulsar/use/test over two like brokers with
    leastLoadedServer; whenever an even number is assigned, both brokers hold as many."""
    st, settings = _one(SIMPLE_DATA / "two-idle.json")
    todo = assign.namespace_bundles(st, settings, "pulsar/use/test", 16)
    picks = lookups(st, settings, todo)
    counts = {"localhost:8080": 0, "localhost:8081": 0}
    for i, x in enumerate(picks, 1):
        assert x.broker is not None
        counts[x.broker] += 1
        if i % 2 == 0:
            assert counts["localhost:8080"] == counts["localhost:8081"], (i, counts)
    assert picks[0].why.code == "idle" and picks[2].why.code == "least-loaded"


def test_primary_broker_of_an_isolation_policy() -> None:
    """testPrimary: the policy names localhost* primary for pulsar/use/primary-ns.*; a bundle of
    pulsar/use/primary-ns.10 goes there, never to the other broker."""
    st, settings = _one(SIMPLE_DATA / "primary.json")
    (x,) = lookups(st, settings, ["pulsar/use/primary-ns.10/0x00000000_0xffffffff"])
    assert (x.broker, x.candidates) == ("localhost:8080", ("localhost:8080",))


def test_a_ranked_broker_that_is_not_active_is_no_candidate() -> None:
    """testBasicBrokerSelection: the only broker with a report is not among the active brokers,
    so no broker is found (no policy applies)."""
    st, settings = _one(SIMPLE_DATA / "primary.json")
    st = replace(st, policies=None, available_brokers=("localhost:8080",),
                 brokers={"prod2-broker7.messaging.usw.example.com:8080":
                          st.brokers["prod2-broker7.messaging.usw.example.com:8080"]})
    (x,) = lookups(st, settings, ["pulsar/use/primary-ns.10/0x00000000_0xffffffff"])
    assert x.broker is None and x.why.code == "no-candidate"


def test_load_report_shape_is_read() -> None:
    """testLoadReportParsing / testUsage: a LoadReport's nested systemResourceUsage (here the only
    usage given) and its timestamp are the broker's figures; its bundleStats its bundles."""
    st = read_snapshots([EXAMPLES / "simple-overloaded.json"])[-1]
    b1 = st.brokers["broker-1.pulsar.svc:8080"]
    assert (b1.bandwidthOut.usage, b1.bandwidthOut.limit) == (9200000.0, 10000000.0)
    assert b1.cpu.percent == 45.0 and b1.lastUpdate == 1773324296000
    assert len(b1.lastStats) == 5 and st.load_manager == SIMPLE
    assert st.resource_quotas is not None and st.resource_quotas.loadFactorCPU == 0.01
    # nested wins over the top level; the snapshot writes it back flat, and reads it the same
    raw = snapshot_to_dict(st)
    assert "systemResourceUsage" not in raw["brokers"]["broker-1.pulsar.svc:8080"]
    assert parse_snapshot(raw, "x") == replace(st, source="x")


def test_old_snapshots_have_no_quotas_and_stay_modular() -> None:
    st = read_snapshots([DATA / "valid" / "minimal.json"])[-1]
    assert st.resource_quotas is None and st.load_manager == "modular"


@pytest.mark.parametrize(("class_name", "simple"), [
    ("org.apache.pulsar.broker.loadbalance.impl.SimpleLoadManagerImpl", True),
    ("", True),
    ("org.example.NoSuchLoadManager", True),
    ("org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl", False),
])
def test_load_manager_create_falls_back_to_simple(class_name: str, simple: bool) -> None:
    """LoadManager.create before PR #26031 (4.1.1 here): a blank name, or a class it cannot
    create, gives SimpleLoadManagerImpl (and says why); explicit --strategy asks for another
    one."""
    states = read_snapshots([DATA / "valid" / "minimal.json"])
    opts = Options(overrides={"loadManagerClassName": class_name}, pulsar_version="4.1.1")
    settings = resolve_settings(states, opts)[-1]
    lm = choose(states, opts, settings)
    assert isinstance(lm, SimpleLoadManager) is simple
    if simple and class_name != "org.apache.pulsar.broker.loadbalance.impl.SimpleLoadManagerImpl":
        assert any("SimpleLoadManagerImpl" in w for w in lm.warnings)
    other = choose(states, replace(opts, strategy="ThresholdShedder"), settings)
    assert not isinstance(other, SimpleLoadManager)


def test_avg_shedder_on_the_wrong_key_runs_simple() -> None:
    """PR #23156: on 3.0.6 the snapshot's AvgShedder pair with loadBalancerPlacementStrategy left
    at leastLoadedServer stops ModularLoadManagerImpl; Pulsar then runs SimpleLoadManagerImpl."""
    states = read_snapshots([DATA / "valid" / "minimal.json"])
    avg = "org.apache.pulsar.broker.loadbalance.impl.AvgShedder"
    opts = Options(overrides={"loadBalancerLoadSheddingStrategy": avg,
                              "loadBalancerLoadPlacementStrategy": avg},
                   pulsar_version="3.0.6")
    lm = choose(states, opts, resolve_settings(states, opts)[-1])
    assert isinstance(lm, SimpleLoadManager)
    assert any("PR #23156" in w for w in lm.warnings)


def test_the_example_unloads_its_heaviest_bandwidth_bundle_to_broker_3() -> None:
    """lbctl/examples/simple-overloaded.json: broker-1 at 92 % bandwidth out gives up its
    heaviest bundle on that resource; the next lookup sends it to broker-3, the least loaded of
    the brokers serving the fewest acme/orders bundles. With automatic splits off: at Pulsar's
    defaults broker-1 splits that bundle (over 100 MB/s) after writing its report, and the unload
    then fails (tests/loadmanager/test_simple_split.py)."""
    (c,) = run(read_snapshots([EXAMPLES / "simple-overloaded.json"]),
               Options(overrides={"loadBalancerAutoBundleSplitEnabled": "false"}))
    (o,) = c.unloads
    assert (o.selection.bundle, o.destination) == ("acme/orders/0x00000000_0x20000000",
                                                   "broker-3.pulsar.svc:8080")
    assert o.placement is not None and o.placement.why.code == "least-loaded"

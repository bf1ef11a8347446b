"""Assignment preview (:mod:`lbctl.loadmanager.assign`): ``selectBrokerForAssignment`` with
preallocation (``ModularLoadManagerImpl``, Pulsar master 009a9bf2cdffeb2e67b0d64a3e9cf95257e551fa)
and the extensible ``selectAsync``, on real snapshot files."""

from __future__ import annotations

from pathlib import Path

import pytest

from lbctl.errors import UsageError
from lbctl.loadmanager import assign
from lbctl.loadmanager.select import Options, resolve_settings
from lbctl.model.bundle import bundle_name, default_boundaries, ranges_from_boundaries
from lbctl.records import replace
from lbctl.sources.snapshot import read_snapshots

DATA = Path(__file__).resolve().parents[1] / "data"


def _state(name: str, **overrides: str):  # type: ignore[no-untyped-def]
    st = read_snapshots([DATA / name])[-1]
    opts = Options(overrides=overrides or None)
    return st, resolve_settings([st], opts)[0], opts


def _new_namespace(name: str, ns: str, n: int, **overrides: str) -> list[assign.Assignment]:
    st, settings, opts = _state(name, **overrides)
    todo = assign.namespace_bundles(st, settings, ns, n)
    return list(assign.preview(st, settings, opts, kind=assign.NAMESPACE, subject=ns,
                               bundles=todo).assignments)


def test_each_pick_is_preallocated_and_seen_by_the_next_lookup() -> None:
    """LeastLongTermMessageRate with distribute-evenly off: b1 carries 175 msg/s, b2 nothing; a
    new bundle is assumed to carry defaultStats' 50 + 50 msg/s, preallocated to its pick. Scores
    0 (b2) → 100 (b2 with one) → 175 (b1, b2 at 200) → 200 (b2, b1 at 275)."""
    picks = _new_namespace("assign/two-brokers.json", "acme/new", 4)
    assert [a.broker for a in picks] == ["b2:8080", "b2:8080", "b1:8080", "b2:8080"]
    assert [a.score for a in picks] == [0.0, 100.0, 175.0, 200.0]
    assert all(a.owner is None and a.candidates == ("b1:8080", "b2:8080") for a in picks)


def test_even_distribution_alternates_between_two_brokers() -> None:
    """``ModularLoadManagerImplTest.testEvenBundleDistribution``: 16 bundles of one namespace over
    two brokers; after every second assignment both hold as many (removeMostServicingBrokers
    counts the preallocated bundles)."""
    picks = _new_namespace("assign/two-brokers.json", "pulsar/use/test", 16,
                           loadBalancerDistributeBundlesEvenlyEnabled="true")
    counts = {"b1:8080": 0, "b2:8080": 0}
    for i, a in enumerate(picks, 1):
        assert a.broker is not None
        counts[a.broker] += 1
        if i % 2 == 0:
            assert counts["b1:8080"] == counts["b2:8080"], (i, counts)


def test_a_new_namespace_is_cut_into_equal_ranges() -> None:
    st, settings, _ = _state("assign/two-brokers.json")
    four = [bundle_name("x/y", r.lower, r.upper)
            for r in ranges_from_boundaries(default_boundaries(4))]
    assert assign.namespace_bundles(st, settings, "x/y", None) == four  # defaultNumberOf…=4
    assert assign.namespace_bundles(st, settings, "acme/busy", None) == [
        "acme/busy/0x00000000_0xffffffff"]
    with pytest.raises(UsageError, match="exists with 1 bundles"):
        assign.namespace_bundles(st, settings, "acme/busy", 4)


def test_an_owned_bundle_is_answered_with_its_owner() -> None:
    (a,) = _new_namespace("assign/two-brokers.json", "acme/busy", 1)
    assert (a.broker, a.owner) == ("b1:8080", "b1:8080")


def test_a_stopped_brokers_bundles_go_heaviest_first_to_the_others() -> None:
    st, settings, opts = _state("valid/minimal.json")
    todo = assign.stopped_bundles(st, "broker-1:8080")
    assert todo == ["public/default/0x00000000_0x40000000", "public/default/0x40000000_0x80000000"]
    p = assign.preview(st, settings, opts, kind=assign.STOPPED, subject="broker-1:8080",
                       bundles=todo, stopped="broker-1:8080")
    assert [a.broker for a in p.assignments] == ["broker-2:8080", "broker-2:8080"]
    assert "broker-1:8080" not in p.state.brokers
    # broker-2's own 300 msg/s, then the first preallocated bundle's 100 on top
    assert [a.score for a in p.assignments] == [300.0, 400.0]


def test_a_stopped_broker_listed_as_available_is_gone_too() -> None:
    st, _, _ = _state("valid/minimal.json")
    st = replace(st, available_brokers=("broker-1:8080", "broker-2:8080"))
    assert assign.without_broker(st, "broker-1:8080").available() == ("broker-2:8080",)


def test_unknown_stopped_broker_is_a_usage_error() -> None:
    st, _, _ = _state("valid/minimal.json")
    with pytest.raises(UsageError, match="did you mean broker-1:8080"):
        assign.stopped_bundles(st, "broker-1:808")


def test_a_topic_is_looked_up_in_the_bundle_holding_its_hash() -> None:
    st, settings, _ = _state("valid/minimal.json")
    # crc32("persistent://public/default/t1") = 0xcd5c5b6b… lands in the last range
    assert assign.topic_bundle(st, settings, "persistent://public/default/t1") == \
        "public/default/0xc0000000_0xffffffff"
    with pytest.raises(UsageError, match="--topic expects"):
        assign.topic_bundle(st, settings, "not-a-topic")


def test_extensible_lookups_run_its_filters_and_least_resource_usage() -> None:
    """The extensible snapshot declares no boundaries for pub/ns: its one reported bundle covers
    the range, so the namespace is known (owned); a new namespace's bundles are placed by
    LeastResourceUsageWithWeight, which keeps no preallocation."""
    st, settings, opts = _state("valid/extensible.json")
    owned = assign.preview(st, settings, opts, kind=assign.NAMESPACE, subject="pub/ns",
                           bundles=assign.namespace_bundles(st, settings, "pub/ns", None))
    assert [(a.bundle, a.owner) for a in owned.assignments] == [
        ("pub/ns/0x00000000_0xffffffff", "e1:8080")]
    new = assign.preview(st, settings, opts, kind=assign.NAMESPACE, subject="pub/new",
                         bundles=assign.namespace_bundles(st, settings, "pub/new", 2))
    assert new.placement == "LeastResourceUsageWithWeight"
    assert all(a.broker in ("e1:8080", "e2:8080") and a.candidates == ("e1:8080", "e2:8080")
               for a in new.assignments)


def test_an_extensible_stopped_broker_leaves_its_published_bundles() -> None:
    st, settings, opts = _state("valid/extensible.json")
    todo = assign.stopped_bundles(st, "e1:8080")
    assert todo == ["pub/ns/0x00000000_0xffffffff"]
    p = assign.preview(st, settings, opts, kind=assign.STOPPED, subject="e1:8080", bundles=todo,
                       stopped="e1:8080")
    (a,) = p.assignments
    assert (a.broker, a.owner, a.candidates) == ("e2:8080", None, ("e2:8080",))

"""The doctor's context counts each namespace's bundles once for every rule (issue 30: without a
``namespaces`` section, ``namespace-few-bundles`` and ``namespace-bundle-cap`` rebuilt every
owner for every namespace — 200k bundles took over 350 s)."""

from __future__ import annotations

import pytest

from lbctl.doctor.context import make
from lbctl.doctor.run import diagnose
from lbctl.loadmanager.select import Options, profile_of, resolve_settings
from lbctl.model.cluster import ClusterState
from lbctl.sources.snapshot import read_snapshots
from tests.paths import DATA, EXAMPLES

D = DATA / "doctor"


@pytest.mark.parametrize("name", ["few-bundles.json", "few-bundles-no-namespaces.json",
                                  "base.json"])
def test_namespace_bundle_counts_match_the_model(name: str) -> None:
    states = read_snapshots([D / name])
    ctx = make(states, resolve_settings(states, Options())[-1])
    counts = ctx.namespace_bundle_counts
    state = states[-1]
    expected = set(state.namespaces) | {b.rsplit("/", 1)[0] for b in state.owners()}
    assert set(counts) == expected
    assert counts == {ns: state.namespace_bundle_count(ns) for ns in expected}


def test_without_a_namespaces_section_counts_come_from_owned_bundles() -> None:
    with_section = make(s := read_snapshots([D / "few-bundles.json"]),
                        resolve_settings(s, Options())[-1]).namespace_bundle_counts
    without = make(s := read_snapshots([D / "few-bundles-no-namespaces.json"]),
                   resolve_settings(s, Options())[-1]).namespace_bundle_counts
    assert set(without) <= set(with_section)
    assert all(without[ns] <= with_section[ns] for ns in without)


def test_doctor_builds_the_owner_map_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every rule shares one owner map, however many namespaces there are."""
    calls = []
    owners = ClusterState.owners

    def counted(self: ClusterState) -> dict[str, str]:
        calls.append(1)
        return owners(self)

    monkeypatch.setattr(ClusterState, "owners", counted)
    report = diagnose(read_snapshots([D / "few-bundles-no-namespaces.json"]), Options())
    assert "namespace-few-bundles" in {f.rule for f in report.findings}
    assert len(calls) == 1


def test_a_live_reads_settings_say_runtime_configuration_whoever_diagnoses_it() -> None:
    """A setting of a state read from a running cluster came from the brokers' runtime
    configuration: lbctl watch diagnoses each capture with options that name no source, and its
    findings said "(snapshot)". A file's settings still say "(snapshot)"."""
    from lbctl.records import replace

    [snap] = read_snapshots([EXAMPLES / "hot-broker.json"])
    live = replace(snap, source="live:prod-us")
    assert live.live_read and not snap.live_read

    def found(state: ClusterState) -> str:
        return " ".join(f.found for f in diagnose([state], Options()).findings)

    assert "(snapshot)" in found(snap) and "(runtime configuration)" not in found(snap)
    assert "(runtime configuration)" in found(live) and "(snapshot)" not in found(live)
    # the release modelled is named after where its version was read, too
    assert profile_of([snap], Options())[0].name.endswith("(snapshot)")
    assert profile_of([live], Options())[0].name.endswith("(cluster)")

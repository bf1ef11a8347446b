"""Releases newer than lbctl's default profile (4.0.14, 4.1.2–4.1.3, the 4.2 line): each variant
they brought changes a decision on a small state, the older release keeping the older one.

Evidence for the release boundaries is in ``lbctl/versions.py`` (apache/pulsar-site release notes).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lbctl.errors import UsageError
from lbctl.loadmanager.select import Options, choose, plans, resolve_settings
from lbctl.loadmanager.simple import SimpleLoadManager
from lbctl.model.cluster import ClusterState
from lbctl.model.javaorder import java_hash_order
from lbctl.model.load import NamespaceBundleStats
from lbctl.sources.snapshot import read_snapshots
from tests.factories import broker, state, stats
from tests.strategies.shedding.test_avg_bundle_map import _lookup, _sequence

DATA = Path(__file__).resolve().parent / "data"
NOW = 1_763_000_000_000
AVG = {"maxUnloadPercentage": 0.5, "loadBalancerAvgShedderHitCountHighThreshold": 1}


def _bundles(prefix: str, n: int, rate: float) -> dict[str, NamespaceBundleStats]:
    return {f"t/{prefix}/0x{i:08x}_0x{i + 1:08x}": stats(rate, rate) for i in range(n)}


def _near_tie() -> tuple[ClusterState, list[str]]:
    """Four brokers: two hot at 80.4 % and 80.0 % CPU (AvgShedder's scores, less than a point
    apart) and two cool at 10 % and 20 %. The 80.4 % broker comes first in the score map's
    order, so ``(int) (s1 - s2)`` (0 for the hot pair) leaves it below the 80.0 % one.
    Returns the state and the names in score-map order (80.4, 80.0, 10, 20)."""
    names = [f"broker-{i}:8080" for i in range(4)]
    order = java_hash_order(names)
    cpu = dict(zip(order, (80.4, 80.0, 10.0, 20.0), strict=True))
    brokers = {
        n: broker(cpu=(cpu[n], 100),
                  bundles=_bundles(f"ns{i}", 4, 2500.0 if cpu[n] > 50 else 250.0))
        for i, n in enumerate(names)
    }
    return state(brokers, now=NOW), order


@pytest.mark.parametrize(("version", "hottest_to"), [
    ("4.1.1", "20 %"),  # before PR #24954: the (int) cast ties the hot pair
    ("4.1.2", "10 %"),  # PR #24954 in 4.1.2: the hottest pairs with the coolest
    ("4.1.3", "10 %"),
    ("4.0.7", "20 %"),
    ("4.0.8", "10 %"),  # 4.0.8's notes list PR #24954
    ("4.2.0", "10 %"),
    ("3.0.17", "20 %"),  # never on the 3.0 line
])
def test_avg_shedder_pairs_near_ties_by_release(version: str, hottest_to: str) -> None:
    """``AvgShedder.findBundlesForUnloading`` pairs the brokers by sorted score. Before PR
    #24954 the hot pair compares equal and keeps the score map's order, so the 80.4 % broker
    ranks below 80.0 % and pairs with the 20 % broker; from it, with the 10 % one."""
    st, (hot, warm, cool, tepid) = _near_tie()
    (plan,) = plans([st], Options(strategy="AvgShedder", placement="AvgShedder",
                                  overrides=AVG, pulsar_version=version))
    dest = {a.destinationBroker for a in plan.actions if a.broker == hot}
    assert dest == {cool if hottest_to == "10 %" else tepid}
    other = {a.destinationBroker for a in plan.actions if a.broker == warm}
    assert other == {tepid if hottest_to == "10 %" else cool}


@pytest.mark.parametrize(("version", "outcome"), [
    ("4.2.2", "simple"),
    ("4.2.3", "error"),  # PR #26031, in the notes of 4.2.3 and 4.0.12
    ("4.2.5", "error"),
    ("4.1.3", "simple"),  # the 4.1 line had no release after it
    ("4.0.11", "simple"),
    ("4.0.12", "error"),
    ("4.0.14", "error"),
    ("3.0.17", "simple"),
])
def test_a_load_manager_pulsar_cannot_create_by_release(version: str, outcome: str) -> None:
    """``LoadManager.create``: a ``loadManagerClassName`` it cannot create gave
    SimpleLoadManagerImpl; from 4.0.12 and 4.2.3 (PR #26031) the broker fails to start instead."""
    states = read_snapshots([DATA / "valid" / "minimal.json"])
    opts = Options(overrides={"loadManagerClassName": "org.example.NoSuchLoadManager"},
                   pulsar_version=version)
    settings = resolve_settings(states, opts)[-1]
    if outcome == "simple":
        lm = choose(states, opts, settings)
        assert isinstance(lm, SimpleLoadManager)
        assert any("falls back to SimpleLoadManagerImpl" in w for w in lm.warnings)
    else:
        with pytest.raises(UsageError, match=r"PR #26031") as err:
            choose(states, opts, settings)
        assert "does not start the broker" in str(err.value)
        assert "NoSuchLoadManager" in str(err.value)


@pytest.mark.parametrize("name", ["", "org.apache.pulsar.broker.loadbalance.impl.SimpleLoadManagerImpl"])
def test_a_blank_or_simple_load_manager_still_runs_simple_on_4_2_3(name: str) -> None:
    """PR #26031 fails only what cannot be created: a blank name still means
    SimpleLoadManagerImpl (``LoadManager.create`` substitutes its class name)."""
    states = read_snapshots([DATA / "valid" / "minimal.json"])
    opts = Options(overrides={"loadManagerClassName": name}, pulsar_version="4.2.5")
    assert isinstance(choose(states, opts, resolve_settings(states, opts)[-1]), SimpleLoadManager)


@pytest.mark.parametrize(("version", "answer"), [
    ("3.0.17", ("lo:8080", "kept")),  # AvgShedder since 3.0.6, never fixed on the 3.0 line
    ("3.3.9", ("lo:8080", "kept")),
    ("4.0.13", ("lo:8080", "kept")),
    ("4.0.14", ("mid:8080", "no-plan")),  # PR #26246 in 4.0.14
    ("4.1.3", ("lo:8080", "kept")),  # no 4.1 release after it
    ("4.2.4", ("lo:8080", "kept")),
    ("4.2.5", ("mid:8080", "no-plan")),  # and in 4.2.5, the default
])
def test_avg_shedder_map_outlives_the_attempt_by_release(version: str,
                                                         answer: tuple[str, str]) -> None:
    """``avgShedderBundleMap``: a lookup of a bundle AvgShedder moved to lo a cycle earlier.
    Before PR #26246 the map (keyed by the BundleData the leader still holds) answers with the
    stale plan, lo; from it the map was emptied and the lookup draws (mid with seed 5)."""
    lm, (_, second), conf = _sequence(version, seed=5)
    assert _lookup(lm, second, conf) == answer


def _excluded_hot() -> ClusterState:
    """One hot broker (95 % CPU) whose two heaviest bundles are in ``t/keep``; a cool one."""
    return state({
        "a:8080": broker(cpu=(95, 100), bundles={
            "t/keep/0x00000000_0x80000000": stats(100, 100, 80 * 2**20, 80 * 2**20),
            "t/keep/0x80000000_0xffffffff": stats(100, 100, 60 * 2**20, 60 * 2**20),
            "t/move/0x00000000_0xffffffff": stats(10, 10, 2**20, 2**20)}),
        "b:8080": broker(cpu=(5, 100), bundles={"t/other/0x00000000_0xffffffff": stats(1, 1)}),
    }, now=NOW)


@pytest.mark.parametrize(("version", "honoured"), [
    ("3.3.9", False), ("4.0.10", False), ("4.0.11", True), ("4.0.14", True), ("4.1.0", True),
    ("4.2.5", True)])
def test_shedding_excluded_namespaces_exist_from_4_0_11_and_4_1_0(version: str,
                                                                    honoured: bool) -> None:
    """PIP-380 (PR #23549): ``doLoadShedding`` skips what the shedder selected in an excluded
    namespace; before it the broker does not know ``loadBalancerSheddingExcludedNamespaces`` and
    the hottest bundle is unloaded, in that namespace or not."""
    (p,) = plans([_excluded_hot()], Options(
        strategy="OverloadShedder", overrides={"loadBalancerSheddingExcludedNamespaces": "t/keep"},
        pulsar_version=version))
    moved = {a.bundle for a in p.actions if a.action == "unload" and not a.skipped}
    assert any(b.startswith("t/keep/") for b in moved) is not honoured, (version, moved)

"""The same cluster gives the same plan: whatever order the file lists brokers and bundles in, and
whatever ``--time-limit`` the exact solver gets (issue 29, item 4)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from lbctl.config import resolve
from lbctl.model.cluster import ClusterState
from lbctl.model.load import NamespaceBundleStats
from lbctl.planner import milp
from lbctl.planner.constraints import build_rules
from lbctl.planner.cost import Costs
from lbctl.planner.goals import Targets
from lbctl.planner.greedy import Caps
from lbctl.planner.load import build
from lbctl.planner.propose import ProposeOptions, propose
from lbctl.records import replace
from lbctl.simulate.hosts import cluster_on_hosts
from lbctl.sources.snapshot import read_snapshots
from lbctl.truth.hosts import mixed_fleet
from tests.model.test_loadmodel import T0, _bundle
from tests.planner_clusters import AT, broker, bundle_names, random_cluster, stats

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
needs_scipy = pytest.mark.skipif(not milp.available(), reason="scipy (lbctl[propose]) not installed")


def _last_document(name: str) -> dict[str, Any]:
    text = (EXAMPLES / name).read_text()
    doc: dict[str, Any] = json.loads(text.splitlines()[-1] if name.endswith(".jsonl") else text)
    return doc


def _ties() -> dict[str, Any]:
    """One hot broker of twelve identical bundles and three identical idle ones: every choice of
    bundle and of destination is a tie."""
    hot = {x: stats(40.0) for x in bundle_names("tenant/hot", 12)}
    brokers = {"broker-a:8080": broker(hot, cost=10.0)}
    for b in ("broker-b:8080", "broker-c:8080", "broker-d:8080"):
        brokers[b] = broker({x: stats(40.0) for x in bundle_names(f"tenant/{b[:8]}", 2)},
                            cost=10.0)
    return {"format": "lbctl/snapshot@1", "cluster": "ties", "capturedAt": AT,
            "loadManager": "modular", "config": {}, "brokers": brokers}


def _shuffled(doc: dict[str, Any], seed: int) -> dict[str, Any]:
    """The same cluster with its brokers, each broker's bundles and stats in another order."""
    rng = random.Random(seed)
    brokers = list(doc["brokers"].items())
    rng.shuffle(brokers)
    out = dict(doc)
    out["brokers"] = {}
    for b, rep in brokers:
        rep = dict(rep)
        stats = list(rep.get("lastStats", {}).items())
        rng.shuffle(stats)
        rep["lastStats"] = dict(stats)
        bundles = list(rep.get("bundles", []))
        rng.shuffle(bundles)
        rep["bundles"] = bundles
        out["brokers"][b] = rep
    return out


def _plan(path: Path, **opts: Any) -> tuple[list[tuple[str, str, str]], list[tuple[str, float]]]:
    state = read_snapshots([path])[-1]
    p = propose(state, resolve(state.config), ProposeOptions(**opts))
    plan = p.plan()
    moves = sorted((a.bundle, a.broker, a.destinationBroker or "") for a in plan.actions)
    after = sorted((r.broker, round(r.usage_after or 0.0, 12)) for r in plan.brokers)
    return moves, after


@pytest.mark.parametrize(("name", "solver"), [
    ("hot-broker.json", "greedy"),
    ("ties", "greedy"),
    pytest.param("ties", "exact", marks=needs_scipy),
    pytest.param("avg-shedder.jsonl", "auto", marks=needs_scipy),
])
def test_file_order_does_not_change_the_plan(tmp_path: Path, name: str, solver: str) -> None:
    doc = _ties() if name == "ties" else _last_document(name)
    plans = []
    for seed in range(4):
        path = tmp_path / f"shuffled-{seed}.json"
        path.write_text(json.dumps(doc if seed == 0 else _shuffled(doc, seed)))
        plans.append(_plan(path, solver=solver, time_limit=60.0))
    assert plans[0][0], "the case must move something"
    assert all(p == plans[0] for p in plans[1:])


@needs_scipy
def test_the_time_limit_does_not_change_the_plan(tmp_path: Path) -> None:
    """The exact solver finishes its work limit well within either limit: the same plan."""
    path = tmp_path / "avg.json"
    path.write_text(json.dumps(_last_document("avg-shedder.jsonl")))
    short, long = _plan(path, time_limit=20.0), _plan(path, time_limit=300.0)
    assert short == long and short[0]
    assert _plan(path, solver="greedy", time_limit=0.0) == _plan(path, solver="greedy",
                                                                 time_limit=300.0)


@needs_scipy
def test_an_exact_run_stopped_by_the_clock_is_not_used() -> None:
    """Where a wall clock stops HiGHS depends on the machine: such a run gives no moves (the
    caller keeps greedy's plan) rather than its incumbent of the moment."""
    state = random_cluster(7, 12, per_broker=20)
    settings = resolve(state.config)
    view = build(state, settings)
    rules = build_rules(state, settings, view)
    res = milp.solve_milp(view, rules, Costs.of(view), Targets(0.85, 0.10), 0.099, Caps(),
                          time_limit=0.1)
    # on a loaded machine the child's wall clock (10x the allowance + 2 s) may stop it first
    assert res.status in ("time limit", "wall limit") and res.moves is None and res.gap is None


def _shuffled_state(state: ClusterState, rng: random.Random) -> ClusterState:
    """``state`` with its brokers and each broker's bundles (stats and list) in another order."""
    names = list(state.brokers)
    rng.shuffle(names)
    reports = {}
    for b in names:
        rep = state.brokers[b]
        items = list(rep.lastStats.items())
        rng.shuffle(items)
        listed = list(rep.bundles)
        rng.shuffle(listed)
        reports[b] = replace(rep, lastStats=MappingProxyType(dict(items)), bundles=tuple(listed))
    return replace(state, brokers=MappingProxyType(reports))


def _skewed_history(brokers: int, seed: int, scale: float) -> list[ClusterState]:
    """12 reports a minute apart of ``mixed_fleet`` hosts, each carrying 8 bundles sized to its
    cores times a 0.3-1.7 skew, each report scaling a broker's traffic by 0.7-1.3 (the last as
    it is), so that the model learns slopes and the cluster ends far outside the band."""
    hosts = {f"broker-{j:02d}:8080": h for j, h in enumerate(mixed_fleet(brokers, seed=seed))}
    rng = random.Random(seed)
    base = {b: {f"t/ns-{k % 7}/0x{k:04x}{j:04x}_0x{k:04x}{j + 1:04x}": _bundle(
        rng, scale * h.cores / 8 * rng.uniform(0.3, 1.7)) for j in range(8)}
        for k, (b, h) in enumerate(hosts.items())}
    out = []
    for s in range(12):
        owned = {}
        for b, bundles in base.items():
            f = 1.0 if s == 11 else 0.7 + 0.6 * rng.random()
            owned[b] = {x: NamespaceBundleStats(
                msgRateIn=st.msgRateIn * f, msgRateOut=st.msgRateOut * f,
                msgThroughputIn=st.msgThroughputIn * f, msgThroughputOut=st.msgThroughputOut * f,
                topics=st.topics) for x, st in bundles.items()}
        out.append(cluster_on_hosts("h", T0 + s * 60_000, hosts, owned, rng))
    return out


def test_a_history_learnt_plan_past_the_exact_limit_is_the_same_shuffled_and_any_limit() -> None:
    """The path of plans_on_hardware's 300-broker plans (issue 29 item 4; a run-to-run difference
    was suspected there, and none was measured: det8's notes): the model learnt from a 12-report
    history of mixed hosts, more (bundle, destination) pairs than ``--exact-limit`` (greedy,
    polish, robust repair). Every report of the history shuffled, and ``--time-limit`` 0 or 60:
    the same moves, and every broker's predicted usage and the margin bit for bit: the model
    reads the reports in name order (:func:`lbctl.planner.load.canonical`), whatever order they
    came in."""
    history = _skewed_history(30, 3, 12.0)

    def plan(hist: list[ClusterState], limit: float) -> tuple[Any, ...]:
        last = hist[-1]
        p = propose(last, resolve(last.config), ProposeOptions(time_limit=limit), history=hist)
        v = p.view
        return (sorted((v.bundles[i], v.brokers[d]) for i, d in p.moves),
                sorted(zip(v.brokers, p.usages_after(), strict=True)), v.model.margin(),
                p.solution.solver, p.solution.notes)

    first = plan(history, 60.0)
    assert first[0] and first[3] == "greedy + robust repair", "the case must be greedy's, moving"
    assert "> --exact-limit" in first[4][0]
    rng = random.Random(1)
    for limit in (0.0, 60.0):
        assert plan([_shuffled_state(h, rng) for h in history], limit) == first

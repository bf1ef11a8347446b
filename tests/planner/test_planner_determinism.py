"""The same cluster gives the same plan: whatever order the file lists brokers and bundles in, and
whatever ``--time-limit`` the exact solver gets (issue 29, item 4)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from lbctl.config import resolve
from lbctl.planner import milp
from lbctl.planner.constraints import build_rules
from lbctl.planner.cost import Costs
from lbctl.planner.goals import Targets
from lbctl.planner.greedy import Caps
from lbctl.planner.load import build
from lbctl.planner.propose import ProposeOptions, propose
from lbctl.sources.snapshot import read_snapshots
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
    assert res.status == "time limit" and res.moves is None and res.gap is None

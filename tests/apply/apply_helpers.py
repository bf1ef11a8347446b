"""Helpers of the apply/drain tests: a cluster with many bundles on one broker, plan@1 files
written from chosen moves (checked by the plan@1 contract), and the requests that changed it."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.model.cluster import iso_time
from lbctl.sandbox import TestCluster, equal_boundaries
from tests.plan_contract import check_plan

NS = "public/default"


def busy_cluster(n_brokers: int = 3, bundles: int = 30, *, on_first: int = 20,
                 delay: float = 0.05) -> TestCluster:
    """``bundles`` bundles of public/default: ``on_first`` on the first broker, the others spread
    over the rest; each bundle 1 MB/s in; unloads leave the bundle unowned for ``delay`` s."""
    c = TestCluster()
    ids = c.start(n_brokers)
    names = c.add_namespace(NS, equal_boundaries(bundles))
    for i, b in enumerate(names):
        owner = ids[0] if i < on_first else ids[1 + i % (n_brokers - 1)]
        c.own(b, owner, msgRateIn=100.0 + i, msgRateOut=100.0, msgThroughputIn=1048576.0,
              msgThroughputOut=0.0, topics=1)
    for i, bid in enumerate(ids):
        c.brokers[bid].cpu = (50.0 if i == 0 else 20.0, 100.0)
    c.set_reassignment(delay=delay)
    return c


def plan_doc(c: TestCluster, moves: list[tuple[str, str, str | None]], *,
             captured_ms: int | None = None, splits: list[dict[str, Any]] | None = None,
             shedding: str = "ThresholdShedder") -> dict[str, Any]:
    """A plan@1 object moving (bundle, from, to) and splitting ``splits``."""
    actions: list[dict[str, Any]] = [
        {"action": "unload", "bundle": b, "broker": src, "destinationBroker": dst,
         "reason": "Overloaded", "msgRate": 200.0, "throughput": 1048576.0}
        for b, src, dst in moves]
    actions += splits or []
    doc = {
        "format": "lbctl/plan@1", "cluster": c.cluster,
        "capturedAt": iso_time(captured_ms if captured_ms is not None
                               else int(time.time() * 1000)),
        "loadManager": "modular", "shedding": shedding, "placement": "LeastLongTermMessageRate",
        "settings": {}, "actions": actions,
        "brokers": [{"broker": b, "usage": 0.5, "score": None, "msgRate": 0.0,
                     "throughput": 0.0, "bundles": len(c.bundles_of(b))} for b in c.brokers],
        "summary": {"brokers": len(c.brokers), "bundles": len(c.owners),
                    "unloads": len(moves), "splits": len(splits or []), "skipped": 0,
                    "before": {"mean": 0.5, "std": 0.0, "max": 0.5, "min": 0.5},
                    "after": {"mean": 0.5, "std": 0.0, "max": 0.5, "min": 0.5}},
    }
    check_plan(doc)
    return doc


def write_plan(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(json.dumps(doc, indent=2))
    return path


def spread_moves(c: TestCluster, n: int) -> list[tuple[str, str, str | None]]:
    """``n`` bundles of the first broker, to the other brokers in turn."""
    ids = list(c.brokers)
    first = sorted(c.bundles_of(ids[0]))
    return [(b, ids[0], ids[1 + i % (len(ids) - 1)]) for i, b in enumerate(first[:n])]


def unloads_done(c: TestCluster) -> list[str]:
    """Bundles whose unload a broker carried out (status 204), in order; redirects not counted."""
    return ["/".join(r.path.split("/")[4:7]) for r in c.log
            if r.method == "PUT" and r.path.endswith("/unload") and r.status == 204]


def mutations(c: TestCluster) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in c.log if r.method != "GET"]


def records(journal: Path) -> list[dict[str, Any]]:
    """The journal's records, in order (blank lines skipped)."""
    return [json.loads(x) for x in journal.read_text().splitlines() if x.strip()]


def lbctl(c: TestCluster, *args: str, input: str | None = None) -> Any:
    return CliRunner().invoke(app, ["--admin-url", c.admin_url, "--request-timeout", "5", *args],
                              input=input)


def move_now(c: TestCluster, bundle: str, dest: str) -> None:
    """Someone else moves ``bundle`` to ``dest`` (at once, not through an unload)."""
    with c._lock:
        old = c.owners[bundle]
        c.owners[bundle] = dest
        c._note_move(bundle, old, dest)

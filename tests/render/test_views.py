"""Every view in every output format, in one test.

The views are found by introspection (every class under ``lbctl.render`` with ``to_data``,
``to_rows`` and ``to_text``), so a new view without a sample here fails ``test_every_view_is_here``;
the formats come from :data:`lbctl.render.FORMATS`, so a new format is exercised on every view.
"""

from __future__ import annotations

import csv
import importlib
import inspect
import io
import json
import pkgutil
from collections.abc import Callable

import pytest
import yaml

import lbctl.render
from lbctl.config import resolve
from lbctl.loadmanager.select import Options, run
from lbctl.loadmanager.split_preview import SplitRequest, preview
from lbctl.monitor.brokers import BrokerMonitor
from lbctl.render import FORMATS, render
from lbctl.render.fleet_view import IngestView, ReportView, WhatIfView
from lbctl.render.monitor import MonitorView
from lbctl.render.outcomes import OutcomesView
from lbctl.render.simulation_view import ComparisonView, SimulationView
from lbctl.render.split_view import SplitView
from lbctl.render.views import ExplainView, RecommendView, ValidateView
from lbctl.simulate.compare import compare, parse_pairs
from lbctl.simulate.engine import SimulationOptions, simulate
from lbctl.sources.snapshot import read_snapshots, summarize
from tests.paths import EXAMPLES


def _states(name: str = "two-brokers-90-10.jsonl"):
    return read_snapshots([EXAMPLES / name])


def _recommend():
    return RecommendView([r.plan() for r in run(_states(), Options())], all_cycles=True)


def _explain():
    return ExplainView(run(_states(), Options()), all_cycles=True)


def _explain_extensible():
    return ExplainView(run(read_snapshots([EXAMPLES / "extensible" / "skewed.json"]), Options()))


def _validate():
    path = EXAMPLES / "balanced.json"
    return ValidateView([{"file": str(path), **summarize(s)} for s in read_snapshots([path])])


def _split():
    st = read_snapshots([EXAMPLES / "flow-or-qps.json"])[-1]
    request = SplitRequest("my-tenant/my-ns", bundle="0x00000000_0x80000000")
    return SplitView(preview(st, resolve(st.config), request))


def _assign():
    from lbctl.loadmanager import assign
    from lbctl.loadmanager.select import resolve_settings
    from lbctl.render.assign_view import AssignView

    st = read_snapshots([EXAMPLES / "hot-broker.json"])[-1]
    settings = resolve_settings([st], Options())[0]
    todo = assign.namespace_bundles(st, settings, "acme/new", 4)
    return AssignView(assign.preview(st, settings, Options(), kind=assign.NAMESPACE,
                                     subject="acme/new", bundles=todo))


def _simulation():
    return SimulationView(simulate(_states("hot-broker.json"), Options(),
                                   SimulationOptions(cycles=6)))


def _comparison():
    pairs = parse_pairs(["ThresholdShedder", "AvgShedder:AvgShedder"], None)
    return ComparisonView(compare(_states("hot-broker.json"), Options(), pairs,
                                  SimulationOptions(cycles=6)))


def _propose():
    from lbctl.planner.propose import ProposeOptions, propose
    from lbctl.render.propose_view import ProposeView

    st = _states("hot-broker.json")[-1]
    return ProposeView(propose(st, resolve(st.config), ProposeOptions(solver="greedy")),
                       detailed=True)


def _monitor():
    mon = BrokerMonitor()
    refresh = None
    for st in _states():
        refresh = mon.update(list(st.brokers), dict(st.brokers), 85.0, st.captured_at, st.cluster)
    return MonitorView(refresh)


def _ingest():
    from lbctl.fleet.ingest import IngestResult

    return IngestView(IngestResult("/tmp/fleet", files_found=3, files_read=3, snapshots_read=4,
                                   snapshots_added=4,
                                   skipped=[{"file": "x.json", "reason": "x.json: bad"}]))


def _report():
    import pandas as pd

    from lbctl.fleet.report import FleetReport, ReportOptions

    clusters = pd.DataFrame([{"imbalance_rank": 1, "churn_rank": 1, "cluster": "east",
                              "samples": 3, "brokers": 2, "bundles": 10, "tput_cv": 0.5,
                              "rate_cv": 0.4, "tput_ratio": 3.0, "overloaded": 1, "idle": 0,
                              "over_split": 0, "unsplittable": 0, "moves": 2, "bounces": 0,
                              "churn": 0.1}])
    hot = pd.DataFrame([{"cluster": "east", "bundle": "t/ns/0x00000000_0xffffffff", "samples": 3,
                         "over_split": 0, "oversized": 1, "unsplittable": 0, "moves": 1,
                         "bounces": 0, "max_share": 0.7, "max_tput": 2.5e7}])
    return ReportView(FleetReport(clusters, None, hot, None, ReportOptions(), ["clusters.csv"]))


def _outcomes():
    from lbctl.admin.client import unload_call
    from lbctl.executor import Mutation, Outcome

    m = Mutation(unload_call("public/default", "0x00000000_0x80000000"), "unload a bundle")
    return OutcomesView([Outcome(m, "PUT http://b:8080/admin/v2/…/unload", "done", 204)])


def _brokers():
    from lbctl.render.brokers_view import BrokersView
    from lbctl.sources.live_brokers import BrokerInfo, BrokerList

    lm = "org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl"
    return BrokersView(BrokerList("c1", "b-1.svc:8080", None, (
        BrokerInfo("b-1.svc:8080", True, True, "4.1.1", lm),
        BrokerInfo("b-2.svc:8080", False, False, error="GET …/version: timed out"))))


def _journal():
    from datetime import UTC, datetime

    from lbctl.render.journal_view import JournalView
    from lbctl.sources.journal import JournalEntry

    t = datetime(2026, 3, 12, 14, 5, tzinfo=UTC)
    return JournalView("j.jsonl", (
        JournalEntry(t, "r1", "sending", "split x", "PUT", "http://b/x", [1], None, None),
        JournalEntry(t, "r1", "done", "split x", "PUT", "http://b/x", [1], 204, None)))


def _examples():
    from lbctl.cli.examples import describe
    from lbctl.render.views import ExamplesView

    return ExamplesView(str(EXAMPLES), describe(EXAMPLES))


def _whatif():
    import pandas as pd

    return WhatIfView(pd.DataFrame([{"cluster": "east", "strategy": "ThresholdShedder",
                                     "placement": "LeastLongTermMessageRate", "cycles": 3,
                                     "unloads": 2, "moved_soon_after": 1, "repeats": 0,
                                     "error": None}]), 5)


def _apply_report():
    from pathlib import Path

    from lbctl.apply.planfile import parse_plan
    from lbctl.apply.runner import ApplyReport, Step

    plan = parse_plan({"format": "lbctl/plan@1", "cluster": "c", "capturedAt": "2026-11-21T22:00:00Z",
                       "actions": [{"action": "unload", "bundle": f"t/ns/0x{i:08x}_0x{i + 1:08x}",
                                    "broker": "b1:8080", "destinationBroker": "b2:8080",
                                    "reason": "Overloaded"} for i in range(3)]}, "plan.json", "d")
    steps = [Step(plan.actions[0], "valid", state="done", owner="b2:8080", seconds=0.2,
                  request="PUT http://b1:8080/admin/v2/namespaces/t/ns/x/unload"),
             Step(plan.actions[1], "changed", "owned by b3:8080 now", state="skipped"),
             Step(plan.actions[2], "valid", state="not-sent", why="stopped by a signal")]
    return ApplyReport(plan, "c", "run1", steps, "partial", "stopped by a signal",
                       Path("/j.jsonl"), Path("/rollback-run1.json"))


def _apply():
    from lbctl.render.apply_view import ApplyView

    return ApplyView(_apply_report())


def _drain():
    from lbctl.apply.drain import DrainReport
    from lbctl.render.apply_view import DrainView

    return DrainView(DrainReport("b1:8080", [_apply_report()], ["t/ns/0x00000002_0x00000003"],
                                 "restored", False, "drain of b1:8080 stopped"))


def _doctor():
    from lbctl.doctor.run import diagnose
    from lbctl.render.doctor_view import DoctorView

    return DoctorView(diagnose(_states("rolling-restart.yaml"), Options()))


SAMPLES: dict[str, Callable[[], object]] = {
    "ApplyView": _apply, "DrainView": _drain,
    "RecommendView": _recommend, "ExplainView": _explain,
    "ExplainView/extensible": _explain_extensible, "ValidateView": _validate,
    "SplitView": _split, "AssignView": _assign, "SimulationView": _simulation, "ComparisonView": _comparison,
    "MonitorView": _monitor, "IngestView": _ingest, "ReportView": _report,
    "WhatIfView": _whatif, "OutcomesView": _outcomes, "BrokersView": _brokers,
    "JournalView": _journal, "ExamplesView": _examples, "ProposeView": _propose,
    "DoctorView": _doctor,
}


def _view_classes() -> set[str]:
    names = set()
    for mod in pkgutil.iter_modules(lbctl.render.__path__, "lbctl.render."):
        for name, cls in inspect.getmembers(importlib.import_module(mod.name), inspect.isclass):
            if cls.__module__ == mod.name and all(
                    hasattr(cls, m) for m in ("to_data", "to_rows", "to_text")):
                names.add(name)
    return names


def test_every_view_is_here() -> None:
    assert _view_classes() == {k.split("/")[0] for k in SAMPLES}


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("view", sorted(SAMPLES))
def test_view_renders_in_format(view: str, fmt: str) -> None:
    buf = io.StringIO()
    render(SAMPLES[view](), fmt, buf)  # type: ignore[arg-type]
    text = buf.getvalue()
    assert text.endswith("\n") and text.strip()
    if fmt == "json":
        assert isinstance(json.loads(text), dict | list)
    elif fmt == "yaml":
        assert yaml.safe_load(text) is not None
    elif fmt == "csv":
        rows = list(csv.reader(io.StringIO(text)))
        assert rows and all(len(r) == len(rows[0]) for r in rows), "ragged CSV"
        assert rows[0] == SAMPLES[view]().schema.names  # type: ignore[attr-defined]
    elif fmt == "jsonl":
        names = SAMPLES[view]().schema.names  # type: ignore[attr-defined]
        assert all(list(json.loads(line)) == names for line in text.splitlines())
    else:
        assert "\x1b" not in text  # no colour unless asked for


def test_validate_counts_one_broker_and_one_bundle_in_the_singular() -> None:
    summary = {"file": "one.json", "cluster": "c", "capturedAt": "2025-11-21T22:00:00Z",
               "brokers": 1, "bundles": 1, "loadManager": "modular"}
    text = ValidateView([summary]).to_text()
    assert "1 broker, 1 bundle (modular)" in text
    assert "2 brokers, 3 bundles" in ValidateView([{**summary, "brokers": 2, "bundles": 3}]).to_text()

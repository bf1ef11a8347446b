"""Every table view at 80 columns with real-world long names: no identifier is broken across lines.

The snapshot is ``examples/hot-broker.json`` renamed as a Kubernetes cluster names things: broker
ids ``pulsar-broker-N.pulsar-broker.pulsar-prod-a.svc.cluster.local:8080`` in two k8s namespaces
(so the suffix all brokers share is only ``.svc.cluster.local:8080`` and the short names stay
long), tenants and namespaces of 20-30 characters, and the bundle ranges as Pulsar prints them.
Each view is rendered by the command that prints it (in process, COLUMNS=80), or, for the views
that need Spark or a live cluster, from its records. A name counts as broken when the output,
with its line breaks and indents taken out, holds it but no single line does.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.render.display import Display, using
from lbctl.render.names import BrokerNames
from tests.paths import EXAMPLES

WIDTH = 80
STRATEGIES = ("ThresholdShedder", "UniformLoadShedder", "OverloadShedder",
              "LeastLongTermMessageRate", "LeastResourceUsageWithWeight")


def _k8s_id(n: str) -> str:
    zone = "a" if int(n) % 2 else "b"
    return f"pulsar-broker-{n}.pulsar-broker.pulsar-prod-{zone}.svc.cluster.local"


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    text = (EXAMPLES / "hot-broker.json").read_text()
    text = re.sub(r"broker-(\d+)\.pulsar\.svc", lambda m: _k8s_id(m.group(1)), text)
    for ns in sorted(set(re.findall(r'"acme/([a-z]+)', text))):
        text = text.replace(f"acme/{ns}", f"payments-platform-prod/{ns}-events-eu-west-1")
    path = tmp_path_factory.mktemp("long") / "k8s-prod.json"
    path.write_text(text)
    return path


def _identifiers(snapshot: Path) -> list[str]:
    """Bundle names, broker ids (full and as tables shorten them), namespaces, strategies."""
    data = json.loads(snapshot.read_text())
    brokers = list(data["brokers"])
    short = BrokerNames.of(brokers)
    bundles = {b for info in data["brokers"].values() for b in info.get("lastStats", {})}
    namespaces = {b.rsplit("/", 1)[0] for b in bundles}
    assert max(len(b) for b in bundles) > 50 and len(short(brokers[0])) > 35  # long enough
    return sorted({*bundles, *namespaces, *brokers, *(short(b) for b in brokers), *STRATEGIES},
                  key=len, reverse=True)


def broken(text: str, names: list[str]) -> list[str]:
    """The names the text holds only across a line break."""
    lines = text.splitlines()
    joined = re.sub(r"\s*\n\s*", "", text)
    return [n for n in names if n in joined and not any(n in line for line in lines)]


def _check(text: str, names: list[str]) -> None:
    assert not broken(text, names), broken(text, names)
    wide = [line for line in text.splitlines() if len(line) > WIDTH]
    assert not wide, wide


def _run(*args: str) -> str:
    res = CliRunner().invoke(app, list(args), env={"COLUMNS": str(WIDTH)})
    assert res.exit_code == 0, res.output
    return res.stdout


def commands(f: str) -> dict[str, list[str]]:
    ns = "payments-platform-prod/billing-events-eu-west-1"
    return {
        "recommend": ["recommend", f],
        "explain": ["explain", f],
        "simulate": ["simulate", f, "--cycles", "3"],
        "compare": ["compare", f, "--cycles", "3", "--strategy", "ThresholdShedder",
                    "--strategy", "UniformLoadShedder:LeastResourceUsageWithWeight"],
        "split-bundle": ["split-bundle", ns, "-b", "0xc0000000_0xffffffff", "--snapshot", f],
        "monitor-brokers": ["monitor-brokers", "--snapshot", f, "--once"],
        "monitor-brokers --summary": ["monitor-brokers", "--snapshot", f, "--once", "--summary"],
        "propose": ["propose", f, "--solver", "greedy"],
    }


@pytest.mark.parametrize("command", list(commands("F")))
def test_a_command_keeps_every_name_whole_at_80_columns(snapshot: Path, command: str) -> None:
    names = _identifiers(snapshot)
    text = _run(*commands(str(snapshot))[command])
    _check(text, names)
    if command in ("recommend", "propose", "split-bundle"):  # their tables show bundles
        assert any(n.startswith("payments-platform-prod/") and "0x" in n and n in text
                   for n in names)


def test_the_wrapped_name_check_finds_a_broken_name() -> None:
    """The check above can fail: a bundle cut at its ``_`` is found."""
    name = "payments-platform-prod/billing-events-eu-west-1/0xc0000000_0xffffffff"
    assert broken("x payments-platform-prod/billing-events-eu-west-1/0xc0000000_\n"
                  "    0xffffffff y", [name]) == [name]
    assert broken(f"x {name} y", [name]) == []


def test_brokers_view_keeps_ids_whole() -> None:
    from lbctl.render.brokers_view import BrokersView
    from lbctl.sources.live_brokers import BrokerInfo, BrokerList

    ids = [f"{_k8s_id(str(n))}:8080" for n in range(1, 13)]
    infos = tuple(BrokerInfo(b, i == 0, i != 3, "4.0.4",
                             "org.apache.pulsar.broker.loadbalance.extensions.ExtensibleLoadManagerImpl",
                             None if i != 3 else f"GET http://{b}/admin/v2/brokers/version: timed out")
                  for i, b in enumerate(ids))
    with using(Display(width=WIDTH)):
        text = BrokersView(BrokerList("pulsar-prod-eu-west-1", ids[0], None, infos)).to_text()
    names = BrokerNames.of(ids)
    _check(text, sorted({*ids, *(names(b) for b in ids)}, key=len, reverse=True))


def _fleet_report() -> Any:
    import pandas as pd

    from lbctl.fleet.report import FleetReport, ReportOptions

    clusters = ["pulsar-prod-eu-west-1", "pulsar-prod-us-east-1-payments"]
    recs = []
    for i, c in enumerate(clusters):
        recs.append({"cluster": c, "samples": 90, "first": "2026-03-01T00:00:00Z",
                     "last": "2026-03-02T00:00:00Z", "brokers": 12, "bundles": 2048,
                     "rate_cv": 0.4 + i, "tput_cv": 0.5 + i, "tput_ratio": 3.2, "overloaded": 4,
                     "idle": 0, "moves": 12, "bounces": 2, "churn": 0.01, "over_split": 3,
                     "oversized": 1, "unsplittable": 1, "imbalance_rank": i + 1,
                     "churn_rank": 2 - i})
    hot = [{"cluster": clusters[i % 2],
            "bundle": f"payments-platform-prod/clickstream-events-eu-west-1/0x{i:08x}_0xffffffff",
            "samples": 90, "over_split": 3, "oversized": 1, "unsplittable": 1, "moves": 2,
            "bounces": 1, "max_share": 0.61, "max_tput": 150e6} for i in range(4)]
    return FleetReport(pd.DataFrame(recs), pd.DataFrame(), pd.DataFrame(hot), pd.DataFrame(),
                       ReportOptions(), plots_skipped="--no-plot")


def test_fleet_report_tables_keep_clusters_and_bundles_whole() -> None:
    from lbctl.render.fleet_view import ReportView

    report = _fleet_report()
    with using(Display(width=WIDTH)):
        text = ReportView(report).to_text()
    names = sorted({*report.hot_bundles["bundle"], *report.clusters["cluster"]},
                   key=len, reverse=True)
    _check(text, names)
    assert all(n in text for n in names)


def test_fleet_whatif_keeps_strategies_whole() -> None:
    import pandas as pd

    from lbctl.render.fleet_view import WhatIfView

    counts = pd.DataFrame([{"cluster": "pulsar-prod-us-east-1-payments", "strategy": s,
                            "placement": "LeastResourceUsageWithWeight", "cycles": 90,
                            "unloads": 12, "moved_soon_after": 3, "repeats": 1, "error": None}
                           for s in ("ThresholdShedder", "UniformLoadShedder")])
    with using(Display(width=WIDTH)):
        text = WhatIfView(counts, 10).to_text()
    _check(text, ["pulsar-prod-us-east-1-payments", *STRATEGIES])


def test_fleet_whatif_headers_stay_whole_at_80_columns() -> None:
    """The replay of examples/fleet at 80 columns cut its headers ('clust' / 'er', 'cycle' / 's',
    'moved_' / 'soon_' / 'after'): the placement, one in every row, is said once under it."""
    import pandas as pd

    from lbctl.render.fleet_view import WhatIfView

    counts = pd.DataFrame([{"cluster": c, "strategy": s, "placement": "LeastLongTermMessageRate",
                            "cycles": 30, "unloads": 23, "moved_soon_after": 1, "repeats": 20,
                            "error": None}
                           for c in ("east", "lab", "west")
                           for s in ("ThresholdShedder", "UniformLoadShedder")])
    with using(Display(width=80)):
        text = WhatIfView(counts, 10).to_text()
    lines = text.splitlines()
    head = next(i for i, x in enumerate(lines) if x.startswith("clust"))
    assert lines[head].split() == ["cluster", "strategy", "cycles", "unloads", "moved_soon_after",
                                   "repeats"]
    assert lines[head + 1].startswith("-")  # the header took one line
    assert "(every row: placement LeastLongTermMessageRate)" in text
    assert all(len(x) <= 80 for x in lines)

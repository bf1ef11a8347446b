"""``lbctl doctor`` on every bundled example gives the findings its description predicts
(examples/README.md, examples/extensible/README.md)."""

from __future__ import annotations

import shlex

import pytest

from lbctl.doctor.run import diagnose
from lbctl.loadmanager.select import Options
from lbctl.sources.snapshot import read_snapshots
from tests.paths import EXAMPLES

# example → the rules it must trigger (exactly these) and the exit status
EXPECTED: dict[str, tuple[set[str], int]] = {
    # no action by any shedder; the traps are the configuration's: the ThresholdShedder +
    # LeastLongTermMessageRate pair, history without lower boundary, and distribute-evenly
    # leaving single candidates (default true)
    "balanced.json": ({"shedder-placement-mismatch", "threshold-no-lower-boundary",
                       "distribute-evenly"}, 1),
    # the hot broker is a load problem for recommend, not a trap; acme/billing has 4 bundles
    # on 5 brokers
    "hot-broker.json": ({"shedder-placement-mismatch", "threshold-no-lower-boundary",
                         "distribute-evenly", "namespace-few-bundles"}, 1),
    # PIP-220's rolling restart: broker-6 empty while nobody is above mean + threshold
    "rolling-restart.yaml": ({"shedder-placement-mismatch", "threshold-no-lower-boundary",
                              "distribute-evenly", "idle-broker"}, 1),
    "pip220-12-2-1-1.json": ({"shedder-placement-mismatch", "threshold-no-lower-boundary",
                              "namespace-few-bundles"}, 1),
    "pip364-90-10.json": ({"shedder-placement-mismatch", "threshold-no-lower-boundary",
                           "distribute-evenly", "namespace-few-bundles", "balancing-disabled"}, 1),
    "two-brokers-90-10.jsonl": ({"shedder-placement-mismatch", "threshold-no-lower-boundary",
                                 "distribute-evenly"}, 1),
    "flow-or-qps.json": ({"shedder-placement-mismatch", "threshold-no-lower-boundary",
                          "balancing-disabled"}, 1),
    # AvgShedder configured as PIP-364 recommends (both strategies, maxUnloadPercentage 0.5)
    "avg-shedder.jsonl": ({"distribute-evenly"}, 1),
    "uniform.json": ({"distribute-evenly"}, 1),
    # isolation leaves each namespace one candidate; acme/billing has 4 bundles on 5 brokers
    "policies.json": ({"shedder-placement-mismatch", "distribute-evenly",
                       "namespace-few-bundles", "threshold-no-lower-boundary"}, 1),
    # SimpleLoadManagerImpl: the doctor's rules are the modular load manager's, and its
    # default ThresholdShedder + LeastLongTermMessageRate settings still trigger them
    "simple-overloaded.json": ({"shedder-placement-mismatch", "threshold-no-lower-boundary"}, 1),
    # extensible, Pulsar 4.0.4: the memory weight is 0 by default there (PR #22820), so no
    # memory-weights finding; the 50-broker history has idle brokers
    "extensible/pip220-12-2-1-1.jsonl": (set(), 0),
    "extensible/pip220-50x5-0.jsonl": ({"idle-broker"}, 1),
    "extensible/skewed.json": (set(), 0),
}


#: the fleet examples (fleet analysis input): their snapshots' rules, by cluster
FLEET: dict[str, set[str]] = {
    # one bundle of public/default is a single topic at 300 MB/s: no split can help
    "west": {"single-hot-topic"},
    "east": {"shedder-placement-mismatch", "threshold-no-lower-boundary", "distribute-evenly",
             "namespace-few-bundles", "single-hot-topic"},
    "lab": {"distribute-evenly", "single-hot-topic"},
}


def test_every_example_is_listed() -> None:
    files = {str(p.relative_to(EXAMPLES)) for p in EXAMPLES.rglob("*")
             if p.suffix in (".json", ".jsonl", ".yaml") and "fleet" not in p.parts}
    assert files == set(EXPECTED)


@pytest.mark.parametrize("cluster", sorted(FLEET))
def test_fleet_examples(cluster: str) -> None:
    files = sorted(p for p in (EXAMPLES / "fleet" / cluster).iterdir()
                   if p.name.endswith((".json", ".yaml", ".jsonl", ".jsonl.gz")))
    assert files
    for p in files:
        report = diagnose(read_snapshots([p]), Options())
        assert {f.rule for f in report.findings} == FLEET[cluster], p.name
        assert int(report.status) == 1


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_findings(name: str) -> None:
    rules, status = EXPECTED[name]
    report = diagnose(read_snapshots([EXAMPLES / name]), Options())
    assert {f.rule for f in report.findings} == rules
    assert int(report.status) == status


def test_rolling_restart_is_a_warning_with_numbers() -> None:
    report = diagnose(read_snapshots([EXAMPLES / "rolling-restart.yaml"]), Options())
    (f,) = [f for f in report.findings if f.rule == "threshold-no-lower-boundary"]
    assert f.severity == "warning" and "broker-6.pulsar.svc:8080 at 0.4 %" in f.found
    (idle,) = [f for f in report.findings if f.rule == "idle-broker"]
    assert idle.brokers[0] == "broker-6.pulsar.svc:8080"


def test_avg_shedder_example_is_clean_of_avg_traps() -> None:
    """The AvgShedder example pairs both strategies with maxUnloadPercentage 0.5; on 3.3.1 the
    wrong bind key (PR #23156) becomes an error."""
    states = read_snapshots([EXAMPLES / "avg-shedder.jsonl"])
    rules = {f.rule: f for f in diagnose(states, Options(pulsar_version="3.3.1")).findings}
    assert rules["avg-shedder-key"].severity == "error"


def test_the_command_page_example_is_what_doctor_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/commands/doctor.md shows `doctor examples/rolling-restart.yaml --rule idle-broker`
    verbatim at 102 columns (its longest command's, walk25): a newcomer's walkthrough found its fix from an older release
    (recommend --assume-steady, where doctor now names rebalance-after) and "1 rules"."""
    from typer.testing import CliRunner

    from lbctl.cli.app import app
    from tests.paths import ROOT

    cmd = "lbctl doctor examples/rolling-restart.yaml --rule idle-broker"
    page = (ROOT / "docs" / "commands" / "doctor.md").read_text()
    start = page.index(f"$ {cmd}\n") + len(f"$ {cmd}\n")
    shown = page[start:page.index("```", start)]
    monkeypatch.chdir(ROOT)  # the fix names the file as given (walk25), as on the page
    res = CliRunner().invoke(app, shlex.split(cmd)[1:], env={"COLUMNS": "102"})
    assert res.exit_code == 1
    assert res.stdout == shown

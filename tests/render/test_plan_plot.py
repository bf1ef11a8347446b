"""``recommend --plot``: the per-broker before/after series and the file drawn from them."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.loadmanager.select import Options, plans
from lbctl.plan import Plan
from lbctl.render.plan_plot import plan_series
from lbctl.sources.snapshot import read_snapshots
from tests.paths import EXAMPLES
from tests.plot_checks import read_png


def _plan(name: str, strategy: str | None = None) -> Plan:
    return plans(read_snapshots([EXAMPLES / name]), Options(strategy=strategy))[-1]


def test_modular_series_are_the_plans_rows_and_the_shedders_trigger() -> None:
    plan = _plan("hot-broker.json")
    s = plan_series(plan)
    assert s.brokers == [b.broker for b in plan.brokers]
    assert s.before == pytest.approx([b.usage * 100 for b in plan.brokers])
    assert s.after == pytest.approx([b.usage_after * 100 for b in plan.brokers])
    hot = s.brokers.index("broker-2.pulsar.svc:8080")
    assert s.after[hot] < s.before[hot]  # the hot broker is relieved, by the estimate
    assert sum(s.moves_out) == sum(s.moves_in) == plan.summary()["unloads"] == s.moves_out[hot]
    # ThresholdShedder: average smoothed usage + 10 points (first sight: scores = usages)
    assert s.threshold == pytest.approx(sum(s.score) / len(s.score) + 10)
    assert s.threshold_label and "loadBalancerBrokerThresholdShedderPercentage 10%" in s.threshold_label
    # drawing did not read settings the plan would then list
    before = plan.settings.read_values()
    plan_series(plan)
    assert plan.settings.read_values() == before


def test_overload_and_uniform_shedders() -> None:
    s = plan_series(_plan("hot-broker.json", strategy="OverloadShedder"))
    assert s.threshold == pytest.approx(85) and all(math.isnan(x) for x in s.score)
    s = plan_series(_plan("uniform.json", strategy="UniformLoadShedder"))
    assert s.threshold is None and s.threshold_label is None


def test_extensible_series() -> None:
    plan = _plan("extensible/skewed.json")
    s = plan_series(plan)
    assert plan.shedding == "TransferShedder" and sum(s.moves_out) == plan.summary()["unloads"] > 0
    avg = sum(s.score) / len(s.score)
    assert s.threshold == pytest.approx(max(85.0, avg + 25))


@pytest.mark.parametrize("example", ["hot-broker.json", "extensible/skewed.json"])
def test_recommend_plot_writes_the_file_and_leaves_stdout_alone(tmp_path: Path, example: str) -> None:
    runner = CliRunner()
    png = tmp_path / "plan.png"
    plain = runner.invoke(app, ["recommend", str(EXAMPLES / example), "-o", "json"])
    drawn = runner.invoke(app, ["recommend", str(EXAMPLES / example), "-o", "json",
                                "--plot", str(png)])
    assert drawn.exit_code == 0, drawn.output
    assert drawn.stdout == plain.stdout
    assert read_png(png).shape[:2] == (750, 1000)


@pytest.mark.parametrize("args, message", [
    (["--plot", "plan.jpg"], "--plot plan.jpg: the file name must end in .png or .svg"),
    (["--plot", "plan"], "must end in .png or .svg"),
])
def test_recommend_plot_refuses_other_names(tmp_path: Path, args: list[str], message: str) -> None:
    res = CliRunner().invoke(app, ["recommend", str(EXAMPLES / "hot-broker.json"), *args])
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr.startswith("lbctl: error: ") and message in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_recommend_plot_is_not_for_watch() -> None:
    res = CliRunner().invoke(app, ["recommend", "--watch", "--plot", "x.png"])
    assert res.exit_code == 2 and "--plot draws one plan" in res.stderr

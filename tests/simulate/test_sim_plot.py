"""The series the simulation and comparison plots are drawn from, and the files they make."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from lbctl.errors import UsageError
from lbctl.loadmanager.select import Options
from lbctl.simulate.compare import compare, parse_pairs
from lbctl.simulate.engine import SimulationOptions, simulate
from lbctl.simulate.plot import (
    check_plot_path,
    comparison_series,
    plot_comparison,
    plot_simulation,
    simulation_series,
    threshold_line,
)
from lbctl.sources.snapshot import read_snapshots
from tests.paths import EXAMPLES
from tests.plot_checks import read_png

SETTINGS = {"loadBalancerBrokerThresholdShedderPercentage": 10,
            "loadBalancerBrokerOverloadedThresholdPercentage": 85,
            "loadBalancerBrokerLoadTargetStd": 0.25}


def test_threshold_line_per_shedder() -> None:
    get = SETTINGS.__getitem__
    label, value = threshold_line("ThresholdShedder", get, [0.9, 0.1]) or ("", 0.0)
    assert value == pytest.approx(0.6) and "loadBalancerBrokerThresholdShedderPercentage 10%" in label
    label, value = threshold_line("OverloadShedder", get, []) or ("", 0.0)
    assert value == pytest.approx(0.85) and "overload threshold" in label
    # TransferShedder: overloaded above both the threshold and average + target std
    assert threshold_line("TransferShedder", get, [0.5, 0.3])[1] == pytest.approx(0.85)  # type: ignore[index]
    assert threshold_line("TransferShedder", get, [0.9, 0.8])[1] == pytest.approx(1.1)  # type: ignore[index]
    assert threshold_line("UniformLoadShedder", get, [0.5]) is None
    assert threshold_line("AvgShedder", get, [0.5]) is None
    assert threshold_line("ThresholdShedder", get, []) is None  # no score: nothing compared


def test_simulation_series_follow_the_run() -> None:
    r = simulate(read_snapshots([EXAMPLES / "pip364-90-10.json"]), Options(),
                 SimulationOptions(cycles=40))
    s = simulation_series(r)
    n = len(r.cycles)
    assert s.minutes == [float(k) for k in range(n)] and s.end == float(n)
    hot, cold = "broker-1.pulsar.svc:8080", "broker-2.pulsar.svc:8080"
    assert s.load[hot][0] == pytest.approx(90) and s.load[cold][0] == pytest.approx(10)
    assert len(s.load[hot]) == n + 1
    # the first sample is taken as is: the smoothed score starts at the usage, then lags it
    assert s.score[hot][0] == pytest.approx(90) and s.score[hot][1] > s.load[hot][1]
    # ThresholdShedder's trigger: the average score + 10 points, every cycle
    assert s.threshold[0] == pytest.approx(60)
    for k, c in enumerate(r.cycles):
        scores = [x for x in c.scores.values() if x is not None]
        assert s.threshold[k] == pytest.approx(sum(scores) / len(scores) * 100 + 10)
    assert s.threshold_label and "average smoothed usage" in s.threshold_label
    assert sum(s.moves) == r.summary()["unloads"] > 0
    assert all(isinstance(x, int) for xs in s.bundles.values() for x in xs)
    assert {sum(xs[k] for xs in s.bundles.values()) for k in range(n)} == {8}


def test_overload_shedder_line_is_the_setting() -> None:
    r = simulate(read_snapshots([EXAMPLES / "hot-broker.json"]),
                 Options(strategy="OverloadShedder"), SimulationOptions(cycles=3))
    s = simulation_series(r)
    assert s.threshold == [pytest.approx(85.0)] * 3 and s.score == {}
    assert s.threshold_label and "loadBalancerBrokerOverloadedThresholdPercentage 85%" in s.threshold_label


def test_uniform_shedder_draws_no_line() -> None:
    r = simulate(read_snapshots([EXAMPLES / "uniform.json"]),
                 Options(strategy="UniformLoadShedder"), SimulationOptions(cycles=2))
    s = simulation_series(r)
    assert s.threshold_label is None and all(math.isnan(x) for x in s.threshold)


def test_transfer_shedder_scores_are_the_ema() -> None:
    r = simulate(read_snapshots([EXAMPLES / "extensible" / "skewed.json"]), Options(),
                 SimulationOptions(cycles=3))
    s = simulation_series(r)
    assert r.shedding == "TransferShedder" and s.score
    c = r.cycles[0]
    scores = [x for x in c.scores.values() if x is not None]
    expected = max(85.0, (sum(scores) / len(scores) + 0.25) * 100)
    assert s.threshold[0] == pytest.approx(expected)


def test_comparison_series_cumulate_moves_and_start_std_at_the_data() -> None:
    states = read_snapshots([EXAMPLES / "hot-broker.json"])
    result = compare(states, Options(), parse_pairs(["ThresholdShedder", "OverloadShedder"], None),
                     SimulationOptions(cycles=10))
    s = comparison_series(result.runs)
    for run in result.runs:
        moves = s.cumulative_moves[run.label]
        assert moves == sorted(moves) and moves[-1] == run.summary()["unloads"]
        assert moves[0] == len(run.cycles[0].moves)
        assert s.std[run.label][-1] == pytest.approx(run.final.std * 100)
        assert len(s.range[run.label]) == len(s.minutes[run.label]) == len(run.cycles) + 1


def test_plots_are_drawn(tmp_path: Path) -> None:
    states = read_snapshots([EXAMPLES / "pip364-90-10.json"])
    r = simulate(states, Options(), SimulationOptions(cycles=10))
    plot_simulation(r, tmp_path / "sim.png")
    assert read_png(tmp_path / "sim.png").shape[:2] == (850, 1000)
    result = compare(states, Options(), parse_pairs(["ThresholdShedder", "AvgShedder"], None),
                     SimulationOptions(cycles=5))
    plot_comparison(result.runs, tmp_path / "cmp.svg")
    assert (tmp_path / "cmp.svg").read_text().lstrip().startswith("<?xml")


@pytest.mark.parametrize("name", ["a.jpg", "a", "a.pdf"])
def test_other_file_types_are_refused(name: str) -> None:
    with pytest.raises(UsageError, match="must end in .png or .svg"):
        check_plot_path(Path(name))

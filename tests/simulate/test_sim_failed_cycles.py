"""A simulated run whose shedding strategy throws every cycle (AvgShedder's ``(int) (score1 -
score2)`` broker sort meeting TimSort's contract check, the releases before PR #24954): Pulsar's
``LoadSheddingTask`` logs the error and unloads nothing, and the run said only "0 unloads ...
settled", a failed strategy presented as a balanced cluster. The failed cycles are said."""

from __future__ import annotations

import json

from lbctl.loadmanager.select import Options
from lbctl.model.javasort import CONTRACT_MESSAGE
from lbctl.render.simulation_view import ComparisonView, SimulationView
from lbctl.simulate.compare import Pair, compare
from lbctl.simulate.engine import SimulationOptions, simulate
from tests.loadmanager.test_avg_sort_failure import _state

INT_CAST = "4.1.1"  # the newest release whose AvgShedder sorts with (int) (score1 - score2)


def test_cycles_whose_strategy_threw_are_said() -> None:
    run = simulate([_state()], Options(strategy="AvgShedder", placement="AvgShedder",
                           pulsar_version=INT_CAST), SimulationOptions(cycles=2))
    assert [CONTRACT_MESSAGE in c.failure for c in run.cycles] == [True, True]
    view = SimulationView(run)
    text = view.to_text()
    assert "The shedding strategy threw in 2 of 2 cycle(s) (cycles 1, 2)" in " ".join(text.split())
    assert all(CONTRACT_MESSAGE in c["failure"] for c in json.loads(json.dumps(
        view.to_data(), default=str))["cycles"])


def test_a_run_without_a_throw_has_no_failure_key() -> None:
    run = simulate([_state()], Options(strategy="ThresholdShedder"), SimulationOptions(cycles=2))
    view = SimulationView(run)
    assert "threw" not in view.to_text()
    assert all("failure" not in c for c in view.to_data()["cycles"])


def test_compare_says_which_run_threw() -> None:
    res = compare([_state()], Options(pulsar_version=INT_CAST), [Pair("AvgShedder", "AvgShedder"),
                                           Pair("ThresholdShedder")], SimulationOptions(cycles=2))
    text = " ".join(ComparisonView(res).to_text().split())
    assert "AvgShedder + AvgShedder: The shedding strategy threw in 2 of 2 cycle(s)" in text
    assert text.count("threw") == 1

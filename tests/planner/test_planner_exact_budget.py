"""``--time-limit`` is the whole command's exact-solver budget (issue 30, item 3): propose's
passes (the planned band, then narrower margins; a solve's cheapest-nearest run) share it, each
given what the earlier ones left, counted in CPU seconds of the solver's forked children too.
Before, every pass got the full limit (172 CPU s for ``--time-limit 60``)."""

from __future__ import annotations

import os
import resource
import time
from typing import Any

import pytest

from lbctl.config import resolve
from lbctl.planner import milp
from lbctl.planner.propose import ProposeOptions, propose
from lbctl.planner.solve import ExactBudget
from tests.planner_clusters import random_cluster

LIMIT = 0.3
BURN = 0.2  # CPU seconds each fake exact run spends (in a forked child), at most its limit


def _children_cpu() -> float:
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ch.ru_utime + ch.ru_stime


def _burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


@pytest.fixture
def limits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The limit each exact run is given; each run forks a child that spends ``BURN`` CPU
    seconds (or its limit, when less) and comes back stopped by the clock."""
    given: list[float] = []

    def fake(*args: Any, **kwargs: Any) -> milp.MilpResult:
        limit = float(args[6])
        given.append(limit)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            _burn(min(BURN, limit))
            os._exit(0)
        os.waitpid(pid, 0)
        return milp.MilpResult(None, "time limit", None, None, None, 1.0, 0)

    monkeypatch.setattr(milp, "solve_milp", fake)
    return given


@pytest.mark.parametrize(("seed", "brokers"), [(0, 4), (1, 6), (9, 4)])
def test_the_exact_passes_share_one_time_limit(limits: list[float], seed: int,
                                               brokers: int) -> None:
    state = random_cluster(seed, brokers, per_broker=3)
    before = _children_cpu()
    p = propose(state, resolve(state.config), ProposeOptions(solver="exact", time_limit=LIMIT))
    spent = _children_cpu() - before
    assert limits and limits[0] == pytest.approx(LIMIT, abs=0.01)
    # every later pass got only what the earlier ones left (their children's CPU counted)
    for k in range(1, len(limits)):
        assert limits[k] <= limits[k - 1] - min(BURN, limits[k - 1]) + 0.02
    assert spent <= LIMIT + 0.1  # the solver's children, all passes together
    assert p.solution.solver.startswith("greedy")  # the clock only ever falls back to greedy


def test_a_spent_budget_runs_no_exact_pass() -> None:
    budget = ExactBudget(0.0)
    ran: list[float] = []
    res = budget.solve(lambda limit: ran.append(limit) or milp.MilpResult(
        None, "optimal", None, None, None, 1.0, 0))
    assert ran == [] and res.status == "time limit" and res.moves is None

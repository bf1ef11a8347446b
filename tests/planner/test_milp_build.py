"""The exact model, built with numpy, is the very model the list-of-tuples build gave HiGHS (issue
30), its size is known before it is built, and a model over the memory limit is never built.

``tests/planner/milp_reference.py`` is milp.py as it was (a Python tuple per nonzero: 3.9 GB at
1.43 M pairs). On random clusters with every kind of row — closed brokers, isolation (allowed
destinations), topic kinds refused, pinned bundles, anti-affinity groups, the topic limit,
``--max-moves``, ``--max-throughput`` — both builds must give equal arrays: same variables, same
rows in the same order, same coefficients, bit for bit.
"""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lbctl.config import resolve
from lbctl.planner import milp, solve
from lbctl.planner.constraints import Rules, build_rules
from lbctl.planner.cost import Costs
from lbctl.planner.goals import Targets
from lbctl.planner.greedy import Caps
from lbctl.planner.load import LoadView, build
from tests.planner import milp_reference as old
from tests.planner_clusters import random_cluster

pytestmark = pytest.mark.skipif(not milp.available(), reason="scipy (lbctl[propose]) not installed")


def _problem(seed: int, brokers: int, per: int, topics: int | None
             ) -> tuple[LoadView, Rules, Costs]:
    state = random_cluster(seed, brokers, per, config={"loadBalancerBrokerMaxTopics": topics}
                           if topics else None)
    s = resolve(state.config)
    view = build(state, s)
    return view, build_rules(state, s, view), Costs.of(view)


def _constrain(rules: Rules, view: LoadView, seed: int) -> None:
    """Every kind of static and counted constraint, at random."""
    rng = random.Random(seed)
    n, b = len(view.brokers), len(view.bundles)
    for i in range(b):
        if rng.random() < 0.1:
            rules.pinned[i] = "pinned (test)"
        elif rng.random() < 0.2:
            rules.allowed[i] = frozenset(j for j in range(n) if rng.random() < 0.6)
    if n > 2 and rng.random() < 0.5:
        rules.closed[rng.randrange(n)] = "closed (test)"
    if rng.random() < 0.5:
        j = rng.randrange(n)
        rules.kind_refused[j] = {i for i in range(b) if rng.random() < 0.3}
        rules.kind_why[j] = "kind (test)"
    for g in ("g1", "g2")[:rng.randrange(3)]:
        members = [i for i in range(b) if rng.random() < 0.3]
        count = [0] * n
        for i in members:
            rules.group[i] = g
            count[view.owner[i]] += 1
        rules.group_cap[g] = [max(c, 1) for c in count]


def _equal(x: object, y: object) -> None:
    import numpy as np

    assert np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.integers(2, 9), st.integers(1, 8),
       st.sampled_from([None, None, 40, 120]), st.booleans(),
       st.one_of(st.none(), st.integers(1, 20)), st.one_of(st.none(), st.floats(1e5, 1e9)))
def test_the_numpy_build_gives_highs_the_same_model(seed: int, brokers: int, per: int,
                                                   topics: int | None, constrained: bool,
                                                   moves: int | None,
                                                   throughput: float | None) -> None:
    view, rules, costs = _problem(seed, brokers, per, topics)
    if constrained:
        _constrain(rules, view, seed)
    targets, caps = Targets(0.85, 0.10), Caps(moves, throughput)
    new = milp.build_model(view, rules, costs, targets, 0.099, caps, prune=False)
    ref = old.build_model(view, rules, costs, targets, 0.099, caps)
    assert new.pairs == ref.pairs and new.norm == ref.norm and new.y_index == ref.y_index
    for name in ("c", "lb", "ub", "lower", "upper", "integrality"):
        _equal(getattr(new, name), getattr(ref, name))
    a, b = new.a.tocsc(), ref.a.tocsc()
    a.sort_indices()
    b.sort_indices()
    assert a.shape == b.shape
    for part in ("indptr", "indices", "data"):
        _equal(getattr(a, part), getattr(b, part))
    size = milp.size_of(view, rules, caps)
    assert size.pairs is not None and size.pairs.tolist() == ref.pairs
    assert size.nonzeros >= a.nnz  # an upper bound, as promised


def test_the_size_bound_is_tight_enough_to_decide_on() -> None:
    """Within 2x of the real count on an unconstrained cluster (a loose bound would refuse models
    that fit)."""
    view, rules, costs = _problem(5, 12, 40, None)
    size = milp.size_of(view, rules, Caps(10, 1e9))
    m = milp.build_model(view, rules, costs, Targets(0.85, 0.10), 0.099, Caps(10, 1e9))
    assert m.a.nnz <= size.nonzeros <= 2 * m.a.nnz


def test_a_model_over_the_memory_limit_is_not_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """solve falls back to greedy with a note saying why, before any model is built."""
    view, rules, costs = _problem(3, 8, 20, None)
    need = milp.size_of(view, rules, Caps()).memory
    built: list[int] = []
    real = milp.build_model
    monkeypatch.setattr(milp, "build_model", lambda *a, **k: built.append(1) or real(*a, **k))
    monkeypatch.setattr(milp, "MEMORY_LIMIT", need - 1)
    sol = solve.solve(view, rules, costs, Targets(0.85, 0.10), Caps(),
                      solve.SolveOptions(solver="exact"))
    assert sol.solver == "greedy" and not built
    assert any("the exact model would need about" in n and "limit; greedy solver" in n
               for n in sol.notes)
    # …and listing the pairs stops early when even one nonzero each is too many
    monkeypatch.setattr(milp, "MEMORY_LIMIT", milp.BASE_BYTES + 10 * milp.BYTES_PER_NONZERO)
    size = milp.size_of(view, rules, Caps())
    assert size.pairs is None and not size.fits
    monkeypatch.setattr(milp, "MEMORY_LIMIT", need)
    assert milp.size_of(view, rules, Caps()).fits


def test_the_build_counts_against_the_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A build that reaches the deadline stops there, and the run is a "time limit" run
    (discarded by the caller, like one HiGHS's clock stopped)."""
    view, rules, costs = _problem(4, 8, 20, None)
    with pytest.raises(milp.OutOfTime):
        milp.build_model(view, rules, costs, Targets(0.85, 0.10), 0.099, Caps(),
                         deadline=time.process_time() - 1)
    clock = iter([0.0, 1e6])  # the build takes "forever": no time is left for HiGHS
    monkeypatch.setattr(milp.time, "process_time", lambda: next(clock, 1e6))
    res = milp.solve_milp(view, rules, costs, Targets(0.85, 0.10), 0.099, Caps(), 10.0)
    assert res.status == "time limit" and res.moves is None


def test_a_solver_overrunning_its_limit_is_stopped_from_outside() -> None:
    """HiGHS checks its own time limit between phases only (minutes over on a 142,000-pair
    model): the child is stopped from outside — by its CPU allowance when it computes, by the
    wall clock (a multiple of it) when it is stuck, which it says apart — and the run is not used."""
    def spin() -> None:
        while True:
            pass

    start = time.monotonic()
    assert milp._within(spin, 1.0, 120.0) is None  # the CPU limit, long before the wall one
    assert time.monotonic() - start < 60
    start = time.monotonic()
    with pytest.raises(milp.WallClockStop):  # stuck: the wall clock
        milp._within(lambda: time.sleep(30), 1.0, 0.5)
    assert time.monotonic() - start < 10
    assert milp._within(lambda: {"x": [1.0, 2.0]}, 30, 30) == {"x": [1.0, 2.0]}
    with pytest.raises(ZeroDivisionError):
        milp._within(lambda: 1 / 0, 30, 30)


def test_the_child_gives_the_in_process_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """HiGHS runs in the stoppable child; without fork (Windows) in this process under its own
    limit: the plan is the same."""
    view, rules, costs = _problem(6, 5, 6, None)
    args = (view, rules, costs, Targets(0.85, 0.10), 0.099, Caps(), 30.0)
    forked: list[float] = []
    real = milp._within
    monkeypatch.setattr(milp, "_within", lambda run, c, w: forked.append(c) or real(run, c, w))
    there = milp.solve_milp(*args)
    monkeypatch.setattr(milp, "can_fork", lambda: False)
    here = milp.solve_milp(*args)
    assert len(forked) == 1 and here.moves and there.moves == here.moves
    assert (there.status, there.objective) == (here.status, here.objective)


def _doubled(x: float) -> float:
    return milp._within(lambda: 2 * x, 30, 30)  # type: ignore[no-any-return]


def test_the_solver_s_child_can_be_forked_from_a_daemonic_worker() -> None:
    """A multiprocessing pool's workers are daemonic and may not start ``multiprocessing``
    children (the benchmark's n=30 runs died on it): the solver's child is a plain fork."""
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.map(_doubled, [1.5, 2.0]) == [3.0, 4.0]

"""The faster repair step makes the very plan the old one made (issue 30 item 1, perf17).

``tests/planner/repair_reference.py`` is ``repair._best_step`` before perf17: every candidate
scored through ``_violation_with`` (which scanned the brokers' ends per bundle) and
``Assignment.usage_if``. Random clusters — skewed, deep, a topic limit, caps, ties of equal
bundles — are repaired from nothing and from a plan, with and without the model's uncertainty,
against a band and against a standard deviation; the moves must be equal, in order.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lbctl.model.cluster import ClusterState
from lbctl.planner import greedy, repair
from lbctl.planner.goals import Targets
from tests.planner import repair_reference as old
from tests.planner.test_greedy_equality import _inputs, caps, clusters

EXAMPLES = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])

targets = st.one_of(
    st.builds(Targets, st.sampled_from([0.6, 0.85, 1.0]), st.sampled_from([0.02, 0.05, 0.2])),
    st.builds(lambda m, s: Targets(m, None, s), st.sampled_from([0.7, 0.9]),
              st.sampled_from([0.01, 0.05]))
)


def _both(state: ClusterState, t: Targets, cap: greedy.Caps, seed: int) -> None:
    view, rules, costs = _inputs(state)
    rng = random.Random(seed)
    unc = [rng.choice((0.0, 0.05, 0.3)) for _ in view.brokers]
    start = repair.repair(view, rules, costs, (), t.inside(0.02, t.max_usage), cap)
    runs = [((), None), ((), unc), (start, None), (start, unc)]
    new = [repair.repair(view, rules, costs, m, t, cap, u) for m, u in runs]
    fast = repair._best_step
    repair._best_step = lambda *args: old._best_step(*args[:8])
    try:
        was_start = repair.repair(view, rules, costs, (), t.inside(0.02, t.max_usage), cap)
        was = [repair.repair(view, rules, costs, m, t, cap, u) for m, u in runs]
    finally:
        repair._best_step = fast
    assert start == was_start
    assert new == was


@EXAMPLES
@given(clusters, targets, caps, st.integers(0, 1000))
def test_repair_makes_the_old_plan(state: ClusterState, t: Targets, cap: greedy.Caps,
                                   seed: int) -> None:
    _both(state, t, cap, seed)

"""What lbctl's planner predicted a cycle's plan leaves each broker at ("usage after").

The simulator checks the prediction against the truth (:mod:`lbctl.simulate.metrics`,
:class:`~lbctl.simulate.metrics.PredictionError`); the figure itself is lbctl's, computed as the
planner computes a plan's usage after: the reports the planner planned on (pending moves of
earlier plans already taken as done), moved by :func:`lbctl.planner.load.with_moves` with the load
model the planner planned with (its memory), read as Pulsar's weighted max resource usage
(``LocalBrokerData.getMaxResourceUsageWithWeight``, the 4-argument form the planner balances).
Pulsar's strategies predict nothing: for their cycles there is no figure (``None``), not zero.
"""

from __future__ import annotations

from lbctl.loadmanager.base import CycleResult
from lbctl.planner.cycle import PlannerCycle, PlannerMemory
from lbctl.planner.load import with_moves


def predicted_after(result: CycleResult) -> dict[str, float] | None:
    """Each broker's usage after the cycle's moves as lbctl's load model predicts it (fraction),
    or ``None`` when the cycle is not lbctl's planner's or moved nothing."""
    if not isinstance(result, PlannerCycle) or not result.unloads:
        return None
    memory = result.memory.shedding
    if not isinstance(memory, PlannerMemory) or memory.model is None:
        return None
    moves = [(o.selection.bundle, o.selection.broker, o.destination)
             for o in result.unloads if o.destination is not None]
    after = with_moves(result.state, memory.model, moves)
    w = result.settings.weights4()
    return {b: rep.max_resource_usage_with_weight(*w) for b, rep in after.brokers.items()}

"""Why ``rebalance-after`` (``drain --fill``) chose each move, and whether the plan kept its rule.

The rule (:func:`lbctl.loadmanager.drain.fill_plan`, lbctl's own — Pulsar has no corrective plan
after a restart): from the most loaded broker above the cluster's mean usage, the largest bundle
whose share of that broker's usage fits both what the source has above the mean and what the
target lacks below it. When no bundle fits, one last move — the one from the most loaded broker
that leaves it and the target closest — may take the source below the mean: the rule's one
exception, named here when it happens. The figures are the plan's own estimates (a broker's usage
shared among its bundles by throughput, as :mod:`lbctl.plan` estimates it), replayed move by move.
"""

from __future__ import annotations

import math

from lbctl.config import Settings
from lbctl.loadmanager.drain import _share, usage_of
from lbctl.model.cluster import ClusterState
from lbctl.plan import Plan
from lbctl.units import pct

#: below this the source is "at" the mean (float noise of the replayed estimates)
_EPS = 1e-9


def fill_reasons(state: ClusterState, settings: Settings, plan: Plan, target: str) -> list[str]:
    """One line per move of a fill ``plan`` (its estimates before → after), then whether the plan
    kept the documented rule or which move did not, and why."""
    usage = usage_of(state, settings)
    finite = [u for u in usage.values() if math.isfinite(u)]
    moves = [a for a in plan.actions if a.skipped is None and a.destinationBroker == target]
    if not moves or not finite:
        return [f"no move: {plan.gate}"] if plan.gate else []
    mean = sum(finite) / len(finite)
    est = dict(usage)
    lines = [f"Why these moves (lbctl's fill rule; mean usage {pct(mean)}, {target} at "
             f"{pct(est[target])}):"]
    broken: list[int] = []
    for i, a in enumerate(moves, start=1):
        src = a.broker
        share = _share(state, src, a.bundle, usage[src])
        room, lack = est[src] - mean, mean - est[target]
        before_s, before_t = est[src], est[target]
        est[src] -= share
        est[target] += share
        figures = (f"{src} {pct(before_s)} → {pct(est[src])}, {target} {pct(before_t)} → "
                   f"{pct(est[target])}")
        if share <= min(room, lack) + _EPS:
            why = (f"within the rule: its share {pct(share)} ≤ the source's excess over the mean "
                   f"{pct(room)} and the target's lack {pct(lack)}")
        else:
            broken.append(i)
            why = (f"no bundle fitted both the source's excess {pct(room)} and the target's lack "
                   f"{pct(lack)}: the one move leaving the two closest, "
                   + ("the source ends below the mean (the rule's one exception)"
                      if est[src] < mean - _EPS else "the target ends above the mean"))
        lines.append(f"  #{i} {a.bundle}: {figures}: {why}")
    if broken:
        lines.append(f"Rule kept by every move but #{', #'.join(map(str, broken))} (see why "
                     "above); that move stops the plan.")
    else:
        lines.append(f"Rule kept: no source ends below the mean {pct(mean)}; {target} ends at "
                     f"{pct(est[target])}.")
    return lines

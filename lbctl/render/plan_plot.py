"""``recommend --plot``: each broker's usage before the plan and after it, as bars.

"After" is the plan's own estimate (:mod:`lbctl.plan`: a moved bundle carries its share of its
broker's usage to the destination), not a measurement. The line a broker is shed at is drawn when
the shedder compares usage with one (:func:`lbctl.simulate.plot.threshold_line`); for
ThresholdShedder and TransferShedder it is computed from the scores the shedder averaged, so the
bars (raw usage) may cross it while the score does not — the legend says which figure is
compared. Works alike for modular and extensible plans (both are ``lbctl/plan@1``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from lbctl.plan import Plan
from lbctl.render.names import BrokerNames
from lbctl.simulate.plot import integer_ticks, new_figure, save, threshold_line

_BAR_INCHES = 0.45  # figure width per broker, within bounds


@dataclass(frozen=True)
class PlanSeries:
    """What the plot draws, in percent: one entry per broker of the plan, in its order."""

    brokers: list[str]
    before: list[float]
    after: list[float]
    score: list[float]  # NaN where the shedder keeps none
    moves_out: list[int]
    moves_in: list[int]
    threshold_label: str | None
    threshold: float | None


def _pct(x: float | None) -> float:
    return float("nan") if x is None or not math.isfinite(x) else x * 100


def plan_series(plan: Plan) -> PlanSeries:
    names = [b.broker for b in plan.brokers]
    moved = [a for a in plan.actions
             if a.action in ("unload", "transfer") and a.skipped is None]
    scores = [b.score for b in plan.brokers if b.score is not None and math.isfinite(b.score)]
    # ThresholdShedder averages the smoothed usages; OverloadShedder needs none
    line = threshold_line(plan.shedding, plan.settings.peek, scores)
    triggers = {b.numbers["trigger"] for b in plan.brokers if "trigger" in b.numbers}
    if line is not None and len(triggers) == 1:  # the shedder's own figure, where it gave one
        line = (line[0], triggers.pop())
    return PlanSeries(
        brokers=names,
        before=[_pct(b.usage) for b in plan.brokers],
        after=[_pct(b.usage_after) for b in plan.brokers],
        score=[_pct(b.score) for b in plan.brokers],
        moves_out=[sum(1 for a in moved if a.broker == n) for n in names],
        moves_in=[sum(1 for a in moved if a.destinationBroker == n) for n in names],
        threshold_label=None if line is None else line[0],
        threshold=None if line is None else line[1] * 100,
    )


def plot_plan(plan: Plan, path: Path, *, wide: bool = False) -> None:
    s = plan_series(plan)
    short = BrokerNames.of(s.brokers, wide=wide)
    width = min(max(10.0, 2.0 + _BAR_INCHES * len(s.brokers)), 60.0)
    fig, (ax, ax_moves) = new_figure(2, 7.5, [3, 1], width=width)
    xs = list(range(len(s.brokers)))
    ax.bar([x - 0.2 for x in xs], s.before, width=0.4, color="tab:blue", label="usage now")
    ax.bar([x + 0.2 for x in xs], s.after, width=0.4, color="tab:orange",
           label="usage after the plan (lbctl's estimate)")
    if any(not math.isnan(v) for v in s.score):
        ax.scatter(xs, s.score, marker="_", s=200, color="black", zorder=3,
                   label="smoothed score (what the shedder compares)")
    if s.threshold is not None:
        ax.axhline(s.threshold, color="tab:red", linestyle="--", linewidth=1.2,
                   label=s.threshold_label)
    unloads = sum(s.moves_out)
    ax.set_title(f"{plan.cluster}: {plan.shedding} + {plan.placement}, {unloads} unload(s)"
                 + (f"\n(broker names without {short.suffix})" if short.suffix else ""))
    ax.set_ylabel("usage (weighted max, %)")
    ax.set_ylim(bottom=0)
    ax.grid(True, axis="y", alpha=0.3)
    fig.legend(handles=ax.get_legend_handles_labels()[0], fontsize="small",
               loc="outside lower center", ncols=2)
    ax_moves.bar([x - 0.2 for x in xs], s.moves_out, width=0.4, color="tab:red", label="out")
    ax_moves.bar([x + 0.2 for x in xs], s.moves_in, width=0.4, color="tab:green", label="in")
    ax_moves.set_ylabel("unloads")
    ax_moves.set_ylim(bottom=0)
    integer_ticks(ax_moves)
    ax_moves.legend(fontsize="small", loc="best")
    ax_moves.grid(True, axis="y", alpha=0.3)
    ax_moves.set_xticks(xs)
    ax_moves.set_xticklabels([short(b) for b in s.brokers], rotation=30 if len(xs) > 6 else 0,
                             ha="right" if len(xs) > 6 else "center", fontsize="small")
    save(fig, path)

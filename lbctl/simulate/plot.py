"""Plots of simulations, drawn with matplotlib (imported here, lazily, on the Agg backend).

* :func:`plot_simulation`: each broker's load (weighted max resource usage, %) over the cycles,
  beside the smoothed score the shedder compares (dashed, same colour) and the line a broker is
  shed at (:func:`threshold_line`); the bundles each broker carries, and the unloads of each cycle;
* :func:`plot_comparison`: one line per strategy — the load range (max − min), the standard
  deviation (from 0) and the cumulative unloads (the cost side) over the cycles.

The figures are built from plain series (:func:`simulation_series`, :func:`comparison_series`)
so what a plot shows is tested apart from the drawing. A plot is a PNG, or an SVG when the file
name ends in ``.svg`` (:func:`check_plot_path`).

matplotlib is an optional dependency (``pip install 'lbctl[plot]'``); without it, asking for a
plot is a one-line error.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lbctl.config import SETTINGS_BY_NAME
from lbctl.errors import LbctlError, UsageError
from lbctl.simulate.engine import SimulationResult

_MAX_LEGEND = 12
PLOT_SUFFIXES = (".png", ".svg")

THRESHOLD_KEY = "loadBalancerBrokerThresholdShedderPercentage"
OVERLOAD_KEY = "loadBalancerBrokerOverloadedThresholdPercentage"
TARGET_STD_KEY = "loadBalancerBrokerLoadTargetStd"


def check_plot_path(path: Path, flag: str = "--plot") -> None:
    """Refuse, before any work, a file name matplotlib would write in another format, and a
    name that is a symbolic link, a directory, a FIFO or a device
    (:func:`lbctl.safe.files.refuse_unwritable`, as ``snapshot export -f`` does): the plot is
    renamed over the name, which would replace a FIFO someone reads from (hostile19)."""
    from lbctl.safe.files import refuse_unwritable

    if path.suffix.lower() not in PLOT_SUFFIXES:
        raise UsageError(f"{flag} {path}: the file name must end in .png or .svg")
    refuse_unwritable(path, what="a plot file to write", error=LbctlError)


# --- the series ----------------------------------------------------------------------------------
Getter = Callable[[str], Any]


def threshold_line(shedding: str, setting: Getter, scores: Sequence[float]
                   ) -> tuple[str, float] | None:
    """Where the shedder starts shedding a broker, as a load fraction, with a legend label saying
    which rule it is; ``None`` for a shedder that compares no usage to a threshold
    (UniformLoadShedder compares message rates and throughput; AvgShedder the gap between the
    highest and lowest scores; lbctl's planner its own goals).

    ``scores`` are the figures the shedder averages (the smoothed scores of the cycle):

    * ``ThresholdShedder``: average smoothed usage + ``loadBalancerBrokerThresholdShedderPercentage``
      (``ThresholdShedder.findBundlesForUnloading``);
    * ``OverloadShedder``: ``loadBalancerBrokerOverloadedThresholdPercentage`` on the raw usage;
    * ``TransferShedder``: a broker is overloaded when its load is above both
      ``loadBalancerBrokerOverloadedThresholdPercentage`` and average +
      ``loadBalancerBrokerLoadTargetStd`` (``TransferShedder.isOverLoaded``), so the line is the
      larger of the two.
    """
    finite = [s for s in scores if math.isfinite(s)]
    if shedding == "ThresholdShedder":
        if not finite:
            return None
        pct = float(setting(THRESHOLD_KEY))
        return (f"shed at: average smoothed usage + {THRESHOLD_KEY} {pct:g}%",
                math.fsum(finite) / len(finite) + pct / 100.0)
    if shedding == "OverloadShedder":
        pct = float(setting(OVERLOAD_KEY))
        return f"shed at: overload threshold {OVERLOAD_KEY} {pct:g}%", pct / 100.0
    if shedding == "TransferShedder":
        if not finite:
            return None
        pct = int(setting(OVERLOAD_KEY))
        target = float(setting(TARGET_STD_KEY))
        avg = math.fsum(finite) / len(finite)
        return (f"overloaded above: max({OVERLOAD_KEY} {pct}%,\n    average load + "
                f"{TARGET_STD_KEY} {target:g})", max(pct / 100.0, avg + target))
    return None


def result_setting(result: SimulationResult) -> Getter:
    """A setting of the run: as it read it, else its declared default."""
    def get(key: str) -> Any:
        if key in result.settings:
            return result.settings[key]
        return SETTINGS_BY_NAME[key].default
    return get


@dataclass(frozen=True)
class SimulationSeries:
    """What :func:`plot_simulation` draws, in percent and minutes since the first cycle.

    ``load`` has one point more than ``minutes`` (the load after the last cycle, at ``end``);
    ``score`` holds the smoothed score per cycle (NaN where the shedder keeps none);
    ``threshold`` is NaN where the shedder compared nothing."""

    minutes: list[float]
    end: float
    load: dict[str, list[float]]
    score: dict[str, list[float]]
    threshold_label: str | None
    threshold: list[float]
    bundles: dict[str, list[int]]
    moves: list[int]


def _pct(x: float | None) -> float:
    return float("nan") if x is None else x * 100


def _minutes(result: SimulationResult) -> list[float]:
    return [(c.at - result.start) / 60_000 for c in result.cycles]


def simulation_series(result: SimulationResult) -> SimulationSeries:
    brokers = result.brokers()
    get = result_setting(result)
    label: str | None = None
    threshold: list[float] = []
    for c in result.cycles:
        line = threshold_line(result.shedding, get, [s for s in c.scores.values() if s is not None])
        if line is not None:
            label = line[0]
        threshold.append(float("nan") if line is None else line[1] * 100)
    has_score = any(s is not None for c in result.cycles for s in c.scores.values())
    return SimulationSeries(
        minutes=_minutes(result),
        end=float(len(result.cycles) * result.interval_minutes),
        load={b: [_pct(c.loads.get(b)) for c in result.cycles] + [_pct(result.final_loads.get(b))]
              for b in brokers},
        score={b: [_pct(c.scores.get(b)) for c in result.cycles] for b in brokers}
        if has_score else {},
        threshold_label=label,
        threshold=threshold,
        bundles={b: [c.bundles.get(b, 0) for c in result.cycles] for b in brokers},
        moves=[len(c.moves) for c in result.cycles],
    )


@dataclass(frozen=True)
class ComparisonSeries:
    """What :func:`plot_comparison` draws, per strategy label: range and std (percentage points)
    with the state after the last cycle appended, and the unloads made so far at each cycle."""

    minutes: dict[str, list[float]]
    range: dict[str, list[float]]
    std: dict[str, list[float]]
    cumulative_moves: dict[str, list[int]]


def comparison_series(results: Sequence[SimulationResult]) -> ComparisonSeries:
    minutes: dict[str, list[float]] = {}
    rng: dict[str, list[float]] = {}
    std: dict[str, list[float]] = {}
    moves: dict[str, list[int]] = {}
    for r in results:
        minutes[r.label] = [*_minutes(r), float(len(r.cycles) * r.interval_minutes)]
        rng[r.label] = [c.spread.range * 100 for c in r.cycles] + [r.final.range * 100]
        std[r.label] = [c.spread.std * 100 for c in r.cycles] + [r.final.std * 100]
        total, cum = 0, []
        for c in r.cycles:
            total += len(c.moves)
            cum.append(total)
        moves[r.label] = cum
    return ComparisonSeries(minutes, rng, std, moves)


# --- the drawing ---------------------------------------------------------------------------------
def new_figure(rows: int, height: float, ratios: Sequence[float] | None = None,
               width: float = 10) -> tuple[Any, list[Any]]:
    """A figure on the Agg canvas (no display, no pyplot state) with ``rows`` stacked axes."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise UsageError("--plot needs matplotlib: pip install 'lbctl[plot]'") from None
    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    if rows == 1:
        return fig, [fig.subplots()]
    ratios = list(ratios) if ratios is not None else [3] + [1] * (rows - 1)
    return fig, list(fig.subplots(rows, 1, sharex=True, gridspec_kw={"height_ratios": ratios}))


def integer_ticks(ax: Any) -> None:
    """Counts (bundles, moves) get whole-number ticks only."""
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def save(fig: Any, path: Path) -> None:
    """Write the figure as PNG, or SVG for a ``.svg`` name; an OS error is one line. The image is
    drawn in memory and written by :func:`lbctl.safe.files.atomic_write`: matplotlib opening the
    name itself would follow a link planted there, and a full disk would leave half a file."""
    import io

    from lbctl.safe.files import atomic_write

    fmt = "svg" if path.suffix.lower() == ".svg" else "png"
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt)
    mask = os.umask(0o022)
    os.umask(mask)
    atomic_write(str(path), buf.getvalue(), mode=0o666 & ~mask,
                 error=lambda m: LbctlError(m.replace(": cannot write:",
                                                      ": cannot write the plot:")))


def plot_simulation(result: SimulationResult, path: Path) -> None:
    s = simulation_series(result)
    fig, (ax, ax_bundles, ax_moves) = new_figure(3, 8.5, [3, 1.3, 1])
    xs = [*s.minutes, s.end]
    colours: dict[str, Any] = {}
    for broker, ys in s.load.items():
        (line,) = ax.plot(xs, ys, linewidth=1.2, label=f"{broker} usage")
        colours[broker] = line.get_color()
    for broker, ys in s.score.items():
        ax.plot(s.minutes, ys, linewidth=1.0, linestyle="--", color=colours[broker],
                label=f"{broker} smoothed score")
    if s.threshold_label is not None:
        ax.step(s.minutes, s.threshold, where="post", color="black", linestyle=":",
                linewidth=1.4, label=s.threshold_label)
    ax.set_ylabel("load (weighted max usage, %)")
    ax.set_title(f"{result.cluster}: {result.label}, {len(result.cycles)} cycles "
                 f"of {result.interval_minutes} min"
                 + ("" if s.score else " (this shedder keeps no smoothed score)"))
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    if len(s.load) <= _MAX_LEGEND:
        ax.legend(fontsize="x-small", loc="best")
    elif s.threshold_label is not None:
        ax.legend(handles=ax.get_lines()[-1:], fontsize="x-small", loc="best")
    for broker, counts in s.bundles.items():
        ax_bundles.step(s.minutes, counts, where="post", color=colours[broker], linewidth=1.0)
    ax_bundles.set_ylabel("bundles")
    ax_bundles.set_ylim(bottom=0)
    integer_ticks(ax_bundles)
    ax_bundles.grid(True, alpha=0.3)
    ax_moves.bar(s.minutes, s.moves, width=result.interval_minutes * 0.8, color="tab:red",
                 align="edge")
    ax_moves.set_ylabel("unloads")
    ax_moves.set_xlabel("minutes")
    integer_ticks(ax_moves)
    ax_moves.grid(True, alpha=0.3)
    save(fig, path)


def plot_comparison(results: Sequence[SimulationResult], path: Path) -> None:
    s = comparison_series(results)
    fig, (ax, ax_std, ax_moves) = new_figure(3, 8.5, [2, 1.3, 1.3])
    for label in s.range:
        xs = s.minutes[label]
        ax.plot(xs, s.range[label], linewidth=1.4, label=label)
        ax_std.plot(xs, s.std[label], linewidth=1.2, label=label)
        ax_moves.step(xs[:-1], s.cumulative_moves[label], where="post", linewidth=1.2, label=label)
    if results:
        band = results[0].band * 100
        ax.axhline(band, color="grey", linestyle="--", linewidth=0.8, label=f"band {band:g}")
        ax.set_title(f"{results[0].cluster}: load spread and unloads by strategy")
    ax.set_ylabel("max − min load (points)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="best")
    ax_std.set_ylabel("std (points)")
    ax_std.set_ylim(bottom=0)
    ax_std.grid(True, alpha=0.3)
    ax_moves.set_ylabel("unloads so far")
    ax_moves.set_xlabel("minutes")
    ax_moves.set_ylim(bottom=0)
    integer_ticks(ax_moves)
    ax_moves.grid(True, alpha=0.3)
    save(fig, path)


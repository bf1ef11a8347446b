"""PNG plots of simulations, drawn with matplotlib (imported here, lazily, on the Agg backend).

* :func:`plot_simulation`: each broker's load (weighted max resource usage, %) over the cycles,
  with the unloads of each cycle as bars underneath;
* :func:`plot_comparison`: one line per strategy — the load range (max − min) and standard
  deviation over the cycles.

matplotlib is an optional dependency (``pip install 'lbctl[plot]'``); without it, asking for a
plot is a one-line error.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lbctl.errors import LbctlError, UsageError
from lbctl.simulate.engine import SimulationResult

_MAX_LEGEND = 12


def _figure(rows: int, height: float) -> tuple[Any, Any, list[Any]]:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise UsageError("--plot needs matplotlib: pip install 'lbctl[plot]'") from None
    fig = Figure(figsize=(10, height), dpi=100, layout="constrained")
    canvas = FigureCanvasAgg(fig)
    ratios = [3] + [1] * (rows - 1)
    axes = list(fig.subplots(rows, 1, sharex=True, gridspec_kw={"height_ratios": ratios})) \
        if rows > 1 else [fig.subplots()]
    return fig, canvas, axes


def _save(canvas: Any, path: Path) -> None:
    try:
        canvas.print_png(str(path))
    except OSError as e:
        raise LbctlError(f"{path}: cannot write the plot ({e.strerror or e})") from None


def _minutes(result: SimulationResult) -> list[float]:
    return [(c.at - result.start) / 60_000 for c in result.cycles]


def plot_simulation(result: SimulationResult, path: Path) -> None:
    fig, canvas, (ax, ax_moves) = _figure(2, 6.5)
    xs = _minutes(result)
    end = len(result.cycles) * result.interval_minutes
    for broker in result.brokers():
        ys = [c.loads.get(broker, float("nan")) * 100 for c in result.cycles]
        ys.append(result.final_loads.get(broker, float("nan")) * 100)
        ax.plot([*xs, end], ys, linewidth=1.2, label=broker)
    ax.set_ylabel("load (weighted max usage, %)")
    ax.set_title(f"{result.cluster}: {result.label}, {len(result.cycles)} cycles "
                 f"of {result.interval_minutes} min")
    ax.grid(True, alpha=0.3)
    if len(result.brokers()) <= _MAX_LEGEND:
        ax.legend(fontsize="small", loc="best")
    ax_moves.bar(xs, [len(c.moves) for c in result.cycles], width=result.interval_minutes * 0.8,
                 color="tab:red", align="edge")
    ax_moves.set_ylabel("unloads")
    ax_moves.set_xlabel("minutes")
    ax_moves.grid(True, alpha=0.3)
    _save(canvas, path)


def plot_comparison(results: Sequence[SimulationResult], path: Path) -> None:
    fig, canvas, (ax, ax_std) = _figure(2, 6.5)
    for r in results:
        xs = _minutes(r)
        end = len(r.cycles) * r.interval_minutes
        ax.plot([*xs, end], [c.spread.range * 100 for c in r.cycles] + [r.final.range * 100],
                linewidth=1.4, label=r.label)
        ax_std.plot([*xs, end], [c.spread.std * 100 for c in r.cycles] + [r.final.std * 100],
                    linewidth=1.2, label=r.label)
    if results:
        band = results[0].band * 100
        ax.axhline(band, color="grey", linestyle="--", linewidth=0.8, label=f"band {band:g}")
        ax.set_title(f"{results[0].cluster}: load spread by strategy")
    ax.set_ylabel("max − min load (points)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="best")
    ax_std.set_ylabel("std (points)")
    ax_std.set_xlabel("minutes")
    ax_std.grid(True, alpha=0.3)
    _save(canvas, path)

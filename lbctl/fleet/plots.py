"""PNG plots of a fleet report: spread and churn over time per cluster, and churn per cluster.

Churn is normalised per bundle-sample (moves / bundle samples that have a previous one, as the
report's ``churn`` column), so a cluster with many bundles or many samples is not the worst only
for its size. Time axes carry month and year (matplotlib's concise date ticks). Plain pandas and
matplotlib: no Spark here.

matplotlib is imported here only, when a report is written, with the non-interactive Agg backend
(no display needed, nothing opens a window).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

PLOT_HINT = "pip install 'lbctl[plot]'"


def available() -> bool:
    """Whether matplotlib can be imported (checked before Spark starts: the ``fleet`` extra alone
    brings no matplotlib, and a report must not fail after its Spark work for want of it)."""
    import importlib.util

    try:
        return importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):
        return False


def preload() -> None:
    """matplotlib (Agg) imported ahead of drawing: the report does it while Spark starts."""
    _pyplot()


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        from lbctl.errors import UsageError

        raise UsageError(f"fleet report plots need matplotlib: {PLOT_HINT}") from None

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def write_plots(report: Any, out: Path,
                write: Callable[[Path, bytes], str] | None = None) -> list[str]:
    """The two PNG plots in ``out``; ``write(path, data)`` writes each one's bytes (the report
    writes every file whole, then renames it into place)."""
    return [spread_plot(report.samples, out / "spread.png", write),
            churn_plot(report.samples, out / "churn.png", write)]


def _save(fig: Any, path: Path, write: Callable[[Path, bytes], str] | None) -> str:
    if write is None:
        fig.savefig(path, dpi=100)
        return str(path)
    import io

    buf = io.BytesIO()
    fig.savefig(buf, dpi=100, format="png")
    return write(path, buf.getvalue())


def churn_series(samples: Any) -> Any:
    """Per cluster, worst churn first: moves and bounce-backs per bundle-sample that has a previous
    sample (``has_prev``), the denominators the report's ``churn`` uses; 0 without any."""
    g = samples.groupby("cluster", sort=True)[["moves", "bounces", "has_prev"]].sum()
    per = g["has_prev"].where(g["has_prev"] > 0)
    out = g.assign(moves_per_sample=(g["moves"] / per).fillna(0.0),
                   bounces_per_sample=(g["bounces"] / per).fillna(0.0)).reset_index()
    out["cluster"] = out["cluster"].astype(str)
    return out.sort_values(["moves_per_sample", "bounces_per_sample", "cluster"],
                           ascending=[False, False, True]).reset_index(drop=True)


def churn_over_time(samples: Any) -> Any:
    """Per sample: moves / bundle samples with a previous one (NaN for a cluster's first sample)."""
    s = samples[["cluster", "time", "moves", "has_prev"]].copy()
    s["churn"] = s["moves"] / s["has_prev"].where(s["has_prev"] > 0)
    return s


def _dates(ax: Any) -> None:
    import matplotlib.dates

    mdates: Any = matplotlib.dates  # untyped module
    locator = mdates.AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, show_offset=True))


def spread_plot(samples: Any, path: Path, write: Callable[[Path, bytes], str] | None = None) -> str:
    """Coefficient of variation of broker throughput and message rate, and churn per bundle-sample,
    over time, per cluster."""
    plt = _pyplot()
    fig, axes = plt.subplots(3, 1, figsize=(10, 9), sharex=True)
    churn = churn_over_time(samples)
    for cluster, s in samples.groupby("cluster", sort=True):
        axes[0].plot(s["time"], s["tput_cv"], marker=".", label=str(cluster))
        axes[1].plot(s["time"], s["rate_cv"], marker=".", label=str(cluster))
        c = churn[churn["cluster"] == cluster]
        axes[2].plot(c["time"], c["churn"], marker=".", label=str(cluster))
    axes[0].set_ylabel("throughput cv (std / mean)")
    axes[1].set_ylabel("message rate cv (std / mean)")
    axes[2].set_ylabel("moves per bundle-sample")
    axes[2].set_xlabel("time (UTC)")
    axes[0].set_title("Broker load spread and churn per cluster")
    axes[0].legend(loc="upper left", fontsize="small", ncol=2)
    for ax in axes:
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    _dates(axes[2])
    fig.tight_layout()
    try:
        return _save(fig, path, write)
    finally:
        plt.close(fig)


def churn_plot(samples: Any, path: Path, write: Callable[[Path, bytes], str] | None = None) -> str:
    """Observed moves and bounce-backs per bundle-sample, per cluster, worst churn first."""
    plt = _pyplot()
    fig = churn_figure(samples)
    try:
        return _save(fig, path, write)
    finally:
        plt.close(fig)


def churn_figure(samples: Any) -> Any:
    """:func:`churn_plot`'s figure. Its title takes two lines: on one, at the 6-inch width of a
    report of three clusters, it ran past the figure's right edge ("…with a previou")."""
    plt = _pyplot()
    c = churn_series(samples)
    names = list(c["cluster"])
    x = range(len(names))
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(names) + 2), 4.5))
    ax.bar([i - 0.2 for i in x], c["moves_per_sample"], width=0.4,
           label="moves (unloads observed)")
    ax.bar([i + 0.2 for i in x], c["bounces_per_sample"], width=0.4, label="bounce-backs")
    ax.set_xticks(list(x))
    ax.set_xticklabels(names, rotation=30, ha="right")
    ax.set_ylabel("per bundle-sample")
    ax.set_title("Bundle ownership churn per cluster\n(per bundle-sample with a previous one)")
    ax.legend()
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    return fig

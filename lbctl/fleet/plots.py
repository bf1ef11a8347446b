"""PNG plots of a fleet report: spread over time per cluster, and churn per cluster.

matplotlib is imported here only, when a report is written, with the non-interactive Agg backend
(no display needed, nothing opens a window).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def write_plots(report: Any, out: Path) -> list[str]:
    return [spread_plot(report.samples, out / "spread.png"),
            churn_plot(report.clusters, out / "churn.png")]


def spread_plot(samples: Any, path: Path) -> str:
    """Coefficient of variation of broker throughput and message rate over time, per cluster."""
    plt = _pyplot()
    fig, axes = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    for cluster, s in samples.groupby("cluster", sort=True):
        axes[0].plot(s["time"], s["tput_cv"], marker=".", label=str(cluster))
        axes[1].plot(s["time"], s["rate_cv"], marker=".", label=str(cluster))
    axes[0].set_ylabel("throughput cv (std / mean)")
    axes[1].set_ylabel("message rate cv (std / mean)")
    axes[1].set_xlabel("time (UTC)")
    axes[0].set_title("Broker load spread per cluster")
    axes[0].legend(loc="upper left", fontsize="small", ncol=2)
    for ax in axes:
        ax.grid(True, alpha=0.3)
    fig.autofmt_xdate()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return str(path)


def churn_plot(clusters: Any, path: Path) -> str:
    """Observed moves and bounce-backs per cluster, worst churn first."""
    plt = _pyplot()
    c = clusters.sort_values(["churn_rank", "cluster"])
    names = [str(x) for x in c["cluster"]]
    x = range(len(names))
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(names) + 2), 4.5))
    ax.bar([i - 0.2 for i in x], c["moves"], width=0.4, label="moves (unloads observed)")
    ax.bar([i + 0.2 for i in x], c["bounces"], width=0.4, label="bounce-backs")
    ax.set_xticks(list(x))
    ax.set_xticklabels(names, rotation=30, ha="right")
    ax.set_ylabel("count")
    ax.set_title("Bundle ownership churn per cluster")
    ax.legend()
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return str(path)

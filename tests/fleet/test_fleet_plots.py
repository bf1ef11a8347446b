"""The fleet report's plots from a small per-sample table (pandas and matplotlib, no Spark)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.plot_checks import read_png

pd = pytest.importorskip("pandas")

from lbctl.fleet.plots import churn_over_time, churn_plot, churn_series, spread_plot  # noqa: E402


def _samples() -> object:
    """Two clusters: big (100 bundles, 10 moves over 2 later samples) and small (4 bundles, 2
    moves in 1 later sample): small churns more per bundle-sample though it moves fewer."""
    times = pd.to_datetime([1_735_689_600_000, 1_738_368_000_000, 1_740_787_200_000], unit="ms",
                           utc=True)  # 2025-01-01, 2025-02-01, 2025-03-01
    return pd.DataFrame({
        "cluster": ["big", "big", "big", "small", "small"],
        "time": [times[0], times[1], times[2], times[0], times[1]],
        "moves": [0, 4, 6, 0, 2],
        "bounces": [0, 0, 2, 0, 1],
        "has_prev": [0, 100, 100, 0, 4],
        "tput_cv": [0.5, 0.4, 0.3, 0.9, 0.2],
        "rate_cv": [0.4, 0.3, 0.2, 0.8, 0.1],
    })


def test_churn_is_per_bundle_sample_worst_first() -> None:
    c = churn_series(_samples())
    assert list(c["cluster"]) == ["small", "big"]
    assert list(c["moves_per_sample"]) == pytest.approx([0.5, 0.05])
    assert list(c["bounces_per_sample"]) == pytest.approx([0.25, 0.01])
    assert list(c["moves"]) == [2, 10]


def test_churn_over_time_has_no_figure_without_a_previous_sample() -> None:
    t = churn_over_time(_samples())
    assert math.isnan(t["churn"].iloc[0])
    assert list(t["churn"].iloc[1:3]) == pytest.approx([0.04, 0.06])
    assert t["churn"].iloc[4] == pytest.approx(0.5)


def test_a_cluster_without_later_samples_churns_zero() -> None:
    s = _samples()
    s = s[s["cluster"] == "small"].iloc[:1]
    c = churn_series(s)
    assert list(c["moves_per_sample"]) == [0.0]


def test_plots_are_drawn_with_dates(tmp_path: Path) -> None:
    read_png(Path(churn_plot(_samples(), tmp_path / "churn.png")))
    read_png(Path(spread_plot(_samples(), tmp_path / "spread.png")), min_height=800)


def test_time_axis_names_month_and_year() -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from lbctl.fleet.plots import _dates

    fig = Figure()
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    s = _samples()
    ax.plot(s["time"], s["tput_cv"])
    _dates(ax)
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels()] + [ax.xaxis.get_offset_text().get_text()]
    assert "Feb" in labels and any("2025" in x for x in labels)


@pytest.mark.parametrize("clusters", [1, 3, 12])
def test_the_churn_title_stays_inside_the_figure(clusters: int) -> None:
    """The one-line title ran past the right edge of the 6-inch figure of a 3-cluster report."""
    from lbctl.fleet.plots import _pyplot, churn_figure

    s = _samples()
    rows = [s.assign(cluster=s["cluster"] + f"-{i}") for i in range(clusters)]
    fig = churn_figure(pd.concat(rows)[lambda d: d["cluster"].str.startswith("small")]
                       if clusters == 1 else pd.concat(rows))
    try:
        fig.canvas.draw()
        box = fig.axes[0].title.get_window_extent(fig.canvas.get_renderer())
        assert box.x0 >= 0 and box.x1 <= fig.bbox.x1, (box, fig.bbox)
    finally:
        _pyplot().close(fig)

"""What the watcher shows: the status it publishes after each capture, as Prometheus metrics
(``/metrics``), a health answer (``/healthz``) and a small read-only HTML page (``/``).

The page is one HTML document with an inline SVG chart — no script, no stylesheet or font from
the internet — so it works on an air-gapped operations network and in a text-mode browser.
The metrics are lbctl's view, named ``lbctl_*``: each broker's usage as the load manager sees
it, the band, expected and observed unloads, active anomalies, balancedness and the capture lag.
"""

from __future__ import annotations

import html
import math
import re
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from lbctl.config import Settings
from lbctl.model.cluster import ClusterState, iso_time
from lbctl.watch.anomalies import Anomaly
from lbctl.watch.detect import band, usage_of

if TYPE_CHECKING:
    from lbctl.watch.loop import Watcher

#: the chart's span and resolution: 24 h in 5-minute buckets
SPAN_MS = 24 * 3_600_000
BUCKET_MS = 5 * 60_000


class UsageHistory:
    """Each broker's usage over the last 24 h, one point per 5-minute bucket (the last value in
    it): memory stays flat however long the watcher runs."""

    def __init__(self) -> None:
        self.points: deque[tuple[int, dict[str, float]]] = deque()

    def add(self, at: int, usage: Mapping[str, float]) -> None:
        bucket = at - at % BUCKET_MS
        if self.points and self.points[-1][0] == bucket:
            self.points[-1] = (bucket, dict(usage))
        else:
            self.points.append((bucket, dict(usage)))
        while self.points and at - self.points[0][0] > SPAN_MS:
            self.points.popleft()


class BrokerNow(Struct, frozen=True):
    broker: str
    usage: float
    bundles: int
    leader: bool


class Status(Struct, frozen=True):
    cluster: str
    captured_at: int
    brokers: tuple[BrokerNow, ...]
    band: tuple[float, float]
    active: tuple[Anomaly, ...]
    resolved: tuple[Anomaly, ...]
    captures: int
    errors: int
    expected_unloads: int
    observed_unloads: int
    chart: tuple[tuple[int, tuple[tuple[str, float], ...]], ...]
    plans: tuple[Mapping[str, Any], ...] = ()
    last_error: str | None = None
    #: shedding cycles followed, and how many the divergence checks wait for (None: never)
    followed: int = 0
    warm_up: int | None = 1
    #: moves not judged: the evidence incomplete (``unjudged-unload``), and during the warm-up
    unjudged_unloads: int = 0
    warmup_unloads: int = 0
    #: TransferShedder's hit count known to be the leader's (None: the strategy keeps none)
    hits_synced: bool | None = None


def pending_plans(history: Path) -> tuple[Mapping[str, Any], ...]:
    """The plans waiting for review, as the queue holds them now."""
    from lbctl.watch.plans import PlanQueue

    return tuple(m.to_dict() for m in PlanQueue(history).list() if m.status == "pending")


def build_status(w: Watcher, state: ClusterState, settings: Settings) -> Status:
    usages = usage_of(state, settings)
    pending = pending_plans(w.opts.history)
    return Status(
        cluster=state.cluster, captured_at=state.captured_at,
        brokers=tuple(BrokerNow(b, usages.get(b, 0.0), len(d.bundles), b == w.leader)
                      for b, d in sorted(state.brokers.items())),
        band=band(usages, settings), active=tuple(w.tracker.active()),
        resolved=tuple(w.tracker.resolved[:10]), captures=w.captures, errors=w.errors,
        expected_unloads=w.checker.expected_total, observed_unloads=w.checker.observed_total,
        chart=tuple((t, tuple(sorted(u.items()))) for t, u in w.usage.points), plans=pending,
        last_error=w.last_error, followed=w.followed, warm_up=w.warm_up,
        unjudged_unloads=w.checker.unjudged_total, warmup_unloads=w.checker.warmup_total,
        hits_synced=w.hits_synced)


def warm_up_left(s: Status) -> int | None:
    """Shedding cycles before the divergence checks start (0 once they have; None: never); at
    least one while TransferShedder's hit count is not known to be the leader's."""
    if s.warm_up is None:
        return None
    return max(0 if s.hits_synced is not False else 1, s.warm_up - s.followed)


def divergence_note(s: Status) -> str:
    """Whether the leader is checked yet: divergence checks start once lbctl's memory has warmed
    (:func:`lbctl.watch.divergence.warm_up`); empty once they have."""
    if s.warm_up is None:
        return ("divergence checks off: loadBalancerHistoryResourcePercentage ≥ 1 keeps the "
                "leader's usage average at what it saw before the watcher")
    if s.followed >= s.warm_up:
        if s.hits_synced is False:
            return ("divergence checks start once TransferShedder's hit count is known to be the "
                    "leader's (a cycle without a hit, or the leader's transfers seen)")
        return ""
    return (f"divergence checks start after {s.warm_up} shedding cycles "
            f"({s.followed} followed so far)")


# --- /metrics ---------------------------------------------------------------------------------
#: every metric /metrics writes: name → (type, help). The Grafana dashboard names only these.
METRICS = {
    "lbctl_broker_usage_ratio": ("gauge", "A broker's weighted max resource usage as the load "
                                          "manager sees it (lbctl's view), 0-1."),
    "lbctl_broker_bundles": ("gauge", "Bundles a broker owns, per its load report."),
    "lbctl_broker_leader": ("gauge", "1 for the leader broker."),
    "lbctl_band_low_ratio": ("gauge", "The band's bottom: average minus "
                                      "loadBalancerBrokerThresholdShedderPercentage."),
    "lbctl_band_high_ratio": ("gauge", "The band's top."),
    "lbctl_usage_stddev_ratio": ("gauge", "Balancedness: the standard deviation of brokers' usage."),
    "lbctl_expected_unloads_total": ("counter", "Unloads lbctl's load manager expected of the "
                                                "leader."),
    "lbctl_observed_unloads_total": ("counter", "Ownership changes seen between captures."),
    "lbctl_unjudged_unloads_total": ("counter", "Ownership changes lbctl could not judge: no "
                                                "capture holds the state the leader decided on "
                                                "(unjudged-unload)."),
    "lbctl_warmup_unloads_total": ("counter", "Ownership changes seen while lbctl's memory "
                                              "warmed up that it did not foresee: not judged."),
    "lbctl_anomalies_active": ("gauge", "Active anomalies by kind and severity."),
    "lbctl_captures_total": ("counter", "Captures of the cluster appended to the history."),
    "lbctl_capture_errors_total": ("counter", "Captures that failed."),
    "lbctl_capture_lag_seconds": ("gauge", "Seconds since the last capture (watcher's clock)."),
    "lbctl_plans_pending": ("gauge", "Healing plans waiting for review."),
    "lbctl_divergence_warmup_cycles_remaining": (
        "gauge", "Shedding cycles lbctl still follows the leader before divergence checks "
                 "start (0: checking; +Inf: never, loadBalancerHistoryResourcePercentage >= 1)."),
}


def _lv(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def metrics_text(s: Status | None, now_ms: int, counters: tuple[int, int] | None = None) -> str:
    """The Prometheus text exposition (version 0.0.4) of ``s``; ``counters`` (captures,
    errors), when given, are the watcher's own at this moment, written even before any capture
    succeeded — an outage must show in ``lbctl_capture_errors_total`` while it lasts, not after."""
    rows: dict[str, list[str]] = {k: [] for k in METRICS}
    if counters is not None:
        rows["lbctl_captures_total"].append(f" {counters[0]}")
        rows["lbctl_capture_errors_total"].append(f" {counters[1]}")
    if s is not None:
        for b in s.brokers:
            lab = f'{{broker="{_lv(b.broker)}"}}'
            rows["lbctl_broker_usage_ratio"].append(f"{lab} {b.usage:.6g}")
            rows["lbctl_broker_bundles"].append(f"{lab} {b.bundles}")
            rows["lbctl_broker_leader"].append(f"{lab} {int(b.leader)}")
        rows["lbctl_band_low_ratio"].append(f" {s.band[0]:.6g}")
        rows["lbctl_band_high_ratio"].append(f" {s.band[1]:.6g}")
        u = [b.usage for b in s.brokers]
        mean = sum(u) / len(u) if u else 0.0
        sd = math.sqrt(sum((x - mean) ** 2 for x in u) / len(u)) if u else 0.0
        rows["lbctl_usage_stddev_ratio"].append(f" {sd:.6g}")
        rows["lbctl_expected_unloads_total"].append(f" {s.expected_unloads}")
        rows["lbctl_observed_unloads_total"].append(f" {s.observed_unloads}")
        rows["lbctl_unjudged_unloads_total"].append(f" {s.unjudged_unloads}")
        rows["lbctl_warmup_unloads_total"].append(f" {s.warmup_unloads}")
        counts: dict[tuple[str, str], int] = {}
        for a in s.active:
            counts[(a.kind, a.severity)] = counts.get((a.kind, a.severity), 0) + 1
        for (kind, sev), n in sorted(counts.items()):
            rows["lbctl_anomalies_active"].append(
                f'{{kind="{_lv(kind)}",severity="{sev}"}} {n}')
        if counters is None:
            rows["lbctl_captures_total"].append(f" {s.captures}")
            rows["lbctl_capture_errors_total"].append(f" {s.errors}")
        rows["lbctl_capture_lag_seconds"].append(f" {max(0.0, (now_ms - s.captured_at) / 1000):.3f}")
        rows["lbctl_plans_pending"].append(f" {len(s.plans)}")
        left = warm_up_left(s)
        rows["lbctl_divergence_warmup_cycles_remaining"].append(
            " +Inf" if left is None else f" {left}")
    out: list[str] = []
    for name, (kind, text) in METRICS.items():
        out.append(f"# HELP {name} {text}")
        out.append(f"# TYPE {name} {kind}")
        out += [f"{name}{r}" for r in rows[name]]
    return "\n".join(out) + "\n"


# --- the status page ---------------------------------------------------------------------------
_W, _H, _PAD = 720, 220, 30
_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
            "#7f7f7f", "#bcbd22", "#17becf")


def chart_svg(chart: Sequence[tuple[int, Sequence[tuple[str, float]]]]) -> str:
    """Each broker's usage over the last 24 h as polylines (0–100 %+ on the y axis)."""
    if not chart:
        return "<p>No usage recorded yet.</p>"
    t0, t1 = chart[0][0], max(chart[-1][0], chart[0][0] + BUCKET_MS)
    top = max(1.0, max((u for _t, us in chart for _b, u in us), default=1.0))
    brokers = sorted({b for _t, us in chart for b, _u in us})

    def x(t: int) -> float:
        return _PAD + (t - t0) / (t1 - t0) * (_W - 2 * _PAD)

    def y(u: float) -> float:
        return _H - _PAD - u / top * (_H - 2 * _PAD)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
             f'role="img" aria-label="usage per broker, last 24 h">',
             f'<rect x="0" y="0" width="{_W}" height="{_H}" fill="#fff"/>',
             f'<line x1="{_PAD}" y1="{y(0):.1f}" x2="{_W - _PAD}" y2="{y(0):.1f}" stroke="#999"/>',
             f'<text x="2" y="{y(top) + 4:.1f}" font-size="10">{top * 100:.0f}%</text>',
             f'<text x="2" y="{y(0):.1f}" font-size="10">0%</text>']
    for i, b in enumerate(brokers):
        pts = [(x(t), y(dict(us)[b])) for t, us in chart if b in dict(us)]
        colour = _COLOURS[i % len(_COLOURS)]
        if len(pts) == 1:
            parts.append(f'<circle cx="{pts[0][0]:.1f}" cy="{pts[0][1]:.1f}" r="3" '
                         f'fill="{colour}"><title>{html.escape(b)}</title></circle>')
        else:
            d = " ".join(f"{px:.1f},{py:.1f}" for px, py in pts)
            parts.append(f'<polyline class="usage" fill="none" stroke="{colour}" stroke-width="2" '
                         f'points="{d}"><title>{html.escape(b)}</title></polyline>')
    parts.append("</svg>")
    legend = " ".join(f'<span style="color:{_COLOURS[i % len(_COLOURS)]}">&#9632; '
                      f'{html.escape(b)}</span>' for i, b in enumerate(brokers))
    return "".join(parts) + f'<p class="legend">{legend}</p>'


def _ids(subject: str) -> str:
    """An anomaly's subject as code, each comma-separated name whole (``doctor:…`` rules name
    several settings): the line may break after a comma, never inside a name. As one unbreakable
    ``<code>``, two setting names took 430 px and pushed the anomalies table past a 1200 px
    window."""
    return ",<wbr>".join(f"<code>{html.escape(x)}</code>" for x in subject.split(","))


def _kind(kind: str) -> str:
    """An anomaly's kind, each ``:``-part whole (``doctor:`` / ``distribute-evenly``, never
    ``distribute-`` / ``evenly``)."""
    parts = html.escape(kind).split(":")
    return ":<wbr>".join(f'<span class="w">{p}</span>' for p in parts)


def _when(ms: int) -> str:
    """A time, free to break between its date and its time only (at its hyphens, the column
    was as wide as the whole time, or cut into ``2026-11-`` / ``28T…``)."""
    day, _, clock = iso_time(ms).partition("T")
    return f'<span class="w">{html.escape(day)}</span><wbr><span class="w">T{html.escape(clock)}</span>'


def _prose(message: str) -> str:
    """An anomaly's message, free to break after ``=`` and after a package's dots
    (``key=org.apache.pulsar.broker.loadbalance.impl.Class`` is one 90-character word else, and
    held the What column at 700 px); ``<wbr>`` adds no character, so a copied name stays whole."""
    return re.sub(r"(=|\.(?=[A-Z]|[a-z0-9_]+\.))", r"\1<wbr>", html.escape(message))


def page_html(s: Status | None, health: tuple[bool, str] | None = None) -> str:
    """The status page; ``health`` (``/healthz``'s answer) heads it, so a page showing the last
    good capture says plainly when the watcher can no longer read the cluster."""
    e = html.escape
    head = ""
    if health is not None:
        ok, why = health
        head = (f'<p id="health" class="{"ok" if ok else "failing"}">Watcher: '
                f"{'' if ok else 'NOT OK — '}{e(why)}"
                + ("" if ok or s is None else " — the figures below are from the last good "
                   "capture") + "</p>")
    if s is None:
        body = "<p>No capture yet.</p>"
        title = "lbctl watch"
    else:
        title = f"lbctl watch — {s.cluster}"
        lo, hi = s.band
        rows = "".join(
            f"<tr><td><code>{e(b.broker)}</code>{' (leader)' if b.leader else ''}</td>"
            f'<td class="num">{b.usage * 100:.1f} %</td><td class="num">{b.bundles}</td>'
            f"<td>{'above' if b.usage > hi else 'below' if b.usage < lo else 'in band'}</td></tr>"
            for b in s.brokers)
        anomalies = "".join(
            f'<tr class="{e(a.severity)}"><td>{e(a.severity)}</td><td>{_kind(a.kind)}</td>'
            f"<td>{_ids(a.subject)}</td><td>{_prose(a.message)}</td>"
            f"<td>{_when(a.first_seen)}</td></tr>"
            for a in s.active) \
            or '<tr><td colspan="5">None.</td></tr>'
        plans = "".join(
            f"<tr><td><code>{e(str(p['id']))}</code></td><td>{e(str(p.get('anomaly') or ''))}</td>"
            f"<td class=\"num\">{p.get('actions', 0)}</td><td>lbctl plans approve {e(str(p['id']))}"
            f"</td></tr>" for p in s.plans) or '<tr><td colspan="4">None.</td></tr>'
        body = (f"<p>Captured {e(iso_time(s.captured_at))} · {s.captures} capture(s) · "
                f"band {lo * 100:.0f}–{hi * 100:.0f} % · expected unloads {s.expected_unloads}, "
                f"observed {s.observed_unloads} (not judged: {s.unjudged_unloads} on "
                f"incomplete evidence, {s.warmup_unloads} during the warm-up)"
                + (f' · <span id="warm-up">{e(note)}</span>' if (note := divergence_note(s))
                   else "") + "</p>"
                f'<h2>Brokers</h2><table id="brokers"><tr><th>Broker</th><th>Usage</th>'
                f"<th>Bundles</th><th>Band</th></tr>{rows}</table>"
                f'<h2>Active anomalies</h2><table id="anomalies"><tr><th>Severity</th>'
                f"<th>Kind</th><th>Subject</th><th>What</th><th>Since</th></tr>{anomalies}</table>"
                f'<h2>Usage, last 24 h</h2><div id="chart">{chart_svg(s.chart)}</div>'
                f'<h2>Plans waiting for review</h2><table id="plans"><tr><th>Plan</th>'
                f"<th>Anomaly</th><th>Actions</th><th>To approve</th></tr>{plans}</table>")
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta http-equiv="refresh" content="30">'
            f"<title>{e(title)}</title><style>body{{font-family:sans-serif;margin:1.5em}}"
            "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;"
            "text-align:left}td.num{text-align:right}tr.critical td{background:#fdd}"
            "tr.warning td{background:#ffd}code,.w{white-space:nowrap}"
            "p.failing{background:#fdd;border:1px solid #c00;padding:.4em;font-weight:bold}"
            f"</style></head><body><h1>{e(title)}</h1>{head}{body}</body></html>")

"""``lbctl watch --status``: what a watcher recorded, read from its history directory (so it
works from any shell on the host, while the watcher runs or after), and who holds the apply lock."""

from __future__ import annotations

from pathlib import Path

from lbctl.model.cluster import ClusterState, iso_time
from lbctl.safe.text import one_line
from lbctl.watch.anomalies import ANOMALY_FILE, Tracker
from lbctl.watch.history import History
from lbctl.watch.plans import PlanQueue


def status_lines(directory: Path) -> list[str]:
    from lbctl.errors import UsageError

    if not directory.is_dir():
        raise UsageError(f"{directory}: no watcher history here; give --history the DIR the "
                         "watcher was started with (lbctl watch --history DIR)")
    h = History(directory)
    files = h.files()
    out = [f"history: {directory} — {len(files)} file(s), "
           f"{sum(f.stat().st_size for f in files)} bytes"]
    last = h.recent(1)
    if last:
        s = last[-1]
        out.append(f"last capture: {s.captured_at_iso}, cluster {s.cluster}, "
                   f"{len(s.brokers)} broker(s), {s.bundle_count()} bundle(s)")
        out.append(_ownership_note(h, s))
        note = _warm_up_note(directory)
        if note:
            out.append(note)
    t = Tracker()
    t.load(directory / ANOMALY_FILE)
    active = t.active()
    out.append(f"active anomalies: {len(active)}")
    out += [one_line(f"  {a.severity:<8} {a.kind} {a.subject} — {a.message} "
                     f"(since {iso_time(a.first_seen)})") for a in active]
    plans = [m for m in PlanQueue(directory).list() if m.status in ("pending", "approved")]
    out.append(f"plans waiting: {len(plans)}")
    out += [one_line(f"  {m.id} {m.status} ({m.actions} action(s), {m.source}) for {m.anomaly}")
            for m in plans]  # a plan record's fields, from a file: escaped as the anomalies are
    from lbctl.watch.executor_state import status_lines as executor

    out += executor()
    return out


def _ownership_note(h: History, last: ClusterState) -> str:
    """How the watcher read who owns each bundle at its last capture (``--ownership``), from
    the capture's record beside the history."""
    rec = h.seen([last]).get(last.captured_at)
    if rec is None:
        return "ownership: not recorded for the last capture (a watcher before --ownership)"
    if rec.ownership == "reports":
        return ("ownership: from the load reports (--ownership reports): a move shows once both "
                "brokers rewrite theirs, up to loadBalancerReportUpdateMaxIntervalMinutes later")
    if not rec.read:
        return ("ownership: from the load reports at the last capture — no broker answered "
                "ownedNamespaces (--ownership admin; the watcher warned why)")
    return "ownership: each broker's ownedNamespaces (--ownership admin)"


def _warm_up_note(directory: Path) -> str:
    """Whether a watcher started on this history checks the leader yet: the cycles its history
    spans, replayed as a restarted watcher replays them (:class:`lbctl.watch.loop.Watcher`), so
    the line says what the running watcher's page says (empty once the checks are on)."""
    from lbctl.errors import LbctlError
    from lbctl.loadmanager.select import Options
    from lbctl.watch.loop import Watcher, WatchOptions
    from lbctl.watch.status import divergence_note

    try:
        w = Watcher(None, WatchOptions(directory, doctor=False), Options())
    except LbctlError as e:  # the rest of the status is still worth showing
        return one_line(f"divergence checks: unknown ({e})")
    return "" if w.status is None else divergence_note(w.status)

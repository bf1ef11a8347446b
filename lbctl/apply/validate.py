"""Re-validation of a plan against the live cluster, action by action, before anything is sent.

A plan describes the cluster at ``capturedAt``; by the time it is applied bundles may have split,
moved or gone, brokers may have left or turned overloaded. Each action gets a :class:`Verdict`:

* ``valid`` — it will be sent;
* ``changed`` — the bundle still exists but the action no longer fits: its owner is not the plan's
  source (moved since; already on the destination), the destination is not an active broker, is
  overloaded now (``loadBalancerBrokerOverloadedThresholdPercentage``), runs another load-manager
  class than the cluster, the bundle was unloaded within the grace period
  (``loadBalancerSheddingGracePeriodMinutes``: by the journal, the snapshot's recently unloaded
  bundles, or the owner's ``lastBundleGains``), or a split's boundaries cannot be sent as
  planned;
* ``gone`` — the bundle's range is no longer one of its namespace's bundles (split or merged
  since), or the namespace is gone;
* ``skipped`` — the plan itself marks it ``skipped`` (the load manager would not carry it out).

Only ``valid`` actions are sent. ``--force`` lets the grace-period check pass (and the executor's
repeated-request guard); nothing lets a ``gone`` or moved bundle through.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lbctl.apply.live import LiveView
from lbctl.apply.planfile import PlannedAction
from lbctl.units import pct

if TYPE_CHECKING:
    from lbctl.config import Settings
    from lbctl.model.cluster import ClusterState

VALID, CHANGED, GONE, SKIPPED = "valid", "changed", "gone", "skipped"
SPECIFIED = "specified_positions_divide"


@dataclass(frozen=True)
class Verdict:
    action: PlannedAction
    status: str
    why: str = ""
    owner: str | None = None  # the live owner, when known


def validate(actions: Sequence[PlannedAction], live: LiveView, *,
             recent_unloads: Mapping[str, float] | None = None, now: float = 0.0,
             force: bool = False, exempt_grace: bool = False,
             rollback: bool = False) -> list[Verdict]:
    """One verdict per action, in plan order. ``recent_unloads``: bundle → when the journal last
    shows an unload of it (epoch seconds). ``exempt_grace`` lifts the grace period: for a
    rollback (it returns bundles a run moved moments ago) and a drain (it must empty the broker
    whatever moved recently) — on purpose, as an operator's unload is. A ``rollback`` returns
    bundles to their original owners even when one is overloaded now (said, not refused):
    restoring the earlier state is the point. Both are the caller's word, from the operator's
    flags (``apply --rollback``, ``drain``), never a plan file's own fields: a file that calls
    itself a rollback is checked like any other."""
    recent = dict(recent_unloads or {})
    grace_s = float(live.settings["loadBalancerSheddingGracePeriodMinutes"]) * 60
    out = []
    for a in actions:
        v = _one(a, live, rollback=rollback)
        if v.status == VALID and a.is_move and not force and not exempt_grace:
            why = _in_grace(a, live, recent, now, grace_s)
            if why:
                v = Verdict(a, CHANGED, why + " (--force sends it anyway)", v.owner)
        out.append(v)
    return out


def _one(a: PlannedAction, live: LiveView, *, rollback: bool = False) -> Verdict:
    if a.skipped is not None:
        return Verdict(a, SKIPPED, f"the plan skips it: {a.skipped}")
    ranges = live.ranges(a.namespace)
    owner = live.owners.get(a.bundle)
    if ranges is None:
        return Verdict(a, GONE, f"namespace {a.namespace} not found")
    lo, hi = (int(x, 16) for x in a.range.split("_"))
    if (lo, hi) not in ranges:
        inside = [r for r in ranges if lo <= r[0] and r[1] <= hi]
        if len(inside) > 1:
            why = f"split since into {len(inside)} bundles"
        elif any(r[0] <= lo and hi <= r[1] for r in ranges):
            why = "merged into a larger bundle since"
        else:
            why = "no longer one of the namespace's bundles"
        return Verdict(a, GONE, why)
    if a.action == "split":
        return _split(a, live, owner)
    if owner is None:
        return Verdict(a, CHANGED, "no broker reports it now (being unloaded, or its owner did "
                                   "not answer)")
    if a.destination is not None and owner == a.destination:
        return Verdict(a, CHANGED, f"already owned by the destination {owner}", owner)
    if owner != a.broker:
        return Verdict(a, CHANGED, f"owned by {owner} now, not {a.broker}", owner)
    if a.destination is not None:
        d = a.destination
        if d not in live.brokers:
            return Verdict(a, CHANGED, f"destination {d} is not an active broker", owner)
        u = live.usage.get(d)
        if u is not None and u >= live.overload_threshold:
            why = (f"destination {d} is overloaded now ({pct(u)} >= "
                   f"{pct(live.overload_threshold, 0)}{live.threshold_note})")
            if rollback:
                return Verdict(a, VALID, why + "; a rollback returns the bundle anyway", owner)
            return Verdict(a, CHANGED, why, owner)
        cls = live.broker_class.get(d)
        if cls and live.load_manager_class and cls != live.load_manager_class:
            return Verdict(a, CHANGED, f"destination {d} runs {cls.rsplit('.', 1)[-1]}, not the "
                                       f"cluster's {live.load_manager_class.rsplit('.', 1)[-1]}",
                           owner)
    return Verdict(a, VALID, "", owner)


def _split(a: PlannedAction, live: LiveView, owner: str | None) -> Verdict:
    if a.broker and owner is not None and owner != a.broker:
        # a split is served by whichever broker owns the bundle: the change is worth saying only
        return Verdict(a, VALID, f"owned by {owner} now, not {a.broker}", owner)
    supported = live.settings["supportedNamespaceBundleSplitAlgorithms"]
    if supported and SPECIFIED not in supported:
        return Verdict(a, CHANGED, f"the cluster does not accept {SPECIFIED} "
                                   "(supportedNamespaceBundleSplitAlgorithms), so the planned "
                                   "boundaries cannot be sent", owner)
    return Verdict(a, VALID, "", owner)


def _in_grace(a: PlannedAction, live: LiveView, recent: Mapping[str, float], now: float,
              grace_s: float) -> str:
    if grace_s <= 0:
        return ""
    when = recent.get(a.bundle)
    if when is not None and now - when < grace_s:
        return (f"unloaded {max(0.0, now - when) / 60:.0f} min ago according to the journal, "
                f"within the {grace_s / 60:g}-minute grace period")
    ts = live.state.recently_unloaded.get(a.bundle)
    if ts is not None and live.state.captured_at - ts < grace_s * 1000:
        return "unloaded recently (the leader's recently unloaded bundles), within the grace period"
    owner = live.owners.get(a.bundle)
    if owner is not None and a.bundle in live.gains.get(owner, frozenset()):
        return (f"{owner} gained it since its previous load report (moved moments ago), within "
                "the grace period")
    return ""


def refused_in_grace(state: ClusterState, settings: Settings, recent: Mapping[str, float],
                     now: float) -> set[str]:
    """The bundles of ``state`` that :func:`_in_grace` would refuse at ``now`` (epoch seconds),
    from its three sources: the journal's unloads (``recent``), the leader's recently unloaded
    bundles, and the bundles each owner gained since its previous load report. A plan made for
    ``apply`` (``propose`` on the live cluster) leaves them where they are: planned anyway, they
    would be skipped and the plan would land short of its goals."""
    from lbctl.loadmanager.drain import in_grace

    if float(settings["loadBalancerSheddingGracePeriodMinutes"]) <= 0:
        return set()
    held = in_grace(state, settings, recent, now)
    held.update(b for r in state.brokers.values() for b in r.lastBundleGains)
    return held


def counts(verdicts: Sequence[Verdict]) -> dict[str, int]:
    out = {VALID: 0, CHANGED: 0, GONE: 0, SKIPPED: 0}
    for v in verdicts:
        out[v.status] += 1
    return out

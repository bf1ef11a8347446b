"""Bundles no move can place: a split proposal, or a single hot topic only partitioning can fix.

When a plan still leaves the band, the brokers above it are looked at: a bundle whose load alone
lifts even the best broker that may take it (or keep it) more than the band's width above the
least loaded broker cannot be placed by moving it anywhere. Such a bundle is proposed for a split
with exactly what ``lbctl split-bundle`` computes (:func:`lbctl.loadmanager.split_preview.preview`:
the cluster's ``defaultNamespaceBundleSplitAlgorithm``, its boundaries and children), so an
executor can send the same split; a bundle of one topic (or one the preview cannot cut) is
reported as a hot topic: splitting cannot divide a topic, partitioning it can.
"""

from __future__ import annotations

from dataclasses import dataclass

from lbctl.config import Settings
from lbctl.errors import LbctlError
from lbctl.loadmanager.split_preview import SplitRequest, preview
from lbctl.model.bundle import BundleName, BundleNameError, format_position
from lbctl.model.cluster import ClusterState
from lbctl.plan import Action
from lbctl.planner.assignment import EPS, Assignment
from lbctl.units import rounded

_PER_BROKER = 3  # largest bundles looked at per broker above the band
_BROKERS = 20  # brokers above the band looked at, most loaded first


@dataclass(frozen=True, slots=True)
class HotTopic:
    bundle: str
    broker: str
    topics: int
    load: float  # the bundle's share of its broker's usage (fraction)
    why: str


@dataclass(frozen=True, slots=True)
class SplitFinding:
    actions: tuple[Action, ...]
    hot: tuple[HotTopic, ...]
    notes: tuple[str, ...]


def find_splits(state: ClusterState, settings: Settings, a: Assignment,
                width: float) -> SplitFinding:
    """Split proposals for bundles too big for the band after the plan ``a``.

    A bundle the plan moves is not proposed for a split in the same plan (a note says to split it
    where it lands): a plan acts on a bundle once, which is what ``lbctl apply`` carries out."""
    view = a.view
    lowest = min(a.u)
    top = lowest + width
    actions: list[Action] = []
    hot: list[HotTopic] = []
    notes: list[str] = []
    seen: set[int] = set()
    n = len(view.brokers)
    above = [j for j in sorted(range(n), key=lambda j: -a.u[j]) if a.u[j] > top + EPS]
    above = above[:_BROKERS]
    by_owner: dict[int, list[int]] = {j: [] for j in above}
    for i, o in enumerate(a.owner):
        if o in by_owner:
            by_owner[o].append(i)
    for j in above:
        mine = by_owner[j]
        mine.sort(key=lambda i: -(a.u[j] - a.usage_if(j, i, -1.0)))
        for i in mine[:_PER_BROKER]:
            if i in seen:
                continue
            share = a.u[j] - a.usage_if(j, i, -1.0)
            if not _too_big(a, i, j, lowest, width):
                continue
            seen.add(i)
            name = view.bundles[i]
            topics = view.topics[i]
            if a.owner[i] != view.owner[i]:
                # the plan moves it: a split now would act on the bundle twice (apply carries out
                # each bundle's action once); it is split where it lands, once it reports there
                notes.append(f"{name} carries {share:.1%} of {view.brokers[j]}, where this plan "
                             f"moves it: more than the {width * 100:.4g}-point band; split it "
                             "there once the moves are done (re-run propose)")
                continue
            if topics == 1:
                hot.append(HotTopic(name, view.brokers[j], topics, share,
                                    f"one topic carrying {share:.1%} of {view.brokers[j]}, more "
                                    f"than the {width * 100:.4g}-point band: a split cannot divide "
                                    "a topic; partition it"))
                continue
            action, why = _split_action(state, settings, name, view.brokers[j],
                                        view.msg_rate[i], view.throughput[i], share, width)
            if action is not None:
                actions.append(action)
            else:
                hot.append(HotTopic(name, view.brokers[j], topics, share,
                                    f"carries {share:.1%} of {view.brokers[j]} and cannot be "
                                    f"split here: {why}"))
    return SplitFinding(tuple(actions), tuple(hot), tuple(notes))


def _too_big(a: Assignment, i: int, owner: int, lowest: float, width: float) -> bool:
    """Whether no broker (the owner included) can hold ``i`` within ``width`` of ``lowest``."""
    view = a.view
    if a.usage_if(owner, i, -1.0) + EPS >= a.u[owner]:
        return False  # it adds nothing where it is
    limit = lowest + width + EPS
    if a.u[owner] <= limit:
        return False
    for d in range(len(view.brokers)):
        if d == owner or a.refuses(i, d) is not None:
            continue
        if a.usage_if(d, i, 1.0) <= limit:
            return False
    return True


def _split_action(state: ClusterState, settings: Settings, bundle: str, broker: str,
                  rate: float, tp: float, share: float,
                  width: float) -> tuple[Action | None, str]:
    try:
        name = BundleName.parse(bundle)
    except BundleNameError as e:
        return None, str(e)
    try:
        pv = preview(state, settings, SplitRequest(name.namespace, bundle=str(name.range)))
    except LbctlError as e:
        return None, str(e)
    detail = (f"carries {share:.1%} of {broker}: more than the {width * 100:.4g}-point band, so "
              "no broker can hold it inside the band; re-run propose after the split")
    return Action(
        action="split", bundle=bundle, broker=broker, reason="Admin",
        msgRate=rounded(rate), throughput=rounded(tp), algorithm=pv.algorithm,
        boundaries=tuple(format_position(b) for b in pv.boundaries),
        children=tuple(c.bundle for c in pv.children), unload=False, detail=detail,
    ), ""

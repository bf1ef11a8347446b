"""One cluster's recorded history replayed through a strategy: the per-group work of `whatif`.

Pure Python, no Spark: :func:`replay_history` takes the cluster's snapshots in time order and
calls :func:`lbctl.loadmanager.select.plans` — the very path ``lbctl recommend --all-cycles`` takes — so the
strategies' memory (ThresholdShedder's history, AvgShedder's hit counters, bundles' time averages,
the grace period of unloaded bundles) carries from cycle to cycle exactly as it does there.

Counted per strategy:

* ``unloads``: unload actions the load manager would have carried out (not skipped), summed over
  the cycles — the sum of ``summary.unloads`` in ``recommend --all-cycles -o json``;
* ``moved_soon_after``: those of them whose bundle the recorded history shows changing owner
  within the ``window`` samples after the recommendation (the unload would have hit a bundle
  that moved again soon after);
* ``repeats``: those of them whose bundle the same strategy recommends unloading again within the
  next ``window`` cycles (the strategy ping-pongs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lbctl.loadmanager.select import Options, plans
from lbctl.model.cluster import ClusterState


@dataclass(frozen=True)
class ReplayCount:
    strategy: str
    placement: str
    cycles: int
    unloads: int
    moved_soon_after: int
    repeats: int


def observed_moves(states: Sequence[ClusterState]) -> dict[str, list[int]]:
    """Bundle → indices of the samples at which its owner differs from its previous sample's."""
    moves: dict[str, list[int]] = {}
    last: dict[str, str] = {}
    for i, st in enumerate(states):
        for bundle, owner in st.owners().items():
            before = last.get(bundle)
            if before is not None and before != owner:
                moves.setdefault(bundle, []).append(i)
            last[bundle] = owner
    return moves


def replay_history(states: Sequence[ClusterState], opts: Options, window: int) -> ReplayCount:
    """Replay ``states`` (one cluster, time order) and count unloads as the module says."""
    cycle_plans = plans(states, opts)
    unloaded = [[a.bundle for a in p.actions if a.action == "unload" and a.skipped is None]
                for p in cycle_plans]
    moved = observed_moves(states)
    unloads = soon = repeats = 0
    for i, bundles in enumerate(unloaded):
        unloads += len(bundles)
        for b in bundles:
            if any(i < j <= i + window for j in moved.get(b, ())):
                soon += 1
            if any(b in unloaded[j] for j in range(i + 1, min(i + window + 1, len(unloaded)))):
                repeats += 1
    last = cycle_plans[-1]
    return ReplayCount(last.shedding, last.placement, len(cycle_plans), unloads, soon, repeats)

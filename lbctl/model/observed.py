"""What the leader actually did after a snapshot was taken, as its metrics and the next snapshot
tell it (a snapshot built from Prometheus carries it under ``observed``).

The load manager's decision counters are the leader's own: ``ModularLoadManagerImpl`` counts the
bundles it unloaded (``brk_lb_unload_bundle_total``), the brokers it unloaded from
(``brk_lb_unload_broker_total``) and the bundles it split (``brk_lb_bundles_split_total``); the
extensible load manager's ``UnloadCounter`` and ``SplitCounter`` add a breakdown by decision label
and reason (``brk_lb_unload_broker_breakdown_total{result, reason}``,
``brk_lb_bundles_split_breakdown_total{result, reason}``). A counter's increase between this
snapshot and the next is what the leader decided in between. The counters do not say *which*
bundles moved; the ownership changes between the two snapshots do (:attr:`moves`), and a bundle
replaced by narrower ones was split (:attr:`splits`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from msgspec import Struct, field


class ObservedMove(Struct, frozen=True):
    """A bundle owned by ``source`` in this snapshot and by ``destination`` in the next."""

    bundle: str
    source: str
    destination: str


class ObservedDecisions(Struct, frozen=True):
    """The leader's decisions in ``(capturedAt, until]``; a count is ``None`` when its counter is
    not exported (or was missing at either end)."""

    until: int  # epoch ms: the next sample
    unloaded_bundles: int | None = None
    unloaded_brokers: int | None = None
    split_bundles: int | None = None
    #: ``"Success/Overloaded"`` → decisions (extensible load manager)
    unload_breakdown: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    split_breakdown: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    moves: tuple[ObservedMove, ...] = ()
    splits: tuple[str, ...] = ()
    #: the leader was another broker part of the interval, or a counter restarted (informational)
    notes: tuple[str, ...] = ()

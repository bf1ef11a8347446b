"""The leader's view of each broker's load report, from captures of the load-report endpoint.

Pulsar's ``GET /admin/v2/broker-stats/load-report`` does not answer with the report the broker
last wrote: ``ModularLoadManagerWrapper.generateLoadReport`` first runs
``ModularLoadManagerImpl.updateLocalBrokerData``, whose ``LocalBrokerData.update`` refreshes the
bundles, their stats and the host's usage, and leaves ``lastUpdate`` at the last write
(``ModularLoadManagerImpl.writeBrokerDataOnZooKeeper`` sets it, then writes). The leader's
``ModularLoadManagerImpl`` reads the written report (its ``brokerDataCache`` watch on the
metadata store), so a move or a split shows in the endpoint's answer at once while the leader
still decides on the report written before it — watch, taking the answer for what the leader
saw, expected moves off reports the leader had not read (false leader-divergence and
unexpected-unload alarms beside a real cluster).

The leader's view of a broker is therefore the content of the first capture that showed its
current ``lastUpdate``: the nearest capture after the write. Content that changes while
``lastUpdate`` does not is the broker's state now, not what the leader read. Reports served as
written (an exported history, ``lbctl sandbox --reports-as-written``) never change under one
``lastUpdate``, so the view is the capture itself there.
"""

from __future__ import annotations

from types import MappingProxyType

from lbctl.model.cluster import ClusterState
from lbctl.model.load import LocalBrokerData
from lbctl.records import replace


class LeaderView:
    """Each broker's report as first captured at its current ``lastUpdate``."""

    def __init__(self, refreshed: bool = True) -> None:
        #: the reports are refreshed (Pulsar's endpoint): a new ``lastUpdate``'s bundles are
        #: taken back to the write by its gains and losses (:func:`as_written`)
        self.refreshed_reports = refreshed
        self.first: dict[str, LocalBrokerData] = {}
        #: whether any report changed under an unchanged ``lastUpdate`` (served refreshed)
        self.refreshed = False

    def of(self, state: ClusterState) -> ClusterState:
        """``state`` with each broker's report as the leader read it (the same object when
        every report is the one first captured at its ``lastUpdate``)."""
        reports: dict[str, LocalBrokerData] = {}
        changed = False
        for broker, local in state.brokers.items():
            held = self.first.get(broker)
            if held is not None and held.lastUpdate == local.lastUpdate:
                if held is not local and held != local:
                    changed = True
                    self.refreshed = True
                    reports[broker] = held
                    continue
            else:
                if self.refreshed_reports:
                    written = as_written(local)
                    if written is not local:
                        changed = True
                        local = written
                self.first[broker] = local
            reports[broker] = local
        # a broker gone (no report) forgets its view: a report it writes on return is new
        for broker in [b for b in self.first if b not in state.brokers]:
            del self.first[broker]
        if not changed:
            return state
        return replace(state, brokers=MappingProxyType(reports))


def as_written(local: LocalBrokerData) -> LocalBrokerData:
    """A refreshed report's bundles as its broker wrote them at ``lastUpdate``: each write
    clears the gains and losses (``writeBrokerDataOnZooKeeper`` → ``cleanDeltas``) and each
    ``LocalBrokerData.update`` since adds to them (sets: a bundle gained then lost is in both),
    so the written bundles are those now but the ones only gained, plus the ones only lost.
    A lost bundle's stats are gone with it: it is listed in ``bundles`` only."""
    gains, losses = set(local.lastBundleGains), set(local.lastBundleLosses)
    only_gained, only_lost = gains - losses, losses - gains
    if not only_gained and not only_lost:
        return local
    bundles = tuple(b for b in local.bundles if b not in only_gained) + tuple(
        b for b in local.lastBundleLosses if b in only_lost and b not in local.bundles)
    stats = {b: v for b, v in local.lastStats.items() if b not in only_gained}
    return replace(local, bundles=bundles, lastStats=MappingProxyType(stats))

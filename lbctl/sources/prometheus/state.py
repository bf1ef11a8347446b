"""A rebuilt snapshot's :class:`ClusterState` made from its typed parts, for the snapshots the
``.jsonl`` reader's checks are known, beforehand, to pass: no broker report decoded again.

The checked reading (:func:`lbctl.sources.prometheus.output.checked`) turns each snapshot dict into
the snapshot records (``msgspec.convert``) and those into a state
(:func:`lbctl.sources.snapshot_schema.state_from_wire`), as a ``.jsonl`` line is read. For a
history of many brokers that is most of the main thread's work (measured: 49 % of it at
100 brokers), and for a plain modular snapshot nearly all of it re-checks what the columns were
checked for already. Here the state is made in two parts:

* everything but the brokers — cluster, time, config, observed decisions, the gaps — the checked
  way, from the snapshot without its brokers (a few keys: the same rules, the same words);
* the brokers' reports as the reader makes them of such a snapshot (``_broker`` of
  :mod:`lbctl.sources.snapshot_schema`: usages, the sums as written, ``bundles`` the stats' keys,
  no gains or losses, ``lastStats`` the very dict written), with the reader's
  :class:`~lbctl.model.cluster.NameIndex`.

Only when every check the reader would make of the brokers is known to pass: every bundle name
made of a namespace and a range the reader found valid earlier in the history (its
:class:`~lbctl.sources.snapshot_schema.LearnedNames`), none in a system namespace, no bundle
twice, the ranges ever seen pairwise disjoint (the reader's own short cut), no empty broker id,
every usage and limit finite, every rate sum finite and ≥ 0 and every count sum a Java ``int``
(those figures are not gathered again when the caller vouches for them: ``figures_checked``, as
:func:`lbctl.sources.prometheus.output.checked` does for a history's clean, plain snapshots,
whose figures :meth:`~lbctl.sources.prometheus.history.PrometheusHistory.built` checked a chunk
at a time).
Anything else — a name not seen yet (the first snapshot, a split), a ``namespaces`` section —
returns ``None``: the caller reads the snapshot the checked way, which also learns its names.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from itertools import chain
from types import MappingProxyType
from typing import Any

from lbctl.model.bundle import SYSTEM_PREFIXES
from lbctl.model.cluster import ClusterState, NameIndex
from lbctl.model.load import LocalBrokerData, ResourceUsage
from lbctl.model.wire.java import INT_MAX, MAX_EPOCH_MS
from lbctl.records import replace
from lbctl.sources.snapshot_schema import LearnedNames

#: length of ``/0xLLLLLLLL_0xUUUUUUUU``, the part of a bundle name after its namespace
_RANGE_TAIL = 22
_HEAD = operator.itemgetter(slice(None, -_RANGE_TAIL))
_TAIL = operator.itemgetter(slice(-_RANGE_TAIL, None))
_USAGES = ("cpu", "memory", "directMemory", "bandwidthIn", "bandwidthOut")
_RATES = ("msgThroughputIn", "msgThroughputOut", "msgRateIn", "msgRateOut")
_COUNTS = ("numTopics", "numConsumers", "numProducers")
_NO_USAGE = ResourceUsage()
_PAIRS = operator.itemgetter(*_USAGES)
_USAGE = operator.itemgetter("usage")
_LIMIT = operator.itemgetter("limit")


class DirectStates:
    """Makes the states of one history's snapshots (:meth:`state`); carries what is learned
    along it: the reader's :class:`LearnedNames` (shared with the checked reading) and whether
    the ranges learned so far are pairwise disjoint."""

    def __init__(self, learned: LearnedNames,
                 read: Callable[[dict[str, Any], str], ClusterState]) -> None:
        self.learned = learned
        #: the checked reading of a snapshot dict (what a ``.jsonl`` line would give)
        self.read = read
        #: the names found valid by what was learned (which only grows)
        self._valid: set[str] = set()
        self._tails_seen = -1
        self._disjoint = False

    def state(self, snap: dict[str, Any], where: str, *, figures_checked: bool = False
              ) -> ClusterState | None:
        """The state of a clean, plain snapshot, or ``None`` when a check of its brokers is
        not known to pass (the caller then reads the whole snapshot the checked way).
        ``figures_checked``: the caller vouches for its brokers' figures (see
        :meth:`_brokers_pass`)."""
        known = self._brokers_pass(snap, figures_checked)
        if known is None:
            return None
        reports, stats, owned = known
        rest = self.read({**snap, "brokers": {}}, where)
        brokers = {b: _local(rep) for b, rep in reports.items()}
        names = NameIndex(MappingProxyType(brokers), len(owned), MappingProxyType({}),
                          MappingProxyType(dict(zip(reports, stats, strict=True))), owned)
        out: ClusterState = replace(rest, brokers=names.brokers, names=names)
        return out

    def valid(self, snap: dict[str, Any], where: str, *, figures_checked: bool = False
              ) -> bool:
        """Whether a clean, plain snapshot is known to read without an error, with no state
        made (a written history only needs its snapshots checked): its brokers pass by what
        was learned, and the rest of it is read the checked way (raising what that reading
        raises). ``False``: the caller reads the whole snapshot the checked way.
        ``figures_checked`` as for :meth:`state`."""
        if self._brokers_pass(snap, figures_checked) is None:
            return False
        self.read({**snap, "brokers": {}}, where)
        return True

    def _brokers_pass(self, snap: dict[str, Any], figures_checked: bool = False
                      ) -> tuple[dict[str, dict[str, Any]], list[Any], dict[str, Any]] | None:
        """The reports, their stats and the one-owner table when every check the reader would
        make of the brokers is known to pass, else ``None``. ``figures_checked``: the usages,
        limits, sums and times are known to pass already (a history's clean, plain snapshot:
        :meth:`lbctl.sources.prometheus.history.PrometheusHistory.built` checked them a chunk
        at a time, column by column), and are not looked at again: at 100 brokers, gathering
        them snapshot by snapshot was most of this method's time."""
        if "namespaces" in snap:  # names are then checked against boundaries
            return None
        reports: dict[str, dict[str, Any]] = snap["brokers"]
        stats = [rep["lastStats"] for rep in reports.values()]
        owned: dict[str, Any] = {}  # the reader's one-owner table (NameIndex.owned)
        for one in stats:
            owned.update(one)
        if len(owned) != sum(map(len, stats)):  # a bundle listed twice: the reader says which
            return None
        if not self._known(owned.keys()) or "" in reports:
            return None
        if figures_checked:
            return reports, stats, owned
        pairs = list(chain.from_iterable(map(_PAIRS, reports.values())))  # in C: no frame each
        if not math.isfinite(sum(map(_USAGE, pairs)) + sum(map(_LIMIT, pairs))):
            return None
        rates = [rep[k] for rep in reports.values() for k in _RATES]
        counts = [rep[k] for rep in reports.values() for k in _COUNTS]
        times = [rep["lastUpdate"] for rep in reports.values()]
        if rates and not (math.isfinite(sum(rates)) and min(rates) >= 0.0
                          and min(counts) >= 0 and max(counts) <= INT_MAX
                          and min(times) > 0 and max(times) <= MAX_EPOCH_MS):
            return None
        return reports, stats, owned

    def _known(self, names: AbstractSet[str]) -> bool:
        """Every name valid by what was learned (a known namespace, a known range), none in a
        system namespace, and the learned ranges pairwise disjoint: the reader's checks of the
        names (``_NameCache.check``, ``_check_disjoint``) then pass without a word. What was
        learned only grows: a name found valid here stays so (:attr:`_valid`), and only the
        names not seen before are looked at."""
        new = names - self._valid
        if new:
            learned = self.learned
            heads = set(map(_HEAD, new))
            if not (learned.ns.keys() >= heads and learned.tails.keys() >= set(map(_TAIL, new))):
                return False
            if any(h.startswith(SYSTEM_PREFIXES) for h in heads):
                return False
            self._valid |= new
        if len(self.learned.tails) != self._tails_seen:  # the reader's short cut, same ranges
            used = sorted(self.learned.tails)
            self._disjoint = all(map(str.__le__, [t[-10:] for t in used],
                                     [t[-21:-11] for t in used[1:]]))
            self._tails_seen = len(self.learned.tails)
        return self._disjoint


def _usage(u: dict[str, float]) -> ResourceUsage:
    usage, limit = u["usage"], u["limit"]
    return _NO_USAGE if usage == 0.0 and limit == 0.0 else ResourceUsage(usage, limit)


def _local(rep: dict[str, Any]) -> LocalBrokerData:
    """The reader's ``LocalBrokerData`` of a rebuilt report: its usages, its sums as written,
    ``bundles`` its stats' names, no gains or losses, ``lastStats`` the very dict written."""
    stats = rep["lastStats"]
    return LocalBrokerData(
        _usage(rep["cpu"]), _usage(rep["memory"]), _usage(rep["directMemory"]),
        _usage(rep["bandwidthIn"]), _usage(rep["bandwidthOut"]),
        msgThroughputIn=rep["msgThroughputIn"], msgThroughputOut=rep["msgThroughputOut"],
        msgRateIn=rep["msgRateIn"], msgRateOut=rep["msgRateOut"], numTopics=rep["numTopics"],
        numBundles=rep["numBundles"], numConsumers=rep["numConsumers"],
        numProducers=rep["numProducers"], bundles=tuple(stats),
        lastStats=MappingProxyType(stats), lastUpdate=rep["lastUpdate"])

"""The greedy bundle selector shared by ``ThresholdShedder`` and ``OverloadShedder``.

Both Pulsar classes (``…loadbalance.impl.ThresholdShedder#filterAndSelectBundle`` and the stream in
``OverloadShedder#findBundlesForUnloading``) pick bundles off one broker the same way:

1. Candidates are the entries of ``LoadData.getBundleDataForLoadShedding()`` (bundle data minus the
   heartbeat / SLA-monitor namespaces) that belong to the broker's ``bundles`` set.
2. A bundle in ``recentlyUnloadedBundles`` is dropped (the leader already cut that map to
   ``loadBalancerSheddingGracePeriodMinutes``, so the strategy only tests membership).
3. Each candidate is valued by its *short-term* throughput, ``msgThroughputIn + msgThroughputOut``
   of ``shortTermData`` (bytes/s).
4. Candidates are sorted by that value, largest first, with a stable sort: equal values keep the
   iteration order of the shedding map (see :func:`shedding_bundles`).
5. Walking that list, a bundle is taken while the running sum is below the amount to offload, and
   the first one is always taken ("at least one bundle"): so the selection is the smallest prefix
   whose sum reaches the amount, or every candidate if they never reach it.

Besides the selections, :func:`select_greedy` reports a :class:`BundleCandidate` for every bundle of
the broker it looked at, chosen or not and why, so ``lbctl explain`` can replay the loop.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from lbctl.config import MB
from lbctl.model.bundle import namespace_of
from lbctl.model.javaorder import java_hash_order
from lbctl.model.load import BundleData
from lbctl.strategies.base import (
    BrokerData,
    BundleCandidate,
    LoadData,
    Reason,
    Selection,
    is_system_service_namespace,
)


def fmt_mb(value: float) -> str:
    """A throughput in bytes/s as Pulsar logs it, in MByte/s (1 MB = 1024 * 1024 bytes)."""
    mb = value / MB
    if math.isfinite(mb) and abs(mb) >= 1e9:
        return f"{mb:.3g} MB/s"
    return f"{mb:.1f} MB/s"


def fmt_pct(fraction: float) -> str:
    """A usage fraction as a percentage with one decimal."""
    return f"{fraction * 100:.1f}%"


def shedding_bundles(load: LoadData) -> dict[str, BundleData]:
    """``LoadData.getBundleDataForLoadShedding()`` in the order Java iterates it.

    Pulsar builds that map with ``Collectors.toMap`` over the ``bundleData`` ``ConcurrentHashMap``:
    a fresh ``HashMap`` filled one ``put`` at a time (not a presized copy), in the source map's
    iteration order. So the order is the Java ``HashMap`` order of the kept keys, entries of one
    bucket in the source's order (itself modelled as a ``HashMap`` order of all bundle names).
    """
    kept = load.bundle_data_for_shedding()
    source = java_hash_order(load.bundle_data)
    ordered = java_hash_order(k for k in source if k in kept)
    return {k: kept[k] for k in ordered}


@dataclass(frozen=True, slots=True)
class GreedyResult:
    """What the greedy loop chose off one broker, and every bundle it looked at."""

    selections: tuple[Selection, ...]
    candidates: tuple[BundleCandidate, ...]
    marked: float  # throughput (bytes/s) of the chosen bundles


def short_term_throughput(data: BundleData) -> float:
    st = data.shortTermData
    return st.msgThroughputIn + st.msgThroughputOut


def short_term_rate(data: BundleData) -> float:
    st = data.shortTermData
    return st.msgRateIn + st.msgRateOut


def select_greedy(
    load: LoadData,
    broker: str,
    data: BrokerData,
    amount: float,
    reason: Reason = Reason.OVERLOADED,
    shedding: Mapping[str, BundleData] | None = None,
) -> GreedyResult:
    """Pick bundles off ``broker`` until their short-term throughput reaches ``amount`` (bytes/s).

    ``shedding`` is :func:`shedding_bundles` of ``load``, passed in when the caller already built it.
    Tie rule: equal throughputs keep the shedding map's Java iteration order (stable sort).
    Besides the bundles in the loop, the broker's bundles that Pulsar never ranks (system
    namespaces, or no ``BundleData``) are listed as not chosen, after the ranked ones.
    """
    table = shedding_bundles(load) if shedding is None else shedding
    owned = set(data.local.bundles)
    ranked = [(b, short_term_throughput(d)) for b, d in table.items() if b in owned]
    # list.sort is stable, like Java's Stream.sorted: ties keep the map's iteration order.
    # Dropping recently unloaded bundles before or after a stable sort gives the same order.
    ranked.sort(key=lambda item: -item[1])

    selections: list[Selection] = []
    candidates: list[BundleCandidate] = []
    marked = 0.0
    for bundle, value in ranked:
        if bundle in load.recently_unloaded:
            candidates.append(
                BundleCandidate(
                    broker,
                    bundle,
                    value,
                    False,
                    "recently unloaded (within loadBalancerSheddingGracePeriodMinutes)",
                )
            )
            continue
        if marked < amount or not selections:
            if not selections:
                why = (
                    f"largest eligible bundle ({fmt_mb(value)}): "
                    "at least one bundle is always selected"
                )
            else:
                why = f"selected: {fmt_mb(marked)} so far < {fmt_mb(amount)} needed"
            marked += value
            selections.append(
                Selection(broker, bundle, reason, short_term_rate(table[bundle]), value)
            )
            candidates.append(BundleCandidate(broker, bundle, value, True, why))
        else:
            candidates.append(
                BundleCandidate(
                    broker,
                    bundle,
                    value,
                    False,
                    f"not needed: {fmt_mb(marked)} already selected ≥ {fmt_mb(amount)}",
                )
            )

    # Bundles of the broker that the loop never sees, listed so the explanation is complete.
    for bundle in data.local.bundles:
        if bundle in table:
            continue
        if is_system_service_namespace(namespace_of(bundle)):
            why = "system namespace (heartbeat / SLA monitor): never shed"
        else:
            why = "no bundle data: Pulsar only ranks bundles it has BundleData for"
        candidates.append(BundleCandidate(broker, bundle, 0.0, False, why))

    return GreedyResult(tuple(selections), tuple(candidates), marked)

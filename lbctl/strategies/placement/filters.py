"""The modular load manager's broker filters in ``selectBroker`` (``LoadManagerShared``).

Each filter takes the candidates in order and returns those it keeps, recording a
:class:`~lbctl.model.decision.FilterStep` (who went in, who came out, and why) for ``explain``:

* :func:`filter_large_topic_count` — ``filterBrokersWithLargeTopicCount``
  (``loadBalancerBrokerMaxTopics``);
* :func:`remove_most_servicing` — ``removeMostServicingBrokersForNamespace``, with the
  per-namespace ownership index of :func:`namespace_bundle_counts`.
"""

from __future__ import annotations

from collections.abc import Mapping

from lbctl.config import Settings
from lbctl.model.bundle import namespace_of
from lbctl.model.decision import FilterStep
from lbctl.model.loaddata import LoadData


def filter_large_topic_count(
    cands: tuple[str, ...], load: LoadData, settings: Settings, steps: list[FilterStep]
) -> tuple[str, ...]:
    """``LoadManagerShared.filterBrokersWithLargeTopicCount``: keep brokers whose topics (plus
    preallocated bundles' topics) are at most ``loadBalancerBrokerMaxTopics``; if none is left,
    keep them all."""
    limit = int(settings["loadBalancerBrokerMaxTopics"])
    kept = []
    for b in cands:
        bd = load.brokers[b]
        topics = bd.local.numTopics + sum(d.topics for d in bd.preallocated.values())
        if topics <= limit:
            kept.append(b)
    if not kept:
        steps.append(FilterStep("loadBalancerBrokerMaxTopics", cands, cands,
                                f"every broker has more than {limit} topics: filter not applied"))
        return cands
    kept_set = set(kept)
    removed = [b for b in cands if b not in kept_set]
    steps.append(FilterStep(
        "loadBalancerBrokerMaxTopics", cands, tuple(kept),
        f"removed {', '.join(removed)}: more than {limit} topics" if removed else ""))
    return tuple(kept)


def namespace_bundle_counts(load: LoadData) -> dict[str, dict[str, int]]:
    """``brokerToNamespaceToBundleRange``, inverted: per namespace, how many of its bundles each
    broker owns (reports in ``lastStats``) or has preallocated. Brokers without any are absent."""
    index: dict[str, dict[str, int]] = {}
    for broker, bd in load.brokers.items():
        for x in {*bd.local.lastStats, *bd.preallocated}:
            per_broker = index.setdefault(namespace_of(x), {})
            per_broker[broker] = per_broker.get(broker, 0) + 1
    return index


def remove_most_servicing(
    cands: tuple[str, ...], namespace: str, index: Mapping[str, Mapping[str, int]],
    steps: list[FilterStep],
) -> tuple[str, ...]:
    """``LoadManagerShared.removeMostServicingBrokersForNamespace``: keep the candidates that own
    (or have preallocated) the fewest bundles of the bundle's namespace."""
    if not cands:
        return cands
    owners = index.get(namespace, {})
    members = frozenset(cands)
    owning = [b for b in owners if b in members]
    # Usually most candidates own none of the namespace: then the least count is 0 and the
    # owners (a few) are removed; only otherwise are all candidates' counts compared.
    if len(owning) < len(cands):
        least = 0
        kept = tuple(b for b in cands if b not in owners)
    else:
        least = min(owners[b] for b in cands)
        kept = tuple(b for b in cands if owners[b] == least)
    why = ""
    if len(kept) < len(cands):
        removed = [f"{b} ({owners[b]})" for b in owning if owners[b] != least]
        why = (f"kept brokers owning {least} bundle(s) "
               f"of {namespace}; removed " + ", ".join(removed))
    steps.append(FilterStep("loadBalancerDistributeBundlesEvenlyEnabled", cands, kept, why))
    return kept

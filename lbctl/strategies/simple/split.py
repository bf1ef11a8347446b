"""Which bundles a broker under the simple load manager splits after writing its load report.

Mirrors ``SimpleLoadManagerImpl.doNamespaceBundleSplit`` (Pulsar master 0058e734 and cde090c5,
the two stored versions, alike here). Each broker runs it on its own last load report, right
after ``writeLoadReportOnZookeeper`` wrote one; the leader plays no part. For each bundle of
the report's ``bundleStats``:

* a bundle over a limit: ``topics > loadBalancerNamespaceBundleMaxTopics``, or (when
  ``loadBalancerNamespaceBundleMaxSessions > 0``) ``consumers + producers`` over it (an ``int``
  sum, widened to ``long`` after it wrapped), or the report's **short-term**
  ``msgRateIn + msgRateOut`` over ``loadBalancerNamespaceBundleMaxMsgRate``, or its
  ``msgThroughputIn + msgThroughputOut`` over ``loadBalancerNamespaceBundleMaxBandwidthMbytes``
  MiB/s — the limits are ``long`` s there, so the bandwidth limit never wraps, unlike the modular
  ``BundleSplitterTask``'s ``int`` product; all comparisons strict;
* one topic or none: not split;
* the namespace's bundle count (``NamespaceService.getBundleCount``) at
  ``loadBalancerNamespaceMaximumBundles`` or more: not split. The count is not raised by the
  bundles picked earlier in the same scan (``BundleSplitterTask`` counts them);
* ``loadBalancerAutoBundleSplitEnabled`` off: only logged ("DRY RUN").

The conditions and their order are :class:`~lbctl.strategies.split.bundle_splitter_task.
SplitLimits`' (the same Topics, Sessions, MsgRate, Bandwidth order as Pulsar's ``if``); Pulsar
logs no reason, so the reason here is the first limit exceeded, as for the modular splits.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from lbctl.config import Settings
from lbctl.model.bundle import namespace_of
from lbctl.model.decision import SplitCandidate
from lbctl.model.load import NamespaceBundleStats
from lbctl.strategies.split.bundle_splitter_task import SplitLimits, SplitterWhy


def simple_split_candidates(broker: str, bundle_stats: Mapping[str, NamespaceBundleStats],
                            settings: Settings, bundle_count: Callable[[str], int]
                            ) -> tuple[SplitCandidate, ...]:
    """The bundles of ``broker``'s report over a split limit with two topics or more, in the
    report's order: ``selected`` unless the namespace already has
    ``loadBalancerNamespaceMaximumBundles`` bundles (``bundle_count(ns)``). Whether the selected
    ones are split or only logged is ``loadBalancerAutoBundleSplitEnabled``'s (the caller's)."""
    limits = SplitLimits.of_long(settings)
    out: list[SplitCandidate] = []
    for bundle, stats in bundle_stats.items():
        rate = stats.msgRateIn + stats.msgRateOut
        tp = stats.msgThroughputIn + stats.msgThroughputOut
        fired = limits.fired(stats, rate, tp)
        if fired is None or stats.topics <= 1:
            continue
        ns = namespace_of(bundle)
        count = bundle_count(ns)
        selected = count < limits.max_bundles
        why = None if selected else SplitterWhy("namespace-full", ns, count, 0,
                                                limits.max_bundles)
        out.append(SplitCandidate(bundle, broker, fired[0], fired[1], stats.topics,
                                  stats.producerCount, stats.consumerCount, rate, tp,
                                  selected, why))
    return tuple(out)

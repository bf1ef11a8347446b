"""flow_or_qps_equally_divide: cut the bundle into pieces that each stay under the limits.

Mirrors ``org.apache.pulsar.common.naming.FlowOrQpsEquallyDivideBundleSplitAlgorithm`` (PIP-169):

1. At most one owned topic: no split.
2. Every owned topic that has stats and some traffic (``rate = msgRateIn + msgRateOut``,
   ``tp = msgThroughputIn + msgThroughputOut``, skipped when both are <= 0) is keyed by its CRC-32
   hash (a later topic with the same hash overwrites the figures, but both hashes stay in the list)
   and added to the bundle totals.
3. Fewer than two such topics, or totals below *both* limits times ``1 + d``
   (``d = flowOrQpsDifferenceThresholdPercentage / 100``): no split.
4. Walk the hashes in ascending order, accumulating rate and throughput; whenever the accumulated
   figure already exceeds a limit, or adding the next topic would, cut between the previous hash
   and this one at ``prev + (next - prev) // 2 + 1`` and start a new piece with this topic.

Limits: ``loadBalancerNamespaceBundleMaxMsgRate`` msg/s and
``loadBalancerNamespaceBundleMaxBandwidthMbytes`` × 1 MiB bytes/s. Note the ``+ 1``: Pulsar's
documentation shows the plain midpoint (and gets some of its hex sums wrong); the source adds one.
The trigger uses the limits × ``(1 + d)``, the cuts the plain limits, all comparisons strict.

Pulsar hands this algorithm per-topic stats only when the broker's
``defaultNamespaceBundleSplitAlgorithm`` is ``flow_or_qps_equally_divide``
(``NamespaceService.getBundleSplitOption``); otherwise the cast to
``FlowOrQpsEquallyDivideBundleSplitOption`` fails and so does the split — reported here as an error.
"""

from __future__ import annotations

from lbctl.model.bundle import format_position
from lbctl.strategies.registry import SPLIT
from lbctl.strategies.split.base import (
    FLOW_OR_QPS_EQUALLY_DIVIDE,
    MB,
    SplitBoundaries,
    SplitError,
    SplitOption,
)


@SPLIT.register(FLOW_OR_QPS_EQUALLY_DIVIDE, reads=(  # through the option's limits (option_for)
    "loadBalancerNamespaceBundleMaxMsgRate", "loadBalancerNamespaceBundleMaxBandwidthMbytes",
    "flowOrQpsDifferenceThresholdPercentage"))
class FlowOrQpsEquallyDivide:
    name = FLOW_OR_QPS_EQUALLY_DIVIDE

    def boundaries(self, option: SplitOption) -> SplitBoundaries:
        if option.topic_stats is None or option.limits is None:
            raise SplitError(
                "flow_or_qps_equally_divide needs defaultNamespaceBundleSplitAlgorithm="
                "flow_or_qps_equally_divide: only then does the broker pass per-topic stats to it "
                "(NamespaceService.getBundleSplitOption), otherwise the split fails")
        limits = option.limits
        max_rate = limits.max_msg_rate
        max_tp = limits.max_bandwidth_mbytes * MB
        d = limits.difference_threshold_percentage / 100.0
        n = len(option.topics)
        if n <= 1:
            return SplitBoundaries(self.name, None,
                                   f"the bundle has {n} topic(s); at least 2 are needed to split")

        info: dict[int, tuple[float, float]] = {}
        hashes: list[int] = []
        total_rate = total_tp = 0.0
        for topic in option.topics:
            st = option.topic_stats.get(topic)
            if st is None:
                continue
            rate = st.msgRateIn + st.msgRateOut
            tp = st.msgThroughputIn + st.msgThroughputOut
            if rate <= 0 and tp <= 0:
                continue
            h = option.hash(topic)
            hashes.append(h)
            info[h] = (rate, tp)
            total_rate += rate
            total_tp += tp
        numbers = {"msgRate": total_rate, "throughput": total_tp, "maxMsgRate": max_rate,
                   "maxThroughput": max_tp, "topicsWithTraffic": len(info)}
        if len(info) < 2:
            return SplitBoundaries(
                self.name, None,
                f"{len(info)} of the bundle's {n} topics have stats and traffic; at least 2 are "
                "needed", numbers)
        if total_rate < max_rate * (1 + d) and total_tp < max_tp * (1 + d):
            return SplitBoundaries(
                self.name, None,
                f"the bundle's {total_rate:,.1f} msg/s and {total_tp / MB:,.1f} MB/s are below "
                f"{100 + limits.difference_threshold_percentage}% of the limits "
                f"({max_rate * (1 + d):,.1f} msg/s, {max_tp * (1 + d) / MB:,.1f} MB/s)", numbers)

        hashes.sort()
        acc_rate, acc_tp = info[hashes[0]]
        cuts: list[int] = []
        for prev, h in zip(hashes, hashes[1:], strict=False):
            rate, tp = info[h]
            if (acc_rate > max_rate or acc_tp > max_tp
                    or acc_rate + rate > max_rate or acc_tp + tp > max_tp):
                cuts.append(prev + (h - prev) // 2 + 1)
                acc_rate, acc_tp = rate, tp
            else:
                acc_rate += rate
                acc_tp += tp
        head = (f"{total_rate:,.1f} msg/s and {total_tp / MB:,.1f} MB/s over {len(info)} topics; "
                f"a piece ends before the topic that would take it over {max_rate:,} msg/s or "
                f"{limits.max_bandwidth_mbytes:,} MB/s")
        if not cuts:
            return SplitBoundaries(self.name, None, head + ": no cut needed", numbers)
        return SplitBoundaries(
            self.name, tuple(cuts),
            head + f": {len(cuts)} boundar{'y' if len(cuts) == 1 else 'ies'} "
            f"({', '.join(format_position(c) for c in cuts)}), each a midpoint + 1", numbers)

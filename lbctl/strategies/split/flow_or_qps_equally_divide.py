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

from lbctl.strategies.registry import SPLIT
from lbctl.strategies.split.base import (
    FLOW_OR_QPS_EQUALLY_DIVIDE,
    MB,
    BoundaryWhy,
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
            return SplitBoundaries(self.name, None, BoundaryWhy("few-topics", n))

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
            return SplitBoundaries(self.name, None, BoundaryWhy(
                "few-with-traffic", n, with_traffic=len(info)), numbers)
        if total_rate < max_rate * (1 + d) and total_tp < max_tp * (1 + d):
            return SplitBoundaries(self.name, None, BoundaryWhy(
                "below-limits", rate=total_rate, throughput=total_tp,
                percentage=100 + limits.difference_threshold_percentage, max_rate=max_rate,
                max_tp=max_tp, margin=d), numbers)

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
        why = BoundaryWhy("cuts" if cuts else "no-cut", positions=tuple(cuts),
                          rate=total_rate, throughput=total_tp, with_traffic=len(info),
                          max_rate=max_rate, max_mb=limits.max_bandwidth_mbytes)
        return SplitBoundaries(self.name, tuple(cuts) if cuts else None, why, numbers)

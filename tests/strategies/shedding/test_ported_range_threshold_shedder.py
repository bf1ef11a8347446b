"""ThresholdShedder, on the clusters of Pulsar's ``RangeThresholdShedderTest``.

``RangeThresholdShedderTest`` (pulsar-broker/src/test/java/org/apache/pulsar/broker/loadbalance/,
the stored version at 336454ce, of the unmerged ``RangeThresholdShedder`` pull request) runs each
cluster through two shedders: a fresh ``ThresholdShedder`` with the default configuration, which
must shed nothing, and the ``RangeThresholdShedder`` of that pull request, which lbctl does not
model (the merged answer to the same problem is ThresholdShedder's ``lowerBoundarySheddingEnabled``,
PR #17456, ported from ``ThresholdShedderTest`` in test_threshold.py). The ThresholdShedder half is
ported here with the same numbers.

Its clusters differ from ``ThresholdShedderTest``'s lower-boundary ones: each broker lists ten
data-less names ``bundle-0..9`` (the same names on every broker) and one bundle with data,
``broker-<i>-bundle-<10+i>``, which the Java loop writes ten times; a bundle carries 50 MB/s (or
80 MB/s) in and out.
"""

from __future__ import annotations

from lbctl.config import Settings
from lbctl.model.decision import Reason
from lbctl.strategies.shedding.threshold import ThresholdShedder
from tests.factories import broker, bundle_data, load

MB = 1024 * 1024
#: ``new ServiceConfiguration()``: the defaults (threshold 10 %, no lower-boundary shedding)
CONF = Settings.defaults()


def eleven_brokers(tp: float, pct: float, *, low: int | None):
    """``broker-0..10``; broker ``low`` idle (0 % bandwidth, no throughput), the others at
    ``pct`` % bandwidth in and out with ``tp`` bytes/s in and out on their one bundle with data."""
    brokers = {}
    bundles = {}
    for i in range(11):
        idle = i == low
        own = f"broker-{i}-bundle-{10 + i}"
        bundles[own] = bundle_data(0 if idle else tp, 0 if idle else tp)
        brokers[f"broker-{i}"] = broker(
            bandwidth_in=(0 if idle else pct, 100),
            bandwidth_out=(0 if idle else pct, 100),
            bundle_names=(*(f"bundle-{j}" for j in range(10)), own),
            tp_in=0 if idle else tp,
            tp_out=0 if idle else tp,
        )
    return load(brokers, bundle_data=bundles)


def shed(ld, conf: Settings = CONF):
    shedder = ThresholdShedder()
    decision, _ = shed_with(shedder, ld, conf)
    return decision


def shed_with(shedder: ThresholdShedder, ld, conf: Settings):
    return shedder.shed(ld, conf, shedder.initial_memory())


def test_range_throughput() -> None:
    """``RangeThresholdShedderTest#testRangeThroughput`` (ThresholdShedder half): ten brokers at
    80 %, one at 0 %: the average is 80 × 10 / 11 = 72.73 %, the line 82.73 %, nobody is above
    it and nothing is shed."""
    decision = shed(eleven_brokers(50 * MB, 80, low=10))
    assert decision.selections == ()
    assert all(b.reason != Reason.OVERLOADED for b in decision.brokers.values())


def test_no_broker_to_offload() -> None:
    """``RangeThresholdShedderTest#testNoBrokerToOffload`` (ThresholdShedder half): all eleven
    brokers at 80 %, each the average: nothing is shed."""
    decision = shed(eleven_brokers(80 * MB, 80, low=None))
    assert decision.selections == ()


def test_range_throughput_with_the_lower_boundary() -> None:
    """Not in the Java test: the merged answer to ``testRangeThroughput``'s cluster
    (``lowerBoundarySheddingEnabled``, PR #17456). The idle broker is below the average less the
    threshold (0 < 62.73 %); the busiest broker with more than one bundle (the data-less names
    count) is the first of the ten tied at 80 % in the brokers' map order, and it should offload
    10 % × 0.5 of its 100 MB/s: 5 MB/s, below ``loadBalancerBundleUnloadMinThroughputThreshold``
    (10 MB/s), so nothing is shed. With that minimum at 0 its one bundle with data goes."""
    ld = eleven_brokers(50 * MB, 80, low=10)
    lower = CONF.with_values(lowerBoundarySheddingEnabled=True)
    assert shed(ld, lower).selections == ()
    first = next(b for b in ld.brokers if b != "broker-10")
    decision = shed(ld, lower.with_values(loadBalancerBundleUnloadMinThroughputThreshold=0))
    assert [(s.broker, s.bundle, s.reason) for s in decision.selections] == [
        (first, f"{first}-bundle-{10 + int(first.split('-')[1])}", Reason.UNDERLOADED)]

"""The extensible load manager's ``weightedMaxEMA`` moves at every report tick, written or not:
``BrokerLoadDataReporter.reportAsync`` calls ``generateLoadData`` (``BrokerLoadData.update`` →
``updateWeightedMaxEMA``) every ``loadBalancerReportUpdateMinIntervalMillis`` and writes only when
``needBrokerDataUpdate`` says so; a write publishes the EMA as it is then. The sandbox moved it only
at writes, so a broker whose load changed less than the threshold published an EMA stuck near its
old load for hours (at ``--extensible --speed 60``: LOAD % 88.9 beside a MAX % of 69.2, still 4
points over it three cluster hours later)."""

from __future__ import annotations

import pytest

from lbctl.records import replace
from lbctl.sandbox import TestCluster
from lbctl.sandbox.clock import SteppedClock
from tests.sandbox.life_helpers import run_for

pytestmark = pytest.mark.live


def _weighted(c: TestCluster, broker: str) -> float:
    """``BrokerLoadData.getMaxResourceUsageWithWeight`` (5 weights) of ``broker``'s last
    written figures, under the cluster's configuration."""
    from lbctl.config import resolve
    from lbctl.model.brokerload import BrokerLoadData
    from lbctl.model.load import ResourceUsage

    st = c.brokers[broker]
    data = BrokerLoadData(cpu=ResourceUsage(*st.cpu), memory=ResourceUsage(*st.memory),
                          directMemory=ResourceUsage(*st.direct),
                          bandwidthIn=ResourceUsage(*st.bw_in),
                          bandwidthOut=ResourceUsage(*st.bw_out))
    return data.weighted_max(resolve(c.config, dynamic_config=c.dynamic))


def test_the_published_ema_has_followed_every_sample() -> None:
    from lbctl.sandbox.scenarios import extensible_cluster, living

    c = extensible_cluster()
    c.set_dynamic(loadBalancerSheddingEnabled="false", loadBalancerAutoBundleSplitEnabled="false")
    try:
        clock = SteppedClock()
        life = living(c, clock, hosts="uniform")
        for b, host in life.hosts.items():  # without noise: each sample is the load itself
            life.hosts[b] = replace(host, noise=0.0)
        run_for(life, clock, 5)
        hot = next(iter(c.brokers))
        first = life.written[hot]
        ema0 = c.brokers[hot].ema
        assert ema0 is not None
        for ns in c.namespaces:  # 7 % less traffic: under every threshold, nothing is written
            life.namespace_factor[ns] = 0.93
        for _ in range(14 * 12):
            run_for(life, clock, 5)
        assert life.written[hot].at == first.at and c.brokers[hot].ema == ema0
        run_for(life, clock, 65)  # loadBalancerReportUpdateMaxIntervalMinutes (15) since it
        again = life.written[hot]
        assert again.at > first.at
        ema = c.brokers[hot].ema
        assert ema is not None
        assert ema0 - _weighted(c, hot) > 0.04  # the load did fall
        # 180 ticks at 0.9 history: the EMA has reached the new load; updated only at writes it
        # would still be 0.9 of the way back at the old one
        assert ema == pytest.approx(_weighted(c, hot), abs=1e-6)
    finally:
        c.stop()


def test_a_restarted_broker_starts_a_new_ema() -> None:
    from lbctl.sandbox.scenarios import extensible_cluster, living

    c = extensible_cluster()
    c.set_dynamic(loadBalancerSheddingEnabled="false", loadBalancerAutoBundleSplitEnabled="false")
    try:
        clock = SteppedClock()
        life = living(c, clock, hosts="uniform")
        run_for(life, clock, 30)
        hot = next(iter(c.brokers))
        life.crash(hot)
        run_for(life, clock, 5)
        life.restart(hot)
        # a new JVM's BrokerLoadData: its first update takes its weighted max as it is (the
        # sandbox started it at 0 whatever the broker measured)
        assert c.brokers[hot].ema == pytest.approx(_weighted(c, hot)) and _weighted(c, hot) > 0
    finally:
        c.stop()

"""Builders mirroring the helpers of Pulsar's extensible tests (``TransferShedderTest``).

``getCpuLoad`` → :func:`cpu_load`, ``getTopBundlesLoad`` → :func:`top_bundles`, ``getContext``'s
configuration → :func:`shedder_settings`; the load-data stores are Java ``HashMap`` s, so
:func:`store` orders them as a ``HashMap`` iterates.
"""

from __future__ import annotations

from collections.abc import Mapping

from lbctl.config import Settings
from lbctl.model.brokerload import BrokerLoadData, SystemUsage, TopBundle, top_k_bundles
from lbctl.model.javaorder import java_hash_order
from lbctl.model.load import NamespaceBundleStats, ResourceUsage

NOW = 1_763_762_400_000  # a fixed "System.currentTimeMillis()"


def shedder_settings(**overrides: object) -> Settings:
    """``TransferShedderTest.getContext()``'s configuration: debug on, policies off, threshold 0."""
    values = {"loadBalancerDebugModeEnabled": True,
              "loadBalancerSheddingBundlesWithPoliciesEnabled": False,
              "loadBalancerSheddingConditionHitCountThreshold": 0}
    values.update(overrides)
    return Settings.defaults().with_values(**values)


def cpu_load(settings: Settings, load: int, tops: tuple[TopBundle, ...] | None,
             now: int = NOW) -> BrokerLoadData:
    """``getCpuLoad``: cpu = load/100, others 0/100; throughput out = the top bundles' sum."""
    usage = SystemUsage(ResourceUsage(load, 100.0), ResourceUsage(0.0, 100.0),
                        ResourceUsage(0.0, 100.0), ResourceUsage(0.0, 100.0),
                        ResourceUsage(0.0, 100.0))
    out = sum(t.stats.msgThroughputOut for t in tops) if tops is not None else 2
    return BrokerLoadData().update(usage, 1, out, 3, 4, 5, 6, settings, now)


def top_bundles(settings: Settings, prefix: str, *loads: float) -> tuple[TopBundle, ...]:
    """``getTopBundlesLoad``: bundles with only ``msgThroughputOut`` set, top-k of them."""
    if len(loads) == 1:
        names = [f"{prefix}/0x00000000_0x0FFFFFFF"]
        k = 2
    elif len(loads) == 2:
        names = [f"{prefix}/0x00000000_0x0FFFFFFF", f"{prefix}/0x0FFFFFFF_0xFFFFFFFF"]
        k = 2
    else:
        names = [f"{prefix}/0x00000000_0x1FFFFFFF", f"{prefix}/0x1FFFFFFF_0x2FFFFFFF",
                 f"{prefix}/0x2FFFFFFF_0x3FFFFFFF", f"{prefix}/0x3FFFFFFF_0x4FFFFFFF",
                 f"{prefix}/0x4FFFFFFF_0x5FFFFFFF"]
        k = 5
    stats = [(n, NamespaceBundleStats(msgThroughputOut=float(v))) for n, v in zip(names, loads, strict=True)]
    return top_k_bundles(stats, k, settings)


def store(entries: Mapping[str, object]) -> dict:
    """A Java ``HashMap`` of these entries, in its iteration order."""
    return {k: entries[k] for k in java_hash_order(entries)}

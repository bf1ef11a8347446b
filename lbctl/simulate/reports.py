"""When a broker rewrites its load report: ``ModularLoadManagerImpl.needBrokerDataUpdate``.

The leader decides on the reports brokers last *wrote* to the metadata store, not on their current
load. A broker writes when the last write is more than ``loadBalancerReportUpdateMaxIntervalMinutes``
old, or when the largest change since it exceeds ``loadBalancerReportUpdateThresholdPercentage``:

* ``100 · |u(last) − u(now)|`` with ``u`` the weighted max resource usage (4-argument form), and
* the percent change of message rate (in + out), throughput (in + out) and bundle count, where
  ``pc(old, new) = 0`` if both are 0, ``+∞`` if only ``old`` is 0, else ``100 · |old − new| / old``.

Strict comparisons, as in Pulsar.
"""

from __future__ import annotations

import math

from lbctl.config import Settings
from lbctl.model.load import LocalBrokerData


def percent_change(old: float, new: float) -> float:
    """``ModularLoadManagerImpl.percentChange``."""
    if old == 0:
        return 0.0 if new == 0 else math.inf
    return 100 * abs((old - new) / old)


def max_change(last: LocalBrokerData, now: LocalBrokerData, settings: Settings) -> float:
    """The largest change between the report last written and the current one, in percent."""
    w = settings.weights4()
    usage = 100.0 * abs(last.max_resource_usage_with_weight(*w)
                        - now.max_resource_usage_with_weight(*w))
    return max(
        usage,
        percent_change(last.msgRateIn + last.msgRateOut, now.msgRateIn + now.msgRateOut),
        percent_change(last.msgThroughputIn + last.msgThroughputOut,
                       now.msgThroughputIn + now.msgThroughputOut),
        percent_change(last.numBundles, now.numBundles),
    )


def need_update(last: LocalBrokerData, now: LocalBrokerData, now_ms: int,
                settings: Settings) -> bool:
    """``needBrokerDataUpdate``: does the broker write ``now`` (at ``now_ms``) over ``last``?"""
    max_interval = int(settings["loadBalancerReportUpdateMaxIntervalMinutes"]) * 60_000
    if now_ms - last.lastUpdate > max_interval:
        return True
    threshold = float(settings["loadBalancerReportUpdateThresholdPercentage"])
    return max_change(last, now, settings) > threshold

"""One refresh of ``monitor-brokers`` on a live cluster: discovery and load reports in, a
:class:`~lbctl.monitor.brokers.Refresh` out (the loop and the screen are the CLI's)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from lbctl.admin.errors import AdminError
from lbctl.config import resolve
from lbctl.monitor.brokers import BrokerMonitor, Refresh
from lbctl.sources.live import LiveSource
from lbctl.sources.live_data import lb_settings, parse_reports

THRESHOLD = "loadBalancerBrokerOverloadedThresholdPercentage"


def threshold_of(config: Mapping[str, Any]) -> float:
    """``loadBalancerBrokerOverloadedThresholdPercentage`` of a runtime configuration or a
    snapshot's ``config`` (the default when absent)."""
    return float(resolve(lb_settings(dict(config))[0])[THRESHOLD])


def live_refresh(src: LiveSource, mon: BrokerMonitor, last_threshold: list[float]) -> Refresh:
    """Read the brokers and their reports once and fold them into ``mon``; when the admin URL
    fails after a first good read, every broker stays on screen, stale, with the error."""
    at = int(time.time() * 1000)
    try:
        d, raw_reports = src.discover_and_reports(list(mon.rows))
    except AdminError as e:
        if not mon.rows:
            raise
        brokers = list(mon.rows)
        return mon.update(brokers, dict.fromkeys(brokers, f"admin URL: {e}"), last_threshold[0], at)
    last_threshold[0] = threshold_of(d.config)
    reports = parse_reports(d.cluster, raw_reports)
    return mon.update(d.brokers, reports, last_threshold[0], at, d.cluster)

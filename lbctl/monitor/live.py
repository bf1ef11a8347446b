"""One refresh of ``monitor-brokers`` on a live cluster: discovery and load reports in, a
:class:`~lbctl.monitor.brokers.Refresh` out (the loop and the screen are the CLI's)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from lbctl.admin.errors import AdminError
from lbctl.collector import collector_paused
from lbctl.config import Settings
from lbctl.model.cluster import EXTENSIBLE, ClusterState
from lbctl.monitor.brokers import BrokerMonitor, Refresh
from lbctl.sources.live import LiveSource
from lbctl.sources.live_data import live_settings, parse_reports

THRESHOLD = "loadBalancerBrokerOverloadedThresholdPercentage"


def settings_of(config: Mapping[str, Any], dynamic: Mapping[str, Any] | None = None) -> Settings:
    """The load-balancer settings of a runtime configuration or a snapshot's ``config`` (defaults
    for what is absent) with the values stored by ``update-dynamic-config`` (a live discovery's,
    a snapshot's ``dynamicConfig``), which win and say so: the overload threshold and the
    resource weights (:func:`lbctl.sources.live_data.live_settings`)."""
    return live_settings(config, dynamic)


def extensible_loads(raw: Mapping[str, Any], settings: Settings, at: int) -> dict[str, Any]:
    """Rebuilt ``BrokerLoadData`` JSON → the store's values (a first sample when the broker does
    not publish its features), or the error text of a malformed one."""
    from lbctl.errors import SnapshotError
    from lbctl.model.brokerload import first_sample
    from lbctl.sources.snapshot_schema import parse_broker_load_data

    out: dict[str, Any] = {}
    for b, obj in raw.items():
        try:
            pub = parse_broker_load_data(obj, "brokerLoadData", f"brokerLoadData[{b!r}]")
        except SnapshotError as e:
            out[b] = f"malformed load data: {e}"
            continue
        out[b] = pub.data if pub.has_features else first_sample(pub.data, settings, at)
    return out


def snapshot_refresh_args(st: ClusterState) -> tuple[Any, ...]:
    """:meth:`BrokerMonitor.update`'s arguments for one snapshot: an extensible one in
    ``--extensions``' view (its published ``brokerLoadData``), a modular one with the leader's
    own bundle data when it carries ``bundleData``."""
    settings = settings_of(st.config, st.dynamic_config)
    brokers = list(st.available())
    if st.load_manager == EXTENSIBLE:
        from lbctl.model.brokerload import first_sample

        reports: dict[str, Any] = {
            b: (p.data if p.has_features else first_sample(p.data, settings, st.captured_at))
            for b, p in st.broker_load_data.items()}
        reports.update({b: "no load data" for b in brokers if b not in reports})
        return brokers, reports, settings, st.captured_at, st.cluster
    reports = {b: st.brokers.get(b, "no readable load report") for b in brokers}
    return brokers, reports, settings, st.captured_at, st.cluster, st.bundle_data


#: the modules a first refresh would import on first use (:func:`prepare`)
_FIRST_REFRESH_MODULES = ("lbctl.admin.bodies", "lbctl.admin.transport",
                          "lbctl.sources.live_extensible", "lbctl.sources.percent_usage")


def prepare(src: LiveSource) -> None:
    """The refresh loop's start-up: what a first refresh would otherwise do on first use, done
    before it (where the operator sees a process start, not a refresh).

    In a fresh ``lbctl monitor-brokers`` the first refresh imported the HTTP layer
    (:mod:`lbctl.admin.transport`, and with it httpx, whose package imports its own command
    line's click, rich and pygments: ~150 modules), the body reader, the extensible cluster's
    reader and the usage arithmetic, then made the client's event loop — ~70 ms of CPU before
    its first request could leave, on a refresh whose own work is ~30 ms (``benchmarks/
    monitor_brokers.py``, "fresh process"). Nothing is sent here: a cluster that does not
    answer is still the first refresh's error."""
    import asyncio
    from importlib import import_module

    for module in _FIRST_REFRESH_MODULES:  # imported now for their first use
        import_module(module)
    src.client.run(asyncio.sleep(0))  # the client's event loop, made once and kept


def live_refresh(src: LiveSource, mon: BrokerMonitor, last_threshold: list[float]) -> Refresh:
    """Read the brokers and their reports once and fold them into ``mon``; when the admin URL
    fails after a first good read, every broker stays on screen, stale, with the error. An
    extensible cluster is shown in ``--extensions``' view (each broker's ``BrokerLoadData``).

    The cyclic collector is paused for the refresh (:func:`~lbctl.collector.collector_paused`):
    its connections, futures and decoded reports are acyclic containers made in a burst, and
    the collections they start (a young pass every 700 of them, an old one every tenth, and
    now and then a full one over everything lbctl imported) run on the refresh's critical path
    — a first refresh of 200 brokers spent ~3 ms of its ~33 ms of CPU in them, and 20-70 ms
    when a full one fell in it (one first refresh in five in a long-lived process). Reference
    counting frees what the refresh drops, as ever; the young objects it keeps are scanned
    once when the collector runs again (after the refresh: ~1.5 ms; in a fresh process, whose
    first refresh imports httpx and its company, ~5.5 ms, what the passes inside cost)."""
    with collector_paused():
        return _live_refresh(src, mon, last_threshold)


def _live_refresh(src: LiveSource, mon: BrokerMonitor, last_threshold: list[float]) -> Refresh:
    at = int(time.time() * 1000)
    try:
        d, raw_reports = src.discover_and_reports(list(mon.rows))
    except AdminError as e:
        if not mon.rows:
            raise
        brokers = list(mon.rows)
        return mon.update(brokers, dict.fromkeys(brokers, f"admin URL: {e}"), last_threshold[0], at)
    settings = settings_of(d.config, d.dynamic)
    last_threshold[0] = float(settings[THRESHOLD])
    reports = parse_reports(d.cluster, raw_reports)
    if src.load_manager == EXTENSIBLE:
        loads = extensible_loads(src.last_broker_load, settings, at)
        reports = {b: loads.get(b, r) for b, r in reports.items()}
    # a listed id that is not host:port is never contacted; it stays on screen with why
    reports.update(src.rejected)
    return mon.update(d.brokers + list(src.rejected), reports, settings, at, d.cluster)

"""Builders for hand-made load data, in the spirit of Pulsar's own strategy tests.

Pulsar's tests build ``LoadData`` by hand (``OverloadShedderTest``); these helpers do the same with
lbctl's model so that each ported scenario reads like its Java original.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from lbctl.loadmanager.loaddata import build_load_data, update_bundle_data
from lbctl.model.cluster import ClusterState
from lbctl.model.load import (
    BundleData,
    LocalBrokerData,
    NamespaceBundleStats,
    ResourceUsage,
    TimeAverageMessageData,
)
from lbctl.model.loaddata import LoadData


def stats(
    rate_in: float = 0.0,
    rate_out: float = 0.0,
    tp_in: float = 0.0,
    tp_out: float = 0.0,
    *,
    topics: int = 1,
    consumers: int = 0,
    producers: int = 0,
) -> NamespaceBundleStats:
    return NamespaceBundleStats(
        msgRateIn=rate_in,
        msgThroughputIn=tp_in,
        msgRateOut=rate_out,
        msgThroughputOut=tp_out,
        consumerCount=consumers,
        producerCount=producers,
        topics=topics,
    )


def broker(
    *,
    cpu: tuple[float, float] = (0, 0),
    memory: tuple[float, float] = (0, 0),
    direct_memory: tuple[float, float] = (0, 0),
    bandwidth_in: tuple[float, float] = (0, 0),
    bandwidth_out: tuple[float, float] = (0, 0),
    bundles: Mapping[str, NamespaceBundleStats] | None = None,
    bundle_names: tuple[str, ...] | None = None,
    msg_rate_in: float | None = None,
    msg_rate_out: float | None = None,
    tp_in: float | None = None,
    tp_out: float | None = None,
) -> LocalBrokerData:
    """A broker report. Aggregates default to the sums over ``bundles`` (as Pulsar's update)."""
    st = dict(bundles or {})
    data = LocalBrokerData(
        cpu=ResourceUsage(*cpu),
        memory=ResourceUsage(*memory),
        directMemory=ResourceUsage(*direct_memory),
        bandwidthIn=ResourceUsage(*bandwidth_in),
        bandwidthOut=ResourceUsage(*bandwidth_out),
    ).with_stats(st)
    changes = {}
    if bundle_names is not None:
        changes["bundles"] = bundle_names
        changes["numBundles"] = len(bundle_names)
    for key, value in (
        ("msgRateIn", msg_rate_in),
        ("msgRateOut", msg_rate_out),
        ("msgThroughputIn", tp_in),
        ("msgThroughputOut", tp_out),
    ):
        if value is not None:
            changes[key] = value
    if changes:
        from dataclasses import replace

        data = replace(data, **changes)
    return data


def bundle_data(
    tp_in: float = 0.0,
    tp_out: float = 0.0,
    rate_in: float = 0.0,
    rate_out: float = 0.0,
    *,
    topics: int = 1,
    long_term: tuple[float, float, float, float] | None = None,
) -> BundleData:
    """Bundle data whose short-term (and, unless given, long-term) window holds these figures."""
    short = TimeAverageMessageData(10, 1, tp_in, tp_out, rate_in, rate_out)
    lt = long_term or (tp_in, tp_out, rate_in, rate_out)
    return BundleData(short, TimeAverageMessageData(1000, 1, *lt), topics)


def state(
    brokers: Mapping[str, LocalBrokerData],
    *,
    now: int = 0,
    bundle_data: Mapping[str, BundleData] | None = None,
    cluster: str = "test",
) -> ClusterState:
    return ClusterState(
        cluster=cluster,
        captured_at=now,
        brokers=MappingProxyType(dict(brokers)),
        bundle_data=None if bundle_data is None else MappingProxyType(dict(bundle_data)),
    )


def load(
    brokers: Mapping[str, LocalBrokerData],
    *,
    bundle_data: Mapping[str, BundleData] | None = None,
    recently_unloaded: Mapping[str, int] | None = None,
    now: int = 0,
) -> LoadData:
    """``LoadData`` as the leader would hold it: bundle data from ``bundle_data`` if given, else
    one sample of each broker's ``lastStats``; brokers in Java ``HashMap`` order."""
    st = state(brokers, now=now)
    data = dict(bundle_data) if bundle_data is not None else update_bundle_data(st)
    return build_load_data(st, data, recently_unloaded)

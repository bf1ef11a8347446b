"""Builders for hand-made load data, in the spirit of Pulsar's own strategy tests.

Pulsar's tests build ``LoadData`` by hand (``OverloadShedderTest``); these helpers do the same with
lbctl's model so that each ported scenario reads like its Java original.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import pytest

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
        from lbctl.records import replace

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


# --- named scenarios (the contract suite runs every strategy over each) ---------------------------
MB = 1024 * 1024


def _bundles(ns: str, n: int, tp: float, rate: float, *, topics: int = 3) -> dict[str, NamespaceBundleStats]:
    """``n`` bundles of namespace ``ns`` (equal ranges), each with these figures."""
    step = 2**32 // n
    out = {}
    for i in range(n):
        lo, hi = i * step, (2**32 - 1 if i == n - 1 else (i + 1) * step)
        out[f"{ns}/0x{lo:08x}_0x{hi:08x}"] = stats(rate / 2, rate / 2, tp / 2, tp / 2,
                                                   topics=topics, producers=2, consumers=2)
    return out


def _scenario(usages: Mapping[str, float], per_broker: Mapping[str, dict[str, NamespaceBundleStats]],
              *, now: int = 1_763_000_000_000) -> ClusterState:
    brokers = {b: broker(cpu=(u * 800, 800), bandwidth_in=(u * 50, 100),
                         bundles=per_broker.get(b, {}))
               for b, u in usages.items()}
    return state(brokers, now=now)


def balanced(n: int = 4) -> ClusterState:
    """``n`` brokers at 40–46 % with 4 bundles each of one namespace: nobody should move."""
    names = [f"b{i}:8080" for i in range(n)]
    return _scenario({b: 0.40 + 0.02 * (i % 4) for i, b in enumerate(names)},
                     {b: _bundles(f"t/ns{i}", 4, 10 * MB, 1000) for i, b in enumerate(names)})


def skewed_overload(n: int = 5) -> ClusterState:
    """One broker at 95 % with 12 bundles, the others at 20–35 % with 3: the hot one must shed."""
    names = [f"b{i}:8080" for i in range(n)]
    usages = {b: (0.95 if i == 0 else 0.20 + 0.05 * (i % 4)) for i, b in enumerate(names)}
    per = {b: _bundles(f"t/hot{i}", 12 if i == 0 else 3, (40 if i == 0 else 10) * MB,
                       4000 if i == 0 else 1000) for i, b in enumerate(names)}
    return _scenario(usages, per)


def skewed_underload(n: int = 4) -> ClusterState:
    """Brokers at 60 % and one at 1 % with no bundles (a restarted broker)."""
    names = [f"b{i}:8080" for i in range(n)]
    usages = {b: (0.01 if i == n - 1 else 0.60) for i, b in enumerate(names)}
    per = {b: _bundles(f"t/ns{i}", 6, 20 * MB, 2000) for i, b in enumerate(names) if i < n - 1}
    return _scenario(usages, per)


def single_hot_bundle() -> ClusterState:
    """Two brokers; the hot one carries one huge bundle and one tiny one."""
    hot = {**_bundles("t/big", 1, 400 * MB, 40000), **_bundles("t/tiny", 1, 1 * MB, 10)}
    return _scenario({"b0:8080": 0.9, "b1:8080": 0.1},
                     {"b0:8080": hot, "b1:8080": _bundles("t/other", 2, 5 * MB, 500)})


def single_broker() -> ClusterState:
    """One broker: no load manager sheds with one broker or fewer."""
    return _scenario({"b0:8080": 0.99}, {"b0:8080": _bundles("t/ns", 8, 50 * MB, 5000)})


def with_system_namespaces() -> ClusterState:
    """A hot broker whose heaviest bundles are heartbeat / SLA-monitor / pulsar/system ones: never
    moved (``NamespaceService.isSystemServiceNamespace``)."""
    hot = {**_bundles("pulsar/b0:8080", 1, 300 * MB, 30000),
           **_bundles("pulsar/system", 1, 300 * MB, 30000),
           **_bundles("sla-monitor/c1/b0:8080", 1, 300 * MB, 30000),
           **_bundles("t/ns", 4, 10 * MB, 1000)}
    return _scenario({"b0:8080": 0.95, "b1:8080": 0.1, "b2:8080": 0.1},
                     {"b0:8080": hot, "b1:8080": _bundles("t/a", 2, 1 * MB, 100),
                      "b2:8080": _bundles("t/b", 2, 1 * MB, 100)})


SCENARIOS = {f.__name__: f for f in (balanced, skewed_overload, skewed_underload,
                                     single_hot_bundle, single_broker, with_system_namespaces)}


def hashed_names(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The bundle names whose Java ``String.hashCode`` the load data computes from now on (for
    ``HashMap`` order), in the order asked: a test of a path that should need no map order
    asserts this stays empty."""
    import lbctl.model.loaddata as loaddata

    hashed: list[str] = []
    real = loaddata.java_string_hash

    def counting(name: str) -> int:
        hashed.append(name)
        return real(name)

    monkeypatch.setattr(loaddata, "java_string_hash", counting)
    return hashed

"""The ``config`` and ``namespaces`` sections, validated once per distinct value on the driver.

A fleet repeats the same few configurations and namespace layouts in every snapshot, while their
rules are lbctl's richest (every known setting parsed with Pulsar's types; boundaries strictly
ascending over the whole hash range). So the native ingest collects the distinct values (as JSON
text, with a 64-bit key) and each is checked here by lbctl's own reader
(:func:`lbctl.sources.snapshot.parse_snapshot` on a snapshot holding just that section): the same
rules, by the same code. What comes back is a small table joined to every snapshot: whether the
section is valid, and what the rows need from it — the thresholds and resource weights the
snapshot's settings resolve to (:func:`lbctl.config.resolve`), the namespaces' bundle names and
boundaries.

A value whose JSON rendering Spark may have changed (a non-finite number, which Spark's variant
prints as the string ``"Infinity"``) is treated as invalid here, so its files go to lbctl's reader.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from lbctl.errors import LbctlError
from lbctl.model.bundle import format_position
from lbctl.model.wire.snapshot import FORMAT

MIBI = 1024 * 1024  # LoadManagerShared.MIBI: loadBalancerNamespaceBundleMaxBandwidthMbytes unit
_PROBE = {"format": FORMAT, "cluster": "probe", "capturedAt": 0, "brokers": {}}


@dataclass(frozen=True)
class ConfigInfo:
    """What a snapshot's settings resolve to, for the rows and the report."""

    overloaded_threshold: float
    split_max_topics: int
    split_max_sessions: int
    split_max_msg_rate: float
    split_max_bandwidth: float  # bytes/s
    weights: tuple[float, float, float, float]  # cpu, direct memory, bandwidth in, out


def config_info(config: Any, dynamic: Any = None) -> ConfigInfo:
    """Resolve a (validated) ``config`` mapping the way :mod:`lbctl.fleet.rows` does, with the
    snapshot's ``dynamicConfig`` over it (:func:`lbctl.config.resolve`'s dynamic layer: a value
    stored with ``update-dynamic-config`` is the one the brokers run). A snapshot that has one
    is read by lbctl's reader (:data:`lbctl.fleet.native.READER_SECTIONS`), so the distinct
    ``config`` values checked here alone come from snapshots without one."""
    from lbctl.config import resolve

    settings = resolve(config, dynamic_config=dynamic)
    return ConfigInfo(
        float(settings["loadBalancerBrokerOverloadedThresholdPercentage"]),
        int(settings["loadBalancerNamespaceBundleMaxTopics"]),
        int(settings["loadBalancerNamespaceBundleMaxSessions"]),
        float(settings["loadBalancerNamespaceBundleMaxMsgRate"]),
        float(settings["loadBalancerNamespaceBundleMaxBandwidthMbytes"]) * MIBI,
        settings.weights4(),
    )


def _probe(section: str, text: str) -> Any:
    """The ClusterState of a snapshot holding only this section, or None when it is invalid."""
    from lbctl.sources.snapshot import parse_snapshot

    if "Infinity" in text or "NaN" in text:
        return None
    try:
        value = orjson.loads(text)
        return parse_snapshot({**_PROBE, section: value}, "section")
    except (orjson.JSONDecodeError, LbctlError, RecursionError):
        return None


def check_config(text: str) -> ConfigInfo | None:
    st = _probe("config", text)
    if st is None:
        return None
    try:
        return config_info(st.config)
    except LbctlError:
        return None


@dataclass(frozen=True)
class NamespacesInfo:
    names: list[str]  # every bundle name of the listed namespaces
    listed: list[str]  # the listed namespaces
    bounds: dict[str, list[int]]  # namespace → boundaries


def check_namespaces(text: str) -> NamespacesInfo | None:
    st = _probe("namespaces", text)
    if st is None:
        return None
    names = []
    for ns, bounds in st.namespaces.items():
        txt = [format_position(b) for b in bounds]
        names += [f"{ns}/{a}_{b}" for a, b in zip(txt, txt[1:], strict=False)]
    return NamespacesInfo(names, list(st.namespaces), {k: list(v) for k, v in st.namespaces.items()})


def distinct_by_key(pairs: Iterable[tuple[int, str]]) -> dict[int, str | None]:
    """key → text; a key shared by two different texts (a hash collision) maps to None."""
    out: dict[int, str | None] = {}
    for key, text in pairs:
        if key in out and out[key] != text:
            out[key] = None
        else:
            out.setdefault(key, text)
    return out


def config_table(spark: Any, pairs: Iterable[tuple[int, str]]) -> Any:
    """A small DataFrame: config_key → validity, thresholds and weights."""
    rows: list[tuple[Any, ...]] = []
    for key, text in distinct_by_key(pairs).items():
        info = check_config(text) if text is not None else None
        if info is None:
            rows.append((key, False, None, None, None, None, None, None, None, None, None))
        else:
            rows.append((key, True, info.overloaded_threshold, info.split_max_topics,
                         info.split_max_sessions, info.split_max_msg_rate,
                         info.split_max_bandwidth, *info.weights))
    schema = ("config_key long, config_ok boolean, overloaded_threshold double, "
              "split_max_topics long, split_max_sessions long, split_max_msg_rate double, "
              "split_max_bandwidth double, w_cpu double, w_direct_memory double, "
              "w_bandwidth_in double, w_bandwidth_out double")
    return spark.createDataFrame(rows, schema)


def namespaces_table(spark: Any, pairs: Iterable[tuple[int, str]]) -> Any:
    """A small DataFrame: namespaces_key → validity, bundle names, listed namespaces, boundaries."""
    rows: list[tuple[Any, ...]] = []
    for key, text in distinct_by_key(pairs).items():
        info = check_namespaces(text) if text is not None else None
        if info is None:
            rows.append((key, False, [], [], {}))
        else:
            rows.append((key, True, info.names, info.listed, info.bounds))
    schema = ("namespaces_key long, namespaces_ok boolean, ns_names array<string>, "
              "ns_listed array<string>, ns_bounds map<string, array<bigint>>")
    return spark.createDataFrame(rows, schema)

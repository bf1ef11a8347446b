"""Scenario files of the living sandbox: a starting cluster and timed events (YAML).

::

    base: hot-broker          # a bundled scenario (lbctl sandbox --scenario), default hot-broker
    brokers: 4                # default: the base's
    hosts: mixed              # mixed (8/16/32 cores, lbctl.truth.hosts.mixed_fleet) or uniform
    seed: 1
    reconnectSeconds: 1       # clients look an unloaded bundle up again after this long
    events:
      - at: 0m                # cluster time since the start: 90s, 10m, 2h
        wave: {amplitude: 0.4, period: 24h}        # diurnal traffic wave over every namespace
      - at: 0m
        drift: {sigma: 0.05, every: 5m}  # every topic's traffic × a log-normal factor, repeatedly
      - at: 10m
        hotNamespace: {namespace: tenant-b/hot, bundles: 4, topics: 16,
                       msgRateIn: 4000, msgRateOut: 8000, throughputIn: 4e6, throughputOut: 8e6}
      - at: 15m
        burst: {namespace: public/default, factor: 3}    # a namespace's traffic × 3
      - at: 16m
        burst: {topic: persistent://public/default/t-3, factor: 10}
      - at: 20m
        crash: 1              # broker index (0 is the first) or id
      - at: 25m
        restart: 1
      - at: 27m
        join: {}              # a new broker (next host of the fleet); leave: 3 — a broker goes
      - at: 28m
        freeze: 2             # serves on but stops writing its load report; thaw: 2 ends it
      - at: 30m
        config: {loadBalancerSheddingEnabled: "false"}   # a dynamic update
      - at: 40m
        rollingRestart: {every: 2m}                      # each broker down and back in turn
      - at: 50m
        leader: {stuck: true}  # or skipEvery: 3, or deviate: {setting: value}

Every malformed entry is refused with one line naming it (:class:`TimelineError`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from lbctl.errors import UsageError
from lbctl.sandbox.life import Life, Wave
from lbctl.truth.hosts import Traffic

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}
KINDS = ("wave", "drift", "hotNamespace", "burst", "crash", "restart", "join", "leave", "config",
         "rollingRestart", "leader", "freeze", "thaw")


class TimelineError(UsageError):
    """A scenario file that cannot be run."""


def seconds(value: Any, where: str) -> float:
    """``90``, ``90s``, ``10m``, ``2h``, ``1d`` → seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    m = _DURATION.match(str(value))
    if m is None:
        raise TimelineError(f"{where}: expected a duration such as 90s, 10m or 2h, got {value!r}")
    return float(m.group(1)) * _UNITS[m.group(2)]


def read(path: Path) -> dict[str, Any]:
    """The scenario file's document (a mapping), or a one-line error. Read as snapshots are: a
    regular file only (a FIFO or ``/dev/zero`` would block forever), bounded in size, YAML bounded
    in depth and aliases, no key twice (:func:`lbctl.sources.snapshot_yaml.load_yaml`)."""
    from lbctl.errors import SnapshotError
    from lbctl.safe.files import read_regular
    from lbctl.sources.snapshot_yaml import load_yaml

    data = read_regular(str(path), what="a timeline file (YAML)", error=TimelineError)
    try:
        doc = load_yaml(str(path), data)
    except SnapshotError as e:
        raise TimelineError(str(e)) from None
    if not isinstance(doc, dict):
        raise TimelineError(f"{path}: expected a mapping with base, brokers, events")
    unknown = set(doc) - {"base", "brokers", "hosts", "seed", "reconnectSeconds", "events"}
    if unknown:
        raise TimelineError(f"{path}: unknown key(s) {', '.join(sorted(unknown))}")
    return doc


def schedule(life: Life, events: Any, origin: str = "events") -> int:
    """Put the scenario's events on ``life``'s clock (times from now); returns how many."""
    if events is None:
        return 0
    if not isinstance(events, list):
        raise TimelineError(f"{origin}: expected a list of events")
    start = life.now
    for i, ev in enumerate(events):
        where = f"{origin}[{i}]"
        if not isinstance(ev, dict) or "at" not in ev:
            raise TimelineError(f"{where}: expected a mapping with 'at' and one event")
        kinds = [k for k in ev if k != "at"]
        if len(kinds) != 1 or kinds[0] not in KINDS:
            raise TimelineError(f"{where}: expected one of {', '.join(KINDS)}")
        kind = kinds[0]
        at = start + seconds(ev["at"], f"{where}.at")
        action = _event(kind, ev[kind], f"{where}.{kind}", life, at)
        life.at(at, action)
    return len(events)


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise TimelineError(f"{where}: expected a mapping")
    return value


def _number(m: Mapping[str, Any], key: str, where: str, default: float) -> float:
    v = m.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int | float):
        try:
            return float(str(v))
        except ValueError:
            raise TimelineError(f"{where}.{key}: expected a number, got {v!r}") from None
    return float(v)


def _broker(life: Life, value: Any, where: str) -> str:
    ids = list(life.hosts)
    if isinstance(value, int) and not isinstance(value, bool):
        if 0 <= value < len(ids):
            return ids[value]
        raise TimelineError(f"{where}: broker index {value} out of range (0-{len(ids) - 1})")
    if isinstance(value, str) and value in ids:
        return value
    raise TimelineError(f"{where}: no broker {value!r}")


def _event(kind: str, value: Any, where: str, life: Life, at: float) -> Callable[[Life], None]:
    if kind == "wave":
        m = _mapping(value, where)
        wave = Wave(_number(m, "amplitude", where, 0.3), seconds(m.get("period", "24h"),
                                                                  f"{where}.period"), at)
        return lambda lf: setattr(lf, "wave", wave)
    if kind == "hotNamespace":
        m = _mapping(value, where)
        raw = m.get("namespace")
        if not isinstance(raw, str) or raw.count("/") != 1:
            raise TimelineError(f"{where}.namespace: expected tenant/namespace")
        ns = raw
        n_bundles = int(_number(m, "bundles", where, 4))
        n_topics = max(1, int(_number(m, "topics", where, 16)))
        rates = [_number(m, k, where, d) / n_topics for k, d in (
            ("msgRateIn", 1000.0), ("msgRateOut", 2000.0), ("throughputIn", 1e6),
            ("throughputOut", 2e6))]
        per = Traffic(rates[0], rates[1], rates[2], rates[3], topics=1, producers=1, consumers=1)
        return lambda lf: lf.add_namespace(ns, n_bundles, {
            f"persistent://{ns}/hot-{j}": per for j in range(n_topics)})
    if kind == "burst":
        m = _mapping(value, where)
        factor = _number(m, "factor", where, 2.0)
        if "topic" in m:
            topic = str(m["topic"])
            return lambda lf: lf.set_topic(topic, lf.topic_traffic.get(
                topic, Traffic(100.0, 100.0, 1e5, 1e5, 1, 1, 1)).scaled(factor))
        ns = str(m.get("namespace", ""))
        return lambda lf: lf.namespace_factor.__setitem__(
            ns, lf.namespace_factor.get(ns, 1.0) * factor)
    if kind == "drift":
        m = _mapping(value, where)
        sigma = _number(m, "sigma", where, 0.05)
        every = seconds(m.get("every", "5m"), f"{where}.every")
        if every <= 0:
            raise TimelineError(f"{where}.every: expected a duration above 0")

        def drift(lf: Life) -> None:
            lf.drift(sigma)
            lf.at(lf.now + every, drift)
        return drift
    if kind == "join":
        def join(lf: Life) -> None:
            lf.join()
        return join
    if kind in ("crash", "restart", "leave"):
        broker = _broker(life, value, where)
        # a broker leaving gracefully unloads its bundles first: for the clients, as a crash
        return (lambda lf: lf.restart(broker)) if kind == "restart" else (lambda lf: lf.crash(broker))
    if kind in ("freeze", "thaw"):
        broker = _broker(life, value, where)
        return (lambda lf: lf.freeze(broker)) if kind == "freeze" else (lambda lf: lf.thaw(broker))
    if kind == "config":
        from lbctl.config import SETTINGS_BY_NAME

        m = {str(k): str(v).lower() if isinstance(v, bool) else str(v)
             for k, v in _mapping(value, where).items()}
        unknown = sorted(k for k in m if k not in SETTINGS_BY_NAME)
        if unknown:
            raise TimelineError(f"{where}: unknown setting(s) {', '.join(unknown)}")
        return lambda lf: lf.cluster.dynamic.update(m)
    if kind == "rollingRestart":
        m = _mapping(value, where)
        every = seconds(m.get("every", "2m"), f"{where}.every")
        down = seconds(m.get("down", "30s"), f"{where}.down")

        def rolling(lf: Life) -> None:
            for j, b in enumerate(list(lf.hosts)):
                lf.at(lf.now + j * every, lambda x, b=b: x.crash(b))
                lf.at(lf.now + j * every + down, lambda x, b=b: x.restart(b))
        return rolling
    m = _mapping(value, where)  # leader

    def fault(lf: Life) -> None:
        if lf.leader is None:
            return
        f = lf.leader.fault
        if "stuck" in m:
            f.stuck = bool(m["stuck"])
        if "skipEvery" in m:
            f.skip_every = int(_number(m, "skipEvery", where, 0))
        if "deviate" in m:
            f.deviate = {str(k): str(v) for k, v in _mapping(m["deviate"], where).items()}
    return fault

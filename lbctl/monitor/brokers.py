"""What ``pulsar-perf monitor-brokers`` shows, computed from load reports (no I/O here).

``BrokerMonitor`` (``pulsar-testclient``'s ``BrokerMonitor``) reads ZooKeeper: each broker's
``LocalBrokerData`` and the leader's ``TimeAverageBrokerData``. Over REST only the load report is
served, so the SHORT and LONG rows are computed here with the leader's own rule
(``ModularLoadManagerImpl.updateBundleData``): every bundle a new report lists updates its
``BundleData`` — a short window of 10 samples and a long one of 1000, each
``TimeAverageMessageData.update`` (``x = ((n-1)·x + new)/n``, the first sample overwriting the
defaults) — and a broker's SHORT/LONG figures are the sums over its current bundles
(``TimeAverageBrokerData.reset``). One sample is taken per refresh for each broker whose report is
new (its ``lastUpdate`` moved), as the leader samples once per report it reads; so the figures
start equal to LATEST and smooth out over refreshes.

Per broker (the five rows of BrokerMonitor's modular table):

* SYSTEM: CPU %, MEMORY %, DIRECT %, BW IN %, BW OUT % (``ResourceUsage.percentUsage``, float32)
  and MAX % = ``LocalBrokerData.getMaxResourceUsage() × 100`` (JVM heap excluded, as in Pulsar);
* COUNT: topics, bundles, producers, consumers, bundle gains and losses of the last report;
* LATEST / SHORT / LONG: msg/s in, out, total and KB/s in, out, total (throughput / 1024).

A broker is *overloaded* when MAX % reaches ``loadBalancerBrokerOverloadedThresholdPercentage``
(``OverloadShedder``'s test). A broker that stops answering keeps its last figures, marked stale
with the error; one that leaves the active list is dropped ("Lost broker").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from lbctl.model.load import BundleData, LocalBrokerData, TimeAverageBrokerData

KB = 1024.0


@dataclass(frozen=True)
class Rates:
    """msg/s and bytes/s in and out (one of LATEST, SHORT, LONG)."""

    msg_in: float = 0.0
    msg_out: float = 0.0
    bytes_in: float = 0.0
    bytes_out: float = 0.0

    def row(self) -> tuple[float, float, float, float, float, float]:
        return (self.msg_in, self.msg_out, self.msg_in + self.msg_out,
                self.bytes_in / KB, self.bytes_out / KB, (self.bytes_in + self.bytes_out) / KB)


@dataclass(frozen=True)
class BrokerRow:
    """One broker on the monitor's screen."""

    broker: str
    state: str  # "ok" | "stale" | "unreachable"
    error: str | None = None
    cpu: float | None = None
    memory: float | None = None
    direct: float | None = None
    bw_in: float | None = None
    bw_out: float | None = None
    max: float | None = None  # percent
    overloaded: bool = False
    topics: int | None = None
    bundles: int | None = None
    producers: int | None = None
    consumers: int | None = None
    gains: int | None = None
    losses: int | None = None
    latest: Rates | None = None
    short: Rates | None = None
    long: Rates | None = None
    samples: int = 0
    last_update: int | None = None

    def record(self) -> dict[str, Any]:
        """The flat record of ``-o json|yaml|csv`` (column names for ``--sort``)."""
        rec: dict[str, Any] = {
            "broker": self.broker, "state": self.state, "error": self.error,
            "cpu": self.cpu, "memory": self.memory, "direct": self.direct,
            "bwIn": self.bw_in, "bwOut": self.bw_out, "max": self.max,
            "overloaded": self.overloaded,
            "topics": self.topics, "bundles": self.bundles, "producers": self.producers,
            "consumers": self.consumers, "bundleGains": self.gains, "bundleLosses": self.losses,
        }
        for label, rates in (("latest", self.latest), ("short", self.short), ("long", self.long)):
            vals = rates.row() if rates is not None else (None,) * 6
            for name, v in zip(("MsgRateIn", "MsgRateOut", "MsgRate", "KBIn", "KBOut", "KB"),
                               vals, strict=True):
                rec[label + name] = v
        rec["samples"] = self.samples
        rec["lastUpdate"] = self.last_update
        return rec


@dataclass
class Refresh:
    """One screenful: the rows, the threshold and when it was taken."""

    rows: list[BrokerRow]
    threshold: float  # percent
    at: int  # epoch ms
    cluster: str = ""
    warnings: list[str] = field(default_factory=list)

    def total(self) -> BrokerRow:
        ok = [r for r in self.rows if r.latest is not None]

        def s(attr: str) -> Rates:
            rs = [getattr(r, attr) for r in ok if getattr(r, attr) is not None]
            return Rates(sum(x.msg_in for x in rs), sum(x.msg_out for x in rs),
                         sum(x.bytes_in for x in rs), sum(x.bytes_out for x in rs))

        maxes = [r.max for r in ok if r.max is not None]
        return BrokerRow(
            "TOTAL", "ok", bundles=sum(r.bundles or 0 for r in ok),
            topics=sum(r.topics or 0 for r in ok), producers=sum(r.producers or 0 for r in ok),
            consumers=sum(r.consumers or 0 for r in ok), gains=sum(r.gains or 0 for r in ok),
            losses=sum(r.losses or 0 for r in ok), latest=s("latest"), short=s("short"),
            long=s("long"), max=max(maxes) if maxes else None)


class BrokerMonitor:
    """Keeps the time averages and the last good row of every broker across refreshes."""

    def __init__(self) -> None:
        self.bundle_data: dict[str, BundleData] = {}
        self.rows: dict[str, BrokerRow] = {}
        self._last_update: dict[str, int] = {}
        self._samples: dict[str, int] = {}

    def update(self, brokers: list[str], reports: Mapping[str, LocalBrokerData | str],
               threshold: float, at: int, cluster: str = "") -> Refresh:
        """Take one refresh: ``reports`` maps a broker to its report, or to its error message."""
        for gone in [b for b in self.rows if b not in brokers]:
            del self.rows[gone]  # "Lost broker"
        for b in brokers:
            rep = reports.get(b, "no load report")
            if isinstance(rep, str):
                prev = self.rows.get(b)
                self.rows[b] = (replace(prev, state="stale", error=rep) if prev is not None
                                else BrokerRow(b, "unreachable", rep))
                continue
            self._sample(b, rep)
            self.rows[b] = self._row(b, rep, threshold)
        return Refresh([self.rows[b] for b in brokers if b in self.rows], threshold, at, cluster)

    def _sample(self, broker: str, rep: LocalBrokerData) -> None:
        if self._last_update.get(broker) == rep.lastUpdate and broker in self._samples:
            return  # the same report again: the leader would not sample it twice
        self._last_update[broker] = rep.lastUpdate
        self._samples[broker] = self._samples.get(broker, 0) + 1
        for name, stats in rep.lastStats.items():
            data = self.bundle_data.get(name)
            self.bundle_data[name] = (BundleData.first_sample(stats) if data is None
                                      else data.update(stats))

    def _row(self, broker: str, rep: LocalBrokerData, threshold: float) -> BrokerRow:
        avg = TimeAverageBrokerData.of(rep.bundles or tuple(rep.lastStats), self.bundle_data)
        mx = rep.max_resource_usage() * 100
        return BrokerRow(
            broker, "ok", None,
            cpu=rep.cpu.percent, memory=rep.memory.percent, direct=rep.directMemory.percent,
            bw_in=rep.bandwidthIn.percent, bw_out=rep.bandwidthOut.percent, max=mx,
            overloaded=mx >= threshold,
            topics=rep.numTopics, bundles=rep.numBundles, producers=rep.numProducers,
            consumers=rep.numConsumers, gains=len(rep.lastBundleGains),
            losses=len(rep.lastBundleLosses),
            latest=Rates(rep.msgRateIn, rep.msgRateOut, rep.msgThroughputIn, rep.msgThroughputOut),
            short=Rates(avg.shortTermMsgRateIn, avg.shortTermMsgRateOut,
                        avg.shortTermMsgThroughputIn, avg.shortTermMsgThroughputOut),
            long=Rates(avg.longTermMsgRateIn, avg.longTermMsgRateOut,
                       avg.longTermMsgThroughputIn, avg.longTermMsgThroughputOut),
            samples=self._samples.get(broker, 0), last_update=rep.lastUpdate)


SORT_KEYS = tuple(BrokerRow("", "ok").record())


def sort_rows(rows: list[BrokerRow], key: str | None) -> list[BrokerRow]:
    """Sort by a record column (case-insensitive); numbers descending, names ascending, blanks last."""
    if not key:
        return rows
    from lbctl.config import closest
    from lbctl.errors import UsageError

    match = next((k for k in SORT_KEYS if k.lower() == key.lower().replace("-", "")), None)
    if match is None:
        hint = closest(key, SORT_KEYS)
        raise UsageError(f"unknown --sort column {key!r}" + (f" (did you mean {hint}?)" if hint else
                                                             f"; choose from {', '.join(SORT_KEYS)}"))
    recs = [(r, r.record()[match]) for r in rows]
    present = [x for x in recs if x[1] is not None]
    missing = [r for r, v in recs if v is None]
    numeric = all(isinstance(v, int | float) for _, v in present)
    present.sort(key=lambda x: x[1], reverse=numeric)
    return [r for r, _ in present] + missing

"""What ``pulsar-perf monitor-brokers`` shows, computed from load reports (no I/O here).

``BrokerMonitor`` (``pulsar-testclient``'s ``BrokerMonitor``) prints one of three per-broker views,
depending on the load manager a broker runs; each view here follows it:

* **modular** (``LocalBrokerData``): SYSTEM (CPU %, MEMORY %, DIRECT %, BW IN %, BW OUT % —
  ``ResourceUsage.percentUsage``, float32 — and MAX % = ``getMaxResourceUsage() × 100``, JVM heap
  excluded), COUNT (topics, bundles, producers, consumers, bundle gains and losses of the last
  report), LATEST / SHORT / LONG (msg/s in, out, total and KB/s in, out, total);
* **extensible** (``pulsar-perf monitor-brokers --extensions``: each broker's ``BrokerLoadData``):
  SYSTEM (MAX % = ``BrokerLoadData.maxResourceUsage × 100``), COUNT with only BUNDLE
  (``bundleCount``) filled, LATEST;
* **simple** (``SimpleLoadManagerImpl``'s ``LoadReport``): COUNT, RAW SYSTEM (the five
  ``systemResourceUsage`` percentages, MAX % of all five, JVM heap included), ALLOC SYSTEM (the
  resource quotas' allocated CPU, memory and bandwidth against the limits, ``100 · min(1, u/l)``;
  DIRECT blank), RAW MSG (message rates; KB/s from the bandwidth *usage*, as BrokerMonitor prints
  it) and ALLOC MSG (allocated message rates and bandwidth).

**SHORT and LONG** are the sums of the broker's bundles' short- (10 samples) and long-term (1000)
averages (``TimeAverageBrokerData.reset``). The leader keeps them in its metadata store, which
REST does not serve; so they are the **leader's** only when the source carries the leader's own
bundle data (a snapshot's ``bundleData``), and otherwise **lbctl's own**, sampled with the leader's
rule (``ModularLoadManagerImpl.updateBundleData``: ``x = ((n-1)·x + new)/n``, the first sample
overwriting the defaults) once per refresh for each broker whose report is new (its ``lastUpdate``
moved) — they start equal to LATEST and smooth out over refreshes. :attr:`Refresh.averages` says
which, and the views label them.

**OVERLOADED** uses the usage the load manager itself compares: for modular brokers the weighted
max resource usage (``getMaxResourceUsageWithWeight`` with the configured weights, as
``OverloadShedder`` and ``recommend``) at or above
``loadBalancerBrokerOverloadedThresholdPercentage``; for extensible brokers ``weightedMaxEMA``
above it (``TransferShedder.isOverLoaded``'s threshold test); for simple brokers the report's own
``overLoaded``. A broker that stops answering keeps its last figures, marked stale with the error;
one that leaves the active list is dropped ("Lost broker").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from msgspec import Struct

from lbctl.config import DYNAMIC_ORIGIN, Settings
from lbctl.model.brokerload import BrokerLoadData
from lbctl.model.load import BundleData, LocalBrokerData, TimeAverageBrokerData
from lbctl.model.loadreport import SimpleLoadReport
from lbctl.records import replace

KB = 1024.0
MODULAR_VIEW, EXTENSIBLE_VIEW, SIMPLE_VIEW = "modular", "extensible", "simple"
#: where SHORT/LONG came from
LEADER, LBCTL = "leader", "lbctl"

Report = LocalBrokerData | BrokerLoadData | SimpleLoadReport


class Rates(Struct, frozen=True):
    """msg/s and bytes/s in and out (one of LATEST, SHORT, LONG)."""

    msg_in: float = 0.0
    msg_out: float = 0.0
    bytes_in: float = 0.0
    bytes_out: float = 0.0

    def row(self) -> tuple[float, float, float, float, float, float]:
        return (self.msg_in, self.msg_out, self.msg_in + self.msg_out,
                self.bytes_in / KB, self.bytes_out / KB, (self.bytes_in + self.bytes_out) / KB)


_ALLOC_KEYS = ("allocCpu", "allocMemory", "allocDirect", "allocBwIn", "allocBwOut", "allocMax")


class BrokerRow(Struct, frozen=True):
    """One broker on the monitor's screen (a Struct: 200 are made a refresh, a frozen
    dataclass sets each of its 27 fields through ``object.__setattr__``)."""

    broker: str
    state: str  # "ok" | "stale" | "unreachable"
    error: str | None = None
    cpu: float | None = None
    memory: float | None = None
    direct: float | None = None
    bw_in: float | None = None
    bw_out: float | None = None
    max: float | None = None  # percent, as pulsar-perf's MAX %
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
    view: str = MODULAR_VIEW
    #: percent: the usage the load manager compares (modular: weighted max resource usage;
    #: extensible: weightedMaxEMA); None for simple brokers (their report says overLoaded)
    weighted: float | None = None
    #: simple brokers: ALLOC SYSTEM (cpu, memory, direct (blank), bw in, bw out, max) and ALLOC MSG
    alloc: tuple[float | None, ...] | None = None
    alloc_msg: Rates | None = None

    def record(self) -> dict[str, Any]:
        """The flat record of ``-o json|yaml|csv`` (column names for ``--sort``)."""
        rec: dict[str, Any] = {
            "broker": self.broker, "state": self.state, "error": self.error, "view": self.view,
            "cpu": self.cpu, "memory": self.memory, "direct": self.direct,
            "bwIn": self.bw_in, "bwOut": self.bw_out, "max": self.max,
            "weightedMax": self.weighted, "overloaded": self.overloaded,
            "topics": self.topics, "bundles": self.bundles, "producers": self.producers,
            "consumers": self.consumers, "bundleGains": self.gains, "bundleLosses": self.losses,
        }
        for label, rates in (("latest", self.latest), ("short", self.short), ("long", self.long),
                             ("alloc", self.alloc_msg)):
            vals = rates.row() if rates is not None else (None,) * 6
            for name, v in zip(("MsgRateIn", "MsgRateOut", "MsgRate", "KBIn", "KBOut", "KB"),
                               vals, strict=True):
                rec[label + name] = v
        alloc = self.alloc or (None,) * 6
        rec.update(zip(_ALLOC_KEYS, alloc, strict=True))
        rec["samples"] = self.samples
        rec["lastUpdate"] = self.last_update
        return rec


@dataclass
class Refresh:
    """One screenful: the rows, the threshold, when it was taken, and where SHORT/LONG came from
    (``averages``: :data:`LEADER` or :data:`LBCTL`, with ``averages_note``)."""

    rows: list[BrokerRow]
    threshold: float  # percent
    at: int  # epoch ms
    cluster: str = ""
    warnings: list[str] = field(default_factory=list)
    averages: str = LBCTL
    averages_note: str = ""
    #: where the threshold came from (:meth:`lbctl.config.Settings.origin`)
    threshold_origin: str = "default"

    @property
    def threshold_note(self) -> str:
        """``, dynamic config`` when the threshold is a value stored with
        ``update-dynamic-config`` (it beats broker.conf, and ``delete-dynamic-config`` is the way
        back), else nothing: the screens say where it came from only then."""
        return f", {DYNAMIC_ORIGIN}" if self.threshold_origin == DYNAMIC_ORIGIN else ""

    def total(self) -> BrokerRow:
        ok = [r for r in self.rows if r.latest is not None]

        def s(attr: str) -> Rates | None:
            rs = [getattr(r, attr) for r in ok if getattr(r, attr) is not None]
            if not rs:
                return None
            return Rates(sum(x.msg_in for x in rs), sum(x.msg_out for x in rs),
                         sum(x.bytes_in for x in rs), sum(x.bytes_out for x in rs))

        maxes = [r.max for r in ok if r.max is not None]
        weighted = [r.weighted for r in ok if r.weighted is not None]
        return BrokerRow(
            "TOTAL", "ok", bundles=sum(r.bundles or 0 for r in ok),
            topics=sum(r.topics or 0 for r in ok), producers=sum(r.producers or 0 for r in ok),
            consumers=sum(r.consumers or 0 for r in ok), gains=sum(r.gains or 0 for r in ok),
            losses=sum(r.losses or 0 for r in ok), latest=s("latest") or Rates(),
            short=s("short"), long=s("long"), alloc_msg=s("alloc_msg"),
            max=max(maxes) if maxes else None, weighted=max(weighted) if weighted else None)

    @property
    def views(self) -> set[str]:
        return {r.view for r in self.rows if r.state != "unreachable"}


class BrokerMonitor:
    """Keeps the time averages and the last good row of every broker across refreshes."""

    def __init__(self) -> None:
        self.bundle_data: dict[str, BundleData] = {}
        self.rows: dict[str, BrokerRow] = {}
        self._last_update: dict[str, int] = {}
        self._samples: dict[str, int] = {}

    def update(self, brokers: list[str], reports: Mapping[str, Report | str],
               settings: Settings | float, at: int, cluster: str = "",
               leader_data: Mapping[str, BundleData] | None = None) -> Refresh:
        """Take one refresh: ``reports`` maps a broker to its report, or to its error message.

        ``settings`` are the load-balancer settings in force (a bare number is taken as the
        overload threshold with every other setting at its default); ``leader_data`` is the
        leader's own bundle data when the source carries it (a snapshot's ``bundleData``)."""
        if not isinstance(settings, Settings):
            settings = Settings.defaults().with_values(
                loadBalancerBrokerOverloadedThresholdPercentage=int(settings))
        threshold = float(settings["loadBalancerBrokerOverloadedThresholdPercentage"])
        for gone in [b for b in self.rows if b not in brokers]:
            del self.rows[gone]  # "Lost broker"
        from_leader = from_lbctl = 0
        weights = settings.weights4()  # (the same for every broker)
        for b in brokers:
            rep = reports.get(b, "no load report")
            if isinstance(rep, str):
                prev = self.rows.get(b)
                self.rows[b] = (replace(prev, state="stale", error=rep) if prev is not None
                                else BrokerRow(b, "unreachable", rep))
                continue
            if isinstance(rep, LocalBrokerData):
                self._sample(b, rep)
                data = self._averaging_data(rep, leader_data)
                leader_n = sum(1 for x in (rep.bundles or rep.lastStats)
                               if leader_data is not None and x in leader_data)
                from_leader += leader_n
                from_lbctl += len(rep.bundles or rep.lastStats) - leader_n
                self.rows[b] = self._modular_row(b, rep, weights, threshold, data)
            elif isinstance(rep, BrokerLoadData):
                self.rows[b] = _extensible_row(b, rep, threshold)
            else:
                self.rows[b] = _simple_row(b, rep)
        averages, note = self._averages_note(from_leader, from_lbctl)
        return Refresh([self.rows[b] for b in brokers if b in self.rows], threshold, at, cluster,
                       averages=averages, averages_note=note,
                       threshold_origin=settings.origin(
                           "loadBalancerBrokerOverloadedThresholdPercentage"))

    def _averages_note(self, from_leader: int, from_lbctl: int) -> tuple[str, str]:
        samples = max(self._samples.values(), default=0)
        own = (f"lbctl's own averages over {samples} report(s) with the leader's rule (the "
               "leader's are in its metadata store, which REST does not serve)")
        if from_leader and not from_lbctl:
            return LEADER, "the leader's bundle data (the snapshot's bundleData)"
        if from_leader:
            return LEADER, (f"the leader's bundle data for {from_leader} bundle(s); {own} for the "
                            f"other {from_lbctl}")
        return LBCTL, own

    def _averaging_data(self, rep: LocalBrokerData,
                        leader: Mapping[str, BundleData] | None) -> Mapping[str, BundleData]:
        if not leader:
            return self.bundle_data
        return {**self.bundle_data, **{x: leader[x] for x in rep.lastStats if x in leader}}

    def _sample(self, broker: str, rep: LocalBrokerData) -> None:
        if self._last_update.get(broker) == rep.lastUpdate and broker in self._samples:
            return  # the same report again: the leader would not sample it twice
        self._last_update[broker] = rep.lastUpdate
        self._samples[broker] = self._samples.get(broker, 0) + 1
        for name, stats in rep.lastStats.items():
            data = self.bundle_data.get(name)
            self.bundle_data[name] = (BundleData.first_sample(stats) if data is None
                                      else data.update(stats))

    def _modular_row(self, broker: str, rep: LocalBrokerData,
                     weights: tuple[float, float, float, float], threshold: float,
                     data: Mapping[str, BundleData]) -> BrokerRow:
        avg = TimeAverageBrokerData.of(rep.bundles or tuple(rep.lastStats), data)
        usage = rep.max_resource_usage_with_weight(*weights)
        return BrokerRow(
            broker, "ok", None,
            cpu=rep.cpu.percent, memory=rep.memory.percent, direct=rep.directMemory.percent,
            bw_in=rep.bandwidthIn.percent, bw_out=rep.bandwidthOut.percent,
            max=rep.max_resource_usage() * 100, weighted=usage * 100,
            overloaded=usage >= threshold / 100.0,  # OverloadShedder's comparison
            topics=rep.numTopics, bundles=rep.numBundles, producers=rep.numProducers,
            consumers=rep.numConsumers, gains=len(rep.lastBundleGains),
            losses=len(rep.lastBundleLosses),
            latest=Rates(rep.msgRateIn, rep.msgRateOut, rep.msgThroughputIn, rep.msgThroughputOut),
            short=Rates(avg.shortTermMsgRateIn, avg.shortTermMsgRateOut,
                        avg.shortTermMsgThroughputIn, avg.shortTermMsgThroughputOut),
            long=Rates(avg.longTermMsgRateIn, avg.longTermMsgRateOut,
                       avg.longTermMsgThroughputIn, avg.longTermMsgThroughputOut),
            samples=self._samples.get(broker, 0), last_update=rep.lastUpdate)


def _extensible_row(broker: str, data: BrokerLoadData, threshold: float) -> BrokerRow:
    """``BrokerMonitor.printBrokerLoadData``."""
    pct = data.resource_percents()
    return BrokerRow(
        broker, "ok", None, cpu=pct["cpu"], memory=pct["memory"], direct=pct["directMemory"],
        bw_in=pct["bandwidthIn"], bw_out=pct["bandwidthOut"], max=data.maxResourceUsage * 100,
        weighted=data.weightedMaxEMA * 100,
        overloaded=data.weightedMaxEMA > threshold / 100.0,  # TransferShedder.isOverLoaded's
        bundles=data.bundleCount,
        latest=Rates(data.msgRateIn, data.msgRateOut, data.msgThroughputIn, data.msgThroughputOut),
        last_update=data.updatedAt, view=EXTENSIBLE_VIEW)


def _simple_row(broker: str, rep: SimpleLoadReport) -> BrokerRow:
    """``BrokerMonitor.printLoadReport``."""
    cpu, memory, direct, bw_in, bw_out = rep.raw_percents()
    a_cpu, a_mem, a_in, a_out = rep.allocated_percents()
    return BrokerRow(
        broker, "ok", None, cpu=cpu, memory=memory, direct=direct, bw_in=bw_in, bw_out=bw_out,
        max=rep.raw_max(), overloaded=rep.overLoaded, topics=rep.numTopics,
        bundles=rep.numBundles, producers=rep.numProducers, consumers=rep.numConsumers,
        gains=rep.bundleGains, losses=rep.bundleLosses,
        latest=Rates(rep.msgRateIn, rep.msgRateOut, rep.bandwidthIn.usage, rep.bandwidthOut.usage),
        last_update=rep.timestamp, view=SIMPLE_VIEW,
        alloc=(a_cpu, a_mem, None, a_in, a_out, max(max(max(a_cpu, a_mem), a_in), a_out)),
        alloc_msg=Rates(rep.allocatedMsgRateIn, rep.allocatedMsgRateOut,
                        rep.allocatedBandwidthIn, rep.allocatedBandwidthOut))


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

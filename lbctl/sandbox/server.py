"""A Pulsar-admin-compatible test cluster on loopback: several brokers, each on its own port, over one
shared cluster state.

It speaks real HTTP/1.1 (keep-alive, Content-Length bodies) from one asyncio loop in a background
thread, so hundreds of brokers cost one thread. It serves the admin v2 endpoints lbctl uses with
Pulsar's JSON shapes:

* ``GET /admin/v2/clusters``, ``/brokers/{cluster}``, ``/brokers/configuration/runtime``,
  ``/brokers/configuration/values`` (:meth:`TestCluster.set_dynamic`),
  ``/brokers/leaderBroker`` and ``/brokers/version``;
* ``GET /admin/v2/broker-stats/load-report`` (the receiving broker's ``LocalBrokerData``),
  ``/broker-stats/topics`` (its topics, nested namespace → bundle → persistent → topic) and
  ``/broker-stats/metrics`` (Pulsar's list of ``{"dimensions", "metrics"}``: the load manager's
  ``brk_lb_*`` usage percentages, as 32-bit floats, among other entries);
* ``GET /admin/v2/tenants``, ``/namespaces/{tenant}``, ``/namespaces/{t}/{ns}/bundles``;
* ``PUT /admin/v2/namespaces/{t}/{ns}/unload`` and ``…/{bundle}/unload[?destinationBroker=]``:
  ownership moves (to the destination, else to the next broker); a bundle operation that reaches a
  broker that does not own the bundle is answered ``307`` with the same path and query on the owner,
  as ``PulsarWebResource.validateNamespaceBundleOwnership`` does;
* ``GET /metrics``: Pulsar's Prometheus endpoint (:mod:`lbctl.sandbox.metrics`);
* placement data beside load (:meth:`TestCluster._route_placement`):
  ``GET /admin/v2/clusters/{cluster}/namespaceIsolationPolicies`` and ``…/failureDomains``,
  ``GET /admin/v2/namespaces/{t}/{ns}/antiAffinity`` and ``…/topics?mode=``, the persistent and
  non-persistent ``…/partitioned`` lists and ``…/{topic}/partitions``, and
  ``GET /admin/v2/brokers/version``; a broker may serve ``SimpleLoadManagerImpl``'s ``LoadReport``
  (:attr:`BrokerState.simple_lm`);
* ``PUT …/{bundle}/split?unload=&splitAlgorithmName=`` with an optional JSON array of positions:
  ``range_equally_divide`` and ``specified_positions_divide`` change the namespace's boundaries and
  share the bundle's load among the new bundles.

In **extensible mode** (:meth:`TestCluster.set_extensible`) the cluster runs the extensible load
manager as far as REST can tell: the runtime configuration names ``ExtensibleLoadManagerImpl``,
``load-report`` answers 500 (``ExtensibleLoadManagerWrapper`` has no load report) and the metrics
add ``BrokerLoadData.toMetrics``' ``brk_lb_resource_usage`` entries with ``feature=max_ema`` (the
broker's ``weightedMaxEMA``: :attr:`BrokerState.ema`, else its weighted max) and ``feature=max``.

Bearer tokens are checked when ``tokens`` is set (unknown → 401 with a servlet-style HTML page,
known but not super-user → 403 ``{"reason": …}``). Faults are injected per rule (:class:`Fault`):
a status with a reason, extra latency, a hang longer than the client's timeout, or a dropped
connection. Every request is logged (:attr:`TestCluster.log`) with whether it carried the token.
"""

from __future__ import annotations

import asyncio
import json
import re
import struct
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, parse_qsl, unquote, urlsplit

from lbctl.admin.client import SANDBOX_CLOCK_HEADER
from lbctl.sandbox.clock import Clock, RunningClock
from lbctl.sandbox.operations import OperationsMixin

if TYPE_CHECKING:
    from lbctl.sandbox.life import Life
    from lbctl.sandbox.prometheus import Store

#: an HTTP answer: status, body, content type, extra headers
Response = tuple[int, bytes, str, dict[str, str]]

FULL = 0xFFFFFFFF
SUPPORTED_SPLIT = ("range_equally_divide", "specified_positions_divide")
EXTENSIBLE_LM = "org.apache.pulsar.broker.loadbalance.extensions.ExtensibleLoadManagerImpl"
TRANSFER_SHEDDER = "org.apache.pulsar.broker.loadbalance.extensions.scheduler.TransferShedder"
IMPL_SIMPLE = "org.apache.pulsar.broker.loadbalance.impl.SimpleLoadManagerImpl"


def _f32(x: float) -> float:
    value: float = struct.unpack("<f", struct.pack("<f", x))[0]
    return value


def percent_usage(pair: tuple[float, float]) -> float:
    """Java's ``ResourceUsage.percentUsage()``: float division, times 100 in float."""
    usage, limit = pair
    return _f32(_f32(_f32(usage) / _f32(limit)) * 100.0) if limit > 0 else 0.0


def java_float(x: float) -> float:
    """The shortest decimal that reads back as the same float, as Jackson writes a ``Float``."""
    for digits in range(1, 10):
        v = float(f"{x:.{digits}g}")
        if _f32(v) == x:
            return v
    return x


@dataclass
class Fault:
    """Answer requests matching ``path`` (a regex on the path) with a fault.

    ``kind``: ``"status"`` (``status`` + ``reason`` JSON), ``"latency"`` (``seconds`` more, then
    normal), ``"hang"`` (never answer in time), ``"drop"`` (close the connection), ``"redirect"``
    (``status``, e.g. 307, with ``Location: location``). ``broker`` limits
    it to one broker id, ``method`` to one method, ``times`` to that many matches (None: always).
    """

    path: str
    kind: str = "status"
    status: int = 500
    reason: str = "Internal error"
    seconds: float = 0.0
    broker: str | None = None
    method: str | None = None
    times: int | None = None
    html: bool = False
    location: str = ""

    def matches(self, broker: str, method: str, path: str) -> bool:
        return ((self.broker is None or self.broker == broker)
                and (self.method is None or self.method == method)
                and re.search(self.path, path) is not None
                and (self.times is None or self.times > 0))


@dataclass
class LoggedRequest:
    broker: str
    method: str
    path: str
    query: dict[str, str]
    body: bytes
    authorization: str | None
    status: int = 0


@dataclass
class BrokerState:
    cpu: tuple[float, float] = (10.0, 100.0)
    memory: tuple[float, float] = (1000.0, 4096.0)
    direct: tuple[float, float] = (100.0, 1024.0)
    bw_in: tuple[float, float] = (1000.0, 1e7)
    bw_out: tuple[float, float] = (1000.0, 1e7)
    gains: list[str] = field(default_factory=list)
    losses: list[str] = field(default_factory=list)
    latency: float = 0.0
    ema: float | None = None  # extensible mode: the broker's published weightedMaxEMA
    # placement data beside load (see TestCluster._route_placement)
    version: str = "4.2.5"  # brokerVersionString: the newest release lbctl models
    lm_class: str | None = None  # this broker's loadManagerClassName (None: the cluster's)
    persistent: bool = True  # persistentTopicsEnabled
    non_persistent: bool = True  # nonPersistentTopicsEnabled
    simple_lm: bool = False  # serves SimpleLoadManagerImpl's LoadReport as its load report


def fmt(pos: int) -> str:
    return f"0x{pos:08x}"


class TestCluster(OperationsMixin):
    """The shared state of the cluster and the servers of its brokers (lookups, ownership after
    unload, dynamic configuration and chosen faults: :mod:`lbctl.sandbox.operations`)."""

    __test__ = False  # not a pytest test class

    def __init__(self, cluster: str = "test-cluster", *, tokens: dict[str, str] | None = None):
        self.cluster = cluster
        self.tokens = tokens  # token → "admin" | "user"
        self.brokers: dict[str, BrokerState] = {}
        self.namespaces: dict[str, list[int]] = {}
        self.owners: dict[str, str] = {}  # full bundle name → broker id
        self.stats: dict[str, dict[str, float]] = {}  # full bundle name → NamespaceBundleStats
        self.topics: dict[str, dict[str, Any]] = {}  # topic → stats (rates, counts)
        self.config: dict[str, str] = {
            "clusterName": cluster,
            "loadManagerClassName": "org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl",
            "loadBalancerBrokerOverloadedThresholdPercentage": "85",
            "loadBalancerLoadSheddingStrategy":
                "org.apache.pulsar.broker.loadbalance.impl.ThresholdShedder",
            # a secret every real broker has; lbctl must never copy it anywhere
            "brokerClientAuthenticationParameters": "token:BROKER-CLIENT-SECRET",
            "tokenSecretKey": "data:;base64,U0VDUkVULUtFWQ==",
        }
        self.extensible = False
        # placement data beside load, served by _route_placement
        self.isolation_policies: dict[str, Any] = {}  # policy name → NamespaceIsolationData
        self.failure_domains: dict[str, list[str]] = {}  # domain → broker ids
        self.anti_affinity: dict[str, str] = {}  # namespace → group
        self.idle_topics: list[str] = []  # topics in metadata that no broker has loaded
        self.partitioned: dict[str, int] = {}  # partitioned topic → partitions
        self.faults: list[Fault] = []
        self.log: list[LoggedRequest] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._servers: list[asyncio.base_events.Server] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._port_broker: dict[int, str] = {}
        #: cluster time (a living sandbox may run it faster, or step it: lbctl.sandbox.clock)
        self.clock: Clock = RunningClock()
        #: the living part, once attached (lbctl.sandbox.life); None: fixed figures
        self.life: Life | None = None
        #: the Prometheus beside it, once :meth:`keep_scraping` starts it (lbctl.sandbox.prometheus)
        self.prometheus: Store | None = None
        self._ops_init()

    # ---- lifecycle ----------------------------------------------------------------------------
    def start(self, n_brokers: int, *, latency: float = 0.0, port: int = 0) -> list[str]:
        """Listen on ``n_brokers`` loopback ports (any free ones, or ``port``, ``port + 1``, …);
        returns the broker ids (``127.0.0.1:port``). A port that cannot be bound raises
        ``OSError`` here, and any other failure to listen (a port past 65535:
        ``OverflowError``) is raised here too, rather than left in the loop's thread while this
        waits for a readiness that never comes."""
        ready = threading.Event()
        failed: list[BaseException] = []
        self._loop = asyncio.new_event_loop()

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            try:
                self._loop.run_until_complete(self._listen(n_brokers, latency, port))  # type: ignore[union-attr]
            except Exception as e:  # handed to the caller, below
                failed.append(e)
                ready.set()
                return
            ready.set()
            self._loop.run_forever()  # type: ignore[union-attr]

        self._thread = threading.Thread(target=run, name="pulsar-test-cluster", daemon=True)
        self._thread.start()
        ready.wait(30)
        if failed:
            self._thread.join(5)
            for srv in self._servers:
                srv.close()
            self._loop.close()
            self._loop = None
            raise failed[0]
        return list(self.brokers)

    async def _listen(self, n: int, latency: float, first_port: int = 0) -> None:
        for i in range(n):
            srv = await asyncio.start_server(self._serve_conn, "127.0.0.1",
                                             first_port + i if first_port else 0, backlog=1024)
            port = srv.sockets[0].getsockname()[1]
            bid = f"127.0.0.1:{port}"
            self.brokers[bid] = BrokerState(latency=latency)
            self._servers.append(srv)
            self._port_broker[port] = bid

    def add_broker(self) -> str:
        """A broker joins: it listens on a new loopback port (bound here, served by the loop)
        and joins the broker list; returns its id."""
        import socket

        loop = self._loop
        if loop is None:
            raise RuntimeError("the cluster is not started")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen(1024)
        port = sock.getsockname()[1]
        bid = f"127.0.0.1:{port}"
        self.brokers[bid] = BrokerState()
        self._port_broker[port] = bid

        async def serve() -> None:
            self._servers.append(await asyncio.start_server(self._serve_conn, sock=sock))

        def schedule() -> None:
            self._tasks.add(loop.create_task(serve()))

        loop.call_soon_threadsafe(schedule)
        return bid

    def stop(self) -> None:
        loop = self._loop
        if loop is None:
            return

        async def shutdown() -> None:
            for s in self._servers:
                s.close()
            for t in list(self._tasks):
                t.cancel()
            await asyncio.sleep(0)

        asyncio.run_coroutine_threadsafe(shutdown(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(10)
        loop.close()
        self._loop = None

    def keep_alive(self) -> None:
        """Run the living part on the running clock: :meth:`Life.advance` from the server's
        loop, a few times per second (at least every 5 cluster seconds, the report cadence)."""
        life, loop = self.life, self._loop
        if life is None or loop is None or self.clock.speed <= 0:
            return
        period = min(0.25, 5.0 / self.clock.speed)

        def tick() -> float:
            life.advance(budget=0.5 * period + 0.05)
            return period

        self._repeat(loop, "", tick, retry=period, first=period)

    def _repeat(self, loop: asyncio.AbstractEventLoop, label: str, step: Callable[[], float],
                retry: float, first: float = 0.0) -> None:
        """Run ``step`` on the server's loop, after ``first`` seconds and then after as many as
        it returns, until the loop stops. A step that raises is printed (``lbctl sandbox:
        LABEL…``) and the next runs ``retry`` seconds later: a bug must show, not stop the
        cluster."""

        async def run() -> None:
            wait = first
            while True:
                await asyncio.sleep(wait)
                try:
                    wait = step()
                except Exception as e:
                    sys.stderr.write(f"lbctl sandbox: {label}{type(e).__name__}: {e}\n")
                    wait = retry

        def schedule() -> None:
            self._tasks.add(loop.create_task(run()))

        loop.call_soon_threadsafe(schedule)

    def keep_scraping(self, interval: float | None = None) -> Store:
        """Start the Prometheus beside the cluster (:mod:`lbctl.sandbox.prometheus`): a scrape of
        every broker's ``/metrics`` now and every ``interval`` wall seconds (default
        ``SCRAPE_INTERVAL``; longer when a scrape takes more than a twentieth of it), answered on
        every broker's port at ``/api/v1/…``."""
        from lbctl.sandbox.prometheus import SCRAPE_INTERVAL, Store

        store = self.prometheus = Store()
        loop = self._loop
        every = SCRAPE_INTERVAL if interval is None else interval
        if loop is None:
            return store

        def scrape() -> float:
            took = time.perf_counter()
            store.scrape(self)
            # a scrape of thousands of bundles takes a second or more: at most 1/20 of the
            # time goes to scraping, as a Prometheus whose scrapes run long falls behind
            return max(every, 20 * (time.perf_counter() - took))

        self._repeat(loop, "prometheus: ", scrape, retry=every)
        return store

    @property
    def admin_url(self) -> str:
        return f"http://{next(iter(self.brokers))}"

    def url(self, broker: str) -> str:
        return f"http://{broker}"

    # ---- state helpers ----------------------------------------------------------------------
    def set_dynamic(self, **config: str) -> None:
        """Settings as ``pulsar-admin brokers update-dynamic-config`` leaves them: listed by
        ``/brokers/configuration/values`` and in force in the runtime configuration."""
        with self._lock:
            self.dynamic.update(config)
            self.config.update(config)

    def set_extensible(self, **config: str) -> None:
        """Run the extensible load manager (see the module docstring); ``config`` adds runtime
        settings."""
        self.extensible = True
        self.config["loadManagerClassName"] = EXTENSIBLE_LM
        self.config["loadBalancerLoadSheddingStrategy"] = TRANSFER_SHEDDER
        self.config.update(config)

    def metrics(self, broker: str) -> list[dict[str, Any]]:
        """``/broker-stats/metrics`` of one broker: a JVM entry, the load-balancing entries and,
        in extensible mode, ``BrokerLoadData.toMetrics``' features."""
        st = self.brokers[broker]
        pct = {k: percent_usage(v) for k, v in (("cpu", st.cpu), ("memory", st.memory),
                                                 ("direct", st.direct), ("in", st.bw_in),
                                                 ("out", st.bw_out))}
        dims = {"broker": broker.split(":")[0], "metric": "loadBalancing"}
        out: list[dict[str, Any]] = [
            {"dimensions": {}, "metrics": {"brk_ml_cache_evictions": 0, "jvm_heap_used": 1.0e9}},
            {"dimensions": dict(dims), "metrics": {
                "brk_lb_cpu_usage": java_float(pct["cpu"]),
                "brk_lb_memory_usage": java_float(pct["memory"]),
                "brk_lb_directMemory_usage": java_float(pct["direct"]),
                "brk_lb_bandwidth_in_usage": java_float(pct["in"]),
                "brk_lb_bandwidth_out_usage": java_float(pct["out"])}},
        ]
        life = self.life
        if not self.extensible and life is not None and life.leader is not None \
                and broker == life.leader.broker():
            # the living leader's own unload counters (ModularLoadManagerImpl
            # .updateBundleUnloadingMetrics: only its doLoadShedding raises them)
            out.append({"dimensions": {"metric": "bundleUnloading"}, "metrics": {
                "brk_lb_unload_broker_count": life.counters.unload_broker,
                "brk_lb_unload_bundle_count": life.counters.unload_bundle}})
        if self.extensible:
            max_usage = max(pct["cpu"], pct["direct"], pct["in"], pct["out"]) / 100
            # default weights: CPU and bandwidth 1, heap and direct memory 0
            ema = st.ema if st.ema is not None else max(pct["cpu"], pct["in"], pct["out"]) / 100
            out += [{"dimensions": {**dims, "feature": "max_ema"},
                     "metrics": {"brk_lb_resource_usage": ema}},
                    {"dimensions": {**dims, "feature": "max"},
                     "metrics": {"brk_lb_resource_usage": max_usage}},
                    {"dimensions": {"broker": dims["broker"], "metric": "bundleUnloading"},
                     "metrics": {"brk_lb_unload_broker_total": 0,
                                 "brk_lb_unload_bundle_total": 0}}]
            if life is not None and life.leader is not None and broker == life.leader.broker():
                # the leader's UnloadCounter.toMetrics (only the leader's UnloadScheduler
                # publishes it): the totals count admin unloads too, the breakdown's reason
                # label tells them (Success/Admin) from its own decisions
                n = life.counters
                admin = n.admin.get(broker, 0)
                out[-1]["metrics"] = {"brk_lb_unload_broker_total": n.unload_broker + admin,
                                      "brk_lb_unload_bundle_total": n.unload_bundle + admin}
                for reason in ("Overloaded", "Underloaded", "Admin"):
                    count = admin if reason == "Admin" else n.reasons.get(reason, 0)
                    out.append({"dimensions": {"broker": dims["broker"],
                                               "metric": "bundleUnloading",
                                               "result": "Success", "reason": reason},
                                "metrics": {"brk_lb_unload_broker_breakdown_total": count}})
        return out

    def add_namespace(self, namespace: str, boundaries: list[int]) -> list[str]:
        self.namespaces[namespace] = list(boundaries)
        return [f"{namespace}/{fmt(a)}_{fmt(b)}" for a, b in zip(boundaries, boundaries[1:], strict=False)]

    def ranges(self, namespace: str) -> list[str]:
        b = self.namespaces[namespace]
        return [f"{fmt(x)}_{fmt(y)}" for x, y in zip(b, b[1:], strict=False)]

    @staticmethod
    def _zero() -> dict[str, float]:
        return {"msgRateIn": 0.0, "msgThroughputIn": 0.0, "msgRateOut": 0.0, "msgThroughputOut": 0.0,
                "consumerCount": 0, "producerCount": 0, "topics": 0, "cacheSize": 0}

    def own(self, bundle: str, broker: str, **stats: float) -> None:
        self.owners[bundle] = broker
        if self.life is not None:
            self.life.ownership_changed()
        base = self._zero()
        base.update(stats)
        self.stats[bundle] = base

    def bundles_of(self, broker: str) -> list[str]:
        return [b for b, o in self.owners.items() if o == broker]

    def requests(self, method: str | None = None, path: str | None = None) -> list[LoggedRequest]:
        return [r for r in self.log if (method is None or r.method == method)
                and (path is None or re.search(path, r.path))]

    def load_report(self, broker: str) -> dict[str, Any]:
        """The broker's ``LocalBrokerData`` as the modular load manager serialises it (a living
        sandbox: as the broker last wrote it, :mod:`lbctl.sandbox.life`)."""
        if self.life is not None:
            written = self.life.report(broker)
            if written is not None:
                return written
        return self.fresh_report(broker)

    #: serve ``/broker-stats/load-report`` as last written (the leader's view: the tests that
    #: replay an export into the leader's decisions, and lbctl watch's, judge against it) rather
    #: than refreshed as Pulsar's endpoint does (:meth:`served_report`), which ``lbctl sandbox``
    #: serves unless ``--reports-as-written``
    reports_as_written: bool = True

    def served_report(self, broker: str) -> dict[str, Any]:
        """``GET /broker-stats/load-report`` as Pulsar answers it:
        ``ModularLoadManagerWrapper.generateLoadReport`` runs
        ``ModularLoadManagerImpl.updateLocalBrokerData``, which refreshes the broker's
        ``LocalBrokerData`` with its bundles now (``LocalBrokerData.update``: bundles, lastStats,
        totals, the gains and losses since the last write) and its usage (the host's last
        sample, written or not) but leaves ``lastUpdate`` at the last write to the metadata store
        — so a split or a move shows at once, and a broker that stopped writing still shows how
        old its report is. Served as written
        (:attr:`reports_as_written`), a split leaves the parent bundle in the owner's report for
        up to ``loadBalancerReportUpdateMaxIntervalMinutes``: every live read leaves the
        namespace out, and drain and apply find all its bundles gone."""
        written = self.life.report(broker) if self.life is not None else None
        if written is None:
            return self.fresh_report(broker)
        if self.reports_as_written:
            return written
        assert self.life is not None
        u = self.life.sampled.get(broker)
        usage = None if u is None else tuple(
            (r.usage, r.limit) for r in (u.cpu, u.memory, u.direct_memory, u.bandwidth_in,
                                         u.bandwidth_out))
        return self.fresh_report(broker, written["lastUpdate"], usage=usage)

    def fresh_report(self, broker: str, at_ms: int | None = None,
                     usage: tuple[tuple[float, float], ...] | None = None) -> dict[str, Any]:
        """The broker's ``LocalBrokerData`` from its figures now (``lastUpdate``: ``at_ms``,
        else the cluster's clock; ``usage``: cpu, memory, direct memory, bandwidth in and out as
        (usage, limit), else the broker's last written)."""
        st = self.brokers[broker]
        cpu, memory, direct, bw_in, bw_out = usage or (st.cpu, st.memory, st.direct, st.bw_in,
                                                       st.bw_out)
        # every broker owns its heartbeat namespace's bundle (pulsar/<cluster>/<broker id>)
        heartbeat = f"pulsar/{self.cluster}/{broker}/0x00000000_0xffffffff"
        bundles = [*self.bundles_of(broker), heartbeat]
        last = {b: dict(self.stats.get(b) or self._zero()) for b in bundles}

        def ru(p: tuple[float, float]) -> dict[str, float]:
            return {"usage": p[0], "limit": p[1]}

        def pct(p: tuple[float, float]) -> float:
            return p[0] / p[1] * 100 if p[1] > 0 else 0.0

        def total(k: str) -> float:
            return float(sum(s[k] for s in last.values()))
        host, port = broker.split(":")
        return {
            "webServiceUrl": f"http://{broker}",
            "pulsarServiceUrl": f"pulsar://{host}:6650",
            "persistentTopicsEnabled": st.persistent,
            "nonPersistentTopicsEnabled": st.non_persistent,
            "cpu": ru(cpu), "memory": ru(memory), "directMemory": ru(direct),
            "bandwidthIn": ru(bw_in), "bandwidthOut": ru(bw_out),
            "msgThroughputIn": total("msgThroughputIn"), "msgThroughputOut": total("msgThroughputOut"),
            "msgRateIn": total("msgRateIn"), "msgRateOut": total("msgRateOut"),
            "lastUpdate": int(self.clock.now() * 1000) if at_ms is None else at_ms,
            "lastStats": last,
            "numTopics": int(total("topics")), "numBundles": len(bundles),
            "numConsumers": int(total("consumerCount")), "numProducers": int(total("producerCount")),
            "bundles": bundles,
            "lastBundleGains": list(st.gains), "lastBundleLosses": list(st.losses),
            "brokerVersionString": st.version,
            "protocols": {}, "advertisedListeners": {},
            "loadManagerClassName": self.broker_lm_class(broker),
            "startTimestamp": 1700000000000,
            "maxResourceUsage": max(pct(cpu), pct(direct), pct(bw_in), pct(bw_out)) / 100,
            "loadReportType": "LocalBrokerData",
        }

    # ---- placement data beside load ------------------------------------------------------------
    def broker_lm_class(self, broker: str) -> str:
        """The broker's ``loadManagerClassName``: its own during a migration, else the cluster's."""
        return self.brokers[broker].lm_class or self.config["loadManagerClassName"]

    def namespace_topics(self, namespace: str) -> list[str]:
        """``NamespaceService.getListOfTopics(ALL)``: the loaded topics and the idle ones listed
        in metadata, persistent first (each list in name order). A living cluster's topics are
        its life's (``Life.attach`` moves the scenario's topic stats there): without them a living
        sandbox listed none, and ``split-bundle -bt LARGEST`` found no bundle."""
        loaded = self.life.all_topics() if self.life is not None else self.topics
        names = {t for t in [*loaded, *self.idle_topics]
                 if t.split("://", 1)[-1].startswith(namespace + "/")}
        return (sorted(t for t in names if t.startswith("persistent://"))
                + sorted(t for t in names if t.startswith("non-persistent://")))

    def _route_placement(self, broker: str, method: str, seg: list[str],
                         query: dict[str, str]) -> Response | None:
        """The admin GETs that serve policies, topic lists, partitioned metadata and a broker's
        version; ``None`` for any other request."""
        def ok(obj: Any) -> Response:
            return 200, json.dumps(obj).encode(), "application/json", {}

        if len(seg) == 3 and seg[0] == "clusters" and seg[2] in ("namespaceIsolationPolicies",
                                                                 "failureDomains"):
            if seg[1] != self.cluster:
                return 404, json.dumps({"reason": "Cluster does not exist"}).encode(), \
                    "application/json", {}
            if seg[2] == "failureDomains":
                return ok({d: {"brokers": b} for d, b in self.failure_domains.items()})
            return ok(self.isolation_policies)
        if seg == ["brokers", "version"]:  # a Java String, written as is
            return 200, self.brokers[broker].version.encode(), "application/json", {}
        if len(seg) == 4 and seg[0] == "namespaces" and seg[3] in ("antiAffinity", "topics"):
            ns = f"{seg[1]}/{seg[2]}"
            if ns not in self.namespaces:
                return 404, json.dumps({"reason": "Namespace does not exist"}).encode(), \
                    "application/json", {}
            if seg[3] == "antiAffinity":
                group = self.anti_affinity.get(ns)
                return (200, group.encode(), "application/json", {}) if group else \
                    (204, b"", "", {})
            mode = query.get("mode", "PERSISTENT")
            every = self.namespace_topics(ns)
            if mode == "PERSISTENT":
                every = [t for t in every if t.startswith("persistent://")]
            elif mode == "NON_PERSISTENT":
                every = [t for t in every if t.startswith("non-persistent://")]
            return ok(every)
        if len(seg) == 4 and seg[0] in ("persistent", "non-persistent") and seg[3] == "partitioned":
            prefix = f"{seg[0]}://{seg[1]}/{seg[2]}/"
            return ok(sorted(t for t in self.partitioned if t.startswith(prefix)))
        if len(seg) == 5 and seg[0] in ("persistent", "non-persistent") and seg[4] == "partitions":
            topic = f"{seg[0]}://{seg[1]}/{seg[2]}/{seg[3]}"
            return ok({"partitions": self.partitioned.get(topic, 0), "deleted": False})
        return None

    def simple_load_report(self, broker: str) -> dict[str, Any]:
        """``SimpleLoadManagerImpl``'s ``LoadReport`` (``loadReportType`` "LoadReport"): its
        ``systemResourceUsage``, ``bundleStats``, gains and losses, and the allocated and
        pre-allocated figures of its resource quotas (here: 80 % of the latest rates)."""
        st = self.brokers[broker]
        local = self.load_report(broker)

        def ru(p: tuple[float, float]) -> dict[str, float]:
            return {"usage": p[0], "limit": p[1]}

        usage = {"cpu": ru(st.cpu), "memory": ru(st.memory), "directMemory": ru(st.direct),
                 "bandwidthIn": ru(st.bw_in), "bandwidthOut": ru(st.bw_out)}
        return {
            "name": f"http://{broker}", "brokerVersionString": st.version,
            "webServiceUrl": f"http://{broker}", "pulsarServiceUrl": local["pulsarServiceUrl"],
            "persistentTopicsEnabled": st.persistent,
            "nonPersistentTopicsEnabled": st.non_persistent,
            "timestamp": local["lastUpdate"], "lastUpdate": local["lastUpdate"],
            "msgRateIn": local["msgRateIn"], "msgRateOut": local["msgRateOut"],
            "msgThroughputIn": local["msgThroughputIn"], "msgThroughputOut": local["msgThroughputOut"],
            "numTopics": local["numTopics"], "numConsumers": local["numConsumers"],
            "numProducers": local["numProducers"], "numBundles": local["numBundles"],
            "protocols": {}, "loadManagerClassName": IMPL_SIMPLE, "startTimestamp": 1700000000000,
            "systemResourceUsage": usage, **usage,
            "bundleStats": local["lastStats"],
            "bundleGains": local["lastBundleGains"], "bundleLosses": local["lastBundleLosses"],
            "allocatedCPU": st.cpu[0] * 0.8, "allocatedMemory": st.memory[0] * 0.8,
            "allocatedBandwidthIn": st.bw_in[0] * 0.8, "allocatedBandwidthOut": st.bw_out[0] * 0.8,
            "allocatedMsgRateIn": local["msgRateIn"] * 0.8,
            "allocatedMsgRateOut": local["msgRateOut"] * 0.8,
            "preAllocatedCPU": 0.0, "preAllocatedMemory": 0.0, "preAllocatedBandwidthIn": 0.0,
            "preAllocatedBandwidthOut": 0.0, "preAllocatedMsgRateIn": 0.0,
            "preAllocatedMsgRateOut": 0.0,
            "underLoaded": False, "overLoaded": False, "loadReportType": "LoadReport",
        }

    def broker_topics(self, broker: str) -> dict[str, Any]:
        if self.life is not None:
            return self.life.broker_topics(broker)
        out: dict[str, Any] = {}
        for topic, st in self.topics.items():
            bundle = self.bundle_of_topic(topic)
            if bundle is None or self.owners.get(bundle) != broker:
                continue
            ns = "/".join(bundle.split("/")[:2])
            rng = bundle.split("/")[2]
            subs = {"sub": {"consumers": [{"consumerName": f"c{i}"}
                                          for i in range(int(st.get("consumerCount", 0)))],
                            "msgRateOut": st.get("msgRateOut", 0.0), "msgBacklog": 0}}
            out.setdefault(ns, {}).setdefault(rng, {}).setdefault("persistent", {})[topic] = {
                "publishers": [], "replication": {}, "subscriptions": subs,
                "producerCount": int(st.get("producerCount", 0)),
                "msgRateIn": st.get("msgRateIn", 0.0), "msgRateOut": st.get("msgRateOut", 0.0),
                "msgThroughputIn": st.get("msgThroughputIn", 0.0),
                "msgThroughputOut": st.get("msgThroughputOut", 0.0),
                "storageSize": 0, "backlogSize": 0,
            }
        return out

    def bundle_of_topic(self, topic: str) -> str | None:
        import zlib

        ns = "/".join(topic.split("://", 1)[1].split("/")[:2])
        bounds = self.namespaces.get(ns)
        if bounds is None:
            return None
        h = zlib.crc32(topic.encode()) & 0xFFFFFFFF
        for a, b in zip(bounds, bounds[1:], strict=False):
            if a <= h < b or (b == FULL and h == FULL):
                return f"{ns}/{fmt(a)}_{fmt(b)}"
        return None

    # ---- HTTP ---------------------------------------------------------------------------------
    async def _serve_conn(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        port = writer.get_extra_info("sockname")[1]
        broker = self._port_broker[port]
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        k, v = line.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                n = int(headers.get("content-length", "0") or 0)
                body = await reader.readexactly(n) if n else b""
                keep = await self._respond(broker, method, target, headers, body, writer)
                if not keep or headers.get("connection", "").lower() == "close":
                    return
        except asyncio.CancelledError:
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _respond(self, broker: str, method: str, target: str, headers: dict[str, str],
                       body: bytes, writer: asyncio.StreamWriter) -> bool:
        parts = urlsplit(target)
        path = unquote(parts.path)
        query = dict(parse_qsl(parts.query))
        entry = LoggedRequest(broker, method, parts.path, query, body, headers.get("authorization"))
        with self._lock:
            self.log.append(entry)
            fault = next((f for f in self.faults if f.matches(broker, method, path)), None)
            if fault is not None and fault.times is not None:
                fault.times -= 1
        state = self.brokers.get(broker)
        if state is None:  # a broker removed from the cluster: as good as stopped
            entry.status = -1
            writer.transport.abort()
            return False
        delay = state.latency
        if fault is not None and fault.kind == "latency":
            delay += fault.seconds
        if delay:
            await asyncio.sleep(delay)
        if fault is not None and fault.kind == "drop":
            entry.status = -1
            writer.transport.abort()
            return False
        if fault is not None and fault.kind == "hang":
            await asyncio.sleep(fault.seconds or 3600)
            return False
        if fault is not None and fault.kind in ("status", "redirect"):
            status, payload, ctype, extra = self._fault_response(fault)
        else:
            status, payload, ctype, extra = self._route(broker, method, path, parts.query, query,
                                                        headers, body)
            if status < 300:
                self._after(method, path, query)
        entry.status = status
        reason = {200: "OK", 204: "No Content", 307: "Temporary Redirect", 400: "Bad Request",
                  401: "Unauthorized",
                  403: "Forbidden", 404: "Not Found", 409: "Conflict", 412: "Precondition Failed",
                  500: "Internal Server Error", 503: "Service Unavailable"}.get(status, "Status")
        head = [f"HTTP/1.1 {status} {reason}", f"Content-Length: {len(payload)}",
                f"Date: {formatdate(self.clock.now(), usegmt=True)}",  # the cluster's time
                # what no Pulsar sends: lbctl's time windows (apply's grace, drain's pause) are
                # cluster time, and this cluster's clock may run faster than the wall's
                f"{SANDBOX_CLOCK_HEADER}: now={self.clock.now():.3f}; speed={self.clock.speed:g}"]
        if payload:
            head.append(f"Content-Type: {ctype}")
        head += [f"{k}: {v}" for k, v in extra.items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + payload)
        try:
            await writer.drain()
        except ConnectionError:
            return False
        return True

    @staticmethod
    def _fault_response(f: Fault) -> tuple[int, bytes, str, dict[str, str]]:
        if f.kind == "redirect":
            return f.status, b"", "", {"Location": f.location}
        if f.html:
            page = (f"<html><head><title>Error {f.status} {f.reason}</title></head>"
                    f"<body><h2>HTTP ERROR {f.status}</h2></body></html>")
            return f.status, page.encode(), "text/html", {}
        return f.status, json.dumps({"reason": f.reason}).encode(), "application/json", {}

    def _route(self, broker: str, method: str, path: str, raw_query: str, query: dict[str, str],
               headers: dict[str, str], body: bytes) -> tuple[int, bytes, str, dict[str, str]]:
        def ok(obj: Any) -> tuple[int, bytes, str, dict[str, str]]:
            return 200, json.dumps(obj).encode(), "application/json", {}

        def err(status: int, reason: str) -> tuple[int, bytes, str, dict[str, str]]:
            return status, json.dumps({"reason": reason}).encode(), "application/json", {}

        if method == "GET" and path == "/metrics":  # Prometheus' endpoint: lbctl/sandbox/metrics.py
            from lbctl.sandbox.metrics import CONTENT_TYPE, exposition

            with self._lock:
                return 200, exposition(self, broker).encode(), CONTENT_TYPE, {}
        if method == "GET" and path.startswith("/api/v1/") and self.prometheus is not None:
            from lbctl.sandbox.prometheus import answer

            api = answer(self.prometheus, path, parse_qs(raw_query, keep_blank_values=True))
            if api is not None:
                return api[0], json.dumps(api[1]).encode(), "application/json", {}

        if self.tokens is not None:
            auth = headers.get("authorization", "")
            role = self.tokens.get(auth[len("Bearer "):]) if auth.startswith("Bearer ") else None
            if role is None:
                page = b"<html><head><title>Error 401 Authentication required</title></head></html>"
                return 401, page, "text/html", {}
            if role != "admin":
                return err(403, "This operation requires super-user access")

        p = path.removeprefix("/admin/v2")
        seg = [s for s in p.split("/") if s]
        ops = self._route_ops(broker, method, path, seg, query)
        if ops is not None:
            return ops
        with self._lock:
            placed = self._route_placement(broker, method, seg, query) if method == "GET" else None
            if placed is not None:
                return placed
            if method == "GET":
                if seg == ["clusters"]:
                    return ok([self.cluster])
                if seg == ["brokers"]:
                    return ok(list(self.brokers))
                if seg == ["brokers", "configuration", "runtime"]:
                    return ok({**self.config, "loadManagerClassName": self.broker_lm_class(broker)})
                info = self._broker_info(broker, seg)
                if info is not None:
                    return info
                if len(seg) == 2 and seg[0] == "brokers":
                    if seg[1] != self.cluster:
                        return err(404, f"Cluster does not exist: cluster={seg[1]}")
                    return ok(list(self.brokers))
                if seg == ["broker-stats", "load-report"]:
                    if self.extensible:  # RestException(UnsupportedOperationException): no message
                        return 500, b'{"reason":null}', "application/json", {}
                    if self.brokers[broker].simple_lm:
                        return ok(self.simple_load_report(broker))
                    return ok(self.served_report(broker))
                if seg == ["broker-stats", "metrics"]:
                    return ok(self.metrics(broker))
                if seg == ["broker-stats", "topics"]:
                    return ok(self.broker_topics(broker))
                if seg == ["tenants"]:
                    return ok(sorted({ns.split("/")[0] for ns in self.namespaces}))
                if len(seg) == 2 and seg[0] == "namespaces":
                    nss = [ns for ns in self.namespaces if ns.split("/")[0] == seg[1]]
                    return ok(nss) if nss else err(404, "Tenant does not exist")
                if len(seg) == 4 and seg[0] == "namespaces" and seg[3] == "bundles":
                    ns = f"{seg[1]}/{seg[2]}"
                    if ns not in self.namespaces:
                        return err(404, "Namespace does not exist")
                    b = self.namespaces[ns]
                    return ok({"boundaries": [fmt(x) for x in b], "numBundles": len(b) - 1})
                return err(404, "HTTP 404 Not Found")
            if method == "PUT" and len(seg) >= 4 and seg[0] == "namespaces":
                ns = f"{seg[1]}/{seg[2]}"
                if ns not in self.namespaces:
                    return err(404, "Namespace does not exist")
                if len(seg) == 4 and seg[3] == "unload":
                    for rng in self.ranges(ns):
                        self._move(f"{ns}/{rng}", None)
                    return 204, b"", "", {}
                if len(seg) == 5 and seg[4] in ("unload", "split"):
                    bundle = f"{ns}/{seg[3]}"
                    if seg[3] not in self.ranges(ns):
                        return err(404, f"Bundle range {seg[3]} not found")
                    owner = self.owners.get(bundle)
                    if owner is None:
                        return err(412, f"Failed to find ownership for ServiceUnit:{bundle}")
                    if owner != broker:
                        loc = f"http://{owner}{path}" + (f"?{raw_query}" if raw_query else "")
                        return 307, b"", "", {"Location": loc}
                    if seg[4] == "unload":
                        dest = query.get("destinationBroker")
                        if dest is not None:
                            dest = dest.removeprefix("http://").removeprefix("https://")
                            if dest not in self.brokers:
                                return err(412, "Not allowed unload namespace bundle to inactive "
                                                f"destination broker {dest}")
                        self._move(bundle, dest)
                        if self.extensible and self.life is not None:
                            admin = self.life.counters.admin
                            admin[broker] = admin.get(broker, 0) + 1
                        return 204, b"", "", {}
                    return self._split(bundle, query, body, err)
            return err(405, "Method Not Allowed")

    # ---- the leader (lbctl brokers) -----------------------------------------------------------
    #: the leader's broker id (None: no leader elected right now → 404); default the first broker
    leader: str | None = None
    no_leader: bool = False

    def _broker_info(self, broker: str, seg: list[str]) -> Response | None:
        """``GET /brokers/leaderBroker`` (``BrokerInfo``: ``serviceUrl`` and ``brokerId``, as
        ``BrokersBase.getLeaderBroker`` answers since 3.0); None for other paths (each broker's
        ``GET /brokers/version`` is :meth:`_route_placement`'s)."""
        if seg == ["brokers", "leaderBroker"]:
            elected = self.life.leader.broker() if self.life is not None and self.life.leader \
                else (self.leader or next(iter(self.brokers), None))
            leader = None if self.no_leader else elected
            if leader is None:
                return 404, json.dumps({"reason": "Couldn't find leader broker"}).encode(), \
                    "application/json", {}
            info = {"serviceUrl": f"http://{leader}", "brokerId": leader}
            return 200, json.dumps(info).encode(), "application/json", {}
        return None

    def _move(self, bundle: str, dest: str | None) -> None:
        owner = self.owners.get(bundle)
        if owner is None or self._defer_move(bundle, dest):
            return
        if dest is None:
            ids = list(self.brokers)
            dest = ids[(ids.index(owner) + 1) % len(ids)]
        if dest == owner:
            return
        self.owners[bundle] = dest
        self._note_move(bundle, owner, dest)

    def _split(self, bundle: str, query: dict[str, str], body: bytes,
               err: Callable[[int, str], Response]) -> Response:
        algo = query.get("splitAlgorithmName") or "range_equally_divide"
        if algo not in SUPPORTED_SPLIT:
            return err(412, "Unsupported namespace bundle split algorithm, supported algorithms "
                            f"are {list(SUPPORTED_SPLIT)}")
        ns = "/".join(bundle.split("/")[:2])
        lo_s, hi_s = bundle.split("/")[2].split("_")
        lo, hi = int(lo_s, 16), int(hi_s, 16)
        if algo == "range_equally_divide":
            cuts = [lo + (hi - lo) // 2]
        else:
            try:
                positions = json.loads(body) if body.strip() else []
            except ValueError:
                return err(412, "Split bundle failed due to invalid request")
            if not positions:
                return err(412, "With specified_positions_divide split algorithm, splitBoundaries "
                                "must not be empty")
            cuts = sorted({int(p) for p in positions if lo < int(p) < hi})
            if not cuts:
                return err(412, "Split bundle failed due to invalid request")
        bounds = self.namespaces[ns]
        self.namespaces[ns] = sorted(set(bounds) | set(cuts))
        owner = self.owners.pop(bundle)
        old = self.stats.pop(bundle)
        edges = [lo, *cuts, hi]
        share = 1 / (len(edges) - 1)
        for a, b in zip(edges, edges[1:], strict=False):
            child = f"{ns}/{fmt(a)}_{fmt(b)}"
            # rates and throughputs are shared; counts (topics, sessions) stay whole
            self.own(child, owner, **{k: (v * share if k.startswith("msg") else v)
                                      for k, v in old.items()})
            if query.get("unload") == "true":
                self._move(child, None)
        if self.life is not None:
            self.life.split_done(ns)
        return 204, b"", "", {}


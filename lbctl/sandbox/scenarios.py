"""Ready-made clusters for the loopback test cluster (:mod:`lbctl.sandbox.server`): a hot broker,
an extensible cluster, a balanced one and one after a rolling restart. :data:`SCENARIOS` names
them for ``lbctl sandbox --scenario``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lbctl.sandbox.server import FULL, Fault, TestCluster, fmt

if TYPE_CHECKING:
    from lbctl.sandbox.clock import Clock
    from lbctl.sandbox.life import Life

__all__ = ["FULL", "SCENARIOS", "Fault", "Scenario", "TestCluster", "balanced_cluster",
           "equal_boundaries", "extensible_cluster", "fmt", "hot_cluster",
           "living", "rolling_restart_cluster"]


def equal_boundaries(n: int) -> list[int]:
    """``n`` equal bundles over the hash space, as ``NamespaceBundleFactory`` divides a namespace."""
    step = (FULL + 1) // n
    return [i * step for i in range(n)] + [FULL]


def hot_cluster(n_brokers: int = 3, *, bundles_per_broker: int = 2, latency: float = 0.0,
                tokens: dict[str, str] | None = None, topics: int = 40,
                port: int = 0) -> TestCluster:
    """A started cluster whose first broker is hot (90 % CPU) and the others cool (20–32 %).

    ``public/default`` has ``bundles_per_broker × n_brokers`` bundles spread round-robin; the first
    broker's bundles carry ten times the traffic. ``tenant-a/orders`` has 4 bundles on the last
    broker. ``topics`` topics of ``public/default`` carry rates (for ``/broker-stats/topics``).
    """
    c = TestCluster(tokens=tokens)
    ids = c.start(n_brokers, latency=latency, port=port)
    bundles = c.add_namespace("public/default", equal_boundaries(bundles_per_broker * n_brokers))
    for i, b in enumerate(bundles):
        owner = ids[i % n_brokers]
        hot = owner == ids[0]
        k = 10.0 if hot else 1.0
        c.own(b, owner, msgRateIn=100.0 * k + i, msgRateOut=200.0 * k + i,
              msgThroughputIn=1048576.0 * k + i, msgThroughputOut=2097152.0 * k,
              consumerCount=2, producerCount=1, topics=3)
    for j, b in enumerate(c.add_namespace("tenant-a/orders", equal_boundaries(4))):
        c.own(b, ids[-1], msgRateIn=10.0 + j, msgRateOut=10.0, msgThroughputIn=1024.0,
              msgThroughputOut=1024.0, consumerCount=1, producerCount=1, topics=1)
    for i, bid in enumerate(ids):
        st = c.brokers[bid]
        st.cpu = (90.0, 100.0) if i == 0 else (20.0 + 3 * (i % 5), 100.0)
        st.direct = (100.0 + i, 1024.0)
        st.bw_in = (0.5e6 if i == 0 else 0.1e6, 1e7)
        st.bw_out = (0.6e6 if i == 0 else 0.1e6, 1e7)
    for t in range(topics):
        c.topics[f"persistent://public/default/orders-{t}"] = {
            "msgRateIn": 10.0 + t, "msgRateOut": 20.0 + t, "msgThroughputIn": 1000.0 * t,
            "msgThroughputOut": 2000.0 * t, "producerCount": 1, "consumerCount": 1}
    return c


#: extensible_cluster's brokers: (published weightedMaxEMA, CPU usage of 100, bundles owned)
EXTENSIBLE_BROKERS = ((0.85, 90.0, 4), (0.30, 33.3, 2), (0.20, 21.7, 1), (0.10, 10.1, 1))


def extensible_cluster(*, tokens: dict[str, str] | None = None, topics: int = 160,
                       port: int = 0, **config: str) -> TestCluster:
    """A started cluster on the extensible load manager (load-report → 500), four brokers whose
    published loads (``weightedMaxEMA``) are 85, 30, 20 and 10 % — std 0.28 > the 0.25 target — and
    the hit-count threshold 0, so TransferShedder acts in one cycle.

    ``public/default`` has 8 bundles: the first four on the hot broker, then 2, 1, 1. The load is in
    ``topics`` topics of ``public/default`` (the only bundle data REST serves there): a topic's
    rates follow its bundle's owner (10× on the hot broker, 2× on the second) and its index.
    """
    c = TestCluster(tokens=tokens)
    c.set_extensible(loadBalancerSheddingConditionHitCountThreshold="0", **config)
    ids = c.start(len(EXTENSIBLE_BROKERS), port=port)
    bundles = c.add_namespace("public/default", equal_boundaries(8))
    owner_of = [i for i, (_, _, n) in enumerate(EXTENSIBLE_BROKERS) for _ in range(n)]
    for b, i in zip(bundles, owner_of, strict=True):
        c.own(b, ids[i])
    for bid, (ema, cpu, _) in zip(ids, EXTENSIBLE_BROKERS, strict=True):
        st = c.brokers[bid]
        st.ema = ema
        st.cpu = (cpu, 100.0)
        st.bw_in = (cpu * 1e4, 1e7)  # below the CPU: CPU is the weighted max
        st.bw_out = (cpu * 2e4, 1e7)
    factor = {ids[0]: 10.0, ids[1]: 2.0}
    for t in range(topics):
        name = f"persistent://public/default/events-{t}"
        bundle = c.bundle_of_topic(name)
        assert bundle is not None
        k = factor.get(c.owners[bundle], 1.0)
        c.topics[name] = {"msgRateIn": (10.0 + t % 7) * k, "msgRateOut": (20.0 + t % 5) * k,
                          "msgThroughputIn": (100000.0 + 1000.0 * t) * k,
                          "msgThroughputOut": (200000.0 + 500.0 * t) * k,
                          "producerCount": 1, "consumerCount": 1 + t % 3}
    return c


def _spread(c: TestCluster, ids: list[str], usage: list[float], bundles: list[int]) -> None:
    """``public/default`` with ``sum(bundles)`` bundles owned as ``bundles`` says, each broker's
    traffic following its CPU ``usage`` (percent); bandwidth a tenth of it."""
    names = c.add_namespace("public/default", equal_boundaries(max(1, sum(bundles))))
    owners = [bid for bid, n in zip(ids, bundles, strict=True) for _ in range(n)]
    for i, (b, owner) in enumerate(zip(names, owners, strict=False)):
        k = usage[ids.index(owner)] / 10
        c.own(b, owner, msgRateIn=100.0 * k + i, msgRateOut=200.0 * k + i,
              msgThroughputIn=1048576.0 * k, msgThroughputOut=2097152.0 * k,
              consumerCount=2, producerCount=1, topics=3)
    for bid, u in zip(ids, usage, strict=True):
        st = c.brokers[bid]
        st.cpu = (u, 100.0)
        st.bw_in = (u * 1e4, 1e7)
        st.bw_out = (u * 2e4, 1e7)


def balanced_cluster(n_brokers: int = 4, *, port: int = 0,
                     bundles_per_broker: int = 3) -> TestCluster:
    """A started cluster whose brokers sit between 40 and 50 % CPU with equal bundle counts:
    no shedding strategy acts (a quiet baseline)."""
    c = TestCluster()
    ids = c.start(n_brokers, port=port)
    _spread(c, ids, [40.0 + 10.0 * i / max(1, n_brokers - 1) for i in range(n_brokers)],
            [bundles_per_broker] * n_brokers)
    return c


def rolling_restart_cluster(n_brokers: int = 6, *, port: int = 0,
                            bundles_per_broker: int = 3) -> TestCluster:
    """A started cluster right after a rolling restart: every broker at 50 % CPU but the last one,
    restarted last, idle with no bundle (PIP-220's case: ThresholdShedder leaves it empty unless
    ``lowerBoundarySheddingEnabled``)."""
    c = TestCluster()
    ids = c.start(max(2, n_brokers), port=port)
    n = len(ids)
    _spread(c, ids, [50.0] * (n - 1) + [0.4], [bundles_per_broker] * (n - 1) + [0])
    return c


@dataclass(frozen=True)
class Scenario:
    """A named cluster for ``lbctl sandbox``: how to build it with N brokers on a port, with
    how many bundles per broker when it is alive (0: as when static).

    Alive, a broker's traffic is what makes its CPU (:meth:`lbctl.sandbox.life.Life._calibrate`),
    and a broker at 90 % of its cores carries some 100,000 msg/s: spread over two bundles, each
    would cross Pulsar's split thresholds (``loadBalancerNamespaceBundleMaxMsgRate`` 30,000,
    ``…MaxBandwidthMbytes`` 100) and the leader would split before it sheds. A living scenario
    spreads it over more bundles, as a real cluster at that load has."""

    name: str
    about: str
    default_brokers: int
    build: Callable[[int, int, int], TestCluster]  # (brokers, first port, bundles) -> started
    alive_bundles: int = 0

    def start(self, brokers: int, port: int, alive: bool) -> TestCluster:
        return self.build(brokers, port, self.alive_bundles if alive else 0)


SCENARIOS: dict[str, Scenario] = {s.name: s for s in (
    Scenario("hot-broker", "the first broker at 90 % CPU carrying ten times the traffic; the "
             "others cool (ThresholdShedder unloads from it)", 3,
             lambda n, port, k: hot_cluster(n, port=port, bundles_per_broker=k or 2), 12),
    Scenario("balanced", "brokers between 40 and 50 % with equal bundles: nothing to do", 4,
             lambda n, port, k: balanced_cluster(n, port=port, bundles_per_broker=k or 3), 16),
    Scenario("rolling-restart", "every broker at 50 % but the last, idle and empty after a "
             "restart (PIP-220)", 6,
             lambda n, port, k: rolling_restart_cluster(n, port=port, bundles_per_broker=k or 3),
             16),
    Scenario("skewed", "the extensible load manager: four brokers at 85, 30, 20 and 10 % "
             "(TransferShedder moves load at once); --brokers is ignored", 4,
             lambda n, port, _k: extensible_cluster(port=port)),
)}


def living(cluster: TestCluster, clock: Clock, *, hosts: str = "mixed", seed: int = 1,
           reconnect: float = 1.0, events: Any = None) -> Life:
    """Bring a started cluster to life (:mod:`lbctl.sandbox.life`) on ``clock``: its brokers on
    ``mixed`` hosts (8/16/32 cores, :func:`~lbctl.truth.hosts.mixed_fleet`) or ``uniform`` ones,
    each broker's traffic scaled so that its host reports the scenario's CPU, and a scenario
    file's ``events`` (:mod:`lbctl.sandbox.timeline`) on the clock."""
    from lbctl.sandbox.life import Life
    from lbctl.sandbox.timeline import TimelineError, schedule
    from lbctl.truth.hosts import mixed_fleet, uniform_fleet

    n = len(cluster.brokers)
    if hosts not in ("mixed", "uniform"):
        raise TimelineError(f"hosts: expected mixed or uniform, got {hosts!r}")
    fleet = mixed_fleet(n, seed) if hosts == "mixed" else uniform_fleet(n)
    life = Life.attach(cluster, clock, hosts=fleet, seed=seed, reconnect_delay=reconnect)
    schedule(life, events)
    return life

"""``SimulationOptions.unmoved``: each cycle's moves against the truth had they not been made
(the benchmarks' "worse vs no moves"), and a run that asks for it moves as one that does not."""

from __future__ import annotations

from types import MappingProxyType

from lbctl.loadmanager.select import Options
from lbctl.model.cluster import ClusterState
from lbctl.model.load import NamespaceBundleStats
from lbctl.records import replace
from lbctl.simulate.compare import compare, parse_pairs
from lbctl.simulate.engine import SimulationOptions, SimulationResult, simulate
from lbctl.simulate.hosts import cluster_on_hosts
from lbctl.truth.hosts import Host

T0 = 1_777_629_600_000
CONFIG = MappingProxyType({"loadBalancerSheddingIntervalMinutes": "1"})
A, B = "a:8080", "b:8080"


def bundles(n: int, f: float = 1.0) -> dict[str, NamespaceBundleStats]:
    return {f"t/ns/0x{i:08x}_0x{i + 1:08x}": NamespaceBundleStats(
        msgRateIn=100_000 * f, msgRateOut=100_000 * f, msgThroughputIn=10e6 * f,
        msgThroughputOut=10e6 * f, topics=10) for i in range(n)}


def snapshot(k: int, hosts: dict[str, Host], f: float = 1.0) -> ClusterState:
    """Minute ``k`` of a trace: broker a carries six bundles at ``f`` times their traffic, b none."""
    st = cluster_on_hosts("t", T0 + k * 60_000, hosts, {A: bundles(6, f), B: {}})
    return replace(st, config=CONFIG)


def worse_vs_no_moves(r: SimulationResult, k: int) -> bool:
    """The benchmark's rule: cycle ``k``'s moves left the true max or range more than a point
    above what it would have been without them."""
    c, after = r.cycles[k - 1], r.truth_after(k)
    assert c.unmoved is not None
    vals = list(after.values())
    return (max(vals) > c.unmoved.max + 0.01
            or max(vals) - min(vals) > c.unmoved.range + 0.01)


def test_moves_onto_a_slow_host_worsen_against_no_moves() -> None:
    # b's host spends eight times a's CPU per message on a quarter of the cores: every bundle the
    # shedder sends there (it sees b idle) costs it twice its cores
    hosts = {A: Host(cores=16, cpu_us_per_msg=10, noise=0.0),
             B: Host(cores=4, cpu_us_per_msg=80, noise=0.0)}
    r = simulate([snapshot(0, hosts)], Options(),
                 SimulationOptions(cycles=2, hosts=hosts, unmoved=True))
    c1 = r.cycles[0]
    assert c1.moves and all(m.destination == B for m in c1.moves)
    assert c1.unmoved is not None
    # had nothing moved, the (unchanged) traffic leaves the truth as cycle 1 saw it
    assert abs(c1.unmoved.max - c1.spread.max) < 1e-9
    assert abs(c1.unmoved.range - c1.spread.range) < 1e-9
    assert worse_vs_no_moves(r, 1)
    assert r.cycles[1].unmoved is None  # nothing moved in cycle 2 (the grace period)


def test_moves_that_help_under_a_rising_wave_do_not_count() -> None:
    # the traffic grows 2.5 times between cycle 1 and 2: the max rises whatever moves, but less
    # with the moves than without them
    hosts = {A: Host(cores=16, cpu_us_per_msg=10, noise=0.0),
             B: Host(cores=16, cpu_us_per_msg=10, noise=0.0)}
    r = simulate([snapshot(0, hosts), snapshot(1, hosts, 2.5)], Options(),
                 SimulationOptions(cycles=2, hosts=hosts, unmoved=True))
    c1 = r.cycles[0]
    assert c1.moves and c1.unmoved is not None
    after = r.truth_after(1)
    assert max(after.values()) > c1.spread.max + 0.01  # the old rule calls it worsening
    assert c1.unmoved.max > max(after.values()) + 0.01  # the wave alone would have done worse
    assert not worse_vs_no_moves(r, 1)


def test_asking_for_the_counterfactual_changes_nothing_else() -> None:
    # host noise on: the counterfactual must not take draws from the run's generator
    hosts = {A: Host(cores=16, cpu_us_per_msg=10), B: Host(cores=8, cpu_us_per_msg=14),
             "c:8080": Host(cores=16, cpu_us_per_msg=12)}
    states = []
    for k in range(8):
        st = cluster_on_hosts("t", T0 + k * 60_000, hosts,
                              {A: bundles(8, 1.0 + 0.2 * k), B: {}, "c:8080": {}})
        states.append(replace(st, config=CONFIG))
    pairs = parse_pairs(["lbctl", "ThresholdShedder"])
    runs = {on: compare(states, Options(), pairs,
                        SimulationOptions(cycles=10, hosts=hosts, seed=3, unmoved=on)).runs
            for on in (False, True)}
    assert any(c.unmoved is not None for r in runs[True] for c in r.cycles)
    for off, on in zip(runs[False], runs[True], strict=True):
        assert all(c.unmoved is None for c in off.cycles)
        assert off.cycles == tuple(replace(c, unmoved=None) for c in on.cycles)
        assert off.final_loads == on.final_loads
        assert off.summary() == on.summary()

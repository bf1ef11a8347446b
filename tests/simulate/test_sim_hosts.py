"""The simulator's truth is hosts, not lbctl's load model (issue 29, item 2): inferred from the
snapshot's reports when none are given, mixed hardware with noise when given; lbctl's planner
learns them from the reports."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from lbctl.errors import UsageError
from lbctl.loadmanager.select import Options
from lbctl.model.load import NamespaceBundleStats, ResourceUsage
from lbctl.planner.propose import ProposeOptions
from lbctl.records import replace
from lbctl.simulate.engine import SimulationOptions, simulate
from lbctl.simulate.hosts import (
    chosen_hosts,
    cluster_on_hosts,
    inferred_hosts,
    mixed_hosts,
    read_hosts_file,
    reported_by,
    traffic_of,
)
from lbctl.sources.snapshot import read_snapshots
from lbctl.truth.hosts import Host, mixed_fleet

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DATA = Path(__file__).resolve().parents[1] / "data"
T0 = 1_777_629_600_000


@pytest.mark.parametrize("name", ["hot-broker.json", "rolling-restart.yaml", "pip364-90-10.json"])
def test_inferred_hosts_reproduce_the_snapshots_cpu(name: str) -> None:
    state = read_snapshots([EXAMPLES / name])[0]
    for b, host in inferred_hosts(state).items():
        rep = state.brokers[b]
        assert host.cores == round(rep.cpu.limit / 100)
        got = host.usage(traffic_of(rep.lastStats.values())).cpu.percent
        assert got == pytest.approx(rep.cpu.percent, abs=1e-6)
    assert inferred_hosts(state) == inferred_hosts(state)  # no noise, no randomness


def test_bandwidth_limits_that_are_percentages_give_way_to_the_nic_their_traffic_implies() -> None:
    """A history rebuilt from Prometheus (tests/data: three steps of the sandbox's hot-broker
    scenario, ``snapshot from-prometheus``) has bandwidth percentages written over a limit of 100,
    less than one bundle's kilobits: taken as a NIC of 100 Kbit/s, ``simulate`` put brokers at
    millions of percent. The inferred NIC is the one at which the reported percentage of the
    carried traffic holds."""
    state = read_snapshots([DATA / "prometheus-rebuilt-sandbox.jsonl"])[0]
    for b, host in inferred_hosts(state).items():
        rep = state.brokers[b]
        assert rep.bandwidthIn.limit == 100.0  # the placeholder
        u = host.usage(traffic_of(rep.lastStats.values()))
        got = (u.bandwidth_in.percent, u.bandwidth_out.percent)
        want = (rep.bandwidthIn.percent, rep.bandwidthOut.percent)
        assert max(got) <= 100 and any(g == pytest.approx(w, rel=1e-6) for g, w in zip(got, want, strict=True))
    run = simulate(read_snapshots([DATA / "prometheus-rebuilt-sandbox.jsonl"]), Options(),
                   SimulationOptions(cycles=5))
    assert max(u for c in run.cycles for u in c.loads.values()) < 1.0


def _skewed(hosts: dict[str, Host], seed: int) -> dict[str, dict[str, NamespaceBundleStats]]:
    rng = random.Random(seed)
    names = list(hosts)
    owned: dict[str, dict[str, NamespaceBundleStats]] = {b: {} for b in names}
    for k in range(60):
        rate = rng.lognormvariate(8.3, 0.7)
        size = rng.choice((1024, 4096))
        b = names[0] if k % 3 == 0 else rng.choice(names)  # the first broker is hot
        owned[b][f"t/ns/0x{k:08x}_0x{k + 1:08x}"] = NamespaceBundleStats(
            msgRateIn=rate, msgRateOut=rate, msgThroughputIn=rate * size,
            msgThroughputOut=rate * size, topics=2)
    return owned


def test_given_hosts_are_the_truth_and_the_planner_learns_them() -> None:
    hosts = {f"b{j}:8080": h for j, h in enumerate(mixed_fleet(6, seed=11))}
    state = cluster_on_hosts("mixed", T0, hosts, _skewed(hosts, 3))
    r = simulate([state], Options(strategy="lbctl"), SimulationOptions(
        cycles=20, hosts=hosts, seed=1, planner=ProposeOptions(solver="greedy")))
    first = r.cycles[0]
    assert first.spread.range > 0.10
    # the truth at cycle 1 is the hosts' usage of what each broker carries (noise within 3 sd)
    for b, host in hosts.items():
        exact = host.usage(traffic_of(state.brokers[b].lastStats.values())).cpu.percent / 100
        assert first.loads[b] == pytest.approx(exact, rel=0.07)
    # the planner brings the cluster into the band in truth, within three cycles, and keeps it
    settled = r.settled_at()
    assert settled is not None and settled <= 4
    assert r.summary()["bounceBacks"] == 0
    assert max(r.final_loads.values()) < max(first.loads.values())
    assert r.hosts == "given"  # the API's hosts, as the outputs name them


# --- choosing the truth: --hosts mixed / FILE, --host-seed, --noise ------------------------------

def test_mixed_hosts_are_mixed_and_as_loaded_as_the_snapshot_says() -> None:
    """8/16/32-core hosts by seed, in broker-name order; one cost factor for the fleet so that the
    snapshot's traffic costs the CPU cores the snapshot reports in all."""
    state = read_snapshots([EXAMPLES / "hot-broker.json"])[0]
    hosts = mixed_hosts(state, seed=3)
    assert list(hosts) == sorted(state.brokers)
    assert {h.cores for h in hosts.values()} <= {8, 16, 32}
    assert len({h.cores for h in hosts.values()}) > 1
    assert all(0.02 <= h.idle_cpu <= 0.08 for h in hosts.values())
    busy = sum(h.usage(traffic_of(state.brokers[b].lastStats.values())).cpu.usage
               for b, h in hosts.items())
    assert busy == pytest.approx(sum(rep.cpu.usage for rep in state.brokers.values()))
    assert mixed_hosts(state, seed=3) == hosts and mixed_hosts(state, seed=4) != hosts
    # the file's order of brokers does not change who gets which host
    from types import MappingProxyType

    from lbctl.records import replace

    backwards = replace(state, brokers=MappingProxyType(dict(reversed(state.brokers.items()))))
    assert mixed_hosts(backwards, seed=3) == hosts


def test_inferred_hosts_are_the_engines_default_unless_noise_is_asked() -> None:
    states = read_snapshots([EXAMPLES / "hot-broker.json"])
    assert chosen_hosts(states, "inferred") is None
    noisy = chosen_hosts(states, "inferred", noise=0.05)
    assert noisy is not None and {h.noise for h in noisy.values()} == {0.05}
    assert {b: h.cores for b, h in noisy.items()} == {b: h.cores for b, h in
                                                     inferred_hosts(states[0]).items()}


def test_a_hosts_file_overrides_the_inferred_host_figure_by_figure(tmp_path: Path) -> None:
    """Figures a file gives replace the inferred host's, the rest stay (``{cores: 32}``: the same
    work on 32 cores); ``default`` covers every broker not named; the first view is what the
    hosts report."""
    states = read_snapshots([EXAMPLES / "hot-broker.json"])
    inferred = inferred_hosts(states[0])
    f = tmp_path / "hosts.yaml"
    f.write_text("default: {cores: 16}\n"
                 "brokers:\n  broker-2.pulsar.svc:8080: {cores: 32, idlePercent: 5, "
                 "cpuMicrosPerMessage: 40, noisePercent: 1}\n")
    hosts = chosen_hosts(states, "file", hosts_file=read_hosts_file(str(f)))
    assert hosts is not None
    hot = hosts["broker-2.pulsar.svc:8080"]
    base = inferred["broker-2.pulsar.svc:8080"]
    assert (hot.cores, hot.idle_cpu, hot.cpu_us_per_msg, hot.noise) == (32, 0.05, 40.0, 0.01)
    assert hot.cpu_us_per_kb == base.cpu_us_per_kb and hot.nic_gbps == base.nic_gbps
    assert {h.cores for b, h in hosts.items() if b != "broker-2.pulsar.svc:8080"} == {16}
    seen = reported_by(states[0], hosts)
    rep = seen.brokers["broker-2.pulsar.svc:8080"]
    assert rep.cpu.limit == 3200
    assert rep.cpu.usage == pytest.approx(
        hot.usage(traffic_of(rep.lastStats.values())).cpu.usage)
    assert rep.lastUpdate == states[0].brokers["broker-2.pulsar.svc:8080"].lastUpdate


@pytest.mark.parametrize(("text", "message"), [
    ("[1, 2]", "expected a mapping with 'brokers'"),
    ("brokers: {}\nmix: mixed\n", "unknown key(s) mix"),
    ("brokers: [a]\n", "brokers: expected a mapping"),
    ("brokers:\n  b1: 8\n", "brokers[b1]: expected a mapping of host figures"),
    ("brokers:\n  b1: {cpus: 8}\n", "brokers[b1]: unknown key 'cpus'"),
    ("brokers:\n  b1: {cores: 0}\n", "brokers[b1].cores: must be >= 1, got 0"),
    ("brokers:\n  b1: {cores: 8.5}\n", "brokers[b1].cores: expected a whole number"),
    ("default: {idlePercent: 120}\n", "default.idlePercent: must be >= 0 and <= 100"),
    ("default: {nicGbps: 0}\n", "default.nicGbps: must be > 0"),
    ("default: {noisePercent: true}\n", "default.noisePercent: expected a number"),
    ("default: {cores: .nan}\n", "default.cores: expected a number"),
    ("brokers: {b1: {cores: 8}\n", "not valid YAML: "),
])
def test_a_bad_hosts_file_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "hosts.yaml"
    f.write_text(text)
    with pytest.raises(UsageError) as e:
        read_hosts_file(str(f))
    assert message in str(e.value) and "\n" not in str(e.value)


def test_a_hosts_file_naming_an_unknown_broker_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "hosts.json"
    f.write_text('{"brokers": {"nobody:8080": {"cores": 8}}}')
    states = read_snapshots([EXAMPLES / "hot-broker.json"])
    with pytest.raises(UsageError, match="broker 'nobody:8080' is in no snapshot given"):
        chosen_hosts(states, "file", hosts_file=read_hosts_file(str(f)))


def test_an_extensible_snapshot_publishes_what_its_hosts_report() -> None:
    """On other hosts the published BrokerLoadData takes the hosts' figures and is a first sample
    (its EMA computed from them), so TransferShedder's first cycle sees the truth too."""
    states = read_snapshots([EXAMPLES / "extensible" / "skewed.json"])
    hosts = chosen_hosts(states, "mixed", 2)
    assert hosts is not None
    seen = reported_by(states[0], hosts)
    for b, pub in seen.broker_load_data.items():
        assert not pub.has_features
        assert pub.data.cpu == seen.brokers[b].cpu
        assert pub.data.bandwidthOut == seen.brokers[b].bandwidthOut
        assert pub.data.msgRateIn == states[0].broker_load_data[b].data.msgRateIn
    r = simulate([seen], Options(strategy="TransferShedder"), SimulationOptions(
        cycles=3, hosts=hosts, seed=2, truth="mixed"))
    assert r.hosts == "mixed" and r.prediction() is None


def test_a_refuted_limit_of_one_direction_leaves_other_brokers_real_nic_alone() -> None:
    """Only the limit values that are refuted are placeholders: a broker whose inbound limit is a
    percentage's 100 but whose outbound limit is a NIC speed (10 Gbit/s) does not make the other
    brokers' 10 Gbit/s limits placeholders (they were taken for a NIC of 1.4 Gbit/s, and simulate
    showed them at twice their reported load)."""
    state = read_snapshots([EXAMPLES / "hot-broker.json"])[0]
    first = next(iter(state.brokers))
    rep = state.brokers[first]
    brokers = dict(state.brokers)
    brokers[first] = replace(rep, bandwidthIn=ResourceUsage(50.0, 100.0))
    hosts = inferred_hosts(replace(state, brokers=brokers))
    assert all(rep.bandwidthIn.limit == 1e7 for b, rep in state.brokers.items())
    assert {b: h.nic_gbps for b, h in hosts.items() if b != first} == {
        b: 10.0 for b in state.brokers if b != first}
    assert hosts[first].nic_gbps < 10.0  # its inbound percentage of its traffic holds

"""lbctl's load model learnt from reports of hosts it did not build (lbctl.truth): capacity from the
reported limits, idle usage and per-message/per-byte costs over a history, thin data marked, a
fit the reports contradict discarded, out-of-sample error measured (issue 29, item 1)."""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Iterator

import pytest

from lbctl.model.cluster import ClusterState
from lbctl.model.load import NamespaceBundleStats
from lbctl.model.loadmodel import (
    EARLY_CHANGE_ERROR,
    MIN_POINTS,
    SNAPSHOT_MARGIN,
    LoadModel,
    _pool_normal,
)
from lbctl.records import replace
from lbctl.simulate.hosts import cluster_on_hosts, traffic_of
from lbctl.truth.hosts import Host, mixed_fleet

T0 = 1_777_629_600_000


def _bundle(rng: random.Random, scale: float = 1.0) -> NamespaceBundleStats:
    rate = rng.lognormvariate(5.0, 0.8) * scale
    size = rng.choice((512, 2048, 8192))
    return NamespaceBundleStats(msgRateIn=rate, msgRateOut=rate * 2, msgThroughputIn=rate * size,
                                msgThroughputOut=rate * size * 2, topics=3, producerCount=2,
                                consumerCount=4)


def _history(hosts: dict[str, Host], steps: int, seed: int, noise: bool = True,
             t0: int = T0) -> list[ClusterState]:
    """Every ``steps`` snapshot a minute apart: each broker's bundles scaled by a wave and a
    broker-own factor (bundles come and go), reports from the hosts."""
    rng = random.Random(seed)
    base = {b: {f"t/ns-{k}/0x{j:08x}_0x{j + 1:08x}": _bundle(rng) for j in range(8)}
            for k, b in enumerate(hosts)}
    out = []
    for s in range(steps):
        owned = {}
        for b, bundles in base.items():
            f = 0.4 + 1.2 * rng.random()
            owned[b] = {x: NamespaceBundleStats(
                msgRateIn=st.msgRateIn * f, msgRateOut=st.msgRateOut * f,
                msgThroughputIn=st.msgThroughputIn * f, msgThroughputOut=st.msgThroughputOut * f,
                topics=st.topics) for x, st in bundles.items()}
        out.append(cluster_on_hosts("h", t0 + s * 60_000, hosts, owned,
                                    rng if noise else None))
    return out


def _true_percent(host: Host, stats: list[NamespaceBundleStats]) -> float:
    return host.usage(traffic_of(stats)).cpu.percent


def test_a_learnt_model_predicts_mixed_hosts_within_a_point() -> None:
    hosts = {f"b{j}": h for j, h in enumerate(mixed_fleet(8, seed=3))}
    history = _history(hosts, 24, seed=1)
    model = LoadModel.learn(history)
    assert all(q.learnt and q.points == 24 for q in model.quality.values())
    assert model.thin() == []
    rng = random.Random(9)
    for b, host in hosts.items():
        stats = [_bundle(rng, 1.5) for _ in range(10)]  # traffic it never carried
        predicted = model.percents(b, model.drivers(stats))["cpu"]
        assert predicted == pytest.approx(_true_percent(host, stats), abs=1.5)
    # out-of-sample error is measured per broker, and the margin covers it (2 % noise)
    errs = [q.error for q in model.quality.values()]
    assert all(e is not None and 0 < e < 2.0 for e in errs)
    assert 0.005 <= model.margin() < SNAPSHOT_MARGIN * 2


def test_capacity_comes_from_the_reported_limits() -> None:
    # one snapshot, hosts of 8 and 32 cores with equal costs: the 32-core host's slope is a
    # quarter of the 8-core host's before anything is learnt about either
    small, big = Host(cores=8, idle_cpu=0.05), Host(cores=32, idle_cpu=0.05)
    hosts = {"a": small, "b": big, "c": small, "d": big, "e": small}
    (state,) = _history(hosts, 1, seed=2, noise=False)
    carried = {b: list(r.lastStats.values()) for b, r in state.brokers.items()}
    model = LoadModel.calibrate(state, carried)
    assert model.cluster["cpu"].base == pytest.approx(5.0, abs=1.0)  # not the 44.7 %
    assert model.fits["a"]["cpu"].slope == pytest.approx(4 * model.fits["b"]["cpu"].slope,
                                                         rel=0.1)
    assert not model.history and model.margin() == SNAPSHOT_MARGIN


def test_a_broker_with_too_little_history_is_thin() -> None:
    hosts = {f"b{j}": h for j, h in enumerate(mixed_fleet(6, seed=5))}
    history = _history(hosts, 12, seed=4)
    newcomer = "b5"
    for k in range(len(history) - 2):  # it joins for the last two snapshots
        brokers = {b: r for b, r in history[k].brokers.items() if b != newcomer}
        history[k] = ClusterState(cluster="h", captured_at=history[k].captured_at,
                                  brokers=brokers)
    model = LoadModel.learn(history)
    assert model.thin() == [newcomer]
    q = model.quality[newcomer]
    assert q.points == 2 < MIN_POINTS and not q.learnt and q.error is None


def test_a_broker_with_little_history_in_a_learnt_host_class_is_not_thin() -> None:
    # b4 (8 cores) joins for the last two snapshots; b2, the other 8-core host, has shown the
    # class's cost: b4 is planned on that cost (its class's spread as its error, which the
    # robust repair covers) instead of being closed to every bundle — a steady broker writes few
    # reports (Pulsar's needBrokerDataUpdate) and would otherwise stay thin for hours
    hosts = {f"b{j}": h for j, h in enumerate(mixed_fleet(6, seed=5))}
    assert hosts["b4"].cores == hosts["b2"].cores == 8
    history = _history(hosts, 12, seed=4)
    for k in range(len(history) - 2):
        brokers = {b: r for b, r in history[k].brokers.items() if b != "b4"}
        history[k] = ClusterState(cluster="h", captured_at=history[k].captured_at,
                                  brokers=brokers)
    model = LoadModel.learn(history)
    q = model.quality["b4"]
    assert q.points == 2 < MIN_POINTS and not q.learnt and not q.thin
    assert "b4" not in model.thin()
    rng = random.Random(11)
    stats = [_bundle(rng, 1.5) for _ in range(10)]
    predicted = model.percents("b4", model.drivers(stats))["cpu"]
    assert predicted == pytest.approx(_true_percent(hosts["b4"], stats), rel=0.15)


def test_a_fit_the_reports_contradict_is_discarded() -> None:
    hosts = {f"b{j}": h for j, h in enumerate(mixed_fleet(5, seed=7))}
    history = _history(hosts, 12, seed=6, noise=False)
    model = LoadModel.learn(history)
    assert model.quality["b2"].learnt
    # b2 is moved to a host with 30 points more idle usage (a noisy neighbour)
    worse = {**hosts, "b2": Host(**{**_fields(hosts["b2"]),
                                    "idle_cpu": hosts["b2"].idle_cpu + 0.30})}
    later = _history(worse, 10, seed=8, noise=False, t0=T0 + 3_600_000)
    assert model.observe(later[0]) == ["b2"]
    assert model.quality["b2"].points == 1 and not model.quality["b2"].learnt
    for st in later[1:]:
        assert model.observe(st) == []
    q = model.quality["b2"]
    assert q.learnt and q.points == len(later)
    stats = list(later[-1].brokers["b2"].lastStats.values())
    assert model.percents("b2", model.drivers(stats))["cpu"] == pytest.approx(
        _true_percent(worse["b2"], stats), abs=0.5)


def test_a_report_seen_twice_is_one_point() -> None:
    hosts = {f"b{j}": h for j, h in enumerate(mixed_fleet(4, seed=1))}
    history = _history(hosts, 3, seed=1)
    model = LoadModel.learn(history + history[-1:])
    assert all(q.points == 3 for q in model.quality.values())
    assert model.observe(history[-1]) == [] and model.quality["b0"].points == 3


def _fields(h: Host) -> dict[str, object]:
    return {f: getattr(h, f) for f in h.__struct_fields__}


def _steady(history: list[ClusterState], broker: str) -> list[ClusterState]:
    """``history`` with ``broker`` carrying its first snapshot's traffic throughout (its reports
    say nothing of its slope)."""
    first = history[0].brokers[broker]
    out = []
    for st in history:
        brokers = dict(st.brokers)
        brokers[broker] = replace(first, lastUpdate=st.brokers[broker].lastUpdate)
        out.append(ClusterState(cluster=st.cluster, captured_at=st.captured_at,
                                brokers=brokers))
    return out


def test_a_broker_without_varied_history_takes_its_host_class_cost() -> None:
    # 8-core hosts cost more per message per core than 32-core ones (lbctl.truth's generations);
    # a broker whose traffic never varied is given its class's cost, learnt from the other
    # brokers of its class, not the fleet's (the issue's +-40 % by host generation)
    hosts = {f"b{j}": h for j, h in enumerate(mixed_fleet(12, seed=11))}
    steady = next(b for b, h in hosts.items() if h.cores == 8)
    model = LoadModel.learn(_steady(_history(hosts, 24, seed=3), steady))
    assert not model.quality[steady].learnt
    rng = random.Random(5)
    stats = [_bundle(rng) for _ in range(10)]
    host = hosts[steady]
    truth = _true_percent(host, stats) - 100 * host.idle_cpu
    fits = model.fits[steady]["cpu"]
    added = fits.slope * model.drivers(stats).cpu
    fleet = 100 * model.cluster["cpu"].slope / (100 * host.cores) * model.drivers(stats).cpu
    assert added == pytest.approx(truth, rel=0.2)
    assert abs(added - truth) < abs(fleet - truth) / 2


def test_a_noisy_report_is_weighed_against_the_fit() -> None:
    hosts = {f"b{j}": h for j, h in enumerate(mixed_fleet(8, seed=3))}
    history = _history(hosts, 24, seed=1)
    model = LoadModel.learn(history)
    last = history[-1]
    report_err = fit_err = 0.0
    for b, host in hosts.items():
        truth = _true_percent(host, list(last.brokers[b].lastStats.values()))
        reported = last.brokers[b].cpu.percent
        report_err += abs(reported - truth)
        fit_err += abs(model.now(b, "cpu", reported) - truth)
    assert fit_err < 0.8 * report_err
    # one snapshot: the report as it is
    (one,) = history[-1:]
    single = LoadModel.calibrate(one, {b: list(r.lastStats.values())
                                       for b, r in one.brokers.items()})
    assert single.now("b0", "cpu", 42.0) == 42.0


def test_the_margin_is_the_relative_error_at_the_planned_level() -> None:
    hosts = {f"b{j}": h for j, h in enumerate(mixed_fleet(8, seed=3))}
    model = LoadModel.learn(_history(hosts, 24, seed=1))
    low, high = model.margin(0.4), model.margin(0.8)
    assert high == pytest.approx(2 * low) and low > 0.005


def _waving_history(hosts: dict[str, Host], steps: int, seed: int) -> list[ClusterState]:
    """``steps`` snapshots of 10 bundles per broker, 256/1024/4096-byte messages, sized so that
    8-core hosts run at ~150 % and 32-core ones at ~15 %; each bundle follows a +-30 % wave of its
    own phase, so its broker's mix of messages and
    bytes changes (as namespaces peak at different hours); reports with the hosts' noise."""
    rng = random.Random(seed)
    base: dict[str, dict[str, tuple[float, int, float]]] = {}
    for k, (b, h) in enumerate(hosts.items()):
        load = 1.5 if h.cores == 8 else 0.15
        base[b] = {}
        for j in range(10):
            size = rng.choice((256, 1024, 4096))
            rate = load * h.cores * 1e6 / 10 / (2 * h.cpu_us_per_msg
                                                 + 2 * size / 1024 * h.cpu_us_per_kb)
            base[b][f"t/ns-{k}/0x{j:08x}_0x{j + 1:08x}"] = (rate, size,
                                                            rng.uniform(0, 2 * math.pi))
    return _waved(base, steps, hosts, rng)


def _hosts_of_one_ratio(seed: int) -> tuple[dict[str, Host], float]:
    """Six hosts, 8 and 32 cores, costs +-15 % but one byte-to-message cost ratio (the truth's
    ratio, what the model's driver must learn)."""
    rng = random.Random(seed)
    hosts = {}
    for j in range(6):
        f = rng.uniform(0.85, 1.15)
        hosts[f"b{j}"] = Host(cores=8 if j % 2 == 0 else 32, idle_cpu=0.04,
                              cpu_us_per_msg=25 * f, cpu_us_per_kb=3.0 * f)
    return hosts, 3.0 / 1024 / 25


def test_the_byte_cost_is_learnt_on_relative_residuals() -> None:
    # brokers at 150 % and at 15 %: 2 % report noise is 3 points on the first, 0.3 on the
    # second; weighed as points the busy brokers' noise decided the ratio (median miss x1.66,
    # measured), weighed as shares of each broker's usage it is within x1.22
    misses = []
    for seed in range(1, 13):
        hosts, true = _hosts_of_one_ratio(seed)
        model = LoadModel.learn(_waving_history(hosts, 12, seed))
        misses.append(abs(math.log(model.throughput_weight / model.rate_weight / true)))
    assert statistics.median(misses) < math.log(1.3)



def _one_class_history(seed: int, steps: int = 12) -> list[ClusterState]:
    """Eight 16-core hosts of one byte-to-message cost ratio (costs +-15 % together): half carry
    256-byte messages, half 4096-byte ones (one 1024-byte bundle each), every bundle on a +-30 %
    wave of its own phase — each broker's mix barely changes over its history, the brokers'
    mixes differ by x10."""
    rng = random.Random(seed)
    hosts: dict[str, Host] = {}
    base: dict[str, dict[str, tuple[float, int, float]]] = {}
    for k in range(8):
        f = rng.uniform(0.85, 1.15)
        h = hosts[f"b{k}"] = Host(cores=16, idle_cpu=0.04, cpu_us_per_msg=25 * f,
                                  cpu_us_per_kb=3.0 * f)
        main = 256 if k % 2 == 0 else 4096
        base[f"b{k}"] = {}
        for j in range(10):
            size = main if j else 1024
            rate = 0.6 * h.cores * 1e6 / 10 / (2 * h.cpu_us_per_msg
                                               + 2 * size / 1024 * h.cpu_us_per_kb)
            base[f"b{k}"][f"t/ns-{k}/0x{j:08x}_0x{j + 1:08x}"] = (rate, size,
                                                                  rng.uniform(0, 2 * math.pi))
    out = []
    for s in range(steps):
        owned = {b: {x: NamespaceBundleStats(
            msgRateIn=r * (1 + 0.3 * math.sin(2 * math.pi * s / steps + ph)),
            msgRateOut=r * (1 + 0.3 * math.sin(2 * math.pi * s / steps + ph)),
            msgThroughputIn=r * size * (1 + 0.3 * math.sin(2 * math.pi * s / steps + ph)),
            msgThroughputOut=r * size * (1 + 0.3 * math.sin(2 * math.pi * s / steps + ph)),
            topics=2) for x, (r, size, ph) in bundles.items()} for b, bundles in base.items()}
        out.append(cluster_on_hosts("h", T0 + s * 60_000, hosts, owned, rng))
    return out


def test_the_byte_cost_makes_one_host_class_cost_alike() -> None:
    # each history alone hardly tells bytes from messages (median miss x2.2, two of 12 seeds
    # x1000, measured without the class term); that brokers of one class cost about the same on
    # the right driver tells it (x1.35)
    true = 3.0 / 1024 / 25
    misses = []
    for seed in range(1, 13):
        model = LoadModel.learn(_one_class_history(seed))
        misses.append(abs(math.log(model.throughput_weight / model.rate_weight / true)))
    assert statistics.median(misses) < math.log(1.6)


def _steady_mix_history(seed: int, n: int, steps: int = 12) -> tuple[list[ClusterState], float]:
    """``n`` mixed hosts (lbctl.truth's generations, costs +-15 %, idle 2-8 %), 8 bundles each of
    256, 1024 or 4096-byte messages, at 20-120 % of their cores; every broker's bundles follow
    one +-30 % wave of the broker's phase — its mix of messages and bytes never changes over its
    history — but the first broker's, each of its own phase. Returns the history and the hosts'
    median byte-to-message cost ratio."""
    rng = random.Random(seed)
    hosts = {f"b{k}": h for k, h in enumerate(mixed_fleet(n, seed))}
    base: dict[str, dict[str, tuple[float, int, float]]] = {}
    for k, (b, h) in enumerate(hosts.items()):
        phase = rng.uniform(0, 2 * math.pi)
        load = rng.uniform(0.2, 1.2)
        base[b] = {}
        for j in range(8):
            size = rng.choice((256, 1024, 4096))
            rate = load * h.cores * 1e6 / 8 / (2 * h.cpu_us_per_msg
                                                + 2 * size / 1024 * h.cpu_us_per_kb)
            base[b][f"t/ns-{k}/0x{j:08x}_0x{j + 1:08x}"] = (
                rate, size, rng.uniform(0, 2 * math.pi) if k == 0 else phase)
    return _waved(base, steps, hosts, rng), statistics.median(h.cpu_us_per_kb / 1024 / h.cpu_us_per_msg
                                  for h in hosts.values())


@pytest.mark.parametrize("n", [8, 12])
def test_brokers_whose_mix_never_changed_still_tell_the_byte_cost(n: int) -> None:
    # one broker's mix changes, and it alone cannot tell bytes from messages: the fleet-wide
    # least squares over absolute usage took over and missed the ratio by x13 at the median
    # with 8 brokers, x2.6 with 12 (measured; a third of the seeds at a ratio of 0). The brokers
    # whose mix is steady cost alike per unit of the right driver within their host class
    # (measured: x1.7 for both)
    misses = []
    for seed in range(1, 21):
        history, true = _steady_mix_history(seed, n)
        model = LoadModel.learn(history)
        ratio = model.throughput_weight / model.rate_weight if model.rate_weight > 0 else 0.0
        misses.append(abs(math.log(ratio / true)) if ratio > 0 else math.inf)
    assert statistics.median(misses) < math.log(2.0)


@pytest.mark.parametrize("n", [8, 12])
def test_the_byte_ratio_says_how_well_it_is_known(n: int) -> None:
    # the learnt ratio's standard error (the score's curvature) covers its miss of the hosts'
    # own ratio: within two errors on most seeds (measured: 17 of 17 with 8 brokers, 17 of 18
    # with 12; an error a quarter as big fails), not vacuously (root mean square of the misses
    # in errors 0.6 and 0.7 measured: on the safe side; four times as big fails), finite on
    # most (17 and 18 of 20); a snapshot cannot tell it at all
    zs = []
    for seed in range(1, 21):
        history, true = _steady_mix_history(seed, n)
        model = LoadModel.learn(history)
        if math.isfinite(model.ratio_error):
            ratio = model.throughput_weight / model.rate_weight
            zs.append(math.log(ratio / true) / model.ratio_error)
    assert len(zs) >= 15
    assert sum(abs(z) <= 2 for z in zs) >= 0.85 * len(zs)
    assert math.sqrt(sum(z * z for z in zs) / len(zs)) > 0.3
    assert LoadModel.learn(_steady_mix_history(1, n)[0][-1:]).ratio_error == math.inf


def _busy_history(hosts: dict[str, Host], steps: int,
                  seed: int) -> tuple[list[ClusterState], dict[str, list[tuple[float, int]]]]:
    """``steps`` snapshots of 8 bundles per broker sized so that every host runs at 100-160 %;
    each broker's traffic follows a +-20 % wave of its own phase (its bundles +-5 % more), so a
    line of its own is learnt, but only from a fifth of its level; reports with the hosts' noise.
    Returns the history and each broker's bundles (rate, message size) at the wave's mean."""
    rng = random.Random(seed)
    base: dict[str, list[tuple[float, int, float]]] = {}
    for b, h in hosts.items():
        load = rng.uniform(1.0, 1.6)
        base[b] = []
        for _ in range(8):
            size = rng.choice((256, 1024, 4096))
            rate = load * h.cores * 1e6 / 8 / (2 * h.cpu_us_per_msg
                                                + 2 * size / 1024 * h.cpu_us_per_kb)
            base[b].append((rate, size, rng.uniform(0, 2 * math.pi)))
    out = []
    for s in range(steps):
        wave = 2 * math.pi * s / steps
        owned = {}
        for k, (b, bundles) in enumerate(base.items()):
            owned[b] = {}
            for j, (rate, size, phase) in enumerate(bundles):
                r = rate * (1 + 0.2 * math.sin(wave + k) + 0.05 * math.sin(wave + phase))
                owned[b][f"t/ns-{k}/0x{j:08x}_0x{j + 1:08x}"] = NamespaceBundleStats(
                    msgRateIn=r, msgRateOut=r, msgThroughputIn=r * size,
                    msgThroughputOut=r * size, topics=2)
        out.append(cluster_on_hosts("h", T0 + s * 60_000, hosts, owned, rng))
    return out, {b: [(rate, size) for rate, size, _ in bs] for b, bs in base.items()}


def _learnt_busy_fleets() -> Iterator[tuple[LoadModel, dict[str, Host],
                                             dict[str, list[tuple[float, float]]]]]:
    """Eight mixed 12-broker fleets (seeds 1-8), each with the model learnt from a dozen busy
    reports (:func:`_busy_history`) and each broker's bundles (rate, bytes per message)."""
    for seed in range(1, 9):
        hosts = {f"b{j}": h for j, h in enumerate(mixed_fleet(12, seed=seed))}
        history, bundles = _busy_history(hosts, 12, seed)
        yield LoadModel.learn(history), hosts, bundles


def _stats(bundles: list[tuple[float, float]], scale: float) -> list[NamespaceBundleStats]:
    """Bundles of (rate, bytes per message) at ``scale`` of their rate, in and out alike."""
    return [NamespaceBundleStats(msgRateIn=r * scale, msgRateOut=r * scale,
                                 msgThroughputIn=r * size * scale,
                                 msgThroughputOut=r * size * scale) for r, size in bundles]


def test_a_broker_shedding_most_of_its_load_is_predicted_from_the_fleets_idle_usage() -> None:
    # a broker at 100-160 % shedding to a third of its traffic: from its own dozen reports (a
    # +-20 % wave at 2 % noise) its slope is uncertain by several percent, 2-6 points of the
    # change; the fleet's idle usage (a few points on every host, pooled over the brokers' own
    # lines) pins where its line meets zero traffic. Measured, 8 seeds x 12 brokers: without the
    # pooled idle usage median 2.2, p90 5.8 points; with it 1.1 and 2.5
    misses = []
    for model, hosts, bundles in _learnt_busy_fleets():
        for b, host in hosts.items():
            stats = _stats(bundles[b], 0.35)
            predicted = model.percents(b, model.drivers(stats))["cpu"]
            misses.append(abs(predicted - _true_percent(host, stats)))
    misses.sort()
    assert statistics.median(misses) < 1.5
    assert misses[int(0.9 * len(misses))] < 3.5


def test_the_slope_error_covers_a_change_of_another_mix() -> None:
    # the idle usage narrows the slope's posterior, but only as far as the driver's byte ratio
    # is right: a broker keeping a third of its bundles changes its mix, and its predicted change
    # must stay within two reported slope errors for most brokers (measured: 82 %; with the
    # posterior's own error 27 %, a median miss of 3.4 errors)
    within = []
    for model, hosts, bundles in _learnt_busy_fleets():
        for b, host in hosts.items():
            now = _stats(bundles[b], 1.0)
            kept = now[:len(now) // 3]
            change = _true_percent(host, kept) - _true_percent(host, now)
            predicted = model.fits[b]["cpu"].slope * (model.drivers(kept).cpu
                                                      - model.drivers(now).cpu)
            within.append(abs(predicted - change) <= 2 * model.quality[b].slope_error
                          * abs(change))
    assert sum(within) / len(within) >= 0.7


def test_a_class_cost_and_spread_weigh_each_brokers_slope_by_its_precision() -> None:
    # the class prior (and the idle usage) from estimates of known variance: four brokers whose
    # slopes are well known (sd 1 %) and four light ones whose slopes are not (sd 20 %), all of
    # one true cost: the spread found is the costs' own (none, so its floor), not the light
    # brokers' noise — their sd would give ~0.1 — and the cost is the precise brokers'
    rng = random.Random(4)
    naive = []
    for _ in range(20):
        est = [(rng.gauss(1.0, 0.01), 0.01 ** 2) for _ in range(4)]
        est += [(rng.gauss(1.0, 0.2), 0.2 ** 2) for _ in range(4)]
        mean, spread = _pool_normal(est, 0.05, 0.3)
        assert mean == pytest.approx(1.0, abs=0.03)
        assert spread < 0.07
        naive.append(statistics.stdev(k for k, _ in est))
    assert statistics.median(naive) > 0.1
    # costs that do differ (sd 0.1) measured precisely: that spread is found
    spreads = []
    for _ in range(20):
        est = [(rng.gauss(1.0, 0.1) + rng.gauss(0.0, 0.01), 0.01 ** 2) for _ in range(12)]
        spreads.append(_pool_normal(est, 0.05, 0.3)[1])
    assert statistics.median(spreads) == pytest.approx(0.1, abs=0.025)


def _one_snapshot(hosts: dict[str, Host], scale: dict[str, float],
                  seed: int = 7) -> tuple[ClusterState, dict[str, list[NamespaceBundleStats]]]:
    """One snapshot (no report noise): each broker 8 bundles scaled by ``scale[broker]``."""
    rng = random.Random(seed)
    owned = {b: {f"t/ns-{k}/0x{j:08x}_0x{j + 1:08x}": _bundle(rng, scale[b]) for j in range(8)}
             for k, b in enumerate(hosts)}
    state = cluster_on_hosts("s", T0, hosts, owned)
    return state, {b: list(x.values()) for b, x in owned.items()}


def test_a_nearly_idle_broker_takes_its_host_class_cost_from_one_snapshot() -> None:
    # the closed loop's first plan (issue 29): from one report a broker carrying almost nothing
    # cannot tell its slope from its idle usage (here lower than the fleet's): it is given the
    # cost of the loaded brokers reporting its limits, within the error it is given, and marked
    loaded = Host(cores=16, idle_cpu=0.08)
    idle = Host(cores=16, idle_cpu=0.03)
    hosts = {"a": loaded, "b": loaded, "c": Host(cores=8, idle_cpu=0.08), "d": idle,
             "e": Host(cores=16, idle_cpu=0.08)}
    state, carried = _one_snapshot(hosts, {"a": 40.0, "b": 60.0, "c": 20.0, "d": 1.0,
                                           "e": 30.0})
    assert state.brokers["d"].cpu.percent < 100 * loaded.idle_cpu  # within the idle usages
    model = LoadModel.calibrate(state, carried)
    peers = [model.fits[b]["cpu"].slope for b in ("a", "b", "e")]
    q = model.quality["d"]
    slope = model.fits["d"]["cpu"].slope
    assert abs(slope - statistics.mean(peers)) <= q.slope_error * slope < 0.3 * slope
    assert q.borrowed and not any(model.quality[b].borrowed for b in ("a", "b", "c", "e"))
    # the bundles a plan would send it cost it about what they cost it in truth (within what
    # one snapshot tells of its class mates: their idle usage is counted as traffic), where its
    # own report gave it a third of its class's cost
    rng = random.Random(3)
    stats = [_bundle(rng, 40.0) for _ in range(8)]
    truth = _true_percent(idle, stats) - _true_percent(idle, carried["d"])
    added = slope * (model.drivers(stats).cpu)
    assert added == pytest.approx(truth, rel=0.2)
    # its fit reproduces its report (the planner starts from it)
    assert model.fits["d"]["cpu"].percent(model.drivers(carried["d"]).cpu) == pytest.approx(
        state.brokers["d"].cpu.percent)


def test_a_nearly_idle_broker_without_a_loaded_class_mate_keeps_its_own_uncertain_slope() -> None:
    # no other broker reports its limits: nothing to borrow; its slope is as uncertain as can be
    hosts = {"a": Host(cores=16, idle_cpu=0.08), "b": Host(cores=16, idle_cpu=0.08),
             "d": Host(cores=32, idle_cpu=0.03)}
    state, carried = _one_snapshot(hosts, {"a": 40.0, "b": 60.0, "d": 1.0})
    model = LoadModel.calibrate(state, carried)
    q = model.quality["d"]
    assert not q.borrowed and q.slope_error == 1.0


def test_a_light_broker_its_report_says_is_cheaper_than_its_class_keeps_its_own() -> None:
    # its report is below its class's cost of its traffic even at no idle usage: it is not like
    # its class, and its own slope stays
    hosts = {"a": Host(cores=16, idle_cpu=0.05), "b": Host(cores=16, idle_cpu=0.05),
             "d": Host(cores=16, idle_cpu=0.01, cpu_us_per_msg=5.0, cpu_us_per_kb=0.5)}
    state, carried = _one_snapshot(hosts, {"a": 40.0, "b": 60.0, "d": 3.0})
    model = LoadModel.calibrate(state, carried)
    x = model.drivers(carried["d"]).cpu
    assert model.fits["a"]["cpu"].slope * x > state.brokers["d"].cpu.percent
    assert not model.quality["d"].borrowed
    assert model.fits["d"]["cpu"].slope < model.fits["a"]["cpu"].slope / 2


def test_a_change_predicted_before_most_brokers_are_learnt_carries_its_own_error() -> None:
    # a calibration on one snapshot cannot measure its error (SNAPSHOT_MARGIN is a guess at a
    # level): a change it predicts is off by a share of the change; a learnt model's margin
    # measures that itself
    hosts = {f"b{j}": h for j, h in enumerate(mixed_fleet(8, seed=3))}
    history = _history(hosts, 24, seed=1)
    (one,) = history[-1:]
    single = LoadModel.calibrate(one, {b: list(r.lastStats.values())
                                       for b, r in one.brokers.items()})
    assert single.change_error("b0") == EARLY_CHANGE_ERROR
    learnt = LoadModel.learn(history)
    assert all(q.learnt for q in learnt.quality.values())
    assert learnt.change_error("b0") == 0.0
    assert single.change_error("nobody") == 0.0


def _waved(base: dict, steps: int, hosts: dict, rng: random.Random) -> list:
    """``steps`` reports a minute apart: each bundle's ``(rate, size, phase)`` of ``base`` on a
    sine wave of ±30 % over the whole run."""
    out = []
    for s in range(steps):
        owned = {}
        for b, bundles in base.items():
            owned[b] = {}
            for x, (rate, size, phase) in bundles.items():
                r = rate * (1 + 0.3 * math.sin(2 * math.pi * s / steps + phase))
                owned[b][x] = NamespaceBundleStats(msgRateIn=r, msgRateOut=r,
                                                   msgThroughputIn=r * size,
                                                   msgThroughputOut=r * size, topics=2)
        out.append(cluster_on_hosts("h", T0 + s * 60_000, hosts, owned, rng))
    return out

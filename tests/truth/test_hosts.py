"""The truth host model: Pulsar's units, demand not capped, traffic costs, reproducible fleets."""

from __future__ import annotations

import random

from lbctl.truth.hosts import Host, Traffic, mixed_fleet, total, uniform_fleet


def test_idle_host_reports_its_idle_cpu_in_pulsar_units() -> None:
    u = Host(cores=16, idle_cpu=0.05).usage(Traffic())
    assert u.cpu.limit == 1600.0  # getTotalCpuLimit: 100 per core
    assert u.cpu.usage == 80.0
    assert u.bandwidth_in.usage == 0.0 and u.bandwidth_in.limit == 10e6  # Kbit/s


def test_cpu_follows_messages_and_bytes_and_is_not_capped() -> None:
    host = Host(cores=8, idle_cpu=0.0, cpu_us_per_msg=20.0, cpu_us_per_kb=0.0)
    light = host.usage(Traffic(msg_rate_in=100_000.0)).cpu
    heavy = host.usage(Traffic(msg_rate_in=1_000_000.0)).cpu
    assert light.usage == 200.0  # 2 cores busy
    assert heavy.usage == 2000.0 and heavy.percent > 100.0  # demand beyond the limit is shown


def test_bandwidth_in_kilobits() -> None:
    u = Host().usage(Traffic(throughput_in=1_000_000.0, throughput_out=2_000_000.0))
    assert u.bandwidth_in.usage == 8000.0
    assert u.bandwidth_out.usage == 16000.0


def test_total_sums_every_field() -> None:
    t = total([Traffic(1, 2, 3, 4, 5, 6, 7), Traffic(10, 20, 30, 40, 50, 60, 70)])
    assert t == Traffic(11, 22, 33, 44, 55, 66, 77)
    assert t.scaled(2.0) == Traffic(22, 44, 66, 88, 55, 66, 77)
    assert t.stats().msgRateIn == 11 and t.stats().topics == 55


def test_noise_is_reproducible_and_small() -> None:
    host = Host(noise=0.02)
    a = host.usage(Traffic(msg_rate_in=1e5), random.Random(1)).cpu.usage
    b = host.usage(Traffic(msg_rate_in=1e5), random.Random(1)).cpu.usage
    exact = host.usage(Traffic(msg_rate_in=1e5)).cpu.usage
    assert a == b and a != exact and abs(a - exact) / exact < 0.2


def test_mixed_fleet_is_mixed_and_reproducible() -> None:
    fleet = mixed_fleet(60, seed=7)
    assert fleet == mixed_fleet(60, seed=7)
    assert {h.cores for h in fleet} == {8, 16, 32}
    assert all(0.02 <= h.idle_cpu <= 0.08 for h in fleet)
    assert len(set(uniform_fleet(3))) == 1

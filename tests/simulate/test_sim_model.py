"""The simulator's load model: calibration reproduces the snapshot; load follows carried traffic."""

from __future__ import annotations

from pathlib import Path

import pytest

from lbctl.model.loadmodel import Fit, LoadModel
from lbctl.sources.snapshot import read_snapshots

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _model(name: str, idle: float | None = None):
    st = read_snapshots([EXAMPLES / name])[0]
    carried = {b: list(r.lastStats.values()) for b, r in st.brokers.items()}
    return st, LoadModel.calibrate(st, carried, idle)


@pytest.mark.parametrize("name", ["hot-broker.json", "balanced.json", "rolling-restart.yaml",
                                  "pip364-90-10.json", "pip220-12-2-1-1.json"])
def test_calibration_reproduces_every_reported_percentage(name: str) -> None:
    st, model = _model(name)
    for b, rep in st.brokers.items():
        again = model.report(b, rep, rep.lastStats)
        for res in ("cpu", "bandwidthIn", "bandwidthOut"):
            assert getattr(again, res).percent == pytest.approx(getattr(rep, res).percent, abs=1e-4)
            assert getattr(again, res).limit == getattr(rep, res).limit
        # memory and direct memory are held as reported
        assert again.memory == rep.memory and again.directMemory == rep.directMemory


def test_proportional_cluster_has_no_base_and_moves_load_with_the_bundle() -> None:
    st, model = _model("pip364-90-10.json")
    assert model.cluster["cpu"].base == pytest.approx(0.0, abs=1e-9)
    b1, b2 = list(st.brokers)
    # both hosts cost the same per unit of traffic: 90 % for 90 units, 10 % for 10
    assert model.fits[b1]["cpu"].slope == pytest.approx(model.fits[b2]["cpu"].slope)
    big = "acme/clickstream/0x00000000_0xffffffff"
    s1 = {k: v for k, v in st.brokers[b1].lastStats.items() if k != big}
    s2 = {**st.brokers[b2].lastStats, big: st.brokers[b1].lastStats[big]}
    assert model.report(b1, st.brokers[b1], s1).cpu.percent == pytest.approx(50.0, abs=1e-4)
    assert model.report(b2, st.brokers[b2], s2).cpu.percent == pytest.approx(50.0, abs=1e-4)
    r1 = model.report(b1, st.brokers[b1], s1)
    assert r1.numBundles == 5 and r1.lastBundleLosses == (big,)
    assert r1.msgRateIn == pytest.approx(sum(s.msgRateIn for s in s1.values()))


def test_idle_broker_keeps_its_own_base_and_takes_the_slope_its_capacity_gives() -> None:
    st, model = _model("rolling-restart.yaml")
    idle = "broker-6.pulsar.svc:8080"
    prior = 100 * model.cluster["cpu"].slope / st.brokers[idle].cpu.limit
    assert model.fits[idle]["cpu"] == Fit(pytest.approx(0.4, abs=1e-4), pytest.approx(prior))
    assert 0.0 <= model.cluster["cpu"].base <= 0.4 + 1e-6
    assert model.cluster["cpu"].slope > 0


def test_idle_usage_overrides_the_fitted_base_but_never_exceeds_a_broker() -> None:
    st, model = _model("pip364-90-10.json", idle=5.0)
    b1, b2 = list(st.brokers)
    assert model.fits[b1]["cpu"].base == 5.0
    assert model.fits[b1]["cpu"].slope == pytest.approx((90.0 - 5.0) / model.drivers(
        st.brokers[b1].lastStats.values()).cpu)
    st, model = _model("rolling-restart.yaml", idle=20.0)
    assert model.cluster["cpu"].base == pytest.approx(0.4, abs=1e-4)  # clamped to the lowest broker

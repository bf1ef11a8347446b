"""stale-load-report on the extensible load manager says what TransferShedder does with outdated
load data (``LoadStats.update``, TransferShedder at 028ed6295a34): an outdated broker is left out
and the others are balanced; the cycle is skipped (Skip/OutDatedData) only when every broker is
outdated. The TTL is a Java ``long`` product, as the strategy computes it: a TTL of
``Long.MAX_VALUE`` seconds wraps to -1000 ms and makes every broker outdated."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from lbctl.doctor.base import Finding
from lbctl.doctor.run import diagnose
from lbctl.loadmanager.select import Options, run
from lbctl.sources.snapshot import read_snapshots

ROOT = Path(__file__).resolve().parents[2]
SKEWED = ROOT / "examples" / "extensible" / "skewed.json"
TTL = "loadBalancerBrokerLoadDataTTLInSeconds"
LONG_MAX = 2**63 - 1


def _snapshot(tmp_path: Path, ages_s: dict[int, int]) -> Path:
    """skewed.json with broker i's load data ``ages_s[i]`` seconds old (others 5 s; it has five brokers)."""
    doc = json.loads(SKEWED.read_text())
    now = int(datetime.fromisoformat(doc["capturedAt"].replace("Z", "+00:00")).timestamp() * 1000)
    for i, data in enumerate(doc["brokerLoadData"].values()):
        data["updatedAt"] = now - ages_s.get(i, 5) * 1000
    out = tmp_path / "snap.json"
    out.write_text(json.dumps(doc))
    return out


def _stale(path: Path, **overrides: str) -> list[Finding]:
    report = diagnose(read_snapshots([path]), Options(overrides=overrides or None))
    return [f for f in report.findings if f.rule == "stale-load-report"]


def _outdated_by_the_shedder(path: Path, **overrides: str) -> tuple[set[str], str | None]:
    """The brokers TransferShedder leaves out as outdated, and its skip reason."""
    (r,) = run(read_snapshots([path]), Options(overrides=overrides or None))
    out = {s.broker for s in r.shed.brokers if not s.counted and s.why.code == "outdated"}
    return out, (str(r.shed.skip[1]) if r.shed.skip else None)


def test_one_outdated_broker_is_left_out_not_the_cycle(tmp_path: Path) -> None:
    path = _snapshot(tmp_path, {1: 3600})  # TTL 1800 s by default
    (f,) = _stale(path)
    assert list(f.brokers) == ["broker-2.pulsar.svc:8080"]
    assert "1 of 5 broker(s)" in f.found
    assert "out of the cycle" in f.why and "other 4 broker(s) are balanced" in f.why
    assert "skips the whole cycle" not in f.why
    outdated, skip = _outdated_by_the_shedder(path)
    assert outdated == set(f.brokers)
    assert skip != "OutDatedData"  # the cycle went on


def test_every_broker_outdated_skips_the_cycle(tmp_path: Path) -> None:
    path = _snapshot(tmp_path, dict.fromkeys(range(5), 7200))
    (f,) = _stale(path)
    assert len(f.brokers) == 5 and "5 of 5" in f.found
    assert "skips the whole cycle (Skip/OutDatedData" in f.why
    outdated, skip = _outdated_by_the_shedder(path)
    assert outdated == set(f.brokers) and skip == "OutDatedData"


def test_a_ttl_that_overflows_a_long_makes_every_broker_outdated(tmp_path: Path) -> None:
    """``Long.MAX_VALUE`` seconds, meant as "never outdated": × 1000 wraps to -1000 ms. A Python
    product would read it as forever and find nothing."""
    path = _snapshot(tmp_path, {})
    assert _stale(path) == []
    (f,) = _stale(path, **{TTL: str(LONG_MAX)})
    assert len(f.brokers) == 5
    assert "overflows Java's long" in f.why and "-1000 ms" in f.why
    assert "skips the whole cycle" in f.why
    outdated, skip = _outdated_by_the_shedder(path, **{TTL: str(LONG_MAX)})
    assert outdated == set(f.brokers) and skip == "OutDatedData"


def test_the_bound_is_strictly_older_than_the_ttl(tmp_path: Path) -> None:
    assert _stale(_snapshot(tmp_path, {0: 1800}), **{TTL: "1800"}) == []
    (f,) = _stale(_snapshot(tmp_path, {0: 1801}), **{TTL: "1800"})
    assert list(f.brokers) == ["broker-1.pulsar.svc:8080"]


def test_the_split_interval_set_on_a_modular_cluster_is_flagged() -> None:
    """loadBalancerSplitIntervalMinutes is the extensible SplitScheduler's period: the modular
    load manager splits on report writes and never reads it (load-manager-mismatch)."""
    from lbctl.sources.snapshot import read_snapshots as read
    from tests.paths import DATA

    report = diagnose(read([DATA / "doctor" / "base.json"]),
                      Options(overrides={"loadBalancerSplitIntervalMinutes": "5"}))
    (f,) = [f for f in report.findings if f.rule == "load-manager-mismatch"]
    assert "loadBalancerSplitIntervalMinutes=5" in f.found

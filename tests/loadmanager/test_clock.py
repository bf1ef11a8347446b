"""Replay on the leader's clock: the cycles that elapse between snapshots count.

Pulsar runs a shedding cycle every ``loadBalancerSheddingIntervalMinutes``
(``LoadSheddingTask`` / ``UnloadScheduler``), so between two snapshots ``Δt`` apart the leader ran
``⌊Δt / interval⌋`` cycles; hit counts (``TransferShedder.unloadConditionHitCount``,
``AvgShedder.brokerHitCountForHigh/Low``), ThresholdShedder's ``brokerAvgResourceUsage`` and the
grace period advance per cycle. A single snapshot is the leader's first sight (Pulsar's unit-test
semantics: ``TransferShedderTest`` starts every case from a new shedder, hit count 0).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.loadmanager.base import CycleResult
from lbctl.loadmanager.clock import (
    CATCH_UP_LIMIT,
    STEADY_LIMIT,
    cycles_between,
    cycles_to_open,
    reports_written,
    warm_up_cycles,
)
from lbctl.loadmanager.extensible import ExtensibleCycleResult
from lbctl.loadmanager.select import Options, run
from lbctl.model.cluster import ClusterState
from lbctl.model.decision import Label, Reason
from lbctl.records import replace
from lbctl.sources.snapshot import read_snapshots
from tests.factories import MB, broker, hashed_names, state, stats

ROOT = Path(__file__).resolve().parents[2]
EXT = ROOT / "examples" / "extensible"
MINUTE = 60_000


def _later(s: ClusterState, ms: int) -> ClusterState:
    """The same state observed ``ms`` later (load data republished at the new time)."""
    pub = {b: replace(p, data=replace(p.data, updatedAt=p.data.updatedAt + ms,
                                      reportedAt=p.data.reportedAt + ms))
           for b, p in s.broker_load_data.items()}
    return replace(s, captured_at=s.captured_at + ms, broker_load_data=pub)


def _imbalanced() -> ClusterState:
    """PIP-220's first case (brokers at 12, 2, 1, 1 %): TransferShedder's condition holds, but
    its default hit-count gate (``loadBalancerSheddingConditionHitCountThreshold`` = 3) needs it
    to hold more than 3 cycles in a row."""
    return read_snapshots([EXT / "pip220-12-2-1-1.jsonl"])[0]


def test_cycles_between_follow_the_shedding_interval() -> None:
    from lbctl.config import resolve

    conf = resolve({"loadBalancerSheddingIntervalMinutes": 5})
    assert cycles_between(0, 10 * MINUTE, conf) == 2
    assert cycles_between(0, 14 * MINUTE, conf) == 2
    assert cycles_between(0, MINUTE, conf) == 1  # each snapshot is at least one cycle


def test_a_single_snapshot_is_a_first_sight() -> None:
    """Hit count 1 of > 3: ``Skip/HitCount``, and explain's projection: 3 more cycles."""
    (r,) = run([_imbalanced()], Options(project=True))
    plan = r.plan()
    assert plan.decision is not None
    assert (plan.decision.label, plan.decision.reason) == (Label.SKIP, Reason.HIT_COUNT)
    assert plan.history == {"firstSight": True, "intervalMinutes": 1}
    assert r.opens_in == 3 and r.projected
    assert "3 more cycle(s)" in r.explanation().to_text()


def test_two_identical_snapshots_ten_minutes_apart_transfer() -> None:
    """The issue's case: the leader ran 10 cycles; from the 4th the gate was open."""
    s = _imbalanced()
    rs = run([s, _later(s, 10 * MINUTE)], Options())
    assert rs[0].plan().actions == ()
    last = rs[1].plan()
    assert last.decision is not None and last.decision.label is Label.SUCCESS
    assert {a.action for a in last.actions} == {"transfer"}
    assert last.history["cyclesSincePrevious"] == 10
    # replayed on the earlier state up to (not including) the cycle that would have acted
    assert last.history["replayedCycles"] == 2
    assert last.history["wouldActAt"] == "2026-03-12T14:03:00Z"
    # one minute apart, the same two snapshots are two cycles: the gate stays closed
    rs = run([s, _later(s, MINUTE)], Options())
    assert rs[1].plan().actions == () and rs[1].shed is not None and rs[1].shed.hit_count == 2


def test_assume_steady_opens_every_gate() -> None:
    (r,) = run([_imbalanced()], Options(assume_steady=True))
    plan = r.plan()
    assert plan.decision is not None and plan.decision.label is Label.SUCCESS
    assert plan.history["steadyCycles"] == 3 and "cyclesSincePrevious" not in plan.history


def test_threshold_shedder_average_advances_per_elapsed_cycle() -> None:
    """ThresholdShedder's ``brokerAvgResourceUsage`` takes ``old·0.9 + 0.1·usage`` once per cycle:
    after a jump from 30 % to 90 %, one cycle later the average is 36 %, below the trigger; ten
    cycles later (catching up on the held state) it would have crossed it."""
    bundles = {f"t/ns/0x{i:08x}_0x{i + 1:08x}": stats(100, 0, 20 * MB) for i in range(4)}
    others = {f"t/o{j}/0x00000000_0xffffffff": stats(100, 0, 20 * MB) for j in range(2)}

    def snap(hot_cpu: float, at: int) -> ClusterState:
        return state({"hot:8080": broker(cpu=(hot_cpu, 100), bundles=bundles),
                      "a:8080": broker(cpu=(30, 100), bundles={k: v for k, v in others.items()
                                                               if "o0" in k}),
                      "b:8080": broker(cpu=(30, 100), bundles={k: v for k, v in others.items()
                                                               if "o1" in k})}, now=at)

    start = 1_763_000_000_000
    quick = run([snap(30, start), snap(90, start + MINUTE)], Options(strategy="ThresholdShedder"))
    assert quick[-1].plan().actions == ()
    slow = run([snap(30, start), snap(90, start + MINUTE), snap(90, start + 11 * MINUTE)],
               Options(strategy="ThresholdShedder"))
    last = slow[-1]
    assert [a.broker for a in last.plan().actions] and last.elapsed.cycles == 10
    # the replayed cycles advanced the average: it stopped at the first that would have acted
    assert 0 < last.elapsed.replayed < 9 and last.elapsed.would_act_at is not None


def test_grace_period_expires_on_the_clock() -> None:
    """``loadBalancerSheddingGracePeriodMinutes`` (30): a bundle unloaded at the first snapshot is
    eligible again 31 minutes later, whatever happened in between."""
    from tests.factories import skewed_overload

    s = skewed_overload()
    rs = run([s, replace(s, captured_at=s.captured_at + 31 * MINUTE)],
             Options(strategy="OverloadShedder"))
    first = {a.bundle for a in rs[0].plan().actions}
    assert first and first & {a.bundle for a in rs[1].plan().actions}
    rs = run([s, replace(s, captured_at=s.captured_at + 5 * MINUTE)],
             Options(strategy="OverloadShedder"))
    assert not first & {a.bundle for a in rs[1].plan().actions}


def test_bundle_samples_count_report_writes() -> None:
    """The leader samples every bundle each time a broker writes its report
    (``ModularLoadManagerImpl.updateAll`` on the write notification)."""
    b = {"t/ns/0x00000000_0xffffffff": stats(100)}
    s1 = state({"a:8080": replace(broker(bundles=b), lastUpdate=1),
                "b:8080": replace(broker(), lastUpdate=1)})
    s2 = replace(s1, brokers={"a:8080": replace(s1.brokers["a:8080"], lastUpdate=5),
                              "b:8080": replace(s1.brokers["b:8080"], lastUpdate=6)})
    assert reports_written(s1, s2) == 2
    assert reports_written(s1, s1) == 0
    rs = run([s1, s2], Options(strategy="OverloadShedder"))
    data = rs[1].load.bundle_data["t/ns/0x00000000_0xffffffff"]
    assert data.shortTermData.numSamples == 3  # the first sight's sample, then two writes


def test_catch_up_is_capped_with_a_warning() -> None:
    from tests.factories import balanced

    s = balanced()
    rs = run([s, replace(s, captured_at=s.captured_at + (CATCH_UP_LIMIT + 10) * MINUTE)],
             Options(strategy="AvgShedder", placement="AvgShedder"))
    # a balanced state reaches a fixed point at once: nothing to replay, nothing capped
    assert rs[1].elapsed.replayed <= 1 and rs[1].elapsed.cycles == CATCH_UP_LIMIT + 10
    assert rs[1].elapsed.capped
    assert any("only the first" in w.message for w in rs[1].plan().all_warnings())


def test_warm_up_cycles_per_strategy() -> None:
    from lbctl.config import Settings

    s = Settings.defaults()
    assert warm_up_cycles("TransferShedder", s) == 4
    assert warm_up_cycles("AvgShedder", s) == 8
    assert warm_up_cycles("ThresholdShedder", s) == 10
    assert warm_up_cycles("OverloadShedder", s) == 1


def test_recommend_cli_on_a_sequence_and_steady(tmp_path: Path) -> None:
    s = read_snapshots([EXT / "pip220-12-2-1-1.jsonl"])
    line = (EXT / "pip220-12-2-1-1.jsonl").read_text().splitlines()[0]
    data = json.loads(line)
    later = json.loads(line)
    later["capturedAt"] = "2026-03-12T14:10:00Z"
    for d in later["brokerLoadData"].values():
        d["updatedAt"] += 10 * MINUTE
    f = tmp_path / "two.jsonl"
    f.write_text(json.dumps(data) + "\n" + json.dumps(later) + "\n")
    out = CliRunner().invoke(app, ["recommend", str(f), "-o", "json"])
    assert out.exit_code == 0, out.output
    plan = json.loads(out.stdout)
    assert plan["decision"]["label"] == "Success" and plan["history"]["cyclesSincePrevious"] == 10
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps(data) + "\n")
    out = CliRunner().invoke(app, ["recommend", str(one), "--assume-steady", "-o", "json"])
    assert json.loads(out.stdout)["decision"]["label"] == "Success"
    out = CliRunner().invoke(app, ["explain", str(one)])
    assert "Skip/HitCount" in out.stdout and "3 more cycle(s)" in out.stdout
    assert s  # the example is a sequence of four


def _projections(r: CycleResult) -> tuple[int | None, int, int | None, int]:
    """explain's projection of ``r`` both ways: (answer, held cycles run) with the projection's
    short cycles (``last``) and with whole ones (as before: every cycle to the limit)."""
    from lbctl.loadmanager.extensible import ExtensibleLoadManager

    counted: list[int] = []

    class Counting(ExtensibleLoadManager):
        def run_cycle(self, *a: Any, **k: Any) -> ExtensibleCycleResult:
            counted.append(1)
            return super().run_cycle(*a, **k)

        def projected_cycle(self, *a: Any, **k: Any) -> ExtensibleCycleResult:
            counted.append(1)
            return super().projected_cycle(*a, **k)

    lm = Counting()
    short = cycles_to_open(lm, r.state, r.settings, r.memory, last=r)
    n_short = len(counted)
    counted.clear()
    whole = cycles_to_open(lm, r.state, r.settings, r.memory)
    return short, n_short, whole, len(counted)


def test_the_projection_answers_as_whole_cycles_do() -> None:
    """A gate that opens: the projection's short cycles (no splits, no placement previews, the
    snapshot's top bundles) find the same cycle as whole ones."""
    (r,) = run([_imbalanced()], Options())
    assert _projections(r) == (3, 3, 3, 3)


def test_the_projection_stops_once_the_hit_count_passes_the_threshold() -> None:
    """TransferShedder's condition holds every cycle but nothing can move
    (``loadBalancerMaxNumberOfBrokerSheddingPerCycle`` = 0): the hit count grows for ever and
    whole cycles run to the limit (64) to answer "not within 64"; the projection knows a count
    past the threshold decides nothing more and stops at the fixed point, with the same answer."""
    (r,) = run([_imbalanced()],
               Options(overrides={"loadBalancerMaxNumberOfBrokerSheddingPerCycle": "0"}))
    assert isinstance(r, ExtensibleCycleResult)
    assert r.shed is not None and r.shed.hit_count == 1 and not r.acted
    short, n_short, whole, n_whole = _projections(r)
    assert short is None and whole is None
    assert n_whole == STEADY_LIMIT
    assert n_short == 3  # hit counts 2, 3 and 4: the last two the same once cut at 3


def _avg_grace() -> ClusterState:
    """AvgShedder on two brokers (90 % and 10 % CPU: gap 80, the high hit count gates, due every
    second cycle). Of the busy broker's bundles only ``small`` fits the amount, and it was
    unloaded 29 minutes before the snapshot: the first due cycle finds nothing to move (and
    drops the counts), the next due one (3 cycles on, the grace period over) moves it."""
    small, big = "t/ns/0x00000000_0x80000000", "t/ns/0x80000000_0xffffffff"
    s = state({"a:8080": broker(cpu=(90, 100), bundles={small: stats(3000), big: stats(20000)}),
               "b:8080": broker(cpu=(10, 100))}, now=100 * MINUTE)
    return replace(s, recently_unloaded={small: 71 * MINUTE})


def test_the_modular_projection_answers_as_whole_cycles_do(monkeypatch: Any) -> None:
    """The modular load manager's projected cycles take the snapshot's own cycle's load data
    (no load report written: the leader's maps, bundle data and time averages are the same)
    with their own clock and recently unloaded bundles: the same answer as whole cycles, the
    grace period running out on the way, without building the load data again."""
    import lbctl.loadmanager.modular as modular
    from lbctl.loadmanager.select import manager

    s = _avg_grace()
    lm, settings = manager([s], Options(strategy="AvgShedder", placement="AvgShedder"))
    (r,) = lm.run_sequence([s], settings)
    assert isinstance(r, modular.ModularCycleResult) and not r.acted and r.gate is None
    built: list[int] = []
    real = modular.build_load_data

    def counting(*a: Any, **k: Any) -> Any:
        built.append(1)
        return real(*a, **k)

    monkeypatch.setattr(modular, "build_load_data", counting)
    assert cycles_to_open(lm, r.state, r.settings, r.memory) == 3
    assert len(built) == 3
    built.clear()
    assert cycles_to_open(lm, r.state, r.settings, r.memory, last=r) == 3
    assert not built


def _avg_deep(n: int) -> ClusterState:
    """AvgShedder on two brokers (90 % and 10 % CPU), the busy one owning ``n`` bundles of
    distinct rates: its largest in ``t/ns-0``, the others in ``t/ns-1``. The snapshot's own cycle
    counts the first hit; the next one is due and moves the largest bundle first."""
    big = {"t/ns-0/0x00000000_0x00010000": stats(10_000.0 + n)}
    rest = {f"t/ns-1/0x{i:08x}_0x{i + 1:08x}": stats(1000.0 + i) for i in range(1, n)}
    return state({"a:8080": broker(cpu=(90, 100), bundles={**big, **rest}),
                  "b:8080": broker(cpu=(10, 100))}, now=100 * MINUTE)


def _counting_selections(monkeypatch: Any) -> list[bool]:
    """Each ``AvgShedder.selections`` call's ``first_only``, as the projection makes them."""
    from lbctl.strategies.shedding.avg import AvgShedder

    calls: list[bool] = []
    real = AvgShedder.selections

    def counting(self: AvgShedder, *a: Any, **k: Any) -> Any:
        calls.append(bool(a[3] if len(a) > 3 else k.get("first_only", False)))
        return real(self, *a, **k)

    monkeypatch.setattr(AvgShedder, "selections", counting)
    return calls


def test_the_modular_projection_takes_a_deep_brokers_first_selection_alone(
        monkeypatch: Any) -> None:
    """A projected AvgShedder cycle that acts needs the first unload carried out only: the
    shedder gives each broker's first selection, found without sorting the deep broker's
    bundles or hashing their names (values that do not tie need no map order) — and the
    projection answers as whole cycles do."""
    from lbctl.loadmanager.select import manager

    s = _avg_deep(400)
    lm, settings = manager([s], Options(strategy="AvgShedder", placement="AvgShedder"))
    (r,) = lm.run_sequence([s], settings)
    assert not r.acted and r.gate is None
    assert cycles_to_open(lm, r.state, r.settings, r.memory) == 1
    hashed = hashed_names(monkeypatch)
    calls = _counting_selections(monkeypatch)
    assert cycles_to_open(lm, r.state, r.settings, r.memory, last=r) == 1
    assert calls == [True]  # the first selections sufficed: no second pass
    assert not hashed  # before: every one of the 400 names, for the map order


def test_the_modular_projection_takes_every_selection_when_the_first_is_skipped(
        monkeypatch: Any) -> None:
    """When a broker's first selection is not unloaded (its namespace is excluded from
    shedding), the projection cannot tell from it whether a later one is: it takes the whole
    selections and runs the unloads again — the same answers as whole cycles, whether the
    next bundle is unloaded or every one is excluded."""
    from lbctl.loadmanager.select import manager

    s = _avg_deep(50)
    for excluded, expected in (("t/ns-0", 1), ("t/ns-0,t/ns-1", None)):
        opts = Options(strategy="AvgShedder", placement="AvgShedder",
                       overrides={"loadBalancerSheddingExcludedNamespaces": excluded})
        lm, settings = manager([s], opts)
        (r,) = lm.run_sequence([s], settings)
        assert not r.acted and r.gate is None
        whole = cycles_to_open(lm, r.state, r.settings, r.memory)
        calls = _counting_selections(monkeypatch)
        assert cycles_to_open(lm, r.state, r.settings, r.memory, last=r) == whole == expected
        assert calls[:2] == [True, False]
        monkeypatch.undo()

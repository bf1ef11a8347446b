"""The split check's own cadence: ``loadBalancerSplitIntervalMinutes`` (the extensible
``SplitScheduler``'s ``scheduleAtFixedRate`` period, SplitScheduler at 1a5df8f3962d) against the
shedding cycles of ``loadBalancerSheddingIntervalMinutes``; the modular load manager has no split
timer (``checkNamespaceBundleSplit`` runs in ``ModularLoadManagerImpl.updateAll``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lbctl.config import Settings, resolve
from lbctl.loadmanager.clock import replay, split_runs
from lbctl.loadmanager.extensible import ExtensibleCycleResult, ExtensibleLoadManager
from lbctl.model.cluster import ClusterState
from lbctl.sources.snapshot import read_snapshots
from tests.jdk import needs_jdk, run_java

ROOT = Path(__file__).resolve().parents[2]
SKEWED = ROOT / "examples" / "extensible" / "skewed.json"
HOT = "acme/telemetry/0xc9249246_0xdb6db6d8"  # broker-5's 50 MiB/s bundle
MINUTE = 60_000


def _held(n: int, every_min: int) -> list[ClusterState]:
    """The skewed snapshot seen ``n`` times, ``every_min`` minutes apart (the same figures)."""
    (st,) = read_snapshots([SKEWED])
    lm = ExtensibleLoadManager()
    return [lm.held(st, st.captured_at + j * every_min * MINUTE) for j in range(n)]


def _settings(st: ClusterState, **conf: object) -> Settings:
    return resolve(st.config, {}, {
        "loadBalancerNamespaceBundleSplitConditionHitCountThreshold": "2",
        "loadBalancerNamespaceBundleMaxBandwidthMbytes": "45",
        "loadBalancerSheddingEnabled": "false", **{k: str(v) for k, v in conf.items()}})


def _hot_splits(states: list[ClusterState], **conf: object) -> list[int | None]:
    """Per cycle: the hot bundle's hit count after the cycle, or -1 when the cycle split it, or
    None when no split check ran in it."""
    settings = [_settings(s, **conf) for s in states]
    out: list[int | None] = []
    for r in replay(ExtensibleLoadManager(), states, settings):
        assert isinstance(r, ExtensibleCycleResult)
        if not r.splits:
            out.append(None)
        elif any(d.bundle == HOT for x in r.splits for d in x.decisions):
            out.append(-1)
        else:
            out.append(next(x.hit_counts.get(HOT, 0) for x in r.splits
                            if any(c.bundle == HOT for c in x.checks)))
    return out


def test_equal_intervals_check_every_cycle() -> None:
    # threshold 2: hit counts 1, 2, then the third check splits (hitCount > threshold)
    assert _hot_splits(_held(6, 1)) == [1, 2, -1, 1, 2, -1]
    assert _hot_splits(_held(4, 5), loadBalancerSheddingIntervalMinutes=5,
                       loadBalancerSplitIntervalMinutes=5) == [1, 2, -1, 1]


def test_split_every_5_minutes_with_1_minute_shedding() -> None:
    """One shedding cycle in five sees the split check: the split comes 10 minutes later than
    with a check per cycle."""
    got = _hot_splits(_held(12, 1), loadBalancerSplitIntervalMinutes=5)
    assert got == [1, None, None, None, None, 2, None, None, None, None, -1, None]


def test_split_every_minute_with_5_minute_shedding() -> None:
    """Five split checks per 5-minute shedding cycle: the hot bundle is split in the second cycle
    (its second and third checks), not the third; a held snapshot still shows it, so the third
    cycle's checks count it again from zero and split it again."""
    got = _hot_splits(_held(3, 5), loadBalancerSheddingIntervalMinutes=5,
                      loadBalancerSplitIntervalMinutes=1)
    assert got == [1, -1, -1]


def test_snapshots_further_apart_than_the_shedding_interval() -> None:
    """Snapshots 10 minutes apart with 1-minute shedding and 5-minute splits: the replayed cycles
    in between carry the split schedule (two checks per gap)."""
    # a check per cycle: 10 between snapshots, the hit count cycling 1, 2, split
    assert _hot_splits(_held(3, 10)) == [1, 2, -1]
    # every 5 minutes: checks at 5 (replayed) and 10 (the snapshot's own cycle: it splits)
    assert _hot_splits(_held(3, 10), loadBalancerSplitIntervalMinutes=5) == [1, -1, 2]


@pytest.mark.parametrize("period, shed, started, waited, want", [
    (1, 1, True, 0, (1, 0)),
    (5, 1, False, 0, (1, 0)),  # the first cycle lbctl runs lines the timers up
    (5, 1, True, 0, (0, MINUTE)),
    (5, 1, True, 4 * MINUTE, (1, 0)),
    (1, 5, True, 0, (5, 0)),
    (2, 3, True, MINUTE, (2, 0)),
    (2, 3, True, 0, (1, MINUTE)),
    (0, 1, True, 0, (0, 0)),  # scheduleAtFixedRate refuses a period <= 0: never
    (-3, 1, False, 0, (0, 0)),
])
def test_split_runs(period: int, shed: int, started: bool, waited: int,
                    want: tuple[int, int]) -> None:
    s = Settings.defaults().with_values(loadBalancerSplitIntervalMinutes=period,
                                        loadBalancerSheddingIntervalMinutes=shed)
    assert split_runs(s, started, waited) == want


def test_the_plan_lists_the_split_interval_only_where_it_changes_the_cadence() -> None:
    (st,) = _held(1, 1)
    lm = ExtensibleLoadManager()
    same = _settings(st)
    lm.run_cycle(st, same).plan().to_dict()
    assert "loadBalancerSplitIntervalMinutes" not in same.read_values()
    other = _settings(st, loadBalancerSplitIntervalMinutes=5)
    lm.run_cycle(st, other)
    assert other.read_values()["loadBalancerSplitIntervalMinutes"] == 5


# --- the modular load manager: the split check follows the report writes -------------------------
def _modular_splits(lm_states: list[ClusterState], **conf: str) -> list[list[str]]:
    from lbctl.loadmanager.select import Options, run

    rs = run(lm_states, Options(strategy="OverloadShedder", overrides=conf or None))
    return [[s.candidate.bundle for s in r.splits if s.skipped is None] for r in rs]


def _two_brokers(at: int, written: bool = False) -> ClusterState:
    """tests/loadmanager/test_gates.py's hot bundle at ``at``; ``written``: broker a wrote its
    report then (``lastUpdate``), else neither report changed since the previous snapshot."""
    from lbctl.records import replace
    from tests.loadmanager.test_gates import NOW, two_brokers

    st = replace(two_brokers(), captured_at=NOW + at)
    if written:
        a = replace(st.brokers["a:8080"], lastUpdate=NOW + at)
        st = replace(st, brokers={**st.brokers, "a:8080": a})
    return st


def test_modular_checks_splits_on_report_writes_not_on_a_timer() -> None:
    """``ModularLoadManagerImpl.updateAll`` (run on each write under /loadbalance/brokers,
    ``handleDataNotification``) calls ``checkNamespaceBundleSplit``: a snapshot after which no
    broker wrote its report saw no split check; one after a write did."""
    from tests.loadmanager.test_gates import HOT

    states = [_two_brokers(0), _two_brokers(MINUTE), _two_brokers(2 * MINUTE, written=True)]
    assert _modular_splits(states) == [[HOT], [], [HOT]]


@pytest.mark.parametrize("split_minutes", ["1", "5"])
def test_modular_ignores_the_split_interval(split_minutes: str) -> None:
    """loadBalancerSplitIntervalMinutes is the extensible SplitScheduler's ("only used in load
    balancer extension logics"): the modular splits the same whatever its value, and does not
    read it."""
    from lbctl.loadmanager.select import Options, run
    from tests.loadmanager.test_gates import HOT

    states = [_two_brokers(j * MINUTE, written=True) for j in range(3)]
    assert _modular_splits(states, loadBalancerSplitIntervalMinutes=split_minutes) == [[HOT]] * 3
    (r,) = run(states[:1], Options(strategy="OverloadShedder", overrides={
        "loadBalancerSplitIntervalMinutes": split_minutes}))
    assert "loadBalancerSplitIntervalMinutes" not in r.settings.read_values()


@needs_jdk("that scheduleAtFixedRate refuses a split period <= 0")
def test_the_jdk_refuses_a_period_of_zero_or_less(tmp_path: Path) -> None:
    """``SplitScheduler.start`` passes ``TimeUnit.MINUTES.toMillis(loadBalancerSplitIntervalMinutes)``
    as both delay and period: the JDK refuses 0 and below, and :func:`split_runs` never runs the
    split check for them."""
    values = [1, 5, 0, -1, -2**31]
    got = run_java("FixedRate", tmp_path, [f"{i}\t{v}" for i, v in enumerate(values)],
                   where=Path(__file__).parent / "java")
    for i, v in enumerate(values):
        s = Settings.defaults().with_values(loadBalancerSplitIntervalMinutes=v,
                                            loadBalancerSheddingIntervalMinutes=2)
        runs = split_runs(s, True, 10 * MINUTE)[0]
        assert got[str(i)] == ["refused" if runs == 0 else "scheduled"], v


def test_a_cycle_without_a_split_run_says_so() -> None:
    states = _held(2, 1)
    settings = [_settings(s, loadBalancerSplitIntervalMinutes=5) for s in states]
    first, second = replay(ExtensibleLoadManager(), states, settings)
    assert not any("SplitScheduler" in w for w in first.plan().warnings)
    assert any("SplitScheduler ran in this cycle" in w and "=5 min" in w
               for w in second.plan().warnings)
    never = [_settings(s, loadBalancerSplitIntervalMinutes=0) for s in states]
    for r in replay(ExtensibleLoadManager(), states, never):
        assert not r.splits
        assert any("refuses the period" in w for w in r.plan().warnings)

"""A fresh watcher beside a leader with a long memory: divergence checks wait for lbctl's memory
to warm up (:func:`lbctl.watch.divergence.warm_up`), computed from the cluster's settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from lbctl.watch.divergence import warm_up
from lbctl.watch.report import status_lines
from lbctl.watch.status import metrics_text, page_html
from tests.sandbox.life_helpers import living_hot, run_for
from tests.watch.watch_helpers import Beside

pytestmark = pytest.mark.live


@pytest.mark.parametrize(("p", "cycles"), [("0.9", 23), ("0.5", 5), ("0.8", 12), ("0", 1),
                                           ("1.0", None)])
def test_the_warm_up_follows_the_history_percentage(p: str, cycles: int | None) -> None:
    """ThresholdShedder: the first capture's weight ``p ** k`` falls below a tenth."""
    assert warm_up("ThresholdShedder", {"loadBalancerHistoryResourcePercentage": p}) == cycles
    if cycles is not None and cycles > 1:
        assert float(p) ** (cycles - 1) < 0.1 <= float(p) ** (cycles - 2)


def test_the_hit_count_strategies_keep_their_own_warm_up() -> None:
    assert warm_up("TransferShedder",
                   {"loadBalancerSheddingConditionHitCountThreshold": "3"}) == 4
    assert warm_up("OverloadShedder", {}) == 1


def test_a_fresh_watcher_beside_a_long_running_leader_raises_no_false_divergence(
        tmp_path: Path) -> None:
    """The leader has shed for 25 minutes (its usage average carries them); a watcher started
    then seeded its average with the brokers' usage at its first capture, so a broker that had
    just received bundles looked overloaded to lbctl and not to the leader: a false
    leader-divergence four minutes after start. The page says when the checks start."""
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false")
    for _ in range(25):
        run_for(life, clock, 60)
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        w.minutes(1)
        assert w.watcher.warm_up == 23 and not w.watcher.warm
        status = w.watcher.current()
        assert status is not None
        note = "divergence checks start after 23 shedding cycles (1 followed so far)"
        assert note in page_html(status)
        # lbctl watch --status (from the history alone) and /metrics say it too
        assert note in status_lines(w.history)
        assert "\nlbctl_divergence_warmup_cycles_remaining 22\n" in metrics_text(status, 0)
        w.minutes(15)
        assert w.raised("leader-divergence") == []
        assert w.raised("unexpected-unload") == []
        w.minutes(8)
        assert w.watcher.warm
        status = w.watcher.current()
        assert status is not None and "divergence checks start" not in page_html(status)
        assert not any("divergence checks" in line for line in status_lines(w.history))
        assert "\nlbctl_divergence_warmup_cycles_remaining 0\n" in metrics_text(status, 0)
        restarted = w.new_watcher()  # the history carries the memory: warm at once
        assert restarted.warm
    finally:
        w.close()



def test_the_warm_up_gauge_is_inf_when_checks_never_start() -> None:
    """p ≥ 1: the leader's average never forgets what it saw before the watcher."""
    from lbctl.watch.status import Status

    status = Status("c", 0, (), (0.0, 1.0), (), (), 1, 0, 0, 0, (), warm_up=None, followed=40)
    assert "\nlbctl_divergence_warmup_cycles_remaining +Inf\n" in metrics_text(status, 0)


def test_transfer_shedder_waits_out_the_cool_down_it_cannot_see() -> None:
    """A leader that transferred just before the first capture sits out
    ``loadBalanceSheddingDelayInSeconds`` (CoolDown), which no capture shows."""
    base = {"loadBalancerSheddingConditionHitCountThreshold": "0",
            "loadBalancerSheddingIntervalMinutes": "1"}
    assert warm_up("TransferShedder", {**base, "loadBalanceSheddingDelayInSeconds": "180"}) == 4
    assert warm_up("TransferShedder", {**base, "loadBalanceSheddingDelayInSeconds": "0"}) == 1
    assert warm_up("TransferShedder", {**base, "loadBalanceSheddingDelayInSeconds": "181"}) == 5
    assert warm_up("TransferShedder", {**base, "loadBalancerSheddingConditionHitCountThreshold":
                                       "5", "loadBalanceSheddingDelayInSeconds": "180"}) == 6

"""What the watcher records beside each capture and replays on restart: the ownership it was
taken with."""

from __future__ import annotations

from pathlib import Path

import pytest

from lbctl.admin.client import unload_call
from tests.sandbox.life_helpers import living_hot
from tests.watch.watch_helpers import Beside

pytestmark = pytest.mark.live

#: reports rewritten only every loadBalancerReportUpdateMaxIntervalMinutes (a move of one bundle
#: among many does not pass the threshold): the brokers' listing shows a move 15 min earlier
LAGGING = {"loadBalancerReportUpdateThresholdPercentage": "1000000",
           "loadBalancerAutoBundleSplitEnabled": "false", "loadBalancerSheddingEnabled": "false"}


@pytest.mark.parametrize("written", [False, True], ids=["refreshed", "as-written"])
def test_a_restart_replays_each_capture_with_the_ownership_it_was_taken_with(
        tmp_path: Path, written: bool) -> None:
    """A move the brokers listed while the reports still held the bundle where it was, then a
    restart: replayed with the reports' ownership, the move was seen again at the first live
    capture — raised again, and a second entry in the move log (ping-pong counts it)."""
    c, life, clock = living_hot(3, reconnect=0.0, **LAGGING)
    c.reports_as_written = written
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        w.minutes(2)
        a, b = list(c.brokers)[:2]
        bundle = sorted(c.bundles_of(a))[0]
        ns, rng = bundle.rsplit("/", 1)
        w.client.request(unload_call(ns, rng, b))
        w.minutes(1)
        moved_at = w.watcher.history.recent(1)[-1].captured_at
        assert w.watcher.history.recent(1)[-1].owners()[bundle] == a  # the report lags
        w.minutes(1)
        w.watcher = w.new_watcher()  # restarted
        assert w.watcher.last_owner[bundle] == b
        start = len(w.events)
        w.minutes(2)
        assert [e for e in w.events[start:] if e.event == "raised"] == []
        assert [m.at for m in w.watcher.log.items if m.bundle == bundle] == [moved_at]
    finally:
        w.close()


def test_a_history_without_records_replays_from_the_reports(tmp_path: Path) -> None:
    """An older watcher's history (no record files): replayed as before, nothing refused."""
    c, life, clock = living_hot(3, reconnect=0.0, **LAGGING)
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    try:
        w.minutes(3)
        for f in (tmp_path / "h").glob("lbctl-watch-*"):
            f.unlink()
        w.watcher = w.new_watcher()
        assert w.watcher.captures == 0 and w.watcher.last_owner
        w.minutes(1)
    finally:
        w.close()


def test_a_link_in_place_of_a_record_file_is_refused_once_and_capturing_goes_on(
        tmp_path: Path) -> None:
    """A link planted where the hour's record file goes: nothing is written through it, one
    warning says so, the captures go on, and a restart replays from the reports."""
    from lbctl.watch.history import SEEN_PREFIX, hour_of

    c, life, clock = living_hot(3, reconnect=0.0, **LAGGING)
    w = Beside(c, life, clock, tmp_path / "h", doctor=False)
    said: list[str] = []
    w.watcher.warn = said.append
    target = tmp_path / "elsewhere"
    target.write_bytes(b"")
    try:
        link = tmp_path / "h" / f"{SEEN_PREFIX}{hour_of(int(clock.now() * 1000) + 60_000)}.jsonl.gz"
        link.symlink_to(target)
        w.minutes(3)
        assert w.watcher.captures == 3
        assert target.read_bytes() == b""
        assert len([m for m in said if m.startswith("history:")]) == 1, said
        w.watcher = w.new_watcher()
        assert w.watcher.last_owner
    finally:
        w.close()

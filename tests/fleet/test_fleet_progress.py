"""Spark's waits are said on stderr: a phase is announced when it starts and timed when it ends
(off a terminal), and counts its seconds live on a terminal; stdout is never written."""

from __future__ import annotations

import io
import time

from lbctl.fleet.progress import Progress


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_off_a_terminal_a_phase_is_announced_before_its_wait_and_timed_after() -> None:
    s = io.StringIO()
    p = Progress(stream=s)
    with p.phase("starting Spark (local[*])"):
        assert s.getvalue() == "lbctl: starting Spark (local[*])…\n"  # said before the wait
    lines = s.getvalue().splitlines()
    assert len(lines) == 2 and lines[1].startswith("lbctl: starting Spark (local[*]) (")
    assert lines[1].endswith(" s)")


def test_quiet_says_nothing() -> None:
    s = io.StringIO()
    with Progress(stream=s, enabled=False).phase("reading"):
        pass
    assert s.getvalue() == ""


def test_on_a_terminal_the_wait_counts_its_seconds_without_spark() -> None:
    s = _Tty()
    p = Progress(stream=s)  # no Spark yet: starting it is the wait
    with p.phase("starting Spark (local[*])"):
        time.sleep(1.2)
        shown = s.getvalue()
    assert "lbctl: starting Spark (local[*])…" in shown
    assert "1 s" in shown  # the live line counted the seconds
    assert s.getvalue().splitlines()[-1].endswith(" s)")  # and the phase's time stays

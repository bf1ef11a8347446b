"""Progress goes to stderr on a terminal only (drawn by Rich), and is erased when the work ends;
piped, nothing is written and Rich is not even imported."""

from __future__ import annotations

import io
import subprocess
import sys

from lbctl.progress import Progress, shown


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


ERASE = "\x1b[2K"  # Rich's transient display erases its line when it stops


def test_nothing_when_piped() -> None:
    s = io.StringIO()
    p = Progress(s)
    with p.phase("reading") as line:
        assert line is None
        p.step("simulating", 1, 2)
    assert s.getvalue() == ""


def test_piped_progress_imports_no_rich() -> None:
    code = ("import io, sys\nfrom lbctl.progress import Progress\n"
            "p = Progress(io.StringIO())\n"
            "with p.phase('reading'):\n    p.step('simulating', 1, 2)\n"
            "print('RICH' if any(m.startswith('rich') for m in sys.modules) else 'NONE')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "NONE"


def test_a_phase_on_a_terminal_is_shown_then_erased() -> None:
    s = _Tty()
    p = Progress(s)
    with p.phase("reading the snapshots"):
        assert "lbctl: reading the snapshots…" in s.getvalue()
    assert s.getvalue().rstrip("\x1b[?25h\r").endswith(ERASE)


def test_a_bar_counts_and_goes_when_done() -> None:
    s = _Tty()
    p = Progress(s)
    p.step("simulating", 1, 4)
    assert "lbctl: simulating" in s.getvalue() and "1/4" in s.getvalue()
    p.step("simulating", 4, 4)
    assert s.getvalue().rstrip("\x1b[?25h\r").endswith(ERASE)


def test_a_bar_left_unfinished_is_erased_at_the_end() -> None:
    s = _Tty()
    with shown(s) as p:
        p.step("brokers", 1, 3)  # a read that failed half-way
    assert s.getvalue().rstrip("\x1b[?25h\r").endswith(ERASE)


def test_a_phase_line_shows_counts() -> None:
    s = _Tty()
    p = Progress(s)
    with p.phase("ingesting") as line:
        assert line is not None
        line.counts(3, 8, "tasks 3/8")
        p.step("other", 0, 2)  # a second line meanwhile: one display
        p.step("other", 2, 2)
    assert "lbctl: ingesting…" in s.getvalue()

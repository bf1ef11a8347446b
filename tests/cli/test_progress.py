"""Progress goes to stderr on a terminal only, and is erased when the work ends."""

from __future__ import annotations

import io

from lbctl.cli.progress import Progress


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_nothing_when_piped() -> None:
    s = io.StringIO()
    p = Progress(s)
    with p.phase("reading"):
        p.step("simulating", 1, 2)
    assert s.getvalue() == ""


def test_on_a_terminal_shown_then_erased() -> None:
    s = _Tty()
    p = Progress(s)
    with p.phase("reading"):
        assert "lbctl: reading…" in s.getvalue()
    p.step("simulating", 1, 4)
    assert "[######" in s.getvalue() and "1/4" in s.getvalue()
    p.step("simulating", 4, 4)
    assert s.getvalue().endswith("\r" + " " * 78 + "\r")  # erased: only the result remains

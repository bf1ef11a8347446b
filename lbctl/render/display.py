"""How text output meets a terminal: its width, full or shortened broker names, and colour.

A command sets one :class:`Display` for the time it prints (:func:`using`); views and the table
renderer read it with :func:`current`. Only the ``table`` format looks at it — JSON, YAML, CSV and
JSONL never depend on the terminal.

* **Width**: ``$COLUMNS`` when set, else the terminal's width, else 80 (piped output included), so
  that ``COLUMNS=80 lbctl …`` is what an 80-column terminal shows. ``--wide`` lifts the limit.
* **Colour** only on a terminal, never when ``NO_COLOR`` is set (https://no-color.org: any
  non-empty value), never with ``--no-color`` or ``TERM=dumb``.
* **Decisions** are coloured by their label, as Pulsar's ``Label`` reads: ``Success`` green,
  ``Skip`` dim, ``Failure`` red; warnings yellow.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from msgspec import Struct

from lbctl.safe.text import PAINT, RESET

MIN_WIDTH = 40  # narrower terminals are treated as this wide (tables would be unreadable anyway)
DEFAULT_WIDTH = 80

_DECISION = re.compile(r"\b(Success|Skip|Failure)/[A-Za-z]+")


def terminal_width() -> int:
    """``$COLUMNS``, else the terminal's width, else 80; never below :data:`MIN_WIDTH`."""
    cols = shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    return max(MIN_WIDTH, cols or DEFAULT_WIDTH)


def colour_wanted(stream: Any, *, no_color: bool = False) -> bool:
    """Colour for ``stream``: a terminal, no ``--no-color``, no ``NO_COLOR``, not ``TERM=dumb``."""
    if no_color or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Display(Struct, frozen=True):
    """What the table format may assume about where its text goes."""

    width: int = DEFAULT_WIDTH
    wide: bool = False  # full broker names, tables as wide as their content
    color: bool = False

    @property
    def limit(self) -> int | None:
        """The width text must fit in, or None with ``--wide``."""
        return None if self.wide else self.width


_current: ContextVar[Display | None] = ContextVar("lbctl_display", default=None)


def current() -> Display:
    """The display in force (a default one — terminal width, no colour — outside :func:`using`)."""
    d = _current.get()
    return d if d is not None else Display(width=terminal_width())


@contextmanager
def using(display: Display) -> Iterator[Display]:
    token = _current.set(display)
    try:
        yield display
    finally:
        _current.reset(token)


def paint(text: str, style: str | None) -> str:
    """``text`` in ``style`` (a key of the colour table) when the display has colour."""
    if not style or not text or not current().color:
        return text
    return PAINT[style] + text + RESET


def decision_style(decision: str) -> str | None:
    """The style of a ``Label/Reason`` (or a bare label)."""
    label = decision.split("/", 1)[0].strip().lower()
    return label if label in ("success", "skip", "failure") else None


def paint_decisions(text: str) -> str:
    """Colour every ``Success/…``, ``Skip/…`` and ``Failure/…`` in prose."""
    if not current().color:
        return text
    return _DECISION.sub(lambda m: paint(m.group(0), decision_style(m.group(0))), text)


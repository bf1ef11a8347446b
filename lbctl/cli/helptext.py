"""``--help`` wrapped at spaces only: a flag, a command or a name with a hyphen in it
(``--all-cycles``, ``rebalance-after``, ``pulsar-admin``) is never cut at its hyphen.

Click wraps help with :mod:`textwrap`'s default ``break_on_hyphens``, so at 80 columns
``--dry-run`` came out as ``--dry-`` at a line's end and ``run`` on the next: a reader copying the
flag got half of it. :class:`HelpContext` (every lbctl command's context class, set by
:func:`lbctl.cli.app._built`) formats help with :class:`WholeWordsFormatter`, which hides hyphens
from the wrapper behind a one-character stand-in (the same width, so lines fit as before) and puts
them back in the finished text."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import typer

#: one character, of a hyphen's width, that textwrap neither breaks at nor after (private use)
_STAND_IN = "\ue000"


def _hidden(text: str) -> str:
    return text.replace("-", _STAND_IN)


#: the formatter Typer's context uses (its own copy of Click's, which lbctl does not depend on)
_ClickFormatter: Any = typer.Context.formatter_class


class WholeWordsFormatter(_ClickFormatter):  # type: ignore[misc]
    """Click's formatter, breaking lines at spaces only (see the module's docstring)."""

    def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
        super().write_usage(prog, _hidden(args), prefix)

    def write_text(self, text: str) -> None:
        super().write_text(_hidden(text))

    def write_dl(self, rows: Iterable[tuple[str, str]], col_max: int = 30,
                 col_spacing: int = 2) -> None:
        super().write_dl([(first, _hidden(second)) for first, second in rows], col_max,
                         col_spacing)

    def getvalue(self) -> str:
        text: str = super().getvalue()
        return text.replace(_STAND_IN, "-")


class HelpContext(typer.Context):
    """Typer's context, formatting help with :class:`WholeWordsFormatter`."""

    formatter_class = WholeWordsFormatter


def whole_words(command: Any) -> None:
    """``command`` and its subcommands format their help with :class:`WholeWordsFormatter`."""
    for sub in getattr(command, "commands", {}).values():
        whole_words(sub)
    command.context_class = HelpContext

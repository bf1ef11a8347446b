"""Broker names for people: the suffix every broker shares is left out of tables and prose.

Broker ids are ``host:port`` and in a Kubernetes cluster they all end alike
(``broker-2.pulsar.svc:8080``); printed whole they take half an 80-column line. The table format
shows ``broker-2`` instead and says once which suffix it left out; ``--wide`` (or a single broker)
shows names whole. The cut is made at a ``.`` or ``:`` so that a name is never cut inside a label,
and only when every shortened name stays distinct and non-empty. Machine formats (JSON, YAML, CSV,
JSONL) always carry the full ids.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from msgspec import Struct, field

from lbctl.safe.text import name_safe, needs_escape

_odd = needs_escape


def common_suffix(names: Iterable[str]) -> str:
    """The longest suffix all ``names`` share that starts at a ``.`` or ``:`` ("" if none)."""
    uniq = sorted(set(names))
    if len(uniq) < 2:
        return ""
    first = uniq[0]
    n = 0
    while n < len(first) and all(len(x) > n and x[-1 - n] == first[-1 - n] for x in uniq):
        n += 1
    suffix = first[len(first) - n:] if n else ""
    # start the suffix at its first separator, so that "a1.x"/"b1.x" lose ".x", not "1.x"
    cut = next((i for i, ch in enumerate(suffix) if ch in ".:"), None)
    if cut is None:
        return ""
    suffix = suffix[cut:]
    if any(len(x) <= len(suffix) for x in uniq):
        return ""
    return suffix


class BrokerNames(Struct, frozen=True):
    """Shortens the broker ids of one output."""

    suffix: str = ""
    full: tuple[str, ...] = field(default=())

    @classmethod
    def of(cls, names: Iterable[str], *, wide: bool = False) -> BrokerNames:
        full = tuple(dict.fromkeys(names))
        return cls("" if wide else common_suffix(full), full)

    def __call__(self, name: str | None) -> str:
        """The short form of ``name`` (unchanged when it does not end with the suffix)."""
        if name is None:
            return "-"
        if self.suffix and name.endswith(self.suffix) and len(name) > len(self.suffix):
            return name_safe(name[: -len(self.suffix)])
        return name_safe(name)

    def text(self, text: str) -> str:
        """``text`` with every known broker id shortened (longest ids first), and every one
        holding a newline, a control character or a bidirectional mark shown escaped, as a table
        shows it: prose names brokers too, and a newline in an id must not start a line of its
        own (hostile20: explain's "x\\nINJECTED: usage 35.0%" line)."""
        known = sorted((n for n in self.full if (self.suffix and n.endswith(self.suffix))
                        or (_odd(n) and name_safe(n) != n)), key=len, reverse=True)
        if not known:
            return text
        rx = re.compile("|".join(re.escape(n) for n in known))
        return rx.sub(lambda m: self(m.group(0)), text)

    def note(self) -> str | None:
        """One line saying what was left out, or None when nothing was."""
        if not self.suffix:
            return None
        return f"(common suffix {self.suffix} left out of broker names; --wide: full names)"


def escape_names(text: str, names: Iterable[str]) -> str:
    """``text`` with each of ``names`` (a cluster, namespace, bundle or topic name from a
    snapshot) that holds a newline, a control character or a bidirectional mark shown as
    :func:`~lbctl.safe.text.name_safe` shows it. Prose is built with the names as they are and
    keeps its own newlines, so the final escaping pass of the table format
    (:func:`~lbctl.safe.text.terminal_safe`) must leave newlines alone: a name's newline would
    start a line of its own. Names are looked at one by one only when one of them needs it."""
    names = [n for n in names if n]
    if not names or not needs_escape("".join(names)):
        return text
    odd = sorted({n for n in names if name_safe(n) != n}, key=len, reverse=True)
    rx = re.compile("|".join(re.escape(n) for n in odd))
    return rx.sub(lambda m: name_safe(m.group(0)), text)

"""Text that is safe to put on a terminal and short enough to read.

Everything lbctl prints for people (tables, prose, warnings, errors) can carry names that came from
outside: cluster names, broker ids, bundle and file names, a server's ``reason``. A control
character in one of them would reach the terminal as a command — ``ESC ] 0;title BEL`` sets the
window title, ``ESC [ 2 J`` clears the screen, a carriage return overwrites what was printed. The
human output paths (the ``table`` format of :func:`lbctl.render.render` and the CLI's error and
warning printer) pass their text through :func:`terminal_safe` once, so no call site has to
remember to.
"""

from __future__ import annotations

import re
from types import MappingProxyType

#: C0 controls but newline and tab, DEL, C1 controls; and the Unicode bidirectional overrides and
#: isolates, which reorder what a reader sees (``Trojan Source``)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_CONTROL_ALL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\e"}

#: the longest single message line lbctl prints (a 10 MB name must not make a 20 MB error line)
MAX_MESSAGE = 2000
#: the longest name quoted inside a message
MAX_NAME = 200


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


#: the Select Graphic Rendition sequences lbctl paints with, by style (:func:`lbctl.render.display.
#: paint`), and the reset that ends each: declared here, once, because they are the only escape
#: sequences output may keep
PAINT = MappingProxyType({"success": "\x1b[32m", "skip": "\x1b[2m", "failure": "\x1b[31;1m",
                          "warn": "\x1b[33m", "bold": "\x1b[1m", "dim": "\x1b[2m"})
RESET = "\x1b[0m"

#: exactly lbctl's own sequences, so that a name from a snapshot carrying a colour or a
#: 256-colour/blink sequence of its own is still shown escaped; they cannot move the cursor,
#: clear the screen or set the window title
_SGR = re.compile("|".join(re.escape(c) for c in sorted({*PAINT.values(), RESET})))


def terminal_safe(text: str, *, keep_newlines: bool = True, keep_colors: bool = False) -> str:
    """``text`` with every control character written as a visible escape (``\\e``, ``\\x07``).

    Newlines and tabs are kept when ``keep_newlines`` (multi-line tables); a one-line message
    passes ``keep_newlines=False`` so that a name holding a newline cannot start a fake line.
    ``keep_colors`` lets colour sequences (SGR, ``ESC [ … m``) through: tables colour decisions.
    """
    pattern = _CONTROL if keep_newlines else _CONTROL_ALL
    if pattern.search(text) is None:  # the common case: no copy
        return text
    if keep_colors and "\x1b[" in text:
        parts = _SGR.split(text)
        colors = _SGR.findall(text)
        out = [pattern.sub(_escape, parts[0])]
        for color, part in zip(colors, parts[1:], strict=True):
            out += [color, pattern.sub(_escape, part)]
        return "".join(out)
    return pattern.sub(_escape, text)


def name_safe(name: str) -> str:
    """A name from outside (a cluster, broker or bundle name) for a table cell or a line of prose:
    every control character escaped, newlines too — a name holding ``\\n`` must not start a fake
    table row or line — and any escape sequence in it, colours included, shown as text."""
    return terminal_safe(name, keep_newlines=False)


def shorten(text: str, limit: int = MAX_NAME) -> str:
    """``text`` cut in the middle to at most ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    keep = max(limit - 40, 20)
    head, tail = keep * 2 // 3, keep // 3
    return f"{text[:head]}…[{len(text) - head - tail} characters]…{text[len(text) - tail:]}"


def one_line(message: str, limit: int = MAX_MESSAGE) -> str:
    """A message as one printable line of bounded length (for ``lbctl: error: …``)."""
    return terminal_safe(shorten(message, limit), keep_newlines=False)



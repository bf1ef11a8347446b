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
import unicodedata
from types import MappingProxyType

#: C0 controls but newline and tab, DEL, C1 controls; the Unicode bidirectional marks, overrides
#: and isolates, which reorder what a reader sees (``Trojan Source``); and the invisible format
#: characters (soft hyphen, zero-width space and joiners, word joiner, invisible operators, BOM)
#: and the line and paragraph separators: a broker named ``\u200b:8080`` printed as nothing at all
#: (``to:`` with no broker after it), or two names that look the same and are not (hostile14)
_INVISIBLE = "\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff"
_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_INVISIBLE}]")
_CONTROL_ALL = re.compile(f"[\x00-\x1f\x7f-\x9f{_INVISIBLE}]")
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


#: what JSON and YAML output write as ``\\uXXXX`` (:func:`json_hidden_escaped`,
#: :mod:`lbctl.render.hidden`): DEL, the C1 controls and :data:`_INVISIBLE`. Their encoders
#: already escape C0 but write these raw, and a terminal showing ``-o json`` then reorders the
#: line (U+202E) or hides a name (U+200B), or reads U+009B as the start of a control sequence.
#: Newlines and tabs are not here: outside a string they are the document's own layout.
HIDDEN_IN_DATA = re.compile(f"[\x7f-\x9f{_INVISIBLE}]")
_HIDDEN_CODES = sorted({c for lo, hi in re.findall("(.)(?:-(.))?", f"\x7f-\x9f{_INVISIBLE}")
                        for c in range(ord(lo), ord(hi or lo) + 1)})
#: the same characters as UTF-8 (a sequence of one can only be that character: UTF-8 is
#: self-synchronising, so replacing them in encoded JSON never touches another character)
_HIDDEN_UTF8 = re.compile(b"|".join(re.escape(chr(c).encode()) for c in _HIDDEN_CODES))
#: each sequence but its last byte (DEL whole), six in all: ``bytes.find`` of each is the quick
#: answer for a document that has none, as almost all have
_HIDDEN_LEADS = tuple(sorted({e[:max(1, len(e) - 1)]
                              for e in (chr(c).encode() for c in _HIDDEN_CODES)}))


def _u_escape(m: re.Match[bytes]) -> bytes:
    return b"\\u%04x" % ord(m.group().decode())


def json_hidden_escaped(data: bytes) -> bytes:
    """JSON text ``data`` (UTF-8) with each :data:`HIDDEN_IN_DATA` character written as the
    JSON escape ``\\u202e``: the same document to a parser, nothing invisible or reordering on
    a screen. Only string contents can hold such a character, so the escape is always legal."""
    if data.isascii() and b"\x7f" not in data:
        return data
    if not any(lead in data for lead in _HIDDEN_LEADS):
        return data
    return _HIDDEN_UTF8.sub(_u_escape, data)


def needs_escape(text: str) -> bool:
    """Whether :func:`name_safe` would change ``text`` (newlines and tabs included)."""
    return _CONTROL_ALL.search(text) is not None


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




def display_width(text: str) -> int:
    """The columns ``text`` takes on a terminal: East Asian wide and full-width characters (CJK,
    most emoji) take two, combining marks none, everything else one. Tables pad and wrap by it,
    so a broker named ``東京-1`` or ``e\u0301`` does not push its row's later cells out of their
    columns (``len`` counts 4 and 2 where the terminal shows 6 and 1)."""
    if text.isascii():
        return len(text)
    n = 0
    for ch in text:
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        n += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return n


def pad(text: str, width: int, *, right: bool = False) -> str:
    """``text`` padded with blanks to ``width`` display columns (:func:`display_width`), on the
    left when ``right`` (numbers), as ``str.ljust``/``rjust`` do by characters."""
    fill = " " * max(0, width - display_width(text))
    return fill + text if right else text + fill

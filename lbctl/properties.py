"""Java ``.properties`` files, read exactly as ``java.util.Properties.load(InputStream)`` reads
them — the one parser of every properties file lbctl reads (``broker.conf``, ``client.conf``,
``--prometheus-conf``).

Pulsar reads both files that way: the broker's ``PulsarConfigurationLoader.create`` hands a
``FileInputStream`` to ``Properties.load`` (pulsar-broker-common, ``org.apache.pulsar.common.
configuration``), and ``pulsar-admin`` loads ``client.conf`` the same way. So a file means to lbctl
what it means to Pulsar, byte for byte (the rules of JDK 17's ``Properties.LineReader`` and
``loadConvert``):

* **Bytes are ISO-8859-1**: every byte is one character (a UTF-8 ``é`` is two characters); other
  characters are written ``\\uXXXX``.
* **Line ends** are ``\\n``, ``\\r`` and ``\\r\\n`` only — not NEL, form feed, vertical tab or
  Unicode's line separators, which Python's ``str.splitlines`` would also break on.
* **Blanks** are space, tab and form feed; they are skipped before a key, around the separator
  and at the start of a continuation line (never at the end of a value).
* **Comments**: a line whose first non-blank character is ``#`` or ``!``.
* **Continuations**: a line ending in an odd number of backslashes goes on with the next line
  (its leading blanks dropped); a blank line after it ends the logical line.
* **Key and value**: the key ends at the first unescaped ``=``, ``:`` or blank; blanks and at most
  one ``=``/``:`` after it are skipped (``key value`` and ``key = value`` both work).
* **Escapes**: ``\\t \\r \\n \\f``, ``\\uXXXX`` (exactly four hex digits, else the whole file is
  refused, as Java throws), and ``\\`` before any other character is that character.
* A later repeat of a key wins.

Reading errors become one-line :class:`~lbctl.errors.ConfigError` messages that name the file and
its role.
"""

from __future__ import annotations

import re
from pathlib import Path

from lbctl.errors import ConfigError

__all__ = ["parse_properties", "read_properties"]

#: Java's line ends: \r\n, \r or \n (a "natural line" of the Properties javadoc)
_EOL = re.compile(r"(\r\n|\r|\n)")
#: the blanks Properties skips: space, tab, form feed
_BLANKS = " \t\f"
#: a key: characters up to the first unescaped separator (a backslash escapes the next character)
_KEY = re.compile(r"(?:[^\\=: \t\f]|\\.)*", re.S)
_TRAILING_BACKSLASHES = re.compile(r"\\+\Z")
_ESCAPES = {"t": "\t", "r": "\r", "n": "\n", "f": "\f"}
_HEX = frozenset("0123456789abcdefABCDEF")


class MalformedEscape(ValueError):
    """A ``\\u`` not followed by four hex digits (Java's "Malformed \\uxxxx encoding.")."""

    def __init__(self, line: int) -> None:
        super().__init__(f"malformed \\uXXXX escape (line {line})")
        self.line = line


def _continues(text: str) -> bool:
    """Whether a natural line ends in an odd number of backslashes (Java's precedingBackslash)."""
    m = _TRAILING_BACKSLASHES.search(text)
    return m is not None and (m.end() - m.start()) % 2 == 1


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """``(line number, logical line)`` pairs, comments and blank lines left out: JDK 17's
    ``Properties.LineReader.readLine`` over natural lines."""
    pieces = _EOL.split(text)
    natural, ends = pieces[0::2], pieces[1::2]
    last = len(natural) - 1
    out: list[tuple[int, str]] = []
    parts: list[str] = []
    kept = 0  # characters of the logical line so far (Java's len)
    start = 0
    appended = False  # after a continuation: a blank natural line ends the logical line
    for i, raw in enumerate(natural):
        line = raw.lstrip(_BLANKS)
        if not line:
            if appended and kept:
                out.append((start, "".join(parts)))
                parts, kept, appended = [], 0, False
            continue
        if not kept:
            if line[0] in "#!":  # a comment (also right after a continuation that kept nothing)
                parts, appended = [], False
                continue
            if not appended:
                start = i + 1
        appended = _continues(line)
        if appended:
            line = line[:-1]
        parts.append(line)
        kept += len(line)
        # Java returns the line at a continuation that meets the end of the file — even an empty
        # one — when the end comes right after it or after its \n or \r (not after a \r\n,
        # which is read whole before the end is seen)
        at_end = i == last or (ends[i] != "\r\n" and i + 1 == last and not natural[last])
        if not appended or at_end:
            out.append((start, "".join(parts)))
            parts, kept, appended = [], 0, False
    if kept:
        out.append((start, "".join(parts)))
    return out


def _convert(text: str, line: int) -> str:
    """``Properties.loadConvert``: the escapes of a key or a value."""
    if "\\" not in text:
        return text
    out: list[str] = []
    i, end = 0, len(text)
    while i < end:
        ch = text[i]
        i += 1
        if ch != "\\":
            out.append(ch)
            continue
        ch = text[i]  # a logical line never ends in an unescaped backslash
        i += 1
        if ch == "u":
            digits = text[i : i + 4]
            if len(digits) < 4 or not _HEX.issuperset(digits):
                raise MalformedEscape(line)
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_ESCAPES.get(ch, ch))
    return "".join(out)


def parse_properties(data: bytes) -> dict[str, str]:
    """Every ``key → value`` of a properties file's bytes, in file order (a later repeat wins);
    :class:`MalformedEscape` when Java would refuse the file."""
    values: dict[str, str] = {}
    for number, line in _logical_lines(data.decode("latin-1")):
        m = _KEY.match(line)
        assert m is not None  # the pattern matches the empty string
        k = m.end()
        pos = k
        has_sep = False
        if k < len(line):
            has_sep = line[k] in "=:"
            pos = k + 1
        while pos < len(line):
            ch = line[pos]
            if ch not in _BLANKS:
                if has_sep or ch not in "=:":
                    break
                has_sep = True
            pos += 1
        values[_convert(line[:k], number)] = _convert(line[pos:], number)
    return values


def read_properties(path: str | Path, role: str) -> dict[str, str]:
    """Every ``key → value`` of the file (:func:`parse_properties`).

    ``role`` names the file in messages: "broker.conf", "client.conf".
    """
    from lbctl.safe.files import read_regular

    p = Path(path).expanduser()
    # a regular file only: a FIFO or /dev/zero would hang or never end; 64 MiB is plenty
    raw = read_regular(str(p), what=f"a {role} file", limit=64 << 20,
                       error=lambda m: ConfigError(m.replace(": no such file",
                                                             f": no such {role} file")))
    if b"\0" in raw:
        # Java's Properties.load would read it (ISO-8859-1 takes any byte), but no text file
        # holds a NUL: this is a binary file given by mistake (a keystore, a tarball), and its
        # "keys" would silently change nothing
        raise ConfigError(f"{path}: not a {role} file: binary (holds NUL bytes)")
    try:
        values = parse_properties(raw)
    except MalformedEscape as e:
        raise ConfigError(f"{path}: {role}: {e} (Java refuses the whole file)") from None
    for key in values:
        if key.startswith(_BOM) and key[len(_BOM):] and key[len(_BOM)] not in "#!":
            # an editor's UTF-8 byte order mark: ISO-8859-1 makes it three characters of the
            # first key, so Java (and lbctl with it) would silently ignore that setting — a
            # client.conf's webServiceUrl, and the default URL is used instead (hostile20)
            raise ConfigError(f"{path}: {role}: a UTF-8 byte order mark opens the file, so "
                              f"Java reads its first key as {key!r}, not {key[len(_BOM):]!r} "
                              "(that setting would be ignored): save the file without it")
    return values


#: a UTF-8 byte order mark read as ISO-8859-1, as Properties.load(InputStream) reads it
_BOM = "\u00ef\u00bb\u00bf"

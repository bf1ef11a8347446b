"""Error helpers shared by the JSON and YAML snapshot readers (one-line messages)."""

from __future__ import annotations

from lbctl.errors import SnapshotError

__all__ = ["DuplicateKey", "decode_error", "one_line"]


class DuplicateKey(Exception):
    """A key repeated in one object/mapping: ``path`` is a hint naming the object."""

    def __init__(self, key: str, path: str):
        super().__init__(key)
        self.key = key
        self.path = path


def decode_error(
    name: str, data: bytes, what: str, msg: str, line: int, col: int
) -> SnapshotError:
    """A decoding error; text that is not UTF-8 is reported as such, with its position."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as u:
        head = data[: u.start]
        line = head.count(b"\n") + 1
        col = u.start - (head.rfind(b"\n") + 1) + 1
        return SnapshotError(f"{name}: not UTF-8 text (bad byte at line {line}, column {col})")
    if not data.strip():
        return SnapshotError(f"{name}: empty file (expected a snapshot)")
    return SnapshotError(f"{name}: not valid {what}: {one_line(msg)} (line {line}, column {col})")


def one_line(text: str) -> str:
    """``text`` on one line (runs of whitespace, newlines included, become one space)."""
    return " ".join(text.split())

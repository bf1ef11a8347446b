"""``-o csv`` on a terminal: a name's control characters shown escaped (JSON, JSONL and YAML
escape them themselves); to a file or a pipe the data is kept as it is."""

from __future__ import annotations

import io
from typing import Any

import pytest

from lbctl.render import render


class _Rows:
    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def to_rows(self) -> list[dict[str, Any]]:
        return self.rows

    def to_data(self) -> Any:
        return self.rows

    def to_text(self) -> str:
        return ""


class _Screen(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize("tty", [True, False])
def test_csv_escapes_control_characters_only_on_a_terminal(tty: bool) -> None:
    out = _Screen(tty)
    render(_Rows([{"broker": "b\x1b]0;pwned\x07\x1b[2J:8080", "n": 1}]), "csv", out)
    text = out.getvalue()
    assert ("\x1b" in text) is not tty and ("\\e]0;pwned\\x07" in text) is tty

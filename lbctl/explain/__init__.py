"""Explanations: the reasoning behind a cycle's decisions, in words (``lines``) and as data
(``to_dict``), for ``lbctl explain``.

One module per load manager (:mod:`.modular`, :mod:`.extensible`), each reading the cycle record of
:mod:`lbctl.model.cycle`; nothing here re-derives a decision or formats for a terminal.
"""

from __future__ import annotations

from typing import Any, Protocol


class Explanation(Protocol):
    """A cycle's reasoning, optionally narrowed to one broker or one bundle (``lines``)."""

    def lines(self) -> list[str]: ...

    def to_text(self) -> str: ...

    def to_dict(self) -> dict[str, Any]: ...

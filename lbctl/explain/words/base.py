"""The one entry point from a reason record to its words: :func:`words` dispatches on the record's
type to the module of :mod:`lbctl.explain.words` that words it."""

from __future__ import annotations

from collections.abc import Callable
from functools import singledispatch

from lbctl.model.decision import Why


@singledispatch
def words(why: Why) -> str:
    """The sentence of one reason record (each words module registers its record types)."""
    raise TypeError(f"no words for {type(why).__name__}: register them in lbctl.explain.words")


def text(why: Why | str | None) -> str:
    """:func:`words` of a reason that may be absent (``""``) or already in words (a note of
    lbctl's planner, which is no strategy)."""
    if why is None:
        return ""
    if isinstance(why, str):
        return why
    return words(why)


def memo_text() -> Callable[[Why | str | None], str]:
    """:func:`text` remembering each record it worded (by identity), for a long list whose
    records are often one shared object — the greedy loop's "not needed", "recently unloaded"."""
    said: dict[int, tuple[Why | str | None, str]] = {}

    def worded(why: Why | str | None) -> str:
        hit = said.get(id(why))
        if hit is not None and hit[0] is why:
            return hit[1]
        out = text(why)
        said[id(why)] = (why, out)
        return out

    return worded

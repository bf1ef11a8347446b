"""Immutable records, and the one way to copy one with changes.

The records a command builds on its way to a plan (decisions, cycle records, plan@1's objects,
version profiles) are ``msgspec.Struct`` classes rather than dataclasses: Python builds a frozen
dataclass by compiling its generated methods at import, ≈ 0.6 ms a class, which for the ~50 such
classes a ``recommend`` imports was a third of the command's start-up; a Struct class is built in
C in ≈ 0.01 ms. Both kinds behave alike (frozen, slotted, field-wise ``==``, ``hash`` and ``repr``,
positional or keyword construction), except how a copy with changes is made:
``dataclasses.replace`` refuses a Struct and ``msgspec.structs.replace`` a dataclass. :func:`replace`
takes either, so no caller needs to know which kind a record is.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from msgspec import Struct, structs

T = TypeVar("T")


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of the record ``obj`` with ``changes``, whether it is a Struct or a dataclass."""
    if isinstance(obj, Struct):
        return structs.replace(obj, **changes)
    return dataclasses.replace(obj, **changes)  # type: ignore[type-var]  # a dataclass instance

"""Reading the declarations themselves (``msgspec.inspect``): what both the error walk
(:mod:`lbctl.model.wire.problems`) and Spark's schema and checks (:mod:`lbctl.fleet.schema`)
derive from. Neither is on a command's read path, which decodes in C and never inspects types."""

from __future__ import annotations

from functools import cache
from typing import Any

from msgspec import inspect as mi


@cache
def info(tp: Any) -> mi.Type:
    """The inspected form of a declared type (built once per type)."""
    return mi.type_info(tp)


def unwrap(t: mi.Type) -> tuple[mi.Type, dict[str, Any]]:
    """A type without its ``Meta`` layers, and their ``extra`` merged (the innermost layer's key
    wins: ``Annotated[Annotated[T, inner], outer]``)."""
    extra: dict[str, Any] = {}
    while isinstance(t, mi.Metadata):
        extra = {**(t.extra or {}), **extra}
        t = t.type
    return t, extra

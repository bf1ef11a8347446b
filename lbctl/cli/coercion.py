"""Typer's parameter coercion, without building a pydantic ``TypeAdapter`` for plain values.

Typer 0.29 coerces every parameter of the invoked command through a pydantic ``TypeAdapter``
that it builds on first use — for options the user did not give too, and importing pydantic to do
so: 0.15-0.4 s of CPU per command, many times the work of ``lbctl recommend`` on a small
snapshot. :func:`install` makes that coercion lazy and direct:

* an option that was not given (value ``None``) is answered as Typer answers it (``None``, or
  ``()`` for a multi-value one) without building anything;
* a plain value of the annotated type — a string for ``str``, a file name for ``Path``, a choice
  of an ``Enum``/``Literal``, a default already of its type, a decimal integer or number for
  ``int``/``float`` within the option's ``min``/``max``, lists of these — is converted here, with
  the functions Typer's adapters call (``coerce_cli_path``, ``coerce_cli_choice``) or their
  plain-Python equivalents;
* anything else (a custom parser, a clamp, a date, an unusual spelling, and every value that
  fails) goes through Typer's own ``TypeAdapter``, so its result and its error messages are
  Typer's exactly.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, get_args, get_origin

import typer.core
from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
from typer._param_types import choice_coercion_annotation, coerce_cli_choice, coerce_cli_path

__all__ = ["install"]

_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,15})?")
_SLOW: Any = object()  # "let Typer's adapter decide"


class _DirectParam:
    """A runtime parameter answering plain values itself and the rest through Typer's."""

    __slots__ = ("_descriptor", "_full")

    def __init__(self, descriptor: TypeDescriptor):
        self._descriptor = descriptor
        self._full: RuntimeParam | None = None

    def full(self) -> RuntimeParam:
        if self._full is None:
            self._full = build_runtime_param(self._descriptor)
        return self._full

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        multi = param.multiple or param.nargs == -1
        if value is None:
            return () if multi else None  # as RuntimeParam.coerce, without an adapter
        if not (multi and isinstance(value, str)):
            desc = self._descriptor
            if desc.file_annotation is None and desc.parameter_info.parser is None:
                out = _direct(desc.annotation, desc, value, param, ctx)
                if out is not _SLOW:
                    return out
        return self.full().coerce(value, param=param, ctx=ctx)


def _direct(annotation: Any, desc: TypeDescriptor, value: Any, param: Any, ctx: Any) -> Any:
    info = desc.parameter_info
    if get_origin(annotation) is list:
        (item_type,) = get_args(annotation)
        items = value if isinstance(value, list | tuple) else [value]
        out = [_direct(item_type, desc, v, param, ctx) for v in items]
        return _SLOW if any(x is _SLOW for x in out) else out
    if annotation is str:
        return value if type(value) is str else _SLOW
    if annotation is bool:
        return value if type(value) is bool else _SLOW
    if annotation is int or annotation is float:
        if info.clamp:
            return _SLOW
        if type(value) is annotation:
            number = value
        elif type(value) is str and (_INT if annotation is int else _FLOAT).fullmatch(value):
            number = annotation(value)
        else:
            return _SLOW
        if (info.min is not None and number < info.min) or (
                info.max is not None and number > info.max):
            return _SLOW
        return number
    choice = choice_coercion_annotation(annotation, info)  # an Enum or a Literal
    if choice is not None:
        try:
            return coerce_cli_choice(value, choices=choice[0], case_sensitive=choice[1], ctx=ctx)
        except ValueError:
            return _SLOW
    if annotation is Path and info.path_type is None:
        if isinstance(value, str) and value and "\0" not in value:
            value = Path(value)  # what pydantic's Path validation gives for a string
        if not isinstance(value, Path):
            return _SLOW
        try:
            return coerce_cli_path(value, info, path_type=Path, param=param, ctx=ctx)
        except Exception:  # Typer's adapter reports it, in its words
            return _SLOW
    return _SLOW


def _get_runtime_param(self: Any) -> Any:
    if self._runtime_param is None:
        self._runtime_param = _DirectParam(self.type_descriptor)
    return self._runtime_param


def install() -> None:
    """Route Typer's parameter coercion through :class:`_DirectParam` (idempotent)."""
    typer.core._TyperParameter.get_runtime_param = _get_runtime_param  # type: ignore[method-assign]

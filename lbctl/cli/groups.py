"""Option groups: a command takes "cluster state" or "output" as one parameter, not 3 to 12.

Typer has no option groups, so :func:`grouped` makes them from public pieces. A group is a frozen
:class:`msgspec.Struct` (subclass of :class:`OptionGroup`) whose fields are annotated as Typer
parameters (``Annotated[T, typer.Option(...)]`` or ``typer.Argument``) with their defaults. A
command declares a parameter of a group's type; :func:`grouped` rewrites the command's
``__signature__`` — which Typer reads (``inspect.signature(func, eval_str=True)``, and
``typing.get_type_hints`` for the annotations left bare, such as ``typer.Context``) — with the
group's fields in its place, and on each call builds the group from them and passes it in. The
flags, their help, metavars, defaults and order are the fields': a group used by several commands
is declared once.

A group may hold another group (a field whose type is an :class:`OptionGroup`): its fields are
expanded in place too. ``Annotated[Group, Fields("a", "b")]`` takes only these fields, in this
order (the others keep their defaults), for a command whose flags are a subset of a group's.

Names are flat: each field becomes a parameter of its own name, so two groups of one command must
not share a field name (checked when the command is declared).
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import Annotated, Any, TypeVar, get_args, get_origin

import msgspec

__all__ = ["Fields", "OptionGroup", "grouped"]

F = TypeVar("F", bound=Callable[..., Any])


class OptionGroup(msgspec.Struct, frozen=True):
    """Base of every option group (fields annotated as Typer parameters)."""


class Fields:
    """``Annotated[Group, Fields("a", "b")]``: the command takes only these fields of the group,
    in this order."""

    __slots__ = ("names",)

    def __init__(self, *names: str):
        self.names = names


class _Plan:
    """How to build one group argument from the flat parameters."""

    __slots__ = ("cls", "names", "nested")

    def __init__(self, cls: type[OptionGroup], names: tuple[str, ...],
                 nested: dict[str, _Plan]):
        self.cls = cls
        self.names = names  # the fields taken from the command line (not nested groups)
        self.nested = nested  # field → plan of a nested group

    def build(self, values: dict[str, Any]) -> OptionGroup:
        kwargs = {n: values.pop(n) for n in self.names}
        kwargs.update({n: p.build(values) for n, p in self.nested.items()})
        return self.cls(**kwargs)


def _group_of(annotation: Any) -> tuple[type[OptionGroup], tuple[str, ...] | None] | None:
    """The group class an annotation names (and the fields it selects), or None."""
    selected = None
    if get_origin(annotation) is Annotated:
        annotation, *extras = get_args(annotation)
        selected = next((x.names for x in extras if isinstance(x, Fields)), None)
    if isinstance(annotation, type) and issubclass(annotation, OptionGroup):
        return annotation, selected
    return None


@functools.cache
def _expand(cls: type[OptionGroup], selected: tuple[str, ...] | None
            ) -> tuple[tuple[inspect.Parameter, ...], _Plan]:
    """A group's (or its selected fields') parameters and plan. Memoised: the CLI's ~25 commands
    share a few groups, and evaluating a group's annotations (``get_type_hints``) is most of what
    declaring a command costs at start-up; the parameters are immutable and a plan is only read."""
    hints = typing.get_type_hints(cls, include_extras=True)
    info = {f.name: f for f in msgspec.structs.fields(cls)}
    names = selected if selected is not None else tuple(info)
    unknown = [n for n in names if n not in info]
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {unknown[0]!r}")
    params: list[inspect.Parameter] = []
    taken: list[str] = []
    nested: dict[str, _Plan] = {}
    for name in names:
        inner = _group_of(hints[name])
        if inner is not None:
            sub_params, sub_plan = _expand(*inner)
            params += sub_params
            nested[name] = sub_plan
            continue
        field = info[name]
        default = (inspect.Parameter.empty if field.required
                   else field.default_factory() if field.default is msgspec.NODEFAULT
                   else field.default)
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=hints[name]))
        taken.append(name)
    return tuple(params), _Plan(cls, tuple(taken), nested)


def grouped(func: F) -> F:
    """``func`` with each parameter of an :class:`OptionGroup` type expanded into the group's
    fields for Typer, and the group built from them on each call (module docstring)."""
    sig = inspect.signature(func, eval_str=True)
    params: list[inspect.Parameter] = []
    plans: dict[str, _Plan] = {}
    for p in sig.parameters.values():
        found = _group_of(p.annotation)
        if found is None:
            params.append(p.replace(kind=inspect.Parameter.KEYWORD_ONLY))
            continue
        expanded, plans[p.name] = _expand(*found)
        params += expanded
    names = [p.name for p in params]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise TypeError(f"{func.__qualname__}: parameter {clash[0]!r} declared twice")

    def command(**values: Any) -> Any:
        for name, plan in plans.items():
            values[name] = plan.build(values)
        return func(**values)

    command.__name__ = func.__name__
    command.__qualname__ = func.__qualname__
    command.__module__ = func.__module__
    command.__doc__ = func.__doc__
    command.__wrapped__ = func  # type: ignore[attr-defined]  # the declared function (its own signature)
    command.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]  # read by inspect.signature
    command.__annotations__ = {p.name: p.annotation for p in params
                               if p.annotation is not inspect.Parameter.empty}
    return typing.cast(F, command)

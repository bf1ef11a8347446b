"""Option groups (:mod:`lbctl.cli.groups`): a group's fields become the command's parameters in
its place — flags, help, defaults and order as declared — and the command gets the group built."""

from __future__ import annotations

import inspect
from typing import Annotated

import pytest
import typer
from typer.testing import CliRunner

from lbctl.cli.groups import Fields, OptionGroup, grouped


class Inner(OptionGroup, frozen=True):
    depth: Annotated[int, typer.Option("--depth", metavar="N", help="How deep.")] = 1


class Outer(OptionGroup, frozen=True):
    name: Annotated[str | None, typer.Option("--name", metavar="NAME", help="A name.")] = None
    loud: Annotated[bool, typer.Option("--loud", help="Shout.")] = False
    inner: Inner = Inner()


def _app(func) -> typer.Typer:
    app = typer.Typer(rich_markup_mode=None)
    app.command()(func)
    app.command("other")(lambda: None)  # a group, so that the command is named
    return app


def test_the_group_is_expanded_in_place_and_built() -> None:
    seen: list[object] = []

    @grouped
    def cmd(ctx: typer.Context, *, first: Annotated[int, typer.Option("--first")] = 0,
            outer: Outer, last: Annotated[str, typer.Option("--last")] = "z") -> None:
        seen.append((first, outer, last, ctx.info_name))

    params = list(inspect.signature(cmd).parameters)
    assert params == ["ctx", "first", "name", "loud", "depth", "last"]
    res = CliRunner().invoke(_app(cmd), ["cmd", "--name", "x", "--depth", "3", "--loud"])
    assert res.exit_code == 0, res.output
    assert seen == [(0, Outer("x", True, Inner(3)), "z", "cmd")]
    help_text = CliRunner().invoke(_app(cmd), ["cmd", "--help"], env={"COLUMNS": "80"}).stdout
    order = [help_text.index(f) for f in ("--first", "--name NAME", "--loud", "--depth N",
                                          "--last")]
    assert order == sorted(order) and "A name." in help_text


def test_fields_selects_and_orders() -> None:
    seen: list[Outer] = []

    @grouped
    def cmd(*, outer: Annotated[Outer, Fields("loud", "name")]) -> None:
        seen.append(outer)

    assert list(inspect.signature(cmd).parameters) == ["loud", "name"]
    res = CliRunner().invoke(_app(cmd), ["cmd", "--loud"])
    assert res.exit_code == 0, res.output
    assert seen == [Outer(None, True, Inner(1))]  # the others keep their defaults


def test_commands_sharing_a_group_each_get_their_own_values() -> None:
    """A group's expansion is memoised (start-up): two commands share its parameters and plan,
    and each call still builds the group from its own command line."""
    seen: list[tuple[str, Outer]] = []

    @grouped
    def one(*, outer: Outer) -> None:
        seen.append(("one", outer))

    @grouped
    def two(*, first: Annotated[int, typer.Option("--first")] = 0, outer: Outer) -> None:
        seen.append(("two", outer))

    assert list(inspect.signature(two).parameters) == ["first", "name", "loud", "depth"]
    assert CliRunner().invoke(_app(one), ["one", "--name", "a"]).exit_code == 0
    assert CliRunner().invoke(_app(two), ["two", "--depth", "5"]).exit_code == 0
    assert CliRunner().invoke(_app(one), ["one"]).exit_code == 0
    assert seen == [("one", Outer("a")), ("two", Outer(inner=Inner(5))), ("one", Outer())]


def test_a_name_declared_twice_is_refused() -> None:
    with pytest.raises(TypeError, match="'name' declared twice"):
        @grouped
        def cmd(*, outer: Outer, name: str = "") -> None:
            pass


def test_an_unknown_field_is_refused() -> None:
    with pytest.raises(TypeError, match="no field 'nope'"):
        @grouped
        def cmd(*, outer: Annotated[Outer, Fields("nope")]) -> None:
            pass


def test_recommend_declares_seven_parameters_for_its_twenty_five_flags() -> None:
    from lbctl.cli.recommend import recommend

    assert len(inspect.signature(recommend).parameters) == 26  # what Typer sees: ctx + 25
    assert list(inspect.signature(recommend.__wrapped__).parameters) == [
        "ctx", "lm", "all_cycles", "watching", "shown", "given", "plot"]
    assert recommend.__doc__ and recommend.__doc__.startswith("Recommend unloads")

"""The root group builds a subcommand when it is first asked for (:class:`lbctl.cli.root.
LazyCommands`): listing the names builds nothing, each is built once, and the root lists every
command in the order an eager declaration gave (``--help``'s goldens pin the text itself)."""

from __future__ import annotations

import pytest
import typer.main

from lbctl.cli.app import app
from lbctl.cli.root import LazyCommands
from tests.started import modules_after_a_file_recommend


def test_names_come_without_building_and_each_is_built_once() -> None:
    built: list[str] = []

    def loader(name: str):  # type: ignore[no-untyped-def]
        def load() -> object:
            built.append(name)
            return f"<{name}>"
        return load

    cmds = LazyCommands({"b": loader("b"), "a": loader("a")}, {"c": "<c>"})
    assert list(cmds) == ["b", "a", "c"] and len(cmds) == 3 and "a" in cmds
    assert built == []
    assert cmds["a"] == "<a>" and cmds.get("a") == "<a>" and built == ["a"]
    assert cmds.get("nope") is None and "nope" not in cmds
    with pytest.raises(KeyError):
        cmds["nope"]
    cmds["d"] = "<d>"
    assert list(cmds) == ["b", "a", "c", "d"]
    del cmds["b"]
    assert list(cmds) == ["a", "c", "d"] and built == ["a"]
    assert dict(cmds.items()) == {"a": "<a>", "c": "<c>", "d": "<d>"}


def test_the_root_lists_every_command_in_the_declared_order() -> None:
    root = typer.main.get_command(app)
    assert list(root.commands) == [  # type: ignore[attr-defined]
        "recommend", "explain", "split-bundle", "assign-preview", "monitor-brokers", "unload",
        "simulate", "compare", "brokers", "journal", "sandbox", "examples", "propose", "apply",
        "drain", "rebalance-after", "doctor", "watch", "snapshot", "fleet", "context", "plans"]
    # a second root in one process (the tests build several) gets the same snapshot group
    again = typer.main.get_command(app).commands["snapshot"]  # type: ignore[attr-defined]
    assert list(again.commands) == list(root.commands["snapshot"].commands)  # type: ignore[attr-defined]
    assert list(again.commands).count("export") == 1


@pytest.mark.slow
def test_recommend_imports_no_other_command() -> None:
    loaded = modules_after_a_file_recommend("lbctl.cli.")
    assert "lbctl.cli.recommend" in loaded
    others = {"lbctl.cli.apply", "lbctl.cli.fleet", "lbctl.cli.compare", "lbctl.cli.drain",
              "lbctl.cli.monitor_brokers", "lbctl.cli.simulate", "lbctl.cli.explain"}
    assert not loaded & others

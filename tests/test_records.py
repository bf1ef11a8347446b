"""``lbctl.records``: one ``replace`` for both kinds of immutable record, and no other in the code."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

import lbctl
from lbctl.model.decision import Label, Reason, Selection
from lbctl.records import replace
from lbctl.versions import Since


@dataclass(frozen=True)
class _Point:
    x: int
    y: int = 0


def test_replace_a_struct_record() -> None:
    s = Selection("broker-1:8080", "ns/0x00000000_0x40000000", Reason.OVERLOADED, 10.0, 2.0)
    t = replace(s, destination="broker-2:8080")
    assert t.destination == "broker-2:8080" and s.destination is None
    assert replace(t, destination=None) == s and hash(replace(t, destination=None)) == hash(s)
    with pytest.raises(TypeError):
        replace(s, no_such_field=1)


def test_replace_a_dataclass_record() -> None:
    assert replace(_Point(1), y=2) == _Point(1, 2)
    with pytest.raises(TypeError):
        replace(_Point(1), z=3)


def test_struct_records_stay_immutable_and_compare_by_value() -> None:
    s = Selection("b", "ns/0x00000000_0xffffffff", Reason.OVERLOADED, 1.0, 1.0)
    with pytest.raises(AttributeError):
        s.broker = "other"  # type: ignore[misc]
    assert s == Selection("b", "ns/0x00000000_0xffffffff", Reason.OVERLOADED, 1.0, 1.0)
    assert s != replace(s, msg_rate=2.0)
    assert repr(s).startswith("Selection(broker='b', bundle=")
    assert str(Label.SUCCESS) == "Success"
    assert "3.0.2" in str(Since("3.0.2"))  # a dataclass with its own __init__ stays one


def _replace_imports(path: Path) -> list[str]:
    """Each place ``path`` reaches ``replace`` other than through :mod:`lbctl.records`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module in ("dataclasses", "msgspec.structs"):
            found += [f"{path}:{node.lineno}" for a in node.names if a.name == "replace"]
        if (isinstance(node, ast.Attribute) and node.attr == "replace"
                and isinstance(node.value, ast.Name) and node.value.id in ("dataclasses", "structs")):
            found.append(f"{path}:{node.lineno}")
    return found


def test_no_module_picks_a_replace_of_its_own() -> None:
    """``dataclasses.replace`` refuses a Struct and ``msgspec.structs.replace`` a dataclass: a
    caller that picks one breaks when a record changes kind, so every caller goes through
    :func:`lbctl.records.replace`."""
    root = Path(lbctl.__file__).parent
    tests = Path(__file__).parent
    offenders = [hit for p in [*root.rglob("*.py"), *tests.rglob("*.py")]
                 if p.name not in ("records.py", "test_records.py") for hit in _replace_imports(p)]
    assert offenders == []

"""The error walk (:mod:`lbctl.model.wire.problems`): a value that does not fit its declaration is
named by its JSON path in lbctl's notation, with what the declaration expects — and agrees with
msgspec on what fits."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
import pytest
from msgspec import Meta, Struct

from lbctl.model.wire import snapshot as w
from lbctl.model.wire.java import EpochMillis, JavaIntCount, JavaLongCount, JavaRate
from lbctl.model.wire.problems import first_problem


class Inner(Struct):
    rate: JavaRate = 0.0
    count: JavaIntCount = 0


class Outer(Struct, kw_only=True):
    name: Annotated[str, Meta(min_length=1, extra={"expected": "a name", "missing": "a name"})]
    items: Annotated[dict[Annotated[str, Meta(min_length=1, extra={"key": "an id as the key"})],
                          Inner], Meta(extra={"expected": "an object: id → Inner"})] = {}
    settings: Annotated[dict[str, int], Meta(extra={"dotted": True})] = {}
    when: EpochMillis = 0
    big: JavaLongCount = 0
    maybe: JavaIntCount | None = None


@pytest.mark.parametrize(("doc", "path", "message"), [
    ({}, "name", "required key is missing (expected a name)"),
    ({"name": ""}, "name", 'expected a name, got ""'),
    ({"name": "n", "items": []}, "items", "expected an object: id → Inner, got an array"),
    ({"name": "n", "items": {"": {}}}, 'items[""]', "expected an id as the key"),
    ({"name": "n", "items": {"a": {"rate": -1}}}, 'items["a"].rate',
     "expected a number >= 0, got -1"),
    ({"name": "n", "items": {"a": {"rate": True}}}, 'items["a"].rate',
     "expected a number, got true"),
    ({"name": "n", "items": {"a": {"rate": float("nan")}}}, 'items["a"].rate',
     "expected a finite number, got NaN"),
    ({"name": "n", "items": {"a": {"count": 2**31}}}, 'items["a"].count',
     "expected an integer within the range of a Java int, got 2147483648"),
    ({"name": "n", "items": {"a": {"count": 1.5}}}, 'items["a"].count',
     "expected an integer >= 0, got 1.5"),
    ({"name": "n", "big": 1e20}, "big",
     "expected an integer within the range of a Java long, got a number of 21 digits"),
    ({"name": "n", "settings": {"x.y": "1"}}, "settings.x.y", 'expected an integer, got "1"'),
    ({"name": "n", "when": -1}, "when",
     "expected epoch milliseconds between 0 and 253402300799999, got -1"),
    ({"name": "n", "when": "now"}, "when", 'expected an integer (epoch milliseconds), got "now"'),
    ({"name": "n", "maybe": 1.5}, "maybe", "expected an integer >= 0, got 1.5"),
    ({"name": "n", 5: 1}, "[5]", "expected a field name as a string key (quote it)"),
])
def test_the_first_problem_is_named_by_its_path(doc: dict[Any, Any], path: str,
                                                message: str) -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert(doc, Outer)
    assert first_problem(doc, Outer) == (path, message)


def test_a_value_that_fits_has_no_problem() -> None:
    doc = {"name": "n", "items": {"a": {"rate": 1, "count": 2}}, "when": 5, "maybe": None}
    msgspec.convert(doc, Outer)
    assert first_problem(doc, Outer) is None


def test_snapshot_words_come_from_the_declaration() -> None:
    doc = {"format": "lbctl/snapshot@2", "cluster": "c", "capturedAt": 1, "brokers": {}}
    assert first_problem(doc, w.Document) == (
        "format", 'expected "lbctl/snapshot@1" (this lbctl reads snapshot format version 1), '
                  'got "lbctl/snapshot@2"')
    assert first_problem([], w.Document) == (
        "", "expected a snapshot object at the top level, got an array")

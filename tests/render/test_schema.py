"""CSV and JSONL: fixed columns per command, one convention for values, a documented schema."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from lbctl.render import to_csv, to_jsonl
from lbctl.render.catalog import SCHEMAS
from lbctl.render.schema import Schema, col, csv_value, json_value, markdown

ROOT = Path(__file__).resolve().parents[2]
S = Schema("demo", "thing", (col("name", "string", "a name"), col("n", "number", "a figure"),
                             col("ok", "boolean", "a flag"), col("tags", "list", "labels")))


def test_header_even_without_rows() -> None:
    assert to_csv([], S) == "name,n,ok,tags\n"
    assert to_jsonl([], S) == ""


def test_values_follow_one_convention() -> None:
    rows = [{"name": "a", "n": 21503.989999999998, "ok": True, "tags": ["x", "y"]},
            {"n": 3.0, "ok": False}]
    text = to_csv(rows, S)
    assert text.splitlines()[1:] == ["a,21503.99,true,x;y", ",3,false,"]
    lines = [json.loads(x) for x in to_jsonl(rows, S).splitlines()]
    assert lines == [{"name": "a", "n": 21503.99, "ok": True, "tags": ["x", "y"]},
                     {"name": None, "n": 3.0, "ok": False, "tags": None}]


def test_unknown_column_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="not columns"):
        to_csv([{"nope": 1}], S)


@pytest.mark.parametrize("value,text", [(None, ""), (float("nan"), ""), (float("inf"), ""),
                                        (1e-9, "0"), (0.1 + 0.2, "0.3"), (7, "7"),
                                        (("a", 1.5), "a;1.5")])
def test_csv_value(value, text) -> None:
    assert csv_value(value) == text


def test_json_value_has_no_nan() -> None:
    assert json_value(float("nan")) is None and json_value((1.0000001, 2)) == [1.0, 2]


def test_every_command_has_a_schema_with_unique_columns() -> None:
    commands = [s.command for s in SCHEMAS]
    assert len(commands) == len(set(commands))
    for s in SCHEMAS:
        assert len(s.names) == len(set(s.names)), s.command
        assert all(c.about for c in s.columns), s.command


def test_docs_page_is_generated_from_the_schemas() -> None:
    """docs/output-schemas.md is markdown(SCHEMAS); ``python tests/docs_pages.py`` rewrites it."""
    page = (ROOT / "docs" / "output-schemas.md").read_text()
    assert page == markdown(SCHEMAS) + "\n"


def test_csv_round_trips_through_the_csv_module() -> None:
    rows = [{"name": 'say "hi", then go', "n": 1.5, "ok": None, "tags": []}]
    back = list(csv.DictReader(io.StringIO(to_csv(rows, S))))
    assert back == [{"name": 'say "hi", then go', "n": "1.5", "ok": "", "tags": ""}]

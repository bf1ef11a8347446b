"""Output: one place that turns command results into table, json, yaml, csv or jsonl.

Commands return objects implementing :class:`Renderable`; :func:`render` picks the format from
:data:`FORMATS`, the one table of output formats (the CLI's ``-o`` choices are built from it): JSON
and YAML print ``to_data()`` (plan v1 for plans), CSV and JSONL print ``to_rows()`` with the
view's fixed columns (:mod:`lbctl.render.schema`), the table format prints ``to_text()`` fitted to
the terminal (:mod:`lbctl.render.display`, :mod:`lbctl.render.tables`). A new format is one entry
here.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from lbctl.errors import UsageError
from lbctl.render.display import current
from lbctl.render.schema import Schema, csv_value, infer, json_value, schema_of
from lbctl.render.tables import Style, render_table, wrap_prose


class Renderable(Protocol):
    def to_data(self) -> Any: ...

    def to_rows(self) -> list[dict[str, Any]]: ...

    def to_text(self) -> str: ...


def to_json(data: Any) -> str:
    """JSON; a non-finite number (Java's double arithmetic can reach Infinity or NaN) is written
    as the string Jackson writes — "Infinity", "-Infinity", "NaN" — never as a silent null, and a
    warning says so."""
    import orjson

    opts = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
    text = orjson.dumps(data, option=opts)
    if b"null" in text:  # orjson writes inf/NaN as null: look for them only then
        from lbctl.safe.text import nonfinite_as_strings

        fixed, count = nonfinite_as_strings(data)
        if count:
            import sys

            sys.stderr.write(f"lbctl: warning: {count} number(s) are not finite (Infinity/NaN, as "
                             "Java's double arithmetic gives them); written as strings\n")
            text = orjson.dumps(fixed, option=opts)
    return text.decode()


def to_yaml(data: Any) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def to_csv(rows: Sequence[dict[str, Any]], schema: Schema | None = None) -> str:
    """CSV with the schema's columns (a header even without rows), values as :func:`csv_value`."""
    schema = schema or infer(rows)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(schema.names)
    for r in rows:
        rec = schema.record(r)
        w.writerow([csv_value(v) for v in rec.values()])
    return buf.getvalue()


def to_jsonl(rows: Sequence[dict[str, Any]], schema: Schema | None = None) -> str:
    """One JSON object per row, the schema's columns in order (nothing at all without rows)."""
    import orjson

    schema = schema or infer(rows)
    return "".join(orjson.dumps({k: json_value(v) for k, v in schema.record(r).items()},
                                option=orjson.OPT_NON_STR_KEYS).decode() + "\n" for r in rows)


def table(rows: Sequence[dict[str, Any]], *, floatfmt: str = ",.2f",
          styles: Mapping[str, Style] | None = None) -> str:
    """A plain text table of dict rows, fitted to the display (:mod:`lbctl.render.tables`)."""
    return render_table(rows, floatfmt=floatfmt, styles=styles)


def fit_text(text: str) -> str:
    """The safety net of the table format: a line still wider than the display (prose a view did
    not wrap itself) is wrapped at spaces; coloured lines are the views' own business."""
    limit = current().limit
    if limit is None or all(len(line) <= limit or "\x1b" in line for line in text.split("\n")):
        return text
    return "\n".join(line if len(line) <= limit or "\x1b" in line else wrap_prose(line, limit)
                     for line in text.split("\n"))


@dataclass(frozen=True)
class Format:
    """One output format: its ``-o`` name, what it is for, and how a result becomes text."""

    name: str
    about: str
    text: Callable[[Renderable], str]


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("table", "tables and prose for people, fitted to the terminal",
           lambda r: fit_text(r.to_text())),
    Format("json", "the result's data (plan@1 for plans)", lambda r: to_json(r.to_data())),
    Format("yaml", "the same data as YAML", lambda r: to_yaml(r.to_data())),
    Format("csv", "one row per action, broker or record (fixed columns)",
           lambda r: to_csv(r.to_rows(), schema_of(r))),
    Format("jsonl", "the CSV rows as JSON objects, one per line (for streams)",
           lambda r: to_jsonl(r.to_rows(), schema_of(r))),
)}


def render(result: Renderable, fmt: str, stream: TextIO) -> None:
    """Write ``result`` to ``stream`` in format ``fmt`` (a key of :data:`FORMATS`)."""
    f = FORMATS.get(fmt)
    if f is None:
        raise UsageError(f"unknown output format {fmt!r}; choose one of {', '.join(FORMATS)}")
    text = f.text(result)
    if fmt == "table":  # for people: names from outside must not drive the terminal
        from lbctl.safe.text import terminal_safe

        text = terminal_safe(text, keep_colors=True)
    if fmt == "jsonl" and not text:
        return  # no row, no line
    stream.write(text if text.endswith("\n") else text + "\n")

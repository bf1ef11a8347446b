"""Output: one place that turns command results into table, json, yaml or csv.

Commands return objects implementing :class:`Renderable`; :func:`render` picks the format from
:data:`FORMATS`, the one table of output formats (the CLI's ``-o`` choices are built from it): JSON
and YAML print ``to_data()`` (plan v1 for plans), CSV prints ``to_rows()``, the table format prints
``to_text()``. A new format is one entry here.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from lbctl.errors import UsageError


class Renderable(Protocol):
    def to_data(self) -> Any: ...

    def to_rows(self) -> list[dict[str, Any]]: ...

    def to_text(self) -> str: ...


def non_finite(data: Any, path: str = "") -> list[str]:
    """Where ``data`` holds an infinite or NaN float (JSON has neither: it writes ``null``)."""
    out: list[str] = []
    if isinstance(data, float):
        if not math.isfinite(data):
            out.append(f"{path or 'value'} is {data}")
    elif isinstance(data, dict):
        for k, v in data.items():
            out += non_finite(v, f"{path}.{k}" if path else str(k))
    elif isinstance(data, list | tuple):
        for i, v in enumerate(data):
            out += non_finite(v, f"{path}[{i}]")
    return out


def json_safe(data: Any) -> Any:
    """``data`` with a warning for each infinite or NaN figure, which JSON shows as ``null``, so
    that no such figure disappears silently (added to a top-level ``warnings`` list)."""
    found = non_finite(data)
    if not found or not isinstance(data, dict):
        return data
    notes = [f"{w} (JSON shows null)" for w in found]
    return {**data, "warnings": [*data.get("warnings", []), *notes]}


def to_json(data: Any) -> str:
    import orjson

    return orjson.dumps(json_safe(data),
                        option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()


def to_json_line(data: Any) -> str:
    """One compact JSON document on one line (a stream of them: ``--watch -o json``)."""
    import orjson

    return orjson.dumps(json_safe(data), option=orjson.OPT_NON_STR_KEYS).decode()


def to_yaml(data: Any) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def to_csv(rows: Sequence[dict[str, Any]]) -> str:
    buf = io.StringIO()
    fields: list[str] = []
    for r in rows:
        for k in r:
            if k not in fields:
                fields.append(k)
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if v is None else v) for k, v in r.items()})
    return buf.getvalue()


def table(rows: Sequence[dict[str, Any]], *, floatfmt: str = ",.2f") -> str:
    """A plain text table of dict rows (tabulate, imported only when a table is printed)."""
    from tabulate import tabulate

    if not rows:
        return "(none)"
    return tabulate(rows, headers="keys", tablefmt="simple", floatfmt=floatfmt,
                    missingval="-", disable_numparse=True)


@dataclass(frozen=True)
class Format:
    """One output format: its ``-o`` name, what it is for, and how a result becomes text."""

    name: str
    about: str
    text: Callable[[Renderable], str]


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("table", "tables and prose for people", lambda r: r.to_text()),
    Format("json", "the result's data (plan@1 for plans)", lambda r: to_json(r.to_data())),
    Format("yaml", "the same data as YAML", lambda r: to_yaml(r.to_data())),
    Format("csv", "one row per action, broker or record", lambda r: to_csv(r.to_rows())),
)}


def render(result: Renderable, fmt: str, stream: TextIO) -> None:
    """Write ``result`` to ``stream`` in format ``fmt`` (a key of :data:`FORMATS`)."""
    f = FORMATS.get(fmt)
    if f is None:
        raise UsageError(f"unknown output format {fmt!r}; choose one of {', '.join(FORMATS)}")
    text = f.text(result)
    stream.write(text if text.endswith("\n") else text + "\n")

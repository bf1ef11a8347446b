"""Output: one place that turns command results into table, json, yaml or csv.

Commands return objects implementing :class:`Renderable`; :func:`render` picks the format. JSON and
YAML print ``to_data()`` (plan v1 for plans), CSV prints ``to_rows()``, the table format prints
``to_text()``.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from typing import Any, Protocol, TextIO

from lbctl.errors import UsageError

FORMATS = ("table", "json", "yaml", "csv")


class Renderable(Protocol):
    def to_data(self) -> Any: ...

    def to_rows(self) -> list[dict[str, Any]]: ...

    def to_text(self) -> str: ...


def pct(x: float | None) -> str:
    """A fraction as a percentage for people: 0.425 → "42.5%"; None → "-"; +inf → "inf"."""
    if x is None or math.isnan(x):  # NaN: a broker without load data (extensible plans)
        return "-"
    if math.isinf(x):
        return "inf"
    return f"{x * 100:.1f}%"


def to_json(data: Any) -> str:
    import orjson

    return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()


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


def render(result: Renderable, fmt: str, stream: TextIO) -> None:
    if fmt == "json":
        text = to_json(result.to_data())
    elif fmt == "yaml":
        text = to_yaml(result.to_data())
    elif fmt == "csv":
        text = to_csv(result.to_rows())
    elif fmt == "table":
        text = result.to_text()
    else:
        raise UsageError(f"unknown output format {fmt!r}; choose one of {', '.join(FORMATS)}")
    stream.write(text if text.endswith("\n") else text + "\n")

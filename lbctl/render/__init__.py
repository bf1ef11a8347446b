"""Output: one place that turns command results into table, json, yaml or csv.

Commands return objects implementing :class:`Renderable`; :func:`render` picks the format from
:data:`FORMATS`, the one table of output formats (the CLI's ``-o`` choices are built from it): JSON
and YAML print ``to_data()`` (plan v1 for plans), CSV prints ``to_rows()``, the table format prints
``to_text()``. A new format is one entry here.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from lbctl.errors import UsageError


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
    if fmt == "table":  # for people: names from outside must not drive the terminal
        from lbctl.safe.text import terminal_safe

        text = terminal_safe(text, keep_colors=True)
    stream.write(text if text.endswith("\n") else text + "\n")

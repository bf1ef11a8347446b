"""The columns of ``-o csv`` and ``-o jsonl``, fixed per command, so that scripts can rely on them.

Each view declares one :class:`Schema`; its rows are written with exactly these columns, in this
order, whatever the content — a CSV always has its header, even with no row. Values follow one
convention everywhere (:func:`csv_value`, :func:`json_value`):

* numbers without float noise (rounded to 6 decimals: ``21503.99``, not ``21503.989999999998``);
  one unit per column, named in the schema (fractions are 0–1, throughputs bytes/s, rates msg/s);
* booleans ``true``/``false``; missing values empty in CSV and ``null`` in JSONL;
* lists joined with ``;`` in CSV, arrays in JSONL.

``docs/output-schemas.md`` is generated from these declarations (a test keeps it equal).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from msgspec import Struct

DIGITS = 6
TYPES = ("string", "integer", "number", "boolean", "list", "time")


class Column(Struct, frozen=True):
    """One column: its name, JSON type (``time`` = RFC 3339 UTC string) and meaning with unit."""

    name: str
    type: str
    about: str

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"column {self.name}: unknown type {self.type}")


class Schema(Struct, frozen=True):
    """The rows a command writes with ``-o csv`` / ``-o jsonl``."""

    command: str  # e.g. "recommend"
    row: str  # what one row is
    columns: tuple[Column, ...]

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def record(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """``values`` as one row of this schema: every column, in order, unknown keys refused."""
        unknown = [k for k in values if k not in self._index]
        if unknown:
            raise ValueError(f"{self.command}: not columns of its schema: {', '.join(unknown)}")
        return {c.name: values.get(c.name) for c in self.columns}

    @property
    def _index(self) -> frozenset[str]:
        return frozenset(self.names)


def col(name: str, type_: str, about: str) -> Column:
    return Column(name, type_, about)


def clean_number(x: float) -> float | int | None:
    """A float without noise: rounded to :data:`DIGITS` decimals; None when not finite."""
    if math.isnan(x) or math.isinf(x):
        return None
    r = round(x, DIGITS)
    return 0.0 if r == 0 else r


def json_value(v: Any) -> Any:
    """A cell for JSONL: floats cleaned, tuples as lists."""
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, float):
        return clean_number(v)
    if isinstance(v, list | tuple):
        return [json_value(x) for x in v]
    return v


def csv_value(v: Any) -> str:
    """A cell for CSV: ``true``/``false``, empty for missing, ``;``-joined lists, clean floats."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        c = clean_number(v)
        if c is None:
            return ""
        text = repr(float(c))
        return text[:-2] if text.endswith(".0") else text
    if isinstance(v, list | tuple):
        return ";".join(csv_value(x) for x in v)
    return str(v)


def infer(rows: Sequence[Mapping[str, Any]]) -> Schema:
    """A schema from the rows themselves (for a view that declares none)."""
    names: list[str] = []
    for r in rows:
        names.extend(k for k in r if k not in names)
    return Schema("?", "row", tuple(Column(n, "string", "") for n in names))


def schema_of(view: Any) -> Schema:
    s = getattr(view, "schema", None)
    return s if isinstance(s, Schema) else infer(view.to_rows())


def markdown(schemas: Sequence[Schema]) -> str:
    """The reference page of every schema (``docs/output-schemas.md``)."""
    out = ["# CSV and JSONL output", "",
           "<!-- generated from the views' schemas (lbctl/render/catalog.py): "
           "python tests/docs_pages.py -->", "",
           "`-o csv` and `-o jsonl` write the same rows: CSV with a header line (always, even",
           "when there is no row), JSONL as one JSON object per line. The columns of each",
           "command are fixed: the same names in the same order whatever the input.", "",
           "Conventions:", "",
           "* numbers are rounded to 6 decimals (no float noise); each column has one unit,",
           "  named below: *fraction* means 0–1 (0.425 is 42.5 %), throughputs are bytes/s,",
           "  rates messages/s;",
           "* booleans are `true` / `false`; a missing value is empty in CSV, `null` in JSONL;",
           "* lists (type *list*) are joined with `;` in CSV and are arrays in JSONL;",
           "* times (type *time*) are RFC 3339 in UTC (`2026-03-12T14:05:00Z`).", ""]
    for s in schemas:
        out += [f"## `lbctl {s.command}`", "", f"One row per {s.row}.", "",
                "| column | type | meaning |", "|---|---|---|"]
        out += [f"| `{c.name}` | {c.type} | {c.about} |" for c in s.columns]
        out.append("")
    return "\n".join(out)

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
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from lbctl.errors import UsageError
from lbctl.render.display import current
from lbctl.render.schema import Schema, csv_value, infer, json_value, schema_of
from lbctl.render.tables import Style, render_table, wrap_prose
from lbctl.safe.text import json_hidden_escaped


class Renderable(Protocol):
    def to_data(self) -> Any: ...

    def to_rows(self) -> list[dict[str, Any]]: ...

    def to_text(self) -> str: ...


def non_finite(data: Any, path: str = "") -> list[str]:
    """Where ``data`` holds an infinite or NaN float (JSON has neither: it writes ``null``)."""
    if not path and _all_finite(data):  # the usual answer, without a path string per value
        return []
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


def _all_finite(data: Any) -> bool:
    """Whether no float in ``data`` (nested dicts, lists, tuples) is infinite or NaN."""
    stack = [data]
    pop, extend = stack.pop, stack.extend
    while stack:
        x = pop()
        if isinstance(x, float):
            if not math.isfinite(x):
                return False
        elif isinstance(x, dict):
            extend(x.values())
        elif isinstance(x, list | tuple):
            extend(x)
    return True


def json_safe(data: Any, found: list[str] | None = None) -> Any:
    """``data`` with a warning for each infinite or NaN figure, which JSON shows as ``null``, so
    that no such figure disappears silently (added to a top-level ``warnings`` list). ``found``:
    :func:`non_finite` of ``data`` when the caller already has it (a large plan is walked once)."""
    if found is None:
        found = non_finite(data)
    if not found or not isinstance(data, dict):
        return data
    notes = [{"code": "non-finite", "message": f"{w} (JSON shows null)", "brokers": [],
              "bundles": []} for w in found]
    return {**data, "warnings": [*data.get("warnings", []), *notes]}


def _json_ready(data: Any) -> Any:
    """``data`` as JSON can carry it: non-finite figures (Java's double arithmetic reaches
    Infinity and NaN) become ``null``, each named in the document's ``warnings`` (when it is an
    object) and counted in one warning on stderr — never a silent null, never a non-JSON token."""
    found = non_finite(data)
    if found:
        warn_non_finite(len(found))
    return json_safe(data, found)


def warn_non_finite(count: int) -> None:
    """The one stderr line counting a document's non-finite figures (:func:`_json_ready`)."""
    import sys

    sys.stderr.write(f"lbctl: warning: {count} figure(s) are not finite (Infinity/NaN, "
                     "as Java's double arithmetic gives them); JSON shows them as null\n")


def to_json(data: Any) -> str:
    import orjson

    return _dumps(data, orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)


def to_json_line(data: Any) -> str:
    """One compact JSON document on one line (a stream of them: ``--watch -o json``)."""
    import orjson

    return _dumps(data, orjson.OPT_NON_STR_KEYS)


def _dumps(data: Any, option: int) -> str:
    """``data`` as JSON text, as :func:`_json_ready` has it, without walking a large document
    that is finite, as one usually is.

    orjson writes every non-finite float it meets in a dict, list or tuple as ``null``, and
    those containers are the only places :func:`non_finite` looks: text without ``null`` anywhere
    (not even inside a string) had no such figure, so it is the answer as it stands (a plan of a
    1,000,000-bundle cycle: the walk cost as much as the encoding). Text with ``null`` is
    walked as before; when the walk finds nothing, the same text is still the answer."""
    import orjson

    text = orjson.dumps(data, option=option)
    if b"null" in text and not _all_finite(data):
        text = orjson.dumps(_json_ready(data), option=option)
    return json_text(text)


def json_text(data: bytes) -> str:
    """Encoded JSON as text, with the characters a terminal would hide or reorder escaped
    (``\\u202e``: :func:`lbctl.safe.text.json_hidden_escaped`, the rule of
    :mod:`lbctl.render.hidden`)."""
    return json_hidden_escaped(data).decode()


def to_yaml(data: Any) -> str:
    """YAML as PyYAML's safe dumper writes it, hidden characters escaped (:mod:`.hidden`)."""
    from lbctl.render.hidden import yaml_text

    return yaml_text(data)


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
    option = orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE
    return json_text(b"".join(orjson.dumps({k: json_value(v) for k, v in schema.record(r).items()},
                                           option=option) for r in rows))


def table(rows: Sequence[dict[str, Any]], *, floatfmt: str = ",.2f",
          styles: Mapping[str, Style] | None = None, optional: Sequence[str] = ()) -> str:
    """A plain text table of dict rows, fitted to the display (:mod:`lbctl.render.tables`);
    ``optional`` columns give way, in order, before the table turns into records."""
    return render_table(rows, floatfmt=floatfmt, styles=styles, optional=optional)


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


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def render(result: Renderable, fmt: str, stream: TextIO) -> None:
    """Write ``result`` to ``stream`` in format ``fmt`` (a key of :data:`FORMATS`)."""
    f = FORMATS.get(fmt)
    if f is None:
        raise UsageError(f"unknown output format {fmt!r}; choose one of {', '.join(FORMATS)}")
    text = f.text(result)
    if fmt == "table":  # for people: names from outside must not drive the terminal
        from lbctl.safe.text import terminal_safe

        # colour sequences survive only when lbctl painted (a terminal that wants colour): else
        # one in the text came from a name and is shown escaped
        text = terminal_safe(text, keep_colors=current().color)
    elif fmt == "csv" and _is_terminal(stream):  # JSON, JSONL and YAML escape control
        from lbctl.safe.text import terminal_safe  # characters themselves; CSV keeps them raw,

        text = terminal_safe(text)  # which is right for a file or a pipe, not for a screen
    if fmt == "jsonl" and not text:
        return  # no row, no line
    stream.write(text if text.endswith("\n") else text + "\n")

"""Checks the CLI output tests share: how a case ended, its facts, and reading each format.

A failure names the case and the field: ``recommend_…_o_json: .actions[2].to: expected 'b-4',
got 'b-5'``. Formats are read the way a user's tools would read them: JSON and YAML parsed, CSV by
``csv`` with the documented header (``docs/output-schemas.md``), JSONL line by line, and the table
views by their column underlines (``----  ------``), so a wrapped cell is read back whole.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import yaml

from tests.cli_cases import (
    CASES,
    GOLDEN_CASES,
    ROOT,
    Output,
    command,
    output_format,
    run,
    scenario,
    with_format,
)
from tests.output_facts import expected, facts, first_difference

CHECKED: set[tuple[str, str]] = set()
_YAML = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def cases(cmd: str, fmt: str) -> list[str]:
    """The cases of ``cmd`` printing ``fmt`` that no golden file pins (a test module asks for
    those it checks; :data:`CHECKED` records that it did)."""
    CHECKED.add((cmd, fmt))
    return sorted(n for n, a in CASES.items()
                  if n not in GOLDEN_CASES and command(a) == cmd and output_format(a) == fmt)


@cache
def _expected(cmd: str) -> dict[str, Any]:
    return expected(cmd)


def want(name: str) -> dict[str, Any]:
    """The stored facts of case ``name`` (shared by every format of its command line)."""
    args = CASES[name]
    entries = _expected(command(args))
    key = scenario(args)
    assert key in entries, f"{name}: no expected facts; run python -m tests.make_output_facts"
    facts: dict[str, Any] = entries[key]
    return facts


def ran(name: str) -> tuple[Output, dict[str, Any]]:
    """Run case ``name``; check that it ended as expected: its exit code, and its stderr (the
    one-line refusal when it fails, nothing otherwise). Returns the output and the facts."""
    out = run(CASES[name])
    facts = want(name)
    code = facts.get("exit", 0)
    assert out.exit_code == code, (f"{name}: exit code {out.exit_code}, expected {code}; "
                                   f"stderr {out.stderr[:300]!r}")
    assert out.stderr == facts.get("stderr", ""), f"{name}: stderr {out.stderr[:500]!r}"
    if code:
        assert out.stdout == "", f"{name}: a refusal printed {out.stdout[:200]!r}"
    return out, facts


def same_facts(name: str, got: Any, facts: Any, where: str = "") -> None:
    diff = first_difference(facts, got, where)
    assert diff is None, f"{name}: {diff}"


def same_list(name: str, what: str, got: list[Any], exp: list[Any]) -> None:
    """``got`` equals ``exp``; if not, say which item first differs."""
    for i, (g, e) in enumerate(zip(got, exp, strict=False)):
        assert g == e, f"{name}: {what}[{i}]: expected {e!r}, got {g!r}"
    assert len(got) == len(exp), f"{name}: {len(got)} {what}, expected {len(exp)}: {got!r}"


def json_of(name: str) -> Any:
    """The JSON output of case ``name``'s command line (the case itself when it prints JSON)."""
    out = run(with_format(CASES[name], "json"))
    assert out.exit_code == 0, f"{name}: its JSON form failed: {out.stderr[:300]!r}"
    return json.loads(out.stdout)


def check_yaml(name: str) -> Any:
    """A YAML case parses, and its data is exactly its JSON form's."""
    out, _ = ran(name)
    data = yaml.load(out.stdout, Loader=_YAML)  # a safe loader: libyaml's when built
    diff = first_difference(json_of(name), data)
    assert diff is None, f"{name}: YAML differs from JSON at {diff}"
    return data


def check_document(name: str, title: str, shape: Callable[[str, Any], None]) -> None:
    """A JSON or YAML case of ``lbctl <title>``: it ended as expected (:func:`ran`; a refusal
    prints no document), its document has the command's ``shape`` (YAML: exactly its JSON form's
    data, :func:`check_yaml`) and records the stored facts."""
    out, want_facts = ran(name)
    if out.exit_code:
        return
    fmt = output_format(CASES[name])
    data = check_yaml(name) if fmt == "yaml" else json_loads(name, out.stdout)
    shape(name, data)
    same_facts(name, facts(title, data), want_facts)


# --- CSV and JSONL ------------------------------------------------------------------------------

@cache
def documented_columns(title: str) -> list[str]:
    """The columns ``docs/output-schemas.md`` lists under ``## `lbctl <title>```."""
    text = (ROOT / "docs" / "output-schemas.md").read_text()
    section = text.split(f"## `lbctl {title}`\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([^`]+)` \|", section, re.M)


def read_csv(name: str, stdout: str, title: str) -> list[dict[str, str]]:
    """The rows of a CSV output, after checking its header is the documented one."""
    reader = csv.reader(io.StringIO(stdout))
    header = next(reader)
    assert header == documented_columns(title), f"{name}: CSV header {header}"
    rows = [dict(zip(header, r, strict=True)) for r in reader]
    return rows


def read_jsonl(name: str, stdout: str, title: str) -> list[dict[str, Any]]:
    """The rows of a JSONL output: one JSON object per line, keys the documented columns."""
    rows = []
    for i, line in enumerate(stdout.splitlines()):
        row = json.loads(line)
        assert isinstance(row, dict), f"{name}: line {i + 1} is not an object"
        assert list(row) == documented_columns(title), f"{name}: line {i + 1} keys {list(row)}"
        rows.append(row)
    return rows


def _same(cell: Any, value: Any, from_csv: bool) -> bool:
    """Whether an output cell carries ``value`` (numbers are rounded to 6 decimals)."""
    if value is None:
        return cell == "" if from_csv else cell is None
    if isinstance(value, bool):
        return cell == str(value).lower() if from_csv else cell is value
    if isinstance(value, int | float):
        try:
            got = float(cell)
        except (TypeError, ValueError):
            return False
        return math.isclose(got, value, rel_tol=1e-12, abs_tol=5.01e-7)
    if isinstance(value, list):
        return cell == ";".join(value) if from_csv else cell == value
    return bool(cell == value)


def same_rows(name: str, rows: list[dict[str, Any]], want_rows: list[dict[str, Any]],
              from_csv: bool) -> None:
    """Each output row carries the values of its JSON counterpart, column by column (columns
    the JSON form has no counterpart for are left out of ``want_rows``)."""
    assert len(rows) == len(want_rows), f"{name}: {len(rows)} row(s), JSON has {len(want_rows)}"
    for i, (row, w) in enumerate(zip(rows, want_rows, strict=True)):
        for col, value in w.items():
            assert _same(row[col], value, from_csv), (
                f"{name}: row {i + 1} column {col}: {row[col]!r}, JSON says {value!r}")


# --- table views --------------------------------------------------------------------------------

@dataclass
class TextTable:
    """A fixed-width table of a table view: the header words over a ``---  ---`` underline."""

    headers: list[str]
    spans: list[tuple[int, int]]
    lines: list[str]
    lifted: dict[str, str] = field(default_factory=dict)  # "(every row: name value)"

    def rows(self, anchor: str) -> list[dict[str, str]]:
        """The rows, a row starting at each line whose ``anchor`` column has a value; the lines
        after it (a wrapped cell's next parts) are joined to it, each cell's parts by a space
        (a name wrapped inside, like a bundle's, is read back with :func:`joined`)."""
        col = 0 if anchor in self.lifted else self.headers.index(anchor)  # lifted: no anchor
        rows: list[dict[str, list[str]]] = []
        for line in self.lines:
            cells = self._cells(line)
            if cells[col] or not rows:
                rows.append({h: [] for h in self.headers})
            for h, c in zip(self.headers, cells, strict=True):
                if c:
                    rows[-1][h].append(c)
        return [{h: " ".join(parts) or self.lifted.get(h, "") for h, parts in r.items()}
                for r in rows]

    def _cells(self, line: str) -> list[str]:
        ends = [s for s, _ in self.spans[1:]] + [len(line) + 1]
        return [line[s:e].strip() for (s, _), e in zip(self.spans, ends, strict=True)]


def text_tables(text: str) -> list[TextTable]:
    """Every fixed-width table in a table view."""
    lines = text.splitlines()
    tables = []
    for i, line in enumerate(lines):
        if not line or not re.fullmatch(r"-+( +-+)+", line):
            continue
        spans = [m.span() for m in re.finditer(r"-+", line)]
        head: list[str] = []
        j = i - 1
        while j >= 0 and lines[j].strip() and not lines[j].endswith(":") \
                and _within(lines[j], spans):
            head.insert(0, lines[j])
            j -= 1
        headers = [" ".join(filter(None, (h[s:e].strip() for h in head))) for s, e in spans]
        body = []
        lifted: dict[str, str] = {}
        for row in lines[i + 1:]:
            if not row.strip():
                break
            if row.startswith("(every row: "):  # columns holding one value, said once
                for item in row[len("(every row: "):-1].split(", "):
                    name, _, value = item.rpartition(" ")
                    lifted[name] = value
                headers += [h for h in lifted if h not in headers]
                spans += [(10**6, 10**6)] * (len(headers) - len(spans))
            if row.startswith("("):  # the table's own notes
                continue
            body.append(row)
        tables.append(TextTable(headers, spans, body, lifted))
    return tables


def _within(line: str, spans: list[tuple[int, int]]) -> bool:
    """Whether every character of a line falls in a column (it is a header line, not a title)."""
    return all(line[k] == " " or any(s <= k < e for s, e in spans) for k in range(len(line)))


def table_with(name: str, text: str, *headers: str) -> TextTable | None:
    """The table of ``text`` that has all these headers, if any."""
    found = [t for t in text_tables(text) if all(h in t.headers for h in headers)]
    assert len(found) <= 1, f"{name}: {len(found)} tables with {headers}"
    return found[0] if found else None


def shortener(text: str) -> Any:
    """How a table view names brokers: without the suffix they all share, when it says so."""
    m = re.search(r"\(common suffix (\S+) left out of broker names", text)
    suffix = m.group(1) if m else ""

    def short(broker: str | None) -> str:
        if broker is None:
            return "-"
        return broker[:-len(suffix)] if suffix and broker.endswith(suffix) else broker
    return short


def joined(cell: str) -> str:
    """A name a table wrapped over several lines (``acme/clickstream/`` + ``0x…_0x…``), whole."""
    return cell.replace(" ", "")


def flat(text: str) -> str:
    """The text with each run of whitespace (a wrapped line's break and indent) as one space."""
    return re.sub(r"\s+", " ", text)


def sections(text: str, many: bool) -> list[str]:
    """A table view of --all-cycles split into its cycles' parts (``Cycle i/n — …`` in
    recommend's, ``=== Cycle i/n ===`` in explain's)."""
    if not many:
        return [text]
    start = r"(?:=== )?Cycle \d+/\d+ "
    parts = re.split(f"^(?={start})", text, flags=re.M)
    return [p for p in parts if re.match(start, p)]


def json_loads(name: str, stdout: str) -> Any:
    try:
        return json.loads(stdout)
    except json.JSONDecodeError as e:  # pragma: no cover - the message is the point
        raise AssertionError(f"{name}: not JSON: {e}") from e

"""``recommend SEQ.jsonl --all-cycles`` written as each cycle's plan is made.

:class:`~lbctl.render.views.RecommendView` renders a list of plans: a streamed replay of 10,000
snapshots that kept every plan for it grew to 858 MB (issue 30). Here each plan is written when
its cycle ends and then dropped, with the very bytes the view writes: JSON as the ``cycles``
array, each plan indented as ``orjson`` indents it there (non-finite figures named in the
top-level ``warnings`` after the array, as :func:`lbctl.render.json_safe` puts them; the one-line
stderr count comes at the end rather than first); CSV and JSONL a cycle's rows at a time; the
table a cycle's text at a time. YAML has no streamed form here: the caller keeps the plans.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

from lbctl.plan import Plan
from lbctl.render import (
    fit_text,
    json_safe,
    json_text,
    non_finite,
    to_csv,
    to_jsonl,
    warn_non_finite,
)
from lbctl.render.views import RECOMMEND_SCHEMA, RecommendView, cycle_title, plan_text

#: the formats written cycle by cycle
STREAMED = ("json", "csv", "jsonl", "table")


def write_cycles(plans: Iterable[Plan], count: int, fmt: str, stream: TextIO) -> Plan | None:
    """Write every plan of ``plans`` (``count`` of them: the titles say ``Cycle i/count``) in
    ``fmt`` (one of :data:`STREAMED`), each as it comes; returns the last plan (``--plot``)."""
    writer = {"json": _json, "csv": _rows, "jsonl": _rows, "table": _table}[fmt]
    return writer(plans, count, fmt, stream)


def _indented(text: str, pad: str) -> str:
    return pad + text.replace("\n", "\n" + pad)


def _json(plans: Iterable[Plan], count: int, fmt: str, stream: TextIO) -> Plan | None:
    import orjson

    opt = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
    last = None
    found: list[str] = []
    stream.write('{\n  "cycles": [')
    for i, plan in enumerate(plans):
        data = plan.to_dict()
        found += non_finite(data, f"cycles[{i}]") if non_finite(data) else []
        stream.write(("\n" if last is None else ",\n")
                     + _indented(json_text(orjson.dumps(data, option=opt)), "    "))
        last = plan
    stream.write("\n  ]" if last is not None else "]")
    if found:
        warn_non_finite(len(found))
        block = orjson.dumps(json_safe({}, found), option=opt).decode()
        stream.write(",\n" + block[2:-2])  # the object's inside: '  "warnings": [ … ]'
    stream.write("\n}\n")
    return last


def _rows(plans: Iterable[Plan], count: int, fmt: str, stream: TextIO) -> Plan | None:
    last = None
    if fmt == "csv":
        stream.write(to_csv([], RECOMMEND_SCHEMA))  # the header, even without a row
    for i, plan in enumerate(plans, start=1):
        rows = RecommendView([plan], cycles=count, all_cycles=True).to_rows()
        for row in rows:
            row["cycle"] = i
        if fmt == "csv":
            stream.write(to_csv(rows, RECOMMEND_SCHEMA).split("\n", 1)[1])
        else:
            stream.write(to_jsonl(rows, RECOMMEND_SCHEMA))
        last = plan
    return last


def _table(plans: Iterable[Plan], count: int, fmt: str, stream: TextIO) -> Plan | None:
    from lbctl.safe.text import terminal_safe

    last = None
    tail = ""
    for i, plan in enumerate(plans, start=1):
        text = terminal_safe(fit_text(plan_text(plan, title=cycle_title(plan, i, count))),
                             keep_colors=True)
        stream.write(("" if last is None else "\n\n") + text)
        tail = text[-1:] if text else tail
        last = plan
    if tail != "\n":
        stream.write("\n")
    return last

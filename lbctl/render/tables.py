"""Plain text tables that fit the terminal.

The look is the usual one for command-line tools (headers, a dashed rule under each, columns two
spaces apart, numbers right-aligned). What it adds, so that a table never wraps on the terminal:

* the width comes from the :class:`~lbctl.render.display.Display` in force (80 columns when piped,
  unlimited with ``--wide``);
* when the natural widths do not fit, the widest text column gives way first; its cells wrap at
  natural break points (space, ``/``, ``_``, ``,``, ``;``) and, only as a last resort, inside a
  word. Numbers never wrap;
* a column whose every cell is empty is left out;
* a cell may carry a style (a decision label, a warning), applied after the layout so colour
  codes never count as width.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lbctl.render.display import current, paint

GAP = 2
MIN_HARD = 4  # a text column is never squeezed below this (wrapping inside words)
_NUMERIC = re.compile(r"^[-+]?(\d[\d,]*(\.\d+)?|\.\d+)(%|x)?$|^[-?]$|^-?inf$")
_TOKEN = re.compile(r"[^ /_,;]*[ /_,;]?")

Style = Callable[[str], str | None]


def _cell(v: Any, floatfmt: str) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return format(v, floatfmt)
    return str(v)


def _tokens(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text) if t]


def _min_width(text: str) -> int:
    return max((len(t.rstrip()) for t in _tokens(text)), default=0)


def _camel_cut(tok: str, room: int) -> int:
    """Where to cut a word too long for ``room``: before its last inner capital that fits
    (``Threshold|Shedder``), else at ``room``."""
    cuts = [i for i in range(2, min(room, len(tok) - 1) + 1)
            if tok[i].isupper() and tok[i - 1].islower()]
    return cuts[-1] if cuts else room


def wrap_cell(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width``, broken at natural points, else inside words."""
    if len(text) <= width:
        return [text]
    lines: list[str] = []
    line = ""
    for tok in _tokens(text):
        while len(tok.rstrip()) > width:  # a token longer than the column: cut it
            room = width - len(line)
            if room <= 0:
                lines.append(line.rstrip())
                line, room = "", width
            cut = _camel_cut(tok, room)
            line += tok[:cut]
            tok = tok[cut:]
            lines.append(line.rstrip())
            line = ""
        if len((line + tok).rstrip()) > width:
            lines.append(line.rstrip())
            line = tok.lstrip()
        else:
            line += tok
    if line.strip() or not lines:
        lines.append(line.rstrip())
    return lines


def fit_widths(natural: list[int], minimum: list[int], numeric: list[bool],
               limit: int | None) -> list[int]:
    """Column widths within ``limit`` (the gaps included): the widest column shrinks first, down
    to its longest word (a number is one word; its heading may wrap), then, if still needed, text
    columns break inside words down to :data:`MIN_HARD`."""
    widths = list(natural)
    if limit is None:
        return widths
    room = limit - GAP * (len(widths) - 1)
    def soft(i: int) -> int:
        return minimum[i]

    def hard(i: int) -> int:
        return natural[i] if numeric[i] else min(minimum[i], MIN_HARD)

    for floor in (soft, hard):
        while sum(widths) > room:
            movable = [i for i, w in enumerate(widths) if w > floor(i)]
            if not movable:
                break
            i = max(movable, key=lambda j: (widths[j], -j))
            widths[i] -= 1
    return widths


def render_table(rows: Sequence[Mapping[str, Any]], *, floatfmt: str = ",.2f",
                 styles: Mapping[str, Style] | None = None, limit: int | None = -1) -> str:
    """A table of dict rows (the first row's keys, then any new ones, give the columns).

    ``limit`` -1 means the current display's limit; None means no limit."""
    if not rows:
        return "(none)"
    if limit == -1:
        limit = current().limit
    heads: list[str] = []
    for r in rows:
        heads.extend(k for k in r if k not in heads)
    cells = [[_cell(r.get(h), floatfmt) for h in heads] for r in rows]
    keep = [j for j in range(len(heads)) if any(row[j] != "" for row in cells)]
    heads = [heads[j] for j in keep]
    cells = [[row[j] for j in keep] for row in cells]
    n = len(heads)
    numeric = [all(_NUMERIC.match(row[j]) or row[j] == "" for row in cells)
               and any(row[j] not in ("", "-") for row in cells) for j in range(n)]
    natural = [max(len(heads[j]), *(len(row[j]) for row in cells)) for j in range(n)]
    minimum = [max(_min_width(heads[j]),
                   *((len(row[j]) if numeric[j] else _min_width(row[j])) for row in cells))
               for j in range(n)]
    widths = fit_widths(natural, minimum, numeric, limit)
    styles = styles or {}

    def line(values: list[str], *, style_row: bool) -> list[str]:
        wrapped = [wrap_cell(v, widths[j]) for j, v in enumerate(values)]
        height = max(len(w) for w in wrapped)
        out = []
        for k in range(height):
            parts = []
            for j, w in enumerate(wrapped):
                text = w[k] if k < len(w) else ""
                padded = text.rjust(widths[j]) if numeric[j] else text.ljust(widths[j])
                style = styles.get(heads[j]) if style_row else None
                if style is not None and text:
                    s = style(values[j])
                    padded = padded.replace(text, paint(text, s), 1)
                parts.append(padded)
            out.append((" " * GAP).join(parts).rstrip())
        return out

    lines = line(heads, style_row=False)
    lines.append((" " * GAP).join("-" * w for w in widths))
    for row in cells:
        lines += line(row, style_row=True)
    return "\n".join(lines)


def wrap_prose(text: str, limit: int | None = -1, *, hang: int = 4) -> str:
    """Lines of prose longer than the display wrapped at spaces, continued ``hang`` columns
    deeper than the line's own indent (so an indented list stays readable)."""
    import textwrap

    if limit == -1:
        limit = current().limit
    if limit is None:
        return text
    out = []
    for raw in text.split("\n"):
        if len(raw) <= limit:
            out.append(raw)
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        sub = " " * min(indent + hang, max(0, limit // 2))
        out.extend(textwrap.wrap(raw, width=limit, initial_indent="", subsequent_indent=sub,
                                 break_long_words=True, break_on_hyphens=False,
                                 drop_whitespace=True) or [raw])
    return "\n".join(out)

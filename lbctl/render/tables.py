"""Plain text tables that fit the terminal, with every identifier whole.

The look is the usual one for command-line tools (headers, a dashed rule under each, columns two
spaces apart, numbers right-aligned). What it adds, so that a table never wraps on the terminal
and a name can always be copied and pasted from it:

* the width comes from the :class:`~lbctl.render.display.Display` in force (80 columns when piped,
  unlimited with ``--wide``);
* a cell breaks only at spaces: a word — a broker id, a bundle name, a strategy, a decision
  label, a number — is never cut. When the natural widths do not fit, the widest text column
  gives way first, down to its longest word; headers (labels, not identifiers) may wrap anywhere;
* when even that does not fit, the caller's ``optional`` columns give way, in the order given:
  first those holding one value in every row (said once under the table: ``(every row: action
  unload)``), then the others (a line under the table names them; ``--wide`` shows them); when
  that is not enough either, each row is printed as a record (``name: value`` lines), which fits
  any width;
* a column whose every cell is empty is left out;
* a cell may carry a style (a decision label, a warning), applied after the layout so colour
  codes never count as width.

tabulate is not used for the layout: importing it costs ~30 ms of start-up (measured with
``python -X importtime`` on top of lbctl's own imports) on every command that prints a table, its
column limits wrap inside words (the cut this module exists to prevent), and it neither leaves
columns out nor switches to records; the join it would do is a few lines here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lbctl.render.display import current, paint
from lbctl.safe.text import display_width, name_safe, pad

GAP = 2
MIN_HARD = 4  # a header is never squeezed below this (wrapping inside its words)
_NUMERIC = re.compile(r"^[-+]?(\d[\d,]*(\.\d+)?|\.\d+)(%|x)?$|^[-?]$|^-?inf$")
_TOKEN = re.compile(r"[^ /_,;]*[ /_,;]?")
#: the inside of a command quoted in backticks: its shell-quoted arguments whole (```lbctl explain
#: --broker 'a`b'```: ``shlex.quote`` keeps a name's backtick, which must not end the command's
#: quote — walk25), else anything but a backtick. A quoted argument starts an argument (after a
#: blank, ``=`` or another quoted part, as ``shlex.quote``'s ``'a'"'"'b'``), so an apostrophe
#: inside a word (``broker's``) is text
_INSIDE = r"""(?:(?<=[\s='"])'[^'\n]*'|(?<=[\s='"])"[^"\n]*"|[^`\n])*"""
#: a command quoted in backticks (see :data:`_QUOTED`)
_COMMAND = rf"`{_INSIDE}`"
#: a word of a cell: text up to a blank, a command quoted in backticks (```lbctl apply x --yes```,
#: see :data:`_QUOTED`) counting as one word with whatever it is glued to
_WORD = re.compile(rf"(?:{_COMMAND}|[^\s`]|`)+\s*")
RECORD_INDENT = "  "

Style = Callable[[str], str | None]


def _cell(v: Any, floatfmt: str) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return format(v, floatfmt)
    return name_safe(str(v))  # a cell is one line: a name's newline or escape is shown as text


def _tokens(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text) if t]


def _min_width(text: str) -> int:
    return max((len(t.rstrip()) for t in _tokens(text)), default=0)


def longest_word(text: str) -> int:
    """The width a cell cannot go below: its longest space-free word (a quoted command is one
    word, as :func:`wrap_words` keeps it)."""
    return max((display_width(w.rstrip()) for w in _WORD.findall(text)), default=0)


def _camel_cut(tok: str, room: int) -> int:
    """Where to cut a word too long for ``room``: before its last inner capital that fits
    (``Threshold|Shedder``), else at ``room``."""
    cuts = [i for i in range(2, min(room, len(tok) - 1) + 1)
            if tok[i].isupper() and tok[i - 1].islower()]
    return cuts[-1] if cuts else room


def wrap_cell(text: str, width: int) -> list[str]:
    """A header in lines of at most ``width``, broken at natural points, else inside words."""
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


def wrap_words(text: str, width: int) -> list[str]:
    """A cell in lines of at most ``width``, broken at spaces only: a word longer than ``width``
    keeps a line of its own, whole."""
    if display_width(text) <= width:
        return [text]
    lines: list[str] = []
    line = ""
    for word in _WORD.findall(text):
        if line and display_width((line + word).rstrip()) > width:
            lines.append(line.rstrip())
            line = ""
        line += word
    if line.strip() or not lines:
        lines.append(line.rstrip())
    return lines


def fit_widths(natural: list[int], minimum: list[int], limit: int | None,
               head_hard: list[int] | None = None) -> list[int]:
    """Column widths within ``limit`` (the gaps included), as close as they get: the widest
    column shrinks first, down to its longest word, then columns whose header is what holds them
    down to their cells' longest word (``head_hard``). Numbers and identifiers never shrink
    below their own width; the result may not fit — :func:`render_table` checks."""
    widths = list(natural)
    if limit is None:
        return widths
    room = limit - GAP * (len(widths) - 1)
    floors = [minimum, head_hard or minimum]
    for floor in floors:
        while sum(widths) > room:
            movable = [i for i, w in enumerate(widths) if w > floor[i]]
            if not movable:
                break
            i = max(movable, key=lambda j: (widths[j], -j))
            widths[i] -= 1
    return widths


class _Layout:
    """The cells of one table, and the widths they need."""

    def __init__(self, heads: list[str], cells: list[list[str]]):
        self.heads = heads
        self.cells = cells
        n = len(heads)
        self.numeric = [all(_NUMERIC.match(row[j]) or row[j] == "" for row in cells)
                        and any(row[j] not in ("", "-") for row in cells) for j in range(n)]
        self.natural = [max(len(heads[j]), *(display_width(row[j]) for row in cells))
                        for j in range(n)]
        body = [max((display_width(row[j]) if self.numeric[j] else longest_word(row[j]))
                    for row in cells) for j in range(n)]
        self.minimum = [max(_min_width(heads[j]), body[j]) for j in range(n)]
        self.hard = [max(min(_min_width(heads[j]), MIN_HARD), body[j]) for j in range(n)]

    def index(self, name: str) -> int | None:
        return self.heads.index(name) if name in self.heads else None

    def without(self, drop: set[str]) -> _Layout:
        keep = [j for j, h in enumerate(self.heads) if h not in drop]
        return _Layout([self.heads[j] for j in keep], [[r[j] for j in keep] for r in self.cells])

    def fits(self, limit: int | None, *, headers_whole: bool = True) -> bool:
        """Whether the columns fit ``limit`` at their narrowest: headers wrapped at their own
        word breaks (``headers_whole``), else cut down to :data:`MIN_HARD`."""
        least = self.minimum if headers_whole else self.hard
        return limit is None or sum(least) + GAP * (len(self.heads) - 1) <= limit


def render_table(rows: Sequence[Mapping[str, Any]], *, floatfmt: str = ",.2f",
                 styles: Mapping[str, Style] | None = None, limit: int | None = -1,
                 optional: Sequence[str] = ()) -> str:
    """A table of dict rows (the first row's keys, then any new ones, give the columns).

    ``limit`` -1 means the current display's limit; None means no limit. ``optional`` names the
    columns that may be left out to fit, the first given first."""
    if not rows:
        return "(none)"
    if limit == -1:
        limit = current().limit
    heads: list[str] = []
    for r in rows:
        heads.extend(k for k in r if k not in heads)
    cells = [[_cell(r.get(h), floatfmt) for h in heads] for r in rows]
    keep = [j for j in range(len(heads)) if any(row[j] != "" for row in cells)]
    layout = _Layout([heads[j] for j in keep], [[row[j] for j in keep] for row in cells])
    lifted: list[tuple[int, str]] = []  # (column, "name value"): said in the columns' order
    dropped: list[str] = []
    for name in optional:  # first the columns that say one thing: said once, above nothing lost
        if layout.fits(limit):
            break
        j = layout.index(name)
        if j is not None and len(rows) > 1 and len({r[j] for r in layout.cells}) == 1:
            lifted.append((heads.index(name), f"{name} {layout.cells[0][j]}"))
            layout = layout.without({name})
    for name in optional:
        if layout.fits(limit):
            break
        if layout.index(name) is not None and len(layout.heads) > 1:
            layout = layout.without({name})
            dropped.append(name)
    if not layout.fits(limit, headers_whole=False):
        return _records(heads, [[_cell(r.get(h), floatfmt) for h in heads] for r in rows],
                        styles or {}, limit)
    text = _grid(layout, limit, styles or {})
    # the notes wrap at spaces as lbctl's other notes do, a column name or value whole; one that
    # fits is as it was (walk19: "(left out to fit 60 columns: …)" ran to 70 columns at 60)
    if lifted:
        text += "\n" + wrap_prose(f"(every row: {', '.join(t for _, t in sorted(lifted))})",
                                  limit)
    if dropped:
        text += "\n" + wrap_prose(f"(left out to fit {limit} columns: {', '.join(dropped)}; "
                                  "--wide shows them)", limit)
    return text


def _grid(layout: _Layout, limit: int | None, styles: Mapping[str, Style]) -> str:
    heads, numeric = layout.heads, layout.numeric
    widths = fit_widths(layout.natural, layout.minimum, limit, layout.hard)

    def line(values: list[str], *, style_row: bool) -> list[str]:
        wrap = wrap_words if style_row else wrap_cell
        wrapped = [wrap(v, widths[j]) for j, v in enumerate(values)]
        height = max(len(w) for w in wrapped)
        out = []
        for k in range(height):
            parts = []
            for j, w in enumerate(wrapped):
                text = w[k] if k < len(w) else ""
                padded = pad(text, widths[j], right=numeric[j])
                style = styles.get(heads[j]) if style_row else None
                if style is not None and text:
                    s = style(values[j])
                    padded = padded.replace(text, paint(text, s), 1)
                parts.append(padded)
            out.append((" " * GAP).join(parts).rstrip())
        return out

    lines = line(heads, style_row=False)
    lines.append((" " * GAP).join("-" * w for w in widths))
    for row in layout.cells:
        lines += line(row, style_row=True)
    return "\n".join(lines)


def _records(heads: list[str], cells: list[list[str]], styles: Mapping[str, Style],
             limit: int | None) -> str:
    """Each row as ``name: value`` lines (a row's first value leads with ``-``): for tables too
    wide for the display even without their optional columns. Every value stays whole: one too
    long for its line goes under its name; prose wraps at spaces."""
    key_width = max(len(h) for h in heads) + 1
    blocks = []
    for row in cells:
        lines: list[str] = []
        for head, value in zip(heads, row, strict=True):
            if value == "":
                continue
            style = styles.get(head)
            lead = ("- " if not lines else RECORD_INDENT) + (head + ":").ljust(key_width) + " "
            room = None if limit is None else limit - len(lead)
            if room is not None and len(value) > room and longest_word(value) > room:
                lines.append(lead.rstrip())  # the value on lines of its own, under its name
                deeper = RECORD_INDENT * 2
                lead = deeper if limit is None or len(value) + len(deeper) <= limit \
                    else RECORD_INDENT
                room = None if limit is None else limit - len(lead)
            parts = wrap_words(value, room) if room else [value]
            for k, part in enumerate(parts):
                shown = paint(part, style(value)) if style is not None else part
                lines.append(((lead if k == 0 else " " * len(lead)) + shown).rstrip())
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


#: a command quoted in prose (```lbctl recommend FILE```): wrapped as one word. This is lbctl's one
#: rule for a runnable command in printed text (doctor's fixes, explain's hints, the examples
#: hint): the text quotes it in backticks, and every wrapper of render/ keeps it on one line,
#: moved whole to a line of its own and left to overflow rather than split, as an operator copies
#: it whole (walk24: doctor's ``pulsar-admin brokers update-dynamic-config --config`` /
#: ``loadBalancer…Enabled --value false`` at 80 columns)
_QUOTED = re.compile(_COMMAND)
#: stands for a blank inside a quoted command while wrapping (one column, as the blank; not a
#: blank to textwrap, a private-use character no text of lbctl holds)
_KEEP = "\ue000"
#: the blank between a figure and its unit (``256.3 MB/s``, ``13,416.2 msg/s``, ``1 min``): kept,
#: as a quoted command's, so a line never ends on a bare number with its unit on the next
#: (walk24: explain's "selected: 206.0" / "MB/s so far" at 80 columns)
_UNIT_BLANK = re.compile(r"(?<=\d) (?=(?:[KMGT]?B/s|msg/s|[kM]bit/s|min)(?![\w/]))")


def wrap_prose(text: str, limit: int | None = -1, *, hang: int = 4) -> str:
    """Lines of prose longer than the display wrapped at spaces, continued ``hang`` columns
    deeper than the line's own indent (so an indented list stays readable). A command quoted in
    backticks is never split: it moves whole to the next line, as apply's lines keep a path
    whole (walk22: ``lbctl examples``' hint broke between `lbctl` and `recommend …` at 80
    columns, so the command could not be copied from one line)."""
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
        kept = _KEEP not in raw
        if kept:
            raw = _QUOTED.sub(lambda m: m.group(0).replace(" ", _KEEP), raw)
            raw = _UNIT_BLANK.sub(_KEEP, raw)
        indent = len(raw) - len(raw.lstrip(" "))
        sub = " " * min(indent + hang, max(0, limit // 2))
        # the line's own indent is the first line's prefix, not a chunk of its text: as a chunk
        # it was dropped when the word after it was longer than the line (a setting=Class word),
        # which then started at column 0, outside the paragraph it belongs to
        wrapped = textwrap.wrap(raw[indent:], width=limit, initial_indent=raw[:indent],
                                subsequent_indent=sub, break_long_words=False,
                                break_on_hyphens=False, drop_whitespace=True) or [raw]
        out.extend(w.replace(_KEEP, " ") if kept else w for w in wrapped)
    return "\n".join(out)

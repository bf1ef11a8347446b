"""Tables and prose that fit the terminal; broker names shortened by their common suffix."""

from __future__ import annotations

import pytest

from lbctl.render.display import Display, colour_wanted, paint, using
from lbctl.render.names import BrokerNames, common_suffix
from lbctl.render.tables import render_table, wrap_cell, wrap_prose, wrap_words

ROWS = [{"action": "unload", "bundle": "acme/clickstream/0x10000000_0x20000000",
         "from": "broker-2", "reason": "Overloaded", "msg/s": "13,416.2", "skipped": ""},
        {"action": "split", "bundle": "acme/billing/0x40000000_0x80000000",
         "from": "broker-12", "reason": "MsgRate", "msg/s": "1.0", "skipped": ""}]


@pytest.mark.parametrize("width", [40, 50, 60, 80, 120])
def test_a_table_fits_its_width(width: int) -> None:
    text = render_table(ROWS, limit=width)
    assert max(len(line) for line in text.splitlines()) <= width
    assert "13,416.2" in text  # numbers are never broken


def test_wide_means_no_limit() -> None:
    text = render_table(ROWS, limit=None)
    assert "acme/clickstream/0x10000000_0x20000000" in text


def test_empty_columns_are_left_out_and_numbers_right_aligned() -> None:
    lines = render_table(ROWS, limit=None).splitlines()
    assert "skipped" not in lines[0]
    assert lines[3].endswith("     1.0")


def test_cells_wrap_at_natural_points() -> None:
    assert wrap_cell("acme/clickstream/0x10000000_0x20000000", 20) == \
        ["acme/clickstream/", "0x10000000_", "0x20000000"]
    assert wrap_cell("LeastResourceUsageWithWeight", 12) == ["Least", "Resource",
                                                             "UsageWith", "Weight"]


def test_prose_wraps_with_a_hanging_indent() -> None:
    text = wrap_prose("  -> Skip/Balanced: " + "word " * 30, 40)
    lines = text.splitlines()
    assert all(len(x) <= 40 for x in lines) and lines[1].startswith("      word")


@pytest.mark.parametrize("names,suffix", [
    (["broker-1.pulsar.svc:8080", "broker-2.pulsar.svc:8080"], ".pulsar.svc:8080"),
    (["10.0.0.1:8080", "10.0.0.2:8080"], ":8080"),
    (["a1.x", "b1.x"], ".x"),
    (["127.0.0.1:4001", "127.0.0.1:4002"], ""),  # ports differ: no common suffix
    (["only.one:8080"], ""),
    (["x.y", "a.x.y"], ".y"),
])
def test_common_suffix(names: list[str], suffix: str) -> None:
    assert common_suffix(names) == suffix


def test_short_names_in_text_and_the_note() -> None:
    n = BrokerNames.of(["broker-1.svc:8080", "broker-10.svc:8080"])
    assert n("broker-10.svc:8080") == "broker-10"
    assert n.text("broker-1.svc:8080 -> broker-10.svc:8080") == "broker-1 -> broker-10"
    assert ".svc:8080" in (n.note() or "")
    assert BrokerNames.of(["a.svc:1", "b.svc:1"], wide=True)("a.svc:1") == "a.svc:1"


class _Tty:
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_without_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert colour_wanted(_Tty())
    assert not colour_wanted(_Tty(), no_color=True)
    assert not colour_wanted(object())  # piped
    monkeypatch.setenv("NO_COLOR", "1")
    assert not colour_wanted(_Tty())


def test_styles_apply_after_the_layout() -> None:
    rows = [{"broker": "b1", "decision": "Success/Overloaded"}]
    styles = {"decision": lambda t: "success"}
    with using(Display(width=80, color=True)):
        text = render_table(rows, styles=styles)
        assert paint("x", "warn") != "x"
    assert "\x1b[32mSuccess/Overloaded\x1b[0m" in text
    with using(Display(width=80, color=False)):
        assert "\x1b" not in render_table(rows, styles=styles)


def test_cells_break_only_at_spaces() -> None:
    assert wrap_words("acme/clickstream/0x10000000_0x20000000", 20) == [
        "acme/clickstream/0x10000000_0x20000000"]  # longer than the column: whole, alone
    assert wrap_words("cycle 2 (1 min)", 8) == ["cycle 2", "(1 min)"]


LONG = [{"action": "unload", "bundle": f"payments-platform-prod/clickstream-eu/0x{i}0000000_0x{i + 1}0000000",
         "from": "broker-2", "to": "broker-4", "reason": "Overloaded", "msg/s": f"{i},416.2"}
        for i in range(1, 4)]


def test_optional_columns_give_way_constant_ones_first_and_are_named() -> None:
    text = render_table(LONG, limit=90, optional=("msg/s", "reason", "action"))
    lines = text.splitlines()
    assert all(len(x) <= 90 for x in lines)
    assert all(r["bundle"] in text for r in LONG)  # every bundle whole, on one line
    assert lines[0].split() == ["bundle", "from", "to", "msg/s"]
    assert lines[-1] == "(every row: action unload, reason Overloaded)"
    text = render_table(LONG, limit=80, optional=("msg/s", "reason", "action"))
    assert "(left out to fit 80 columns: msg/s; --wide shows them)" in text


def test_a_table_that_cannot_fit_becomes_records_with_names_whole() -> None:
    text = render_table(LONG, limit=60)
    assert text.startswith("- action: unload\n  bundle:\n  payments-platform-prod/")
    assert all(len(x) <= 60 for x in text.splitlines() if not x.strip().startswith("payments"))
    assert all(r["bundle"] in text.splitlines()[2 + 7 * i] for i, r in enumerate(LONG))

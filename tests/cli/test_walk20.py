"""walk20: apply's closing lines ("journal:", "rollback plan:", "resume with:") and the drain's
own lines fit the terminal; fit_line counts screen columns (wide characters take two), not
characters; README and the sandbox page quote apply's lines as lbctl prints them at 80
columns."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lbctl.apply.planfile import PlanFile
from lbctl.apply.runner import UI, ApplyReport, fit_line
from lbctl.render.display import Display, using
from lbctl.safe.text import display_width
from tests.paths import ROOT

_LONG = "/var/lib/lbctl/state/of/a/team/with/a/long/home/directory/and/more"


def _fits(lines: list[str], width: int) -> None:
    for x in lines:  # longer than the width only when it is one word (a path)
        assert display_width(x) <= width or len(x.split()) == 1, lines


def _report(result: str) -> ApplyReport:
    plan = PlanFile(path="plan.json", digest="d", cluster="c", captured_at=0,
                    load_manager="modular", shedding="x", placement="y", actions=())
    return ApplyReport(plan=plan, cluster="c", run_id="f0d0da6ad2fd", steps=[], result=result,
                       journal=Path(f"{_LONG}/journal.jsonl"),
                       rollback=Path(f"{_LONG}/rollback-f0d0da6ad2fd.json"))


@pytest.mark.parametrize("width", [40, 60, 80])
def test_apply_closing_lines_fit_with_every_path_whole(width: int) -> None:
    """"journal: …", "rollback plan: … (lbctl apply …)" and "resume with: lbctl apply --resume
    …" were one line each, whatever the terminal."""
    from lbctl.render.apply_view import ApplyView

    with using(Display(width=width)):
        text = ApplyView(_report("partial")).to_text()
    lines = text.splitlines()
    _fits(lines, width)
    said = " ".join(text.split())
    r = _report("partial")
    for whole in (f"journal: {r.journal} (run f0d0da6ad2fd)",
                  f"rollback plan: {r.rollback} (lbctl apply {r.rollback})",
                  f"resume with: lbctl apply --resume {r.journal}"):
        assert whole in said, said
    assert any(x.startswith("resume with:") for x in lines) and len(lines) > 4, lines
    with using(Display(width=width, wide=True)):  # --wide: each line whole
        assert ApplyView(_report("partial")).to_text().count("\n") == 3


def test_drain_view_lines_fit() -> None:
    from lbctl.apply.drain import DrainReport
    from lbctl.render.apply_view import DrainView

    d = DrainReport("127.0.0.1:8081")
    d.rounds = [_report("complete")]
    d.remaining = [f"public/default/0x{i:08x}_0x{i + 1:08x}" for i in range(12)]
    d.message = "127.0.0.1:8081 still owns 12 bundle(s) after 3 rounds: not safe to restart"
    with using(Display(width=60)):
        lines = DrainView(d).to_text().splitlines()
    _fits(lines, 60)
    said = " ".join(" ".join(lines).split())
    assert ("127.0.0.1:8081 still owns: " + ", ".join(d.remaining[:10]) + " …") in said, said
    assert d.message in said and len(lines) > 8, lines


def test_drain_own_lines_fit() -> None:
    """"balancer settings restored: k=v, …" (drain --restore) ran past the terminal."""
    from lbctl.apply import drain

    shown: list[str] = []
    line = ("balancer settings restored: loadBalancerSheddingEnabled=(broker.conf), "
            "loadBalancerAutoBundleSplitEnabled=(broker.conf)")
    drain._say(UI(show=shown.append, width=80), line)
    assert shown == ["balancer settings restored: loadBalancerSheddingEnabled=(broker.conf),",
                     "    loadBalancerAutoBundleSplitEnabled=(broker.conf)"]
    shown.clear()
    drain._say(UI(show=shown.append, width=None), line)  # the watcher's log: one record
    assert shown == [line]


@pytest.mark.parametrize("width", [40, 60, 80])
def test_fit_line_measures_screen_columns(width: int) -> None:
    """A broker named 東京-1 takes 6 columns on screen, not 4: counted by characters, the
    line ran past the terminal."""
    line = ("  #3   valid         unload テナント/名前空間/0x00000000_0x40000000 from "
            "東京-ブローカー-1:8080 to 大阪-ブローカー-2:8080: 移動した")
    out = fit_line(line, width, hang=21)
    _fits(out, width)
    assert " ".join(" ".join(out).split()) == " ".join(line.split())
    assert out[0].startswith("  #3   valid         unload")
    plain = "a " * 30 + "テ" * 8  # 60 characters, 68 columns
    assert fit_line(plain.strip(), 60) != [plain.strip()]


def test_fit_line_keeps_the_spacing_inside_a_line() -> None:
    line = "  #1   valid         unload a from b to c"
    assert fit_line(line, 30, hang=21) == ["  #1   valid         unload a", " " * 15 + "from b to c"]


_QUOTED = re.compile(r"^(plan \S+: \d+ action\(s\)|  #\d+ +valid |#\d+ done: |journal: |"
                     r"rollback plan: |resume with: |balancer settings restored: )")


@pytest.mark.parametrize("page", ["README.md", "docs/commands/sandbox.md"])
def test_docs_quote_apply_lines_as_printed_at_80_columns(page: str) -> None:
    """The plan line and its neighbours were quoted as one wide line, which lbctl prints only
    on a wide terminal: the pages show the 80-column output, each line its fit_line."""
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    seen = 0
    for i, x in enumerate(lines):
        if not _QUOTED.match(x):
            continue
        seen += 1
        hang = 21 if x.startswith("  #") else 4
        block = [x]
        for y in lines[i + 1:]:
            if not y.startswith(" " * min(hang, 40)) or _QUOTED.match(y):
                break
            block.append(y)
        whole = " ".join([block[0], *(y.strip() for y in block[1:])])
        assert block == fit_line(whole, 80, hang), (page, i + 1, block)
    assert seen >= 3, page

"""A propose plan that both moves a bundle and proposes splitting it (its ``split-and-unload``
warning) is refused by apply, which acts on a bundle once; the refusal and the warning say what to
do instead, and ``propose --no-splits`` gives a plan apply takes."""

from __future__ import annotations

from pathlib import Path

from lbctl.apply.planfile import read_plan
from lbctl.cli.app import app
from tests.paths import EXAMPLES

SNAP = str(EXAMPLES / "policies.json")  # its plan moves three bundles and splits them after


def test_the_refusal_says_how_to_carry_out_both(runner, tmp_path: Path) -> None:
    r = runner.invoke(app, ["propose", SNAP, "--solver", "greedy", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    plan = tmp_path / "plan.json"
    plan.write_text(r.stdout)
    r = runner.invoke(app, ["--admin-url", "http://127.0.0.1:9", "apply", str(plan),
                            "--dry-run"])
    assert r.exit_code == 1
    [line] = r.stderr.strip().splitlines()
    assert "a plan acts on a bundle once (refused, nothing was sent)" in line
    assert "propose --no-splits" in line


def test_the_warning_says_it_and_no_splits_gives_a_plan_apply_takes(runner,
                                                                   tmp_path: Path) -> None:
    r = runner.invoke(app, ["propose", SNAP, "--solver", "greedy"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.stderr
    flat = " ".join(r.stdout.split())  # the warning as one line, however it was wrapped
    warning = flat.split("both split and unloaded", 1)[1].split(" ! ", 1)[0]
    assert "apply refuses" in warning and "propose --no-splits" in warning
    r = runner.invoke(app, ["propose", SNAP, "--solver", "greedy", "--no-splits", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    plan = tmp_path / "moves.json"
    plan.write_text(r.stdout)
    moves = read_plan(str(plan)).actions
    assert moves and all(a.action == "unload" for a in moves)

"""A propose plan acts on a bundle once: a bundle the plan moves and that is still too big for the
band where it lands is not proposed for a split in the same plan (a note says to split it there
once the moves are done), so ``lbctl apply`` takes the plan; a plan written by hand that both moves
and splits a bundle is refused by apply with what to do instead."""

from __future__ import annotations

import json
from pathlib import Path

from lbctl.apply.planfile import read_plan
from lbctl.cli.app import app
from tests.paths import EXAMPLES

SNAP = str(EXAMPLES / "policies.json")  # its plan moves three bundles too big for the band


def _propose(runner, tmp_path: Path) -> tuple[Path, dict]:
    r = runner.invoke(app, ["propose", SNAP, "--solver", "greedy", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    plan = tmp_path / "plan.json"
    plan.write_text(r.stdout)
    return plan, json.loads(r.stdout)


def test_a_moved_bundle_is_not_also_split_and_the_note_says_when_to(runner,
                                                                   tmp_path: Path) -> None:
    plan, doc = _propose(runner, tmp_path)
    moved = {a["bundle"] for a in doc["actions"] if a["action"] == "unload"}
    split = {a["bundle"] for a in doc["actions"] if a["action"] == "split"}
    assert moved and split and not moved & split
    assert not [w for w in doc["warnings"] if w["code"] == "split-and-unload"]
    assert len({a.bundle for a in read_plan(str(plan)).actions}) == len(doc["actions"])
    r = runner.invoke(app, ["propose", SNAP, "--solver", "greedy"], env={"COLUMNS": "200"})
    flat = " ".join(r.stdout.split())
    for bundle in ("acme/clickstream/0x10000000_0x20000000",
                   "acme/clickstream/0x40000000_0x50000000"):
        assert bundle in moved
        assert (f"Note: {bundle} carries" in flat
                and "where this plan moves it" in flat.split(f"Note: {bundle}", 1)[1][:120])
    assert "split it there once the moves are done" in flat


def test_apply_refuses_a_plan_that_moves_and_splits_one_bundle_and_says_how(
        runner, tmp_path: Path) -> None:
    plan, doc = _propose(runner, tmp_path)
    move = next(a for a in doc["actions"] if a["action"] == "unload")
    split = next(a for a in doc["actions"] if a["action"] == "split")
    lo, hi = (int(x, 16) for x in move["bundle"].rsplit("/", 1)[1].split("_"))
    ns = move["bundle"].rsplit("/", 1)[0]
    mid = f"0x{(lo + hi) // 2:08x}"
    doc["actions"].append({**split, "bundle": move["bundle"], "broker": move["destinationBroker"],
                           "boundaries": [mid], "children": [f"{ns}/0x{lo:08x}_{mid}",
                                                             f"{ns}/{mid}_0x{hi:08x}"]})
    plan.write_text(json.dumps(doc))
    r = runner.invoke(app, ["--admin-url", "http://127.0.0.1:9", "apply", str(plan),
                            "--dry-run"])
    assert r.exit_code == 1
    [line] = r.stderr.strip().splitlines()
    assert "a plan acts on a bundle once (refused, nothing was sent)" in line
    assert "propose --no-splits" in line

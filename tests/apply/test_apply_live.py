"""`lbctl apply` against the loopback cluster: caps and pacing, re-validation, verification
outcomes, failures, the lock, rollback, confirmation and the never-twice rule."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from lbctl.errors import ExitStatus
from lbctl.sandbox import TestCluster
from lbctl.sandbox.operations import NthFault
from tests.apply.apply_helpers import (
    NS,
    lbctl,
    move_now,
    mutations,
    plan_doc,
    records,
    spread_moves,
    unloads_done,
    write_plan,
)

pytestmark = pytest.mark.live


def test_twenty_actions_with_caps_and_pacing(cluster: TestCluster, tmp_path: Path,
                                             journal: Path) -> None:
    c = cluster
    ids = list(c.brokers)
    moves = spread_moves(c, 20)
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, moves))
    t0 = time.monotonic()
    r = lbctl(c, "apply", str(plan), "--yes", "--max-moves", "12", "--max-per-broker", "7",
              "--concurrency", "2", "--interval", "0.3", "--reason", "CHG-42", "-o", "json")
    took = time.monotonic() - t0
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    states = [a["outcome"] for a in out["actions"]]
    # the first broker is the source of every move: --max-per-broker 7 binds before --max-moves
    assert states.count("done") == 7 and states.count("deferred") == 13
    assert all("--max-per-broker 7 reached" in a["why"] for a in out["actions"][7:])
    done = unloads_done(c)
    assert done == [b for b, _, _ in moves[:7]]  # in plan order, each once
    for b, _, dst in moves[:7]:
        assert c.owners[b] == dst
    for b, _, _ in moves[7:]:
        assert c.owners[b] == ids[0]
    assert took >= 3 * 0.3  # four batches of two: three intervals between them
    # paced: batches of two, the pause between them visible in the log's order
    recs = records(journal)
    sending = [x for x in recs if x.get("state") == "sending"]
    assert [x["step"] for x in sending] == list(range(1, 8))
    assert all(x["reason"] == "CHG-42" and x["planDigest"] == out["planDigest"] for x in sending)
    verified = [x for x in recs if x.get("state") == "verified"]
    assert [x["outcome"] for x in verified] == ["done"] * 7


def test_max_moves_and_max_throughput(cluster: TestCluster, tmp_path: Path) -> None:
    c = cluster
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, spread_moves(c, 10)))
    r = lbctl(c, "apply", str(plan), "--yes", "--max-moves", "3", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert [a["outcome"] for a in json.loads(r.stdout)["actions"]].count("done") == 3
    plan2 = write_plan(tmp_path / "plan2.json", plan_doc(c, spread_moves(c, 10)[3:]))
    r = lbctl(c, "apply", str(plan2), "--yes", "--max-throughput", "2.5", "-o", "json")
    acts = json.loads(r.stdout)["actions"]
    assert [a["outcome"] for a in acts].count("done") == 2  # 1 MB/s each: a third would be 3
    assert "--max-throughput 2.5 MB/s would be exceeded" in acts[2]["why"]
    assert len(unloads_done(c)) == 5


def test_bundle_split_or_moved_meanwhile_is_skipped(cluster: TestCluster, tmp_path: Path) -> None:
    c = cluster
    ids = list(c.brokers)
    moves = spread_moves(c, 4)
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, moves))
    # meanwhile: the first bundle is split, the second moved by someone else
    split_bundle, moved_bundle = moves[0][0], moves[1][0]
    assert lbctl(c, "split-bundle", NS, "-b", split_bundle.rsplit("/", 1)[1], "--yes"
                 ).exit_code == 0
    move_now(c, moved_bundle, ids[1])
    before = len(c.log)
    r = lbctl(c, "apply", str(plan), "--yes", "-o", "json")
    assert r.exit_code == 0, r.stderr
    acts = {a["bundle"]: a for a in json.loads(r.stdout)["actions"]}
    assert acts[split_bundle]["verdict"] == "gone"
    assert "split since into 2 bundles" in acts[split_bundle]["why"]
    assert acts[moved_bundle]["verdict"] == "changed"
    assert f"owned by {ids[1]} now, not {ids[0]}" in acts[moved_bundle]["why"]
    assert [acts[b]["outcome"] for b, _, _ in moves[2:]] == ["done", "done"]
    sent = [r_.path for r_ in c.log[before:] if r_.method == "PUT"]
    assert not any(split_bundle.rsplit("/", 1)[1] in p or moved_bundle.rsplit("/", 1)[1] in p
                   for p in sent)


def test_diff_is_printed_and_no_tty_means_dry_run(cluster: TestCluster, tmp_path: Path) -> None:
    c = cluster
    moves = spread_moves(c, 3)
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, moves))
    r = lbctl(c, "apply", str(plan))
    assert r.exit_code == ExitStatus.NOT_CONFIRMED, r.stderr
    assert "3 still valid, 0 changed, 0 gone" in r.stdout
    assert "would send 3 request(s)" in r.stdout
    b = moves[0][0].rsplit("/", 1)[1]
    assert f"PUT {c.admin_url}/admin/v2/namespaces/public/default/{b}/unload?destinationBroker=" \
        in r.stdout
    assert "no terminal and no --yes" in r.stdout
    assert mutations(c) == []
    r = lbctl(c, "apply", str(plan), "--dry-run", "--yes")
    assert r.exit_code == 0 and mutations(c) == []
    assert "dry run: nothing was sent (3 would be sent)" in r.stdout  # one line (walk18)
    assert r.stdout.count("nothing was sent") == 1


def test_answer_no_sends_nothing(cluster: TestCluster, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import lbctl.cli.connection as conn

    monkeypatch.setattr(conn, "is_terminal", lambda _s: True)
    c = cluster
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, spread_moves(c, 2)))
    r = lbctl(c, "apply", str(plan), input="n\n")
    assert r.exit_code == ExitStatus.NOT_CONFIRMED
    assert mutations(c) == []
    r = lbctl(c, "apply", str(plan), "--confirm-each", input="y\nn\n")
    assert r.exit_code == 0, r.stderr
    assert len(unloads_done(c)) == 1
    assert "declined" in r.stdout


def test_never_twice_without_force(cluster: TestCluster, tmp_path: Path) -> None:
    c = cluster
    ids = list(c.brokers)
    moves = spread_moves(c, 2)
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, moves))
    assert lbctl(c, "apply", str(plan), "--yes").exit_code == 0
    assert len(unloads_done(c)) == 2
    # the bundles are back on the first broker (someone moved them back): the same plan is valid
    # again by ownership, but the journal shows both unloads within the grace period
    for b, _, _ in moves:
        move_now(c, b, ids[0])
    r = lbctl(c, "apply", str(plan), "--yes")
    assert r.exit_code == 0
    assert "within the 30-minute grace period" in r.stdout
    assert len(unloads_done(c)) == 2  # nothing sent
    r = lbctl(c, "apply", str(plan), "--yes", "--force")
    assert r.exit_code == 0, r.stderr
    assert len(unloads_done(c)) == 4


def test_stale_plan_refused_unless_force_stale(cluster: TestCluster, tmp_path: Path) -> None:
    c = cluster
    old = int((time.time() - 3600) * 1000)
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, spread_moves(c, 1), captured_ms=old))
    r = lbctl(c, "apply", str(plan), "--yes")
    assert r.exit_code == ExitStatus.STALE_PLAN
    assert "computed 60 min ago" in r.stderr and "--force-stale" in r.stderr
    assert mutations(c) == []
    r = lbctl(c, "apply", str(plan), "--yes", "--force-stale")
    assert r.exit_code == 0 and len(unloads_done(c)) == 1
    r = lbctl(c, "apply", str(plan), "--yes", "--max-age", "0", "--dry-run")
    assert r.exit_code == 0


def test_plan_of_another_cluster_refused(cluster: TestCluster, tmp_path: Path) -> None:
    doc = plan_doc(cluster, spread_moves(cluster, 1))
    doc["cluster"] = "elsewhere"
    r = lbctl(cluster, "apply", str(write_plan(tmp_path / "p.json", doc)), "--yes")
    assert r.exit_code == ExitStatus.USAGE and "cluster elsewhere" in r.stderr
    assert mutations(cluster) == []


@pytest.mark.parametrize("status,goes_on", [(409, True), (412, True), (500, False)])
def test_failure_on_a_chosen_action(cluster: TestCluster, tmp_path: Path, journal: Path,
                                    status: int, goes_on: bool) -> None:
    c = cluster
    c.nth_faults.append(NthFault(r"/unload$", nth=2, status=status, reason="chosen failure"))
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, spread_moves(c, 4)))
    r = lbctl(c, "apply", str(plan), "--yes", "-o", "json")
    assert r.exit_code == ExitStatus.PARTIAL
    acts = json.loads(r.stdout)["actions"]
    assert acts[1]["outcome"] == "failed" and "chosen failure" in acts[1]["error"]
    if goes_on:
        assert [a["outcome"] for a in acts] == ["done", "failed", "done", "done"]
    else:
        assert [a["outcome"] for a in acts] == ["done", "failed", "not-sent", "not-sent"]
        assert "step #2 failed" in r.stderr
    assert "partial run" in r.stderr and "--resume" in r.stderr
    failed = [x for x in records(journal) if x.get("state") == "failed"]
    assert len(failed) == 1 and failed[0]["status"] == status and failed[0]["step"] == 2


def test_verification_outcomes(tmp_path: Path) -> None:
    from tests.apply.apply_helpers import busy_cluster

    # six brokers: the test cluster's "elsewhere" then lands on a third broker, not back on the
    # source (which is "not-moved": tests/apply/test_apply_hardening.py)
    c = busy_cluster(6, delay=0.05)
    try:
        moves = spread_moves(c, 3)
        c.set_reassignment(delay=0.05, elsewhere={moves[1][0]})
        plan = write_plan(tmp_path / "plan.json", plan_doc(c, moves))
        r = lbctl(c, "apply", str(plan), "--yes", "-o", "json")
        assert r.exit_code == 0, r.stderr  # done-elsewhere is owned again: not partial
        acts = json.loads(r.stdout)["actions"]
        assert [a["outcome"] for a in acts] == ["done", "done-elsewhere", "done"]
        assert acts[1]["owner"] not in (moves[1][2], moves[1][1], None)
        # a bundle nobody takes within --verify-timeout
        c.set_reassignment(delay=30)
        plan2 = write_plan(tmp_path / "plan2.json", plan_doc(c, spread_moves(c, 4)[3:]))
        r = lbctl(c, "apply", str(plan2), "--yes", "--verify-timeout", "1", "-o", "json")
        assert r.exit_code == ExitStatus.PARTIAL
        act = json.loads(r.stdout)["actions"][0]
        assert act["outcome"] == "not-reassigned" and "nobody owns it after 1 s" in act["why"]
    finally:
        c.stop()


def test_split_applied_with_the_plans_exact_boundaries(cluster: TestCluster,
                                                       tmp_path: Path) -> None:
    c = cluster
    bundle = sorted(c.bundles_of(list(c.brokers)[1]))[0]
    lo, hi = (int(x, 16) for x in bundle.rsplit("/", 1)[1].split("_"))
    cut = lo + (hi - lo) // 3  # not where range_equally_divide would cut
    split = {"action": "split", "bundle": bundle, "broker": list(c.brokers)[1],
             "reason": "MsgRate", "detail": None, "algorithm": "topic_count_equally_divide",
             "boundaries": [f"0x{cut:08x}"],
             "children": [f"{NS}/0x{lo:08x}_0x{cut:08x}", f"{NS}/0x{cut:08x}_0x{hi:08x}"],
             "unload": False, "msgRate": 1.0, "throughput": 1.0}
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, [], splits=[split]))
    r = lbctl(c, "apply", str(plan), "--yes", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["actions"][0]["outcome"] == "done"
    assert cut in c.namespaces[NS]
    put = [x for x in c.log if x.method == "PUT" and x.path.endswith("/split")]
    assert put[-1].query["splitAlgorithmName"] == "specified_positions_divide"
    assert json.loads(put[-1].body) == [cut]


def test_rollback_restores_the_original_owners(cluster: TestCluster, tmp_path: Path) -> None:
    c = cluster
    moves = spread_moves(c, 6)
    original = {b: c.owners[b] for b, _, _ in moves}
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, moves))
    r = lbctl(c, "apply", str(plan), "--yes", "-o", "json")
    assert r.exit_code == 0, r.stderr
    rb = json.loads(r.stdout)["rollback"]
    assert rb and Path(rb).parent == tmp_path / "state"
    doc = json.loads(Path(rb).read_text())
    from tests.plan_contract import check_plan

    check_plan(doc)
    assert doc["shedding"] == "rollback"
    assert [a["bundle"] for a in doc["actions"]] == [b for b, _, _ in reversed(moves)]
    assert all(c.owners[b] != original[b] for b in original)
    r = lbctl(c, "apply", "--rollback", "--yes", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert [a["outcome"] for a in json.loads(r.stdout)["actions"]] == ["done"] * 6
    assert {b: c.owners[b] for b in original} == original
    assert len(unloads_done(c)) == 12


def test_second_apply_is_refused_while_one_runs(cluster: TestCluster, tmp_path: Path,
                                                journal: Path) -> None:
    import os
    import subprocess
    import sys

    c = cluster
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, spread_moves(c, 3)))
    env = {**os.environ, "LBCTL_JOURNAL": str(journal)}
    first = subprocess.Popen(
        [sys.executable, "-m", "lbctl", "--admin-url", c.admin_url, "apply", str(plan), "--yes",
         "--interval", "30"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while len(unloads_done(c)) < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(unloads_done(c)) == 1
        other = write_plan(tmp_path / "other.json", plan_doc(c, spread_moves(c, 6)[3:]))
        r = lbctl(c, "apply", str(other), "--yes")
        assert r.exit_code == ExitStatus.LOCKED
        assert f"pid {first.pid}" in r.stderr and "lbctl apply plan.json" in r.stderr
        assert len(unloads_done(c)) == 1
    finally:
        first.terminate()  # SIGTERM: it stops after its action in flight
        out, err = first.communicate(timeout=60)
    assert first.returncode == ExitStatus.PARTIAL, err
    assert b"SIGTERM" in err
    # the lock went with it
    r = lbctl(c, "apply", str(other), "--yes")
    assert r.exit_code == 0, r.stderr


def test_broker_dying_mid_run_stops_cleanly(cluster: TestCluster, tmp_path: Path,
                                            journal: Path) -> None:
    c = cluster
    ids = list(c.brokers)
    moves = spread_moves(c, 10)
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, moves))
    count = {"n": 0}

    def kill_after_fifth(method: str, path: str, query: dict[str, str]) -> None:
        if path.endswith("/unload"):
            count["n"] += 1
            if count["n"] == 5:
                c.remove_broker(ids[2])

    c.after_mutation.append(kill_after_fifth)
    r = lbctl(c, "apply", str(plan), "--yes", "-o", "json")
    assert r.exit_code == ExitStatus.PARTIAL
    assert f"broker {ids[2]} left the cluster mid-run" in r.stderr
    acts = json.loads(r.stdout)["actions"]
    assert [a["outcome"] for a in acts[5:]] == ["not-sent"] * 5
    assert len(unloads_done(c)) == 5
    assert "Traceback" not in r.stderr
    end = [x for x in records(journal) if x.get("state") == "apply-end"]
    assert end[-1]["result"] == "partial"


def test_destination_turning_overloaded_pauses_the_run(cluster: TestCluster,
                                                       tmp_path: Path) -> None:
    c = cluster
    ids = list(c.brokers)
    moves = [(b, ids[0], ids[1]) for b, _, _ in spread_moves(c, 3)]
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, moves))

    def hot(method: str, path: str, query: dict[str, str]) -> None:
        c.brokers[ids[1]].cpu = (95.0, 100.0)

    c.after_mutation.append(hot)
    r = lbctl(c, "apply", str(plan), "--yes", "--pause-timeout", "1", "-o", "json")
    assert r.exit_code == ExitStatus.PARTIAL
    assert f"{ids[1]} turned overloaded" in r.stderr
    assert "--pause-timeout" in r.stderr
    assert len(unloads_done(c)) == 1


def test_bad_plan_files(cluster: TestCluster, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    for text, words in [("", "empty file"), ("{", "not valid JSON"),
                        ('{"format": "lbctl/plan@2"}', "expected 'lbctl/plan@1'"),
                        ('{"format": "lbctl/plan@1", "cluster": "c", "capturedAt": "yesterday",'
                         ' "actions": []}', "not an RFC 3339 time")]:
        bad.write_text(text)
        r = lbctl(cluster, "apply", str(bad), "--yes")
        assert r.exit_code == 1 and words in r.stderr, (text, r.stderr)
        assert r.stderr.count("\n") == 1
    r = lbctl(cluster, "apply")
    assert r.exit_code == ExitStatus.USAGE


def test_extensible_transfers_from_recommend(tmp_path: Path) -> None:
    """On the extensible load manager: recommend's transfer actions applied and verified."""
    from lbctl.sandbox import extensible_cluster

    c = extensible_cluster()
    c.set_reassignment(delay=0.05)
    try:
        r = lbctl(c, "recommend", "-o", "json")
        doc = json.loads(r.stdout)
        transfers = [a for a in doc["actions"] if a["action"] == "transfer"]
        assert transfers
        plan = tmp_path / "plan.json"
        plan.write_text(r.stdout)
        r = lbctl(c, "apply", str(plan), "--yes", "-o", "json")
        assert r.exit_code == 0, r.stderr
        acts = json.loads(r.stdout)["actions"]
        assert [a["outcome"] for a in acts if a["action"] == "transfer"] == ["done"] * len(transfers)
        for a in transfers:
            assert c.owners[a["bundle"]] == a["destinationBroker"]
    finally:
        c.stop()


def test_the_pace_line_says_the_interval_only_between_batches(cluster: TestCluster,
                                                               tmp_path: Path) -> None:
    """drain.md's fill: `apply fill.json --concurrency 2 --interval 60` of two moves printed
    "all at once, 60 s apart"; one batch has no interval to wait."""
    c = cluster
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, spread_moves(c, 3)))
    r = lbctl(c, "apply", str(plan), "--dry-run", "--concurrency", "3", "--interval", "60")
    assert r.exit_code == 0, r.stderr
    assert "would send 3 request(s), all at once:" in r.stdout
    r = lbctl(c, "apply", str(plan), "--dry-run", "--concurrency", "2", "--interval", "60")
    assert "would send 3 request(s), 2 at a time, 60 s between batches:" in r.stdout
    r = lbctl(c, "apply", str(plan), "--dry-run", "--interval", "60")
    assert "would send 3 request(s), 60 s apart:" in r.stdout

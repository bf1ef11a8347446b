"""`lbctl apply` hardening (issue 25): which checks apply is the operator's choice, a plan cannot
repeat, race or inflate itself past them, and a run that stops mid-way says what it sent."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from lbctl.errors import ExitStatus
from lbctl.sandbox import TestCluster
from lbctl.sandbox.server import Fault
from tests.apply.apply_helpers import (
    lbctl,
    move_now,
    plan_doc,
    records,
    spread_moves,
    unloads_done,
    write_plan,
)

pytestmark = pytest.mark.live


# ---- item 5: a plan file cannot exempt itself from checks ----------------------------------------
@pytest.mark.parametrize("shedding", ["rollback", "drain"])
def test_a_plan_naming_its_origin_keeps_the_grace_period(cluster: TestCluster, tmp_path: Path,
                                                         shedding: str) -> None:
    c = cluster
    (b, src, dst), = spread_moves(c, 1)
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, [(b, src, dst)]))
    assert lbctl(c, "apply", str(plan), "--yes").exit_code == 0
    assert c.owners[b] == dst
    back = write_plan(tmp_path / "back.json", plan_doc(c, [(b, dst, src)], shedding=shedding))
    r = lbctl(c, "apply", str(back), "--yes", "-o", "json")
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["actions"][0]["verdict"] == "changed"
    assert "grace period" in out["actions"][0]["why"]
    assert unloads_done(c) == [b] and c.owners[b] == dst


@pytest.mark.parametrize("shedding", ["rollback", "drain"])
def test_a_plan_naming_its_origin_cannot_send_to_an_overloaded_broker(
        cluster: TestCluster, tmp_path: Path, shedding: str) -> None:
    c = cluster
    (b, src, dst), = spread_moves(c, 1)
    c.brokers[dst].cpu = (95.0, 100.0)
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, [(b, src, dst)], shedding=shedding))
    r = lbctl(c, "apply", str(plan), "--yes", "-o", "json")
    assert r.exit_code == 0, r.stderr
    action = json.loads(r.stdout)["actions"][0]
    assert action["verdict"] == "changed" and "overloaded" in action["why"]
    assert unloads_done(c) == [] and c.owners[b] == src


# ---- item 13: twice, raced, moved nothing, from the future, negative ------------------------------
def test_a_bundle_listed_twice_is_refused_and_nothing_is_sent(cluster: TestCluster,
                                                               tmp_path: Path) -> None:
    c = cluster
    (b, src, dst), = spread_moves(c, 1)
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, [(b, src, dst), (b, src, dst)]))
    r = lbctl(c, "apply", str(plan), "--yes")
    assert r.exit_code == ExitStatus.ERROR
    assert "is already actions[0]: a plan acts on a bundle once" in r.stderr
    assert unloads_done(c) == [] and not [x for x in c.log if x.method != "GET"]


def test_ownership_is_rechecked_immediately_before_each_send(cluster: TestCluster, tmp_path: Path,
                                                             journal: Path) -> None:
    c = cluster
    ids = list(c.brokers)
    moves = spread_moves(c, 3)
    raced = moves[1][0]

    def someone_else_moves_it(method: str, path: str, query: dict[str, str]) -> None:
        if path.endswith("/unload") and raced in c.owners and c.owners[raced] == ids[0]:
            move_now(c, raced, ids[2])

    c.after_mutation.append(someone_else_moves_it)
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, moves))
    r = lbctl(c, "apply", str(plan), "--yes", "-o", "json")
    assert r.exit_code == 0, r.stderr
    acts = json.loads(r.stdout)["actions"]
    assert [a["outcome"] for a in acts] == ["done", "skipped", "done"]
    assert "moved since validation" in acts[1]["why"]
    assert unloads_done(c) == [moves[0][0], moves[2][0]]
    assert c.owners[raced] == ids[2]  # left where the cluster put it
    rb = json.loads(Path(json.loads(r.stdout)["rollback"]).read_text())
    assert [(a["bundle"], a["destinationBroker"]) for a in rb["actions"]] == [
        (moves[2][0], ids[0]), (moves[0][0], ids[0])]
    assert not any(x.get("step") == 2 and x.get("state") == "sending" for x in records(journal))


def test_a_2xx_that_moved_nothing_is_not_done(cluster: TestCluster, tmp_path: Path) -> None:
    c = cluster
    (b, src, dst), = spread_moves(c, 1)
    c.faults.append(Fault(r"/unload$", kind="status", status=200, reason="ok", method="PUT"))
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, [(b, src, dst)]))
    r = lbctl(c, "apply", str(plan), "--yes", "-o", "json")
    assert r.exit_code == ExitStatus.PARTIAL, r.stderr
    act = json.loads(r.stdout)["actions"][0]
    assert act["outcome"] == "not-moved" and act["owner"] == src
    assert "1 not-moved" in r.stderr
    assert json.loads(r.stdout)["rollback"] is None


def test_a_plan_from_the_future_does_not_bypass_max_age(cluster: TestCluster,
                                                         tmp_path: Path) -> None:
    c = cluster
    ahead = int(time.time() * 1000) + 3_600_000
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, spread_moves(c, 1), captured_ms=ahead))
    r = lbctl(c, "apply", str(plan), "--yes")
    assert r.exit_code == ExitStatus.STALE_PLAN
    assert "in the future" in r.stderr and unloads_done(c) == []


def test_negative_throughput_cannot_defeat_max_throughput(cluster: TestCluster,
                                                          tmp_path: Path) -> None:
    c = cluster
    doc = plan_doc(c, spread_moves(c, 4))
    doc["actions"][0]["throughput"] = -1e12
    plan = write_plan(tmp_path / "plan.json", doc)
    r = lbctl(c, "apply", str(plan), "--yes", "--max-throughput", "2")
    assert r.exit_code == ExitStatus.ERROR
    assert "actions[0].throughput" in r.stderr and "is not a rate" in r.stderr
    assert unloads_done(c) == []


# ---- item 6: a run aborting mid-way is partial and says what it sent ------------------------------
def test_enospc_writing_the_rollback_plan_is_a_partial_run(cluster: TestCluster, tmp_path: Path,
                                                           journal: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk fills after the first unload was sent: every write but the journal's fails with
    ENOSPC (injected at lbctl.safe.files' one write loop, so the real atomic write fails)."""
    import errno
    import os

    import lbctl.safe.files as files

    real = files._write_all

    def full_disk(fd: int, data: bytes) -> None:
        if os.readlink(f"/proc/self/fd/{fd}") != str(journal):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd, data)

    c = cluster
    moves = spread_moves(c, 3)
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, moves))
    monkeypatch.setattr(files, "_write_all", full_disk)
    r = lbctl(c, "apply", str(plan), "--yes", "-o", "json")
    assert r.exit_code == ExitStatus.PARTIAL, r.stderr
    assert "No space left on device" in r.stderr and "partial run" in r.stderr
    out = json.loads(r.stdout)
    assert out["result"] == "partial" and out["rollback"] is None
    assert [a["outcome"] for a in out["actions"]] == ["done", "not-sent", "not-sent"]
    assert unloads_done(c) == [moves[0][0]]
    end = [x for x in records(journal) if x.get("state") == "apply-end"]
    assert len(end) == 1 and end[0]["result"] == "partial"
    assert end[0]["sent"] == [1] and end[0]["notSent"] == [2, 3]
    assert end[0]["rollback"] is None and "aborted" in end[0]["why"]
    assert not list(journal.parent.glob("rollback-*.json"))


# ---- item 4: --journal through a link ------------------------------------------------------------
def test_a_journal_that_is_a_symlink_is_refused_and_nothing_is_sent(cluster: TestCluster,
                                                                    tmp_path: Path) -> None:
    c = cluster
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    link = tmp_path / "journal.jsonl"
    link.symlink_to(victim)
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, spread_moves(c, 1)))
    r = lbctl(c, "apply", str(plan), "--yes", "--journal", str(link))
    assert r.exit_code == ExitStatus.ERROR
    assert "symbolic link" in r.stderr and "nothing was sent" in r.stderr
    assert victim.read_text() == "precious\n" and unloads_done(c) == []


# ---- item 7: the journal's whole last record lacking its newline is kept ------------------------
def test_a_whole_last_journal_record_without_its_newline_is_kept(cluster: TestCluster,
                                                                 tmp_path: Path,
                                                                 journal: Path) -> None:
    c = cluster
    journal.parent.mkdir(parents=True, exist_ok=True)
    kept = {"time": "2026-01-01T00:00:00.000Z", "run": "earlier", "state": "done",
            "method": "PUT", "url": "http://x/admin/v2/namespaces/a/b/0x0_0x1/unload"}
    journal.write_text(json.dumps(kept))  # whole, but no final newline
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, spread_moves(c, 1)))
    r = lbctl(c, "apply", str(plan), "--yes")
    assert r.exit_code == 0, r.stderr
    recs = records(journal)
    assert recs[0] == kept and recs[1]["run"] != "earlier"
    assert journal.read_text().startswith(json.dumps(kept) + "\n")


# ---- item 11: a one-hash-wide bundle is verified by ownership, not a 4 M-name search ------------
def test_the_topic_name_search_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import zlib

    from lbctl.apply import verify

    tries = {"n": 0}
    real = zlib.crc32

    def counting(data: bytes, value: int = 0) -> int:
        tries["n"] += 1
        return real(data, value)

    monkeypatch.setattr(verify.zlib, "crc32", counting)
    assert verify.topic_in("t/ns/0x12345678_0x12345679", []) is None
    assert verify.topic_in("t/ns/0xfffffffe_0xffffffff", []) is None
    assert tries["n"] == 0  # not searched at all: nothing would be found in a bounded search
    wide = verify.topic_in("t/ns/0x00000000_0x00100000", [])  # 1/4096 of the ring: searched
    assert wide is not None and 0 < tries["n"] <= verify.MAX_NAME_TRIES
    assert real(wide.encode()) < 0x00100000


def test_a_one_hash_wide_bundle_is_verified_through_ownership(tmp_path: Path) -> None:
    from lbctl.sandbox import TestCluster

    c = TestCluster()
    try:
        ids = c.start(2)
        tiny, rest = c.add_namespace("public/tiny", [0, 1, 0xFFFFFFFF])
        c.own(tiny, ids[0], msgRateIn=1.0, msgThroughputIn=1.0)
        c.own(rest, ids[1], msgRateIn=1.0, msgThroughputIn=1.0)
        plan = write_plan(tmp_path / "plan.json", plan_doc(c, [(tiny, ids[0], ids[1])]))
        r = lbctl(c, "apply", str(plan), "--yes", "-o", "json")
        assert r.exit_code == 0, r.stderr
        assert json.loads(r.stdout)["actions"][0]["outcome"] == "done"
        assert c.owners[tiny] == ids[1]
        assert not [x for x in c.log if x.path.startswith("/lookup/")]
        assert [x for x in c.log if x.path.endswith("/ownedNamespaces")]
    finally:
        c.stop()


# ---- item 12: a lookup answer that does not parse, after the unload was sent ---------------------
@pytest.mark.parametrize("url", ["http://[::1:8080", "http://broker-1:99999",
                                 "http://broker-1:80a0"])
def test_a_bad_lookup_answer_after_the_send_is_said_and_verified_otherwise(
        cluster: TestCluster, tmp_path: Path, journal: Path, url: str) -> None:
    c = cluster
    (b, src, dst), = spread_moves(c, 1)

    def hostile_lookup(broker: str, path: str) -> tuple[int, bytes, str, dict[str, str]]:
        return 200, json.dumps({"brokerUrl": "pulsar://x:6650", "httpUrl": url}).encode(), \
            "application/json", {}

    c._lookup = hostile_lookup  # type: ignore[method-assign]  # every broker answers this
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, [(b, src, dst)]))
    r = lbctl(c, "apply", str(plan), "--yes", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert r.exception is None or isinstance(r.exception, SystemExit)
    act = json.loads(r.stdout)["actions"][0]
    assert act["outcome"] == "done" and act["owner"] == dst
    assert "is not a broker URL" in act["why"] and "ownedNamespaces" in act["why"]
    assert unloads_done(c) == [b]
    sent = [x for x in records(journal) if x.get("state") in ("sending", "done")]
    assert [x["state"] for x in sent] == ["sending", "done"]

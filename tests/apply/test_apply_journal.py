"""Reading the journal back: recent unloads (both time forms), run histories, paused balancers."""

from __future__ import annotations

import json
from pathlib import Path

from lbctl.apply.journal import last_run, paused_balancer, read_records, recent_unloads

URL = "http://b:8080/admin/v2/namespaces/t/ns/0x00000000_0x40000000/unload?destinationBroker=x"


def test_recent_unloads_read_both_time_forms(tmp_path: Path) -> None:
    j = tmp_path / "j.jsonl"
    j.write_text("\n".join([
        json.dumps({"time": 1000.0, "state": "sending", "method": "PUT", "url": URL}),
        json.dumps({"time": "1970-01-01T00:33:20Z", "state": "done", "method": "PUT",
                    "url": URL.replace("0x00000000_0x40000000", "0x40000000_0x80000000")}),
        "{cut off", json.dumps({"time": 10.0, "state": "done", "method": "PUT", "url": URL}),
    ]) + "\n")
    recs = read_records(j)
    assert len(recs) == 3
    assert recent_unloads(recs, 500) == {"t/ns/0x00000000_0x40000000": 1000.0,
                                         "t/ns/0x40000000_0x80000000": 2000.0}


def test_history_of_the_last_run_over_its_resumptions() -> None:
    recs = [
        {"run": "a", "state": "apply-start", "plan": "p", "planDigest": "d", "cluster": "c"},
        {"run": "a", "state": "sending", "step": 1, "planDigest": "d"},
        {"run": "a", "state": "done", "step": 1, "planDigest": "d"},
        {"run": "a", "state": "sending", "step": 2, "planDigest": "d"},
        {"run": "b", "state": "apply-start", "plan": "p", "planDigest": "d", "resumes": ["a"]},
        {"run": "b", "state": "sending", "step": 3, "planDigest": "d"},
        {"run": "b", "state": "failed", "step": 3, "planDigest": "d", "error": "409"},
        {"run": "x", "state": "sending", "step": 4, "planDigest": "other"},
    ]
    h = last_run(recs)
    assert h.runs == ["a", "b"] and h.digest == "d"
    assert h.steps[1].confirmed and h.in_doubt() == [2] and h.steps[3].failed == "409"
    assert 4 not in h.steps


def test_paused_balancer_until_restored() -> None:
    p = {"state": "balancer-paused", "cluster": "c", "previous": {"a": None}}
    assert paused_balancer([p], "c") == p
    assert paused_balancer([p, {"state": "balancer-restored", "cluster": "c"}], "c") is None
    assert paused_balancer([p], "other") is None

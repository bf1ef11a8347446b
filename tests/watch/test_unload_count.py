"""The leader's own unload count as ``/broker-stats/metrics`` gives it (:func:`unload_count`):
modular's ``brk_lb_unload_bundle_count``; on the extensible load manager the ``UnloadCounter``
breakdown without its ``Admin`` reason (its totals count an operator's unloads too)."""

from __future__ import annotations

from typing import Any

from lbctl.watch.loop import count_name, unload_count


def _breakdown(broker: str, counts: dict[tuple[str, str], int]) -> list[dict[str, Any]]:
    dims = {"broker": broker, "metric": "bundleUnloading"}
    total = sum(n for (result, _r), n in counts.items() if result == "Success")
    out: list[dict[str, Any]] = [{"dimensions": dict(dims), "metrics": {
        "brk_lb_unload_broker_total": total, "brk_lb_unload_bundle_total": total}}]
    for (result, reason), n in counts.items():
        out.append({"dimensions": {**dims, "result": result, "reason": reason},
                    "metrics": {"brk_lb_unload_broker_breakdown_total": n}})
    return out


def test_the_extensible_count_leaves_the_admin_reason_out() -> None:
    m = _breakdown("b1:8080", {("Success", "Overloaded"): 4, ("Success", "Underloaded"): 2,
                               ("Success", "Admin"): 7, ("Skip", "HitCount"): 30,
                               ("Failure", "Unknown"): 1})
    assert unload_count(m, "extensible") == 6
    # the totals, which count the admin unloads, are not what is read
    assert unload_count(m, "modular") is None


def test_an_extensible_answer_without_the_admin_reason_tells_nothing() -> None:
    """A release whose breakdown has no Admin entry may count an admin unload under another
    reason: no count, so no departure is said to be an operator's on it."""
    m = _breakdown("b1:8080", {("Success", "Overloaded"): 4, ("Success", "Underloaded"): 2})
    assert unload_count(m, "extensible") is None
    assert unload_count([m[0]], "extensible") is None  # the totals alone


def test_the_modular_count_and_bad_answers() -> None:
    m = [{"dimensions": {"metric": "bundleUnloading"},
          "metrics": {"brk_lb_unload_broker_count": 2, "brk_lb_unload_bundle_count": 5}}]
    assert unload_count(m) == 5
    assert unload_count(m, "extensible") is None
    bads: list[Any] = [None, {}, [1, "x"], [{"dimensions": {"metric": "bundleUnloading"},
                                             "metrics": {"brk_lb_unload_bundle_count": True}}]]
    for bad in bads:
        assert unload_count(bad) is None
        assert unload_count(bad, "extensible") is None
    assert "Admin" in count_name("extensible") and count_name("modular").endswith("_count")

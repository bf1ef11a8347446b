"""``reconcile``: reads taken at different moments, made consistent — in linear time (issue 12:
30,000 bundles of one namespace took more than 120 s when each bundle searched the boundary list)."""

from __future__ import annotations

from typing import Any

from lbctl.sources.live_data import reconcile


def _fmt(x: int) -> str:
    return f"0x{x:08x}"


class _NoScan(list):
    """A boundary list that fails when searched (a per-bundle linear scan)."""

    def index(self, *a: Any, **k: Any) -> int:  # type: ignore[override]
        raise AssertionError("the boundary list was scanned per bundle")

    def __contains__(self, item: object) -> bool:
        raise AssertionError("the boundary list was scanned per bundle")


def test_thirty_thousand_bundles_without_scanning_the_boundaries() -> None:
    n = 30_000
    step = 0xFFFFFFFF // n
    cuts = [i * step for i in range(n)] + [0xFFFFFFFF]
    bounds = _NoScan(_fmt(x) for x in cuts)
    names = [f"t/ns/{_fmt(a)}_{_fmt(b)}" for a, b in zip(cuts, cuts[1:], strict=False)]
    brokers = {"b1:1": {"lastUpdate": 1, "lastStats": {n_: {} for n_ in names[: n // 2]},
                        "bundles": names[: n // 2]},
               "b2:1": {"lastUpdate": 2, "lastStats": {n_: {} for n_ in names[n // 2 - 10:]},
                        "bundles": names[n // 2 - 10:]}}
    namespaces = {"t/ns": {"boundaries": bounds, "numBundles": n}}
    warnings = reconcile(brokers, namespaces)
    assert len(warnings) == 10  # the ten bundles both reported stay with the newer report
    assert names[n // 2 - 1] not in brokers["b1:1"]["lastStats"]
    assert names[n // 2 - 1] in brokers["b2:1"]["bundles"]
    assert len(brokers["b1:1"]["bundles"]) == n // 2 - 10
    assert "t/ns" in namespaces  # every reported bundle is one of the boundaries' ranges


def test_a_split_in_between_drops_the_boundaries() -> None:
    brokers = {"b1:1": {"lastStats": {"t/ns/0x00000000_0x40000000": {}}}}
    namespaces = {"t/ns": {"boundaries": ["0x00000000", "0x80000000", "0xffffffff"]}}
    warnings = reconcile(brokers, namespaces)
    assert namespaces == {} and "changed while reading" in warnings[0]


def test_a_stale_parent_bundle_gives_way_to_the_newer_reports_children() -> None:
    """b1's report was written before the split of 0x00000000_0x80000000 (it still lists the
    parent), b2's after it (a child moved there): the parent is dropped from b1, the
    namespace's current boundaries stay, and no two bundles overlap (the snapshot's check
    refused the read, and the sandbox's leader failed its cycles, until b1 wrote again)."""
    parent, left, right = ("t/ns/0x00000000_0x80000000", "t/ns/0x00000000_0x40000000",
                           "t/ns/0x40000000_0x80000000")
    other = "t/ns/0x80000000_0xffffffff"
    brokers = {"b1:1": {"lastUpdate": 1, "lastStats": {parent: {}, other: {}},
                        "bundles": [parent, other]},
               "b2:1": {"lastUpdate": 2, "lastStats": {left: {}, right: {}},
                        "bundles": [left, right]}}
    bounds = ["0x00000000", "0x40000000", "0x80000000", "0xffffffff"]
    namespaces = {"t/ns": {"boundaries": list(bounds), "numBundles": 3}}
    warnings = reconcile(brokers, namespaces)
    assert brokers["b1:1"]["bundles"] == [other] and parent not in brokers["b1:1"]["lastStats"]
    assert brokers["b2:1"]["bundles"] == [left, right]
    assert namespaces["t/ns"]["boundaries"] == bounds
    assert len(warnings) == 1 and "a split in between" in warnings[0] and parent in warnings[0]


def test_the_newer_report_wins_whichever_side_of_the_split_it_is_on() -> None:
    parent, left = "t/ns/0x00000000_0x80000000", "t/ns/0x00000000_0x40000000"
    brokers = {"b1:1": {"lastUpdate": 5, "lastStats": {parent: {}}, "bundles": [parent]},
               "b2:1": {"lastUpdate": 2, "lastStats": {left: {}}, "bundles": [left]}}
    namespaces = {"t/ns": {"boundaries": ["0x00000000", "0x80000000", "0xffffffff"]}}
    reconcile(brokers, namespaces)
    assert brokers["b1:1"]["bundles"] == [parent] and brokers["b2:1"]["bundles"] == []
    assert "t/ns" in namespaces  # what is left matches the boundaries


def test_overlapping_bundles_of_one_report_age_are_left_for_the_check() -> None:
    parent, left = "t/ns/0x00000000_0x80000000", "t/ns/0x00000000_0x40000000"
    brokers = {"b1:1": {"lastUpdate": 3, "lastStats": {parent: {}}, "bundles": [parent]},
               "b2:1": {"lastUpdate": 3, "lastStats": {left: {}}, "bundles": [left]}}
    namespaces = {"t/ns": {"boundaries": ["0x00000000", "0x80000000", "0xffffffff"]}}
    warnings = reconcile(brokers, namespaces)
    assert brokers["b1:1"]["bundles"] == [parent] and brokers["b2:1"]["bundles"] == [left]
    assert namespaces == {} and len(warnings) == 1 and "boundaries left out" in warnings[0]

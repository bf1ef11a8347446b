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

"""A modular plan's broker rows carry each report's five resource percentages, computed when an
explained plan (or a NaN usage) reads them, not for every row of every plan (issue 30, item 5:
10,000 rows of a 1,000,000-bundle ``recommend``, which never shows them)."""

from __future__ import annotations

import pytest

from lbctl.loadmanager.select import Options, plans
from lbctl.model.load import LocalBrokerData, ResourcePercents, ResourceUsage
from lbctl.sources.snapshot import parse_snapshot

T0 = "2026-11-21T22:00:00Z"


def _state():
    brokers = {f"b{i}:8080": {"cpu": {"usage": 10.0 + 37.5 * i, "limit": 100.0},
                              "memory": {"usage": 1.0 + i, "limit": 3.0},
                              "bandwidthIn": {"usage": 7.0 * i, "limit": 0.0},
                              "lastStats": {f"t/n/0x{i:08x}_0x{i + 1:08x}": {
                                  "msgRateIn": 10.0, "msgThroughputIn": 1000.0}}}
               for i in range(3)}
    return parse_snapshot({"format": "lbctl/snapshot@1", "cluster": "c", "capturedAt": T0,
                           "brokers": brokers}, "s.json")


def test_rows_percentages_are_the_reports_and_wait_to_be_read(
        monkeypatch: pytest.MonkeyPatch) -> None:
    state = _state()
    asked: list[LocalBrokerData] = []
    original = LocalBrokerData.resource_percents

    def counted(self: LocalBrokerData) -> dict[str, float]:
        asked.append(self)
        return original(self)

    monkeypatch.setattr(LocalBrokerData, "resource_percents", counted)
    (plan,) = plans([state], Options())
    plan.to_dict()  # a plan as recommend -o json writes it: no percentages
    assert asked == []
    explained = plan.to_dict(explained=True)
    assert len(asked) == len(state.brokers)
    for row in plan.brokers:
        assert dict(row.resources) == original(state.brokers[row.broker])
        assert list(row.resources) == ["cpu", "memory", "directMemory", "bandwidthIn",
                                       "bandwidthOut"]
    assert [r["resources"]["cpu"] for r in explained["brokers"]] == [10.0, 47.5, 85.0]
    assert len(asked) == len(state.brokers)  # each computed once


def test_a_lazy_mapping_is_the_dict() -> None:
    local = LocalBrokerData(cpu=ResourceUsage(1.0, 8.0), memory=ResourceUsage(-0.0, 8.0))
    lazy = ResourcePercents(local)
    assert lazy == local.resource_percents() and len(lazy) == 5 and "cpu" in lazy
    assert lazy["cpu"] == 12.5 and str(lazy["memory"]) == "-0.0"
    assert repr(lazy) == repr(local.resource_percents())

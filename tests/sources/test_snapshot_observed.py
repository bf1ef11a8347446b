"""The ``observed`` section of a snapshot: read, validated with JSON paths, written back."""

from __future__ import annotations

import copy

import pytest

from lbctl.errors import SnapshotFormatError
from lbctl.model.observed import ObservedMove
from lbctl.sources.snapshot_schema import parse_snapshot, snapshot_to_dict

B = "t/ns/0x00000000_0x80000000"
SNAP = {
    "format": "lbctl/snapshot@1", "cluster": "c", "capturedAt": "2026-03-01T10:00:00Z",
    "brokers": {"b1:8080": {"lastStats": {B: {"msgRateIn": 1.0}}}},
    "observed": {"until": "2026-03-01T10:01:00Z", "unloadedBundles": 2, "unloadedBrokers": 1,
                 "splitBundles": 0, "unloadBreakdown": {"Success/Overloaded": 2},
                 "moves": [{"bundle": B, "from": "b1:8080", "to": "b2:8080"}],
                 "splits": ["t/ns/0x80000000_0xffffffff"], "notes": ["decisions counted on b1"]},
}


def test_observed_is_read_and_written_back() -> None:
    st = parse_snapshot(SNAP, "s.json")
    o = st.observed
    assert o is not None
    assert (o.until, o.unloaded_bundles, o.unloaded_brokers, o.split_bundles) == (
        1_772_359_260_000, 2, 1, 0)
    assert dict(o.unload_breakdown) == {"Success/Overloaded": 2} and not o.split_breakdown
    assert o.moves == (ObservedMove(B, "b1:8080", "b2:8080"),)
    assert o.splits == ("t/ns/0x80000000_0xffffffff",) and o.notes == ("decisions counted on b1",)
    back = snapshot_to_dict(st)
    assert back["observed"] == SNAP["observed"]
    assert parse_snapshot(back, "again") == parse_snapshot(SNAP, "again")


def test_a_snapshot_without_observed_has_none() -> None:
    snap = copy.deepcopy(SNAP)
    del snap["observed"]
    st = parse_snapshot(snap, "s.json")
    assert st.observed is None and "observed" not in snapshot_to_dict(st)
    only_until = {**snap, "observed": {"until": 1_772_359_260_000}}
    o = parse_snapshot(only_until, "s.json").observed
    assert o is not None and o.unloaded_bundles is None and o.moves == ()


@pytest.mark.parametrize(("change", "message"), [
    ({"until": None}, "at observed.until: expected an RFC 3339 time"),
    ({"unloadedBundles": -1}, "at observed.unloadedBundles: expected an integer >= 0, got -1"),
    ({"unloadedBrokers": 1.5}, "at observed.unloadedBrokers: expected an integer >= 0, got 1.5"),
    ({"unloadBreakdown": {"Success/Overloaded": "2"}},
     'at observed.unloadBreakdown.Success/Overloaded: expected an integer >= 0, got "2"'),
    ({"moves": [{"bundle": "nope", "from": "a", "to": "b"}]},
     "at observed.moves[0].bundle: expected a valid bundle name"),
    ({"moves": [{"bundle": B, "from": 3, "to": "b"}]}, "at observed.moves[0].from: expected a broker id"),
    ({"splits": "x"}, "at observed.splits: expected a list of bundle names"),
    ({"notes": [1]}, "at observed.notes: expected a list of strings"),
])
def test_malformed_observed_names_the_path(change: dict, message: str) -> None:
    snap = copy.deepcopy(SNAP)
    snap["observed"].update(change)
    with pytest.raises(SnapshotFormatError) as e:
        parse_snapshot(snap, "s.json")
    assert str(e.value).startswith(f"s.json {message}")


def test_observed_must_be_an_object_with_until() -> None:
    with pytest.raises(SnapshotFormatError, match="at observed: expected an object"):
        parse_snapshot({**SNAP, "observed": [1]}, "s.json")
    with pytest.raises(SnapshotFormatError, match="at observed.until: required key is missing"):
        parse_snapshot({**SNAP, "observed": {"unloadedBundles": 1}}, "s.json")
